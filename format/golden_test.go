package format_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/seglog/seglog/format"
)

// specExampleHex is docs/format.md §2's worked example, one record a line, copied from
// the spec (not produced by AppendRecord). testdata/spec-example.log holds
// the same bytes; both are pinned so that neither can be "refreshed" from
// the code by accident.
const specExampleHex = `
00000000000000000000000b73b4c3d217979cfe362a000000000006757365722d3168656c6c6f
00000000000000010000000bc23277ba17979cfe3c1fe10000000006757365722d32776f726c64
000000000000000200000009e14ccc3d17979cfe4215c20000000006757365722d31666f6f
`

const specExampleTS = 1700000000000000000

// specRecords are the records of the worked example, with the position and
// CRC the spec gives for each.
var specRecords = []struct {
	rec format.Record
	pos int64
	crc uint32
}{
	{format.Record{Offset: 0, Timestamp: specExampleTS, Key: []byte("user-1"), Value: []byte("hello")}, 0, 0x73b4c3d2},
	{format.Record{Offset: 1, Timestamp: specExampleTS + 100000000, Key: []byte("user-2"), Value: []byte("world")}, 39, 0xc23277ba},
	{format.Record{Offset: 2, Timestamp: specExampleTS + 200000000, Key: []byte("user-1"), Value: []byte("foo")}, 78, 0xe14ccc3d},
}

// specExampleEnd is where the next record of the example would be written.
const specExampleEnd = 115

func readSpecExample(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/spec-example.log")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestSpecExampleFile(t *testing.T) {
	want, err := hex.DecodeString(strings.Join(strings.Fields(specExampleHex), ""))
	if err != nil {
		t.Fatal(err)
	}
	got := readSpecExample(t)
	if len(got) != specExampleEnd {
		t.Fatalf("testdata/spec-example.log: %d bytes, want %d", len(got), specExampleEnd)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("testdata/spec-example.log differs from docs/format.md §2:\n got %x\nwant %x", got, want)
	}
}

func TestSpecExampleEncode(t *testing.T) {
	want := readSpecExample(t)
	var got []byte
	for _, sr := range specRecords {
		if int64(len(got)) != sr.pos {
			t.Fatalf("record %d would start at %d, spec says %d", sr.rec.Offset, len(got), sr.pos)
		}
		got = format.AppendRecord(got, &sr.rec)
	}
	if len(got) != specExampleEnd {
		t.Errorf("encoded length %d, spec says the next write goes to %d", len(got), specExampleEnd)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("AppendRecord of the spec example:\n got %x\nwant %x", got, want)
	}
}

func TestSpecExampleDecode(t *testing.T) {
	b := readSpecExample(t)
	pos := int64(0)
	for _, sr := range specRecords {
		if pos != sr.pos {
			t.Fatalf("record %d found at %d, spec says %d", sr.rec.Offset, pos, sr.pos)
		}
		r, h, err := format.ParseRecord(b[pos:])
		if err != nil {
			t.Fatalf("ParseRecord at %d: %v", pos, err)
		}
		if h.CRC != sr.crc {
			t.Errorf("record at %d: crc %#08x, spec says %#08x", pos, h.CRC, sr.crc)
		}
		if c := format.Checksum(sr.rec.Timestamp, sr.rec.Key, sr.rec.Value); c != sr.crc {
			t.Errorf("Checksum of record %d = %#08x, spec says %#08x", sr.rec.Offset, c, sr.crc)
		}
		want := format.Header{
			Offset:    sr.rec.Offset,
			Size:      uint32(len(sr.rec.Key) + len(sr.rec.Value)),
			CRC:       sr.crc,
			Timestamp: sr.rec.Timestamp,
			KeyLen:    uint32(len(sr.rec.Key)),
		}
		if h != want {
			t.Errorf("header at %d = %+v, want %+v", pos, h, want)
		}
		if r.Offset != sr.rec.Offset || r.Timestamp != sr.rec.Timestamp ||
			!bytes.Equal(r.Key, sr.rec.Key) || !bytes.Equal(r.Value, sr.rec.Value) {
			t.Errorf("record at %d = {%d %d %q %q}, want {%d %d %q %q}", pos,
				r.Offset, r.Timestamp, r.Key, r.Value,
				sr.rec.Offset, sr.rec.Timestamp, sr.rec.Key, sr.rec.Value)
		}
		pos += h.RecordLen()
	}
	if pos != specExampleEnd {
		t.Errorf("next position %d, spec says %d", pos, specExampleEnd)
	}
	if _, _, err := format.ParseRecord(b[pos:]); !errors.Is(err, format.ErrShort) {
		t.Errorf("ParseRecord at end of file: %v, want %v", err, format.ErrShort)
	}
}
