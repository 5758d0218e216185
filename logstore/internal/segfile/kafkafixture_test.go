package segfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/seglog/seglog/format/kafka"
)

// Kafka fixtures are franz-go's encoding (kmsg) and compression (kgo's
// compressors), not the code under test; the tests fill in what a
// producer computes: lengths, counts and CRCs. Xerial's snappy framing,
// which kgo writes only when streaming, is built by hand.

const fixtureTS = 1_700_000_000_000

// kRecords are n records with offset deltas 0..n-1, keys key-<off> (every
// third null), values value-<off>, and a header on every other one.
func kRecords(base int64, n int) []kmsg.Record {
	recs := make([]kmsg.Record, n)
	for i := range recs {
		off := base + int64(i)
		r := kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i) * 10, Value: fmt.Appendf(nil, "value-%d", off)}
		if i%3 != 2 {
			r.Key = fmt.Appendf(nil, "key-%d", off)
		}
		if i%2 == 1 {
			r.Headers = []kmsg.Header{{Key: "h", Value: fmt.Appendf(nil, "%d", off)}, {Key: "null"}}
		}
		recs[i] = r
	}
	return recs
}

// recordBytes encodes recs, each with its length filled in.
func recordBytes(recs []kmsg.Record) []byte {
	var b []byte
	for _, r := range recs {
		r.Length = 0
		r.Length = int32(len(r.AppendTo(nil)) - 1) // a zero length takes one byte
		b = r.AppendTo(b)
	}
	return b
}

// kgoCompress compresses raw with franz-go's compressor for codec.
func kgoCompress(tb testing.TB, codec kafka.Codec, raw []byte) []byte {
	tb.Helper()
	var c kgo.CompressionCodec
	switch codec {
	case kafka.CodecNone:
		return raw
	case kafka.CodecGzip:
		c = kgo.GzipCompression()
	case kafka.CodecSnappy:
		c = kgo.SnappyCompression()
	case kafka.CodecLZ4:
		c = kgo.Lz4Compression()
	case kafka.CodecZstd:
		c = kgo.ZstdCompression()
	}
	comp, err := kgo.DefaultCompressor(c)
	if err != nil {
		tb.Fatal(err)
	}
	out, used := comp.Compress(new(bytes.Buffer), raw)
	if int8(used) != int8(codec) {
		tb.Fatalf("compressed with codec %d, not %v", used, codec)
	}
	return bytes.Clone(out)
}

// xerial frames raw as the Java client's snappy stream does, in chunks
// of at most chunk bytes.
func xerial(raw []byte, chunk int) []byte {
	out := append([]byte("\x82SNAPPY\x00"), 0, 0, 0, 1, 0, 0, 0, 1)
	for len(raw) > 0 {
		n := min(chunk, len(raw))
		block := snappy.Encode(nil, raw[:n])
		out = binary.BigEndian.AppendUint32(out, uint32(len(block)))
		out = append(out, block...)
		raw = raw[n:]
	}
	return out
}

// sealBatch fills in a kmsg batch's magic, length and CRC-32C and
// encodes it.
func sealBatch(rb kmsg.RecordBatch) []byte {
	rb.Magic = 2
	rb.Length = int32(kafka.BatchHeaderLen - kafka.LogOverhead + len(rb.Records))
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// batchHeader is a producer's header for recs at base: counts, offsets
// and timestamps from the records, no producer id.
func batchHeader(base int64, codec kafka.Codec, recs []kmsg.Record) kmsg.RecordBatch {
	rb := kmsg.RecordBatch{
		FirstOffset: base, PartitionLeaderEpoch: 3, Attributes: int16(codec),
		FirstTimestamp: fixtureTS, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(len(recs)),
	}
	for _, r := range recs {
		rb.LastOffsetDelta = max(rb.LastOffsetDelta, r.OffsetDelta)
		rb.MaxTimestamp = max(rb.MaxTimestamp, fixtureTS+r.TimestampDelta64)
	}
	return rb
}

// kBatch is a batch of recs at base, compressed with codec by kgo.
func kBatch(tb testing.TB, base int64, codec kafka.Codec, recs []kmsg.Record) []byte {
	rb := batchHeader(base, codec, recs)
	rb.Records = kgoCompress(tb, codec, recordBytes(recs))
	return sealBatch(rb)
}

// kLegacy encodes a legacy message of magic 0 or 1 with kmsg, its size
// and CRC-32 filled in.
func kLegacy(magic int8, offset int64, attrs int8, ts int64, key, value []byte) []byte {
	var b []byte
	if magic == 0 {
		b = (&kmsg.MessageV0{Offset: offset, Attributes: attrs, Key: key, Value: value}).AppendTo(nil)
	} else {
		b = (&kmsg.MessageV1{Offset: offset, Magic: 1, Attributes: attrs, Timestamp: ts, Key: key, Value: value}).AppendTo(nil)
	}
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	return b
}

// segment concatenates entries and returns each one's position.
func segment(entries ...[]byte) ([]byte, []int64) {
	var b []byte
	var pos []int64
	for _, e := range entries {
		pos = append(pos, int64(len(b)))
		b = append(b, e...)
	}
	return b, pos
}

// kafkaScan scans data with opts, Path and defaults filled in.
func kafkaScan(data []byte, opts KafkaOptions) *KafkaScanner {
	if opts.Path == "" {
		opts.Path = "00000000000000000000.log"
	}
	return NewKafkaScanner(bytes.NewReader(data), int64(len(data)), opts)
}

// kafkaScanned is what a scan met, in order: each batch's position and base
// offset, each damage, resyncing past every one.
type kafkaScanned struct {
	pos     []int64
	bases   []int64
	damages []*KafkaDamage
}

func kafkaScanAll(tb testing.TB, s *KafkaScanner) kafkaScanned {
	tb.Helper()
	var out kafkaScanned
	for {
		for s.Next() {
			out.pos = append(out.pos, s.Batch().Pos)
			out.bases = append(out.bases, s.Batch().BaseOffset())
		}
		if s.Err() != nil {
			tb.Fatal(s.Err())
		}
		d := s.Damage()
		if d == nil {
			return out
		}
		out.damages = append(out.damages, d)
		if !s.Resync() {
			return out
		}
	}
}
