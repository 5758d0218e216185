package logstore_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// crAppend appends records [from, to) to partition 0 of rtTopic.
func crAppend(t *testing.T, s *logstore.Store, from, to uint64) {
	t.Helper()
	w, err := s.OpenWriter(rtTopic, 0, logstore.WriterOptions{Sync: logstore.SyncNever, SegmentBytes: 600})
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < to; i++ {
		if _, err := w.Append(rtT0+int64(i)*1000, rtKey(i), rtValue(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// crInodes maps each file of a partition directory to its inode.
func crInodes(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]uint64{}
	for _, e := range entries {
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		inodes[e.Name()] = fi.Sys().(*syscall.Stat_t).Ino
	}
	return inodes
}

func TestForcedCopyKeepsWhatAnEarlierCopyHolds(t *testing.T) {
	s, dir, bases := rtWrite40(t)
	dst := logstore.Open(t.TempDir())
	ctCopy(t, s, dst, ctOpts())
	out := dst.PartitionDir(rtTopic, 0)
	before := crInodes(t, out)
	crAppend(t, s, 40, 60)

	opts := ctOpts()
	opts.Force = true
	rep := ctCopy(t, s, dst, opts)
	ctSameTree(t, dir, out)
	ctNoBuilds(t, filepath.Dir(out))
	after := crInodes(t, out)
	// The closed segments of the earlier copy are the same files; the one
	// that was active there, and those after it, are new.
	last := bases[len(bases)-1]
	for _, base := range bases {
		for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
			name := format.SegmentName(base, ext)
			if same := before[name] == after[name]; same != (base != last) {
				t.Errorf("%s: same file as before %v, want %v", name, same, base != last)
			}
		}
	}
	earlier := int64(0)
	for _, base := range bases {
		fi, err := os.Stat(filepath.Join(dir, format.SegmentName(base, format.LogExt)))
		if err != nil {
			t.Fatal(err)
		}
		if base != last {
			earlier += fi.Size()
		}
	}
	if rep.Kept != len(bases)-1 || rep.Rebuilt != "" || !rep.Replaced || rep.Next != 60 || rep.Records != 60 ||
		rep.ReusedBytes <= earlier || rep.ReusedBytes >= rep.Bytes {
		t.Errorf("report %+v; kept segments hold %d bytes", rep, earlier)
	}

	// Once more with nothing new: everything is kept, nothing copied.
	rep = ctCopy(t, s, dst, opts)
	if rep.Kept != rep.Segments || rep.ReusedBytes != rep.Bytes || rep.Rebuilt != "" {
		t.Errorf("copy of an unchanged source: %+v", rep)
	}
	ctSameTree(t, dir, out)
}

// crCopyDiverged copies partition 0 of a fresh rtWrite40 to a new data
// directory and changes the last byte of the copy's segment i (a
// record's value, its CRC not fixed up); it returns the source store and
// partition directory, the copy's store and partition directory, and the
// changed segment file's bytes.
func crCopyDiverged(t *testing.T, i int) (s *logstore.Store, dir string, dst *logstore.Store, out string, changed []byte) {
	t.Helper()
	s, dir, bases := rtWrite40(t)
	dst = logstore.Open(t.TempDir())
	ctCopy(t, s, dst, ctOpts())
	out = dst.PartitionDir(rtTopic, 0)
	log := filepath.Join(out, format.SegmentName(bases[i], format.LogExt))
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return s, dir, dst, out, b
}

func TestForcedCopyRebuildsADivergedDestination(t *testing.T) {
	s, dir, dst, out, _ := crCopyDiverged(t, 0)
	before := crInodes(t, out)
	crAppend(t, s, 40, 50)

	opts := ctOpts()
	opts.Force = true
	rep := ctCopy(t, s, dst, opts)
	ctSameTree(t, dir, out)
	if rep.Kept != 0 || rep.ReusedBytes != 0 || rep.Rebuilt == "" || rep.Next != 50 {
		t.Errorf("report %+v", rep)
	}
	for name, ino := range crInodes(t, out) {
		if before[name] == ino {
			t.Errorf("%s kept from a diverged destination", name)
		}
	}
}

func TestForcedCopyRebuildsOverOtherSettings(t *testing.T) {
	s, dir, _ := rtWrite40(t)
	dst := logstore.Open(t.TempDir())
	ctCopy(t, s, dst, ctOpts())
	settings := filepath.Join(dst.Dir(), rtTopic, ".seglog.json")
	if err := os.WriteFile(settings, []byte(`{"retention":"1h"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := ctOpts()
	opts.Force = true
	rep := ctCopy(t, s, dst, opts)
	ctSameTree(t, dir, dst.PartitionDir(rtTopic, 0))
	if rep.Kept != 0 || rep.Rebuilt == "" {
		t.Errorf("report %+v", rep)
	}
}
