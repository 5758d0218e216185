package logstore

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// Following a partition (tail -f) reads it as an Iterator does and then
// waits for what any process appends. It relies on these facts:
//
//   - A writer writes the old segment whole before it creates the next
//     one's files. So once a listing shows a segment after the one being
//     read, a read made after that listing sees the old one's last bytes:
//     a record failing there is corrupt (docs/format.md §3), and at its clean end
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
//     that the path still names that directory, and switches when not. A
//     directory replaced by one holding another log (the topic deleted and
//     created again) is read from its start, as tail -F reads a file
//     replaced under its name; one holding the same log, from where
//     reading was.
//   - One inotify watch on the directory wakes the follower for appends,
//     new and deleted segments and the directory going; without inotify
//     it polls. Either way an idle follower does nothing between wakeups.
//
// Followers are grouped in a FollowSet, which shares one inotify instance
// among them and bounds how many hold their files open: a follower of a
// topic of 10 000 partitions must not need 30 000 descriptors, nor 10 000
// inotify instances (the default limit is 128 a user).

// defaultFollowPoll is how often a follower looks for new data when it
// cannot watch the partition.
const defaultFollowPoll = 100 * time.Millisecond

// FollowOptions configure Follow and NewFollowSet.
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
// like tail -f, in constant memory (one record aside).
type Follower struct {
	set       *FollowSet
	dir, name string

	d     *os.File // the partition directory segments are listed and opened through; nil when let go
	dfd   int      // d's descriptor
	dirID fileID
	wd    int  // its inotify watch, -1 for none
	polls bool // counted in set.polled
	dirty bool // the directory's entries may have changed since the last listing
	self  bool // an event about the directory itself: check it, watch it again
	gone  bool // nothing is at the directory's path (warned)
	// empty: the last listing found no segment. A directory being removed
	// (rm -rf of the topic) is emptied first, and then says nothing more:
	// the kernel reports it gone only once no file in it is open any more.
	// It is polled until it has segments again or is gone.
	empty bool
	jump  jumpWhy

	queued  bool          // in set.ready
	holding *list.Element // in set.holding

	seg   segment
	segFI os.FileInfo   // seg's .log, as opened
	f     *os.File      // seg's .log; nil when none is open
	idx   *fsx.ReadFile // its .index, once the scan wanted it
	sc    *segfile.Scanner
	floor uint64 // where the segment read before seg ends
	next  uint64 // the offset after the last record read
	from  uint64 // records below it are passed over
	fresh bool   // the scan holds no bytes read before reading last stopped
	// parked: the set let go of seg's file (and the directory's); reading
	// goes on at parkPos, offset parkOff, when the follower is woken.
	parked  bool
	parkPos int64
	parkOff uint64
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
	// prev is the last record read (returned or passed over): a directory
	// swapped in that holds it is the same log, read on from there.
	prev struct {
		offset uint64
		ts     int64
		crc    uint32
		ok     bool
	}

	rec    Record // what Record returns
	err    error
	closed bool
}

// jumpWhy says, for a warning, why offsets are missing where reading
// (re)starts.
type jumpWhy int

const (
	jumpStart    jumpWhy = iota // Follow asked for offsets below the start
	jumpLost                    // retention removed them before they were read
	jumpReplaced                // the directory swapped in does not hold them
	jumpAnew                    // reading a new log from its start: nothing is missing
)

// Follow returns a follower of the partition directory dir (name is how
// messages refer to it: "orders/0") from offset from on, in a set of its
// own. from below the partition's start starts at the start (with a
// warning if records are missing), from past the end waits for it. A
// directory that does not exist is ErrPartitionNotFound.
func Follow(dir, name string, from uint64, opts FollowOptions) (*Follower, error) {
	s := NewFollowSet(opts)
	f, err := s.Add(dir, name, from)
	if err != nil {
		s.Close()
		return nil, err
	}
	return f, nil
}

// Next blocks until the next record is there (true), ctx is done (false,
// with Err() nil: the follower can go on with another context), or an
// error stops it (false, Err()). Only for a follower made by Follow: one
// of a larger set is read through the set's Next.
func (f *Follower) Next(ctx context.Context) bool {
	if f.closed || f.err != nil {
		return false
	}
	f.set.enqueue(f) // it reads before it waits
	g, ok := f.set.Next(ctx)
	return ok && g == f
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
func (f *Follower) Position() uint64 { return max(f.from, f.next) }

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
	defer f.set.enqueue(f)
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

// Close releases the follower's files and, for one made by Follow, its
// set's inotify instance.
func (f *Follower) Close() error {
	if f.closed {
		return nil
	}
	if len(f.set.members) == 1 && f.set.members[0] == f {
		return f.set.Close()
	}
	f.detach()
	return nil
}

// closeFiles closes the segment and the directory.
func (f *Follower) closeFiles() {
	f.closeSeg()
	if f.d != nil {
		f.d.Close()
		f.d, f.dfd = nil, -1
	}
}

// scan starts a scan of the open segment from its first byte.
func (f *Follower) scan() error {
	seg := f.seg
	sseg := segfileSegment(seg, osFile{File: f.f}, nil, f.floor, !f.later)
	sseg.OpenIndex = func() *segfile.Index {
		x, size, err := fsx.OpenIndexAt(f.dfd, format.SegmentName(seg.base, format.IndexExt), seg.path(format.IndexExt))
		if err != nil {
			return nil
		}
		f.idx = x
		return segfile.NewIndex(x, size)
	}
	sc, err := segfile.NewScanner(sseg, -1, segfile.Options{Whole: true})
	if err != nil {
		f.closeSeg()
		return fmt.Errorf("read %s: %w", seg.path(format.LogExt), err)
	}
	f.sc, f.fresh = sc, true
	return nil
}

// step reads on without blocking: true with a record, false without an
// error when there is nothing to read yet.
func (f *Follower) step() (bool, error) {
	if f.self {
		f.self = false
		if _, err := f.checkDir(true); err != nil {
			return false, err
		}
	}
	for {
		if f.f == nil && f.parked {
			err := f.resume()
			if errors.Is(err, errReplaced) {
				continue
			}
			if err != nil {
				return false, err
			}
			if f.f == nil && f.parked {
				return false, nil // its directory is gone: waited for
			}
		}
		if f.f == nil {
			if f.wd >= 0 && !f.dirty && !f.gone {
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
			h := f.sc.Header()
			f.next, f.fresh = f.sc.NextOffset(), false
			f.prev.offset, f.prev.ts, f.prev.crc, f.prev.ok = h.Offset, h.Timestamp, h.CRC, true
			if h.Offset < f.from {
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
		// does that, the partition's offsets went back. The same log
		// still holding the record read last is read on from there;
		// another, from its start.
		if why := f.sameLog(); why != "" {
			f.anew("its segment was cut below the records read: " + why)
			return true, nil
		}
		f.closeSeg()
		f.dirty, f.jump = true, jumpLost
		return true, nil
	}
	if !f.later && (f.wd < 0 || f.dirty || f.gone) {
		segs, err := f.list()
		if err != nil {
			return false, err
		}
		if f.restarted(segs) {
			if why := f.sameLog(); why != "" {
				f.anew("its segments were replaced: " + why)
				return true, nil
			}
			f.closeSeg() // the same log in other files: find the offset there
			f.dirty = true
			return true, nil
		}
		if i := segAfter(segs, f.seg.base); i < len(segs) {
			// Closed now: read it once more to its true end.
			f.later, f.laterBase = true, segs[i].base
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

// restarted reports whether the partition, listed as segs, may have
// started over in the same directory: the open segment is gone with
// nothing after it (retention never removes the last segment), or its
// name holds another file now (recover --salvage rewrites a segment that
// way too: sameLog tells them apart).
func (f *Follower) restarted(segs []segment) bool {
	i := sort.Search(len(segs), func(i int) bool { return segs[i].base >= f.seg.base })
	if i == len(segs) {
		return len(segs) > 0
	}
	if segs[i].base != f.seg.base {
		return false // gone, later ones there: retention
	}
	var st unix.Stat_t
	if err := unix.Fstatat(f.dfd, format.SegmentName(f.seg.base, format.LogExt), &st, 0); err != nil {
		return false // gone this instant: the next listing tells
	}
	was, ok := f.segFI.Sys().(*syscall.Stat_t)
	return ok && (was.Ino != st.Ino || uint64(was.Dev) != st.Dev)
}

// moveOn leaves the open segment, read to its clean end and closed, for
// the next one: the first listed after it, or a later one when the
// offsets wanted start there.
func (f *Follower) moveOn() (bool, error) {
	lostFrom := f.Position() // up to the next segment: a gap, or lost (warned)
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
		if there := f.segStillThere(); c.base > f.laterBase || !there {
			// Segments listed after this one before are gone, or this one
			// is: retention removed them unread. Offsets between the end of
			// this one and laterBase are a gap, skipped silently, only
			// while this one is still there: a listing made while retention
			// deletes may leave out segments after one it names (readdir
			// goes in hash order), but retention deletes oldest first.
			from := lostFrom
			if there {
				from = max(from, f.laterBase)
			}
			if from < c.base {
				f.warnLost(jumpLost, from, c.base)
				lostFrom = c.base
			}
			f.laterBase = c.base
		}
		for i+1 < len(segs) && segs[i+1].base <= f.from {
			i++
		}
		f.floor = max(f.floor, f.sc.NextOffset()) // where the valid data before ends
		ok, err := f.openSeg(segs[i], segs[i+1:])
		if err != nil || ok {
			return ok, err
		}
	}
	return false, fmt.Errorf("follow %s: segments keep disappearing before they can be opened", f.name)
}

// segStillThere reports whether the open segment's .log is still in its
// directory (looked up after the listing it is judged against).
func (f *Follower) segStillThere() bool {
	var st unix.Stat_t
	return unix.Fstatat(f.dfd, format.SegmentName(f.seg.base, format.LogExt), &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// openFor opens the segment holding Position, or the first after it. It
// returns false when the partition has no segment yet.
func (f *Follower) openFor() (bool, error) {
	f.from, f.floor = f.Position(), 0
	for range maxOpenTries {
		segs, err := f.list()
		if err != nil || len(segs) == 0 {
			return false, err
		}
		i := max(sort.Search(len(segs), func(i int) bool { return segs[i].base > f.from })-1, 0)
		ok, err := f.openSeg(segs[i], segs[i+1:])
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

// openSeg opens seg for reading from offset from on; after are the
// segments listed after it (before it was opened). It returns false when
// seg is gone.
func (f *Follower) openSeg(seg segment, after []segment) (bool, error) {
	if err := f.openDir(); err != nil || f.d == nil {
		return false, err
	}
	name := format.SegmentName(seg.base, format.LogExt)
	fd, err := openIn(f.dfd, name)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "open", Path: seg.path(format.LogExt), Err: err}
	}
	file := os.NewFile(uintptr(fd), seg.path(format.LogExt))
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return false, err
	}
	f.closeSeg()
	f.f, f.segFI, f.seg = file, fi, seg
	f.later = len(after) > 0
	if f.later {
		f.laterBase = after[0].base
	}
	f.waiting.ok = false
	if err := f.scan(); err != nil {
		return false, err
	}
	f.next = seg.base
	if f.from > seg.base {
		// From the record before: reading passes over it and so knows
		// the last record before the ones returned (prev).
		if err := f.sc.SeekOffset(f.from - 1); err != nil {
			f.closeSeg()
			return false, fmt.Errorf("read %s: %w", seg.path(format.LogExt), err)
		}
		f.next = f.sc.NextOffset()
	}
	return true, nil
}

func (f *Follower) closeSeg() {
	if f.f != nil {
		f.next = f.Position() // where reading goes on, in whatever is opened next
		f.sc.Close()
		f.f.Close()
		f.f, f.sc = nil, nil
	}
	if f.idx != nil {
		f.idx.Close()
		f.idx = nil
	}
	f.parked = false
}

// forget drops what the scan read and knew of the file: the next read is
// of the file as it is now.
func (f *Follower) forget() {
	if err := f.sc.Reread(); err != nil {
		f.err = fmt.Errorf("read %s: %w", f.f.Name(), err)
	}
	f.fresh = true
}

// warnLost warns that offsets [from, to) are missing where reading goes on.
func (f *Follower) warnLost(why jumpWhy, from, to uint64) {
	what, pl := fmt.Sprintf("offset %d", from), to-from > 1
	if pl {
		what = fmt.Sprintf("offsets %d..%d", from, to-1)
	}
	switch why {
	case jumpAnew:
	case jumpStart:
		f.warnf("%s of %s %s no longer available (removed by retention); starting at %d", what, f.name, plural(pl, "is", "are"), to)
	case jumpReplaced:
		f.warnf("%s of %s %s not in the new partition directory; going on at %d", what, f.name, plural(pl, "is", "are"), to)
	default:
		f.warnf("%s of %s %s removed by retention before %s read; going on at %d", what, f.name,
			plural(pl, "was", "were"), plural(pl, "it was", "they were"), to)
	}
}

func (f *Follower) warnf(msg string, args ...any) { f.set.opts.Warn(fmt.Sprintf(msg, args...)) }

// segAfter is the index of the first segment with a base above base.
func segAfter(segs []segment, base uint64) int {
	return sort.Search(len(segs), func(i int) bool { return segs[i].base > base })
}
