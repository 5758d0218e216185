package commands

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests run seglog as a separate process (seglogBin), for what only
// a process shows: signals, pipes, locks between processes, rlimits.

// startAppend starts `seglog -d dir append ARGS` with its stdin a pipe the
// test writes to, and its stderr collected.
type appendProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *bytes.Buffer
	done   chan struct{} // closed when it has exited
	err    error         // from Wait, once done
}

func startAppend(t *testing.T, dir string, args ...string) *appendProc {
	t.Helper()
	p := &appendProc{stderr: new(bytes.Buffer), done: make(chan struct{})}
	p.cmd = exec.Command(seglogBin(t), append([]string{"-d", dir, "append"}, args...)...)
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
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

func (p *appendProc) write(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, s); err != nil {
		t.Fatal(err)
	}
}

// wait waits for the process to exit and returns its exit status.
func (p *appendProc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("seglog %q still running after %v; stderr so far:\n%s", p.cmd.Args[1:], d, p.stderr)
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *appendProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// valuesVisible reports whether partition p of topic t holds exactly n
// records.
func valuesVisible(t *testing.T, dir, topic string, p, n int) func() bool {
	return func() bool { return len(readValues(t, dir, topic, p)) == n }
}

// TestClosedPipe: `seglog read t | head -1` ends quietly with status 0:
// a write into a closed pipe must not kill seglog with SIGPIPE.
func TestClosedPipe(t *testing.T) {
	dir := newTopic(t, 1)
	var in strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&in, "record %d\n", i)
	}
	mustRun(t, dir, in.String(), "append", "t", "--sync", "never")

	for _, format := range []string{"value", "json"} {
		t.Run(format, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd := exec.Command(seglogBin(t), "-d", dir, "read", "t", "--format", format)
			cmd.Stdout = w
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			line, err := bufio.NewReader(r).ReadString('\n')
			if err != nil || !strings.Contains(line, "record 0") {
				t.Errorf("first line %q, %v", line, err)
			}
			r.Close() // like head -1
			err = cmd.Wait()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("seglog read was killed by %v", ws.Signal())
			}
			if err != nil || stderr.Len() != 0 {
				t.Errorf("seglog read | head -1: %v, stderr %q; want status 0 and nothing", err, stderr.String())
			}
		})
	}
}

// A read whose stdout has no reader any more stops instead of reading on
// for nobody: here one started with the pipe already closed, passing over
// records it would not print (--key): it ends at once, with status 0, and
// its group stays where it was.
func TestReadStopsWithoutReader(t *testing.T) {
	dir := newTopic(t, 1)
	appendNumbered(t, dir, 20000)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := exec.Command(seglogBin(t), "-d", dir, "read", "t", "--group", "g", "--key", "none")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	err = cmd.Run()
	w.Close()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("read into a pipe without a reader: %v, stderr %q; want status 0 and nothing", err, stderr.String())
	}
	if got := mustRun(t, dir, "", "read", "t", "--group", "g", "--count", "1").stdout; got != "r0\n" {
		t.Errorf("the group moved: read --group g gives %q, want %q", got, "r0\n")
	}
}

// TestTwoAppenders: a second appender to a partition fails at once naming
// the partition, the lock and the holder; one with --wait waits and then
// appends; nothing is lost or interleaved.
func TestTwoAppenders(t *testing.T) {
	dir := newTopic(t, 1)
	first := startAppend(t, dir, "t", "--partition", "0")
	first.write(t, "first-0\n")
	eventually(t, 5*time.Second, "first record visible", valuesVisible(t, dir, "t", 0, 1))

	// The second fails after the 2 s retry, with status 1.
	start := time.Now()
	second := exec.Command(seglogBin(t), "-d", dir, "append", "t", "--partition", "0")
	second.Stdin = strings.NewReader("second\n")
	var stderr bytes.Buffer
	second.Stderr = &stderr
	err := second.Run()
	elapsed := time.Since(start)
	if second.ProcessState.ExitCode() != 1 {
		t.Errorf("second appender: %v, want exit status 1; stderr %q", err, stderr.String())
	}
	if elapsed > 4*time.Second {
		t.Errorf("second appender took %v to fail", elapsed)
	}
	wantOneErrorLine(t, stderr.String(), "t/0", "locked")
	if pid := first.cmd.Process.Pid; procLocksShow(t, pid, filepath.Join(dir, "t", "0")) {
		if !strings.Contains(stderr.String(), fmt.Sprintf("pid %d", pid)) {
			t.Errorf("/proc/locks shows pid %d holding t/0, but the error does not name it: %q", pid, stderr.String())
		}
	} else {
		t.Logf("/proc/locks does not show the holder; not checking the pid in %q", stderr.String())
	}

	// The third waits for as long as it takes.
	const n = 2000
	var thirdIn strings.Builder
	for i := range n {
		fmt.Fprintf(&thirdIn, "third-%d-%s\n", i, strings.Repeat("z", i%37))
	}
	third := exec.Command(seglogBin(t), "-d", dir, "append", "t", "--partition", "0", "--wait")
	third.Stdin = strings.NewReader(thirdIn.String())
	var thirdErr bytes.Buffer
	third.Stderr = &thirdErr
	if err := third.Start(); err != nil {
		t.Fatal(err)
	}
	thirdDone := make(chan error, 1)
	go func() { thirdDone <- third.Wait() }()
	var firstIn strings.Builder
	for i := 1; i < n; i++ {
		fmt.Fprintf(&firstIn, "first-%d-%s\n", i, strings.Repeat("y", i%41))
	}
	first.write(t, firstIn.String())
	select {
	case err := <-thirdDone:
		t.Fatalf("--wait appender ended while the lock was held: %v, %s", err, thirdErr.String())
	case <-time.After(2500 * time.Millisecond): // past the default 2 s retry
	}
	first.stdin.Close()
	if code := first.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("first appender: exit %d, %s", code, first.stderr)
	}
	select {
	case err := <-thirdDone:
		if err != nil {
			t.Fatalf("--wait appender: %v, %s", err, thirdErr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("--wait appender did not finish after the lock was released")
	}

	got := readValues(t, dir, "t", 0)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("first-%d-%s", i, strings.Repeat("y", i%41)))
	}
	want[0] = "first-0"
	for i := range n {
		want = append(want, fmt.Sprintf("third-%d-%s", i, strings.Repeat("z", i%37)))
	}
	if !equalStrings(got, want) {
		t.Errorf("partition holds %d records, want %d (first's then third's, each once, whole)", len(got), len(want))
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Errorf("first difference at offset %d: %q, want %q", i, got[i], want[i])
				break
			}
		}
	}
}

// procLocksShow reports whether /proc/locks lists a flock by pid on dir.
func procLocksShow(t *testing.T, pid int, dir string) bool {
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false
	}
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && f[1] == "FLOCK" && f[4] == strconv.Itoa(pid) && strings.HasSuffix(f[5], ":"+strconv.FormatUint(st.Ino, 10)) {
			return true
		}
	}
	return false
}

// TestAppendSignals: on SIGINT or SIGTERM with stdin still open, append
// writes and syncs what it has read, prints its summary and exits 0.
func TestAppendSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := newTopic(t, 2)
			p := startAppend(t, dir, "t", "--key-delimiter", ":")
			p.write(t, "a:1\nb:2\n")
			p.write(t, "c:3\nd:4\ne:5\n")
			eventually(t, 5*time.Second, "records visible", func() bool { return len(readValues(t, dir, "t", -1)) == 5 })
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t, 5*time.Second); code != 0 {
				t.Fatalf("after %v: exit %d (%v), stderr %q", sig, code, p.err, p.stderr)
			}
			if !strings.Contains(p.stderr.String(), "appended 5 records to t") {
				t.Errorf("no summary on stderr: %q", p.stderr)
			}
			if strings.Contains(p.stderr.String(), "seglog: ") {
				t.Errorf("error on stderr: %q", p.stderr)
			}
			recs := readRecords(t, dir, "t")
			if len(recs) != 5 {
				t.Errorf("%d records after %v, want 5", len(recs), sig)
			}
			// The lock is free again.
			mustRun(t, dir, "f:6\n", "append", "t", "--key-delimiter", ":", "--wait-timeout", "1s")
		})
	}
}

// TestAppendLatency: a line written to append's stdin shows up while stdin
// stays open.
func TestAppendLatency(t *testing.T) {
	dir := newTopic(t, 1)
	p := startAppend(t, dir, "t")
	for i := range 3 {
		p.write(t, fmt.Sprintf("line %d\n", i))
		eventually(t, 5*time.Second, fmt.Sprintf("line %d visible with stdin open", i), valuesVisible(t, dir, "t", 0, i+1))
	}
	// A partial line is not a record until its newline arrives.
	p.write(t, "part")
	time.Sleep(50 * time.Millisecond)
	p.write(t, "ial\n")
	eventually(t, 5*time.Second, "joined line visible", valuesVisible(t, dir, "t", 0, 4))
	if got := readValues(t, dir, "t", 0); got[3] != "partial" {
		t.Errorf("got %q", got)
	}
	if p.exited() {
		t.Fatalf("append exited with stdin open: %s", p.stderr)
	}
	p.stdin.Close()
	if code := p.wait(t, 5*time.Second); code != 0 {
		t.Errorf("exit %d: %s", code, p.stderr)
	}
}

// TestAppendEFBIG: when the .log write fails part-way (file size limit),
// append fails naming the file and leaves only whole records.
func TestAppendEFBIG(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) not installed")
	}
	dir := newTopic(t, 1)
	var values []string
	var in strings.Builder
	for i := range 10 {
		values = append(values, fmt.Sprintf("before-%d", i))
		in.WriteString(values[i] + "\n")
	}
	mustRun(t, dir, in.String(), "append", "t")
	log := logPath(dir, "t", 0)
	fi, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	limit := fi.Size() + 5000

	in.Reset()
	for i := range 3000 {
		v := fmt.Sprintf("line-%05d-%s", i, strings.Repeat("x", i%53))
		values = append(values, v)
		in.WriteString(v + "\n")
	}
	cmd := exec.Command(prlimit, fmt.Sprintf("--fsize=%d", limit), seglogBin(t), "-d", dir, "append", "t")
	cmd.Stdin = strings.NewReader(in.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("append killed by %v (SIGXFSZ must not kill it)", ws.Signal())
	}
	if cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("append over the size limit: %v, want exit status 1; stderr %q", err, stderr.String())
	}
	wantLastErrorLine(t, stderr.String(), log)

	recs := readRecords(t, dir, "t")
	if len(recs) <= 10 || len(recs) >= len(values) {
		t.Errorf("%d records after the failure; want some but not all of %d", len(recs), len(values))
	}
	var size int64
	for i, r := range recs {
		if string(r.value) != values[i] || r.key != nil || r.offset != uint64(i) {
			t.Fatalf("record %d: offset %d value %q, want %q", i, r.offset, r.value, values[i])
		}
		size += 28 + int64(len(r.value))
	}
	fi, err = os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != size {
		t.Errorf("%s is %d bytes; its %d whole records make %d (torn bytes left behind)", log, fi.Size(), len(recs), size)
	}
	if fi.Size() > limit {
		t.Errorf("%s is %d bytes, over the limit %d", log, fi.Size(), limit)
	}
	// The index holds at most an entry per record, and none past the log.
	if xi, err := os.Stat(strings.TrimSuffix(log, ".log") + ".index"); err != nil || xi.Size()%16 != 0 || xi.Size() > 16*int64(len(recs)) {
		t.Errorf("index: %v, %v", xi.Size(), err)
	}
	// Appending goes on where the valid data ends.
	mustRun(t, dir, "after\n", "append", "t")
	recs2 := readRecords(t, dir, "t")
	if len(recs2) != len(recs)+1 || string(recs2[len(recs)].value) != "after" || recs2[len(recs)].offset != uint64(len(recs)) {
		t.Errorf("append after the failure: %d records", len(recs2))
	}
}

// TestAppendCutsTornTail: a half-written record at the end of the active
// segment (a crash) is saved to quarantine and cut, with a warning, and
// offsets continue.
func TestAppendCutsTornTail(t *testing.T) {
	dir := newTopic(t, 1)
	mustRun(t, dir, "a\nb\nc\n", "append", "t")
	log := logPath(dir, "t", 0)
	// Half a header: the next offset (3) and the first 2 bytes of a size.
	torn := binary.BigEndian.AppendUint64(nil, 3)
	torn = append(torn, 0, 0)
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(torn); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(seglogBin(t), "-d", dir, "append", "t")
	cmd.Stdin = strings.NewReader("d\ne\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("append: %v, %s", err, stderr.String())
	}
	qdir := filepath.Join(dir, ".quarantine", "t", "0")
	bins, _ := filepath.Glob(filepath.Join(qdir, "*.bin"))
	if len(bins) != 1 {
		t.Fatalf("quarantine holds %q, want one .bin", bins)
	}
	if b, err := os.ReadFile(bins[0]); err != nil || !bytes.Equal(b, torn) {
		t.Errorf("quarantined bytes %x, %v; want %x", b, err, torn)
	}
	if notes, _ := filepath.Glob(filepath.Join(qdir, "*.json")); len(notes) != 1 {
		t.Errorf("quarantine notes: %q", notes)
	}
	var warning string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "seglog: warning: ") {
			warning = l
		}
	}
	for _, w := range []string{"t/0", "cut", "10 bytes", bins[0]} {
		if !strings.Contains(warning, w) {
			t.Errorf("warning %q does not mention %q", warning, w)
		}
	}
	recs := readRecords(t, dir, "t")
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%d:%s", r.offset, r.value))
	}
	if strings.Join(got, " ") != "0:a 1:b 2:c 3:d 4:e" {
		t.Errorf("records %q", got)
	}
	if fi, _ := os.Stat(log); fi.Size() != 5*29 {
		t.Errorf(".log is %d bytes, want %d", fi.Size(), 5*29)
	}
}

// TestAppendSignalMidLine: at SIGTERM or SIGINT an unfinished line (or
// JSON object) is not a record: what was read of it is dropped with a
// warning counting its bytes, every complete record is appended, synced
// and reported, and the exit status is 0.
func TestAppendSignalMidLine(t *testing.T) {
	for _, tc := range []struct {
		name     string
		flags    []string
		input    string // complete records, then the start of one more
		want     []string
		fragment string
		sig      syscall.Signal
	}{
		{"lines", nil, "line-1\nline-2\npartial-li", []string{"line-1", "line-2"}, "partial-li", syscall.SIGTERM},
		{"key delimiter", []string{"--key-delimiter", ":"}, "k1:value1\nk2:val", []string{"value1"}, "k2:val", syscall.SIGINT},
		{"json", []string{"--input", "json"}, `{"value":"a"}` + "\n" + `{"value":"b"}` + "\n" + `{"value":"c`, []string{"a", "b"}, `{"value":"c`, syscall.SIGTERM},
		{"multi-byte delimiter", []string{"--delimiter", `\n--\n`}, "one\n--\ntwo\n-", []string{"one"}, "two\n-", syscall.SIGTERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newTopic(t, 1)
			args := append([]string{"-d", dir, "append", "t", "--report"}, tc.flags...)
			p := rtStart(t, seglogBin(t), args...)
			p.write(t, tc.input) // one write: read whole, the fragment too
			eventually(t, rtWait, "the complete records written", valuesVisible(t, dir, "t", 0, len(tc.want)))
			if err := p.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.done:
			case <-time.After(rtWait):
				t.Fatalf("append still running %v after %v; stderr:\n%s", rtWait, tc.sig, p.stderr)
			}
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit %d after %v mid-record, want 0; stderr:\n%s", code, tc.sig, p.stderr)
			}
			var acks []string
			for l := range p.lines {
				acks = append(acks, l)
			}
			var wantAcks []string
			for i := range tc.want {
				wantAcks = append(wantAcks, fmt.Sprintf("0 %d", i))
			}
			if !equalStrings(acks, wantAcks) {
				t.Errorf("--report printed %q, want %q: the fragment must not be acknowledged", acks, wantAcks)
			}
			if got := readValues(t, dir, "t", 0); !equalStrings(got, tc.want) {
				t.Errorf("the topic holds %q, want %q", got, tc.want)
			}
			stderr := p.stderr.String()
			if want := fmt.Sprintf("seglog: warning: stopped by %s in the middle of line %d of the input: dropped the %d bytes read of it", map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[tc.sig], len(tc.want)+1, len(tc.fragment)); !strings.Contains(stderr, want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr)
			}
			if !strings.Contains(stderr, fmt.Sprintf("appended %d record", len(tc.want))) {
				t.Errorf("no summary on stderr:\n%s", stderr)
			}
			if strings.Contains(strings.ReplaceAll(stderr, "seglog: warning: ", ""), "seglog: ") {
				t.Errorf("an error on stderr:\n%s", stderr)
			}
		})
	}
	// With -q the warning goes too.
	dir := newTopic(t, 1)
	p := startAppend(t, dir, "t", "-q")
	p.write(t, "whole\nhalf")
	eventually(t, rtWait, "the complete record written", valuesVisible(t, dir, "t", 0, 1))
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, rtWait); code != 0 || p.stderr.Len() != 0 {
		t.Errorf("-q: exit %d, stderr %q; want 0 and nothing", code, p.stderr)
	}
}

// TestAppendManyPartitions: append writes to a topic with more partitions
// than its open-file limit would allow it three files each for: it holds
// one descriptor per partition (its lock) and the segment files of a
// bounded few, closing idle ones (synced first, so --report stays right)
// and opening them again as records come.
func TestAppendManyPartitions(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit is not installed: no open-file limit to run append under")
	}
	const parts, rounds = 400, 5
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--partitions", strconv.Itoa(parts))
	for _, tc := range []struct {
		name  string
		flags []string
		line  func(i int) string
	}{
		{"round-robin", nil, func(i int) string { return fmt.Sprintf("r%d", i) }},
		{"keyed, sync batch", []string{"--key-delimiter", ":", "--sync", "batch"}, func(i int) string { return fmt.Sprintf("key-%d:k%d", i%(3*parts), i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			value := func(i int) string { // what line i stores
				l := tc.line(i)
				if _, v, ok := strings.Cut(l, ":"); ok {
					return v
				}
				return l
			}
			var in strings.Builder
			want := map[string]bool{}
			for i := range parts * rounds {
				fmt.Fprintln(&in, tc.line(i))
				want[value(i)] = true
			}
			args := append([]string{"--nofile=1024:1024", seglogBin(t), "-d", dir, "append", "t", "--report"}, tc.flags...)
			cmd := exec.Command(prlimit, args...)
			cmd.Stdin = chunkedReader(in.String(), 997) // many batches: writers closed and opened again
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("append to %d partitions with 1024 open files at most: %v; stderr:\n%s", parts, err, stderr.String())
			}
			byPlace := map[string]string{}
			for _, r := range readRecords(t, dir, "t") {
				v := string(r.value)
				if v[0] != value(0)[0] {
					continue // the other run's
				}
				if !want[v] {
					t.Fatalf("record %q was not sent, or came twice", v)
				}
				delete(want, v)
				byPlace[fmt.Sprintf("%d %d", r.partition, r.offset)] = v
			}
			if len(want) > 0 {
				t.Fatalf("%d records sent are missing", len(want))
			}
			acks := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if len(acks) != parts*rounds {
				t.Fatalf("%d report lines, want %d", len(acks), parts*rounds)
			}
			for i, ack := range acks {
				if byPlace[ack] != value(i) {
					t.Fatalf("report line %d names %s, which holds %q, not %q", i+1, ack, byPlace[ack], value(i))
				}
			}
		})
	}
}

// TestAppendManyPartitionsReportBound: when the records waiting to be
// reported reach their bound and every writer holding some syncs at
// once, the writers that opened their files for it count against the
// open-file bound like any other. Every other record goes to one hot
// partition, whose writer stays open and unsynced under --sync exit, so
// the first record keeps the rest waiting; the others go round-robin.
func TestAppendManyPartitionsReportBound(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit is not installed: no open-file limit to run append under")
	}
	const parts = 400
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--partitions", strconv.Itoa(parts))
	n := maxUnreported + 1000 // even
	cmd := exec.Command(prlimit, "--nofile=1024:1024", seglogBin(t), "-d", dir, "append", "t", "--report", "--sync", "exit", "--key-delimiter", ":")
	// From a file, stdin never pauses: no write in between but those the
	// bounds force.
	in := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(in, []byte(strings.Repeat("hot:a\nb\n", n/2)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdin = f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	if got := bytes.Count(out, []byte("\n")); got != n {
		t.Errorf("%d report lines, want %d", got, n)
	}
}
