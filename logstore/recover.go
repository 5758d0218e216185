package logstore

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
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

// IndexAction says what recover did, or would do, to an index file.
type IndexAction string

const (
	// IndexKept: the file already holds exactly what a writer would have
	// written for the records the segment keeps.
	IndexKept IndexAction = "kept"
	// IndexTrimmed: it held that and more (entries past the valid data,
	// a partial last entry); the rest was cut off its end.
	IndexTrimmed IndexAction = "trimmed"
	// IndexRebuilt: it was missing, short or wrong and was written anew
	// from the .log.
	IndexRebuilt IndexAction = "rebuilt"
	// IndexCreated: written for a segment salvage made.
	IndexCreated IndexAction = "created"
	// IndexLeft: not looked at, as the segment holds damage left in place.
	IndexLeft IndexAction = "left"
	// IndexRemoved: removed with its segment.
	IndexRemoved IndexAction = "removed"
)

// RecoverOptions control Recover and RecoverTopic.
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

	prog *recProgress // set by RecoverTopic from Progress
}

// recProgress counts the .log bytes a RecoverTopic has scanned.
type recProgress struct {
	fn          func(done, total int64)
	done, total int64 // bytes of segments scanned whole; all bytes
	shown       int64 // last done reported
}

// at reports pos bytes scanned of the segment being scanned, if a few
// MiB went by since the last report.
func (p *recProgress) at(pos int64) {
	if p == nil {
		return
	}
	if d := p.done + pos; d-p.shown >= 4<<20 {
		p.shown = d
		p.fn(d, max(p.total, d))
	}
}

// add counts a segment scanned whole.
func (p *recProgress) add(size int64) {
	if p == nil {
		return
	}
	p.done += size
	p.shown = p.done
	p.fn(p.done, max(p.total, p.done))
}

// RecoverReport is what recover did (or, in a dry run, would do) to one
// partition.
type RecoverReport struct {
	Topic     string
	Partition int
	Dir       string
	DryRun    bool
	// Next is the partition's next offset, the same before and after:
	// recover never lowers it.
	Next      uint64
	Segments  []SegmentRecovery
	Leftovers []RecoverLeftover
	// Gaps are the offset ranges this run recorded (or would record) in
	// the partition's .gaps.json.
	Gaps []Gap
	// Problems are damage left in place: a *CorruptionError for a corrupt
	// record that only Salvage may cut, or an overlap recover cannot undo.
	Problems []error
}

// Changed reports whether the run changed anything (in a dry run: would).
func (r *RecoverReport) Changed() bool {
	for _, l := range r.Leftovers {
		if !l.Kept {
			return true
		}
	}
	for _, sr := range r.Segments {
		if sr.Changed() {
			return true
		}
	}
	return len(r.Gaps) > 0
}

// SegmentRecovery is one segment's part of a RecoverReport.
type SegmentRecovery struct {
	Name       string // the .log file's name
	Base       uint64
	Size       int64       // the .log's size before recovery; 0 for a segment salvage made
	Records    uint64      // valid records it holds after recovery
	ValidBytes int64       // their bytes: the .log's size after recovery
	Cut        *RecoverCut // bytes cut from the .log, nil when none
	Index      IndexAction
	TimeIndex  IndexAction
	Interval   int // index interval of the indexes it keeps or gets
	// SplitFrom names, for a segment made by salvage, the segment its
	// records were rescued from.
	SplitFrom string
	// SplitInto names, for a segment salvage split, the segments made of
	// its rescued records.
	SplitInto []string
	// Finished: the split was begun by an interrupted recover and is
	// finished by this one.
	Finished bool
	// RenamedTo names the .log a misnamed segment was renamed to: its
	// records are all valid and lose no offset under their own name.
	RenamedTo string
	// Removed: nothing valid stays at the segment's name (its records
	// were rescued into segments of their own, or are another segment's),
	// so salvage removes its files rather than leave an empty segment.
	Removed bool
	// Problem is damage left in place in this segment, if any.
	Problem error
}

// Changed reports whether anything is (or would be) done to the segment.
func (sr *SegmentRecovery) Changed() bool {
	return sr.Cut != nil || sr.SplitFrom != "" || sr.Removed || sr.RenamedTo != "" ||
		(sr.Index != IndexKept && sr.Index != IndexLeft) || (sr.TimeIndex != IndexKept && sr.TimeIndex != IndexLeft)
}

// RecoverCut is a byte range recover cut from a .log, and where it saved it.
type RecoverCut struct {
	From, To int64  // the bytes cut
	Offset   uint64 // the offset a record at From would have had
	Reason   string
	// Saved is the quarantine copy ("" in a dry run). For a salvage split
	// it holds the whole segment as it was, not only the cut bytes.
	Saved string
	Whole bool // Saved holds the whole original segment
	// Linked: the disk was too full to copy, so the original file was
	// hard-linked into quarantine and the segment replaced by a copy of
	// the bytes it keeps.
	Linked bool
}

// RecoverLeftover is a file or directory left by an interrupted operation.
type RecoverLeftover struct {
	Path string
	What string // what it is left over from
	// Kept: left in place, as it may belong to an operation still running.
	Kept bool
}

// RecoverFailure is a partition RecoverTopic could not recover.
type RecoverFailure struct {
	Partition int   // the first of a run of missing partitions (Err names them all)
	Err       error // a *LockedError when another process holds it
	// Report is what was planned and done before the error, when the
	// partition was locked and scanned.
	Report *RecoverReport
}

// TopicRecovery is what RecoverTopic did.
type TopicRecovery struct {
	Topic      string
	Dir        string
	Leftovers  []RecoverLeftover // of the topic directory, and the topic's in the data directory
	Partitions []RecoverReport
	Failed     []RecoverFailure
	Foreign    []string // directories numbered beyond MaxPartitions, left alone (see TopicPartitions)
}

// Recover recovers one partition (docs/format.md §7) under the topic's maintenance
// lock and the partition's writer lock, and removes the topic's own
// leftovers. See RecoverTopic.
func (s *Store) Recover(topic string, partition int, opts RecoverOptions) (RecoverReport, error) {
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
			if tr.Leftovers = s.recDataDirLeftovers(topic); len(tr.Leftovers) > 0 {
				if opts.DryRun {
					return tr, nil
				}
				return tr, s.recRemove(tr.Leftovers)
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
	tr.Leftovers, err = s.recTopicLeftovers(topic, tr.Dir, entries, opts.DryRun)
	if err != nil {
		return tr, err
	}
	if l, ok, err := s.recHalfMade(tr.Dir, opts.DryRun); ok || err != nil {
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
		opts.prog = &recProgress{fn: opts.Progress}
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

// RecoverDataDir removes the data directory's leftovers of interrupted
// operations: the temporary directories of a create that did not finish
// (.create-<topic>-<random>.tmp), of a copy or import into a new topic
// that did not (.copy-<topic>-<random>.tmp), and the half-made topic
// directories such copies by older versions left (see halfMadeTopic).
// Nothing locks a create, so one whose topic does not exist is left alone
// while younger than a minute: it may still be running. Copies lock what
// they build, and what is locked stays.
func (s *Store) RecoverDataDir(opts RecoverOptions) ([]RecoverLeftover, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	left := s.recDataDirLeftovers("*")
	for _, e := range entries {
		if format.ValidateTopic(e.Name()) != nil || !e.IsDir() {
			continue
		}
		l, ok, err := s.recHalfMadeLocked(filepath.Join(s.dir, e.Name()), opts.DryRun)
		if err != nil {
			return left, err
		}
		if ok {
			left = append(left, l)
		}
	}
	if opts.DryRun {
		return left, nil
	}
	return left, s.recRemove(left)
}

// recDataDirLeftovers lists the temporary directories in the data
// directory of creates and of copies into a new topic, of topic ("*":
// all). Those of copies still running are kept, and so are those of a
// create whose topic does not exist while younger than recCreateGrace.
func (s *Store) recDataDirLeftovers(topic string) []RecoverLeftover {
	entries, _ := os.ReadDir(s.dir)
	var left []RecoverLeftover
	for _, e := range entries {
		name, ok := recTempTopic(e.Name(), ".create-")
		if !ok || !e.IsDir() || topic != "*" && name != topic[:min(len(topic), 200)] {
			continue
		}
		l := RecoverLeftover{Path: filepath.Join(s.dir, e.Name()), What: "temporary directory of an interrupted create"}
		if fi, err := os.Stat(filepath.Join(s.dir, name)); err != nil || !fi.IsDir() {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) < recCreateGrace {
				l.What, l.Kept = "temporary directory of a create that may still be running", true
			}
		}
		left = append(left, l)
	}
	for _, path := range buildRoots(s.dir, topic) {
		l := RecoverLeftover{Path: path, What: "temporary directory of an interrupted copy or import into a new topic"}
		if buildInUse(path) {
			l.What, l.Kept = "temporary directory of a copy or import into a new topic still running", true
		}
		left = append(left, l)
	}
	return left
}

// recHalfMadeLocked is recHalfMade under the topic's maintenance lock,
// which it takes if it is free; a held one keeps the directory.
func (s *Store) recHalfMadeLocked(dir string, dryRun bool) (RecoverLeftover, bool, error) {
	// Through a link it changes nothing, and the link is no leftover.
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || !halfMadeTopic(dir) {
		return RecoverLeftover{}, false, nil
	}
	lock, err := fsx.TryLock(dir)
	if err != nil {
		return RecoverLeftover{Path: dir, What: recHalfMadeWhat + "; kept, as another process holds its lock", Kept: true}, true, nil
	}
	defer lock.Unlock()
	return s.recHalfMade(dir, dryRun)
}

const recHalfMadeWhat = "topic directory an interrupted copy or import into a new topic left, holding no partition"

// recHalfMade reports the topic directory dir when it is half-made (see
// halfMadeTopic) and, unless dryRun or a build in it is still running,
// removes it. The caller holds its maintenance lock.
func (s *Store) recHalfMade(dir string, dryRun bool) (RecoverLeftover, bool, error) {
	if !halfMadeTopic(dir) {
		return RecoverLeftover{}, false, nil
	}
	l := RecoverLeftover{Path: dir, What: recHalfMadeWhat}
	for _, path := range buildRoots(dir, "") {
		if buildInUse(path) {
			l.What, l.Kept = recHalfMadeWhat+"; kept, as a copy into it is still running", true
			return l, true, nil
		}
	}
	if dryRun {
		return l, true, nil
	}
	s.removeAll(dir)
	if _, err := os.Lstat(dir); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return l, true, fmt.Errorf("remove leftover %s: it could not be emptied", dir)
	}
	return l, true, s.fs.SyncDir(s.dir)
}

// recCreateGrace is how old a create's temporary directory must be before
// recover takes it for a leftover, when its topic does not exist.
const recCreateGrace = time.Minute

// recTempTopic parses the name of a temporary directory in the data
// directory of a create (prefix ".create-", see CreateTopic) or a copy
// into a new topic (buildPrefix, see beginBuild): prefix, topic[:200],
// "-", 12 hex digits, ".tmp". It returns the topic name in it.
func recTempTopic(name, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return "", false
	}
	rest, ok = strings.CutSuffix(rest, ".tmp")
	const rnd = 12
	if !ok || len(rest) < rnd+2 || rest[len(rest)-rnd-1] != '-' {
		return "", false
	}
	for _, c := range rest[len(rest)-rnd:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false
		}
	}
	return rest[:len(rest)-rnd-1], true
}

// recTopicLeftovers finds (and unless dryRun removes) the leftovers of a
// topic: hidden temporary files and directories in its directory
// (<topic>/.*.tmp: settings being replaced, a copy or import being built,
// all under the maintenance lock we hold), and its temporary directories
// in the data directory (see recDataDirLeftovers).
func (s *Store) recTopicLeftovers(topic, dir string, entries []os.DirEntry, dryRun bool) ([]RecoverLeftover, error) {
	var left []RecoverLeftover
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), ".tmp") {
			l := RecoverLeftover{Path: filepath.Join(dir, e.Name()), What: "temporary file of an interrupted operation"}
			if e.IsDir() {
				l.What = "temporary directory of an interrupted copy or import"
				if buildInUse(l.Path) {
					// Copies build without the topic's lock until they
					// place the result: this one is still running.
					l.What, l.Kept = "temporary directory of a copy or import still running", true
				}
			}
			left = append(left, l)
		}
	}
	left = append(left, s.recDataDirLeftovers(topic)...)
	if dryRun {
		return left, nil
	}
	return left, s.recRemove(left)
}

// recRemove deletes the leftovers not kept, then makes their removal
// durable.
func (s *Store) recRemove(left []RecoverLeftover) error {
	dirs := map[string]bool{}
	for _, l := range left {
		if l.Kept {
			continue
		}
		fi, err := os.Lstat(l.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil && fi.IsDir() {
			s.removeAll(l.Path)
			_, err = os.Lstat(l.Path)
			if err == nil {
				err = fmt.Errorf("remove %s: directory not empty after removing its contents", l.Path)
			} else if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		} else if err == nil {
			err = s.fs.Remove(l.Path)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove leftover: %w", err)
		}
		dirs[filepath.Dir(l.Path)] = true
	}
	for _, d := range slices.Sorted(func(yield func(string) bool) {
		for d := range dirs {
			if !yield(d) {
				return
			}
		}
	}) {
		if err := s.fs.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// recPartitionLeftovers finds the leftovers of a partition directory and
// of its quarantine directory.
func (s *Store) recPartitionLeftovers(dir, qdir string) ([]RecoverLeftover, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	logs := map[uint64]bool{}
	for _, e := range entries {
		// A .log that is not a regular file still keeps its index files:
		// listing the segments fails on it, naming it, and what to do with
		// it is for a person to decide.
		if base, ext, err := format.ParseSegmentName(e.Name()); err == nil && ext == format.LogExt {
			logs[base] = true
		}
	}
	var left []RecoverLeftover
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		var what string
		switch base, ext, err := format.ParseSegmentName(name); {
		case strings.HasSuffix(name, ".deleted"):
			what = "file of an interrupted retention delete"
		case strings.HasSuffix(name, ".tmp"):
			what = "temporary file of an interrupted operation"
		case err == nil && ext != format.LogExt && !logs[base]:
			what = "index file without its .log"
		default:
			continue
		}
		left = append(left, RecoverLeftover{Path: filepath.Join(dir, name), What: what})
	}
	qentries, err := os.ReadDir(qdir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	notes := map[string]bool{}
	for _, e := range qentries {
		if b, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			notes[b] = true
		}
	}
	for _, e := range qentries {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		var what string
		if strings.HasSuffix(name, ".tmp") {
			what = "temporary file of an interrupted quarantine"
		} else if b, ok := strings.CutSuffix(name, ".bin"); ok && !notes[b] {
			// The note is written last, and nothing is cut before it is
			// there: these bytes are still where they were copied from.
			what = "quarantine copy without its note (its bytes were never cut)"
		} else if ok && recLinkedToLog(filepath.Join(qdir, name), dir) {
			// A hard link made for lack of space by a recover that did not
			// get to replace the segment: it is the live segment itself.
			what = "hard link to a live segment, left by an interrupted recover"
			left = append(left, RecoverLeftover{Path: filepath.Join(qdir, b+".json"), What: what})
		} else {
			continue
		}
		left = append(left, RecoverLeftover{Path: filepath.Join(qdir, name), What: what})
	}
	return left, nil
}

// recLinkedToLog reports whether path is the same file as a .log of the
// partition directory dir.
func recLinkedToLog(path, dir string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink < 2 {
		return false
	}
	segs, err := listSegments(dir)
	if err != nil {
		return false
	}
	for _, seg := range segs {
		if li, err := os.Stat(seg.path(format.LogExt)); err == nil && os.SameFile(fi, li) {
			return true
		}
	}
	return false
}

// recAction is what the plan does to a segment's .log.
type recAction int

const (
	recNone   recAction = iota // the .log is fine; its indexes may still need work
	recTail                    // cut the active segment's incomplete tail
	recSplit                   // salvage: rescued runs become segments, the damage is cut
	recRename                  // a misnamed segment takes its first record's name
	recLeave                   // damage left in place (a problem)
	recDrop                    // an empty segment named below its floor is removed
)

// recRun is a stretch of valid records with contiguous offsets.
type recRun struct {
	pos, end    int64
	first, next uint64
}

// recDamage is a stretch where no valid record starts: after a run, up to
// the next run or the end of the file.
type recDamage struct {
	pos, end int64
	offset   uint64 // the offset expected at pos
	reason   error
	d        *segfile.Damage
}

// recScan is a segment's .log, scanned whole: runs[0] starts at byte 0
// with the segment's base offset (and may be empty); damage[i] follows
// runs[i].
type recScan struct {
	size   int64
	runs   []recRun
	damage []recDamage
}

func (sc *recScan) last() recRun { return sc.runs[len(sc.runs)-1] }

func (sc *recScan) records() (n uint64, bytes int64) {
	for _, r := range sc.runs {
		n += r.next - r.first
		bytes += r.end - r.pos
	}
	return n, bytes
}

// recSegPlan is what the plan does to one segment.
type recSegPlan struct {
	seg      segment
	active   bool
	floor    uint64 // where the segment before ends: offsets below are its
	interval int
	scan     recScan
	idx      recIndexCheck // expected entries of runs[0] against the .index
	tidx     recIndexCheck // and the .timeindex
	action   recAction
	present  []bool // per run: for runs[1:], already a segment of its own
	// waitsFor are the later segments (indexes into the plan's) named
	// below where runs[1:] end, but those an interrupted split made of
	// them: their records there are below their floor, and a split waits
	// until they are gone from those names.
	waitsFor []int
	tailGap  *recTailGap // after the last run of a split, when a segment follows
	gaps     []int       // the gaps it leaves, as indexes into the report's
	rep      int         // its entry in the report
	// kept: runs[0] is empty and runs[kept] starts at the segment's base
	// offset, so it replaces the segment's contents instead of becoming
	// a segment of its own (0: none does).
	kept int
	prog *recProgress // nil: no progress reports
}

// recPlan is a partition's plan.
type recPlan struct {
	topic string
	part  int
	dir   string
	rep   RecoverReport
	segs  []*recSegPlan
}

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
	p := &recPlan{topic: topic, part: part, dir: dir,
		rep: RecoverReport{Topic: topic, Partition: part, Dir: dir, DryRun: opts.DryRun}}
	qdir := filepath.Join(s.dir, QuarantineDir, topic, strconv.Itoa(part))
	if p.rep.Leftovers, err = s.recPartitionLeftovers(dir, qdir); err != nil {
		return p.rep, fmt.Errorf("recover %s: %w", name, err)
	}
	if !opts.DryRun {
		// Removed before planning: the plan must not see a half-made
		// segment's orphan index, and no temporary name may be taken.
		if err := s.recRemove(p.rep.Leftovers); err != nil {
			return p.rep, fmt.Errorf("recover %s: %w", name, err)
		}
	}
	if err := p.plan(storedInterval, opts); err != nil {
		return p.rep, fmt.Errorf("recover %s: %w", name, err)
	}
	if !opts.DryRun {
		err = s.recExecute(p)
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

// plan scans every segment and decides what to do with it.
func (p *recPlan) plan(storedInterval int, opts RecoverOptions) error {
	segs, err := listSegments(p.dir)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		return nil
	}
	intervals, err := recIntervals(segs, storedInterval)
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
	// runs to give them up (recExecute carries those out first). One that
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
			if sp.action != recSplit || stuck[sp.seg.base] != nil {
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
func (p *recPlan) vacates(sp *recSegPlan) bool {
	return sp.action == recRename || p.rep.Segments[sp.rep].Removed
}

// next is the partition's next offset once the plan is carried out:
// where the highest run of valid records it keeps ends.
func (p *recPlan) next() uint64 {
	var next uint64
	for _, sp := range p.segs {
		next = max(next, sp.scan.last().next)
	}
	return next
}

// planSegments makes the plan for every segment, those in stuck leaving
// their damage in place with that problem.
func (p *recPlan) planSegments(segs []segment, intervals []int, stuck map[uint64]error, opts RecoverOptions) error {
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
		sp := &recSegPlan{seg: seg, active: i == len(segs)-1, interval: intervals[i], prog: opts.prog}
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
			sp.action = recDrop
		case !middle && !trailing:
			sp.action = recNone
		case sp.active && !middle && sc.damage[0].d.Class == segfile.Incomplete:
			sp.action = recTail
		default:
			sp.action = recLeave
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
				sp.action = recRename
			case opts.Salvage || slices.Contains(sp.present, true):
				sp.action = recSplit
				sr.Finished = slices.Contains(sp.present, true)
			default:
				sr.Problem = corruption(sc.damage[0].d)
			}
		}
		if sr.Problem != nil {
			p.rep.Problems = append(p.rep.Problems, sr.Problem)
		}
		left = nil
		if sp.action == recLeave && (opts.Salvage || !errors.As(sr.Problem, new(*CorruptionError))) {
			// Damage left in place that salvage would not cut: what
			// overlaps it stays too.
			left = &sp.seg
		}
		switch {
		case sp.action == recLeave:
			sr.Records, sr.ValidBytes = sc.records()
			sr.Index, sr.TimeIndex = IndexLeft, IndexLeft
		case sp.action == recSplit && sp.kept > 0, sp.action == recRename:
			r := sc.runs[max(sp.kept, 1)]
			sr.Records, sr.ValidBytes = r.next-r.first, r.end-r.pos
			sr.Index, sr.TimeIndex = IndexRebuilt, IndexRebuilt
			if sp.action == recRename {
				sr.RenamedTo = format.SegmentName(r.first, format.LogExt)
			}
		case sp.action == recDrop,
			sp.action == recSplit && run0.end == 0 && (len(sc.runs) > 1 || i < len(segs)-1 || seg.base < sp.floor):
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
		case recTail:
			d := sc.damage[0]
			sr.Cut = &RecoverCut{From: d.pos, To: sc.size, Offset: d.offset,
				Reason: "incomplete record at the end of the active segment (" + d.reason.Error() + "), cut by recover"}
		case recSplit:
			// The offset expected where the cut begins, as readers report
			// it: above the segment's name when its first records overlap
			// the segments before.
			sr.Cut = &RecoverCut{From: run0.end, To: sc.size, Offset: sc.damage[0].offset, Whole: true}
		}
		sp.rep = len(p.rep.Segments)
		p.rep.Segments = append(p.rep.Segments, sr)
		switch sp.action {
		case recSplit:
			p.planSplit(sp, segs, i)
			for j, r := range sc.runs {
				if sp.present[j] {
					made[r.first] = true
				}
			}
			prevNext = max(prevNext, sc.last().next)
		case recLeave, recRename:
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
func (p *recPlan) planSplit(sp *recSegPlan, segs []segment, i int) {
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
				sp.tailGap = &recTailGap{from: from, next: k, d: d}
				break
			}
		}
	}
	p.rep.Segments = append(p.rep.Segments, made...)
}

// recTailGap is the gap a split leaves after its last run, up to where
// the records of segment next (an index into the plan's) start.
type recTailGap struct {
	from uint64
	next int
	d    recDamage
}

// planTailGaps adds the gaps splits leave after their last runs: up to
// the next segment's base, or its first valid record below that (it is
// misnamed).
func (p *recPlan) planTailGaps() {
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
func (p *recPlan) addGap(sp *recSegPlan, from, to uint64, d recDamage) {
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
func (sp *recSegPlan) checkRescued(segs []segment, self int, bases map[uint64]bool) (conflict, err error) {
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
			same, err := recSamePrefix(sp.seg.path(format.LogExt), r.pos, r.end, other.path(format.LogExt))
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
func (sp *recSegPlan) presentAt(base uint64) bool {
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
func (sp *recSegPlan) misnamedOnly() bool {
	sc := &sp.scan
	if len(sc.runs) != 2 || sp.present[1] {
		return false
	}
	d, r := sc.damage[0], sc.runs[1]
	return d.d.Misnamed() && r.pos == 0 && r.end == sc.size && r.first <= max(sc.runs[0].next, d.offset, sp.floor)
}

// recSamePrefix reports whether the file at path starts with bytes
// [from, to) of src.
func recSamePrefix(src string, from, to int64, path string) (bool, error) {
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

// recIntervals chooses each segment's index interval: the one its own
// index shows, else the nearest other segment's, else the topic's stored
// setting, else 1.
func recIntervals(segs []segment, stored int) ([]int, error) {
	own := make([]int, len(segs))
	for i, seg := range segs {
		n, err := recInferInterval(seg)
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

// recInferInterval is the index interval a segment's index shows: the
// offset distance of its first two entries, when the first is the
// segment's first record and the second is confirmed by the chain; or,
// from the time index, the distance of its first two offsets. 0 when
// neither tells.
func recInferInterval(seg segment) (int, error) {
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

// scanSegment scans the segment's .log whole into runs of valid records
// and the damage between them, by the one rule (segfile), offsets below
// floor being the segments' before it; it compares the index entries a
// writer would have written for runs[0] with the index files as it goes.
func (sp *recSegPlan) scanSegment(floor uint64) error {
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
	sc := recScan{size: scn.Limit()}
	run := recRun{first: scn.NextOffset(), next: scn.NextOffset()}
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
		sc.damage = append(sc.damage, recDamage{pos: d.Pos, end: d.End, offset: d.Offset, reason: d.Reason, d: d})
		if !scn.Resume() {
			break
		}
		run = recRun{pos: d.End, first: d.ResumeOffset, next: d.ResumeOffset}
	}
	sp.scan = sc
	sp.prog.add(sc.size)
	return nil
}

// recIndexCheck compares an index file, as it is read, with the entries
// expected of it.
type recIndexCheck struct {
	f    *os.File
	br   *bufio.Reader
	size int64 // -1: no such file
	n    int64 // bytes expected so far
	same bool  // the file starts with them
	buf  [format.IndexEntryLen]byte
}

func (c *recIndexCheck) open(path string) error {
	*c = recIndexCheck{size: -1}
	f, err := fsx.OpenRead(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	c.f, c.br, c.size, c.same = f, bufio.NewReaderSize(f, 64<<10), fi.Size(), true
	return nil
}

func (c *recIndexCheck) expect(e []byte) {
	c.n += int64(len(e))
	if !c.same {
		return
	}
	if _, err := io.ReadFull(c.br, c.buf[:]); err != nil || !bytes.Equal(c.buf[:], e) {
		c.same = false
		c.close()
	}
}

func (c *recIndexCheck) close() {
	if c.f != nil {
		c.f.Close()
		c.f, c.br = nil, nil
	}
}

// action is what the file needs, once every expected entry was seen.
func (c *recIndexCheck) action() IndexAction {
	switch {
	case c.size < 0 || !c.same:
		return IndexRebuilt
	case c.size == c.n:
		return IndexKept
	}
	return IndexTrimmed
}

// recExecute carries out a plan, segment by segment, each after the ones
// it waits for: a split writes a rescued run only once the segments named
// among its offsets are gone from there, so that at every step readers
// take the same records for valid as before.
func (s *Store) recExecute(p *recPlan) error {
	done := make([]bool, len(p.segs))
	var execute func(i int) error
	execute = func(i int) error {
		if done[i] {
			return nil
		}
		done[i] = true
		sp := p.segs[i]
		switch sp.action {
		case recTail:
			return s.recCutTail(p, sp)
		case recSplit:
			for _, k := range sp.waitsFor {
				if err := execute(k); err != nil {
					return err
				}
			}
			return s.recSplit(p, sp)
		case recRename:
			return s.recRename(sp)
		case recDrop:
			return s.recDrop(sp)
		case recNone:
			return s.recFixIndexes(sp, sp.seg.path(format.LogExt))
		}
		return nil
	}
	for i := range p.segs {
		if err := execute(i); err != nil {
			return err
		}
	}
	return nil
}

// recDrop removes an empty segment, its .log first.
func (s *Store) recDrop(sp *recSegPlan) error {
	if err := s.fs.Remove(sp.seg.path(format.LogExt)); err != nil {
		return err
	}
	return s.recRemoveIndexes(sp.seg)
}

// recCutTail saves the active segment's incomplete tail to quarantine and
// cuts it in place (a tail -f reader may hold the file open).
func (s *Store) recCutTail(p *recPlan, sp *recSegPlan) error {
	sr := &p.rep.Segments[sp.rep]
	f, err := s.fs.OpenFile(sp.seg.path(format.LogExt), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	c := sr.Cut
	q, err := s.quarantine(p.topic, p.part, f, c.From, c.To, c.Offset, c.Reason)
	if err != nil {
		if recNoSpace(err) {
			return fmt.Errorf("%w: the disk is too full to save the %d bytes of the incomplete record at byte %d of %s; nothing was cut (free some space and run recover again)",
				err, c.To-c.From, c.From, f.Name())
		}
		return fmt.Errorf("%w (nothing was cut from %s)", err, f.Name())
	}
	c.Saved = q
	if err := f.Truncate(c.From); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return s.recFixIndexes(sp, f.Name())
}

// recSplit carries out a salvage split of a segment: the original to
// quarantine, the rescued runs into segments of their own, the gaps
// recorded, and only then the damage cut off.
func (s *Store) recSplit(p *recPlan, sp *recSegPlan) error {
	sr := &p.rep.Segments[sp.rep]
	sc := &sp.scan
	logPath := sp.seg.path(format.LogExt)
	f, err := s.fs.OpenFile(logPath, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	c := sr.Cut
	q, err := s.quarantine(p.topic, p.part, f, 0, sc.size, sp.seg.base, c.Reason)
	if err != nil && recNoSpace(err) {
		// Too full to copy: keep the original by a second name, and
		// replace the segment rather than cut its (shared) bytes.
		q, err = s.recQuarantineLink(p.topic, p.part, logPath, sc.size, sp.seg.base, c.Reason)
		c.Linked = err == nil
	}
	if err != nil {
		return fmt.Errorf("%w (nothing of %s was changed)", err, logPath)
	}
	c.Saved = q
	// Until the cut, the segment is whole: a failure takes the copy back
	// (it is in the way on a full disk, and a hard link would only be a
	// second name of the live segment), note first, as a purge does.
	undo := func(err error) error {
		_ = s.fs.Remove(strings.TrimSuffix(q, ".bin") + ".json")
		_ = s.fs.Remove(q)
		return err
	}
	for j, r := range sc.runs {
		if j == 0 || sp.present[j] || j == sp.kept {
			continue
		}
		if _, err := s.recWriteSegment(f, r, sp.interval, p.dir, false); err != nil {
			return undo(err)
		}
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, gi := range sp.gaps {
		p.rep.Gaps[gi].Time = now
		if err := s.recRecordGap(p.dir, p.rep.Gaps[gi]); err != nil {
			return undo(err)
		}
	}
	if sp.kept > 0 {
		// The cut: the segment's files replaced by ones holding only the
		// rescued run. Once its .log is renamed, the original lives on in
		// quarantine only (a hard link there is now its only name).
		if replaced, err := s.recWriteSegment(f, sc.runs[sp.kept], sp.interval, p.dir, true); err != nil {
			if replaced {
				return err
			}
			return undo(err)
		}
		return nil
	}
	if sr.Removed {
		// The cut: the .log goes (on a full disk, its hard link in
		// quarantine stays the original's name).
		if err := s.fs.Remove(logPath); err != nil {
			return undo(err)
		}
		return s.recRemoveIndexes(sp.seg)
	}
	end := sc.runs[0].end
	if c.Linked {
		if replaced, err := s.recReplaceLog(f, logPath, end); err != nil {
			if replaced {
				return err // the link is now the original's only name
			}
			return undo(err)
		}
	} else {
		if err := f.Truncate(end); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return s.recFixIndexes(sp, logPath)
}

// recRename gives a misnamed segment its first record's name: indexes for
// the new name first, then the .log renamed, then the old indexes
// removed. A crash between leaves only orphan indexes, which the next
// recover removes.
func (s *Store) recRename(sp *recSegPlan) error {
	r := sp.scan.runs[1]
	to := segment{dir: sp.seg.dir, base: r.first}
	src, err := fsx.OpenRead(sp.seg.path(format.LogExt))
	if err != nil {
		return err
	}
	defer src.Close()
	if err := s.recWriteIndexes(osFile{File: src}, r, sp.interval, to); err != nil {
		return err
	}
	if err := s.fs.Rename(sp.seg.path(format.LogExt), to.path(format.LogExt), true); err != nil {
		return fmt.Errorf("rename %s: %w", sp.seg.path(format.LogExt), err)
	}
	return s.recRemoveIndexes(sp.seg)
}

// recRemoveIndexes removes a segment's index files, once its .log is gone.
func (s *Store) recRemoveIndexes(seg segment) error {
	for _, ext := range []string{format.IndexExt, format.TimeIndexExt} {
		if err := s.fs.Remove(seg.path(ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return s.fs.SyncDir(seg.dir)
}

// recNoSpace tells a full disk (or quota).
func recNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// recQuarantineLink saves a whole segment to quarantine as a hard link, for
// when the disk is too full for a copy, with the same note a copy gets.
func (s *Store) recQuarantineLink(topic string, part int, src string, size int64, expected uint64, reason string) (string, error) {
	dir := filepath.Join(s.dir, QuarantineDir, topic, strconv.Itoa(part))
	if err := s.mkdirAll(dir); err != nil {
		return "", fmt.Errorf("quarantine: %w", err)
	}
	now := time.Now().UTC()
	base := fmt.Sprintf("%s.%d-%d.%d", filepath.Base(src), 0, size, now.UnixNano())
	data := filepath.Join(dir, base+".bin")
	if err := s.fs.Link(src, data); err != nil {
		return "", fmt.Errorf("quarantine %s by hard link: %w", src, err)
	}
	note, err := json.MarshalIndent(quarantineNote{
		Source: src, Pos: 0, Length: size, ExpectedOffset: expected,
		Reason: reason + " (hard-linked: the disk was too full to copy it; the segment was replaced by a copy of the bytes it keeps)",
		Time:   now.Format(time.RFC3339Nano), Data: base + ".bin",
	}, "", "  ")
	if err == nil {
		err = s.writeFileAtomic(filepath.Join(dir, base+".json"), append(note, '\n'))
	}
	if err == nil {
		err = s.fs.SyncDir(dir)
	}
	if err != nil {
		_ = s.fs.Remove(data)
		return "", fmt.Errorf("quarantine note: %w", err)
	}
	return data, nil
}

// recReplaceLog replaces the .log at path by a copy of its first end bytes:
// temporary, fsync, rename, fsync of the directory. It is how a segment
// whose file is hard-linked into quarantine is cut. replaced tells whether
// the rename was made.
func (s *Store) recReplaceLog(src file, path string, end int64) (replaced bool, err error) {
	return s.writeFileDurably(path, false, func(f file) error {
		w := bufio.NewWriterSize(f, 256<<10)
		if _, err := io.Copy(w, io.NewSectionReader(src, 0, end)); err != nil {
			return err
		}
		return w.Flush()
	})
}

// recWriteSegment makes a segment of a run of records of src: its three
// files written under temporary names, synced, and renamed into place, the
// .log last, then the directory synced. With replace, the segment exists
// (src is its .log) and its files are replaced, the .log first: a crash
// before that rename leaves it whole, one after it a clean .log whose
// indexes at worst are stale. replaced tells whether the .log was renamed.
func (s *Store) recWriteSegment(src file, r recRun, interval int, dir string, replace bool) (replaced bool, err error) {
	seg := segment{dir: dir, base: r.first}
	exts := []string{format.IndexExt, format.TimeIndexExt, format.LogExt}
	renames := exts
	if replace {
		renames = []string{format.LogExt, format.IndexExt, format.TimeIndexExt}
	}
	var files [3]file
	cleanup := func() {
		for i, f := range files {
			if f != nil {
				f.Close()
			}
			_ = s.fs.Remove(seg.path(exts[i]) + ".tmp")
		}
	}
	for i, ext := range exts {
		if files[i], err = s.fs.OpenFile(seg.path(ext)+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
			cleanup()
			return false, err
		}
	}
	idx := bufio.NewWriterSize(files[0], 64<<10)
	tidx := bufio.NewWriterSize(files[1], 64<<10)
	log := bufio.NewWriterSize(files[2], 256<<10)
	_, err = io.Copy(log, io.NewSectionReader(src, r.pos, r.end-r.pos))
	if err == nil {
		err = recWalkIndex(src, r.pos, r.end, r.first, interval, idx, tidx)
	}
	for _, w := range []*bufio.Writer{idx, tidx, log} {
		if err == nil {
			err = w.Flush()
		}
	}
	for i := range files {
		if err == nil {
			err = files[i].Sync()
		}
		if cerr := files[i].Close(); err == nil {
			err = cerr
		}
		files[i] = nil
	}
	for _, ext := range renames {
		if err == nil {
			err = s.renameIntoPlace(seg.path(ext)+".tmp", seg.path(ext), ext == format.LogExt && !replace)
			if replace && ext == format.LogExt && err == nil {
				replaced = true
			}
		}
	}
	if err != nil {
		cleanup()
		return replaced, fmt.Errorf("write segment %s: %w", seg.path(format.LogExt), err)
	}
	return replaced, s.fs.SyncDir(dir)
}

// recWalkIndex writes the index entries a writer with the given interval
// writes for the (checked) records in [from, end) of src, the first
// having offset base and going to byte 0 of its segment. A nil writer is
// skipped.
func recWalkIndex(src file, from, end int64, base uint64, interval int, idx, tidx io.Writer) error {
	sc, err := segfile.NewScanner(segfile.Segment{Path: src.Name(), Base: base, Floor: base, Log: src}, end, segfile.Options{})
	if err != nil {
		return err
	}
	defer sc.Close()
	sc.StartAt(from, base)
	var b []byte
	for sc.Next() {
		h, pos := sc.Header(), sc.RecordPos()
		if (h.Offset-base)%uint64(interval) == 0 {
			if idx != nil {
				b = format.AppendIndexEntry(b[:0], format.IndexEntry{Offset: h.Offset, Pos: pos - from})
				if _, err := idx.Write(b); err != nil {
					return err
				}
			}
			if tidx != nil {
				b = format.AppendTimeIndexEntry(b[:0], format.TimeIndexEntry{Offset: h.Offset, Timestamp: h.Timestamp})
				if _, err := tidx.Write(b); err != nil {
					return err
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", src.Name(), err)
	}
	if sc.Pos() != end {
		return fmt.Errorf("read %s: the records at bytes %d..%d no longer check out", src.Name(), sc.Pos(), end)
	}
	return nil
}

// recFixIndexes brings a segment's indexes to what a writer would have
// written for its runs[0]: trimmed in place when they hold that and more,
// replaced through a temporary file when they are wrong.
func (s *Store) recFixIndexes(sp *recSegPlan, logPath string) error {
	rebuild := map[string]bool{}
	for _, x := range []struct {
		ext string
		c   *recIndexCheck
	}{{format.IndexExt, &sp.idx}, {format.TimeIndexExt, &sp.tidx}} {
		switch x.c.action() {
		case IndexTrimmed:
			f, err := s.fs.OpenFile(sp.seg.path(x.ext), os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			err = f.Truncate(x.c.n)
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case IndexRebuilt:
			rebuild[x.ext] = true
		}
	}
	var exts []string
	for _, ext := range []string{format.IndexExt, format.TimeIndexExt} {
		if rebuild[ext] {
			exts = append(exts, ext)
		}
	}
	if len(exts) == 0 {
		return nil
	}
	src, err := fsx.OpenRead(logPath)
	if err != nil {
		return err
	}
	defer src.Close()
	r := sp.scan.runs[0]
	if err := s.recWriteIndexes(osFile{File: src}, recRun{end: r.end, first: sp.seg.base}, sp.interval, sp.seg, exts...); err != nil {
		return fmt.Errorf("rebuild index of %s: %w", logPath, err)
	}
	return nil
}

// recWriteIndexes writes the named index files (both when none are
// named) of seg as a writer with the interval would have for run r of
// src, whose first record goes to byte 0 of seg: each through a temporary
// file renamed into place.
func (s *Store) recWriteIndexes(src file, r recRun, interval int, seg segment, exts ...string) error {
	if len(exts) == 0 {
		exts = []string{format.IndexExt, format.TimeIndexExt}
	}
	var files []file
	w := map[string]*bufio.Writer{}
	var err error
	for _, ext := range exts {
		var f file
		if f, err = s.fs.OpenFile(seg.path(ext)+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
			break
		}
		files = append(files, f)
		w[ext] = bufio.NewWriterSize(f, 64<<10)
	}
	writer := func(ext string) io.Writer {
		if b := w[ext]; b != nil {
			return b
		}
		return nil
	}
	if err == nil {
		err = recWalkIndex(src, r.pos, r.end, r.first, interval, writer(format.IndexExt), writer(format.TimeIndexExt))
	}
	for _, ext := range exts {
		if b := w[ext]; b != nil && err == nil {
			err = b.Flush()
		}
	}
	for _, f := range files {
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	for _, ext := range exts {
		if err == nil {
			err = s.renameIntoPlace(seg.path(ext)+".tmp", seg.path(ext), false)
		}
	}
	if err != nil {
		for _, ext := range exts {
			_ = s.fs.Remove(seg.path(ext) + ".tmp")
		}
		return err
	}
	return s.fs.SyncDir(seg.dir)
}

// recRecordGap records a gap unless the same range is recorded already (a
// re-run finishing an interrupted split).
func (s *Store) recRecordGap(dir string, g Gap) error {
	gaps, err := ReadGaps(dir)
	if err != nil {
		return err
	}
	for _, old := range gaps {
		if old.From == g.From && old.To == g.To {
			return nil
		}
	}
	return s.recordGap(dir, g)
}

// QuarantineEntry is a piece of saved data in the quarantine: the bytes
// and the note saying where they came from.
type QuarantineEntry struct {
	Topic          string
	Partition      int
	Note           string // path of the JSON note
	Data           string // path of the saved bytes
	DataBytes      int64  // their size on disk, -1 when the file is missing
	Source         string // file they were cut from
	Pos, Length    int64  // where in it, and how many
	ExpectedOffset uint64
	Reason         string
	Time           time.Time // when they were saved
}

// QuarantineEntries lists the quarantine of a topic's partitions (topic
// "": every topic; partition < 0: every partition), oldest first.
// Unreadable notes are skipped.
func (s *Store) QuarantineEntries(topic string, partition int) ([]QuarantineEntry, error) {
	root := filepath.Join(s.dir, QuarantineDir)
	var topics []string
	if topic != "" {
		if err := format.ValidateTopic(topic); err != nil {
			return nil, err
		}
		topics = []string{topic}
	} else {
		entries, err := os.ReadDir(root)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() && format.ValidateTopic(e.Name()) == nil {
				topics = append(topics, e.Name())
			}
		}
	}
	var out []QuarantineEntry
	for _, t := range topics {
		pentries, err := os.ReadDir(filepath.Join(root, t))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, pe := range pentries {
			p, err := format.ParsePartition(pe.Name())
			if err != nil || !pe.IsDir() || (partition >= 0 && p != partition) {
				continue
			}
			dir := filepath.Join(root, t, pe.Name())
			files, err := os.ReadDir(dir)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				if !strings.HasSuffix(f.Name(), ".json") || !f.Type().IsRegular() {
					continue
				}
				e, ok := recReadNote(filepath.Join(dir, f.Name()))
				if !ok {
					continue
				}
				e.Topic, e.Partition = t, p
				out = append(out, e)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b QuarantineEntry) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Note, b.Note))
	})
	return out, nil
}

func recReadNote(path string) (QuarantineEntry, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return QuarantineEntry{}, false
	}
	var n quarantineNote
	// The data file lies beside the note: "." or ".." would make purge
	// remove a directory of the quarantine instead.
	if err := json.Unmarshal(b, &n); err != nil || n.Data == "" || n.Data == "." || n.Data == ".." || strings.ContainsRune(n.Data, filepath.Separator) {
		return QuarantineEntry{}, false
	}
	e := QuarantineEntry{Note: path, Data: filepath.Join(filepath.Dir(path), n.Data), DataBytes: -1,
		Source: n.Source, Pos: n.Pos, Length: n.Length, ExpectedOffset: n.ExpectedOffset, Reason: n.Reason}
	e.Time, _ = time.Parse(time.RFC3339Nano, n.Time)
	if fi, err := os.Stat(e.Data); err == nil {
		e.DataBytes = fi.Size()
	}
	return e, true
}

// PurgeQuarantine deletes a quarantine entry for good: its note first,
// so that an interruption leaves saved bytes without a note (which
// recover removes) rather than a note without its bytes.
func (s *Store) PurgeQuarantine(e QuarantineEntry) error {
	if err := s.fs.Remove(e.Note); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := s.fs.Remove(e.Data); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return s.fs.SyncDir(filepath.Dir(e.Note))
}
