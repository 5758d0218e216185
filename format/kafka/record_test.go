package kafka_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/seglog/seglog/format/kafka"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestParseRecord(t *testing.T) {
	b := encodeRecords(sampleRecords)
	var r kafka.Record
	for i, want := range sampleRecords {
		n, err := kafka.ParseRecord(b, &r)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if n != len(kmsgRecord(want)) {
			t.Fatalf("record %d: took %d bytes, want %d", i, n, len(kmsgRecord(want)))
		}
		if r.Attributes != want.Attributes || r.TimestampDelta != want.TimestampDelta64 || r.OffsetDelta != want.OffsetDelta ||
			!sameBytes(r.Key, want.Key) || !sameBytes(r.Value, want.Value) || len(r.Headers) != len(want.Headers) {
			t.Fatalf("record %d: got %+v", i, r)
		}
		for j, h := range want.Headers {
			got := r.Headers[j]
			if string(got.Key) != h.Key || got.Key == nil || !sameBytes(got.Value, h.Value) {
				t.Fatalf("record %d header %d: got %q=%v, want %q=%v", i, j, got.Key, got.Value, h.Key, h.Value)
			}
		}
		b = b[n:]
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes left", len(b))
	}
}

func TestParseRecordReusesHeaders(t *testing.T) {
	three := kmsgRecord(sampleRecords[2])
	two := kmsgRecord(kmsg.Record{Key: []byte("k"), Headers: []kmsg.Header{{Key: "a"}, {Key: "b", Value: []byte("c")}}})
	var r kafka.Record
	if _, err := kafka.ParseRecord(three, &r); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := kafka.ParseRecord(two, &r); err != nil {
			t.Fatal(err)
		}
		if _, err := kafka.ParseRecord(three, &r); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations a run, want 0", allocs)
	}
}

func TestParseRecordErrors(t *testing.T) {
	good := kmsgRecord(sampleRecords[2])
	// relength gives rec a length field of n, rec's own fields kept.
	relength := func(rec kmsg.Record, n int32) []byte {
		rec.Length = n
		return rec.AppendTo(nil)
	}
	real := int32(len(good) - 1)
	withKeyLen := func(n int32) []byte { // the key length of a record with key "k" and no value
		b := kmsgRecord(kmsg.Record{Key: []byte("k")})
		b[4] = byte(binary.AppendVarint(nil, int64(n))[0])
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		kind error
		says string
	}{
		{"empty", nil, kafka.ErrShort, ""},
		{"cut", good[:len(good)-1], kafka.ErrShort, "runs past"},
		{"negative length", binary.AppendVarint(nil, -5), kafka.ErrFormat, "record length -5"},
		{"length 0", []byte{0}, kafka.ErrFormat, "record length 0"},
		{"length over fields", append(relength(sampleRecords[2], real+1), 0), kafka.ErrFormat, "its fields take"},
		{"length under fields", relength(sampleRecords[2], real-1), kafka.ErrFormat, "runs past its length"},
		{"key length -2", withKeyLen(-2), kafka.ErrFormat, "key length -2"},
		{"key past end", withKeyLen(30), kafka.ErrFormat, "key length 30"},
		{"varint too long", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, kafka.ErrFormat, "longer than 5"},
		{"headers count negative", kmsgWithTail(binary.AppendVarint(nil, -1)), kafka.ErrFormat, "headers count -1"},
		{"too many headers", kmsgWithTail(binary.AppendVarint(nil, 3), 1, 2, 3), kafka.ErrFormat, "3 headers"},
		{"null header key", kmsgWithTail(binary.AppendVarint(nil, 1), 1, 0), kafka.ErrFormat, "header key length -1"},
	} {
		var r kafka.Record
		_, err := kafka.ParseRecord(tc.b, &r)
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err %v, want %v saying %q", tc.name, err, tc.kind, tc.says)
		}
	}
}

// kmsgWithTail is a record kmsg encodes with a null key and value, whose
// headers part (count and headers) is tail instead, its length adjusted.
func kmsgWithTail(tail []byte, more ...byte) []byte {
	body := kmsgRecord(kmsg.Record{})
	body = body[1 : len(body)-1] // length and the headers count off
	body = append(append(body, tail...), more...)
	return append(binary.AppendVarint(nil, int64(len(body))), body...)
}

func TestParseRecordNoAliasing(t *testing.T) {
	b := kmsgRecord(kmsg.Record{Key: []byte("ab"), Value: []byte("cd")})
	var r kafka.Record
	if _, err := kafka.ParseRecord(b, &r); err != nil {
		t.Fatal(err)
	}
	_ = append(r.Key, 'x') // must not write over the value
	if !bytes.Equal(r.Value, []byte("cd")) {
		t.Fatalf("appending to the key changed the value to %q", r.Value)
	}
}

// BenchmarkParseRecord decodes records of 100 B and 1 KiB values with
// a short key, as a batch of them holds them, reporting the time per
// record.
func BenchmarkParseRecord(b *testing.B) {
	for _, size := range []int{100, 1024} {
		b.Run(map[int]string{100: "100B", 1024: "1KiB"}[size], func(b *testing.B) {
			recs := make([]kmsg.Record, 100)
			for i := range recs {
				recs[i] = kmsg.Record{Key: []byte("key"), Value: bytes.Repeat([]byte("v"), size), OffsetDelta: int32(i), TimestampDelta64: int64(i)}
			}
			data := encodeRecords(recs)
			b.SetBytes(int64(len(data)))
			var r kafka.Record
			for b.Loop() {
				for rest := data; len(rest) > 0; {
					n, err := kafka.ParseRecord(rest, &r)
					if err != nil {
						b.Fatal(err)
					}
					rest = rest[n:]
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
		})
	}
}

// TestParseRecordDeltaWidths: records whose deltas take varints of one
// to nine bytes, either side of each width the fast path decodes inline
// (one to three bytes), decode to what they hold, on both paths. The fast
// path's zigzag works in int, which is 32 bits on 386 and arm: a 2³¹ ms
// timestamp delta (some 25 days) once gave -2³¹ there (run with
// GOARCH=386).
func TestParseRecordDeltaWidths(t *testing.T) {
	timestamps := []int64{0, 63, 64, -64, -65, 8191, 8192, -8193, 1<<20 - 1, 1 << 20, -(1 << 20) - 1, 1 << 31, -(1 << 31) - 1, 1 << 40, -(1 << 50)}
	offsets := []int32{0, 63, 64, 8191, 8192, 1<<20 - 1, 1 << 20, 1<<31 - 1}
	for _, ts := range timestamps {
		for _, off := range offsets {
			b := kmsgRecord(kmsg.Record{TimestampDelta64: ts, OffsetDelta: off, Key: []byte("k"), Value: []byte("v")})
			var fast, careful kafka.Record
			if _, err := kafka.ParseRecord(b, &fast); err != nil {
				t.Fatalf("deltas %d, %d: %v", ts, off, err)
			}
			if _, err := kafka.ParseRecordCareful(b, &careful); err != nil {
				t.Fatalf("deltas %d, %d: the careful decoder: %v", ts, off, err)
			}
			if fast.TimestampDelta != ts || fast.OffsetDelta != off || careful.TimestampDelta != ts || careful.OffsetDelta != off ||
				string(fast.Key) != "k" || string(fast.Value) != "v" {
				t.Errorf("deltas %d, %d: ParseRecord gives %+v, the careful decoder %+v", ts, off, fast, careful)
			}
		}
	}
}
