package segfile

import (
	"testing"

	"github.com/seglog/seglog/format"
)

// BenchmarkIndexCheck is the cost an entry of checking a dense .index
// (an entry every record, as a small index interval leaves it) against a
// walk of its records, as verify-crc does: the check's own work, the
// records' bytes not read.
func BenchmarkIndexCheck(b *testing.B) {
	const n = 1 << 16
	var idx []byte
	for i := range int64(n) {
		idx = format.AppendIndexEntry(idx, format.IndexEntry{Offset: uint64(i), Pos: i * 100})
	}
	f := &memFile{name: "x.index", b: idx}
	for b.Loop() {
		c := NewIndexCheck(OffsetIndex, f, int64(len(idx)), 0, n*100, n, 0, -1, nil)
		c.EmitOnlyWrong()
		for i := range int64(n) {
			if uint64(i*100+100) > c.Key() {
				c.OnRecord(i*100, i*100+100, uint64(i), i)
			}
		}
		if c.Count(VerdictOK) != n {
			b.Fatalf("%d entries OK, want %d", c.Count(VerdictOK), n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entry")
}
