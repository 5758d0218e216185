package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// Verify checks every batch of every segment from its first byte: its
// framing and CRC-32C, offsets increasing within and across segments,
// every record decodable (decompressed within segfile's bound; a control
// record's key and marker too); then each segment's .index and
// .timeindex entry by entry (CheckKafkaIndex, whose verdicts it reports)
// and its .txnindex as Kafka's sanity checks take it. A torn tail of the
// active segment is an incomplete-tail problem, what a crash or a live
// broker's unfinished write leaves (Kafka has no lock seglog could
// tell a live broker by); torn or corrupt data in a closed segment is a
// corrupt-record problem. The zeros Kafka preallocates after the active
// segment's index entries are no finding; in a closed segment, whose
// indexes Kafka trims when it rolls it, they are a note. A segment of
// legacy messages (magic 0 or 1) is a note naming the magic. number and
// count are not used: Kafka's partitioner is the producer's. Findings
// come in file order, at most verifyMaxPerKind of a kind per file.
//
// With opts.Jobs above one (<= 0: one per CPU), a large segment is
// checked in pieces side by side, as seglog's own are (see
// verifyPieces): the findings are those of one check from its first
// byte, whatever Jobs is.
func (p *KafkaPartition) Verify(_, _ int, opts VerifyOptions) (VerifyReport, error) {
	rep := VerifyReport{Name: p.name, Dir: p.dir, Segments: len(p.segs), Complete: true}
	emit := opts.Finding
	if emit == nil {
		emit = func(Finding) error { return nil }
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	send := func(fs []Finding, extra [3]int) error {
		for _, f := range fs {
			switch f.Severity {
			case SeverityProblem:
				rep.Problems++
			case SeverityNote:
				rep.Notes++
			}
			if err := emit(f); err != nil {
				return err
			}
		}
		rep.Problems += extra[SeverityProblem]
		rep.Notes += extra[SeverityNote]
		return nil
	}
	if len(p.segs) == 0 {
		return rep, send([]Finding{{Severity: SeverityNote, Kind: FindingNoSegments, Partition: p.name, Path: p.dir, Pos: -1, Offset: -1,
			Reason: "the partition directory holds no Kafka segment"}}, [3]int{})
	}
	var total int64
	for i := range p.segs {
		total += fileSize(p.segs[i].Log)
	}
	var errs []error
	prevEnd := int64(-1)
	for i := range p.segs {
		if i > 0 && prevEnd >= 0 && p.segs[i].Base > uint64(prevEnd) && fileGone(p.segs[i-1].Log) {
			// Deleted since it was checked, and the listing may lack
			// segments after it that went too: the offsets between are
			// retention's, not lost data. Nothing is said of the boundary.
			if err := send([]Finding{{Severity: SeverityNote, Kind: FindingSegmentGone, Partition: p.name, Path: p.segs[i-1].Log, Pos: -1, Offset: prevEnd,
				Reason: fmt.Sprintf("segment deleted after it was checked (by the broker's retention?), and with it offsets %d..%d: not checked", prevEnd, p.segs[i].Base-1)}}, [3]int{}); err != nil {
				return rep, err
			}
			prevEnd = -1
		}
		res, err := p.verifySegment(i, prevEnd, jobs)
		if err != nil && fileGone(p.segs[i].Log) {
			// Its index files went with it: nothing to say about them.
			res = &kafkaVerified{end: -1, log: []Finding{{Severity: SeverityNote, Kind: FindingSegmentGone, Partition: p.name, Path: p.segs[i].Log, Pos: -1,
				Offset: int64(min(p.segs[i].Base, math.MaxInt64)), Reason: "segment deleted while the check ran (by the broker's retention?): not checked"}}}
			err = nil
			prevEnd = -1
		}
		if err != nil {
			rep.Complete = false
			errs = append(errs, err)
		}
		rep.Records += res.records
		rep.Bytes += res.bytes
		prevEnd = max(prevEnd, res.end)
		for _, fs := range [][]Finding{res.log, res.index, res.timeIndex, res.txnIndex} {
			if err := send(fs, [3]int{}); err != nil {
				return rep, err
			}
		}
		if err := send(nil, res.extra); err != nil {
			return rep, err
		}
		if opts.Progress != nil {
			opts.Progress(rep.Bytes, max(total, rep.Bytes))
		}
	}
	return rep, errors.Join(errs...)
}

// kafkaVerified is what checking one segment found.
type kafkaVerified struct {
	log, index, timeIndex, txnIndex []Finding
	extra                           [3]int // findings counted but not listed, by severity
	records                         uint64 // valid data records
	bytes                           int64
	aborts                          []kafkaAbort // the segment's abort markers, in offset order
	end                             int64        // the offset after the last valid batch; -1 when none
}

// kafkaMarker is an abort marker: its producer and offset.
type kafkaMarker struct{ pid, offset int64 }

// kafkaTxnSeen is what a check saw of a producer's transactions.
type kafkaTxnSeen struct {
	first        int64
	open, marked bool
}

// kafkaAbort is an abort marker and what the check saw of its transaction:
// the first offset of its producer's transactional batches since that
// producer's marker before (known: there were some), exact when that
// marker was in the check too (else the transaction may have begun
// before, in the segment or piece before).
type kafkaAbort struct {
	kafkaMarker
	first        int64
	known, exact bool
}

// kafkaPiece is the part of a segment one check covers: its batches from
// byte pos, where a batch with base offset first starts, to end (-1: the
// file's end), and the entries of its .index and .timeindex that fall in
// it. The whole segment is one piece.
type kafkaPiece struct {
	pos, end int64
	first    int64
	entries  [2]kafkaEntrySpan // by kind: OffsetIndex, TimeIndex
	last     bool              // the segment's last piece
}

// wholeSegment is the piece that is all of a segment.
var wholeSegment = kafkaPiece{end: -1, entries: [2]kafkaEntrySpan{{0, -1}, {0, -1}}, last: true}

func (pc kafkaPiece) whole() bool { return pc.pos == 0 && pc.end < 0 }

// kafkaSegmentCheck is the check of one piece of a segment's .log under
// way, and what it found.
type kafkaSegmentCheck struct {
	p        *KafkaPartition
	seg      int
	piece    kafkaPiece
	feeds    []*kafkaFeed     // the index checks beside it
	pending  []kafkaWalkEvent // not yet handed to them
	res      *kafkaVerified
	findings verifyFindings
	legacy   [2]bool  // a note on magic 0, 1 messages was made
	legacyAt [2]int64 // at that batch
	err      error    // an I/O error that cut the check short

	// The batches': the first one's base offset and max timestamp, the
	// running maximum of the max timestamps, the last offset of the last.
	batches    bool
	firstBase  int64
	firstMaxTS int64
	maxTS      int64
	prevLast   int64 // -1 before the first
	// nextRec is the least offset the next record may have: the one
	// after the record before (a legacy message set's header knows only
	// its last offset, so its first ones may lie below). firstWrapper: the
	// piece starts with such a set, whose first offsets only the piece
	// before can judge.
	nextRec      int64
	firstWrapper bool
	// txns is each producer's transactional batches seen: the first
	// offset of its open transaction, and whether a marker of it was seen.
	txns map[int64]kafkaTxnSeen

	// The records' timestamps (ms): their running maximum and the records
	// older than it (back, the first at backAt). For a piece that does
	// not start the segment, steps holds the timestamps of its first
	// records that were not older (up to its capacity; stepsCut: there
	// were more), and firstRec is its first record: the clock of the
	// pieces before makes those of the steps below it late too (see
	// mergeKafkaPieces).
	clock    int64
	back     int
	backAt   Finding
	steps    []int64
	stepsCut bool
	recs     bool
	firstRec Finding
}

// kafkaClockSteps bounds a piece's steps: past them, a clock from the
// pieces before that is higher still sends the segment to a whole check.
const kafkaClockSteps = 256

// verifySegment checks segment i, whose offsets follow prevEnd (-1: the
// first): with jobs above one a large segment in pieces checked side by
// side (verifyPieces), else, and whenever the pieces do not add up to
// what one check from the first byte finds, whole.
func (p *KafkaPartition) verifySegment(i int, prevEnd int64, jobs int) (*kafkaVerified, error) {
	c := p.verifyPieces(i, prevEnd, jobs)
	if c == nil {
		c = p.checkPiece(i, prevEnd, wholeSegment)
	}
	c.finish()
	if c.err != nil {
		return c.res, c.err
	}
	return c.res, p.verifyTxnIndex(i, c.res)
}

// verifyPieces checks segment i in pieces, jobs at a time: each starts at
// a batch an .index entry points at and the scan confirms (verifyPlan),
// and the pieces are put together by mergeKafkaPieces, which takes them
// only if they add up to what one check from the first byte finds. Nil
// when the segment is not split, or the pieces did not add up: damage is
// rare, and checking again costs time, never accuracy.
func (p *KafkaPartition) verifyPieces(i int, prevEnd int64, jobs int) *kafkaSegmentCheck {
	if jobs < 2 {
		return nil
	}
	pieces := p.verifyPlan(i, jobs)
	if pieces == nil {
		return nil
	}
	checks := make([]*kafkaSegmentCheck, len(pieces))
	var next atomic.Int32
	var wg sync.WaitGroup
	for range min(jobs, len(pieces)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int(next.Add(1) - 1); k < len(pieces); k = int(next.Add(1) - 1) {
				from := int64(-1) // only the first piece follows the segment before
				if k == 0 {
					from = prevEnd
				}
				checks[k] = p.checkPiece(i, from, pieces[k])
			}
		}()
	}
	wg.Wait()
	m := mergeKafkaPieces(checks)
	if kafkaPiecesChecked != nil {
		kafkaPiecesChecked(len(pieces), m != nil)
	}
	return m
}

// kafkaPiecesChecked, when set (by tests), is told of each segment
// checked in pieces whether they were taken.
var kafkaPiecesChecked func(pieces int, taken bool)

// kafkaMinPiece is the smallest piece verifyPlan cuts.
var kafkaMinPiece int64 = verifyMinRange

// verifyPlan splits segment i into about 4*jobs pieces of at least
// kafkaMinPiece bytes, each after the first starting at a batch an
// .index entry points at, that holds the entry's offset: the check of
// the piece before ends there. Nil when the segment is too small or its
// index allows no split.
func (p *KafkaPartition) verifyPlan(i, jobs int) []kafkaPiece {
	s := p.segs[i]
	size := fileSize(s.Log)
	parts := min(4*jobs, int(size/kafkaMinPiece))
	if parts < 2 {
		return nil
	}
	x, closeIndex := p.openOffsetIndex(i)
	if x == nil {
		return nil
	}
	defer closeIndex()
	tx, closeTime := openKafkaIndex(s.TimeIndex, s.Base, TimeIndex)
	if tx != nil {
		defer closeTime()
	}
	ks, err := p.openScan(i)
	if err != nil {
		return nil
	}
	defer ks.close()
	pieces := []kafkaPiece{wholeSegment}
	pieces[0].first, pieces[0].last = int64(min(s.Base, math.MaxInt64)), false
	for k := 1; k < parts; k++ {
		prev := &pieces[len(pieces)-1]
		n, ok, err := x.FloorPos(size / int64(parts) * int64(k))
		if err != nil {
			break
		}
		if !ok || n <= prev.entries[OffsetIndex].from {
			continue
		}
		e, err := x.Entry(n)
		if err != nil {
			break
		}
		if e.Pos <= prev.pos || e.Pos >= size {
			continue
		}
		b, err := ks.confirms(e)
		if err != nil || b == nil {
			continue
		}
		first := b.BaseOffset()
		if first <= prev.first {
			continue
		}
		// The .timeindex entries of the batches from there on: those
		// from the first at or above its base offset.
		t := prev.entries[TimeIndex].from
		if tx != nil {
			j, ok, err := tx.FloorOffset(first - 1)
			if err != nil {
				break
			}
			if ok {
				t = max(t, j+1)
			}
		}
		prev.end, prev.entries[OffsetIndex].to, prev.entries[TimeIndex].to = e.Pos, n, t
		pieces = append(pieces, kafkaPiece{pos: e.Pos, end: -1, first: first,
			entries: [2]kafkaEntrySpan{{n, -1}, {t, -1}}})
	}
	if len(pieces) < 2 {
		return nil
	}
	pieces[len(pieces)-1].last = true
	return pieces
}

// mergeKafkaPieces puts the checks of a segment's pieces together into
// what one check from its first byte finds, or returns nil where they may
// not add up to that: a piece before the last that found anything but
// the segment's gap and legacy notes (damage: where the check from the
// first byte resyncs is its own), pieces whose offsets do not follow on,
// or index entries and timestamps the pieces before would judge
// otherwise. The records' late timestamps add up exactly: a record of a
// piece is late if a record of the pieces before is later, and those of
// a piece that are not late by its own are in time order, so those the
// clock of the pieces before makes late are the first of its steps.
func mergeKafkaPieces(checks []*kafkaSegmentCheck) *kafkaSegmentCheck {
	m := checks[0]
	for k := 1; k < len(checks); k++ {
		c, prev := checks[k], checks[k-1]
		if prev.err != nil || c.err != nil || !prev.clean() || !c.batches || c.firstBase <= m.prevLast || c.firstWrapper {
			return nil
		}
		// The whole check's walk over the batches for the .timeindex
		// reaches the piece where the piece's own starts if the first
		// entry it judges is one of the piece's batches. (The .index's
		// first is always the piece's first batch: the entry before it,
		// the clean piece before's, checked out.)
		if f := c.feeds[TimeIndex]; f.judged && f.first.Offset < c.firstBase {
			return nil
		}
		// A .timeindex entry is the running maximum of the max timestamps:
		// one above those of the piece's first batch, or of its first
		// entry when all its entries check out, would change verdicts.
		if t := c.feeds[TimeIndex]; m.maxTS > c.firstMaxTS && (len(c.res.timeIndex) > 0 || t.judged && m.maxTS > t.first.Timestamp) {
			return nil
		}
		late, _ := slices.BinarySearch(c.steps, m.clock)
		if late == len(c.steps) && c.stepsCut {
			return nil
		}
		if m.back == 0 && late > 0 {
			m.backAt = c.firstRec
			m.backAt.Reason = fmt.Sprintf("%s, older than a record before it (%s)", c.firstRec.Reason, reasonTime(kafkaNanos(m.clock)))
		} else if m.back == 0 && c.back > 0 {
			m.backAt = c.backAt
		}
		m.back += c.back + late
		m.clock, m.maxTS, m.prevLast, m.nextRec = max(m.clock, c.clock), max(m.maxTS, c.maxTS), c.prevLast, max(m.nextRec, c.nextRec)
		// The segment's legacy notes are on the first batch of each magic.
		m.findings.absorb(c.findings, func(f Finding) bool {
			return f.Kind == FindingLegacyFormat && (m.legacy[0] && f.Pos == c.legacyAt[0] || m.legacy[1] && f.Pos == c.legacyAt[1])
		})
		for magic, seen := range c.legacy {
			if seen && !m.legacy[magic] {
				m.legacy[magic], m.legacyAt[magic] = true, c.legacyAt[magic]
			}
		}
		m.res.index, m.res.timeIndex = append(m.res.index, c.res.index...), append(m.res.timeIndex, c.res.timeIndex...)
		for sev, n := range c.res.extra {
			m.res.extra[sev] += n
		}
		m.res.records += c.res.records
		m.res.bytes += c.res.bytes
		m.absorbTxns(c)
		m.res.end = max(m.res.end, c.res.end)
	}
	return m
}

// absorbTxns takes piece c's abort markers and transactions into m, the
// pieces before it merged: what c could not know of a transaction begun
// before it, m knows, as the whole check would have.
func (m *kafkaSegmentCheck) absorbTxns(c *kafkaSegmentCheck) {
	for _, a := range c.res.aborts {
		if before, ok := m.txns[a.pid]; ok && !a.exact {
			switch {
			case before.open: // begun before c
				a.first, a.known, a.exact = before.first, true, before.marked
			case a.known: // begun in c, after a marker before it
				a.exact = before.marked
			}
		}
		m.res.aborts = append(m.res.aborts, a)
	}
	for pid, t := range c.txns {
		if before, ok := m.txns[pid]; ok && !t.marked {
			if before.open {
				t.first = before.first
			}
			t.marked = before.marked
		}
		if m.txns == nil {
			m.txns = map[int64]kafkaTxnSeen{}
		}
		m.txns[pid] = t
	}
}

// clean reports whether a piece found nothing a piece after it could
// change: no damage, no index finding.
func (c *kafkaSegmentCheck) clean() bool {
	if len(c.res.index)+len(c.res.timeIndex) > 0 || c.res.extra != [3]int{} {
		return false
	}
	for _, f := range c.res.log {
		if f.Kind != FindingLegacyFormat && f.Kind != FindingGap {
			return false
		}
	}
	return true
}

// checkPiece checks piece pc of segment i (the first piece's offsets
// follow prevEnd; -1: the first segment's, or another piece's): its
// batches and records, and beside them the index entries of the piece.
func (p *KafkaPartition) checkPiece(i int, prevEnd int64, pc kafkaPiece) *kafkaSegmentCheck {
	s := p.segs[i]
	res := &kafkaVerified{end: prevEnd}
	c := &kafkaSegmentCheck{p: p, seg: i, piece: pc, res: res, prevLast: -1, nextRec: max(prevEnd, 0), clock: math.MinInt64, maxTS: math.MinInt64,
		findings: verifyFindings{list: &res.log, extra: &res.extra}}
	if pc.pos > 0 {
		c.steps = make([]int64, 0, kafkaClockSteps)
	}
	base := int64(min(s.Base, math.MaxInt64))
	if pc.pos == 0 && prevEnd >= 0 && base > prevEnd {
		c.add(Finding{Severity: SeverityProblem, Kind: FindingGap, Pos: 0, Offset: prevEnd,
			Reason: fmt.Sprintf("offsets %d..%d are in no segment: the segment before ends at %d, this one is named %d", prevEnd, base-1, prevEnd-1, base)})
	}
	// The indexes are judged beside the scan, against the batches it
	// passes on: the segment is read once.
	ks, err := p.openPieceScan(i, pc)
	if err != nil {
		c.err = err
		return c
	}
	defer ks.close()
	active := pc.last && i == len(p.segs)-1
	kinds := []IndexKind{OffsetIndex, TimeIndex}
	var feeds [2]*kafkaFeed
	var extras [2][3]int
	var errs [2]error
	var wg sync.WaitGroup
	for k, kind := range kinds {
		feeds[k] = &kafkaFeed{events: make(chan []kafkaWalkEvent, 4), size: ks.size, span: pc.entries[kind]}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = p.verifyIndex(i, kind, active, res, feeds[k], &extras[k])
		}()
	}
	c.feeds = feeds[:]
	err = c.scan(ks, prevEnd, active)
	c.flush()
	for _, f := range feeds {
		close(f.events)
	}
	wg.Wait()
	for k := range kinds {
		for sev, n := range extras[k] {
			res.extra[sev] += n
		}
		err = cmp.Or(err, errs[k])
	}
	c.err = err
	return c
}

// finish adds the notes on the whole segment's .log: its late
// timestamps, and how many findings of a kind were not listed.
func (c *kafkaSegmentCheck) finish() {
	if c.back > 0 {
		f := c.backAt
		f.Reason = fmt.Sprintf("timestamps go backwards %d times in this segment; first: %s", c.back, f.Reason)
		c.add(f)
	}
	c.findings.close(c.p.name, c.p.segs[c.seg].Log)
}

// add lists a finding on the .log.
func (c *kafkaSegmentCheck) add(f Finding) {
	f.Partition, f.Path = c.p.name, c.p.segs[c.seg].Log
	c.findings.add(f)
}

// scan checks the piece's batches and records, read through ks; active:
// it ends the active segment.
func (c *kafkaSegmentCheck) scan(ks *kafkaScan, prevEnd int64, active bool) error {
	c.res.bytes = ks.sc.Limit() - c.piece.pos
	recs := segfile.NewKafkaRecords(0)
	defer recs.Close()
	for {
		for ks.sc.Next() {
			b := ks.sc.Batch()
			ts := b.MaxTimestamp()
			c.batch(b, ts, recs, prevEnd)
			c.pass(kafkaWalkEvent{span: kafkaBatchSpan{pos: b.Pos, end: b.Pos + b.Size(), first: b.BaseOffset(), last: b.LastOffset(), maxTS: ts}})
		}
		if err := ks.sc.Err(); err != nil {
			return c.p.ioError(c.p.segs[c.seg].Log, err)
		}
		d := ks.sc.Damage()
		if d == nil {
			return nil
		}
		ce := kafkaCorruption(d)
		f := Finding{Severity: SeverityProblem, Kind: FindingCorruptRecord, Pos: d.Pos, Offset: ce.Offset, Cause: kafkaCause(d.Reason), Reason: d.Explain()}
		if d.Class == segfile.Incomplete && active {
			f.Kind = FindingIncompleteTail
			f.Reason = fmt.Sprintf("incomplete tail of the active segment: %s: what a crash or a live broker's unfinished write leaves", d.Explain())
		} else if d.Class == segfile.Incomplete {
			f.Reason = fmt.Sprintf("torn data in a closed segment: %s", d.Explain())
		}
		c.add(f)
		dmg := *d
		c.pass(kafkaWalkEvent{dmg: &dmg})
		if !ks.sc.Resync() {
			return nil
		}
	}
}

// pass hands a batch or damage to the index checks, kafkaFeedBatch at a
// time: one hand-over a batch would cost more than the checks.
func (c *kafkaSegmentCheck) pass(ev kafkaWalkEvent) {
	c.pending = append(c.pending, ev)
	if len(c.pending) == kafkaFeedBatch {
		c.flush()
	}
}

// flush hands over what pass holds; the index checks share it, read only.
func (c *kafkaSegmentCheck) flush() {
	if len(c.pending) == 0 {
		return
	}
	for _, f := range c.feeds {
		f.events <- c.pending
	}
	c.pending = make([]kafkaWalkEvent, 0, kafkaFeedBatch)
}

// kafkaFeedBatch is how many batches the index checks are handed at once.
const kafkaFeedBatch = 256

// batch checks a valid batch, whose max timestamp is maxTS: its offsets
// against those before, and its records.
func (c *kafkaSegmentCheck) batch(b *segfile.KafkaBatch, maxTS int64, recs *segfile.KafkaRecords, prevEnd int64) {
	first, last := b.BaseOffset(), b.LastOffset()
	wrapper := b.Legacy() && b.Codec() != kafka.CodecNone
	if !c.batches {
		c.batches, c.firstBase, c.firstMaxTS, c.firstWrapper = true, first, maxTS, wrapper
	}
	c.maxTS = max(c.maxTS, maxTS)
	switch {
	case c.prevLast < 0 && prevEnd >= 0 && first < prevEnd:
		c.add(Finding{Severity: SeverityProblem, Kind: FindingOverlap, Pos: b.Pos, Offset: first,
			Reason: fmt.Sprintf("the segment's first batch has base offset %d, below where the segment before ends (%d)", first, prevEnd)})
	case c.prevLast >= 0 && first <= c.prevLast:
		c.add(Finding{Severity: SeverityProblem, Kind: FindingOverlap, Pos: b.Pos, Offset: first,
			Reason: fmt.Sprintf("batch with base offset %d overlaps the batch before it, which ends at offset %d", first, c.prevLast)})
	}
	c.prevLast = max(c.prevLast, last)
	c.res.end = max(c.res.end, last+1)
	if b.Legacy() && !c.legacy[b.Magic] {
		c.legacy[b.Magic], c.legacyAt[b.Magic] = true, b.Pos
		c.add(Finding{Severity: SeverityNote, Kind: FindingLegacyFormat, Pos: b.Pos, Offset: first,
			Reason: fmt.Sprintf("the segment holds magic %d messages, Kafka's format before 0.11 (no headers, producer ids or transactions): read as they are", b.Magic)})
	}
	control := !b.Legacy() && b.Header.Control()
	if !b.Legacy() && b.Header.Transactional() && b.Header.ProducerID >= 0 && !control {
		if c.txns == nil {
			c.txns = map[int64]kafkaTxnSeen{}
		}
		if t := c.txns[b.Header.ProducerID]; !t.open {
			t.first, t.open = first, true
			c.txns[b.Header.ProducerID] = t
		}
	}
	recs.Reset(b)
	var n uint64
	late := false  // a record later than the batch's max timestamp was reported
	below := false // a record below nextRec was reported
	for recs.Next() {
		if off := recs.Offset(); off < c.nextRec {
			// A reader passes such records over, as Kafka's consumer
			// does. A batch's header that overlaps is reported above (or
			// refused by the scan); a legacy message set's gives only its
			// last offset.
			if b.Legacy() && !below {
				below = true
				c.add(Finding{Severity: SeverityProblem, Kind: FindingOverlap, Pos: b.Pos, Offset: off,
					Reason: fmt.Sprintf("the message set at byte %d holds offset %d, below the record before it, at %d: readers pass it over", b.Pos, off, c.nextRec-1)})
			}
			continue
		} else {
			c.nextRec = off + 1
		}
		n++
		if control {
			if segfile.KafkaAbort(recs.Record()) {
				t := c.txns[b.Header.ProducerID]
				a := kafkaAbort{kafkaMarker{b.Header.ProducerID, recs.Offset()}, t.first, t.open, t.open && t.marked}
				c.res.aborts = append(c.res.aborts, a)
			}
			if _, err := segfile.KafkaControl(recs.Record()); err != nil {
				c.add(Finding{Severity: SeverityProblem, Kind: FindingCorruptRecord, Pos: b.Pos, Offset: recs.Offset(), Cause: kafkaCause(err),
					Reason: fmt.Sprintf("control batch at byte %d: the control record at offset %d does not decode: %v", b.Pos, recs.Offset(), err)})
			}
			continue
		}
		ts := recs.Timestamp()
		if above := !b.Legacy() && ts > b.Header.MaxTimestamp; above && !late {
			// A time lookup passes a batch over on its max timestamp.
			late = true
			c.add(Finding{Severity: SeverityProblem, Kind: FindingCorruptRecord, Pos: b.Pos, Offset: recs.Offset(),
				Reason: fmt.Sprintf("offset %d has %s, after its batch's max timestamp %s: a time lookup (read --since) passes the batch over",
					recs.Offset(), reasonTime(kafkaNanos(ts)), reasonTime(kafkaNanos(b.Header.MaxTimestamp)))})
		}
		if ts < c.clock {
			if c.back == 0 {
				c.backAt = Finding{Severity: SeverityNote, Kind: FindingTimeBackwards, Pos: b.Pos, Offset: recs.Offset(),
					Reason: fmt.Sprintf("offset %d has %s, older than a record before it (%s)", recs.Offset(), reasonTime(kafkaNanos(ts)), reasonTime(kafkaNanos(c.clock)))}
			}
			c.back++
			continue
		}
		c.clock = ts
		if !c.recs {
			c.recs = true
			c.firstRec = Finding{Severity: SeverityNote, Kind: FindingTimeBackwards, Pos: b.Pos, Offset: recs.Offset(),
				Reason: fmt.Sprintf("offset %d has %s", recs.Offset(), reasonTime(kafkaNanos(ts)))}
		}
		if c.steps == nil {
			continue
		}
		if len(c.steps) < cap(c.steps) {
			c.steps = append(c.steps, ts)
		} else {
			c.stepsCut = true
		}
	}
	if control && b.Header.ProducerID >= 0 {
		if c.txns == nil {
			c.txns = map[int64]kafkaTxnSeen{}
		}
		c.txns[b.Header.ProducerID] = kafkaTxnSeen{marked: true}
	}
	// The records before one that does not check out are read, as
	// Kafka's consumer reads them: they count.
	if !control {
		c.res.records += n
	}
	if err := recs.Err(); err != nil {
		c.add(Finding{Severity: SeverityProblem, Kind: FindingCorruptRecord, Pos: b.Pos, Offset: first, Cause: kafkaCause(err),
			Reason: fmt.Sprintf("a batch whose CRC matches holds records that do not check out: %v", err)})
	}
}

// kafkaCause is the format/kafka (or segfile) kind of a Kafka verdict,
// for Finding.Cause.
func kafkaCause(err error) error {
	for _, kind := range []error{kafka.ErrShort, kafka.ErrCRC, kafka.ErrMagic, kafka.ErrFormat, kafka.ErrLegacyCompressed,
		segfile.ErrKafkaOffset, segfile.ErrKafkaBatchSize, segfile.ErrKafkaDecompress, segfile.ErrKafkaDecompressLimit} {
		if errors.Is(err, kind) {
			return kind
		}
	}
	return err
}

// verifyIndex reports the findings of segment i's index of kind, for
// the entries of feed's span, judged against the batches feed passes
// on; findings not listed are counted in extra.
func (p *KafkaPartition) verifyIndex(i int, kind IndexKind, active bool, res *kafkaVerified, feed *kafkaFeed, extra *[3]int) error {
	list := &res.index
	if kind == TimeIndex {
		list = &res.timeIndex
	}
	vf := verifyFindings{list: list, extra: extra}
	path := strings.TrimSuffix(p.segs[i].Log, kafka.LogExt) + kind.Ext()
	sum, err := p.checkKafkaIndex(i, kind, true, feed, func(e KafkaIndexEntry) error {
		f := Finding{Partition: p.name, Path: path, Pos: e.Entry * kafkaEntryLen(kind), Offset: int64(e.Offset), Kind: e.Verdict,
			Reason: fmt.Sprintf("entry %d: %s", e.Entry, e.Why)}
		switch e.Verdict {
		case FindingOK, FindingUnverified, FindingUnchecked:
			return nil // an entry into damage: the damage is the .log's finding
		case FindingIndexPadding:
			if active {
				return nil
			}
			f.Severity = SeverityNote
			f.Reason = fmt.Sprintf("%d zero entries from entry %d on: Kafka trims a segment's indexes when it rolls it, so it did not roll this one cleanly", e.Count, e.Entry)
		case FindingIndexStale:
			f.Severity = SeverityNote
		default:
			f.Severity = SeverityProblem
		}
		vf.add(f)
		return nil
	})
	if err != nil {
		return err
	}
	// The file's own notes are the last piece's: one check of the
	// segment makes them once.
	tail := feed.span.to < 0
	if sum.Path == "" && tail {
		vf.add(Finding{Severity: SeverityNote, Kind: FindingIndexMissing, Partition: p.name, Path: path, Pos: -1, Offset: int64(p.segs[i].Base),
			Reason: fmt.Sprintf("no %s: Kafka rebuilds it on start; lookups scan the segment", filepath.Base(path))})
	}
	if sum.PartialBytes > 0 && tail {
		vf.add(Finding{Severity: SeverityNote, Kind: FindingIndexPartial, Partition: p.name, Path: path, Pos: sum.Entries * kafkaEntryLen(kind), Offset: -1,
			Reason: fmt.Sprintf("the file ends in %d bytes of a partial entry, ignored", sum.PartialBytes)})
	}
	vf.close(p.name, path)
	return nil
}

// kafkaEntryLen is the size of an entry of kind.
func kafkaEntryLen(kind IndexKind) int64 {
	if kind == TimeIndex {
		return kafka.TimeEntryLen
	}
	return kafka.OffsetEntryLen
}

// verifyTxnIndex reports what is wrong with segment i's .txnindex, its
// abort markers (res.aborts) being known: its entries as Kafka's sanity
// check takes them, and against the markers. Kafka writes an entry into
// the segment its transaction's abort marker went to, with the marker's
// offset as the last offset: an entry without that marker makes Kafka's
// read_committed consumers drop committed records (a problem), a marker
// without an entry makes them read aborted ones unless its transaction
// wrote nothing (a note). seglog's read goes by the markers.
func (p *KafkaPartition) verifyTxnIndex(i int, res *kafkaVerified) error {
	path := p.segs[i].TxnIndex
	add := func(sev Severity, reason string) {
		res.txnIndex = append(res.txnIndex, Finding{Severity: sev, Kind: FindingIndexMismatch, Partition: p.name, Path: path, Pos: -1, Offset: -1, Reason: reason})
	}
	problem := func(reason string) { add(SeverityProblem, reason) }
	// A marker may end a transaction that wrote nothing here, which has
	// no entry: a note.
	unlisted := func(m kafkaAbort, n int) {
		add(SeverityNote, fmt.Sprintf("transaction index: %d abort %s without an entry, the first of producer %d at offset %d: if its transaction wrote records, Kafka's read_committed consumers would read them",
			n, plural(n > 1, "marker", "markers"), m.pid, m.offset))
	}
	aborts := map[kafkaMarker]kafkaAbort{}
	for _, m := range res.aborts {
		aborts[m.kafkaMarker] = m
	}
	if path == "" {
		if len(res.aborts) > 0 {
			path = p.segs[i].Log
			unlisted(res.aborts[0], len(res.aborts))
		}
		return nil
	}
	f, size, err := openKafkaFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	partial := size % kafka.AbortedTxnLen
	if err := segfile.CheckKafkaTxnIndex(f, size-partial, int64(p.segs[i].Base)); err != nil {
		if !isKafkaVerdict(err) {
			return fmt.Errorf("read %s: %w", path, err)
		}
		problem(err.Error())
	}
	err = segfile.EachAbortedTxn(f, size-partial, func(k int64, t kafka.AbortedTxn) error {
		key := kafkaMarker{t.ProducerID, t.LastOffset}
		m, ok := aborts[key]
		switch {
		case !ok:
			problem(fmt.Sprintf("transaction index: entry %d: no abort marker of producer %d at offset %d in the segment: Kafka's read_committed consumers would drop what it says was aborted", k, t.ProducerID, t.LastOffset))
			return nil
		case m.exact && t.FirstOffset < m.first:
			problem(fmt.Sprintf("transaction index: entry %d: first offset %d, but producer %d's aborted transaction starts at %d: Kafka's read_committed consumers would drop the records before it", k, t.FirstOffset, t.ProducerID, m.first))
		case m.known && t.FirstOffset > m.first:
			problem(fmt.Sprintf("transaction index: entry %d: first offset %d, but producer %d's aborted transaction has records from %d: Kafka's read_committed consumers would read those before %d", k, t.FirstOffset, t.ProducerID, m.first, t.FirstOffset))
		}
		delete(aborts, key)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if i := slices.IndexFunc(res.aborts, func(m kafkaAbort) bool { _, left := aborts[m.kafkaMarker]; return left }); i >= 0 {
		unlisted(res.aborts[i], len(aborts))
	}
	if partial > 0 {
		res.txnIndex = append(res.txnIndex, Finding{Severity: SeverityNote, Kind: FindingIndexPartial, Partition: p.name, Path: path, Pos: size - partial, Offset: -1,
			Reason: fmt.Sprintf("the file ends in %d bytes of a partial entry, ignored (as Kafka does)", partial)})
	}
	return nil
}

// isKafkaVerdict tells a verdict on an index's bytes from an I/O error.
func isKafkaVerdict(err error) bool { return errors.Is(err, kafka.ErrTxnIndex) }
