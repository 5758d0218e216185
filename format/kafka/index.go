package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A segment's .index and .timeindex, as Kafka's OffsetIndex and TimeIndex
// keep them (all integers big-endian):
//
//	.index      | relative offset i32 | position i32 |          8 bytes
//	.timeindex  | timestamp i64 (ms)  | relative offset i32 |  12 bytes
//
// A relative offset is the entry's offset minus the segment's base; an
// offset entry names the batch whose last offset that is and the byte of
// the .log where it starts, a time entry the largest timestamp up to
// that offset. Kafka reads both as signed, so a relative offset with its
// top bit set lies below the base.
//
// Kafka preallocates the index files of the active segment (10 MiB by
// default) and trims them only when the segment is closed cleanly: after
// a crash, the real entries are followed by zeros up to the end of the
// file. Nothing in the files says where the entries end, so the zeros
// are told apart by what Kafka never writes: an offset entry of all zeros
// after entry 0 (offsets increase, so only entry 0 can have relative
// offset 0), and a time entry of all zeros anywhere (a timestamp of 0 at
// the base offset, whose segment would then hold records of 1970).

// Entry sizes.
const (
	OffsetEntryLen = 8
	TimeEntryLen   = 12
)

var (
	// ErrOffsetIndex means a .index is damaged, or shorter than an entry.
	ErrOffsetIndex = errors.New("offset index")
	// ErrTimeIndex means a .timeindex is damaged, or shorter than an entry.
	ErrTimeIndex = errors.New("time index")
)

// OffsetEntry is an entry of a .index.
type OffsetEntry struct {
	RelOffset int32 // the offset minus the segment's base
	Position  int32 // byte position of the batch in the .log
}

// Offset is the entry's offset in a segment with base offset base.
func (e OffsetEntry) Offset(base int64) int64 { return base + int64(e.RelOffset) }

// TimeEntry is an entry of a .timeindex.
type TimeEntry struct {
	Timestamp int64 // milliseconds since the epoch
	RelOffset int32 // the offset minus the segment's base
}

// Offset is the entry's offset in a segment with base offset base.
func (e TimeEntry) Offset(base int64) int64 { return base + int64(e.RelOffset) }

// ParseOffsetEntry decodes the .index entry at the start of b.
func ParseOffsetEntry(b []byte) (OffsetEntry, error) {
	if len(b) < OffsetEntryLen {
		return OffsetEntry{}, fmt.Errorf("%w: an entry takes %d bytes, %d given", ErrOffsetIndex, OffsetEntryLen, len(b))
	}
	return OffsetEntry{
		RelOffset: int32(binary.BigEndian.Uint32(b)),
		Position:  int32(binary.BigEndian.Uint32(b[4:])),
	}, nil
}

// ParseTimeEntry decodes the .timeindex entry at the start of b.
func ParseTimeEntry(b []byte) (TimeEntry, error) {
	if len(b) < TimeEntryLen {
		return TimeEntry{}, fmt.Errorf("%w: an entry takes %d bytes, %d given", ErrTimeIndex, TimeEntryLen, len(b))
	}
	return TimeEntry{
		Timestamp: int64(binary.BigEndian.Uint64(b)),
		RelOffset: int32(binary.BigEndian.Uint32(b[8:])),
	}, nil
}

// OffsetIndexEntries is how many real entries the .index of size bytes
// that r reads holds: its whole entries up to the zeros Kafka
// preallocated after them. Entry 0 always counts, zero or not.
func OffsetIndexEntries(r io.ReaderAt, size int64) (int64, error) {
	return realEntries(r, size, OffsetEntryLen, 1)
}

// TimeIndexEntries is how many real entries the .timeindex of size bytes
// that r reads holds: its whole entries up to the zeros Kafka
// preallocated after them.
func TimeIndexEntries(r io.ReaderAt, size int64) (int64, error) {
	return realEntries(r, size, TimeEntryLen, 0)
}

// indexBlock is how many bytes of an index are read at a time.
const indexBlock = 64 << 10

// realEntries scans back from the last whole entry over entries of all
// zeros, stopping at entry keep (those before it are real, zero or not).
// Scanning back rather than searching keeps a zero entry among real ones
// (damage) inside the count, where a sanity check reports it.
func realEntries(r io.ReaderAt, size int64, entryLen, keep int64) (int64, error) {
	n := max(size, 0) / entryLen
	buf := make([]byte, min(n*entryLen, indexBlock/entryLen*entryLen))
	for n > keep {
		k := min(n-keep, int64(len(buf))/entryLen)
		b := buf[:k*entryLen]
		if err := ReadFullAt(r, b, (n-k)*entryLen); err != nil {
			return 0, err
		}
		for i := k - 1; i >= 0; i-- {
			if !indexAllZero(b[i*entryLen : (i+1)*entryLen]) {
				return n - k + i + 1, nil
			}
		}
		n -= k
	}
	return n, nil
}

// ReadFullAt reads len(b) bytes at off: a file that ends before is
// io.ErrUnexpectedEOF (it shrank since its size was taken).
func ReadFullAt(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	switch {
	case n == len(b):
		return nil
	case err == nil || errors.Is(err, io.EOF):
		return io.ErrUnexpectedEOF
	}
	return err
}

func indexAllZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// eachEntry hands each of the first n entries of entryLen bytes that r
// reads to each, in order, a block at a time.
func eachEntry(r io.ReaderAt, n, entryLen int64, each func(i int64, b []byte) error) error {
	n = max(n, 0)
	buf := make([]byte, min(n*entryLen, indexBlock/entryLen*entryLen))
	for i := int64(0); i < n; {
		k := min(n-i, int64(len(buf))/entryLen)
		b := buf[:k*entryLen]
		if err := ReadFullAt(r, b, i*entryLen); err != nil {
			return err
		}
		for ; len(b) > 0; b = b[entryLen:] {
			if err := each(i, b[:entryLen]); err != nil {
				return err
			}
			i++
		}
	}
	return nil
}

// CheckOffsetIndex is Kafka's sanity check of a .index (the one that
// decides whether the broker rebuilds it on start) over the size bytes r
// reads: a whole number of entries, the last one's offset not below the
// base, and, beyond Kafka's check, offsets strictly increasing. The
// preallocated zeros are no entries (see OffsetIndexEntries).
func CheckOffsetIndex(r io.ReaderAt, size int64) error {
	if size%OffsetEntryLen != 0 {
		return fmt.Errorf("%w: %d bytes, not a whole number of %d-byte entries", ErrOffsetIndex, size, OffsetEntryLen)
	}
	n, err := OffsetIndexEntries(r, size)
	if err != nil {
		return err
	}
	var prev OffsetEntry
	err = eachEntry(r, n, OffsetEntryLen, func(i int64, b []byte) error {
		e, _ := ParseOffsetEntry(b)
		if i > 0 && e.RelOffset <= prev.RelOffset {
			return fmt.Errorf("%w: entry %d: relative offset %d is not above entry %d's %d", ErrOffsetIndex, i, e.RelOffset, i-1, prev.RelOffset)
		}
		prev = e
		return nil
	})
	if err != nil {
		return err
	}
	if n > 0 && prev.RelOffset < 0 {
		return fmt.Errorf("%w: the last entry's offset is below the segment's base (relative offset %d)", ErrOffsetIndex, prev.RelOffset)
	}
	return nil
}

// CheckTimeIndex is Kafka's sanity check of a .timeindex over the size
// bytes r reads: a whole number of entries, timestamps that never go
// back (Kafka compares the last with the first), and the last entry's
// offset not below the base. The preallocated zeros are no entries (see
// TimeIndexEntries).
func CheckTimeIndex(r io.ReaderAt, size int64) error {
	if size%TimeEntryLen != 0 {
		return fmt.Errorf("%w: %d bytes, not a whole number of %d-byte entries", ErrTimeIndex, size, TimeEntryLen)
	}
	n, err := TimeIndexEntries(r, size)
	if err != nil {
		return err
	}
	var prev TimeEntry
	err = eachEntry(r, n, TimeEntryLen, func(i int64, b []byte) error {
		e, _ := ParseTimeEntry(b)
		if i > 0 && e.Timestamp < prev.Timestamp {
			return fmt.Errorf("%w: entry %d: timestamp %d is below entry %d's %d", ErrTimeIndex, i, e.Timestamp, i-1, prev.Timestamp)
		}
		prev = e
		return nil
	})
	if err != nil {
		return err
	}
	if n > 0 && prev.RelOffset < 0 {
		return fmt.Errorf("%w: the last entry's offset is below the segment's base (relative offset %d)", ErrTimeIndex, prev.RelOffset)
	}
	return nil
}
