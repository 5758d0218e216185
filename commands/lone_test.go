package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A closed segment copied out alone (its last record torn on the way) is
// read by path as the active segment of a partition of its own: its tail
// is incomplete, not corrupt. Every read-only command takes it, with the
// exit status docs/cli.md gives, and none changes a byte or an mtime.
func TestLoneSegmentFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--segment-bytes", "150")
	mustRun(t, dir, strings.Join(numbered("v", 20), "\n")+"\n", "append", "t")
	logs := segmentPaths(t, filepath.Join(dir, "t", "0"), ".log")
	if len(logs) < 3 {
		t.Fatalf("want 3 segments at least, got %q", logs)
	}
	log := logs[1]
	base := segmentBase(t, log)
	fi, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	records := int(fi.Size()) / (28 + 6) // "v-0000"
	if err := os.Truncate(log, fi.Size()-3); err != nil {
		t.Fatal(err)
	}
	last := base + records - 2 // the last whole record
	before := snapshot(t, dir)

	// In its partition, the torn record of a closed segment is corrupt.
	if r := runIn(t, dir, nil, "read", "t"); r.code != exitError || !strings.Contains(r.stderr, "corrupt record") {
		t.Errorf("read t: exit %d, stderr %q; want the corruption (exit 1)", r.code, r.stderr)
	}

	var want []string
	for o := base; o <= last; o++ {
		want = append(want, fmt.Sprintf("v-%04d", o))
	}
	for _, c := range []struct {
		args   []string
		code   int
		stdout []string // lines it holds
	}{
		{[]string{"read", log}, exitOK, want},
		{[]string{"read", log, "--offset", strconv.Itoa(last), "--format", "json"}, exitOK,
			[]string{fmt.Sprintf(`{"topic":"t","partition":0,"offset":%d,`, last)}},
		{[]string{"tail", "-n", "2", log}, exitOK, want[len(want)-2:]},
		{[]string{"describe", log, "--wide"}, exitOK, []string{log + ": a lone segment file, read as the active segment of a partition of its own",
			fmt.Sprintf("|         0 | %5d | %4d | %7d |        1 |", base, last+1, len(want))}},
		{[]string{"describe", log, "--json"}, exitOK, []string{`      "layout": "segment-file",`, fmt.Sprintf(`          "next_offset": %d,`, last+1)}},
		{[]string{"describe", log, "--timeline", "--json"}, exitOK, nil},
		{[]string{"verify-crc", log}, exitProblems, []string{fmt.Sprintf("problem %s byte %d offset %d: incomplete tail: ", log, (records-1)*34, last+1),
			"1 problem found (2 notes)"}},
		{[]string{"dump-index", log, "--verify"}, exitOK, []string{"checked against " + filepath.Base(log) + ": " + strconv.Itoa(len(want)) + " ok, 1 past the log's end"}},
		{[]string{"tail", "-f", log}, exitUsage, nil},
		{[]string{"read", log, "--partition", "1"}, exitUsage, nil},
	} {
		r := runIn(t, dir, nil, c.args...)
		if r.code != c.code {
			t.Errorf("%q: exit %d, want %d; stderr %q", c.args, r.code, c.code, r.stderr)
			continue
		}
		if c.code == exitError || c.code == exitUsage {
			wantOneErrorLine(t, r.stderr, log)
		} else if r.stderr != "" {
			t.Errorf("%q: stderr %q", c.args, r.stderr)
		}
		if c.code == exitUsage {
			continue
		}
		if c.args[0] == "read" && len(c.stdout) == len(want) {
			if got := strings.Join(c.stdout, "\n") + "\n"; r.stdout != got {
				t.Errorf("%q: stdout %q, want %q", c.args, r.stdout, got)
			}
		}
		for _, l := range c.stdout {
			if !strings.Contains(r.stdout, l) {
				t.Errorf("%q: stdout does not hold %q:\n%s", c.args, l, r.stdout)
			}
		}
	}
	sameSnapshot(t, before, snapshot(t, dir))
}

// A lone segment file not named after its base offset is read from its
// first record's offset, with the index files beside it under its name.
func TestLoneSegmentFileMisnamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--segment-bytes", "150")
	mustRun(t, dir, strings.Join(numbered("v", 10), "\n")+"\n", "append", "t")
	seg := segmentPaths(t, filepath.Join(dir, "t", "0"), ".log")[1]
	base := segmentBase(t, seg)
	rescue := filepath.Join(t.TempDir(), "rescue")
	if err := os.Mkdir(rescue, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".log", ".index", ".timeindex"} {
		b, err := os.ReadFile(strings.TrimSuffix(seg, ".log") + ext)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rescue, "copy"+ext), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(rescue, "copy.log")
	before := snapshot(t, rescue)
	r := mustRun(t, dir, "", "read", log, "--format", "json", "--count", "1")
	if want := fmt.Sprintf(`{"topic":"%s","partition":0,"offset":%d,`, filepath.Base(filepath.Dir(rescue)), base); !strings.HasPrefix(r.stdout, want) {
		t.Errorf("read %s: %q, want it to start %q", log, r.stdout, want)
	}
	if r := runIn(t, dir, nil, "verify-crc", log); r.code != exitOK || !strings.HasSuffix(r.stdout, "\nno problems found\n") {
		t.Errorf("verify-crc %s: exit %d\n%s%s", log, r.code, r.stdout, r.stderr)
	}
	r = mustRun(t, dir, "", "dump-index", log, "--kind", "index", "--verify")
	if !strings.Contains(r.stdout, filepath.Join(rescue, "copy.index")+": ") || !strings.HasSuffix(r.stdout, "\nall entries check out\n") {
		t.Errorf("dump-index %s:\n%s", log, r.stdout)
	}
	sameSnapshot(t, before, snapshot(t, rescue))
}

// A segment .log that is a symbolic link is an error naming it for every
// command, readers (exit 1, never a silent skip of its offsets) and
// writers (which would have used them again) alike; nothing changes.
func TestSegmentLogSymlink(t *testing.T) {
	base := t.TempDir()
	dir := faultTopic(t, base, 1, numbered("v", 20), "--segment-bytes", "150")
	logs := segmentPaths(t, filepath.Join(dir, "t", "0"), ".log")
	for _, which := range []int{1, len(logs) - 1} { // a closed segment, the active one
		log := logs[which]
		aside := filepath.Join(base, "aside.log")
		if err := os.Rename(log, aside); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(aside, log); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, dir)
		want := "segment " + log + " is not a regular file (a symbolic link to " + aside + ")"
		for _, c := range []struct {
			args  []string
			stdin string
		}{
			{[]string{"read", "t"}, ""},
			{[]string{"read", "t", "--offset", "end"}, ""},
			{[]string{"tail", "t", "-n", "3"}, ""},
			{[]string{"describe", "t"}, ""},
			{[]string{"verify-crc", "t"}, ""},
			{[]string{"dump-index", "t"}, ""},
			{[]string{"append", "t"}, "new\n"},
			{[]string{"recover", "t"}, ""},
			{[]string{"retention-sweep", "t", "--retention", "1ns"}, ""},
			{[]string{"copy-partition", "t", "0", "--to", filepath.Join(base, "copy")}, ""},
		} {
			r := runIn(t, dir, strings.NewReader(c.stdin), c.args...)
			if r.code != exitError {
				t.Errorf("%q with %s a link: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", c.args, filepath.Base(log), r.code, r.stdout, r.stderr)
				continue
			}
			wantLastErrorLine(t, r.stderr, want)
		}
		sameSnapshot(t, before, snapshot(t, dir))
		if err := os.Remove(log); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(aside, log); err != nil {
			t.Fatal(err)
		}
	}
}

// An index file that is a symbolic link is a hint readers go on without,
// with a warning naming it; verify-crc calls it a problem, dump-index does
// not read it, and the commands that change files refuse the partition.
func TestSegmentIndexSymlink(t *testing.T) {
	base := t.TempDir()
	dir := faultTopic(t, base, 1, numbered("v", 20), "--segment-bytes", "150")
	idx := segmentPaths(t, filepath.Join(dir, "t", "0"), ".index")[1]
	aside := filepath.Join(base, "aside.index")
	if err := os.Rename(idx, aside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(aside, idx); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	kind := "not a regular file (a symbolic link to " + aside + ")"
	for _, c := range []struct {
		args  []string
		stdin string
		code  int
		in    string // "stdout", "warning" or "error"
		want  string
	}{
		{[]string{"read", "t"}, "", exitOK, "warning", "index file " + idx + " is " + kind + ": reading without it"},
		{[]string{"describe", "t"}, "", exitOK, "warning", "index file " + idx + " is " + kind},
		{[]string{"tail", "t"}, "", exitOK, "warning", "index file " + idx + " is " + kind},
		{[]string{"verify-crc", "t"}, "", exitProblems, "stdout", "problem " + idx + ": " + kind + ": readers go on without this index"},
		{[]string{"dump-index", "t"}, "", exitError, "error", "1 index file is not a regular file, not dumped: " + idx + " (a symbolic link to " + aside + ")"},
		{[]string{"append", "t"}, "new\n", exitError, "error", "index file " + idx + " is " + kind},
		{[]string{"recover", "t"}, "", exitError, "error", "index file " + idx + " is " + kind},
		{[]string{"retention-sweep", "t", "--retention", "1ns"}, "", exitError, "error", "index file " + idx + " is " + kind},
	} {
		r := runIn(t, dir, strings.NewReader(c.stdin), c.args...)
		if r.code != c.code {
			t.Errorf("%q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.args, r.code, c.code, r.stdout, r.stderr)
			continue
		}
		switch c.in {
		case "stdout":
			if !strings.Contains(r.stdout, c.want) {
				t.Errorf("%q: stdout does not hold %q:\n%s", c.args, c.want, r.stdout)
			}
		case "warning":
			if !strings.HasPrefix(r.stderr, "seglog: warning: "+c.want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("%q: stderr %q, want one warning %q", c.args, r.stderr, c.want)
			}
		case "error":
			wantLastErrorLine(t, r.stderr, c.want)
		}
	}
	if got, want := readValues(t, dir, "t", 0), numbered("v", 20); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("read: %q, want %q", got, want)
	}
	sameSnapshot(t, before, snapshot(t, dir))
	copyDir := filepath.Join(base, "copy")
	r := mustRun(t, dir, "", "copy-partition", "t", "0", "--to", copyDir, "--json")
	if !strings.Contains(r.stdout, `"indexes_rebuilt":1,`) {
		t.Errorf("copy-partition: want the index rebuilt in the copy:\n%s", r.stdout)
	}
	verifyClean(t, copyDir)
}
