package logstore

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkScan reads a partition of 100-byte records from start to end,
// as `seglog read` does.
func BenchmarkScan(b *testing.B) {
	for _, size := range []int{100, 1024} {
		b.Run(fmt.Sprintf("value=%d", size), func(b *testing.B) {
			dir := b.TempDir()
			s := Open(dir)
			if err := s.CreateTopic("t", 1, Settings{}); err != nil {
				b.Fatal(err)
			}
			w, err := s.OpenWriter("t", 0, WriterOptions{Sync: SyncNever})
			if err != nil {
				b.Fatal(err)
			}
			const n = 200_000
			value := make([]byte, size)
			ts := time.Now().UnixNano()
			for i := 0; i < n; i++ {
				if _, err := w.Append(ts, nil, value); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			p, err := s.OpenPartition("t", 0)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(n * size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				it, err := p.Read(0)
				if err != nil {
					b.Fatal(err)
				}
				got := 0
				for it.Next() {
					got += len(it.Record().Value)
				}
				if it.Err() != nil || got != n*size {
					b.Fatal(it.Err(), got)
				}
				it.Close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
