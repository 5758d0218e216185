package logstore

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/logstore/internal/fsx"
)

// ltProcLocksNames reports whether /proc/locks lists a FLOCK on path held
// by pid. It matches the inode only (not the device), independently of
// fsx.LockHolder, so the pid assertions below test that function rather
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
	if _, err := fsx.TryLock(dir); !errors.Is(err, unix.EWOULDBLOCK) {
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
