package logstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// Following a partition (tail -f) reads it as an Iterator does and then
// waits for what any process appends. It relies on these facts:
//
//   - A writer writes the old segment whole before it creates the next
//     one's files. So once a listing shows a segment after the one being
//     read, a read made after that listing sees the old one's last bytes:
//     a record failing there is corrupt (SPEC §2), and at its clean end
//     reading moves on. Without a later segment, a failing record with
//     nothing valid after it is incomplete, and is waited for.
//   - Bytes before the valid end of a segment never change; after it they
//     may (recover cuts a torn tail, a writer appends there again). The
//     read buffer is dropped whenever reading stops at the end, so bytes
//     read before a cut are never taken for bytes after it.
//   - Retention renames and unlinks segment files: the open one keeps
//     working. Segments are listed and opened through one descriptor of
//     the partition directory, so a directory swapped in by copy-partition
//     --force is never mixed with the old one: every listing first checks
//     that the path still names that directory, and switches when not.
//   - One inotify watch on the directory wakes the follower for appends,
//     new and deleted segments and the directory going; without inotify
//     it polls. Either way an idle follower does nothing between wakeups.

// defaultFollowPoll is how often a follower looks for new data when it
// cannot watch the partition.
const defaultFollowPoll = 100 * time.Millisecond

// followRecheck is how often a follower watching with inotify looks at the
// partition anyway: a safety net for what events cannot tell (a directory
// swapped while the watch was being set up), rare enough to cost nothing.
const followRecheck = 2 * time.Second

// maxOpenTries bounds how often a segment a listing named may be found
// deleted before it could be opened. Each try lists anew; only retention
// deleting segment after segment faster than we list needs another.
const maxOpenTries = 1000

// FollowOptions configure Follow.
type FollowOptions struct {
	// Poll is how often to look for new data when inotify cannot watch
	// the partition (unavailable, or out of watches); 0 means 100ms.
	Poll time.Duration
	// NoInotify forces polling (for tests and odd filesystems).
	NoInotify bool
	// Warn receives warnings: records removed by retention before they
	// could be read (and where reading jumps to), the partition directory
	// replaced, inotify unavailable (falling back to polling).
	Warn func(msg string)
}

// Follower reads a partition's records in offset order and waits for more,
// like tail -f, in constant memory (one record aside). It is not safe for
// concurrent use; cancel the context given to Next to stop a wait.
type Follower struct {
	dir, name string
	opts      FollowOptions
	recheck   time.Duration

	d     *os.File // the partition directory segments are listed and opened through
	dfd   int      // d's descriptor
	dirID fileID
	watch *dirWatch // nil when polling
	dirty bool      // the directory's entries may have changed since the last listing
	gone  bool      // nothing is at the directory's path (warned)
	jump  jumpWhy   // why a reopen would find its offset missing

	seg  segment
	f    *os.File // the open segment's .log; nil when none is open
	idx  *os.File // its .index, if any
	sc   *segfile.Scanner
	from uint64 // records below it are passed over
	// fresh: the scan holds no bytes read before reading last stopped.
	fresh bool
	// later: a listing made before the open segment's bytes were last read
	// named a segment after it, so it is closed. laterBase is the first
	// such segment's base: if it is gone when reading moves on, retention
	// removed it unread.
	later     bool
	laterBase uint64
	waiting   struct { // the last tail found incomplete (not corrupt)
		pos, size int64
		ok        bool
	}

	rec    Record // what Record returns
	err    error
	closed bool
}

type fileID struct{ dev, ino uint64 }

// jumpWhy says, for a warning, why offsets are missing where reading
// (re)starts.
type jumpWhy int

const (
	jumpStart    jumpWhy = iota // Follow asked for offsets below the start
	jumpLost                    // retention removed them before they were read
	jumpReplaced                // the directory swapped in does not hold them
)

// errReplaced unwinds what the follower was doing in a directory that
// turned out to have been replaced (it has switched to the new one).
var errReplaced = errors.New("logstore: partition directory replaced")

// Follow returns a follower of the partition directory dir (name is how
// messages refer to it: "orders/0") from offset from on. from below the
// partition's start starts at the start (with a warning if records are
// missing), from past the end waits for it. A directory that does not
// exist is ErrPartitionNotFound.
func Follow(dir, name string, from uint64, opts FollowOptions) (*Follower, error) {
	if opts.Poll <= 0 {
		opts.Poll = defaultFollowPoll
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	f := &Follower{dir: dir, name: name, opts: opts, recheck: followRecheck, from: from, dirty: true, jump: jumpStart, dfd: -1}
	// The watch comes first: whatever happens after it, it reports.
	if !opts.NoInotify {
		w, err := newDirWatch(dir)
		switch {
		case err == nil:
			f.watch = w
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%s: %w", name, ErrPartitionNotFound)
		default:
			f.warnf("cannot watch %s with inotify (%v); polling every %v", name, err, opts.Poll)
		}
	}
	dfd, id, err := openDirFD(dir)
	if err != nil {
		f.Close()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", name, ErrPartitionNotFound)
		}
		return nil, fmt.Errorf("follow %s: %w", name, err)
	}
	f.d, f.dfd, f.dirID = os.NewFile(uintptr(dfd), dir), dfd, id
	// Open where reading starts now, so a warning about missing offsets
	// comes before any record.
	if _, err := f.openFor(); err != nil && !errors.Is(err, errReplaced) {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Next blocks until the next record is there (true), ctx is done (false,
// with Err() nil: the follower can go on with another context), or an
// error stops it (false, Err()).
func (f *Follower) Next(ctx context.Context) bool {
	if f.closed || f.err != nil {
		return false
	}
	for ctx.Err() == nil {
		got, err := f.step()
		if err != nil {
			f.err = err
			return false
		}
		if got {
			return true
		}
		if err := f.wait(ctx); err != nil {
			f.err = err
			return false
		}
	}
	return false
}

// Record returns the current record. It and its Key and Value are valid
// until the next call to Next.
func (f *Follower) Record() *Record {
	f.rec.set(f.sc.Header(), f.sc.Bytes(), f.sc.RecordPos())
	return &f.rec
}

// Err is the error that stopped Next: a *CorruptionError (path, byte
// position, expected offset) for a corrupt record, or an I/O error. It is
// nil when Next stopped because its context was done.
func (f *Follower) Err() error { return f.err }

// Position is the offset of the next record the follower will return (or
// wait for): what a consumer group commits.
func (f *Follower) Position() uint64 {
	if f.sc == nil {
		return f.from
	}
	return max(f.from, f.sc.NextOffset())
}

// SkipCorrupt goes on after the corrupt record that stopped Next (Err is a
// *CorruptionError), as Iterator.SkipCorrupt does: where valid data
// resumes by the one rule, or else at the next segment. The offsets in
// between are lost to the damage. It reports whether following can go on;
// if so, Err is cleared.
func (f *Follower) SkipCorrupt() bool {
	var ce *CorruptionError
	if f.closed || !errors.As(f.err, &ce) {
		return false
	}
	f.err = nil
	if f.sc == nil || f.sc.Damage() != ce.Damage || f.sc.Resume() {
		return true
	}
	if f.later {
		f.sc.SkipToEnd() // nothing valid after it: on to the next segment
		return true
	}
	// An active segment with nothing valid after the damage any more (cut
	// meanwhile) is read again from there: incomplete now, or damaged.
	f.forget()
	return true
}

// Close releases the follower's files and its inotify instance.
func (f *Follower) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	f.closeSeg()
	var err error
	if f.d != nil {
		err = f.d.Close()
		f.d = nil
	}
	if f.watch != nil {
		if werr := f.watch.close(); err == nil {
			err = werr
		}
		f.watch = nil
	}
	return err
}

// step reads on without blocking: true with a record, false without an
// error when there is nothing to read yet.
func (f *Follower) step() (bool, error) {
	for {
		if f.f == nil {
			if f.watch != nil && !f.dirty && !f.gone {
				return false, nil // nothing to open, and nothing changed
			}
			ok, err := f.openFor()
			if errors.Is(err, errReplaced) {
				continue
			}
			if err != nil || !ok {
				return false, err
			}
		}
		if f.waiting.ok && !f.dirty {
			// Nothing new since the tail was found incomplete: not judged
			// again until the file changes.
			size, err := f.sc.Size()
			if err != nil {
				return false, fmt.Errorf("read %s: %w", f.f.Name(), err)
			}
			if size == f.waiting.size {
				return false, nil
			}
		}
		f.waiting.ok = false
		if f.sc.Next() {
			f.fresh = false
			if f.sc.Header().Offset < f.from {
				continue
			}
			return true, nil
		}
		if err := f.sc.Err(); err != nil {
			return false, fmt.Errorf("read %s: %w", f.f.Name(), err)
		}
		if !f.fresh {
			f.forget() // judge only bytes read now
			continue
		}
		more, err := f.atEnd()
		if errors.Is(err, errReplaced) {
			continue
		}
		if err != nil || !more {
			return false, err
		}
	}
}

// atEnd decides what the scan stopping where it did, on bytes read just
// now, means: the clean end of a closed segment (move on: true), damage
// (a *CorruptionError), or the end of the data for now (false: wait).
// True also asks to read again, when something changed.
func (f *Follower) atEnd() (bool, error) {
	sc := f.sc
	pos := sc.Pos()
	if grew, err := sc.Grow(); err != nil {
		return false, fmt.Errorf("read %s: %w", f.f.Name(), err)
	} else if grew && sc.Limit() > pos {
		return true, nil // appended to since: read on
	}
	size := sc.Limit()
	if size < pos {
		// Cut below records already read: neither recover nor a writer
		// does that. Find the offset again.
		f.closeSeg()
		f.dirty, f.jump = true, jumpLost
		return true, nil
	}
	if !f.later && (f.watch == nil || f.dirty || f.gone) {
		segs, err := f.list()
		if err != nil {
			return false, err
		}
		if i := segAfter(segs, f.seg.base); i < len(segs) {
			// Closed now: read it once more to its true end.
			f.later, f.laterBase = true, segs[i].base
			if i == 0 || segs[i-1].base != f.seg.base {
				// It is gone itself: retention removed it, and with it
				// whatever followed it before segs[i]. Offsets between its
				// end and segs[i] were removed unread (moveOn warns), not
				// a gap.
				f.laterBase = f.seg.base
			}
			sc.SetActive(false)
			f.forget()
			return true, nil
		}
	}
	d := sc.Damage()
	if f.later {
		if d == nil {
			return f.moveOn()
		}
		return false, corruption(d)
	}
	if d == nil || d.Class == segfile.Incomplete {
		// The end of the data for now: a record being written, or torn by a
		// crash and waiting for recover or the next writer to cut it.
		f.waiting.pos, f.waiting.size, f.waiting.ok = pos, size, true
		f.forget()
		return false, nil
	}
	return false, corruption(d)
}

// moveOn leaves the open segment, read to its clean end and closed, for
// the next one: the first listed after it, or a later one when the
// offsets wanted start there.
func (f *Follower) moveOn() (bool, error) {
	for range maxOpenTries {
		segs, err := f.list()
		if err != nil {
			return false, err
		}
		i := segAfter(segs, f.seg.base)
		if i == len(segs) {
			// What followed it is gone again (a salvage undone?): it is the
			// last one after all.
			f.later = false
			f.sc.SetActive(true)
			f.forget()
			return false, nil
		}
		c := segs[i]
		if c.base > f.laterBase {
			// Segments listed after this one before are gone: retention
			// removed them unread. (Offsets between the end of this one and
			// laterBase are a gap, which is skipped silently.)
			if lost := max(f.Position(), f.laterBase); lost < c.base {
				f.warnLost(jumpLost, lost, c.base)
			}
			f.laterBase = c.base
		}
		for i+1 < len(segs) && segs[i+1].base <= f.from {
			i++
		}
		floor := f.sc.NextOffset() // where this one's valid data ends
		ok, err := f.openSeg(segs[i], segs[i+1:], floor)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, fmt.Errorf("follow %s: segments keep disappearing before they can be opened", f.name)
}

// openFor opens the segment holding Position, or the first after it. It
// returns false when the partition has no segment yet.
func (f *Follower) openFor() (bool, error) {
	f.from = f.Position()
	for range maxOpenTries {
		segs, err := f.list()
		if err != nil || len(segs) == 0 {
			return false, err
		}
		i := max(sort.Search(len(segs), func(i int) bool { return segs[i].base > f.from })-1, 0)
		ok, err := f.openSeg(segs[i], segs[i+1:], 0)
		if err != nil {
			return false, err
		}
		if ok {
			if start := segs[i].base; f.from < start {
				f.warnLost(f.jump, f.from, start)
			}
			f.jump = jumpLost
			return true, nil
		}
	}
	return false, fmt.Errorf("follow %s: segments keep disappearing before they can be opened", f.name)
}

// openSeg opens seg for reading from offset from on, floor being where
// the segment read before ends; after are the segments listed after it
// (before it was opened). It returns false when seg is gone.
func (f *Follower) openSeg(seg segment, after []segment, floor uint64) (bool, error) {
	name := format.SegmentName(seg.base, format.LogExt)
	fd, err := openIn(f.dfd, name)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "open", Path: seg.path(format.LogExt), Err: err}
	}
	f.closeSeg()
	f.f = os.NewFile(uintptr(fd), seg.path(format.LogExt))
	f.seg = seg
	f.later = len(after) > 0
	if f.later {
		f.laterBase = after[0].base
	}
	f.waiting.ok = false
	sseg := segfileSegment(seg, osFile{f.f}, nil, floor, !f.later)
	sseg.OpenIndex = func() *segfile.Index {
		xfd, err := openIn(f.dfd, format.SegmentName(seg.base, format.IndexExt))
		if err != nil {
			return nil
		}
		f.idx = os.NewFile(uintptr(xfd), seg.path(format.IndexExt))
		fi, err := f.idx.Stat()
		if err != nil {
			return nil
		}
		return segfile.NewIndex(osFile{f.idx}, fi.Size())
	}
	f.sc, err = segfile.NewScanner(sseg, -1, segfile.Options{Whole: true})
	if err == nil && f.from > seg.base {
		err = f.sc.SeekOffset(f.from)
	}
	if err != nil {
		f.closeSeg()
		return false, fmt.Errorf("read %s: %w", seg.path(format.LogExt), err)
	}
	f.fresh = true
	return true, nil
}

func (f *Follower) closeSeg() {
	if f.f != nil {
		f.from = f.Position() // where reading goes on, in whatever is opened next
		f.sc.Close()
		f.f.Close()
		f.f, f.sc = nil, nil
	}
	if f.idx != nil {
		f.idx.Close()
		f.idx = nil
	}
}

// forget drops what the scan read and knew of the file: the next read is
// of the file as it is now.
func (f *Follower) forget() {
	if err := f.sc.Reread(); err != nil {
		f.err = fmt.Errorf("read %s: %w", f.f.Name(), err)
	}
	f.fresh = true
}

// list lists the segments of the directory being read, after checking that
// it is still the one at the path (errReplaced when it was not: the
// follower has switched to the new one).
func (f *Follower) list() ([]segment, error) {
	replaced, err := f.checkDir(false)
	if err != nil {
		return nil, err
	}
	if replaced {
		return nil, errReplaced
	}
	f.dirty = false
	segs, err := stableSegments(f.dir, func() ([]os.DirEntry, error) {
		if _, err := f.d.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("list %s: %w", f.dir, err)
		}
		entries, err := f.d.ReadDir(-1)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("list %s: %w", f.dir, err)
		}
		return entries, err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // removed: it holds nothing any more
	}
	return segs, err
}

// segAfter is the index of the first segment with a base above base.
func segAfter(segs []segment, base uint64) int {
	return sort.Search(len(segs), func(i int) bool { return segs[i].base > base })
}

// checkDir compares the directory at the path with the one being read.
// Gone, it warns once and keeps reading what it has; replaced, it switches
// to the new one (true). rewatch renews the inotify watch even when the
// directory is the same (it was moved away and back).
func (f *Follower) checkDir(rewatch bool) (bool, error) {
	var st unix.Stat_t
	err := unix.Stat(f.dir, &st)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		if !f.gone {
			f.gone = true
			f.warnf("the partition directory of %s (%s) is gone; waiting for it to come back", f.name, f.dir)
		}
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "stat", Path: f.dir, Err: err}
	}
	wasGone := f.gone
	f.gone = false
	if (fileID{dev: uint64(st.Dev), ino: st.Ino}) == f.dirID {
		if rewatch || wasGone {
			f.addWatch()
		}
		return false, nil
	}
	return f.replace()
}

// replace switches to the directory now at the path, to read on from the
// same offset there.
func (f *Follower) replace() (bool, error) {
	dfd, id, err := openDirFD(f.dir)
	if errors.Is(err, fs.ErrNotExist) {
		f.gone = true // gone again already: look later
		return false, nil
	}
	if err != nil {
		return false, err
	}
	f.closeSeg()
	f.d.Close()
	f.d, f.dfd, f.dirID = os.NewFile(uintptr(dfd), f.dir), dfd, id
	f.addWatch()
	f.from = f.Position()
	f.dirty, f.later, f.jump = true, false, jumpReplaced
	f.warnf("the partition directory of %s (%s) was replaced; reading on from offset %d in the new one", f.name, f.dir, f.from)
	return true, nil
}

// addWatch watches the directory at the path, falling back to polling
// when inotify cannot.
func (f *Follower) addWatch() {
	if f.watch == nil {
		return
	}
	err := f.watch.add(f.dir)
	switch {
	case err == nil:
	case errors.Is(err, unix.ENOENT):
		f.gone = true // polled for until it is back
	default:
		f.fallBack(err)
	}
}

func (f *Follower) fallBack(err error) {
	f.warnf("cannot watch %s with inotify any more (%v); polling every %v", f.name, err, f.opts.Poll)
	f.watch.close()
	f.watch = nil
}

// wait blocks until something may have changed, or ctx is done.
func (f *Follower) wait(ctx context.Context) error {
	if f.watch == nil || f.gone {
		t := time.NewTimer(f.opts.Poll)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			f.dirty = true
		}
		return nil
	}
	ev, err := f.watch.wait(ctx, f.recheck)
	if err != nil {
		f.fallBack(err)
		return nil
	}
	if ev == 0 && ctx.Err() != nil {
		return nil
	}
	if ev == 0 || ev&(evEntries|evSelf) != 0 {
		f.dirty = true
	}
	if ev == 0 || ev&evSelf != 0 {
		_, err := f.checkDir(ev&evSelf != 0)
		return err
	}
	return nil
}

// warnLost warns that offsets [from, to) are missing where reading goes on.
func (f *Follower) warnLost(why jumpWhy, from, to uint64) {
	what, pl := fmt.Sprintf("offset %d", from), to-from > 1
	if pl {
		what = fmt.Sprintf("offsets %d..%d", from, to-1)
	}
	switch why {
	case jumpStart:
		f.warnf("%s of %s %s no longer available (removed by retention); starting at %d", what, f.name, plural(pl, "is", "are"), to)
	case jumpReplaced:
		f.warnf("%s of %s %s not in the new partition directory; going on at %d", what, f.name, plural(pl, "is", "are"), to)
	default:
		f.warnf("%s of %s %s removed by retention before %s read; going on at %d", what, f.name,
			plural(pl, "was", "were"), plural(pl, "it was", "they were"), to)
	}
}

func plural(pl bool, one, many string) string {
	if pl {
		return many
	}
	return one
}

func (f *Follower) warnf(msg string, args ...any) { f.opts.Warn(fmt.Sprintf(msg, args...)) }

// openDirFD opens a directory and says which one it is.
func openDirFD(dir string) (int, fileID, error) {
	for {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, fileID{}, &os.PathError{Op: "open", Path: dir, Err: err}
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, fileID{}, &os.PathError{Op: "fstat", Path: dir, Err: err}
		}
		return fd, fileID{dev: uint64(st.Dev), ino: st.Ino}, nil
	}
}

// openIn opens a file of the directory dfd read-only.
func openIn(dfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
