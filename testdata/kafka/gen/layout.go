package main

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// The topics' segment.index.bytes: what the broker preallocates for the
// active segment's indexes (Kafka's default is 10 MiB), rounded down to
// whole entries.
const segmentIndexBytes = 4096

const (
	offsetEntryLen = 8  // .index: relative offset u32, position u32
	timeEntryLen   = 12 // .timeindex: timestamp i64, relative offset u32
	txnEntryLen    = 34 // .txnindex: version i16, producer id, first, last, last stable offset (i64 each)
)

// A partitionLog is a partition as its writers left it: every batch the
// broker appended, in order, and what was done to the log since.
type partitionLog struct {
	topic         string
	partition     int32
	writer        string
	indexInterval int // the topic's index.interval.bytes
	batches       []*batch
	retention     int   // segments retention deleted from the front
	deleteRecords int64 // the log start offset a DeleteRecords request set, if any
}

func (p *partitionLog) dirName() string { return fmt.Sprintf("%s-%d", p.topic, p.partition) }

func (p *partitionLog) topicID() [16]byte { return fixtureUUID("topic " + p.topic) }

// A segment is one segment's files as the broker leaves them.
type segment struct {
	base    int64
	batches []*batch
	pos     []int // each batch's byte position in the .log
	log     []byte
	index   []indexEntry
	times   []timeEntry
	aborted []abortedTxn
	active  bool

	// LogSegment's running state for its indexes.
	sinceIndexed int
	maxTS        int64
	maxTSOffset  int64
}

type indexEntry struct {
	Offset   int64 `json:"offset"`
	Position int   `json:"position"`
}

type timeEntry struct {
	Timestamp int64 `json:"timestamp"`
	Offset    int64 `json:"offset"`
}

type abortedTxn struct {
	ProducerID       int64 `json:"producer_id"`
	FirstOffset      int64 `json:"first_offset"`
	LastOffset       int64 `json:"last_offset"`
	LastStableOffset int64 `json:"last_stable_offset"`
}

type epochEntry struct {
	Epoch       int32 `json:"epoch"`
	StartOffset int64 `json:"start_offset"`
}

type snapshot struct {
	offset  int64
	entries []producerEntry
}

// laid is a partition's directory: the segments retention kept and the
// files beside them.
type laid struct {
	*partitionLog
	segments      []*segment
	snapshots     []snapshot
	epochs        []epochEntry
	logStart      int64
	logEnd        int64
	recoveryPoint int64
}

func newSegment(base int64) *segment {
	// An empty time index reads as no timestamp at the base offset.
	return &segment{base: base, maxTS: -1, maxTSOffset: base}
}

// append follows LogSegment.append for one batch: an index entry for
// the batch (its last offset, its position) once more than the index
// interval of bytes went in since the last entry, and a time index entry
// beside it for the greatest timestamp so far (with the last offset of
// the batch that carried it) when that timestamp grew.
func (s *segment) append(b *batch, interval int) error {
	_, last, err := span(b.raw)
	if err != nil {
		return err
	}
	ts, err := maxTimestamp(b.raw)
	if err != nil {
		return err
	}
	if ts > s.maxTS {
		s.maxTS, s.maxTSOffset = ts, last
	}
	if s.sinceIndexed > interval {
		s.index = append(s.index, indexEntry{last, len(s.log)})
		s.timeIndex()
		s.sinceIndexed = 0
	}
	s.batches = append(s.batches, b)
	s.pos = append(s.pos, len(s.log))
	s.log = append(s.log, b.raw...)
	s.sinceIndexed += len(b.raw)
	return nil
}

// timeIndex is TimeIndex.maybeAppend: only a greater timestamp makes an
// entry.
func (s *segment) timeIndex() {
	lastTS := int64(-1)
	if n := len(s.times); n > 0 {
		lastTS = s.times[n-1].Timestamp
	}
	if s.maxTS > lastTS {
		s.times = append(s.times, timeEntry{s.maxTS, s.maxTSOffset})
	}
}

// lay appends the batches as the broker did: it gives them their
// offsets in order (checking those the broker gave already) and leader
// epochs, rolls where they say, and applies retention.
func (p *partitionLog) lay() (*laid, error) {
	next := int64(0)
	for _, b := range p.batches {
		if magic(b.raw) == 2 {
			if b.writer != "kmsg" && header(b.raw).FirstOffset != next {
				return nil, fmt.Errorf("%s: the broker gave offset %d where %d comes next", p.dirName(), header(b.raw).FirstOffset, next)
			}
			setBase(b.raw, next)
			setEpoch(b.raw, b.epoch)
		}
		first, last, err := span(b.raw)
		if err != nil {
			return nil, err
		}
		if first != next {
			return nil, fmt.Errorf("%s: a batch at offset %d where %d comes next", p.dirName(), first, next)
		}
		next = last + 1
	}

	l := &laid{partitionLog: p, logEnd: next}
	state := producerState{}
	for _, b := range p.batches {
		first, _, _ := span(b.raw)
		if n := len(l.segments); n == 0 || b.roll {
			if n > 0 {
				l.segments[n-1].timeIndex() // on becoming inactive
				l.snapshots = append(l.snapshots, snapshot{first, state.entries()})
			}
			l.segments = append(l.segments, newSegment(first))
		}
		s := l.segments[len(l.segments)-1]
		if err := s.append(b, p.indexInterval); err != nil {
			return nil, err
		}
		t, err := state.append(b.raw)
		if err != nil {
			return nil, err
		}
		if t != nil {
			s.aborted = append(s.aborted, *t)
		}
		if magic(b.raw) == 2 && b.epoch >= 0 && (len(l.epochs) == 0 || b.epoch > l.epochs[len(l.epochs)-1].Epoch) {
			l.epochs = append(l.epochs, epochEntry{b.epoch, first})
		}
	}
	if p.retention >= len(l.segments) {
		return nil, errors.New("retention would delete the active segment")
	}
	l.segments = l.segments[p.retention:]
	l.segments[len(l.segments)-1].active = true
	l.logStart = max(l.segments[0].base, p.deleteRecords)
	// A segment's snapshot (taken as it was rolled in) goes with it.
	l.snapshots = slices.DeleteFunc(l.snapshots, func(s snapshot) bool { return s.offset < l.segments[0].base })
	l.epochs = truncateEpochs(l.epochs, l.logStart)
	// The broker flushes a segment, and moves the recovery point past
	// it, when it rolls the next one.
	l.recoveryPoint = l.segments[len(l.segments)-1].base
	return l, nil
}

// truncateEpochs is LeaderEpochFileCache.truncateFromStart: the entries
// starting at or below the log start offset give way to the last of
// them, moved up to start there.
func truncateEpochs(es []epochEntry, logStart int64) []epochEntry {
	i := 0
	for i < len(es) && es[i].StartOffset <= logStart {
		i++
	}
	if i == 0 {
		return es
	}
	return append([]epochEntry{{es[i-1].Epoch, logStart}}, es[i:]...)
}

// span is an entry's first and last offset: a batch's, or a magic 1
// message's (for a compressed one, its inner messages').
func span(raw []byte) (first, last int64, err error) {
	if magic(raw) == 2 {
		h := header(raw)
		return h.FirstOffset, h.FirstOffset + int64(h.LastOffsetDelta), nil
	}
	first, last, _, _, err = v1Span(raw)
	return first, last, err
}

func maxTimestamp(raw []byte) (int64, error) {
	if magic(raw) == 2 {
		return header(raw).MaxTimestamp, nil
	}
	_, _, ts, _, err := v1Span(raw)
	return ts, err
}

// A producerEntry is one producer's line in a producer snapshot, in
// ProducerStateManager's schema (version 1).
type producerEntry struct {
	ProducerID            int64 `json:"producer_id"`
	ProducerEpoch         int16 `json:"producer_epoch"`
	LastSequence          int32 `json:"last_sequence"`
	LastOffset            int64 `json:"last_offset"`
	OffsetDelta           int32 `json:"offset_delta"`
	Timestamp             int64 `json:"timestamp"`
	CoordinatorEpoch      int32 `json:"coordinator_epoch"`
	CurrentTxnFirstOffset int64 `json:"current_txn_first_offset"`
}

// producerState follows ProducerStateManager through the batches of
// producers with an id.
type producerState map[int64]*producerEntry

// entries is the state as a snapshot holds it. Kafka writes them in
// its hash map's order; here by producer id.
func (ps producerState) entries() []producerEntry {
	out := []producerEntry{}
	for _, e := range ps {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b producerEntry) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return out
}

// append takes in one batch; a marker ending a transaction with data
// here returns its entry for the transaction index if it aborts it.
func (ps producerState) append(raw []byte) (*abortedTxn, error) {
	if magic(raw) != 2 {
		return nil, nil
	}
	h := header(raw)
	if h.ProducerID < 0 {
		return nil, nil
	}
	e := ps[h.ProducerID]
	if e == nil {
		e = &producerEntry{ProducerID: h.ProducerID, ProducerEpoch: -1, LastSequence: -1, LastOffset: -1, Timestamp: -1, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}
		ps[h.ProducerID] = e
	}
	if h.Attributes&attrControl == 0 {
		e.setEpoch(h.ProducerEpoch)
		e.LastSequence = lastSequence(h.FirstSequence, h.LastOffsetDelta)
		e.LastOffset = h.FirstOffset + int64(h.LastOffsetDelta)
		e.OffsetDelta = h.LastOffsetDelta
		e.Timestamp = h.MaxTimestamp
		if h.Attributes&attrTxn != 0 && e.CurrentTxnFirstOffset < 0 {
			e.CurrentTxnFirstOffset = h.FirstOffset
		}
		return nil, nil
	}
	commit, coordinatorEpoch, ts, err := marker(raw)
	if err != nil {
		return nil, err
	}
	var t *abortedTxn
	if e.CurrentTxnFirstOffset >= 0 && !commit {
		t = &abortedTxn{e.ProducerID, e.CurrentTxnFirstOffset, h.FirstOffset, ps.lastStable(e.ProducerID, h.FirstOffset)}
	}
	e.setEpoch(h.ProducerEpoch)
	e.CoordinatorEpoch, e.Timestamp, e.CurrentTxnFirstOffset = coordinatorEpoch, ts, -1
	return t, nil
}

// setEpoch forgets the batches of an older epoch.
func (e *producerEntry) setEpoch(epoch int16) {
	if e.ProducerEpoch != epoch {
		e.ProducerEpoch, e.LastSequence, e.LastOffset, e.OffsetDelta = epoch, -1, -1, 0
	}
}

// lastStable is the last stable offset once producer id's transaction
// ends at marker: the first offset of another's open transaction, if
// any, else just past the marker.
func (ps producerState) lastStable(id, marker int64) int64 {
	lso := int64(math.MaxInt64)
	for _, e := range ps {
		if e.ProducerID != id && e.CurrentTxnFirstOffset >= 0 {
			lso = min(lso, e.CurrentTxnFirstOffset)
		}
	}
	if lso == math.MaxInt64 {
		return marker + 1
	}
	return lso
}

// lastSequence is the base sequence plus the last offset delta,
// wrapping past the greatest int32 to 0 as Kafka's sequences do.
func lastSequence(base, delta int32) int32 {
	if base < 0 {
		return -1
	}
	if base > math.MaxInt32-delta {
		return delta - (math.MaxInt32 - base) - 1
	}
	return base + delta
}

// marker decodes a control batch's end transaction marker: its record's
// key is version i16, type i16 (0 abort, 1 commit); its value version
// i16, coordinator epoch i32.
func marker(raw []byte) (commit bool, coordinatorEpoch int32, ts int64, err error) {
	rs, err := records(raw)
	if err != nil {
		return false, 0, 0, err
	}
	if len(rs) != 1 || len(rs[0].key) != 4 || len(rs[0].value) != 6 {
		return false, 0, 0, fmt.Errorf("control batch at offset %d is not a transaction marker", header(raw).FirstOffset)
	}
	return enc.Uint16(rs[0].key[2:]) == 1, int32(enc.Uint32(rs[0].value[2:])), rs[0].ts, nil
}
