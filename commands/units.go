package commands

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// sizeUnits maps the size suffixes of docs/cli.md (Values) to
// multipliers: bare letters and IEC names are binary, kB/MB/GB/TB decimal.
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
	// Decimal like every number seglog takes: "010" is a typo, not 8 or 10.
	if i > 1 && s[0] == '0' && s[1] != '.' {
		return 0, fmt.Errorf("invalid size %q: write a decimal number without leading zeros", s)
	}
	if i == 0 || !ok {
		return 0, fmt.Errorf("invalid size %q (use e.g. 1048576, 512k, 64MiB, 1G, 10MB)", s)
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || n*float64(mult) >= 1<<62 {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return int64(n * float64(mult)), nil
}

// parseDuration is time.ParseDuration plus leading weeks and days terms:
// "7d", "1d12h", "2w3d", "90s". Negative durations are refused, and so are
// those past what a time.Duration holds (about 292 years): converting a
// larger float is undefined and adding overflows, either of which made a
// long duration come out negative, or wrap around to a short one.
func parseDuration(s string) (time.Duration, error) {
	bad := func() error { return fmt.Errorf("invalid duration %q (use e.g. 90s, 2h, 7d)", s) }
	negative := func() error { return fmt.Errorf("invalid duration %q: must not be negative", s) }
	tooLong := func() error {
		return fmt.Errorf("invalid duration %q: too long (at most %s)", s, time.Duration(math.MaxInt64))
	}
	// Every term must parse before their sum is judged.
	days, rest, hasDays := 0.0, s, false
	for _, u := range largeUnits {
		i := strings.IndexByte(rest, u.letter)
		if i < 0 {
			continue
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(n) {
			return 0, bad()
		}
		days, rest, hasDays = days+n*u.days, rest[i+1:], true
	}
	if math.IsNaN(days) { // infinite weeks and days of opposite signs
		return 0, bad()
	}
	var more time.Duration
	if rest != "" || !hasDays {
		var err error
		if more, err = time.ParseDuration(rest); err != nil {
			return 0, bad()
		}
	}
	var d time.Duration
	if ns := days * float64(24*time.Hour); ns > math.MinInt64 && ns < math.MaxInt64 {
		d = time.Duration(ns)
		switch {
		case more > 0 && d > math.MaxInt64-more:
			return 0, tooLong()
		case more < 0 && d < math.MinInt64-more:
			return 0, negative()
		}
		d += more
	} else {
		// The days alone are past an int64 of nanoseconds: only a float
		// holds the sum.
		switch total := ns + float64(more); {
		case total >= math.MaxInt64:
			return 0, tooLong()
		case total < 0:
			return 0, negative()
		default:
			d = time.Duration(total)
		}
	}
	if d < 0 {
		return 0, negative()
	}
	return d, nil
}

// largeUnits are the terms parseDuration takes before Go's, in this order.
var largeUnits = []struct {
	letter byte
	days   float64
}{{'w', 7}, {'d', 1}}

// timeFormatter prints timestamps as docs/cli.md (Values) fixes them:
// RFC 3339, UTC, always nine fraction digits, so they sort as text.
// Records come in time order, so it keeps the date and time of day of the
// last second it formatted: a full time.Format cost more than the rest of
// a JSON line.
type timeFormatter struct {
	sec     int64
	prefix  []byte // "2006-01-02T15:04:05." for sec
	decimal []byte // sec in decimal
}

func (f *timeFormatter) append(dst []byte, ns int64) []byte {
	frac := f.fraction(ns)
	dst = append(dst, f.prefix...)
	dst = append(dst, frac[:]...)
	return append(dst, 'Z')
}

// appendJSON appends `"name":"<RFC 3339>","name_ns":<ns>`, a time as
// docs/cli.md's JSON gives it. After a positive second, ns in decimal is that
// second's digits then the fraction's: no 19-digit number formatted per
// record (a tenth of `read --format json`).
func (f *timeFormatter) appendJSON(dst []byte, name string, ns int64) []byte {
	frac := f.fraction(ns)
	dst = append(dst, '"')
	dst = append(dst, name...)
	dst = append(dst, `":"`...)
	dst = append(dst, f.prefix...)
	dst = append(dst, frac[:]...)
	dst = append(dst, `Z","`...)
	dst = append(dst, name...)
	dst = append(dst, `_ns":`...)
	if f.sec <= 0 {
		return strconv.AppendInt(dst, ns, 10)
	}
	dst = append(dst, f.decimal...)
	return append(dst, frac[:]...)
}

// fraction makes f's cached second ns's and returns the nine digits of
// the fraction of a second.
func (f *timeFormatter) fraction(ns int64) (digits [9]byte) {
	sec, frac := ns/1e9, ns%1e9
	if frac < 0 {
		sec, frac = sec-1, frac+1e9
	}
	if f.prefix == nil || sec != f.sec {
		f.sec = sec
		f.prefix = time.Unix(sec, 0).UTC().AppendFormat(f.prefix[:0], "2006-01-02T15:04:05.")
		f.decimal = strconv.AppendInt(f.decimal[:0], sec, 10)
	}
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	return digits
}

// parseTime parses the times of docs/cli.md (Values): RFC 3339; a date,
// meaning its midnight UTC (seglog's times are UTC, and RFC 3339 needs a
// zone); @MS, Unix epoch milliseconds (the timestamps of kcat's s@MS and
// rpk's @MS); or a duration meaning that long before now ("2h", "7d",
// "1w"). A bare number is refused: seconds, milliseconds and a unit
// forgotten look alike.
func parseTime(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if ms, ok := strings.CutPrefix(s, "@"); ok {
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil || !isDecimal(ms) {
			return time.Time{}, fmt.Errorf("invalid time %q: after @ come Unix epoch milliseconds, e.g. @1764547200000", s)
		}
		return time.UnixMilli(n).UTC(), nil
	}
	if isDecimal(s) {
		return time.Time{}, fmt.Errorf("invalid time %q: a bare number is ambiguous; write @%s for Unix epoch milliseconds, or a duration with its unit (e.g. %ss)", s, s, s)
	}
	d, err := parseDuration(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid time %q (use RFC 3339, e.g. 2024-05-01T12:00:00Z; a date, 2024-05-01; @MS, Unix epoch milliseconds; or a duration ago, e.g. 2h, 7d or 1w)", s)
	}
	return now.Add(-d), nil
}

// unixNanoClamped is t in Unix nanoseconds, clamped to what an int64
// holds (years 1677 to 2262): t.UnixNano is undefined outside, and
// "--since 9999-01-01T00:00:00Z" must mean after every record, not wrap.
func unixNanoClamped(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// humanSize prints a byte count in binary units, one decimal: "1.2 GiB".
func humanSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v := float64(n)
	unit := ""
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"} {
		v /= 1024
		unit = u
		if v < 1023.95 { // would print as 1024.0
			break
		}
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + unit
}
