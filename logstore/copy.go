package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// ErrPartitionExists means a copy's destination partition is there
// already, and replacing it was not asked for.
var ErrPartitionExists = errors.New("destination partition exists")

// ErrNotACopy means a copy's destination partition holds other data than
// the source's, and CopyOptions.OnlyOntoCopy forbade replacing it.
var ErrNotACopy = errors.New("destination holds another partition")

// CopyOptions configure CopyPartition, ExportPartition and
// ImportPartition.
type CopyOptions struct {
	ToTopic     string // the destination topic; "" keeps the source's
	ToPartition int    // the destination partition; < 0 keeps the source's
	// Force replaces an existing destination partition, atomically, under
	// its writer lock.
	Force bool
	// OnlyOntoCopy makes a forced copy refuse, with ErrNotACopy, a
	// destination partition that is no earlier copy of the source or
	// differs from it, instead of replacing it in full.
	OnlyOntoCopy bool
	// Throttle caps the copy at this many bytes a second; 0 is no limit.
	Throttle int64
	// LockWait is how long to retry a held lock: 0 means DefaultLockWait.
	LockWait time.Duration
	// Progress, if set, is told the bytes copied so far, out of total.
	Progress func(done, total int64)
	// Interrupt, once closed, makes the copy give up as a failure does
	// (nothing of it stays) with ErrInterrupted, unless it is placed
	// already.
	Interrupt <-chan struct{}
}

// CopyReport says what a copy did.
type CopyReport struct {
	From     string // source topic/partition
	To       string // destination topic/partition
	Dir      string // the destination partition directory; "" for an export
	Segments int
	Records  uint64
	Bytes    int64 // of .log files
	// IndexBytes counts the .index and .timeindex bytes written.
	IndexBytes int64
	// IndexesRebuilt counts segments whose indexes were damaged, missing
	// or short in the source and were rebuilt in the copy.
	IndexesRebuilt int
	Start, Next    uint64 // the copy's offsets: first held, next to write
	Replaced       bool   // an existing destination partition was replaced
	// Kept counts the segments a forced copy kept of the earlier copy it
	// replaced, byte-identical to the source's; ReusedBytes the .log
	// bytes it took from there (kept segments', and the prefix of the one
	// that was active). Bytes - ReusedBytes came from the source.
	Kept        int
	ReusedBytes int64
	// Rebuilt says why a forced copy onto an existing partition reused
	// nothing of it, or stopped reusing it: "" when it reused all it could
	// or there was nothing to reuse.
	Rebuilt  string
	Duration time.Duration
}

// CopyPartition copies a partition of the store, possibly while it is
// being appended to, to dst (docs/format.md §7): closed segments whole, the active
// one up to its last valid record. The copy is built in a temporary
// directory beside the destination, checked record by record (a damaged
// source is refused, saying where), its indexes kept or rebuilt, synced,
// and only then renamed into place. An existing destination partition is
// refused unless opts.Force.
func (s *Store) CopyPartition(topic string, part int, dst *Store, opts CopyOptions) (rep CopyReport, err error) {
	began := time.Now()
	opts = opts.withDefaults(topic, part)
	rep = CopyReport{From: fmt.Sprintf("%s/%d", topic, part), To: fmt.Sprintf("%s/%d", opts.ToTopic, opts.ToPartition)}
	if err := format.ValidateTopic(opts.ToTopic); err != nil {
		return rep, err
	}
	src, err := s.openCopySource(topic, part, opts.LockWait, opts.Interrupt)
	if err != nil {
		return rep, err
	}
	defer src.close()
	if same, err := samePath(src.dir, dst.PartitionDir(opts.ToTopic, opts.ToPartition)); err != nil || same {
		if err == nil {
			err = fmt.Errorf("%s is both the source and the destination of the copy", src.dir)
		}
		return rep, err
	}
	b, err := dst.beginBuild(opts, buildMeta{settings: src.settings, gaps: src.gaps,
		gapCheck: newGapCheck(filepath.Join(src.dir, GapsFile), src.gapList), gapsAdvice: gapsAdvice}, &rep)
	if err != nil {
		return rep, err
	}
	defer b.end(&err)
	reuse, why, err := b.planReuse(src, src.lock)
	if err != nil {
		return rep, err
	}
	defer reuse.close()
	if why != "" && opts.OnlyOntoCopy {
		return rep, b.notACopy(why)
	}
	pace := newPacer(opts.Throttle, src.total, opts.Progress, opts.Interrupt)
	for _, cs := range src.segs {
		if err := b.takeSegment(cs, reuse, pace); err != nil {
			return rep, err
		}
	}
	if reuse != nil {
		why = reuse.stopped
	}
	rep.Rebuilt = why
	if err := b.finish(); err != nil {
		return rep, err
	}
	if err := b.place(src.lock); err != nil {
		return rep, err
	}
	rep.Duration = time.Since(began)
	return rep, nil
}

func (o CopyOptions) withDefaults(topic string, part int) CopyOptions {
	if o.ToTopic == "" {
		o.ToTopic = topic
	}
	if o.ToPartition < 0 {
		o.ToPartition = part
	}
	if o.LockWait == 0 {
		o.LockWait = DefaultLockWait
	}
	return o
}

// samePath reports whether a and b are one directory (b need not exist).
func samePath(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil && os.SameFile(fa, fb), err
}

// partitionBuild is a partition being built in a hidden temporary
// directory, the build's root, flock'ed for as long as it is built so that
// the cleanup of leftovers (by the next copy, by recover) takes only those
// of copies that died:
//
//   - into an existing topic, the root is <topic>/.copy-<partition>-<random>.tmp,
//     renamed to be the partition;
//   - into a topic the copy makes, the root is <data-dir>/.copy-<topic>-<random>.tmp,
//     holding the topic's settings and the partition directory, and it is
//     renamed to be the topic: a new topic appears only with its first
//     partition in place, so no command over the data directory ever
//     meets a topic without partitions. Should the topic appear meanwhile
//     (another copy into it placed a partition first), the partition goes
//     into it as into any existing topic, and the topic keeps the
//     settings it has.
type partitionBuild struct {
	s           *Store
	opts        CopyOptions
	rep         *CopyReport
	topicDir    string
	root        string // what the build made; removed unless placed
	rootLock    *fsx.DirLock
	tmp         string // the partition being built: root, or in it
	final       string
	newTopic    bool // root is the topic being built
	placed      bool // the partition is in place
	topicPlaced bool // root was renamed to be the topic
	next        uint64
	meta        buildMeta
	syncer      *syncer
}

// buildMeta is what a build carries besides segments: the topic's
// settings file and the partition's gaps file as they were read (nil:
// none), and a check of the gaps against the segments built.
type buildMeta struct {
	settings, gaps []byte
	gapCheck       *gapCheck
	gapsAdvice     string // what to do with gaps that are wrong
}

func (s *Store) beginBuild(opts CopyOptions, meta buildMeta, rep *CopyReport) (*partitionBuild, error) {
	b := &partitionBuild{s: s, opts: opts, rep: rep, topicDir: filepath.Join(s.dir, opts.ToTopic),
		final: s.PartitionDir(opts.ToTopic, opts.ToPartition), meta: meta}
	rep.Dir = b.final
	if opts.ToPartition < 0 {
		return nil, fmt.Errorf("invalid destination partition %d", opts.ToPartition)
	}
	if err := s.mkdirAll(s.dir); err != nil {
		return nil, fmt.Errorf("destination data directory: %w", err)
	}
	// What interrupted copies into the topic left goes first: a topic an
	// older seglog began and never gave a partition is still ours to make.
	_, _, _ = s.halfMadeLeftoverLocked(b.topicDir, false)
	switch fi, err := os.Stat(b.topicDir); {
	case errors.Is(err, fs.ErrNotExist):
		b.newTopic = true
	case err != nil:
		return nil, fmt.Errorf("destination topic %s: %w", opts.ToTopic, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("destination topic %s: %s is not a directory", opts.ToTopic, b.topicDir)
	}
	if b.newTopic {
		s.removeDeadBuilds(s.dir, opts.ToTopic)
		b.root = tempName(s.dir, buildPrefix, opts.ToTopic)
		b.tmp = filepath.Join(b.root, strconv.Itoa(opts.ToPartition))
	} else {
		s.removeDeadBuilds(b.topicDir, "")
		b.root = tempName(b.topicDir, buildPrefix, strconv.Itoa(opts.ToPartition))
		b.tmp = b.root
	}
	if err := s.fs.Mkdir(b.root, 0o755); err != nil {
		return nil, b.named(err)
	}
	var err error
	if b.rootLock, err = fsx.TryLock(b.root); err != nil {
		s.removeAll(b.root)
		return nil, b.named(err)
	}
	if b.newTopic {
		if meta.settings != nil {
			err = s.writeFileAtomic(filepath.Join(b.root, settingsFile), meta.settings)
		}
		if err == nil {
			err = s.fs.Mkdir(b.tmp, 0o755)
		}
		if err != nil {
			s.removeAll(b.root)
			b.rootLock.Unlock()
			return nil, b.named(err)
		}
	}
	b.syncer = startSyncer()
	return b, nil
}

// named adds the destination to an error of the filesystem that names a
// path inside the build: a temporary name the user never chose.
func (b *partitionBuild) named(err error) error {
	inside := func(p string) bool { return p == b.root || strings.HasPrefix(p, b.root+string(filepath.Separator)) }
	var pe *fs.PathError
	var le *os.LinkError
	if errors.As(err, &pe) && inside(pe.Path) || errors.As(err, &le) && (inside(le.Old) || inside(le.New)) {
		return fmt.Errorf("destination %s (%s): %w", b.rep.To, b.final, err)
	}
	return err
}

// create makes a file of the segment in the build.
func (b *partitionBuild) create(seg segment, ext string) (file, error) {
	return b.s.fs.OpenFile(seg.path(ext), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

// takeSegment puts one source segment into the build: kept from the
// destination being replaced when it is identical there, else copied
// (after the destination's prefix of it, when it has one).
func (b *partitionBuild) takeSegment(cs copySegment, reuse *reusePlan, pace *pacer) error {
	prefix, whole, err := reuse.reusable(cs, pace)
	if err != nil {
		return err
	}
	if reuse != nil && reuse.stopped != "" && b.opts.OnlyOntoCopy {
		return b.notACopy(reuse.stopped)
	}
	if whole {
		kept, err := b.keepSegment(cs, reuse.dir)
		if err != nil || kept {
			b.rep.Kept += btoi(kept)
			b.rep.ReusedBytes += cs.log * int64(btoi(kept))
			return err
		}
	}
	from := ""
	if prefix > 0 && !whole {
		from = segment{dir: reuse.dir, base: cs.seg.base}.path(format.LogExt)
		b.rep.ReusedBytes += prefix
	} else {
		prefix = 0
	}
	return b.copySegment(cs, from, prefix, pace)
}

func (b *partitionBuild) notACopy(why string) error {
	return fmt.Errorf("%w: %s (%s): %s", ErrNotACopy, b.rep.To, b.final, why)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// copySegment copies one source segment into the build: the index files'
// bytes, then the .log a piece at a time, each piece checked as soon as it
// is copied (it is in the cache then). The first prefix bytes of the .log
// are taken from the file at reuse, which holds them too (compared).
func (b *partitionBuild) copySegment(cs copySegment, reuse string, prefix int64, pace *pacer) error {
	seg := segment{dir: b.tmp, base: cs.seg.base}
	var files []file
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, x := range []struct {
		ext string
		n   int64
	}{{format.IndexExt, cs.index}, {format.TimeIndexExt, cs.timeidx}, {format.LogExt, cs.log}} {
		f, err := b.create(seg, x.ext)
		if err != nil {
			return err
		}
		files = append(files, f)
		if x.ext == format.LogExt {
			break
		}
		if err := copyFile(f, cs.seg.path(x.ext), 0, x.n, pace); err != nil {
			return err
		}
	}
	check := newSegmentCheck(cs.seg.path(format.LogExt), seg.base, cs.interval)
	if err := check.compareIndexes(seg); err != nil {
		return err
	}
	src, err := fsx.OpenRead(cs.seg.path(format.LogExt))
	if err != nil {
		return err
	}
	defer src.Close()
	local := src
	if prefix > 0 {
		if local, err = fsx.OpenRead(reuse); err != nil {
			return err
		}
		defer local.Close()
	}
	copied, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		return err
	}
	defer copied.Close()
	// Two cores and the disk at work: the kernel copies piece i+1 while
	// piece i is read back and checked, and written to disk.
	type piece struct{ at, n int64 }
	pieces := make(chan piece, 2)
	stop := make(chan struct{})
	var copyErr error
	go func() {
		defer close(pieces)
		for at := int64(0); at < cs.log; {
			n, from := min(pace.piece(), cs.log-at), src
			if at < prefix {
				n, from = min(copyPiece, prefix-at), local
			}
			if copyErr = files[2].CopyFrom(from, at, n); copyErr != nil {
				return
			}
			// The disk writes each piece while the next ones are copied,
			// rather than all of a segment when it ends: the final sync
			// then waits for the last piece only. A hint; errors surface
			// in that sync.
			_ = files[2].StartWriteback(at, n)
			select {
			case pieces <- piece{at, n}:
			case <-stop:
				return
			}
			at += n
		}
	}()
	// Read back in pieces that stay in the CPU's cache for the check.
	buf := make([]byte, 512<<10)
	for p := range pieces {
		if err == nil {
			// The prefix was counted when it was compared.
			if _, err = readFullAt(copied, buf, p.at, p.n, check); err == nil && p.at >= prefix {
				err = pace.add(p.n)
			}
			if err != nil {
				close(stop)
			}
		}
	}
	if err == nil {
		err = copyErr // read only once pieces is closed: the copier is done
	}
	if err != nil {
		return err
	}
	err = b.endSegment(seg, check, files)
	files = nil
	return err
}

// copyPiece is how much of a .log a copy moves at once: large enough for
// few system calls, small enough for the check to follow close behind.
const copyPiece = 8 << 20

// readFullAt reads [at, at+n) of f through buf and writes it to w.
func readFullAt(f *os.File, buf []byte, at, n int64, w interface{ Write([]byte) (int, error) }) (int64, error) {
	var done int64
	for done < n {
		m, err := f.ReadAt(buf[:min(int64(len(buf)), n-done)], at+done)
		if m > 0 {
			if _, werr := w.Write(buf[:m]); werr != nil {
				return done, werr
			}
			done += int64(m)
		}
		if done < n && err != nil {
			return done, fmt.Errorf("read back %s: %w", f.Name(), err)
		}
	}
	return done, nil
}

// copyFile appends [from, from+n) of the file at path to f.
func copyFile(f file, path string, from, n int64, pace *pacer) error {
	if n == 0 {
		return nil
	}
	src, err := fsx.OpenRead(path)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := f.CopyFrom(src, from, n); err != nil {
		return err
	}
	return pace.add(n)
}

// endSegment finishes a built segment whose files were written: the
// check's verdict, its indexes fixed, the segment's place after the one
// before (no overlap), then writeback started and the files handed to the
// syncer, so that the next segment is copied while this one goes to disk.
// The build takes the files over, whatever happens.
func (b *partitionBuild) endSegment(seg segment, check *segmentCheck, files []file) error {
	err := check.finish()
	rebuilt := false
	if err == nil {
		rebuilt, err = check.fixIndexes(b.s.fs, seg)
	}
	if err == nil && b.rep.Segments > 0 && seg.base < b.next {
		err = &CorruptionError{Path: check.where, Pos: 0, Offset: int64(b.next), Reason: ErrOverlap}
	}
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return err
	}
	if b.rep.Segments == 0 {
		b.rep.Start = seg.base
	}
	b.rep.Segments++
	b.rep.Records += check.records()
	b.rep.Bytes += check.pos
	b.rep.IndexBytes += fileSize(seg.path(format.IndexExt)) + fileSize(seg.path(format.TimeIndexExt))
	if rebuilt {
		b.rep.IndexesRebuilt++
	}
	b.next = check.Next()
	b.rep.Next = b.next
	b.meta.gapCheck.segment(seg, b.next)
	for _, f := range files {
		if fi, err := f.Stat(); err == nil {
			_ = f.StartWriteback(0, fi.Size())
		}
		b.syncer.files <- f
	}
	return nil
}

// syncer syncs and closes the files of a build, in the background.
type syncer struct {
	files  chan file
	done   chan error
	closed bool
}

func startSyncer() *syncer {
	files := make(chan file, 64)
	s := &syncer{files: files, done: make(chan error, 1)}
	go func() {
		var err error
		for f := range files {
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		s.done <- err
	}()
	return s
}

// wait returns once every file handed over is synced and closed, with
// the first error. Later calls return nil.
func (s *syncer) wait() error {
	if s.closed {
		return nil
	}
	s.closed = true
	close(s.files)
	return <-s.done
}

// finish checks the gaps the partition records against its segments,
// syncs what is left of the build and adds the gaps file, then syncs the
// directory: the build is whole on disk.
func (b *partitionBuild) finish() error {
	b.meta.gapCheck.end(b.next)
	if err := b.meta.gapCheck.err(b.meta.gapsAdvice); err != nil {
		return err
	}
	if err := b.syncer.wait(); err != nil {
		return err
	}
	if b.meta.gaps != nil {
		if err := b.s.writeFileAtomic(filepath.Join(b.tmp, GapsFile), b.meta.gaps); err != nil {
			return err
		}
	}
	return b.s.fs.SyncDir(b.tmp)
}

// place puts the build in place: a new topic whole (see partitionBuild),
// else the partition into its topic.
func (b *partitionBuild) place(held *fsx.DirLock) error {
	if interrupted(b.opts.Interrupt) {
		return ErrInterrupted
	}
	for tries := 0; ; tries++ {
		if b.newTopic {
			if err := b.s.fs.SyncDir(b.root); err != nil {
				return err
			}
			err := b.s.fs.Rename(b.root, b.topicDir, true)
			if err == nil {
				b.placed, b.topicPlaced = true, true
				return b.s.fs.SyncDir(b.s.dir)
			}
			if !errors.Is(err, fs.ErrExist) && !errors.Is(err, unix.ENOTEMPTY) {
				return err
			}
		}
		err := b.placePartition(held)
		// A topic that appeared and went again (recover took a half-made
		// one away) is still the build's to make.
		if !b.newTopic || !errors.Is(err, errTopicGone) || tries == 2 {
			return err
		}
	}
}

// errTopicGone means the topic directory a partition was to go into is
// gone.
var errTopicGone = errors.New("destination topic went away")

// placePartition renames the partition built into place under the
// destination topic's maintenance lock (shared, as copies take it; held
// already when the source is the same topic): never over an existing
// partition, unless Force, which swaps the new one in under the old one's
// writer lock and then removes the old one.
func (b *partitionBuild) placePartition(held *fsx.DirLock) error {
	if held == nil || !held.IsOn(b.topicDir) {
		lock, err := lockDirShared(b.topicDir, "topic "+b.opts.ToTopic, b.opts.LockWait, b.opts.Interrupt)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", b.topicDir, errTopicGone)
		}
		if err != nil {
			return err
		}
		defer lock.Unlock()
	}
	err := b.s.fs.Rename(b.tmp, b.final, true)
	if err == nil {
		b.placed = true
		return b.s.fs.SyncDir(b.topicDir)
	}
	if !errors.Is(err, fs.ErrExist) && !errors.Is(err, unix.ENOTEMPTY) {
		return err
	}
	if !b.opts.Force {
		return fmt.Errorf("%w: %s (%s); use --force to replace it", ErrPartitionExists, b.rep.To, b.final)
	}
	lock, err := lockDirHow(b.final, "partition "+b.rep.To, false, b.opts.LockWait, b.opts.Interrupt)
	if err != nil {
		return err
	}
	err = b.s.fs.Exchange(b.tmp, b.final)
	if err == nil {
		b.placed, b.rep.Replaced = true, true
		err = b.s.fs.SyncDir(b.topicDir)
	}
	lock.Unlock()
	// b.tmp now holds the old partition: abort removes it.
	return err
}

// abort removes what the build made and did not place: all of it when it
// failed, the new topic's settings when its partition went into a topic
// that appeared meanwhile, the partition a forced copy replaced.
func (b *partitionBuild) abort() {
	_ = b.syncer.wait()
	switch {
	case b.newTopic && !b.topicPlaced:
		b.s.removeAll(b.root)
		_ = b.s.fs.SyncDir(b.s.dir)
	case !b.newTopic && (!b.placed || b.rep.Replaced):
		b.s.removeAll(b.root)
		_ = b.s.fs.SyncDir(b.topicDir)
	}
	b.rootLock.Unlock()
}

// end aborts (see abort) and names the destination in *err (see named).
func (b *partitionBuild) end(err *error) {
	b.abort()
	*err = b.named(*err)
}
