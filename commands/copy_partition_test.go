package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A copy while a real append process writes (and rolls) is a valid prefix
// of the source; once the appender is done, a forced copy is identical.
func TestCopyPartitionWhileAppendRuns(t *testing.T) {
	dir := newTopic(t, 1)
	app := startAppend(t, dir, "t", "--segment-bytes", "4k", "--sync", "never")
	var written atomic.Int64
	stop := make(chan struct{})
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := fmt.Fprintf(app.stdin, "line %06d\n", i); err != nil {
				t.Error(err)
				return
			}
			written.Add(1)
			if i%5 == 0 {
				time.Sleep(time.Millisecond) // rolls now and then, not thousands of segments
			}
		}
	}()
	dst := t.TempDir()
	eventually(t, 10*time.Second, "records to copy", func() bool { return len(readValues(t, dir, "t", 0)) > 500 })
	for range 5 {
		mustRun(t, dir, "", "copy-partition", "t", "0", "--to", dst, "--force")
		vals := readValues(t, dst, "t", 0)
		if len(vals) == 0 {
			t.Fatal("the copy holds no records")
		}
		for i, v := range vals {
			if want := fmt.Sprintf("line %06d", i); v != want {
				t.Fatalf("record %d of the copy is %q, want %q", i, v, want)
			}
		}
		if r := run(t, nil, "-d", dst, "verify-crc", "t"); r.code != 0 {
			t.Fatalf("verify-crc of the copy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	close(stop)
	<-wrote
	app.stdin.Close()
	if code := app.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("append exited %d: %s", code, app.stderr)
	}
	mustRun(t, dir, "", "copy-partition", "t", "0", "--to", dst, "--force")
	if got, want := readValues(t, dst, "t", 0), readValues(t, dir, "t", 0); len(got) != len(want) || len(got) != int(written.Load()) {
		t.Fatalf("final copy has %d records, source %d, written %d", len(got), len(want), written.Load())
	}
	sameFiles(t, filepath.Join(dir, "t", "0"), filepath.Join(dst, "t", "0"))
}

// kill -9 in the middle of a copy into a new topic leaves no topic behind,
// only a hidden temporary directory in the data directory, which commands
// over every topic never see and the next copy removes.
func TestCopyPartitionKilled(t *testing.T) {
	dir := newTopic(t, 1)
	var in strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&in, "record %06d %s\n", i, strings.Repeat("x", 40))
	}
	mustRun(t, dir, in.String(), "append", "t", "--sync", "never", "--segment-bytes", "1M")
	dst := t.TempDir()
	mustRun(t, dst, "kept\n", "append", "other", "--create")
	cmd := exec.Command(seglogBin(t), "-d", dir, "copy-partition", "t", "0", "--to", dst, "--throttle", "1M")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the copy to start", func() bool {
		m, _ := filepath.Glob(filepath.Join(dst, ".copy-t-*.tmp", "0", "*.log"))
		return len(m) > 0
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(dst, "t")); !os.IsNotExist(err) {
		t.Fatalf("a killed copy into a new topic left the topic: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dst, ".copy-t-*.tmp"))
	if len(left) != 1 {
		t.Fatalf("temporary directories after the kill: %v", left)
	}
	for _, args := range [][]string{{"topics"}, {"describe"}, {"verify-crc"}, {"retention-sweep", "--retention", "1000d"}} {
		if r := runIn(t, dst, nil, args...); r.code != 0 || r.stderr != "" {
			t.Errorf("seglog %s after the kill: exit %d, stderr %q; want 0 and nothing", args, r.code, r.stderr)
		}
	}
	// The next copy cleans up.
	mustRun(t, dir, "", "copy-partition", "t", "0", "--to", dst)
	if _, err := os.Stat(left[0]); !os.IsNotExist(err) {
		t.Errorf("the next copy left the dead one's directory: %v", err)
	}
	if got := readValues(t, dst, "t", 0); len(got) != 100000 {
		t.Errorf("copy after the kill holds %d records", len(got))
	}
}

// copy-partition --to - | import-partition through real pipes; and a
// reader that goes away early fails both ends, leaving nothing.
func TestCopyPartitionStreamPipe(t *testing.T) {
	dir := newTopic(t, 1)
	var in strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&in, "record %06d %s\n", i, strings.Repeat("y", 60))
	}
	mustRun(t, dir, in.String(), "append", "t", "--sync", "never", "--segment-bytes", "512k")
	dst := t.TempDir()

	pipe := func(limit int64) (exportCode, importCode int, exportErr, importErr string) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		var eErr, iErr bytes.Buffer
		exp := exec.Command(seglogBin(t), "-d", dir, "copy-partition", "t", "0", "--to", "-")
		exp.Stdout, exp.Stderr = w, &eErr
		imp := exec.Command(seglogBin(t), "-d", dst, "import-partition", "t", "0")
		imp.Stderr = &iErr
		if limit > 0 {
			imp.Stdin = io.LimitReader(r, limit) // the reader stops early
		} else {
			imp.Stdin = r
		}
		if err := exp.Start(); err != nil {
			t.Fatal(err)
		}
		if err := imp.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		imp.Wait()
		r.Close() // the export's reader is gone
		exp.Wait()
		return exp.ProcessState.ExitCode(), imp.ProcessState.ExitCode(), eErr.String(), iErr.String()
	}

	e, i, eErr, iErr := pipe(200000)
	if e != 1 || !strings.Contains(eErr, "broken pipe") || i != 1 || !strings.Contains(iErr, "not a whole partition stream") {
		t.Fatalf("stream cut short: export exit %d (%q), import exit %d (%q)", e, eErr, i, iErr)
	}
	if _, err := os.Stat(filepath.Join(dst, "t", "0")); !os.IsNotExist(err) {
		t.Fatalf("a cut stream left a partition: %v", err)
	}
	e, i, eErr, iErr = pipe(0)
	if e != 0 || i != 0 {
		t.Fatalf("whole stream: export exit %d (%q), import exit %d (%q)", e, eErr, i, iErr)
	}
	sameFiles(t, filepath.Join(dir, "t", "0"), filepath.Join(dst, "t", "0"))
}

// sameFiles fails unless directories a and b hold the same files (by
// name) with the same bytes.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	ea, err := os.ReadDir(a)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := os.ReadDir(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ea) != len(eb) {
		t.Fatalf("%s holds %d files, %s %d", a, len(ea), b, len(eb))
	}
	for _, e := range ea {
		x, err := os.ReadFile(filepath.Join(a, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, e.Name()))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs in %s (%v)", e.Name(), b, err)
		}
	}
}

// A forced copy onto an earlier copy reports what it kept, exit 0, and
// says on stderr why it reused nothing of a destination that differs.
func TestCopyPartitionForceKeepsEarlierCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--segment-bytes", "200")
	mustRun(t, dir, strings.Repeat("a record of the log\n", 30), "append", "t")
	dst := t.TempDir()
	mustRun(t, dir, "", "copy-partition", "t", "0", "--to", dst)
	mustRun(t, dir, strings.Repeat("another record\n", 10), "append", "t")

	r := mustRun(t, dir, "", "copy-partition", "t", "0", "--to", dst, "--force", "--json")
	var sum copySummaryJSON
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if sum.KeptSegments == 0 || sum.CopiedSegments == 0 || sum.KeptSegments+sum.CopiedSegments != sum.Segments ||
		sum.ReusedBytes == 0 || sum.CopiedBytes == 0 || sum.ReusedBytes+sum.CopiedBytes != sum.Bytes || sum.ReuseStopped != "" || r.stderr != "" {
		t.Errorf("summary %+v, stderr %q", sum, r.stderr)
	}
	if got, want := readValues(t, dst, "t", 0), readValues(t, dir, "t", 0); !slices.Equal(got, want) {
		t.Errorf("the copy reads %d records, the source %d", len(got), len(want))
	}

	// Another topic's partition under that name shares nothing with it.
	mustRun(t, dir, "other\n", "append", "u", "--create")
	r = runIn(t, dir, nil, "copy-partition", "u", "0", "--to", dst, "--to-topic", "t", "--force")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "seglog: note: u/0: reusing the earlier copy at ", "stopped, its topic settings differ from the source's: the rest was copied from the source")
	if !strings.Contains(r.stdout, "kept 0 segments (0 B), copied 1 ") {
		t.Errorf("stdout %q", r.stdout)
	}
	if got := readValues(t, dst, "t", 0); !slices.Equal(got, []string{"other"}) {
		t.Errorf("the copy reads %q", got)
	}
}
