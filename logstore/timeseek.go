package logstore

import (
	"errors"
	"math"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// timeSearchLimit says, where timestamps go back, what the time search
// reads, and so what it can miss (README's read section says the same).
const timeSearchLimit = "--since searches by time reading only the segments' first records, a few time-index entries and the records from where it lands, " +
	"and scans the partition from its start only when those go back: it may start after records whose time is already recent enough"

// errDecreasing means a search saw timestamps go backwards.
var errDecreasing = errors.New("timestamps decrease")

// errIndexLied means a time-index entry's timestamp is not its record's.
var errIndexLied = errors.New("time index entry does not match its record")

// ReadAtTime returns an iterator whose first record is the first at or
// after t, a record's timestamp being the running maximum of the
// partition's up to it (docs/format.md §6, Kafka's definition; on data seglog wrote,
// the record's own). When no record is that recent, the iterator has none.
//
// Segments are found by binary search on their first records' timestamps
// and, inside one, the time index is searched like the offset index: a few
// reads, exact wherever timestamps never decrease. Foreign writers stamp
// the wall clock, which can step back: when the search sees timestamps
// decrease (between the probes it makes, at the boundary of the segment it
// picks, or in the records it reads), it scans the partition instead,
// keeping the running maximum, which is exact. A decrease the search never
// looks at goes unnoticed.
func (p *Partition) ReadAtTime(t int64) (*Iterator, error) {
	it, err := p.searchTime(t)
	if errors.Is(err, errDecreasing) {
		return p.scanForTime(p.segs[0].base, math.MinInt64, t, false)
	}
	return it, err
}

// OffsetAtTime is the offset of ReadAtTime's first record, or the offset
// after the last record when there is none.
func (p *Partition) OffsetAtTime(t int64) (uint64, error) {
	it, err := p.ReadAtTime(t)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	if it.Next() {
		return it.Record().Offset, nil
	}
	return it.end(), it.Err()
}

func (p *Partition) searchTime(t int64) (*Iterator, error) {
	if len(p.segs) == 0 {
		return p.Read(0)
	}
	// Invariant: segment lo's first record is older than t (or lo is -1),
	// segment hi's is not (or hi is past the end).
	lo, hi := -1, len(p.segs)
	loTS, hiTS := int64(math.MinInt64), int64(math.MaxInt64)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ts, empty, err := p.firstTimestamp(mid)
		if err != nil {
			return nil, p.segmentGone(err, p.segs[mid].base)
		}
		if !empty && (ts < loTS || ts > hiTS) {
			return nil, errDecreasing
		}
		if !empty && ts < t {
			lo, loTS = mid, ts
		} else {
			hi = mid
			if !empty {
				hiTS = ts
			}
		}
	}
	if lo < 0 {
		return p.Read(p.segs[0].base) // the very first record is recent enough
	}
	if lo > 0 && p.lastIndexedTimestamp(lo-1) > loTS {
		return nil, errDecreasing // the clock stepped back between the segments
	}
	// In segment lo: start from the last time-index entry older than t;
	// without one, from where the segments before end, below its name
	// when it is misnamed.
	seg := p.segs[lo]
	floor, err := p.floorOf(lo)
	if err != nil {
		return nil, err
	}
	start := min(seg.base, floor)
	from, seed := start, int64(math.MinInt64)
	if f, size, err := fsx.OpenIndex(seg.path(format.TimeIndexExt)); err == nil {
		x := segfile.NewIndex(f, size)
		i, ok, err := x.FloorBy(orderedKey(t)-1, func(_ uint64, ts int64) uint64 { return orderedKey(ts) })
		var e format.IndexEntry
		if err == nil && ok {
			e, err = x.Entry(i)
		}
		f.Close()
		if errors.Is(err, segfile.ErrUnsorted) {
			return nil, errDecreasing
		}
		// An entry's timestamp is what its record must carry (the
		// lowest there is would check nothing): it may lie.
		if err == nil && ok && e.Offset >= seg.base && e.Pos != math.MinInt64 {
			from, seed = e.Offset, e.Pos
		}
	}
	it, err := p.scanForTime(from, seed, t, true)
	if errors.Is(err, errIndexLied) {
		return p.scanForTime(start, math.MinInt64, t, true)
	}
	return it, err
}

// orderedKey maps timestamps to unsigned keys in the same order.
func orderedKey(ts int64) uint64 { return uint64(ts) ^ 1<<63 }

// scanForTime reads from offset from, whose record should carry timestamp
// seed (math.MinInt64: no expectation), up to the first record whose
// running maximum reaches t, and returns the iterator holding that record
// back for its first Next. With strict, a decrease or a seed that does not
// match ends the scan with errDecreasing or errIndexLied.
func (p *Partition) scanForTime(from uint64, seed, t int64, strict bool) (*Iterator, error) {
	it, err := p.Read(from)
	if err != nil {
		return nil, err
	}
	// The first record read must be the entry's: an entry naming an
	// offset the partition does not hold (past its end, in a gap) lied too.
	check := strict && seed != math.MinInt64
	running, last := int64(math.MinInt64), int64(math.MinInt64)
	for it.Next() {
		r := it.sc.Header()
		switch {
		case check && (r.Offset != from || r.Timestamp != seed):
			err = errIndexLied
		case strict && r.Timestamp < last:
			err = errDecreasing
		}
		if err != nil {
			it.Close()
			return nil, err
		}
		check = false
		last = r.Timestamp
		running = max(running, r.Timestamp)
		if running >= t {
			it.hold()
			return it, nil
		}
	}
	if check && it.Err() == nil {
		it.Close()
		return nil, errIndexLied
	}
	return it, nil // at the end: Next reports it, and any error
}

// firstTimestamp is the timestamp of segment i's first record; empty when
// it has none (or its first record is not valid). Found ones are
// remembered: a segment's first record never changes.
func (p *Partition) firstTimestamp(i int) (ts int64, empty bool, err error) {
	seg := p.segs[i]
	if ts, ok := p.cachedFirstTS(seg.base); ok {
		return ts, false, nil
	}
	// Records below where the segments before end overlap them.
	floor, err := p.floorOf(i)
	if err != nil {
		return 0, false, err
	}
	f, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	sc, err := segfile.NewScanner(segfileSegment(seg, osFile{File: f}, nil, max(floor, seg.base), false), -1, segfile.Options{})
	if err != nil {
		return 0, false, err
	}
	defer sc.Close()
	if !sc.Next() {
		return 0, true, sc.Err()
	}
	ts = sc.Header().Timestamp
	p.mu.Lock()
	p.firstTS[seg.base] = ts
	p.mu.Unlock()
	return ts, false, nil
}

func (p *Partition) cachedFirstTS(base uint64) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.firstTS == nil {
		p.firstTS = map[uint64]int64{}
	}
	ts, ok := p.firstTS[base]
	return ts, ok
}

// lastIndexedTimestamp is the timestamp of segment i's last time-index
// entry (or, without one, of its last record): a cheap look at how recent
// a closed segment's end is, to catch a clock that stepped back between it
// and the next. math.MinInt64 when it cannot tell.
func (p *Partition) lastIndexedTimestamp(i int) int64 {
	seg := p.segs[i]
	if f, size, err := fsx.OpenIndex(seg.path(format.TimeIndexExt)); err == nil {
		x := segfile.NewIndex(f, size)
		e, err := x.Entry(x.Len() - 1)
		f.Close()
		if x.Len() > 0 && err == nil {
			return e.Pos
		}
	}
	end, err := segmentEnd(seg, 0, false, false)
	if err != nil || end.Empty() {
		return math.MinInt64
	}
	return end.LastTS
}
