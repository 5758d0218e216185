package commands

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// goldenDir holds the golden partitions (logstore/golden_test.go writes
// them, logstore/agreement_test.go checks the engine's views of them).
const goldenDir = "../testdata/golden"

// The commands that print "the last N" agree with read on every golden
// partition: tail -n N and read --offset -N print the last N records that
// read --skip-corrupt prints, wherever offsets are missing (gaps between
// segments, records lost to damage, holes inside a segment). A full
// partition, where tail has no offset to follow from, is refused.
func TestLastNAgreesWithRead(t *testing.T) {
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "t"), 0o755); err != nil {
				t.Fatal(err)
			}
			part := copyTree(t, filepath.Join(goldenDir, e.Name()))
			if err := os.Rename(part, filepath.Join(dir, "t", "0")); err != nil {
				t.Fatal(err)
			}
			all := offsetsOf(t, mustRun(t, dir, "", "read", "t", "--skip-corrupt", "--template", `%o\n`).stdout)
			full := len(all) > 0 && all[len(all)-1] == 1<<64-1
			for _, n := range []int{1, 2, 3, len(all) / 2, len(all), len(all) + 2} {
				want := all[max(len(all)-n, 0):]
				args := []string{"--skip-corrupt", "--template", `%o\n`}
				read := mustRun(t, dir, "", append([]string{"read", "t", "--offset", "-" + strconv.Itoa(n)}, args...)...)
				if got := offsetsOf(t, read.stdout); !slices.Equal(got, want) {
					t.Errorf("read --offset -%d prints %v, want %v", n, got, want)
				}
				tail := runIn(t, dir, nil, append([]string{"tail", "t", "-n", strconv.Itoa(n)}, args...)...)
				if full {
					if tail.code != 1 {
						t.Errorf("tail -n %d of a full partition: exit %d, want 1", n, tail.code)
					}
					wantOneErrorLine(t, tail.stderr, "is full", "seglog read")
					continue
				}
				if got := offsetsOf(t, tail.stdout); tail.code != 0 || !slices.Equal(got, want) {
					t.Errorf("tail -n %d prints %v (exit %d, stderr %q), want %v", n, got, tail.code, tail.stderr, want)
				}
			}
		})
	}
}

// offsetsOf parses one offset a line.
func offsetsOf(t *testing.T, out string) []uint64 {
	t.Helper()
	var offs []uint64
	for _, l := range strings.Fields(out) {
		o, err := strconv.ParseUint(l, 10, 64)
		if err != nil {
			t.Fatalf("not an offset: %q", l)
		}
		offs = append(offs, o)
	}
	return offs
}

// goldenData copies golden partition name into a new data directory as
// partition 0 of topic t.
func goldenData(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "t"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(copyTree(t, filepath.Join(goldenDir, name)), filepath.Join(dir, "t", "0")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// An active segment whose records all lie below where the segment before
// ends (offsets 1..3 after 0..4) holds none of the partition's next
// offsets: describe gives 5, and append refuses rather than write offset
// 4 a second time.
func TestAppendRefusesActiveSegmentOverlapped(t *testing.T) {
	dir := goldenData(t, "overlap-entire-active")
	before := snapshot(t, dir)
	r := runIn(t, dir, strings.NewReader("x\n"), "append", "t")
	if r.code != 1 {
		t.Fatalf("append: exit %d, want 1; stderr %q", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "00000000000000000001.log", "expected offset 5", "the segment before goes on to offset 4", "seglog recover t")
	sameSnapshot(t, before, snapshot(t, dir))
	d := mustRun(t, dir, "", "describe", "t", "--json")
	if !strings.Contains(d.stdout, `"next_offset": 5,`) {
		t.Errorf("describe: %s, want next offset 5", d.stdout)
	}
}

// dump-index --verify judges a segment's entries against where the
// segment before ends, as verify-crc does: the entries naming records
// that overlap it are not confirmed (exit 3), in words of seglog's own.
func TestDumpIndexJudgesOverlap(t *testing.T) {
	dir := goldenData(t, "overlap")
	r := runIn(t, dir, nil, "dump-index", "--verify", "--json", filepath.Join(dir, "t", "0", "00000000000000000003.index"))
	if r.code != 3 {
		t.Fatalf("dump-index --verify: exit %d, want 3; stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{`"verdict":"unchecked"`, `"verdict":"ok"`} {
		if strings.Count(r.stdout, want) != 2 {
			t.Errorf("want two entries %s:\n%s", want, r.stdout)
		}
	}
	r = runIn(t, dir, nil, "dump-index", "--verify", filepath.Join(dir, "t", "0", "00000000000000000003.index"))
	if r.code != 3 || strings.Contains(r.stdout, "segfile") || !strings.Contains(r.stdout, "(offset below the end of the previous segment)") {
		t.Errorf("dump-index --verify: exit %d, stdout:\n%s", r.code, r.stdout)
	}
}
