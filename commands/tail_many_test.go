package commands

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// appendNumbered appends records "r0", "r1"... "r<n-1>" to topic t,
// spread over its partitions.
func appendNumbered(t *testing.T, dir string, n int) {
	t.Helper()
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, "r%d\n", i)
	}
	mustRun(t, dir, in.String(), "append", "t", "--sync", "never")
}

// tmWrite appends to partition p of topic t, with a writer of its own,
// records with the timestamps given (the writer keeps them from going
// backwards) and values "p/offset".
func tmWrite(t *testing.T, dir string, p int, stamps ...int64) {
	t.Helper()
	w, err := logstore.Open(dir).OpenWriter("t", p, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range stamps {
		if _, err := w.Append(ts, nil, fmt.Appendf(nil, "%d/%d", p, w.NextOffset())); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// tmKey is a record's place in tail's order.
type tmKey struct {
	ts        int64
	partition int
	offset    int
}

// tmTopic makes topic t of parts partitions whose records carry, in each
// partition, sorted timestamps drawn by stamp: few distinct ones, so that
// many tie, within and across partitions. raw writes the segment files
// directly (timestamps before 1970 too, which a writer would not keep);
// else a writer appends them. Values are "p/offset". It returns the
// records' keys in tail's order.
func tmTopic(t *testing.T, parts int, raw bool, stamp func(*rand.Rand) int64) (string, []tmKey) {
	t.Helper()
	dir := newTopic(t, parts)
	rnd := rand.New(rand.NewPCG(7, 9))
	var all []tmKey
	for p := range parts {
		var stamps []int64
		for range 8 + p*3 {
			stamps = append(stamps, stamp(rnd))
		}
		slices.Sort(stamps)
		if raw {
			var b []byte
			for o, ts := range stamps {
				b = format.AppendRecord(b, &format.Record{Offset: uint64(o), Timestamp: ts, Value: fmt.Appendf(nil, "%d/%d", p, o)})
			}
			if err := os.WriteFile(logPath(dir, "t", p), b, 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			tmWrite(t, dir, p, stamps...)
		}
		for o, ts := range stamps {
			all = append(all, tmKey{ts, p, o})
		}
	}
	slices.SortFunc(all, func(a, b tmKey) int {
		return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.partition, b.partition), cmp.Compare(a.offset, b.offset))
	})
	return dir, all
}

// tail -n N prints exactly the N newest records by timestamp across the
// partitions, oldest first, ties by partition then offset, whichever way
// the cut between them and the rest is found: with the newest keys held
// (small N) or by counting over the candidates again (large N), also with
// timestamps on both sides of 1970.
func TestTailNewestCut(t *testing.T) {
	now, around1970 := func(r *rand.Rand) int64 { return 1700000000000000000 + int64(r.IntN(12)) },
		func(r *rand.Rand) int64 { return int64(r.IntN(12)-6) * 1e9 }
	for _, c := range []struct {
		name  string
		raw   bool
		stamp func(*rand.Rand) int64
	}{{"appended", false, now}, {"around 1970", true, around1970}} {
		dir, all := tmTopic(t, 4, c.raw, c.stamp)
		for _, heapMax := range []int64{tailHeapMax, 0} {
			for n := 1; n <= len(all)+3; n++ {
				var want strings.Builder
				for _, k := range all[max(len(all)-n, 0):] {
					fmt.Fprintf(&want, "%d/%d\n", k.partition, k.offset)
				}
				if got := runTuned(t, tuning{tailHeapMax: heapMax}, dir, "tail", "t", "-n", strconv.Itoa(n)).stdout; got != want.String() {
					t.Fatalf("%s, heap max %d: tail -n %d:\n%s\nwant:\n%s", c.name, heapMax, n, got, want.String())
				}
			}
		}
	}
}

// tailPeakRSS runs `seglog tail t -n N > /dev/null` over dir as a process
// and returns its peak resident set size in KiB.
func tailPeakRSS(t *testing.T, dir string, n int) int64 {
	t.Helper()
	cmd := exec.Command(seglogBin(t), "-d", dir, "tail", "t", "-n", strconv.Itoa(n))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("tail -n %d: %v, stderr %q", n, err, stderr.String())
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
}

// What tail -n holds does not grow with the records it reads and prints
// (it held some 100 bytes a record: 1 GB for -n 1000000000 over 10
// million records), with N above the records there (all printed) or
// below (the cut found by counting over the candidates, not holding
// them).
func TestTailNewestMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("appends 500 000 records")
	}
	const small, large = 100_000, 400_000
	dirs := map[int]string{}
	for _, n := range []int{small, large} {
		dirs[n] = newTopic(t, 2)
		appendNumbered(t, dirs[n], n)
	}
	for _, c := range []struct {
		name string
		n    func(records int) int
	}{
		{"-n above the records", func(int) int { return 1_000_000_000 }},
		{"-n below the records", func(records int) int { return records * 2 / 3 }},
	} {
		a, b := tailPeakRSS(t, dirs[small], c.n(small)), tailPeakRSS(t, dirs[large], c.n(large))
		t.Logf("%s: peak RSS %d KiB over %d records, %d KiB over %d", c.name, a, small, b, large)
		// Keys alone, 24 bytes a record, would be 7 MiB more.
		if b-a > 5<<10 {
			t.Errorf("%s: peak RSS %d KiB over %d records, %d KiB over %d; want no more for more records", c.name, a, small, b, large)
		}
	}
}

// manyPartitions makes topic t with parts partitions and three records in
// each, the values "p/i".
func manyPartitions(t *testing.T, parts int) string {
	t.Helper()
	dir := newTopic(t, parts)
	for p := range parts {
		tmWrite(t, dir, p, 1700000000000000000+int64(p), 1700000000000000000+int64(parts+p), 1700000000000000000+int64(2*parts+p))
	}
	return dir
}

// underLimit is a command line that runs seglog ARGS with at most n open
// files (hard limit too: Go raises the soft one to the hard one).
func underLimit(t *testing.T, n int, dir string, args ...string) *exec.Cmd {
	t.Helper()
	quoted := []string{"exec", strconv.Quote(seglogBin(t)), "-d", strconv.Quote(dir)}
	for _, a := range args {
		quoted = append(quoted, strconv.Quote(a))
	}
	return exec.Command("sh", "-c", fmt.Sprintf("ulimit -n %d && %s", n, strings.Join(quoted, " ")))
}

// Readers of a topic of 600 partitions work under `ulimit -n 1024`: they
// hold a bounded number of files open across all partitions, and tail -f
// watches with one inotify instance (it fell back to polling past 128,
// and ran out of descriptors).
func TestManyPartitionsUnderFileLimit(t *testing.T) {
	const parts = 600
	dir := manyPartitions(t, parts)
	lastOf := func(p int) string { return fmt.Sprintf("%d/2", p) }
	for _, c := range []struct {
		args  []string
		lines int
		check func(out []string) error
	}{
		{[]string{"read", "t"}, 3 * parts, nil},
		{[]string{"read", "t", "--offset", "-1"}, parts, func(out []string) error {
			for p, l := range out {
				if l != lastOf(p) {
					return fmt.Errorf("line %d %q, want %q", p, l, lastOf(p))
				}
			}
			return nil
		}},
		{[]string{"tail", "t", "-n", "1"}, 1, func(out []string) error {
			if out[0] != lastOf(parts-1) {
				return fmt.Errorf("%q, want %q", out[0], lastOf(parts-1))
			}
			return nil
		}},
		{[]string{"tail", "t", "-n", "1000"}, 1000, nil},
		{[]string{"describe", "t"}, -1, nil},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			cmd := underLimit(t, 1024, dir, c.args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Fatalf("seglog %q under ulimit -n 1024: %v, stderr:\n%s", c.args, err, stderr.String())
			}
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if c.lines >= 0 && len(lines) != c.lines {
				t.Fatalf("%d lines, want %d", len(lines), c.lines)
			}
			if c.check != nil {
				if err := c.check(lines); err != nil {
					t.Error(err)
				}
			}
		})
	}

	t.Run("tail -f", func(t *testing.T) {
		cmd := underLimit(t, 1024, dir, "tail", "-f", "t", "-n", "0", "--count", "1")
		var stderr syncBuffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		line := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			sc.Scan()
			line <- sc.Text()
		}()
		// sh execs seglog. Once it has its inotify instance it has taken
		// every partition's bounds: a record appended from then on is new
		// to it, whether its partition is watched yet or not.
		eventually(t, 30*time.Second, "tail -f to watch", func() bool { return inotifyOf(cmd.Process.Pid) })
		mustRun(t, dir, "new\n", "append", "t", "--partition", "417")
		select {
		case l := <-line:
			if l != "new" {
				t.Fatalf("followed line %q, want %q; stderr:\n%s", l, "new", stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the appended record was not printed; stderr:\n%s", stderr.String())
		}
		if err := cmd.Wait(); err != nil || stderr.String() != "" {
			t.Fatalf("tail -f under ulimit -n 1024: %v, stderr:\n%s", err, stderr.String())
		}
	})
}

// inotifyOf reports whether process pid (or, when it is sh, its child)
// has an inotify instance.
func inotifyOf(pid int) bool {
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if l, _ := os.Readlink(fd); l == "anon_inode:inotify" {
			return true
		}
	}
	return false
}

// tailPipe runs `seglog tail ARGS | head -1`: tail's stdout a pipe whose
// reader takes one line (none when wantLine is "") and closes. It returns
// tail's exit status and stderr, failing if tail is still running 30 s
// after the reader has gone.
func tailPipe(t *testing.T, dir, wantLine string, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(seglogBin(t), append([]string{"-d", dir, "tail"}, args...)...)
	var stderr syncBuffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if wantLine != "" {
		line, err := bufio.NewReader(r).ReadString('\n')
		if err != nil || line != wantLine+"\n" {
			t.Errorf("first line %q, %v; want %q", line, err, wantLine)
		}
	}
	r.Close() // head -1 exits
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("seglog tail %q still running 30s after its stdout's reader exited; stderr:\n%s", args, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("seglog tail was killed by %v", ws.Signal())
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// `seglog tail -f t -n 1 | head -1` ends as soon as head exits, with
// status 0 and nothing on stderr, though no new record comes to write
// (as GNU tail -f does); with --group, committing what got out. tail -F
// waiting for a topic ends too.
func TestTailFollowClosedPipe(t *testing.T) {
	dir := newTopic(t, 2)
	mustRun(t, dir, "a\nb\nc\n", "append", "t", "--partition", "1")
	if code, stderr := tailPipe(t, dir, "c", "-f", "t", "-n", "1"); code != 0 || stderr != "" {
		t.Errorf("tail -f | head -1: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	if code, stderr := tailPipe(t, dir, "c", "-f", "t", "-n", "1", "--group", "g"); code != 0 || stderr != "" {
		t.Errorf("tail -f --group | head -1: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	// c got out and was committed: the group goes on after it.
	mustRun(t, dir, "d\n", "append", "t", "--partition", "1")
	if got := mustRun(t, dir, "", "read", "t", "--group", "g").stdout; got != "d\n" {
		t.Errorf("read --group g after tail -f --group g | head -1: %q, want %q", got, "d\n")
	}
	if code, stderr := tailPipe(t, dir, "", "-F", "later"); code != 0 || !strings.Contains(stderr, "waiting for it to appear") {
		t.Errorf("tail -F later | true: exit %d, stderr %q", code, stderr)
	}
}

// tail -F on a topic deleted and created again prints the new topic from
// its first record, with a warning, as tail -F prints a file replaced
// under its name; not from the offset it had reached in the old one.
func TestTailFollowRecreatedTopic(t *testing.T) {
	dir := newTopic(t, 1)
	mustRun(t, dir, "a\n", "append", "t")
	tail := startTail(t, dir, "t", "-F", "-n", "1", "--count", "3")
	eventually(t, 30*time.Second, "tail -F to print the old record and watch", func() bool {
		return len(tail.got()) == 1 && inotifyOf(tail.cmd.Process.Pid)
	})
	if err := os.RemoveAll(filepath.Join(dir, "t")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "", "create", "t")
	mustRun(t, dir, "b\nc\n", "append", "t")
	if code := tail.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("tail -F: exit %d; stderr:\n%s", code, tail.stderr)
	}
	if got := strings.Join(tail.got(), " "); got != "a b c" {
		t.Errorf("tail -F across the topic made again printed %q, want %q", got, "a b c")
	}
	// Whether tail looks before the new topic's first append or after it
	// is timing: the new log has no offset 0 yet, or another record there.
	stderr := tail.stderr.String()
	if !strings.Contains(stderr, "seglog: warning: the partition directory of t/0") ||
		!strings.Contains(stderr, "holds another log now (its offset 0 is another record); reading it from its start") &&
			!strings.Contains(stderr, "holds another log now (it has no offset 0); reading it from its start") {
		t.Errorf("stderr %q", stderr)
	}
}
