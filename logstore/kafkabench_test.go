package logstore_test

import (
	"bytes"
	"testing"
)

// BenchmarkKafkaRecords reads a segment of uncompressed batches of 100
// records through Records, reporting the time per record.
func BenchmarkKafkaRecords(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"100B", 100}, {"1KiB", 1024}} {
		b.Run(size.name, func(b *testing.B) {
			l := newKPLog(b)
			l.roll(4096)
			value := bytes.Repeat([]byte("v"), size.bytes)
			const batches, perBatch = 200, 100
			for range batches {
				recs := make([]kpRecord, perBatch)
				for i := range recs {
					recs[i] = kpRecord{key: []byte("key"), value: value}
				}
				l.add(kpBatch{pid: -1, recs: recs}, false)
			}
			p := l.write()
			b.SetBytes(int64(len(l.segs[0].log)))
			b.ResetTimer()
			for b.Loop() {
				it, err := p.Records(0)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for it.Next() {
					n++
				}
				if it.Err() != nil || n != batches*perBatch {
					b.Fatalf("%d records, %v", n, it.Err())
				}
				it.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batches*perBatch), "ns/record")
		})
	}
}
