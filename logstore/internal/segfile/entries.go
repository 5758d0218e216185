package segfile

import (
	"errors"
	"fmt"
	"io"

	"github.com/seglog/seglog/format"
)

// ReadEntries hands each whole entry of an index file f (size bytes when
// looked at), from entry first on, to each in file order, reading a block
// at a time. An index that shrank meanwhile ends where it ends now (its
// length, returned, is then less than size's). For a .timeindex, an
// entry's Pos holds the timestamp.
func ReadEntries(f File, size int64, first int64, each func(i int64, e format.IndexEntry) error) (int64, error) {
	n := size / format.IndexEntryLen
	buf := make([]byte, min(n-first, indexBlock)*format.IndexEntryLen)
	for i := first; i < n; {
		want := min(int64(len(buf)), (n-i)*format.IndexEntryLen)
		m, err := f.ReadAt(buf[:want], i*format.IndexEntryLen)
		m -= m % format.IndexEntryLen
		if m == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				return i, nil
			}
			return i, fmt.Errorf("read %s: %w", f.Name(), err)
		}
		for b := buf[:m]; len(b) > 0; b = b[format.IndexEntryLen:] {
			e, _ := format.ParseIndexEntry(b)
			if err := each(i, e); err != nil {
				return i, err
			}
			i++
		}
	}
	return n, nil
}

// Entry decodes the index entry at the start of b, bytes a writer keeps
// of its own index.
func Entry(b []byte) format.IndexEntry {
	e, _ := format.ParseIndexEntry(b)
	return e
}

// EntriesBelow is how many leading bytes of b, index entries, are for
// offsets below next.
func EntriesBelow(b []byte, next uint64) int {
	i := 0
	for ; i+format.IndexEntryLen <= len(b); i += format.IndexEntryLen {
		if Entry(b[i:]).Offset >= next {
			break
		}
	}
	return i
}

// WholeRecords is how many of the first n bytes of b, records a writer
// encoded, are whole records, and how many records they are: what of a
// write that stopped part-way is kept.
func WholeRecords(b []byte, n int64) (kept int64, records uint64) {
	var h format.Header
	for h.Decode(b[kept:]) == nil && kept+h.RecordLen() <= n {
		kept += h.RecordLen()
		records++
	}
	return kept, records
}

// FirstOffset is the offset field of the record at the start of log, for
// a segment file not named after its base offset; ok is false when the
// file holds no whole header.
func FirstOffset(log File) (off uint64, ok bool, err error) {
	b := make([]byte, format.HeaderLen)
	if _, err := log.ReadAt(b, 0); err != nil {
		return 0, false, ioOnly(ignoreEOF(err))
	}
	var h format.Header
	if h.Decode(b) == format.ErrShort {
		return 0, false, nil
	}
	return h.Offset, true, nil
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return format.ErrShort
	}
	return err
}
