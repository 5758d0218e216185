package logstore

import (
	"errors"

	"github.com/seglog/seglog/logstore/internal/segfile"
)

// NewestFrom returns where the partition's n newest valid records below
// offset below begin: the offset of the first of them, or the partition's
// start when it holds no more than n. Offsets skipped inside a segment
// and those in a gap between segments are no records, so it reaches back
// past them: `tail -n` prints n records, not what is left of n offsets.
// Segments are counted as Stats counts them, from their ends and indexes,
// from the last one back; only one with offsets missing inside is read
// through, as an Iterator going past damage reads it.
func (p *Partition) NewestFrom(n, below uint64) (uint64, error) {
	if len(p.segs) == 0 || n == 0 {
		return below, nil
	}
	if start := p.segs[0].base; below-min(start, below) <= n {
		return start, nil // no more offsets than that, so no more records
	}
	for i := len(p.segs) - 1; i >= 0; i-- {
		seg := p.segs[i]
		if seg.base >= below {
			continue
		}
		sum, err := p.summarizeKept(seg, i == len(p.segs)-1, below)
		if err != nil {
			return 0, err
		}
		top := min(sum.end.Next, below)
		if sum.records == sum.end.Next-seg.base {
			have := top - seg.base
			if have >= n {
				return top - n, nil
			}
			n -= have
			continue
		}
		// Offsets are missing inside: count the records below top, then
		// find the first of the n newest of them.
		var have uint64
		if err := p.eachValid(seg.base, top, func(uint64) bool { have++; return true }); err != nil {
			return 0, err
		}
		if have < n {
			n -= have
			continue
		}
		skip, from := have-n, uint64(0)
		err = p.eachValid(seg.base, top, func(off uint64) bool {
			if skip == 0 {
				from = off
				return false
			}
			skip--
			return true
		})
		return from, err
	}
	return p.segs[0].base, nil
}

// summarizeKept is summarize of seg through the files the partition keeps
// open, which the reads that follow use too. The last segment's end, when
// Bounds found it at below, is not looked for again.
func (p *Partition) summarizeKept(seg segment, active bool, below uint64) (segmentSummary, error) {
	sf, _, err := p.acquire(seg)
	if err != nil {
		return segmentSummary{}, p.segmentGone(err, seg.base)
	}
	defer p.release(sf)
	sseg := segfileSegment(seg, sf.log, sf.index(), 0, active)
	p.mu.Lock()
	end := p.lastEnd
	p.mu.Unlock()
	if !active || end == nil || end.Next != below {
		return summarizeOpen(sseg, false)
	}
	sum := segmentSummary{end: *end}
	sum.records, err = segfile.CountRecords(sseg, sum.end, 0)
	return sum, err
}

// eachValid calls fn with the offset of each valid record from offset
// from up to top, going on past damage where valid data resumes, until fn
// returns false.
func (p *Partition) eachValid(from, top uint64, fn func(off uint64) bool) error {
	it, err := p.Read(from)
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		for it.Next() {
			if off := it.sc.Header().Offset; off >= top || !fn(off) {
				return nil
			}
		}
		var ce *CorruptionError
		if errors.As(it.Err(), &ce) && it.SkipCorrupt() {
			continue
		}
		if err := it.Err(); !errors.As(err, &ce) {
			return err
		}
		return nil // damage with nothing valid after it ends the data
	}
}
