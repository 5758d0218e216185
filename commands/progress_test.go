package commands

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal: its master, and the slave a child
// writes to. Skips the test where there is none.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fail := func(what string, err error) {
		m.Close()
		t.Skipf("no pseudo-terminal: %s: %v", what, err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		fail("unlock", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		fail("TIOCGPTN", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		fail("open slave", err)
	}
	return m, s
}

// ttyRun is a seglog run with stderr on a terminal.
type ttyRun struct {
	tty, stdout string // what the terminal showed; stdout, a pipe
	code        int
	took        time.Duration
}

// runOnTty runs seglog with stderr on a pseudo-terminal and stdout on a
// pipe. stdin, when not nil, is the child's stdin as it is (a regular
// file stays one). env is added to the environment.
func runOnTty(t *testing.T, env []string, stdin *os.File, args ...string) ttyRun {
	t.Helper()
	m, s := openPty(t)
	defer m.Close()
	cmd := exec.Command(seglogBin(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = s
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if stdin != nil {
		cmd.Stdin = stdin
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		s.Close()
		t.Fatal(err)
	}
	s.Close() // the child holds it now: reading the master ends (EIO) when it exits
	var tty bytes.Buffer
	read := make(chan error, 1)
	go func() {
		_, err := io.Copy(&tty, m)
		read <- err
	}()
	err := cmd.Wait()
	took := time.Since(start)
	select {
	case <-read:
	case <-time.After(5 * time.Second):
		t.Fatal("the terminal's master did not end after seglog exited")
	}
	r := ttyRun{tty: tty.String(), stdout: stdout.String(), took: took}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

// barDrawn reports whether out holds a progress bar (ThemeDefault).
func barDrawn(out string) bool {
	return strings.Contains(out, "%") || strings.Contains(out, "█")
}

// wantBar checks a bar named name was drawn on the terminal and cleared
// before the summary, and that stdout holds none.
func wantBar(t *testing.T, r ttyRun, name, summary string) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit status %d; terminal: %q", r.code, r.tty)
	}
	if !strings.Contains(r.tty, name) || !barDrawn(r.tty) {
		t.Fatalf("no %s bar on the terminal (run took %v): %q", name, r.took, r.tty)
	}
	if barDrawn(r.stdout) || strings.Contains(r.stdout, "\r") {
		t.Fatalf("bar bytes on stdout: %q", r.stdout)
	}
	if summary != "" {
		last := max(strings.LastIndex(r.tty, "%"), strings.LastIndex(r.tty, "█"))
		if i := strings.LastIndex(r.tty, summary); i < last {
			t.Fatalf("summary %q not after the bar on the terminal: %q", summary, r.tty)
		}
	}
}

// bigInput writes n lines to a regular file and opens it for reading.
func bigInput(t *testing.T, n int) *os.File {
	t.Helper()
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "key%d:record %07d %s\n", i%97, i, strings.Repeat("x", 40))
	}
	p := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A genuinely long job (a throttled copy, over 1 s) draws its bar on a
// terminal, from the second second on, and takes it away before the
// summary on stdout.
func TestProgressTTYLongCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("takes over a second")
	}
	dir := newTopic(t, 1)
	var in strings.Builder
	for i := range 16000 {
		fmt.Fprintf(&in, "record %06d %s\n", i, strings.Repeat("x", 40))
	}
	mustRun(t, dir, in.String(), "append", "t", "--sync", "never")
	r := runOnTty(t, nil, nil, "-d", dir, "copy-partition", "t", "0", "--to", t.TempDir(), "--throttle", "1M")
	if r.took < 1200*time.Millisecond {
		t.Skipf("the copy took only %v: too short for a bar", r.took)
	}
	wantBar(t, r, "copy-partition", "")
	if r.stdout == "" {
		t.Fatal("no summary on stdout")
	}
}

// The jobs this file's bars were added to draw one on a terminal. They
// are quick here, so the bar is told to show at once: by --progress-after
// (before or after the command name) or its environment variable.
func TestProgressTTYJobs(t *testing.T) {
	now := []string{"SEGLOG_PROGRESS_AFTER=0s"}
	dir := newTopic(t, 3)
	t.Run("append", func(t *testing.T) {
		r := runOnTty(t, nil, bigInput(t, 50000), "-d", dir, "--progress-after", "0s", "append", "t", "--key-delimiter", ":", "--sync", "never")
		wantBar(t, r, "append", "appended 50000 records to t")
	})
	t.Run("recover", func(t *testing.T) {
		r := runOnTty(t, nil, nil, "-d", dir, "recover", "t", "--progress-after=0s")
		wantBar(t, r, "recover", "")
		if !strings.Contains(r.stdout, "3 partitions checked, nothing to do") {
			t.Fatalf("no summary on stdout: %q", r.stdout)
		}
	})
	t.Run("retention-sweep", func(t *testing.T) {
		r := runOnTty(t, now, nil, "-d", dir, "retention-sweep", "t", "--retention", "1h", "--dry-run")
		wantBar(t, r, "retention-sweep", "")
		if !strings.Contains(r.tty, "segments") {
			t.Fatalf("bar does not count segments: %q", r.tty)
		}
	})
}

// No bar with --no-progress or --quiet, nor when stderr is not a
// terminal, however soon bars may show.
func TestProgressNotDrawn(t *testing.T) {
	now := []string{"SEGLOG_PROGRESS_AFTER=0s"}
	dir := newTopic(t, 1)
	for _, flag := range []string{"--no-progress", "--quiet"} {
		t.Run("append"+flag, func(t *testing.T) {
			r := runOnTty(t, now, bigInput(t, 20000), "-d", dir, flag, "append", "t", "--sync", "never")
			if r.code != 0 || barDrawn(r.tty) || barDrawn(r.stdout) {
				t.Fatalf("status %d, terminal %q, stdout %q", r.code, r.tty, r.stdout)
			}
			if flag == "--no-progress" && !strings.Contains(r.tty, "appended 20000 records") {
				t.Fatalf("no summary on the terminal: %q", r.tty)
			}
		})
		t.Run("recover"+flag, func(t *testing.T) {
			r := runOnTty(t, now, nil, "-d", dir, flag, "recover", "t")
			if r.code != 0 || barDrawn(r.tty) {
				t.Fatalf("status %d, terminal %q", r.code, r.tty)
			}
		})
	}
	t.Run("stderr-pipe", func(t *testing.T) {
		for _, args := range [][]string{
			{"append", "t", "--sync", "never"},
			{"recover", "t"},
			{"retention-sweep", "t", "--retention", "1h", "--dry-run"},
		} {
			cmd := exec.Command(seglogBin(t), append([]string{"-d", dir}, args...)...)
			cmd.Env = append(os.Environ(), now...)
			if args[0] == "append" {
				cmd.Stdin = bigInput(t, 20000)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v: %s", args[0], err, stderr.String())
			}
			if barDrawn(stderr.String()) || barDrawn(stdout.String()) || strings.Contains(stderr.String(), "\r") {
				t.Fatalf("%s: bar drawn on a pipe: stderr %q", args[0], stderr.String())
			}
		}
	})
}

// --progress-after is a duration of 0 or more, from the flag or from
// SEGLOG_PROGRESS_AFTER (the flag wins); anything else is a usage error
// before any command runs.
func TestProgressAfterFlag(t *testing.T) {
	dir := newTopic(t, 1)
	for _, args := range [][]string{
		{"--progress-after", "soon", "append", "t"},
		{"append", "t", "--progress-after", "-1s"},
		{"--progress-after", "", "append", "t"},
	} {
		r := runIn(t, dir, strings.NewReader("lost\n"), args...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("seglog %q: exit %d, stdout %q; want %d and no output", args, r.code, r.stdout, exitUsage)
		}
		wantOneErrorLine(t, r.stderr, "--progress-after", "invalid duration")
	}
	if out := mustRun(t, dir, "", "read", "t").stdout; out != "" {
		t.Errorf("a refused command line appended %q", out)
	}
	mustRun(t, dir, "kept\n", "append", "t", "--progress-after", "2s")
	if out := mustRun(t, dir, "", "read", "t").stdout; out != "kept\n" {
		t.Errorf("read after append with --progress-after 2s: %q", out)
	}
	t.Setenv("SEGLOG_PROGRESS_AFTER", "later")
	r := runIn(t, dir, strings.NewReader("lost\n"), "append", "t")
	if r.code != exitUsage {
		t.Errorf("SEGLOG_PROGRESS_AFTER=later: exit %d, want %d", r.code, exitUsage)
	}
	wantOneErrorLine(t, r.stderr, "--progress-after", `"later"`)
	mustRun(t, dir, "flag wins\n", "append", "t", "--progress-after", "0s")
}
