package commands

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// Fuzz targets for every parser of the command line: sizes, durations,
// times, offsets, rates, integer flag values, templates, --input json
// lines, the framing of stdin at a delimiter, delimiter escapes and the
// argument list itself. None may panic; each is checked against an
// independent reading of what docs/cli.md says (Values), and round-trips where there is
// an encoder. (Topic and group names: format's FuzzValidateTopic and
// logstore's FuzzGroupName.)

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "1048576", "512k", "512K", "512KiB", "64M", "64MiB", "1G", "1GiB", "10MB", "1kB", "1T",
		"1.5M", "0.5", ".", "", "-1", "1e30", "99999999999999999999", "4611686018427387904", "NaN", "Inf", "1 M", "1Mi", "M", "1..2k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		i := strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
		if i < 0 {
			i = len(s)
		}
		mult, unit := sizeUnits[strings.TrimSpace(s[i:])]
		v, verr := strconv.ParseFloat(s[:i], 64)
		want := i > 0 && unit && verr == nil && v*float64(mult) < 1<<62
		if (err == nil) != want {
			t.Fatalf("parseSize(%q) = %d, %v; want success %v", s, n, err, want)
		}
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("parseSize(%q): error does not quote the value: %v", s, err)
			}
			return
		}
		if n < 0 || n != int64(v*float64(mult)) {
			t.Fatalf("parseSize(%q) = %d, want %d", s, n, int64(v*float64(mult)))
		}
		if back, err := parseSize(strconv.FormatInt(n, 10)); err != nil || back != n {
			t.Fatalf("parseSize(%d) = %d, %v", n, back, err)
		}
		// A rate is a size a second, more than nothing.
		r, err := parseRate(s + "/s")
		if (err == nil) != (n > 0) || err == nil && r != n {
			t.Fatalf("parseRate(%q/s) = %d, %v; size %d", s, r, err, n)
		}
	})
}

// refDuration is what a duration means, computed exactly: the days term
// (as ParseFloat reads it) plus the Go duration after it. ok is false when
// a part does not parse.
func refDuration(s string) (ns *big.Float, ok bool) {
	sum := new(big.Float).SetPrec(200)
	rest, large, terms := s, 0.0, 0
	for _, u := range []struct {
		letter byte
		days   float64
	}{{'w', 7}, {'d', 1}} {
		i := strings.IndexByte(rest, u.letter)
		if i < 0 {
			continue
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(n) {
			return nil, false
		}
		large += n * u.days
		rest, terms = rest[i+1:], terms+1
		if math.IsInf(n, 0) {
			n = math.Copysign(math.MaxFloat64, n)
		}
		term := new(big.Float).SetPrec(200).SetFloat64(n)
		sum.Add(sum, term.Mul(term, big.NewFloat(u.days*float64(24*time.Hour))))
	}
	if math.IsNaN(large) {
		return nil, false
	}
	if rest != "" || terms == 0 {
		d, err := time.ParseDuration(rest)
		if err != nil {
			return nil, false
		}
		sum.Add(sum, new(big.Float).SetInt64(int64(d)))
	}
	return sum, true
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"90s", "2h", "7d", "1d12h", "1.5d", "0", "0d", "", "d", "-1h", "-5d", "1d-1h", "-1d48h",
		"1000000h", "10000000h", "106751d", "106752d", "106751d24h", "106751d23h47m16.854775807s", "-106751d-1000000h",
		"1e999d", "-1e999d", "Infd", "NaNd", "106752d-1000000h", "107081d2", "1e-400d", "0x1p4d", "1h2d", "1d2d", "1w", "2w3d", "1d2w", "Infw-Infd", "15250w", "2562047h47m16.854775807s", "2562047h47m16.854775808s"} {
		f.Add(s)
	}
	maxNs := new(big.Float).SetInt64(math.MaxInt64)
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		ref, ok := refDuration(s)
		if !ok {
			if err == nil || !strings.Contains(err.Error(), "use e.g.") {
				t.Fatalf("parseDuration(%q) = %v, %v; want the invalid-duration error", s, d, err)
			}
			return
		}
		// Float rounding of the days term: within 2^-50 of the value.
		slack := new(big.Float).Abs(ref)
		slack.Mul(slack, big.NewFloat(math.Ldexp(1, -50)))
		slack.Add(slack, big.NewFloat(1))
		lo, hi := new(big.Float).Sub(ref, slack), new(big.Float).Add(ref, slack)
		switch {
		case lo.Sign() >= 0 && hi.Cmp(maxNs) <= 0:
			if err != nil {
				t.Fatalf("parseDuration(%q): %v; want %s ns", s, err, ref.Text('f', 0))
			}
			if got := new(big.Float).SetInt64(int64(d)); got.Cmp(lo) < 0 || got.Cmp(hi) > 0 {
				t.Fatalf("parseDuration(%q) = %d ns, want %s", s, int64(d), ref.Text('f', 0))
			}
		case hi.Sign() < 0:
			if err == nil || !strings.Contains(err.Error(), "negative") {
				t.Fatalf("parseDuration(%q) = %v, %v; want a negative-duration error (%s ns)", s, d, err, ref.Text('g', 10))
			}
		case lo.Cmp(maxNs) > 0:
			if err == nil || !strings.Contains(err.Error(), "too long") {
				t.Fatalf("parseDuration(%q) = %v, %v; want a too-long error (%s ns)", s, d, err, ref.Text('g', 10))
			}
		}
		if err == nil && d < 0 {
			t.Fatalf("parseDuration(%q) = %v", s, d)
		}
		if err == nil && !strings.ContainsRune(s, 'd') {
			if back, berr := parseDuration(d.String()); berr != nil || back != d {
				t.Fatalf("parseDuration(%q) = %v; its String parses as %v, %v", s, d, back, berr)
			}
		}
	})
}

func FuzzParseTime(f *testing.F) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	for _, s := range []string{"2024-05-01T12:00:00Z", "2024-05-01T12:00:00.123456789+02:00", "0001-01-01T00:00:00Z",
		"9999-12-31T23:59:59.999999999Z", "1677-09-21T00:12:43.145224191Z", "2262-04-11T23:47:16.854775808Z", "2h", "7d", "106751d",
		"", "yesterday", "1e999", "-2h", "2024-13-01T00:00:00Z", "2025-12-01", "@1764547200000", "@-1", "@01", "0", "1w"} {
		f.Add(s, now)
	}
	f.Add("292y", int64(math.MinInt64))
	f.Add("106751d", int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, s string, nowNs int64) {
		now := time.Unix(0, nowNs)
		got, err := parseTime(s, now)
		want, perr := time.Parse(time.RFC3339Nano, s)
		if perr != nil {
			want, perr = time.Parse(time.DateOnly, s)
		}
		ms, msErr := strconv.ParseInt(strings.TrimPrefix(s, "@"), 10, 64)
		if perr == nil {
			if err != nil || !got.Equal(want) {
				t.Fatalf("parseTime(%q) = %v, %v; want %v", s, got, err, want)
			}
		} else if strings.HasPrefix(s, "@") && msErr == nil && isDecimal(s[1:]) {
			if err != nil || !got.Equal(time.UnixMilli(ms)) {
				t.Fatalf("parseTime(%q) = %v, %v; want %d ms", s, got, err, ms)
			}
		} else if d, derr := parseDuration(s); derr == nil && !isDecimal(s) {
			if err != nil || !got.Equal(now.Add(-d)) {
				t.Fatalf("parseTime(%q) = %v, %v; want %v before %v", s, got, err, d, now)
			}
		} else if err == nil || !strings.Contains(err.Error(), strconv.Quote(s)) {
			t.Fatalf("parseTime(%q) = %v, %v; want an error quoting it", s, got, err)
		}
		if err != nil {
			return
		}
		// In nanoseconds: exact where an int64 holds it, clamped where not.
		ns := unixNanoClamped(got)
		switch {
		case got.Before(time.Unix(0, math.MinInt64)):
			if ns != math.MinInt64 {
				t.Fatalf("%v: %d ns, want the minimum", got, ns)
			}
		case got.After(time.Unix(0, math.MaxInt64)):
			if ns != math.MaxInt64 {
				t.Fatalf("%v: %d ns, want the maximum", got, ns)
			}
		default:
			if !time.Unix(0, ns).Equal(got) {
				t.Fatalf("%v: %d ns, which is %v", got, ns, time.Unix(0, ns))
			}
		}
	})
}

func FuzzParseOffset(f *testing.F) {
	for _, s := range []string{"beginning", "end", "0", "5", "-10", "-0", "18446744073709551615", "18446744073709551616",
		"-18446744073709551615", "", "-", "+5", "0x10", "1e3", "--5", "end ", "Beginning"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := parseOffset(s)
		if err != nil {
			var ue *usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("parseOffset(%q): %v; want a usage error quoting it", s, err)
			}
			return
		}
		var back string
		switch o.kind {
		case "beginning", "end":
			back = o.kind
		case "at":
			back = strconv.FormatUint(o.n, 10)
		case "last":
			back = "-" + strconv.FormatUint(o.n, 10)
		default:
			t.Fatalf("parseOffset(%q): kind %q", s, o.kind)
		}
		if again, err := parseOffset(back); err != nil || again != o {
			t.Fatalf("parseOffset(%q) = %+v, written %q, read back %+v, %v", s, o, back, again, err)
		}
		if n, perr := strconv.ParseUint(strings.TrimPrefix(s, "-"), 10, 64); perr == nil && n != o.n {
			t.Fatalf("parseOffset(%q) = %+v, the number is %d", s, o, n)
		}
	})
}

// FuzzIntFlagValue: a value checkFlags lets through means the same
// number in base 10 as in the base-0 parsing the flag package does.
func FuzzIntFlagValue(f *testing.F) {
	for _, s := range []string{"0", "1", "-1", "+7", "010", "0x10", "0b11", "0o7", "1_000", "00", "-0", "", "-", "9223372036854775808", " 1", "1e3", "٣"} {
		f.Add(s)
	}
	app := NewApp(nil, nil, nil)
	f.Fuzz(func(t *testing.T, v string) {
		ok := isDecimal(v)
		b0, err0 := strconv.ParseInt(v, 0, 64)
		b10, err10 := strconv.ParseInt(v, 10, 64)
		if ok && (err0 == nil) != (err10 == nil) || ok && err0 == nil && b0 != b10 {
			t.Fatalf("isDecimal(%q), yet base 0 reads %d (%v), base 10 %d (%v)", v, b0, err0, b10, err10)
		}
		if !ok && err10 == nil && v == strconv.FormatInt(b10, 10) {
			t.Fatalf("isDecimal(%q) refuses a plain decimal number", v)
		}
		for _, args := range [][]string{
			{"seglog", "read", "--partition", v, "--", "t"},
			{"seglog", "read", "--partition=" + v, "--", "t"},
			{"seglog", "tail", "-n", v, "--", "t"},
			{"seglog", "quarantine", "purge", "-p", v, "--older-than", "1d"},
		} {
			_, err := checkFlags(app, args)
			var ue *usageError
			if ok != (err == nil) || err != nil && !errors.As(err, &ue) {
				t.Fatalf("checkFlags(%q): %v; decimal %v", args, err, ok)
			}
		}
	})
}

// refTemplate renders a template the plain way: a byte at a time.
func refTemplate(s string, r logstore.Record, topic string, partition int) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' && c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(s) {
			return "", false
		}
		i++
		switch c2 := s[i]; {
		case c == '%' && c2 == 't':
			b.WriteString(topic)
		case c == '%' && c2 == 'p':
			b.WriteString(strconv.Itoa(partition))
		case c == '%' && c2 == 'o':
			b.WriteString(strconv.FormatUint(r.Offset, 10))
		case c == '%' && c2 == 'k':
			b.Write(r.Key)
		case c == '%' && c2 == 's':
			b.Write(r.Value)
		case c == '%' && c2 == 'T':
			b.WriteString(new(big.Int).Div(big.NewInt(r.Timestamp), big.NewInt(1e6)).String()) // floor
		case c == '%' && c2 == 'K':
			if len(r.Key) == 0 {
				b.WriteString("-1")
			} else {
				b.WriteString(strconv.Itoa(len(r.Key)))
			}
		case c == '%' && c2 == 'S':
			b.WriteString(strconv.Itoa(len(r.Value)))
		case c == '%' && c2 == 'b':
			b.WriteString(strconv.FormatInt(r.Pos, 10))
		case c == '%' && c2 == 'c':
			fmt.Fprintf(&b, "0x%08x", r.CRC)
		case c == '%' && c2 == '%':
			b.WriteByte('%')
		case c == '\\' && c2 == '\\':
			b.WriteByte('\\')
		case c == '\\' && c2 == 'n':
			b.WriteByte('\n')
		case c == '\\' && c2 == 't':
			b.WriteByte('\t')
		default:
			return "", false
		}
	}
	return b.String(), true
}

// templateSource writes a compiled template back as text.
func templateSource(t template) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.verb != 0 {
			b.WriteByte('%')
			b.WriteByte(p.verb)
			continue
		}
		for i := 0; i < len(p.lit); i++ {
			switch c := p.lit[i]; c {
			case '%':
				b.WriteString("%%")
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{`%t/%p@%o pos=%b crc=%c ts=%T keylen=%K valuelen=%S key=%k value=%s\n`, `%s`, `100%% \\ %o\n`,
		"", "%", `\`, "%z", `\q`, "%\xff", "ä%o€", `%%s\\n%s\n`, "\x00%k\x00"} {
		f.Add(s, []byte("key"), []byte("value"), uint64(42), int64(1700000000234567891), false)
	}
	f.Add(`%k|%s`, []byte{}, []byte{0, 0xff}, uint64(0), int64(-1), true)
	f.Fuzz(func(t *testing.T, s string, key, value []byte, offset uint64, ts int64, big bool) {
		if big {
			value = bytes.Repeat(append(value, 'v'), outputPiece/len(append(value, 'v'))+1) // past outputPiece: written around the line
		}
		r := logstore.Record{Record: format.Record{Offset: offset, Timestamp: ts, Key: key, Value: value}, Pos: int64(offset % 1e9), CRC: uint32(ts)}
		tmpl, err := parseTemplate(s)
		want, wantOK := refTemplate(s, r, "orders", 7)
		if (err == nil) != wantOK {
			t.Fatalf("parseTemplate(%q): %v; the template is valid: %v", s, err, wantOK)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "position") {
				t.Fatalf("parseTemplate(%q): %v does not say where", s, err)
			}
			return
		}
		if got := string(tmpl.append(nil, r, "orders", 7)); got != want {
			t.Fatalf("template %q: %q, want %q", s, got, want)
		}
		var out bytes.Buffer
		bw := bufio.NewWriterSize(&out, 4096)
		if err := tmpl.write(bw, r, "orders", 7); err != nil {
			t.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("template %q written: %.200q, want %.200q", s, out.String(), want)
		}
		again, err := parseTemplate(templateSource(tmpl))
		if err != nil || !slices.Equal(again.parts, tmpl.parts) {
			t.Fatalf("template %q compiled to %+v, written back as %q, compiled to %+v (%v)", s, tmpl.parts, templateSource(tmpl), again.parts, err)
		}
	})
}

// FuzzJSONRecord: the --input json decoder never panics, errors start
// with the line number, it is never looser than encoding/json (a line it
// takes, encoding/json takes with the same strings), and what read
// --format json prints for a record it decoded decodes back to the same.
func FuzzJSONRecord(f *testing.F) {
	for _, s := range []string{
		`{"topic":"t","partition":0,"offset":5,"timestamp":"2024-05-01T12:00:00.000000000Z","timestamp_ns":1714564800000000000,"key":"user-1","value":"hello"}`,
		`{"topic":"t","partition":0,"offset":0,"timestamp":null,"timestamp_ns":null,"key":null,"value":"simple"}`,
		`{"key":null,"value":"v"}`, `{"key_base64":"AAE=","value_base64":"/w=="}`, `{"value":""}`, `{"value_base64":"!!!"}`,
		`{"key":"a","key_base64":"YQ==","value":"x"}`, `{"value":"x","partition":1e999}`, `{"value":"x","partition":-1}`,
		`{"value":"x","partition":99999999999999999999}`, `{"value":"a\u0000b"}`, `{"value":"\ud800"}`, `null`, `[]`, ``, `{`,
		`{"value":"x"}{"value":"y"}`, strings.Repeat("[", 20000), `{"value":"x","value":"y"}`, `{"VALUE":"x"}`,
		`{"value":"a","Value":"b"}`, `{"value":"\ud83d\ude00 \u00e9 \" \\ \/ \b\f\n\r\t"}`, `{"value":"\udc00"}`, `{"value":"\ud800\u0041"}`,
		"{\"value\":\"a\xffb\"}", "{\"key\":\"\xc3\x28\",\"value\":\"x\"}", `{"value":"x","extra":1}`, `{"value":null}`,
		`{"value":"x","timestamp":"2024-05-01T12:00:00Z"}`, `{"value":"x","timestamp":"2024-05-01T14:00:00+02:00","timestamp_ns":1714564800000000000}`,
		`{"value":"x","timestamp":"2024-05-01T12:00:00Z","timestamp_ns":1}`, `{"value":"x","timestamp_ns":-9223372036854775808}`,
		`{"value":"x","timestamp":"9999-12-31T23:59:59Z"}`, `{"value":"x","offset":18446744073709551615}`, `{"value":"x","offset":1.5}`,
		`{"value_base64":"YQ\n=="}`, `{"value_base64":"YR=="}`, ` { "value" : "x" , "key" : "k" } `, `{"value":"x",}`, `{"value":01}`,
		`{"\u0076alue":"escaped name"}`, `{"value":"x","topic":5}`, `{"value":"x","partition":true}`, `{"value":nul}`,
	} {
		f.Add([]byte(s), int64(1), false)
		f.Add([]byte(s), int64(7), true)
	}
	f.Fuzz(func(t *testing.T, line []byte, n int64, keep bool) {
		var d jsonDecoder
		r, err := d.decode(line, n, keep)
		if err != nil {
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("line %d of the input", n)) {
				t.Fatalf("decode(%q): %v does not start with the line number", line, err)
			}
			return
		}
		if keep != (r.partition >= 0) {
			t.Fatalf("decode(%q, keep %v): partition %d", line, keep, r.partition)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(line, &fields); err != nil {
			t.Fatalf("decode took %q, which encoding/json refuses: %v", line, err)
		}
		for name, want := range map[string][]byte{"key": r.key, "value": r.value} {
			var s *string
			if raw, ok := fields[name]; ok {
				if err := json.Unmarshal(raw, &s); err != nil {
					t.Fatalf("decode took %s %s from %q, which encoding/json refuses: %v", name, raw, line, err)
				}
			} else if raw, ok := fields[name+"_base64"]; ok {
				var b64 string
				if err := json.Unmarshal(raw, &b64); err != nil {
					t.Fatal(err)
				}
				b, err := base64.StdEncoding.DecodeString(b64)
				if err != nil {
					t.Fatalf("decode took %s_base64 %q, which is not base64: %v", name, b64, err)
				}
				s = ptr(string(b))
			}
			if (s == nil || *s == "") != (len(want) == 0) || s != nil && *s != string(want) {
				t.Fatalf("%q: decode gives %s %q, encoding/json %v", line, name, want, s)
			}
		}
		// What read --format json prints for the record decodes back to it.
		m := map[string]any{"topic": "t", "offset": 1, "partition": max(r.partition, 0)}
		if r.stamped {
			m["timestamp"] = time.Unix(0, r.timestamp).UTC().Format("2006-01-02T15:04:05.000000000Z")
			m["timestamp_ns"] = r.timestamp
		}
		for name, b := range map[string][]byte{"key": r.key, "value": r.value} {
			switch {
			case name == "key" && len(b) == 0:
				m["key"] = nil
			case utf8.Valid(b):
				m[name] = string(b)
			default:
				m[name+"_base64"] = base64.StdEncoding.EncodeToString(b)
			}
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		key, value := bytes.Clone(r.key), bytes.Clone(r.value)
		r2, err := d.decode(out, n, keep)
		if err != nil || !bytes.Equal(r2.key, key) || !bytes.Equal(r2.value, value) || r2.partition != r.partition || r2.stamped != r.stamped || r2.timestamp != r.timestamp {
			t.Fatalf("%q decoded to %+v; printed as %s it decodes to %+v (%v)", line, r, out, r2, err)
		}
	})
}

// refFrames cuts in at delim as README's append section says: a final message without a
// delimiter still counts, "\r\n" ends a line when the delimiter is "\n".
// It returns the messages up to the first longer than max, and that one's
// number (0: none).
func refFrames(in, delim []byte, max int) (msgs [][]byte, tooLong int64) {
	parts := bytes.Split(in, delim)
	if len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1]
	}
	for i, p := range parts {
		if string(delim) == "\n" {
			p = bytes.TrimSuffix(p, []byte{'\r'})
		}
		if len(p) > max {
			return msgs, int64(i + 1)
		}
		msgs = append(msgs, p)
	}
	return msgs, 0
}

func FuzzFramer(f *testing.F) {
	f.Add([]byte("a\nb\r\nc"), []byte("\n"), []byte{1, 2, 3}, uint16(100))
	f.Add([]byte("a::b:::c::"), []byte("::"), []byte{1}, uint16(100))
	f.Add([]byte("aaaa\nbbbbbbbbbbbb\ncc\n"), []byte("\n"), []byte{5}, uint16(4))
	f.Add([]byte("\x00\x00x\x00"), []byte{0}, []byte{}, uint16(0))
	f.Add([]byte("abcXYZdefXYZ"), []byte("XYZ"), []byte{2, 1}, uint16(3))
	f.Add([]byte("aaaa\r\n"), []byte("\n"), []byte{1}, uint16(4))
	f.Fuzz(func(t *testing.T, in, delim, chunks []byte, max16 uint16) {
		if len(delim) == 0 || len(delim) > 8 || len(in) > 1<<16 {
			return
		}
		max := int(max16 % 2048)
		fr := framer{delim: delim, stripCR: string(delim) == "\n", max: max}
		var got [][]byte
		var lines []int64
		emit := func(msg []byte, line int64) error {
			got = append(got, bytes.Clone(msg))
			lines = append(lines, line)
			return nil
		}
		var err error
		for rest, i := in, 0; len(rest) > 0 && err == nil; i++ {
			n := len(rest)
			if len(chunks) > 0 {
				n = min(n, 1+int(chunks[i%len(chunks)]))
			}
			err = fr.feed(rest[:n], emit)
			rest = rest[n:]
		}
		if err == nil {
			err = fr.finish(emit)
		}
		want, tooLong := refFrames(in, delim, max)
		var tl *errMessageTooLong
		switch {
		case tooLong == 0 && err != nil:
			t.Fatalf("framing %q at %q (max %d): %v", in, delim, max, err)
		case tooLong > 0 && (!errors.As(err, &tl) || tl.line != tooLong):
			t.Fatalf("framing %q at %q (max %d): %v, want message %d too long", in, delim, max, err, tooLong)
		}
		if len(got) != len(want) {
			t.Fatalf("framing %q at %q (max %d): %q, want %q", in, delim, max, got, want)
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) || lines[i] != int64(i+1) {
				t.Fatalf("framing %q at %q: message %d (line %d) is %q, want %q", in, delim, i+1, lines[i], got[i], want[i])
			}
		}
	})
}

// escapeDelimiter writes bytes the way --delimiter takes them.
func escapeDelimiter(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		switch {
		case c == '\\':
			s.WriteString(`\\`)
		case c >= 0x20 && c < 0x7f:
			s.WriteByte(c)
		default:
			fmt.Fprintf(&s, `\x%02x`, c)
		}
	}
	return s.String()
}

func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`\n`, `\t`, `\r`, `\0`, `\\`, `\x1e`, `\xFF`, `::`, `\`, `a\`, `\x`, `\x1`, `\xZZ`, `\q`, `\\x41`, "", "\x00"} {
		f.Add(s, []byte("\x00\x1e\\"))
	}
	f.Fuzz(func(t *testing.T, s string, raw []byte) {
		b, err := unescape(s)
		if err == nil {
			// What it reads, written back, reads the same.
			if again, err := unescape(escapeDelimiter(b)); err != nil || !bytes.Equal(again, b) {
				t.Fatalf("unescape(%q) = %q; escaped as %q it reads %q, %v", s, b, escapeDelimiter(b), again, err)
			}
			if !strings.Contains(s, `\`) && string(b) != s {
				t.Fatalf("unescape(%q) = %q, no escape in it", s, b)
			}
		} else if !strings.Contains(s, `\`) || !strings.Contains(err.Error(), strconv.Quote(s)) {
			t.Fatalf("unescape(%q): %v", s, err)
		}
		// Any bytes can be given as a delimiter.
		if again, err := unescape(escapeDelimiter(raw)); err != nil || !bytes.Equal(again, raw) {
			t.Fatalf("%q escaped as %q reads %q, %v", raw, escapeDelimiter(raw), again, err)
		}
	})
}

// FuzzArgs: the argument list, cut at NUL bytes. Rearranging it for
// urfave/cli keeps every argument, and running it never panics.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{"read\x00orders\x00--offset\x005", "read\x00--offset\x005\x00orders", "-d\x00x\x00read\x00-q\x00t",
		"append\x00t\x00--key", "create\x00--\x00-dash", "read\x00t\x00--help", "quarantine\x00purge\x00-p\x0007", "read\x00-\x00--\x00--",
		"copy-partition\x00t\x00-1\x00--to\x00x", "nosuch\x00--x", "--data-dir", "read\x00t\x00--partition=010",
		"tail\x00-n1\x00t\x00-p0", "-d/tmp/x\x00read\x00-c2\x00t", "read\x00-p\x00-p0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := append([]string{"seglog"}, strings.Split(s, "\x00")...)
		if s == "" {
			args = args[:1]
		}
		app := NewApp(nil, nil, nil)
		out := normalizeArgs(app, slices.Clone(args))
		count := func(a []string) map[string]int {
			m := map[string]int{}
			for _, x := range a {
				m[x]++
			}
			return m
		}
		// A value attached to a one-letter flag ("-n1") comes out split
		// ("-n" "1"): count the parts.
		in, got := count(args), count(out)
		for k, v := range in {
			if got[k] < v && len(k) > 2 && got[k[:2]] > in[k[:2]] && got[k[2:]] > in[k[2:]] {
				in[k] -= v
				in[k[:2]] += v
				in[k[2:]] += v
			}
		}
		if got["--"] == in["--"]+1 {
			got["--"]-- // the one normalizeArgs adds before positionals
		}
		// `read t --help` is read's help, and in `append t --key` the value
		// is missing: then the command gets its flags alone, to report.
		bare := slices.ContainsFunc(args, func(a string) bool { return hasFlag([]cli.Flag{cli.HelpFlag}, a) && isFlag(a) }) ||
			isFlag(args[len(args)-1])
		for k, v := range in {
			if got[k] < v && !(k == "--" && got[k] == v-1) && !bare {
				t.Fatalf("normalizeArgs(%q) = %q: lost %q", args, out, k)
			}
		}
		for k, v := range got {
			if in[k] < v {
				t.Fatalf("normalizeArgs(%q) = %q: added %q", args, out, k)
			}
		}
		_, _ = checkFlags(app, out)
	})
}
