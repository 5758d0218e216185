package kafka

import (
	"encoding/binary"
	"hash/crc32"
)

// Before record batches, a .log held message sets of legacy messages
// (magic 0 and 1), big-endian:
//
//	0  offset i64
//	8  messageSize i32   bytes after this field
//	12 crc u32           CRC-32 (IEEE) over the rest: magic to the end
//	16 magic i8          0 or 1
//	17 attributes i8     bits 0-2 codec (not zstd); magic 1: bit 3 log-append time
//	18 timestamp i64     magic 1 only, milliseconds
//	   keyLength i32     -1: a null key
//	   key
//	   valueLength i32   -1: a null value
//	   value
//
// A compressed message is a wrapper: its value is a message set of inner
// messages, compressed. The wrapper's offset is its last inner message's;
// magic 1 inner messages carry offsets relative to the first of them.
const (
	legacyCRCAt        = 12
	legacyAttributesAt = 17
	legacyTimestampAt  = 18
	// NoTimestamp is the timestamp of a message that has none (magic 0).
	NoTimestamp = -1
)

// legacyMinSize is the smallest messageSize of each legacy magic: crc,
// magic, attributes, the timestamp from magic 1 on, and two lengths.
var legacyMinSize = [2]int32{14, 22}

// LegacyMessage is a magic 0 or 1 message. Key and Value alias the bytes
// it was decoded from.
type LegacyMessage struct {
	Offset      int64
	MessageSize int32 // bytes after this field
	CRC         uint32
	Magic       int8
	Attributes  int8
	Timestamp   int64  // milliseconds; NoTimestamp in magic 0
	Key, Value  []byte // nil: null
}

// ParseLegacyMessage decodes and checks the legacy message b starts
// with: its magic (ErrMagic), size (ErrShort when b ends first), CRC
// (ErrCRC) and fields (ErrFormat: a length beyond the message, bytes
// left over, zstd, which legacy messages cannot use). A compressed
// wrapper decodes like any message, its Value the compressed inner set.
func ParseLegacyMessage(b []byte) (LegacyMessage, error) {
	var m LegacyMessage
	if len(b) <= MagicAt {
		return m, ErrShort
	}
	m.Magic = int8(b[MagicAt])
	if m.Magic != 0 && m.Magic != 1 {
		return m, errorf(ErrMagic, "magic %d where a legacy message has 0 or 1", m.Magic)
	}
	m.Offset = int64(binary.BigEndian.Uint64(b))
	m.MessageSize = int32(binary.BigEndian.Uint32(b[lengthAt:]))
	m.CRC = binary.BigEndian.Uint32(b[legacyCRCAt:])
	if least := legacyMinSize[m.Magic]; m.MessageSize < least {
		return m, errorf(ErrFormat, "message size %d is less than the %d bytes of a magic %d message's fields", m.MessageSize, least, m.Magic)
	}
	end := m.Size()
	if int64(len(b)) < end {
		return m, ErrShort
	}
	if c := crc32.ChecksumIEEE(b[MagicAt:end]); c != m.CRC {
		return m, errorf(ErrCRC, "crc mismatch (stored 0x%08x, computed 0x%08x)", m.CRC, c)
	}
	m.Attributes = int8(b[legacyAttributesAt])
	at := int64(legacyTimestampAt)
	m.Timestamp = NoTimestamp
	if m.Magic == 1 {
		m.Timestamp = int64(binary.BigEndian.Uint64(b[at:]))
		at += 8
	}
	var err error
	if m.Key, at, err = legacyBytes(b[:end], at, "key"); err != nil {
		return m, err
	}
	if m.Value, at, err = legacyBytes(b[:end], at, "value"); err != nil {
		return m, err
	}
	switch {
	case at != end:
		return m, errorf(ErrFormat, "message size %d, but its fields take %d bytes", m.MessageSize, at-LogOverhead)
	case m.Offset < 0:
		return m, errorf(ErrFormat, "offset %d is negative", m.Offset)
	case m.Codec() > CodecLZ4:
		return m, errorf(ErrFormat, "compression codec %d is none of a legacy message's (0 to 3)", m.Codec())
	}
	return m, nil
}

// legacyBytes reads the i32 length at b[at:] and that many bytes.
func legacyBytes(b []byte, at int64, what string) ([]byte, int64, error) {
	if int64(len(b))-at < 4 {
		return nil, at, errorf(ErrFormat, "the message's %s length runs past its end", what)
	}
	n := int32(binary.BigEndian.Uint32(b[at:]))
	at += 4
	switch {
	case n == -1:
		return nil, at, nil
	case n < 0:
		return nil, at, errorf(ErrFormat, "%s length %d is negative", what, n)
	case int64(n) > int64(len(b))-at:
		return nil, at, errorf(ErrFormat, "%s length %d is more than the %d bytes left of the message", what, n, int64(len(b))-at)
	}
	return b[at : at+int64(n) : at+int64(n)], at + int64(n), nil
}

// Size is the whole message's length in its file, offset and size
// fields included.
func (m *LegacyMessage) Size() int64 { return LogOverhead + int64(m.MessageSize) }

// Codec is the compression of a wrapper's inner messages; CodecNone for
// a message holding its own key and value.
func (m *LegacyMessage) Codec() Codec { return Codec(m.Attributes & codecMask) }

// LogAppendTime reports whether the broker set the timestamp (magic 1):
// a wrapper's inner messages all take the wrapper's.
func (m *LegacyMessage) LogAppendTime() bool {
	return m.Magic == 1 && m.Attributes&logAppendTimeFlag != 0
}

// LegacyValueLengthAt is where the value length field sits in the legacy
// message whose first bytes head holds (through its key length: 22
// bytes at magic 0, 30 at magic 1), measured from the message's first
// byte; false when head cannot start a message ParseLegacyMessage takes,
// whatever its CRC: a magic, size, codec or key length that is wrong.
// With LegacyValueFits it lets a search for where messages resume pass
// over junk without reading the CRC's extent, which junk claims at any
// length.
func LegacyValueLengthAt(head []byte) (int64, bool) {
	if len(head) <= MagicAt {
		return 0, false
	}
	magic := head[MagicAt]
	if magic > 1 {
		return 0, false
	}
	keyAt := int64(legacyTimestampAt) + 8*int64(magic)
	if int64(len(head)) < keyAt+4 {
		return 0, false
	}
	size := LogOverhead + int64(int32(binary.BigEndian.Uint32(head[lengthAt:])))
	keyLen := int64(int32(binary.BigEndian.Uint32(head[keyAt:])))
	valueAt := keyAt + 4 + max(keyLen, 0)
	switch {
	case size-LogOverhead < int64(legacyMinSize[magic]):
		return 0, false
	case Codec(head[legacyAttributesAt]&codecMask) > CodecLZ4:
		return 0, false
	case keyLen < -1 || valueAt+4 > size:
		return 0, false
	}
	return valueAt, true
}

// LegacyValueFits reports whether field, the 4 bytes at valueAt (from
// LegacyValueLengthAt) of the legacy message whose first bytes head
// holds, is a value length that ends the message exactly, as
// ParseLegacyMessage requires.
func LegacyValueFits(head []byte, valueAt int64, field []byte) bool {
	if len(field) < 4 || len(head) < LogOverhead {
		return false
	}
	size := LogOverhead + int64(int32(binary.BigEndian.Uint32(head[lengthAt:])))
	n := int64(int32(binary.BigEndian.Uint32(field)))
	return n >= -1 && valueAt+4+max(n, 0) == size
}
