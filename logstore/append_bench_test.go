package logstore

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkAppend is the write path of `seglog append --sync never`:
// records encoded into the writer's buffers and written in large writes,
// index entries for every record (the default interval of 1), rolls at
// the default segment size.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{100, 1024} {
		b.Run(fmt.Sprintf("value=%d", size), func(b *testing.B) {
			s := Open(b.TempDir())
			if err := s.CreateTopic("t", 1, Settings{}); err != nil {
				b.Fatal(err)
			}
			w, err := s.OpenWriter("t", 0, WriterOptions{Sync: SyncNever})
			if err != nil {
				b.Fatal(err)
			}
			value := make([]byte, size-1)
			ts := time.Now().UnixNano()
			b.SetBytes(int64(len(value)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := w.Append(ts, nil, value); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
