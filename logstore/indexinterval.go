package logstore

import (
	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// segmentIntervals chooses each segment's index interval: the one its own
// index shows, else the nearest other segment's, else the topic's stored
// setting, else 1.
func segmentIntervals(segs []segment, stored int) ([]int, error) {
	own := make([]int, len(segs))
	for i, seg := range segs {
		n, err := inferIndexInterval(seg)
		if err != nil {
			return nil, err
		}
		own[i] = n
	}
	out := make([]int, len(segs))
	for i := range segs {
		out[i] = own[i]
		for d := 1; out[i] == 0 && (i+d < len(segs) || i-d >= 0); d++ {
			if i+d < len(segs) && own[i+d] > 0 {
				out[i] = own[i+d]
			} else if i-d >= 0 && own[i-d] > 0 {
				out[i] = own[i-d]
			}
		}
		if out[i] == 0 {
			out[i] = max(stored, 1)
		}
	}
	return out, nil
}

// inferIndexInterval is the index interval a segment's index shows: the
// offset distance of its first two entries, when the first is the
// segment's first record and the second is confirmed by the chain; or,
// from the time index, the distance of its first two offsets. 0 when
// neither tells.
func inferIndexInterval(seg segment) (int, error) {
	f, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	idx, closeIdx := openSegfileIndex(seg)
	defer closeIdx()
	if idx != nil && idx.Len() >= 2 {
		e0, err0 := idx.Entry(0)
		e1, err1 := idx.Entry(1)
		if err0 == nil && err1 == nil && e0.Offset == seg.base && e0.Pos == 0 && e1.Offset > seg.base {
			sc, err := segfile.NewScanner(segfileSegment(seg, osFile{File: f}, idx, seg.base, false), -1, segfile.Options{})
			if err != nil {
				return 0, err
			}
			ok, err := sc.Confirms(1)
			sc.Close()
			if err != nil {
				return 0, err
			}
			if ok {
				return int(e1.Offset - seg.base), nil
			}
		}
	}
	if tf, size, err := fsx.OpenReadStat(seg.path(format.TimeIndexExt)); err == nil {
		defer tf.Close()
		x := segfile.NewIndex(tf, size)
		if x.Len() >= 2 {
			e0, err0 := x.Entry(0)
			e1, err1 := x.Entry(1)
			if err0 == nil && err1 == nil && e0.Offset == seg.base && e1.Offset > seg.base && e1.Offset-seg.base <= uint64(max(size, 1)) {
				return int(e1.Offset - seg.base), nil
			}
		}
	}
	return 0, nil
}
