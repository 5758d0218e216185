package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The fault suite runs the seglog binary against what disks and people do
// to a data directory: a file size limit, a full filesystem, a read-only
// directory or mount, a file seglog may not read, a segment replaced by a
// directory, a partition missing in the middle of a topic. For each it
// checks one clear error line naming the file or partition, the exit
// status docs/cli.md gives, and that nothing was damaged: the records that were
// there read back byte for byte, verify-crc is clean, and a later run
// succeeds once the fault is gone. TestFaultOwnership checks that root,
// run on a partition owned by another user, gives that user everything
// it creates.
//
// Randomised parts log their seed; SEGLOG_FAULT_SEED=N replays one.

// nobodyID is the unprivileged user and group the permission tests run
// seglog as when the tests run as root.
const nobodyID = 65534

// faultRand returns the suite's random source, seeded from
// SEGLOG_FAULT_SEED or the clock, and logs the seed.
func faultRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SEGLOG_FAULT_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SEGLOG_FAULT_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Logf("seed %d (replay with SEGLOG_FAULT_SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x5eb109))
}

// faultTrials is how many random trials a fault test makes.
func faultTrials(quick, long int) int {
	if longMode() {
		return long
	}
	return quick
}

// procResult is one run of the seglog binary.
type procResult struct {
	code           int
	stdout, stderr string
}

// seglogRunner runs the seglog binary in a subprocess, optionally as
// another user or under a wrapper command (prlimit).
type seglogRunner struct {
	bin  string
	cred *syscall.Credential // nil: as the test process
	wrap []string
}

func (r seglogRunner) run(t *testing.T, dir, stdin string, args ...string) procResult {
	t.Helper()
	// Generous: the machine is shared; this only catches a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	argv := append(append(slices.Clone(r.wrap), r.bin, "-d", dir), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 10 * time.Second
	if r.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("seglog %q did not start: %v", args, err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("seglog %q was killed by %v (context: %v); stderr:\n%s", args, ws.Signal(), ctx.Err(), errb.String())
	}
	if s := errb.String(); strings.Contains(s, "panic:") || strings.Contains(s, "goroutine ") || strings.Contains(s, "DATA RACE") {
		t.Fatalf("seglog %q panicked or raced; stderr:\n%s", args, s)
	}
	return procResult{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
}

// wantExit fails the test unless the run ended with status code.
func (p procResult) wantExit(t *testing.T, what string, code int) {
	t.Helper()
	if p.code != code {
		t.Fatalf("%s: exit status %d, want %d; stdout:\n%s\nstderr:\n%s", what, p.code, code, p.stdout, p.stderr)
	}
}

// worldDir is a new directory that every user may enter and read, for
// data and binaries an unprivileged seglog must reach (t.TempDir's parent
// is 0700).
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "seglog-faults-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Undo chmods of the tests, then remove.
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// unprivileged returns a runner whose seglog is not root: as root, a copy
// of the binary that user 65534 can reach, run as that user; otherwise the
// binary as it is.
func unprivileged(t *testing.T) seglogRunner {
	t.Helper()
	if os.Geteuid() != 0 {
		return seglogRunner{bin: seglogBin(t)}
	}
	bindir := worldDir(t)
	b, err := os.ReadFile(seglogBin(t))
	if err != nil {
		t.Fatal(err)
	}
	// Named seglog: the test binary is seglog by that name (TestMain).
	bin := filepath.Join(bindir, "seglog")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return seglogRunner{bin: bin, cred: &syscall.Credential{Uid: nobodyID, Gid: nobodyID}}
}

// faultTopic makes topic t in a new data directory under base, with
// partitions partitions, the create flags given, and values appended
// round-robin. It returns the data directory.
func faultTopic(t *testing.T, base string, partitions int, values []string, createFlags ...string) string {
	t.Helper()
	dir := filepath.Join(base, "data")
	mustRun(t, dir, "", append([]string{"create", "t", "--partitions", strconv.Itoa(partitions)}, createFlags...)...)
	if len(values) > 0 {
		mustRun(t, dir, strings.Join(values, "\n")+"\n", "append", "t")
	}
	return dir
}

// numbered is n values "prefix-0000" ...
func numbered(prefix string, n int) []string {
	v := make([]string, n)
	for i := range v {
		v[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return v
}

// partitionValues reads every partition of topic t: values by partition.
func partitionValues(t *testing.T, dir string) map[int][]string {
	t.Helper()
	m := map[int][]string{}
	for _, r := range readRecords(t, dir, "t") {
		if want := uint64(len(m[r.partition])); r.offset != want && len(m[r.partition]) > 0 {
			t.Fatalf("t/%d: offset %d after %d records", r.partition, r.offset, want)
		}
		m[r.partition] = append(m[r.partition], string(r.value))
	}
	return m
}

func sameValues(t *testing.T, what string, got, want map[int][]string) {
	t.Helper()
	for p := range max(len(got), len(want)) {
		if !slices.Equal(got[p], want[p]) {
			t.Errorf("%s: t/%d holds %d records %.200q, want %d %.200q", what, p, len(got[p]), got[p], len(want[p]), want[p])
		}
	}
}

// logBytes reads every .log under dir.
func logBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".log") {
			b, err := os.ReadFile(p)
			m[p] = b
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// logsKept checks that every .log of before is still there with the same
// bytes, except that the last segment of its partition may have grown.
func logsKept(t *testing.T, before, after map[string][]byte) {
	t.Helper()
	last := map[string]string{}
	for p := range before {
		if d := filepath.Dir(p); p > last[d] {
			last[d] = p
		}
	}
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			t.Errorf("%s is gone", p)
		case last[filepath.Dir(p)] == p && !bytes.HasPrefix(a, b):
			t.Errorf("%s: its first %d bytes changed (now %d bytes)", p, len(b), len(a))
		case last[filepath.Dir(p)] != p && !bytes.Equal(a, b):
			t.Errorf("%s, a closed segment, changed: %d bytes, was %d", p, len(a), len(b))
		}
	}
}

// noLeftovers fails when dir holds temporary files or directories, or
// quarantine, none of which a failed run may leave behind.
func noLeftovers(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n := d.Name(); strings.HasSuffix(n, ".tmp") || n == ".quarantine" || strings.HasSuffix(n, ".deleted") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}

// verifyClean runs verify-crc on the whole data directory: exit 0 and no
// problems.
func verifyClean(t *testing.T, dir string) {
	t.Helper()
	r := runIn(t, dir, nil, "verify-crc")
	if r.code != exitOK || !strings.Contains(r.stdout, "no problems found") {
		t.Fatalf("verify-crc: exit %d, want 0 and no problems; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// faultErrorLine checks a failed run's last stderr line: exactly one error
// line, naming each of wants, and the first want, when it is a path, not
// twice as "PATH:" ("write PATH: write PATH: ..." reads badly).
func faultErrorLine(t *testing.T, what string, r procResult, wants ...string) {
	t.Helper()
	if r.stderr == "" {
		t.Errorf("%s: nothing on stderr", what)
		return
	}
	wantLastErrorLine(t, r.stderr, wants...)
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if last := lines[len(lines)-1]; len(wants) > 0 && strings.HasPrefix(wants[0], "/") && strings.Count(last, wants[0]+":") > 1 {
		t.Errorf("%s: the error line says %q %d times: %q", what, wants[0]+":", strings.Count(last, wants[0]+":"), last)
	}
}

// TestFaultFileSizeLimit: RLIMIT_FSIZE stops a write part-way (EFBIG; Go
// ignores SIGXFSZ). append keeps exactly the whole records that got out
// and cuts its own torn one, so the next append starts clean, without a
// cut of its own; a group commit, an index rebuild by recover and a copy
// fail cleanly and leave what was there. TestAppendEFBIG covers one fixed
// limit; this one draws the limit, the record sizes (a record past the
// limit on its own included), the index interval and the sync mode.
func TestFaultFileSizeLimit(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) not installed: cannot set RLIMIT_FSIZE for the child")
	}
	rng := faultRand(t)
	bin := seglogBin(t)
	limited := func(limit int64) seglogRunner {
		return seglogRunner{bin: bin, wrap: []string{prlimit, fmt.Sprintf("--fsize=%d", limit), "--"}}
	}

	t.Run("append", func(t *testing.T) {
		trials := faultTrials(4, 250)
		records := 0
		for trial := range trials {
			interval := 1 + rng.IntN(4)
			sync := []string{"exit", "batch", "never"}[rng.IntN(3)]
			before := numbered(fmt.Sprintf("before-%d", trial), 1+rng.IntN(50))
			dir := faultTopic(t, t.TempDir(), 1, before, "--index-interval", strconv.Itoa(interval))
			log := logPath(dir, "t", 0)
			fi, err := os.Stat(log)
			if err != nil {
				t.Fatal(err)
			}
			limit := fi.Size() + rng.Int64N(30000)
			var in strings.Builder
			var values []string
			big := rng.IntN(3) == 0
			for i := 0; int64(in.Len()) < limit+20000; i++ {
				v := fmt.Sprintf("line-%d-%05d-%s", trial, i, strings.Repeat("x", rng.IntN(300)))
				if big && i == 3 {
					v += strings.Repeat("B", int(limit)) // past the limit on its own
				}
				values = append(values, v)
				in.WriteString(v + "\n")
			}
			logsBefore := logBytes(t, dir)
			what := fmt.Sprintf("trial %d (limit %d, interval %d, --sync %s, big record %v)", trial, limit, interval, sync, big)

			r := limited(limit).run(t, dir, in.String(), "append", "t", "--sync", sync)
			r.wantExit(t, what, exitError)
			faultErrorLine(t, what, r, log, "t/0", "file too large")

			logsKept(t, logsBefore, logBytes(t, dir))
			all := append(slices.Clone(before), values...)
			recs := readRecords(t, dir, "t")
			if len(recs) < len(before) || len(recs) >= len(all) {
				t.Fatalf("%s: %d records after the failure; want %d to %d", what, len(recs), len(before), len(all)-1)
			}
			var size int64
			for i, rec := range recs {
				if string(rec.value) != all[i] || rec.offset != uint64(i) {
					t.Fatalf("%s: record %d: offset %d value %.40q, want %.40q", what, i, rec.offset, rec.value, all[i])
				}
				size += 28 + int64(len(rec.value))
			}
			if fi, err := os.Stat(log); err != nil || fi.Size() != size || size > limit {
				t.Fatalf("%s: %s: %v bytes (%v); its whole records make %d, the limit is %d", what, log, fi.Size(), err, size, limit)
			}
			if !strings.Contains(r.stderr, fmt.Sprintf("holds offsets up to %d;", len(recs)-1)) {
				t.Errorf("%s: the error does not say what the partition holds (offsets up to %d): %q", what, len(recs)-1, r.stderr)
			}
			noLeftovers(t, dir)
			verifyClean(t, dir)

			// The next append finds nothing to cut: append cut its own torn record.
			next := mustRun(t, dir, "after\n", "append", "t")
			if strings.Contains(next.stderr, "warning") {
				t.Errorf("%s: the next append warned: %q", what, next.stderr)
			}
			recs2 := readRecords(t, dir, "t")
			if len(recs2) != len(recs)+1 || string(recs2[len(recs)].value) != "after" || recs2[len(recs)].offset != uint64(len(recs)) {
				t.Fatalf("%s: after the next append: %d records, want %d ending with \"after\"", what, len(recs2), len(recs)+1)
			}
			noLeftovers(t, dir)
			verifyClean(t, dir)
			records += len(recs2)
		}
		t.Logf("%d trials, %d records checked byte for byte", trials, records)
	})

	t.Run("group-commit", func(t *testing.T) {
		dir := faultTopic(t, t.TempDir(), 1, numbered("v", 10))
		mustRun(t, dir, "", "read", "t", "--group", "g", "--count", "2")
		commit := filepath.Join(dir, ".groups", "g", "t.json")
		was, err := os.ReadFile(commit)
		if err != nil {
			t.Fatal(err)
		}
		r := limited(10).run(t, dir, "", "read", "t", "--group", "g", "--count", "2")
		r.wantExit(t, "read --group over the size limit", exitError)
		faultErrorLine(t, "read --group", r, filepath.Join(dir, ".groups", "g"), "group g", "file too large")
		if now, err := os.ReadFile(commit); err != nil || !bytes.Equal(now, was) {
			t.Errorf("%s changed by the failed commit: %q (%v), was %q", commit, now, err, was)
		}
		noLeftovers(t, dir)
		// The failed commit did not move the group: the same two again.
		if got := mustRun(t, dir, "", "read", "t", "--group", "g", "--count", "2").stdout; got != "v-0002\nv-0003\n" {
			t.Errorf("after the failed commit the group reads %q, want v-0002 and v-0003 again", got)
		}
	})

	t.Run("recover", func(t *testing.T) {
		dir := faultTopic(t, t.TempDir(), 1, numbered("v", 300), "--segment-bytes", "4k")
		idx := filepath.Join(dir, "t", "0", "00000000000000000000.index")
		if err := os.Remove(idx); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, dir)
		r := limited(1000).run(t, dir, "", "recover", "t")
		r.wantExit(t, "recover over the size limit", exitError)
		faultErrorLine(t, "recover", r, idx, "t/0", "file too large")
		sameSnapshot(t, before, snapshot(t, dir))
		mustRun(t, dir, "", "recover", "t")
		if _, err := os.Stat(idx); err != nil {
			t.Errorf("recover without the limit did not rebuild %s: %v", idx, err)
		}
		noLeftovers(t, dir)
		verifyClean(t, dir)
	})

	t.Run("copy-partition", func(t *testing.T) {
		dir := faultTopic(t, t.TempDir(), 1, numbered("v", 300), "--segment-bytes", "8k")
		dst := filepath.Join(t.TempDir(), "dst")
		before := snapshot(t, dir)
		r := limited(3000).run(t, dir, "", "copy-partition", "t", "0", "--to", dst)
		r.wantExit(t, "copy-partition over the size limit", exitError)
		faultErrorLine(t, "copy-partition", r, filepath.Join(dst, "t"), "file too large")
		sameSnapshot(t, before, snapshot(t, dir))
		// Not even the topic it made: a topic without partitions would
		// be an error for every command over the data directory.
		if _, err := os.Stat(filepath.Join(dst, "t")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the failed copy left %s behind: %v", filepath.Join(dst, "t"), err)
		}
		mustRun(t, dir, "", "copy-partition", "t", "0", "--to", dst)
		sameValues(t, "the copy", partitionValues(t, dst), partitionValues(t, dir))
		verifyClean(t, dst)

		// The same through a stream and import-partition.
		stream := mustRun(t, dir, "", "copy-partition", "t", "0", "--to", "-").stdout
		imported := filepath.Join(t.TempDir(), "imported")
		r = limited(3000).run(t, imported, stream, "import-partition", "t", "0")
		r.wantExit(t, "import-partition over the size limit", exitError)
		faultErrorLine(t, "import-partition", r, filepath.Join(imported, "t"), "file too large")
		if _, err := os.Stat(filepath.Join(imported, "t")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the failed import left %s behind: %v", filepath.Join(imported, "t"), err)
		}
		seglogRunner{bin: bin}.run(t, imported, stream, "import-partition", "t", "0").wantExit(t, "import-partition", exitOK)
		sameValues(t, "the import", partitionValues(t, imported), partitionValues(t, dir))
		verifyClean(t, imported)
	})
}

// inPrivateMounts runs the calling test again in a private mount
// namespace (unshare -m as root, unshare -rm otherwise), where it may
// mount without touching the machine's mounts, and reports whether this
// process is that run. The outer run passes, fails or skips with the inner
// one and gets false.
func inPrivateMounts(t *testing.T) bool {
	t.Helper()
	if os.Getenv("SEGLOG_FAULT_MOUNTNS") == "1" {
		return true
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare (util-linux) not installed: no private mount namespace to mount a filesystem in")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var run []string
	for _, part := range strings.Split(t.Name(), "/") {
		run = append(run, "^"+regexp.QuoteMeta(part)+"$")
	}
	args := []string{"-m", "--propagation", "private"}
	if os.Geteuid() != 0 {
		args = []string{"-r", "-m", "--propagation", "private"}
	}
	args = append(args, exe, "-test.run", strings.Join(run, "/"), "-test.v", "-test.count=1")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, unshare, args...)
	cmd.Env = append(os.Environ(), "SEGLOG_FAULT_MOUNTNS=1")
	if longMode() {
		cmd.Env = append(cmd.Env, "SEGLOG_LONG=1")
	}
	out, err := cmd.CombinedOutput()
	if !bytes.Contains(out, []byte("=== RUN")) {
		t.Skipf("no private mount namespace (unshare: %v): %s", err, out)
	}
	t.Logf("in a private mount namespace:\n%s", out)
	switch {
	case err != nil:
		t.Fatalf("the run in a private mount namespace failed: %v", err)
	case bytes.Contains(out, []byte("--- SKIP: "+t.Name())):
		t.Skip("skipped in the private mount namespace (see above)")
	}
	return false
}

// mount mounts (in the private namespace of inPrivateMounts) and unmounts
// at cleanup, before the directory is removed.
func mount(t *testing.T, source, target, fstype string, flags uintptr, data string) error {
	t.Helper()
	if err := unix.Mount(source, target, fstype, flags, data); err != nil {
		return err
	}
	t.Cleanup(func() {
		if err := unix.Unmount(target, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", target, err)
		}
	})
	return nil
}

// TestFaultNoSpace: a 1 MiB tmpfs fills up under append (ENOSPC part-way
// through a write, at a random fill level). append fails with one clear
// line, status 1; the earlier records and every whole record that got out
// are intact, nothing torn is left; recover on the full disk changes
// nothing it cannot finish; once space is freed, append goes on from the
// last kept offset.
func TestFaultNoSpace(t *testing.T) {
	if !inPrivateMounts(t) {
		return
	}
	rng := faultRand(t)
	trials := faultTrials(3, 120)
	records := 0
	outcomes := map[string]int{} // which file ran out of space; what recover did
	for trial := range trials {
		mnt := t.TempDir()
		if err := mount(t, "none", mnt, "tmpfs", 0, "size=1m"); err != nil {
			t.Skipf("the kernel refused a tmpfs mount: %v", err)
		}
		interval := 1 + rng.IntN(3)
		sync := []string{"exit", "batch", "never"}[rng.IntN(3)]
		before := numbered(fmt.Sprintf("before-%d", trial), 1+rng.IntN(200))
		dir := faultTopic(t, mnt, 1, before, "--segment-bytes", "96k", "--index-interval", strconv.Itoa(interval))

		// Fill the disk, then free what the trial leaves for append.
		filler := filepath.Join(mnt, "filler")
		f, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		chunk := bytes.Repeat([]byte{'f'}, 4096)
		var filled int64
		for {
			n, err := f.Write(chunk)
			filled += int64(n)
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		free := min(filled, 4096+rng.Int64N(300<<10))
		if err := f.Truncate(filled - free); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}

		var in strings.Builder
		var values []string
		for i := 0; int64(in.Len()) < free+200<<10; i++ {
			v := fmt.Sprintf("line-%d-%05d-%s", trial, i, strings.Repeat("y", rng.IntN(500)))
			if rng.IntN(200) == 0 {
				v += strings.Repeat("Y", 64<<10)
			}
			values = append(values, v)
			in.WriteString(v + "\n")
		}
		logsBefore := logBytes(t, dir)
		what := fmt.Sprintf("trial %d (%d KiB free, interval %d, --sync %s)", trial, free>>10, interval, sync)

		r := seglogRunner{bin: seglogBin(t)}.run(t, dir, in.String(), "append", "t", "--sync", sync)
		r.wantExit(t, what, exitError)
		faultErrorLine(t, what, r, filepath.Join(dir, "t", "0")+"/", "no space left on device")
		for _, ext := range []string{".log:", ".index:", ".timeindex:"} {
			if strings.Contains(r.stderr, ext) {
				outcomes["full writing a "+strings.TrimSuffix(ext, ":")]++
			}
		}

		logsKept(t, logsBefore, logBytes(t, dir))
		all := append(slices.Clone(before), values...)
		got := partitionValues(t, dir)[0]
		if len(got) < len(before) || len(got) >= len(all) || !slices.Equal(got, all[:len(got)]) {
			t.Fatalf("%s: the partition holds %d records, want the first %d..%d of what was appended, in order", what, len(got), len(before), len(all)-1)
		}
		noLeftovers(t, dir)
		verifyClean(t, dir)

		// recover on the full disk: done, or stopped cleanly.
		logsNow := logBytes(t, dir)
		rec := seglogRunner{bin: seglogBin(t)}.run(t, dir, "", "recover", "t")
		if rec.code != exitOK {
			rec.wantExit(t, what+": recover on a full disk", exitError)
			faultErrorLine(t, what+": recover", rec, "t/0", "no space left on device")
			outcomes["recover stopped for lack of space"]++
		} else {
			outcomes["recover finished on the full disk"]++
		}
		logsKept(t, logsNow, logBytes(t, dir))
		noLeftovers(t, dir)

		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		next := mustRun(t, dir, "after-1\nafter-2\n", "append", "t")
		if strings.Contains(next.stderr, "warning") {
			t.Errorf("%s: the append after freeing space warned: %q", what, next.stderr)
		}
		want := append(slices.Clone(got), "after-1", "after-2")
		sameValues(t, what+": after freeing space", partitionValues(t, dir), map[int][]string{0: want})
		noLeftovers(t, dir)
		verifyClean(t, dir)
		records += len(want)
	}
	t.Logf("%d trials, %d records checked; %v", trials, records, outcomes)
}

// readOnlyData makes the data directory the read-only tests use: topic t,
// two partitions of several segments each, a consumer group, and a
// missing index so that recover has work to do.
func readOnlyData(t *testing.T, base string) (dir string, values map[int][]string) {
	t.Helper()
	dir = faultTopic(t, base, 2, numbered("v", 60), "--segment-bytes", "300")
	mustRun(t, dir, "", "read", "t", "--group", "g", "--count", "1")
	if err := os.Remove(filepath.Join(dir, "t", "0", "00000000000000000000.index")); err != nil {
		t.Fatal(err)
	}
	return dir, partitionValues(t, dir)
}

// checkReadOnly runs every command on the read-only data directory ro
// (holding readOnlyData) with r: those that change files fail with one
// line naming what they could not change and why, status 1; those that
// only read work; nothing changes.
func checkReadOnly(t *testing.T, r seglogRunner, ro string, values map[int][]string, why string) {
	before := snapshot(t, ro)
	for _, c := range []struct {
		args  []string
		stdin string
		wants []string
	}{
		{[]string{"append", "t", "--partition", "0"}, "new\n", []string{filepath.Join(ro, "t", "0"), "t/0", why}},
		{[]string{"recover", "t"}, "", []string{filepath.Join(ro, "t", "0"), "t/0", why}},
		{[]string{"retention-sweep", "t", "--retention", "1ns"}, "", []string{filepath.Join(ro, "t"), why}},
		{[]string{"create", "u"}, "", []string{ro, "create topic u", why}},
		{[]string{"read", "t", "--group", "g2"}, "", []string{ro, "group g2", why}},
		{[]string{"read", "t", "--group", "g", "--count", "1"}, "", []string{filepath.Join(ro, ".groups", "g"), "group g", why}},
		{[]string{"copy-partition", "t", "0", "--to", ro, "--to-topic", "u"}, "", []string{filepath.Join(ro, "u"), why}},
	} {
		res := r.run(t, ro, c.stdin, c.args...)
		what := fmt.Sprintf("%q on a read-only data directory", c.args)
		res.wantExit(t, what, exitError)
		faultErrorLine(t, what, res, c.wants...)
	}
	for _, args := range [][]string{{"verify-crc", "t"}, {"describe", "t"}, {"tail", "t", "-n", "5"}} {
		r.run(t, ro, "", args...).wantExit(t, fmt.Sprintf("%q on a read-only data directory", args), exitOK)
	}
	res := r.run(t, ro, "", "read", "t", "--format", "json")
	res.wantExit(t, "read on a read-only data directory", exitOK)
	got := map[int][]string{}
	for _, l := range parseJSONLines(t, res.stdout) {
		got[l.Partition] = append(got[l.Partition], string(l.record(t).value))
	}
	sameValues(t, "read on a read-only data directory", got, values)
	// A copy out of it works: it only needs to read (and flock) the source.
	dst := filepath.Join(worldDir(t), "copy")
	if err := os.Chmod(filepath.Dir(dst), 0o777); err != nil {
		t.Fatal(err)
	}
	r.run(t, ro, "", "copy-partition", "t", "1", "--to", dst, "--to-partition", "0").wantExit(t, "copy-partition out of a read-only data directory", exitOK)
	sameValues(t, "the copy out of a read-only data directory", partitionValues(t, dst), map[int][]string{0: values[1]})
	sameSnapshot(t, before, snapshot(t, ro))
}

// afterReadOnly checks that, write access back, the commands that failed
// now work, on the same records.
func afterReadOnly(t *testing.T, dir string, values map[int][]string) {
	t.Helper()
	mustRun(t, dir, "", "recover", "t")
	mustRun(t, dir, "new\n", "append", "t", "--partition", "0")
	want := map[int][]string{0: append(slices.Clone(values[0]), "new"), 1: values[1]}
	sameValues(t, "after write access came back", partitionValues(t, dir), want)
	noLeftovers(t, dir)
	verifyClean(t, dir)
}

// TestFaultReadOnly: a data directory seglog may not write to, by its
// permissions (seglog run as an unprivileged user on a tree chmod a-w:
// root would pass the permission checks) or by a read-only bind mount.
func TestFaultReadOnly(t *testing.T) {
	t.Run("chmod", func(t *testing.T) {
		r := unprivileged(t)
		dir, values := readOnlyData(t, worldDir(t))
		chmodTree(t, dir, 0o555, 0o444)
		checkReadOnly(t, r, dir, values, "permission denied")
		chmodTree(t, dir, 0o755, 0o644)
		afterReadOnly(t, dir, values)
	})
	t.Run("mount", func(t *testing.T) {
		if !inPrivateMounts(t) {
			return
		}
		base := worldDir(t)
		dir, values := readOnlyData(t, base)
		ro := filepath.Join(base, "ro")
		if err := os.Mkdir(ro, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := mount(t, dir, ro, "", unix.MS_BIND, ""); err != nil {
			t.Skipf("the kernel refused a bind mount: %v", err)
		}
		if err := unix.Mount("", ro, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			t.Skipf("the kernel refused to make a bind mount read-only: %v", err)
		}
		checkReadOnly(t, seglogRunner{bin: seglogBin(t)}, ro, values, "read-only file system")
		afterReadOnly(t, dir, values)
	})
}

// chmodTree sets the mode of every directory and file under dir.
func chmodTree(t *testing.T, dir string, dirMode, fileMode os.FileMode) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, dirMode)
		}
		return os.Chmod(p, fileMode)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// segmentPaths lists partition dir's segment files of one extension,
// oldest first.
func segmentPaths(t *testing.T, dir, ext string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "[0-9]*"+ext))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(paths)
	return paths
}

// segmentBase is the base offset in a segment file's name.
func segmentBase(t *testing.T, path string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFaultUnreadableFile: seglog (not root) may not read one segment,
// then one index. Whatever needs the segment fails naming it, status 1 —
// never a panic, never a silent skip (not even with --skip-corrupt, which
// is for damage, not for files it cannot open); what does not need it
// works. An index is a hint: reads go on without it, verify-crc says it
// could not check it.
func TestFaultUnreadableFile(t *testing.T) {
	r := unprivileged(t)
	base := worldDir(t)
	dir := faultTopic(t, base, 1, numbered("v", 40), "--segment-bytes", "300")
	values := partitionValues(t, dir)
	pdir := filepath.Join(dir, "t", "0")
	logs := segmentPaths(t, pdir, ".log")
	if len(logs) < 4 {
		t.Fatalf("want at least 4 segments, got %q", logs)
	}
	before := snapshot(t, dir)
	dst := filepath.Join(base, "dst")
	if err := os.Mkdir(dst, 0o777); err != nil {
		t.Fatal(err)
	}

	seg := logs[1]
	if err := os.Chmod(seg, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"read", "t"}, exitError},
		{[]string{"read", "t", "--skip-corrupt"}, exitError},
		{[]string{"read", "t", "--offset", strconv.Itoa(segmentBase(t, seg))}, exitError},
		{[]string{"tail", "t", "-n", "100"}, exitError},
		{[]string{"verify-crc", "t"}, exitError},
		{[]string{"describe", "t"}, exitError},
		{[]string{"dump-index", "t", "--partition", "0", "--verify"}, exitError},
		{[]string{"copy-partition", "t", "0", "--to", dst}, exitError},
	} {
		res := r.run(t, dir, "", c.args...)
		what := fmt.Sprintf("%q with %s unreadable", c.args, filepath.Base(seg))
		res.wantExit(t, what, c.code)
		faultErrorLine(t, what, res, seg, "permission denied")
		if c.args[0] == "verify-crc" && !strings.Contains(res.stdout, "could not finish") {
			t.Errorf("%s: the report does not say the check could not finish:\n%s", what, res.stdout)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dst, "t")); len(entries) != 0 {
		t.Errorf("the refused copy left %v in %s", entries, filepath.Join(dst, "t"))
	}
	// Reading from a later segment does not need it.
	last := segmentBase(t, logs[len(logs)-1])
	res := r.run(t, dir, "", "read", "t", "--offset", strconv.Itoa(last))
	res.wantExit(t, "read from the last segment", exitOK)
	if want := strings.Join(values[0][last:], "\n") + "\n"; res.stdout != want {
		t.Errorf("read from offset %d: %q, want %q", last, res.stdout, want)
	}
	if err := os.Chmod(seg, 0o644); err != nil {
		t.Fatal(err)
	}

	idx := segmentPaths(t, pdir, ".index")[2]
	if err := os.Chmod(idx, 0); err != nil {
		t.Fatal(err)
	}
	res = r.run(t, dir, "", "read", "t")
	res.wantExit(t, "read with an unreadable index", exitOK)
	if want := strings.Join(values[0], "\n") + "\n"; res.stdout != want {
		t.Errorf("read with an unreadable index: %q, want %q", res.stdout, want)
	}
	at := segmentBase(t, idx) + 1
	res = r.run(t, dir, "", "read", "t", "--offset", strconv.Itoa(at), "--count", "1")
	res.wantExit(t, "read by offset with an unreadable index", exitOK)
	if res.stdout != values[0][at]+"\n" {
		t.Errorf("read --offset %d with an unreadable index: %q, want %q", at, res.stdout, values[0][at])
	}
	for _, args := range [][]string{{"verify-crc", "t"}, {"dump-index", idx}} {
		res := r.run(t, dir, "", args...)
		what := fmt.Sprintf("%q with %s unreadable", args, filepath.Base(idx))
		res.wantExit(t, what, exitError)
		faultErrorLine(t, what, res, idx, "permission denied")
		if args[0] == "verify-crc" && !strings.HasSuffix(res.stdout, "\nno problems in what was checked, but the check could not finish (checked in part: t/0)\n") {
			t.Errorf("%s: the report does not say the check was done in part:\n%s", what, res.stdout)
		}
	}
	if err := os.Chmod(idx, 0o644); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, before, snapshot(t, dir))
	verifyClean(t, dir)
}

// TestFaultSegmentIsDirectory: a segment's .log replaced by a directory is
// not a gap to skip silently (read would jump over its offsets, copy and
// recover would go on without it, recover would delete its indexes as
// orphans): every command names it and stops, status 1 — verify-crc too,
// as a check that could not finish — and leaves everything as it was. An
// index replaced by a directory is only a missing hint to readers and a
// copy (rebuilt there); verify-crc and recover, which cannot replace it,
// name it.
func TestFaultSegmentIsDirectory(t *testing.T) {
	base := t.TempDir()
	dir := faultTopic(t, base, 1, numbered("v", 40), "--segment-bytes", "300")
	values := partitionValues(t, dir)
	pdir := filepath.Join(dir, "t", "0")
	logs := segmentPaths(t, pdir, ".log")
	if len(logs) < 4 {
		t.Fatalf("want at least 4 segments, got %q", logs)
	}

	replace := func(path string) (restore func()) {
		aside := filepath.Join(base, "aside")
		if err := os.Rename(path, aside); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(aside, path); err != nil {
				t.Fatal(err)
			}
		}
	}

	seg := logs[1]
	restore := replace(seg)
	before := snapshot(t, dir)
	dst := filepath.Join(base, "dst")
	want := "segment " + seg + " is not a regular file (a directory)"
	for _, c := range []struct {
		args  []string
		stdin string
	}{
		{[]string{"read", "t", "--offset", strconv.Itoa(segmentBase(t, logs[2]))}, ""},
		{[]string{"tail", "-f", "t", "-n", "0", "--timeout", "1s"}, ""},
		{[]string{"verify-crc", pdir}, ""},
		{[]string{"describe", "t"}, ""},
		{[]string{"dump-index", "t", "--partition", "0"}, ""},
		{[]string{"copy-partition", "t", "0", "--to", dst}, ""},
		{[]string{"recover", "t"}, ""},
		{[]string{"retention-sweep", "t", "--retention", "1ns"}, ""},
		{[]string{"append", "t"}, "new\n"},
	} {
		res := seglogRunner{bin: seglogBin(t)}.run(t, dir, c.stdin, c.args...)
		what := fmt.Sprintf("%q with %s a directory", c.args, filepath.Base(seg))
		res.wantExit(t, what, exitError)
		faultErrorLine(t, what, res, want)
		sameSnapshot(t, before, snapshot(t, dir))
	}
	if _, err := os.Stat(filepath.Join(dst, "t", "0")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused copy made %s: %v", filepath.Join(dst, "t", "0"), err)
	}
	restore()
	sameValues(t, "with the segment back", partitionValues(t, dir), values)
	verifyClean(t, dir)

	idx := segmentPaths(t, pdir, ".index")[1]
	restore = replace(idx)
	before = snapshot(t, dir)
	got := partitionValues(t, dir)
	sameValues(t, "read with an index that is a directory", got, values)
	at := segmentBase(t, idx) + 2
	if r := mustRun(t, dir, "", "read", "t", "--offset", strconv.Itoa(at), "--count", "1"); r.stdout != values[0][at]+"\n" {
		t.Errorf("read --offset %d with an index that is a directory: %q, want %q", at, r.stdout, values[0][at])
	}
	for _, c := range []struct {
		args  []string
		stdin string
		code  int
	}{
		{[]string{"verify-crc", "t"}, "", exitProblems},
		{[]string{"recover", "t"}, "", exitError},
		{[]string{"retention-sweep", "t", "--retention", "1ns"}, "", exitError},
		{[]string{"append", "t"}, "new\n", exitError},
	} {
		res := seglogRunner{bin: seglogBin(t)}.run(t, dir, c.stdin, c.args...)
		what := fmt.Sprintf("%q with %s a directory", c.args, filepath.Base(idx))
		res.wantExit(t, what, c.code)
		if c.code == exitProblems {
			if !strings.Contains(res.stdout, "problem "+idx+": not a regular file (a directory)") {
				t.Errorf("%s: no problem naming it:\n%s", what, res.stdout)
			}
		} else {
			faultErrorLine(t, what, res, "index file "+idx+" is not a regular file (a directory)")
		}
		sameSnapshot(t, before, snapshot(t, dir))
	}
	copyDst := filepath.Join(base, "copy")
	r := mustRun(t, dir, "", "copy-partition", "t", "0", "--to", copyDst, "--json")
	if !strings.Contains(r.stdout, `"indexes_rebuilt":1,`) {
		t.Errorf("copy-partition with an index that is a directory: want 1 index rebuilt in the copy:\n%s", r.stdout)
	}
	sameValues(t, "the copy", partitionValues(t, copyDst), values)
	verifyClean(t, copyDst)
	restore()
	verifyClean(t, dir)
}

// TestFaultMissingPartition: partitions 0 and 2 of topic t exist, 1 does
// not (docs/format.md §1: reported naming it; never a crash, never a silently
// different partition count, which decides key routing). Commands over
// the topic fail with status 1 (verify-crc reports it as a problem,
// status 3); those that report per partition still report the others;
// nothing is written anywhere.
func TestFaultMissingPartition(t *testing.T) {
	base := t.TempDir()
	dir := faultTopic(t, base, 3, numbered("v", 30))
	values := partitionValues(t, dir)
	p1 := filepath.Join(dir, "t", "1")
	aside := filepath.Join(base, "p1")
	if err := os.Rename(p1, aside); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	dst := filepath.Join(base, "dst")
	missing := "partition 1 of 0..2 is missing (" + p1 + ")"
	for _, c := range []struct {
		args   []string
		stdin  string
		code   int
		wants  []string // on the error line
		stdout []string // still reported
	}{
		{[]string{"read", "t", "--partition", "0"}, "", exitError, []string{missing}, nil},
		{[]string{"tail", "-f", "t", "--timeout", "1s"}, "", exitError, []string{missing}, nil},
		{[]string{"append", "t", "--key-delimiter", ":"}, "k:v\n", exitError, []string{missing}, nil},
		{[]string{"append", "t", "--partition", "2"}, "v\n", exitError, []string{missing}, nil},
		{[]string{"copy-partition", "t", "0", "--to", dst}, "", exitError, []string{missing}, nil},
		{[]string{"describe", "t"}, "", exitError, []string{missing}, []string{"missing"}},
		{[]string{"recover", "t"}, "", exitError, []string{missing}, []string{"2 partitions checked, nothing to do"}},
		{[]string{"retention-sweep", "t", "--retention", "1d"}, "", exitError, []string{missing}, []string{"partition t/0", "partition t/2"}},
		{[]string{"verify-crc", "t"}, "", exitProblems, nil, []string{"problem " + p1 + ": partition directory missing", "t/0", "t/2"}},
	} {
		res := seglogRunner{bin: seglogBin(t)}.run(t, dir, c.stdin, c.args...)
		what := fmt.Sprintf("%q with partition 1 missing", c.args)
		res.wantExit(t, what, c.code)
		if c.wants != nil {
			faultErrorLine(t, what, res, c.wants...)
		}
		for _, w := range c.stdout {
			if !strings.Contains(res.stdout, w) {
				t.Errorf("%s: the output does not show %q:\n%s", what, w, res.stdout)
			}
		}
		sameSnapshot(t, before, snapshot(t, dir))
	}
	if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused copy made %s: %v", dst, err)
	}
	if err := os.Rename(aside, p1); err != nil {
		t.Fatal(err)
	}
	sameValues(t, "with partition 1 back", partitionValues(t, dir), values)
	verifyClean(t, dir)
}

// TestFaultOwnership: root (a cron job) working on a data directory that
// belongs to another user gives every file and directory it creates the
// owner and group of the directory it lands in, with that directory's
// mode (files without execute bits): segments and indexes of rolls,
// rebuilt indexes, quarantine, group commits, a retention roll, copies,
// an import and a topic. Topic t is 0750; topic s is setgid 2770, whose
// new directories stay setgid. Files root put there itself keep their
// owner and mode.
func TestFaultOwnership(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give files to another user")
	}
	base := worldDir(t)
	dir := faultTopic(t, base, 2, numbered("v", 20), "--segment-bytes", "300")
	mustRun(t, dir, "", "create", "s", "--partitions", "2", "--segment-bytes", "300")
	mustRun(t, dir, "", "create", "v")
	mustRun(t, dir, "", "read", "t", "--group", "g", "--count", "1")
	const (
		dirMode, fileMode                 = 0o750, 0o640
		sgidDirMode, sgidFile             = 0o2770, 0o660
		sgidChmod             os.FileMode = 0o770 | os.ModeSetgid
	)
	// want is the owner's mode for p: under topic s, setgid's.
	want := func(p string, isDir bool) uint32 {
		under := p == filepath.Join(dir, "s") || strings.HasPrefix(p, filepath.Join(dir, "s")+"/")
		switch {
		case under && isDir:
			return sgidDirMode
		case under:
			return sgidFile
		case isDir:
			return dirMode
		}
		return fileMode
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, nobodyID, nobodyID); err != nil {
			return err
		}
		mode := os.FileMode(want(p, d.IsDir()))
		if mode == sgidDirMode {
			mode = sgidChmod
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	// A closed segment, and the active segment's index, which append
	// opens with O_CREATE: root's own, they stay so.
	rootOwned := []string{segmentPaths(t, filepath.Join(dir, "t", "1"), ".log")[0]}
	idxs := segmentPaths(t, filepath.Join(dir, "t", "0"), ".index")
	rootOwned = append(rootOwned, idxs[len(idxs)-1])
	for _, p := range rootOwned {
		if err := os.Chown(p, 0, 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string) {
		t.Helper()
		n := 0
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			var st unix.Stat_t
			if err := unix.Lstat(p, &st); err != nil {
				return err
			}
			n++
			uid, gid, mode := int(st.Uid), int(st.Gid), st.Mode&0o7777
			if slices.Contains(rootOwned, p) {
				if uid != 0 || gid != 0 || mode != 0o600 {
					t.Errorf("after %s: %s, root's own, is now %d:%d %04o; want it left 0:0 0600", step, p, uid, gid, mode)
				}
			} else if w := want(p, d.IsDir()); uid != nobodyID || gid != nobodyID || mode != w {
				t.Errorf("after %s: %s is %d:%d %04o, want %d:%d %04o", step, p, uid, gid, mode, nobodyID, nobodyID, w)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("after %s: %d entries checked", step, n)
	}
	run := func(stdin string, args ...string) {
		t.Helper()
		seglogRunner{bin: seglogBin(t)}.run(t, dir, stdin, args...).wantExit(t, fmt.Sprintf("%q as root", args), exitOK)
	}
	appendTo := func(path string, b []byte) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
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
	lastLog := func(topic string, p int) string {
		logs := segmentPaths(t, filepath.Join(dir, topic, strconv.Itoa(p)), ".log")
		return logs[len(logs)-1]
	}

	// Rolls: new segments in every partition.
	run(strings.Join(numbered("w", 40), "\n")+"\n", "append", "t")
	run(strings.Join(numbered("w", 40), "\n")+"\n", "append", "s")
	check("appends with rolls")
	// Incomplete tails and a missing index: recover quarantines and
	// rebuilds; an appender cuts a torn tail of its own.
	appendTo(lastLog("t", 0), []byte{0, 0, 0, 0, 0, 0, 0, 9, 0})
	appendTo(lastLog("s", 1), []byte{0, 0, 0, 0, 0, 0, 0, 9, 0})
	if err := os.Remove(segmentPaths(t, filepath.Join(dir, "s", "0"), ".index")[1]); err != nil {
		t.Fatal(err)
	}
	run("", "recover")
	if _, err := os.Stat(filepath.Join(dir, ".quarantine", "s", "1")); err != nil {
		t.Fatalf("recover quarantined nothing: %v", err)
	}
	appendTo(lastLog("t", 1), []byte{0, 0, 0, 0, 0, 0, 1})
	run("x\n", "append", "t", "--partition", "1")
	check("recover and an append cutting a torn tail")
	run("", "read", "t", "--group", "g", "--count", "5")
	run("", "read", "s", "--group", "h", "--count", "1")
	check("group commits")
	run("", "copy-partition", "t", "0", "--to", dir, "--to-topic", "u")
	run("", "copy-partition", "t", "1", "--to", dir, "--to-topic", "s", "--to-partition", "2")
	run("", "copy-partition", "s", "0", "--to", dir, "--to-topic", "v", "--to-partition", "0", "--force")
	stream := mustRun(t, dir, "", "copy-partition", "s", "1", "--to", "-").stdout
	run(stream, "import-partition", "w", "0")
	run("", "create", "x", "--partitions", "2", "--retention", "7d")
	check("copies, an import and a create")
	// Everything expired: the sweep rolls each active segment (new files)
	// and deletes the rest, root's own files among them.
	run("", "retention-sweep", "--retention", "1ns")
	rootOwned = nil
	check("retention-sweep")
	verifyClean(t, dir)
}
