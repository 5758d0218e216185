package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

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
	// noReadAhead keeps its iterators from reading and checking ahead on
	// a second goroutine (segfile.Options.ReadAhead), for tests that
	// compare the two.
	noReadAhead bool

	mu      sync.Mutex
	firstTS map[uint64]int64  // first records' timestamps, by segment base
	floors  map[uint64]uint64 // precedingEnd of segments, by base

	// Guarded by keptOpen.mu.
	open   map[uint64]*segmentFiles // segments kept open between reads, by base
	closed bool
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

// checkSegmentFile checks that path, a lone segment file (what is one
// in messages: "segment file", "Kafka segment file"), is a regular .log
// file.
func checkSegmentFile(path, name, what string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", name, ErrPartitionNotFound)
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fsx.NewNotRegularError(path, fi.Mode())
	case !strings.HasSuffix(path, format.LogExt):
		return fmt.Errorf("%s is not a %s: its name must end in %s", path, what, format.LogExt)
	}
	return nil
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
	if err := checkSegmentFile(path, name, "segment file"); err != nil {
		return nil, err
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

// Check is nil when offset n is in the range, from Start to Next (reading
// from Next waits for what comes), else an *OffsetRangeError naming
// partition.
func (e Extent) Check(partition string, n uint64) error {
	if n < e.Start || n > e.Next {
		return &OffsetRangeError{Partition: partition, Offset: n, Start: e.Start, Next: e.Next}
	}
	return nil
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
	e := Extent{Next: max(end.Next, floor), Full: end.Full}
	if i == 0 {
		e.Start, err = startIn(active)
	} else {
		e.Start, err = p.startOf(segs[0])
	}
	return e, err
}

// Start is the first offset the partition holds (Extent's Start), found
// from its first segment alone.
func (p *Partition) Start() (uint64, error) {
	if len(p.segs) == 0 {
		return 0, nil
	}
	start, err := p.startOf(p.segs[0])
	if errors.Is(err, fs.ErrNotExist) {
		// Deleted by a sweep since the segments were listed.
		e, err := p.Extent()
		return e.Start, err
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p.name, err)
	}
	return start, nil
}

// startOf is the start of a partition whose first segment is seg.
func (p *Partition) startOf(seg segment) (uint64, error) {
	first, closeFirst, err := openSegfileSegment(seg, 0, len(p.segs) == 1)
	if err != nil {
		return 0, err
	}
	defer closeFirst()
	return startIn(first)
}

// startIn is the start of a partition whose first segment is first: its
// base offset, or its first valid record's when that is below it (the
// segment is misnamed).
func startIn(first segfile.Segment) (uint64, error) {
	h, ok, err := firstValid(first, -1)
	if ok {
		return min(first.Base, h.Offset), err
	}
	return first.Base, err
}

// CheckOffset is nil when offset n is in the partition's range, from
// Start to Next (reading from Next waits for what comes), else an
// *OffsetRangeError. A record read at or after n proves it in range, and
// takes only the ends of the segments up to n's; only where none is read
// is the partition's end found, from the end of every segment (Extent).
func (p *Partition) CheckOffset(n uint64) error {
	if len(p.segs) > 0 && n >= p.segs[0].base {
		if it, err := p.Read(n); err == nil {
			found := it.Next()
			it.Close()
			if found {
				return nil
			}
		}
	}
	e, err := p.Extent()
	if err != nil {
		return err
	}
	return e.Check(p.name, n)
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
