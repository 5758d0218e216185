package commands

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// jsonInput is one --input json line: a record as 'read --format json'
// prints it.
type jsonInput struct {
	key, value []byte // valid until the next decode; key nil: no key
	partition  int    // -1: no partition field
	timestamp  int64
	stamped    bool // a timestamp or timestamp_ns field gave timestamp
}

// The fields an --input json line may hold, as bits, to spot repeats.
const (
	fieldTopic = 1 << iota
	fieldPartition
	fieldOffset
	fieldTimestamp
	fieldTimestampNS
	fieldKey
	fieldKeyBase64
	fieldValue
	fieldValueBase64
)

func jsonInputField(name []byte) int {
	switch string(name) { // compiled to comparisons: no allocation
	case "topic":
		return fieldTopic
	case "partition":
		return fieldPartition
	case "offset":
		return fieldOffset
	case "timestamp":
		return fieldTimestamp
	case "timestamp_ns":
		return fieldTimestampNS
	case "key":
		return fieldKey
	case "key_base64":
		return fieldKeyBase64
	case "value":
		return fieldValue
	case "value_base64":
		return fieldValueBase64
	}
	return 0
}

// jsonDecoder decodes --input json lines strictly, where encoding/json is
// lenient: it refuses invalid UTF-8 and lone UTF-16 surrogates (which
// encoding/json turns into U+FFFD, silently changing the bytes), field
// names in another case (which encoding/json matches), repeated fields
// (where encoding/json keeps the last), unknown fields and wrong types.
// Bytes that are not text travel as key_base64 and value_base64. One
// pass, and a string without escapes is passed on as a slice of the line.
type jsonDecoder struct {
	line []byte
	pos  int
	n    int64 // line number, for errors

	// Scratch for strings with escapes or in base64, reused line to line.
	key, value, text []byte
	// The last timestamp field parsed, "2006-01-02T15:04:05.", and its
	// second: the next is most likely in the same second.
	tsPrefix []byte
	tsSecond int64
}

// maxScratch is the largest scratch buffer kept from one line to the next.
const maxScratch = 4 << 20

func (d *jsonDecoder) decode(line []byte, n int64, keepPartition bool) (r jsonInput, err error) {
	d.line, d.pos, d.n = line, 0, n
	for _, b := range []*[]byte{&d.key, &d.value, &d.text} {
		if cap(*b) > maxScratch {
			*b = nil
		}
	}
	r.partition = -1
	var seen int
	var ts stampFields
	d.space()
	if d.peek() != '{' {
		return r, d.syntax("want an object with a value or value_base64 field, not %s", d.what())
	}
	d.pos++
	d.space()
	if d.peek() == '}' {
		d.pos++
	} else {
		for {
			name, err := d.name()
			if err != nil {
				return r, err
			}
			f := jsonInputField(name)
			switch {
			case f == 0:
				return r, d.bad("unknown field %q (the fields are those 'read --format json' prints: topic, partition, offset, timestamp, "+
					"timestamp_ns, key, value, key_base64, value_base64, in lower case)", name[:min(len(name), 64)])
			case seen&f != 0:
				return r, d.bad("field %q given twice", name)
			}
			seen |= f
			if err := d.field(f, &r, &ts); err != nil {
				return r, err
			}
			d.space()
			c := d.peek()
			d.pos++
			if c == '}' {
				break
			}
			if c != ',' {
				d.pos--
				return r, d.syntax("want , or } after a field, not %s", d.what())
			}
			d.space()
		}
	}
	d.space()
	if d.pos < len(line) {
		return r, d.syntax("more after the object")
	}
	switch {
	case seen&(fieldKey|fieldKeyBase64) == fieldKey|fieldKeyBase64:
		return r, d.bad("both key and key_base64")
	case seen&(fieldValue|fieldValueBase64) == fieldValue|fieldValueBase64:
		return r, d.bad("both value and value_base64")
	case seen&(fieldValue|fieldValueBase64) == 0:
		return r, d.bad("no value or value_base64 field")
	case keepPartition && r.partition < 0:
		return r, d.bad("no partition field (needed by --keep-partition)")
	}
	if !keepPartition {
		r.partition = -1
	}
	if len(r.key) == 0 {
		r.key = nil // an empty key is no key
	}
	if ts.text && ts.ns && ts.fromText != ts.fromNS {
		return r, d.bad("timestamp and timestamp_ns disagree (%s is %d, not %d): give one, or both the same",
			time.Unix(0, ts.fromText).UTC().Format(time.RFC3339Nano), ts.fromText, ts.fromNS)
	}
	switch {
	case ts.ns:
		r.timestamp, r.stamped = ts.fromNS, true
	case ts.text:
		r.timestamp, r.stamped = ts.fromText, true
	}
	return r, nil
}

// stampFields are a line's timestamp fields, each unless absent or null.
type stampFields struct {
	fromText, fromNS int64
	text, ns         bool
}

// field reads the value of field f.
func (d *jsonDecoder) field(f int, r *jsonInput, ts *stampFields) error {
	var err error
	switch f {
	case fieldTopic:
		_, err = d.str("topic", &d.text)
	case fieldPartition:
		var v uint64
		if v, err = d.uint("partition"); err == nil && v > math.MaxInt32 {
			err = d.bad("partition %d is out of range", v)
		}
		r.partition = int(v)
	case fieldOffset:
		_, err = d.uint("offset")
	case fieldTimestamp:
		if !d.null() {
			var s []byte
			if s, err = d.str("timestamp", &d.text); err == nil {
				ts.fromText, err = d.time(s)
				ts.text = true
			}
		}
	case fieldTimestampNS:
		if !d.null() {
			ts.fromNS, err = d.int("timestamp_ns")
			ts.ns = true
		}
	case fieldKey:
		if !d.null() {
			r.key, err = d.str("key", &d.key)
		}
	case fieldKeyBase64:
		r.key, err = d.base64("key_base64", &d.key)
	case fieldValue:
		r.value, err = d.str("value", &d.value)
	case fieldValueBase64:
		r.value, err = d.base64("value_base64", &d.value)
	}
	return err
}

// syntax is the error for a line that is not JSON.
func (d *jsonDecoder) syntax(format string, args ...any) error {
	return fmt.Errorf("line %d of the input is not a JSON record: %s (at byte %d)", d.n, fmt.Sprintf(format, args...), d.pos+1)
}

// bad is the error for a line that is JSON, but not a record.
func (d *jsonDecoder) bad(format string, args ...any) error {
	return fmt.Errorf("line %d of the input: %s", d.n, fmt.Sprintf(format, args...))
}

func (d *jsonDecoder) peek() byte {
	if d.pos < len(d.line) {
		return d.line[d.pos]
	}
	return 0
}

func (d *jsonDecoder) space() {
	for d.pos < len(d.line) {
		switch d.line[d.pos] {
		case ' ', '\t', '\r', '\n':
			d.pos++
		default:
			return
		}
	}
}

// what names the JSON value that starts at pos, for errors.
func (d *jsonDecoder) what() string {
	switch c := d.peek(); {
	case d.pos >= len(d.line):
		return "the end of the line"
	case c == '"':
		return "a string"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case bytes.HasPrefix(d.line[d.pos:], []byte("true")) || bytes.HasPrefix(d.line[d.pos:], []byte("false")):
		return "true or false"
	case bytes.HasPrefix(d.line[d.pos:], []byte("null")):
		return "null"
	default:
		return strconv.QuoteRune(rune(c))
	}
}

// wrongType is the error for a field whose value is of another type.
func (d *jsonDecoder) wrongType(field, want string) error {
	if c := d.peek(); d.pos >= len(d.line) || c == '}' || c == ',' || c == ']' || c == ':' {
		return d.syntax("no value for field %q", field)
	}
	return d.bad("field %q must be %s, not %s", field, want, d.what())
}

// null reads a null if one is at pos.
func (d *jsonDecoder) null() bool {
	if bytes.HasPrefix(d.line[d.pos:], []byte("null")) {
		d.pos += 4
		return true
	}
	return false
}

// name reads a field name and the colon after it.
func (d *jsonDecoder) name() ([]byte, error) {
	if d.peek() != '"' {
		return nil, d.syntax("want a field name, not %s", d.what())
	}
	name, err := d.str("", &d.text)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.peek() != ':' {
		return nil, d.syntax("want : after field name %q, not %s", name, d.what())
	}
	d.pos++
	d.space()
	return name, nil
}

// str reads a JSON string for field (named in errors; "" for a field
// name): a slice of the line when it holds no escapes, else unescaped
// into *buf. It must be valid UTF-8, and escapes must stand for
// characters.
func (d *jsonDecoder) str(field string, buf *[]byte) ([]byte, error) {
	if d.peek() != '"' {
		return nil, d.wrongType(field, "a string")
	}
	const highs = 0x8080808080808080
	line := d.line
	start := d.pos + 1
	var high uint64 // the bytes seen, or'd: any with the top bit is not ASCII
	for i := start; ; {
		for i+8 <= len(line) {
			x := binary.LittleEndian.Uint64(line[i:])
			if needsEscape8(x) {
				break
			}
			high |= x
			i += 8
		}
		if i >= len(line) {
			d.pos = i
			return nil, d.syntax("unterminated string")
		}
		switch c := line[i]; {
		case c == '"':
			s := line[start:i]
			d.pos = i + 1
			if high&highs != 0 && !utf8.Valid(s) {
				return nil, d.notUTF8(field)
			}
			return s, nil
		case c == '\\':
			return d.unescape(field, start, i, buf)
		case c < 0x20:
			d.pos = i
			return nil, d.syntax("control character %#02x in a string (JSON escapes them)", c)
		default:
			high |= uint64(c)
			i++
		}
	}
}

// unescape goes on with a string that has an escape at i: everything from
// start is copied into *buf, unescaped.
func (d *jsonDecoder) unescape(field string, start, i int, buf *[]byte) ([]byte, error) {
	line := d.line
	b := append((*buf)[:0], line[start:i]...)
	defer func() { *buf = b }()
	for {
		run := i
		for i+8 <= len(line) && !needsEscape8(binary.LittleEndian.Uint64(line[i:])) {
			i += 8
		}
		for i < len(line) && line[i] >= 0x20 && line[i] != '"' && line[i] != '\\' {
			i++
		}
		b = append(b, line[run:i]...)
		if i >= len(line) {
			d.pos = i
			return nil, d.syntax("unterminated string")
		}
		switch c := line[i]; {
		case c == '"':
			d.pos = i + 1
			// Escapes only make whole characters, so this checks the raw
			// bytes between them.
			if !utf8.Valid(b) {
				return nil, d.notUTF8(field)
			}
			return b, nil
		case c < 0x20:
			d.pos = i
			return nil, d.syntax("control character %#02x in a string (JSON escapes them)", c)
		}
		d.pos = i
		if i+1 >= len(line) {
			return nil, d.syntax("unterminated string")
		}
		switch e := line[i+1]; {
		case jsonEscapes[e] != 0:
			b = append(b, jsonEscapes[e])
		case e == 'u':
			r, ok := hex4(line[i+2:])
			if !ok {
				return nil, d.syntax("bad \\u escape")
			}
			i += 4
			if utf16IsSurrogate(r) {
				lo, ok := rune(0), false
				if r < 0xdc00 && i+8 <= len(line) && line[i+2] == '\\' && line[i+3] == 'u' {
					lo, ok = hex4(line[i+4:])
					ok = ok && lo >= 0xdc00 && lo <= 0xdfff
				}
				if !ok {
					return nil, d.bad("field %s holds \\u%04x, half of a UTF-16 surrogate pair, which is no character%s", fieldQuote(field), r, base64Advice(field))
				}
				r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
				i += 6
			}
			b = utf8.AppendRune(b, r)
		default:
			return nil, d.syntax("unknown escape \\%c", e)
		}
		i += 2
	}
}

// jsonEscapes maps the letter of each two-character JSON escape to the
// byte it stands for.
var jsonEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func utf16IsSurrogate(r rune) bool { return r >= 0xd800 && r <= 0xdfff }

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (d *jsonDecoder) notUTF8(field string) error {
	return d.bad("field %s is not valid UTF-8%s", fieldQuote(field), base64Advice(field))
}

func fieldQuote(field string) string {
	if field == "" {
		return "name"
	}
	return strconv.Quote(field)
}

// base64Advice says where bytes that are not text go, for the fields that
// have a base64 form.
func base64Advice(field string) string {
	if field == "key" || field == "value" {
		return ": give bytes that are not text as " + field + "_base64"
	}
	return ""
}

// strictBase64 is what read prints: standard, padded, nothing in the
// padding bits.
var strictBase64 = base64.StdEncoding.Strict()

// base64 reads a string of standard, padded base64 into *buf.
func (d *jsonDecoder) base64(field string, buf *[]byte) ([]byte, error) {
	s, err := d.str(field, &d.text)
	if err != nil {
		return nil, err
	}
	// The decoder skips newlines, which would let two texts mean one value.
	b, err := strictBase64.AppendDecode((*buf)[:0], s)
	if err != nil || bytes.ContainsAny(s, "\r\n") {
		return nil, d.bad("%s is not base64", field)
	}
	*buf = b
	return b, nil
}

// uint reads a JSON number that must be a whole number of 0 or more.
func (d *jsonDecoder) uint(field string) (uint64, error) {
	if d.peek() == '-' {
		return 0, d.bad("field %q must be 0 or more", field)
	}
	return d.digits(field)
}

// int reads a JSON number that must be a whole number an int64 holds.
func (d *jsonDecoder) int(field string) (int64, error) {
	neg := d.peek() == '-'
	if neg {
		d.pos++
	}
	v, err := d.digits(field)
	switch {
	case err != nil:
		return 0, err
	case neg && v <= 1<<63:
		return -int64(v), nil
	case !neg && v < 1<<63:
		return int64(v), nil
	}
	return 0, d.bad("field %q is out of range", field)
}

// digits reads the digits of a whole number, no sign.
func (d *jsonDecoder) digits(field string) (uint64, error) {
	line, i := d.line, d.pos
	if i >= len(line) || line[i] < '0' || line[i] > '9' {
		return 0, d.wrongType(field, "a whole number")
	}
	var v uint64
	over := false
	for ; i < len(line) && line[i] >= '0' && line[i] <= '9'; i++ {
		c := uint64(line[i] - '0')
		over = over || v > math.MaxUint64/10 || v*10 > math.MaxUint64-c
		v = v*10 + c
	}
	if line[d.pos] == '0' && i > d.pos+1 {
		return 0, d.syntax("a number with a leading zero")
	}
	d.pos = i
	if c := d.peek(); c == '.' || c == 'e' || c == 'E' {
		return 0, d.bad("field %q must be a whole number", field)
	}
	if over {
		return 0, d.bad("field %q is out of range", field)
	}
	return v, nil
}

// time parses an RFC 3339 timestamp into nanoseconds since 1970.
func (d *jsonDecoder) time(s []byte) (int64, error) {
	// The form read prints, in the second of the one before: only the
	// nine fraction digits change.
	const prefix = len("2006-01-02T15:04:05.")
	if len(s) == prefix+10 && s[len(s)-1] == 'Z' && d.tsPrefix != nil && bytes.Equal(s[:prefix], d.tsPrefix) {
		if frac, ok := nineDigits(s[prefix : prefix+9]); ok {
			return d.tsSecond*1e9 + frac, nil
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(s))
	if err != nil {
		return 0, d.bad("timestamp %q is not an RFC 3339 time", s)
	}
	if t.Before(time.Unix(0, math.MinInt64)) || t.After(time.Unix(0, math.MaxInt64)) {
		return 0, d.bad("timestamp %q is out of range (nanoseconds since 1970 hold 1677-09-21 to 2262-04-11)", s)
	}
	// Cached only inside the range by a second, so that any fraction
	// added to the second above holds.
	const maxSecond = math.MaxInt64/int64(time.Second) - 1
	if sec := t.Unix(); len(s) == prefix+10 && s[prefix-1] == '.' && s[len(s)-1] == 'Z' && sec >= -maxSecond && sec <= maxSecond {
		d.tsPrefix = append(d.tsPrefix[:0], s[:prefix]...)
		d.tsSecond = sec
	}
	return t.UnixNano(), nil
}

func nineDigits(b []byte) (int64, bool) {
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}
