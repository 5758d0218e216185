package format_test

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/seglog/seglog/format"
)

func TestParseSimpleName(t *testing.T) {
	tests := []struct {
		name string
		base uint64
		ext  string
		err  error
	}{
		{"0.store", 0, format.SimpleStoreExt, nil},
		{"0.index", 0, format.SimpleIndexExt, nil},
		{"00000000.store", 0, format.SimpleStoreExt, nil},
		{"16.index", 16, format.SimpleIndexExt, nil},
		{"00000000000000000016.store", 16, format.SimpleStoreExt, nil},
		{"18446744073709551615.store", math.MaxUint64, format.SimpleStoreExt, nil},
		{"000000000000000000000000007.store", 7, format.SimpleStoreExt, nil}, // long padding still fits
		{"18446744073709551616.store", 0, "", format.ErrSimpleName},          // past u64
		{".store", 0, "", format.ErrSimpleName},
		{".index", 0, "", format.ErrSimpleName},
		{"store", 0, "", format.ErrSimpleName},
		{"-1.store", 0, "", format.ErrSimpleName},
		{"+1.store", 0, "", format.ErrSimpleName},
		{"1a.store", 0, "", format.ErrSimpleName},
		{" 1.store", 0, "", format.ErrSimpleName},
		{"1.store.tmp", 0, "", format.ErrSimpleName},
		{"1.log", 0, "", format.ErrSimpleName},
		{"1.timeindex", 0, "", format.ErrSimpleName},
		{"1.STORE", 0, "", format.ErrSimpleName},
		{"", 0, "", format.ErrSimpleName},
	}
	for _, tc := range tests {
		base, ext, err := format.ParseSimpleName(tc.name)
		if !errors.Is(err, tc.err) || base != tc.base || ext != tc.ext {
			t.Errorf("ParseSimpleName(%q) = %d, %q, %v; want %d, %q, %v", tc.name, base, ext, err, tc.base, tc.ext, tc.err)
		}
	}
}

func TestSimpleRecordFrame(t *testing.T) {
	tests := []struct {
		value []byte
		want  []byte
	}{
		{nil, []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		{[]byte("Sushant"), append([]byte{0, 0, 0, 0, 0, 0, 0, 7}, "Sushant"...)}, // the design notes' own example
		{bytes.Repeat([]byte{0xff}, 256), append([]byte{0, 0, 0, 0, 0, 0, 1, 0}, bytes.Repeat([]byte{0xff}, 256)...)},
	}
	for _, tc := range tests {
		got := format.AppendSimpleRecord([]byte("prefix"), tc.value)
		if !bytes.Equal(got, append([]byte("prefix"), tc.want...)) {
			t.Errorf("AppendSimpleRecord(%q) = %x, want prefix+%x", tc.value, got, tc.want)
		}
		n, err := format.ParseSimpleFrame(tc.want)
		if err != nil || n != uint64(len(tc.value)) {
			t.Errorf("ParseSimpleFrame(%x) = %d, %v; want %d", tc.want, n, err, len(tc.value))
		}
	}
	for n := range format.SimpleFrameLen {
		if _, err := format.ParseSimpleFrame(make([]byte, n)); !errors.Is(err, format.ErrShort) {
			t.Errorf("ParseSimpleFrame(%d bytes): %v, want ErrShort", n, err)
		}
	}
	if n, _ := format.ParseSimpleFrame([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}); n != math.MaxUint64 {
		t.Errorf("all-ones length = %d, want MaxUint64", n)
	}
}

func TestSimpleIndexEntry(t *testing.T) {
	tests := []struct {
		e    format.SimpleIndexEntry
		want []byte
		zero bool
	}{
		{format.SimpleIndexEntry{}, make([]byte, 12), true},
		{format.SimpleIndexEntry{RelOffset: 1, Pos: 15}, []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 15}, false},
		{format.SimpleIndexEntry{RelOffset: math.MaxUint32, Pos: math.MaxUint64},
			[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, false},
		{format.SimpleIndexEntry{RelOffset: 0, Pos: 1 << 40}, []byte{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}, false},
	}
	for _, tc := range tests {
		got := format.AppendSimpleIndexEntry(nil, tc.e)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("AppendSimpleIndexEntry(%+v) = %x, want %x", tc.e, got, tc.want)
		}
		back, err := format.ParseSimpleIndexEntry(append(tc.want, 0xaa)) // trailing bytes are the next entry's
		if err != nil || back != tc.e || back.IsZero() != tc.zero {
			t.Errorf("ParseSimpleIndexEntry(%x) = %+v, %v (zero %v); want %+v (zero %v)", tc.want, back, err, back.IsZero(), tc.e, tc.zero)
		}
	}
	if _, err := format.ParseSimpleIndexEntry(make([]byte, format.SimpleIndexEntryLen-1)); !errors.Is(err, format.ErrShort) {
		t.Errorf("11 bytes: %v, want ErrShort", err)
	}
}
