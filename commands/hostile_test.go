package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// Hostile input: arguments, flag values and stdin that are wrong, absurd or
// made to escape. Every case must end (as a process: within a deadline)
// with the exit status docs/cli.md gives, one clear error line on stderr (no
// panic), and nothing created or changed outside the data directory; a
// usage error (exit 2) must not have touched the data directory either.
// The cases where the process matters (stdin a directory or cut short,
// huge lines, paths relative to the working directory) and a sample of the
// rest run the real binary; the others run in process, and with -long
// every case runs the binary.

// hostileDeadline is how long one run may take before it counts as a
// hang: generous, the machine is shared and the binary race-built.
const hostileDeadline = 2 * time.Minute

// hostileCase is one run of `seglog -d data ARGS` with its working
// directory beside the data directory. "$ROOT" in an argument is the
// directory holding data/, in/ and cwd/.
type hostileCase struct {
	name string
	// proc: always run as a process. The others run in process, which
	// checks the same code in a fraction of the time, unless -long.
	proc  bool
	args  []string
	stdin func(t *testing.T, root string) io.Reader // nil: empty
	code  int
	// errHas are words the error line must hold (when code != 0).
	errHas []string
	// out, when set, is what stdout must be exactly.
	out *string
	// stderrHas are words stderr must hold (for code 0: the summary).
	stderrHas []string
}

func hStr(s string) func(*testing.T, string) io.Reader {
	return func(*testing.T, string) io.Reader { return strings.NewReader(s) }
}

func hBytes(b []byte) func(*testing.T, string) io.Reader {
	return func(*testing.T, string) io.Reader { return bytes.NewReader(b) }
}

// hFile opens root/rel as stdin: a directory, or a file.
func hFile(rel string) func(*testing.T, string) io.Reader {
	return func(t *testing.T, root string) io.Reader {
		f, err := os.Open(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
}

func hNothing() *string { s := ""; return &s }

// hostileFixture builds the data directory every case starts from: topic
// t with 2 partitions and 10 keyed records, topic other, and in/ beside
// it with a directory, a whole partition stream and one cut short.
func hostileFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	data := filepath.Join(root, "data")
	mustRun(t, data, "", "create", "t", "--partitions", "2")
	var in strings.Builder
	for i := range 10 {
		fmt.Fprintf(&in, "user-%d:value-%d\n", i%4, i)
	}
	mustRun(t, data, in.String(), "append", "t", "--key-delimiter", ":")
	mustRun(t, data, "", "create", "other")
	for _, d := range []string{"in/dir", "cwd"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stream := mustRun(t, data, "", "copy-partition", "t", "0", "--to", "-").stdout
	for name, b := range map[string]string{"in/stream.tar": stream, "in/cut.tar": stream[:len(stream)/2], "in/garbage.tar": strings.Repeat("garbage\n", 400)} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// hCopyTree copies the fixture for one case.
func hCopyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// outsideData is a snapshot of root without the data directory.
func outsideData(t *testing.T, root string) map[string]string {
	t.Helper()
	m := snapshot(t, root)
	data := filepath.Join(root, "data")
	for p := range m {
		if p == data || strings.HasPrefix(p, data+string(filepath.Separator)) {
			delete(m, p)
		}
	}
	return m
}

// onlyData is a snapshot of the data directory.
func onlyData(t *testing.T, root string) map[string]string {
	t.Helper()
	return snapshot(t, filepath.Join(root, "data"))
}

// runHostile runs one case against a copy of the fixture.
func runHostile(t *testing.T, fixture string, c hostileCase) {
	t.Helper()
	root := t.TempDir()
	hCopyTree(t, fixture, root)
	var stdin io.Reader = strings.NewReader("")
	if c.stdin != nil {
		stdin = c.stdin(t, root)
	}
	outside, data := outsideData(t, root), onlyData(t, root)
	args := []string{"-d", filepath.Join(root, "data")}
	for _, a := range c.args {
		args = append(args, strings.ReplaceAll(a, "$ROOT", root))
	}
	if !c.proc && !longMode() {
		r := run(t, stdin, args...)
		checkHostile(t, c, r.code, r.stdout, r.stderr)
	} else {
		runHostileProcess(t, c, root, args, stdin)
	}
	sameSnapshot(t, outside, outsideData(t, root))
	if c.code == exitUsage {
		sameSnapshot(t, data, onlyData(t, root))
	}
}

// runHostileProcess runs a case as a process, in root/cwd.
func runHostileProcess(t *testing.T, c hostileCase, root string, args []string, stdin io.Reader) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostileDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, seglogBin(t), args...)
	cmd.Dir = filepath.Join(root, "cwd")
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("seglog %s: still running after %v (a hang); stderr:\n%s", hArgs(c.args), hostileDeadline, stderr.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("seglog %s: %v", hArgs(c.args), err)
	}
	checkHostile(t, c, cmd.ProcessState.ExitCode(), stdout.String(), stderr.String())
}

// checkHostile checks a case's exit status and output.
func checkHostile(t *testing.T, c hostileCase, code int, stdout, se string) {
	t.Helper()
	if strings.Contains(se, "panic:") || strings.Contains(se, "goroutine ") {
		t.Fatalf("seglog %s panicked:\n%s", hArgs(c.args), se)
	}
	if code != c.code {
		t.Fatalf("seglog %s: exit %d, want %d; stderr:\n%.2000s", hArgs(c.args), code, c.code, se)
	}
	if code != 0 {
		wantLastErrorLine(t, se, c.errHas...)
	}
	for _, w := range c.stderrHas {
		if !strings.Contains(se, w) {
			t.Errorf("seglog %s: stderr does not mention %q:\n%s", hArgs(c.args), w, se)
		}
	}
	if c.out != nil && stdout != *c.out {
		t.Errorf("seglog %s: stdout %.300q, want %.300q", hArgs(c.args), stdout, *c.out)
	}
}

// hArgs shows arguments in a message, long ones cut.
func hArgs(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if len(a) > 40 {
			a = fmt.Sprintf("%s…(%d bytes)", a[:20], len(a))
		}
		fmt.Fprintf(&b, "%q", a)
	}
	return b.String()
}

func hRepeat(s string, n int) string { return strings.Repeat(s, n) }

func TestHostileArguments(t *testing.T) {
	fixture := hostileFixture(t)
	cases := []hostileCase{
		// Topic names: traversal, separators, length, leading dots and
		// dashes, unicode.
		{name: "create-dotdot", proc: true, args: []string{"create", ".."}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-traversal", args: []string{"create", "../escape"}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-slash", args: []string{"create", "a/b"}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-absolute", args: []string{"create", "/tmp/seglog-escape"}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-dot", args: []string{"create", "."}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-hidden", args: []string{"create", ".hidden"}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-empty", args: []string{"create", ""}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-space", args: []string{"create", "a b"}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-newline", args: []string{"create", "a\nb"}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-unicode", args: []string{"create", "tópico"}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-cjk", args: []string{"create", "日本語"}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-emoji", args: []string{"create", "log😀"}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-249", args: []string{"create", hRepeat("a", 249)}, code: 0},
		{name: "create-250", args: []string{"create", hRepeat("a", 250)}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-4096", args: []string{"create", hRepeat("a", 4096)}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-100000", proc: true, args: []string{"create", hRepeat("a", 100000)}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "read-100000", args: []string{"read", hRepeat("b", 100000)}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "create-dash-is-a-flag", args: []string{"create", "-dash"}, code: 2, errHas: []string{"unknown flag"}},
		{name: "create-dash-after-ddash", proc: true, args: []string{"create", "--", "-dash"}, code: 0},
		{name: "append-traversal", proc: true, args: []string{"append", "../escape"}, stdin: hStr("x\n"), code: 2, errHas: []string{"invalid topic name"}},
		{name: "append-absolute", args: []string{"append", "/tmp/seglog-escape", "--create"}, stdin: hStr("x\n"), code: 2, errHas: []string{"invalid topic name"}},
		{name: "read-dotdot", args: []string{"read", ".."}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "sweep-traversal", args: []string{"retention-sweep", "../t", "--retention", "1h"}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "recover-dotdot", args: []string{"recover", ".."}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "copy-traversal", args: []string{"copy-partition", "../t", "0", "--to", "$ROOT/out"}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "copy-to-topic-traversal", args: []string{"copy-partition", "t", "0", "--to", "$ROOT/out", "--to-topic", "../x"}, code: 2, errHas: []string{"invalid topic name"}},
		{name: "import-traversal", args: []string{"import-partition", "../x", "0"}, stdin: hFile("in/stream.tar"), code: 2, errHas: []string{"invalid topic name"}},

		// Group names follow the topic-name rules.
		{name: "group-dotdot", args: []string{"read", "t", "--group", ".."}, code: 2, errHas: []string{"invalid group name"}},
		{name: "group-traversal", proc: true, args: []string{"read", "t", "--group", "../../escape"}, code: 2, errHas: []string{"invalid group name"}},
		{name: "group-slash", args: []string{"tail", "t", "--group", "a/b"}, code: 2, errHas: []string{"invalid group name"}},
		{name: "group-empty", args: []string{"read", "t", "--group", ""}, code: 2, errHas: []string{"invalid group name"}},
		{name: "group-hidden", args: []string{"read", "t", "--group", ".g"}, code: 2, errHas: []string{"invalid group name"}},
		{name: "group-long", args: []string{"read", "t", "--group", hRepeat("g", 4096)}, code: 2, errHas: []string{"invalid group name"}},
		{name: "group-control", args: []string{"read", "t", "--group", "g\x01"}, code: 2, errHas: []string{"invalid group name"}},

		// Partition numbers: negative, past int32 and int64, not decimal.
		{name: "partition-negative", args: []string{"read", "t", "--partition", "-1"}, code: 2, errHas: []string{"--partition"}},
		{name: "partition-2^31", args: []string{"read", "t", "--partition", "2147483648"}, code: 1, errHas: []string{"not 2147483648", "partition not found"}},
		{name: "partition-2^63", proc: true, args: []string{"read", "t", "--partition", "9223372036854775808"}, code: 2, errHas: []string{"9223372036854775808"}},
		{name: "partition-1e999", args: []string{"read", "t", "--partition", "1e999"}, code: 2, errHas: []string{"1e999"}},
		{name: "partition-hex", args: []string{"read", "t", "--partition", "0x1"}, code: 2, errHas: []string{"0x1", "decimal"}},
		{name: "partition-octal", proc: true, args: []string{"read", "t", "--partition", "01"}, code: 2, errHas: []string{"01", "decimal"}},
		{name: "partition-underscore", args: []string{"verify-crc", "t", "--partition=0_1"}, code: 2, errHas: []string{"0_1", "decimal"}},
		{name: "append-partition-2^31", args: []string{"append", "t", "--partition", "2147483648"}, stdin: hStr("x\n"), code: 1, errHas: []string{"not 2147483648"}},
		{name: "recover-partition-2^31", args: []string{"recover", "t", "--partition", "2147483648"}, code: 1, errHas: []string{"2147483648"}},
		{name: "sweep-partition-2^63", args: []string{"retention-sweep", "t", "--partition", "9223372036854775808", "--retention", "1h"}, code: 2},
		{name: "copy-partition-dash", proc: true, args: []string{"copy-partition", "t", "-1", "--to", "$ROOT/out"}, code: 2, errHas: []string{"unknown flag -1"}},
		{name: "copy-partition-negative", args: []string{"copy-partition", "--to", "$ROOT/out", "--", "t", "-1"}, code: 2, errHas: []string{"invalid partition"}},
		{name: "copy-partition-2^31", args: []string{"copy-partition", "t", "2147483648", "--to", "$ROOT/out"}, code: 1, errHas: []string{"2147483648", "partition not found"}},
		{name: "copy-partition-2^63", args: []string{"copy-partition", "t", "9223372036854775808", "--to", "$ROOT/out"}, code: 2, errHas: []string{"invalid partition"}},
		{name: "copy-partition-1e999", args: []string{"copy-partition", "t", "1e999", "--to", "$ROOT/out"}, code: 2, errHas: []string{"invalid partition"}},
		{name: "copy-partition-hex", args: []string{"copy-partition", "t", "0x10", "--to", "$ROOT/out"}, code: 2, errHas: []string{"invalid partition"}},
		{name: "copy-to-partition-huge", args: []string{"copy-partition", "t", "0", "--to", "$ROOT/out", "--to-partition", "2147483648"}, code: 2, errHas: []string{"--to-partition"}},
		{name: "copy-to-partition-negative", args: []string{"copy-partition", "t", "0", "--to", "$ROOT/out", "--to-partition", "-1"}, code: 2, errHas: []string{"--to-partition"}},
		{name: "import-partition-huge", args: []string{"import-partition", "t", "2147483648"}, stdin: hFile("in/stream.tar"), code: 2, errHas: []string{"2147483648"}},
		{name: "import-partition-2^64", args: []string{"import-partition", "t", "99999999999999999999"}, stdin: hFile("in/stream.tar"), code: 2, errHas: []string{"invalid partition"}},
		{name: "create-partitions-negative", args: []string{"create", "x", "--partitions", "-1"}, code: 2, errHas: []string{"--partitions"}},
		{name: "create-partitions-zero", args: []string{"create", "x", "--partitions", "0"}, code: 2, errHas: []string{"--partitions"}},
		{name: "create-partitions-2^31", args: []string{"create", "x", "--partitions", "2147483648"}, code: 2, errHas: []string{"--partitions"}},

		// copy-partition --to: the partition itself, or somewhere inside
		// the data directory, where it would show up as a topic.
		{name: "copy-to-itself", proc: true, args: []string{"copy-partition", "t", "0", "--to", "../data"}, code: 2, errHas: []string{"t/0"}},
		{name: "copy-to-inside-partition", proc: true, args: []string{"copy-partition", "t", "0", "--to", "../data/t/0"}, code: 2, errHas: []string{"inside the data directory"}},
		{name: "copy-to-inside-topic", proc: true, args: []string{"copy-partition", "t", "0", "--to", "../data/t"}, code: 2, errHas: []string{"inside the data directory"}},
		{name: "copy-to-inside-data", proc: true, args: []string{"copy-partition", "t", "0", "--to", "../data/backup"}, code: 2, errHas: []string{"inside the data directory"}},
		{name: "copy-to-data-dir-other-topic", proc: true, args: []string{"copy-partition", "t", "0", "--to", "../data", "--to-topic", "t2"}, code: 0},
		{name: "copy-to-empty", args: []string{"copy-partition", "t", "0", "--to", ""}, code: 2, errHas: []string{"--to"}},

		// Sizes and durations.
		{name: "segment-bytes-0", args: []string{"create", "x", "--segment-bytes", "0"}, code: 2, errHas: []string{"--segment-bytes"}},
		{name: "segment-bytes-negative", args: []string{"create", "x", "--segment-bytes", "-1"}, code: 2, errHas: []string{"--segment-bytes"}},
		{name: "segment-bytes-1e30", args: []string{"create", "x", "--segment-bytes", "1e30"}, code: 2, errHas: []string{"--segment-bytes"}},
		{name: "segment-bytes-2^64", args: []string{"create", "x", "--segment-bytes", "99999999999999999999"}, code: 2, errHas: []string{"--segment-bytes"}},
		{name: "segment-bytes-fraction", args: []string{"create", "x", "--segment-bytes", "0.5"}, code: 2, errHas: []string{"--segment-bytes"}},
		{name: "segment-bytes-nan", args: []string{"append", "t", "--segment-bytes", "NaN"}, stdin: hStr("x\n"), code: 2, errHas: []string{"--segment-bytes"}},
		{name: "retention-bytes-negative", args: []string{"create", "x", "--retention-bytes", "-5"}, code: 2, errHas: []string{"--retention-bytes"}},
		{name: "retention-1000000h", args: []string{"retention-sweep", "t", "--retention", "1000000h"}, code: 0},
		{name: "retention-past-int64", args: []string{"create", "x", "--retention", "10000000h"}, code: 2, errHas: []string{"--retention"}},
		{name: "retention-days-past-int64", proc: true, args: []string{"create", "x", "--retention", "106752d"}, code: 2, errHas: []string{"--retention", "too long"}},
		{name: "retention-days-plus-hours-past-int64", args: []string{"create", "x", "--retention", "106751d24h"}, code: 2, errHas: []string{"--retention", "too long"}},
		{name: "retention-inf-days", args: []string{"create", "x", "--retention", "Infd"}, code: 2, errHas: []string{"--retention"}},
		{name: "retention-nan-days", args: []string{"create", "x", "--retention", "NaNd"}, code: 2, errHas: []string{"--retention"}},
		{name: "retention-negative", args: []string{"retention-sweep", "t", "--retention", "-1h"}, code: 2, errHas: []string{"--retention"}},
		{name: "retention-negative-days", args: []string{"create", "x", "--retention", "-5d"}, code: 2, errHas: []string{"--retention"}},
		{name: "roll-after-0", args: []string{"create", "x", "--roll-after", "0"}, code: 2, errHas: []string{"--roll-after"}},
		{name: "index-interval-0", args: []string{"create", "x", "--index-interval", "0"}, code: 2, errHas: []string{"--index-interval"}},
		{name: "index-interval-2^64", args: []string{"create", "x", "--index-interval", "99999999999999999999"}, code: 2, errHas: []string{"99999999999999999999"}},
		{name: "max-message-bytes-0", args: []string{"append", "t", "--max-message-bytes", "0"}, stdin: hStr("x\n"), code: 2, errHas: []string{"--max-message-bytes"}},
		{name: "max-message-bytes-3G", args: []string{"append", "t", "--max-message-bytes", "3G"}, stdin: hStr("x\n"), code: 2, errHas: []string{"--max-message-bytes"}},
		{name: "wait-timeout-negative", args: []string{"append", "t", "--wait-timeout", "-1s"}, stdin: hStr("x\n"), code: 2, errHas: []string{"--wait-timeout"}},
		{name: "throttle-0", proc: true, args: []string{"copy-partition", "t", "0", "--to", "$ROOT/out", "--throttle", "0"}, code: 2, errHas: []string{"--throttle"}},
		{name: "throttle-negative", args: []string{"copy-partition", "t", "0", "--to", "$ROOT/out", "--throttle", "-1"}, code: 2, errHas: []string{"--throttle"}},
		{name: "throttle-1e30", args: []string{"copy-partition", "t", "0", "--to", "$ROOT/out", "--throttle", "1e30"}, code: 2, errHas: []string{"--throttle"}},
		{name: "tail-n-negative", args: []string{"tail", "t", "-n", "-1"}, code: 2, errHas: []string{"-n"}},
		{name: "tail-n-2^64", args: []string{"tail", "t", "-n", "99999999999999999999"}, code: 2, errHas: []string{"99999999999999999999"}},
		{name: "tail-timeout-negative", args: []string{"tail", "-f", "t", "--timeout", "-1s"}, code: 2, errHas: []string{"--timeout"}},
		{name: "count-negative", args: []string{"read", "t", "--count", "-5"}, code: 2, errHas: []string{"--count"}},
		{name: "count-1e999", args: []string{"read", "t", "--count", "1e999"}, code: 2, errHas: []string{"1e999"}},
		{name: "offset-2^64", args: []string{"read", "t", "--offset", "18446744073709551616"}, code: 2, errHas: []string{"--offset"}},
		{name: "offset-max", args: []string{"read", "t", "--offset", "18446744073709551615"}, code: 1, errHas: []string{"out of range"}},
		{name: "offset-last-max", args: []string{"read", "t", "--partition", "0", "--offset", "-18446744073709551615", "--count", "1"}, code: 0},
		{name: "since-1e999", args: []string{"read", "t", "--since", "1e999"}, code: 2, errHas: []string{"--since"}},
		{name: "since-negative", args: []string{"read", "t", "--since", "-2h"}, code: 2, errHas: []string{"--since"}},
		{name: "since-year-9999", proc: true, args: []string{"read", "t", "--since", "9999-12-31T23:59:59Z"}, code: 0, out: hNothing()},
		{name: "until-year-1", args: []string{"read", "t", "--until", "0001-01-01T00:00:00Z"}, code: 0, out: hNothing()},
		{name: "since-year-1", args: []string{"read", "t", "--partition", "1", "--since", "0001-01-01T00:00:00Z", "--format", "raw"}, code: 0, out: strPtr("value-0value-2value-4value-6value-8")},
		{name: "sweep-now-1e999", args: []string{"retention-sweep", "t", "--retention", "1h", "--now", "1e999"}, code: 2, errHas: []string{"--now"}},
		{name: "sweep-now-year-9999", args: []string{"retention-sweep", "t", "--retention", "1h", "--now", "9999-01-01T00:00:00Z"}, code: 2, errHas: []string{"--now"}},
		{name: "purge-older-than-negative", args: []string{"quarantine", "purge", "--older-than", "-1d"}, code: 2, errHas: []string{"--older-than"}},

		// Delimiters, templates, enumerations.
		{name: "delimiter-empty", args: []string{"append", "t", "--delimiter", ""}, stdin: hStr("x"), code: 2, errHas: []string{"--delimiter"}},
		{name: "delimiter-bad-x", args: []string{"append", "t", "--delimiter", `\xZZ`}, stdin: hStr("x"), code: 2, errHas: []string{"--delimiter"}},
		{name: "delimiter-short-x", args: []string{"append", "t", "--delimiter", `\x`}, stdin: hStr("x"), code: 2, errHas: []string{"--delimiter"}},
		{name: "delimiter-unknown", args: []string{"append", "t", "--delimiter", `\q`}, stdin: hStr("x"), code: 2, errHas: []string{"--delimiter"}},
		{name: "key-delimiter-empty", args: []string{"append", "t", "--key-delimiter", ""}, stdin: hStr("x"), code: 2, errHas: []string{"--key-delimiter"}},
		{name: "template-lone-percent", args: []string{"read", "t", "--template", "%"}, code: 2, errHas: []string{"template"}},
		{name: "template-unknown", args: []string{"read", "t", "--template", "%z"}, code: 2, errHas: []string{"template"}},
		{name: "template-lone-backslash", args: []string{"read", "t", "--template", `\`}, code: 2, errHas: []string{"template"}},
		{name: "format-unknown", args: []string{"read", "t", "--format", "xml"}, code: 2, errHas: []string{"xml"}},
		{name: "input-unknown", args: []string{"append", "t", "--input", "xml"}, stdin: hStr("x"), code: 2, errHas: []string{"--input"}},

		// --input json: each bad line is a runtime error naming its line.
		{name: "json-bad-base64", args: []string{"append", "t", "--input", "json"}, stdin: hStr(`{"value_base64":"!!!"}` + "\n"), code: 1, errHas: []string{"line 1", "base64"}},
		{name: "json-partition-1e999", args: []string{"append", "t", "--input", "json"}, stdin: hStr(`{"value":"x","partition":1e999}` + "\n"), code: 1, errHas: []string{"line 1"}},
		{name: "json-partition-2^64", args: []string{"append", "t", "--input", "json", "--keep-partition"}, stdin: hStr(`{"value":"x","partition":99999999999999999999}` + "\n"), code: 1, errHas: []string{"line 1"}},
		{name: "json-partition-2^31", args: []string{"append", "t", "--input", "json", "--keep-partition"}, stdin: hStr(`{"value":"x","partition":2147483648}` + "\n"), code: 1, errHas: []string{"line 1", "2147483648"}},
		{name: "json-partition-negative", args: []string{"append", "t", "--input", "json", "--keep-partition"}, stdin: hStr(`{"value":"x","partition":-1}` + "\n"), code: 1, errHas: []string{"line 1", "partition"}},
		{name: "json-deep-nesting", proc: true, args: []string{"append", "t", "--input", "json"}, stdin: hStr(hRepeat("[", 1000000) + "\n"), code: 1, errHas: []string{"line 1"}},
		{name: "json-deep-value", args: []string{"append", "t", "--input", "json"}, stdin: hStr(`{"value":` + hRepeat("[", 1000000) + "\n"), code: 1, errHas: []string{"line 1"}},
		{name: "json-long-line", proc: true, args: []string{"append", "t", "--input", "json", "--max-message-bytes", "1MiB"}, stdin: hStr(`{"value":"` + hRepeat("a", 10<<20) + `"}` + "\n"), code: 1, errHas: []string{"line 1", "--max-message-bytes"}},
		{name: "json-second-line-bad", args: []string{"append", "t", "--input", "json"}, stdin: hStr(`{"value":"ok"}` + "\n" + `{"value":` + "\n"), code: 1, errHas: []string{"line 2"}, stderrHas: []string{"appended 1 record"}},
		{name: "json-cut-mid-record", proc: true, args: []string{"append", "t", "--input", "json"}, stdin: hStr(`{"value":"ab`), code: 1, errHas: []string{"line 1"}},
		{name: "json-two-objects", args: []string{"append", "t", "--input", "json"}, stdin: hStr(`{"value":"x"}{"value":"y"}` + "\n"), code: 1, errHas: []string{"line 1"}},
		{name: "json-null", args: []string{"append", "t", "--input", "json"}, stdin: hStr("null\n"), code: 1, errHas: []string{"line 1", "value"}},
		{name: "json-key-twice", args: []string{"append", "t", "--input", "json"}, stdin: hStr(`{"key":"a","key_base64":"YQ==","value":"x"}` + "\n"), code: 1, errHas: []string{"line 1", "key"}},
		{name: "json-nul-in-key", args: []string{"append", "t", "--input", "json"}, stdin: hStr(`{"key":"a\u0000b","value":"x"}` + "\n"), code: 0, stderrHas: []string{"appended 1 record"}},
		{name: "json-not-json", args: []string{"append", "t", "--input", "json"}, stdin: hBytes([]byte{0xff, 0xfe, 0, 1, '\n'}), code: 1, errHas: []string{"line 1"}},

		// Lines: too long, cut mid-record, stdin a directory.
		{name: "line-too-long", proc: true, args: []string{"append", "t", "--max-message-bytes", "1k"}, stdin: hStr("short\n" + hRepeat("x", 10000) + "\n"), code: 1, errHas: []string{"line 2", "--max-message-bytes"}, stderrHas: []string{"appended 1 record"}},
		{name: "line-cut-mid-record", proc: true, args: []string{"append", "t"}, stdin: hStr("a\nb"), code: 0, stderrHas: []string{"appended 2 records"}},
		{name: "null-cut-mid-record", args: []string{"append", "t", "--null"}, stdin: hStr("a\x00b"), code: 0, stderrHas: []string{"appended 2 records"}},
		{name: "stdin-directory", proc: true, args: []string{"append", "t"}, stdin: hFile("in/dir"), code: 1, errHas: []string{"stdin", "is a directory"}},
		{name: "stdin-directory-json", args: []string{"append", "t", "--input", "json"}, stdin: hFile("in/dir"), code: 1, errHas: []string{"is a directory"}},
		{name: "import-stdin-directory", proc: true, args: []string{"import-partition", "t", "5"}, stdin: hFile("in/dir"), code: 1, errHas: []string{"is a directory"}},
		{name: "import-cut-short", proc: true, args: []string{"import-partition", "t", "5"}, stdin: hFile("in/cut.tar"), code: 1, errHas: []string{"cut short"}},
		{name: "import-garbage", args: []string{"import-partition", "t", "5"}, stdin: hFile("in/garbage.tar"), code: 1, errHas: []string{"not a whole partition stream"}},
		{name: "import-empty", args: []string{"import-partition", "t", "5"}, code: 1, errHas: []string{"not a whole partition stream"}},
		{name: "import-whole", proc: true, args: []string{"import-partition", "t", "5"}, stdin: hFile("in/stream.tar"), code: 0},

		// The data directory itself.
		{name: "data-dir-is-a-file", proc: true, args: []string{"-d", "../in/stream.tar", "create", "x"}, code: 1, errHas: []string{"not a directory"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runHostile(t, fixture, c)
		})
	}
}

func strPtr(s string) *string { return &s }

// NUL cannot be passed in an argument to a process: these run the app in
// process, with NUL in topic, group, partition and path arguments.
func TestHostileNULArguments(t *testing.T) {
	root := hostileFixture(t)
	data := filepath.Join(root, "data")
	cases := []struct {
		args   []string
		code   int
		errHas string
	}{
		{[]string{"create", "a\x00b"}, 2, "invalid topic name"},
		{[]string{"append", "t\x00", "--create"}, 2, "invalid topic name"},
		{[]string{"read", "t\x00"}, 2, "invalid topic name"},
		{[]string{"read", "t/\x00"}, 1, "invalid argument"},
		{[]string{"retention-sweep", "\x00", "--retention", "1h"}, 2, "invalid topic name"},
		{[]string{"read", "t", "--group", "g\x00"}, 2, "invalid group name"},
		{[]string{"read", "t", "--partition", "0\x00"}, 2, "--partition"},
		{[]string{"copy-partition", "t", "0\x00", "--to", filepath.Join(root, "out")}, 2, "invalid partition"},
		{[]string{"copy-partition", "t", "0", "--to", filepath.Join(root, "out\x00x")}, 2, "--to"},
		{[]string{"copy-partition", "t", "0", "--to", filepath.Join(root, "out"), "--to-topic", "x\x00"}, 2, "invalid topic name"},
		{[]string{"create", "x", "--segment-bytes", "1\x00"}, 2, "--segment-bytes"},
		{[]string{"read", "t", "--template", "%\x00"}, 2, "template"},
	}
	outside := outsideData(t, root)
	for _, c := range cases {
		before := onlyData(t, root)
		r := runIn(t, data, nil, c.args...)
		if r.code != c.code {
			t.Errorf("seglog %q: exit %d, want %d; stderr: %s", c.args, r.code, c.code, r.stderr)
			continue
		}
		wantLastErrorLine(t, r.stderr, c.errHas)
		if r.code == exitUsage {
			sameSnapshot(t, before, onlyData(t, root))
		}
	}
	// A NUL in the data directory's name.
	r := run(t, nil, "-d", data+"\x00x", "create", "x")
	if r.code == 0 || strings.Contains(r.stderr, "panic") {
		t.Errorf("create in a data directory named with a NUL: exit %d, stderr %q; want an error", r.code, r.stderr)
	}
	// NUL as a delimiter and in a key is data, not an attack.
	r = runIn(t, data, strings.NewReader("k\x00v\x00"), "append", "t", "--null", "--key", "k\x00y")
	if r.code != 0 {
		t.Errorf("append --null --key with a NUL: exit %d, stderr %s", r.code, r.stderr)
	}
	sameSnapshot(t, outside, outsideData(t, root))
}

// A topic directory that is a symbolic link out of the data directory:
// reading through it is fine, but no command that changes files may
// change what it points at. Each refuses with exit 1 and an error naming
// the link.
func TestHostileSymlinkedTopic(t *testing.T) {
	root := t.TempDir()
	data, outside := filepath.Join(root, "data"), filepath.Join(root, "outside")
	mustRun(t, data, "", "create", "t")
	mustRun(t, data, "a\nb\nc\n", "append", "t")
	mustRun(t, data, "", "create", "u")
	mustRun(t, data, "x\n", "append", "u")
	stream := mustRun(t, data, "", "copy-partition", "u", "0", "--to", "-").stdout
	// A torn tail: recover and the sweep's roll have something to cut.
	f, err := os.OpenFile(logPath(data, "t", 0), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0, 0, 0, 0, 0, 0, 0, 3, 0, 0}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(data, "t"), filepath.Join(outside, "t")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(data, "t")
	if err := os.Symlink(filepath.Join(outside, "t"), link); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, outside)
	for _, c := range []struct {
		args  []string
		stdin string
		code  int
	}{
		// Over every topic, the linked one is listed where nothing
		// changes, and skipped with a warning where something would.
		{[]string{"topics"}, "", 0},
		{[]string{"retention-sweep", "--retention", "1ns"}, "", 0},
		{[]string{"recover"}, "", 0},
		{[]string{"retention-sweep", "t", "--retention", "1ns"}, "", 1},
		{[]string{"recover", "t"}, "", 1},
		{[]string{"recover", "t", "--salvage"}, "", 1},
		{[]string{"append", "t"}, "new\n", 1},
		{[]string{"copy-partition", "u", "0", "--to", data, "--to-topic", "t", "--to-partition", "0", "--force"}, "", 1},
		{[]string{"import-partition", "t", "0", "--force"}, stream, 1},
		{[]string{"read", "t", "--group", "g"}, "", 0}, // the group lives in data/.groups
		{[]string{"read", "t", "--format", "raw"}, "", 0},
	} {
		cmd := exec.Command(seglogBin(t), append([]string{"-d", data}, c.args...)...)
		cmd.Stdin = strings.NewReader(c.stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != c.code {
			t.Errorf("seglog %q: exit %d, want %d; stderr:\n%s", c.args, code, c.code, stderr.String())
			continue
		}
		if c.code != 0 {
			wantLastErrorLine(t, stderr.String(), link, "symbolic link")
		}
		switch c.args[0] {
		case "topics":
			if !regexp.MustCompile(`(?m)^\|? *t *\|`).MatchString(stdout.String()) {
				t.Errorf("seglog topics does not list the linked topic t:\n%s", stdout.String())
			}
		case "retention-sweep", "recover":
			if c.code == 0 && (!strings.Contains(stderr.String(), "skipping topic t: "+link+" is a symbolic link") || strings.Count(stderr.String(), "\n") != 1) {
				t.Errorf("seglog %q over every topic: stderr %q, want one warning that it skips the linked topic t", c.args, stderr.String())
			}
		}
		if c.args[0] == "read" && c.args[2] == "--format" && stdout.String() != "abc" {
			t.Errorf("read through the link: stdout %q, want %q", stdout.String(), "abc")
		}
		sameSnapshot(t, before, snapshot(t, outside))
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("seglog %q: the link %s is gone or replaced (%v)", c.args, link, err)
		}
	}
}

// hostileTokens are the values random command lines are made of.
func hostileTokens(root string) []string {
	data := filepath.Join(root, "data")
	return []string{
		"t", "other", "nosuch", "..", ".", "../x", "a/b", "/", data, filepath.Join(data, "t", "0"), filepath.Join(root, "out"),
		"-x", "--", "", " ", ".hidden", hRepeat("a", 250), hRepeat("z", 4096), "tópico", "\n",
		"0", "1", "-1", "2147483648", "9223372036854775808", "99999999999999999999", "1e999", "0x10", "010", "NaN",
		"0.5", "1k", "1GiB", "1e30", "-5d", "1d", "1000000h", "106752d", "1ns", "0s", "2024-05-01T12:00:00Z", "9999-12-31T23:59:59Z",
		"beginning", "end", "-18446744073709551615", "json", "lines", "value", "dump", "raw", "xml", "%", "%z", `\x`, `\xZZ`, `\q`, `%t %s\n`,
		"exit", "batch", "never",
	}
}

// hostileStdins are what a random run reads.
func hostileStdins(t *testing.T, fixture string) []string {
	stream, err := os.ReadFile(filepath.Join(fixture, "in", "stream.tar"))
	if err != nil {
		t.Fatal(err)
	}
	return []string{"", "a\nb\n", `{"value":"x"}` + "\n", `{"value_base64":"!!!"}`, hRepeat("[", 100000), string(stream), string(stream[:len(stream)/3]), "\x00\xff\x01"}
}

// hostileSeed is SEGLOG_HOSTILE_SEED when set (to replay a run), else the
// clock.
func hostileSeed(t *testing.T) uint64 {
	if s := os.Getenv("SEGLOG_HOSTILE_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SEGLOG_HOSTILE_SEED=%q: %v", s, err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// TestHostileRandomArgs runs random command lines built from hostile
// values, in process: every command with a random argument or two and
// random flags of its own. None may panic; each ends with a status docs/cli.md
// knows and, failing, one error line; nothing outside the data directory
// changes, and a usage error changes nothing at all. 40 runs (600 with
// -long); SEGLOG_HOSTILE_SEED=<seed> replays a run.
func TestHostileRandomArgs(t *testing.T) {
	fixture := hostileFixture(t)
	// Random values name relative paths ("-1", "--", "../x" as --to): they
	// must land in a scratch directory, not in the package's. Two levels
	// down, so that "../x" does too.
	cwd := filepath.Join(t.TempDir(), "cwd", "sub")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(cwd)
	seed := hostileSeed(t)
	t.Logf("seed %d (replay: SEGLOG_HOSTILE_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	trials := 40
	if longMode() {
		trials = 600
	}
	var root string
	app := NewApp(nil, nil, nil)
	var names []string
	for _, c := range app.Commands {
		if !c.Hidden && c.Name != "tail" && c.Name != "completion" && c.Name != "help" {
			names = append(names, c.Name)
		}
	}
	codes := map[int]int{}
	for trial := range trials {
		if trial%100 == 0 {
			root = t.TempDir()
			hCopyTree(t, fixture, root)
		}
		tokens, stdins := hostileTokens(root), hostileStdins(t, fixture)
		pick := func(s []string) string { return s[rng.IntN(len(s))] }
		cmd := app.Command(pick(names))
		args := []string{"-d", filepath.Join(root, "data"), cmd.Name}
		if len(cmd.Subcommands) > 0 && rng.IntN(4) > 0 {
			sub := cmd.Subcommands[rng.IntN(len(cmd.Subcommands))]
			args = append(args, sub.Name)
			cmd = sub
		}
		// Mostly a real topic (and partition) first, so that runs get past
		// the argument checks to the flags and the data.
		if rng.IntN(3) > 0 {
			args = append(args, pick([]string{"t", "other"}))
			if rng.IntN(2) > 0 {
				args = append(args, pick([]string{"0", "1"}))
			}
		}
		if rng.IntN(2) == 0 {
			args = append(args, pick(tokens))
		}
		// Flag values: hostile ones, or ones that parse, so that the
		// hostile ones meet the others' code paths too.
		sane := []string{"0", "1", "2", "1k", "64MiB", "1h", "7d", "1ns", "json", "value", "raw", "dump", "lines", "exit", "never",
			"beginning", "end", "-1", "g", "t", `%o %s\n`, filepath.Join(root, "out")}
		for range rng.IntN(4) {
			if len(cmd.Flags) == 0 {
				break
			}
			fl := cmd.Flags[rng.IntN(len(cmd.Flags))]
			name := "--" + fl.Names()[0]
			if name == "--wait" || name == "--help" {
				continue // waiting is what --wait is for
			}
			if v, ok := fl.(cli.DocGenerationFlag); ok && v.TakesValue() {
				if rng.IntN(2) == 0 {
					args = append(args, name, pick(sane))
				} else {
					args = append(args, name, pick(tokens))
				}
			} else {
				args = append(args, name)
			}
		}
		stdin := pick(stdins)
		outside, data := outsideData(t, root), onlyData(t, root)
		r := run(t, strings.NewReader(stdin), args...)
		codes[r.code]++
		where := fmt.Sprintf("trial %d (seed %d): seglog %s", trial, seed, hArgs(args[2:]))
		switch {
		case r.code < 0 || r.code > 3:
			t.Fatalf("%s: exit %d; stderr:\n%s", where, r.code, r.stderr)
		case strings.Contains(r.stderr, "panic"):
			t.Fatalf("%s: stderr:\n%s", where, r.stderr)
		case r.code == 1 || r.code == 2:
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "seglog: ") || strings.HasPrefix(last, "seglog: warning: ") {
				t.Fatalf("%s: exit %d without an error line; stderr:\n%s", where, r.code, r.stderr)
			}
		}
		sameSnapshot(t, outside, outsideData(t, root))
		if r.code == exitUsage {
			sameSnapshot(t, data, onlyData(t, root))
		}
		if t.Failed() {
			t.Fatalf("%s: exit %d, stderr:\n%s", where, r.code, r.stderr)
		}
	}
	t.Logf("%d random command lines, exit statuses %v", trials, codes)
}
