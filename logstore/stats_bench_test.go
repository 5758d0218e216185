package logstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// BenchmarkStats10000Segments times what describe does per partition,
// OpenPartitionDir + Stats, on a partition of 10 000 small segments (3
// records each, every record indexed): a few reads per segment, so it must
// stay far below a second.
func BenchmarkStats10000Segments(b *testing.B) {
	const segments, perSegment = 10000, 3
	dir := b.TempDir()
	// Segment files are written directly: through a Writer, 10 000 rolls
	// with their fsyncs would take longer than the benchmark.
	var log, idx, tidx []byte
	for s := range uint64(segments) {
		base := s * perSegment
		log, idx, tidx = log[:0], idx[:0], tidx[:0]
		for o := base; o < base+perSegment; o++ {
			ts := stsTS(o)
			idx = format.AppendIndexEntry(idx, format.IndexEntry{Offset: o, Pos: int64(len(log))})
			tidx = format.AppendTimeIndexEntry(tidx, format.TimeIndexEntry{Offset: o, Timestamp: ts})
			log = format.AppendRecord(log, &format.Record{Offset: o, Timestamp: ts, Key: []byte("k"), Value: []byte("value-0123456789")})
		}
		for ext, data := range map[string][]byte{format.LogExt: log, format.IndexExt: idx, format.TimeIndexExt: tidx} {
			if err := os.WriteFile(filepath.Join(dir, format.SegmentName(base, ext)), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		p, err := logstore.OpenPartitionDir(dir, "bench/0")
		if err != nil {
			b.Fatal(err)
		}
		st, err := p.Stats()
		if err != nil {
			b.Fatal(err)
		}
		if st.Segments != segments || st.Records != segments*perSegment || st.Next != segments*perSegment || st.Newest != stsTS(segments*perSegment-1) {
			b.Fatalf("Stats %+v, want %d records in %d segments", st, segments*perSegment, segments)
		}
	}
}
