package format_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/seglog/seglog/format"
)

// valueSizes are the record sizes the end-to-end benchmarks use.
var valueSizes = []int{100, 1024, 64 << 10}

// BenchmarkChecksum is the CRC a record carries, over its timestamp, key
// and value: on reads it is most of the CPU time per record.
func BenchmarkChecksum(b *testing.B) {
	for _, n := range valueSizes {
		value := bytes.Repeat([]byte("v"), n-1)
		b.Run(fmt.Sprintf("value=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(value)))
			for b.Loop() {
				format.Checksum(specExampleTS, nil, value)
			}
		})
	}
}

// BenchmarkVerify is what a read does per record: decode the header and
// check the body against it.
func BenchmarkVerify(b *testing.B) {
	for _, n := range valueSizes {
		enc := format.AppendRecord(nil, &format.Record{Offset: 7, Timestamp: specExampleTS, Value: bytes.Repeat([]byte("v"), n-1)})
		b.Run(fmt.Sprintf("value=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(enc)))
			b.ReportAllocs()
			for b.Loop() {
				h, err := format.ParseHeader(enc)
				if err == nil {
					err = h.Verify(enc)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
