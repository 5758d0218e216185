package commands

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// BenchmarkRecordWriter prints records as `read --format F > /dev/null`
// does, without the reading.
func BenchmarkRecordWriter(b *testing.B) {
	for _, name := range []string{"value", "raw", "json"} {
		f, _ := outputFormats.lookup(name)
		for _, size := range []int{100, 1024} {
			r := logstore.Record{Record: format.Record{Offset: 123456, Timestamp: 1700000000123456789, Value: bytes.Repeat([]byte("v"), size-1)}}
			b.Run(fmt.Sprintf("%s/value=%d", name, size), func(b *testing.B) {
				w := recordWriter{out: bufio.NewWriterSize(io.Discard, 64<<10), format: f, topic: "t"}
				b.SetBytes(int64(len(r.Value)))
				b.ReportAllocs()
				for b.Loop() {
					if err := w.write(&r); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkFramer cuts 128 KiB chunks of newline-terminated lines into
// messages, as `append` does with its stdin.
func BenchmarkFramer(b *testing.B) {
	for _, size := range []int{100, 1024} {
		line := append(bytes.Repeat([]byte("l"), size-1), '\n')
		chunk := bytes.Repeat(line, (128<<10)/size+1)[:128<<10] // lines span chunks
		b.Run(fmt.Sprintf("line=%d", size), func(b *testing.B) {
			f := framer{delim: []byte("\n"), stripCR: true, max: 1 << 20}
			var n int
			emit := func(msg []byte, _ int64) error { n += len(msg); return nil }
			b.SetBytes(int64(len(chunk)))
			b.ReportAllocs()
			for b.Loop() {
				if err := f.feed(chunk, emit); err != nil {
					b.Fatal(err)
				}
			}
			if n == 0 {
				b.Fatal("no messages")
			}
		})
	}
}
