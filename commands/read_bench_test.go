package commands

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// BenchmarkRead runs `read` over a partition of small records into a
// discarding stdout: the scan, the loop over the records and the output.
func BenchmarkRead(b *testing.B) {
	const records = 100_000
	dir := b.TempDir()
	var in strings.Builder
	for i := range records {
		fmt.Fprintf(&in, "record number %d\n", i)
	}
	mustRun(b, dir, "", "create", "t")
	mustRun(b, dir, in.String(), "append", "t")
	for _, f := range []string{"value", "json"} {
		b.Run(f, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if code := Run([]string{"seglog", "-d", dir, "read", "t", "--format", f}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
					b.Fatalf("read: exit %d", code)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/records, "ns/record")
		})
	}
}
