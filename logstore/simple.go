package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// This file reads logs in the simple store/index layout (format/simple.go)
// that other programs write. seglog never writes into such a directory:
// every file is opened read-only, nothing is locked, created or renamed.
// The writer of that layout appends to the .store through a buffer and to
// the .index through a memory map it pre-sizes with zeros, so after a crash
// the .index may end in zero entries, or in entries for records the .store
// never received: both are what a crash leaves, not damage.

// Layout is the kind of files a directory holds.
type Layout int

const (
	// LayoutNone: neither kind of segment file.
	LayoutNone Layout = iota
	// LayoutSeglog: seglog segments (<20 digits>.log, .index, .timeindex).
	LayoutSeglog
	// LayoutSimple: <digits>.store and .index pairs.
	LayoutSimple
)

// ErrMixedLayout means a directory holds both seglog segments and simple
// store files, so it is not safe to guess which to read.
var ErrMixedLayout = errors.New("directory holds both seglog segments and simple store/index files")

// MixedLayoutError is ErrMixedLayout with one file of each kind.
type MixedLayoutError struct {
	Dir        string
	SeglogFile string
	SimpleFile string
}

func (e *MixedLayoutError) Error() string {
	return fmt.Sprintf("%s holds both seglog segment files (%s) and simple store/index files (%s): seglog reads only one layout per directory; move one kind elsewhere",
		e.Dir, e.SeglogFile, e.SimpleFile)
}

func (e *MixedLayoutError) Unwrap() error { return ErrMixedLayout }

// DetectLayout tells by file names which layout dir holds. A .index file
// alone says nothing: both layouts use that extension.
func DetectLayout(dir string) (Layout, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return LayoutNone, err
	}
	var seglogFile, simpleFile string
	for _, e := range entries {
		name := e.Name()
		if _, ext, err := format.ParseSegmentName(name); err == nil && ext != format.IndexExt {
			seglogFile = cmp.Or(seglogFile, name)
		} else if _, ext, err := format.ParseSimpleName(name); err == nil && ext == format.SimpleStoreExt {
			simpleFile = cmp.Or(simpleFile, name)
		}
	}
	switch {
	case seglogFile != "" && simpleFile != "":
		return LayoutNone, &MixedLayoutError{Dir: dir, SeglogFile: seglogFile, SimpleFile: simpleFile}
	case simpleFile != "":
		return LayoutSimple, nil
	case seglogFile != "":
		return LayoutSeglog, nil
	}
	return LayoutNone, nil
}

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
// without a .store is listed by OrphanIndexes. Two files for one base
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

// OrphanIndexes lists the .index files that have no .store beside them.
func (l *SimpleLog) OrphanIndexes() []string { return l.orphans }

// simpleStore reads one .store file with positional reads through a
// buffer, up to its size when opened: the end of the log as it was when
// reading started.
type simpleStore struct {
	path   string
	f      file
	size   int64
	buf    []byte // file bytes [bufPos, bufPos+len(buf))
	bufPos int64
}

func openSimpleStore(path string) (*simpleStore, error) {
	f, size, err := fsx.OpenReadStat(path)
	if err != nil {
		return nil, err
	}
	return &simpleStore{path: path, f: f, size: size}, nil
}

// simpleChunk is how much of a .store is read at a time.
const simpleChunk = 128 << 10

// window returns the store's bytes [pos, pos+n), format.ErrShort when it
// ends before; a buffer is never larger than the bytes the store holds.
func (s *simpleStore) window(pos, n int64) ([]byte, error) {
	if pos >= s.bufPos && pos+n <= s.bufPos+int64(len(s.buf)) {
		return s.buf[pos-s.bufPos : pos-s.bufPos+n], nil
	}
	if pos < 0 || n < 0 || pos+n > s.size {
		return nil, format.ErrShort
	}
	want := min(max(n, simpleChunk), s.size-pos)
	if int64(cap(s.buf)) < want {
		s.buf = make([]byte, want)
	}
	m, err := s.f.ReadAt(s.buf[:want], pos)
	s.buf, s.bufPos = s.buf[:m], pos
	if int64(m) < n {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, format.ErrShort
		}
		return nil, err
	}
	return s.buf[:n], nil
}

func (s *simpleStore) Close() error { return s.f.Close() }

// frame reads the length field at pos. fits says whether the record's
// frame and value lie inside the store; a length that cannot fit is never
// allocated, only reported.
func (s *simpleStore) frame(pos int64) (n uint64, fits bool, err error) {
	if pos < 0 || pos > s.size-format.SimpleFrameLen {
		return 0, false, nil
	}
	b, err := s.window(pos, format.SimpleFrameLen)
	if err != nil {
		if errors.Is(err, format.ErrShort) {
			err = nil // the file shrank: the frame is gone
		}
		return 0, false, err
	}
	n, _ = format.ParseSimpleFrame(b)
	return n, n <= uint64(s.size-pos-format.SimpleFrameLen), nil
}

// value returns the n bytes of the value framed at pos (valid until the
// next read).
func (s *simpleStore) value(pos int64, n uint64) ([]byte, error) {
	b, err := s.window(pos+format.SimpleFrameLen, int64(n))
	if errors.Is(err, format.ErrShort) {
		err = fmt.Errorf("%s shrank while being read: %w", s.path, io.ErrUnexpectedEOF)
	}
	return b, err
}

// simpleEnd is how many whole records a .store holds, and its size.
type simpleEnd struct {
	Records uint64
	Size    int64
}

// scanFrom counts the whole records from (pos, the record number there) to
// the end of the store, reading only length fields.
func (s *simpleStore) scanFrom(pos int64, rel uint64) (simpleEnd, error) {
	for {
		n, fits, err := s.frame(pos)
		if err != nil {
			return simpleEnd{}, fmt.Errorf("scan %s: %w", s.path, err)
		}
		if !fits {
			return simpleEnd{Records: rel, Size: s.size}, nil
		}
		pos += format.SimpleFrameLen + int64(n)
		rel++
	}
}

// simpleIndex reads a simple .index with positional reads, a chunk of
// entries at a time: never a mapping that its writer could truncate under
// us (docs/format.md §10).
type simpleIndex struct {
	f       file
	n       int64 // whole entries
	partial int64 // bytes of a partial last entry
	buf     []byte
	bufAt   int64 // entry number of buf's first entry
}

const simpleIndexChunk = 4096 // entries read at once

func openSimpleIndex(path string) (*simpleIndex, error) {
	f, size, err := fsx.OpenReadStat(path)
	if err != nil {
		return nil, err
	}
	return &simpleIndex{f: f, n: size / format.SimpleIndexEntryLen, partial: size % format.SimpleIndexEntryLen}, nil
}

func (x *simpleIndex) Close() error { return x.f.Close() }

// entry returns entry i (0 <= i < n). Sequential reads hit the buffer; a
// lookup far from it reads a single entry.
func (x *simpleIndex) entry(i int64, sequential bool) (format.SimpleIndexEntry, error) {
	if k := i - x.bufAt; k < 0 || (k+1)*format.SimpleIndexEntryLen > int64(len(x.buf)) {
		n := int64(1)
		if sequential {
			n = min(simpleIndexChunk, x.n-i)
		}
		if int64(cap(x.buf)) < n*format.SimpleIndexEntryLen {
			x.buf = make([]byte, n*format.SimpleIndexEntryLen)
		}
		x.buf = x.buf[:n*format.SimpleIndexEntryLen]
		if _, err := x.f.ReadAt(x.buf, i*format.SimpleIndexEntryLen); err != nil {
			x.buf = x.buf[:0]
			if errors.Is(err, io.EOF) {
				err = format.ErrShort // truncated meanwhile
			}
			return format.SimpleIndexEntry{}, err
		}
		x.bufAt = i
	}
	return format.ParseSimpleIndexEntry(x.buf[(i-x.bufAt)*format.SimpleIndexEntryLen:])
}

// plausible: entry i, as read, could be record i's (its number, a
// position inside the store, and only entry 0 at position 0).
func (e simpleEntryAt) plausible(size int64) bool {
	return uint64(e.RelOffset) == uint64(e.i) && e.Pos < uint64(size) && (e.i == 0) == (e.Pos == 0)
}

type simpleEntryAt struct {
	format.SimpleIndexEntry
	i int64
}

// seek returns a validated starting point for reading record number rel
// of the segment: the position and number of a record at or before it.
// An index entry is used only if it checks out against the store's
// framing: the entry before it is plausible too and the frame there ends
// exactly where this one starts. Otherwise reading starts at byte 0: a
// lying index costs a longer scan. (Records carry no offset, so an index
// shifted by whole records would pass; verify-crc finds that.)
func (s *simpleStore) seek(indexPath string, rel uint64) (int64, uint64) {
	if rel == 0 || indexPath == "" {
		return 0, 0
	}
	x, err := openSimpleIndex(indexPath)
	if err != nil || x.n < 2 {
		if err == nil {
			x.Close()
		}
		return 0, 0
	}
	defer x.Close()
	at := func(i int64) simpleEntryAt {
		e, err := x.entry(i, false)
		if err != nil {
			return simpleEntryAt{i: -1}
		}
		return simpleEntryAt{e, i}
	}
	// The last plausible entry at or before rel, searching as if the
	// plausible ones were a prefix (they are in an index that is not
	// damaged: real entries, then padding or stale ones).
	hi := int64(min(rel, uint64(x.n-1)))
	k := hi
	if !at(hi).plausible(s.size) {
		k = int64(sort.Search(int(hi+1), func(i int) bool { return !at(int64(i)).plausible(s.size) })) - 1
	}
	if k < 1 {
		return 0, 0
	}
	e, prev := at(k), at(k-1)
	if !e.plausible(s.size) || !prev.plausible(s.size) {
		return 0, 0
	}
	n, fits, err := s.frame(int64(prev.Pos))
	if err != nil || !fits || prev.Pos+format.SimpleFrameLen+n != e.Pos {
		return 0, 0
	}
	if _, fits, err := s.frame(int64(e.Pos)); err != nil || !fits {
		return int64(prev.Pos), uint64(k - 1) // e points at a torn record: prev checked out
	}
	return int64(e.Pos), uint64(k)
}

// recordAfter looks in the index for a record after a frame at pos
// (record number k) that runs past the store's end: an entry for a later
// record, inside the store, whose frame fits. Then the frame at pos is
// damage in the middle of the data, not a record torn at the end, and
// reading can go on from there. A bounded number of entries is tried.
func (s *simpleStore) recordAfter(indexPath string, pos int64, k uint64) (at int64, rel uint64, ok bool) {
	if indexPath == "" {
		return 0, 0, false
	}
	x, err := openSimpleIndex(indexPath)
	if err != nil {
		return 0, 0, false
	}
	defer x.Close()
	const maxChecks = 64 // past this many, the index is no help
	for i := int64(k) + 1; i < x.n && i <= int64(k)+maxChecks; i++ {
		e, err := x.entry(i, true)
		if err != nil {
			return 0, 0, false
		}
		if uint64(e.RelOffset) != uint64(i) || e.Pos <= uint64(pos) || e.Pos >= uint64(s.size) {
			continue
		}
		if _, fits, err := s.frame(int64(e.Pos)); err == nil && fits {
			return int64(e.Pos), uint64(i), true
		}
	}
	return 0, 0, false
}

// end scans the store from its last index entry that checks out.
func (s *simpleStore) end(indexPath string) (simpleEnd, error) {
	pos, rel := s.seek(indexPath, math.MaxUint64)
	return s.scanFrom(pos, rel)
}

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

// Bounds returns the first offset of the log and the offset after its
// last whole record.
func (l *SimpleLog) Bounds() (start, next uint64, err error) {
	if len(l.segs) == 0 {
		return 0, 0, nil
	}
	last := l.segs[len(l.segs)-1]
	end, err := last.end()
	if err != nil {
		return 0, 0, err
	}
	return l.segs[0].Base, last.Base + end.Records, nil
}

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

// SimpleEntryClass is what a simple .index entry turns out to be.
type SimpleEntryClass int

const (
	// SimpleEntryReal: the entry's number, offset and position are those
	// of a record in the store.
	SimpleEntryReal SimpleEntryClass = iota
	// SimpleEntryPadding: an all-zero entry in the run at the end of the
	// file, never written: the index was not closed cleanly.
	SimpleEntryPadding
	// SimpleEntryPastEnd: an entry for a record the store does not hold,
	// pointing at or past the end of its whole records: written through
	// the map while the record was lost from the store's buffer.
	SimpleEntryPastEnd
	// SimpleEntryWrong: an entry that points elsewhere, or holds another
	// offset than its number.
	SimpleEntryWrong
)

func (c SimpleEntryClass) String() string {
	switch c {
	case SimpleEntryReal:
		return "real"
	case SimpleEntryPadding:
		return "zero padding"
	case SimpleEntryPastEnd:
		return "past the store's end"
	case SimpleEntryWrong:
		return "wrong"
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Kind is the finding kind naming the class: what dump-index --json
// prints, and what verify-crc calls the same entry.
func (c SimpleEntryClass) Kind() FindingKind {
	switch c {
	case SimpleEntryReal:
		return FindingOK
	case SimpleEntryPadding:
		return FindingIndexPadding
	case SimpleEntryPastEnd:
		return FindingIndexStale
	case SimpleEntryWrong:
		return FindingIndexMismatch
	}
	return FindingKind(c.String())
}

// SimpleIndexEntryInfo is one classified .index entry, or a run of zero
// padding (Count entries from Entry on).
type SimpleIndexEntryInfo struct {
	Entry int64
	Count int64
	format.SimpleIndexEntry
	Class SimpleEntryClass
	Why   string // for wrong and past-the-end entries: what the store holds
}

// SimpleSegmentCheck sums up the check of one segment's store and index.
type SimpleSegmentCheck struct {
	Segment      SimpleSegment
	Entries      int64 // whole index entries
	PartialBytes int64 // of a partial last entry
	Real         int64
	Padding      int64
	PastEnd      int64
	Wrong        int64
	Records      uint64 // whole records framed from the store's first byte
	End          int64  // byte after the last of them
	// Reached is the record number the store's end has, counting past
	// damage the index bridges: the segment's next offset is Base+Reached.
	Reached uint64
	Size    int64 // of the store
	// When End < Size: the length field there, if it is whole (HasLen),
	// and whether that is corruption (the index shows a whole record
	// after it, at ResumePos) rather than a torn last record.
	Len       uint64
	HasLen    bool
	Corrupt   bool
	ResumePos int64
}

// CheckSimpleSegment reads seg's store from its first byte and its index
// (if any) alongside, and classifies every index entry (SimpleEntryClass)
// through each; a run of zero padding comes as one call. Memory stays
// constant whatever the sizes: the index is streamed, and a zero run is
// kept as a count until it turns out to end the file (padding) or not
// (wrong entries, reported one by one).
func CheckSimpleSegment(seg SimpleSegment, each func(SimpleIndexEntryInfo) error) (SimpleSegmentCheck, error) {
	c := SimpleSegmentCheck{Segment: seg}
	st, err := openSimpleStore(seg.Store)
	if err != nil {
		return c, err
	}
	defer st.Close()
	c.Size = st.size
	sc := simpleCursor{st: st, index: seg.Index, tried: -1}
	if err := sc.fill(); err != nil {
		return c, err
	}
	if seg.Index != "" {
		if err := c.checkIndex(&sc, each); err != nil {
			return c, err
		}
	}
	if _, err := sc.to(math.MaxUint64); err != nil {
		return c, err
	}
	c.Reached = sc.k
	if sc.broken {
		c.Records, c.End = sc.breakK, sc.breakPos
		c.Len, c.HasLen = sc.breakLen, sc.breakPos <= c.Size-format.SimpleFrameLen
		c.Corrupt, c.ResumePos = sc.corrupt, sc.corruptResume
	} else {
		c.Records, c.End = sc.k, sc.pos
	}
	return c, nil
}

// simpleCursor walks a store's records in step with its index entries.
// Where the framing breaks it goes on, if the index shows a whole record
// after the break, from there: entries past damage are still checked.
type simpleCursor struct {
	st    *simpleStore
	index string
	k     uint64 // number of the record at pos
	pos   int64
	n     uint64 // its length
	fits  bool   // a whole record k starts at pos
	// The first break of the framing; corrupt when the index shows a
	// whole record after it (at corruptResume).
	broken        bool
	breakPos      int64
	breakK        uint64
	breakLen      uint64
	corrupt       bool
	corruptResume int64
	// The last break recordAfter was asked about (-1: none), and its
	// answer.
	tried     int64
	canResume bool
	resumePos int64
	resumeK   uint64
}

func (c *simpleCursor) fill() (err error) {
	c.n, c.fits, err = c.st.frame(c.pos)
	return err
}

// to moves towards record k and reports whether the store holds it whole.
func (c *simpleCursor) to(k uint64) (bool, error) {
	for c.k < k {
		if !c.fits {
			if c.pos >= c.st.size || !c.resume(k) {
				return false, nil
			}
		} else {
			c.pos += format.SimpleFrameLen + int64(c.n)
			c.k++
		}
		if err := c.fill(); err != nil {
			return false, err
		}
	}
	return c.k == k && c.fits, nil
}

// resume jumps over a break of the framing to the record the index shows
// after it, when that record is not past k.
func (c *simpleCursor) resume(k uint64) bool {
	if c.tried != c.pos {
		at, rel, ok := c.st.recordAfter(c.index, c.pos, c.k)
		if !c.broken {
			c.broken, c.breakPos, c.breakK, c.breakLen = true, c.pos, c.k, c.n
			c.corrupt, c.corruptResume = ok, at
		}
		c.tried, c.canResume, c.resumePos, c.resumeK = c.pos, ok, at, rel
	}
	if !c.canResume || c.resumeK > k {
		return false
	}
	c.pos, c.k = c.resumePos, c.resumeK
	return true
}

func (c *SimpleSegmentCheck) checkIndex(sc *simpleCursor, each func(SimpleIndexEntryInfo) error) error {
	x, err := openSimpleIndex(c.Segment.Index)
	if err != nil {
		return err
	}
	defer x.Close()
	c.Entries, c.PartialBytes = x.n, x.partial
	emit := func(info SimpleIndexEntryInfo) error {
		switch info.Class {
		case SimpleEntryReal:
			c.Real += info.Count
		case SimpleEntryPadding:
			c.Padding += info.Count
		case SimpleEntryPastEnd:
			c.PastEnd += info.Count
		case SimpleEntryWrong:
			c.Wrong += info.Count
		}
		return each(info)
	}
	zeroFrom := int64(-1) // first entry of the current run of zero entries
	for i := int64(0); i < x.n; i++ {
		e, err := x.entry(i, true)
		if err != nil {
			return fmt.Errorf("read %s: %w", c.Segment.Index, err)
		}
		if e.IsZero() && (i > 0 || c.Size == 0) {
			// Entry 0 is legitimately all zeros, unless there is no
			// record 0 at all.
			if zeroFrom < 0 {
				zeroFrom = i
			}
			continue
		}
		if zeroFrom >= 0 {
			// Zeros with a written entry after them were not padding.
			for j := zeroFrom; j < i; j++ {
				if err := emit(SimpleIndexEntryInfo{Entry: j, Count: 1, Class: SimpleEntryWrong,
					Why: "an all-zero entry before written ones: not padding"}); err != nil {
					return err
				}
			}
			zeroFrom = -1
		}
		info, err := c.classify(sc, i, e)
		if err != nil {
			return err
		}
		if err := emit(info); err != nil {
			return err
		}
	}
	if zeroFrom >= 0 {
		return emit(SimpleIndexEntryInfo{Entry: zeroFrom, Count: x.n - zeroFrom, Class: SimpleEntryPadding})
	}
	return nil
}

// classify classifies entry i (not zero padding) against the store.
func (c *SimpleSegmentCheck) classify(sc *simpleCursor, i int64, e format.SimpleIndexEntry) (SimpleIndexEntryInfo, error) {
	info := SimpleIndexEntryInfo{Entry: i, Count: 1, SimpleIndexEntry: e}
	if uint64(e.RelOffset) != uint64(i) {
		info.Class = SimpleEntryWrong
		info.Why = fmt.Sprintf("holds relative offset %d where entry %d must hold %d", e.RelOffset, i, i)
		return info, nil
	}
	has, err := sc.to(uint64(i))
	if err != nil {
		return info, err
	}
	switch {
	case has && e.Pos == uint64(sc.pos):
		info.Class = SimpleEntryReal
	case has:
		info.Class = SimpleEntryWrong
		info.Why = fmt.Sprintf("record %d starts at byte %d", i, sc.pos)
	case e.Pos >= uint64(c.Size):
		info.Class = SimpleEntryPastEnd
		info.Why = fmt.Sprintf("the store is %d %s long", c.Size, plural(c.Size != 1, "byte", "bytes"))
	case sc.k == uint64(i) && e.Pos == uint64(sc.pos):
		// Record i does start there; it is cut off or its length is
		// broken, which the store's check reports.
		info.Class = SimpleEntryReal
	default:
		info.Class = SimpleEntryWrong
		info.Why = fmt.Sprintf("no record %d starts there: the store's framing reaches %d whole %s", i, sc.k, plural(sc.k != 1, "record", "records"))
	}
	return info, nil
}

// Verify checks every segment of the simple log: the framing of every
// record from each store's first byte, that segments follow on from each
// other, the tail of the last store, and every index entry (see
// CheckSimpleSegment). There are no checksums: payload integrity cannot be
// checked. Findings go to finding, with name as their partition.
func (l *SimpleLog) Verify(name string, finding func(Finding) error) (VerifyReport, error) {
	r := VerifyReport{Name: name, Dir: l.dir, Segments: len(l.segs)}
	add := func(sev Severity, kind FindingKind, path string, pos, offset int64, reason string) error {
		if sev == SeverityProblem {
			r.Problems++
		} else {
			r.Notes++
		}
		return finding(Finding{Severity: sev, Kind: kind, Partition: name, Path: path, Pos: pos, Offset: offset, Reason: reason})
	}
	for _, o := range l.orphans {
		if err := add(SeverityProblem, FindingOrphanIndex, o, -1, -1, "an index without its .store: that segment's records are missing"); err != nil {
			return r, err
		}
	}
	if len(l.segs) == 0 {
		r.Complete = true
		return r, add(SeverityNote, FindingNoSegments, l.dir, -1, -1, "no .store files")
	}
	var next uint64
	for i, seg := range l.segs {
		if i > 0 && seg.Base < next {
			if err := add(SeverityProblem, FindingOverlap, seg.Store, 0, int64(seg.Base),
				fmt.Sprintf("segment starts at offset %d, below the end of the one before (next offset %d)", seg.Base, next)); err != nil {
				return r, err
			}
		} else if i > 0 && seg.Base > next {
			if err := add(SeverityProblem, FindingGap, seg.Store, 0, int64(next),
				fmt.Sprintf("offsets %d..%d are missing between segments", next, seg.Base-1)); err != nil {
				return r, err
			}
		}
		c, err := CheckSimpleSegment(seg, func(e SimpleIndexEntryInfo) error {
			pos, off := e.Entry*format.SimpleIndexEntryLen, int64(seg.Base)+e.Entry
			switch e.Class {
			case SimpleEntryPadding:
				return add(SeverityNote, e.Class.Kind(), seg.Index, pos, off, fmt.Sprintf("entries %d..%d: zero padding (%d %s): the index was not closed cleanly",
					e.Entry, e.Entry+e.Count-1, e.Count, plural(e.Count != 1, "entry", "entries")))
			case SimpleEntryPastEnd:
				return add(SeverityNote, e.Class.Kind(), seg.Index, pos, off, fmt.Sprintf("entry %d points at byte %d, past the store's end: %s (lost from the store's buffer in a crash)", e.Entry, e.Pos, e.Why))
			case SimpleEntryWrong:
				return add(SeverityProblem, e.Class.Kind(), seg.Index, pos, off, fmt.Sprintf("entry %d (offset %d, byte %d) is wrong: %s", e.Entry, e.RelOffset, e.Pos, e.Why))
			}
			return nil
		})
		if err != nil {
			return r, err
		}
		r.Records += c.Records
		r.Bytes += c.Size
		next = seg.Base + c.Reached
		if err := l.verifyEnd(&c, add); err != nil {
			return r, err
		}
	}
	r.Complete = true
	return r, nil
}

// verifyEnd reports a segment's tail and what its index lacks.
func (l *SimpleLog) verifyEnd(c *SimpleSegmentCheck, add func(Severity, FindingKind, string, int64, int64, string) error) error {
	seg := c.Segment
	off := int64(seg.Base + c.Records)
	if c.End < c.Size {
		what := fmt.Sprintf("%d %s after the last whole record", c.Size-c.End, plural(c.Size-c.End != 1, "byte", "bytes"))
		if c.HasLen {
			what += fmt.Sprintf(", whose length field says %d", c.Len)
		}
		if c.Corrupt {
			if err := add(SeverityProblem, FindingCorruptRecord, seg.Store, c.End, off,
				fmt.Sprintf("record length runs past the end of the .store, though the index shows a whole record at byte %d: %s", c.ResumePos, what)); err != nil {
				return err
			}
		} else if err := add(SeverityProblem, FindingIncompleteTail, seg.Store, c.End, off, "torn last record (what a crash leaves): "+what); err != nil {
			return err
		}
	}
	switch {
	case seg.Index == "":
		return add(SeverityNote, FindingIndexMissing, seg.Store, -1, -1, "no .index beside it (it is only a hint)")
	case c.Real < int64(c.Records):
		if err := add(SeverityNote, FindingIndexShort, seg.Index, -1, -1, fmt.Sprintf("%d of the store's %d records are indexed", c.Real, c.Records)); err != nil {
			return err
		}
	}
	if c.PartialBytes > 0 {
		return add(SeverityNote, FindingIndexPartial, seg.Index, c.Entries*format.SimpleIndexEntryLen, -1,
			fmt.Sprintf("a partial last entry of %d %s, ignored", c.PartialBytes, plural(c.PartialBytes != 1, "byte", "bytes")))
	}
	return nil
}
