package logstore

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

// DefaultLockWait is how long a writer retries a held lock before failing,
// so a brief hold (a retention sweep rolling a segment) never fails it.
const DefaultLockWait = 2 * time.Second

// WaitForever makes lock acquisition wait without limit.
const WaitForever time.Duration = -1

// dirLock is an exclusive flock on a directory, held until Unlock.
type dirLock struct{ f *os.File }

// lockDir takes an exclusive flock on dir, retrying for up to wait
// (WaitForever: no limit; 0: one try). After each success it checks that
// the locked directory is still the one at that path, since a swap
// (copy-partition --force) may have replaced it while we waited.
func lockDir(dir, what string, wait time.Duration) (*dirLock, error) {
	return lockDirHow(dir, what, wait, unix.LOCK_EX, nil)
}

// lockDirShared takes a shared flock on dir, as lockDir takes an exclusive
// one: copies hold a topic's maintenance lock shared, so that several can
// run at once while none of them lets a sweep or recover in.
func lockDirShared(dir, what string, wait time.Duration, stop <-chan struct{}) (*dirLock, error) {
	return lockDirHow(dir, what, wait, unix.LOCK_SH, stop)
}

// lockDirHow takes a flock of kind how (LOCK_EX, LOCK_SH) on dir, as
// lockDir says; closing stop (nil: never) ends a wait with ErrInterrupted.
func lockDirHow(dir, what string, wait time.Duration, how int, stop <-chan struct{}) (*dirLock, error) {
	deadline := time.Now().Add(wait)
	pause := 5 * time.Millisecond
	for {
		l, err := tryLockDirHow(dir, how)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, errLockStale) {
			return nil, err
		}
		if wait != WaitForever && !time.Now().Before(deadline) {
			return nil, &LockedError{What: what, Path: dir, Pid: lockHolder(dir)}
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-stop:
			t.Stop()
			return nil, ErrInterrupted
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

var errLockStale = errors.New("locked directory was replaced")

// tryLockDir takes an exclusive flock on dir if it is free (see lockDir).
func tryLockDir(dir string) (*dirLock, error) { return tryLockDirHow(dir, unix.LOCK_EX) }

func tryLockDirHow(dir string, how int) (*dirLock, error) {
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
	return &dirLock{f: f}, nil
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
func (l *dirLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the only descriptor releases the flock
	l.f = nil
	return err
}

// lockHolder returns the pid /proc/locks names for a flock on path, or 0.
func lockHolder(path string) int {
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

// WriterPid returns the pid of the process holding the writer lock of a
// partition directory according to /proc/locks, or 0 when none does (or
// /proc/locks does not say). It takes no lock itself, so it can never make
// a starting writer fail.
func WriterPid(partitionDir string) int { return lockHolder(partitionDir) }
