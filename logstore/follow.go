package logstore

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
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

// followRecheck is how often a FollowSet checks that the directories it
// watches are still the ones at their paths: a safety net for what events
// cannot tell (a topic directory renamed away and another made in its
// place), rare enough to cost nothing.
const followRecheck = 2 * time.Second

// followBurst is how many records in a row a FollowSet takes from one
// follower before it turns to the next that has some.
const followBurst = 256

// maxOpenFollowers bounds how many followers of a set hold their files
// open (the partition directory and a segment); the least recently read
// others let go of theirs and open them again when woken. A low
// RLIMIT_NOFILE lowers it (followOpenLimit).
const maxOpenFollowers = 64

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

// FollowSet follows partitions together, as tail -f follows every
// partition of a topic: Next returns the next record of whichever has
// one. All share one inotify instance (a watch per partition directory),
// and at most maxOpenFollowers of them hold files open at a time, so what
// a set holds does not grow with its partitions beyond a few hundred bytes
// each. It is not safe for concurrent use.
type FollowSet struct {
	opts    FollowOptions
	recheck time.Duration

	watch       *fsx.Watch          // nil: every member polls
	watched     map[int][]*Follower // members by watch descriptor
	watchFailed bool                // a watch could not be added (warned)

	members []*Follower
	ready   []*Follower // members to step, in turn
	burst   int         // records ready[0] returned in a row
	polled  int         // members polling: unwatched, or their directory gone

	holding list.List // members holding files open, most recently read first
	limit   int

	lastPoll, lastRecheck time.Time
	closed                bool
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
	segFI os.FileInfo // seg's .log, as opened
	f     *os.File    // seg's .log; nil when none is open
	idx   *os.File    // its .index, once the scan wanted it
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

type fileID struct{ dev, ino uint64 }

// jumpWhy says, for a warning, why offsets are missing where reading
// (re)starts.
type jumpWhy int

const (
	jumpStart    jumpWhy = iota // Follow asked for offsets below the start
	jumpLost                    // retention removed them before they were read
	jumpReplaced                // the directory swapped in does not hold them
	jumpAnew                    // reading a new log from its start: nothing is missing
)

// errReplaced unwinds what the follower was doing in a directory that
// turned out to have been replaced (it has switched to the new one).
var errReplaced = errors.New("partition directory replaced")

// NewFollowSet returns an empty set of followers.
func NewFollowSet(opts FollowOptions) *FollowSet {
	if opts.Poll <= 0 {
		opts.Poll = defaultFollowPoll
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	now := time.Now()
	return &FollowSet{opts: opts, recheck: followRecheck, watched: map[int][]*Follower{}, limit: followOpenLimit(),
		lastPoll: now, lastRecheck: now}
}

// followOpenLimit is maxOpenFollowers, or a thirty-second of the soft
// RLIMIT_NOFILE when that is less (two descriptors each).
func followOpenLimit() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return maxOpenFollowers
	}
	return int(min(max(rl.Cur/32, 4), maxOpenFollowers))
}

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

// Add follows one more partition directory, as Follow does. Warnings about
// missing offsets where reading starts come before Add returns.
func (s *FollowSet) Add(dir, name string, from uint64) (*Follower, error) {
	f := &Follower{set: s, dir: dir, name: name, from: from, next: from, dirty: true, jump: jumpStart, dfd: -1, wd: -1}
	if !s.opts.NoInotify && s.watch == nil && len(s.members) == 0 {
		// One instance for the set, made with its first member: a failure
		// is warned about once, naming it.
		w, err := fsx.NewWatch()
		if err == nil {
			s.watch = w
		} else {
			f.warnf("cannot watch %s with inotify (%v); polling every %v", name, err, s.opts.Poll)
		}
	}
	dfd, id, err := openDirFD(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", name, ErrPartitionNotFound)
		}
		return nil, fmt.Errorf("follow %s: %w", name, err)
	}
	f.d, f.dfd, f.dirID = os.NewFile(uintptr(dfd), dir), dfd, id
	s.members = append(s.members, f)
	f.addWatch()
	f.updatePolling()
	// Open where reading starts now, so a warning about missing offsets
	// comes before any record.
	if _, err := f.openFor(); err != nil && !errors.Is(err, errReplaced) {
		f.detach()
		return nil, err
	}
	s.enqueue(f)
	s.used(f)
	return f, nil
}

// Next blocks until one of the set's followers has a record (that
// follower, true: its Record is valid until it is read from again), one
// fails (that follower, false: see its Err; after SkipCorrupt it goes on),
// or ctx is done (nil, false: the set can go on with another context).
func (s *FollowSet) Next(ctx context.Context) (*Follower, bool) {
	for !s.closed && ctx.Err() == nil {
		for len(s.ready) > 0 {
			f := s.ready[0]
			got, err := f.step()
			s.used(f)
			if err != nil {
				f.err = err
				s.dequeue()
				return f, false
			}
			if got {
				if s.burst++; s.burst >= followBurst && len(s.ready) > 1 {
					s.dequeue()
					s.enqueue(f) // its turn again after the others'
				}
				return f, true
			}
			s.dequeue() // nothing more for now: woken by its next event
		}
		s.wait(ctx)
	}
	return nil, false
}

// Close releases the files of every follower of the set and its inotify
// instance.
func (s *FollowSet) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	for _, f := range s.members {
		f.closed = true
		f.closeFiles()
	}
	s.members, s.ready, s.watched = nil, nil, nil
	if s.watch != nil {
		err = s.watch.Close()
		s.watch = nil
	}
	return err
}

func (s *FollowSet) enqueue(f *Follower) {
	if !f.queued && !f.closed && f.err == nil {
		f.queued = true
		s.ready = append(s.ready, f)
	}
}

func (s *FollowSet) dequeue() {
	s.ready[0].queued = false
	s.ready[0] = nil
	s.ready = s.ready[1:]
	s.burst = 0
}

// used notes that f was just read: it goes to the front of the members
// holding files, and the least recently read beyond the limit let go of
// theirs.
func (s *FollowSet) used(f *Follower) {
	switch holds := f.d != nil || f.f != nil; {
	case holds && f.holding != nil:
		s.holding.MoveToFront(f.holding)
	case holds:
		f.holding = s.holding.PushFront(f)
	case f.holding != nil:
		s.unhold(f)
	}
	for s.holding.Len() > s.limit {
		victim := s.holding.Back().Value.(*Follower)
		if victim == f {
			break
		}
		s.unhold(victim)
		victim.park()
	}
}

func (s *FollowSet) unhold(f *Follower) {
	s.holding.Remove(f.holding)
	f.holding = nil
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

// Name is how messages refer to the partition.
func (f *Follower) Name() string { return f.name }

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

// detach takes f out of its set and closes its files.
func (f *Follower) detach() {
	s := f.set
	f.closed = true
	if f.holding != nil {
		s.unhold(f)
	}
	f.setWatch(-1)
	f.updatePolling() // closed: polls no more
	for i, m := range s.members {
		if m == f {
			s.members = append(s.members[:i], s.members[i+1:]...)
			break
		}
	}
	for i, m := range s.ready {
		if m == f {
			s.ready = append(s.ready[:i], s.ready[i+1:]...)
			break
		}
	}
	f.closeFiles()
}

// closeFiles closes the segment and the directory.
func (f *Follower) closeFiles() {
	f.closeSeg()
	if f.d != nil {
		f.d.Close()
		f.d, f.dfd = nil, -1
	}
}

// park lets go of the follower's files, keeping its place in the segment.
func (f *Follower) park() {
	if f.f != nil {
		f.parkPos, f.parkOff = f.sc.Pos(), f.sc.NextOffset()
		f.closeSeg()
		f.parked = true
		f.rec = Record{} // nothing left to keep the buffer alive
	}
	if f.d != nil {
		f.d.Close()
		f.d, f.dfd = nil, -1
	}
}

// resume opens the parked segment again, to read on where it was. A
// segment that is gone or is another file now is found again by offset
// instead.
func (f *Follower) resume() error {
	if err := f.openDir(); err != nil || f.d == nil {
		return err
	}
	f.parked = false
	name := format.SegmentName(f.seg.base, format.LogExt)
	fd, err := openIn(f.dfd, name)
	if errors.Is(err, unix.ENOENT) {
		f.dirty = true
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: f.seg.path(format.LogExt), Err: err}
	}
	file := os.NewFile(uintptr(fd), f.seg.path(format.LogExt))
	if fi, err := file.Stat(); err != nil || !os.SameFile(fi, f.segFI) {
		file.Close()
		f.dirty = true
		return nil
	}
	f.f = file
	if err := f.scan(); err != nil {
		return err
	}
	if f.parkPos > 0 || f.parkOff != f.seg.base {
		f.sc.StartAt(f.parkPos, f.parkOff)
	}
	return nil
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
		f.idx = x.File
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
		f.floor = max(f.floor, f.sc.NextOffset()) // where the valid data before ends
		ok, err := f.openSeg(segs[i], segs[i+1:])
		if err != nil || ok {
			return ok, err
		}
	}
	return false, fmt.Errorf("follow %s: segments keep disappearing before they can be opened", f.name)
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

// list lists the segments of the directory being read, after checking that
// it is still the one at the path (errReplaced when it was not: the
// follower has switched to the new one).
func (f *Follower) list() (segs []segment, err error) {
	if err := f.openDir(); err != nil {
		return nil, err
	}
	if f.d == nil {
		return nil, nil // gone, and let go of: it holds nothing any more
	}
	f.dirty = false
	defer func() {
		f.empty = len(segs) == 0
		f.updatePolling()
	}()
	segs, _, err = stableSegments(f.dir, func() ([]os.DirEntry, error) {
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

// openDir makes sure the follower reads through the directory now at its
// path: the one it had, opened again if it let go of it, or the one that
// replaced it (errReplaced, after switching). Gone, it keeps what it has
// open, or has none (f.d nil).
func (f *Follower) openDir() error {
	if f.d != nil {
		replaced, err := f.checkDir(false)
		if err == nil && replaced {
			err = errReplaced
		}
		return err
	}
	dfd, id, err := openDirFD(f.dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
		f.setGone()
		return nil
	}
	if err != nil {
		return err
	}
	if id != f.dirID {
		unix.Close(dfd)
		if _, err := f.replace(); err != nil {
			return err
		}
		return errReplaced
	}
	f.d, f.dfd = os.NewFile(uintptr(dfd), f.dir), dfd
	if f.gone {
		f.gone = false
		f.addWatch()
		f.updatePolling()
	}
	return nil
}

// setGone notes that nothing is at the directory's path, warning once.
func (f *Follower) setGone() {
	if !f.gone {
		f.gone = true
		f.warnf("the partition directory of %s (%s) is gone; waiting for it to come back", f.name, f.dir)
		f.updatePolling()
	}
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
		f.setGone()
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "stat", Path: f.dir, Err: err}
	}
	wasGone := f.gone
	if (fileID{dev: uint64(st.Dev), ino: st.Ino}) == f.dirID {
		if wasGone {
			f.gone = false
			f.updatePolling()
		}
		if rewatch || wasGone {
			f.addWatch()
		}
		return false, nil
	}
	return f.replace()
}

// replace switches to the directory now at the path: to read on from the
// same offset there when it holds the same log (the record read last is
// there, the same), else to read it from its start.
func (f *Follower) replace() (bool, error) {
	dfd, id, err := openDirFD(f.dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
		f.setGone() // gone again already: look later
		return false, nil
	}
	if err != nil {
		return false, err
	}
	f.closeFiles()
	f.d, f.dfd, f.dirID = os.NewFile(uintptr(dfd), f.dir), dfd, id
	f.gone = false
	f.addWatch()
	f.updatePolling()
	f.dirty, f.later = true, false
	if why := f.sameLog(); why != "" {
		f.anew(why)
		return true, nil
	}
	f.from = f.Position()
	f.jump = jumpReplaced
	f.warnf("the partition directory of %s (%s) was replaced; reading on from offset %d in the new one", f.name, f.dir, f.from)
	return true, nil
}

// sameLog tells whether the directory now open holds the log read so far:
// "" when it holds the record read last, the same (a copy such as
// copy-partition --force swaps in), else why not.
func (f *Follower) sameLog() string {
	if !f.prev.ok {
		if f.Position() == 0 {
			return "" // nothing read, nothing to miss
		}
		return "nothing read from it tells"
	}
	p, err := OpenPartitionDir(f.dir, f.name)
	if err != nil {
		return err.Error()
	}
	defer p.Close()
	it, err := p.Read(f.prev.offset)
	if err != nil {
		return err.Error()
	}
	defer it.Close()
	if !it.Next() || it.Record().Offset != f.prev.offset {
		return fmt.Sprintf("it has no offset %d", f.prev.offset)
	}
	if r := it.Record(); r.Timestamp != f.prev.ts || r.CRC != f.prev.crc {
		return fmt.Sprintf("its offset %d is another record", f.prev.offset)
	}
	return ""
}

// anew reads the partition from its start, as a log new to the follower,
// saying why.
func (f *Follower) anew(why string) {
	f.closeSeg()
	f.from, f.next, f.prev.ok = 0, 0, false
	f.dirty, f.later, f.jump = true, false, jumpAnew
	f.warnf("the partition directory of %s (%s) holds another log now (%s); reading it from its start", f.name, f.dir, why)
}

// addWatch watches the directory, falling back to polling when inotify
// cannot. The watch goes on the directory open (through /proc/self/fd),
// so it is the one read even if another took its path meanwhile.
func (f *Follower) addWatch() {
	s := f.set
	if s.watch == nil {
		return
	}
	path := f.dir
	if f.d != nil {
		path = "/proc/self/fd/" + strconv.Itoa(f.dfd)
	}
	wd, err := s.watch.Add(path)
	if errors.Is(err, unix.ENOENT) && path != f.dir {
		wd, err = s.watch.Add(f.dir) // no /proc
	}
	switch {
	case err == nil:
		f.setWatch(wd)
	case errors.Is(err, unix.ENOENT):
		f.setWatch(-1)
		f.setGone()
	default:
		f.setWatch(-1)
		if !s.watchFailed {
			s.watchFailed = true
			hint := ""
			if errors.Is(err, unix.ENOSPC) {
				hint = ": raise fs.inotify.max_user_watches"
			}
			f.warnf("cannot watch %s with inotify (%v%s); polling it, and any other partition it cannot watch, every %v", f.name, err, hint, s.opts.Poll)
		}
	}
	f.updatePolling()
}

// setWatch makes wd (-1: none) f's watch, dropping its old one when no
// other member shares it (two followers of one directory get one watch).
func (f *Follower) setWatch(wd int) {
	s := f.set
	if f.wd == wd {
		return
	}
	if f.wd >= 0 {
		others := s.watched[f.wd][:0]
		for _, m := range s.watched[f.wd] {
			if m != f {
				others = append(others, m)
			}
		}
		if len(others) == 0 {
			delete(s.watched, f.wd)
			if s.watch != nil {
				s.watch.Remove(f.wd)
			}
		} else {
			s.watched[f.wd] = others
		}
	}
	f.wd = wd
	if wd >= 0 {
		s.watched[wd] = append(s.watched[wd], f)
	}
}

// updatePolling counts f among the members that poll when it has no
// watch, or its directory is gone or empty.
func (f *Follower) updatePolling() {
	polls := !f.closed && (f.wd < 0 || f.gone || f.empty)
	if polls != f.polls {
		f.polls = polls
		if polls {
			f.set.polled++
		} else {
			f.set.polled--
		}
	}
}

// fallBack stops using inotify: every member polls from now on.
func (s *FollowSet) fallBack(err error) {
	what := fmt.Sprintf("%d partitions", len(s.members))
	if len(s.members) == 1 {
		what = s.members[0].name
	}
	s.opts.Warn(fmt.Sprintf("cannot watch %s with inotify any more (%v); polling every %v", what, err, s.opts.Poll))
	s.watch.Close()
	s.watch = nil
	for _, f := range s.members {
		f.wd = -1
		f.updatePolling()
	}
	clear(s.watched)
}

// wait blocks until something may have changed, or ctx is done, and
// queues the members to look at.
func (s *FollowSet) wait(ctx context.Context) {
	now := time.Now()
	timeout := s.recheck - now.Sub(s.lastRecheck)
	if s.polled > 0 {
		timeout = min(timeout, s.opts.Poll-now.Sub(s.lastPoll))
	}
	timeout = max(timeout, 0)
	if s.watch == nil {
		t := time.NewTimer(timeout)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	} else if err := s.watch.Wait(ctx, timeout, s.dispatch); err != nil {
		s.fallBack(err)
	}
	if ctx.Err() != nil {
		return
	}
	now = time.Now()
	if s.polled > 0 && now.Sub(s.lastPoll) >= s.opts.Poll {
		s.lastPoll = now
		for _, f := range s.members {
			if f.polls {
				f.dirty = true
				s.enqueue(f)
			}
		}
	}
	if now.Sub(s.lastRecheck) >= s.recheck {
		s.lastRecheck = now
		for _, f := range s.members {
			if !f.polls {
				f.recheckDir()
			}
		}
	}
}

// recheckDir looks at whether the path still names the directory watched
// (a stat), and queues the follower when not.
func (f *Follower) recheckDir() {
	var st unix.Stat_t
	if err := unix.Stat(f.dir, &st); err != nil || (fileID{dev: uint64(st.Dev), ino: st.Ino}) != f.dirID {
		f.self, f.dirty = true, true
		f.set.enqueue(f)
	}
}

// dispatch hands a watch's events to its followers (wd -1: every member:
// events were lost).
func (s *FollowSet) dispatch(wd int, ev fsx.WatchEvents) {
	members := s.watched[wd]
	if wd < 0 {
		members = s.members
	}
	if ev&fsx.EvIgnored != 0 {
		delete(s.watched, wd) // the kernel dropped it with its directory
		for _, f := range members {
			f.wd = -1
			f.updatePolling()
		}
	}
	for _, f := range members {
		if ev&(fsx.EvEntries|fsx.EvSelf) != 0 {
			f.dirty = true
		}
		if ev&fsx.EvSelf != 0 {
			f.self = true
		}
		s.enqueue(f)
	}
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
