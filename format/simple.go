package format

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// The simple store/index layout: a widely copied commit-log
// design that seglog can read, check and import but never writes into.
// Each segment is a pair of files named by its base offset in decimal,
// padded or not ("0.store", "00000000000000000016.store"):
//
//	<base>.store  records, each framed by its length:
//	              +---------------------+-----------------+
//	              | length u64 (BE) 8   | value (length)  |
//	              +---------------------+-----------------+
//	<base>.index  12-byte entries, the n-th for the segment's n-th record:
//	              +---------------------+---------------------+
//	              | rel offset u32 4    | position u64 8      |
//	              +---------------------+---------------------+
//
// A record has no key, timestamp or checksum: its offset is the segment's
// base plus its number within the segment. The writer memory-maps the
// index after extending it with zeros to its maximum size and truncates it
// back only on a clean close, so after a crash the index ends in zero
// entries that read as "offset 0 at position 0".
const (
	SimpleStoreExt      = ".store"
	SimpleIndexExt      = IndexExt
	SimpleFrameLen      = 8  // length u64 before each value
	SimpleIndexEntryLen = 12 // rel offset 4, position 8
)

var (
	// ErrSimpleName means a file name is not <decimal digits>.store|.index.
	ErrSimpleName = errors.New("not a simple store/index file name")
	// ErrFrameLen means a .store length field runs past the end of the
	// file. The codec never returns it (it says ErrShort); it is the
	// reason logstore gives when that is corruption, not a torn tail.
	ErrFrameLen = errors.New("record length runs past the end of the .store file")
)

// ParseSimpleName splits a simple segment file name into base offset and
// extension (SimpleStoreExt or SimpleIndexExt). The base is any decimal
// number that fits a u64, with or without leading zeros.
func ParseSimpleName(name string) (base uint64, ext string, err error) {
	switch {
	case len(name) > len(SimpleStoreExt) && name[len(name)-len(SimpleStoreExt):] == SimpleStoreExt:
		ext = SimpleStoreExt
	case len(name) > len(SimpleIndexExt) && name[len(name)-len(SimpleIndexExt):] == SimpleIndexExt:
		ext = SimpleIndexExt
	default:
		return 0, "", ErrSimpleName
	}
	digits := name[:len(name)-len(ext)]
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, "", ErrSimpleName
		}
	}
	base, err = strconv.ParseUint(digits, 10, 64)
	if err != nil { // past u64
		return 0, "", ErrSimpleName
	}
	return base, ext, nil
}

// AppendSimpleRecord appends value framed as a .store record to dst.
func AppendSimpleRecord(dst, value []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(len(value)))
	return append(dst, value...)
}

// ParseSimpleFrame decodes the length field at the start of b (ErrShort
// when b holds fewer than SimpleFrameLen bytes). Whether that many bytes
// follow is for the caller to check against the file.
func ParseSimpleFrame(b []byte) (uint64, error) {
	if len(b) < SimpleFrameLen {
		return 0, ErrShort
	}
	return binary.BigEndian.Uint64(b), nil
}

// SimpleIndexEntry is one entry of a simple .index: the record numbered
// RelOffset in the segment starts at byte Pos of the .store.
type SimpleIndexEntry struct {
	RelOffset uint32
	Pos       uint64
}

// IsZero reports whether the entry is all zero bytes: entry 0 of a
// segment, or the padding a crash leaves after the last entry written.
func (e SimpleIndexEntry) IsZero() bool { return e == SimpleIndexEntry{} }

// AppendSimpleIndexEntry appends e's encoding to dst.
func AppendSimpleIndexEntry(dst []byte, e SimpleIndexEntry) []byte {
	dst = binary.BigEndian.AppendUint32(dst, e.RelOffset)
	return binary.BigEndian.AppendUint64(dst, e.Pos)
}

// ParseSimpleIndexEntry decodes the entry at the start of b (ErrShort if b
// is shorter than SimpleIndexEntryLen).
func ParseSimpleIndexEntry(b []byte) (SimpleIndexEntry, error) {
	if len(b) < SimpleIndexEntryLen {
		return SimpleIndexEntry{}, ErrShort
	}
	return SimpleIndexEntry{RelOffset: binary.BigEndian.Uint32(b), Pos: binary.BigEndian.Uint64(b[4:])}, nil
}
