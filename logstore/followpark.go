package logstore

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/format"
)

// maxOpenFollowers bounds how many followers of a set hold their files
// open (the partition directory and a segment); the least recently read
// others let go of theirs and open them again when woken. A low
// RLIMIT_NOFILE lowers it (followOpenLimit).
const maxOpenFollowers = 64

// followOpenLimit is maxOpenFollowers, or a thirty-second of the soft
// RLIMIT_NOFILE when that is less (two descriptors each).
func followOpenLimit() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return maxOpenFollowers
	}
	return int(min(max(rl.Cur/32, 4), maxOpenFollowers))
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
