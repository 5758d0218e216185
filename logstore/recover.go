package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/seglog/seglog/format"
)

// Recovery (docs/format.md §7) plans first and acts second. The plan scans every
// segment whole and classifies what it finds (docs/format.md §3); acting then
// follows an order in which every intermediate state is either harmless or
// recognised and finished by the next recover:
//
//   - leftovers of interrupted operations go first, so nothing later
//     trips over a stale temporary file;
//   - bytes are cut only after they were copied to quarantine durably;
//   - an index is replaced through <name>.tmp, fsync, rename, fsync of
//     the directory, or trimmed in place (a shorter prefix of itself);
//   - a salvage split writes each rescued run of records as a new
//     segment through temporary files renamed into place (.index and
//     .timeindex first, the .log last: the .log makes the segment exist),
//     records the gap, and only then cuts the damaged segment. A recover
//     interrupted after some new segments exist finds the damaged segment
//     still whole, its rescued records already present, byte for byte, as
//     the segments named after them, and finishes the split (even without
//     --salvage: the split was asked for and half done);
//   - when the rescued records right after the damage start at the
//     segment's own base offset (nothing valid precedes the damage), they
//     stay in the segment: its files are replaced by ones holding only
//     them, written under temporary names and synced, the .log renamed
//     first (until then the segment is whole, as above; after it the .log
//     is clean and at worst its indexes are stale, which any recover
//     rebuilds), then the indexes.

// RecoverOptions control RecoverTopic; RecoverDataDir heeds DryRun only.
type RecoverOptions struct {
	// DryRun plans and reports, and changes nothing.
	DryRun bool
	// Salvage rescues the valid records after a corrupt one by splitting
	// the segment; without it corruption is reported and left in place.
	Salvage bool
	// LockWait is how long to retry a held lock: 0 means DefaultLockWait,
	// WaitForever no limit.
	LockWait time.Duration
	// TryPartitionLocks tries each partition's writer lock once instead
	// of waiting LockWait for it. Under the topic's maintenance lock only
	// a writer (append, import) can hold it, for as long as it runs: a run
	// over every topic skips its partitions rather than wait for each.
	TryPartitionLocks bool
	// Progress, if set, is told every few MiB how many bytes of the .log
	// files of the partitions a RecoverTopic covers were scanned, out of
	// their total.
	Progress func(done, total int64)

	prog *scanProgress // set by RecoverTopic from Progress
}

// scanProgress counts the .log bytes a RecoverTopic has scanned.
type scanProgress struct {
	fn          func(done, total int64)
	done, total int64 // bytes of segments scanned whole; all bytes
	shown       int64 // last done reported
}

// at reports pos bytes scanned of the segment being scanned, if a few
// MiB went by since the last report.
func (p *scanProgress) at(pos int64) {
	if p == nil {
		return
	}
	if d := p.done + pos; d-p.shown >= 4<<20 {
		p.shown = d
		p.fn(d, max(p.total, d))
	}
}

// add counts a segment scanned whole.
func (p *scanProgress) add(size int64) {
	if p == nil {
		return
	}
	p.done += size
	p.shown = p.done
	p.fn(p.done, max(p.total, p.done))
}

// recoverOne recovers one partition (docs/format.md §7) under the topic's
// maintenance lock and the partition's writer lock, and removes the
// topic's own leftovers. See RecoverTopic.
func (s *Store) recoverOne(topic string, partition int, opts RecoverOptions) (RecoverReport, error) {
	rep := RecoverReport{Topic: topic, Partition: partition, Dir: s.PartitionDir(topic, partition), DryRun: opts.DryRun}
	if partition < 0 {
		return rep, fmt.Errorf("topic %s: no partition %d: %w", topic, partition, ErrPartitionNotFound)
	}
	tr, err := s.RecoverTopic(topic, partition, opts)
	if err != nil {
		return rep, err
	}
	if len(tr.Partitions) > 0 {
		rep = tr.Partitions[0]
	}
	rep.Leftovers = append(slices.Clone(tr.Leftovers), rep.Leftovers...)
	if len(tr.Failed) > 0 {
		if r := tr.Failed[0].Report; r != nil {
			rep = *r
			rep.Leftovers = append(slices.Clone(tr.Leftovers), rep.Leftovers...)
		}
		return rep, tr.Failed[0].Err
	}
	return rep, nil
}

// RecoverTopic recovers the partitions of a topic (only that one when
// only >= 0) under one hold of the topic's maintenance lock, each under its
// writer lock: it cuts the active segment's incomplete tail, rebuilds
// indexes that are missing, short, long or wrong, removes leftovers of
// interrupted operations, and with Salvage splits segments around corrupt
// records. Bytes it cuts are saved to quarantine first. A partition that
// cannot be recovered (its lock is held, an I/O error) is listed in Failed
// and the others are still recovered; the error returned is for the topic
// as a whole (not found, its maintenance lock held).
func (s *Store) RecoverTopic(topic string, only int, opts RecoverOptions) (TopicRecovery, error) {
	tr := TopicRecovery{Topic: topic, Dir: filepath.Join(s.dir, topic)}
	if err := format.ValidateTopic(topic); err != nil {
		return tr, err
	}
	if opts.LockWait == 0 {
		opts.LockWait = DefaultLockWait
	}
	if fi, err := os.Stat(tr.Dir); err != nil || !fi.IsDir() {
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			// What a create or a copy that never made the topic left
			// in the data directory is still the topic's to remove.
			if tr.Leftovers = s.dataDirLeftovers(topic); len(tr.Leftovers) > 0 {
				if opts.DryRun {
					return tr, nil
				}
				return tr, s.removeLeftovers(tr.Leftovers)
			}
			return tr, fmt.Errorf("topic %s in %s: %w", topic, s.dir, ErrTopicNotFound)
		}
		return tr, fmt.Errorf("topic %s: %w", topic, err)
	}
	lock, err := lockDir(tr.Dir, "topic "+topic, opts.LockWait)
	if err != nil {
		return tr, err
	}
	defer lock.Unlock()

	entries, err := os.ReadDir(tr.Dir)
	if err != nil {
		return tr, fmt.Errorf("topic %s: %w", topic, err)
	}
	// Leftovers go first, even from a topic without partitions: a copy
	// into a new topic by an older seglog, killed before placing its
	// partition, left just that, its build directory beside the settings
	// it wrote; and then the directory itself goes.
	tr.Leftovers, err = s.topicLeftovers(topic, tr.Dir, entries, opts.DryRun)
	if err != nil {
		return tr, err
	}
	if l, ok, err := s.halfMadeLeftover(tr.Dir, opts.DryRun); ok || err != nil {
		tr.Leftovers = append(tr.Leftovers, l)
		return tr, err
	}
	tp, err := ReadTopicPartitions(tr.Dir)
	if err != nil {
		return tr, fmt.Errorf("topic %s: %w", topic, err)
	}
	tr.Foreign = tp.Foreign
	if tp.Count == 0 {
		return tr, tp.Err(topic, tr.Dir)
	}
	if only >= tp.Count {
		return tr, fmt.Errorf("topic %s has partitions 0..%d, not %d: %w", topic, tp.Count-1, only, ErrPartitionNotFound)
	}
	// The stored index interval is a fallback for segments whose indexes
	// show none; settings that do not parse only lose that fallback.
	st, _ := readSettings(filepath.Join(tr.Dir, settingsFile))

	if opts.Progress != nil {
		opts.prog = &scanProgress{fn: opts.Progress}
		for r, missing := range tp.Runs(only) {
			if !missing {
				segs, _ := listSegments(s.PartitionDir(topic, r.First))
				for _, seg := range segs {
					if fi, err := os.Stat(seg.path(format.LogExt)); err == nil {
						opts.prog.total += fi.Size()
					}
				}
			}
		}
		opts.prog.fn(0, opts.prog.total)
		defer func() { opts.prog.fn(max(opts.prog.total, opts.prog.done), max(opts.prog.total, opts.prog.done)) }()
	}
	for r, missing := range tp.Runs(only) {
		if missing {
			tr.Failed = append(tr.Failed, RecoverFailure{Partition: r.First, Err: tp.MissingErr(topic, tr.Dir, r)})
			continue
		}
		p := r.First
		rep, err := s.recoverPartition(topic, p, st.IndexInterval, opts)
		if err != nil {
			f := RecoverFailure{Partition: p, Err: err}
			if rep.Dir != "" {
				f.Report = &rep
			}
			tr.Failed = append(tr.Failed, f)
			continue
		}
		tr.Partitions = append(tr.Partitions, rep)
	}
	return tr, nil
}

// recoverPartition recovers one partition under its writer lock, the
// caller holding the topic's maintenance lock: leftovers first, then the
// plan, then (unless a dry run) carrying it out.
func (s *Store) recoverPartition(topic string, part int, storedInterval int, opts RecoverOptions) (RecoverReport, error) {
	dir := s.PartitionDir(topic, part)
	name := fmt.Sprintf("%s/%d", topic, part)
	wait := opts.LockWait
	if opts.TryPartitionLocks {
		wait = 0
	}
	lock, err := lockDir(dir, "partition "+name, wait)
	if err != nil {
		return RecoverReport{}, err
	}
	defer lock.Unlock()
	p := &partitionPlan{topic: topic, part: part, dir: dir,
		rep: RecoverReport{Topic: topic, Partition: part, Dir: dir, DryRun: opts.DryRun}}
	qdir := filepath.Join(s.dir, QuarantineDir, topic, strconv.Itoa(part))
	if p.rep.Leftovers, err = s.partitionLeftovers(dir, qdir); err != nil {
		return p.rep, fmt.Errorf("recover %s: %w", name, err)
	}
	if !opts.DryRun {
		// Removed before planning: the plan must not see a half-made
		// segment's orphan index, and no temporary name may be taken.
		if err := s.removeLeftovers(p.rep.Leftovers); err != nil {
			return p.rep, fmt.Errorf("recover %s: %w", name, err)
		}
	}
	if err := p.plan(storedInterval, opts); err != nil {
		return p.rep, fmt.Errorf("recover %s: %w", name, err)
	}
	if !opts.DryRun {
		err = s.executePlan(p)
	}
	// New segments were listed after the one they came from; one taking
	// the name of a segment removed before it comes after that one.
	made := func(sr SegmentRecovery) int {
		if sr.SplitFrom != "" {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(p.rep.Segments, func(a, b SegmentRecovery) int {
		return cmp.Or(cmp.Compare(a.Base, b.Base), cmp.Compare(made(a), made(b)))
	})
	if err != nil {
		return p.rep, fmt.Errorf("recover %s: %w", name, err)
	}
	return p.rep, nil
}
