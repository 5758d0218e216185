package logstore

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// segmentAction is what the plan does to a segment's .log.
type segmentAction int

const (
	actionNone    segmentAction = iota // the .log is fine; its indexes may still need work
	actionCutTail                      // cut the active segment's incomplete tail
	actionSplit                        // salvage: rescued runs become segments, the damage is cut
	actionRename                       // a misnamed segment takes its first record's name
	actionLeave                        // damage left in place (a problem)
	actionDrop                         // an empty segment named below its floor is removed
)

// validRun is a stretch of valid records with contiguous offsets.
type validRun struct {
	pos, end    int64
	first, next uint64
}

// damageSpan is a stretch where no valid record starts: after a run, up to
// the next run or the end of the file.
type damageSpan struct {
	pos, end int64
	offset   uint64 // the offset expected at pos
	reason   error
	d        *segfile.Damage
}

// segmentScan is a segment's .log, scanned whole: runs[0] starts at byte 0
// with the segment's base offset (and may be empty); damage[i] follows
// runs[i].
type segmentScan struct {
	size   int64
	runs   []validRun
	damage []damageSpan
}

func (sc *segmentScan) last() validRun { return sc.runs[len(sc.runs)-1] }

func (sc *segmentScan) records() (n uint64, bytes int64) {
	for _, r := range sc.runs {
		n += r.next - r.first
		bytes += r.end - r.pos
	}
	return n, bytes
}

// segmentPlan is what the plan does to one segment.
type segmentPlan struct {
	seg      segment
	active   bool
	floor    uint64 // where the segment before ends: offsets below are its
	interval int
	scan     segmentScan
	idx      indexFileCheck // expected entries of runs[0] against the .index
	tidx     indexFileCheck // and the .timeindex
	action   segmentAction
	present  []bool // per run: for runs[1:], already a segment of its own
	// waitsFor are the later segments (indexes into the plan's) named
	// below where runs[1:] end, but those an interrupted split made of
	// them: their records there are below their floor, and a split waits
	// until they are gone from those names.
	waitsFor []int
	tailGap  *splitTailGap // after the last run of a split, when a segment follows
	gaps     []int         // the gaps it leaves, as indexes into the report's
	rep      int           // its entry in the report
	// kept: runs[0] is empty and runs[kept] starts at the segment's base
	// offset, so it replaces the segment's contents instead of becoming
	// a segment of its own (0: none does).
	kept int
	prog *scanProgress // nil: no progress reports
}

// partitionPlan is a partition's plan.
type partitionPlan struct {
	topic string
	part  int
	dir   string
	rep   RecoverReport
	segs  []*segmentPlan
}

// plan scans every segment and decides what to do with it.
func (p *partitionPlan) plan(storedInterval int, opts RecoverOptions) error {
	segs, err := listSegments(p.dir)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		return nil
	}
	intervals, err := segmentIntervals(segs, storedInterval)
	if err != nil {
		return err
	}
	// The next offset as readers and writers see it, found the way they
	// find it: the plan must not lower it.
	e, err := (&Partition{dir: p.dir, name: p.dir, segs: segs}).extentOf()
	if err != nil {
		return err
	}
	p.rep.Next = e.Next
	// A split waits for the later segments holding offsets of its rescued
	// runs to give them up (executePlan carries those out first). One that
	// keeps them leaves the split's damage in place: the plan is made
	// again with it stuck, which only such a segment's damage left in
	// place, unsalvaged, can cause.
	stuck := map[uint64]error{}
	for {
		if err := p.planSegments(segs, intervals, stuck, opts); err != nil {
			return err
		}
		again := false
		for _, sp := range p.segs {
			if sp.action != actionSplit || stuck[sp.seg.base] != nil {
				continue
			}
			for _, k := range sp.waitsFor {
				if b := p.segs[k]; !p.vacates(b) {
					how := "recover cannot split them off"
					if !opts.Salvage {
						how += " (recover --salvage repairs both)"
					}
					stuck[sp.seg.base] = fmt.Errorf("records after the damage in %s overlap segment %s, whose damage is left in place: %s",
						sp.seg.path(format.LogExt), b.seg.path(format.LogExt), how)
					again = true
					break
				}
			}
		}
		if !again {
			break
		}
		opts.prog = nil // every byte was counted once already
	}
	if after := p.next(); after < p.rep.Next {
		return fmt.Errorf("the plan would lower the next offset from %d to %d; nothing was changed", p.rep.Next, after)
	}
	return nil
}

// vacates reports whether the plan takes every record of segment sp out
// of its name: it is removed, or renamed.
func (p *partitionPlan) vacates(sp *segmentPlan) bool {
	return sp.action == actionRename || p.rep.Segments[sp.rep].Removed
}

// next is the partition's next offset once the plan is carried out:
// where the highest run of valid records it keeps ends.
func (p *partitionPlan) next() uint64 {
	var next uint64
	for _, sp := range p.segs {
		next = max(next, sp.scan.last().next)
	}
	return next
}

// planSegments makes the plan for every segment, those in stuck leaving
// their damage in place with that problem.
func (p *partitionPlan) planSegments(segs []segment, intervals []int, stuck map[uint64]error, opts RecoverOptions) error {
	p.segs, p.rep.Segments, p.rep.Gaps, p.rep.Problems = nil, nil, nil, nil
	bases := map[uint64]bool{}
	for _, seg := range segs {
		bases[seg.base] = true
	}
	var left *segment     // the segment before, when its damage is left in place
	prevNext := uint64(0) // offsets below this are taken once the plan is carried out
	// Runs an interrupted split made segments of: each follows the run
	// before it once the split is finished, whatever the runs after it.
	made := map[uint64]bool{}
	for i, seg := range segs {
		sp := &segmentPlan{seg: seg, active: i == len(segs)-1, interval: intervals[i], prog: opts.prog}
		floor := prevNext
		if made[seg.base] {
			floor = min(floor, seg.base)
		}
		if err := sp.scanSegment(floor); err != nil {
			return err
		}
		sc := &sp.scan
		run0 := sc.runs[0]
		sr := SegmentRecovery{Name: format.SegmentName(seg.base, format.LogExt), Base: seg.base, Size: sc.size,
			Interval: sp.interval}
		middle := len(sc.runs) > 1
		trailing := sc.last().end < sc.size
		switch {
		case sc.size == 0 && seg.base < sp.floor:
			// Empty and named below where the segments before end: in the
			// way of the next append, and nothing to cut.
			sp.action = actionDrop
		case !middle && !trailing:
			sp.action = actionNone
		case sp.active && !middle && sc.damage[0].d.Class == segfile.Incomplete:
			sp.action = actionCutTail
		default:
			sp.action = actionLeave
			conflict, err := sp.checkRescued(segs, i, bases)
			if err != nil {
				return err
			}
			if d := sc.damage[0]; conflict == nil && left != nil && errors.Is(d.reason, ErrOverlap) {
				conflict = fmt.Errorf("records of %s below offset %d overlap %s, which recover leaves as it is: it cannot tell which are right",
					seg.path(format.LogExt), d.offset, left.path(format.LogExt))
			}
			if conflict == nil {
				conflict = stuck[seg.base]
			}
			switch {
			case conflict != nil:
				sr.Problem = conflict
			case sp.misnamedOnly():
				sp.action = actionRename
			case opts.Salvage || slices.Contains(sp.present, true):
				sp.action = actionSplit
				sr.Finished = slices.Contains(sp.present, true)
			default:
				sr.Problem = corruption(sc.damage[0].d)
			}
		}
		if sr.Problem != nil {
			p.rep.Problems = append(p.rep.Problems, sr.Problem)
		}
		left = nil
		if sp.action == actionLeave && (opts.Salvage || !errors.As(sr.Problem, new(*CorruptionError))) {
			// Damage left in place that salvage would not cut: what
			// overlaps it stays too.
			left = &sp.seg
		}
		switch {
		case sp.action == actionLeave:
			sr.Records, sr.ValidBytes = sc.records()
			sr.Index, sr.TimeIndex = IndexLeft, IndexLeft
		case sp.action == actionSplit && sp.kept > 0, sp.action == actionRename:
			r := sc.runs[max(sp.kept, 1)]
			sr.Records, sr.ValidBytes = r.next-r.first, r.end-r.pos
			sr.Index, sr.TimeIndex = IndexRebuilt, IndexRebuilt
			if sp.action == actionRename {
				sr.RenamedTo = format.SegmentName(r.first, format.LogExt)
			}
		case sp.action == actionDrop,
			sp.action == actionSplit && run0.end == 0 && (len(sc.runs) > 1 || i < len(segs)-1 || seg.base < sp.floor):
			// Nothing valid at the segment's name, and a segment follows
			// it or the segments before end above its name: an empty
			// segment there would only be in the way.
			sr.Removed = true
			sr.Index, sr.TimeIndex = IndexRemoved, IndexRemoved
		default:
			sr.Records, sr.ValidBytes = run0.next-run0.first, run0.end
			sr.Index, sr.TimeIndex = sp.idx.action(), sp.tidx.action()
		}
		switch sp.action {
		case actionCutTail:
			d := sc.damage[0]
			sr.Cut = &RecoverCut{From: d.pos, To: sc.size, Offset: d.offset,
				Reason: "incomplete record at the end of the active segment (" + d.reason.Error() + "), cut by recover"}
		case actionSplit:
			// The offset expected where the cut begins, as readers report
			// it: above the segment's name when its first records overlap
			// the segments before.
			sr.Cut = &RecoverCut{From: run0.end, To: sc.size, Offset: sc.damage[0].offset, Whole: true}
		}
		sp.rep = len(p.rep.Segments)
		p.rep.Segments = append(p.rep.Segments, sr)
		switch sp.action {
		case actionSplit:
			p.planSplit(sp, segs, i)
			for j, r := range sc.runs {
				if sp.present[j] {
					made[r.first] = true
				}
			}
			prevNext = max(prevNext, sc.last().next)
		case actionLeave, actionRename:
			prevNext = max(prevNext, sc.last().next)
		default:
			prevNext = max(prevNext, run0.next)
		}
		p.segs = append(p.segs, sp)
	}
	p.planTailGaps()
	return nil
}

// planSplit adds to the report the segments a split makes and the gaps it
// leaves, and describes the cut.
func (p *partitionPlan) planSplit(sp *segmentPlan, segs []segment, i int) {
	sc := &sp.scan
	sr := &p.rep.Segments[sp.rep]
	d0 := sc.damage[0]
	var moved []string
	var made []SegmentRecovery
	for j, r := range sc.runs[1:] {
		name := format.SegmentName(r.first, format.LogExt)
		if j+1 == sp.kept {
			moved = append(moved, fmt.Sprintf("%d..%d kept in %s (rewritten)", r.first, r.next-1, name))
			continue
		}
		sr.SplitInto = append(sr.SplitInto, name)
		moved = append(moved, fmt.Sprintf("%d..%d to %s", r.first, r.next-1, name))
		if sp.present[j+1] {
			continue
		}
		made = append(made, SegmentRecovery{Name: name, Base: r.first, Records: r.next - r.first,
			ValidBytes: r.end - r.pos, Index: IndexCreated, TimeIndex: IndexCreated, Interval: sp.interval,
			SplitFrom: sr.Name})
	}
	why := fmt.Sprintf("corrupt record at byte %d (expected offset %d): %s", d0.pos, d0.offset, d0.reason.Error())
	sr.Cut.Reason = fmt.Sprintf("%s; the whole segment as it was before recover --salvage split it: bytes %d..%d were cut", why, sc.runs[0].end, sc.size)
	if len(moved) > 0 {
		sr.Cut.Reason += ", records " + strings.Join(moved, ", ")
	}
	// Offsets the damage took: between runs, and after the last run up to
	// the next segment that is not one of this split's (planTailGaps,
	// once that one is scanned).
	for j, d := range sc.damage {
		// Offsets below the floor are the segments' before.
		from := max(sc.runs[j].next, d.offset, sp.floor)
		if j+1 < len(sc.runs) {
			p.addGap(sp, from, sc.runs[j+1].first, d)
			continue
		}
		for k := i + 1; k < len(segs); k++ {
			if segs[k].base >= sc.last().next {
				sp.tailGap = &splitTailGap{from: from, next: k, d: d}
				break
			}
		}
	}
	p.rep.Segments = append(p.rep.Segments, made...)
}

// splitTailGap is the gap a split leaves after its last run, up to where
// the records of segment next (an index into the plan's) start.
type splitTailGap struct {
	from uint64
	next int
	d    damageSpan
}

// planTailGaps adds the gaps splits leave after their last runs: up to
// the next segment's base, or its first valid record below that (it is
// misnamed).
func (p *partitionPlan) planTailGaps() {
	for _, sp := range p.segs {
		if t := sp.tailGap; t != nil {
			next := p.segs[t.next]
			to := next.seg.base
			for _, r := range next.scan.runs {
				if r.next > r.first {
					to = min(to, r.first)
					break
				}
			}
			p.addGap(sp, t.from, to, t.d)
		}
	}
}

// addGap records offsets [from, to) as lost to damage d of sp's segment.
func (p *partitionPlan) addGap(sp *segmentPlan, from, to uint64, d damageSpan) {
	if to <= from {
		return
	}
	g := Gap{From: from, To: to, Reason: fmt.Sprintf("recover --salvage cut a corrupt record at byte %d of %s (expected offset %d): %s",
		d.pos, sp.seg.path(format.LogExt), d.offset, d.reason.Error())}
	sp.gaps = append(sp.gaps, len(p.rep.Gaps))
	p.rep.Gaps = append(p.rep.Gaps, g)
}

// checkRescued decides, for each run after the first, whether it already
// is a segment of its own (an interrupted split made it) and whether it
// can become one. A later segment named below where the runs end (but for
// those they already are) holds records readers take for overlap there:
// the split waits for it to give up its name (waitsFor).
func (sp *segmentPlan) checkRescued(segs []segment, self int, bases map[uint64]bool) (conflict, err error) {
	sc := &sp.scan
	sp.present = make([]bool, len(sc.runs))
	for j, r := range sc.runs {
		if j == 0 {
			continue
		}
		// Runs are named above the segment's name, but for those of a
		// misnamed one below it: no segment before may be named there.
		i, _ := slices.BinarySearchFunc(segs, r.first, func(s segment, b uint64) int { return cmp.Compare(s.base, b) })
		if i < self && segs[i].base < r.next {
			return fmt.Errorf("records %d..%d after the damage in %s overlap segment %s: recover cannot split them off",
				r.first, r.next-1, sp.seg.path(format.LogExt), segs[i].path(format.LogExt)), nil
		}
		if r.first == sp.seg.base && sc.runs[0].end == 0 {
			// Nothing valid at the segment's name precedes the damage: the
			// run stays in this segment, whose files are replaced by ones
			// holding only it. Runs before it are below the name (the
			// segment is misnamed) and become segments of their own.
			sp.kept = j
			continue
		}
		if r.first == sp.seg.base {
			return fmt.Errorf("records %d..%d after the damage in %s start at the segment's own base offset: recover cannot split them off (read --skip-corrupt reads them)",
				r.first, r.next-1, sp.seg.path(format.LogExt)), nil
		}
		if bases[r.first] {
			other := segment{dir: sp.seg.dir, base: r.first}
			same, err := fileStartsWith(sp.seg.path(format.LogExt), r.pos, r.end, other.path(format.LogExt))
			if err != nil {
				return nil, err
			}
			sp.present[j] = same
		}
	}
	for k := self + 1; k < len(segs) && segs[k].base < sc.last().next; k++ {
		if !sp.presentAt(segs[k].base) {
			sp.waitsFor = append(sp.waitsFor, k)
		}
	}
	return nil, nil
}

// presentAt reports whether the segment named base is one of the runs,
// made by an interrupted split.
func (sp *segmentPlan) presentAt(base uint64) bool {
	for j, r := range sp.scan.runs {
		if sp.present[j] && r.first == base {
			return true
		}
	}
	return false
}

// misnamedOnly reports whether the segment's only fault is its name: its
// records are valid from its first byte to its last, and the offsets
// between its name and its first record are no loss (they are the segment
// before's, or above the first record).
func (sp *segmentPlan) misnamedOnly() bool {
	sc := &sp.scan
	if len(sc.runs) != 2 || sp.present[1] {
		return false
	}
	d, r := sc.damage[0], sc.runs[1]
	return d.d.Misnamed() && r.pos == 0 && r.end == sc.size && r.first <= max(sc.runs[0].next, d.offset, sp.floor)
}

// fileStartsWith reports whether the file at path starts with bytes
// [from, to) of src.
func fileStartsWith(src string, from, to int64, path string) (bool, error) {
	a, err := fsx.OpenRead(src)
	if err != nil {
		return false, err
	}
	defer a.Close()
	b, err := fsx.OpenRead(path)
	if err != nil {
		return false, err
	}
	defer b.Close()
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for at := int64(0); at < to-from; {
		n := min(int64(len(bufA)), to-from-at)
		if _, err := a.ReadAt(bufA[:n], from+at); err != nil {
			return false, err
		}
		if _, err := b.ReadAt(bufB[:n], at); err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, err
		}
		if !bytes.Equal(bufA[:n], bufB[:n]) {
			return false, nil
		}
		at += n
	}
	return true, nil
}

// scanSegment scans the segment's .log whole into runs of valid records
// and the damage between them, by the one rule (segfile), offsets below
// floor being the segments' before it; it compares the index entries a
// writer would have written for runs[0] with the index files as it goes.
func (sp *segmentPlan) scanSegment(floor uint64) error {
	seg := sp.seg
	sp.floor = floor
	f, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := sp.idx.open(seg.path(format.IndexExt)); err != nil {
		return err
	}
	defer sp.idx.close()
	if err := sp.tidx.open(seg.path(format.TimeIndexExt)); err != nil {
		return err
	}
	defer sp.tidx.close()
	idx, closeIdx := openSegfileIndex(seg)
	defer closeIdx()
	scn, err := segfile.NewScanner(segfileSegment(seg, osFile{File: f}, idx, floor, sp.active), -1, segfile.Options{Chunk: verifyChunk})
	if err != nil {
		return err
	}
	defer scn.Close()
	sc := segmentScan{size: scn.Limit()}
	run := validRun{first: scn.NextOffset(), next: scn.NextOffset()}
	var ebuf []byte
	for {
		for scn.Next() {
			h := scn.Header()
			if len(sc.runs) == 0 && (h.Offset-seg.base)%uint64(sp.interval) == 0 {
				pos := scn.RecordPos()
				ebuf = format.AppendIndexEntry(ebuf[:0], format.IndexEntry{Offset: h.Offset, Pos: pos})
				sp.idx.expect(ebuf)
				ebuf = format.AppendTimeIndexEntry(ebuf[:0], format.TimeIndexEntry{Offset: h.Offset, Timestamp: h.Timestamp})
				sp.tidx.expect(ebuf)
			}
			sp.prog.at(scn.Pos())
		}
		if err := scn.Err(); err != nil {
			return fmt.Errorf("scan %s: %w", seg.path(format.LogExt), err)
		}
		run.end, run.next = scn.Pos(), scn.NextOffset()
		sc.runs = append(sc.runs, run)
		d := scn.Damage()
		if d == nil {
			break
		}
		sc.damage = append(sc.damage, damageSpan{pos: d.Pos, end: d.End, offset: d.Offset, reason: d.Reason, d: d})
		if !scn.Resume() {
			break
		}
		run = validRun{pos: d.End, first: d.ResumeOffset, next: d.ResumeOffset}
	}
	sp.scan = sc
	sp.prog.add(sc.size)
	return nil
}
