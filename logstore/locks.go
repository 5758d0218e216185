package logstore

import (
	"errors"
	"time"

	"github.com/seglog/seglog/logstore/internal/fsx"
)

// DefaultLockWait is how long a writer retries a held lock before failing,
// so a brief hold (a retention sweep rolling a segment) never fails it.
const DefaultLockWait = 2 * time.Second

// WaitForever makes lock acquisition wait without limit.
const WaitForever = fsx.WaitForever

// lockDir takes an exclusive flock on dir, retrying for up to wait (see
// fsx.Lock); what names the lock in a *LockedError.
func lockDir(dir, what string, wait time.Duration) (*fsx.DirLock, error) {
	return lockDirHow(dir, what, false, wait, nil)
}

// lockDirShared takes a shared flock on dir, as lockDir takes an exclusive
// one: copies hold a topic's maintenance lock shared, so that several can
// run at once while none of them lets a sweep or recover in.
func lockDirShared(dir, what string, wait time.Duration, stop <-chan struct{}) (*fsx.DirLock, error) {
	return lockDirHow(dir, what, true, wait, stop)
}

// lockDirHow is fsx.Lock with its outcomes in logstore's errors.
func lockDirHow(dir, what string, shared bool, wait time.Duration, stop <-chan struct{}) (*fsx.DirLock, error) {
	l, err := fsx.Lock(dir, shared, wait, stop)
	switch {
	case errors.Is(err, fsx.ErrLockHeld):
		return nil, &LockedError{What: what, Path: dir, Pid: fsx.LockHolder(dir)}
	case errors.Is(err, fsx.ErrLockWaitStopped):
		return nil, ErrInterrupted
	}
	return l, err
}

// WriterPid returns the pid of the process holding the writer lock of a
// partition directory according to /proc/locks, or 0 when none does (or
// /proc/locks does not say). It takes no lock itself, so it can never make
// a starting writer fail.
func WriterPid(partitionDir string) int { return fsx.LockHolder(partitionDir) }
