package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"

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
func (p *KafkaPartition) Verify(_, _ int, opts VerifyOptions) (VerifyReport, error) {
	rep := VerifyReport{Name: p.name, Dir: p.dir, Segments: len(p.segs), Complete: true}
	emit := opts.Finding
	if emit == nil {
		emit = func(Finding) error { return nil }
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
		res, err := p.verifySegment(i, prevEnd)
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
	end                             int64 // the offset after the last valid batch; -1 when none
}

// kafkaSegmentCheck is the check of one segment's .log under way.
type kafkaSegmentCheck struct {
	p        *KafkaPartition
	seg      int
	feeds    []*kafkaFeed     // the index checks beside it
	pending  []kafkaWalkEvent // not yet handed to them
	res      *kafkaVerified
	findings verifyFindings
	prevLast int64 // the last offset of the batch before; -1 at the start
	legacy   [2]bool
	clock    int64 // the running maximum of the records' timestamps (ms)
	back     int   // records older than the clock
	backAt   Finding
}

// verifySegment checks segment i, whose offsets follow prevEnd (-1: the
// first).
func (p *KafkaPartition) verifySegment(i int, prevEnd int64) (*kafkaVerified, error) {
	s := p.segs[i]
	res := &kafkaVerified{end: prevEnd}
	c := &kafkaSegmentCheck{p: p, seg: i, res: res, prevLast: -1, clock: math.MinInt64,
		findings: verifyFindings{list: &res.log, extra: &res.extra}}
	base := int64(min(s.Base, math.MaxInt64))
	if prevEnd >= 0 && base > prevEnd {
		c.add(Finding{Severity: SeverityProblem, Kind: FindingGap, Pos: 0, Offset: prevEnd,
			Reason: fmt.Sprintf("offsets %d..%d are in no segment: the segment before ends at %d, this one is named %d", prevEnd, base-1, prevEnd-1, base)})
	}
	// The indexes are judged beside the scan, against the batches it
	// passes on: the segment is read once.
	ks, err := p.openLongScan(i)
	if err != nil {
		return res, err
	}
	defer ks.close()
	active := i == len(p.segs)-1
	kinds := []IndexKind{OffsetIndex, TimeIndex}
	var feeds [2]*kafkaFeed
	var extras [2][3]int
	var errs [2]error
	var wg sync.WaitGroup
	for k, kind := range kinds {
		feeds[k] = &kafkaFeed{events: make(chan []kafkaWalkEvent, 4), size: ks.size}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = p.verifyIndex(i, kind, active, res, feeds[k], &extras[k])
		}()
	}
	c.feeds = feeds[:]
	err = c.scan(ks, prevEnd)
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
	if c.back > 0 {
		f := c.backAt
		f.Reason = fmt.Sprintf("timestamps go backwards %d times in this segment; first: %s", c.back, f.Reason)
		c.add(f)
	}
	c.findings.close(p.name, s.Log)
	if err != nil {
		return res, err
	}
	return res, p.verifyTxnIndex(i, res)
}

// add lists a finding on the .log.
func (c *kafkaSegmentCheck) add(f Finding) {
	f.Partition, f.Path = c.p.name, c.p.segs[c.seg].Log
	c.findings.add(f)
}

// scan checks the segment's batches and records from its first byte,
// read through ks.
func (c *kafkaSegmentCheck) scan(ks *kafkaScan, prevEnd int64) error {
	c.res.bytes = ks.size
	recs := segfile.NewKafkaRecords(0)
	defer recs.Close()
	active := c.seg == len(c.p.segs)-1
	for {
		for ks.sc.Next() {
			b := ks.sc.Batch()
			c.batch(b, recs, prevEnd)
			ts := b.Header.MaxTimestamp
			if b.Legacy() {
				ts = b.Message.Timestamp
			}
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

// batch checks a valid batch: its offsets against those before, and its
// records.
func (c *kafkaSegmentCheck) batch(b *segfile.KafkaBatch, recs *segfile.KafkaRecords, prevEnd int64) {
	first, last := b.BaseOffset(), b.LastOffset()
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
		c.legacy[b.Magic] = true
		c.add(Finding{Severity: SeverityNote, Kind: FindingLegacyFormat, Pos: b.Pos, Offset: first,
			Reason: fmt.Sprintf("the segment holds magic %d messages, Kafka's format before 0.11 (no headers, producer ids or transactions): read as they are", b.Magic)})
	}
	control := !b.Legacy() && b.Header.Control()
	recs.Reset(b)
	var n uint64
	for recs.Next() {
		n++
		if control {
			if _, err := segfile.KafkaControl(recs.Record()); err != nil {
				c.add(Finding{Severity: SeverityProblem, Kind: FindingCorruptRecord, Pos: b.Pos, Offset: recs.Offset(), Cause: kafkaCause(err),
					Reason: fmt.Sprintf("control batch at byte %d: the control record at offset %d does not decode: %v", b.Pos, recs.Offset(), err)})
			}
			continue
		}
		if ts := recs.Timestamp(); ts < c.clock {
			if c.back == 0 {
				c.backAt = Finding{Severity: SeverityNote, Kind: FindingTimeBackwards, Pos: b.Pos, Offset: recs.Offset(),
					Reason: fmt.Sprintf("offset %d has %s, older than a record before it (%s)", recs.Offset(), reasonTime(kafkaNanos(ts)), reasonTime(kafkaNanos(c.clock)))}
			}
			c.back++
		} else {
			c.clock = ts
		}
	}
	if err := recs.Err(); err != nil {
		c.add(Finding{Severity: SeverityProblem, Kind: FindingCorruptRecord, Pos: b.Pos, Offset: first, Cause: kafkaCause(err),
			Reason: fmt.Sprintf("a batch whose CRC matches holds records that do not check out: %v", err)})
		return
	}
	if !control {
		c.res.records += n
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

// verifyIndex reports the findings of segment i's index of kind.
// Its batches come from feed; findings not listed are counted in extra.
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
	if sum.Path == "" {
		vf.add(Finding{Severity: SeverityNote, Kind: FindingIndexMissing, Partition: p.name, Path: path, Pos: -1, Offset: int64(p.segs[i].Base),
			Reason: fmt.Sprintf("no %s: Kafka rebuilds it on start; lookups scan the segment", filepath.Base(path))})
	}
	if sum.PartialBytes > 0 {
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

// verifyTxnIndex reports what is wrong with segment i's .txnindex.
func (p *KafkaPartition) verifyTxnIndex(i int, res *kafkaVerified) error {
	path := p.segs[i].TxnIndex
	if path == "" {
		return nil
	}
	f, size, err := openKafkaFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	partial := size % kafka.AbortedTxnLen
	if err := segfile.CheckKafkaTxnIndex(f, size-partial, int64(p.segs[i].Base)); err != nil {
		if isKafkaVerdict(err) {
			res.txnIndex = append(res.txnIndex, Finding{Severity: SeverityProblem, Kind: FindingIndexMismatch, Partition: p.name, Path: path, Pos: -1, Offset: -1,
				Reason: err.Error()})
		} else {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
	if partial > 0 {
		res.txnIndex = append(res.txnIndex, Finding{Severity: SeverityNote, Kind: FindingIndexPartial, Partition: p.name, Path: path, Pos: size - partial, Offset: -1,
			Reason: fmt.Sprintf("the file ends in %d bytes of a partial entry, ignored (as Kafka does)", partial)})
	}
	return nil
}

// isKafkaVerdict tells a verdict on an index's bytes from an I/O error.
func isKafkaVerdict(err error) bool { return errors.Is(err, kafka.ErrTxnIndex) }
