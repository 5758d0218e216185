package commands

import (
	"strconv"
	"strings"

	"github.com/seglog/seglog/logstore"
)

// --offset: where reading starts in each partition (read, tail, kafka export).

// offsetSpec is where reading starts in each partition.
type offsetSpec struct {
	kind string // "beginning", "end", "at" (absolute), "last" (the last n)
	n    uint64
}

func parseOffset(s string) (offsetSpec, error) {
	switch s {
	case "beginning", "end":
		return offsetSpec{kind: s}, nil
	}
	last := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || !isDecimal(digits) {
		return offsetSpec{}, usagef("--offset must be N, -N (decimal, no leading zeros), beginning or end, not %q", s)
	}
	if last {
		return offsetSpec{kind: "last", n: n}, nil
	}
	return offsetSpec{kind: "at", n: n}, nil
}

// start resolves the spec against the bounds of the partition called name.
// start is the first offset to read of a partition holding e; none: the
// spec names nothing there (the end of a full partition, after which no
// offset exists). last finds where the partition's last n valid records
// start (logstore.Partition.StartOfLast); nil takes its last n offsets.
func (o offsetSpec) start(name string, e logstore.Extent, last func(logstore.Extent, uint64) (uint64, error)) (from uint64, none bool, err error) {
	switch o.kind {
	case "end":
		return e.Next, e.Full, nil
	case "last":
		if last == nil {
			return e.LastN(o.n), false, nil
		}
		from, err := last(e, o.n)
		return from, false, err
	case "at":
		return o.n, false, e.Check(name, o.n)
	}
	return e.Start, false, nil
}

// startIn is start in l, whose Extent it finds. A seglog partition read
// from its beginning or from an offset needs none of it: its end takes
// the end of every segment to find (Partition.CheckOffset).
func (o offsetSpec) startIn(l logstore.Log) (from uint64, none bool, err error) {
	if p, ok := l.(*logstore.Partition); ok {
		switch o.kind {
		case "beginning":
			from, err := p.Start()
			return from, false, err
		case "at":
			return o.n, false, p.CheckOffset(o.n)
		}
	}
	e, err := l.Extent()
	if err != nil {
		return 0, false, err
	}
	return o.start(l.Name(), e, startOfLast(l))
}
