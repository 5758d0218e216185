package logstore

import (
	"errors"
	"fmt"
	"sort"

	"github.com/seglog/seglog/format"
)

// Reading a simple log's records in offset order.

// SimpleRecord is a record read from a simple log.
type SimpleRecord struct {
	Offset uint64 // the segment's base + the record's number in it
	Pos    int64  // byte position of its length field in the .store
	Value  []byte // valid until the next call of Next
	Store  string // the .store file it is in
}

// SimpleTail is what follows the last whole record of the last segment:
// a record cut off by a crash.
type SimpleTail struct {
	Path   string
	Pos    int64  // where the cut record starts
	Offset uint64 // the offset it would have had
	Bytes  int64  // bytes from Pos to the end of the file
	Len    uint64 // its length field, when HasLen
	HasLen bool
}

func (t SimpleTail) String() string {
	s := fmt.Sprintf("torn last record at byte %d of %s (offset %d): %d %s", t.Pos, t.Path, t.Offset, t.Bytes, plural(t.Bytes != 1, "byte", "bytes"))
	if t.HasLen {
		return s + fmt.Sprintf(", but its length field says %d", t.Len)
	}
	return s + ", less than a length field"
}

// SimpleIterator reads a simple log's records in offset order, in
// constant memory (one record aside). It stops at the end of each store
// as it was when the iterator reached it.
type SimpleIterator struct {
	l    *SimpleLog
	from uint64
	i    int // current segment
	st   *simpleStore
	pos  int64
	next uint64 // offset of the record at pos
	// moved: the segment before the current one was read, so its end must
	// not lie past the current base.
	moved bool
	rec   SimpleRecord
	tails []SimpleTail
	err   error
	// After a CorruptionError: a record the index shows after the damage.
	resumePos    int64
	resumeOffset uint64
	canResume    bool
}

// Read returns an iterator over the records with offsets >= from.
// Offsets in a gap between segments are skipped; segments that overlap
// are corruption.
func (l *SimpleLog) Read(from uint64) *SimpleIterator {
	it := &SimpleIterator{l: l, from: from}
	it.i = max(sort.Search(len(l.segs), func(i int) bool { return l.segs[i].Base > from })-1, 0)
	return it
}

// Next moves to the next record and reports whether there is one. At the
// end, Err says whether something stopped it early, and Tails which
// segments end in a torn record.
//
// A frame running past the end of its store is a torn record (what a
// crash leaves: the writer buffers every open store) unless the index
// shows a whole record after it: then it is corruption. A torn record
// may end any segment, not only the last: the writer keeps all its
// segments open until it closes the log.
func (it *SimpleIterator) Next() bool {
	for it.err == nil {
		if it.st == nil && !it.open() {
			return false
		}
		n, fits, err := it.st.frame(it.pos)
		if err != nil {
			it.err = err
			return false
		}
		if !fits {
			if it.pos == it.st.size {
				it.closeSegment()
				continue
			}
			seg := it.l.segs[it.i]
			if at, rel, ok := it.st.recordAfter(seg.Index, it.pos, it.next-seg.Base); ok {
				it.err = &CorruptionError{Path: it.st.path, Pos: it.pos, Offset: int64(it.next), Reason: format.ErrFrameLen}
				it.resumePos, it.resumeOffset, it.canResume = at, seg.Base+rel, true
				return false
			}
			it.tails = append(it.tails, SimpleTail{Path: it.st.path, Pos: it.pos, Offset: it.next, Bytes: it.st.size - it.pos, Len: n,
				HasLen: it.pos <= it.st.size-format.SimpleFrameLen})
			it.closeSegment()
			continue
		}
		pos, off := it.pos, it.next
		it.pos += format.SimpleFrameLen + int64(n)
		it.next++
		if off < it.from {
			continue // skipped without reading the value
		}
		v, err := it.st.value(pos, n)
		if err != nil {
			it.err = err
			return false
		}
		it.rec = SimpleRecord{Offset: off, Pos: pos, Value: v, Store: it.st.path}
		return true
	}
	return false
}

// open opens the current segment, and reports whether there is one.
func (it *SimpleIterator) open() bool {
	if it.i >= len(it.l.segs) {
		return false
	}
	seg := it.l.segs[it.i]
	if it.moved && seg.Base < it.next {
		it.err = &CorruptionError{Path: seg.Store, Pos: 0, Offset: int64(it.next), Reason: ErrOverlap}
		return false
	}
	st, err := openSimpleStore(seg.Store)
	if err != nil {
		it.err = err
		return false
	}
	it.st, it.pos, it.next = st, 0, seg.Base
	if it.from > seg.Base {
		var rel uint64
		it.pos, rel = st.seek(seg.Index, it.from-seg.Base)
		it.next = seg.Base + rel
	}
	return true
}

func (it *SimpleIterator) closeSegment() {
	it.st.Close()
	it.st, it.moved = nil, true
	it.i++
}

// SkipCorrupt goes on after a CorruptionError, and reports whether there
// is anything to go on with: at the record the index showed after the
// damage, else with the next segment (this layout has no way to find
// record boundaries again inside a store).
func (it *SimpleIterator) SkipCorrupt() bool {
	var ce *CorruptionError
	if !errors.As(it.err, &ce) {
		return false
	}
	if it.canResume && it.st != nil {
		it.err, it.canResume = nil, false
		it.pos, it.next = it.resumePos, it.resumeOffset
		return true
	}
	if it.i >= len(it.l.segs)-1 {
		return false
	}
	it.err = nil
	if it.st != nil {
		it.st.Close()
		it.st = nil
	}
	it.i++
	it.moved = false // offsets go on from the next segment's base
	return true
}

// Record is the current record.
func (it *SimpleIterator) Record() SimpleRecord { return it.rec }

// Err is what stopped the iterator early, if anything.
func (it *SimpleIterator) Err() error { return it.err }

// Tails are the torn records segments read so far end in.
func (it *SimpleIterator) Tails() []SimpleTail { return it.tails }

// Close releases the open file.
func (it *SimpleIterator) Close() error {
	if it.st == nil {
		return nil
	}
	err := it.st.Close()
	it.st = nil
	return err
}
