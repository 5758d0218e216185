package commands

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// sizeUnits maps CLI.md's size suffixes to multipliers: bare letters and
// IEC names are binary, kB/MB/GB/TB decimal.
var sizeUnits = map[string]int64{
	"": 1, "b": 1, "B": 1,
	"k": 1 << 10, "K": 1 << 10, "KiB": 1 << 10, "kB": 1000,
	"m": 1 << 20, "M": 1 << 20, "MiB": 1 << 20, "MB": 1000 * 1000,
	"g": 1 << 30, "G": 1 << 30, "GiB": 1 << 30, "GB": 1000 * 1000 * 1000,
	"t": 1 << 40, "T": 1 << 40, "TiB": 1 << 40, "TB": 1000 * 1000 * 1000 * 1000,
}

// parseSize parses "1048576", "512k", "64MiB", "1GB" and the like.
func parseSize(s string) (int64, error) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	mult, ok := sizeUnits[strings.TrimSpace(s[i:])]
	if i == 0 || !ok {
		return 0, fmt.Errorf("invalid size %q (use e.g. 1048576, 512k, 64MiB, 1G, 10MB)", s)
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || n*float64(mult) >= 1<<62 {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return int64(n * float64(mult)), nil
}

// parseDuration is time.ParseDuration plus a leading days term: "7d",
// "1d12h", "90s". Negative durations are refused.
func parseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("invalid duration %q (use e.g. 90s, 2h, 7d)", s)
	var d time.Duration
	rest := s
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0, bad
		}
		d = time.Duration(n * float64(24*time.Hour))
		rest = s[i+1:]
	}
	if rest != "" || d == 0 && s == "" {
		more, err := time.ParseDuration(rest)
		if err != nil {
			return 0, bad
		}
		d += more
	}
	if d < 0 {
		return 0, fmt.Errorf("invalid duration %q: must not be negative", s)
	}
	return d, nil
}

// timeFormatter prints timestamps as CLI.md fixes them: RFC 3339, UTC,
// always nine fraction digits, so they sort as text. Records come in time
// order, so it keeps the date and time of day of the last second it
// formatted: a full time.Format cost more than the rest of a JSON line.
type timeFormatter struct {
	sec    int64
	prefix []byte // "2006-01-02T15:04:05." for sec
}

func (f *timeFormatter) append(dst []byte, ns int64) []byte {
	sec, frac := ns/1e9, ns%1e9
	if frac < 0 {
		sec, frac = sec-1, frac+1e9
	}
	if f.prefix == nil || sec != f.sec {
		f.sec = sec
		f.prefix = time.Unix(sec, 0).UTC().AppendFormat(f.prefix[:0], "2006-01-02T15:04:05.")
	}
	dst = append(dst, f.prefix...)
	var digits [9]byte
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	dst = append(dst, digits[:]...)
	return append(dst, 'Z')
}

// parseTime parses CLI.md's times: RFC 3339, or a duration meaning that long
// before now ("2h", "7d").
func parseTime(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := parseDuration(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid time %q (use RFC 3339, e.g. 2024-05-01T12:00:00Z, or a duration ago, e.g. 2h or 7d)", s)
	}
	return now.Add(-d), nil
}
