package fsx

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// WaitForever makes Lock wait without limit.
const WaitForever time.Duration = -1

// ErrLockHeld means another process held the lock for the whole wait.
var ErrLockHeld = errors.New("lock held by another process")

// ErrLockWaitStopped means the stop channel ended a wait for a lock.
var ErrLockWaitStopped = errors.New("lock wait stopped")

// DirLock is a flock on a directory, held until Unlock.
type DirLock struct{ f *os.File }

// Lock takes a flock on dir, shared or exclusive, retrying for up to wait
// (WaitForever: no limit; 0: one try): then ErrLockHeld. After each
// success it checks that the locked directory is still the one at that
// path, since a swap (copy-partition --force) may have replaced it while
// we waited. Closing stop (nil: never) ends a wait with
// ErrLockWaitStopped.
func Lock(dir string, shared bool, wait time.Duration, stop <-chan struct{}) (*DirLock, error) {
	how := unix.LOCK_EX
	if shared {
		how = unix.LOCK_SH
	}
	deadline := time.Now().Add(wait)
	pause := 5 * time.Millisecond
	for {
		l, err := tryLockHow(dir, how)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, errLockStale) {
			return nil, err
		}
		if wait != WaitForever && !time.Now().Before(deadline) {
			return nil, ErrLockHeld
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-stop:
			t.Stop()
			return nil, ErrLockWaitStopped
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

var errLockStale = errors.New("locked directory was replaced")

// TryLock takes an exclusive flock on dir if it is free (see Lock): else
// an error that is unix.EWOULDBLOCK, or the directory was replaced.
func TryLock(dir string) (*DirLock, error) { return tryLockHow(dir, unix.LOCK_EX) }

func tryLockHow(dir string, how int) (*DirLock, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	if err := flockRetryEINTR(fd, how|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, err
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	var locked, now unix.Stat_t
	if err := unix.Fstat(fd, &locked); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := unix.Stat(dir, &now); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if locked.Ino != now.Ino || locked.Dev != now.Dev {
		f.Close()
		return nil, errLockStale
	}
	return &DirLock{f: f}, nil
}

func flockRetryEINTR(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if err != unix.EINTR {
			return err
		}
	}
}

// Unlock releases the lock.
func (l *DirLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the only descriptor releases the flock
	l.f = nil
	return err
}

// IsOn reports whether the lock is on the directory at dir now.
func (l *DirLock) IsOn(dir string) bool {
	lf, err := l.f.Stat()
	if err != nil {
		return false
	}
	fi, err := os.Stat(dir)
	return err == nil && os.SameFile(lf, fi)
}

// LockHolder returns the pid /proc/locks names for a flock on path, or 0.
func LockHolder(path string) int {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0
	}
	return lockHolderOf(st)
}

func lockHolderOf(st unix.Stat_t) int {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	// Lines look like "1: FLOCK  ADVISORY  WRITE 4242 fd:01:123456 0 EOF";
	// blocked waiters have "->" after the number and are skipped.
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] == "->" || fields[1] != "FLOCK" {
			continue
		}
		if fields[5] == want {
			pid, _ := strconv.Atoi(fields[4])
			return pid
		}
	}
	return 0
}
