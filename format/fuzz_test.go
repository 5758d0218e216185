package format_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/seglog/seglog/format"
)

// recordSeeds is encoder output (plus the spec's own bytes and a few
// damaged variants) for the record fuzzers.
func recordSeeds(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	spec := readSpecExample(f)
	seeds = append(seeds, spec, spec[39:], spec[78:], spec[:50])
	var seg []byte
	for _, tc := range sampleRecords {
		b := format.AppendRecord(nil, &tc.rec)
		seeds = append(seeds, b)
		seg = append(seg, b...)
	}
	seeds = append(seeds, seg)
	valid := format.AppendRecord(nil, &specRecords[0].rec)
	flip := func(i int) []byte { b := bytes.Clone(valid); b[i] ^= 0x10; return b }
	seeds = append(seeds,
		nil,
		make([]byte, format.HeaderLen),
		make([]byte, 64),
		flip(offSize+3),
		flip(offCRC),
		flip(offTimestamp+7),
		flip(offKeyLen+3),
		flip(format.HeaderLen),
		header(0, math.MaxUint32, 0, 0, 0),
		header(0, 4, 0, 0, 5),
		valid[:format.HeaderLen],
		valid[:len(valid)-1],
	)
	return seeds
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range recordSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := format.ParseHeader(b)
		if len(b) < format.HeaderLen {
			if !errors.Is(err, format.ErrShort) {
				t.Fatalf("%d bytes: err %v, want %v", len(b), err, format.ErrShort)
			}
			return
		}
		switch {
		case h.KeyLen > h.Size && !errors.Is(err, format.ErrKeyLen):
			t.Fatalf("keylen %d > size %d: err %v, want %v", h.KeyLen, h.Size, err, format.ErrKeyLen)
		case h.KeyLen <= h.Size && err != nil:
			t.Fatalf("keylen %d <= size %d: err %v", h.KeyLen, h.Size, err)
		}
		// The decoded header re-encodes to the input's first HeaderLen bytes.
		enc := make([]byte, format.HeaderLen)
		binary.BigEndian.PutUint64(enc[offOffset:], h.Offset)
		binary.BigEndian.PutUint32(enc[offSize:], h.Size)
		binary.BigEndian.PutUint32(enc[offCRC:], h.CRC)
		binary.BigEndian.PutUint64(enc[offTimestamp:], uint64(h.Timestamp))
		binary.BigEndian.PutUint32(enc[offKeyLen:], h.KeyLen)
		if !bytes.Equal(enc, b[:format.HeaderLen]) {
			t.Fatalf("header %+v re-encodes to %x, input %x", h, enc, b[:format.HeaderLen])
		}
		if h.RecordLen() != format.HeaderLen+int64(h.Size) {
			t.Fatalf("RecordLen %d for size %d", h.RecordLen(), h.Size)
		}
	})
}

// FuzzParseRecord scans b as a segment: record after record while they
// parse. Every accepted record re-encodes to exactly its bytes (a keylen of
// 0 decodes as a nil key, which encodes as keylen 0 again), and every
// failure is one of the codec's errors.
func FuzzParseRecord(f *testing.F) {
	for _, s := range recordSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for pos := 0; ; {
			in := b[pos:]
			r, h, err := format.ParseRecord(in)
			if err != nil {
				hh, herr := format.ParseHeader(in)
				switch {
				case errors.Is(err, format.ErrShort):
					if herr == nil && int64(len(in)) >= hh.RecordLen() {
						t.Fatalf("pos %d: ErrShort with %d bytes for a %d-byte record", pos, len(in), hh.RecordLen())
					}
				case errors.Is(err, format.ErrKeyLen):
					if h.KeyLen <= h.Size {
						t.Fatalf("pos %d: ErrKeyLen with keylen %d <= size %d", pos, h.KeyLen, h.Size)
					}
				case errors.Is(err, format.ErrCRC):
					if int64(len(in)) < h.RecordLen() {
						t.Fatalf("pos %d: ErrCRC on a record missing bytes", pos)
					}
					body := in[format.HeaderLen:h.RecordLen()]
					if format.Checksum(h.Timestamp, body[:h.KeyLen], body[h.KeyLen:]) == h.CRC {
						t.Fatalf("pos %d: ErrCRC but the CRC matches", pos)
					}
				default:
					t.Fatalf("pos %d: unexpected error %v", pos, err)
				}
				if !sameRecord(r, format.Record{}) {
					t.Fatalf("pos %d: record %+v returned with %v", pos, r, err)
				}
				return
			}
			n := h.RecordLen()
			if n > int64(len(in)) {
				t.Fatalf("pos %d: accepted a %d-byte record from %d bytes", pos, n, len(in))
			}
			if uint32(len(r.Key)) != h.KeyLen || int64(len(r.Key)+len(r.Value)) != int64(h.Size) {
				t.Fatalf("pos %d: key %d value %d bytes, header keylen %d size %d", pos, len(r.Key), len(r.Value), h.KeyLen, h.Size)
			}
			if (r.Key == nil) != (h.KeyLen == 0) {
				t.Fatalf("pos %d: keylen %d decoded as key %#v", pos, h.KeyLen, r.Key)
			}
			if enc := format.AppendRecord(nil, &r); !bytes.Equal(enc, in[:n]) {
				t.Fatalf("pos %d: record re-encodes to\n%x\ninput\n%x", pos, enc, in[:n])
			}
			if format.RecordLen(r.Key, r.Value) != n {
				t.Fatalf("pos %d: RecordLen %d, header says %d", pos, format.RecordLen(r.Key, r.Value), n)
			}
			pos += int(n)
		}
	})
}

// FuzzRecordRoundTrip goes the other way: whatever AppendRecord writes,
// ParseRecord reads back.
func FuzzRecordRoundTrip(f *testing.F) {
	for _, tc := range sampleRecords {
		f.Add(tc.rec.Offset, tc.rec.Timestamp, tc.rec.Key, tc.rec.Value)
	}
	f.Fuzz(func(t *testing.T, offset uint64, ts int64, key, value []byte) {
		in := format.Record{Offset: offset, Timestamp: ts, Key: key, Value: value}
		b := format.AppendRecord([]byte("prefix"), &in)
		if string(b[:6]) != "prefix" {
			t.Fatal("prefix clobbered")
		}
		r, h, err := format.ParseRecord(b[6:])
		if err != nil {
			t.Fatalf("ParseRecord: %v", err)
		}
		in.Key = normKey(in.Key)
		if !sameRecord(r, in) || h.RecordLen() != int64(len(b)-6) {
			t.Fatalf("decoded %+v (%d bytes), want %+v (%d bytes)", r, h.RecordLen(), in, len(b)-6)
		}
	})
}

// FuzzParseIndexEntry checks both index kinds: they share a layout, so the
// same bytes must decode and re-encode identically as either.
func FuzzParseIndexEntry(f *testing.F) {
	var idx []byte
	for _, sr := range specRecords {
		idx = format.AppendIndexEntry(idx, format.IndexEntry{Offset: sr.rec.Offset, Pos: sr.pos})
	}
	f.Add(idx)
	f.Add(idx[:format.IndexEntryLen-1])
	f.Add([]byte{})
	f.Add(format.AppendIndexEntry(nil, format.IndexEntry{Offset: math.MaxUint64, Pos: math.MinInt64}))
	f.Add(format.AppendTimeIndexEntry(nil, format.TimeIndexEntry{Offset: 2, Timestamp: specExampleTS + 200000000}))
	f.Add(format.AppendTimeIndexEntry(nil, format.TimeIndexEntry{Offset: 9, Timestamp: -1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := format.ParseIndexEntry(b)
		te, terr := format.ParseTimeIndexEntry(b)
		if len(b) < format.IndexEntryLen {
			if !errors.Is(err, format.ErrShort) || !errors.Is(terr, format.ErrShort) {
				t.Fatalf("%d bytes: errors %v, %v; want %v", len(b), err, terr, format.ErrShort)
			}
			return
		}
		if err != nil || terr != nil {
			t.Fatalf("%d bytes: errors %v, %v", len(b), err, terr)
		}
		if enc := format.AppendIndexEntry(nil, e); !bytes.Equal(enc, b[:format.IndexEntryLen]) {
			t.Fatalf("index entry %+v re-encodes to %x, input %x", e, enc, b[:format.IndexEntryLen])
		}
		if enc := format.AppendTimeIndexEntry(nil, te); !bytes.Equal(enc, b[:format.IndexEntryLen]) {
			t.Fatalf("time index entry %+v re-encodes to %x, input %x", te, enc, b[:format.IndexEntryLen])
		}
		if e.Offset != te.Offset || e.Pos != te.Timestamp {
			t.Fatalf("same bytes, different entries: %+v %+v", e, te)
		}
	})
}

var segmentNameRE = regexp.MustCompile(`^[0-9]{20}(\.log|\.index|\.timeindex)$`)

// FuzzParseSegmentName: accepted names re-encode to themselves, and the
// accepted set is exactly <20 ASCII digits within u64><extension>.
func FuzzParseSegmentName(f *testing.F) {
	for _, s := range []string{
		format.SegmentName(0, format.LogExt),
		format.SegmentName(123456, format.IndexExt),
		format.SegmentName(math.MaxUint64, format.TimeIndexExt),
		"99999999999999999999.log",
		"00000000000000000000.log.deleted",
		"00000000000000000000.tmp",
		"+0000000000000000001.log",
		"0000000000000000000.log",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		base, ext, err := format.ParseSegmentName(name)
		m := segmentNameRE.FindStringSubmatch(name)
		want := m != nil
		if want {
			if _, perr := strconv.ParseUint(name[:20], 10, 64); perr != nil {
				want = false
			}
		}
		if err != nil {
			if !errors.Is(err, format.ErrSegmentName) {
				t.Fatalf("ParseSegmentName(%q): error %v is not %v", name, err, format.ErrSegmentName)
			}
			if want {
				t.Fatalf("ParseSegmentName(%q) rejected a valid name: %v", name, err)
			}
			return
		}
		if !want {
			t.Fatalf("ParseSegmentName(%q) accepted an invalid name: %d %q", name, base, ext)
		}
		if ext != m[1] {
			t.Fatalf("ParseSegmentName(%q): ext %q", name, ext)
		}
		if got := format.SegmentName(base, ext); got != name {
			t.Fatalf("ParseSegmentName(%q) = %d, %q; re-encodes to %q", name, base, ext, got)
		}
	})
}

var topicRE = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,248}$`)

// FuzzValidateTopic checks ValidateTopic against docs/format.md §1's rule written as
// a regular expression.
func FuzzValidateTopic(f *testing.F) {
	for _, s := range []string{"orders", "a", ".", "..", ".x", "../x", "a/b", "ü", "a\x00", "A.b_c-9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := format.ValidateTopic(name)
		if err != nil && !errors.Is(err, format.ErrTopicName) {
			t.Fatalf("ValidateTopic(%q): error %v is not %v", name, err, format.ErrTopicName)
		}
		if want := topicRE.MatchString(name); want != (err == nil) {
			t.Fatalf("ValidateTopic(%q) = %v, spec says valid = %v", name, err, want)
		}
	})
}

var partitionRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})$`)

func FuzzParsePartition(f *testing.F) {
	for _, s := range []string{"0", "7", "123", "", "01", "-1", "+1", "1a", "1234567890", "999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n, err := format.ParsePartition(name)
		if err != nil {
			if !errors.Is(err, format.ErrPartitionName) {
				t.Fatalf("ParsePartition(%q): error %v is not %v", name, err, format.ErrPartitionName)
			}
			if partitionRE.MatchString(name) {
				t.Fatalf("ParsePartition(%q) rejected a valid name: %v", name, err)
			}
			return
		}
		if !partitionRE.MatchString(name) {
			t.Fatalf("ParsePartition(%q) = %d, accepted an invalid name", name, n)
		}
		if strconv.Itoa(n) != name {
			t.Fatalf("ParsePartition(%q) = %d", name, n)
		}
	})
}

// FuzzCRC: the record CRC, on whichever path the CPU takes, is hash/crc32's
// IEEE CRC for any input and starting value.
func FuzzCRC(f *testing.F) {
	f.Add([]byte(""), uint32(0))
	f.Add(bytes.Repeat([]byte{0xa5}, 127), uint32(1))
	f.Add(bytes.Repeat([]byte("0123456789abcdef"), 8), uint32(0xffffffff))
	f.Add(bytes.Repeat([]byte{1, 2, 3}, 700), uint32(0xdeadbeef))
	f.Fuzz(func(t *testing.T, p []byte, start uint32) {
		if got, want := format.UpdateChecksum(start, p), crc32.Update(start, crc32.IEEETable, p); got != want {
			t.Fatalf("UpdateChecksum(%08x, %d bytes) = %08x, want %08x", start, len(p), got, want)
		}
	})
}
