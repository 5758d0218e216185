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
