package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// Retention (docs/format.md §7) deletes the longest prefix of a partition's segments
// in which every segment qualifies under one of two rules:
//
//   - by time: its newest timestamp is older than now − retention. Foreign
//     writers stamp the wall clock, which can step back, so the last record
//     need not be the newest. A segment is kept as soon as a timestamp read
//     cheaply (its last valid record's, its last time-index entry that
//     checks out) is recent enough; only a segment about to go by time is
//     walked header by header for its true newest. Damage on that walk
//     leaves its age unknown, and data of unknown age never goes by time.
//     A timestamp after now keeps a segment and is reported.
//   - by size (Kafka's rule): the oldest segment goes while the partition's
//     .log bytes without it stay >= retention-bytes. The active segment
//     never goes by size: whatever goes before it, the partition would be
//     left with nothing.
//
// The active segment can only go by time, and only once rolled: under the
// partition's writer lock, tried once (a live writer keeps it), it is
// rolled as a writer rolls it, so the next offset lives on in the name of
// the new, empty segment.
//
// A segment is deleted by renaming its files to <name>.deleted (the .log
// first: without it the segment is gone for everyone listing the
// directory), syncing the directory, then unlinking them. A crash leaves
// .deleted files, which recover removes. Readers hold their open files;
// one that comes to open a segment that is gone meets
// NoLongerAvailableError.

// ErrNoRetention means a sweep has no rule for a topic: none was given and
// the topic stores none.
var ErrNoRetention = errors.New("no retention set")

// RetentionOptions control RetentionSweep.
type RetentionOptions struct {
	// Retention deletes segments whose newest timestamp is older than Now
	// minus it, in a topic that stores no retention of its own (Kafka's
	// broker default under a topic setting); 0 is no default.
	Retention time.Duration
	// RetentionBytes deletes the oldest segments while the partition keeps
	// at least this many .log bytes without them, in a topic that stores
	// no retention_bytes of its own; 0 is no default.
	RetentionBytes int64
	// Override applies Retention and RetentionBytes (each one that is set)
	// over the topic's own settings too.
	Override bool
	// Now is when the rules are evaluated; zero means the clock.
	Now time.Time
	// NowIsClock says Now is only the clock's reading as the sweep began
	// (as a zero Now is). A timestamp after it is then in the future only
	// if it is after the clock when its segment is judged too: a live
	// writer appends records newer than Now while the sweep runs or waits
	// for its lock.
	NowIsClock bool
	// DryRun decides and reports, and changes nothing.
	DryRun bool
	// LockWait is how long to retry the topic's maintenance lock: 0 means
	// DefaultLockWait, WaitForever no limit. The writer lock is only ever
	// tried once.
	LockWait time.Duration
	// Warn receives warnings: an incomplete tail cut when the active
	// segment is rolled.
	Warn func(msg string)
	// Progress, if set, is told how many segments of the partitions a
	// RetentionSweep covers are done (judged and kept, or deleted; in a
	// dry run judged), out of their total.
	Progress func(done, total int64)
}

// SweepDecision is what a sweep did, or would do, with a segment.
type SweepDecision string

const (
	SweepDeleted     SweepDecision = "deleted"
	SweepWouldDelete SweepDecision = "would delete" // in a dry run
	SweepKept        SweepDecision = "kept"
	// SweepFuture: kept, as it holds a timestamp after now.
	SweepFuture SweepDecision = "future timestamps"
)

// SweepReason says why a segment goes or stays.
type SweepReason string

const (
	// SweepByTime: its newest timestamp is older than the cutoff, or it is
	// a closed segment holding nothing.
	SweepByTime SweepReason = "time"
	// SweepBySize: the partition keeps at least RetentionBytes without it.
	SweepBySize SweepReason = "size"
	// SweepNewer: it holds a timestamp at or after the cutoff.
	SweepNewer SweepReason = "newer"
	// SweepInFuture: it holds a timestamp after now.
	SweepInFuture SweepReason = "future"
	// SweepDamaged: its newest timestamp is unknown, because of Damage.
	SweepDamaged SweepReason = "damaged"
	// SweepAfterKept: a segment before it stays, and only a prefix goes.
	SweepAfterKept SweepReason = "after-kept"
	// SweepWriterLive: the active segment, and a writer holds the
	// partition.
	SweepWriterLive SweepReason = "writer"
	// SweepEmptyActive: the active segment, holding no records.
	SweepEmptyActive SweepReason = "active-empty"
	// SweepUnderSize: only the size rule applies, and it keeps the segment.
	SweepUnderSize SweepReason = "under-size"
	// SweepFull: the active segment holds offset 2^64-1, the last there
	// is: no segment can follow it, so it cannot be rolled.
	SweepFull SweepReason = "full"
)

// RuleSource says where a rule a sweep applied came from.
type RuleSource string

const (
	RuleOff RuleSource = ""
	// RuleFromTopic: the topic's stored setting.
	RuleFromTopic RuleSource = "topic"
	// RuleFromDefault: the options' value, the topic storing none.
	RuleFromDefault RuleSource = "default"
	// RuleFromOverride: the options' value, over the topic's (Override).
	RuleFromOverride RuleSource = "override"
)

// TopicSweep is what RetentionSweep did to a topic.
type TopicSweep struct {
	Topic string
	Dir   string
	// The rules applied, each from the topic's settings or the options
	// (see RetentionOptions); 0 when a rule is off.
	Retention            time.Duration
	RetentionBytes       int64
	RetentionSource      RuleSource
	RetentionBytesSource RuleSource
	// Stored is the topic's own retention settings, whether applied or
	// overridden.
	Stored     Settings
	Now        int64 // Unix ns
	Cutoff     int64 // Now − Retention, when Retention > 0
	Partitions []PartitionSweep
	Failed     []SweepFailure
	Foreign    []string // directories numbered beyond MaxPartitions, left alone (see TopicPartitions)
}

// SweepFailure is a partition RetentionSweep could not sweep.
type SweepFailure struct {
	Partition int
	Err       error
}

// PartitionSweep is what a sweep did (in a dry run: would do) to one
// partition.
type PartitionSweep struct {
	Topic     string
	Partition int
	Dir       string
	DryRun    bool
	Segments  []SegmentSweep
	// Rolled names the empty segment created to roll the active one so
	// that it could go; "" when none was (in a dry run: would be).
	Rolled string
	// The partition's first and next offset after the sweep.
	Start, Next uint64
	// WriterPid is the live writer that kept the active segment, when
	// /proc/locks names it.
	WriterPid int
}

// Deleted counts the segments and .log bytes deleted (in a dry run: that
// would be).
func (p *PartitionSweep) Deleted() (segments int, bytes int64) {
	for _, ss := range p.Segments {
		if ss.Decision == SweepDeleted || ss.Decision == SweepWouldDelete {
			segments++
			bytes += ss.Bytes
		}
	}
	return segments, bytes
}

// SegmentSweep is one segment's part of a PartitionSweep.
type SegmentSweep struct {
	Name    string // the .log file's name
	Base    uint64
	Active  bool
	Records uint64 // valid records, as far as read
	Bytes   int64  // the .log's size
	// Newest is the largest timestamp found (Unix ns), when HasNewest. It
	// is exact for a segment that goes by time; for one kept by time it is
	// the largest of those read to prove it recent, and a foreign writer's
	// clock stepping back may have left a larger one unread.
	Newest    int64
	HasNewest bool
	Future    bool // under a time rule: it holds a timestamp after now (kept, unless size took it)
	Decision  SweepDecision
	Reason    SweepReason
	// SizeJudged tells whether a size rule judged the segment (not one
	// after a kept segment); if so, Remaining is the partition's .log
	// bytes without it and those going before it.
	SizeJudged bool
	Remaining  int64
	Damage     *CorruptionError // what left the newest timestamp unknown
}

// RetentionSweep applies the retention rules (docs/format.md §7) to the partitions
// of a topic (only that one when only >= 0) under one hold of the topic's
// maintenance lock. A partition that cannot be swept (an I/O error) is
// listed in Failed and the others are still swept; the error returned is
// for the topic as a whole: not found, no rule (ErrNoRetention), its
// maintenance lock held (*LockedError).
func (s *Store) RetentionSweep(topic string, only int, opts RetentionOptions) (TopicSweep, error) {
	ts := TopicSweep{Topic: topic, Dir: filepath.Join(s.dir, topic)}
	if err := format.ValidateTopic(topic); err != nil {
		return ts, err
	}
	if fi, err := os.Stat(ts.Dir); err != nil || !fi.IsDir() {
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return ts, fmt.Errorf("topic %s in %s: %w", topic, s.dir, ErrTopicNotFound)
		}
		return ts, fmt.Errorf("topic %s: %w", topic, err)
	}
	settings := filepath.Join(ts.Dir, settingsFile)
	st, err := readSettings(settings)
	if err != nil {
		return ts, fmt.Errorf("topic %s: %w", topic, err)
	}
	ts.Stored = st
	ts.Retention, ts.RetentionSource = retentionRule(st.Retention, opts.Retention, opts.Override)
	ts.RetentionBytes, ts.RetentionBytesSource = retentionRule(st.RetentionBytes, opts.RetentionBytes, opts.Override)
	if ts.Retention == 0 && ts.RetentionBytes == 0 {
		return ts, fmt.Errorf("topic %s: %w (none given, none stored in %s)", topic, ErrNoRetention, settings)
	}
	if opts.Now.IsZero() {
		opts.Now, opts.NowIsClock = time.Now(), true
	}
	ts.Now = opts.Now.UnixNano()
	if ts.Retention > 0 {
		ts.Cutoff = math.MinInt64
		if ts.Now >= math.MinInt64+int64(ts.Retention) {
			ts.Cutoff = ts.Now - int64(ts.Retention)
		}
	}
	if opts.LockWait == 0 {
		opts.LockWait = DefaultLockWait
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	lock, err := lockDir(ts.Dir, "topic "+topic, opts.LockWait)
	if err != nil {
		return ts, err
	}
	defer lock.Unlock()

	tp, err := ReadTopicPartitions(ts.Dir)
	if err != nil {
		return ts, fmt.Errorf("topic %s: %w", topic, err)
	}
	ts.Foreign = tp.Foreign
	switch {
	case tp.Count == 0:
		return ts, tp.Err(topic, ts.Dir)
	case only >= tp.Count:
		return ts, fmt.Errorf("topic %s has partitions 0..%d, not %d: %w", topic, tp.Count-1, only, ErrPartitionNotFound)
	}
	var prog *sweepProgress
	if opts.Progress != nil {
		prog = &sweepProgress{fn: opts.Progress}
		for r, missing := range tp.Runs(only) {
			if !missing {
				segs, _ := listSegments(s.PartitionDir(topic, r.First))
				prog.total += int64(len(segs))
			}
		}
		prog.fn(0, prog.total)
		defer func() { prog.fn(max(prog.total, prog.done), max(prog.total, prog.done)) }()
	}
	for r, missing := range tp.Runs(only) {
		if missing {
			ts.Failed = append(ts.Failed, SweepFailure{Partition: r.First, Err: tp.MissingErr(topic, ts.Dir, r)})
			continue
		}
		p := r.First
		sw := &sweeper{s: s, ts: &ts, opts: opts, part: p, name: fmt.Sprintf("%s/%d", topic, p), prog: prog}
		rep, err := sw.sweep()
		if err != nil {
			ts.Failed = append(ts.Failed, SweepFailure{Partition: p, Err: fmt.Errorf("sweep %s: %w", sw.name, err)})
			continue
		}
		ts.Partitions = append(ts.Partitions, rep)
	}
	return ts, nil
}

// retentionRule picks one rule: the topic's stored value wins over the
// options' default, unless override; 0 is off.
func retentionRule[T time.Duration | int64](stored, given T, override bool) (T, RuleSource) {
	switch {
	case given > 0 && (override || stored == 0):
		if override && stored > 0 {
			return given, RuleFromOverride
		}
		return given, RuleFromDefault
	case stored > 0:
		return stored, RuleFromTopic
	}
	return 0, RuleOff
}

// sweeper sweeps one partition.
type sweeper struct {
	s    *Store
	ts   *TopicSweep
	opts RetentionOptions
	part int
	name string // "topic/partition", for messages
	rep  PartitionSweep
	prog *sweepProgress // nil: no progress reports
}

// sweepProgress counts the segments a RetentionSweep is done with.
type sweepProgress struct {
	fn          func(done, total int64)
	done, total int64
}

func (p *sweepProgress) add(n int) {
	if p == nil {
		return
	}
	p.done += int64(n)
	p.fn(p.done, max(p.total, p.done))
}

// segmentGlance is what a sweep learns of a segment without reading it whole.
type segmentGlance struct {
	seg     segment
	end     segfile.End // from its last confirmed index entry
	records uint64
	active  bool
}

func (sw *sweeper) sweep() (PartitionSweep, error) {
	dir := sw.s.PartitionDir(sw.ts.Topic, sw.part)
	sw.rep = PartitionSweep{Topic: sw.ts.Topic, Partition: sw.part, Dir: dir, DryRun: sw.opts.DryRun}
	segs, err := listSegments(dir)
	if err != nil || len(segs) == 0 {
		return sw.rep, err
	}
	looks := make([]segmentGlance, len(segs))
	var total int64
	floor := uint64(0) // where the segments before end: the partition's next offset at the end
	for i, seg := range segs {
		if looks[i], err = glanceAt(seg, floor, i == len(segs)-1); err != nil {
			return sw.rep, err
		}
		total += looks[i].end.Limit
		floor = max(floor, looks[i].end.Next)
	}
	sw.rep.Next = floor
	var doomed []segment
	kept := false
	for _, l := range looks {
		ss := SegmentSweep{Name: format.SegmentName(l.seg.base, format.LogExt), Base: l.seg.base, Active: l.active,
			Records: l.records, Bytes: l.end.Limit, Newest: l.end.MaxTS, HasNewest: l.records > 0}
		ss.Future = sw.future(&ss)
		switch {
		case kept:
			sw.keepAfter(&ss)
		case l.active:
			err = sw.judgeActive(l, &ss, total)
		default:
			err = sw.judgeClosed(l, &ss, total)
		}
		if err != nil {
			return sw.rep, err
		}
		if ss.Decision == SweepWouldDelete {
			doomed = append(doomed, l.seg)
			total -= ss.Bytes
			if sw.opts.DryRun {
				sw.prog.add(1)
			}
		} else {
			kept = true
			sw.prog.add(1)
		}
		sw.rep.Segments = append(sw.rep.Segments, ss)
	}
	sw.rep.Start = sw.rep.Next
	if len(doomed) < len(segs) {
		sw.rep.Start = segs[len(doomed)].base
	}
	if sw.opts.DryRun {
		return sw.rep, nil
	}
	for i, seg := range doomed {
		if err := sw.s.deleteSegment(seg); err != nil {
			return sw.rep, fmt.Errorf("%w (%d of the %d segments to delete were deleted before it)", err, i, len(doomed))
		}
		sw.rep.Segments[i].Decision = SweepDeleted
		sw.prog.add(1)
	}
	// A writer may have rolled meanwhile: the directory says where the
	// partition starts now.
	if segs, err := listSegments(dir); err == nil && len(segs) > 0 {
		sw.rep.Start = segs[0].base
	}
	return sw.rep, nil
}

// future reports whether, under a time rule, a segment is known to hold a
// timestamp after now.
func (sw *sweeper) future(ss *SegmentSweep) bool {
	return sw.ts.Retention > 0 && ss.HasNewest && ss.Newest > sw.ts.Now &&
		(!sw.opts.NowIsClock || ss.Newest > time.Now().UnixNano())
}

// glanceAt finds where a segment's valid data ends, walking from its
// last confirmed index entry: a few reads, as describe makes.
func glanceAt(seg segment, floor uint64, active bool) (segmentGlance, error) {
	f, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		return segmentGlance{}, err
	}
	defer f.Close()
	idx, closeIdx := openSegfileIndex(seg)
	defer closeIdx()
	sseg := segfileSegment(seg, osFile{File: f}, idx, floor, active)
	l := segmentGlance{seg: seg, active: active}
	if l.end, err = segfile.FindEnd(sseg, false); err != nil {
		return l, fmt.Errorf("scan %s: %w", seg.path(format.LogExt), err)
	}
	l.records, _, err = segfile.CountRecords(sseg, l.end, 0)
	return l, err
}

// keepAfter describes a segment after a kept one by what its cheaply read
// timestamps show.
func (sw *sweeper) keepAfter(ss *SegmentSweep) {
	ss.Decision, ss.Reason = SweepKept, SweepAfterKept
	switch {
	case ss.Active && ss.Records == 0:
		ss.Reason = SweepEmptyActive
	case ss.Future:
		ss.Decision, ss.Reason = SweepFuture, SweepInFuture
	case sw.ts.Retention > 0 && ss.HasNewest && ss.Newest >= sw.ts.Cutoff:
		ss.Reason = SweepNewer
	}
}

// judgeClosed decides a closed segment of the prefix: size first (it
// needs no reading), then time.
func (sw *sweeper) judgeClosed(l segmentGlance, ss *SegmentSweep, total int64) error {
	ss.SizeJudged, ss.Remaining = sw.ts.RetentionBytes > 0, total-ss.Bytes
	if sw.ts.RetentionBytes > 0 && ss.Remaining >= sw.ts.RetentionBytes {
		ss.Decision, ss.Reason = SweepWouldDelete, SweepBySize
		return nil
	}
	if sw.ts.Retention == 0 {
		ss.Decision, ss.Reason = SweepKept, SweepUnderSize
		return nil
	}
	if ss.Bytes == 0 {
		ss.Decision, ss.Reason = SweepWouldDelete, SweepByTime // nothing in it can be newer
		return nil
	}
	if sw.keptByCheapTime(l, ss) {
		return nil
	}
	w, damage, err := walkSegment(l.seg, ss.Bytes)
	if err != nil {
		return err
	}
	sw.judgeWalked(w, damage, ss)
	return nil
}

// keptByCheapTime checks the timestamps known without a walk: the last
// valid record's (already in ss) and the last time-index entry's that
// checks out. It reports whether they keep the segment, deciding so.
func (sw *sweeper) keptByCheapTime(l segmentGlance, ss *SegmentSweep) bool {
	if !ss.HasNewest || ss.Newest < sw.ts.Cutoff {
		if ts, ok := indexedNewest(l.seg, l.end, ss.Newest, ss.HasNewest); ok {
			ss.Newest, ss.HasNewest = ts, true
		}
	}
	return sw.keptByNewest(ss)
}

// keptByNewest decides ss by its newest timestamp where that keeps it (in
// the future, or not older than the cutoff), and reports whether it did.
func (sw *sweeper) keptByNewest(ss *SegmentSweep) bool {
	ss.Future = sw.future(ss)
	switch {
	case ss.Future:
		ss.Decision, ss.Reason = SweepFuture, SweepInFuture
	case ss.HasNewest && ss.Newest >= sw.ts.Cutoff:
		ss.Decision, ss.Reason = SweepKept, SweepNewer
	default:
		return false
	}
	return true
}

// judgeWalked decides by the true newest timestamp a walk found.
func (sw *sweeper) judgeWalked(w *timestampWalk, damage *CorruptionError, ss *SegmentSweep) {
	if damage != nil {
		ss.Decision, ss.Reason, ss.Damage = SweepKept, SweepDamaged, damage
		return
	}
	ss.Records = w.next - w.base
	if w.full {
		ss.Records++ // next stays at the last offset there is, which it holds
	}
	ss.Newest, ss.HasNewest = w.newest, ss.Records > 0
	if !sw.keptByNewest(ss) {
		ss.Decision, ss.Reason = SweepWouldDelete, SweepByTime
	}
}

// judgeActive decides the active segment, reached when everything before
// it goes. Only time can take it (see the top of this file), and only an
// active segment with records, rolled first.
func (sw *sweeper) judgeActive(l segmentGlance, ss *SegmentSweep, total int64) error {
	ss.SizeJudged, ss.Remaining = sw.ts.RetentionBytes > 0, total-ss.Bytes
	switch {
	case ss.Records == 0:
		ss.Decision, ss.Reason = SweepKept, SweepEmptyActive
		return nil
	case sw.ts.Retention == 0:
		ss.Decision, ss.Reason = SweepKept, SweepUnderSize
		return nil
	case sw.keptByCheapTime(l, ss):
		return nil
	case l.end.First != nil && l.end.First.Class == segfile.Corrupt:
		ss.Decision, ss.Reason, ss.Damage = SweepKept, SweepDamaged, corruption(l.end.First)
		return nil
	case l.end.Full:
		ss.Decision, ss.Reason = SweepKept, SweepFull
		return nil
	}
	// Walked up to the valid data's end before locking: under the writer
	// lock only what was appended since is walked, so an appender
	// starting meanwhile (it waits DefaultLockWait) never waits for a
	// walk of a whole segment.
	w, damage, err := walkSegment(l.seg, l.end.Pos)
	if err != nil {
		return err
	}
	if sw.judgeWalked(w, damage, ss); ss.Decision != SweepWouldDelete {
		return nil
	}
	if sw.opts.DryRun {
		// No lock of our own in a dry run: /proc/locks tells of a writer.
		if pid := WriterPid(l.seg.dir); pid != 0 {
			ss.Decision, ss.Reason, sw.rep.WriterPid = SweepKept, SweepWriterLive, pid
			return nil
		}
		sw.rep.Rolled = format.SegmentName(w.next, format.LogExt)
		return nil
	}
	return sw.roll(l, w, ss)
}

// roll takes the partition's writer lock if it is free and, when the
// active segment still qualifies with what was appended since it was
// walked, rolls it as a writer would: an incomplete tail is quarantined
// and cut, a corrupt record keeps it, the new segment is named after the
// next offset. The lock is released before anything is deleted.
func (sw *sweeper) roll(l segmentGlance, walk *timestampWalk, ss *SegmentSweep) error {
	wr, err := sw.s.openWriter(sw.ts.Topic, sw.part, WriterOptions{LockWait: 0, Warn: sw.opts.Warn})
	var locked *LockedError
	var corrupt *CorruptionError
	switch {
	case errors.As(err, &locked):
		ss.Decision, ss.Reason, sw.rep.WriterPid = SweepKept, SweepWriterLive, locked.Pid
		return nil
	case errors.As(err, &corrupt):
		ss.Decision, ss.Reason, ss.Damage = SweepKept, SweepDamaged, corrupt
		return nil
	case err != nil:
		return err
	}
	var log file = wr.log
	limit := wr.logSize
	if wr.seg.base != l.seg.base {
		// A writer came and rolled it meanwhile: it is closed now, and
		// goes as closed segments do.
		f, err := fsx.OpenRead(l.seg.path(format.LogExt))
		if err != nil {
			return closeWriter(wr, err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return closeWriter(wr, err)
		}
		log, limit = osFile{File: f}, fi.Size()
	}
	if limit < walk.pos {
		walk = newRetWalk(l.seg)
	}
	damage, err := walk.to(log, limit)
	if err != nil {
		return closeWriter(wr, fmt.Errorf("read %s: %w", l.seg.path(format.LogExt), err))
	}
	ss.Bytes = limit
	if sw.judgeWalked(walk, damage, ss); ss.Decision == SweepWouldDelete && wr.seg.base == l.seg.base {
		if err := wr.roll(); err != nil {
			return closeWriter(wr, err)
		}
		sw.rep.Rolled = format.SegmentName(wr.seg.base, format.LogExt)
	}
	sw.rep.Next = max(sw.rep.Next, wr.next)
	return closeWriter(wr, nil)
}

// closeWriter closes w and returns err, or the close's error.
func closeWriter(w *Writer, err error) error {
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// timestampWalk walks a segment's valid records for their timestamps.
type timestampWalk struct {
	seg    segment
	base   uint64
	pos    int64  // where the next record is expected
	next   uint64 // the offset it must carry
	newest int64  // the running maximum of the timestamps seen
	full   bool   // it holds offset 2^64-1 (next is that offset then)
}

func newRetWalk(seg segment) *timestampWalk {
	return &timestampWalk{seg: seg, base: seg.base, next: seg.base, newest: math.MinInt64}
}

// walkSegment walks seg's .log from its start to limit (see timestampWalk.to).
func walkSegment(seg segment, limit int64) (*timestampWalk, *CorruptionError, error) {
	f, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	w := newRetWalk(seg)
	damage, err := w.to(osFile{File: f}, limit)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", seg.path(format.LogExt), err)
	}
	return w, damage, nil
}

// to walks the valid records of log from where the walk is up to limit.
// Any break in the chain before limit (which a sweep never deletes past)
// is returned.
func (w *timestampWalk) to(log file, limit int64) (*CorruptionError, error) {
	sc, err := segfile.NewScanner(segfileSegment(w.seg, log, nil, w.base, false), limit, segfile.Options{})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	if w.pos > 0 {
		sc.StartAt(w.pos, w.next)
	}
	for sc.Next() {
		w.newest = runningMax(w.newest, sc.Header().Timestamp)
	}
	w.pos, w.next, w.full = sc.Pos(), sc.NextOffset(), sc.Full()
	if d := sc.Damage(); d != nil {
		return corruption(d), nil
	}
	return nil, sc.Err()
}

// maxTimeIndexChecks bounds the time-index entries tried from the last one back.
const maxTimeIndexChecks = 64

// indexedNewest returns the timestamp of the last of a segment's last
// time-index entries that is newer than floor (when hasFloor) and checks
// out: its record, reached through the segment's .index as readers reach
// it, is valid and carries that offset and timestamp.
func indexedNewest(seg segment, end segfile.End, floor int64, hasFloor bool) (int64, bool) {
	tf, size, err := fsx.OpenIndex(seg.path(format.TimeIndexExt))
	if err != nil {
		return 0, false
	}
	defer tf.Close()
	x := segfile.NewIndex(tf, size)
	f, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	idx, closeIdx := openSegfileIndex(seg)
	defer closeIdx()
	for i := x.Len() - 1; i >= 0 && i >= x.Len()-maxTimeIndexChecks; i-- {
		e, err := x.Entry(i)
		if err != nil {
			return 0, false
		}
		off, ts := e.Offset, e.Pos
		if off < seg.base || off >= end.Next || hasFloor && ts <= floor {
			continue // stale, or no news
		}
		if got, ok := recordTimestamp(segfileSegment(seg, osFile{File: f}, idx, 0, false), off); ok && got == ts {
			return ts, true
		}
	}
	return 0, false
}

// recordTimestamp is the timestamp of the valid record with offset off in
// seg, reached through its index; ok is false when there is none.
func recordTimestamp(seg segfile.Segment, off uint64) (int64, bool) {
	sc, err := segfile.NewScanner(seg, -1, segfile.Options{})
	if err != nil {
		return 0, false
	}
	defer sc.Close()
	if sc.SeekOffset(off) != nil {
		return 0, false
	}
	for sc.Next() {
		if h := sc.Header(); h.Offset >= off {
			return h.Timestamp, h.Offset == off
		}
	}
	return 0, false
}

// deletedSuffix marks the files of a segment being deleted.
const deletedSuffix = ".deleted"

// deleteSegment deletes a segment as docs/format.md §7 says: its files renamed to
// <name>.deleted, the .log first (from then on the segment does not
// exist), the directory synced, then the renamed files unlinked.
func (s *Store) deleteSegment(seg segment) error {
	var renamed []string
	for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
		p := seg.path(ext)
		if err := s.fs.Rename(p, p+deletedSuffix, false); err != nil {
			if ext != format.LogExt && errors.Is(err, fs.ErrNotExist) {
				continue // an index a foreign writer never made
			}
			return fmt.Errorf("delete segment %s: %w", seg.path(format.LogExt), err)
		}
		renamed = append(renamed, p+deletedSuffix)
	}
	if err := s.fs.SyncDir(seg.dir); err != nil {
		return fmt.Errorf("delete segment %s: %w", seg.path(format.LogExt), err)
	}
	for _, p := range renamed {
		if err := s.fs.Remove(p); err != nil {
			return fmt.Errorf("delete segment %s: %w (run 'seglog recover' to finish)", seg.path(format.LogExt), err)
		}
	}
	return nil
}
