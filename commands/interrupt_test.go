package commands

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Helpers of this file carry an int prefix: other test files of the
// package are written at the same time and must not clash.

// intSource is a data directory with topic t, partition 0 holding about 6
// MiB in segments of 1 MiB: long enough to interrupt a throttled copy.
func intSource(t *testing.T) string {
	t.Helper()
	dir := newTopic(t, 1)
	var in strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&in, "record %06d %s\n", i, strings.Repeat("x", 40))
	}
	mustRun(t, dir, in.String(), "append", "t", "--sync", "never", "--segment-bytes", "1M")
	return dir
}

// intLeftovers lists what ends in .tmp below dir.
func intLeftovers(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".tmp") {
			left = append(left, path)
		}
		return nil
	})
	return left
}

// intRun starts seglog args, waits until ready holds, sends sig, and
// returns the exit status and stderr; a run that does not end after the
// signal is a hang.
func intRun(t *testing.T, stdin io.Reader, stdout io.Writer, sig syscall.Signal, ready func() bool, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(seglogBin(t), args...)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	eventually(t, 60*time.Second, "the run to be under way", func() bool {
		select {
		case <-done:
			t.Fatalf("seglog %s ended before the signal: %v; stderr:\n%s", args, cmd.ProcessState, stderr.String())
		default:
		}
		return ready()
	})
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("seglog %s still runs after %v", args, sig)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("seglog %s died of %v; want it to clean up and exit; stderr:\n%s", args, ws.Signal(), stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// globbed reports whether pattern matches anything.
func globbed(pattern string) func() bool {
	return func() bool {
		m, _ := filepath.Glob(pattern)
		return len(m) > 0
	}
}

// Ctrl-C (SIGINT) or SIGTERM in the middle of a copy or an import ends it
// as a failure does: exit status 1 and one error line saying so, nothing
// placed, nothing of what it built left (no temporary directory for
// recover to find), and every command over the data directory still
// exits 0.
func TestCopyPartitionInterrupted(t *testing.T) {
	src := intSource(t)
	stream := mustRun(t, src, "", "copy-partition", "t", "0", "--to", "-").stdout

	t.Run("copy into a new topic, SIGINT", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "data")
		mustRun(t, dst, "", "create", "other")
		code, stderr := intRun(t, nil, nil, syscall.SIGINT, globbed(filepath.Join(dst, ".copy-t-*.tmp", "0", "*.log")),
			"-d", src, "copy-partition", "t", "0", "--to", dst, "--throttle", "1M")
		intWantStopped(t, code, stderr, "copy-partition t/0 stopped (interrupt signal received): nothing was placed")
		if _, err := os.Stat(filepath.Join(dst, "t")); !os.IsNotExist(err) {
			t.Errorf("the interrupted copy left topic t: %v", err)
		}
		intWantNothingLeft(t, dst)
	})

	t.Run("copy into an existing topic, SIGTERM", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "data")
		mustRun(t, dst, "", "create", "t", "--partitions", "2")
		before := snapshot(t, filepath.Join(dst, "t"))
		code, stderr := intRun(t, nil, nil, syscall.SIGTERM, globbed(filepath.Join(dst, "t", ".copy-1-*.tmp", "*.log")),
			"-d", src, "copy-partition", "t", "0", "--to", dst, "--to-partition", "1", "--force", "--throttle", "1M")
		intWantStopped(t, code, stderr, "copy-partition t/0 stopped (terminated signal received): nothing was placed")
		sameSnapshot(t, before, snapshot(t, filepath.Join(dst, "t")))
		intWantNothingLeft(t, dst)
	})

	t.Run("copy to a stream, SIGINT", func(t *testing.T) {
		var out intCountingWriter
		code, stderr := intRun(t, nil, &out, syscall.SIGINT, func() bool { return out.n.Load() > 0 },
			"-d", src, "copy-partition", "t", "0", "--to", "-", "--throttle", "1M")
		intWantStopped(t, code, stderr, "copy-partition t/0 stopped (interrupt signal received): the stream ends without its end entry")
		dst := filepath.Join(t.TempDir(), "data")
		r := runIn(t, dst, bytes.NewReader(out.b.Bytes()), "import-partition", "t", "0")
		if r.code != 1 || !strings.Contains(r.stderr, "not a whole partition stream") {
			t.Errorf("import of the interrupted stream: exit %d, stderr %q; want 1, not a whole stream", r.code, r.stderr)
		}
	})

	t.Run("import with stdin stalled, SIGTERM", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "data")
		mustRun(t, dst, "", "create", "other")
		// Half the stream, then a writer that neither writes nor closes:
		// the import waits in a read of stdin when the signal comes.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		go func() { w.Write([]byte(stream[:len(stream)/2])) }()
		code, stderr := intRun(t, r, nil, syscall.SIGTERM, globbed(filepath.Join(dst, ".copy-t-*.tmp", "0", "*.log")),
			"-d", dst, "import-partition", "t", "0")
		r.Close()
		intWantStopped(t, code, stderr, "import-partition t/0 stopped (terminated signal received): nothing was placed")
		if _, err := os.Stat(filepath.Join(dst, "t")); !os.IsNotExist(err) {
			t.Errorf("the interrupted import left topic t: %v", err)
		}
		intWantNothingLeft(t, dst)
	})
}

func intWantStopped(t *testing.T, code int, stderr, want string) {
	t.Helper()
	if code != 1 {
		t.Errorf("exit status %d, want 1: the copy did not happen", code)
	}
	wantOneErrorLine(t, stderr, want)
}

// intWantNothingLeft fails if dst holds a temporary directory, or if a
// command over every topic fails there.
func intWantNothingLeft(t *testing.T, dst string) {
	t.Helper()
	if left := intLeftovers(t, dst); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	for _, args := range [][]string{{"topics"}, {"verify-crc"}, {"recover", "--dry-run"}} {
		if r := runIn(t, dst, nil, args...); r.code != 0 || r.stderr != "" {
			t.Errorf("seglog %s after the interrupted run: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// intCountingWriter keeps what is written and counts it, for a reader in
// another goroutine to watch.
type intCountingWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
	n  atomic.Int64
}

func (w *intCountingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n.Add(int64(len(p)))
	return w.b.Write(p)
}
