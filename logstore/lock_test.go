package logstore

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ltProcLocksNames reports whether /proc/locks lists a FLOCK on path held
// by pid. It matches the inode only (not the device), independently of
// lockHolderOf, so the pid assertions below test that function rather
// than repeat it.
func ltProcLocksNames(t *testing.T, path string, pid int) bool {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" {
			continue
		}
		if fields[4] == strconv.Itoa(pid) && strings.HasSuffix(fields[5], ":"+strconv.FormatUint(st.Ino, 10)) {
			return true
		}
	}
	return false
}

func ltInode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

func TestLockSecondWriterFails(t *testing.T) {
	s := wtStore(t, "topic", 1, Settings{})
	dir := s.PartitionDir("topic", 0)
	w1 := wtOpen(t, s, "topic", WriterOptions{})

	const wait = 300 * time.Millisecond
	start := time.Now()
	w2, err := s.OpenWriter("topic", 0, WriterOptions{LockWait: wait})
	elapsed := time.Since(start)
	if err == nil {
		w2.Close()
		t.Fatal("second OpenWriter on a locked partition succeeded")
	}
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("error %v is no *LockedError", err)
	}
	if elapsed < wait || elapsed > wait+time.Second {
		t.Errorf("gave up after %v, want about %v", elapsed, wait)
	}
	if !strings.Contains(err.Error(), "topic/0") {
		t.Errorf("error %q does not name the partition topic/0", err)
	}
	if le.Path != dir {
		t.Errorf("LockedError.Path %s, want %s", le.Path, dir)
	}
	pid := os.Getpid()
	if ltProcLocksNames(t, dir, pid) {
		if le.Pid != pid {
			t.Errorf("LockedError.Pid %d, want %d (/proc/locks lists it)", le.Pid, pid)
		}
		if !strings.Contains(err.Error(), strconv.Itoa(pid)) {
			t.Errorf("error %q does not name the holder's pid %d", err, pid)
		}
	} else {
		t.Logf("/proc/locks does not list our flock on %s: pid assertion skipped", dir)
	}

	wtClose(t, w1)
	// Released on Close: the next writer gets it at once.
	w3, err := s.OpenWriter("topic", 0, WriterOptions{LockWait: 10 * time.Millisecond})
	if err != nil {
		t.Fatalf("OpenWriter after Close: %v", err)
	}
	wtClose(t, w3)
}

// The lock is a flock on the partition directory itself (no lock file),
// so other programs following docs/format.md §5 see it.
func TestLockIsFlockOnPartitionDir(t *testing.T) {
	s := wtStore(t, "topic", 1, Settings{})
	dir := s.PartitionDir("topic", 0)
	w := wtOpen(t, s, "topic", WriterOptions{})
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Errorf("flock on %s while a writer is open: %v, want EWOULDBLOCK", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Errorf("partition directory holds %d entries (a lock file?): %v", len(entries), entries)
	}
	wtClose(t, w)
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Errorf("flock after Close: %v", err)
	}
}

// A brief hold (a retention sweep rolling a segment) must not fail a
// writer with the default wait.
func TestLockDefaultWaitRidesOutBriefHold(t *testing.T) {
	s := wtStore(t, "topic", 1, Settings{})
	dir := s.PartitionDir("topic", 0)
	l, err := lockDir(dir, "partition topic/0", 0)
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		l.Unlock()
		close(released)
	}()
	start := time.Now()
	w, err := s.OpenWriter("topic", 0, WriterOptions{}) // LockWait 0: DefaultLockWait
	<-released
	if err != nil {
		t.Fatalf("OpenWriter with the default wait failed on a 300 ms hold: %v", err)
	}
	if time.Since(start) < 250*time.Millisecond {
		t.Errorf("OpenWriter got the lock while it was held")
	}
	wtClose(t, w)
}

func TestLockWaitForever(t *testing.T) {
	s := wtStore(t, "topic", 1, Settings{})
	w1 := wtOpen(t, s, "topic", WriterOptions{})
	wtAppend(t, w1, 1, "", "from the first")
	type result struct {
		w   *Writer
		err error
	}
	done := make(chan result, 1)
	go func() {
		w, err := s.OpenWriter("topic", 0, WriterOptions{LockWait: WaitForever})
		done <- result{w, err}
	}()
	// Longer than DefaultLockWait would be slow; what matters is that it
	// waits past a plain retry and only gets the lock once it is free.
	select {
	case r := <-done:
		t.Fatalf("WaitForever returned while the lock was held: %v", r.err)
	case <-time.After(500 * time.Millisecond):
	}
	wtClose(t, w1)
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("WaitForever: %v", r.err)
		}
		if r.w.NextOffset() != 1 {
			t.Errorf("second writer starts at %d, want 1 (after the first's record)", r.w.NextOffset())
		}
		wtAppend(t, r.w, 2, "", "from the second")
		wtClose(t, r.w)
	case <-time.After(5 * time.Second):
		t.Fatal("WaitForever did not get the lock after it was released")
	}
	if n := len(wtReadAll(t, s, "topic", 0)); n != 2 {
		t.Errorf("read %d records, want 2", n)
	}
}

// A directory swapped in at the path (copy-partition --force) while a
// locker waits: the waiter must end up holding the lock of the directory
// now at the path, not of the one moved away.
func TestLockFollowsSwappedDirectory(t *testing.T) {
	s := wtStore(t, "topic", 1, Settings{})
	dir := s.PartitionDir("topic", 0)
	l1, err := lockDir(dir, "partition topic/0", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Unlock()
	oldIno := ltInode(t, dir)

	type result struct {
		l   *dirLock
		err error
	}
	done := make(chan result, 1)
	go func() {
		l, err := lockDir(dir, "partition topic/0", WaitForever)
		done <- result{l, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("lockDir returned while the lock was held: %v", r.err)
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

	var l2 *dirLock
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
	if _, err := tryLockDir(dir); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Errorf("new directory not locked: %v", err)
	}
	if _, err := tryLockDir(moved); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Errorf("old directory not locked: %v", err)
	}
}

func TestWriterPid(t *testing.T) {
	s := wtStore(t, "topic", 1, Settings{})
	dir := s.PartitionDir("topic", 0)
	if pid := WriterPid(dir); pid != 0 {
		t.Fatalf("WriterPid %d before any writer", pid)
	}
	w := wtOpen(t, s, "topic", WriterOptions{})
	if ltProcLocksNames(t, dir, os.Getpid()) {
		if pid := WriterPid(dir); pid != os.Getpid() {
			t.Errorf("WriterPid %d while we hold the lock, want %d", pid, os.Getpid())
		}
	} else {
		t.Logf("/proc/locks does not list our flock on %s: pid assertion skipped", dir)
	}
	// Probing must not take the lock: the writer still holds it.
	if _, err := tryLockDir(dir); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Errorf("lock not held after WriterPid: %v", err)
	}
	wtClose(t, w)
	if pid := WriterPid(dir); pid != 0 {
		t.Errorf("WriterPid %d after Close", pid)
	}
	if pid := WriterPid(dir + "-missing"); pid != 0 {
		t.Errorf("WriterPid %d of a missing directory", pid)
	}
}

// Swaps racing lock attempts: a swapper (playing copy-partition --force)
// repeatedly locks the directory at the path, exchanges it with a spare
// (RENAME_EXCHANGE) and unlocks. Whenever tryLockDir succeeds, the
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
		l, err := tryLockDir(path)
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
