package logstore_test

import (
	"path/filepath"
	"testing"

	"github.com/seglog/seglog/logstore"
)

// NewestFrom counts records, not offsets: offsets skipped inside a segment
// and a gap between segments reach it further back.
func TestNewestFrom(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t", "0")
	holes := vfSeg(10, 20, 1)
	holes.Records = append(holes.Records[:3], holes.Records[6:]...) // 10..12, 16..19
	swWritePartition(t, dir, vfSeg(0, 5, 1), holes, vfSeg(30, 33, 1))
	p, err := logstore.OpenPartitionDir(dir, "t/0")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, c := range []struct{ n, below, want uint64 }{
		{0, 33, 33},
		{1, 33, 32},
		{3, 33, 30},
		{4, 33, 19},  // across the gap 20..29
		{7, 33, 16},  // the first record after the hole 13..15
		{8, 33, 12},  // before it
		{10, 33, 10}, // the segment's first
		{11, 33, 4},
		{15, 33, 0},
		{100, 33, 0},
		{2, 31, 19}, // below 31: 30, and 19
		{2, 17, 12}, // below 17: 16, and 12
	} {
		if got, err := p.NewestFrom(c.n, c.below); err != nil || got != c.want {
			t.Errorf("NewestFrom(%d, %d) = %d, %v; want %d", c.n, c.below, got, err, c.want)
		}
	}
}
