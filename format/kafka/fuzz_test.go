package kafka_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"testing"

	"github.com/seglog/seglog/format/kafka"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kindOf reports whether err is one of the package's kinds of failure.
func kindOf(err error) bool {
	for _, kind := range []error{kafka.ErrShort, kafka.ErrCRC, kafka.ErrMagic, kafka.ErrFormat} {
		if errors.Is(err, kind) {
			return true
		}
	}
	return false
}

// flips are b with one bit flipped at each of the given positions, and
// b cut at each.
func flips(b []byte, at ...int) [][]byte {
	var out [][]byte
	for _, i := range at {
		if i < len(b) {
			d := bytes.Clone(b)
			d[i] ^= 0x40
			out = append(out, d, b[:i])
		}
	}
	return out
}

func batchSeeds() [][]byte {
	small := sampleHeader
	small.LastOffsetDelta, small.NumRecords = 2, 3
	b := kmsgBatch(small, encodeRecords(sampleRecords[:3])) // the fuzzer is slow on large inputs
	control := kmsgBatch(kmsg.RecordBatch{FirstOffset: 7, Attributes: 0x30, NumRecords: 1, ProducerID: 9, FirstTimestamp: 1, MaxTimestamp: 1},
		kmsgRecord(kmsg.Record{Key: (&kmsg.ControlRecordKey{Type: kmsg.ControlRecordKeyTypeCommit}).AppendTo(nil),
			Value: (&kmsg.EndTxnMarker{CoordinatorEpoch: 2}).AppendTo(nil)}))
	empty := kmsgBatch(kmsg.RecordBatch{FirstOffset: 3, LastOffsetDelta: 2, FirstTimestamp: -1, MaxTimestamp: 4}, nil)
	seeds := [][]byte{nil, b, control, empty, b[:kafka.BatchHeaderLen], make([]byte, 61), append(bytes.Clone(b), control...)}
	return append(seeds, flips(b, 8, 11, 16, 22, 26, 60, 61, 70)...)
}

func FuzzParseBatchHeader(f *testing.F) {
	for _, s := range batchSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := kafka.ParseBatchHeader(b)
		if err != nil {
			if !kindOf(err) {
				t.Fatalf("error of no known kind: %v", err)
			}
			if len(b) <= kafka.MagicAt && !errors.Is(err, kafka.ErrShort) {
				t.Fatalf("%d bytes: %v, want ErrShort", len(b), err)
			}
			return
		}
		if h.Magic != 2 || h.Size() < kafka.BatchHeaderLen || h.LastOffset() < h.BaseOffset || h.BaseOffset < 0 ||
			h.Codec() > kafka.CodecZstd || h.RecordsCount < 0 || int64(h.RecordsCount) > int64(h.LastOffsetDelta)+1 {
			t.Fatalf("accepted header breaks its checks: %+v", h)
		}
		err = h.CheckCRC(b)
		if int64(len(b)) < h.Size() && !errors.Is(err, kafka.ErrShort) || err != nil && !kindOf(err) {
			t.Fatalf("CheckCRC of %d bytes (size %d): %v", len(b), h.Size(), err)
		}
		if err == nil && !bytes.Equal(h.Records(b), b[kafka.BatchHeaderLen:h.Size()]) {
			t.Fatal("Records is not the bytes after the header")
		}
	})
}

func FuzzParseRecord(f *testing.F) {
	all := encodeRecords(sampleRecords)
	f.Add(all)
	for _, r := range sampleRecords {
		f.Add(kmsgRecord(r))
	}
	for _, s := range flips(kmsgRecord(sampleRecords[2]), 0, 1, 2, 4, 8, 12, 20) {
		f.Add(s)
	}
	f.Add([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	// Two-byte lengths and deltas, what the fast path decodes.
	long := kmsgRecord(kmsg.Record{TimestampDelta64: 300, OffsetDelta: 200, Key: bytes.Repeat([]byte("k"), 70),
		Value: bytes.Repeat([]byte("v"), 1000), Headers: []kmsg.Header{{Key: "h", Value: bytes.Repeat([]byte("x"), 64)}}})
	f.Add(long)
	f.Add(long[:len(long)-1])
	// Three-byte deltas, the widest the fast path decodes, and four.
	f.Add(kmsgRecord(kmsg.Record{TimestampDelta64: 1<<20 - 1, OffsetDelta: 1 << 19, Value: []byte("v")}))
	f.Add(kmsgRecord(kmsg.Record{TimestampDelta64: 1 << 20, OffsetDelta: 1 << 20, Value: []byte("v")}))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r, careful kafka.Record
		n, err := kafka.ParseRecord(b, &r)
		// The fast path takes a record only as the careful decoder does.
		cn, cerr := kafka.ParseRecordCareful(b, &careful)
		if (err == nil) != (cerr == nil) || err == nil && (n != cn || !sameRecord(r, careful)) {
			t.Fatalf("ParseRecord: %d, %v, %+v; the careful decoder: %d, %v, %+v", n, err, r, cn, cerr, careful)
		}
		if err != nil {
			if !kindOf(err) {
				t.Fatalf("error of no known kind: %v", err)
			}
			return
		}
		if n <= 0 || n > len(b) || len(r.Headers) > n/2 {
			t.Fatalf("took %d of %d bytes, %d headers", n, len(b), len(r.Headers))
		}
		var again kafka.Record
		if m, err := kafka.ParseRecord(b[:n], &again); err != nil || m != n {
			t.Fatalf("the record's own bytes: %d, %v; took %d in all", m, err, n)
		}
		// franz-go's decoder, when it takes the record too, reads the same.
		var k kmsg.Record
		if k.ReadFrom(b[:n]) != nil {
			return
		}
		if k.Attributes != r.Attributes || k.TimestampDelta64 != r.TimestampDelta || k.OffsetDelta != r.OffsetDelta ||
			!sameBytes(k.Key, r.Key) || !sameBytes(k.Value, r.Value) || len(k.Headers) != len(r.Headers) {
			t.Fatalf("kmsg reads %+v, ParseRecord %+v", k, r)
		}
		for i, h := range k.Headers {
			if h.Key != string(r.Headers[i].Key) || !sameBytes(h.Value, r.Headers[i].Value) {
				t.Fatalf("header %d: kmsg reads %q=%q, ParseRecord %q=%q", i, h.Key, h.Value, r.Headers[i].Key, r.Headers[i].Value)
			}
		}
	})
}

func FuzzParseLegacyMessage(f *testing.F) {
	v0 := kmsgLegacyV0(kmsg.MessageV0{Offset: 1, Key: []byte("k"), Value: []byte("value")})
	v1 := kmsgLegacyV1(kmsg.MessageV1{Offset: 2, Timestamp: 3, Value: []byte("v")})
	wrapper := kmsgLegacyV1(kmsg.MessageV1{Offset: 9, Attributes: 1, Value: v1})
	for _, s := range append([][]byte{nil, v0, v1, wrapper, append(bytes.Clone(v0), v1...)}, flips(v1, 8, 11, 12, 16, 17, 26, 30)...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := kafka.ParseLegacyMessage(b)
		if err != nil {
			if !kindOf(err) {
				t.Fatalf("error of no known kind: %v", err)
			}
			return
		}
		if m.Magic != 0 && m.Magic != 1 || m.Size() > int64(len(b)) || m.Offset < 0 || m.Codec() > kafka.CodecLZ4 {
			t.Fatalf("accepted %+v from %d bytes", m, len(b))
		}
		if int64(len(m.Key)+len(m.Value)) > m.Size() {
			t.Fatalf("key and value of %d bytes in a message of %d", len(m.Key)+len(m.Value), m.Size())
		}
		// franz-go's decoder reads the same.
		if m.Magic == 1 {
			var k kmsg.MessageV1
			if err := k.ReadFrom(b[:m.Size()]); err != nil || k.Offset != m.Offset || k.Timestamp != m.Timestamp ||
				k.Attributes != m.Attributes || !sameBytes(k.Key, m.Key) || !sameBytes(k.Value, m.Value) {
				t.Fatalf("kmsg reads %+v (%v), ParseLegacyMessage %+v", k, err, m)
			}
		}
	})
}

// FuzzLegacyPrecheck: with its CRC made right, a legacy message passes
// LegacyValueLengthAt and LegacyValueFits exactly when
// ParseLegacyMessage takes it (its offset aside, which a search for
// where messages resume checks first): the check before the CRC never
// passes over a message the parse takes.
func FuzzLegacyPrecheck(f *testing.F) {
	v0 := kmsgLegacyV0(kmsg.MessageV0{Offset: 1, Key: []byte("k"), Value: []byte("value")})
	v1 := kmsgLegacyV1(kmsg.MessageV1{Offset: 2, Timestamp: 3, Value: []byte("v")})
	wrapper := kmsgLegacyV1(kmsg.MessageV1{Offset: 9, Attributes: 1, Value: v1})
	for _, s := range append([][]byte{nil, v0, v1, wrapper}, flips(v1, 8, 11, 17, 26, 29, 30, 33)...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) <= kafka.MagicAt {
			return
		}
		size := kafka.LogOverhead + int64(int32(binary.BigEndian.Uint32(b[8:])))
		if size <= kafka.MagicAt || size > int64(len(b)) {
			return
		}
		b = bytes.Clone(b[:size])
		binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[kafka.MagicAt:]))
		binary.BigEndian.PutUint64(b, binary.BigEndian.Uint64(b)&math.MaxInt64)
		_, err := kafka.ParseLegacyMessage(b)
		fits := false
		if at, ok := kafka.LegacyValueLengthAt(b[:min(len(b), kafka.BatchHeaderLen)]); ok {
			fits = kafka.LegacyValueFits(b, at, b[at:at+4])
		}
		if fits != (err == nil) {
			t.Fatalf("precheck %v, ParseLegacyMessage %v, for %x", fits, err, b)
		}
	})
}

func FuzzParseControl(f *testing.F) {
	f.Add((&kmsg.ControlRecordKey{Type: 1}).AppendTo(nil))
	f.Add((&kmsg.EndTxnMarker{CoordinatorEpoch: 5}).AppendTo(nil))
	f.Add([]byte{0xff, 0xff, 0, 0, 0, 0, 0})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := kafka.ParseControlKey(b)
		if err == nil && (len(b) < 4 || k.Version < 0 || k.Type != kafka.ControlType(binary.BigEndian.Uint16(b[2:]))) {
			t.Fatalf("control key %+v from %x", k, b)
		}
		if err != nil && !kindOf(err) {
			t.Fatalf("error of no known kind: %v", err)
		}
		m, err := kafka.ParseEndTransactionMarker(b)
		if err == nil && (len(b) < 6 || m.Version < 0) {
			t.Fatalf("marker %+v from %x", m, b)
		}
		if err != nil && !kindOf(err) {
			t.Fatalf("error of no known kind: %v", err)
		}
	})
}

// sameRecord reports whether a and b hold the same fields, null told
// apart from empty.
func sameRecord(a, b kafka.Record) bool {
	if a.Attributes != b.Attributes || a.TimestampDelta != b.TimestampDelta || a.OffsetDelta != b.OffsetDelta ||
		!sameBytes(a.Key, b.Key) || !sameBytes(a.Value, b.Value) || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i, h := range a.Headers {
		if !sameBytes(h.Key, b.Headers[i].Key) || !sameBytes(h.Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}
