package logstore

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRecoverLeftovers(t *testing.T) {
	s := recStore(t, 2)
	segs := recStandard(t, s)
	dir := s.PartitionDir("t", 0)
	qdir := filepath.Join(s.Dir(), QuarantineDir, "t", "0")
	if err := os.MkdirAll(qdir, 0o755); err != nil {
		t.Fatal(err)
	}
	recWrite(t, filepath.Join(s.PartitionDir("t", 1), recName(0, ".log")), nil)
	left := []string{
		// An interrupted retention delete of a segment before 0.
		filepath.Join(dir, "00000000000000000000.log.deleted"),
		filepath.Join(dir, "00000000000000000000.index.deleted"),
		// Temporary files: an index being rebuilt, gaps being replaced.
		filepath.Join(dir, recName(10, ".index.tmp")),
		filepath.Join(dir, GapsFile+".tmp"),
		filepath.Join(dir, recName(12, ".log.tmp")),
		// An index file without its .log.
		filepath.Join(dir, recName(30, ".index")),
		filepath.Join(dir, recName(30, ".timeindex")),
		// An interrupted quarantine copy, and one without its note.
		filepath.Join(qdir, "x.log.1-2.3.bin.tmp"),
		filepath.Join(qdir, "y.log.1-2.3.bin"),
		// A settings file being replaced, and a copy's temporary directory.
		filepath.Join(s.Dir(), "t", ".seglog.json.tmp"),
		filepath.Join(s.Dir(), "t", ".copy-0-abc.tmp", "0", recName(0, ".log")),
		// A create of topic t that lost the race, and an old create of a
		// topic that never came to be.
		filepath.Join(s.Dir(), ".create-t-0123456789ab.tmp", "0", recName(0, ".log")),
		filepath.Join(s.Dir(), ".create-gone-0123456789ab.tmp", "0", recName(0, ".log")),
	}
	kept := []string{
		filepath.Join(dir, "notes.txt"),
		filepath.Join(dir, GapsFile),
		filepath.Join(qdir, "z.log.1-2.3.bin"),
		filepath.Join(qdir, "z.log.1-2.3.json"),
		filepath.Join(s.Dir(), ".create-young-0123456789ab.tmp", "0", recName(0, ".log")),
		filepath.Join(s.Dir(), ".groups", "g", "x.tmp"),
	}
	for _, p := range append(slices.Clone(left), kept...) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		recWrite(t, p, []byte("x"))
	}
	recWrite(t, filepath.Join(dir, GapsFile), []byte(`{"gaps":[]}`))
	recWrite(t, filepath.Join(qdir, "z.log.1-2.3.json"), []byte(`{"data":"z.log.1-2.3.bin"}`))
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(s.Dir(), ".create-gone-0123456789ab.tmp"), old, old); err != nil {
		t.Fatal(err)
	}

	// A dry run lists them and removes nothing.
	before := recSnapshot(t, s.Dir())
	dry, err := s.RecoverTopic("t", -1, RecoverOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	dataDry, err := s.RecoverDataDir(RecoverOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	recSameSnapshot(t, before, recSnapshot(t, s.Dir()))

	tr, err := s.RecoverTopic("t", -1, RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dataLeft, err := s.RecoverDataDir(RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Failed) > 0 || len(tr.Partitions) != 2 {
		t.Fatalf("recover: %+v", tr)
	}
	var listed, listedDry []string
	collect := func(dst *[]string, tr TopicRecovery, data []RecoverLeftover) {
		all := slices.Concat(tr.Leftovers, data)
		for _, p := range tr.Partitions {
			all = append(all, p.Leftovers...)
		}
		for _, l := range all {
			if !l.Kept {
				*dst = append(*dst, l.Path)
			}
		}
		slices.Sort(*dst)
		*dst = slices.Compact(*dst)
	}
	collect(&listed, tr, dataLeft)
	collect(&listedDry, dry, dataDry)
	var want []string
	for _, p := range left {
		// Directories are listed themselves, not their contents.
		for filepath.Base(filepath.Dir(p)) == "0" && strings.HasSuffix(p, ".log") && strings.Contains(p, ".tmp/") {
			p = filepath.Dir(filepath.Dir(p))
		}
		want = append(want, p)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(listed, want) {
		t.Errorf("removed\n  %q\nwant\n  %q", listed, want)
	}
	if !slices.Equal(listedDry, want) {
		t.Errorf("dry run listed\n  %q\nwant\n  %q", listedDry, want)
	}
	for _, p := range want {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s still there", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	var young bool
	for _, l := range dataLeft {
		young = young || l.Kept && strings.Contains(l.Path, ".create-young-")
	}
	if !young {
		t.Errorf("a young create directory of a missing topic is not listed as kept: %+v", dataLeft)
	}
	// The segments are untouched.
	for base, f := range segs {
		if got := recRead(t, filepath.Join(dir, recName(base, ".log"))); !bytes.Equal(got, f.log) {
			t.Errorf("segment %d changed", base)
		}
	}
	recNoChange(t, s, RecoverOptions{})
}
