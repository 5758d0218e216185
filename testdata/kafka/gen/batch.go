package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A rec is a record as its writer was asked to write it. A nil key,
// value or header value is null.
type rec struct {
	key, value []byte
	headers    []kmsg.Header
	ts         int64 // CreateTime; kcat's own clock, read back from its batch
}

// A batch is one record batch as it lies in a segment.
type batch struct {
	raw     []byte // as on disk: the writer's bytes, base offset and leader epoch set by the broker
	writer  string
	recs    []rec // what the writer was asked to write; none for a control batch
	epoch   int32 // the partition leader epoch the broker stamps on it
	roll    bool  // the broker rolls a new segment before appending it
	aborted bool  // data of an aborted transaction
}

// Record batch format (magic 2), the parts this generator touches.
const (
	logOverhead    = 12 // base offset and length, before what the length counts
	batchHeaderLen = 61 // through the record count
	messageMinLen  = 34 // a magic 1 message with a null key and value
	crcStart       = 21 // the CRC-32C covers attributes to the end
	attrCodec      = 0x07
	attrLogAppend  = 0x08
	attrTxn        = 0x10
	attrControl    = 0x20
)

var (
	enc        = binary.BigEndian
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	codecs     = []string{"none", "gzip", "snappy", "lz4", "zstd"}
)

// magic is the format of the batch or message at raw: both put it at
// byte 16, after the offset, the length and 4 bytes (a leader epoch, or
// a magic 1 message's CRC).
func magic(raw []byte) int8 { return int8(raw[16]) }

// header decodes a whole batch's fields; Records is the payload as
// stored, compressed or not.
func header(raw []byte) kmsg.RecordBatch {
	var h kmsg.RecordBatch
	h.ReadFrom(raw) // callers hold whole batches, which kmsg always reads
	return h
}

func codecOf(h kmsg.RecordBatch) kgo.CompressionCodecType {
	return kgo.CompressionCodecType(h.Attributes & attrCodec)
}

// A storedRec is a record as it reads back from a batch.
type storedRec struct {
	offset     int64
	ts         int64
	key, value []byte
	headers    []kmsg.Header
}

var decompressor = kgo.DefaultDecompressor()

// records decompresses a batch and decodes its records.
func records(raw []byte) ([]storedRec, error) {
	h := header(raw)
	data, err := decompressor.Decompress(h.Records, codecOf(h))
	if err != nil {
		return nil, fmt.Errorf("batch at offset %d: %w", h.FirstOffset, err)
	}
	var out []storedRec
	for range h.NumRecords {
		l, n := binary.Varint(data)
		if n <= 0 || l < 0 || l > int64(len(data)-n) {
			return nil, fmt.Errorf("batch at offset %d: a record's length is broken", h.FirstOffset)
		}
		var r kmsg.Record
		if err := r.ReadFrom(data[:n+int(l)]); err != nil {
			return nil, fmt.Errorf("batch at offset %d: %w", h.FirstOffset, err)
		}
		ts := h.FirstTimestamp + r.TimestampDelta64
		if h.Attributes&attrLogAppend != 0 {
			ts = h.MaxTimestamp // the broker's clock, for every record
		}
		out = append(out, storedRec{offset: h.FirstOffset + int64(r.OffsetDelta), ts: ts, key: r.Key, value: r.Value, headers: r.Headers})
		data = data[n+int(l):]
	}
	if len(data) > 0 {
		return nil, fmt.Errorf("batch at offset %d: %d bytes after its last record", h.FirstOffset, len(data))
	}
	return out, nil
}

// A batchSpec is a batch to build with kmsg, as a producer would.
type batchSpec struct {
	codec         kgo.CompressionCodecType
	level         int   // the compressor's, when not its default
	xerial        bool  // snappy in the Java client's framing
	logAppendTime int64 // the broker's clock, if the topic takes LogAppendTime
	producerID    int64
	producerEpoch int16
	baseSequence  int32
	recs          []rec
}

// idempotent marks a spec as from producer id, epoch, first sequence seq.
func (s batchSpec) idempotent(id int64, epoch int16, seq int32) batchSpec {
	s.producerID, s.producerEpoch, s.baseSequence = id, epoch, seq
	return s
}

func plain(recs ...rec) batchSpec {
	return batchSpec{producerID: -1, producerEpoch: -1, baseSequence: -1, recs: recs}
}

// build encodes the batch at base offset 0, CRC and length filled in.
func (s batchSpec) build() ([]byte, error) {
	first := s.recs[0].ts
	last := first
	var body []byte
	for i, r := range s.recs {
		last = max(last, r.ts)
		kr := kmsg.Record{TimestampDelta64: r.ts - first, OffsetDelta: int32(i), Key: r.key, Value: r.value, Headers: r.headers}
		kr.Length = int32(len(kr.AppendTo(nil)) - 1) // a varint 0 takes one byte
		body = kr.AppendTo(body)
	}
	payload, err := s.compress(body)
	if err != nil {
		return nil, err
	}
	attrs := int16(s.codec)
	if s.logAppendTime != 0 {
		attrs |= attrLogAppend
		last = s.logAppendTime
	}
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           attrs,
		LastOffsetDelta:      int32(len(s.recs) - 1),
		FirstTimestamp:       first,
		MaxTimestamp:         last,
		ProducerID:           s.producerID,
		ProducerEpoch:        s.producerEpoch,
		FirstSequence:        s.baseSequence,
		NumRecords:           int32(len(s.recs)),
		Records:              payload,
	}
	return seal(b.AppendTo(nil)), nil
}

// splitBatches cuts whole batches (or magic 1 messages: both start
// with an offset and the length of what follows) apart.
func splitBatches(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < logOverhead+5 {
			return nil, errors.New("a partial batch header")
		}
		n := logOverhead + int(int32(enc.Uint32(b[8:])))
		short := batchHeaderLen
		if magic(b) < 2 {
			short = messageMinLen
		}
		if n < short || n > len(b) {
			return nil, fmt.Errorf("a batch of %d bytes in %d", n, len(b))
		}
		out = append(out, b[:n:n])
		b = b[n:]
	}
	return out, nil
}

// seal sets a batch's length and CRC from its bytes.
func seal(raw []byte) []byte {
	enc.PutUint32(raw[8:], uint32(len(raw)-logOverhead))
	enc.PutUint32(raw[17:], crcOf(raw))
	return raw
}

func (s batchSpec) compress(body []byte) ([]byte, error) {
	if s.xerial {
		return xerial(body)
	}
	return compressLevel(s.codec, s.level, body)
}

func compress(codec kgo.CompressionCodecType, body []byte) ([]byte, error) {
	return compressLevel(codec, 0, body)
}

// compressLevel compresses with franz-go's compressors.
func compressLevel(codec kgo.CompressionCodecType, level int, body []byte) ([]byte, error) {
	var cc kgo.CompressionCodec
	switch codec {
	case kgo.CodecNone:
		return body, nil
	case kgo.CodecGzip:
		cc = kgo.GzipCompression()
	case kgo.CodecSnappy:
		cc = kgo.SnappyCompression()
	case kgo.CodecLz4:
		cc = kgo.Lz4Compression()
	case kgo.CodecZstd:
		cc = kgo.ZstdCompression()
	}
	if level != 0 {
		cc = cc.WithLevel(level)
	}
	c, err := kgo.DefaultCompressor(cc)
	if err != nil {
		return nil, err
	}
	out, used := c.Compress(new(bytes.Buffer), body)
	if used != codec {
		return nil, fmt.Errorf("the %s compressor fell back to codec %d", codecs[codec], used)
	}
	return slices.Clone(out), nil
}

// xerial frames snappy as the Java client's SnappyOutputStream: a magic,
// version 1 and compatible version 1, then per 32 KiB of input a
// big-endian length and a raw snappy block.
func xerial(body []byte) ([]byte, error) {
	const chunk = 32 << 10
	out := append([]byte("\x82SNAPPY\x00"), 0, 0, 0, 1, 0, 0, 0, 1)
	for len(body) > 0 {
		n := min(chunk, len(body))
		block, err := compress(kgo.CodecSnappy, body[:n])
		if err != nil {
			return nil, err
		}
		out = enc.AppendUint32(out, uint32(len(block)))
		out = append(out, block...)
		body = body[n:]
	}
	return out, nil
}

// setBase and setEpoch write what the broker stamps on a batch; neither
// field is under the CRC.
func setBase(raw []byte, base int64)   { enc.PutUint64(raw, uint64(base)) }
func setEpoch(raw []byte, epoch int32) { enc.PutUint32(raw[12:], uint32(epoch)) }

// crcOf is the CRC-32C a magic 2 batch's bytes call for.
func crcOf(raw []byte) uint32 { return crc32.Checksum(raw[crcStart:], castagnoli) }

func crcOK(raw []byte) bool { return enc.Uint32(raw[17:]) == crcOf(raw) }

// A message is a magic 1 message (Kafka 0.10's format): offset i64,
// size i32, then a CRC-32 (IEEE) over the rest: magic i8, attributes
// i8, timestamp i64, key and value each an i32 length (-1 null) and
// bytes. A compressed message's value is a message set whose offsets
// are relative, 0 to n-1; its own offset is its last inner message's.
type message struct {
	offset     int64
	attrs      int8
	ts         int64
	key, value []byte
}

func (m message) encode() []byte {
	out := enc.AppendUint64(nil, uint64(m.offset))
	out = enc.AppendUint32(out, 0) // size, below
	out = enc.AppendUint32(out, 0) // crc, below
	out = append(out, 1, byte(m.attrs))
	out = enc.AppendUint64(out, uint64(m.ts))
	for _, b := range [][]byte{m.key, m.value} {
		if b == nil {
			out = enc.AppendUint32(out, 0xffffffff)
			continue
		}
		out = enc.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	enc.PutUint32(out[8:], uint32(len(out)-logOverhead))
	enc.PutUint32(out[12:], crc32.ChecksumIEEE(out[16:]))
	return out
}

// v1Span is a magic 1 entry's offsets and its timestamp, with the inner
// messages of a compressed one.
func v1Span(raw []byte) (first, last, ts int64, inner []kmsg.MessageV1, err error) {
	m, err := readMessage(raw)
	if err != nil {
		return 0, 0, 0, nil, err
	}
	codec := m.Attributes & attrCodec
	if codec == 0 {
		return m.Offset, m.Offset, m.Timestamp, []kmsg.MessageV1{m}, nil
	}
	set, err := decompressor.Decompress(m.Value, kgo.CompressionCodecType(codec))
	if err != nil {
		return 0, 0, 0, nil, err
	}
	parts, err := splitBatches(set)
	if err != nil {
		return 0, 0, 0, nil, err
	}
	if len(parts) == 0 {
		return 0, 0, 0, nil, errors.New("an empty compressed message")
	}
	for _, p := range parts {
		im, err := readMessage(p)
		if err != nil {
			return 0, 0, 0, nil, err
		}
		inner = append(inner, im)
	}
	first = m.Offset - inner[len(inner)-1].Offset
	for i := range inner {
		inner[i].Offset += first
	}
	return first, m.Offset, m.Timestamp, inner, nil
}

// readMessage decodes one magic 1 message and checks its CRC.
func readMessage(raw []byte) (kmsg.MessageV1, error) {
	var m kmsg.MessageV1
	if err := m.ReadFrom(raw); err != nil {
		return m, err
	}
	if m.Magic != 1 || uint32(m.CRC) != crc32.ChecksumIEEE(raw[16:]) {
		return m, fmt.Errorf("message at offset %d: not magic 1 with a good CRC", m.Offset)
	}
	return m, nil
}
