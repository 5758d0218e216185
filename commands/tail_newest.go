package commands

import (
	"errors"
	"math"
	"slices"

	"github.com/seglog/seglog/logstore"
)

// tail -n: the newest records of the partitions by timestamp, found
// (tailCut) and then printed in one merge (tailNewest).

// recordKey is r's key in the merge, r being a record of tp.
func recordKey(tp *tailPart, r *logstore.Record) mergeKey {
	return keyOf(tp.ref.partition, r)
}

// Cuts that every record is at or above, and none.
var (
	tailAll  = mergeKey{ts: math.MinInt64, partition: -1}
	tailNone = mergeKey{ts: math.MaxInt64, partition: math.MaxInt}
)

// tailHeapMax is the largest -n whose cut tailCut finds holding the keys
// of the newest records (24 bytes each); above it, it reads the candidates
// a few times over instead (tailCutSelect).
const tailHeapMax = 1 << 16

// tailNewest prints the o.lines newest records of the partitions, oldest
// first (stopping at --count), and returns how many it printed. The
// candidates are each partition's last o.lines valid records; first the cut
// between the o.lines newest of them and the rest is found (tailCut),
// then each partition's records at or above it are merged by key
// (recordMerge: one iterator a partition, all but a few parked). Memory
// grows neither with the records nor with -n beyond tailHeapMax, nor much
// with partitions.
func tailNewest(e *env, gt *groupTracker, parts []*tailPart, o tailOptions) (int64, error) {
	cut := tailNone
	for _, tp := range parts {
		tp.from = tailFirst(tp, o.lines)
	}
	if o.lines > 0 {
		var err error
		if cut, err = tailCut(e, parts, o); err != nil {
			return 0, err
		}
	}
	for _, tp := range parts {
		// Where the group stopped wins over the newest records.
		_, resume := gt.position(tp.ref.partition)
		if from := gt.start(tp.ref.partition, tp.from, tp.start, tp.next); resume {
			tp.from, tp.all = from, true
		}
	}
	if o.count == 0 {
		return 0, nil
	}
	m := newRecordMerge[*tailSource]()
	defer m.close()
	for _, tp := range parts {
		if tp.from >= tp.next {
			continue
		}
		it, err := tailRead(e, tp)
		if err != nil {
			return 0, err
		}
		if it == nil {
			continue
		}
		if err := m.add(&tailSource{e: e, gt: gt, o: o, cut: cut, tp: tp, it: it}); err != nil {
			return 0, err
		}
	}
	out := gt.output()
	var n int64
	err := m.each(func() bool { return n == o.count }, func(h *mergeHead[*tailSource]) error {
		tp := h.src.tp
		tp.rw.out = out
		r := h.src.record()
		if err := tp.rw.write(r); err != nil {
			return err
		}
		n++
		gt.advance(tp.ref.partition, r.Offset+1)
		return gt.maybeCommit()
	})
	return n, err
}

// tailSource is a partition's records at or above the cut (any record,
// from a group's position) in tailNewest's merge.
type tailSource struct {
	e   *env
	gt  *groupTracker
	o   tailOptions
	cut mergeKey
	tp  *tailPart
	it  *logstore.Iterator
}

func (s *tailSource) next() (mergeKey, bool, error) {
	for {
		for s.it.Next() {
			r := s.it.Record()
			if r.Offset >= s.tp.next {
				break
			}
			if k := recordKey(s.tp, r); s.tp.all || k.compare(s.cut) >= 0 {
				return k, true, nil
			}
			s.gt.advance(s.tp.ref.partition, r.Offset+1) // passed over
		}
		err := s.it.Err()
		if tailGone(s.e, s.tp, err) {
			s.it.Close()
			it, err := tailRead(s.e, s.tp)
			if err != nil || it == nil {
				return mergeKey{}, false, err
			}
			s.it = it
			continue
		}
		var ce *logstore.CorruptionError
		if err == nil || !s.o.skipCorrupt || !errors.As(err, &ce) {
			return mergeKey{}, false, err
		}
		s.e.warn("skipping %s", errorLine(ce))
		if !s.it.SkipCorrupt() {
			return mergeKey{}, false, s.it.Err()
		}
	}
}

func (s *tailSource) record() *logstore.Record { return s.it.Record() }
func (s *tailSource) park()                    { s.it.Park() }
func (s *tailSource) close()                   { s.it.Close() }

// tailFirst is where a partition's candidates for the n newest start when
// no offset is missing: n offsets before its end. tailCut moves it back
// where the partition holds fewer records there (tailExtend).
func tailFirst(tp *tailPart, n int64) uint64 {
	return logstore.Extent{Start: tp.start, Next: tp.next}.LastN(uint64(n))
}

// tailExtend moves tp's candidates back to its last n valid records, where
// offsets are missing (a gap between segments, records lost to damage)
// among its last n (logstore.Partition.StartOfLast).
func tailExtend(tp *tailPart, n int64) error {
	if tp.from <= tp.start {
		return nil
	}
	from, err := tp.p.StartOfLast(logstore.Extent{Start: tp.start, Next: tp.next}, uint64(n))
	var gone *logstore.NoLongerAvailableError
	if errors.As(err, &gone) {
		return nil // retention got there first: reading finds what is left
	}
	if err == nil {
		tp.from = min(tp.from, from)
	}
	return err
}

// tailCut returns the cut: the key of the o.lines-th newest candidate
// (each partition's last o.lines records), or tailAll when there are no
// more candidates than that. No more records than offsets lie between a
// candidate and its partition's end, so the bounds tell how many
// candidates there are at most, without reading them.
func tailCut(e *env, parts []*tailPart, o tailOptions) (mergeKey, error) {
	extendAll := func() error {
		for _, tp := range parts {
			if err := tailExtend(tp, o.lines); err != nil {
				return err
			}
		}
		return nil
	}
	if tailSpan(parts) <= uint64(o.lines) {
		// Every candidate is printed: each partition's must be its last
		// records, wherever offsets are missing.
		if err := extendAll(); err != nil || tailSpan(parts) <= uint64(o.lines) {
			return tailAll, err
		}
	}
	if o.lines <= o.heapMax {
		return tailCutHeap(e, parts, o)
	}
	if err := extendAll(); err != nil {
		return tailAll, err
	}
	return tailCutSelect(e, parts, o)
}

// tailSpan is how many offsets the partitions' candidates span.
func tailSpan(parts []*tailPart) uint64 {
	var span uint64
	for _, tp := range parts {
		span += min(tp.next-tp.from, math.MaxUint64-span)
	}
	return span
}

// tailCutHeap finds the cut with the o.lines newest keys seen so far in a
// heap, oldest on top. A partition found holding fewer candidates than
// that is extended (tailExtend) and its earlier candidates added.
func tailCutHeap(e *env, parts []*tailPart, o tailOptions) (mergeKey, error) {
	newest := minHeap[mergeKey]{less: func(a, b mergeKey) bool { return a.compare(b) < 0 }}
	held := make([]int64, len(parts))
	take := func(tp *tailPart, r *logstore.Record) {
		held[tp.index]++
		switch k := recordKey(tp, r); {
		case int64(len(newest.items)) < o.lines:
			newest.push(k)
		case k.compare(newest.items[0]) > 0:
			newest.items[0] = k
			newest.fixTop()
		}
	}
	err := tailScanAll(e, parts, o, take)
	for _, tp := range parts {
		if err != nil || held[tp.index] >= o.lines {
			continue
		}
		before := tp.from
		if err = tailExtend(tp, o.lines); err != nil || tp.from == before {
			continue
		}
		err = tailScan(e, tp, o, func(r *logstore.Record) error {
			if r.Offset >= before {
				return errScanDone
			}
			take(tp, r)
			return nil
		})
		if errors.Is(err, errScanDone) {
			err = nil
		}
	}
	if err != nil || int64(len(newest.items)) < o.lines {
		return tailAll, err // fewer candidates than that: gaps
	}
	return newest.items[0], nil
}

// tailCutSelect finds the cut holding no keys: it counts the candidates
// by timestamp, in buckets over the range the cut is known to be in,
// reading them again to narrow the range to the cut's bucket until that
// is one timestamp (a few readings for any spread of timestamps), and
// breaks the tie among the candidates of that timestamp by partition and
// offset.
func tailCutSelect(e *env, parts []*tailPart, o tailOptions) (mergeKey, error) {
	const buckets = 4096
	need := uint64(o.lines)
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	var total uint64
	err := tailScanAll(e, parts, o, func(_ *tailPart, r *logstore.Record) {
		lo, hi = min(lo, r.Timestamp), max(hi, r.Timestamp)
		total++
	})
	if err != nil || total <= need {
		return tailAll, err
	}
	// Invariant: the cut's timestamp is in [lo, hi], and above of the
	// candidates are newer than hi.
	var above uint64
	counts := make([]uint64, buckets)
	for lo < hi {
		width := (uint64(hi)-uint64(lo))/buckets + 1
		clear(counts)
		err := tailScanAll(e, parts, o, func(_ *tailPart, r *logstore.Record) {
			if r.Timestamp >= lo && r.Timestamp <= hi {
				counts[(uint64(r.Timestamp)-uint64(lo))/width]++
			}
		})
		if err != nil {
			return tailAll, err
		}
		b := buckets - 1
		for ; b > 0 && above+counts[b] < need; b-- {
			above += counts[b]
		}
		// In uint64, differences of int64s are right even across zero.
		bucketLo := int64(uint64(lo) + uint64(b)*width)
		if uint64(hi)-uint64(bucketLo) >= width {
			hi = int64(uint64(bucketLo) + width - 1)
		}
		lo = bucketLo
	}
	// The cut is the (need-above)-th newest of the candidates stamped lo:
	// count them by partition, then find it in its partition.
	k := need - above
	perPart := make([]uint64, len(parts))
	err = tailScanAll(e, parts, o, func(tp *tailPart, r *logstore.Record) {
		if r.Timestamp == lo {
			perPart[tp.index]++
		}
	})
	if err != nil {
		return tailAll, err
	}
	for i := len(parts) - 1; i >= 0; i-- {
		if k > perPart[i] {
			k -= perPart[i]
			continue
		}
		// The k-th newest of them is the (perPart[i]-k+1)-th in offset order.
		nth, cut := perPart[i]-k+1, tailAll
		err := tailScan(e, parts[i], o, func(r *logstore.Record) error {
			if r.Timestamp == lo {
				if nth--; nth == 0 {
					cut = recordKey(parts[i], r)
					return errScanDone
				}
			}
			return nil
		})
		if errors.Is(err, errScanDone) {
			err = nil
		}
		return cut, err
	}
	return tailAll, nil // the candidates changed between the readings
}

// errScanDone ends a reading of candidates early.
var errScanDone = errors.New("scan done")

// tailScanAll calls fn for every candidate of every partition.
func tailScanAll(e *env, parts []*tailPart, o tailOptions, fn func(*tailPart, *logstore.Record)) error {
	for _, tp := range parts {
		err := tailScan(e, tp, o, func(r *logstore.Record) error {
			fn(tp, r)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// tailScan calls fn for the records of tp from tp.from up to its end when
// tail started.
func tailScan(e *env, tp *tailPart, o tailOptions, fn func(*logstore.Record) error) error {
	it, err := tailRead(e, tp)
	if err != nil || it == nil {
		return err
	}
	defer func() { it.Close() }()
	for {
		for it.Next() {
			r := it.Record()
			if r.Offset >= tp.next {
				return nil
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		if tailGone(e, tp, it.Err()) {
			it.Close()
			next, err := tailRead(e, tp)
			if err != nil || next == nil {
				return err
			}
			it = next
			continue
		}
		// Past damage even without --skip-corrupt: the candidates are the
		// newest valid records. Printing them reports the damage (and
		// stops there unless --skip-corrupt), as read does.
		var ce *logstore.CorruptionError
		if !errors.As(it.Err(), &ce) || !it.SkipCorrupt() {
			return it.Err()
		}
	}
}

// tailCopy copies a record out of a follower's buffer.
func tailCopy(r *logstore.Record) logstore.Record {
	c := *r
	c.Key = slices.Clone(r.Key)
	c.Value = slices.Clone(r.Value)
	return c
}
