package segfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/seglog/seglog/format/kafka"
)

// readBatch scans the single entry b and reads its records with c.
func readBatch(t *testing.T, c *KafkaRecords, b []byte) ([]kafka.Record, []int64, []int64, error) {
	t.Helper()
	s := kafkaScan(b, KafkaOptions{})
	if !s.Next() {
		t.Fatalf("the batch does not scan: %v %v", s.Damage(), s.Err())
	}
	c.Reset(s.Batch())
	var recs []kafka.Record
	var offs, tss []int64
	for c.Next() {
		r := *c.Record()
		r.Headers = append([]kafka.Header(nil), r.Headers...)
		recs = append(recs, r)
		offs = append(offs, c.Offset())
		tss = append(tss, c.Timestamp())
	}
	return recs, offs, tss, c.Err()
}

// sameRecord compares a decoded record with the kmsg record it was
// encoded from.
func sameRecord(got kafka.Record, want kmsg.Record) bool {
	same := func(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
	if got.OffsetDelta != want.OffsetDelta || got.TimestampDelta != want.TimestampDelta64 || !same(got.Key, want.Key) ||
		!same(got.Value, want.Value) || len(got.Headers) != len(want.Headers) {
		return false
	}
	for i, h := range want.Headers {
		if string(got.Headers[i].Key) != h.Key || !same(got.Headers[i].Value, h.Value) {
			return false
		}
	}
	return true
}

// bigRecords are records whose values take several of xerial's chunks.
func bigRecords(base int64, n int) []kmsg.Record {
	recs := kRecords(base, n)
	for i := range recs {
		recs[i].Value = bytes.Repeat(fmt.Appendf(nil, "value %d of a batch, ", base+int64(i)), 100)
	}
	return recs
}

func TestKafkaRecordsCodecs(t *testing.T) {
	recs := bigRecords(500, 40)
	raw := recordBytes(recs)
	withSection := func(codec kafka.Codec, section []byte) []byte {
		rb := batchHeader(500, codec, recs)
		rb.Records = section
		return sealBatch(rb)
	}
	c := NewKafkaRecords(0)
	defer c.Close()
	for _, tc := range []struct {
		name  string
		batch []byte
	}{
		{"none", kBatch(t, 500, kafka.CodecNone, recs)},
		{"gzip", kBatch(t, 500, kafka.CodecGzip, recs)},
		{"snappy", kBatch(t, 500, kafka.CodecSnappy, recs)},
		{"snappy, xerial's framing", withSection(kafka.CodecSnappy, xerial(raw, 32<<10))},
		{"snappy, xerial's framing in small chunks", withSection(kafka.CodecSnappy, xerial(raw, 1000))},
		{"lz4", kBatch(t, 500, kafka.CodecLZ4, recs)},
		{"zstd", kBatch(t, 500, kafka.CodecZstd, recs)},
		{"gzip again, the decoder reused", kBatch(t, 500, kafka.CodecGzip, recs)},
		{"zstd again", kBatch(t, 500, kafka.CodecZstd, recs)},
	} {
		got, offs, tss, err := readBatch(t, c, tc.batch)
		if err != nil || len(got) != len(recs) {
			t.Fatalf("%s: %d records, %v", tc.name, len(got), err)
		}
		for i, r := range got {
			if !sameRecord(r, recs[i]) || offs[i] != 500+int64(i) || tss[i] != fixtureTS+recs[i].TimestampDelta64 {
				t.Fatalf("%s: record %d at %d, %d: %+v", tc.name, i, offs[i], tss[i], r)
			}
		}
		if c.Decoded() != len(raw) {
			t.Fatalf("%s: decoded %d bytes, want %d", tc.name, c.Decoded(), len(raw))
		}
	}
}

func TestKafkaRecordsBatchKinds(t *testing.T) {
	c := NewKafkaRecords(0)
	defer c.Close()

	// Log-append time: every record has the broker's time.
	recs := kRecords(10, 3)
	rb := batchHeader(10, kafka.CodecNone, recs)
	rb.Attributes |= 0x08
	rb.MaxTimestamp = 1_800_000_000_000
	rb.Records = recordBytes(recs)
	_, _, tss, err := readBatch(t, c, sealBatch(rb))
	if err != nil || len(tss) != 3 || tss[0] != 1_800_000_000_000 || tss[2] != 1_800_000_000_000 {
		t.Fatalf("log-append time: %v, %v", tss, err)
	}

	// A control batch: a commit marker.
	marker := []kmsg.Record{{Key: (&kmsg.ControlRecordKey{Type: kmsg.ControlRecordKeyTypeCommit}).AppendTo(nil), Value: (&kmsg.EndTxnMarker{CoordinatorEpoch: 4}).AppendTo(nil)}}
	rb = batchHeader(13, kafka.CodecNone, marker)
	rb.Attributes |= 0x30
	rb.Records = recordBytes(marker)
	got, offs, _, err := readBatch(t, c, sealBatch(rb))
	if err != nil || len(got) != 1 || offs[0] != 13 {
		t.Fatalf("control batch: %v, %v", offs, err)
	}
	if k, err := kafka.ParseControlKey(got[0].Key); err != nil || k.Type != kafka.ControlCommit {
		t.Fatalf("control key %+v, %v", k, err)
	}

	// A compacted batch: offsets with gaps, the header's range kept.
	recs = kRecords(100, 10)
	kept := []kmsg.Record{recs[0], recs[3], recs[7]}
	rb = batchHeader(100, kafka.CodecGzip, recs)
	rb.NumRecords = 3
	rb.Records = kgoCompress(t, kafka.CodecGzip, recordBytes(kept))
	_, offs, _, err = readBatch(t, c, sealBatch(rb))
	if err != nil || fmt.Sprint(offs) != "[100 103 107]" {
		t.Fatalf("compacted batch: %v, %v", offs, err)
	}

	// A batch compaction emptied, kept for its producer state.
	empty := sealBatch(kmsg.RecordBatch{FirstOffset: 200, LastOffsetDelta: 4, FirstTimestamp: -1, MaxTimestamp: fixtureTS, ProducerID: 7})
	if got, _, _, err := readBatch(t, c, empty); err != nil || len(got) != 0 {
		t.Fatalf("empty batch: %d records, %v", len(got), err)
	}
}

func TestKafkaRecordsDamage(t *testing.T) {
	recs := kRecords(50, 5)
	edit := func(codec kafka.Codec, f func(rb *kmsg.RecordBatch, recs []kmsg.Record) []byte) []byte {
		rs := kRecords(50, 5)
		rb := batchHeader(50, codec, rs)
		rb.Records = kgoCompress(t, codec, f(&rb, rs))
		return sealBatch(rb)
	}
	for _, tc := range []struct {
		name   string
		batch  []byte
		record int
		kind   error
		says   string
	}{
		{"fewer records than counted", edit(kafka.CodecNone, func(rb *kmsg.RecordBatch, rs []kmsg.Record) []byte { return recordBytes(rs[:4]) }),
			-1, kafka.ErrFormat, "4 records where the header counts 5"},
		{"more records than counted", edit(kafka.CodecGzip, func(rb *kmsg.RecordBatch, rs []kmsg.Record) []byte { rb.NumRecords = 4; return recordBytes(rs) }),
			-1, kafka.ErrFormat, "after the 4 records the header counts"},
		{"trailing bytes", edit(kafka.CodecZstd, func(rb *kmsg.RecordBatch, rs []kmsg.Record) []byte { return append(recordBytes(rs), 0) }),
			-1, kafka.ErrFormat, "1 bytes after the 5 records"},
		{"an offset past the batch's", edit(kafka.CodecNone, func(rb *kmsg.RecordBatch, rs []kmsg.Record) []byte { rs[4].OffsetDelta = 9; return recordBytes(rs) }),
			4, kafka.ErrFormat, "offset delta 9 is outside the batch's 0..4"},
		{"offsets out of order", edit(kafka.CodecSnappy, func(rb *kmsg.RecordBatch, rs []kmsg.Record) []byte { rs[2].OffsetDelta = 1; return recordBytes(rs) }),
			2, kafka.ErrFormat, "offset 51 does not follow the record before it, at 51"},
		{"offsets out of order where the careful decoder reads", edit(kafka.CodecNone, func(rb *kmsg.RecordBatch, rs []kmsg.Record) []byte {
			rs[2].OffsetDelta, rs[2].TimestampDelta64 = 1, 1<<40 // a delta of six bytes
			return recordBytes(rs)
		}), 2, kafka.ErrFormat, "offset 51 does not follow the record before it, at 51"},
		{"a record that does not decode", edit(kafka.CodecLZ4, func(rb *kmsg.RecordBatch, rs []kmsg.Record) []byte {
			b := recordBytes(rs)
			b[len(recordBytes(rs[:3]))+4] = 0x7e // record 3's key length: 63
			return b
		}), 3, kafka.ErrFormat, "key length 63"},
		{"gzip that is not", edit(kafka.CodecNone, func(rb *kmsg.RecordBatch, rs []kmsg.Record) []byte { rb.Attributes = 1; return recordBytes(rs) }),
			-1, ErrKafkaDecompress, "do not decompress with gzip"},
		{"a cut zstd frame", edit(kafka.CodecNone, func(rb *kmsg.RecordBatch, rs []kmsg.Record) []byte {
			rb.Attributes = 4
			z := kgoCompress(t, kafka.CodecZstd, recordBytes(rs))
			return z[:len(z)-3]
		}), -1, ErrKafkaDecompress, "zstd"},
		{"a xerial chunk that lies", edit(kafka.CodecNone, func(rb *kmsg.RecordBatch, rs []kmsg.Record) []byte {
			rb.Attributes = 2
			x := xerial(recordBytes(rs), 1<<20)
			binary.BigEndian.PutUint32(x[16:], 1<<30)
			return x
		}), -1, ErrKafkaDecompress, "runs past"},
	} {
		c := NewKafkaRecords(0)
		got, _, _, err := readBatch(t, c, tc.batch)
		c.Close()
		var re *KafkaRecordError
		if !errors.As(err, &re) || !errors.Is(err, tc.kind) || re.Record != tc.record || !strings.Contains(err.Error(), tc.says) ||
			re.Pos != 0 || re.Base != 50 || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %d records, err %v, want record %d, %v saying %q", tc.name, len(got), err, tc.record, tc.kind, tc.says)
		}
		if tc.record >= 0 && len(got) != tc.record {
			t.Errorf("%s: %d records before the damage, want %d", tc.name, len(got), tc.record)
		}
	}
	_ = recs
}

// TestKafkaRecordsWideDeltas: records the fast decoder leaves to the
// careful one (deltas past three bytes, long lengths), between records it
// takes, read the same; after the last, Next stays false and Err nil.
func TestKafkaRecordsWideDeltas(t *testing.T) {
	recs := kRecords(70, 7)
	recs[1].TimestampDelta64 = 1 << 40
	recs[3].TimestampDelta64, recs[3].Value = -(1 << 31), bytes.Repeat([]byte("v"), 9000)
	recs[4].OffsetDelta = 1<<21 + 4
	recs[5].OffsetDelta, recs[6].OffsetDelta = 1<<21+5, 1<<21+6
	rb := batchHeader(70, kafka.CodecNone, recs)
	rb.Records = recordBytes(recs)
	c := NewKafkaRecords(0)
	defer c.Close()
	got, offs, tss, err := readBatch(t, c, sealBatch(rb))
	if err != nil || len(got) != len(recs) {
		t.Fatalf("%d records of %d, %v", len(got), len(recs), err)
	}
	for i, r := range recs {
		if !sameRecord(got[i], r) || offs[i] != 70+int64(r.OffsetDelta) || tss[i] != fixtureTS+r.TimestampDelta64 {
			t.Errorf("record %d: %+v at %d, %d; want %+v", i, got[i], offs[i], tss[i], r)
		}
	}
	if c.Next() || c.Err() != nil {
		t.Errorf("after the last record: Next again, Err %v", c.Err())
	}
}

// zerosWith streams n zero bytes through a compressor's writer.
func zerosWith(t *testing.T, n int, newWriter func(io.Writer) io.WriteCloser) []byte {
	var buf bytes.Buffer
	w := newWriter(&buf)
	zeros := make([]byte, 1<<20)
	for range n >> 20 {
		if _, err := w.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestKafkaRecordsBombs: records that decompress past the limit fail
// with ErrKafkaDecompressLimit, having allocated about the limit.
func TestKafkaRecordsBombs(t *testing.T) {
	const bomb = 256 << 20
	zstdStream := func(w io.Writer) io.WriteCloser {
		z, err := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
	zstdDeclared, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer zstdDeclared.Close()
	block := snappy.Encode(nil, make([]byte, 1<<20))
	var manyChunks []byte
	for range 100 {
		manyChunks = append(binary.BigEndian.AppendUint32(manyChunks, uint32(len(block))), block...)
	}
	for _, tc := range []struct {
		name    string
		codec   kafka.Codec
		section []byte
	}{
		{"gzip", kafka.CodecGzip, zerosWith(t, bomb, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })},
		{"lz4", kafka.CodecLZ4, zerosWith(t, bomb, func(w io.Writer) io.WriteCloser { return lz4.NewWriter(w) })},
		{"zstd, size unknown", kafka.CodecZstd, zerosWith(t, bomb, zstdStream)},
		{"zstd, size declared", kafka.CodecZstd, zstdDeclared.EncodeAll(make([]byte, 80<<20), nil)},
		{"snappy, a block declaring 1 GiB", kafka.CodecSnappy, append(binary.AppendUvarint(nil, 1<<30), 0, 0, 0)},
		{"snappy, xerial's chunks past the limit", kafka.CodecSnappy, append(xerial(nil, 1)[:16], manyChunks...)},
	} {
		rb := kmsg.RecordBatch{FirstOffset: 0, Attributes: int16(tc.codec), NumRecords: 1}
		rb.Records = tc.section
		batch := sealBatch(rb)
		c := NewKafkaRecords(0)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, _, err := readBatch(t, c, batch)
		runtime.ReadMemStats(&after)
		c.Close()
		if !errors.Is(err, ErrKafkaDecompressLimit) || !strings.Contains(err.Error(), "past the limit of 67108864 bytes") {
			t.Errorf("%s: %v", tc.name, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*DefaultKafkaMaxDecompressed {
			t.Errorf("%s: %d MiB allocated for a limit of %d MiB", tc.name, alloc>>20, DefaultKafkaMaxDecompressed>>20)
		}
	}
	// A smaller limit is the limit.
	c := NewKafkaRecords(1000)
	defer c.Close()
	if _, _, _, err := readBatch(t, c, kBatch(t, 0, kafka.CodecGzip, bigRecords(0, 3))); !errors.Is(err, ErrKafkaDecompressLimit) || !strings.Contains(err.Error(), "limit of 1000 bytes") {
		t.Errorf("limit 1000: %v", err)
	}
}

func TestKafkaRecordsLegacy(t *testing.T) {
	c := NewKafkaRecords(0)
	defer c.Close()
	got, offs, tss, err := readBatch(t, c, kLegacy(0, 7, 0, 0, []byte("k"), nil))
	if err != nil || len(got) != 1 || offs[0] != 7 || tss[0] != kafka.NoTimestamp || string(got[0].Key) != "k" || got[0].Value != nil {
		t.Fatalf("magic 0: %+v %v %v %v", got, offs, tss, err)
	}
	got, offs, tss, err = readBatch(t, c, kLegacy(1, 8, 0, fixtureTS, nil, []byte("v")))
	if err != nil || len(got) != 1 || offs[0] != 8 || tss[0] != fixtureTS || got[0].Key != nil {
		t.Fatalf("magic 1: %+v %v %v %v", got, offs, tss, err)
	}

	// Compressed wrappers. Magic 1's inner offsets are relative, the
	// wrapper's the last one's; magic 0's are the offsets.
	inner := func(magic int8, offs ...int64) []byte {
		var set []byte
		for i, o := range offs {
			set = append(set, kLegacy(magic, o, 0, fixtureTS+int64(i), fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "v%d", i))...)
		}
		return set
	}
	for _, tc := range []struct {
		name    string
		wrapper []byte
		offs    string
		tss     string
	}{
		{"magic 1 gzip", kLegacy(1, 22, 1, 5, nil, kgoCompress(t, kafka.CodecGzip, inner(1, 0, 1, 2))), "[20 21 22]", fmt.Sprint([]int64{fixtureTS, fixtureTS + 1, fixtureTS + 2})},
		{"magic 1 snappy, log-append time", kLegacy(1, 22, 0x0a, 5, nil, xerial(inner(1, 0, 1, 2), 100)), "[20 21 22]", "[5 5 5]"},
		{"magic 1 lz4", kLegacy(1, 22, 3, 5, nil, kgoCompress(t, kafka.CodecLZ4, inner(1, 0, 1, 2))), "[20 21 22]", fmt.Sprint([]int64{fixtureTS, fixtureTS + 1, fixtureTS + 2})},
		{"magic 0 gzip", kLegacy(0, 32, 1, 0, nil, kgoCompress(t, kafka.CodecGzip, inner(0, 30, 31, 32))), "[30 31 32]", "[-1 -1 -1]"},
	} {
		got, offs, tss, err := readBatch(t, c, tc.wrapper)
		if err != nil || fmt.Sprint(offs) != tc.offs || fmt.Sprint(tss) != tc.tss || string(got[1].Key) != "k1" || string(got[2].Value) != "v2" {
			t.Errorf("%s: offsets %v timestamps %v, %v", tc.name, offs, tss, err)
		}
	}
	for _, tc := range []struct {
		name    string
		wrapper []byte
		says    string
	}{
		{"nested", kLegacy(1, 2, 1, 0, nil, kgoCompress(t, kafka.CodecGzip, kLegacy(1, 0, 1, 0, nil, []byte("x")))), "a compressed message inside"},
		{"empty", kLegacy(1, 2, 1, 0, nil, kgoCompress(t, kafka.CodecGzip, nil)), "no inner messages"},
		{"magics mixed", kLegacy(1, 1, 1, 0, nil, kgoCompress(t, kafka.CodecGzip, inner(0, 0, 1))), "magic 0 inside a magic 1"},
		{"inner offsets past the wrapper's", kLegacy(0, 5, 1, 0, nil, kgoCompress(t, kafka.CodecGzip, inner(0, 5, 6))), "offset 6 is not between"},
		{"a cut inner message", kLegacy(1, 5, 1, 0, nil, kgoCompress(t, kafka.CodecGzip, inner(1, 0, 1)[:40])), "inner message"},
	} {
		_, _, _, err := readBatch(t, c, tc.wrapper)
		if !errors.Is(err, kafka.ErrFormat) && !errors.Is(err, kafka.ErrMagic) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want it to say %q", tc.name, err, tc.says)
		}
	}
}

func TestKafkaRecordsAllocs(t *testing.T) {
	plain := kBatch(t, 0, kafka.CodecNone, kRecords(0, 20))
	zstdBatch := kBatch(t, 0, kafka.CodecZstd, kRecords(0, 20))
	for _, tc := range []struct {
		name  string
		batch []byte
	}{{"none", plain}, {"zstd", zstdBatch}} {
		s := kafkaScan(tc.batch, KafkaOptions{})
		if !s.Next() {
			t.Fatal(s.Damage())
		}
		c := NewKafkaRecords(0)
		read := func() {
			c.Reset(s.Batch())
			for c.Next() {
			}
			if c.Err() != nil {
				t.Fatal(c.Err())
			}
		}
		read() // the buffers and decoder once
		if allocs := testing.AllocsPerRun(50, read); allocs != 0 && !(tc.name == "zstd" && raceBuild()) {
			t.Errorf("%s: %v allocations a batch", tc.name, allocs)
		}
		c.Close()
	}
}

// raceBuild reports whether the test runs with the race detector, under
// which sync.Pool drops what it is given (the zstd decoder's buffers).
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	return ok && slices.ContainsFunc(bi.Settings, func(s debug.BuildSetting) bool { return s.Key == "-race" && s.Value == "true" })
}
