package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// qSegments is a data directory holding topic t (partitions 0 and 1) whose
// partition 0 has several segments, and topic u; it returns the directory
// and partition 0's segment files, oldest first.
func qSegments(t *testing.T) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--partitions", "2", "--segment-bytes", "60")
	mustRun(t, dir, "a\nb\nc\nd\ne\nf\n", "append", "t", "--partition", "0")
	mustRun(t, dir, "x\n", "append", "t", "--partition", "1")
	mustRun(t, dir, "", "create", "u")
	mustRun(t, dir, "y\nz\n", "append", "u")
	logs, err := filepath.Glob(filepath.Join(dir, "t", "0", "*.log"))
	if err != nil || len(logs) < 3 {
		t.Fatalf("segments of t/0: %q, %v", logs, err)
	}
	return dir, logs
}

// TestRecoverQuiet: a healthy recover prints one line (with --quiet,
// nothing), never a table per healthy partition; with --quiet a repair
// shows what was done only; --json is the same with --quiet.
func TestRecoverQuiet(t *testing.T) {
	dir, logs := qSegments(t)
	if r := mustRun(t, dir, "", "recover"); r.stdout != "3 partitions checked, nothing to do\n" || r.stderr != "" {
		t.Errorf("healthy recover: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if r := mustRun(t, dir, "", "-q", "recover"); r.stdout != "" || r.stderr != "" {
		t.Errorf("healthy recover -q: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if r := mustRun(t, dir, "", "recover", "t", "--partition", "0", "--dry-run"); r.stdout != "1 partition checked, nothing to do (dry run: nothing was changed)\n" {
		t.Errorf("healthy recover --dry-run: stdout %q", r.stdout)
	}
	if a, b := mustRun(t, dir, "", "recover", "--json").stdout, mustRun(t, dir, "", "-q", "recover", "--json").stdout; a != b || !strings.Contains(a, `"partitions": [`) {
		t.Errorf("--json differs with -q:\n%s\n%s", a, b)
	}

	// The middle segment's index is lost: only its row is news.
	lost := strings.TrimSuffix(logs[1], ".log") + ".index"
	if err := os.Remove(lost); err != nil {
		t.Fatal(err)
	}
	dry := mustRun(t, dir, "", "-q", "recover", "--dry-run")
	if !strings.HasPrefix(dry.stdout, "partition t/0 (") || strings.Count(dry.stdout, ".log |") != 1 ||
		!strings.Contains(dry.stdout, "| "+filepath.Base(logs[1])+" |") || strings.Contains(dry.stdout, "checked") {
		t.Errorf("recover -q --dry-run:\n%s", dry.stdout)
	}
	full := mustRun(t, dir, "", "recover", "--dry-run")
	if strings.Count(full.stdout, ".log |") != len(logs) || strings.Contains(full.stdout, "partition t/1") || strings.Contains(full.stdout, "partition u/0") ||
		!strings.HasSuffix(full.stdout, "\n\n3 partitions checked: 1 to recover, 2 with nothing to do (dry run: nothing was changed)\n") {
		t.Errorf("recover --dry-run: a row per segment of t/0, a line for the others:\n%s", full.stdout)
	}
	r := mustRun(t, dir, "", "-q", "recover")
	if r.stderr != "" || !strings.HasPrefix(r.stdout, "partition t/0 (") || !strings.Contains(r.stdout, "): recovered, next offset 6\n") ||
		strings.Count(r.stdout, ".log |") != 1 || !strings.Contains(r.stdout, "| "+filepath.Base(logs[1])+" |") || strings.Contains(r.stdout, "checked") {
		t.Errorf("recover -q: stderr %q, stdout:\n%s", r.stderr, r.stdout)
	}
	if _, err := os.Stat(lost); err != nil {
		t.Errorf("the index was not rebuilt: %v", err)
	}
	if r := mustRun(t, dir, "", "-q", "recover"); r.stdout != "" {
		t.Errorf("recover -q after the repair: %q", r.stdout)
	}
}

// TestRetentionSweepQuiet: with --quiet, a sweep prints the partitions it
// deleted from with those segments only; nothing when nothing went; the
// same --json.
func TestRetentionSweepQuiet(t *testing.T) {
	dir := rsNewTopic(t)
	// Segments 0, 3, 6 and the active 9 hold records up to +2, +5, +8 and
	// +9 s: at +15 s, 8 s of retention deletes 0 and 3.
	now := "2023-11-14T22:13:35Z"
	if r := mustRun(t, dir, "", "-q", "retention-sweep", "--retention", "1h", "--now", now); r.stdout != "" || r.stderr != "" {
		t.Errorf("nothing to delete, -q: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if r := mustRun(t, dir, "", "retention-sweep", "--retention", "1h", "--now", now); !strings.Contains(r.stdout, "total: nothing to delete") {
		t.Errorf("nothing to delete: %s", r.stdout)
	}
	args := []string{"retention-sweep", "t", "--retention", "8s", "--now", now}
	if a, b := mustRun(t, dir, "", append(args, "--dry-run", "--json")...).stdout, mustRun(t, dir, "", append([]string{"-q"}, append(args, "--dry-run", "--json")...)...).stdout; a != b {
		t.Errorf("--json differs with -q:\n%s\n%s", a, b)
	}
	r := mustRun(t, dir, "", append([]string{"-q"}, args...)...)
	if !strings.HasPrefix(r.stdout, "partition t/0 (") || !strings.Contains(r.stdout, "deleted 2 of 4 segments") ||
		strings.Count(r.stdout, ".log |") != 2 || !strings.Contains(r.stdout, "| 00000000000000000003.log |") ||
		strings.Contains(r.stdout, "total:") || strings.Contains(r.stdout, "topic t:") || r.stderr != "" {
		t.Errorf("retention-sweep -q: stderr %q, stdout:\n%s", r.stderr, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "t", "0", "00000000000000000000.log")); err == nil {
		t.Errorf("segment 0 is still there")
	}
	// Over every topic, one without a rule is skipped without a word.
	mustRun(t, dir, "", "create", "norule")
	if r := mustRun(t, dir, "", "-q", "retention-sweep", "--now", now); r.stdout != "" || r.stderr != "" {
		t.Errorf("retention-sweep -q over every topic: stdout %q, stderr %q", r.stdout, r.stderr)
	}
}

// TestCopyPartitionQuiet: with --quiet a copy prints nothing on success;
// --json still prints its JSON; with --to - nothing goes to stderr.
func TestCopyPartitionQuiet(t *testing.T) {
	dir, _ := qSegments(t)
	to := filepath.Join(t.TempDir(), "copy")
	if r := mustRun(t, dir, "", "-q", "copy-partition", "t", "0", "--to", to); r.stdout != "" || r.stderr != "" {
		t.Errorf("copy-partition -q: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if got := readValues(t, to, "t", 0); strings.Join(got, "") != "abcdef" {
		t.Errorf("the copy reads %q", got)
	}
	if r := mustRun(t, dir, "", "-q", "copy-partition", "t", "0", "--to", to, "--force", "--json"); !strings.HasPrefix(r.stdout, `{"from":`) || r.stderr != "" {
		t.Errorf("copy-partition -q --json: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	r := mustRun(t, dir, "", "-q", "copy-partition", "t", "1", "--to", "-")
	if r.stderr != "" || len(r.stdout) == 0 {
		t.Fatalf("copy-partition -q --to -: stderr %q, %d bytes", r.stderr, len(r.stdout))
	}
	other := filepath.Join(t.TempDir(), "other")
	imp := run(t, bytes.NewReader([]byte(r.stdout)), "-q", "-d", other, "import-partition", "t", "1")
	if imp.code != 0 || imp.stdout != "" || imp.stderr != "" {
		t.Errorf("import-partition -q: exit %d, stdout %q, stderr %q", imp.code, imp.stdout, imp.stderr)
	}
	if got := run(t, nil, "read", filepath.Join(other, "t", "1")); got.stdout != "x\n" {
		t.Errorf("the import reads %q, %s", got.stdout, got.stderr)
	}
	// Without -q, the summary table.
	if r := mustRun(t, dir, "", "copy-partition", "t", "0", "--to", to, "--force"); !strings.Contains(r.stdout, "| FROM ") {
		t.Errorf("copy-partition: %q", r.stdout)
	}
}

// TestListingsQuiet: describe, topics and quarantine keep their listing
// under --quiet and drop their notes and summary lines.
func TestListingsQuiet(t *testing.T) {
	dir, _ := qSegments(t)
	for _, args := range [][]string{{"describe"}, {"describe", "t", "--partition", "0"}, {"topics"}, {"describe", "--groups"}} {
		a, q := mustRun(t, dir, "", args...), mustRun(t, dir, "", append([]string{"-q"}, args...)...)
		if a.stdout != q.stdout || a.stdout == "" && args[0] != "describe" {
			t.Errorf("seglog -q %q prints something else:\n%s\nthan without -q:\n%s", args, q.stdout, a.stdout)
		}
	}
	// A group without positions: its title stays, the note goes.
	if err := os.MkdirAll(filepath.Join(dir, ".groups", "g"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, dir, "", "describe", "--groups"); !strings.Contains(r.stdout, "no committed positions") {
		t.Errorf("describe --groups: %q", r.stdout)
	}
	if r := mustRun(t, dir, "", "-q", "describe", "--groups"); r.stdout != "group g ("+filepath.Join(dir, ".groups", "g")+")\n" {
		t.Errorf("describe -q --groups: %q", r.stdout)
	}

	// An empty quarantine: a note, or nothing.
	if r := mustRun(t, dir, "", "quarantine"); !strings.Contains(r.stdout, "is empty") {
		t.Errorf("quarantine: %q", r.stdout)
	}
	if r := mustRun(t, dir, "", "-q", "quarantine"); r.stdout != "" {
		t.Errorf("quarantine -q: %q", r.stdout)
	}
	rcTear(t, dir, "u", 0, 3)
	mustRun(t, dir, "", "-q", "recover", "u")
	list := mustRun(t, dir, "", "quarantine", "list")
	if q := mustRun(t, dir, "", "-q", "quarantine", "list"); q.stdout != list.stdout || !strings.Contains(q.stdout, "| u ") {
		t.Errorf("quarantine -q list:\n%s\nwant:\n%s", q.stdout, list.stdout)
	}
	if r := mustRun(t, dir, "", "-q", "quarantine", "purge", "--dry-run"); !strings.HasPrefix(r.stdout, "would purge 1 piece") {
		t.Errorf("quarantine -q purge --dry-run: %q", r.stdout)
	}
	if r := mustRun(t, dir, "", "-q", "quarantine", "purge"); r.stdout != "" || r.stderr != "" {
		t.Errorf("quarantine -q purge: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if r := mustRun(t, dir, "", "quarantine", "list", "--json"); r.stdout != "{\n  \"entries\": []\n}\n" {
		t.Errorf("after the purge: %q", r.stdout)
	}
}

// TestImportQuiet: import, kafka export and kafka import print no summary
// under --quiet, and their --json all the same.
func TestImportQuiet(t *testing.T) {
	simple, _ := simpleFixture(t, "clean")
	dir := filepath.Join(t.TempDir(), "data")
	if r := mustRun(t, dir, "", "-q", "import", "--create", simple, "s"); r.stdout != "" || r.stderr != "" {
		t.Errorf("import -q: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if len(readValues(t, dir, "s", 0)) == 0 {
		t.Errorf("import -q imported nothing")
	}
	if r := mustRun(t, dir, "", "-q", "import", simple, "s", "--json"); !strings.HasPrefix(r.stdout, "{") {
		t.Errorf("import -q --json: %q", r.stdout)
	}
	_, addr := newKafka(t)
	if r := mustRun(t, dir, "", "-q", "kafka", "export", "--brokers", addr, "--create-topic", "s"); r.stdout != "" || r.stderr != "" {
		t.Errorf("kafka export -q: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if r := mustRun(t, dir, "", "-q", "kafka", "import", "--brokers", addr, "--kafka-topic", "s", "back"); r.stdout != "" || r.stderr != "" {
		t.Errorf("kafka import -q: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if a, b := strings.Join(readValues(t, dir, "s", 0), ","), strings.Join(readValues(t, dir, "back", 0), ","); a != b {
		t.Errorf("kafka round trip: %q, back %q", a, b)
	}
}
