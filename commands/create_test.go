package commands

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreateIfNotExistsMismatch: --if-not-exists accepts an existing topic
// only when everything the command line gives matches it: a different
// partition count or setting is an error naming both values, and the
// topic is left as it is.
func TestCreateIfNotExistsMismatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "orders", "--retention", "7d")
	before := snapshot(t, dir)
	for _, tc := range []struct {
		name  string
		args  []string
		wants []string
	}{
		{"partitions", []string{"--partitions", "3"}, []string{"orders", "--partitions 3", "it has 1"}},
		{"segment bytes over the default", []string{"--segment-bytes", "256MiB"}, []string{"--segment-bytes 256MiB", "1GiB", "default"}},
		{"retention", []string{"--retention", "1d"}, []string{"--retention 1d", "it has 7d"}},
		{"retention bytes unset", []string{"--retention-bytes", "1GB"}, []string{"--retention-bytes 1000000000 bytes", "none"}},
		{"two at once", []string{"--partitions", "2", "--index-interval", "4"}, []string{"--partitions 2", "--index-interval 4", "it has 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runIn(t, dir, nil, append([]string{"create", "orders", "--if-not-exists"}, tc.args...)...)
			if r.code != exitError {
				t.Fatalf("exit %d, want 1; stderr %q", r.code, r.stderr)
			}
			wantOneErrorLine(t, r.stderr, tc.wants...)
		})
	}
	for _, args := range [][]string{nil, {"--partitions", "1"}, {"--retention", "168h"}, {"--segment-bytes", "1GiB", "--roll-after", "7d"}} {
		if r := runIn(t, dir, nil, append([]string{"create", "orders", "--if-not-exists"}, args...)...); r.code != exitOK || r.stderr != "" {
			t.Errorf("create --if-not-exists %q, which the topic matches: exit %d, stderr %q; want 0 and nothing", args, r.code, r.stderr)
		}
	}
	sameSnapshot(t, before, snapshot(t, dir))
}

// TestAppendCreateChecksFirst: append --create refuses a command line it
// could not carry out before it creates anything, and --partitions must
// match an existing topic.
func TestAppendCreateChecksFirst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"append", "new", "--create", "-p", "3"}, []string{"-p 3", "1 partition", "--partitions 4"}},
		{[]string{"append", "new", "--create", "--partitions", "2", "--partition", "2"}, []string{"--partition 2", "2 partitions", "--partitions 3"}},
	} {
		r := runIn(t, dir, strings.NewReader("a\n"), tc.args...)
		if r.code != exitUsage {
			t.Errorf("%q: exit %d, want 2; stderr %q", tc.args, r.code, r.stderr)
		}
		wantOneErrorLine(t, r.stderr, tc.wants...)
		if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%q failed but left the topic behind (%v)", tc.args, err)
		}
	}
	mustRun(t, dir, "a\n", "append", "new", "--create", "--partitions", "4", "-p", "3")
	if got := readValues(t, dir, "new", 3); !equalStrings(got, []string{"a"}) {
		t.Errorf("partition 3 of the new topic holds %q", got)
	}

	mustRun(t, dir, "", "create", "one")
	before := snapshot(t, dir)
	r := runIn(t, dir, strings.NewReader("b\n"), "append", "one", "--create", "--partitions", "3")
	if r.code != exitError {
		t.Errorf("append --create --partitions 3 to a 1-partition topic: exit %d, want 1; stderr %q", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "one", "--partitions 3", "it has 1")
	sameSnapshot(t, before, snapshot(t, dir))
	// The count it has is fine.
	mustRun(t, dir, "b\n", "append", "one", "--create", "--partitions", "1")
}

// TestImportCreateChecksFirst: import --create refuses, before creating
// anything, a partition the topic it would make does not have, and several
// partitions without --partition.
func TestImportCreateChecksFirst(t *testing.T) {
	src, _ := simpleFixture(t, "clean")
	dir := filepath.Join(t.TempDir(), "data")
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"import", src, "new", "--create", "--partition", "2"}, []string{"--partition 2", "1 partition", "--partitions 3"}},
		{[]string{"import", src, "new", "--create", "--partitions", "3"}, []string{"3 partitions", "--partition"}},
	} {
		r := runIn(t, dir, nil, tc.args...)
		if r.code != exitUsage {
			t.Errorf("%q: exit %d, want 2; stderr %q", tc.args, r.code, r.stderr)
		}
		wantOneErrorLine(t, r.stderr, tc.wants...)
		if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%q failed but left the topic behind (%v)", tc.args, err)
		}
	}
	mustRun(t, dir, "", "create", "one")
	before := snapshot(t, dir)
	r := runIn(t, dir, nil, "import", src, "one", "--create", "--partitions", "2", "--partition", "1")
	if r.code != exitError {
		t.Errorf("import --create --partitions 2 into a 1-partition topic: exit %d, want 1; stderr %q", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "one", "--partitions 2", "it has 1")
	sameSnapshot(t, before, snapshot(t, dir))
}
