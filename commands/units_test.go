package commands

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	good := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"1", 1},
		{"1048576", 1048576},
		{"512k", 512 << 10},
		{"512K", 512 << 10},
		{"512KiB", 512 << 10},
		{"64M", 64 << 20},
		{"64MiB", 64 << 20},
		{"1G", 1 << 30},
		{"1GiB", 1 << 30},
		{"10kB", 10000},
		{"3MB", 3000000},
		{"2GB", 2000000000},
		{"1T", 1 << 40},
	}
	for _, tt := range good {
		got, err := parseSize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "k", "KiB", "12q", "1x", "-1", "-1k", "abc", "1e3", "1..2k", "1kk", "10 zB", "99999999999999G", "1Ki"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		} else if !strings.Contains(err.Error(), in) {
			t.Errorf("parseSize(%q): error %q does not quote the input", in, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	good := []struct {
		in   string
		want time.Duration
	}{
		{"90s", 90 * time.Second},
		{"2h", 2 * time.Hour},
		{"1h30m", 90 * time.Minute},
		{"7d", 7 * 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"1d1s", 24*time.Hour + time.Second},
		{"0s", 0},
		{"0d", 0},
		{"250ms", 250 * time.Millisecond},
	}
	for _, tt := range good {
		got, err := parseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "d", "7", "7x", "abc", "1d2d", "d5h", "-5s", "-1d", "-1h30m", "1dd"} {
		if got, err := parseDuration(in); err == nil {
			t.Errorf("parseDuration(%q) = %v, want an error", in, got)
		}
	}
	if _, err := parseDuration("-5s"); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("parseDuration(-5s): %v, want a 'negative' error", err)
	}
}

func TestUnescape(t *testing.T) {
	good := []struct{ in, want string }{
		{`\n`, "\n"},
		{`\t`, "\t"},
		{`\r\n`, "\r\n"},
		{`\0`, "\x00"},
		{`\\`, `\`},
		{`\x1e`, "\x1e"},
		{`\xFF\xfe`, "\xff\xfe"},
		{`||`, "||"},
		{`\r\n--\r\n`, "\r\n--\r\n"},
		{`a\`, `a\`},
		{"é", "é"},
		{``, ``},
	}
	for _, tt := range good {
		got, err := unescape(tt.in)
		if err != nil || !bytes.Equal(got, []byte(tt.want)) {
			t.Errorf("unescape(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{`\q`, `\x4`, `\x`, `\xzz`, `a\u0041`} {
		if got, err := unescape(in); err == nil {
			t.Errorf("unescape(%q) = %q, want an error", in, got)
		}
	}
}

func TestAppendTime(t *testing.T) {
	for _, tt := range []struct {
		ns   int64
		want string
	}{
		{0, "1970-01-01T00:00:00.000000000Z"},
		{1700000000000000000, "2023-11-14T22:13:20.000000000Z"},
		{1700000000123456789, "2023-11-14T22:13:20.123456789Z"},
		{1700000000100000000, "2023-11-14T22:13:20.100000000Z"},
		{-1, "1969-12-31T23:59:59.999999999Z"},
		{-1500000000, "1969-12-31T23:59:58.500000000Z"},
		{5, "1970-01-01T00:00:00.000000005Z"},
		{1000000005, "1970-01-01T00:00:01.000000005Z"},
		{-1000000000, "1969-12-31T23:59:59.000000000Z"},
	} {
		var f timeFormatter
		if got := string(f.append(nil, tt.ns)); got != tt.want {
			t.Errorf("append(%d) = %s, want %s", tt.ns, got, tt.want)
		}
		wantJSON := `"t":"` + tt.want + `","t_ns":` + strconv.FormatInt(tt.ns, 10)
		if got := string(f.appendJSON(nil, "t", tt.ns)); got != wantJSON {
			t.Errorf("appendJSON(%d) = %s, want %s", tt.ns, got, wantJSON)
		}
	}
	// One formatter over many times, in and out of order, agrees with
	// time.Format throughout (its cached second must never leak).
	var f timeFormatter
	r := rand.New(rand.NewPCG(3, 4))
	ns := int64(1700000000000000000)
	for i := 0; i < 20000; i++ {
		switch r.IntN(4) {
		case 0:
			ns += r.Int64N(2e9)
		case 1:
			ns -= r.Int64N(2e9)
		case 2:
			ns = r.Int64() >> r.IntN(8)
		case 3:
			ns = -r.Int64N(1 << 62)
		}
		want := time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
		if got := string(f.append(nil, ns)); got != want {
			t.Fatalf("append(%d) = %s, want %s", ns, got, want)
		}
		// The JSON pair, whose nanoseconds reuse the cached second's digits.
		wantJSON := `"t":"` + want + `","t_ns":` + strconv.FormatInt(ns, 10)
		if got := string(f.appendJSON(nil, "t", ns)); got != wantJSON {
			t.Fatalf("appendJSON(%d) = %s, want %s", ns, got, wantJSON)
		}
	}
}
