package logstore_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seglog/seglog/logstore"
)

// A .index entry whose position is near MaxInt64 is a lie like any other:
// reading by offset falls back to a scan instead of overflowing.
func TestIndexPositionNearMaxInt64(t *testing.T) {
	dir := t.TempDir()
	segs := []swSegment{tsSeg(0, 10, 1, func(o uint64) int64 { return tsT0 + int64(o) })}
	swWritePartition(t, dir, segs...)
	for _, pos := range []int64{math.MaxInt64, math.MaxInt64 - 5, math.MaxInt64 - 27} {
		swSetEntry(t, filepath.Join(dir, swName(0, ".index")), 5, 5, pos)
		p := tsOpen(t, dir)
		it, err := p.Read(5)
		if err != nil {
			t.Fatal(err)
		}
		if !it.Next() || it.Record().Offset != 5 {
			t.Fatalf("position %d: Read(5) did not return offset 5: %v", pos, it.Err())
		}
		it.Close()
	}
}

// A partition whose last record has offset 2⁶⁴−1 refuses appends, and the
// refusal writes nothing: not even the index files a writer makes for a
// segment that lacks them.
func TestWriterFullPartitionWritesNothing(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "t", "0")
	base := uint64(math.MaxUint64 - 1)
	swWritePartition(t, dir, swSegment{Base: base, Records: []swRecord{vfRec(base), vfRec(base + 1)}})
	for _, ext := range []string{".index", ".timeindex"} {
		if err := os.Remove(filepath.Join(dir, swName(base, ext))); err != nil {
			t.Fatal(err)
		}
	}
	before := vfSnapshot(t, data)
	w, err := logstore.Open(data).OpenWriter("t", 0, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err == nil {
		w.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "partition t/0 is full: its last record has offset 18446744073709551615") {
		t.Errorf("OpenWriter: %v, want a refusal: the partition is full", err)
	}
	vfSameSnapshot(t, before, vfSnapshot(t, data))
}
