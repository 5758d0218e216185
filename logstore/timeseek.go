package logstore

import (
	"errors"
	"math"
	"os"

	"github.com/seglog/seglog/format"
)

// errDecreasing means a search saw timestamps go backwards.
var errDecreasing = errors.New("timestamps decrease")

// OffsetAtTime returns the first offset whose timestamp is at or after t, a
// record's timestamp being the running maximum of the partition's up to it
// (SPEC §5, Kafka's definition; on data seglog wrote, the record's own). It
// returns the offset after the last record when there is none.
//
// Segments are found by binary search on their first records' timestamps
// and, inside one, the time index is searched like the offset index: a few
// reads, exact wherever timestamps never decrease. Foreign writers stamp
// the wall clock, which can step back: when the search sees timestamps
// decrease, it scans the partition instead, keeping the running maximum,
// which is exact. A decrease the search never looks at goes unnoticed.
func (p *Partition) OffsetAtTime(t int64) (uint64, error) {
	off, err := p.searchTime(t)
	if errors.Is(err, errDecreasing) {
		return p.scanForTime(p.segs[0].base, math.MinInt64, t, false)
	}
	return off, err
}

func (p *Partition) searchTime(t int64) (uint64, error) {
	if len(p.segs) == 0 {
		return 0, nil
	}
	// Invariant: segment lo's first record is older than t (or lo is -1),
	// segment hi's is not (or hi is past the end).
	lo, hi := -1, len(p.segs)
	loTS, hiTS := int64(math.MinInt64), int64(math.MaxInt64)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ts, empty, err := firstTimestamp(p.segs[mid])
		if err != nil {
			return 0, err
		}
		if !empty && (ts < loTS || ts > hiTS) {
			return 0, errDecreasing
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
		return p.segs[0].base, nil // the very first record is recent enough
	}
	// In segment lo: start from the last time-index entry older than t.
	seg := p.segs[lo]
	from, seed := seg.base, int64(math.MinInt64)
	if x, err := openIndex(seg.path(format.TimeIndexExt)); err == nil {
		i, ok, err := x.floorBy(orderedKey(t)-1, func(_ uint64, ts int64) uint64 { return orderedKey(ts) })
		var e format.TimeIndexEntry
		if err == nil && ok {
			var ts int64
			e.Offset, ts, err = x.pair(i)
			e.Timestamp = ts
		}
		x.Close()
		if errors.Is(err, errUnsorted) {
			return 0, errDecreasing
		}
		if err == nil && ok && e.Offset >= seg.base {
			from, seed = e.Offset, e.Timestamp
		}
	}
	off, err := p.scanForTime(from, seed, t, true)
	if errors.Is(err, errIndexLied) {
		return p.scanForTime(seg.base, math.MinInt64, t, true)
	}
	return off, err
}

// errIndexLied means a time-index entry's timestamp is not its record's.
var errIndexLied = errors.New("time index entry does not match its record")

// orderedKey maps timestamps to unsigned keys in the same order.
func orderedKey(ts int64) uint64 { return uint64(ts) ^ 1<<63 }

// scanForTime reads from offset from, whose record should carry timestamp
// seed (math.MinInt64: no expectation), and returns the first offset whose
// running maximum reaches t. With strict, a decrease or a seed that does
// not match ends the scan with errDecreasing or errIndexLied.
func (p *Partition) scanForTime(from uint64, seed, t int64, strict bool) (uint64, error) {
	it, err := p.Read(from)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	running, last := int64(math.MinInt64), int64(math.MinInt64)
	for it.Next() {
		r := it.Record()
		if strict && r.Offset == from && seed != math.MinInt64 && r.Timestamp != seed {
			return 0, errIndexLied
		}
		if strict && r.Timestamp < last {
			return 0, errDecreasing
		}
		last = r.Timestamp
		running = max(running, r.Timestamp)
		if running >= t {
			return r.Offset, nil
		}
	}
	return it.next, it.Err()
}

// firstTimestamp is the timestamp of seg's first record; empty when it has
// none (or its first record does not check out).
func firstTimestamp(seg segment) (ts int64, empty bool, err error) {
	f, err := os.Open(seg.path(format.LogExt))
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	h, err := newLogReader(osFile{f}).check(0)
	if err != nil || h.Offset != seg.base {
		if err != nil && isIOError(err) {
			return 0, false, err
		}
		return 0, true, nil
	}
	return h.Timestamp, false, nil
}
