package logstore

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// Logs in the simple store/index layout (format/simple.go) are written by
// other programs; seglog never writes into such a directory:
// every file is opened read-only, nothing is locked, created or renamed.
// The writer of that layout appends to the .store through a buffer and to
// the .index through a memory map it pre-sizes with zeros, so after a crash
// the .index may end in zero entries, or in entries for records the .store
// never received: both are what a crash leaves, not damage.

// SimpleSegment is one segment of a simple log.
type SimpleSegment struct {
	Base  uint64
	Store string // the .store file's path
	Index string // the .index file's path; "" when there is none
}

// SimpleLog is a directory in the simple store/index layout, open for
// reading only.
type SimpleLog struct {
	dir     string
	segs    []SimpleSegment // sorted by base
	orphans []string        // .index files without a .store
}

// OpenSimpleLog lists the segments of the simple log in dir. A .store
// without an .index is a segment (the index is only a hint); an .index
// without a .store is an orphan, which Verify reports. Two files for one base
// ("0.store" and "00.store") are an error: which one holds the records is
// anybody's guess.
func OpenSimpleLog(dir string) (*SimpleLog, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	stores, indexes := map[uint64]string{}, map[uint64]string{}
	for _, e := range entries {
		base, ext, err := format.ParseSimpleName(e.Name())
		if err != nil {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if e.Type()&fs.ModeSymlink == 0 && !e.Type().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file (%s)", path, fsx.FileKind(e.Type()))
		}
		m := stores
		if ext == format.SimpleIndexExt {
			m = indexes
		}
		if other, dup := m[base]; dup {
			return nil, fmt.Errorf("%s and %s both name the segment with base offset %d: remove or rename one", other, path, base)
		}
		m[base] = path
	}
	l := &SimpleLog{dir: dir}
	for base, store := range stores {
		l.segs = append(l.segs, SimpleSegment{Base: base, Store: store, Index: indexes[base]})
	}
	for base, index := range indexes {
		if stores[base] == "" {
			l.orphans = append(l.orphans, index)
		}
	}
	slices.SortFunc(l.segs, func(a, b SimpleSegment) int { return cmp.Compare(a.Base, b.Base) })
	slices.Sort(l.orphans)
	return l, nil
}

// Segments lists the segments, by base offset.
func (l *SimpleLog) Segments() []SimpleSegment { return l.segs }

// segmentEnd opens seg's store and finds where its whole records end.
func (seg SimpleSegment) end() (simpleEnd, error) {
	s, err := openSimpleStore(seg.Store)
	if err != nil {
		return simpleEnd{}, err
	}
	defer s.Close()
	return s.end(seg.Index)
}

// Stats describes the log as describe prints it: offsets from the segment
// names and the whole records of each store (found from its last index
// entry that checks out, then by reading length fields). There are no
// timestamps and no writer lock to report.
func (l *SimpleLog) Stats() (PartitionStats, error) {
	st := PartitionStats{Segments: len(l.segs)}
	for i, seg := range l.segs {
		end, err := seg.end()
		if err != nil {
			return st, err
		}
		if i == 0 {
			st.Start = seg.Base
		}
		st.Next = seg.Base + end.Records
		st.Records += end.Records
		st.Bytes += end.Size
	}
	return st, nil
}

// Extent is the first offset of the log and the offset after its last
// whole record (a simple log is never full: its offsets come from file
// names).
func (l *SimpleLog) Extent() (Extent, error) {
	if len(l.segs) == 0 {
		return Extent{}, nil
	}
	last := l.segs[len(l.segs)-1]
	end, err := last.end()
	if err != nil {
		return Extent{}, err
	}
	return Extent{Start: l.segs[0].Base, Next: last.Base + end.Records}, nil
}
