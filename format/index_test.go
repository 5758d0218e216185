package format_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"testing"

	"github.com/seglog/seglog/format"
)

func TestIndexEntryRoundTrip(t *testing.T) {
	tests := []struct {
		e    format.IndexEntry
		want string // hex, from docs/format.md §4: offset u64 | position u64, big-endian
	}{
		{format.IndexEntry{}, "00000000000000000000000000000000"},
		{format.IndexEntry{Offset: 1, Pos: 39}, "00000000000000010000000000000027"},
		{format.IndexEntry{Offset: 0x0102030405060708, Pos: 0x1112131415161718}, "01020304050607081112131415161718"},
		{format.IndexEntry{Offset: math.MaxUint64, Pos: math.MaxInt64}, "ffffffffffffffff7fffffffffffffff"},
		// Positions are not checked by the codec; a lying index entry
		// decodes as written and is caught against the .log.
		{format.IndexEntry{Offset: 7, Pos: -1}, "0000000000000007ffffffffffffffff"},
		{format.IndexEntry{Offset: 7, Pos: math.MinInt64}, "00000000000000078000000000000000"},
	}
	for _, tc := range tests {
		b := format.AppendIndexEntry(nil, tc.e)
		if got := hex.EncodeToString(b); got != tc.want {
			t.Errorf("AppendIndexEntry(%+v) = %s, want %s", tc.e, got, tc.want)
		}
		if len(b) != format.IndexEntryLen {
			t.Errorf("AppendIndexEntry(%+v): %d bytes, want %d", tc.e, len(b), format.IndexEntryLen)
		}
		got, err := format.ParseIndexEntry(b)
		if err != nil || got != tc.e {
			t.Errorf("ParseIndexEntry(%s) = %+v, %v; want %+v", tc.want, got, err, tc.e)
		}
	}
}

func TestTimeIndexEntryRoundTrip(t *testing.T) {
	tests := []struct {
		e    format.TimeIndexEntry
		want string // hex, from docs/format.md §4: offset u64 | timestamp i64, big-endian
	}{
		{format.TimeIndexEntry{}, "00000000000000000000000000000000"},
		{format.TimeIndexEntry{Offset: 0, Timestamp: specExampleTS}, "000000000000000017979cfe362a0000"},
		{format.TimeIndexEntry{Offset: math.MaxUint64, Timestamp: math.MaxInt64}, "ffffffffffffffff7fffffffffffffff"},
		{format.TimeIndexEntry{Offset: 3, Timestamp: -1}, "0000000000000003ffffffffffffffff"},
		{format.TimeIndexEntry{Offset: 3, Timestamp: math.MinInt64}, "00000000000000038000000000000000"},
		{format.TimeIndexEntry{Offset: 3, Timestamp: -specExampleTS}, "0000000000000003e8686301c9d60000"},
	}
	for _, tc := range tests {
		b := format.AppendTimeIndexEntry(nil, tc.e)
		if got := hex.EncodeToString(b); got != tc.want {
			t.Errorf("AppendTimeIndexEntry(%+v) = %s, want %s", tc.e, got, tc.want)
		}
		got, err := format.ParseTimeIndexEntry(b)
		if err != nil || got != tc.e {
			t.Errorf("ParseTimeIndexEntry(%s) = %+v, %v; want %+v", tc.want, got, err, tc.e)
		}
	}
}

// The spec example's .index (interval 1) walked as a file: entries are
// appended back to back and parsed at multiples of IndexEntryLen.
func TestIndexFile(t *testing.T) {
	var idx, tidx []byte
	for _, sr := range specRecords {
		idx = format.AppendIndexEntry(idx, format.IndexEntry{Offset: sr.rec.Offset, Pos: sr.pos})
		tidx = format.AppendTimeIndexEntry(tidx, format.TimeIndexEntry{Offset: sr.rec.Offset, Timestamp: sr.rec.Timestamp})
	}
	if len(idx) != 3*format.IndexEntryLen || len(tidx) != 3*format.IndexEntryLen {
		t.Fatalf("index %d bytes, time index %d bytes, want %d", len(idx), len(tidx), 3*format.IndexEntryLen)
	}
	for i, sr := range specRecords {
		e, err := format.ParseIndexEntry(idx[i*format.IndexEntryLen:])
		if err != nil || e.Offset != sr.rec.Offset || e.Pos != sr.pos {
			t.Errorf("index entry %d = %+v, %v", i, e, err)
		}
		te, err := format.ParseTimeIndexEntry(tidx[i*format.IndexEntryLen:])
		if err != nil || te.Offset != sr.rec.Offset || te.Timestamp != sr.rec.Timestamp {
			t.Errorf("time index entry %d = %+v, %v", i, te, err)
		}
	}
}

// A partial last entry (a file length not a multiple of 16) is ErrShort,
// never a panic, never a half-read entry.
func TestIndexEntryShort(t *testing.T) {
	full := format.AppendIndexEntry(nil, format.IndexEntry{Offset: math.MaxUint64, Pos: math.MaxInt64})
	for n := 0; n < format.IndexEntryLen; n++ {
		in := bytes.Clone(full[:n])
		e, err := format.ParseIndexEntry(in)
		if !errors.Is(err, format.ErrShort) || e != (format.IndexEntry{}) {
			t.Errorf("ParseIndexEntry(%d bytes) = %+v, %v; want zero entry, %v", n, e, err, format.ErrShort)
		}
		te, err := format.ParseTimeIndexEntry(in)
		if !errors.Is(err, format.ErrShort) || te != (format.TimeIndexEntry{}) {
			t.Errorf("ParseTimeIndexEntry(%d bytes) = %+v, %v; want zero entry, %v", n, te, err, format.ErrShort)
		}
	}
}
