package segfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/seglog/seglog/format/kafka"
)

// kafkaBenchFile writes a .log of uncompressed batches of about 16 KiB
// (the Java producer's default batch.size) holding records with values
// of valueLen bytes, about 32 MiB in all; it returns the path and the
// number of records.
func kafkaBenchFile(b *testing.B, valueLen int) (string, int) {
	b.Helper()
	perBatch := max(1, 16<<10/(valueLen+8))
	value := make([]byte, valueLen)
	var data []byte
	records := 0
	for base := int64(0); len(data) < 32<<20; base += int64(perBatch) {
		recs := make([]kmsg.Record, perBatch)
		for i := range recs {
			recs[i] = kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i), Value: value}
		}
		data = append(data, kBatch(b, base, kafka.CodecNone, recs)...)
		records += perBatch
	}
	path := filepath.Join(b.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return path, records
}

// BenchmarkKafkaScan scans and decodes every record of the file; beside
// it, BenchmarkKafkaRawRead reads the same bytes as cat does.
func BenchmarkKafkaScan(b *testing.B) {
	for _, tc := range []struct {
		name     string
		valueLen int
	}{{"100B", 100}, {"1KiB", 1 << 10}} {
		path, records := kafkaBenchFile(b, tc.valueLen)
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		fi, err := f.Stat()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			recs := NewKafkaRecords(0)
			defer recs.Close()
			buf := make([]byte, 0, kafkaChunk)
			b.SetBytes(fi.Size())
			for b.Loop() {
				s := NewKafkaScanner(f, fi.Size(), KafkaOptions{Buffer: buf})
				n, sum := 0, 0
				for s.Next() {
					recs.Reset(s.Batch())
					for recs.Next() {
						n++
						sum += len(recs.Record().Value)
					}
					if recs.Err() != nil {
						b.Fatal(recs.Err())
					}
				}
				if s.Damage() != nil || s.Err() != nil || n != records || sum != records*tc.valueLen {
					b.Fatalf("%d records of %d, %v %v", n, records, s.Damage(), s.Err())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*records), "ns/record")
		})
		b.Run(tc.name+"/raw-read", func(b *testing.B) {
			buf := make([]byte, kafkaChunk)
			b.SetBytes(fi.Size())
			for b.Loop() {
				for pos := int64(0); pos < fi.Size(); pos += int64(len(buf)) {
					if _, err := f.ReadAt(buf, pos); err != nil && pos+int64(len(buf)) < fi.Size() {
						b.Fatal(err)
					}
				}
			}
		})
		f.Close()
	}
}
