package fsx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func ltInode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// A directory swapped in at the path (copy-partition --force) while a
// locker waits: the waiter must end up holding the lock of the directory
// now at the path, not of the one moved away.
func TestLockFollowsSwappedDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l1, err := Lock(dir, false, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Unlock()
	oldIno := ltInode(t, dir)

	type result struct {
		l   *DirLock
		err error
	}
	done := make(chan result, 1)
	go func() {
		l, err := Lock(dir, false, WaitForever, nil)
		done <- result{l, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("Lock returned while the lock was held: %v", r.err)
	case <-time.After(100 * time.Millisecond):
	}
	moved := dir + ".old"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	newIno := ltInode(t, dir)

	var l2 *DirLock
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		l2 = r.l
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not get the lock of the new directory")
	}
	defer l2.Unlock()
	var st unix.Stat_t
	if err := unix.Fstat(int(l2.f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if st.Ino != newIno || st.Ino == oldIno {
		t.Errorf("waiter holds inode %d; new directory %d, old %d", st.Ino, newIno, oldIno)
	}
	// The new directory is really locked, and the old one still by l1.
	if _, err := TryLock(dir); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Errorf("new directory not locked: %v", err)
	}
	if _, err := TryLock(moved); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Errorf("old directory not locked: %v", err)
	}
}

// Swaps racing lock attempts: a swapper (playing copy-partition --force)
// repeatedly locks the directory at the path, exchanges it with a spare
// (RENAME_EXCHANGE) and unlocks. Whenever TryLock succeeds, the
// directory it locked must be the one at the path, and stay there while
// held. Without the inode check a lock attempt that opened the directory
// just before a swap ends up holding the one moved away. The race window
// is narrow, so this test can miss such a regression; it never fails on
// correct code.
func TestLockInodeCheckUnderSwaps(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "0")
	spare := filepath.Join(root, "spare")
	for _, d := range []string{path, spare} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Renameat2(unix.AT_FDCWD, path, unix.AT_FDCWD, spare, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("RENAME_EXCHANGE unsupported here: %v", err)
	}
	// lockAtPath is the swapper's own lock: blocking flock, then the same
	// inode check, written out here so it does not depend on the code
	// under test.
	lockAtPath := func() *os.File {
		for {
			f, err := os.Open(path)
			if err != nil {
				t.Error(err)
				return nil
			}
			if err := flockRetryEINTR(int(f.Fd()), unix.LOCK_EX); err != nil {
				f.Close()
				t.Error(err)
				return nil
			}
			var a, b unix.Stat_t
			if unix.Fstat(int(f.Fd()), &a) == nil && unix.Stat(path, &b) == nil && a.Ino == b.Ino {
				return f
			}
			f.Close()
		}
	}
	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		n := 0
		defer func() { swapped <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			f := lockAtPath()
			if f == nil {
				return
			}
			err := unix.Renameat2(unix.AT_FDCWD, path, unix.AT_FDCWD, spare, unix.RENAME_EXCHANGE)
			f.Close()
			if err != nil {
				t.Error(err)
				return
			}
			n++
		}
	}()
	deadline := time.Now().Add(400 * time.Millisecond)
	got, stale := 0, 0
	for time.Now().Before(deadline) {
		l, err := TryLock(path)
		if err != nil {
			if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, errLockStale) {
				t.Fatal(err)
			}
			continue
		}
		got++
		var held, now unix.Stat_t
		if err := unix.Fstat(int(l.f.Fd()), &held); err != nil {
			t.Fatal(err)
		}
		if err := unix.Stat(path, &now); err != nil {
			t.Fatal(err)
		}
		if held.Ino != now.Ino {
			stale++
		}
		l.Unlock()
	}
	close(stop)
	n := <-swapped
	if stale > 0 {
		t.Errorf("%d of %d locks taken were of a directory no longer at the path (%d swaps)", stale, got, n)
	}
	t.Logf("%d locks, %d swaps", got, n)
}
