package format

import (
	"encoding/binary"
	"errors"
)

// Record wire format (big-endian).
const (
	HeaderLen = 28 // offset 8, size 4, crc 4, timestamp 8, keylen 4

	offsetAt    = 0  // u64
	sizeAt      = 8  // u32
	crcAt       = 12 // u32
	timestampAt = 16 // i64
	keyLenAt    = 24 // u32
)

var (
	// ErrShort means the bytes end before the header or record does.
	ErrShort = errors.New("not enough bytes")
	// ErrKeyLen means a header's keylen is larger than its size.
	ErrKeyLen = errors.New("keylen larger than size")
	// ErrCRC means a record's stored CRC does not match its contents.
	ErrCRC = errors.New("crc mismatch")
	// ErrOffset means a record's offset is not the one its place requires
	// (the previous record's + 1, or the segment's base offset). The codec
	// never returns it; it is the reason callers give for that finding.
	ErrOffset = errors.New("unexpected offset")
)

// Header is a record's fixed-size prefix.
type Header struct {
	Offset    uint64
	Size      uint32 // len(key) + len(value)
	CRC       uint32
	Timestamp int64 // Unix nanoseconds
	KeyLen    uint32
}

// RecordLen is the length of the whole record, header included.
func (h *Header) RecordLen() int64 { return HeaderLen + int64(h.Size) }

// Record is a decoded record. Key and Value alias the decoded bytes.
type Record struct {
	Offset    uint64
	Timestamp int64
	Key       []byte // nil or empty: no key
	Value     []byte
}

// RecordLen is the encoded length of a record with this key and value.
func RecordLen(key, value []byte) int64 { return HeaderLen + int64(len(key)) + int64(len(value)) }

// Checksum is the CRC a record with these fields carries.
func Checksum(timestamp int64, key, value []byte) uint32 {
	return UpdateChecksum(UpdateChecksum(ChecksumStart(timestamp), key), value)
}

// ChecksumStart begins a record's CRC, over its 8 timestamp bytes; continue
// it over key and value, in pieces if need be, with UpdateChecksum.
func ChecksumStart(timestamp int64) uint32 {
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(timestamp))
	return ieee.Update(0, ts[:])
}

// UpdateChecksum continues a record's CRC over p.
func UpdateChecksum(crc uint32, p []byte) uint32 { return ieee.Update(crc, p) }

// AppendRecord appends r's encoding to dst. len(key)+len(value) must fit in
// a u32; callers bound record sizes long before that.
func AppendRecord(dst []byte, r *Record) []byte {
	dst = AppendHeader(dst, r)
	dst = append(dst, r.Key...)
	return append(dst, r.Value...)
}

// AppendHeader appends the 28-byte header of r's encoding to dst, so that a
// large key and value can be written from where they are, never copied.
func AppendHeader(dst []byte, r *Record) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, HeaderLen)...)
	h := dst[n:]
	binary.BigEndian.PutUint64(h[offsetAt:], r.Offset)
	binary.BigEndian.PutUint32(h[sizeAt:], uint32(len(r.Key)+len(r.Value)))
	binary.BigEndian.PutUint64(h[timestampAt:], uint64(r.Timestamp))
	binary.BigEndian.PutUint32(h[keyLenAt:], uint32(len(r.Key)))
	binary.BigEndian.PutUint32(h[crcAt:], ieee.Update(ieee.Update(ieee.Update(0, h[timestampAt:keyLenAt]), r.Key), r.Value))
	return dst
}

// ParseHeader decodes the header at the start of b. It fails with ErrShort
// when b holds fewer than HeaderLen bytes and with ErrKeyLen when keylen
// exceeds size; it does not look at the body.
func ParseHeader(b []byte) (Header, error) {
	var h Header
	err := h.Decode(b)
	return h, err
}

// Decode is ParseHeader into h, for a hot path that keeps the header where
// it is: a Header returned by value is built in one place and copied to
// another, and that copy, reading back 16 bytes at a time what was just
// stored 4 and 8 bytes at a time, stalls the CPU (a tenth of a scan of
// small records).
func (h *Header) Decode(b []byte) error {
	if len(b) < HeaderLen {
		*h = Header{}
		return ErrShort
	}
	h.Offset = binary.BigEndian.Uint64(b[offsetAt:])
	h.Size = binary.BigEndian.Uint32(b[sizeAt:])
	h.CRC = binary.BigEndian.Uint32(b[crcAt:])
	h.Timestamp = int64(binary.BigEndian.Uint64(b[timestampAt:]))
	h.KeyLen = binary.BigEndian.Uint32(b[keyLenAt:])
	if h.KeyLen > h.Size {
		return ErrKeyLen
	}
	return nil
}

// ParseRecord decodes the record at the start of b and checks its CRC. The
// returned record's Key and Value alias b. On ErrCRC the header is still
// returned, so callers can report what the record claimed to be.
func ParseRecord(b []byte) (Record, Header, error) {
	h, err := ParseHeader(b)
	if err == nil {
		err = h.Verify(b)
	}
	if err != nil {
		return Record{}, h, err
	}
	key, value := h.Split(b)
	return Record{Offset: h.Offset, Timestamp: h.Timestamp, Key: key, Value: value}, h, nil
}

// Verify checks that b, starting with the record h was parsed from, holds
// the whole record (else ErrShort) and that its CRC matches (else ErrCRC).
// Readers call it on their buffer directly, with no Record built.
func (h *Header) Verify(b []byte) error {
	n := h.RecordLen()
	if int64(len(b)) < n {
		return ErrShort
	}
	if ieee.Update(ieee.Update(0, b[timestampAt:keyLenAt]), b[HeaderLen:n]) != h.CRC {
		return ErrCRC
	}
	return nil
}

// Split returns the key (nil when keylen is 0) and value of the verified
// record at the start of b.
func (h *Header) Split(b []byte) (key, value []byte) {
	body := b[HeaderLen:h.RecordLen()]
	if h.KeyLen > 0 {
		key = body[:h.KeyLen]
	}
	return key, body[h.KeyLen:]
}

// IsZero reports whether every byte of b is zero: a tail a crash left with
// its size extended but its data never written.
func IsZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
