package kafka_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/seglog/seglog/format/kafka"
)

// ixBytes is hex with spaces for reading: the golden bytes of these tests,
// written from the layout Kafka's OffsetIndex and TimeIndex document.
func ixBytes(t testing.TB, h string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(h, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ixZeros is n zero bytes: the tail Kafka preallocates.
func ixZeros(n int) string { return strings.Repeat("00", n) }

func TestParseOffsetEntry(t *testing.T) {
	for _, tc := range []struct {
		hex  string
		want kafka.OffsetEntry
	}{
		{"00000005 00001000", kafka.OffsetEntry{RelOffset: 5, Position: 4096}},
		{"00000000 00000000", kafka.OffsetEntry{}},
		{"7fffffff 7fffffff", kafka.OffsetEntry{RelOffset: 1<<31 - 1, Position: 1<<31 - 1}},
		{"80000000 ffffffff", kafka.OffsetEntry{RelOffset: -1 << 31, Position: -1}}, // read signed, as Kafka does
		{"00000001 00000002 ffff", kafka.OffsetEntry{RelOffset: 1, Position: 2}},    // the entry at the start
	} {
		got, err := kafka.ParseOffsetEntry(ixBytes(t, tc.hex))
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.hex, got, err, tc.want)
		}
	}
	if got := (kafka.OffsetEntry{RelOffset: 5}).Offset(4711); got != 4716 {
		t.Errorf("offset %d, want 4716", got)
	}
	if _, err := kafka.ParseOffsetEntry(ixBytes(t, "00000005 000010")); !errors.Is(err, kafka.ErrOffsetIndex) {
		t.Errorf("7 bytes: %v", err)
	}
}

func TestParseTimeEntry(t *testing.T) {
	for _, tc := range []struct {
		hex  string
		want kafka.TimeEntry
	}{
		{"0000018bcfe56800 00000007", kafka.TimeEntry{Timestamp: 1700000000000, RelOffset: 7}},
		{"ffffffffffffffff 00000000", kafka.TimeEntry{Timestamp: -1}},
		{"0000000000000001 80000000", kafka.TimeEntry{Timestamp: 1, RelOffset: -1 << 31}},
	} {
		got, err := kafka.ParseTimeEntry(ixBytes(t, tc.hex))
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.hex, got, err, tc.want)
		}
	}
	if _, err := kafka.ParseTimeEntry(ixBytes(t, "0000018bcfe56800 000000")); !errors.Is(err, kafka.ErrTimeIndex) {
		t.Errorf("11 bytes: %v", err)
	}
}

func TestIndexEntries(t *testing.T) {
	manyOffsets := ""
	for i := range 9000 { // past one block of reading
		manyOffsets += hex.EncodeToString([]byte{0, byte(i >> 16), byte(i >> 8), byte(i), 0, 0, 1, 0})
	}
	for _, tc := range []struct {
		name         string
		offset, time string
		wantOffset   int64
		wantTime     int64
	}{
		{"empty", "", "", 0, 0},
		{"trimmed", "00000003 00001000 00000009 00002000", "0000018bcfe56800 00000003 0000018bcfe56c00 00000009", 2, 2},
		{"preallocated, nothing written", ixZeros(8 * 100), ixZeros(12 * 100), 1, 0},
		{"preallocated after two entries",
			"00000003 00001000 00000009 00002000" + ixZeros(8*1000),
			"0000018bcfe56800 00000003 0000018bcfe56c00 00000009" + ixZeros(12*1000), 2, 2},
		{"entry 0 all zeros, then one", "00000000 00000000 00000004 00000100" + ixZeros(8*3), "0000000000000000 00000000 0000018bcfe56800 00000004" + ixZeros(12*3), 2, 2},
		{"a zero entry among real ones", "00000003 00001000" + ixZeros(8) + "00000009 00002000" + ixZeros(80), "0000018bcfe56800 00000003" + ixZeros(12) + "0000018bcfe56c00 00000009" + ixZeros(120), 3, 3},
		{"a torn last entry", "00000003 00001000 000000", "0000018bcfe56800 00000003 0000018b", 1, 1},
		{"zeros past a block", "00000003 00001000" + ixZeros(200_000), "0000018bcfe56800 00000003" + ixZeros(300_000), 1, 1},
		{"entries past a block", manyOffsets + ixZeros(8*10), "", 9000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ixBytes(t, tc.offset)
			if n, err := kafka.OffsetIndexEntries(bytes.NewReader(b), int64(len(b))); n != tc.wantOffset || err != nil {
				t.Errorf(".index: %d entries, %v; want %d", n, err, tc.wantOffset)
			}
			b = ixBytes(t, tc.time)
			if n, err := kafka.TimeIndexEntries(bytes.NewReader(b), int64(len(b))); n != tc.wantTime || err != nil {
				t.Errorf(".timeindex: %d entries, %v; want %d", n, err, tc.wantTime)
			}
		})
	}
}

// ixFailing fails every read, as a disk error does.
type ixFailing struct{}

var errIxDisk = errors.New("input/output error")

func (ixFailing) ReadAt([]byte, int64) (int, error) { return 0, errIxDisk }

func TestIndexReadErrors(t *testing.T) {
	if _, err := kafka.OffsetIndexEntries(ixFailing{}, 16); !errors.Is(err, errIxDisk) {
		t.Errorf("failing read: %v", err)
	}
	if err := kafka.CheckTimeIndex(ixFailing{}, 24); !errors.Is(err, errIxDisk) {
		t.Errorf("failing read: %v", err)
	}
	// A file that shrank since its size was taken.
	b := ixBytes(t, "00000003 00001000")
	if err := kafka.CheckOffsetIndex(bytes.NewReader(b), 24); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("shrunk index: %v", err)
	}
}

func TestCheckOffsetIndex(t *testing.T) {
	for _, tc := range []struct {
		name, hex string
		want      string // in the error; "" for none
	}{
		{"empty", "", ""},
		{"good", "00000003 00001000 00000009 00002000 0000000a 00003000", ""},
		{"good, preallocated", "00000003 00001000" + ixZeros(800), ""},
		{"nothing written yet", ixZeros(800), ""},
		{"torn entry", "00000003 00001000 0000", "offset index: 10 bytes, not a whole number of 8-byte entries"},
		{"offsets back", "00000003 00001000 00000009 00002000 00000005 00003000", "offset index: entry 2: relative offset 5 is not above entry 1's 9"},
		{"offset repeated", "00000003 00001000 00000003 00002000", "offset index: entry 1: relative offset 3 is not above entry 0's 3"},
		{"zero among entries", "00000003 00001000" + ixZeros(8) + "00000009 00002000", "offset index: entry 1: relative offset 0 is not above entry 0's 3"},
		{"last below the base", "80000000 00001000", "offset index: the last entry's offset is below the segment's base (relative offset -2147483648)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ixBytes(t, tc.hex)
			ixWantErr(t, kafka.CheckOffsetIndex(bytes.NewReader(b), int64(len(b))), kafka.ErrOffsetIndex, tc.want)
		})
	}
}

func TestCheckTimeIndex(t *testing.T) {
	for _, tc := range []struct {
		name, hex string
		want      string
	}{
		{"empty", "", ""},
		{"good", "0000018bcfe56800 00000003 0000018bcfe56c00 00000009", ""},
		{"good, preallocated", "0000018bcfe56800 00000003" + ixZeros(1200), ""},
		{"same timestamp twice", "0000018bcfe56800 00000003 0000018bcfe56800 00000009", ""},
		{"torn entry", "0000018bcfe56800 00000003 00", "time index: 13 bytes, not a whole number of 12-byte entries"},
		{"timestamps back", "0000018bcfe56c00 00000003 0000018bcfe56800 00000009", "time index: entry 1: timestamp 1700000000000 is below entry 0's 1700000001024"},
		{"zero timestamp among entries", "0000018bcfe56800 00000003 0000000000000000 00000009", "time index: entry 1: timestamp 0 is below entry 0's 1700000000000"},
		{"last below the base", "0000018bcfe56800 00000003 0000018bcfe56c00 fffffffe", "time index: the last entry's offset is below the segment's base (relative offset -2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ixBytes(t, tc.hex)
			ixWantErr(t, kafka.CheckTimeIndex(bytes.NewReader(b), int64(len(b))), kafka.ErrTimeIndex, tc.want)
		})
	}
}

// ixWantErr checks err is kind with message want, or nil for "".
func ixWantErr(t *testing.T, err, kind error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("unexpected error: %v", err)
	case want != "" && (err == nil || err.Error() != want || !errors.Is(err, kind)):
		t.Errorf("error %v, want %q (%v)", err, want, kind)
	}
}

func FuzzOffsetIndex(f *testing.F) {
	for _, s := range []string{
		"", "00000003 00001000 00000009 00002000", "00000003 00001000" + ixZeros(80), ixZeros(80),
		"00000003 00001000" + ixZeros(8) + "00000009 00002000", "80000000 00001000", "00000003 00001000 0000",
	} {
		f.Add(ixBytes(f, s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := kafka.OffsetIndexEntries(bytes.NewReader(b), int64(len(b)))
		whole := int64(len(b)) / kafka.OffsetEntryLen
		if err != nil || n > whole || whole > 0 && n == 0 {
			t.Fatalf("%d whole entries: %d real, %v", whole, n, err)
		}
		for i := n; i < whole; i++ {
			if e, _ := kafka.ParseOffsetEntry(b[i*kafka.OffsetEntryLen:]); e != (kafka.OffsetEntry{}) {
				t.Fatalf("entry %d past the %d real ones: %+v", i, n, e)
			}
		}
		if err := kafka.CheckOffsetIndex(bytes.NewReader(b), int64(len(b))); err != nil && !errors.Is(err, kafka.ErrOffsetIndex) {
			t.Fatalf("check: %v", err)
		}
	})
}

func FuzzTimeIndex(f *testing.F) {
	for _, s := range []string{
		"", "0000018bcfe56800 00000003 0000018bcfe56c00 00000009", "0000018bcfe56800 00000003" + ixZeros(120), ixZeros(120),
		"0000018bcfe56c00 00000003 0000018bcfe56800 00000009", "0000018bcfe56800 fffffffe", "0000018bcfe56800 00000003 00",
	} {
		f.Add(ixBytes(f, s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := kafka.TimeIndexEntries(bytes.NewReader(b), int64(len(b)))
		whole := int64(len(b)) / kafka.TimeEntryLen
		if err != nil || n > whole {
			t.Fatalf("%d whole entries: %d real, %v", whole, n, err)
		}
		for i := n; i < whole; i++ {
			if e, _ := kafka.ParseTimeEntry(b[i*kafka.TimeEntryLen:]); e != (kafka.TimeEntry{}) {
				t.Fatalf("entry %d past the %d real ones: %+v", i, n, e)
			}
		}
		if err := kafka.CheckTimeIndex(bytes.NewReader(b), int64(len(b))); err != nil && !errors.Is(err, kafka.ErrTimeIndex) {
			t.Fatalf("check: %v", err)
		}
	})
}

func TestIndexNegativeSize(t *testing.T) {
	r := bytes.NewReader(nil)
	if n, err := kafka.OffsetIndexEntries(r, -8); n != 0 || err != nil {
		t.Errorf(".index of -8 bytes: %d entries, %v", n, err)
	}
	if n, err := kafka.TimeIndexEntries(r, -12); n != 0 || err != nil {
		t.Errorf(".timeindex of -12 bytes: %d entries, %v", n, err)
	}
	if err := kafka.CheckTxnIndex(r, -34, 0); err != nil {
		t.Errorf(".txnindex of -34 bytes: %v", err)
	}
}
