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
		{"1w", 7 * 24 * time.Hour},
		{"2w3d", 17 * 24 * time.Hour},
		{"1w12h", 7*24*time.Hour + 12*time.Hour},
		{"0.5w", 84 * time.Hour},
	}
	for _, tt := range good {
		got, err := parseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "d", "7", "7x", "abc", "1d2d", "d5h", "-5s", "-1d", "-1h30m", "1dd", "w", "1d1w", "1w1w", "1h1w", "Infw-Infd"} {
		if got, err := parseDuration(in); err == nil {
			t.Errorf("parseDuration(%q) = %v, want an error", in, got)
		}
	}
	if _, err := parseDuration("-5s"); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("parseDuration(-5s): %v, want a 'negative' error", err)
	}
}

// Every form of --since/--until, and inputs that could mean more than one
// thing refused rather than guessed.
func TestParseTime(t *testing.T) {
	now := time.Date(2025, 12, 1, 12, 0, 0, 0, time.UTC)
	good := []struct {
		in   string
		want time.Time
	}{
		{"2025-12-01T10:04:05Z", time.Date(2025, 12, 1, 10, 4, 5, 0, time.UTC)},
		{"2025-12-01T10:04:05.5+02:00", time.Date(2025, 12, 1, 8, 4, 5, 5e8, time.UTC)},
		{"2025-12-01", time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"1999-02-28", time.Date(1999, 2, 28, 0, 0, 0, 0, time.UTC)},
		{"@1764547200000", time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"@1764547200123", time.Date(2025, 12, 1, 0, 0, 0, 123e6, time.UTC)},
		{"@0", time.Unix(0, 0)},
		{"@-1000", time.Unix(-1, 0)},
		{"2h", now.Add(-2 * time.Hour)},
		{"7d", now.Add(-7 * 24 * time.Hour)},
		{"1w", now.Add(-7 * 24 * time.Hour)},
		{"2w3d", now.Add(-17 * 24 * time.Hour)},
		{"1764547200000ms", now.Add(-1764547200000 * time.Millisecond)}, // a duration, as before
	}
	for _, tt := range good {
		got, err := parseTime(tt.in, now)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ in, why string }{
		{"1764547200000", "ambiguous"},
		{"1764547200", "ambiguous"},
		{"0", "ambiguous"},
		{"-5", "ambiguous"},
		{"@", "milliseconds"},
		{"@01", "milliseconds"},
		{"@1.5", "milliseconds"},
		{"@1h", "milliseconds"},
		{"@99999999999999999999", "milliseconds"},
		{"2025-12-01T10:04:05", "RFC 3339"}, // no zone: not guessed
		{"2025-13-01", "RFC 3339"},
		{"2025-12-1", "RFC 3339"},
		{"12/01/2025", "RFC 3339"},
		{"yesterday", "RFC 3339"},
	} {
		got, err := parseTime(tt.in, now)
		if err == nil {
			t.Errorf("parseTime(%q) = %v, want an error", tt.in, got)
		} else if !strings.Contains(err.Error(), strconv.Quote(tt.in)) || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("parseTime(%q): %q, want it quoted and %q", tt.in, err, tt.why)
		}
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
