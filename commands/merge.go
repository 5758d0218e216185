package commands

import (
	"cmp"
	"container/list"

	"github.com/seglog/seglog/logstore"
)

// The merge of partitions' records by timestamp that tail -n and
// read --merge print: one record a partition in flight, and at most
// mergeLive partitions' iterators open.

// mergeKey orders records as a consumer of every partition sees them: by
// timestamp, ties by partition, then offset.
type mergeKey struct {
	ts        int64
	partition int
	offset    uint64
}

func (a mergeKey) compare(b mergeKey) int {
	return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.partition, b.partition), cmp.Compare(a.offset, b.offset))
}

// keyOf is r's key in partition.
func keyOf(partition int, r *logstore.Record) mergeKey {
	return mergeKey{r.Timestamp, partition, r.Offset}
}

// mergeLive is how many partitions' iterators a merge keeps open at a
// time; the others are parked (no file, no buffer) until their turn.
const mergeLive = 32

// mergeSource is one partition's records in a merge.
type mergeSource interface {
	// next moves to the next record to merge and returns its key, or
	// false when there is none. After park, it gives the record it was at
	// once more, or a later one if that one is gone.
	next() (mergeKey, bool, error)
	record() *logstore.Record
	park()
	close()
}

// mergeHead is a source's next record in the merge.
type mergeHead[S mergeSource] struct {
	src    S
	key    mergeKey
	parked bool
	live   *list.Element // in the merge's list of unparked heads
}

// recordMerge merges sources by key.
type recordMerge[S mergeSource] struct {
	heads minHeap[*mergeHead[S]]
	live  list.List // unparked heads, most recently read first
}

func newRecordMerge[S mergeSource]() *recordMerge[S] {
	return &recordMerge[S]{heads: minHeap[*mergeHead[S]]{less: func(a, b *mergeHead[S]) bool { return a.key.compare(b.key) < 0 }}}
}

// add puts src in the merge at its first record; a src without any is
// closed.
func (m *recordMerge[S]) add(src S) error {
	h := &mergeHead[S]{src: src}
	if ok, err := m.advance(h); err != nil || !ok {
		src.close()
		return err
	}
	m.heads.push(h)
	m.used(h)
	return nil
}

// each calls fn with the sources' records in key order, the record at
// h.src.record(), until there are no more or done says so.
func (m *recordMerge[S]) each(done func() bool, fn func(h *mergeHead[S]) error) error {
	for len(m.heads.items) > 0 && !done() {
		best := m.heads.items[0]
		if best.parked {
			// Opened again, the source gives its record once more: or a
			// later one, whose turn may not have come.
			was := best.key
			ok, err := m.advance(best)
			if err != nil {
				return err
			}
			if !ok || best.key != was {
				m.settle(best, ok)
				continue
			}
		}
		m.used(best)
		if err := fn(best); err != nil {
			return err
		}
		ok, err := m.advance(best)
		if err != nil {
			return err
		}
		m.settle(best, ok)
	}
	return nil
}

// advance moves h to its source's next record.
func (m *recordMerge[S]) advance(h *mergeHead[S]) (bool, error) {
	h.parked = false
	key, ok, err := h.src.next()
	h.key = key
	return ok, err
}

// settle puts h, whose key changed, in its place again, or drops it when
// it has nothing more.
func (m *recordMerge[S]) settle(h *mergeHead[S], more bool) {
	if more {
		m.heads.fixTop()
		return
	}
	m.heads.pop()
	m.forget(h)
	h.src.close()
}

// used notes that h was just read; the least recently read heads beyond
// mergeLive are parked.
func (m *recordMerge[S]) used(h *mergeHead[S]) {
	if h.live != nil {
		m.live.MoveToFront(h.live)
		return
	}
	h.live = m.live.PushFront(h)
	for m.live.Len() > mergeLive {
		victim := m.live.Back().Value.(*mergeHead[S])
		m.forget(victim)
		victim.src.park()
		victim.parked = true
	}
}

// forget takes h off the list of unparked heads, if it is on it.
func (m *recordMerge[S]) forget(h *mergeHead[S]) {
	if h.live != nil {
		m.live.Remove(h.live)
		h.live = nil
	}
}

// close closes every source left.
func (m *recordMerge[S]) close() {
	for _, h := range m.heads.items {
		h.src.close()
	}
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
