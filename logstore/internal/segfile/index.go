package segfile

import (
	"errors"
	"io"

	"github.com/seglog/seglog/format"
)

// Index looks up a segment's .index with positional reads of single
// entries: a handful per lookup, never a mapping another process could
// truncate under us.
type Index struct {
	f File
	n int64 // whole entries; a partial last entry is ignored
	// The entries the last read returned, so that a search's answer is
	// not read twice.
	seen    [3]format.IndexEntry
	seenAt  int64 // entry number of seen[0]; -1 for none
	seenLen int64
	// The first and last entries, which every search starts from, for an
	// index kept open between searches; endsN is the n they were read at.
	ends  [2]format.IndexEntry
	endsN int64
	buf   [3 * format.IndexEntryLen]byte // read's, kept here so it does not escape per read
}

// NewIndex reads f, a .index or .timeindex of size bytes, from now on.
func NewIndex(f File, size int64) *Index {
	return &Index{f: f, n: size / format.IndexEntryLen, seenAt: -1}
}

// Len is the number of whole entries.
func (x *Index) Len() int64 { return x.n }

// File is the index's file.
func (x *Index) File() File { return x.f }

// pair reads entry i: an offset and the position (.index) or timestamp
// (.timeindex) beside it.
func (x *Index) pair(i int64) (uint64, int64, error) {
	e, _, err := x.read(i, 1)
	return e.Offset, e.Pos, err
}

// read returns entries i and i+n-1, reading the n (at most 3) from i
// with one pread.
func (x *Index) read(i, n int64) (format.IndexEntry, format.IndexEntry, error) {
	if x.seenAt >= 0 && i >= x.seenAt && i+n <= x.seenAt+x.seenLen {
		return x.seen[i-x.seenAt], x.seen[i+n-1-x.seenAt], nil
	}
	b := x.buf[:]
	if _, err := x.f.ReadAt(b[:n*format.IndexEntryLen], i*format.IndexEntryLen); err != nil {
		if !errors.Is(err, io.EOF) {
			// An index that cannot be read is one that is not there: it is
			// a hint, and reading goes on without it.
			x.n, x.endsN = 0, 0
		}
		return format.IndexEntry{}, format.IndexEntry{}, format.ErrShort
	}
	x.seenAt = -1
	for k := range n {
		e, err := format.ParseIndexEntry(b[k*format.IndexEntryLen:])
		if err != nil {
			return format.IndexEntry{}, format.IndexEntry{}, err
		}
		x.seen[k] = e
	}
	x.seenAt, x.seenLen = i, n
	return x.seen[0], x.seen[n-1], nil
}

// firstAndLast returns the first and last entries, read once per size.
func (x *Index) firstAndLast() (first, last format.IndexEntry, err error) {
	if x.endsN != x.n {
		if x.ends[0], _, err = x.read(0, 1); err == nil {
			x.ends[1], _, err = x.read(x.n-1, 1)
		}
		if err != nil {
			return first, last, err
		}
		x.endsN = x.n
	}
	return x.ends[0], x.ends[1], nil
}

// refresh takes in entries appended since the index was opened, and
// reports whether there are any.
func (x *Index) refresh() bool {
	size, err := fileSize(x.f)
	if err != nil || size/format.IndexEntryLen <= x.n {
		return false
	}
	x.n = size / format.IndexEntryLen
	return true
}

// known returns entry i if the last read brought it in.
func (x *Index) known(i int64) (format.IndexEntry, bool) {
	if x.seenAt < 0 || i < x.seenAt || i >= x.seenAt+x.seenLen {
		return format.IndexEntry{}, false
	}
	return x.seen[i-x.seenAt], true
}

// Entry reads entry i: for a .timeindex, Pos holds the timestamp.
func (x *Index) Entry(i int64) (format.IndexEntry, error) { return x.entry(i) }

func (x *Index) entry(i int64) (format.IndexEntry, error) {
	o, p, err := x.pair(i)
	return format.IndexEntry{Offset: o, Pos: p}, err
}

// ErrUnsorted means the entries an index search read are out of order.
var ErrUnsorted = errors.New("index entries out of order")

// FloorBy finds the last entry whose key (computed from the entry's
// offset and its position or timestamp) is <= target, keys ascending; see
// floorBy.
func (x *Index) FloorBy(target uint64, key func(offset uint64, v int64) uint64) (i int64, ok bool, err error) {
	return x.floorBy(target, key)
}

// floorBy finds the last entry whose key is <= target, keys (computed from
// each entry's pair) ascending. Interpolation steps, exact on the evenly
// spaced entries seglog writes, alternate with halving steps, so even odd
// spacing costs O(log n) reads. ok is false when no entry qualifies;
// ErrUnsorted when the entries read show the keys are not ascending.
func (x *Index) floorBy(target uint64, key func(offset uint64, v int64) uint64) (i int64, ok bool, err error) {
	if x.n == 0 {
		return 0, false, nil
	}
	// Entries i and i+1, read with the one before: the entry found is
	// confirmed by the walk from the one before it (Scanner.confirmEntry).
	readTwo := func(i int64) (uint64, uint64, error) {
		if _, _, err := x.read(i-1, 3); err != nil {
			return 0, 0, err
		}
		a, _ := x.known(i)
		b, _ := x.known(i + 1)
		return key(a.Offset, a.Pos), key(b.Offset, b.Pos), nil
	}
	first, last, err := x.firstAndLast()
	if err != nil {
		return 0, false, err
	}
	lo, hi := key(first.Offset, first.Pos), key(last.Offset, last.Pos)
	if lo > target {
		return 0, false, nil
	}
	if hi < lo {
		return 0, false, ErrUnsorted
	}
	if hi <= target {
		return x.n - 1, true, nil
	}
	// Invariant: entry loI's key <= target < entry hiI's key.
	loI, hiI := int64(0), x.n-1
	for step := 0; hiI-loI > 1; step++ {
		var mid int64
		if step%2 == 0 {
			frac := float64(target-lo) / float64(hi-lo)
			mid = loI + int64(frac*float64(hiI-loI))
		} else {
			mid = loI + (hiI-loI)/2
		}
		mid = min(max(mid, loI+1), hiI-1)
		// Entries mid and mid+1 in one read: when they straddle target
		// (an exact interpolation step does that) the search is over.
		m, next, err := readTwo(mid)
		switch {
		case err != nil:
			return 0, false, err
		case m < lo || m > hi || next < m || next > hi:
			return 0, false, ErrUnsorted
		case m <= target && target < next:
			return mid, true, nil
		case m <= target:
			loI, lo = mid+1, next
		default:
			hiI, hi = mid, m
		}
	}
	return loI, true, nil
}

// floor finds an entry with the largest offset <= target (see floorBy). A
// lying index only costs the caller a longer scan, as every entry is
// checked against the .log before use.
func (x *Index) floor(target uint64) (e format.IndexEntry, i int64, ok bool, err error) {
	i, ok, err = x.floorBy(target, func(offset uint64, _ int64) uint64 { return offset })
	if err != nil || !ok {
		return e, 0, false, err
	}
	e, err = x.entry(i)
	return e, i, err == nil, err
}

// atOrBefore is the last entry of x, in position order, at or before
// byte p (found false: none).
func (x *Index) atOrBefore(p int64) (i int64, found bool, err error) {
	return x.floorBy(uint64(p), func(_ uint64, pos int64) uint64 { return uint64(max(pos, 0)) })
}
