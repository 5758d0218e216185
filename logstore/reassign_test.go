package logstore_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seglog/seglog/logstore"
)

func TestComparePartitions(t *testing.T) {
	s, dir, _ := rtWrite40(t)
	dst := logstore.Open(t.TempDir())
	ctCopy(t, s, dst, ctOpts())
	out := dst.PartitionDir(rtTopic, 0)
	c, err := logstore.ComparePartitions(dir, out, nil)
	if err != nil || !c.Same() || c.Records != 40 {
		t.Fatalf("a copy: %+v, %v", c, err)
	}
	crAppend(t, s, 40, 45)
	if c, err = logstore.ComparePartitions(dir, out, nil); err != nil || c.Same() || c.SourceAhead != 5 || c.Records != 40 {
		t.Errorf("a grown source: %+v, %v", c, err)
	}
	if c, err = logstore.ComparePartitions(out, dir, nil); err != nil || c.DestAhead != 5 {
		t.Errorf("the other way round: %+v, %v", c, err)
	}
	// Another partition's records: the first that is not alike is named.
	other := logstore.Open(t.TempDir())
	if err := other.CreateTopic(rtTopic, 1, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	w, err := other.OpenWriter(rtTopic, 0, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < 3; i++ {
		value := rtValue(i)
		if i == 2 {
			value = []byte("another value")
		}
		if _, err := w.Append(rtT0+int64(i)*1000, rtKey(i), value); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c, err = logstore.ComparePartitions(dir, other.PartitionDir(rtTopic, 0), nil)
	if err != nil || c.Differs != "offset 2: the value differs" || c.Records != 2 {
		t.Errorf("another partition: %+v, %v", c, err)
	}
}

func TestForcedCopyOnlyOntoCopyRefusesAnotherPartition(t *testing.T) {
	s, _, dst, out, b := crCopyDiverged(t, 1)
	before := readTree(t, out)
	opts := ctOpts()
	opts.Force, opts.OnlyOntoCopy = true, true
	_, err := s.CopyPartition(rtTopic, 0, dst, opts)
	if !errors.Is(err, logstore.ErrNotACopy) || !strings.Contains(err.Error(), "differs from the source's at byte") {
		t.Fatalf("copy onto a destination that differs: %v", err)
	}
	if after := readTree(t, out); len(after) != len(before) || !slices.ContainsFunc(slices.Collect(maps.Values(after)), func(v []byte) bool { return string(v) == string(b) }) {
		t.Errorf("the refused copy changed the destination")
	}
	ctNoBuilds(t, filepath.Dir(out))
}

func TestRemovePartition(t *testing.T) {
	s, dir, _ := rtWrite40(t)
	// A writer holds it: refused, naming the lock; nothing removed.
	w, err := s.OpenWriter(rtTopic, 0, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	var locked *logstore.LockedError
	if err := s.RemovePartition(rtTopic, 0, logstore.RemoveOptions{LockWait: 1}); !errors.As(err, &locked) {
		t.Fatalf("removal under a writer: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The check says no: nothing removed.
	no := errors.New("not alike")
	if err := s.RemovePartition(rtTopic, 0, logstore.RemoveOptions{Check: func() error { return no }}); !errors.Is(err, no) {
		t.Fatalf("removal the check refused: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("after refused removals: %v", err)
	}
	if err := s.RemovePartition(rtTopic, 0, logstore.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	// Its last partition gone, the topic goes too.
	if _, err := os.Stat(filepath.Dir(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the topic after its last partition was removed: %v", err)
	}
	if err := s.RemovePartition(rtTopic, 0, logstore.RemoveOptions{}); !errors.Is(err, logstore.ErrPartitionNotFound) {
		t.Errorf("removing it again: %v", err)
	}
}
