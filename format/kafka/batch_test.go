package kafka_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"strings"
	"testing"

	"github.com/seglog/seglog/format/kafka"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The fixtures are franz-go's encoding (kmsg), not this package's: the
// tests fill in only what a producer computes, the lengths and the CRC.

// kmsgRecord encodes r with its length field filled in.
func kmsgRecord(r kmsg.Record) []byte {
	r.Length = 0
	r.Length = int32(len(r.AppendTo(nil)) - 1) // a zero length takes one byte
	return r.AppendTo(nil)
}

// kmsgBatch encodes b around records (already encoded), with its length,
// count-independent fields as given and its CRC-32C filled in.
func kmsgBatch(b kmsg.RecordBatch, records []byte) []byte {
	b.Magic = 2
	b.Records = records
	b.Length = int32(kafka.BatchHeaderLen - kafka.LogOverhead + len(records))
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// sampleRecords are records with the shapes the format allows: null and
// empty keys and values, headers with null values, negative and large
// deltas.
var sampleRecords = []kmsg.Record{
	{OffsetDelta: 0, TimestampDelta64: 0, Key: []byte("user-1"), Value: []byte("hello")},
	{OffsetDelta: 1, TimestampDelta64: 5, Key: nil, Value: []byte{}},
	{OffsetDelta: 2, TimestampDelta64: -3, Key: []byte{}, Value: nil, Headers: []kmsg.Header{
		{Key: "trace", Value: []byte("abc")}, {Key: "", Value: nil}, {Key: "k", Value: []byte{}},
	}},
	{OffsetDelta: 4, TimestampDelta64: math.MaxInt64, Attributes: 0, Key: bytes.Repeat([]byte("k"), 200), Value: bytes.Repeat([]byte("v"), 70000)},
}

func encodeRecords(recs []kmsg.Record) []byte {
	var b []byte
	for _, r := range recs {
		b = append(b, kmsgRecord(r)...)
	}
	return b
}

// sampleHeader is a batch header with every field distinct.
var sampleHeader = kmsg.RecordBatch{
	FirstOffset:          1000,
	PartitionLeaderEpoch: 7,
	Attributes:           0x10, // transactional
	LastOffsetDelta:      4,
	FirstTimestamp:       1_700_000_000_000,
	MaxTimestamp:         1_700_000_000_005,
	ProducerID:           4242,
	ProducerEpoch:        3,
	FirstSequence:        17,
	NumRecords:           4,
}

func sampleBatch() []byte { return kmsgBatch(sampleHeader, encodeRecords(sampleRecords)) }

func TestParseBatchHeader(t *testing.T) {
	b := sampleBatch()
	h, err := kafka.ParseBatchHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	want := kafka.BatchHeader{
		BaseOffset:           1000,
		BatchLength:          int32(len(b) - 12),
		PartitionLeaderEpoch: 7,
		Magic:                2,
		CRC:                  binary.BigEndian.Uint32(b[17:]),
		Attributes:           0x10,
		LastOffsetDelta:      4,
		BaseTimestamp:        1_700_000_000_000,
		MaxTimestamp:         1_700_000_000_005,
		ProducerID:           4242,
		ProducerEpoch:        3,
		BaseSequence:         17,
		RecordsCount:         4,
	}
	if h != want {
		t.Fatalf("header\n got %+v\nwant %+v", h, want)
	}
	if h.Size() != int64(len(b)) || h.LastOffset() != 1004 {
		t.Fatalf("Size %d LastOffset %d, want %d and 1004", h.Size(), h.LastOffset(), len(b))
	}
	if err := h.CheckCRC(b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(h.Records(b), encodeRecords(sampleRecords)) {
		t.Fatal("Records is not the records section")
	}
	if h.Records(b[:len(b)-1]) != nil {
		t.Fatal("Records of a cut batch is not nil")
	}
	// Only the header is needed.
	if h2, err := kafka.ParseBatchHeader(b[:kafka.BatchHeaderLen]); err != nil || h2 != h {
		t.Fatalf("header alone: %+v, %v", h2, err)
	}
}

func TestBatchAttributes(t *testing.T) {
	for _, tc := range []struct {
		attrs                                  int16
		codec                                  kafka.Codec
		logAppend, txn, control, deleteHorizon bool
	}{
		{0x00, kafka.CodecNone, false, false, false, false},
		{0x01, kafka.CodecGzip, false, false, false, false},
		{0x02, kafka.CodecSnappy, false, false, false, false},
		{0x03, kafka.CodecLZ4, false, false, false, false},
		{0x04, kafka.CodecZstd, false, false, false, false},
		{0x08, kafka.CodecNone, true, false, false, false},
		{0x10, kafka.CodecNone, false, true, false, false},
		{0x30, kafka.CodecNone, false, true, true, false},
		{0x44, kafka.CodecZstd, false, false, false, true},
		{0x7c, kafka.CodecZstd, true, true, true, true},
		{0x0100, kafka.CodecNone, false, false, false, false}, // unused bits
	} {
		hb := sampleHeader
		hb.Attributes = tc.attrs
		h, err := kafka.ParseBatchHeader(kmsgBatch(hb, encodeRecords(sampleRecords)))
		if err != nil {
			t.Fatalf("attributes %#x: %v", tc.attrs, err)
		}
		if h.Codec() != tc.codec || h.LogAppendTime() != tc.logAppend || h.Transactional() != tc.txn || h.Control() != tc.control || h.DeleteHorizon() != tc.deleteHorizon {
			t.Errorf("attributes %#x: codec %v logAppend %v txn %v control %v deleteHorizon %v", tc.attrs,
				h.Codec(), h.LogAppendTime(), h.Transactional(), h.Control(), h.DeleteHorizon())
		}
	}
}

func TestCodecString(t *testing.T) {
	for c, want := range map[kafka.Codec]string{0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd", 6: "codec(6)"} {
		if c.String() != want {
			t.Errorf("Codec(%d) = %q, want %q", c, c, want)
		}
	}
}

func TestParseBatchHeaderErrors(t *testing.T) {
	good := sampleBatch()
	with := func(f func(h *kmsg.RecordBatch)) []byte {
		h := sampleHeader
		f(&h)
		return kmsgBatch(h, encodeRecords(sampleRecords))
	}
	setLength := func(n int32) []byte {
		b := bytes.Clone(good)
		binary.BigEndian.PutUint32(b[8:], uint32(n))
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		kind error
		says string
	}{
		{"empty", nil, kafka.ErrShort, ""},
		{"no magic", good[:16], kafka.ErrShort, ""},
		{"header cut", good[:60], kafka.ErrShort, ""},
		{"magic 1", func() []byte { b := bytes.Clone(good); b[16] = 1; return b }(), kafka.ErrMagic, "magic 1"},
		{"magic 3 cut", func() []byte { b := bytes.Clone(good[:20]); b[16] = 3; return b }(), kafka.ErrMagic, "magic 3"},
		{"length 48", setLength(48), kafka.ErrFormat, "batch length 48"},
		{"length negative", setLength(-1), kafka.ErrFormat, "batch length -1"},
		{"codec 5", with(func(h *kmsg.RecordBatch) { h.Attributes = 5 }), kafka.ErrFormat, "codec 5"},
		{"base negative", with(func(h *kmsg.RecordBatch) { h.FirstOffset = -1 }), kafka.ErrFormat, "base offset -1"},
		{"delta negative", with(func(h *kmsg.RecordBatch) { h.LastOffsetDelta = -2 }), kafka.ErrFormat, "last offset delta -2"},
		{"overflow", with(func(h *kmsg.RecordBatch) { h.FirstOffset = math.MaxInt64 - 3 }), kafka.ErrFormat, "overflows"},
		{"count negative", with(func(h *kmsg.RecordBatch) { h.NumRecords = -1 }), kafka.ErrFormat, "records count -1"},
		{"count over span", with(func(h *kmsg.RecordBatch) { h.NumRecords = 6 }), kafka.ErrFormat, "records count 6 is more than the 5 offsets"},
	} {
		_, err := kafka.ParseBatchHeader(tc.b)
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err %v, want %v saying %q", tc.name, err, tc.kind, tc.says)
		}
	}
}

func TestCheckCRC(t *testing.T) {
	b := sampleBatch()
	h, err := kafka.ParseBatchHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.CheckCRC(b[:len(b)-1]); !errors.Is(err, kafka.ErrShort) {
		t.Fatalf("cut batch: %v", err)
	}
	// Trailing bytes (the next batch) are not the batch's.
	if err := h.CheckCRC(append(bytes.Clone(b), 1, 2, 3)); err != nil {
		t.Fatalf("batch with bytes after it: %v", err)
	}
	// The CRC covers the attributes to the end ...
	for _, at := range []int{21, 40, 60, 61, len(b) - 1} {
		d := bytes.Clone(b)
		d[at] ^= 0x01
		err := h.CheckCRC(d)
		if !errors.Is(err, kafka.ErrCRC) || !strings.Contains(err.Error(), "stored 0x") {
			t.Errorf("byte %d flipped: %v", at, err)
		}
	}
	// ... and not the offset, length, leader epoch or magic before them.
	for _, at := range []int{0, 7, 12, 15} {
		d := bytes.Clone(b)
		d[at] ^= 0x01
		if err := h.CheckCRC(d); err != nil {
			t.Errorf("byte %d flipped: %v, but the CRC does not cover it", at, err)
		}
	}
}

func TestMagic(t *testing.T) {
	b := sampleBatch()
	if m, ok := kafka.Magic(b); !ok || m != 2 {
		t.Fatalf("Magic = %d, %v", m, ok)
	}
	if _, ok := kafka.Magic(b[:16]); ok {
		t.Fatal("Magic of 16 bytes is ok")
	}
	legacy := kmsgLegacyV1(kmsg.MessageV1{Offset: 3, Key: []byte("k"), Value: []byte("v")})
	if m, ok := kafka.Magic(legacy); !ok || m != 1 {
		t.Fatalf("Magic of a legacy message = %d, %v", m, ok)
	}
}
