package commands

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// newDataDir returns a data directory inside a fresh temporary directory,
// holding topic "t" (2 partitions: 0 has records a, b, c; 1 is empty) so
// that commands have something to find.
func newDataDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--partitions", "2")
	mustRun(t, dir, "a\nb\nc\n", "append", "t", "--partition", "0")
	return dir
}

// TestUsageErrors checks the exact exit status of command lines that make
// no sense (2), that stderr is one "seglog: " line naming what is wrong,
// and that nothing in or beside the data directory changed.
func TestUsageErrors(t *testing.T) {
	long := strings.Repeat("a", 250)
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  []string // in the error line
	}{
		{"create ../x", []string{"create", "../x"}, "", []string{"invalid topic name", `"../x"`}},
		{"create a/b", []string{"create", "a/b"}, "", []string{"invalid topic name", `"a/b"`}},
		{"create .x", []string{"create", ".x"}, "", []string{"invalid topic name", `".x"`}},
		{"create .", []string{"create", "."}, "", []string{"invalid topic name"}},
		{"create ..", []string{"create", ".."}, "", []string{"invalid topic name"}},
		{"create 250 chars", []string{"create", long}, "", []string{"invalid topic name", "250"}},
		{"create bad char", []string{"create", "a b"}, "", []string{"invalid topic name", `"a b"`}},
		{"append ../x", []string{"append", "../x"}, "x\n", []string{"invalid topic name", `"../x"`}},
		{"append a/b", []string{"append", "a/b"}, "x\n", []string{"invalid topic name", `"a/b"`}},
		{"append .x", []string{"append", ".x"}, "x\n", []string{"invalid topic name", `".x"`}},
		{"append 250 chars", []string{"append", long, "--create"}, "x\n", []string{"invalid topic name", "250"}},
		{"append ../t --create", []string{"append", "../t", "--create"}, "x\n", []string{"invalid topic name", `"../t"`}},
		{"read .x", []string{"read", ".x"}, "", []string{"invalid topic name", `".x"`}},

		{"create missing topic", []string{"create"}, "", []string{"missing TOPIC", "create"}},
		{"append missing topic", []string{"append"}, "x\n", []string{"missing TOPIC", "append"}},
		{"read missing topic", []string{"read"}, "", []string{"missing TOPIC", "read"}},
		{"create extra", []string{"create", "u", "v"}, "", []string{"one TOPIC", "u v"}},
		{"append extra", []string{"append", "t", "v"}, "x\n", []string{"one TOPIC", "t v"}},
		{"read extra", []string{"read", "t", "v"}, "", []string{"one TOPIC", "t v"}},

		{"unknown command", []string{"frobnicate"}, "", []string{"unknown command", "frobnicate"}},
		{"unknown global flag", []string{"--bogus", "read", "t"}, "", []string{"unknown flag --bogus"}},
		{"unknown read flag", []string{"read", "t", "--bogus"}, "", []string{"unknown flag --bogus", "seglog read --help"}},
		{"unknown short flag", []string{"read", "t", "-Z"}, "", []string{"unknown flag -Z"}},
		{"unknown append flag", []string{"append", "t", "--bogus"}, "x\n", []string{"unknown flag --bogus", "seglog append --help"}},
		{"unknown create flag", []string{"create", "u", "--bogus"}, "", []string{"unknown flag --bogus", "seglog create --help"}},
		{"flag before topic unknown", []string{"read", "--bogus", "t"}, "", []string{"unknown flag --bogus"}},

		{"offset word", []string{"read", "t", "--offset", "abc"}, "", []string{"--offset", `"abc"`}},
		{"offset suffix", []string{"read", "t", "--offset", "5x"}, "", []string{"--offset", `"5x"`}},
		{"offset missing value", []string{"read", "t", "--offset"}, "", []string{"offset"}},
		{"format", []string{"read", "t", "--format", "xml"}, "", []string{"--format", `"xml"`}},
		{"partition -1", []string{"read", "t", "--partition", "-1"}, "", []string{"--partition", "-1"}},
		{"partition word", []string{"read", "t", "--partition", "abc"}, "", []string{"abc"}},
		{"count -2", []string{"read", "t", "--count", "-2"}, "", []string{"--count", "-2"}},
		{"sync", []string{"append", "t", "--sync", "sometimes"}, "x\n", []string{"--sync", `"sometimes"`}},
		{"input", []string{"append", "t", "--input", "xml"}, "x\n", []string{"--input", `"xml"`}},
		{"create partitions 0", []string{"create", "u", "--partitions", "0"}, "", []string{"--partitions", "0"}},
		{"create partitions -3", []string{"create", "u", "--partitions", "-3"}, "", []string{"--partitions", "-3"}},
		{"append create partitions 0", []string{"append", "u", "--create", "--partitions", "0"}, "x\n", []string{"--partitions", "0"}},
		{"partitions without create", []string{"append", "t", "--partitions", "2"}, "x\n", []string{"--partitions", "--create"}},
		{"max-message-bytes garbage", []string{"append", "t", "--max-message-bytes", "lots"}, "x\n", []string{"--max-message-bytes", `"lots"`}},
		{"max-message-bytes unit", []string{"append", "t", "--max-message-bytes", "12q"}, "x\n", []string{"--max-message-bytes", `"12q"`}},
		{"max-message-bytes 0", []string{"append", "t", "--max-message-bytes", "0"}, "x\n", []string{"--max-message-bytes"}},
		{"segment-bytes", []string{"create", "u", "--segment-bytes", "big"}, "", []string{"--segment-bytes", `"big"`}},
		{"retention negative", []string{"create", "u", "--retention", "-5s"}, "", []string{"--retention", "negative"}},
		{"roll-after", []string{"create", "u", "--roll-after", "soon"}, "", []string{"--roll-after", `"soon"`}},
		{"wait-timeout", []string{"append", "t", "--wait-timeout", "forever"}, "x\n", []string{"--wait-timeout", `"forever"`}},
		{"delimiter escape", []string{"append", "t", "--delimiter", `\q`}, "x\n", []string{"--delimiter"}},
		{"empty delimiter", []string{"append", "t", "--delimiter", ""}, "x\n", []string{"--delimiter", "empty"}},
		{"empty key-delimiter", []string{"append", "t", "--key-delimiter="}, "x\n", []string{"--key-delimiter", "empty"}},
		{"wait and wait-timeout", []string{"append", "t", "--wait", "--wait-timeout", "1s"}, "x\n", []string{"--wait", "--wait-timeout"}},
		{"keep-partition and partition", []string{"append", "t", "--input", "json", "--keep-partition", "-p", "0"}, "{}\n", []string{"--keep-partition and -p exclude"}},
		{"key missing value", []string{"append", "t", "--key"}, "x\n", []string{"key"}},
		{"key and key-delimiter", []string{"append", "t", "--key", "k", "--key-delimiter", ":"}, "x\n", []string{"--key", "--key-delimiter"}},
		{"null and delimiter", []string{"append", "t", "--null", "--delimiter", "|"}, "x\n", []string{"--null", "--delimiter"}},
		{"json and key", []string{"append", "t", "--input", "json", "--key", "k"}, "{}\n", []string{"--key", "--input json"}},
		{"keep-partition without json", []string{"append", "t", "--keep-partition"}, "x\n", []string{"--keep-partition"}},
		{"dash-prefixed after --", []string{"create", "--", "-x!"}, "", []string{"invalid topic name", `"-x!"`}},
		{"dash-prefixed after -- append", []string{"append", "--", "-x/y"}, "x\n", []string{"invalid topic name", `"-x/y"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := newDataDir(t)
			root := filepath.Dir(dir)
			before := snapshot(t, root)
			r := runIn(t, dir, strings.NewReader(tt.stdin), tt.args...)
			if r.code != exitUsage {
				t.Errorf("seglog %q: exit %d, want %d; stderr: %s", tt.args, r.code, exitUsage, r.stderr)
			}
			wantOneErrorLine(t, r.stderr, tt.want...)
			if r.stdout != "" {
				t.Errorf("stdout: %q, want nothing", r.stdout)
			}
			sameSnapshot(t, before, snapshot(t, root))
		})
	}
}

// TestRuntimeErrors checks exit status 1 and the one error line for
// things that go wrong with a well-formed command line.
func TestRuntimeErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  []string
	}{
		{"read missing topic", []string{"read", "nope"}, "", []string{"nope", "not found", "seglog create nope"}},
		{"append missing topic", []string{"append", "nope"}, "x\n", []string{"nope", "not found", "seglog create nope", "--create"}},
		{"read partition out of range", []string{"read", "t", "--partition", "2"}, "", []string{"t", "2", "0..1"}},
		{"append partition out of range", []string{"append", "t", "--partition", "5"}, "x\n", []string{"t", "5", "0..1"}},
		{"read offset past end", []string{"read", "t", "--partition", "0", "--offset", "9"}, "", []string{"offset 9", "t/0", "valid offsets are 0..2"}},
		{"read offset past end all", []string{"read", "t", "--offset", "4"}, "", []string{"offset 4", "every partition of t", "0 (0..2)", "1 (no records, next offset 0)"}},
		{"read offset in empty partition", []string{"read", "t", "--partition", "1", "--offset", "1"}, "", []string{"offset 1", "t/1"}},
		{"create twice", []string{"create", "t"}, "", []string{"t", "already exists", "--if-not-exists"}},
		{"read partition dir missing", []string{"read", "/nonexistent/t/0"}, "", []string{"/nonexistent/t/0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := newDataDir(t)
			before := snapshot(t, dir)
			r := runIn(t, dir, strings.NewReader(tt.stdin), tt.args...)
			if r.code != exitError {
				t.Errorf("seglog %q: exit %d, want %d; stderr: %s", tt.args, r.code, exitError, r.stderr)
			}
			wantOneErrorLine(t, r.stderr, tt.want...)
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
}

func TestCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	r := mustRun(t, dir, "", "create", "orders", "--partitions", "3")
	if !strings.Contains(r.stderr, "orders") || r.stdout != "" {
		t.Errorf("create: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	for p := range 3 {
		for _, ext := range []string{".log", ".index", ".timeindex"} {
			if _, err := os.Stat(filepath.Join(dir, "orders", strconv.Itoa(p), "00000000000000000000"+ext)); err != nil {
				t.Error(err)
			}
		}
	}
	before := snapshot(t, dir)
	if r := runIn(t, dir, nil, "create", "orders", "--partitions", "3"); r.code != exitError {
		t.Errorf("second create: exit %d, want 1", r.code)
	}
	if r := runIn(t, dir, nil, "create", "orders", "--partitions", "3", "--if-not-exists"); r.code != exitOK || r.stderr != "" {
		t.Errorf("create --if-not-exists: exit %d, stderr %q; want 0 and nothing", r.code, r.stderr)
	}
	// Without --partitions the count is not compared; a different one is
	// an error (TestCreateIfNotExistsMismatch).
	if r := runIn(t, dir, nil, "create", "--if-not-exists", "orders"); r.code != exitOK || r.stderr != "" {
		t.Errorf("create --if-not-exists without --partitions: exit %d, stderr %q; want 0 and nothing", r.code, r.stderr)
	}
	if r := runIn(t, dir, nil, "-q", "create", "--if-not-exists", "orders"); r.code != exitOK || r.stderr != "" {
		t.Errorf("create -q --if-not-exists: exit %d, stderr %q", r.code, r.stderr)
	}
	sameSnapshot(t, before, snapshot(t, dir))
	// A name starting with '-' is a valid topic; after "--" it is one.
	mustRun(t, dir, "", "create", "--", "-x")
	mustRun(t, dir, "v\n", "append", "--", "-x")
	if got := mustRun(t, dir, "", "read", "--", "-x").stdout; got != "v\n" {
		t.Errorf("read -- -x: %q", got)
	}
}

// TestFlagPlacement: flags after positionals, global flags after the
// command, the environment variable and "--".
func TestFlagPlacement(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t")
	mustRun(t, dir, "a\nb\nc\n", "append", "t")

	want := "b\nc\n"
	for _, args := range [][]string{
		{"-d", dir, "read", "t", "--offset", "1"},
		{"-d", dir, "read", "--offset", "1", "t"},
		{"-d", dir, "read", "--offset=1", "t"},
		{"-d", dir, "read", "t", "-o", "1"},
		{"read", "t", "-d", dir, "--offset", "1"},
		{"read", "t", "--offset", "1", "-d", dir},
		{"read", "--data-dir", dir, "t", "--offset", "1"},
		{"read", "--data-dir=" + dir, "--offset", "1", "t"},
		{"read", "-d", dir, "--offset", "1", "--", "t"},
		{"-q", "read", "t", "--offset", "1", "--data-dir", dir},
	} {
		r := run(t, nil, args...)
		if r.code != 0 || r.stdout != want || r.stderr != "" {
			t.Errorf("seglog %q: exit %d, stdout %q, stderr %q; want 0, %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	// --count after the topic, --format before it.
	if r := run(t, nil, "read", "--format", "raw", "t", "-d", dir, "--count", "2"); r.stdout != "ab" {
		t.Errorf("raw count 2: %q", r.stdout)
	}
	// Append with its flags after the topic, global flag last.
	if r := run(t, strings.NewReader("d\n"), "append", "t", "--partition", "0", "-d", dir); r.code != 0 {
		t.Fatalf("append: %d %s", r.code, r.stderr)
	}
	if got := readValues(t, dir, "t", -1); strings.Join(got, ",") != "a,b,c,d" {
		t.Errorf("after append: %q", got)
	}
	// Global flags between "kafka" and its subcommand are global flags:
	// the export fails on the topic, not on the flag.
	for _, args := range [][]string{{"kafka", "-d", dir, "export", "nosuch"}, {"kafka", "-q", "-d", dir, "export", "nosuch"}} {
		r := run(t, nil, append(args, "--brokers", "127.0.0.1:1")...)
		if r.code != exitError || !strings.Contains(r.stderr, "nosuch") || strings.Contains(r.stderr, "not defined") {
			t.Errorf("seglog %q: exit %d, stderr %q; want 1 naming topic nosuch", args, r.code, r.stderr)
		}
	}
	// "--" makes a following -x a positional: a topic name, not a flag.
	if r := run(t, nil, "read", "-d", dir, "--", "-x"); r.code != exitError || !strings.Contains(r.stderr, "-x") || strings.Contains(r.stderr, "unknown flag") {
		t.Errorf("read -- -x: exit %d, stderr %q; want 1 naming topic -x", r.code, r.stderr)
	}
	// --help after the topic shows the command's help.
	for _, args := range [][]string{{"read", "--help"}, {"read", "t", "--help"}, {"read", "t", "-h"}, {"help", "read"}} {
		r := run(t, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "seglog read") || !strings.Contains(r.stdout, "--offset") {
			t.Errorf("seglog %q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

func TestDataDirEnv(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv("SEGLOG_DATA_DIR", dir)
	if r := run(t, nil, "create", "t"); r.code != 0 {
		t.Fatalf("create: %d %s", r.code, r.stderr)
	}
	if r := run(t, strings.NewReader("x\n"), "append", "t"); r.code != 0 {
		t.Fatalf("append: %d %s", r.code, r.stderr)
	}
	if r := run(t, nil, "read", "t"); r.stdout != "x\n" {
		t.Errorf("read with SEGLOG_DATA_DIR: %q %q", r.stdout, r.stderr)
	}
	// The flag beats the environment.
	other := filepath.Join(t.TempDir(), "other")
	if r := run(t, nil, "read", "t", "-d", other); r.code != exitError || !strings.Contains(r.stderr, "not found") {
		t.Errorf("read -d other: exit %d, stderr %q", r.code, r.stderr)
	}
}
