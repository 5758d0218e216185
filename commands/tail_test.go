package commands

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
)

// tailProc is `seglog tail ...` running as a process, its stdout read line
// by line as it comes.
type tailProc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	mu     sync.Mutex
	lines  []string
	done   chan struct{}
}

func startTail(t *testing.T, dir string, args ...string) *tailProc {
	t.Helper()
	p := &tailProc{stderr: new(syncBuffer), done: make(chan struct{})}
	p.cmd = exec.Command(seglogBin(t), append([]string{"-d", dir, "tail"}, args...)...)
	p.cmd.Stderr = p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
		}
		p.cmd.Wait()
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// syncBuffer is a bytes.Buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (p *tailProc) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// wait waits for tail to exit and returns its status.
func (p *tailProc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("tail still running after %v; %d lines so far; stderr:\n%s", d, len(p.got()), p.stderr)
	}
	return p.cmd.ProcessState.ExitCode()
}

// The N newest records across partitions, by timestamp, oldest first.
func TestTailNewestAcrossPartitions(t *testing.T) {
	dir := newTopic(t, 3)
	order := []struct {
		p int
		v string
	}{{0, "a1"}, {1, "b1"}, {0, "a2"}, {2, "c1"}, {1, "b2"}, {0, "a3"}, {2, "c2"}}
	for _, r := range order {
		mustRun(t, dir, r.v+"\n", "append", "t", "--partition", strconv.Itoa(r.p))
		time.Sleep(2 * time.Millisecond) // distinct timestamps
	}
	if got := mustRun(t, dir, "", "tail", "t", "-n", "4").stdout; got != "c1\nb2\na3\nc2\n" {
		t.Errorf("tail -n 4: %q", got)
	}
	if got := mustRun(t, dir, "", "tail", "t").stdout; got != "a1\nb1\na2\nc1\nb2\na3\nc2\n" {
		t.Errorf("tail (10): %q", got)
	}
	if got := mustRun(t, dir, "", "tail", "t", "-n", "2", "--partition", "0", "--template", "%p/%o %s\n").stdout; got != "0/1 a2\n0/2 a3\n" {
		t.Errorf("tail -n 2 --partition 0: %q", got)
	}
	if got := mustRun(t, dir, "", "tail", "t", "-n", "5", "--count", "2").stdout; got != "a2\nc1\n" {
		t.Errorf("tail -n 5 --count 2: %q", got)
	}
	if got := mustRun(t, dir, "", "tail", "t", "-n", "0").stdout; got != "" {
		t.Errorf("tail -n 0: %q", got)
	}
}

// The test: a real appender writes 100 000 records in bursts into
// 3 partitions with small segments (many rolls) while tail -f runs; every
// record comes out exactly once, in order within its partition.
func TestTailFollowsLiveAppend(t *testing.T) {
	dir := newTopic(t, 3)
	const n = 100000
	// -n n: records appended before tail is up are printed first.
	tail := startTail(t, dir, "t", "-f", "-n", strconv.Itoa(n), "--count", strconv.Itoa(n), "--template", "%p %o %s\n")
	time.Sleep(100 * time.Millisecond)
	app := startAppend(t, dir, "t", "--segment-bytes", "16k", "--sync", "never")
	var burst strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&burst, "v%06d\n", i)
		if i%997 == 996 || i == n-1 {
			app.write(t, burst.String())
			burst.Reset()
			time.Sleep(time.Millisecond)
		}
	}
	app.stdin.Close()
	if code := app.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("append exited %d: %s", code, app.stderr)
	}
	if code := tail.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("tail exited %d: %s", code, tail.stderr)
	}
	seen := map[string]bool{}
	next := map[string]int{}
	for _, l := range tail.got() {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("line %q", l)
		}
		off, _ := strconv.Atoi(f[1])
		if off != next[f[0]] {
			t.Fatalf("partition %s: offset %d after %d", f[0], off, next[f[0]]-1)
		}
		next[f[0]]++
		if seen[f[2]] {
			t.Fatalf("%s printed twice", f[2])
		}
		seen[f[2]] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct records printed, want %d", len(seen), n)
	}
	// Many rolls happened.
	entries, _ := os.ReadDir(filepath.Join(dir, "t", "0"))
	if len(entries) < 30 {
		t.Errorf("partition 0 has %d files: the appender hardly rolled", len(entries))
	}
}

func TestTailMissingTopic(t *testing.T) {
	dir := newTopic(t, 1)
	r := run(t, nil, "-d", dir, "tail", "-f", "nope")
	if r.code != 1 || !strings.Contains(r.stderr, "topic not found") {
		t.Fatalf("tail -f of a missing topic: exit %d, %q", r.code, r.stderr)
	}
	// -F waits for it.
	tail := startTail(t, dir, "-F", "later", "-n", "0", "--count", "2")
	eventually(t, 10*time.Second, "tail -F to say it waits for the topic", func() bool {
		return strings.Contains(tail.stderr.String(), "waiting for it to appear")
	})
	mustRun(t, dir, "x\ny\n", "append", "later", "--create")
	if code := tail.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("tail -F exited %d: %s", code, tail.stderr)
	}
	if got := strings.Join(tail.got(), ","); got != "x,y" {
		t.Errorf("tail -F printed %q", got)
	}
}

func TestTailStops(t *testing.T) {
	dir := newTopic(t, 2)
	mustRun(t, dir, "old\n", "append", "t")
	// --timeout: no new record for that long.
	began := time.Now()
	r := run(t, nil, "-d", dir, "tail", "-f", "t", "--timeout", "300ms")
	if r.code != 0 || r.stdout != "old\n" || time.Since(began) < 300*time.Millisecond {
		t.Fatalf("--timeout: exit %d, %q after %v", r.code, r.stdout, time.Since(began))
	}
	if r := run(t, nil, "-d", dir, "tail", "t", "--timeout", "1s"); r.code != 2 {
		t.Errorf("--timeout without -f: exit %d", r.code)
	}
	// SIGINT and SIGTERM: exit 0, output flushed.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		mustRun(t, dir, "new "+sig.String()+"\n", "append", "t")
		tail := startTail(t, dir, "t", "-f", "-n", "1")
		eventually(t, 5*time.Second, "the record printed", func() bool { return len(tail.got()) == 1 })
		tail.cmd.Process.Signal(sig)
		if code := tail.wait(t, 5*time.Second); code != 0 || tail.stderr.String() != "" {
			t.Errorf("after %v: exit %d, stderr %q", sig, code, tail.stderr)
		}
	}
}

// Followed records keep coming across a retention sweep and a recover
// that cuts a torn tail.
func TestTailFollowAcrossSweepAndRecover(t *testing.T) {
	dir := newTopic(t, 1)
	mustRun(t, dir, "", "append", "t", "--segment-bytes", "100")
	tail := startTail(t, dir, "t", "-f", "-n", "100") // the topic is empty: all it prints is new
	for i := range 10 {
		mustRun(t, dir, fmt.Sprintf("r%d\n", i), "append", "t", "--segment-bytes", "100")
	}
	eventually(t, 5*time.Second, "10 records", func() bool { return len(tail.got()) == 10 })
	mustRun(t, dir, "", "retention-sweep", "t", "--retention-bytes", "1")
	// A torn record, cut by recover; then more records.
	f, err := os.OpenFile(activeLog(t, dir), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0, 0, 0, 0, 0, 0, 0, 10, 0, 0})
	f.Close()
	mustRun(t, dir, "", "recover", "t")
	for i := 10; i < 13; i++ {
		mustRun(t, dir, fmt.Sprintf("r%d\n", i), "append", "t", "--segment-bytes", "100")
	}
	eventually(t, 5*time.Second, "13 records", func() bool { return len(tail.got()) == 13 })
	for i, l := range tail.got() {
		if l != fmt.Sprintf("r%d", i) {
			t.Fatalf("line %d: %q", i, l)
		}
	}
}

// A corrupt record appearing while following ends tail with exit 1 and a
// one-line error; --skip-corrupt goes on.
func TestTailFollowCorrupt(t *testing.T) {
	for _, skip := range []bool{false, true} {
		dir := newTopic(t, 1)
		args := []string{"t", "-f", "-n", "100"} // the topic is empty: all it prints is new
		if skip {
			args = append(args, "--skip-corrupt")
		}
		tail := startTail(t, dir, args...)
		mustRun(t, dir, "good\n", "append", "t")
		eventually(t, 5*time.Second, "the first record", func() bool { return len(tail.got()) == 1 })
		// Damage the next record's bytes before the writer's next one
		// lands after it: write a record with a wrong CRC by hand.
		f, err := os.OpenFile(logPath(dir, "t", 0), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		bad := []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 'b', 'a', 'd'}
		f.Write(bad)
		f.Close()
		// A valid record after it makes the bad one corrupt, not a torn tail.
		appendRaw(t, dir, 2, "after")
		if !skip {
			if code := tail.wait(t, 5*time.Second); code != 1 {
				t.Fatalf("tail exit %d, want 1", code)
			}
			wantOneErrorLine(t, tail.stderr.String(), "corrupt record at byte 32 of ", "(expected offset 1)")
			continue
		}
		// stderr and stdout come through pipes of their own: either may
		// be read first.
		eventually(t, 5*time.Second, "the record after the damage, and the warning", func() bool {
			return len(tail.got()) == 2 && strings.Contains(tail.stderr.String(), "skipping corrupt record at byte 32")
		})
		if got := tail.got(); got[1] != "after" {
			t.Errorf("lines %q, stderr %q", got, tail.stderr)
		}
	}
}

// appendRaw appends a valid record with offset off and value v to
// partition 0's first segment by hand (the writer would refuse the
// partition with a corrupt record in it).
func appendRaw(t *testing.T, dir string, off uint64, v string) {
	t.Helper()
	f, err := os.OpenFile(logPath(dir, "t", 0), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(format.AppendRecord(nil, &format.Record{Offset: off, Timestamp: time.Now().UnixNano(), Value: []byte(v)})); err != nil {
		t.Fatal(err)
	}
}

// activeLog is the .log of partition 0's last segment.
func activeLog(t *testing.T, dir string) string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "t", "0", "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no segments: %v", err)
	}
	return logs[len(logs)-1] // 20-digit names sort as numbers
}

// tail -f --group, killed with -9, resumes where it committed: no record
// skipped, duplicates only of what was printed after the last commit.
func TestTailGroupResumesAfterKill(t *testing.T) {
	dir := newTopic(t, 2)
	var in strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&in, "a%04d\n", i)
	}
	mustRun(t, dir, in.String(), "append", "t")
	tail := startTail(t, dir, "t", "-f", "-n", "0", "--group", "g")
	// Up and following once its start position is committed (within a
	// second, with nothing read).
	eventually(t, 10*time.Second, "the group's first commit", func() bool {
		_, err := os.Stat(filepath.Join(dir, ".groups", "g", "t.json"))
		return err == nil
	})
	in.Reset()
	for i := range 1000 {
		fmt.Fprintf(&in, "b%04d\n", i)
	}
	mustRun(t, dir, in.String(), "append", "t")
	eventually(t, 5*time.Second, "1000 records", func() bool { return len(tail.got()) == 1000 })
	time.Sleep(1500 * time.Millisecond) // a commit went by
	in.Reset()
	for i := range 500 {
		fmt.Fprintf(&in, "c%04d\n", i)
	}
	mustRun(t, dir, in.String(), "append", "t")
	eventually(t, 5*time.Second, "1500 records", func() bool { return len(tail.got()) == 1500 })
	tail.cmd.Process.Signal(syscall.SIGKILL)
	tail.wait(t, 5*time.Second)
	first := tail.got()
	mustRun(t, dir, "last\n", "append", "t")
	second := strings.Fields(mustRun(t, dir, "", "tail", "t", "-n", "0", "--group", "g").stdout)
	// The b records were committed before the kill; the c ones may come
	// again; nothing is missing.
	seen := map[string]int{}
	for _, v := range append(first, second...) {
		seen[v]++
	}
	for _, v := range first[:1000] {
		if seen[v] != 1 {
			t.Fatalf("%s printed %d times: it was committed before the kill", v, seen[v])
		}
	}
	if len(seen) != 1501 || seen["last"] != 1 {
		t.Fatalf("%d distinct records over both runs, want 1501", len(seen))
	}
	// A third run has nothing new.
	if out := mustRun(t, dir, "", "tail", "t", "-n", "0", "--group", "g").stdout; out != "" {
		t.Errorf("third run printed %q", out)
	}
}

// tail -n N prints the N newest valid records: offsets skipped inside a
// segment, or in a gap between segments, are no records. Damage met while
// printing them stops tail there (exit 1), as it stops read, unless
// --skip-corrupt.
func TestTailNewestValidRecords(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "t")
	mustRun(t, dir, "v0\nv1\nv2\n", "append", "t")
	appendRaw(t, dir, 4, "v4") // offsets 0, 1, 2, 4

	r := runIn(t, dir, nil, "tail", "-n", "2", "t")
	if r.code != exitError || r.stdout != "v2\n" {
		t.Errorf("tail -n 2: exit %d, stdout %q; want v2, then exit 1", r.code, r.stdout)
	}
	wantOneErrorLine(t, r.stderr, "corrupt record at byte 90", "(expected offset 3)", "--skip-corrupt")
	r = runIn(t, dir, nil, "tail", "-n", "2", "--skip-corrupt", "t")
	if r.code != exitOK || r.stdout != "v2\nv4\n" || !strings.HasPrefix(r.stderr, "seglog: warning: skipping corrupt record at byte 90") {
		t.Errorf("tail -n 2 --skip-corrupt: exit %d, stdout %q, stderr %q; want v2, v4", r.code, r.stdout, r.stderr)
	}
	if r := runIn(t, dir, nil, "tail", "-n", "10", "--skip-corrupt", "t"); r.stdout != "v0\nv1\nv2\nv4\n" {
		t.Errorf("tail -n 10 --skip-corrupt: %q", r.stdout)
	}

	// Split by salvage, offset 3 is a gap between segments.
	mustRun(t, dir, "", "recover", "t", "--salvage")
	if r := mustRun(t, dir, "", "tail", "-n", "2", "t"); r.stdout != "v2\nv4\n" || r.stderr != "" {
		t.Errorf("tail -n 2 across the gap: stdout %q, stderr %q; want v2, v4", r.stdout, r.stderr)
	}
	if r := mustRun(t, dir, "", "tail", "-n", "1", "t"); r.stdout != "v4\n" {
		t.Errorf("tail -n 1 across the gap: %q", r.stdout)
	}
}
