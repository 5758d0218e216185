package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/seglog/seglog/format"
)

// verifyPartitionEmitter hands a partition's findings to the caller in
// order, adding those only the sequence of segments shows: overlaps, gaps,
// timestamps going backwards from one segment to the next, key routing.
type verifyPartitionEmitter struct {
	p      *Partition
	sh     *verifyShared
	report *VerifyReport
	emit   func(Finding) error

	gaps     []Gap
	gapCheck *gapCheck
	last     *verifyResult // the last segment's, nil when there are none
	prev     *verifyResult // the segment before, nil for the first or when unknown
	// floor is where the segments before end (the most any of them
	// reached): offsets below it are theirs. Not known after one whose
	// check an I/O error cut short.
	floor    uint64
	noFloor  bool
	prevSeg  segment
	routeKey uint64
	routeBad uint64
	route    Finding
}

func (pe *verifyPartitionEmitter) send(f Finding) error {
	if f.Partition == "" {
		f.Partition = pe.p.name
	}
	switch f.Severity {
	case SeverityProblem:
		pe.report.Problems++
	case SeverityNote:
		pe.report.Notes++
	case SeverityKnown:
		pe.report.Known++
	}
	return pe.emit(f)
}

func (pe *verifyPartitionEmitter) start() error {
	if len(pe.p.segs) == 0 {
		pe.report.WriterPid = WriterPid(pe.p.dir)
		return pe.send(Finding{Severity: SeverityNote, Kind: FindingNoSegments, Path: pe.p.dir, Pos: -1, Offset: -1,
			Reason: "the partition directory holds no segment"})
	}
	if pe.p.lone {
		return nil // the gaps file beside it is its partition's, if any: not about this one segment
	}
	gaps, err := ReadGaps(pe.p.dir)
	if err != nil {
		return pe.send(Finding{Severity: SeverityProblem, Kind: FindingGapsFile, Path: filepath.Join(pe.p.dir, GapsFile), Pos: -1, Offset: -1,
			Reason: fmt.Sprintf("cannot read the record of known gaps: %v; gaps are reported as unexplained", err)})
	}
	pe.gaps, pe.gapCheck = gaps, newGapCheck(GapsFile, gaps)
	return nil
}

func (pe *verifyPartitionEmitter) segment(job *verifyJob, res *verifyResult) error {
	rep := pe.report
	if !pe.noFloor && !res.gone && pe.floor != job.seg.base && (pe.floor > job.seg.base || res.startBroke) {
		// Checked apart, the segment was taken to start at its name's
		// offset; where the ones before end decides what its first
		// records are (misnamed, or overlapping).
		res = verifySegment(job, nil, pe.floor, pe.sh, make([]byte, verifyChunk))
	}
	if !res.gone {
		if err := pe.boundary(job, res); err != nil {
			return err
		}
		if err := pe.emptyBelowFloor(job, res); err != nil {
			return err
		}
	}
	for _, list := range [][]Finding{res.log, res.index, res.timeIndex} {
		for _, f := range list {
			if err := pe.send(f); err != nil {
				return err
			}
		}
	}
	rep.Problems += res.extra[SeverityProblem]
	rep.Notes += res.extra[SeverityNote]
	rep.Known += res.extra[SeverityKnown]
	rep.Records += res.records
	rep.Bytes += res.bytes
	if job.active {
		rep.WriterPid = res.writerPid
	}
	if res.err != nil {
		rep.Complete = false
	}
	pe.routeKey += res.routeKeyed
	if res.routeWrong > 0 && pe.routeBad == 0 {
		pe.route = res.routeFirst
	}
	pe.routeBad += res.routeWrong
	if !res.gone && pe.gapCheck != nil {
		pe.gapCheck.segment(job.seg, res.next)
	}
	pe.last = res
	switch {
	case res.err != nil:
		pe.noFloor = true
	case !res.gone:
		pe.floor = max(pe.floor, res.next)
	}
	pe.prev, pe.prevSeg = res, job.seg
	if res.gone || res.err != nil || res.damagedEnd {
		pe.prev = nil // where it ends is unknown: say nothing about the next boundary
	}
	return nil
}

// emptyBelowFloor reports a segment holding no record named below where
// the segments before end: a writer would append offsets they hold to it
// (append refuses it), and recover removes it.
func (pe *verifyPartitionEmitter) emptyBelowFloor(job *verifyJob, res *verifyResult) error {
	if pe.noFloor || res.records > 0 || len(res.log) > 0 || job.seg.base >= pe.floor {
		return nil
	}
	return pe.send(Finding{Severity: SeverityProblem, Kind: FindingEmptyBelowFloor, Path: job.seg.path(format.LogExt), Pos: 0, Offset: int64(pe.floor),
		Reason: fmt.Sprintf("the segment is named after offset %d and holds no record, but the segments before it go on to offset %d: 'seglog recover' removes it",
			job.seg.base, pe.floor-1)})
}

// boundary checks where the segment starts against where the one before
// ends: offsets missing between them, and time going back.
func (pe *verifyPartitionEmitter) boundary(job *verifyJob, res *verifyResult) error {
	prev := pe.prev
	if prev == nil {
		return nil
	}
	base, path := job.seg.base, job.seg.path(format.LogExt)
	start := base // a misnamed segment's records may start below its name
	if res.records > 0 && res.firstOff < base {
		start = res.firstOff
	}
	if prevPath := pe.prevSeg.path(format.LogExt); start > prev.next && fileGone(prevPath) {
		// Retention deleted it since it was checked, and the listing may
		// lack segments after it that went too (stableSegments): the
		// offsets between are retention's, not lost data.
		if err := pe.send(Finding{Severity: SeverityNote, Kind: FindingSegmentGone, Path: prevPath, Pos: -1, Offset: int64(prev.next),
			Reason: fmt.Sprintf("segment deleted after it was checked (by a retention sweep?), and with it offsets %d..%d: not checked", prev.next, start-1)}); err != nil {
			return err
		}
	} else if start > prev.next {
		f := Finding{Severity: SeverityProblem, Kind: FindingGap, Path: path, Pos: 0, Offset: int64(prev.next)}
		what := fmt.Sprintf("offsets %d..%d are missing between this segment and the one before (%s)", prev.next, start-1,
			format.SegmentName(pe.prevSeg.base, format.LogExt))
		switch g, whole := verifyKnownGap(pe.gaps, prev.next, start); {
		case whole:
			f.Severity = SeverityKnown
			f.Reason = fmt.Sprintf("%s: a known gap, recorded in %s (%s: %s)", what, GapsFile, g.Time, g.Reason)
		case g != nil:
			f.Reason = fmt.Sprintf("%s; %s records only part of it (%d..%d)", what, GapsFile, g.From, g.To-1)
		case verifyGapOver(pe.gaps, prev.next, base) != nil:
			g := verifyGapOver(pe.gaps, prev.next, base)
			f.Reason = fmt.Sprintf("%s: lost data; %s records %d..%d, which reaches beyond it, so explains nothing", what, GapsFile, g.From, g.To-1)
		default:
			f.Reason = what + ": lost data, not recorded in " + GapsFile
		}
		if err := pe.send(f); err != nil {
			return err
		}
	}
	if prev.records > 0 && res.records > 0 && res.firstTS < prev.lastTS {
		return pe.send(Finding{Severity: SeverityNote, Kind: FindingTimeBackwards, Path: path, Pos: 0, Offset: int64(res.firstOff),
			Reason: fmt.Sprintf("the segment's first record (offset %d) has timestamp %s, older than the last record of the segment before (%s)",
				res.firstOff, reasonTime(res.firstTS), reasonTime(prev.lastTS))})
	}
	return nil
}

// fileGone reports whether the file at path has been deleted (or renamed
// away, as a Kafka broker renames to .deleted) since its directory was
// listed.
func fileGone(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// verifyKnownGap tells whether the recorded gaps lying inside the hole
// [from, to) cover it whole; g is one that covers part of it, if any. A
// gap reaching out of the hole covers offsets the segments around it
// hold, so explains nothing (see gapCheck).
func verifyKnownGap(gaps []Gap, from, to uint64) (g *Gap, whole bool) {
	inside := func(gp *Gap) bool { return gp.From >= from && gp.To <= to }
	at := from
	for progress := true; progress && at < to; {
		progress = false
		for i := range gaps {
			if inside(&gaps[i]) && gaps[i].From <= at && gaps[i].To > at {
				g, at, progress = &gaps[i], gaps[i].To, true
			}
		}
	}
	if g == nil {
		for i := range gaps {
			if inside(&gaps[i]) {
				g = &gaps[i]
			}
		}
	}
	return g, at >= to
}

// verifyGapOver returns a recorded gap that overlaps [from, to) and
// reaches beyond it, if any.
func verifyGapOver(gaps []Gap, from, to uint64) *Gap {
	for i := range gaps {
		if g := &gaps[i]; g.From < to && g.To > from && (g.From < from || g.To > to) {
			return g
		}
	}
	return nil
}

func (pe *verifyPartitionEmitter) finish() error {
	if err := pe.finishGaps(); err != nil {
		return err
	}
	if pe.routeBad == 0 {
		return nil
	}
	f := pe.route
	f.Reason = fmt.Sprintf("%d of %d keyed records are not in the partition FNV-1a routing gives their key (written with a fixed --partition, or a keylen changed undetectably by damage); first: %s",
		pe.routeBad, pe.routeKey, f.Reason)
	return pe.send(f)
}

// finishGaps reports each recorded gap that cannot be one: it covers
// offsets a segment holds, or, when the partition's end is known, reaches
// past its next offset.
func (pe *verifyPartitionEmitter) finishGaps() error {
	c := pe.gapCheck
	if c == nil {
		return nil
	}
	if l := pe.last; l != nil && !l.gone && l.err == nil && !l.damagedEnd {
		c.end(l.next)
	}
	for _, why := range c.reasons {
		if err := pe.send(Finding{Severity: SeverityProblem, Kind: FindingGapsFile, Path: filepath.Join(pe.p.dir, GapsFile), Pos: -1, Offset: -1,
			Reason: why + ": not a gap recover --salvage could have recorded, so it explains nothing (fix the entry, or remove it)"}); err != nil {
			return err
		}
	}
	return nil
}
