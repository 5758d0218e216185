package commands

import (
	"cmp"
	"container/list"
	"errors"
	"math"
	"slices"

	"github.com/seglog/seglog/logstore"
)

// tail -n: the newest records of the partitions by timestamp, found
// (tailCut) and then printed in one merge (tailNewest).

// tailKey orders records the way tail prints the newest ones: by
// timestamp, ties by partition, then offset.
type tailKey struct {
	ts        int64
	partition int
	offset    uint64
}

func (a tailKey) compare(b tailKey) int {
	return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.partition, b.partition), cmp.Compare(a.offset, b.offset))
}

func recordKey(tp *tailPart, r *logstore.Record) tailKey {
	return tailKey{r.Timestamp, tp.ref.partition, r.Offset}
}

// Cuts that every record is at or above, and none.
var (
	tailAll  = tailKey{ts: math.MinInt64, partition: -1}
	tailNone = tailKey{ts: math.MaxInt64, partition: math.MaxInt}
)

// tailHeapMax is the largest -n whose cut tailCut finds holding the keys
// of the newest records (24 bytes each); above it, it reads the candidates
// a few times over instead (tailCutSelect).
const tailHeapMax = 1 << 16

// tailLive is how many partitions' iterators the merge keeps open at a
// time; the others are parked (no file, no buffer) until their turn.
const tailLive = 32

// tailHead is a partition's next record to print in tailNewest's merge.
type tailHead struct {
	tp     *tailPart
	it     *logstore.Iterator
	key    tailKey
	parked bool
	live   *list.Element // in the merge's list of unparked heads
}

// tailNewest prints the o.lines newest records of the partitions, oldest
// first (stopping at --count), and returns how many it printed. The
// candidates are each partition's last o.lines valid records; first the cut
// between the o.lines newest of them and the rest is found (tailCut),
// then each partition's records at or above it are merged by key, one
// iterator a partition, all but a few parked. Memory grows neither with
// the records nor with -n beyond tailHeapMax, nor much with partitions.
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
	m := tailMerge{e: e, gt: gt, o: o, cut: cut, heads: minHeap[*tailHead]{less: func(a, b *tailHead) bool { return a.key.compare(b.key) < 0 }}}
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
		h := &tailHead{tp: tp, it: it}
		if ok, err := m.advance(h); err != nil || !ok {
			h.it.Close()
			if err != nil {
				return 0, err
			}
			continue
		}
		m.heads.push(h)
		m.used(h)
	}
	return m.print()
}

// tailMerge merges the partitions' records at or above the cut.
type tailMerge struct {
	e     *env
	gt    *groupTracker
	o     tailOptions
	cut   tailKey
	heads minHeap[*tailHead]
	live  list.List // unparked heads, most recently read first
}

// print prints the heads' records in key order, up to --count.
func (m *tailMerge) print() (int64, error) {
	out := m.gt.output()
	var n int64
	for len(m.heads.items) > 0 && n != m.o.count {
		best := m.heads.items[0]
		if best.parked {
			// Opened again, the iterator returns its record once more:
			// or a later one, if retention removed it meanwhile.
			was := best.key
			ok, err := m.advance(best)
			if err != nil {
				return n, err
			}
			if !ok || best.key != was {
				m.settle(best, ok)
				continue
			}
		}
		m.used(best)
		best.tp.rw.out = out
		r := best.it.Record()
		if err := best.tp.rw.write(r); err != nil {
			return n, err
		}
		n++
		m.gt.advance(best.tp.ref.partition, r.Offset+1)
		if err := m.gt.maybeCommit(); err != nil {
			return n, err
		}
		ok, err := m.advance(best)
		if err != nil {
			return n, err
		}
		m.settle(best, ok)
	}
	return n, nil
}

// settle puts h, whose key changed, in its place again, or drops it when
// it has nothing more.
func (m *tailMerge) settle(h *tailHead, more bool) {
	if more {
		m.heads.fixTop()
		return
	}
	m.heads.pop()
	m.forget(h)
	h.it.Close()
}

// advance moves h to its next record at or above the cut (any record,
// from a group's position) and reports whether there is one. A parked
// head is opened again, its iterator giving its last record once more.
func (m *tailMerge) advance(h *tailHead) (bool, error) {
	h.parked = false
	for {
		for h.it.Next() {
			r := h.it.Record()
			if r.Offset >= h.tp.next {
				break
			}
			if k := recordKey(h.tp, r); h.tp.all || k.compare(m.cut) >= 0 {
				h.key = k
				return true, nil
			}
			m.gt.advance(h.tp.ref.partition, r.Offset+1) // passed over
		}
		err := h.it.Err()
		if tailGone(m.e, h.tp, err) {
			h.it.Close()
			it, err := tailRead(m.e, h.tp)
			if err != nil || it == nil {
				return false, err
			}
			h.it = it
			continue
		}
		var ce *logstore.CorruptionError
		if err == nil || !m.o.skipCorrupt || !errors.As(err, &ce) {
			return false, err
		}
		m.e.warn("skipping %s", errorLine(ce))
		if !h.it.SkipCorrupt() {
			return false, h.it.Err()
		}
	}
}

// used notes that h was just read; the least recently read heads beyond
// tailLive are parked.
func (m *tailMerge) used(h *tailHead) {
	if h.live != nil {
		m.live.MoveToFront(h.live)
		return
	}
	h.live = m.live.PushFront(h)
	for m.live.Len() > tailLive {
		victim := m.live.Back().Value.(*tailHead)
		m.forget(victim)
		victim.it.Park()
		victim.parked = true
	}
}

// forget takes h off the list of unparked heads, if it is on it.
func (m *tailMerge) forget(h *tailHead) {
	if h.live != nil {
		m.live.Remove(h.live)
		h.live = nil
	}
}

func (m *tailMerge) close() {
	for _, h := range m.heads.items {
		h.it.Close()
	}
}

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
func tailCut(e *env, parts []*tailPart, o tailOptions) (tailKey, error) {
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
func tailCutHeap(e *env, parts []*tailPart, o tailOptions) (tailKey, error) {
	newest := minHeap[tailKey]{less: func(a, b tailKey) bool { return a.compare(b) < 0 }}
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
func tailCutSelect(e *env, parts []*tailPart, o tailOptions) (tailKey, error) {
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

// minHeap is a binary heap, least item (by less) on top.
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *minHeap[T]) push(x T) {
	h.items = append(h.items, x)
	for i := len(h.items) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(h.items[i], h.items[parent]) {
			break
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *minHeap[T]) pop() T {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	var zero T
	h.items[last] = zero
	h.items = h.items[:last]
	if last > 0 {
		h.fixTop()
	}
	return top
}

// fixTop restores the order after the top item changed.
func (h *minHeap[T]) fixTop() {
	for i, n := 0, len(h.items); ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < n && h.less(h.items[l], h.items[least]) {
			least = l
		}
		if r < n && h.less(h.items[r], h.items[least]) {
			least = r
		}
		if least == i {
			return
		}
		h.items[i], h.items[least] = h.items[least], h.items[i]
		i = least
	}
}
