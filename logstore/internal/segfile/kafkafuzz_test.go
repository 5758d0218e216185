package segfile

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/seglog/seglog/format/kafka"
)

// kafkaSegmentSeeds are segments of every kind of entry, clean and
// damaged, for the scanner's fuzzer.
func kafkaSegmentSeeds(tb testing.TB) [][]byte {
	var batches [][]byte
	base := int64(0)
	for i, codec := range []kafka.Codec{kafka.CodecNone, kafka.CodecGzip, kafka.CodecSnappy, kafka.CodecLZ4, kafka.CodecZstd, kafka.CodecNone} {
		n := 1 + i
		batches = append(batches, kBatch(tb, base, codec, kRecords(base, n)))
		base += int64(n)
	}
	legacy := kLegacy(1, 3, 1, 7, nil, kgoCompress(tb, kafka.CodecGzip, slices.Concat(kLegacy(1, 0, 0, 1, nil, []byte("a")), kLegacy(1, 1, 0, 1, []byte("k"), nil))))
	clean, pos := segment(slices.Concat([][]byte{kLegacy(0, 0, 0, 0, []byte("k"), []byte("v")), legacy}, batches)...)
	seeds := [][]byte{nil, clean, clean[:len(clean)-5], append(bytes.Clone(clean), make([]byte, 300)...)}
	for _, at := range []int64{pos[2] + 8, pos[2] + 16, pos[3] + 40, pos[4] + 2} {
		d := bytes.Clone(clean)
		d[at] ^= 0x21
		seeds = append(seeds, d)
	}
	return append(seeds, slices.Insert(bytes.Clone(clean), int(pos[3]), []byte("some bytes that are no batch at all, none")...))
}

// FuzzKafkaScan checks what the scanner promises on any bytes: every
// entry it yields is the file's bytes there and checks out, entries do
// not overlap and their base offsets never go down, a resync moves
// forward to an entry that is then read, the verdict is the same whatever
// the read size, and the records of every entry read without a panic.
func FuzzKafkaScan(f *testing.F) {
	for _, s := range kafkaSegmentSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		verdicts := make([][]string, 2)
		recs := NewKafkaRecords(1 << 20)
		defer recs.Close()
		for k, chunk := range []int{kafka.BatchHeaderLen, 0} {
			s := NewKafkaScanner(bytes.NewReader(data), int64(len(data)), KafkaOptions{Chunk: chunk, MaxBatch: 1 << 20})
			end, lowest, resumeAt, resumeOff := int64(0), int64(-1), int64(-1), int64(-1)
			for rounds := 0; ; rounds++ {
				if rounds > len(data)+1 {
					t.Fatal("the scan does not end")
				}
				for s.Next() {
					b := s.Batch()
					if b.Pos < end || b.Pos+b.Size() > int64(len(data)) || !bytes.Equal(b.Bytes, data[b.Pos:b.Pos+b.Size()]) {
						t.Fatalf("entry at %d of %d bytes, after %d: not the file's bytes there", b.Pos, b.Size(), end)
					}
					if resumeAt >= 0 && (b.Pos != resumeAt || b.BaseOffset() != resumeOff) {
						t.Fatalf("resynced to byte %d offset %d, read %d offset %d", resumeAt, resumeOff, b.Pos, b.BaseOffset())
					}
					resumeAt = -1
					checkEntry(t, b)
					if b.BaseOffset() < lowest || b.LastOffset() < b.BaseOffset() {
						t.Fatalf("offsets %d..%d after %d", b.BaseOffset(), b.LastOffset(), lowest)
					}
					lowest, end = b.BaseOffset(), b.Pos+b.Size()
					verdicts[k] = append(verdicts[k], "entry at "+strconv.FormatInt(b.Pos, 10))
					checkRecords(t, recs, b)
				}
				if s.Err() != nil {
					t.Fatal(s.Err())
				}
				d := s.Damage()
				if d == nil {
					break
				}
				verdicts[k] = append(verdicts[k], d.Error())
				if d.Pos != s.Pos() || d.End > int64(len(data)) || d.Resumed && (d.End <= d.Pos || d.ResumeOffset <= d.Prev) || d.Class != Corrupt && d.Class != Incomplete {
					t.Fatalf("damage %+v at scan position %d", d, s.Pos())
				}
				if !s.Resync() {
					break
				}
				resumeAt, resumeOff = d.End, d.ResumeOffset
			}
			if resumeAt >= 0 {
				t.Fatalf("resynced to byte %d, then read nothing", resumeAt)
			}
		}
		if !slices.Equal(verdicts[0], verdicts[1]) {
			t.Fatalf("the verdict depends on the read size:\n%q\n%q", verdicts[0], verdicts[1])
		}
	})
}

// checkEntry checks an entry the scanner yielded with the codec.
func checkEntry(t *testing.T, b *KafkaBatch) {
	t.Helper()
	if b.Legacy() {
		if m, err := kafka.ParseLegacyMessage(b.Bytes); err != nil || m.Size() != b.Size() {
			t.Fatalf("legacy entry at %d: %v", b.Pos, err)
		}
		return
	}
	h, err := kafka.ParseBatchHeader(b.Bytes)
	if err == nil {
		err = h.CheckCRC(b.Bytes)
	}
	if err != nil || h.Size() != b.Size() || h != b.Header {
		t.Fatalf("batch at %d: %v", b.Pos, err)
	}
}

// checkRecords reads b's records: offsets inside the entry's range,
// rising, no more than the header counts.
func checkRecords(t *testing.T, c *KafkaRecords, b *KafkaBatch) {
	t.Helper()
	c.Reset(b)
	prev, n := int64(-1), 0
	for c.Next() {
		off := c.Offset()
		if off <= prev || off > b.LastOffset() || !b.Legacy() && off < b.BaseOffset() {
			t.Fatalf("entry at %d (offsets %d..%d): record at offset %d after %d", b.Pos, b.BaseOffset(), b.LastOffset(), off, prev)
		}
		prev, n = off, n+1
	}
	if !b.Legacy() && c.Err() == nil && n != int(b.Header.RecordsCount) {
		t.Fatalf("batch at %d: %d records, its header counts %d", b.Pos, n, b.Header.RecordsCount)
	}
	if c.Decoded() > 1<<20 {
		t.Fatalf("decoded %d bytes past the limit", c.Decoded())
	}
}

// FuzzKafkaRecords fuzzes the records of an entry whose framing and CRC
// the harness makes right, so that the fuzzer explores the decompression
// and the record decoding rather than the CRC.
func FuzzKafkaRecords(f *testing.F) {
	recs := kRecords(100, 4)
	raw := recordBytes(recs)
	for _, codec := range []kafka.Codec{kafka.CodecNone, kafka.CodecGzip, kafka.CodecSnappy, kafka.CodecLZ4, kafka.CodecZstd} {
		f.Add(uint8(2), int16(codec), int32(4), int32(3), kgoCompress(f, codec, raw))
	}
	f.Add(uint8(2), int16(kafka.CodecSnappy), int32(4), int32(3), xerial(raw, 50))
	f.Add(uint8(2), int16(0x08), int32(2), int32(9), raw)
	inner := slices.Concat(kLegacy(1, 0, 0, 1, nil, []byte("a")), kLegacy(1, 1, 0, 2, []byte("k"), nil))
	f.Add(uint8(1), int16(kafka.CodecGzip), int32(0), int32(0), kgoCompress(f, kafka.CodecGzip, inner))
	f.Add(uint8(0), int16(kafka.CodecSnappy), int32(0), int32(0), xerial(inner, 30))
	f.Add(uint8(1), int16(0), int32(0), int32(0), []byte("value"))
	f.Fuzz(func(t *testing.T, magic uint8, attrs int16, count, lastDelta int32, section []byte) {
		var entry []byte
		switch magic % 3 {
		case 2:
			entry = sealBatch(kmsg.RecordBatch{FirstOffset: 100, Attributes: attrs, LastOffsetDelta: lastDelta, NumRecords: count, MaxTimestamp: 9, Records: section})
		default:
			entry = kLegacy(int8(magic%3), 100+int64(lastDelta&0xff), int8(attrs), 5, nil, section)
		}
		s := kafkaScan(entry, KafkaOptions{})
		if !s.Next() {
			return // a header out of range
		}
		c := NewKafkaRecords(1 << 20)
		defer c.Close()
		checkRecords(t, c, s.Batch())
	})
}

// FuzzKafkaDecompress: whatever the bytes, decompression fails or gives
// at most the limit, and never panics.
func FuzzKafkaDecompress(f *testing.F) {
	raw := recordBytes(bigRecords(0, 5))
	for _, codec := range []kafka.Codec{kafka.CodecGzip, kafka.CodecSnappy, kafka.CodecLZ4, kafka.CodecZstd} {
		f.Add(uint8(codec), kgoCompress(f, codec, raw))
	}
	f.Add(uint8(kafka.CodecSnappy), xerial(raw, 100))
	f.Add(uint8(kafka.CodecSnappy), binary.AppendUvarint(nil, 1<<30))
	f.Add(uint8(7), []byte{1})
	f.Fuzz(func(t *testing.T, codec uint8, src []byte) {
		d := decompressor{limit: 64 << 10}
		defer d.close()
		out, err := d.decompress(kafka.Codec(codec), src)
		if err == nil && len(out) > 64<<10 {
			t.Fatalf("%d bytes out, past the limit", len(out))
		}
	})
}
