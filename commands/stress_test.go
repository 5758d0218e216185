package commands

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// TestStress runs, as separate processes and all at once against one
// topic: appenders (several on one partition, others spreading keys over
// every partition, some stopped with SIGTERM mid-stream), tail -f and
// tail -F followers (one of them repeatedly frozen with SIGSTOP so that
// retention deletes segments it has not read), a read loop, and
// verify-crc, describe and retention-sweep in loops. Then it accounts for
// every record:
//
//   - every line a reader prints is whole and is a line some writer wrote,
//     in the partition its writer or key sends it to; per partition the
//     offsets, and per writer and partition the sequence numbers, strictly
//     increase (nothing torn, duplicated or reordered);
//   - the offsets the appenders' summaries say they were given cover each
//     partition from 0 to its end exactly once; every record a reader saw
//     or that is still on disk is the one its writer was given that offset
//     for; what nobody saw lies below the partition's final start (an
//     oldest prefix, removed by retention); a follower skips offsets only
//     below that start and only with a warning naming them;
//   - verify-crc (also against live appenders), describe, read (save a
//     retention error) and retention-sweep never fail, and followers end
//     with status 0 on SIGTERM once they have printed everything;
//   - nothing hangs: every process has a deadline, and one that passes it
//     is made to dump its goroutines (SIGQUIT), killed and named.
//
// Default: a few seconds of stress. Long mode (-long or SEGLOG_LONG=1):
// minutes and more writers. SEGLOG_STRESS_SEED replays the test's own
// choices (batch sizes, keys, pauses, signals; the scheduling is the
// machine's), SEGLOG_STRESS_DURATION sets the stress phase's length.
func TestStress(t *testing.T) {
	cfg := stressConfig{
		duration:       5 * time.Second,
		partitions:     3,
		fixed:          []int{0, 0, 1},
		keyed:          2,
		maxBatch:       600,
		segmentBytes:   "2KiB",
		retentionBytes: "6KiB",
		retention:      "1s",
		maxStress:      20 * time.Second,
		goalLost:       1,
		goalSweeps:     2,
		cmdTimeout:     2 * time.Minute,
		deadline:       5 * time.Minute,
	}
	if longMode() {
		cfg.duration = 3 * time.Minute
		cfg.fixed = []int{0, 0, 0, 1, 1, 2}
		cfg.keyed = 4
		cfg.maxBatch = 1000
		cfg.maxStress = 10 * time.Minute
		cfg.goalLost = 20
		cfg.goalSweeps = 30
		cfg.deadline = 25 * time.Minute
	}
	if v := os.Getenv("SEGLOG_STRESS_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SEGLOG_STRESS_DURATION=%q: %v", v, err)
		}
		cfg.deadline += d - cfg.duration
		cfg.maxStress += d - cfg.duration
		cfg.duration = d
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SEGLOG_STRESS_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("SEGLOG_STRESS_SEED=%q: %v", v, err)
		}
	}
	t.Logf("seed %d (replay with SEGLOG_STRESS_SEED=%d), %v of stress, %d fixed-partition and %d keyed writers",
		seed, seed, cfg.duration, len(cfg.fixed), cfg.keyed)
	s := newStress(t, cfg, seed)
	s.run()
}

type stressConfig struct {
	duration time.Duration // of the stress phase, at least
	// The stress phase goes on past duration, up to maxStress, until the
	// frozen follower has been warned of goalLost runs of records removed
	// before it read them and goalSweeps sweeps have deleted segments: on
	// a machine busy enough that processes start slowly, the run still
	// does what it is for.
	maxStress      time.Duration
	goalLost       int
	goalSweeps     int64
	partitions     int
	fixed          []int // the partition of each writer that names one
	keyed          int   // writers whose keys spread over the partitions
	maxBatch       int   // lines per append invocation, at most
	segmentBytes   string
	retentionBytes string // stored with the topic: what most sweeps apply
	retention      string // given to every fourth sweep as well
	cmdTimeout     time.Duration
	deadline       time.Duration // of the whole run
}

const stressTopic = "s"

// stress is one run: its processes, what the writers were told and what
// the readers saw.
type stress struct {
	t    *testing.T
	cfg  stressConfig
	seed uint64
	dir  string
	bin  string
	// ctx ends at the first failure or the run's deadline: every process
	// is then killed. stop ends the stress phase: loops finish the command
	// they are running and return.
	ctx    context.Context
	cancel context.CancelFunc
	stop   chan struct{}
	start  time.Time

	mu       sync.Mutex
	swept    []uint64 // each partition's start after the latest sweep
	failures []string
	procs    map[*stressProc]bool // running
	started  map[string]int       // processes started, by command
	longest  map[string]time.Duration

	writers []*stressWriter
	tails   []*stressReader
	reads   []*stressReader // one per read run, kept for the final accounting

	sweeps, sweepsDeleted, segmentsDeleted atomic.Int64
	verifies, describes, freezes           atomic.Int64
	verifiesLiveTail                       atomic.Int64 // verify-crc runs that met a record being written
	halfWritten                            atomic.Int64 // records the foreign writer left half-written a while
	readsCut                               atomic.Int64 // reads ended by retention
}

func newStress(t *testing.T, cfg stressConfig, seed uint64) *stress {
	s := &stress{t: t, cfg: cfg, seed: seed, dir: filepath.Join(t.TempDir(), "data"), bin: seglogBin(t),
		stop: make(chan struct{}), procs: map[*stressProc]bool{}, started: map[string]int{}, longest: map[string]time.Duration{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	t.Cleanup(func() {
		s.cancel()
		s.killAll()
	})
	return s
}

// failf records a failure and ends the run. It is safe from any
// goroutine; the test reports the failures once everything has stopped.
func (s *stress) failf(format string, args ...any) {
	s.mu.Lock()
	if len(s.failures) < 30 {
		s.failures = append(s.failures, fmt.Sprintf(format, args...))
	}
	s.mu.Unlock()
	s.cancel()
}

func (s *stress) failed() bool { return s.ctx.Err() != nil }

// stressing reports whether the stress phase goes on.
func (s *stress) stressing() bool {
	select {
	case <-s.stop:
		return false
	case <-s.ctx.Done():
		return false
	default:
		return true
	}
}

// pause waits d, or less when the stress phase ends. It paces the loops;
// nothing waits on it for readiness.
func (s *stress) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.stop:
	case <-s.ctx.Done():
	}
}

func (s *stress) run() {
	t := s.t
	s.start = time.Now()
	// The whole run's deadline names whatever is still running.
	watchdog := time.AfterFunc(s.cfg.deadline, func() {
		s.failf("the run did not finish within %v; still running: %s", s.cfg.deadline, strings.Join(s.running(), "; "))
	})
	defer watchdog.Stop()

	for i, p := range s.cfg.fixed {
		s.writers = append(s.writers, &stressWriter{id: i, partition: p, sync: []string{"exit", "never", "batch", "never"}[i%4]})
	}
	for i := range s.cfg.keyed {
		s.writers = append(s.writers, &stressWriter{id: len(s.cfg.fixed) + i, partition: -1, sync: []string{"never", "exit"}[i%2]})
	}
	foreign := &stressWriter{id: len(s.writers), partition: s.cfg.partitions - 1, foreign: true}
	s.writers = append(s.writers, foreign)

	// tail -F waits for the topic to appear, then prints it from its first
	// record; the others start on the new, still empty topic. -n with
	// more than will ever be written: from the partitions' start, however
	// late the process gets going.
	all := strconv.Itoa(1 << 30)
	s.startTail("tail -F", nil, "-F", "-n", all)
	if code, _, stderr, ok := s.runCmd("create", "create", stressTopic, "--partitions", strconv.Itoa(s.cfg.partitions),
		"--segment-bytes", s.cfg.segmentBytes, "--retention-bytes", s.cfg.retentionBytes); ok && code != 0 {
		s.failf("seglog create: exit %d, want 0; stderr:\n%s", code, stderr)
	}
	s.startTail("tail -f", nil, "-f", "-n", all)
	frozen := s.startTail("tail -f (frozen now and then)", nil, "-f", "-n", all)
	s.startTail("tail -f --partition 1", []int{1}, "-f", "-n", all, "--partition", "1")

	var wg sync.WaitGroup
	goLoop := func(seed uint64, fn func(rng *rand.Rand)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(rand.New(rand.NewPCG(s.seed, seed)))
		}()
	}
	for _, w := range s.writers {
		if !w.foreign {
			goLoop(uint64(100+w.id), func(rng *rand.Rand) { s.writeLoop(w, rng) })
		}
	}
	goLoop(uint64(100+foreign.id), func(rng *rand.Rand) { s.foreignLoop(foreign, rng) })
	goLoop(1, s.readLoop)
	goLoop(2, s.verifyLoop)
	goLoop(3, s.describeLoop)
	goLoop(4, s.sweepLoop)
	goLoop(5, func(rng *rand.Rand) { s.freezeLoop(frozen, rng) })
	goLoop(6, func(rng *rand.Rand) {
		// A follower joining late, while sweeps delete under it.
		s.pause(s.cfg.duration / 3)
		if s.stressing() {
			s.startTail("tail -f (late)", nil, "-f", "-n", all)
		}
	})

	s.pause(s.cfg.duration)
	for !s.goalsMet(frozen) && time.Since(s.start) < s.cfg.maxStress && !s.failed() {
		time.Sleep(50 * time.Millisecond)
	}
	if !s.goalsMet(frozen) && !s.failed() {
		t.Logf("the stress phase ended after %v without reaching its goals (%d deleting sweeps, %d warnings of records removed unread): the machine is slow",
			s.cfg.maxStress, s.sweepsDeleted.Load(), frozen.lostWarnings())
	}
	close(s.stop)
	wg.Wait() // each process in the loops has its own deadline
	stressed := time.Since(s.start)

	if !s.failed() {
		s.finish()
	}
	s.cancel()
	s.killAll()
	s.mu.Lock()
	failures := slices.Clone(s.failures)
	s.mu.Unlock()
	for _, f := range failures {
		t.Error(f)
	}
	if len(failures) > 0 {
		t.Logf("seed %d (replay with SEGLOG_STRESS_SEED=%d)", s.seed, s.seed)
	}
	s.report(stressed)
}

// finish ends the followers once they have caught up, reads what is left
// on disk and accounts for every record.
func (s *stress) finish() {
	// The writers have stopped: no record is incomplete now.
	s.checkVerify("verify-crc", stressTopic)
	starts, nexts := s.describeFinal()
	if s.failed() {
		return
	}
	for _, tr := range s.tails {
		s.awaitCaughtUp(tr, starts, nexts)
	}
	for _, tr := range s.tails {
		if s.failed() {
			return
		}
		tr.proc.cmd.Process.Signal(syscall.SIGTERM)
		if !s.wait(tr.proc, s.cfg.cmdTimeout) {
			return
		}
		if code := tr.proc.cmd.ProcessState.ExitCode(); code != 0 {
			s.failf("%s: exit %d after SIGTERM, want 0; stderr:\n%s", tr.label, code, tr.proc.stderr.String())
		}
	}
	disk := s.newReader("final read", nil)
	code, stderr, _, ok := s.runCmdStream("read", disk.consume, "read", stressTopic, "--format", "json")
	if !ok {
		return
	}
	if code != 0 {
		s.failf("final seglog read: exit %d, want 0; stderr:\n%s", code, stderr)
		return
	}
	if s.failed() {
		return
	}
	s.account(disk, starts, nexts)
}

// describeFinal is each partition's start and next offset once nothing
// changes any more.
func (s *stress) describeFinal() (starts, nexts []uint64) {
	doc, ok := s.describe("describe --json (final)")
	if !ok {
		return nil, nil
	}
	starts, nexts = make([]uint64, s.cfg.partitions), make([]uint64, s.cfg.partitions)
	for _, p := range doc.Topics[0].Partitions {
		starts[p.Partition], nexts[p.Partition] = p.Start, p.Next
	}
	return starts, nexts
}

// awaitCaughtUp waits until the follower has printed the last record of
// every partition it follows that still holds records.
func (s *stress) awaitCaughtUp(tr *stressReader, starts, nexts []uint64) {
	deadline := time.Now().Add(s.cfg.cmdTimeout)
	for !s.failed() {
		behind := ""
		tr.mu.Lock()
		for _, p := range tr.parts {
			if starts[p] < nexts[p] && tr.last[p] != int64(nexts[p])-1 {
				behind += fmt.Sprintf(" partition %d at offset %d of %d..%d;", p, tr.last[p], starts[p], nexts[p]-1)
			}
		}
		tr.mu.Unlock()
		switch {
		case behind == "":
			return
		case tr.proc.exited():
			s.failf("%s: exited (status %d) before printing everything:%s stderr:\n%s", tr.label,
				tr.proc.cmd.ProcessState.ExitCode(), behind, tr.proc.stderr.String())
			return
		case time.Now().After(deadline):
			s.stuck(tr.proc, fmt.Sprintf("has not printed the last records %v after the writers stopped:%s", s.cfg.cmdTimeout, behind))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// report logs the run's figures.
func (s *stress) report(stressed time.Duration) {
	var calls, termed, told int64
	for _, w := range s.writers {
		for _, c := range w.calls {
			calls++
			told += c.appended
			if c.termed {
				termed++
			}
		}
	}
	var seen, lost int
	for _, tr := range s.tails {
		seen += len(tr.obs)
		lost += tr.lost
	}
	var readRecs int
	for _, r := range s.reads {
		readRecs += len(r.obs)
	}
	s.mu.Lock()
	var kinds []string
	procs := 0
	for k, n := range s.started {
		kinds = append(kinds, fmt.Sprintf("%s %d (longest %v)", k, n, s.longest[k].Round(time.Millisecond)))
		procs += n
	}
	s.mu.Unlock()
	slices.Sort(kinds)
	s.t.Logf("stress %v (whole run %v): %d processes (%s)", stressed.Round(time.Millisecond), time.Since(s.start).Round(time.Millisecond),
		procs, strings.Join(kinds, ", "))
	s.t.Logf("writers: %d appends (%d stopped by SIGTERM), %d records appended; followers printed %d records (%d offsets warned as removed unread, %d freezes); reads printed %d records (%d cut short by retention)",
		calls, termed, told, seen, lost, s.freezes.Load(), readRecs, s.readsCut.Load())
	s.t.Logf("sweeps: %d, %d of which deleted (%d segments); verify-crc runs: %d (%d met a record being written); describe runs: %d; records the foreign writer left half-written a while: %d",
		s.sweeps.Load(), s.sweepsDeleted.Load(), s.segmentsDeleted.Load(), s.verifies.Load(), s.verifiesLiveTail.Load(), s.describes.Load(), s.halfWritten.Load())
}

// --- processes ---

// stressProc is a seglog process of the run.
type stressProc struct {
	label  string
	cmd    *exec.Cmd
	stdin  io.WriteCloser // with a pipe for stdin only
	stdout *stressBuffer  // unless streamed
	stderr *stressBuffer
	done   chan struct{} // closed once it has exited and its output is read
}

func (p *stressProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// startProc starts `seglog -d DIR ARGS`. With stream, stdout is handed to
// it as it comes (the process is waited for once stream returns);
// otherwise it is collected. It returns nil when the run has ended.
func (s *stress) startProc(kind string, withStdin bool, stream func(io.Reader), args ...string) *stressProc {
	p := &stressProc{label: "seglog " + strings.Join(args, " "), stderr: new(stressBuffer), done: make(chan struct{})}
	p.cmd = exec.Command(s.bin, append([]string{"-d", s.dir}, args...)...)
	p.cmd.Stderr = p.stderr
	var out io.ReadCloser
	var err error
	if stream != nil {
		if out, err = p.cmd.StdoutPipe(); err != nil {
			s.failf("%s: %v", p.label, err)
			return nil
		}
	} else {
		p.stdout = new(stressBuffer)
		p.cmd.Stdout = p.stdout
	}
	if withStdin {
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			s.failf("%s: %v", p.label, err)
			return nil
		}
	}
	// Started and registered under the lock, so killAll misses none.
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		return nil
	}
	if err := p.cmd.Start(); err != nil {
		s.mu.Unlock()
		s.failf("start %s: %v", p.label, err)
		return nil
	}
	s.procs[p] = true
	s.started[kind]++
	began := time.Now()
	s.mu.Unlock()
	go func() {
		if stream != nil {
			stream(out)
			io.Copy(io.Discard, out) // whatever a failed check left
		}
		p.cmd.Wait()
		s.mu.Lock()
		delete(s.procs, p)
		s.longest[kind] = max(s.longest[kind], time.Since(began))
		s.mu.Unlock()
		close(p.done)
	}()
	return p
}

// wait waits for p to exit, at most d. A process still running then is
// stuck: it is reported by name with its goroutines. It returns false
// when p did not exit by itself (stuck, or the run ended).
func (s *stress) wait(p *stressProc, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.done:
		return true
	case <-timer.C:
		s.stuck(p, fmt.Sprintf("still running after %v", d))
	case <-s.ctx.Done():
		s.kill(p)
	}
	return false
}

// stuck reports p as hung, with the goroutine dump SIGQUIT makes a Go
// program print, and kills it.
func (s *stress) stuck(p *stressProc, what string) {
	p.cmd.Process.Signal(syscall.SIGCONT) // in case it is frozen
	p.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
	s.kill(p)
	stderr := p.stderr.String()
	if len(stderr) > 20000 {
		stderr = stderr[:20000] + "\n[...]"
	}
	s.failf("%s: %s (stuck?); its stderr, with its goroutines:\n%s", p.label, what, stderr)
}

func (s *stress) kill(p *stressProc) {
	p.cmd.Process.Kill()
	<-p.done
}

// killAll kills every process still running.
func (s *stress) killAll() {
	s.mu.Lock()
	var ps []*stressProc
	for p := range s.procs {
		ps = append(ps, p)
	}
	s.mu.Unlock()
	for _, p := range ps {
		s.kill(p)
	}
}

func (s *stress) running() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var l []string
	for p := range s.procs {
		l = append(l, p.label)
	}
	slices.Sort(l)
	return l
}

// runCmd runs a command to its end (at most the command timeout) and
// returns its status and output; ok is false when it did not end by
// itself (reported already) or the run has ended.
func (s *stress) runCmd(kind string, args ...string) (code int, stdout, stderr string, ok bool) {
	p := s.startProc(kind, false, nil, args...)
	if p == nil {
		return 0, "", "", false
	}
	if !s.wait(p, s.cfg.cmdTimeout) {
		return 0, "", "", false
	}
	return p.cmd.ProcessState.ExitCode(), p.stdout.String(), p.stderr.String(), true
}

// runCmdStream is runCmd with stdout streamed to fn.
func (s *stress) runCmdStream(kind string, fn func(io.Reader), args ...string) (code int, stderr string, p *stressProc, ok bool) {
	if p = s.startProc(kind, false, fn, args...); p == nil {
		return 0, "", nil, false
	}
	if !s.wait(p, s.cfg.cmdTimeout) {
		return 0, "", p, false
	}
	return p.cmd.ProcessState.ExitCode(), p.stderr.String(), p, true
}

// stressBuffer collects a process's output while the test reads it.
type stressBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *stressBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *stressBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// --- writers ---

// stressWriter is one writer: a series of `append --wait` processes, one
// after another, each given the next lines of its sequence.
type stressWriter struct {
	id        int
	partition int // -1: keys spread over the partitions
	sync      string
	foreign   bool // not seglog: the test itself, writing as another program would
	// sent: sequence numbers below it have been written to an append's
	// stdin (set before the write, so a reader may trust it).
	sent  atomic.Int64
	calls []stressCall // the goroutine's own until the writers are done
}

// stressCall is one append process and what its summary told.
type stressCall struct {
	from, to int64 // sequence numbers written to its stdin
	appended int64 // from..from+appended-1 went in, by its summary
	parts    []partitionSummary
	termed   bool // stopped by SIGTERM before its stdin ended
}

// stressValue and stressKey are writer w's line seq. Lengths vary, so
// records straddle segment and read-buffer boundaries everywhere. Writer
// 0's every 200th line is big (256 KiB): append writes such a record
// with syscalls of its own, header first, so readers and verify-crc meet
// it half-written at the end of the active segment.
func stressValue(w int, seq int64) string {
	n := int(seq * 7 % 41)
	if stressBig(w, seq) {
		n = 256 << 10
	}
	return fmt.Sprintf("w%d-%d-%s", w, seq, strings.Repeat(string(rune('a'+seq%26)), n))
}

func stressBig(w int, seq int64) bool { return w == 0 && seq%200 == 199 }

func stressKey(w *stressWriter, seq int64) string {
	if w.partition >= 0 {
		return ""
	}
	return fmt.Sprintf("k%d.%d", w.id, (seq*31+int64(w.id))%23)
}

// stressRoute is the partition FNV-1a-32(key) % n picks (docs/format.md
// §5), computed here independently of the code under test.
func stressRoute(key string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

func (s *stress) partitionOf(w *stressWriter, seq int64) int {
	if w.partition >= 0 {
		return w.partition
	}
	return stressRoute(stressKey(w, seq), s.cfg.partitions)
}

func (s *stress) writeLoop(w *stressWriter, rng *rand.Rand) {
	for s.stressing() {
		s.appendOnce(w, rng)
		s.pause(time.Duration(rng.IntN(20)) * time.Millisecond)
	}
}

// appendOnce runs one append: a batch of lines in a few writes, with
// pauses between them (so followers see a live writer), sometimes
// stopped by SIGTERM part-way.
func (s *stress) appendOnce(w *stressWriter, rng *rand.Rand) {
	args := []string{"append", stressTopic, "--wait", "--json", "--sync", w.sync}
	if w.partition >= 0 {
		args = append(args, "--partition", strconv.Itoa(w.partition))
	} else {
		args = append(args, "--key-delimiter", ":")
	}
	p := s.startProc("append", true, nil, args...)
	if p == nil {
		return
	}
	// Its deadline runs from the start: a stuck append that stops reading
	// stdin must not leave this goroutine blocked in a write.
	waited := make(chan bool, 1)
	go func() { waited <- s.wait(p, s.cfg.cmdTimeout) }()
	from := w.sent.Load()
	n := 1 + int64(rng.IntN(s.cfg.maxBatch))
	// Each write is whole lines and at most PIPE_BUF bytes, so it reaches
	// append whole: a SIGTERM can only fall between lines. (A big line
	// cannot; no SIGTERM then.)
	var pieces [][]byte
	var piece []byte
	ends := []int64{}
	term := rng.IntN(8) == 0
	for seq := from; seq < from+n; seq++ {
		term = term && !stressBig(w.id, seq)
		line := stressValue(w.id, seq) + "\n"
		if k := stressKey(w, seq); k != "" {
			line = k + ":" + line
		}
		if len(piece)+len(line) > 4096 || len(piece) > 0 && rng.IntN(40) == 0 {
			pieces, ends = append(pieces, piece), append(ends, seq)
			piece = nil
		}
		piece = append(piece, line...)
	}
	pieces, ends = append(pieces, piece), append(ends, from+n)
	termAfter := rng.IntN(len(pieces))
	c := stressCall{from: from, to: from}
	for i, b := range pieces {
		w.sent.Store(ends[i])
		if _, err := p.stdin.Write(b); err != nil {
			if !s.failed() {
				s.failf("%s: writing to its stdin: %v (it ended early?); stderr:\n%s", p.label, err, p.stderr.String())
			}
			break
		}
		c.to = ends[i]
		if term && i == termAfter {
			c.termed = true
			p.cmd.Process.Signal(syscall.SIGTERM)
			break
		}
		if i < len(pieces)-1 {
			time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		}
	}
	p.stdin.Close()
	if !<-waited {
		return
	}
	stderr := p.stderr.String()
	ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case c.termed && ws.Signaled() && ws.Signal() == syscall.SIGTERM:
		// Killed before it began to read stdin (its handler is installed
		// there): it appended nothing.
		if stderr != "" {
			s.failf("%s: killed by SIGTERM before reading, yet stderr says:\n%s", p.label, stderr)
		}
	case p.cmd.ProcessState.ExitCode() != 0:
		s.failf("%s: exit %s, want 0 (SIGTERM sent: %v); stderr:\n%s", p.label, p.cmd.ProcessState, c.termed, stderr)
		return
	default:
		if !s.summary(p, w, &c, stderr) {
			return
		}
	}
	w.calls = append(w.calls, c)
}

// summary takes in what append's --json summary says it appended: the
// first lines sent, with per partition the offsets that routing them
// gives.
func (s *stress) summary(p *stressProc, w *stressWriter, c *stressCall, stderr string) bool {
	var sum struct {
		Topic      string             `json:"topic"`
		Records    int64              `json:"records"`
		Partitions []partitionSummary `json:"partitions"`
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &sum) != nil {
		s.failf("%s: stderr should be its JSON summary alone; it is:\n%s", p.label, stderr)
		return false
	}
	c.appended, c.parts = sum.Records, sum.Partitions
	want := c.to - c.from
	if c.appended > want || !c.termed && c.appended != want {
		s.failf("%s: summary says %d records appended; %d lines were sent (SIGTERM sent: %v): %s", p.label, c.appended, want, c.termed, lines[0])
		return false
	}
	perPart := map[int]uint64{}
	for seq := c.from; seq < c.from+c.appended; seq++ {
		perPart[s.partitionOf(w, seq)]++
	}
	var total int64
	for _, ps := range c.parts {
		if ps.Records != perPart[ps.Partition] || ps.LastOffset-ps.FirstOffset+1 != ps.Records {
			s.failf("%s: summary for partition %d (%d records, offsets %d..%d) does not match the first %d lines sent, %d of which go there: %s",
				p.label, ps.Partition, ps.Records, ps.FirstOffset, ps.LastOffset, c.appended, perPart[ps.Partition], lines[0])
			return false
		}
		total += int64(ps.Records)
		delete(perPart, ps.Partition)
	}
	if len(perPart) > 0 || total != c.appended {
		s.failf("%s: summary leaves out partitions of the %d lines it appended: %s", p.label, c.appended, lines[0])
		return false
	}
	return true
}

// foreignLoop writes, now and then, one record to its partition as
// another program following the format would (a broker, docs/format.md's
// introduction):
// under the partition's writer lock, the .log bytes in two writes with a
// pause between, then the index entries. Meanwhile verify-crc must take
// the half-written record for one being written (a note: its writer holds
// the lock), followers must wait for it, not print half, and reads stop
// before it.
func (s *stress) foreignLoop(w *stressWriter, rng *rand.Rand) {
	p := w.partition
	pdir := filepath.Join(s.dir, stressTopic, strconv.Itoa(p))
	for s.stressing() {
		s.pause(time.Duration(200+rng.IntN(600)) * time.Millisecond)
		if !s.stressing() {
			return
		}
		d, err := os.Open(pdir)
		if err != nil {
			s.failf("foreign writer: %v", err)
			return
		}
		// The writer lock, as appenders take it: flock, polled.
		deadline := time.Now().Add(s.cfg.cmdTimeout)
		for {
			err = syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if err == nil || !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) || !s.stressing() {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err == nil {
			err = s.foreignRecord(w, p, pdir, rng)
		} else if errors.Is(err, syscall.EWOULDBLOCK) && s.stressing() {
			err = fmt.Errorf("the writer lock of %s/%d stayed held for %v", stressTopic, p, s.cfg.cmdTimeout)
		} else if errors.Is(err, syscall.EWOULDBLOCK) {
			err = nil
		}
		d.Close() // and the lock with it
		if err != nil {
			s.failf("foreign writer: %v", err)
			return
		}
	}
}

// foreignRecord appends one record to the partition's active segment; the
// caller holds the writer lock.
func (s *stress) foreignRecord(w *stressWriter, p int, pdir string, rng *rand.Rand) error {
	part, err := logstore.OpenPartitionDir(pdir, fmt.Sprintf("%s/%d", stressTopic, p))
	if err != nil {
		return err
	}
	defer part.Close()
	st, err := part.Stats()
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(pdir) // stable: nobody else creates segments while we hold the lock
	if err != nil {
		return err
	}
	var base uint64
	found := false
	for _, e := range entries {
		if b, ext, err := format.ParseSegmentName(e.Name()); err == nil && ext == format.LogExt && (!found || b > base) {
			base, found = b, true
		}
	}
	if !found {
		return fmt.Errorf("no segment in %s", pdir)
	}
	name := func(ext string) string { return filepath.Join(pdir, format.SegmentName(base, ext)) }
	f, err := os.OpenFile(name(format.LogExt), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	seq := w.sent.Load()
	w.sent.Store(seq + 1)
	ts := max(time.Now().UnixNano(), st.Newest)
	rec := format.AppendRecord(nil, &format.Record{Offset: st.Next, Timestamp: ts, Value: []byte(stressValue(w.id, seq))})
	cut := 1 + rng.IntN(len(rec)-1)
	if _, err := f.Write(rec[:cut]); err != nil {
		return err
	}
	s.halfWritten.Add(1)
	// Half-written, for the others to meet; and verify-crc, certainly.
	var verr error
	code, stdout, stderr, ok := s.runCmd("verify-crc", "verify-crc", stressTopic, "--partition", strconv.Itoa(p))
	if ok {
		s.verifies.Add(1)
		if strings.Contains(stdout, "is writing it") {
			s.verifiesLiveTail.Add(1)
		} else {
			verr = fmt.Errorf("seglog verify-crc %s --partition %d beside a record half-written under the writer lock: exit %d, want 0 and a note that the writer is writing it; stdout:\n%s\nstderr:\n%s",
				stressTopic, p, code, stdout, stderr)
		}
	}
	if _, err := f.Write(rec[cut:]); err != nil {
		return err
	}
	for ext, entry := range map[string][]byte{
		format.IndexExt:     format.AppendIndexEntry(nil, format.IndexEntry{Offset: st.Next, Pos: fi.Size()}),
		format.TimeIndexExt: format.AppendTimeIndexEntry(nil, format.TimeIndexEntry{Offset: st.Next, Timestamp: ts}),
	} {
		x, err := os.OpenFile(name(ext), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		_, err = x.Write(entry)
		if cerr := x.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	w.calls = append(w.calls, stressCall{from: seq, to: seq + 1, appended: 1,
		parts: []partitionSummary{{Partition: p, Records: 1, FirstOffset: st.Next, LastOffset: st.Next}}})
	return verr
}

// --- readers ---

// stressObs is a record a reader printed.
type stressObs struct {
	off uint64
	seq int64
	w   int32
	p   int32
}

// stressReader checks what a tail or a read prints, line by line as it
// comes.
type stressReader struct {
	s     *stress
	label string
	proc  *stressProc
	parts []int // the partitions it prints

	mu      sync.Mutex
	obs     []stressObs
	last    []int64            // per partition: the last offset printed, -1 none
	lastSeq map[[2]int32]int64 // per writer and partition: the last sequence number
	lost    int                // offsets warned about as removed unread (tails)
}

func (s *stress) newReader(label string, parts []int) *stressReader {
	if parts == nil {
		for p := range s.cfg.partitions {
			parts = append(parts, p)
		}
	}
	r := &stressReader{s: s, label: label, parts: parts, last: make([]int64, s.cfg.partitions), lastSeq: map[[2]int32]int64{}}
	for i := range r.last {
		r.last[i] = -1
	}
	return r
}

// startTail starts a follower: `seglog tail ARGS --format json`.
func (s *stress) startTail(label string, parts []int, args ...string) *stressReader {
	args = append([]string{"tail", stressTopic, "--format", "json"}, args...)
	r := s.newReader(label+" (seglog "+strings.Join(args, " ")+")", parts)
	p := s.startProc("tail", false, r.consume, args...)
	if p == nil {
		return r
	}
	r.proc = p
	s.mu.Lock()
	s.tails = append(s.tails, r)
	s.mu.Unlock()
	return r
}

// consume reads a reader's stdout and checks every line as it comes.
func (r *stressReader) consume(out io.Reader) {
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] != '\n' {
			if !r.s.failed() {
				r.s.failf("%s: its output ends in a partial line: %q", r.label, line)
			}
			return
		}
		if len(line) > 0 && !r.check(line) {
			return
		}
		if err != nil {
			return
		}
	}
}

// stressLine is a line of `--format json` output.
type stressLine struct {
	Topic       string  `json:"topic"`
	Partition   *int    `json:"partition"`
	Offset      *uint64 `json:"offset"`
	Key         *string `json:"key"`
	KeyBase64   *string `json:"key_base64"`
	Value       *string `json:"value"`
	ValueBase64 *string `json:"value_base64"`
}

var stressValueRE = regexp.MustCompile(`^w([0-9]+)-([0-9]+)-`)

// check checks a printed line: whole, written by a writer, in its
// partition, and in order.
func (r *stressReader) check(line []byte) bool {
	s := r.s
	bad := func(why string, args ...any) bool {
		s.failf("%s printed %q: %s", r.label, bytes.TrimSuffix(line, []byte("\n")), fmt.Sprintf(why, args...))
		return false
	}
	var l stressLine
	if err := json.Unmarshal(line, &l); err != nil {
		return bad("not a JSON record (%v)", err)
	}
	if l.Topic != stressTopic || l.Partition == nil || l.Offset == nil || l.Value == nil || l.KeyBase64 != nil || l.ValueBase64 != nil {
		return bad("want topic %q, a partition, an offset and a text key and value", stressTopic)
	}
	p, off, v := *l.Partition, *l.Offset, *l.Value
	if !slices.Contains(r.parts, p) {
		return bad("partition %d, but it prints partitions %v", p, r.parts)
	}
	m := stressValueRE.FindStringSubmatch(v)
	if m == nil {
		return bad("not a value any writer writes")
	}
	wid, err1 := strconv.Atoi(m[1])
	seq, err2 := strconv.ParseInt(m[2], 10, 64)
	if err1 != nil || err2 != nil || wid >= len(s.writers) {
		return bad("no such writer or sequence number")
	}
	w := s.writers[wid]
	if sent := w.sent.Load(); seq >= sent {
		return bad("writer %d has sent only lines 0..%d", wid, sent-1)
	}
	if want := stressValue(wid, seq); v != want {
		return bad("writer %d's line %d is %q", wid, seq, want)
	}
	wantKey := stressKey(w, seq)
	if gotKey := ""; l.Key != nil && *l.Key != wantKey || l.Key == nil && wantKey != "" {
		if l.Key != nil {
			gotKey = *l.Key
		}
		return bad("key %q, but writer %d's line %d has key %q", gotKey, wid, seq, wantKey)
	}
	if want := s.partitionOf(w, seq); p != want {
		return bad("in partition %d; writer %d's line %d belongs in partition %d", p, wid, seq, want)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if last := r.last[p]; int64(off) <= last {
		return bad("offset %d of partition %d after offset %d (offsets must increase)", off, p, last)
	}
	k := [2]int32{int32(wid), int32(p)}
	if last, ok := r.lastSeq[k]; ok && seq <= last {
		return bad("writer %d's line %d in partition %d after its line %d (duplicated or reordered)", wid, seq, p, last)
	}
	r.last[p], r.lastSeq[k] = int64(off), seq
	r.obs = append(r.obs, stressObs{off: off, seq: seq, w: int32(wid), p: int32(p)})
	return true
}

// goalsMet reports whether the stress phase has done what it is for.
func (s *stress) goalsMet(frozen *stressReader) bool {
	return s.sweepsDeleted.Load() >= s.cfg.goalSweeps && (frozen.proc == nil || frozen.lostWarnings() >= s.cfg.goalLost)
}

// lostWarnings counts the follower's warnings of records retention
// removed before it read them.
func (r *stressReader) lostWarnings() int {
	if r.proc == nil {
		return 0
	}
	return len(stressLostRE.FindAllString(r.proc.stderr.String(), -1))
}

// freezeLoop stops the follower now and then (SIGSTOP) until a sweep has
// deleted records it has not printed (or 10 s have passed), then lets it
// go on: it must warn of them and go on at the new start.
func (s *stress) freezeLoop(r *stressReader, rng *rand.Rand) {
	if r.proc == nil {
		return
	}
	defer r.proc.cmd.Process.Signal(syscall.SIGCONT)
	for s.stressing() {
		s.pause(time.Duration(100+rng.IntN(400)) * time.Millisecond)
		if !s.stressing() {
			return
		}
		r.proc.cmd.Process.Signal(syscall.SIGSTOP)
		s.freezes.Add(1)
		deadline := time.Now().Add(10 * time.Second)
		for s.stressing() && time.Now().Before(deadline) && !s.sweptPast(r) {
			s.pause(20 * time.Millisecond)
		}
		r.proc.cmd.Process.Signal(syscall.SIGCONT)
	}
}

// sweptPast reports whether the latest sweep left a partition starting
// after records the reader has not printed.
func (s *stress) sweptPast(r *stressReader) bool {
	s.mu.Lock()
	swept := slices.Clone(s.swept)
	s.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.parts {
		if p < len(swept) && swept[p] > uint64(r.last[p]+1) {
			return true
		}
	}
	return false
}

// readLoop reads the topic (or a partition) again and again: every read
// prints, per partition, a run of consecutive offsets, or stops at a
// segment retention deleted under it, with that error.
func (s *stress) readLoop(rng *rand.Rand) {
	for s.stressing() {
		args := []string{"read", stressTopic, "--format", "json"}
		var parts []int
		switch rng.IntN(3) {
		case 0:
			p := rng.IntN(s.cfg.partitions)
			parts = []int{p}
			args = append(args, "--partition", strconv.Itoa(p))
		case 1:
			args = append(args, "--offset", "beginning")
		}
		r := s.newReader("seglog "+strings.Join(args, " "), parts)
		code, stderr, p, ok := s.runCmdStream("read", r.consume, args...)
		if !ok {
			return
		}
		switch {
		case code == 1 && strings.Count(stderr, "\n") == 1 && strings.Contains(stderr, "no longer available (removed by retention"):
			s.readsCut.Add(1)
		case code != 0:
			s.failf("%s: exit %d, want 0 (or 1 naming records retention removed); stderr:\n%s", p.label, code, stderr)
			return
		case stderr != "":
			s.failf("%s: exit 0 but stderr:\n%s", p.label, stderr)
			return
		}
		// A read skips nothing: there are no gaps in these partitions.
		prev := map[int32]uint64{}
		for _, o := range r.obs {
			if last, ok := prev[o.p]; ok && o.off != last+1 {
				s.failf("%s: printed offset %d of partition %d after offset %d: it skipped records", p.label, o.off, o.p, last)
				return
			}
			prev[o.p] = o.off
		}
		s.mu.Lock()
		s.reads = append(s.reads, r)
		s.mu.Unlock()
		s.pause(time.Duration(rng.IntN(30)) * time.Millisecond)
	}
}

// --- checkers and sweeps ---

func (s *stress) verifyLoop(rng *rand.Rand) {
	for s.stressing() {
		args := []string{"verify-crc", stressTopic}
		switch rng.IntN(4) {
		case 0:
			args = append(args, "--partition", strconv.Itoa(rng.IntN(s.cfg.partitions)))
		case 1:
			args = append(args, "--jobs", "1")
		case 2:
			args = []string{"verify-crc", filepath.Join(s.dir, stressTopic, strconv.Itoa(rng.IntN(s.cfg.partitions)))}
		}
		s.checkVerify(args...)
		s.pause(time.Duration(rng.IntN(30)) * time.Millisecond)
	}
}

// checkVerify runs verify-crc, which must find nothing wrong.
func (s *stress) checkVerify(args ...string) {
	code, stdout, stderr, ok := s.runCmd("verify-crc", args...)
	if !ok {
		return
	}
	s.verifies.Add(1)
	if strings.Contains(stdout, "is writing it") {
		s.verifiesLiveTail.Add(1)
	}
	if code != 0 {
		s.failf("seglog %s: exit %d, want 0 (a live writer's tail is not a problem); stdout:\n%s\nstderr:\n%s",
			strings.Join(args, " "), code, stdout, stderr)
	}
}

// describeDoc is what `describe --json` prints.
type describeDoc struct {
	Topics []struct {
		Topic      string `json:"topic"`
		Partitions []struct {
			Partition int    `json:"partition"`
			Start     uint64 `json:"start_offset"`
			Next      uint64 `json:"next_offset"`
			Records   uint64 `json:"records"`
			Segments  int    `json:"segments"`
			Missing   bool   `json:"missing"`
			Error     string `json:"error"`
		} `json:"partitions"`
	} `json:"topics"`
}

// describe runs describe --json and checks the document is whole and
// sane.
func (s *stress) describe(kind string) (describeDoc, bool) {
	var doc describeDoc
	code, stdout, stderr, ok := s.runCmd(kind, "describe", stressTopic, "--json")
	if !ok {
		return doc, false
	}
	s.describes.Add(1)
	bad := func(why string, args ...any) (describeDoc, bool) {
		s.failf("seglog describe %s --json: %s; exit %d, stdout:\n%s\nstderr:\n%s", stressTopic, fmt.Sprintf(why, args...), code, stdout, stderr)
		return doc, false
	}
	if code != 0 || stderr != "" {
		return bad("want exit 0 and nothing on stderr")
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		return bad("not JSON: %v", err)
	}
	if len(doc.Topics) != 1 || len(doc.Topics[0].Partitions) != s.cfg.partitions {
		return bad("want topic %s with %d partitions", stressTopic, s.cfg.partitions)
	}
	for i, p := range doc.Topics[0].Partitions {
		if p.Partition != i || p.Missing || p.Error != "" || p.Start > p.Next || p.Segments < 1 || p.Records != p.Next-p.Start {
			return bad("partition %d: want no error, start <= next, records = next - start (no gaps here) and a segment", i)
		}
	}
	return doc, true
}

// describeLoop checks that describe never fails and that no partition's
// start or next offset ever goes back.
func (s *stress) describeLoop(rng *rand.Rand) {
	starts, nexts := make([]uint64, s.cfg.partitions), make([]uint64, s.cfg.partitions)
	for s.stressing() {
		doc, ok := s.describe("describe")
		if !ok {
			return
		}
		for _, p := range doc.Topics[0].Partitions {
			if p.Start < starts[p.Partition] || p.Next < nexts[p.Partition] {
				s.failf("describe: partition %d went back from offsets %d..%d to %d..%d", p.Partition,
					starts[p.Partition], nexts[p.Partition], p.Start, p.Next)
				return
			}
			starts[p.Partition], nexts[p.Partition] = p.Start, p.Next
		}
		s.pause(time.Duration(rng.IntN(30)) * time.Millisecond)
	}
}

// sweepLoop sweeps by the topic's stored size rule, and every fourth time
// by a short time rule as well, which also rolls and deletes an active
// segment no appender holds.
func (s *stress) sweepLoop(rng *rand.Rand) {
	for i := 0; s.stressing(); i++ {
		args := []string{"retention-sweep", stressTopic, "--json", "--wait"}
		if i%4 == 3 {
			args = append(args, "--retention", s.cfg.retention)
		}
		code, stdout, stderr, ok := s.runCmd("retention-sweep", args...)
		if !ok {
			return
		}
		s.sweeps.Add(1)
		var doc struct {
			Partitions []struct {
				Partition int    `json:"partition"`
				Start     uint64 `json:"start_offset"`
				Segments  []struct {
					Segment  string `json:"segment"`
					Decision string `json:"decision"`
				} `json:"segments"`
			} `json:"partitions"`
			Errors []string `json:"errors"`
			Totals struct {
				Segments int `json:"deleted_segments"`
			} `json:"totals"`
		}
		if code != 0 || stderr != "" || json.Unmarshal([]byte(stdout), &doc) != nil || len(doc.Errors) > 0 {
			s.failf("seglog %s: want exit 0, a JSON report without errors and nothing on stderr; exit %d, stdout:\n%s\nstderr:\n%s",
				strings.Join(args, " "), code, stdout, stderr)
			return
		}
		for _, p := range doc.Partitions {
			kept := ""
			for _, seg := range p.Segments {
				switch {
				case seg.Decision != "deleted":
					kept = seg.Segment
				case kept != "":
					s.failf("seglog %s: partition %d: deleted segment %s after keeping %s (only an oldest run may go); stdout:\n%s",
						strings.Join(args, " "), p.Partition, seg.Segment, kept, stdout)
					return
				}
			}
		}
		s.mu.Lock()
		s.swept = make([]uint64, s.cfg.partitions)
		for _, p := range doc.Partitions {
			s.swept[p.Partition] = p.Start
		}
		s.mu.Unlock()
		if doc.Totals.Segments > 0 {
			s.sweepsDeleted.Add(1)
			s.segmentsDeleted.Add(int64(doc.Totals.Segments))
		}
		s.pause(time.Duration(rng.IntN(50)) * time.Millisecond)
	}
}

// --- accounting ---

// stressSlot is the record a writer was told went to an offset.
type stressSlot struct {
	set bool
	w   int32
	seq int64
}

var stressLostRE = regexp.MustCompile(`offsets? ([0-9]+)(?:\.\.([0-9]+))? of ` + regexp.QuoteMeta(stressTopic) + `/([0-9]+) (?:is|are|was|were) `)

// account checks that the appenders' summaries, the followers, the reads
// and what is left on disk tell one story.
func (s *stress) account(disk *stressReader, starts, nexts []uint64) {
	// Every offset of every partition, from what the appenders were told.
	slots := make([][]stressSlot, s.cfg.partitions)
	for p := range slots {
		slots[p] = make([]stressSlot, nexts[p])
	}
	var told int64
	for _, w := range s.writers {
		lastOff := map[int]int64{}
		for _, c := range w.calls {
			offs := map[int]uint64{}
			for _, ps := range c.parts {
				offs[ps.Partition] = ps.FirstOffset
			}
			for seq := c.from; seq < c.from+c.appended; seq++ {
				p := s.partitionOf(w, seq)
				off := offs[p]
				offs[p]++
				told++
				switch {
				case off >= nexts[p]:
					s.failf("writer %d's line %d was told appended at offset %d of partition %d, but the partition ends at %d: lost", w.id, seq, off, p, nexts[p])
					return
				case slots[p][off].set:
					o := slots[p][off]
					s.failf("offset %d of partition %d was given to writer %d's line %d and to writer %d's line %d", off, p, o.w, o.seq, w.id, seq)
					return
				case lastOff[p] > int64(off):
					s.failf("writer %d's line %d got offset %d of partition %d, below an earlier line's %d: order lost", w.id, seq, off, p, lastOff[p])
					return
				}
				slots[p][off] = stressSlot{set: true, w: int32(w.id), seq: seq}
				lastOff[p] = int64(off)
			}
		}
	}
	for p := range slots {
		for off, sl := range slots[p] {
			if !sl.set {
				s.failf("offset %d of partition %d holds a record no appender was told it appended", off, p)
				return
			}
		}
	}

	seen := make([][]bool, s.cfg.partitions)
	for p := range seen {
		seen[p] = make([]bool, nexts[p])
	}
	checked := 0
	match := func(who string, o stressObs) bool {
		checked++
		if o.off >= nexts[o.p] {
			s.failf("%s printed offset %d of partition %d, past its end %d", who, o.off, o.p, nexts[o.p])
			return false
		}
		if sl := slots[o.p][o.off]; sl.w != o.w || sl.seq != o.seq {
			s.failf("%s printed writer %d's line %d at offset %d of partition %d, where writer %d's line %d was appended", who, o.w, o.seq, o.off, o.p, sl.w, sl.seq)
			return false
		}
		seen[o.p][o.off] = true
		return true
	}
	// What is on disk: the partitions from their start to their end.
	next := slices.Clone(starts)
	for _, o := range disk.obs {
		if o.off != next[o.p] {
			s.failf("final read: offset %d of partition %d where %d was expected (it holds %d..%d)", o.off, o.p, next[o.p], starts[o.p], nexts[o.p]-1)
			return
		}
		next[o.p]++
		if !match("final read", o) {
			return
		}
	}
	for p := range next {
		if next[p] != nexts[p] {
			s.failf("final read: partition %d ends at %d, but describe says it holds %d..%d", p, next[p], starts[p], nexts[p]-1)
			return
		}
	}
	for _, r := range s.reads {
		for _, o := range r.obs {
			if !match(r.label, o) {
				return
			}
		}
	}
	// A follower skips only offsets below the final start, and after its
	// first record only with a warning naming them.
	for _, tr := range s.tails {
		warned := make([][][2]uint64, s.cfg.partitions)
		for _, m := range stressLostRE.FindAllStringSubmatch(tr.proc.stderr.String(), -1) {
			from, _ := strconv.ParseUint(m[1], 10, 64)
			to := from
			if m[2] != "" {
				to, _ = strconv.ParseUint(m[2], 10, 64)
			}
			p, _ := strconv.Atoi(m[3])
			if p < s.cfg.partitions {
				warned[p] = append(warned[p], [2]uint64{from, to})
				tr.lost += int(to - from + 1)
			}
		}
		if other := stressUnexpected(tr.proc.stderr.String()); other != "" {
			s.failf("%s: unexpected on stderr: %s", tr.label, other)
			return
		}
		prev := make([]int64, s.cfg.partitions)
		for i := range prev {
			prev[i] = -1
		}
		for _, o := range tr.obs {
			if !match(tr.label, o) {
				return
			}
			if gapFrom := uint64(prev[o.p] + 1); gapFrom < o.off {
				if o.off > starts[o.p] {
					s.failf("%s: skipped offsets %d..%d of partition %d, which are still on disk (it starts at %d)", tr.label, gapFrom, o.off-1, o.p, starts[o.p])
					return
				}
				if prev[o.p] >= 0 && !stressCovered(warned[o.p], gapFrom, o.off-1) {
					s.failf("%s: skipped offsets %d..%d of partition %d without a warning naming them; stderr:\n%s", tr.label, gapFrom, o.off-1, o.p, tr.proc.stderr.String())
					return
				}
			}
			prev[o.p] = int64(o.off)
		}
	}
	unseen := 0
	for p := range seen {
		for off, ok := range seen[p] {
			if !ok {
				if uint64(off) >= starts[p] {
					s.failf("offset %d of partition %d is neither on disk nor printed by any reader", off, p)
					return
				}
				unseen++
			}
		}
	}
	onDisk := 0
	for p := range starts {
		onDisk += int(nexts[p] - starts[p])
	}
	s.t.Logf("accounted for %d records told appended: %d on disk at the end, %d removed by retention (%d of them before any reader printed them); %d printed records checked against them",
		told, onDisk, int(told)-onDisk, unseen, checked)
}

// stressCovered reports whether [from, to] lies within the union of the
// ranges.
func stressCovered(ranges [][2]uint64, from, to uint64) bool {
	slices.SortFunc(ranges, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	for _, r := range ranges {
		if r[0] <= from && from <= r[1]+1 {
			from = max(from, r[1]+1)
		}
	}
	return from > to
}

// stressUnexpected returns the stderr lines of a follower that are not
// warnings about records retention removed (or inotify being
// unavailable).
func stressUnexpected(stderr string) string {
	var other []string
	for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		// tail -F may start before the topic is created, and says so.
		waiting := strings.HasSuffix(l, "waiting for it to appear (-F)")
		if l == "" || strings.HasPrefix(l, "seglog: warning: ") && (stressLostRE.MatchString(l) || strings.Contains(l, "inotify") || waiting) {
			continue
		}
		other = append(other, l)
	}
	return strings.Join(other, "\n")
}

// TestStressTailBehindSweep: tail -f printing a long -n backlog into a
// pipe nobody drains for a while, while a sweep deletes the segments it
// has not printed yet. Like a follower (docs/format.md §6), it warns naming the
// offsets removed and goes on at the new start, then follows; it used to
// end with status 1 ("no longer available").
func TestStressTailBehindSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--segment-bytes", "4KiB")
	const n = 4000
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, "%06d-%s\n", i, strings.Repeat("v", 60))
	}
	mustRun(t, dir, in.String(), "append", "t", "--sync", "never")

	cmd := exec.Command(seglogBin(t), "-d", dir, "tail", "t", "-f", "-n", strconv.Itoa(n), "--template", "%o %s\n")
	stderr := new(stressBuffer)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done, quit := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() {
		close(quit)
		cmd.Process.Kill()
		<-done
	})
	lines := make(chan string, 1)
	go func() {
		defer close(done)
		defer close(lines)
		br := bufio.NewReader(out)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				cmd.Wait()
				return
			}
			off, _, _ := strings.Cut(l, " ")
			select {
			case lines <- off: // blocks: nobody drains the pipe meanwhile
			case <-quit:
			}
		}
	}()
	next := func(what string) (string, bool) {
		select {
		case l, ok := <-lines:
			return l, ok
		case <-time.After(time.Minute):
			t.Fatalf("no line from tail in a minute, waiting for %s; stderr:\n%s", what, stderr)
		}
		return "", false
	}
	// The backlog is printing: the bounds are taken. Delete all but the
	// newest few segments while tail cannot get far.
	if l, ok := next("the first record"); !ok || l != "0" {
		t.Fatalf("first line %q (open %v), want offset 0; stderr:\n%s", l, ok, stderr)
	}
	sweep := mustRun(t, dir, "", "retention-sweep", "t", "--retention-bytes", "8KiB", "--json")
	var doc struct {
		Partitions []struct {
			Start uint64 `json:"start_offset"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(sweep.stdout), &doc); err != nil || len(doc.Partitions) != 1 || doc.Partitions[0].Start < n/2 {
		t.Fatalf("sweep: %v, %s; want the partition to start past offset %d", err, sweep.stdout, n/2)
	}
	start := doc.Partitions[0].Start

	// The backlog (some 300 KB) is far more than the pipe and tail's
	// buffers hold: it must cross deleted segments.
	prev, skipped, gapFrom := uint64(0), false, uint64(0)
	for prev != n-1 {
		l, ok := next(fmt.Sprintf("offset %d", n-1))
		if !ok {
			t.Fatalf("tail ended (%v) after offset %d, before offset %d; stderr:\n%s", cmd.ProcessState, prev, n-1, stderr)
		}
		off, err := strconv.ParseUint(l, 10, 64)
		if err != nil || off <= prev {
			t.Fatalf("line %q after offset %d: want a greater offset", l, prev)
		}
		if off != prev+1 && (prev+1 >= start || off != start) {
			t.Fatalf("tail went from offset %d to %d; only offsets below the new start %d may be skipped, and then straight to it", prev, off, start)
		}
		if off != prev+1 {
			skipped, gapFrom = true, prev+1
		}
		prev = off
	}
	if !skipped {
		t.Fatalf("tail printed every offset, though the sweep deleted offsets below %d before it could print them all", start)
	}
	// And it follows.
	mustRun(t, dir, "more\n", "append", "t")
	if l, _ := next("the record appended"); l != strconv.Itoa(n) {
		t.Fatalf("after the backlog: %q, want offset %d; stderr:\n%s", l, n, stderr)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	go func() {
		for range lines {
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Signal(syscall.SIGQUIT) // its goroutines, on stderr
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
		t.Fatalf("tail -f still running a minute after SIGTERM; stderr:\n%s", stderr)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("tail -f: exit %d after SIGTERM, want 0; stderr:\n%s", code, stderr)
	}
	// Its stderr is whole now that it has exited.
	if want := fmt.Sprintf("%d..%d of t/0 were removed by retention", gapFrom, start-1); !strings.Contains(stderr.String(), want) {
		t.Errorf("tail skipped offsets %d..%d; want a warning saying %q; stderr:\n%s", gapFrom, start-1, want, stderr)
	}
}

// TestStressSweepBesideLiveWriter: records a live writer appends after a
// sweep read the clock (while it waited for its lock, or ran) are not "in
// the future": no warning, and the segment is kept as newer. With the
// time given (--now), a record after it still is in the future, as
// before.
func TestStressSweepBesideLiveWriter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t")
	began := time.Now()
	mustRun(t, dir, "a\nb\n", "append", "t")
	store := logstore.Open(dir)
	for _, tc := range []struct {
		clock      bool
		wantFuture bool
	}{{clock: true}, {clock: false, wantFuture: true}} {
		ts, err := store.RetentionSweep("t", -1, logstore.RetentionOptions{Retention: time.Hour, Now: began, NowIsClock: tc.clock})
		if err != nil {
			t.Fatal(err)
		}
		ss := ts.Partitions[0].Segments[0]
		want := logstore.SweepKept
		if tc.wantFuture {
			want = logstore.SweepFuture
		}
		if ss.Future != tc.wantFuture || ss.Decision != want {
			t.Errorf("sweep with Now read before the records were appended (NowIsClock %v): future %v, decision %q; want %v, %q",
				tc.clock, ss.Future, ss.Decision, tc.wantFuture, want)
		}
	}
}

// TestStressFollowerFrozenPastSweep: a tail -f that has printed all there
// was and waits in the active segment is frozen (SIGSTOP); meanwhile the
// writer rolls through many segments and a sweep deletes them all but
// the newest, the one tail has open included. Let go, tail names the
// offsets removed before it could print them and goes on at the new
// start. It used to skip them without a word: the first segment it found
// after its own, once its own was gone, passed for the next one.
func TestStressFollowerFrozenPastSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--segment-bytes", "4KiB")
	var in strings.Builder
	for i := range 10 {
		fmt.Fprintf(&in, "%d\n", i)
	}
	mustRun(t, dir, in.String(), "append", "t")
	cmd := exec.Command(seglogBin(t), "-d", dir, "tail", "t", "-f", "-n", "100", "--template", "%o\n")
	stderr, stdout := new(stressBuffer), new(stressBuffer)
	cmd.Stderr, cmd.Stdout = stderr, stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		<-done
	})
	offsets := func() []string { return strings.Fields(stdout.String()) }
	eventually(t, time.Minute, "tail to print offsets 0..9", func() bool { return len(offsets()) == 10 })
	// One record more: printed, it shows tail following, not still
	// printing the newest ones.
	mustRun(t, dir, "10\n", "append", "t")
	eventually(t, time.Minute, "tail to print offset 10", func() bool { return len(offsets()) == 11 })

	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	in.Reset()
	for i := range n {
		fmt.Fprintf(&in, "%d-%s\n", 11+i, strings.Repeat("v", 60))
	}
	mustRun(t, dir, in.String(), "append", "t", "--sync", "never")
	sweep := mustRun(t, dir, "", "retention-sweep", "t", "--retention-bytes", "8KiB", "--json")
	var doc struct {
		Partitions []struct {
			Start uint64 `json:"start_offset"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(sweep.stdout), &doc); err != nil || len(doc.Partitions) != 1 || doc.Partitions[0].Start < n/2 {
		t.Fatalf("sweep: %v, %s; want the partition to start past offset %d", err, sweep.stdout, n/2)
	}
	start := doc.Partitions[0].Start
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}

	// It prints the rest of the segment it has open (deleted, but open),
	// then must jump to the new start, saying so.
	last := uint64(n + 10)
	eventually(t, time.Minute, fmt.Sprintf("tail to print offset %d", last), func() bool {
		got := offsets()
		return len(got) > 0 && got[len(got)-1] == strconv.FormatUint(last, 10)
	})
	var jumpFrom uint64
	for i, o := range offsets() {
		off, err := strconv.ParseUint(o, 10, 64)
		switch {
		case err != nil:
			t.Fatalf("line %d: %q is not an offset", i, o)
		case jumpFrom == 0 && off == uint64(i):
		case jumpFrom == 0 && off == start:
			jumpFrom = uint64(i)
		case jumpFrom != 0 && off == start+uint64(i)-jumpFrom:
		default:
			t.Fatalf("line %d: offset %d; want 0, 1, ... then a jump to the new start %d and on from there", i, off, start)
		}
	}
	if jumpFrom == 0 {
		t.Fatalf("tail printed every offset, though the sweep deleted offsets below %d before it could print them all", start)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Signal(syscall.SIGQUIT) // its goroutines, on stderr
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
		t.Fatalf("tail -f still running a minute after SIGTERM; stderr:\n%s", stderr)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("tail -f: exit %d after SIGTERM, want 0; stderr:\n%s", code, stderr)
	}
	// Its stderr is whole now that it has exited.
	if want := fmt.Sprintf("offsets %d..%d of t/0 ", jumpFrom, start-1); !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "removed by retention") {
		t.Errorf("tail skipped offsets %d..%d; want a warning naming them (%q...), removed by retention; stderr:\n%s", jumpFrom, start-1, want, stderr)
	}
}

// TestStressViewsBesideSweep: describe, read and tail list a partition's
// segments and then read each one; a sweep may delete some in between,
// the active one too when it rolls an expired partition. They must then
// describe or read what is left, not fail on the missing file (found by
// TestStress: describe exited 1 naming a deleted segment).
func TestStressViewsBesideSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--segment-bytes", "1KiB")
	const n = 300
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, "%03d-%s\n", i, strings.Repeat("v", 40))
	}
	mustRun(t, dir, in.String(), "append", "t", "--sync", "never")
	store := logstore.Open(dir)
	pdir := filepath.Join(dir, "t", "0")
	check := func(what string, opts logstore.RetentionOptions) {
		t.Helper()
		p, err := logstore.OpenPartitionDir(pdir, "t/0") // lists the segments now
		if err != nil {
			t.Fatal(err)
		}
		ts, err := store.RetentionSweep("t", -1, opts)
		if err != nil || len(ts.Failed) > 0 {
			t.Fatalf("%s: sweep: %v %v", what, err, ts.Failed)
		}
		deleted, _ := ts.Partitions[0].Deleted()
		start := ts.Partitions[0].Start
		if deleted == 0 {
			t.Fatalf("%s: the sweep deleted nothing", what)
		}
		st, err := p.Stats()
		if err != nil || st.Start != start || st.Next != n || st.Records != n-start {
			t.Errorf("%s: Stats of the partition as listed before: %+v, %v; want start %d, next %d, %d records", what, st, err, start, n, n-start)
		}
		if s, next, err := p.Bounds(); err != nil || s > start || next != n {
			t.Errorf("%s: Bounds of the partition as listed before: %d, %d, %v; want next %d", what, s, next, err, n)
		}
	}
	check("size rule", logstore.RetentionOptions{RetentionBytes: 2 << 10})
	// Everything expired and no writer: the active segment is rolled and
	// deleted too.
	check("time rule", logstore.RetentionOptions{Retention: time.Minute, Now: time.Now().Add(time.Hour)})
}

// TestStressListingBesideRolls: readers list a partition's segments while
// a writer rolls segment after segment. A directory listing is no
// snapshot (readdir goes in hash order): of the segments created while it
// runs, one may be missing and a later one present. Taken as it came, the
// missing segment passed for a gap: read skipped its records without a
// word, describe counted too few. Every listing must be contiguous here.
// Each round writes at most 24,000 records (some 4,000 segments), then
// its topic is removed; long mode runs 20 rounds.
func TestStressListingBesideRolls(t *testing.T) {
	rounds := 1
	if longMode() {
		rounds = 20
	}
	dir := filepath.Join(t.TempDir(), "data")
	store := logstore.Open(dir)
	listings, records := 0, 0
	for round := range rounds {
		l, r := stressListingRound(t, store, fmt.Sprintf("t%d", round), 3*time.Second, 24000)
		listings, records = listings+l, records+r
		if err := os.RemoveAll(filepath.Join(dir, fmt.Sprintf("t%d", round))); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d rounds, %d listings beside a writer rolling every few records, %d records read", rounds, listings, records)
}

// stressListingRound lists a new topic's partition for d (or until the
// writer has written limit records), checking each listing.
func stressListingRound(t *testing.T, store *logstore.Store, topic string, d time.Duration, limit int) (listings, records int) {
	t.Helper()
	if err := store.CreateTopic(topic, 1, logstore.Settings{SegmentBytes: 256}); err != nil {
		t.Fatal(err)
	}
	w, err := store.OpenWriter(topic, 0, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	stop, writerDone := make(chan struct{}), make(chan error, 1)
	go func() {
		// Small records, flushed one by one: a roll every few records.
		for i := 0; i < limit; i++ {
			select {
			case <-stop:
				writerDone <- w.Close()
				return
			default:
			}
			if _, err := w.Append(time.Now().UnixNano(), nil, fmt.Appendf(nil, "record-%d", i)); err != nil {
				writerDone <- err
				return
			}
			if err := w.Flush(); err != nil {
				writerDone <- err
				return
			}
		}
		writerDone <- w.Close()
	}()
	var werr error
	writing := true
	defer func() {
		close(stop)
		if writing {
			werr = <-writerDone
		}
		if werr != nil {
			t.Errorf("writer: %v", werr)
		}
	}()
	pdir := store.PartitionDir(topic, 0)
	name := topic + "/0"
	for deadline := time.Now().Add(d); writing && time.Now().Before(deadline); listings++ {
		select {
		case werr = <-writerDone:
			writing = false
		default:
		}
		p, err := logstore.OpenPartitionDir(pdir, name)
		if err != nil {
			t.Fatal(err)
		}
		st, err := p.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.Start != 0 || st.Records != st.Next {
			t.Fatalf("%s, listing %d: describe's figures: %d records from offset %d to %d, want %d (no gaps here)", name, listings, st.Records, st.Start, st.Next, st.Next)
		}
		// A listing can only miss segments made while it ran: the newest.
		from := st.Next - min(st.Next, 3000)
		it, err := p.Read(from)
		if err != nil {
			t.Fatal(err)
		}
		next := from
		for it.Next() {
			if off := it.Record().Offset; off != next {
				it.Close()
				t.Fatalf("%s, listing %d: read went from offset %d to %d, skipping records that are there", name, listings, next-1, off)
			}
			next++
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		it.Close()
		p.Close()
		if next < st.Next {
			t.Fatalf("%s, listing %d: read ended at offset %d; the partition held %d..%d", name, listings, next, from, st.Next-1)
		}
		records += int(next - from)
	}
	return listings, records
}

// TestStressAppendSIGTERMKeepsWhatItRead: SIGTERM stops append part-way
// through a long stdin; it must append every line it has read (docs/format.md §5)
// and nothing more: a final partial line is dropped, with a warning
// counting its bytes. Stdin is a file whose offset append shares with the
// test, so the test knows exactly what was read.
func TestStressAppendSIGTERMKeepsWhatItRead(t *testing.T) {
	pad := strings.Repeat("x", 50)
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t")
	in := filepath.Join(t.TempDir(), "in")
	// Far more than append reads ahead (two 1 MiB chunks).
	var data []byte
	for i := 0; len(data) < 24<<20; i++ {
		data = append(strconv.AppendInt(append(data, "line-"...), int64(i), 10), '-')
		data = append(append(data, pad[:i%50]...), '\n')
	}
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(seglogBin(t), "-d", dir, "append", "t", "--sync", "never", "--json")
	cmd.Stdin = f
	stderr := new(stressBuffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	// Part-way: some of stdin read, not all.
	eventually(t, time.Minute, "append to read 3 MiB of its stdin", func() bool {
		pos, err := f.Seek(0, io.SeekCurrent)
		return err == nil && pos >= 3<<20
	})
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("append still running a minute after SIGTERM; stderr:\n%s", stderr)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("append after SIGTERM: exit %d, want 0; stderr:\n%s", code, stderr)
	}
	read, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		t.Fatal(err)
	}
	if read == int64(len(data)) {
		t.Skipf("append read all %d bytes before SIGTERM came: nothing to check", read)
	}
	want := bytes.Count(data[:read], []byte("\n"))
	wantBytes := data[:bytes.LastIndexByte(data[:read], '\n')+1]
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if partial := read - int64(len(wantBytes)); partial > 0 {
		warning := fmt.Sprintf("seglog: warning: stopped by SIGTERM in the middle of line %d of the input: dropped the %d byte", want+1, partial)
		if len(lines) != 2 || !strings.HasPrefix(lines[0], warning) {
			t.Errorf("append read %d bytes of a line before SIGTERM; want stderr to start %q; it is:\n%s", partial, warning, stderr)
		}
	}
	var sum struct {
		Records int `json:"records"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("summary: %v; stderr:\n%s", err, stderr)
	}
	if sum.Records != want {
		t.Errorf("append read %d bytes of stdin (%d whole lines) before SIGTERM, and appended %d: what it read and did not append is lost", read, want, sum.Records)
	}
	if got := mustRun(t, dir, "", "read", "t").stdout; got != string(wantBytes) {
		t.Errorf("the topic holds %d bytes of values, want the %d bytes append read, in order", len(got), len(wantBytes))
	}
}
