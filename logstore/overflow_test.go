package logstore_test

import (
	"math"
	"path/filepath"
	"testing"
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
