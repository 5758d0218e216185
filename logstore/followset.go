package logstore

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/logstore/internal/fsx"
)

// followRecheck is how often a FollowSet checks that the directories it
// watches are still the ones at their paths: a safety net for what events
// cannot tell (a topic directory renamed away and another made in its
// place), rare enough to cost nothing.
const followRecheck = 2 * time.Second

// followBurst is how many records in a row a FollowSet takes from one
// follower before it turns to the next that has some.
const followBurst = 256

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
	// topicsGone holds the topic directories of members whose partition
	// directory went with them (warned about once, see setGone).
	topicsGone map[string]bool
	ready      []*Follower // members to step, in turn
	burst      int         // records ready[0] returned in a row
	polled     int         // members polling: unwatched, or their directory gone

	holding list.List // members holding files open, most recently read first
	limit   int

	lastPoll, lastRecheck time.Time
	closed                bool
}

// NewFollowSet returns an empty set of followers.
func NewFollowSet(opts FollowOptions) *FollowSet {
	if opts.Poll <= 0 {
		opts.Poll = defaultFollowPoll
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	now := time.Now()
	return &FollowSet{opts: opts, recheck: followRecheck, watched: map[int][]*Follower{}, topicsGone: map[string]bool{}, limit: followOpenLimit(),
		lastPoll: now, lastRecheck: now}
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
