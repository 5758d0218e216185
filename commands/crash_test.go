package commands

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// The crash harness runs the real binary, kills it with SIGKILL at a
// random moment and checks the data directory it leaves: append under
// every sync mode, recover of a damaged topic, retention-sweep and
// copy-partition. SIGKILL is not a power cut (the page cache survives it):
// what the trials explore is every point at which the code can stop, with
// its files in whatever state it had made them.
//
// A trial draws everything (data, damage, flags, the kill moment) from its
// seed, which it logs; SEGLOG_CRASH_SEED=<seed> runs just that trial in
// each test -run selects. The kill moment is a fraction of the duration of
// an un-killed run of the same job, so a replay kills at about the same
// point of the work, not at the same instruction.
//
// Helpers of this file carry a crash prefix: other test files of the
// package are written at the same time and must not clash.

// crashSeedEnv names the variable that replays one trial.
const crashSeedEnv = "SEGLOG_CRASH_SEED"

// crashHang is how long an un-killed run may take before it counts as hung:
// far beyond any job here, even on a loaded machine under -race.
const crashHang = 3 * time.Minute

// crashSuite counts what one test's trials did, for its summary line.
type crashSuite struct {
	trials   int
	killed   int // runs our SIGKILL ended
	finished int // runs that ended before the kill came
	phase    [3]int
	records  int            // records compared with what they must be
	states   map[string]int // what the kills left behind, by kind
}

func newCrashSuite(t *testing.T) *crashSuite {
	s := &crashSuite{states: map[string]int{}}
	t.Cleanup(func() {
		var states []string
		for _, k := range slices.Sorted(maps.Keys(s.states)) {
			states = append(states, fmt.Sprintf("%s: %d", k, s.states[k]))
		}
		t.Logf("%d trials: %d killed (%d early, %d mid-way, %d late), %d finished before the kill; %d records checked; states left: %s",
			s.trials, s.killed, s.phase[0], s.phase[1], s.phase[2], s.finished, s.records, strings.Join(states, ", "))
	})
	return s
}

// each runs trial once per seed, each in a subtest named after its seed:
// quick (or in long mode long) seeds drawn from the clock, after the seeds
// of regress, trials that once found a bug.
func (s *crashSuite) each(t *testing.T, quick, long int, regress []uint64, trial func(t *testing.T, rng *rand.Rand)) {
	seeds := slices.Clone(regress)
	if v := os.Getenv(crashSeedEnv); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want a seed as the trials log it: %v", crashSeedEnv, v, err)
		}
		seeds = []uint64{seed}
	} else {
		n := quick
		if longMode() {
			n = long
		}
		master := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
		for range n {
			seeds = append(seeds, master.Uint64()>>1)
		}
	}
	var pattern []string
	for _, part := range strings.Split(t.Name(), "/") {
		pattern = append(pattern, "^"+regexp.QuoteMeta(part)+"$")
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("seed %d; replay: %s=%d go test ./commands -run '%s'", seed, crashSeedEnv, seed, strings.Join(pattern, "/"))
			s.trials++
			trial(t, rand.New(rand.NewPCG(seed, 0x5e6109)))
		})
	}
}

// state counts a state a kill left behind.
func (s *crashSuite) state(t *testing.T, what string) {
	t.Logf("state: %s", what)
	s.states[what]++
}

// crashRun is one run of the binary.
type crashRun struct {
	args   []string
	killed bool // ended by our SIGKILL
	code   int
	took   time.Duration
	// work is how long it ran after taking its first lock (where its
	// work begins, after a start-up whose length varies most on a busy
	// machine); took when no lock was seen.
	work           time.Duration
	stdout, stderr string
}

func (r crashRun) String() string {
	how := fmt.Sprintf("exit status %d", r.code)
	if r.killed {
		how = "killed"
	}
	return fmt.Sprintf("seglog %s: %s after %v; stderr:\n%s", strings.Join(r.args, " "), how, r.took.Round(time.Microsecond), r.stderr)
}

// crashExec runs seglog ARGS with stdin (nil: none). With kill >= 0 it
// sends SIGKILL that long after the process took its first lock, and with
// when as soon as when() holds, unless it has ended by then.
func crashExec(t *testing.T, stdin []byte, kill time.Duration, when func() bool, args ...string) crashRun {
	t.Helper()
	cmd := exec.Command(seglogBin(t), args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait() // the status is read from ProcessState
		close(done)
	}()
	began := make(chan time.Time, 1)
	if crashLocksVisible() {
		go func() {
			for !crashHoldsLock(cmd.Process.Pid) {
				select {
				case <-done:
					return
				case <-time.After(200 * time.Microsecond):
				}
			}
			began <- time.Now()
		}()
	} else {
		began <- start
	}
	trigger := make(chan struct{})
	if when != nil {
		go func() {
			for !when() {
				select {
				case <-done:
					return
				case <-time.After(100 * time.Microsecond):
				}
			}
			close(trigger)
		}()
	}
	hang := time.NewTimer(crashHang)
	defer hang.Stop()
	var killAt <-chan time.Time
	var beganAt time.Time
wait:
	for {
		select {
		case <-done:
			break wait
		case beganAt = <-began:
			if kill >= 0 {
				killAt = time.After(kill - time.Since(beganAt))
			}
		case <-trigger:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			break wait
		case <-killAt:
			_ = cmd.Process.Signal(syscall.SIGKILL) // it may have ended meanwhile
			<-done
			break wait
		case <-hang.C:
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("seglog %s still running after %v (want it to end); stderr:\n%s", strings.Join(args, " "), crashHang, stderr.String())
		}
	}
	r := crashRun{args: args, code: cmd.ProcessState.ExitCode(), took: time.Since(start), stdout: stdout.String(), stderr: stderr.String()}
	r.work = r.took
	if !beganAt.IsZero() {
		r.work = time.Since(beganAt)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		if ws.Signal() != syscall.SIGKILL {
			t.Fatalf("seglog %s died of %v, want an exit or our SIGKILL; stderr:\n%s", strings.Join(args, " "), ws.Signal(), r.stderr)
		}
		r.killed = true
	}
	return r
}

// crashLocksVisible reports whether /proc/locks can be read here.
var crashLocksVisible = sync.OnceValue(func() bool {
	_, err := os.ReadFile("/proc/locks")
	return err == nil
})

// crashHoldsLock reports whether /proc/locks shows a lock held by pid.
func crashHoldsLock(pid int) bool {
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false
	}
	p := strconv.Itoa(pid)
	for _, line := range strings.Split(string(b), "\n") {
		// "1: FLOCK ADVISORY WRITE <pid> ..."; a waiter's line has "->".
		if f := strings.Fields(line); len(f) >= 5 && f[1] != "->" && f[4] == p {
			return true
		}
	}
	return false
}

// calibrate runs a job un-killed and fails unless it exits 0: its duration
// sets the kill moments of the trial.
func (s *crashSuite) calibrate(t *testing.T, stdin []byte, args ...string) crashRun {
	t.Helper()
	r := crashExec(t, stdin, -1, nil, args...)
	if r.code != 0 {
		t.Fatalf("un-killed run: %v; want exit status 0", r)
	}
	return r
}

// kill runs a job and kills it at a moment drawn from rng, uniformly from
// a little before its work to a little after it would have ended. Times
// count from the job's first lock: un-killed runs measured its work to end
// at hi, and to begin changing files at lo (0, or the length of a dry run
// where the job has one: these jobs read first and change files last).
func (s *crashSuite) kill(t *testing.T, rng *rand.Rand, lo, hi time.Duration, stdin []byte, args ...string) crashRun {
	t.Helper()
	lo = min(lo, hi/2)
	f := rng.Float64()*1.2 - 0.1
	delay := max(lo+time.Duration(f*float64(hi-lo)), 0)
	r := crashExec(t, stdin, delay, nil, args...)
	t.Logf("kill %v after the first lock (%.2f of the work, from %v to %v): %s",
		delay.Round(time.Microsecond), f, lo.Round(time.Microsecond), hi.Round(time.Microsecond), map[bool]string{true: "killed", false: "it had ended"}[r.killed])
	s.count(t, r, f)
	return r
}

// count counts a run killed at fraction f of its work, or one that ended
// first, which must have succeeded.
func (s *crashSuite) count(t *testing.T, r crashRun, f float64) {
	t.Helper()
	if r.killed {
		s.killed++
		s.phase[min(max(int(f*3), 0), 2)]++
		return
	}
	s.finished++
	if r.code != 0 {
		t.Fatalf("run ended before the kill: %v; want exit status 0", r)
	}
}

// crashRead reads a topic (extra: more read flags) as JSON lines.
func crashRead(t *testing.T, dir, topic string, extra ...string) []jsonLine {
	t.Helper()
	r := mustRun(t, dir, "", append([]string{"read", topic, "--format", "json"}, extra...)...)
	return parseJSONLines(t, r.stdout)
}

// sameLines compares records read with the records they must be, line
// for line (topic, partition, offset, timestamp, key and value).
func (s *crashSuite) sameLines(t *testing.T, what string, got, want []jsonLine) {
	t.Helper()
	s.records += len(got)
	for i := range min(len(got), len(want)) {
		if got[i].raw != want[i].raw {
			t.Fatalf("%s: record %d is\n  %s\nwant\n  %s", what, i, got[i].raw, want[i].raw)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
}

// crashVerify runs verify-crc over every topic of dir and returns its
// findings of severity problem; it fails on any exit status but 0 and 3.
func crashVerify(t *testing.T, dir string) (code int, problems []string, kinds []string) {
	t.Helper()
	r := runIn(t, dir, nil, "verify-crc", "--json")
	if r.code != 0 && r.code != 3 {
		t.Fatalf("verify-crc: exit status %d, want 0 or 3; stderr:\n%s", r.code, r.stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var f struct{ Type, Severity, Kind string }
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("verify-crc --json: bad line %q: %v", line, err)
		}
		if f.Type == "finding" && f.Severity == "problem" {
			problems = append(problems, line)
			kinds = append(kinds, f.Kind)
		}
	}
	return r.code, problems, kinds
}

// crashClean fails unless verify-crc finds nothing wrong in dir.
func crashClean(t *testing.T, dir, when string) {
	t.Helper()
	if code, problems, _ := crashVerify(t, dir); code != 0 {
		t.Fatalf("verify-crc %s: exit status %d, want 0; problems:\n%s", when, code, strings.Join(problems, "\n"))
	}
}

// crashRecoverDoc is what recover --json says, as far as these tests look.
type crashRecoverDoc struct {
	Leftovers  []struct{ Path string } `json:"leftovers"`
	Partitions []struct {
		Topic     string                  `json:"topic"`
		Partition int                     `json:"partition"`
		Changed   bool                    `json:"changed"`
		Leftovers []struct{ Path string } `json:"leftovers"`
		Segments  []struct {
			Segment   string           `json:"segment"`
			Cut       *json.RawMessage `json:"cut"`
			Index     string           `json:"index"`
			TimeIndex string           `json:"timeindex"`
			Finished  bool             `json:"finished_interrupted_split"`
		} `json:"segments"`
	} `json:"partitions"`
}

// crashPlan is recover --dry-run --json over every topic of dir; it fails
// unless recover could plan everything (exit status 0).
func crashPlan(t *testing.T, dir string) crashRecoverDoc {
	t.Helper()
	r := runIn(t, dir, nil, "recover", "--dry-run", "--json")
	var doc crashRecoverDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
		t.Fatalf("recover --dry-run --json: exit status %d (want 0), output %q (%v); stderr:\n%s", r.code, r.stdout, err, r.stderr)
	}
	return doc
}

// crashSettled fails unless dir holds no leftover of an interrupted
// operation and recover would change nothing in it.
func crashSettled(t *testing.T, dir string) {
	t.Helper()
	crashNoLeftovers(t, dir)
	doc := crashPlan(t, dir)
	for _, l := range doc.Leftovers {
		t.Errorf("recover --dry-run would still remove %s; want nothing left over", l.Path)
	}
	for _, p := range doc.Partitions {
		for _, l := range p.Leftovers {
			t.Errorf("recover --dry-run would still remove %s; want nothing left over", l.Path)
		}
		if p.Changed {
			t.Errorf("recover --dry-run would still change %s/%d: %+v; want nothing to do", p.Topic, p.Partition, p.Segments)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// crashNoLeftovers fails if dir holds what an interrupted operation leaves:
// temporary files and directories, files of a deletion, index files
// without their .log.
func crashNoLeftovers(t *testing.T, dir string) {
	t.Helper()
	var left []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		switch base, ext, perr := format.ParseSegmentName(name); {
		case strings.HasSuffix(name, ".tmp") || strings.HasSuffix(name, ".deleted"):
			left = append(left, path)
		case perr == nil && ext != format.LogExt:
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), format.SegmentName(base, format.LogExt))); err != nil {
				left = append(left, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Fatalf("leftovers of an interrupted operation remain; want none:\n%s", strings.Join(left, "\n"))
	}
}

// crashSegments lists a partition directory's segments: base offsets of
// its .log files, in order.
func crashSegments(t *testing.T, dir string) []uint64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var bases []uint64
	for _, e := range entries {
		if base, ext, err := format.ParseSegmentName(e.Name()); err == nil && ext == format.LogExt {
			bases = append(bases, base)
		}
	}
	slices.Sort(bases)
	return bases
}

// crashHash is a file's SHA-256, "" when it does not exist.
func crashHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// crashFile is a small file's contents, "" when it does not exist.
func crashFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// crashTree maps every file under root (relative path) to its hash, and
// every directory to "dir", skipping entries whose relative path or name
// is in skip.
func crashTree(t *testing.T, root string, skip ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if slices.Contains(skip, rel) || slices.Contains(skip, d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			m[rel] = "dir"
		} else {
			m[rel] = crashHash(t, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// crashLine is one line of an append's input, as the record it makes.
type crashLine struct {
	key   string // "" is no key
	value string
}

func (l crashLine) text() string {
	if l.key == "" {
		return l.value
	}
	return l.key + ":" + l.value
}

// crashLines makes n uniquely numbered lines, from first on, of sizes
// from empty to a few KiB (times scale), two in three with a key.
func crashLines(rng *rand.Rand, first, n, scale int) ([]crashLine, []byte) {
	var lines []crashLine
	var in bytes.Buffer
	for i := first; i < first+n; i++ {
		var pad int
		switch r := rng.IntN(100); {
		case r < 60:
			pad = rng.IntN(64)
		case r < 90:
			pad = 64 + rng.IntN(400)
		default:
			pad = 500 + rng.IntN(3000)
		}
		l := crashLine{value: fmt.Sprintf("%07d|%s", i, strings.Repeat(string(rune('a'+i%26)), pad*scale))}
		if i%3 != 0 {
			l.key = "k" + strconv.Itoa(i%11)
		}
		lines = append(lines, l)
		in.WriteString(l.text() + "\n")
	}
	return lines, in.Bytes()
}

// prefixOf checks that records read are lines[0:len(got)] at offsets from
// 0 on: no gap, no duplicate, nothing that was not written.
func (s *crashSuite) prefixOf(t *testing.T, what string, got []jsonLine, lines []crashLine) {
	t.Helper()
	if len(got) > len(lines) {
		t.Fatalf("%s: %d records, but only %d lines were written", what, len(got), len(lines))
	}
	s.follow(t, what, got, 0, lines[:len(got)])
}

// follow checks that records read are lines, at offsets from first on.
func (s *crashSuite) follow(t *testing.T, what string, got []jsonLine, first uint64, lines []crashLine) {
	t.Helper()
	s.records += len(got)
	if len(got) != len(lines) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(lines))
	}
	for i, l := range got {
		want := lines[i]
		key := ""
		if l.Key != nil {
			key = *l.Key
		}
		if l.Offset != first+uint64(i) || l.Value == nil || *l.Value != want.value || key != want.key || (l.Key != nil && key == "") {
			t.Fatalf("%s: record %d is\n  %s\nwant offset %d, key %q, value %q", what, i, l.raw, first+uint64(i), want.key, want.value)
		}
	}
}

// crashSyncModes are the modes append --sync takes.
func crashSyncModes(t *testing.T) []string {
	t.Helper()
	modes := syncModes.names()
	for _, want := range []string{"exit", "batch", "never"} {
		if !slices.Contains(modes, want) {
			t.Fatalf("append --sync takes %q; want %q among them", modes, want)
		}
	}
	return modes
}

// TestCrashAppend kills append under every sync mode while it writes a
// known stream through segment rolls (small --segment-bytes) and sparse
// index writes: readers see a prefix of the stream right after the kill;
// recover and verify-crc are then clean, recover keeps exactly what
// readers saw, and the next append (before or after recover) continues
// the offsets.
func TestCrashAppend(t *testing.T) {
	t.Parallel()
	s := newCrashSuite(t)
	// Kills right as append took its lock, then recover and an append of
	// fewer records than the index interval: recover, knowing no interval,
	// took the sparse indexes for short ones (see appendTrial's settings).
	regress := map[string][]uint64{"exit": {146966773018219956}, "batch": {6197658757122831360}}
	for _, mode := range crashSyncModes(t) {
		t.Run("sync="+mode, func(t *testing.T) {
			s.each(t, 3, 40, regress[mode], func(t *testing.T, rng *rand.Rand) { s.appendTrial(t, rng, mode) })
		})
	}
}

func (s *crashSuite) appendTrial(t *testing.T, rng *rand.Rand, mode string) {
	n := 400 + rng.IntN(700)
	lines, input := crashLines(rng, 0, n, 1)
	settings := []string{"--segment-bytes", strconv.Itoa(4<<10 + rng.IntN(28<<10)),
		"--index-interval", strconv.Itoa([]int{1, 2, 3, 5, 16}[rng.IntN(5)])}
	args := append([]string{"append", "t", "--key-delimiter", ":", "--sync", mode}, settings...)
	t.Logf("%d lines, %d bytes; %s", n, len(input), strings.Join(args, " "))
	newDir := func() string {
		// The settings are stored too: where no segment's index shows its
		// interval (fewer records than that), recover takes the stored one.
		dir := filepath.Join(t.TempDir(), "data")
		mustRun(t, dir, "", append([]string{"create", "t"}, settings...)...)
		return dir
	}

	calib := s.calibrate(t, input, append([]string{"-d", newDir()}, args...)...)
	dir := newDir()
	r := s.kill(t, rng, 0, calib.work, input, append([]string{"-d", dir}, args...)...)

	// Right after the kill, before any repair: a prefix.
	seen := crashRead(t, dir, "t")
	s.prefixOf(t, "read right after the kill", seen, lines)
	if !r.killed && len(seen) != n {
		t.Fatalf("append exited 0 but %d of its %d records are readable", len(seen), n)
	}
	t.Logf("%d of %d records readable after the kill", len(seen), n)
	code, problems, kinds := crashVerify(t, dir)
	for i, k := range kinds {
		if k != string(logstore.FindingIncompleteTail) {
			t.Fatalf("verify-crc right after the kill found %s; a killed append may leave an incomplete tail, nothing else:\n%s", k, problems[i])
		}
	}
	if code == 3 {
		s.state(t, "torn tail")
	}
	if segs := crashSegments(t, filepath.Join(dir, "t", "0")); len(segs) > 0 {
		last := filepath.Join(dir, "t", "0", format.SegmentName(segs[len(segs)-1], format.IndexExt))
		if _, err := os.Stat(last); err != nil {
			s.state(t, "roll half-done: new segment without its index")
		}
	}

	// The next append either comes after recover, or first: then it cuts
	// a torn tail itself.
	more, moreIn := crashLines(rng, n, 1+rng.IntN(200), 1)
	appendMore := func() {
		mustRun(t, dir, string(moreIn), args...)
	}
	if rng.IntN(2) == 0 {
		t.Log("recover, then append")
		var doc crashRecoverDoc
		if err := json.Unmarshal([]byte(mustRun(t, dir, "", "recover", "--json").stdout), &doc); err != nil {
			t.Fatalf("recover --json: %v", err)
		}
		for _, p := range doc.Partitions {
			for _, sg := range p.Segments {
				if sg.Index != "kept" || sg.TimeIndex != "kept" {
					s.state(t, "index "+sg.Index+", time index "+sg.TimeIndex+" by recover")
				}
			}
		}
		crashClean(t, dir, "after recover")
		appendMore()
	} else {
		t.Log("append, then recover")
		appendMore()
		crashClean(t, dir, "after the next append, before recover")
		mustRun(t, dir, "", "recover")
	}
	crashClean(t, dir, "after recover and the next append")
	got := crashRead(t, dir, "t")
	if len(got) != len(seen)+len(more) {
		t.Fatalf("after the next append: %d records, want the %d seen after the kill and %d more", len(got), len(seen), len(more))
	}
	s.sameLines(t, "records seen after the kill, read after the next append", got[:len(seen)], seen)
	s.follow(t, "records of the next append", got[len(seen):], uint64(len(seen)), more)
	crashSettled(t, dir)
}

// crashTopic builds topic t in a fresh data directory, from seed (only
// the timestamps differ between runs): each partition about size bytes of
// crashLines, appended in chunks so that timestamps differ between them.
func crashTopic(t *testing.T, seed uint64, partitions, size, chunks int, create ...string) (dir string, lines [][]crashLine) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", append([]string{"create", "t", "--partitions", strconv.Itoa(partitions)}, create...)...)
	rng := rand.New(rand.NewPCG(seed, 1))
	lines = make([][]crashLine, partitions)
	for range chunks {
		for p := range partitions {
			// Lines of about 1 KiB: segments and files count here,
			// not records, and reading fewer is quicker.
			n := size / chunks / 1200
			more, in := crashLines(rng, len(lines[p]), n, 4)
			mustRun(t, dir, string(in), "append", "t", "--key-delimiter", ":", "--partition", strconv.Itoa(p), "--sync", "never")
			lines[p] = append(lines[p], more...)
		}
	}
	return dir, lines
}

// crashRecord is where a record sits in a segment file.
type crashRecord struct {
	offset   uint64
	pos, len int64
	size     int64 // of key and value
}

// crashScan walks a .log file record by record (it must be undamaged).
func crashScan(t *testing.T, path string) []crashRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []crashRecord
	for pos := int64(0); pos < int64(len(b)); {
		h, err := format.ParseHeader(b[pos:])
		if err != nil {
			t.Fatalf("%s: header at byte %d: %v", path, pos, err)
		}
		recs = append(recs, crashRecord{offset: h.Offset, pos: pos, len: h.RecordLen(), size: int64(h.Size)})
		pos += h.RecordLen()
	}
	return recs
}

// crashDamage is what a trial did to a partition, and the offsets whose
// records it destroyed.
type crashDamage struct {
	what    []string
	lost    map[uint64]bool
	corrupt bool // a record other than the last is damaged: only --salvage repairs it
}

// crashDamagePartition damages partition directory dir at random: a torn,
// zeroed or half-written tail, flipped bytes in records (of closed or
// active segments, first records too), missing, short, lying and stale
// index entries, and leftovers of interrupted operations. At least one.
func crashDamagePartition(t *testing.T, rng *rand.Rand, dir string) crashDamage {
	t.Helper()
	d := crashDamage{lost: map[uint64]bool{}}
	segs := crashSegments(t, dir)
	path := func(i int, ext string) string { return filepath.Join(dir, format.SegmentName(segs[i], ext)) }
	active := len(segs) - 1
	recs := make([][]crashRecord, len(segs))
	for i := range segs {
		recs[i] = crashScan(t, path(i, format.LogExt))
	}
	flip := func(p string, pos int64) {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var b [1]byte
		if _, err := f.ReadAt(b[:], pos); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0xff
		if _, err := f.WriteAt(b[:], pos); err != nil {
			t.Fatal(err)
		}
	}
	appendTo := func(p string, b []byte) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	kinds := rng.IntN(16) // a bit per kind of damage
	if kinds == 0 {
		kinds = 1 << rng.IntN(4)
	}
	// The active segment's last records are the tail's; records flipped
	// are picked before them.
	tailFrom := len(recs[active])
	if kinds&1 != 0 && len(recs[active]) > 0 {
		tailFrom = max(len(recs[active])-1-rng.IntN(3), 0)
	}
	if kinds&2 != 0 {
		for _, i := range rng.Perm(len(segs))[:1+rng.IntN(2)] {
			n := len(recs[i])
			if i == active {
				n = tailFrom - 1 // the last record before the tail would be a tail of its own
			}
			if n <= 0 {
				continue
			}
			k := rng.IntN(n)
			if rng.IntN(3) == 0 {
				k = 0 // the segment's first record
			}
			r := recs[i][k]
			// Anywhere the CRC covers or the CRC itself, not keylen: a
			// flipped keylen may stay valid (a limit of the format).
			pos := r.pos + 12 + int64(rng.IntN(12))
			if r.size > 0 && rng.IntN(2) == 0 {
				pos = r.pos + format.HeaderLen + rng.Int64N(r.size)
			}
			flip(path(i, format.LogExt), pos)
			d.lost[r.offset] = true
			d.corrupt = true
			d.what = append(d.what, fmt.Sprintf("flipped byte %d of %s (record %d, offset %d)", pos, format.SegmentName(segs[i], format.LogExt), k, r.offset))
		}
	}
	if kinds&1 != 0 {
		switch logPath := path(active, format.LogExt); {
		case tailFrom < len(recs[active]) && rng.IntN(3) > 0:
			r := recs[active][tailFrom]
			last := recs[active][len(recs[active])-1]
			cut := r.pos + 1 + rng.Int64N(last.pos+last.len-r.pos-1)
			if err := os.Truncate(logPath, cut); err != nil {
				t.Fatal(err)
			}
			for _, r := range recs[active][tailFrom:] {
				if r.pos+r.len > cut {
					d.lost[r.offset] = true
				}
			}
			d.what = append(d.what, fmt.Sprintf("cut %s at byte %d", filepath.Base(logPath), cut))
		case rng.IntN(2) == 0:
			appendTo(logPath, make([]byte, 1+rng.IntN(300)))
			d.what = append(d.what, "zeros after the end of "+filepath.Base(logPath))
		default:
			next := segs[active] + uint64(len(recs[active]))
			half := append(format.AppendHeader(nil, &format.Record{Offset: next, Timestamp: 1, Value: []byte("never written whole")}), "never"...)
			appendTo(logPath, half[:8+rng.IntN(len(half)-8)])
			d.what = append(d.what, "half a record after the end of "+filepath.Base(logPath))
		}
	}
	if kinds&4 != 0 {
		for _, i := range rng.Perm(len(segs))[:1+rng.IntN(min(len(segs), 6))] {
			ext := []string{format.IndexExt, format.TimeIndexExt}[rng.IntN(2)]
			p := path(i, ext)
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			switch how := rng.IntN(4); {
			case how == 0:
				err = os.Remove(p)
				d.what = append(d.what, "removed "+filepath.Base(p))
			case how == 1 && fi.Size() > 0:
				err = os.Truncate(p, fi.Size()-1-rng.Int64N(min(fi.Size(), 40)))
				d.what = append(d.what, "cut "+filepath.Base(p))
			case how == 2 && fi.Size() >= 16:
				// An entry whose position or timestamp lies.
				flip(p, 8+16*rng.Int64N(fi.Size()/16)+7)
				d.what = append(d.what, "a lying entry in "+filepath.Base(p))
			default:
				// Entries past the log's end, as after a power cut.
				next := segs[i] + uint64(len(recs[i]))
				var b []byte
				for j := range 1 + rng.IntN(3) {
					b = format.AppendIndexEntry(b, format.IndexEntry{Offset: next + uint64(j), Pos: 1 << 40})
				}
				appendTo(p, b)
				d.what = append(d.what, "stale entries after the end of "+filepath.Base(p))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if kinds&8 != 0 {
		left := map[string][]byte{
			format.SegmentName(segs[0], format.LogExt) + ".deleted":           []byte("half-deleted"),
			format.SegmentName(segs[active], format.IndexExt) + ".tmp":        []byte("half-rebuilt"),
			format.SegmentName(segs[active]+1<<30, format.TimeIndexExt):       nil, // an orphan
			format.SegmentName(segs[len(segs)/2]+1<<31, format.IndexExt):      nil,
			format.SegmentName(segs[len(segs)/2], format.LogExt) + ".deleted": nil,
		}
		for name, b := range left {
			if rng.IntN(2) == 0 {
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
				d.what = append(d.what, "left "+name)
			}
		}
	}
	if len(d.what) == 0 {
		appendTo(path(active, format.LogExt), make([]byte, 1+rng.IntN(300)))
		d.what = append(d.what, "zeros after the end of "+format.SegmentName(segs[active], format.LogExt))
	}
	return d
}

// TestCrashRecover kills recover (with --salvage where records are
// corrupt) on topics damaged at random: a second recover completes,
// verify-crc is clean, and the records are exactly those an un-killed
// recover keeps: every record that was valid before the damage.
func TestCrashRecover(t *testing.T) {
	t.Parallel()
	s := newCrashSuite(t)
	const seed = 20240611
	template, lines := crashTopic(t, seed, 2, 200<<10, 3, "--segment-bytes", "8k", "--index-interval", "3")
	whole := make([][]jsonLine, len(lines))
	for p := range lines {
		whole[p] = crashRead(t, template, "t", "--partition", strconv.Itoa(p))
		s.prefixOf(t, "the topic as written", whole[p], lines[p])
	}
	s.each(t, 4, 80, nil, func(t *testing.T, rng *rand.Rand) { s.recoverTrial(t, rng, template, whole) })
}

func (s *crashSuite) recoverTrial(t *testing.T, rng *rand.Rand, template string, whole [][]jsonLine) {
	damaged := copyTree(t, template)
	damage := make([]crashDamage, len(whole))
	salvage := false
	for p := range whole {
		damage[p] = crashDamagePartition(t, rng, filepath.Join(damaged, "t", strconv.Itoa(p)))
		t.Logf("partition %d: %s", p, strings.Join(damage[p].what, "; "))
		salvage = salvage || damage[p].corrupt
	}
	if topicDir := filepath.Join(damaged, "t"); rng.IntN(4) == 0 {
		// A copy that died, and settings being replaced.
		if err := os.Mkdir(filepath.Join(topicDir, ".copy-0-0123456789ab.tmp"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(topicDir, ".seglog.json.tmp"), []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("left a dead copy's directory and a settings file's temporary")
	}
	args := []string{"recover"}
	if salvage || rng.IntN(3) == 0 {
		args = append(args, "--salvage")
	}
	ref, dir := copyTree(t, damaged), copyTree(t, damaged)
	before := crashTree(t, dir)

	// The un-killed recover keeps every record but the damaged ones.
	plan := s.calibrate(t, nil, append(append([]string{"-d", ref}, args...), "--dry-run")...)
	calib := s.calibrate(t, nil, append([]string{"-d", ref}, args...)...)
	var want []jsonLine // read reads partition 0 first
	for p := range whole {
		for _, l := range whole[p] {
			if !damage[p].lost[l.Offset] {
				want = append(want, l)
			}
		}
	}
	s.sameLines(t, "an un-killed recover, against the records not damaged", crashRead(t, ref, "t"), want)
	crashClean(t, ref, "after an un-killed recover")
	crashSettled(t, ref)

	r := s.kill(t, rng, plan.work, calib.work, nil, append([]string{"-d", dir}, args...)...)
	if r.killed {
		switch after := crashTree(t, dir); {
		case maps.Equal(after, before):
			s.state(t, "recover killed before it changed anything")
		case maps.Equal(crashTree(t, dir, logstore.QuarantineDir, logstore.GapsFile), crashTree(t, ref, logstore.QuarantineDir, logstore.GapsFile)):
			s.state(t, "recover killed after it had done everything")
		default:
			s.state(t, "recover killed half-way")
		}
	}

	// Run again: a run without --salvage finishes a split the killed one
	// began; it may leave other corrupt records (exit status 3) for one
	// with --salvage.
	again := args
	if slices.Contains(args, "--salvage") && rng.IntN(4) == 0 {
		again = []string{"recover"}
	}
	rr := runIn(t, dir, nil, again...)
	if rr.code == 3 && len(again) == 1 {
		t.Logf("recover without --salvage left corrupt records (exit status 3); again with --salvage")
		rr = runIn(t, dir, nil, args...)
	}
	if rr.code != 0 {
		t.Fatalf("recover after the kill: exit status %d, want 0; stderr:\n%s\nstdout:\n%s", rr.code, rr.stderr, rr.stdout)
	}
	crashClean(t, dir, "after the second recover")
	s.sameLines(t, "a killed recover and a second one, against an un-killed recover", crashRead(t, dir, "t"), want)
	for p := range whole {
		ps := strconv.Itoa(p)
		gotGaps, err := logstore.ReadGaps(filepath.Join(dir, "t", ps))
		if err != nil {
			t.Fatal(err)
		}
		wantGaps, err := logstore.ReadGaps(filepath.Join(ref, "t", ps))
		if err != nil {
			t.Fatal(err)
		}
		span := func(gs []logstore.Gap) (s []string) {
			for _, g := range gs {
				s = append(s, fmt.Sprintf("%d..%d", g.From, g.To))
			}
			return s
		}
		if !slices.Equal(span(gotGaps), span(wantGaps)) {
			t.Fatalf("partition %s records gaps %v, want %v as an un-killed recover records", ps, span(gotGaps), span(wantGaps))
		}
		if !slices.Equal(crashSegments(t, filepath.Join(dir, "t", ps)), crashSegments(t, filepath.Join(ref, "t", ps))) {
			t.Fatalf("partition %s has segments %v, want %v as after an un-killed recover", ps,
				crashSegments(t, filepath.Join(dir, "t", ps)), crashSegments(t, filepath.Join(ref, "t", ps)))
		}
	}
	crashSettled(t, dir)
}

// TestCrashRetention kills retention-sweep while it deletes many small
// segments (by size, by time, or everything, which rolls the active
// segment first): each segment is whole or gone, what is left is a
// contiguous suffix of the partition, verify-crc is clean and reads work
// at once; a second sweep ends where an un-killed one ends, recover clears
// what the kill left, and the next append continues the offsets.
func TestCrashRetention(t *testing.T) {
	t.Parallel()
	s := newCrashSuite(t)
	template, lines := crashTopic(t, 20240612, 1, 200<<10, 8, "--segment-bytes", "3k", "--index-interval", "2")
	part := filepath.Join(template, "t", "0")
	whole := crashRead(t, template, "t")
	s.prefixOf(t, "the topic as written", whole, lines[0])
	segs := crashSegments(t, part)
	// Each segment's newest timestamp, to set a time cutoff between them.
	newest := make([]int64, len(segs))
	for _, l := range whole {
		i, found := slices.BinarySearch(segs, l.Offset)
		if !found {
			i--
		}
		newest[i] = max(newest[i], l.TimestampNS)
	}
	files := map[string]string{}
	var total int64
	for _, base := range segs {
		for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
			name := format.SegmentName(base, ext)
			files[name] = crashHash(t, filepath.Join(part, name))
		}
		fi, err := os.Stat(filepath.Join(part, format.SegmentName(base, format.LogExt)))
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	t.Logf("template: %d records in %d segments, %d bytes", len(whole), len(segs), total)
	s.each(t, 4, 60, nil, func(t *testing.T, rng *rand.Rand) {
		s.retentionTrial(t, rng, template, whole, segs, newest, files, total)
	})
}

func (s *crashSuite) retentionTrial(t *testing.T, rng *rand.Rand, template string, whole []jsonLine, segs []uint64, newest []int64, files map[string]string, total int64) {
	next := whole[len(whole)-1].Offset + 1
	at := func(ts int64) string { return time.Unix(0, ts).Add(time.Hour).UTC().Format(time.RFC3339Nano) }
	byTime := func() []string {
		cut := newest[rng.IntN(len(segs)-1)] + 1 // segments up to one whose newest record is older go
		return []string{"--retention", "1h", "--now", at(cut)}
	}
	args := []string{"retention-sweep", "t"}
	switch rng.IntN(4) {
	case 0:
		args = append(args, "--retention-bytes", strconv.FormatInt(1+rng.Int64N(total), 10))
	case 1:
		args = append(args, byTime()...)
	case 2:
		// Everything has expired: the active segment is rolled, then goes.
		args = append(args, "--retention", "1h", "--now", at(newest[len(newest)-1]+int64(time.Hour)))
	default:
		args = append(append(args, "--retention-bytes", strconv.FormatInt(1+rng.Int64N(total), 10)), byTime()...)
	}
	t.Log(strings.Join(args, " "))
	ref, dir := copyTree(t, template), copyTree(t, template)
	plan := s.calibrate(t, nil, append(append([]string{"-d", ref}, args...), "--dry-run")...)
	calib := s.calibrate(t, nil, append([]string{"-d", ref}, args...)...)
	refSegs := crashSegments(t, filepath.Join(ref, "t", "0"))
	refLines := crashRead(t, ref, "t")
	r := s.kill(t, rng, plan.work, calib.work, nil, append([]string{"-d", dir}, args...)...)

	// Right after the kill: whole segments, a contiguous suffix.
	part := filepath.Join(dir, "t", "0")
	left := crashSegments(t, part)
	rolled := len(left) > 0 && left[len(left)-1] == next && !slices.Contains(segs, next)
	kept := left
	if rolled {
		kept = left[:len(left)-1]
		if fi, err := os.Stat(filepath.Join(part, format.SegmentName(next, format.LogExt))); err != nil || fi.Size() != 0 {
			t.Fatalf("the segment a roll made, %d: %v, %v; want it empty", next, fi, err)
		}
		s.state(t, "active segment rolled")
	}
	first := len(segs) - len(kept)
	if first < 0 || !slices.Equal(kept, segs[first:]) {
		t.Fatalf("after the kill the partition holds segments %v; want a suffix of %v (and perhaps an empty one at %d)", left, segs, next)
	}
	if !rolled && first == len(segs) {
		t.Fatalf("after the kill no segment is left, and none was rolled: the next offset %d is lost", next)
	}
	if len(left) < len(refSegs) {
		t.Fatalf("after the kill the partition holds segments %v, fewer than an un-killed sweep leaves (%v)", left, refSegs)
	}
	for _, base := range kept {
		for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
			name := format.SegmentName(base, ext)
			if got := crashHash(t, filepath.Join(part, name)); got != files[name] {
				what := "changed"
				if got == "" {
					what = "is gone"
				}
				t.Fatalf("%s %s though its segment's .log is there: want each segment whole or gone", name, what)
			}
		}
	}
	var leftovers int
	entries, _ := os.ReadDir(part)
	for _, e := range entries {
		if base, ext, err := format.ParseSegmentName(strings.TrimSuffix(e.Name(), ".deleted")); err == nil &&
			(strings.HasSuffix(e.Name(), ".deleted") || ext != format.LogExt && !slices.Contains(left, base)) {
			leftovers++
		}
	}
	if r.killed {
		switch {
		case first == 0 && !rolled:
			s.state(t, "sweep killed before it deleted anything")
		case slices.Equal(left, refSegs) && leftovers == 0:
			s.state(t, "sweep killed after it had done everything")
		case leftovers > 0:
			s.state(t, "sweep killed in the middle of deleting a segment")
		default:
			s.state(t, "sweep killed between segments")
		}
	}
	crashClean(t, dir, "right after the kill")
	var want []jsonLine
	if first < len(segs) {
		want = whole[segs[first]:]
	}
	s.sameLines(t, "read right after the kill", crashRead(t, dir, "t"), want)

	// A second sweep ends where an un-killed one does.
	mustRun(t, dir, "", args...)
	if got := crashSegments(t, part); !slices.Equal(got, refSegs) {
		t.Fatalf("after a second sweep the partition holds segments %v, want %v as after an un-killed sweep", got, refSegs)
	}
	s.sameLines(t, "read after a second sweep, against an un-killed sweep", crashRead(t, dir, "t"), refLines)
	mustRun(t, dir, "", "recover")
	crashClean(t, dir, "after the second sweep and recover")
	crashSettled(t, dir)

	more, in := crashLines(rng, len(whole), 3, 1)
	mustRun(t, dir, string(in), "append", "t", "--key-delimiter", ":")
	got := crashRead(t, dir, "t")
	if len(got) != len(refLines)+len(more) {
		t.Fatalf("after the next append: %d records, want %d", len(got), len(refLines)+len(more))
	}
	s.sameLines(t, "read after the next append", got[:len(refLines)], refLines)
	s.follow(t, "records of the next append", got[len(refLines):], next, more)
}

// TestCrashCopy kills copy-partition into a new data directory, over an
// existing partition with --force, and into a new topic of its own data
// directory (throttled or not): the destination partition is absent, the
// old one untouched, or a whole verified copy; the source never changes;
// the dead copy's build directory goes with the next copy or recover, and
// a second copy succeeds.
func TestCrashCopy(t *testing.T) {
	t.Parallel()
	s := newCrashSuite(t)
	source, _ := crashTopic(t, 20240613, 1, 160<<10, 2, "--segment-bytes", "10k", "--index-interval", "4")
	// A known gap, which the copy carries: a record cut by salvage.
	segs := crashSegments(t, filepath.Join(source, "t", "0"))
	var log string
	var recs []crashRecord
	for _, base := range segs[1 : len(segs)-1] {
		if log = filepath.Join(source, "t", "0", format.SegmentName(base, format.LogExt)); len(crashScan(t, log)) >= 3 {
			recs = crashScan(t, log)
			break
		}
	}
	if recs == nil {
		t.Fatalf("no closed segment of %v holds 3 records", segs)
	}
	rec := recs[len(recs)/2]
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b[rec.pos+format.HeaderLen] ^= 0xff
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, source, "", "recover", "--salvage")
	crashClean(t, source, "of the copy's source")
	if err := os.RemoveAll(filepath.Join(source, logstore.QuarantineDir)); err != nil {
		t.Fatal(err)
	}
	whole := crashRead(t, source, "t")
	// An existing destination for --force: other records, other segments.
	old := filepath.Join(t.TempDir(), "data")
	mustRun(t, old, "", "create", "t", "--segment-bytes", "4k")
	_, oldIn := crashLines(rand.New(rand.NewPCG(1, 2)), 1_000_000, 300, 1)
	mustRun(t, old, string(oldIn), "append", "t", "--key-delimiter", ":")
	// Copies into a new topic killed before they placed the partition:
	// recover gave up on a topic without partitions before looking for
	// leftovers, so the build directory stayed; and a copy killed before
	// it wrote the new topic's settings left the topic without them for
	// good, as the next copy took the topic for an existing one.
	regress := []uint64{2700151774658392077, 8056034061276761893}
	s.each(t, 4, 80, regress, func(t *testing.T, rng *rand.Rand) { s.copyTrial(t, rng, source, old, whole) })
}

func (s *crashSuite) copyTrial(t *testing.T, rng *rand.Rand, source, old string, whole []jsonLine) {
	variant := rng.IntN(3)
	toTopic := "t"
	setup := func() (src, dst string) {
		src = copyTree(t, source)
		switch variant {
		case 0:
			dst = filepath.Join(t.TempDir(), "data")
			mustRun(t, dst, "", "create", "other")
		case 1:
			dst = copyTree(t, old)
		default:
			dst = src
		}
		return src, dst
	}
	args := func(src, dst string) []string {
		a := []string{"-d", src, "copy-partition", "t", "0", "--to", dst}
		switch variant {
		case 1:
			a = append(a, "--force")
		case 2:
			a = append(a, "--to-topic", "t2")
		}
		if rng.IntN(2) == 0 {
			a = append(a, "--throttle", "2M")
		}
		return a
	}
	if variant == 2 {
		toTopic = "t2"
	}
	t.Logf("%s", []string{"into a new data directory", "over an existing partition, --force", "into a new topic beside the source"}[variant])
	// The copy's records are the source's, under the destination's name.
	wantCopy := func(t *testing.T, what, dst string) {
		got := crashRead(t, dst, toTopic)
		want := whole
		if toTopic != "t" {
			want = nil
			for _, l := range whole {
				l.raw = strings.Replace(l.raw, `"topic":"t"`, `"topic":"`+toTopic+`"`, 1)
				want = append(want, l)
			}
		}
		s.sameLines(t, what, got, want)
	}

	refSrc, refDst := setup()
	calibArgs := args(refSrc, refDst)
	calib := s.calibrate(t, nil, calibArgs...)
	wantCopy(t, "the un-killed copy", refDst)
	crashClean(t, refDst, "of the un-killed copy")

	src, dst := setup()
	srcBefore := snapshot(t, filepath.Join(src, "t"))
	final := filepath.Join(dst, toTopic, "0")
	var oldBefore map[string]string
	var oldInfo os.FileInfo
	if variant == 1 {
		oldBefore = snapshot(t, final)
		var err error
		if oldInfo, err = os.Stat(final); err != nil {
			t.Fatal(err)
		}
	}
	runArgs := append([]string{"-d", src}, calibArgs[2:]...)
	runArgs[slices.Index(runArgs, "--to")+1] = dst
	var r crashRun
	if rng.IntN(3) == 0 {
		// The moment after the partition is placed is too short for a
		// timed kill to find: kill as soon as it is seen.
		placedNow := func() bool {
			fi, err := os.Stat(final)
			if variant == 1 {
				return err == nil && oldInfo != nil && !os.SameFile(fi, oldInfo)
			}
			return err == nil
		}
		r = crashExec(t, nil, -1, placedNow, runArgs...)
		t.Logf("kill as soon as the partition is placed: %s", map[bool]string{true: "killed", false: "it had ended"}[r.killed])
		s.count(t, r, 1)
	} else {
		r = s.kill(t, rng, 0, calib.work, nil, runArgs...)
	}

	sameSnapshot(t, srcBefore, snapshot(t, filepath.Join(src, "t")))
	builds := crashBuilds(dst, toTopic)
	placed := false
	switch _, err := os.Stat(final); {
	case os.IsNotExist(err):
		if variant == 1 {
			t.Fatalf("after the kill %s is gone; want the old partition or the new one", final)
		}
	case err != nil:
		t.Fatal(err)
	case variant == 1 && maps.Equal(oldBefore, snapshot(t, final)):
	default:
		wantCopy(t, "the destination after the kill", dst)
		crashClean(t, dst, "of the destination after the kill")
		placed = true
	}
	if r.killed {
		what := "copy killed before it placed the partition"
		if placed {
			what = "copy killed after it placed the partition"
		}
		if len(builds) > 0 {
			what += ", its build directory left"
		}
		s.state(t, what)
	}

	// Wherever the kill came, no command over every topic fails for it.
	crashEveryTopicCommands(t, dst, "")
	// The next copy, or recover (of the topic, or of every topic when
	// there is none), takes the dead build away; then a copy succeeds.
	if rng.IntN(2) == 0 {
		args := []string{"recover"}
		if _, err := os.Stat(filepath.Join(dst, toTopic)); rng.IntN(2) == 0 && (err == nil || len(builds) > 0) {
			args = append(args, toTopic) // by name: there is something of it to recover
		}
		if rr := runIn(t, dst, nil, args...); rr.code != 0 {
			t.Fatalf("seglog %s after the kill: exit status %d, want 0; stderr:\n%s", strings.Join(args, " "), rr.code, rr.stderr)
		}
		if left := crashBuilds(dst, toTopic); len(left) > 0 {
			t.Fatalf("seglog %s left the dead copy's build directory %v; want it removed", strings.Join(args, " "), left)
		}
	}
	again := runArgs
	if _, err := os.Stat(final); err == nil && variant != 1 {
		again = append(slices.Clone(runArgs), "--force")
	}
	rr := run(t, nil, again...)
	if rr.code != 0 {
		t.Fatalf("copy after the kill: exit status %d, want 0; stderr:\n%s", rr.code, rr.stderr)
	}
	if left := crashBuilds(dst, toTopic); len(left) > 0 {
		t.Fatalf("the copy after the kill left build directories %v; want none", left)
	}
	wantCopy(t, "the destination after a second copy", dst)
	// A topic the copy made has the source's settings, as an un-killed
	// copy gives it.
	settings := filepath.Join(toTopic, ".seglog.json")
	if got, want := crashHash(t, filepath.Join(dst, settings)), crashHash(t, filepath.Join(refDst, settings)); got != want {
		t.Fatalf("after a killed copy and a second one, %s is %q; want %q, as after an un-killed copy", settings,
			crashFile(t, filepath.Join(dst, settings)), crashFile(t, filepath.Join(refDst, settings)))
	}
	crashClean(t, dst, "of the destination after a second copy")
	crashSettled(t, dst)
	sameSnapshot(t, srcBefore, snapshot(t, filepath.Join(src, "t")))
}

// TestCrashImportPartition kills import-partition into a new topic and
// over an existing partition (--force) at random moments: the partition
// is absent, the old one untouched, or the whole stream; commands over
// every topic still exit 0; recover or the next import removes what the
// dead one built, and a second import succeeds.
func TestCrashImportPartition(t *testing.T) {
	t.Parallel()
	s := newCrashSuite(t)
	source, _ := crashTopic(t, 20240616, 1, 160<<10, 2, "--segment-bytes", "10k", "--retention", "3d")
	whole := crashRead(t, source, "t")
	stream := []byte(mustRun(t, source, "", "copy-partition", "t", "0", "--to", "-").stdout)
	old := filepath.Join(t.TempDir(), "data")
	mustRun(t, old, "", "create", "t", "--segment-bytes", "4k")
	_, oldIn := crashLines(rand.New(rand.NewPCG(3, 4)), 2_000_000, 300, 1)
	mustRun(t, old, string(oldIn), "append", "t", "--key-delimiter", ":")
	s.each(t, 4, 60, nil, func(t *testing.T, rng *rand.Rand) { s.importTrial(t, rng, stream, old, whole) })
}

func (s *crashSuite) importTrial(t *testing.T, rng *rand.Rand, stream []byte, old string, whole []jsonLine) {
	force := rng.IntN(2) == 1
	setup := func() string {
		if force {
			return copyTree(t, old)
		}
		dst := filepath.Join(t.TempDir(), "data")
		mustRun(t, dst, "", "create", "other")
		return dst
	}
	args := func(dst string) []string {
		a := []string{"-d", dst, "import-partition", "t", "0"}
		if force {
			a = append(a, "--force")
		}
		return a
	}
	t.Logf("%s", map[bool]string{false: "into a new topic", true: "over an existing partition, --force"}[force])
	calib := s.calibrate(t, stream, args(setup())...)
	dst := setup()
	final := filepath.Join(dst, "t", "0")
	var oldBefore map[string]string
	if force {
		oldBefore = snapshot(t, final)
	}
	r := s.kill(t, rng, 0, calib.work, stream, args(dst)...)
	switch _, err := os.Stat(final); {
	case os.IsNotExist(err) && !force:
	case err != nil:
		t.Fatalf("after the kill, %s: %v; want the old partition or the new one", final, err)
	case force && maps.Equal(oldBefore, snapshot(t, final)):
	default:
		s.sameLines(t, "the partition after the kill", crashRead(t, dst, "t"), whole)
	}
	if r.killed {
		s.state(t, fmt.Sprintf("import killed, %d build directories left", len(crashBuilds(dst, "t"))))
	}
	crashEveryTopicCommands(t, dst, "")
	if rng.IntN(2) == 0 {
		if rr := runIn(t, dst, nil, "recover"); rr.code != 0 {
			t.Fatalf("recover after the kill: exit status %d, want 0; stderr:\n%s", rr.code, rr.stderr)
		}
		if left := crashBuilds(dst, "t"); len(left) > 0 {
			t.Fatalf("recover left the dead import's build directory %v; want it removed", left)
		}
	}
	again := append(args(dst)[2:], "--force")
	if rr := runIn(t, dst, bytes.NewReader(stream), again...); rr.code != 0 {
		t.Fatalf("import after the kill: exit status %d, want 0; stderr:\n%s", rr.code, rr.stderr)
	}
	s.sameLines(t, "the partition after a second import", crashRead(t, dst, "t"), whole)
	crashClean(t, dst, "after a second import")
	crashSettled(t, dst)
}

// crashBuilds lists the build directories of copies into topic in the
// data directory dir: of a partition, in the topic's directory; of the
// topic itself, in the data directory.
func crashBuilds(dir, topic string) []string {
	in, _ := filepath.Glob(filepath.Join(dir, topic, ".copy-*.tmp"))
	beside, _ := filepath.Glob(filepath.Join(dir, ".copy-"+topic+"-*.tmp"))
	return append(in, beside...)
}

// TestCrashCopyIntoNewTopicThenRecover: a copy into a topic it creates,
// killed while it builds, leaves no topic, only its build directory in
// the data directory, where commands over every topic never meet it;
// recover (of that topic, or of every topic) removes it, and the next copy
// succeeds.
func TestCrashCopyIntoNewTopicThenRecover(t *testing.T) {
	t.Parallel()
	source, lines := crashTopic(t, 20240614, 1, 120<<10, 1, "--segment-bytes", "8k")
	for _, every := range []bool{false, true} {
		t.Run(fmt.Sprintf("every=%v", every), func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "data")
			mustRun(t, dst, "", "create", "other")
			cmd := exec.Command(seglogBin(t), "-d", source, "copy-partition", "t", "0", "--to", dst, "--throttle", "32k")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			eventually(t, 60*time.Second, "the copy to build its first segment", func() bool {
				m, _ := filepath.Glob(filepath.Join(dst, ".copy-t-*.tmp", "0", "*.log"))
				return len(m) > 0
			})
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
				t.Fatalf("the copy ended before the kill: %v; stderr:\n%s", cmd.ProcessState, stderr.String())
			}
			builds, _ := filepath.Glob(filepath.Join(dst, ".copy-t-*.tmp"))
			if len(builds) != 1 {
				t.Fatalf("after the kill: build directories %v, want one", builds)
			}
			if _, err := os.Stat(filepath.Join(dst, "t")); !os.IsNotExist(err) {
				t.Fatalf("a copy killed while building left its topic in place: %v", err)
			}
			crashEveryTopicCommands(t, dst, "")

			args := []string{"recover", "t"}
			if every {
				args = args[:1]
			}
			r := runIn(t, dst, nil, args...)
			if r.code != 0 || !strings.Contains(r.stdout, "removed .copy-t-") {
				t.Fatalf("seglog %s: exit status %d, want 0, saying it removed the build; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
			}
			if _, err := os.Stat(builds[0]); !os.IsNotExist(err) {
				t.Fatalf("seglog %s left the dead copy's build directory %s (%v); want it removed", strings.Join(args, " "), builds[0], err)
			}

			mustRun(t, source, "", "copy-partition", "t", "0", "--to", dst)
			s := &crashSuite{states: map[string]int{}}
			s.follow(t, "the copy after recover", crashRead(t, dst, "t"), 0, lines[0])
			crashClean(t, dst, "of the copy")
			crashSettled(t, dst)
		})
	}
}

// crashEveryTopicCommands fails unless the commands over every topic of
// dir exit 0 (a half-made topic only warned of: its name in halfMade, ""
// for none), as cron and monitoring run them.
func crashEveryTopicCommands(t *testing.T, dir, halfMade string) {
	t.Helper()
	for _, args := range [][]string{{"topics"}, {"describe"}, {"verify-crc"}, {"retention-sweep", "--retention", "1000d", "--dry-run"}} {
		r := runIn(t, dir, nil, args...)
		warned := halfMade == "" && r.stderr == "" ||
			halfMade != "" && strings.Count(r.stderr, "\n") == 1 && strings.Contains(r.stderr, "seglog: warning: skipping "+filepath.Join(dir, halfMade)+": ") &&
				strings.Contains(r.stderr, "'seglog recover' removes it")
		if r.code != 0 || !warned {
			t.Errorf("seglog %s: exit status %d, stderr %q; want 0 and a warning for %q only", strings.Join(args, " "), r.code, r.stderr, halfMade)
		}
	}
}

// TestCrashCopyIntoHalfMadeTopic: a copy into a new topic by an older
// seglog, killed before it built its partition, left the topic directory
// as it had made it so far: empty, with the settings half written, with
// the settings and its dead build directory. Commands over every topic
// pass over it with a warning (exit status 0); recover removes it, and so
// does the next copy, which still gives the topic the source's settings
// (the topic is still its to make) and leaves nothing behind.
func TestCrashCopyIntoHalfMadeTopic(t *testing.T) {
	t.Parallel()
	source, lines := crashTopic(t, 20240615, 1, 40<<10, 1, "--segment-bytes", "8k", "--index-interval", "3", "--retention", "2d")
	want := crashFile(t, filepath.Join(source, "t", ".seglog.json"))
	for name, left := range map[string]map[string]string{
		"empty":                    {},
		"settings half written":    {".seglog.json.tmp": `{"segment_bytes":`},
		"settings not renamed yet": {".seglog.json.tmp": want},
		"settings and a dead build": {".seglog.json": want, ".copy-0-0123456789ab.tmp/00000000000000000000.log": "partial",
			".copy-0-0123456789ab.tmp/00000000000000000000.index": ""},
	} {
		for _, then := range []string{"copy", "recover"} {
			t.Run(name+", then "+then, func(t *testing.T) {
				dst := filepath.Join(t.TempDir(), "data")
				mustRun(t, dst, "", "create", "other")
				if err := os.MkdirAll(filepath.Join(dst, "t"), 0o755); err != nil {
					t.Fatal(err)
				}
				for name, content := range left {
					path := filepath.Join(dst, "t", name)
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				crashEveryTopicCommands(t, dst, "t")
				if then == "recover" {
					r := mustRun(t, dst, "", "recover")
					if !strings.Contains(r.stdout, "removed t (topic directory an interrupted copy or import into a new topic left, holding no partition)") {
						t.Errorf("recover does not say it removed t; stdout:\n%s", r.stdout)
					}
					if _, err := os.Stat(filepath.Join(dst, "t")); !os.IsNotExist(err) {
						t.Fatalf("recover left the half-made topic: %v", err)
					}
					crashEveryTopicCommands(t, dst, "")
				}
				mustRun(t, source, "", "copy-partition", "t", "0", "--to", dst)
				if got := crashFile(t, filepath.Join(dst, "t", ".seglog.json")); got != want {
					t.Fatalf("the copy's topic has settings %q; want the source's, %q", got, want)
				}
				s := &crashSuite{states: map[string]int{}}
				s.follow(t, "the copy", crashRead(t, dst, "t"), 0, lines[0])
				crashClean(t, dst, "of the copy")
				crashSettled(t, dst)
			})
		}
	}
}
