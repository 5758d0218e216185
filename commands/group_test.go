package commands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/logstore"
)

// gpTopic makes topic t with the given number of records in each
// partition, valued "p<P>-<offset>" (segments of segBytes, 0: default).
func gpTopic(t *testing.T, counts []int, segBytes int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--partitions", fmt.Sprint(len(counts)))
	for p, n := range counts {
		var in strings.Builder
		for i := range n {
			fmt.Fprintf(&in, "p%d-%d\n", p, i)
		}
		args := []string{"append", "t", "--partition", fmt.Sprint(p), "--sync", "never"}
		if segBytes > 0 {
			args = append(args, "--segment-bytes", fmt.Sprint(segBytes))
		}
		mustRun(t, dir, in.String(), args...)
	}
	return dir
}

// gpPositions is what group g has committed for topic t.
func gpPositions(t *testing.T, dir, group string) map[int]uint64 {
	t.Helper()
	pos, err := groupPositions(dir, group)
	if err != nil {
		t.Fatal(err)
	}
	return pos["t"]
}

// gpKeys renders records as "P/O" strings.
func gpKeys(recs []record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%d/%d", r.partition, r.offset))
		if string(r.value) != fmt.Sprintf("p%d-%d", r.partition, r.offset) {
			out[len(out)-1] += "(bad value " + string(r.value) + ")"
		}
	}
	return out
}

// gpAll is every record of gpTopic(counts) in read's order.
func gpAll(counts []int) []string {
	var out []string
	for p, n := range counts {
		for i := range n {
			out = append(out, fmt.Sprintf("%d/%d", p, i))
		}
	}
	return out
}

func gpDecode(t *testing.T, out string) []record {
	t.Helper()
	var recs []record
	for _, l := range parseJSONLines(t, out) {
		recs = append(recs, l.record(t))
	}
	return recs
}

// Runs with --count split the records exactly: together they print every
// record once, in order, whatever the split, across partitions (one of
// them empty) and segments.
func TestReadGroupResumesExactly(t *testing.T) {
	counts := []int{23, 0, 9, 14}
	dir := gpTopic(t, counts, 100)
	want := gpAll(counts)
	for _, split := range []int{1, 5, 9, 23, 100} {
		group := fmt.Sprintf("split-%d", split)
		var got []string
		for run := 0; run < 100; run++ {
			r := mustRun(t, dir, "", "read", "t", "--group", group, "--count", fmt.Sprint(split), "--format", "json")
			if r.stderr != "" {
				t.Errorf("stderr %q", r.stderr)
			}
			recs := gpKeys(gpDecode(t, r.stdout))
			got = append(got, recs...)
			if len(recs) < split {
				break
			}
		}
		if !equalStrings(got, want) {
			t.Errorf("--count %d runs printed\n%q\nwant\n%q", split, got, want)
		}
		// Everything is read: the group is at each partition's end.
		if pos := gpPositions(t, dir, group); !maps.Equal(pos, map[int]uint64{0: 23, 1: 0, 2: 9, 3: 14}) {
			t.Errorf("--count %d: positions %v", split, pos)
		}
		if r := mustRun(t, dir, "", "read", "t", "--group", group); r.stdout != "" {
			t.Errorf("a read after the end printed %q", r.stdout)
		}
	}
	// New records are read by the next run, and only they.
	mustRun(t, dir, "new\n", "append", "t", "--partition", "1")
	if r := mustRun(t, dir, "", "read", "t", "--group", "split-5"); r.stdout != "new\n" {
		t.Errorf("after an append: %q", r.stdout)
	}
	// --partition reads and commits that partition only.
	mustRun(t, dir, "", "read", "t", "--group", "one", "--partition", "2", "--count", "4")
	if pos := gpPositions(t, dir, "one"); !maps.Equal(pos, map[int]uint64{2: 4}) {
		t.Errorf("--partition 2 --count 4: positions %v", pos)
	}
	// A --key filter moves the group past the records it skips.
	mustRun(t, dir, "k:x\nj:y\nk:z\nj:w\n", "append", "t", "--partition", "1", "--key-delimiter", ":")
	r := mustRun(t, dir, "", "read", "t", "--group", "split-5", "--key", "k")
	if r.stdout != "x\nz\n" {
		t.Errorf("--key k: %q", r.stdout)
	}
	if pos := gpPositions(t, dir, "split-5"); pos[1] != 5 {
		t.Errorf("after --key: partition 1 at %d, want 5 (past the filtered records)", pos[1])
	}
}

// An explicit --offset or --since wins over the committed position, and
// the group goes on from where it stopped; a group started at the end
// stays there though it read nothing.
func TestReadGroupExplicitStart(t *testing.T) {
	dir := gpTopic(t, []int{10}, 0)
	mustRun(t, dir, "", "read", "t", "--group", "g", "--count", "6")
	r := mustRun(t, dir, "", "read", "t", "--group", "g", "--offset", "2", "--count", "2")
	if r.stdout != "p0-2\np0-3\n" {
		t.Errorf("--offset 2 with a group at 6: %q", r.stdout)
	}
	if pos := gpPositions(t, dir, "g"); pos[0] != 4 {
		t.Errorf("position %d, want 4", pos[0])
	}
	if r := mustRun(t, dir, "", "read", "t", "--group", "g", "--count", "1"); r.stdout != "p0-4\n" {
		t.Errorf("after the explicit start: %q", r.stdout)
	}
	// --since: every record is recent, so a minute ago is the beginning.
	if r := mustRun(t, dir, "", "read", "t", "--group", "g", "--since", "1m", "--count", "1"); r.stdout != "p0-0\n" {
		t.Errorf("--since 1m: %q", r.stdout)
	}
	ahead := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if r := mustRun(t, dir, "", "read", "t", "--group", "g", "--since", ahead); r.stdout != "" || gpPositions(t, dir, "g")[0] != 10 {
		t.Errorf("--since an hour ahead: %q, position %d (want the end, 10)", r.stdout, gpPositions(t, dir, "g")[0])
	}

	mustRun(t, dir, "", "read", "t", "--group", "late", "--offset", "end")
	if pos := gpPositions(t, dir, "late"); pos[0] != 10 {
		t.Errorf("--offset end: position %v, want 10", pos)
	}
	mustRun(t, dir, "after\n", "append", "t")
	if r := mustRun(t, dir, "", "read", "t", "--group", "late"); r.stdout != "after\n" {
		t.Errorf("a group started at the end: %q", r.stdout)
	}
}

// A committed position that retention removed resumes at the start with
// a warning; one past the end (a replaced partition) at the end.
func TestReadGroupRetention(t *testing.T) {
	dir := gpTopic(t, []int{40}, 100) // 3 records a segment
	mustRun(t, dir, "", "read", "t", "--group", "g", "--count", "4")
	mustRun(t, dir, "", "retention-sweep", "t", "--retention-bytes", "300")
	p, err := logstore.Open(dir).OpenPartition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	start, next, err := p.Bounds()
	if err != nil || start <= 4 || next != 40 {
		t.Fatalf("after the sweep: start %d next %d, %v; the test wants the group's position 4 removed", start, next, err)
	}
	r := mustRun(t, dir, "", "read", "t", "--group", "g", "--format", "json")
	wantWarn := fmt.Sprintf("seglog: warning: group g: t/0 offset 4 was removed by retention; resuming at %d\n", start)
	if r.stderr != wantWarn {
		t.Errorf("stderr %q, want %q", r.stderr, wantWarn)
	}
	recs := gpDecode(t, r.stdout)
	if len(recs) != int(next-start) || recs[0].offset != start {
		t.Errorf("read %q, want %d..39", gpKeys(recs), start)
	}
	if pos := gpPositions(t, dir, "g"); pos[0] != 40 {
		t.Errorf("position %d, want 40", pos[0])
	}
	if q := mustRun(t, dir, "", "-q", "read", "t", "--group", "g"); q.stderr != "" {
		t.Errorf("--quiet: %q", q.stderr)
	}

	// Past the end: the partition was replaced by a shorter one.
	g, err := logstore.Open(dir).OpenGroup("ahead", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Commit("t", map[int]uint64{0: 1000}); err != nil {
		t.Fatal(err)
	}
	g.Close()
	r = mustRun(t, dir, "", "read", "t", "--group", "ahead")
	wantWarn = "seglog: warning: group ahead: t/0 offset 1000 is past the end of the partition (next offset 40; was it replaced?); resuming at 40\n"
	if r.stdout != "" || r.stderr != wantWarn {
		t.Errorf("past the end: stdout %q stderr %q, want %q", r.stdout, r.stderr, wantWarn)
	}
	if pos := gpPositions(t, dir, "ahead"); pos[0] != 40 {
		t.Errorf("position %d, want 40", pos[0])
	}
}

// epipeWriter takes n bytes, then fails like a closed pipe.
type epipeWriter struct {
	buf bytes.Buffer
	n   int
}

func (w *epipeWriter) Write(p []byte) (int, error) {
	k := min(len(p), w.n-w.buf.Len())
	w.buf.Write(p[:k])
	if k < len(p) {
		return k, syscall.EPIPE
	}
	return k, nil
}

// When stdout closes mid-way (| head), exactly the records that got into
// it whole are committed, and the exit status is 0.
func TestReadGroupClosedPipe(t *testing.T) {
	const n = 60000 // values "p0-%05d": 9 bytes a line, 540 kB: past read's 256 KiB buffer
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t")
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, "p0-%05d\n", i)
	}
	mustRun(t, dir, in.String(), "append", "t", "--sync", "never")
	at := uint64(0)
	for _, take := range []int{9*5 + 4, 9 * 7, 300000 + 3, 0} {
		w := &epipeWriter{n: take}
		var errb bytes.Buffer
		runMu.Lock()
		code := Run([]string{"seglog", "-d", dir, "read", "t", "--group", "g"}, strings.NewReader(""), w, &errb)
		runMu.Unlock()
		if code != 0 || errb.Len() != 0 {
			t.Fatalf("stdout closed after %d bytes: exit %d, stderr %q", take, code, errb.String())
		}
		whole := uint64(take / 9)
		if !strings.HasPrefix(w.buf.String(), fmt.Sprintf("p0-%05d\n", at)) && take >= 9 {
			t.Errorf("run from %d printed %q...", at, w.buf.String()[:min(w.buf.Len(), 20)])
		}
		at += whole
		if pos := gpPositions(t, dir, "g"); pos[0] != at {
			t.Errorf("stdout took %d bytes (%d whole records): position %d, want %d", take, whole, pos[0], at)
		}
	}
}

// A corrupt record stops read (exit 1) after the records before it, and
// those are committed: the next run starts at the damage again.
func TestReadGroupCorrupt(t *testing.T) {
	dir := gpTopic(t, []int{9}, 100)
	// Records "p0-N" are 32 bytes, 3 a segment: flip a value byte of
	// offset 4, the second record of the second segment.
	seg := filepath.Join(dir, "t", "0", "00000000000000000003.log")
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	b[32+30] ^= 0xff
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		r := runIn(t, dir, nil, "read", "t", "--group", "g")
		want := "p0-0\np0-1\np0-2\np0-3\n"
		if i > 0 {
			want = ""
		}
		if r.code != exitError || r.stdout != want {
			t.Errorf("run %d: exit %d, stdout %q; want 1 and %q", i, r.code, r.stdout, want)
		}
		wantOneErrorLine(t, r.stderr, "corrupt record", "expected offset 4")
		if pos := gpPositions(t, dir, "g"); pos[0] != 4 {
			t.Errorf("run %d: position %d, want 4 (the corrupt record)", i, pos[0])
		}
	}
	r := runIn(t, dir, nil, "read", "t", "--group", "g", "--skip-corrupt")
	if r.code != 0 || r.stdout != "p0-5\np0-6\np0-7\np0-8\n" {
		t.Errorf("--skip-corrupt: exit %d, stdout %q", r.code, r.stdout)
	}
	if pos := gpPositions(t, dir, "g"); pos[0] != 9 {
		t.Errorf("after --skip-corrupt: position %d, want 9", pos[0])
	}
}

func TestReadGroupUsage(t *testing.T) {
	dir := gpTopic(t, []int{1}, 0)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--group", "bad name"}, `invalid group name "bad name"`},
		{[]string{"--group", ".hidden"}, `invalid group name ".hidden"`},
		{[]string{"--group", "../x"}, `invalid group name "../x"`},
		{[]string{"--group", ""}, `invalid group name "": empty`},
		{[]string{"--wait"}, "only apply with --group"},
		{[]string{"--wait-timeout", "1s"}, "only apply with --group"},
		{[]string{"--group", "g", "--wait", "--wait-timeout", "1s"}, "exclude each other"},
		{[]string{"--group", "g", "--wait-timeout", "soon"}, "--wait-timeout"},
	} {
		r := runIn(t, dir, nil, append([]string{"read", "t"}, tc.args...)...)
		if r.code != exitUsage {
			t.Errorf("%q: exit %d, want %d", tc.args, r.code, exitUsage)
		}
		wantOneErrorLine(t, r.stderr, tc.want)
	}
	r := run(t, nil, "read", filepath.Join(dir, "t", "0"), "--group", "g")
	if r.code != exitUsage {
		t.Errorf("--group with a partition directory: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, "--group needs a TOPIC")
	// Nothing was created for them, nor for a topic that does not exist;
	// and a read without --group changes nothing.
	before := snapshot(t, dir)
	if r := runIn(t, dir, nil, "read", "nope", "--group", "g"); r.code != exitError {
		t.Errorf("read nope: exit %d", r.code)
	}
	mustRun(t, dir, "", "read", "t")
	sameSnapshot(t, before, snapshot(t, dir))
	if _, err := os.Stat(filepath.Join(dir, ".groups")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".groups exists after failed reads: %v", err)
	}
}

// gpReader is `seglog read ... --group` run as a process writing into a
// pipe the test reads.
type gpReader struct {
	cmd    *exec.Cmd
	out    *bufio.Reader
	r      *os.File
	stderr *bytes.Buffer
	done   chan struct{}
}

func startGroupReader(t *testing.T, dir string, args ...string) *gpReader {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &gpReader{r: r, out: bufio.NewReader(r), stderr: new(bytes.Buffer), done: make(chan struct{})}
	p.cmd = exec.Command(seglogBin(t), append([]string{"-d", dir, "read"}, args...)...)
	p.cmd.Stdout, p.cmd.Stderr = w, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		r.Close()
	})
	return p
}

// lines reads n lines (fewer at EOF).
func (p *gpReader) lines(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		l, err := p.out.ReadString('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimSuffix(l, "\n"))
	}
	return out
}

func (p *gpReader) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("reader still running after %v: %s", d, p.stderr)
	}
	return p.cmd.ProcessState.ExitCode()
}

// gpTemplate prints partition/offset/value, which the tests check.
const gpTemplate = `%p/%o/%s\n`

func gpParse(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		f := strings.Split(l, "/")
		if len(f) != 3 || f[2] != "p"+f[0]+"-"+f[1] {
			t.Fatalf("bad line %q", l)
		}
		out = append(out, f[0]+"/"+f[1])
	}
	return out
}

// A reader killed with SIGKILL mid-read loses nothing: the next run
// starts exactly at the last committed position, at or before the first
// record the killed one did not print, so that together they print every
// record, the repeats all at or after that position.
func TestReadGroupKill9(t *testing.T) {
	counts := []int{150000, 50000}
	dir := gpTopic(t, counts, 1<<20)
	p := startGroupReader(t, dir, "t", "--group", "g", "--template", gpTemplate)
	var first []string
	began := time.Now()
	for {
		// A slow consumer: the reader blocks on the pipe in between.
		first = append(first, p.lines(t, 500)...)
		time.Sleep(20 * time.Millisecond)
		if len(gpPositions0(t, dir)) > 0 && time.Since(began) > 2500*time.Millisecond {
			break
		}
		if time.Since(began) > 30*time.Second {
			t.Fatal("no commit within 30 s of reading")
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	first = append(first, p.lines(t, 1<<30)...) // what it had written into the pipe
	committed := gpPositions(t, dir, "g")

	all := gpAll(counts)
	firstKeys := gpParse(t, first)
	if !equalStrings(firstKeys, all[:len(firstKeys)]) {
		t.Fatalf("the killed reader printed %d records, not a prefix of the topic", len(firstKeys))
	}
	if len(firstKeys) == len(all) {
		t.Fatalf("the killed reader printed everything before it was killed; make the topic bigger")
	}
	// Never committed past what was printed.
	printed := map[int]uint64{}
	for _, k := range firstKeys {
		f := strings.Split(k, "/")
		pp, _ := strconv.Atoi(f[0])
		o, _ := strconv.ParseUint(f[1], 10, 64)
		printed[pp] = o + 1
	}
	for pp, c := range committed {
		if c > printed[pp] {
			t.Errorf("partition %d committed at %d, but only offsets < %d were printed", pp, c, printed[pp])
		}
	}

	r := mustRun(t, dir, "", "read", "t", "--group", "g", "--template", gpTemplate)
	second := gpParse(t, strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"))
	// The second run starts at the committed positions (partition 0's, or
	// partition 1's once 0 is done) and runs to the end.
	startKey := fmt.Sprintf("0/%d", committed[0])
	if committed[0] == uint64(counts[0]) {
		startKey = fmt.Sprintf("1/%d", committed[1])
	}
	i := 0
	for i < len(all) && all[i] != startKey {
		i++
	}
	if !equalStrings(second, all[i:]) {
		t.Fatalf("second run printed %d records from %q, want %d from %s (committed %v)", len(second), second[0], len(all)-i, startKey, committed)
	}
	if i > len(firstKeys) {
		t.Errorf("records %d..%d were never printed", len(firstKeys), i-1)
	}
	t.Logf("killed after %d records printed, %d committed: %d printed twice", len(firstKeys), i, len(firstKeys)-i)
}

// gpPositions0 is gpPositions, empty while the group has no file yet.
func gpPositions0(t *testing.T, dir string) map[int]uint64 {
	pos, err := groupPositions(dir, "g")
	if err != nil {
		return nil
	}
	return pos["t"]
}

// SIGTERM stops a --group read between records: it commits exactly what
// it printed and exits 0, and the next run goes on from there.
func TestReadGroupSignal(t *testing.T) {
	counts := []int{200000}
	dir := gpTopic(t, counts, 0)
	p := startGroupReader(t, dir, "t", "--group", "g", "--template", gpTemplate)
	first := p.lines(t, 1000)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	first = append(first, p.lines(t, 1<<30)...)
	if code := p.wait(t, 10*time.Second); code != 0 || p.stderr.Len() != 0 {
		t.Fatalf("after SIGTERM: exit %d, stderr %q", code, p.stderr)
	}
	if len(first) >= counts[0] {
		t.Fatalf("the reader printed everything before the signal")
	}
	if pos := gpPositions(t, dir, "g"); pos[0] != uint64(len(first)) {
		t.Errorf("printed %d records, committed %d", len(first), pos[0])
	}
	r := mustRun(t, dir, "", "read", "t", "--group", "g", "--count", "1", "--template", gpTemplate)
	if want := fmt.Sprintf("0/%d/p0-%d\n", len(first), len(first)); r.stdout != want {
		t.Errorf("next run: %q, want %q", r.stdout, want)
	}
}

// Two readers with one group: the second fails after the default 2 s
// naming the group and the holder; with --wait it waits until the first
// is gone, then goes on where that one's last commit left off.
func TestReadGroupTwoReaders(t *testing.T) {
	dir := gpTopic(t, []int{100000}, 0)
	first := startGroupReader(t, dir, "t", "--group", "g", "--template", gpTemplate)
	got := first.lines(t, 10) // it holds the group now, blocked on the full pipe
	gdir := filepath.Join(dir, ".groups", "g")

	start := time.Now()
	second := exec.Command(seglogBin(t), "-d", dir, "read", "t", "--group", "g")
	var stderr bytes.Buffer
	second.Stderr = &stderr
	err := second.Run()
	if second.ProcessState.ExitCode() != exitError {
		t.Fatalf("second reader: %v, want exit 1; stderr %q", err, stderr.String())
	}
	if el := time.Since(start); el < 1500*time.Millisecond || el > 6*time.Second {
		t.Errorf("second reader failed after %v, want about 2 s", el)
	}
	wantOneErrorLine(t, stderr.String(), "group g is locked by another process", "--wait")
	if pid := first.cmd.Process.Pid; procLocksShow(t, pid, gdir) && !strings.Contains(stderr.String(), fmt.Sprintf("(pid %d)", pid)) {
		t.Errorf("the error does not name the holder, pid %d: %q", pid, stderr.String())
	}
	r := runIn(t, dir, nil, "read", "t", "--group", "g", "--wait-timeout", "100ms")
	if r.code != exitError {
		t.Errorf("--wait-timeout 100ms: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, "group g is locked")

	third := startGroupReader(t, dir, "t", "--group", "g", "--wait", "--template", gpTemplate)
	time.Sleep(2500 * time.Millisecond) // past the default wait
	select {
	case <-third.done:
		t.Fatalf("--wait reader ended while the group was held: %s", third.stderr)
	default:
	}
	got = append(got, first.lines(t, 5000)...)
	first.cmd.Process.Kill()
	<-first.done
	got = append(got, first.lines(t, 1<<30)...)
	committed := gpPositions(t, dir, "g")[0]

	rest := third.lines(t, 1<<30)
	if code := third.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("--wait reader: exit %d, %s", code, third.stderr)
	}
	keys := gpParse(t, rest)
	if len(keys) == 0 || keys[0] != fmt.Sprintf("0/%d", committed) || keys[len(keys)-1] != "0/99999" || len(keys) != 100000-int(committed) {
		t.Errorf("--wait reader printed %d records from %v, want from the committed %d to the end", len(keys), keys[:min(1, len(keys))], committed)
	}
	if int(committed) > len(got) {
		t.Errorf("committed %d, but the first reader printed %d", committed, len(got))
	}
}

// The tracker's accounting on its own: marks of records still buffered,
// or cut off by a failed write, are not committed; filtered records
// between printed ones do not grow its memory.
func TestGroupTrackerAccounting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &env{dataDir: dir, stderr: io.Discard}
	w := &epipeWriter{n: 25}
	gt, err := openGroupTracker(e, groupOptions{name: "g"}, "t", false, w, 16)
	if err != nil {
		t.Fatal(err)
	}
	if from := gt.start(0, 0, 0, 100); from != 0 {
		t.Fatalf("start %d", from)
	}
	out := gt.output()
	for i := range 1000 {
		gt.advance(0, uint64(i+1)) // filtered out: no bytes
	}
	if len(gt.pending) > 1 {
		t.Errorf("%d marks pending for filtered records, want them merged", len(gt.pending))
	}
	if err := gt.maybeCommit(); err != nil {
		t.Fatalf("maybeCommit within the first second: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".groups", "g", "t.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("committed within the first second: %v", err)
	}
	// Records of 10 bytes at offsets 1000.. of partition 0, printed as
	// read does, until a write fails: the writer takes 25 bytes.
	var werr error
	for i := 0; werr == nil; i++ {
		if _, werr = out.WriteString("0123456789"); werr == nil {
			gt.advance(0, uint64(1000+i+1))
		}
	}
	if err := gt.finish(werr); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("finish: %v, want EPIPE", err)
	}
	pos, err := groupPositions(dir, "g")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int]uint64{0: 1002}; !maps.Equal(pos["t"], want) {
		t.Errorf("positions %v, want %v (two whole records of 10 bytes got out)", pos["t"], want)
	}
}

// describe --groups shows each group's committed offsets beside the
// partitions' next offsets, the lag, and notes positions retention
// removed or topics that are gone.
func TestDescribeGroups(t *testing.T) {
	dir := gpTopic(t, []int{40, 5}, 100)
	mustRun(t, dir, "", "create", "other")
	mustRun(t, dir, "x\ny\n", "append", "other")
	mustRun(t, dir, "", "read", "t", "--group", "billing", "--count", "43")
	mustRun(t, dir, "", "read", "t", "--group", "audit", "--count", "4")
	mustRun(t, dir, "", "read", "other", "--group", "audit", "--count", "1")
	mustRun(t, dir, "", "retention-sweep", "t", "--retention-bytes", "300")
	p, err := logstore.Open(dir).OpenPartition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	start, _, err := p.Bounds()
	if err != nil || start <= 4 {
		t.Fatalf("start %d after the sweep, %v", start, err)
	}
	g, err := logstore.Open(dir).OpenGroup("gone", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Commit("deleted", map[int]uint64{0: 7}); err != nil {
		t.Fatal(err)
	}
	g.Close()
	before := snapshot(t, dir)

	// In 80 columns the notes are under each table, whole.
	r := mustRun(t, dir, "", "describe", "--groups")
	if want := fmt.Sprintf("\nt/0: below the start %d: removed by retention unread\n", start); !strings.Contains(r.stdout, want) {
		t.Errorf("describe --groups lacks %q:\n%s", want, r.stdout)
	}
	for line := range strings.SplitSeq(r.stdout, "\n") {
		if strings.HasPrefix(line, "|") && len(line) > 80 {
			t.Errorf("table wider than 80 columns: %q", line)
		}
	}

	r = mustRun(t, dir, "", "describe", "--groups", "--wide")
	lines := strings.Split(r.stdout, "\n")
	wantRows := []string{
		`^group audit \(.*[/\\]\.groups[/\\]audit\)$`,
		`^\| TOPIC +\| PARTITION \| COMMITTED \| NEXT \| LAG \| UPDATED +\| NOTE +\|$`,
		`^\| other +\| +0 \| +1 \| +2 \| +1 \| \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z \| - +\|$`,
		fmt.Sprintf(`^\| t +\| +0 \| +4 \| +40 \| +36 \| [0-9T:.Z-]+ \| below the start %d: removed by retention unread \|$`, start),
		`^group billing `,
		`^\| t +\| +0 \| +40 \| +40 \| +0 \| [0-9T:.Z-]+ \| - +\|$`,
		`^\| t +\| +1 \| +3 \| +5 \| +2 \| [0-9T:.Z-]+ \| - +\|$`,
		`^group gone `,
		`^\| deleted +\| +0 \| +7 \| +- \| +- \| [0-9T:.Z-]+ \| topic not found \|$`,
	}
	i := 0
	for _, l := range lines {
		if i < len(wantRows) && regexp.MustCompile(wantRows[i]).MatchString(l) {
			i++
		}
	}
	if i < len(wantRows) {
		t.Errorf("describe --groups: no line matching %s (in order) in\n%s", wantRows[i], r.stdout)
	}

	// A TOPIC argument and --partition narrow it down.
	r = mustRun(t, dir, "", "describe", "--groups", "t", "--partition", "1")
	if strings.Contains(r.stdout, "audit") || strings.Contains(r.stdout, "gone") || strings.Count(r.stdout, "| t ") != 1 {
		t.Errorf("describe --groups t --partition 1:\n%s", r.stdout)
	}
	r = mustRun(t, dir, "", "describe", "--groups", "nothing")
	if r.stdout != "" || !strings.Contains(r.stderr, "no consumer group") {
		t.Errorf("describe --groups nothing: %q %q", r.stdout, r.stderr)
	}

	r = mustRun(t, dir, "", "describe", "--groups", "--json")
	var doc struct {
		Groups []struct {
			Group      string `json:"group"`
			Partitions []struct {
				Topic      string  `json:"topic"`
				Partition  int     `json:"partition"`
				Committed  uint64  `json:"committed_offset"`
				Start      *uint64 `json:"start_offset"`
				Next       *uint64 `json:"next_offset"`
				Lag        *uint64 `json:"lag"`
				BelowStart bool    `json:"below_start"`
				PastEnd    bool    `json:"past_end"`
				Updated    *string `json:"updated"`
				UpdatedNS  *int64  `json:"updated_ns"`
				Note       string  `json:"note"`
			} `json:"partitions"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	var got []string
	for _, g := range doc.Groups {
		for _, p := range g.Partitions {
			s := fmt.Sprintf("%s %s/%d committed %d start %s next %s lag %s below %v past %v note %q",
				g.Group, p.Topic, p.Partition, p.Committed, dtStr(p.Start), dtStr(p.Next), dtStr(p.Lag), p.BelowStart, p.PastEnd, p.Note)
			got = append(got, s)
			if p.Updated == nil || p.UpdatedNS == nil || time.Since(time.Unix(0, *p.UpdatedNS)) > time.Minute {
				t.Errorf("%s: updated %s / %s", s, dtStr(p.Updated), dtStr(p.UpdatedNS))
			}
		}
	}
	want := []string{
		`audit other/0 committed 1 start 0 next 2 lag 1 below false past false note ""`,
		fmt.Sprintf(`audit t/0 committed 4 start %d next 40 lag 36 below true past false note ""`, start),
		fmt.Sprintf(`billing t/0 committed 40 start %d next 40 lag 0 below false past false note ""`, start),
		`billing t/1 committed 3 start 0 next 5 lag 2 below false past false note ""`,
		`gone deleted/0 committed 7 start null next null lag null below false past false note "topic not found"`,
	}
	if !equalStrings(got, want) {
		t.Errorf("describe --groups --json:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A group file that does not parse is an error (exit 1) naming it;
	// the other groups are still described.
	bad := filepath.Join(dir, ".groups", "billing", "t.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, dir, nil, "describe", "--groups")
	if r.code != exitError || !strings.Contains(r.stdout, "group audit") || !strings.Contains(r.stdout, "group gone") {
		t.Errorf("with a corrupt group file: exit %d\n%s", r.code, r.stdout)
	}
	wantOneErrorLine(t, r.stderr, bad)
	r = runIn(t, dir, nil, "describe", "--groups", "--json")
	if r.code != exitError || !strings.Contains(r.stdout, `"error": "group positions `+bad) {
		t.Errorf("--json with a corrupt group file: exit %d\n%s", r.code, r.stdout)
	}
	// describe only reads.
	delete(before, bad)
	after := snapshot(t, dir)
	delete(after, bad)
	sameSnapshot(t, before, after)

	if r := runIn(t, dir, nil, "describe", "--groups", "a/b"); r.code != exitUsage {
		t.Errorf("describe --groups a/b: exit %d", r.code)
	}
	empty := t.TempDir()
	if r := mustRun(t, empty, "", "describe", "--groups", "--json"); strings.TrimSpace(r.stdout) != "{\n  \"groups\": []\n}" {
		t.Errorf("no groups, --json: %q", r.stdout)
	}
}

// The tracker against a plain model: random records (some empty, as
// filtered ones are) over several partitions, through a small buffer
// into a writer that takes a random number of bytes. Committed must be,
// per partition, the position after its last record wholly taken.
func TestGroupTrackerModel(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		e := &env{dataDir: dir, stderr: io.Discard}
		total := 0
		type rec struct {
			p    int
			next uint64
			end  int
		}
		var recs []rec
		next := map[int]uint64{}
		for range rnd.IntN(400) + 1 {
			p := rnd.IntN(3)
			if rnd.IntN(4) == 0 { // runs of one partition, as read makes them
				p = 0
			}
			size := rnd.IntN(40)
			if rnd.IntN(3) == 0 {
				size = 0
			}
			total += size
			next[p]++
			recs = append(recs, rec{p, next[p], total})
		}
		w := &epipeWriter{n: rnd.IntN(total + 10)}
		gt, err := openGroupTracker(e, groupOptions{name: "g"}, "t", false, w, 16+rnd.IntN(64))
		if err != nil {
			t.Fatal(err)
		}
		started := map[int]bool{}
		want := map[int]uint64{}
		var werr error
		for i, r := range recs {
			before := 0 // bytes printed before r
			if i > 0 {
				before = recs[i-1].end
			}
			if !started[r.p] {
				gt.start(r.p, 0, 0, 1<<20)
				started[r.p] = true
				if before <= w.n {
					want[r.p] = 0
				}
			}
			size := r.end - before
			if _, werr = gt.output().Write(bytes.Repeat([]byte{'x'}, size)); werr != nil {
				break
			}
			gt.advance(r.p, r.next)
			if r.end <= w.n {
				want[r.p] = r.next
			}
			if rnd.IntN(50) == 0 {
				gt.out.Flush()
			}
		}
		gt.finish(werr)
		got := gpPositions0(t, dir)
		if len(want) == 0 {
			want = nil
		}
		if len(got) == 0 {
			got = nil
		}
		if !maps.Equal(got, want) {
			t.Fatalf("round %d: %d records, %d bytes of %d taken: committed %v, want %v", round, len(recs), w.n, total, got, want)
		}
	}
}

// A follower that printed a record and then waits with nothing new gets
// it committed within about a second, by calling maybeCommit when it
// wakes up; a run of records commits at least once a second too.
func TestGroupTrackerCommitsEverySecond(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &env{dataDir: dir, stderr: io.Discard}
	var sink bytes.Buffer
	gt, err := openGroupTracker(e, groupOptions{name: "g"}, "t", false, &sink, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer gt.finish(nil)
	gt.start(0, 5, 0, 100)
	gt.output().WriteString("r5\n")
	gt.advance(0, 6)
	if err := gt.maybeCommit(); err != nil {
		t.Fatal(err)
	}
	if pos := gpPositions0(t, dir); pos != nil {
		t.Fatalf("committed at once: %v", pos)
	}
	began := time.Now()
	for gpPositions0(t, dir)[0] != 6 {
		if time.Since(began) > 3*time.Second {
			t.Fatal("an idle follower's record not committed within 3 s")
		}
		time.Sleep(20 * time.Millisecond)
		if err := gt.maybeCommit(); err != nil { // woke up, nothing new
			t.Fatal(err)
		}
	}
	if el := time.Since(began); el > 1500*time.Millisecond {
		t.Errorf("committed after %v, want about 1 s", el)
	}
	if sink.String() != "r5\n" {
		t.Errorf("output %q", sink.String())
	}
	// A run of small records that stays in the buffer: still committed
	// within about a second (the buffer is flushed for it).
	began = time.Now()
	for i := uint64(6); gpPositions0(t, dir)[0] == 6; i++ {
		gt.advance(0, i+1) // filtered out: nothing printed
		if err := gt.maybeCommit(); err != nil {
			t.Fatal(err)
		}
		if time.Since(began) > 3*time.Second {
			t.Fatal("a run of records not committed within 3 s")
		}
	}
	if el := time.Since(began); el > 1500*time.Millisecond {
		t.Errorf("committed after %v, want about 1 s", el)
	}
}

// A commit that fails ends the command with one error saying so, once;
// the positions stay where they were.
func TestGroupTrackerCommitFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &env{dataDir: dir, stderr: io.Discard}
	gt, err := openGroupTracker(e, groupOptions{name: "g"}, "t", false, io.Discard, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	// The group's directory goes away under the lock: commits fail.
	if err := os.RemoveAll(filepath.Join(dir, ".groups", "g")); err != nil {
		t.Fatal(err)
	}
	gt.start(0, 0, 0, 10)
	gt.output().WriteString("r0\n")
	gt.advance(0, 1)
	gt.last = time.Now().Add(-2 * commitInterval)
	for i := 0; i < 2 && err == nil; i++ { // the first call may skip the clock
		err = gt.maybeCommit()
	}
	if err == nil || !strings.Contains(err.Error(), "commit group g positions of t") {
		t.Fatalf("maybeCommit: %v", err)
	}
	ferr := gt.finish(err)
	if ferr == nil || strings.Count(ferr.Error(), "commit group g") != 1 || exitCode(ferr) != exitError {
		t.Errorf("finish: %v (exit %d), want the commit error once, exit 1", ferr, exitCode(ferr))
	}
	// A closed stdout does not hide a failed commit.
	gt, err = openGroupTracker(e, groupOptions{name: "h"}, "t", false, &epipeWriter{n: 100}, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, ".groups", "h"))
	gt.start(0, 0, 0, 10)
	if ferr := gt.finish(syscall.EPIPE); ferr == nil || exitCode(ferr) != exitError || !strings.Contains(ferr.Error(), "commit group h") {
		t.Errorf("finish(EPIPE) with a failing commit: %v, exit %d", ferr, exitCode(ferr))
	}
}

// groupPositions is what group has committed: topic -> partition -> next
// offset.
func groupPositions(dir, group string) (map[string]map[int]uint64, error) {
	commits, err := logstore.Open(dir).GroupCommits(group)
	if err != nil {
		return nil, err
	}
	pos := make(map[string]map[int]uint64, len(commits))
	for _, c := range commits {
		pos[c.Topic] = c.Partitions
	}
	return pos, nil
}
