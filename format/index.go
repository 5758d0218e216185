package format

import "encoding/binary"

// Index and time-index wire format (big-endian).
const (
	IndexEntryLen = 16 // offset 8, then position (.index) or timestamp (.timeindex) 8
)

// IndexEntry is one entry of a .index file: the byte position of the header
// of the record with that offset.
type IndexEntry struct {
	Offset uint64
	Pos    int64
}

// TimeIndexEntry is one entry of a .timeindex file: that record's timestamp.
type TimeIndexEntry struct {
	Offset    uint64
	Timestamp int64
}

func appendPair(dst []byte, offset uint64, v int64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, offset)
	return binary.BigEndian.AppendUint64(dst, uint64(v))
}

func parsePair(b []byte) (uint64, int64, error) {
	if len(b) < IndexEntryLen {
		return 0, 0, ErrShort
	}
	return binary.BigEndian.Uint64(b), int64(binary.BigEndian.Uint64(b[8:])), nil
}

// AppendIndexEntry appends e's encoding to dst.
func AppendIndexEntry(dst []byte, e IndexEntry) []byte { return appendPair(dst, e.Offset, e.Pos) }

// ParseIndexEntry decodes the entry at the start of b (ErrShort if b is
// shorter than IndexEntryLen). A position is not checked here: whether it
// points at that record is for the caller to check against the .log.
func ParseIndexEntry(b []byte) (IndexEntry, error) {
	o, p, err := parsePair(b)
	return IndexEntry{Offset: o, Pos: p}, err
}

// AppendTimeIndexEntry appends e's encoding to dst.
func AppendTimeIndexEntry(dst []byte, e TimeIndexEntry) []byte {
	return appendPair(dst, e.Offset, e.Timestamp)
}

// ParseTimeIndexEntry decodes the entry at the start of b.
func ParseTimeIndexEntry(b []byte) (TimeIndexEntry, error) {
	o, t, err := parsePair(b)
	return TimeIndexEntry{Offset: o, Timestamp: t}, err
}
