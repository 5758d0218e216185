package logstore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestQuarantineEntries(t *testing.T) {
	s := recStore(t, 2)
	segs := recStandard(t, s)
	dir := s.PartitionDir("t", 0)
	torn := append(bytes.Clone(segs[20].log), 9, 9, 9, 9)
	recWrite(t, filepath.Join(dir, recName(20, ".log")), torn)
	recWrite(t, filepath.Join(s.PartitionDir("t", 1), recName(0, ".log")), []byte{1})
	before := time.Now().UTC()
	if _, err := s.RecoverTopic("t", -1, RecoverOptions{}); err != nil {
		t.Fatal(err)
	}
	entries, err := s.QuarantineEntries("", -1)
	if err != nil || len(entries) != 2 {
		t.Fatalf("%+v, %v", entries, err)
	}
	e := entries[0]
	if e.Partition != 0 {
		e = entries[1]
	}
	if e.Topic != "t" || e.Source != filepath.Join(dir, recName(20, ".log")) || e.Pos != int64(len(segs[20].log)) || e.Length != 4 ||
		e.DataBytes != 4 || e.ExpectedOffset != 25 || e.Time.Before(before.Add(-time.Second)) || !strings.HasSuffix(e.Data, ".bin") {
		t.Errorf("entry %+v", e)
	}
	if only, _ := s.QuarantineEntries("t", 1); len(only) != 1 || only[0].Partition != 1 {
		t.Errorf("partition 1: %+v", only)
	}
	if err := s.PurgeQuarantine(e); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{e.Data, e.Note} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s still there", p)
		}
	}
	if left, _ := s.QuarantineEntries("", -1); len(left) != 1 {
		t.Errorf("after purge: %+v", left)
	}
}
