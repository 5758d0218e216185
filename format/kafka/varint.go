package kafka

// Records use the zigzag varints of Protocol Buffers: 7 bits a byte,
// least significant first, the sign folded into the lowest bit. Like
// Kafka's ByteUtils, a varint may take at most 5 bytes and a varlong 10,
// and bits past the type's width are dropped rather than refused.
const (
	maxVarintLen  = 5
	maxVarlongLen = 10
)

// uvarint decodes the unsigned varint at the start of b, at most maxLen
// bytes long, and the bytes it takes.
func uvarint(b []byte, maxLen int) (uint64, int, error) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1, nil
	}
	var x uint64
	for i, c := range b {
		if i == maxLen {
			return 0, 0, errorf(ErrFormat, "varint longer than %d bytes", maxLen)
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, i + 1, nil
		}
	}
	return 0, 0, ErrShort
}

// varint decodes a zigzag varint (a Kafka int32).
func varint(b []byte) (int32, int, error) {
	u, n, err := uvarint(b, maxVarintLen)
	v := uint32(u)
	return int32(v>>1) ^ -int32(v&1), n, err
}

// varlong decodes a zigzag varlong (a Kafka int64).
func varlong(b []byte) (int64, int, error) {
	u, n, err := uvarint(b, maxVarlongLen)
	return int64(u>>1) ^ -int64(u&1), n, err
}
