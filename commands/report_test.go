package commands

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// rtAck is one line of `append --report`: a record acknowledged.
type rtAck struct {
	p int
	o uint64
}

func (a rtAck) String() string { return fmt.Sprintf("%d %d", a.p, a.o) }

// rtParseAck parses a --report line, failing the test on anything else.
func rtParseAck(t testing.TB, line string) rtAck {
	t.Helper()
	ps, offs, ok := strings.Cut(line, " ")
	p, perr := strconv.Atoi(ps)
	o, oerr := strconv.ParseUint(offs, 10, 64)
	if !ok || perr != nil || oerr != nil || p < 0 {
		t.Fatalf("--report line %q is not \"PARTITION OFFSET\"", line)
	}
	return rtAck{p, o}
}

func rtParseAcks(t testing.TB, out string) []rtAck {
	t.Helper()
	if out != "" && !strings.HasSuffix(out, "\n") {
		t.Fatalf("--report output does not end with a newline: %q", out[max(len(out)-40, 0):])
	}
	var acks []rtAck
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l != "" {
			acks = append(acks, rtParseAck(t, l))
		}
	}
	return acks
}

// rtInput is n keyed lines for a topic of parts partitions; want[p] gets
// the values that go to partition p, in order.
func rtInput(run, n, parts int, want [][]string) string {
	var in strings.Builder
	for i := range n {
		key := fmt.Sprintf("user-%d", (i*7+run)%41)
		val := fmt.Sprintf("run %d line %d %s", run, i, strings.Repeat("x", i%50))
		fmt.Fprintf(&in, "%s:%s\n", key, val)
		p := logstore.KeyPartition([]byte(key), parts)
		want[p] = append(want[p], val)
	}
	return in.String()
}

// TestAppendReport: under each sync mode, append --report acknowledges
// every record it appended, exactly once, in offset order per partition
// (across rolls, and continuing where an earlier run stopped), and every
// acknowledged offset holds its record once the process has ended.
func TestAppendReport(t *testing.T) {
	const parts, n = 3, 1500
	for _, mode := range []string{"batch", "exit", "never"} {
		t.Run(mode, func(t *testing.T) {
			dir := newTopic(t, parts)
			want := make([][]string, parts)
			var all []rtAck
			for run := range 2 {
				from := make([]uint64, parts)
				for p := range from {
					from[p] = uint64(len(want[p]))
				}
				cmd := exec.Command(seglogBin(t), "-d", dir, "append", "t", "--key-delimiter", ":",
					"--sync", mode, "--report", "--segment-bytes", "8KiB")
				cmd.Stdin = strings.NewReader(rtInput(run, n, parts, want))
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("run %d: %v, stderr:\n%s", run, err, stderr.String())
				}
				next := from
				for _, a := range rtParseAcks(t, stdout.String()) {
					if a.p >= parts || a.o != next[a.p] {
						t.Fatalf("run %d: acknowledged %v, want partition %d's next to be offset %d (acknowledgements must be in order, each once)", run, a, a.p, next[min(a.p, parts-1)])
					}
					next[a.p]++
					all = append(all, a)
				}
				for p := range parts {
					if next[p] != uint64(len(want[p])) {
						t.Errorf("run %d: partition %d acknowledged offsets up to %d, want all up to %d", run, p, int64(next[p])-1, len(want[p])-1)
					}
				}
			}
			got := map[rtAck]string{}
			for _, r := range readRecords(t, dir, "t") {
				got[rtAck{r.partition, r.offset}] = string(r.value)
			}
			for _, a := range all {
				if v, ok := got[a]; !ok || v != want[a.p][a.o] {
					t.Fatalf("acknowledged %v holds %q (present: %v), want %q", a, v, ok, want[a.p][a.o])
				}
			}
			t.Logf("--sync %s: %d records acknowledged in 2 runs, each read back", mode, len(all))
		})
	}
}

// rtProc is a running `seglog append --report` with its stdin and
// stdout as pipes; its stdout lines arrive on lines.
type rtProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	lines  chan string
	stderr *bytes.Buffer
	done   chan struct{}
}

func rtStart(t *testing.T, name string, args ...string) *rtProc {
	t.Helper()
	p := &rtProc{cmd: exec.Command(name, args...), lines: make(chan string, 1<<16), stderr: new(bytes.Buffer), done: make(chan struct{})}
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if p.stdout, err = p.cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(p.stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *rtProc) write(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, s); err != nil {
		t.Fatalf("write to append's stdin: %v; stderr:\n%s", err, p.stderr)
	}
}

// rtWait is how long a report may take on a loaded machine: only a hang
// should hit it.
const rtWait = 60 * time.Second

// expect waits for the next stdout line, which must be want.
func (p *rtProc) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatalf("append's stdout ended; want the line %q; stderr:\n%s", want, p.stderr)
		}
		if l != want {
			t.Fatalf("append printed %q, want %q", l, want)
		}
	case <-time.After(rtWait):
		t.Fatalf("no %q from append --report within %v while its stdin stays open; stderr:\n%s", want, rtWait, p.stderr)
	}
}

// exit closes stdin and waits for the process to end; it returns the
// exit status.
func (p *rtProc) exit(t *testing.T) int {
	t.Helper()
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(rtWait):
		t.Fatalf("append still running %v after its stdin closed; stderr:\n%s", rtWait, p.stderr)
	}
	return p.cmd.ProcessState.ExitCode()
}

// TestAppendReportBeforeStdinCloses: with --sync batch, each batch is
// synced and acknowledged as it is written, while stdin stays open: a
// consumer can rely on the lines as they come, and each acknowledged
// record is already in the partition.
func TestAppendReportBeforeStdinCloses(t *testing.T) {
	dir := newTopic(t, 1)
	p := rtStart(t, seglogBin(t), "-d", dir, "append", "t", "--sync", "batch", "--report")
	var sent []string
	for i := range 5 {
		v := fmt.Sprintf("slow-%d", i)
		p.write(t, v+"\n")
		sent = append(sent, v)
		p.expect(t, fmt.Sprintf("0 %d", i))
		if got := readValues(t, dir, "t", 0); len(got) != len(sent) || got[i] != v {
			t.Fatalf("after offset %d was acknowledged, partition 0 holds %q; want %q", i, got, sent)
		}
	}
	var burst strings.Builder
	for i := range 300 {
		fmt.Fprintf(&burst, "burst-%d\n", i)
	}
	p.write(t, burst.String())
	for i := range 300 {
		p.expect(t, fmt.Sprintf("0 %d", 5+i))
	}
	if code := p.exit(t); code != 0 {
		t.Fatalf("append exited %d, want 0; stderr:\n%s", code, p.stderr)
	}
	for l := range p.lines {
		t.Errorf("after stdin closed append printed %q; every record had been acknowledged", l)
	}
}

// TestAppendReportClosedStdout: when the reader of the acknowledgements
// goes away, append stops reading (no more records it could not
// acknowledge), keeps what it read, and exits 0 like any command whose
// stdout pipe closed.
func TestAppendReportClosedStdout(t *testing.T) {
	dir := newTopic(t, 1)
	p := rtStart(t, seglogBin(t), "-d", dir, "append", "t", "--sync", "batch", "--report")
	p.write(t, "first\n")
	p.expect(t, "0 0")
	p.stdout.Close()
	p.write(t, "second\n") // acknowledging it meets the closed pipe
	select {
	case <-p.done:
	case <-time.After(rtWait):
		t.Fatalf("append still running %v after its stdout closed, with stdin open; stderr:\n%s", rtWait, p.stderr)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("append exited %d after its stdout closed, want 0; stderr:\n%s", code, p.stderr)
	}
	if got := readValues(t, dir, "t", 0); strings.Join(got, ",") != "first,second" {
		t.Errorf("partition 0 holds %q, want first and second (read before stdout closed)", got)
	}
}

// rtCall is one system call in an strace log.
type rtCall struct {
	name        string // write, fdatasync or fsync
	fd          int
	path        string // what strace -y names the fd
	data        string // what a write wrote (its written part)
	ret         int64
	start, done int // log lines where it began and returned
}

var (
	rtCallRE = regexp.MustCompile(`^(write|fdatasync|fsync)\((\d+)(?:<([^>]*)>)?(.*)$`)
	rtRetRE  = regexp.MustCompile(`\)\s+=\s+(-?\d+)(?:\s.*)?$`)
	rtPidRE  = regexp.MustCompile(`^(\d+)\s+(.*)$`)
)

// rtStrace parses what strace -f -y -s BIG -o wrote: the calls in the
// order they returned.
func rtStrace(t *testing.T, log string) []*rtCall {
	t.Helper()
	var calls []*rtCall
	pending := map[string]*rtCall{} // by pid: a call <unfinished ...>
	for i, line := range strings.Split(log, "\n") {
		m := rtPidRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pid, rest := m[1], m[2]
		if strings.HasPrefix(rest, "<... ") {
			c := pending[pid]
			delete(pending, pid)
			if c == nil {
				continue // a call this trace does not follow
			}
			r := rtRetRE.FindStringSubmatch(rest)
			if r == nil {
				t.Fatalf("strace line %d: no return value in %q", i+1, line)
			}
			c.ret, _ = strconv.ParseInt(r[1], 10, 64)
			c.done = i
			calls = append(calls, c)
			continue
		}
		cm := rtCallRE.FindStringSubmatch(rest)
		if cm == nil {
			continue // signals, exits
		}
		c := &rtCall{name: cm[1], path: cm[3], start: i}
		c.fd, _ = strconv.Atoi(cm[2])
		if c.name == "write" && c.fd == 1 {
			c.data = rtQuoted(t, cm[4])
		}
		if strings.HasSuffix(rest, "<unfinished ...>") {
			pending[pid] = c
			continue
		}
		r := rtRetRE.FindStringSubmatch(rest)
		if r == nil {
			t.Fatalf("strace line %d: no return value in %q", i+1, line)
		}
		c.ret, _ = strconv.ParseInt(r[1], 10, 64)
		c.done = i
		calls = append(calls, c)
	}
	for _, c := range calls {
		if c.ret > 0 && c.data != "" {
			c.data = c.data[:min(int(c.ret), len(c.data))]
		}
	}
	return calls
}

// rtQuoted decodes the string argument strace shows after the fd
// (`, "0 5\n1 7\n", 8) = 8`); the report lines hold only digits,
// spaces and newlines.
func rtQuoted(t *testing.T, args string) string {
	t.Helper()
	s, ok := strings.CutPrefix(args, `, "`)
	end := strings.Index(s, `"`)
	if !ok || end < 0 || strings.HasPrefix(s[end:], `"...`) {
		t.Fatalf("cannot read the data of a write to stdout from strace: %q", args)
	}
	return strings.ReplaceAll(s[:end], `\n`, "\n")
}

// rtLogBytes is the size of all of the topic's .log files.
func rtLogBytes(t *testing.T, dir string) int64 {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "t", "*", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, l := range logs {
		if fi, err := os.Stat(l); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// rtRecordEnds maps each record of the topic's .log files to its file
// (as the kernel names it) and the byte its last byte ends at.
func rtRecordEnds(t *testing.T, dir string, parts int) map[rtAck]struct {
	path string
	end  int64
} {
	t.Helper()
	ends := map[rtAck]struct {
		path string
		end  int64
	}{}
	for p := range parts {
		logs, err := filepath.Glob(filepath.Join(dir, "t", strconv.Itoa(p), "*.log"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range logs {
			real, err := filepath.EvalSymlinks(l)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(l)
			if err != nil {
				t.Fatal(err)
			}
			for pos := int64(0); pos < int64(len(b)); {
				h, err := format.ParseHeader(b[pos:])
				if err != nil {
					t.Fatalf("%s at byte %d: %v", l, pos, err)
				}
				pos += h.RecordLen()
				ends[rtAck{p, h.Offset}] = struct {
					path string
					end  int64
				}{real, pos}
			}
		}
	}
	return ends
}

// rtSyncedBeforeAck checks an strace log of append --report: each
// acknowledgement line written to stdout must come after an fdatasync (or
// fsync) of the record's .log that began after the last write to it
// covering the record had returned. It returns every violation, and how
// many acknowledgements and .log syncs it saw.
func rtSyncedBeforeAck(t *testing.T, calls []*rtCall, ends map[rtAck]struct {
	path string
	end  int64
}) (bad []string, acks, syncs int) {
	t.Helper()
	written := map[string]int64{}  // bytes written to each .log so far
	covered := map[rtAck]*rtCall{} // the .log write that completed a record
	synced := map[string]*rtCall{} // the last sync of each .log that returned
	byEnd := map[string][]rtAck{}  // records of each .log, by where they end
	for a, e := range ends {
		byEnd[e.path] = append(byEnd[e.path], a)
	}
	var partial string // stdout written so far without its newline
	for _, c := range calls {
		if c.ret < 0 {
			continue // EAGAIN, EINTR: retried
		}
		switch {
		case c.name == "write" && strings.HasSuffix(c.path, ".log"):
			written[c.path] += c.ret
			for _, a := range byEnd[c.path] {
				if covered[a] == nil && ends[a].end <= written[c.path] {
					covered[a] = c
				}
			}
		case c.name != "write" && strings.HasSuffix(c.path, ".log"):
			synced[c.path] = c
			syncs++
		case c.name == "write" && c.fd == 1:
			partial += c.data
			for {
				line, rest, ok := strings.Cut(partial, "\n")
				if !ok {
					break
				}
				partial = rest
				a := rtParseAck(t, line)
				acks++
				e, ok := ends[a]
				w := covered[a]
				s := synced[e.path]
				switch {
				case !ok:
					bad = append(bad, fmt.Sprintf("acknowledged %v (strace line %d), which no .log holds", a, c.start+1))
				case w == nil || w.done > c.start:
					bad = append(bad, fmt.Sprintf("acknowledged %v (strace line %d) before the write of its bytes to %s returned", a, c.start+1, filepath.Base(e.path)))
				case s == nil || s.start < w.done || s.done > c.start:
					bad = append(bad, fmt.Sprintf("acknowledged %v (strace line %d) without an fdatasync of %s after the write that holds it (strace line %d) had returned",
						a, c.start+1, filepath.Base(e.path), w.done+1))
				}
			}
		}
	}
	return bad, acks, syncs
}

// TestAppendReportStrace watches append --report from outside with
// strace: before each acknowledgement reaches stdout, the record's .log
// was fdatasync'd after the write holding it. Under --sync batch each
// batch is fed and acknowledged in turn; under exit records are
// acknowledged at rolls and at exit. Under --sync never, which promises no
// durability, the same check must find every acknowledgement unsynced,
// which shows it can fail.
func TestAppendReportStrace(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed: the acknowledgement order is not checked from outside")
	}
	if out, err := exec.Command(strace, "-f", "-o", os.DevNull, "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here (is ptrace refused?): %v: %s", err, bytes.TrimSpace(out))
	}
	const parts = 2
	rounds := 12
	if longMode() {
		rounds = 60
	}
	for _, mode := range []string{"batch", "exit", "never"} {
		t.Run(mode, func(t *testing.T) {
			dir := newTopic(t, parts)
			trace := filepath.Join(t.TempDir(), "strace.log")
			p := rtStart(t, strace, "-f", "-y", "-s", "1048576", "-e", "trace=fdatasync,fsync,write", "-o", trace,
				seglogBin(t), "-d", dir, "append", "t", "--key-delimiter", ":", "--sync", mode, "--report", "--segment-bytes", "4KiB")
			want := make([][]string, parts)
			total, logBytes := 0, int64(0)
			for r := range rounds {
				n := 1 + (r*37)%90
				in := rtInput(r, n, parts, want)
				p.write(t, in)
				total += n
				for _, l := range strings.SplitAfter(in, "\n") {
					if k, v, ok := strings.Cut(strings.TrimSuffix(l, "\n"), ":"); ok {
						logBytes += format.RecordLen([]byte(k), []byte(v))
					}
				}
				if mode != "batch" {
					// The round reaches the files (input paused) before
					// the next arrives: under exit, written is not yet
					// acknowledged.
					eventually(t, rtWait, fmt.Sprintf("round %d in the .log files", r), func() bool { return rtLogBytes(t, dir) >= logBytes })
				} else {
					// Each round is written, synced and acknowledged
					// before the next arrives: many batches.
					for range n {
						select {
						case l, ok := <-p.lines:
							if !ok {
								t.Fatalf("append's stdout ended; stderr:\n%s", p.stderr)
							}
							rtParseAck(t, l)
						case <-time.After(rtWait):
							t.Fatalf("no acknowledgement within %v in round %d; stderr:\n%s", rtWait, r, p.stderr)
						}
					}
				}
			}
			if code := p.exit(t); code != 0 {
				t.Fatalf("strace seglog append exited %d; stderr:\n%s", code, p.stderr)
			}
			log, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			bad, acks, syncs := rtSyncedBeforeAck(t, rtStrace(t, string(log)), rtRecordEnds(t, dir, parts))
			if acks != total {
				t.Fatalf("the strace log shows %d acknowledgements written to stdout, want %d", acks, total)
			}
			if mode == "never" {
				if len(bad) != acks || syncs != 0 {
					t.Errorf("--sync never: the check found %d of %d acknowledgements unsynced and %d .log syncs; want all of them and none", len(bad), acks, syncs)
				}
				return
			}
			for _, b := range bad[:min(len(bad), 10)] {
				t.Error(b)
			}
			if len(bad) > 0 {
				t.Fatalf("%d of %d acknowledgements came before the sync that makes them durable (strace log: %s)", len(bad), acks, trace)
			}
			t.Logf("--sync %s: %d acknowledgements, each after an fdatasync of its .log (%d .log syncs)", mode, acks, syncs)
		})
	}
}

// TestAppendReportInputOrder: with several partitions, line k of the
// report is the k-th record of the input, whatever partition its key sent
// it to, under every sync mode, so a consumer can match acknowledgements
// to the lines it sent without knowing the routing.
func TestAppendReportInputOrder(t *testing.T) {
	const parts, n = 3, 3000
	for _, mode := range []string{"batch", "exit", "never"} {
		t.Run(mode, func(t *testing.T) {
			dir := newTopic(t, parts)
			mustRun(t, dir, "x:before\n", "append", "t", "--key-delimiter", ":") // offsets need not start at 0
			next := make([]uint64, parts)
			next[logstore.KeyPartition([]byte("x"), parts)] = 1
			var in strings.Builder
			var want []string
			for i := range n {
				key := fmt.Sprintf("user-%d", (i*7919)%101)
				fmt.Fprintf(&in, "%s:line %d\n", key, i)
				p := logstore.KeyPartition([]byte(key), parts)
				want = append(want, fmt.Sprintf("%d %d", p, next[p]))
				next[p]++
			}
			cmd := exec.Command(seglogBin(t), "-d", dir, "append", "t", "--key-delimiter", ":", "--sync", mode, "--report", "--segment-bytes", "16KiB")
			cmd.Stdin = chunkedReader(in.String(), 777) // many batches
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v, stderr:\n%s", err, stderr.String())
			}
			got := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if len(got) != n {
				t.Fatalf("%d report lines, want %d", len(got), n)
			}
			for k := range want {
				if got[k] != want[k] {
					t.Fatalf("report line %d is %q, want %q (input line %d's partition and offset)", k+1, got[k], want[k], k+1)
				}
			}
			// What each line names holds that line's value.
			values := map[string]string{}
			for _, r := range readRecords(t, dir, "t") {
				values[fmt.Sprintf("%d %d", r.partition, r.offset)] = string(r.value)
			}
			for k, ack := range got {
				if values[ack] != fmt.Sprintf("line %d", k) {
					t.Fatalf("report line %d names %s, which holds %q", k+1, ack, values[ack])
				}
			}
		})
	}
}

// chunkedReader gives s in pieces of at most n bytes, each read a pause
// for append, so that records reach the files in many batches.
func chunkedReader(s string, n int) io.Reader {
	r, w := io.Pipe()
	go func() {
		for len(s) > 0 {
			k := min(n, len(s))
			if _, err := io.WriteString(w, s[:k]); err != nil {
				return
			}
			s = s[k:]
		}
		w.Close()
	}()
	return r
}

// TestAppendReportBounded: under --sync exit nothing is durable before a
// roll or the exit, yet records cannot wait to be reported without
// bound: once maxUnreported of them wait, append syncs and reports them
// while stdin stays open.
func TestAppendReportBounded(t *testing.T) {
	dir := newTopic(t, 2)
	out := &syncBuffer{}
	in := &untilReported{lines: maxUnreported + 10, out: out, deadline: time.Now().Add(rtWait)}
	runMu.Lock()
	code := Run([]string{"seglog", "-d", dir, "append", "t", "--report", "--sync", "exit"}, in, out, io.Discard)
	runMu.Unlock()
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !in.sawReport {
		t.Fatalf("%d records waited to be reported with stdin open: none was reported before stdin ended", in.lines)
	}
	if got := strings.Count(out.String(), "\n"); got != in.lines {
		t.Errorf("%d report lines, want %d", got, in.lines)
	}
}

// untilReported gives lines lines, then ends only once out holds a report
// line (or the deadline passes).
type untilReported struct {
	lines, sent int
	out         *syncBuffer
	deadline    time.Time
	sawReport   bool
}

func (r *untilReported) Read(p []byte) (int, error) {
	if r.sent < r.lines {
		n := 0
		for r.sent < r.lines && n+3 <= len(p) {
			n += copy(p[n:], "ab\n")
			r.sent++
		}
		return n, nil
	}
	for time.Now().Before(r.deadline) {
		if r.sawReport = r.out.String() != ""; r.sawReport {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0, io.EOF
}
