package logstore

import (
	"fmt"

	"github.com/seglog/seglog/logstore/internal/segfile"
)

// The verdict on each entry of a Kafka segment's .index and .timeindex:
// what dump-index prints entry by entry and what Verify reports, from
// one check, so that the two never disagree. Kafka writes an .index
// entry for a batch (its last offset and its position) every
// index.interval.bytes, and with it a .timeindex entry when the
// segment's largest batch max timestamp grew (that timestamp and the
// last offset of the first batch that carried it), and one more when the
// segment is rolled. The active segment's files are preallocated and
// zero-filled after their entries.

// KafkaIndexEntry is one entry of a Kafka .index or .timeindex and its
// verdict, or a run of the zeros Kafka preallocated (Count entries from
// Entry on, Verdict FindingIndexPadding).
type KafkaIndexEntry struct {
	Entry     int64 // its number in the file
	Count     int64 // entries it stands for: 1, or the padding's run
	Offset    uint64
	Pos       int64 // .index: the batch's byte position in the .log
	Timestamp int64 // .timeindex: milliseconds, as stored
	// Verdict is FindingOK, FindingUnverified (not checked against the
	// .log), FindingIndexMismatch, FindingIndexNoRecord, FindingIndexOrder,
	// FindingIndexStale, FindingUnchecked or FindingIndexPadding.
	Verdict FindingKind
	Why     string // what is wrong with it, for the verdicts that are not ok
}

// KafkaIndexSummary sums up the check of one index file.
type KafkaIndexSummary struct {
	Path         string
	Entries      int64 // whole entries in the file, the padding's included
	Padding      int64 // of those, preallocated zeros
	PartialBytes int64 // of a partial entry at the end, ignored
	Verdicts     map[FindingKind]int64
}

// CheckKafkaIndex judges each entry of segment seg's index of kind,
// handing it to fn in file order. Without verify only the entries are
// read: their order and the preallocated zeros are judged, and the rest
// are FindingUnverified. With verify they are checked against the
// segment's valid batches, read once from its first byte: an .index
// entry must give the position of a valid batch holding its offset, a
// .timeindex entry the max timestamp of the batch holding its offset,
// the largest of the segment's up to it. A segment without the file has
// nothing to judge (its Path is ""). fn's error stops the check and is
// returned.
func (p *KafkaPartition) CheckKafkaIndex(seg int, kind IndexKind, verify bool, fn func(KafkaIndexEntry) error) (KafkaIndexSummary, error) {
	return p.checkKafkaIndex(seg, kind, verify, nil, fn)
}

// kafkaWalkEvent is a valid batch, or damage, that a check of the .log
// passes on to index checks running beside it, so that a segment is read
// once for all three.
type kafkaWalkEvent struct {
	span kafkaBatchSpan
	dmg  *segfile.KafkaDamage
}

// kafkaFeed is the batches of a .log of size bytes, as its check passes
// them on, for the index entries of span. Once they are judged, first
// is the first entry judged against the batches, if judged.
type kafkaFeed struct {
	events chan []kafkaWalkEvent
	size   int64
	span   kafkaEntrySpan
	judged bool
	first  segfile.KafkaIndexEntry
}

// kafkaEntrySpan is the entries [from, to) of an index that a check
// judges; to -1: to the last, and the preallocated zeros after it.
type kafkaEntrySpan struct{ from, to int64 }

// drain takes what is left, so that the check of the .log never waits
// for an index check that has judged its last entry.
func (f *kafkaFeed) drain() {
	for range f.events {
	}
}

// checkKafkaIndex is CheckKafkaIndex, with verify's batches read from
// feed (drained to its end) when it is not nil instead of from the .log,
// for the entries of its span.
func (p *KafkaPartition) checkKafkaIndex(seg int, kind IndexKind, verify bool, feed *kafkaFeed, fn func(KafkaIndexEntry) error) (KafkaIndexSummary, error) {
	if feed != nil {
		defer feed.drain()
	}
	if seg < 0 || seg >= len(p.segs) {
		return KafkaIndexSummary{}, fmt.Errorf("%s: no segment %d", p.name, seg)
	}
	s := p.segs[seg]
	path := s.Index
	if kind == TimeIndex {
		path = s.TimeIndex
	}
	sum := KafkaIndexSummary{Path: path, Verdicts: map[FindingKind]int64{}}
	if path == "" {
		return sum, nil
	}
	f, size, err := openKafkaFile(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	newIndex := segfile.NewKafkaOffsetIndex
	if kind == TimeIndex {
		newIndex = segfile.NewKafkaTimeIndex
	}
	x, err := newIndex(f, size, int64(s.Base))
	if err != nil {
		return sum, fmt.Errorf("read %s: %w", path, err)
	}
	sum.Entries, sum.Padding, sum.PartialBytes = x.Whole(), x.Whole()-x.Len(), x.Partial()
	emit := func(e KafkaIndexEntry) error {
		sum.Verdicts[e.Verdict] += e.Count
		return fn(e)
	}
	var w *kafkaBatchWalk
	switch {
	case verify && feed != nil:
		w = &kafkaBatchWalk{p: p, seg: seg, feed: feed.events, size: feed.size}
	case verify:
		ks, err := p.openScan(seg)
		if err != nil {
			return sum, err
		}
		defer ks.close()
		w = &kafkaBatchWalk{ks: ks, p: p, seg: seg, size: ks.size}
	}
	span := kafkaEntrySpan{0, -1}
	if feed != nil {
		span = feed.span
	}
	to := x.Len()
	if span.to >= 0 {
		to = min(span.to, to)
	}
	j := kafkaIndexJudge{base: int64(s.Base), time: kind == TimeIndex, walk: w}
	if span.from > 0 && span.from <= x.Len() {
		// The first entry's order is judged against the one before.
		if j.prev, err = x.Entry(span.from - 1); err != nil {
			return sum, err
		}
		j.started = true
	}
	err = x.Each(span.from, to, func(i int64, ie segfile.KafkaIndexEntry) error {
		e, err := j.judge(i, ie)
		if err != nil {
			return err
		}
		return emit(e)
	})
	if err != nil {
		return sum, err
	}
	if feed != nil {
		feed.judged, feed.first = j.judged, j.first
	}
	if span.to < 0 && sum.Padding > 0 {
		e := KafkaIndexEntry{Entry: x.Len(), Count: sum.Padding, Offset: s.Base, Verdict: FindingIndexPadding,
			Why: fmt.Sprintf("%d zero entries Kafka preallocated after the last one", sum.Padding)}
		if err := emit(e); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// kafkaIndexJudge judges a file's entries in order.
type kafkaIndexJudge struct {
	base    int64
	time    bool
	walk    *kafkaBatchWalk // nil: not checked against the .log
	started bool
	prev    segfile.KafkaIndexEntry
	judged  bool                    // an entry was checked against the .log
	first   segfile.KafkaIndexEntry // the first
}

func (j *kafkaIndexJudge) judge(i int64, ie segfile.KafkaIndexEntry) (KafkaIndexEntry, error) {
	e := KafkaIndexEntry{Entry: i, Count: 1, Offset: uint64(max(ie.Offset, 0)), Pos: ie.Pos, Timestamp: ie.Timestamp, Verdict: FindingUnverified}
	prev, started := j.prev, j.started
	j.prev, j.started = ie, true
	switch {
	case ie.Offset < j.base:
		e.Verdict, e.Why = FindingIndexMismatch, fmt.Sprintf("offset %d is below the segment's base offset %d", ie.Offset, j.base)
		return e, nil
	case !started:
	case !j.time && ie.Offset <= prev.Offset:
		e.Verdict, e.Why = FindingIndexOrder, fmt.Sprintf("offset %d is not above the entry before's, %d", ie.Offset, prev.Offset)
		return e, nil
	case !j.time && ie.Pos <= prev.Pos:
		e.Verdict, e.Why = FindingIndexOrder, fmt.Sprintf("position %d is not above the entry before's, %d", ie.Pos, prev.Pos)
		return e, nil
	case j.time && ie.Timestamp < prev.Timestamp:
		e.Verdict, e.Why = FindingIndexOrder, fmt.Sprintf("timestamp %s is below the entry before's, %s", reasonRawTime(kafkaNanos(ie.Timestamp)), reasonRawTime(kafkaNanos(prev.Timestamp)))
		return e, nil
	case j.time && ie.Offset < prev.Offset:
		e.Verdict, e.Why = FindingIndexOrder, fmt.Sprintf("offset %d is below the entry before's, %d", ie.Offset, prev.Offset)
		return e, nil
	}
	if j.walk == nil {
		return e, nil
	}
	if !j.judged {
		j.judged, j.first = true, ie
	}
	var err error
	if j.time {
		e.Verdict, e.Why, err = j.walk.checkTime(ie)
	} else {
		e.Verdict, e.Why, err = j.walk.checkPos(ie)
	}
	return e, err
}

// kafkaBatchWalk walks a segment's valid batches in file order, past
// damage, for the index entries to be checked against, in order.
type kafkaBatchWalk struct {
	p    *KafkaPartition
	seg  int
	ks   *kafkaScan
	feed <-chan []kafkaWalkEvent // instead of ks: the batches the .log's check passes on
	fed  []kafkaWalkEvent        // what feed gave that is not walked yet
	size int64                   // of the .log
	cur  kafkaBatchSpan
	have bool                 // cur is a batch
	done bool                 // no batch is left
	dmg  *segfile.KafkaDamage // the last damage passed
	// damaged: damage lies between cur and the batch before it (or, when
	// done, after cur).
	damaged bool
	runMax  int64 // the largest max timestamp up to cur, cur's included
}

// kafkaBatchSpan is what the index checks need of a batch.
type kafkaBatchSpan struct {
	pos, end    int64
	first, last int64
	maxTS       int64
}

// advance moves to the next valid batch.
func (w *kafkaBatchWalk) advance() error {
	w.damaged = false
	if w.feed != nil {
		for {
			if len(w.fed) == 0 {
				var ok bool
				if w.fed, ok = <-w.feed; !ok {
					break
				}
				continue
			}
			ev := w.fed[0]
			w.fed = w.fed[1:]
			if ev.dmg != nil {
				w.dmg, w.damaged = ev.dmg, true
				continue
			}
			w.cur = ev.span
			if !w.have || ev.span.maxTS > w.runMax {
				w.runMax = ev.span.maxTS
			}
			w.have = true
			return nil
		}
		w.done = true
		return nil
	}
	sc := w.ks.sc
	for {
		if sc.Next() {
			b := sc.Batch()
			ts := b.MaxTimestamp()
			w.cur = kafkaBatchSpan{pos: b.Pos, end: b.Pos + b.Size(), first: b.BaseOffset(), last: b.LastOffset(), maxTS: ts}
			if !w.have || ts > w.runMax {
				w.runMax = ts
			}
			w.have = true
			return nil
		}
		if err := sc.Err(); err != nil {
			return w.p.ioError(w.p.segs[w.seg].Log, err)
		}
		if d := sc.Damage(); d != nil {
			w.dmg, w.damaged = d, true
			if sc.Resync() {
				continue
			}
		}
		w.done = true
		return nil
	}
}

// inDamage reports whether pos lies in the damaged bytes passed last.
func (w *kafkaBatchWalk) inDamage(pos int64) bool {
	return w.dmg != nil && w.dmg.Pos <= pos && pos < w.dmg.End
}

// checkPos judges an .index entry.
func (w *kafkaBatchWalk) checkPos(e segfile.KafkaIndexEntry) (FindingKind, string, error) {
	size := w.size
	if e.Pos >= size {
		return FindingIndexStale, fmt.Sprintf("position %d is past the end of the .log (%d bytes)", e.Pos, size), nil
	}
	for !w.done && (!w.have || w.cur.pos < e.Pos) {
		if err := w.advance(); err != nil {
			return "", "", err
		}
	}
	switch {
	case w.have && w.cur.pos == e.Pos && w.cur.first <= e.Offset && e.Offset <= w.cur.last:
		return FindingOK, "", nil
	case w.have && w.cur.pos == e.Pos:
		return FindingIndexMismatch, fmt.Sprintf("the batch at byte %d holds offsets %d..%d, not %d", e.Pos, w.cur.first, w.cur.last, e.Offset), nil
	case w.inDamage(e.Pos) && w.dmg.Class == segfile.Incomplete && !w.dmg.Resumed:
		return FindingIndexStale, fmt.Sprintf("position %d is in the torn tail of the .log, past its valid batches", e.Pos), nil
	case w.inDamage(e.Pos):
		return FindingUnchecked, fmt.Sprintf("position %d is in damaged bytes of the .log (%d..%d)", e.Pos, w.dmg.Pos, w.dmg.End), nil
	case w.done && w.have && e.Pos >= w.cur.end:
		return FindingIndexStale, fmt.Sprintf("position %d is past the last valid batch, which ends at byte %d", e.Pos, w.cur.end), nil
	}
	return FindingIndexNoRecord, fmt.Sprintf("no batch starts at byte %d", e.Pos), nil
}

// checkTime judges a .timeindex entry.
func (w *kafkaBatchWalk) checkTime(e segfile.KafkaIndexEntry) (FindingKind, string, error) {
	for !w.done && (!w.have || w.cur.last < e.Offset) {
		if err := w.advance(); err != nil {
			return "", "", err
		}
	}
	torn := w.dmg != nil && w.dmg.Class == segfile.Incomplete && !w.dmg.Resumed
	switch {
	case (!w.have || w.cur.last < e.Offset) && (!w.damaged || torn):
		return FindingIndexStale, fmt.Sprintf("offset %d is past the segment's last valid batch", e.Offset), nil
	case !w.have || w.cur.last < e.Offset || e.Offset < w.cur.first && w.damaged:
		return FindingUnchecked, fmt.Sprintf("offset %d is in damaged bytes of the .log (%d..%d)", e.Offset, w.dmg.Pos, w.dmg.End), nil
	case e.Offset < w.cur.first:
		return FindingIndexMismatch, fmt.Sprintf("no valid batch of the segment holds offset %d", e.Offset), nil
	case w.cur.maxTS != e.Timestamp:
		return FindingIndexMismatch, fmt.Sprintf("the batch holding offset %d has max timestamp %s, not %s",
			e.Offset, reasonRawTime(kafkaNanos(w.cur.maxTS)), reasonRawTime(kafkaNanos(e.Timestamp))), nil
	case w.runMax != e.Timestamp:
		return FindingIndexMismatch, fmt.Sprintf("an earlier batch's max timestamp %s is above the entry's %s",
			reasonRawTime(kafkaNanos(w.runMax)), reasonRawTime(kafkaNanos(e.Timestamp))), nil
	}
	return FindingOK, "", nil
}
