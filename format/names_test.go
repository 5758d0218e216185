package format_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/seglog/seglog/format"
)

func TestSegmentNameRoundTrip(t *testing.T) {
	tests := []struct {
		base uint64
		ext  string
		name string
	}{
		{0, format.LogExt, "00000000000000000000.log"},
		{0, format.IndexExt, "00000000000000000000.index"},
		{0, format.TimeIndexExt, "00000000000000000000.timeindex"},
		{123456, format.LogExt, "00000000000000123456.log"},
		{123456, format.TimeIndexExt, "00000000000000123456.timeindex"},
		{math.MaxUint64, format.LogExt, "18446744073709551615.log"},
		{math.MaxUint64, format.IndexExt, "18446744073709551615.index"},
	}
	for _, tc := range tests {
		if got := format.SegmentName(tc.base, tc.ext); got != tc.name {
			t.Errorf("SegmentName(%d, %q) = %q, want %q", tc.base, tc.ext, got, tc.name)
		}
		if got := string(format.AppendSegmentName([]byte("dir/"), tc.base, tc.ext)); got != "dir/"+tc.name {
			t.Errorf("AppendSegmentName(\"dir/\", %d, %q) = %q, want %q", tc.base, tc.ext, got, "dir/"+tc.name)
		}
		base, ext, err := format.ParseSegmentName(tc.name)
		if err != nil || base != tc.base || ext != tc.ext {
			t.Errorf("ParseSegmentName(%q) = %d, %q, %v; want %d, %q", tc.name, base, ext, err, tc.base, tc.ext)
		}
	}
}

func TestParseSegmentNameRejects(t *testing.T) {
	for _, name := range []string{
		"",
		"0000000000000000000.log",   // 19 digits
		"000000000000000000000.log", // 21 digits
		"00000000000000000000",      // no extension
		"00000000000000000000.",
		"00000000000000000000.log.deleted", // retention leftover
		"00000000000000000000.index.deleted",
		"00000000000000000000.tmp",
		"00000000000000000000.LOG",
		"00000000000000000000.log ",
		"00000000000000000000log",
		"0000000000000000000a.log",
		"000000000000000000 0.log",
		"abcdefghijklmnopqrst.log",
		"0000000000000000000٣.log", // non-ASCII digit
		"99999999999999999999.log", // overflows u64
		"18446744073709551616.log", // max u64 + 1
		"+0000000000000000001.log",
		"-0000000000000000001.log",
		"0x000000000000000001.log",
		"0_000000000000000001.log",
		".00000000000000000000.log",
		"00000000000000000000.log/",
		"../0000000000000000000.log",
	} {
		base, ext, err := format.ParseSegmentName(name)
		if !errors.Is(err, format.ErrSegmentName) {
			t.Errorf("ParseSegmentName(%q) = %d, %q, %v; want %v", name, base, ext, err, format.ErrSegmentName)
		}
	}
}

func TestValidateTopic(t *testing.T) {
	for _, name := range []string{
		"orders",
		"a",
		"A.b_c-9",
		"a..b",
		"x.",
		"-",
		"_",
		"0",
		strings.Repeat("a", format.MaxTopicLen),
	} {
		if err := format.ValidateTopic(name); err != nil {
			t.Errorf("ValidateTopic(%q) = %v, want nil", name, err)
		}
	}
	if format.MaxTopicLen != 249 {
		t.Errorf("MaxTopicLen = %d, docs/format.md §1 says 249", format.MaxTopicLen)
	}
	for _, name := range []string{
		"",
		".",
		"..",
		".x",
		".quarantine",
		"../x",
		"a/b",
		"/a",
		`a\b`,
		"a b",
		"a\tb",
		"ü",
		"aü",
		strings.Repeat("a", format.MaxTopicLen+1),
		"a\x00",
		"a\n",
		"a:b",
		"a*",
	} {
		err := format.ValidateTopic(name)
		if !errors.Is(err, format.ErrTopicName) {
			t.Errorf("ValidateTopic(%q) = %v, want %v", name, err, format.ErrTopicName)
		}
	}
}

func TestParsePartition(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int
	}{
		{"0", 0},
		{"7", 7},
		{"123", 123},
		{"999999999", 999999999},
	} {
		got, err := format.ParsePartition(tc.name)
		if err != nil || got != tc.want {
			t.Errorf("ParsePartition(%q) = %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	for _, name := range []string{
		"",
		"01",
		"00",
		"-1",
		"+1",
		"1a",
		"a",
		" 1",
		"1 ",
		"1.0",
		"0x1",
		"٣", // non-ASCII digit
		"1234567890",
		"99999999999999999999",
		".gaps.json",
	} {
		got, err := format.ParsePartition(name)
		if !errors.Is(err, format.ErrPartitionName) {
			t.Errorf("ParsePartition(%q) = %d, %v; want %v", name, got, err, format.ErrPartitionName)
		}
	}
}
