package logstore

import (
	"container/list"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// Partition is a read-only view of one partition directory, as its
// segments were when it was opened. It takes no lock: a writer may append
// and a sweep may delete segments meanwhile. Reads notice a segment it
// keeps open deleted at once when this process deleted it, within
// keptOpenRecheck when another did.
type Partition struct {
	dir  string
	name string // for messages: "orders/0", or the directory
	segs []segment
	odd  []*NotRegularError // index files read without
	lone bool               // a lone segment file (OpenSegmentFile)

	mu      sync.Mutex
	firstTS map[uint64]int64  // first records' timestamps, by segment base
	floors  map[uint64]uint64 // precedingEnd of segments, by base

	// Guarded by keptOpen.mu.
	open   map[uint64]*segmentFiles // segments kept open between reads, by base
	closed bool
}

// maxKeptOpen bounds how many segments' files the process keeps open
// between reads, across all its Partitions, least recently used closed
// first: random lookups over up to that many segments then cost two
// preads and no open (docs/performance.md, "Lookup"), while a command
// reading thousands of segments, or every
// partition of a topic of thousands, keeps at most twice that many
// descriptors. A low RLIMIT_NOFILE lowers it (keptOpenLimit).
const maxKeptOpen = 128

// keptOpen is the segments kept open between reads: one list for the
// whole process, as the limit on descriptors is the process's.
var keptOpen segmentCache

// segmentCache lists the segments Partitions keep open, most recently
// used first.
type segmentCache struct {
	mu    sync.Mutex
	limit int       // set on first use
	lru   list.List // of *segmentFiles
}

// keptOpenLimit is maxKeptOpen, or a sixteenth of the soft RLIMIT_NOFILE
// when that is less (Go raises the soft limit to the hard one at start):
// 64 segments under `ulimit -n 1024`, leaving most descriptors to what
// the command holds besides.
func keptOpenLimit() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return maxKeptOpen
	}
	return int(min(max(rl.Cur/16, 8), maxKeptOpen))
}

// keptOpenRecheck is how often a segment kept open is checked for having
// been deleted by another process (an fstat: a fifth of a lookup's time
// when done on every one); deletions this process made are seen at once
// (filesMoved). A read served from a segment deleted less than this long
// ago gets the records it had, which were valid when deleted: a broker,
// too, lets readers finish on a deleted segment (Kafka waits a minute).
const keptOpenRecheck = 10 * time.Millisecond

// segmentFiles are one segment's .log and .index, open for reading, shared
// by a Partition's iterators.
type segmentFiles struct {
	seg     segment
	log     file
	owner   *Partition
	refs    int       // iterators reading log
	cached  bool      // in its owner's open map and keptOpen's list; else closed at refs 0
	checked time.Time // when log was last seen still linked ...
	seenGen uint64    // ... and filesMoved then

	elem *list.Element // in keptOpen's list, while cached

	idxMu    sync.Mutex
	idx      *segfile.Index // opened on first use; nil when there is none
	idxFile  *os.File
	idxTried bool
}

// acquire returns seg's files, opening the .log when the partition does
// not hold it open already, and the .log's FileInfo when it asked for it.
// Every acquire is paired with a release. A segment found deleted since it
// was opened (a retention sweep) is not served from the open file: new
// reads must see it gone, as docs/format.md §6 says; they see it at once after a
// deletion by this process, within keptOpenRecheck after another's.
func (p *Partition) acquire(seg segment) (*segmentFiles, os.FileInfo, error) {
	c := &keptOpen
	c.mu.Lock()
	now, gen := time.Now(), fsx.FilesMoved()
	if sf := p.open[seg.base]; sf != nil {
		if gen == sf.seenGen && now.Sub(sf.checked) < keptOpenRecheck {
			sf.refs++
			c.touch(sf)
			c.mu.Unlock()
			return sf, nil, nil
		}
		fi, err := sf.log.Stat()
		if err != nil {
			c.mu.Unlock()
			return nil, nil, err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink > 0 {
			sf.refs++
			sf.checked, sf.seenGen = now, gen
			c.touch(sf)
			c.mu.Unlock()
			return sf, fi, nil
		}
		c.forget(sf)
	}
	c.mu.Unlock()
	// Opened without the lock: readers of other partitions go on meanwhile.
	f, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		return nil, nil, err
	}
	sf := &segmentFiles{seg: seg, log: osFile{File: f}, owner: p, refs: 1, checked: now, seenGen: gen}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.closed || p.open[seg.base] != nil {
		return sf, nil, nil // not kept: closed at its release
	}
	if p.open == nil {
		p.open = make(map[uint64]*segmentFiles)
	}
	p.open[seg.base] = sf
	c.push(sf)
	if c.limit == 0 {
		c.limit = keptOpenLimit()
	}
	for c.lru.Len() > c.limit {
		c.forget(c.lru.Back().Value.(*segmentFiles))
	}
	return sf, nil, nil
}

// push lists sf as the most recently used. c.mu is held.
func (c *segmentCache) push(sf *segmentFiles) {
	sf.cached, sf.elem = true, c.lru.PushFront(sf)
}

// touch moves sf, kept open, to the front. c.mu is held.
func (c *segmentCache) touch(sf *segmentFiles) { c.lru.MoveToFront(sf.elem) }

// forget stops keeping sf open; its last user closes it. c.mu is held.
func (c *segmentCache) forget(sf *segmentFiles) error {
	delete(sf.owner.open, sf.seg.base)
	c.lru.Remove(sf.elem)
	sf.cached, sf.elem = false, nil
	if sf.refs == 0 {
		return sf.close()
	}
	return nil
}

// release ends one use of sf's files.
func (p *Partition) release(sf *segmentFiles) error {
	keptOpen.mu.Lock()
	defer keptOpen.mu.Unlock()
	sf.refs--
	if sf.refs == 0 && !sf.cached {
		return sf.close()
	}
	return nil
}

func (sf *segmentFiles) close() error {
	if sf.idxFile != nil {
		sf.idxFile.Close()
	}
	return sf.log.Close()
}

// index returns the segment's .index, opened on first use and kept with
// the segment's files; nil when it has none.
func (sf *segmentFiles) index() *segfile.Index {
	sf.idxMu.Lock()
	defer sf.idxMu.Unlock()
	if !sf.idxTried {
		sf.idxTried = true
		if f, size, err := fsx.OpenIndex(sf.seg.path(format.IndexExt)); err == nil {
			sf.idx, sf.idxFile = segfile.NewIndex(f, size), f.File
		}
	}
	return sf.idx
}

// Close closes the files the partition keeps open between reads. Close
// its iterators first. A Partition that is never closed keeps its
// segments among those the process keeps open (at most maxKeptOpen in
// all) until others push them out.
func (p *Partition) Close() error {
	keptOpen.mu.Lock()
	defer keptOpen.mu.Unlock()
	p.closed = true
	var first error
	for _, sf := range p.open {
		if err := keptOpen.forget(sf); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// OpenPartitionDir opens the partition directory dir for reading; name is
// how messages refer to it.
func OpenPartitionDir(dir, name string) (*Partition, error) {
	segs, odd, err := readSegments(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", name, ErrPartitionNotFound)
		}
		return nil, fmt.Errorf("open partition %s: %w", name, err)
	}
	return &Partition{dir: dir, name: name, segs: segs, odd: odd}, nil
}

// OpenSegmentFile opens the lone segment file path (a .log, with its
// .index and .timeindex beside it if they are there) for reading, as the
// one segment of a partition of its own: a segment copied off a broken
// disk, say. Being the partition's last, it is its active segment, whose
// tail may be incomplete rather than corrupt. Its base offset is the one
// its name gives; a file not named after one takes its first record's
// offset when that record checks out, else 0, so that valid data is found
// wherever it resumes. name is how messages refer to it. Nothing is ever
// written.
func OpenSegmentFile(path, name string) (*Partition, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", name, ErrPartitionNotFound)
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fsx.NewNotRegularError(path, fi.Mode())
	case !strings.HasSuffix(path, format.LogExt):
		return nil, fmt.Errorf("%s is not a segment file: its name must end in %s", path, format.LogExt)
	}
	seg := segment{dir: filepath.Dir(path)}
	file := filepath.Base(path)
	if base, ext, err := format.ParseSegmentName(file); err == nil && ext == format.LogExt {
		seg.base = base
	} else {
		seg.stem = strings.TrimSuffix(file, format.LogExt)
		if seg.base, err = checkedFirstOffset(seg); err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}
	p := &Partition{dir: seg.dir, name: name, segs: []segment{seg}, lone: true}
	for _, ext := range []string{format.IndexExt, format.TimeIndexExt} {
		if fi, err := os.Lstat(seg.path(ext)); err == nil && !fi.Mode().IsRegular() {
			p.odd = append(p.odd, fsx.NewNotRegularError(seg.path(ext), fi.Mode()))
		}
	}
	return p, nil
}

// checkedFirstOffset is the offset of the first record of seg's .log when
// that record checks out, else 0.
func checkedFirstOffset(seg segment) (uint64, error) {
	f, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	off, ok, err := segfile.FirstOffset(osFile{File: f})
	if err != nil || !ok {
		return 0, err
	}
	seg.base = off
	sc, err := segfile.NewScanner(segfileSegment(seg, osFile{File: f}, nil, 0, true), -1, segfile.Options{})
	if err != nil {
		return 0, err
	}
	defer sc.Close()
	if sc.Next() && sc.RecordPos() == 0 {
		return off, nil
	}
	return 0, sc.Err()
}

// IgnoredIndexes lists the partition's index files that are not regular
// files (a symbolic link, a directory...): reads go on without them, as
// an index is a hint, and Verify reports each as a problem.
func (p *Partition) IgnoredIndexes() []*NotRegularError { return p.odd }

// segments lists the partition's segments as they are now: a lone
// segment file is its one segment still, if it is there.
func (p *Partition) segments() ([]segment, error) {
	if p.lone {
		if _, err := os.Stat(p.segs[0].path(format.LogExt)); err != nil {
			return nil, err
		}
		return p.segs, nil
	}
	segs, _, err := readSegments(p.dir)
	return segs, err
}

// Name is how messages refer to the partition.
func (p *Partition) Name() string { return p.name }

// Dir is the partition's directory.
func (p *Partition) Dir() string { return p.dir }

// Extent is the offsets a partition holds: Start, its first, up to its
// last valid record. Next is the offset after that record, unless Full:
// the last record has offset 2^64-1, after which there is none, and Next
// is that record's offset.
type Extent struct {
	Start, Next uint64
	Full        bool
}

// Past reports whether off lies after the partition's last record.
func (e Extent) Past(off uint64) bool { return off >= e.Next && !(e.Full && off == e.Next) }

// Span is how many offsets lie from off (at least Start) to the last
// record, whether or not records hold them all; at most 2^64-1.
func (e Extent) Span(off uint64) uint64 {
	off = max(off, e.Start)
	if e.Past(off) {
		return 0
	}
	n := e.Next - off
	if e.Full && n < math.MaxUint64 {
		n++
	}
	return n
}

// LastN is the first of the partition's last n offsets (Start when it
// spans no more).
func (e Extent) LastN(n uint64) uint64 {
	if e.Span(e.Start) <= n {
		return e.Start
	}
	if e.Full {
		return e.Next - n + 1
	}
	return e.Next - n
}

// StartOfLast is the offset of the first of the partition's last n valid
// records, e being its Extent (e.Start when it holds no more than n).
// Offsets no record holds (a gap between segments, records lost to
// damage, a hole inside a segment) put it more than n offsets before the
// end: the records of the last n offsets are counted, the range doubled
// until it holds n of them or reaches e.Start, and the surplus passed
// over. Records appended after e's end do not count. Memory stays
// constant; the time is a read of about twice the records asked for, one
// read of them where no offset is missing.
func (p *Partition) StartOfLast(e Extent, n uint64) (uint64, error) {
	if n == 0 {
		return e.LastN(0), nil
	}
	for span := n; ; span = min(span, math.MaxUint64/2) * 2 {
		from := e.LastN(span)
		var held uint64
		if err := p.walkValid(e, from, func(uint64) bool { held++; return true }); err != nil {
			return 0, err
		}
		if held < n && from > e.Start {
			continue
		}
		if held <= n {
			return from, nil
		}
		surplus, first := held-n, from
		err := p.walkValid(e, from, func(off uint64) bool {
			if surplus == 0 {
				first = off
				return false
			}
			surplus--
			return true
		})
		return first, err
	}
}

// walkValid hands each valid record's offset from `from` to the end of e
// to fn, going on after damage as read --skip-corrupt does, until fn
// returns false.
func (p *Partition) walkValid(e Extent, from uint64, fn func(off uint64) bool) error {
	it, err := p.Read(from)
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		for it.Next() {
			if off := it.Record().Offset; e.Past(off) || !fn(off) {
				return nil
			}
		}
		var ce *CorruptionError
		if !errors.As(it.Err(), &ce) || !it.SkipCorrupt() {
			return it.Err() // nil at the end, also when damage ends the data
		}
	}
}

// Bounds returns the first offset the partition holds and the offset after
// its last valid record (see Extent for a full partition).
func (p *Partition) Bounds() (start, next uint64, err error) {
	e, err := p.Extent()
	return e.Start, e.Next, err
}

// Extent finds the offsets the partition holds. Valid data ends at an
// incomplete tail; valid records after a corrupt one count, as readers
// meet the damage and report it when they get there.
func (p *Partition) Extent() (Extent, error) {
	if len(p.segs) == 0 {
		return Extent{}, nil
	}
	e, err := p.extentOf()
	for tries := 0; errors.Is(err, fs.ErrNotExist) && tries < maxOpenTries; tries++ {
		// A sweep rolled the active segment and deleted it since the
		// segments were listed: list them again.
		segs, lerr := p.segments()
		if lerr != nil || len(segs) == 0 {
			break
		}
		p.segs = segs
		e, err = p.extentOf()
	}
	if err != nil {
		return Extent{}, fmt.Errorf("%s: %w", p.name, err)
	}
	return e, nil
}

// extentOf is the Extent of the partition's segments. Its next offset is
// where the active segment's valid data ends, never below where the
// segment before ends (an active segment whose records all overlap it
// holds none); its start is the first segment's base offset, or that
// segment's first valid record's when that is below it (the segment is
// misnamed).
func (p *Partition) extentOf() (Extent, error) {
	segs := p.segs
	i := len(segs) - 1
	floor, err := p.floorOf(i)
	if err != nil {
		return Extent{}, err
	}
	active, closeActive, err := openSegfileSegment(segs[i], floor, true)
	if err != nil {
		return Extent{}, err
	}
	defer closeActive()
	end, err := findEnd(active, false)
	if err != nil {
		return Extent{}, err
	}
	e := Extent{Start: segs[0].base, Next: max(end.Next, floor), Full: end.Full}
	first := active
	if i > 0 {
		var closeFirst func()
		if first, closeFirst, err = openSegfileSegment(segs[0], 0, false); err != nil {
			return Extent{}, err
		}
		defer closeFirst()
	}
	h, ok, err := firstValid(first, -1)
	if ok {
		e.Start = min(e.Start, h.Offset)
	}
	return e, err
}

// floorOf is segs[i]'s floor (precedingEnd). Floors are kept once found,
// a closed segment not changing, so the segments before are walked once
// from the nearest floor known.
func (p *Partition) floorOf(i int) (uint64, error) {
	j, floor := i, uint64(0)
	p.mu.Lock()
	for ; j > 0; j-- {
		if f, ok := p.floors[p.segs[j].base]; ok {
			floor = f
			break
		}
	}
	p.mu.Unlock()
	if j == i {
		return floor, nil
	}
	f, err := floorFrom(p.segs, j, floor, i, func(base, floor uint64) {
		p.mu.Lock()
		if p.floors == nil {
			p.floors = map[uint64]uint64{}
		}
		p.floors[base] = floor
		p.mu.Unlock()
	})
	return f, err
}

// Record is a record read from a partition.
type Record struct {
	format.Record
	Pos int64  // byte position of its header in the segment
	CRC uint32 // as stored
}

// set makes r the record with header h and bytes b (header included) at
// pos. Field by field, in place: see format.Header.Decode.
func (r *Record) set(h *format.Header, b []byte, pos int64) {
	r.Key, r.Value = h.Split(b)
	r.Offset, r.Timestamp = h.Offset, h.Timestamp
	r.Pos, r.CRC = pos, h.CRC
}

// Iterator reads a partition's records in offset order, in constant memory
// (one record aside), through segfile's Scanner: the one rule for what is
// valid and where valid data resumes. It stops at the end of the data as
// it was when it reached the partition's last segment: records appended
// later are not waited for.
type Iterator struct {
	p       *Partition
	segs    []segment
	from    uint64
	i       int // current segment
	floor   uint64
	limit   int64 // the last segment's size when the iterator reached it
	sf      *segmentFiles
	sc      *segfile.Scanner
	rec     Record
	err     error
	skipped Skipped // what SkipCorrupt went past last
	held    bool    // the current record is still to be returned by Next
	cur     bool    // Next returned the current record
	started bool    // a record was read: first is its offset
	first   uint64
	clock   int64 // the running maximum of the timestamps read
	seeded  bool  // ... and of the partition's before first (recordtime.go)
	closed  bool
	// Park let go of these files (maybe closed since), whose .log this
	// is; reading goes on at (parkPos, parkOff).
	parked   *segmentFiles
	parkedAt os.FileInfo
	parkPos  int64
	parkOff  uint64
}

// readAhead lets iterators read and check ahead on a second goroutine
// (segfile.Options.ReadAhead); tests turn it off to compare.
var readAhead = true

// Read returns an iterator over records with offsets >= from. Offsets in a
// gap between segments are skipped.
func (p *Partition) Read(from uint64) (*Iterator, error) {
	it := &Iterator{p: p, segs: p.segs, from: from, clock: math.MinInt64}
	if len(p.segs) == 0 {
		it.closed = true
		return it, nil
	}
	// The last segment with base <= from holds from, or from is in a gap
	// after it, or before all of them; unless the segment before goes on
	// past from: then the records from holds are that one's, and those
	// of this one below where it ends overlap it.
	it.i = max(sort.Search(len(p.segs), func(i int) bool { return p.segs[i].base > from })-1, 0)
	for ; ; it.i-- {
		floor, err := p.floorOf(it.i)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p.name, err)
		}
		if from >= floor || it.i == 0 {
			it.floor = floor
			break
		}
	}
	if err := it.open(); err != nil {
		return nil, err
	}
	return it, nil
}

// open starts reading segment it.i, from it.from when that is in it.
func (it *Iterator) open() error {
	seg := it.segs[it.i]
	last := it.i == len(it.segs)-1
	sf, fi, err := it.p.acquire(seg)
	if err != nil {
		return it.p.segmentGone(err, max(it.from, seg.base))
	}
	it.limit = -1
	if last {
		if fi == nil {
			if fi, err = sf.log.Stat(); err != nil {
				it.p.release(sf)
				return fmt.Errorf("read %s: %w", it.p.name, err)
			}
		}
		it.limit = fi.Size()
	}
	if err := it.scan(sf, seg); err != nil {
		return err
	}
	// A segment after the one from is in is read from its first byte:
	// what of it is below its floor overlaps, wherever the read started.
	if it.from > seg.base && it.from >= it.floor {
		if err := it.sc.SeekOffset(it.from); err != nil {
			return fmt.Errorf("read %s: %w", it.p.name, err)
		}
	}
	return nil
}

// scan starts reading seg, whose files are sf, from its first byte.
func (it *Iterator) scan(sf *segmentFiles, seg segment) error {
	it.release()
	it.sf = sf
	sseg := segfileSegment(seg, sf.log, nil, it.floor, it.i == len(it.segs)-1)
	sseg.OpenIndex = sf.index
	var err error
	if it.sc, err = segfile.NewScanner(sseg, it.limit, segfile.Options{Whole: true, ReadAhead: readAhead}); err != nil {
		it.release()
		return fmt.Errorf("read %s: %w", it.p.name, err)
	}
	return nil
}

// release lets go of the current segment's files.
func (it *Iterator) release() error {
	if it.sf == nil {
		return nil
	}
	if it.sc != nil {
		it.sc.Close()
	}
	err := it.p.release(it.sf)
	it.sf, it.sc = nil, nil
	return err
}

// segmentGone turns a segment vanishing under a reader into the error
// docs/format.md §6 asks for, naming the partition's new start.
func (p *Partition) segmentGone(err error, offset uint64) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", p.name, err)
	}
	start := offset
	if segs, lerr := p.segments(); lerr == nil && len(segs) > 0 {
		start = segs[0].base
	}
	return &NoLongerAvailableError{Partition: p.name, Offset: offset, Start: start}
}

// Next advances to the next record, returning false at the end or on an
// error (see Err).
func (it *Iterator) Next() bool {
	if it.closed || it.err != nil || it.parked != nil {
		if it.closed || it.err != nil || !it.resume() {
			return false
		}
	}
	it.cur = false
	if it.held {
		it.held = false
		it.cur = true
		return true
	}
	for {
		sc := it.sc
		if sc.Next() {
			h := sc.Header()
			if !it.started {
				it.started, it.first = true, h.Offset
			}
			it.clock = runningMax(it.clock, h.Timestamp)
			if h.Offset < it.from {
				continue
			}
			it.cur = true
			return true
		}
		if err := sc.Err(); err != nil {
			it.err = fmt.Errorf("read %s: %w", it.sf.seg.path(format.LogExt), err)
			return false
		}
		last := it.i == len(it.segs)-1
		if d := sc.Damage(); d != nil {
			if d.Class == segfile.Incomplete {
				return false // the end of the data
			}
			it.err = corruption(d)
			return false
		}
		if last || !it.nextSegment() {
			return false
		}
	}
}

// Park lets go of the iterator's open file and read buffer, keeping its
// place: the next Next opens the segment again and returns the record it
// returned last once more, then goes on. A caller holding iterators over
// many partitions at once, of which it reads a few at a time, parks the
// others, so that neither descriptors nor memory grow with the partition
// count. Record is not valid after Park.
func (it *Iterator) Park() {
	if it.closed || it.err != nil || it.parked != nil || it.sf == nil {
		return
	}
	fi, err := it.sf.log.Stat()
	if err != nil {
		return // kept open: an error here would be Next's to report
	}
	it.parkPos, it.parkOff = it.sc.Pos(), it.sc.NextOffset()
	if it.cur || it.held {
		it.parkPos, it.parkOff = it.sc.RecordPos(), it.sc.Header().Offset
		it.cur, it.held = false, false
	}
	it.parked, it.parkedAt = it.sf, fi
	it.release()
	it.rec = Record{} // nothing left to keep the buffer alive
}

// resume opens the parked iterator's segment again. The file must be the
// one it read: a segment replaced under the same name (recover --salvage,
// a partition directory swapped by copy-partition --force) holds other
// bytes at the position it kept.
func (it *Iterator) resume() bool {
	parked := it.parked
	it.parked = nil
	seg := it.segs[it.i]
	sf, _, err := it.p.acquire(seg)
	if err != nil {
		it.err = it.p.segmentGone(err, it.parkOff)
		return false
	}
	if sf != parked && !sameFile(sf.log, it.parkedAt) {
		it.p.release(sf)
		it.err = fmt.Errorf("read %s: segment %s was replaced while it was being read (read it again)", it.p.name, seg.path(format.LogExt))
		return false
	}
	if err := it.scan(sf, seg); err != nil {
		it.err = err
		return false
	}
	if it.parkPos > 0 || it.parkOff != seg.base {
		it.sc.StartAt(it.parkPos, it.parkOff)
	}
	return true
}

// sameFile reports whether f is open on the file fi describes.
func sameFile(f file, fi os.FileInfo) bool {
	now, err := f.Stat()
	return err == nil && os.SameFile(now, fi)
}

// nextSegment moves on to the segment after the current one, whose floor
// is where the current one's valid data ended, or the current one's own
// floor when its records all overlap the segments before.
func (it *Iterator) nextSegment() bool {
	it.floor = max(it.floor, it.sc.NextOffset())
	it.release()
	it.i++
	if err := it.open(); err != nil {
		it.err = err
		return false
	}
	return true
}

// SkipCorrupt goes on after the corrupt record that ended the iteration
// (Err is a *CorruptionError): where valid data resumes by the one rule
// (docs/format.md §3), or else at the next segment. The offsets in
// between are lost to the damage. It reports whether the iteration can
// go on; if so, Err is cleared, and Skipped describes what was skipped.
func (it *Iterator) SkipCorrupt() bool {
	var ce *CorruptionError
	if it.closed || !errors.As(it.err, &ce) || ce.Damage == nil || it.sc == nil || it.sc.Damage() != ce.Damage {
		return false
	}
	it.err = nil
	it.skipped = Skipped{Damage: ce.Damage}
	sk := &it.skipped
	var err error
	if sk.Bytes, err = it.sc.DamagedBytes(ce.Damage, maxSkippedBytes); err == nil {
		sk.Bytes = slices.Clone(sk.Bytes)
		sk.CRC, sk.CRCOK, err = it.sc.ComputedCRC(ce.Damage)
	}
	if err != nil {
		it.err = fmt.Errorf("read %s: %w", ce.Path, err)
		return false
	}
	if it.sc.Resume() {
		return true
	}
	if it.i == len(it.segs)-1 {
		return false
	}
	return it.nextSegment()
}

// maxSkippedBytes bounds the bytes of a skipped record kept for a
// forensic dump.
const maxSkippedBytes = 64 << 10

// Skipped is what SkipCorrupt went past last: the damage, the failing
// record's bytes (header included) when they are all in the file and at
// most 64 KiB, and the CRC computed over them.
type Skipped struct {
	Damage *segfile.Damage
	Bytes  []byte
	CRC    uint32
	CRCOK  bool
}

// Skipped describes the damage SkipCorrupt last went past.
func (it *Iterator) Skipped() Skipped { return it.skipped }

// hold makes the next Next return the current record again.
func (it *Iterator) hold() { it.held = true }

// end is the offset after the last record read: where the iteration
// ended, or would go on.
func (it *Iterator) end() uint64 {
	if it.sc == nil {
		return it.from
	}
	return max(it.sc.NextOffset(), it.from)
}

// Record returns the current record. It and its Key and Value are valid
// until the next call to Next.
func (it *Iterator) Record() *Record {
	it.rec.set(it.sc.Header(), it.sc.Bytes(), it.sc.RecordPos())
	return &it.rec
}

// Err returns the error that ended the iteration, if any.
func (it *Iterator) Err() error { return it.err }

// Close releases the iterator's open file.
func (it *Iterator) Close() error {
	it.closed = true
	return it.release()
}
