package commands

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// result is one in-process run of seglog.
type result struct {
	code           int
	stdout, stderr string
}

// runMu serializes in-process runs: urfave/cli v2 is not safe for
// concurrent use (BoolFlag.Apply writes to the package-level cli.HelpFlag,
// flag_bool.go:110), so two Runs at once are a data race.
var runMu sync.Mutex

// run runs seglog in-process with args (without the program name).
func run(t testing.TB, stdin io.Reader, args ...string) result {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errb bytes.Buffer
	runMu.Lock()
	defer runMu.Unlock()
	code := Run(append([]string{"seglog"}, args...), stdin, &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// runTuned runs seglog in-process with --data-dir dir and the limits tn,
// failing the test unless it exits 0.
func runTuned(t testing.TB, tn tuning, dir string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	runMu.Lock()
	defer runMu.Unlock()
	app := newApp(strings.NewReader(""), &out, &errb, tn)
	code := runApp(app, append([]string{"seglog", "-d", dir}, args...), &errb)
	if code != 0 {
		t.Fatalf("seglog %q: exit %d, stderr:\n%s", args, code, errb.String())
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// runIn runs seglog with --data-dir dir.
func runIn(t testing.TB, dir string, stdin io.Reader, args ...string) result {
	t.Helper()
	return run(t, stdin, append([]string{"-d", dir}, args...)...)
}

// mustRun runs seglog with --data-dir dir and fails the test unless it
// exits 0.
func mustRun(t testing.TB, dir string, stdin string, args ...string) result {
	t.Helper()
	r := runIn(t, dir, strings.NewReader(stdin), args...)
	if r.code != 0 {
		t.Fatalf("seglog %q: exit %d, stderr:\n%s", args, r.code, r.stderr)
	}
	return r
}

// wantOneErrorLine checks that stderr is exactly one line, starting with
// "seglog: " and containing every one of wants.
func wantOneErrorLine(t testing.TB, stderr string, wants ...string) {
	t.Helper()
	if !strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr is not exactly one line: %q", stderr)
	}
	checkErrorLine(t, strings.TrimSuffix(stderr, "\n"), wants...)
}

// wantLastErrorLine checks that stderr (which may hold a summary before
// it) ends with the one error line, containing every one of wants.
func wantLastErrorLine(t testing.TB, stderr string, wants ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "seglog: ") && !strings.HasPrefix(l, "seglog: warning: ") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("want exactly one error line on stderr, got %d:\n%s", n, stderr)
	}
	checkErrorLine(t, lines[len(lines)-1], wants...)
}

func checkErrorLine(t testing.TB, line string, wants ...string) {
	t.Helper()
	if !strings.HasPrefix(line, "seglog: ") {
		t.Errorf("error line does not start with %q: %q", "seglog: ", line)
	}
	for _, w := range wants {
		if !strings.Contains(line, w) {
			t.Errorf("error line does not mention %q: %q", w, line)
		}
	}
}

// jsonLine is one line of `read --format json`, as written.
type jsonLine struct {
	Topic       string  `json:"topic"`
	Partition   int     `json:"partition"`
	Offset      uint64  `json:"offset"`
	Timestamp   string  `json:"timestamp"`
	TimestampNS int64   `json:"timestamp_ns"`
	Key         *string `json:"key"`
	KeyBase64   *string `json:"key_base64"`
	Value       *string `json:"value"`
	ValueBase64 *string `json:"value_base64"`

	raw string
}

// record is a decoded record: key (nil = none) and value bytes.
type record struct {
	partition int
	offset    uint64
	key       []byte
	value     []byte
}

func (l jsonLine) record(t testing.TB) record {
	t.Helper()
	r := record{partition: l.Partition, offset: l.Offset}
	dec := func(s *string) []byte {
		b, err := base64.StdEncoding.DecodeString(*s)
		if err != nil {
			t.Fatalf("bad base64 in %s: %v", l.raw, err)
		}
		return b
	}
	switch {
	case l.Key != nil:
		r.key = []byte(*l.Key)
	case l.KeyBase64 != nil:
		r.key = dec(l.KeyBase64)
	}
	switch {
	case l.Value != nil:
		r.value = []byte(*l.Value)
	case l.ValueBase64 != nil:
		r.value = dec(l.ValueBase64)
	default:
		t.Fatalf("no value in %s", l.raw)
	}
	return r
}

// parseJSONLines parses `read --format json` output.
func parseJSONLines(t testing.TB, out string) []jsonLine {
	t.Helper()
	var lines []jsonLine
	for _, s := range strings.SplitAfter(out, "\n") {
		if s == "" {
			continue
		}
		if !strings.HasSuffix(s, "\n") {
			t.Fatalf("read --format json output does not end with a newline: %q", s)
		}
		var l jsonLine
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("bad JSON line %q: %v", s, err)
		}
		l.raw = strings.TrimSuffix(s, "\n")
		lines = append(lines, l)
	}
	return lines
}

// readRecords reads a topic (extra: more read flags) and decodes it.
func readRecords(t testing.TB, dir, topic string, extra ...string) []record {
	t.Helper()
	r := mustRun(t, dir, "", append([]string{"read", topic, "--format", "json"}, extra...)...)
	var recs []record
	for _, l := range parseJSONLines(t, r.stdout) {
		recs = append(recs, l.record(t))
	}
	return recs
}

// readValues reads the values of a topic's partition (or all, p < 0).
func readValues(t testing.TB, dir, topic string, p int) []string {
	t.Helper()
	var extra []string
	if p >= 0 {
		extra = []string{"--partition", fmt.Sprint(p)}
	}
	var vals []string
	for _, r := range readRecords(t, dir, topic, extra...) {
		vals = append(vals, string(r.value))
	}
	return vals
}

// snapshot describes every file and directory under root (path, mode,
// size, content hash), to show a command left it alone.
func snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		desc := info.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %d %x %d", len(b), sha256.Sum256(b), info.ModTime().UnixNano())
		}
		m[path] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sameSnapshot(t testing.TB, before, after map[string]string) {
	t.Helper()
	for p, d := range before {
		if after[p] != d {
			t.Errorf("%s changed: %q -> %q", p, d, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared", p)
		}
	}
}

// logPath is a partition's first segment's .log.
func logPath(dir, topic string, p int) string {
	return filepath.Join(dir, topic, fmt.Sprint(p), "00000000000000000000.log")
}

// seglogBin is the seglog binary testscript.Main put in $PATH: this test
// binary, which runs commands.Run when called by that name.
func seglogBin(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("seglog")
	if err != nil {
		t.Fatalf("seglog not in $PATH (TestMain should have put it there): %v", err)
	}
	return p
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// chunkReader returns its data n bytes per Read, to put delimiters and
// records across read boundaries.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(r.n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}
