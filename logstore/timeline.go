package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/bits"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// Timeline counts the partition's records per time bucket: [from, to] cut
// into buckets equal spans (see BucketStart), a record counted in the
// bucket of its time (the running maximum of the timestamps up to it). Records stamped before from count in the first
// bucket and after to in the last, so the counts always add up to the
// records held.
//
// It reads the time indexes, not the records: a time-index entry stands
// for the records from its offset up to the next entry's (or to the
// segment's end, found as Stats finds it), all counted at the entry's
// timestamp. With index interval 1 that is exact; with N, a record is
// placed at most N−1 records away in time. Entries out of order or past
// the log's end are skipped; records no entry covers (a missing or short
// time index, a first entry after the segment's base) are read from the
// log instead. A segment deleted meanwhile (retention) is left out.
func (p *Partition) Timeline(from, to int64, buckets int) ([]uint64, error) {
	if buckets <= 0 {
		return nil, fmt.Errorf("timeline of %s: %d buckets", p.name, buckets)
	}
	if to < from {
		to = from
	}
	counts := make([]uint64, buckets)
	clock := int64(math.MinInt64)
	add := func(ts int64, n uint64) {
		clock = runningMax(clock, ts) // a record's time (recordtime.go)
		counts[bucketOf(from, to, buckets, clock)] += n
	}
	floor := uint64(0) // where the segments before end: offsets below are theirs
	for i, seg := range p.segs {
		next, err := segmentTimeline(seg, floor, i == len(p.segs)-1, add)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		floor = max(floor, next)
	}
	return counts, nil
}

// BucketStart is the first timestamp of bucket i of Timeline(from, to,
// buckets); BucketStart(from, to, buckets, buckets) is to+1, the end of
// the last one. Buckets differ in length by at most a nanosecond.
func BucketStart(from, to int64, buckets, i int) int64 {
	if to < from {
		to = from
	}
	hi, lo := bits.Mul64(timeSpan(from, to), uint64(i))
	q, r := bits.Div64(hi, lo, uint64(buckets)) // hi < i <= buckets
	if r != 0 {
		q++ // round up, so that bucketOf(BucketStart(i)) is i
	}
	return from + int64(q)
}

// bucketOf is the bucket of ts: floor((ts−from)·buckets / span), computed
// on 128 bits so no span overflows it, clamped to the buckets there are.
func bucketOf(from, to int64, buckets int, ts int64) int {
	if ts <= from {
		return 0
	}
	if ts >= to {
		return buckets - 1
	}
	hi, lo := bits.Mul64(uint64(ts-from), uint64(buckets))
	q, _ := bits.Div64(hi, lo, timeSpan(from, to)) // hi < span since ts−from < span
	return min(int(q), buckets-1)
}

// timeSpan is how many nanoseconds [from, to] holds, saturated at the
// 2⁶⁴ of the whole int64 range.
func timeSpan(from, to int64) uint64 {
	if span := uint64(to-from) + 1; span != 0 {
		return span
	}
	return math.MaxUint64
}

// segmentTimeline calls add for the records of seg at or above floor: per
// time-index entry its timestamp and the records it stands for. It
// returns where seg's valid data ends.
func segmentTimeline(seg segment, floor uint64, active bool, add func(ts int64, n uint64)) (uint64, error) {
	f, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	end, err := segmentEnd(seg, floor, active, false)
	if err != nil {
		return 0, err
	}
	first := max(seg.base, floor)
	if end.Next <= first && !end.Full {
		return end.Next, nil
	}
	// Offsets past the valid data; a full segment holds its Next, the
	// last offset there is.
	past := func(o uint64) bool { return o >= end.Next && !(end.Full && o == end.Next) }
	// pending is the last entry taken: its records run to the next one.
	var pending format.TimeIndexEntry
	have := false
	take := func(e format.TimeIndexEntry) error {
		switch {
		case e.Offset < first || past(e.Offset):
			return nil // another segment's, or stale past the log's end
		case have && e.Offset <= pending.Offset:
			return nil // out of order
		case have:
			add(pending.Timestamp, e.Offset-pending.Offset)
		case e.Offset > first:
			// Records before the first entry: read their timestamps.
			if err := scanTimeline(seg, floor, osFile{File: f}, func(o uint64) bool { return o >= e.Offset }, add); err != nil {
				return err
			}
		}
		pending, have = e, true
		return nil
	}
	var odd *NotRegularError
	if err := readTimeIndex(seg.path(format.TimeIndexExt), take); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.As(err, &odd) {
		return 0, err
	}
	if !have {
		return end.Next, scanTimeline(seg, floor, osFile{File: f}, past, add)
	}
	n := end.Next - pending.Offset
	if end.Full {
		n++
	}
	add(pending.Timestamp, n)
	return end.Next, nil
}

// readTimeIndex calls take for each whole entry of a .timeindex, in file
// order. A partial last entry is ignored; one that shrank meanwhile ends
// where it ends now.
func readTimeIndex(path string, take func(format.TimeIndexEntry) error) error {
	f, size, err := fsx.OpenIndex(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = segfile.ReadEntries(f, size, 0, func(_ int64, e format.IndexEntry) error {
		return take(format.TimeIndexEntry{Offset: e.Offset, Timestamp: e.Pos})
	})
	return err
}

// scanTimeline reads seg's valid records from its start until one is
// past, calling add for each: offsets lost to damage, and records below
// floor (they overlap the segments before), are not records.
func scanTimeline(seg segment, floor uint64, f file, past func(uint64) bool, add func(ts int64, n uint64)) error {
	sc, err := segfile.NewScanner(segfileSegment(seg, f, nil, floor, false), -1, segfile.Options{})
	if err != nil {
		return err
	}
	defer sc.Close()
	for {
		if !sc.Next() {
			if err := sc.Err(); err != nil {
				return fmt.Errorf("scan %s: %w", seg.path(format.LogExt), err)
			}
			if sc.Resume() {
				continue
			}
			break
		}
		h := sc.Header()
		if past(h.Offset) {
			break
		}
		add(h.Timestamp, 1)
	}
	return nil
}
