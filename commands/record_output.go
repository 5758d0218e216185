package commands

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"unicode/utf8"

	"github.com/seglog/seglog/logstore"
)

// recordWriter prints records in one of read's output formats. Values go
// to the output in pieces, never copied whole, so printing a 64 MiB record
// takes no second 64 MiB.
type recordWriter struct {
	out       *bufio.Writer
	format    outputFormat
	template  template
	delim     []byte // ends a record of formatValue; nil: a newline
	topic     string
	partition int
	times     timeFormatter
	jsonHead  []byte          // `{"topic":...,"partition":...,"offset":`, the same on every line
	lastBatch *logstore.Batch // the Kafka batch of the last record dumped
	// valuesOnly: the records carry nothing but a value (printValuesOnly).
	valuesOnly bool
}

// outputPiece bounds how much of a value is encoded into the output
// buffer's free space at a time.
const outputPiece = 16 << 10

// write prints r (a pointer: a scan calls it per record, and a Record is
// 80 bytes to copy).
func (w *recordWriter) write(r *logstore.Record) error {
	switch w.format {
	case formatRaw:
		_, err := w.out.Write(r.Value)
		return err
	case formatJSON:
		if w.valuesOnly {
			return w.writeValueJSON(r)
		}
		return w.writeJSON(r)
	case formatDump:
		if w.valuesOnly {
			return w.writeValueDump(r)
		}
		if r.Batch != nil && r.Batch != w.lastBatch {
			w.lastBatch = r.Batch
			if _, err := w.out.Write(appendDumpBatch(w.out.AvailableBuffer(), r.Batch, &w.times)); err != nil {
				return err
			}
		}
		return writeDump(w.out, *r, &w.times)
	case formatTemplate:
		return w.template.write(w.out, *r, w.topic, w.partition)
	}
	if _, err := w.out.Write(r.Value); err != nil {
		return err
	}
	if w.delim == nil {
		return w.out.WriteByte('\n')
	}
	_, err := w.out.Write(w.delim)
	return err
}

// writeJSON prints r as docs/cli.md's JSON object (`read --format json`): topic, partition, offset,
// timestamp, timestamp_ns, key (null when none), value; bytes that are not
// UTF-8 go in key_base64 / value_base64 instead.
func (w *recordWriter) writeJSON(r *logstore.Record) error {
	if w.jsonHead == nil {
		w.initJSONHead()
	}
	b := append(w.out.AvailableBuffer(), w.jsonHead...)
	b = strconv.AppendUint(b, r.Offset, 10)
	b = w.times.appendJSON(append(b, ','), "timestamp", r.Timestamp)
	kafka := kafkaRecord(r)
	// Apache Kafka tells a null key or value from an empty one.
	b, err := w.jsonField(b, "key", r.Key, len(r.Key) == 0 && !(kafka && r.Key != nil))
	if err == nil {
		b, err = w.jsonField(b, "value", r.Value, kafka && r.Value == nil)
	}
	if err == nil && kafka {
		b, err = w.appendJSONHeaders(b, r.Headers)
	}
	if err != nil {
		return err
	}
	_, err = w.out.Write(append(b, "}\n"...))
	return err
}

// initJSONHead makes jsonHead, the start of every JSON line.
func (w *recordWriter) initJSONHead() {
	w.jsonHead = append(w.jsonHead, `{"topic":`...)
	w.jsonHead = appendJSONString(w.jsonHead, []byte(w.topic))
	w.jsonHead = append(w.jsonHead, `,"partition":`...)
	w.jsonHead = strconv.AppendInt(w.jsonHead, int64(w.partition), 10)
	w.jsonHead = append(w.jsonHead, `,"offset":`...)
}

// jsonField appends `,"name":"..."` to b, or `,"name_base64":"..."` when v
// is not UTF-8, or `,"name":null` when null. A v longer than outputPiece
// is written out a piece at a time, and a fresh buffer returned.
func (w *recordWriter) jsonField(b []byte, name string, v []byte, null bool) ([]byte, error) {
	b = append(b, ',', '"')
	b = append(b, name...)
	if null {
		return append(b, `":null`...), nil
	}
	encode, piece := appendJSONEscaped, outputPiece
	switch {
	case plainJSON(v):
		// The common case, found in one pass: the bytes go as they are.
		encode = func(dst, s []byte) []byte { return append(dst, s...) }
		b = append(b, `":"`...)
	case utf8.Valid(v):
		b = append(b, `":"`...)
	default:
		b = append(b, `_base64":"`...)
		encode, piece = base64.StdEncoding.AppendEncode, outputPiece/3*3 // whole groups: no padding inside
	}
	for len(v) > piece {
		if _, err := w.out.Write(encode(b, v[:piece])); err != nil {
			return nil, err
		}
		b, v = w.out.AvailableBuffer(), v[piece:]
	}
	return append(encode(b, v), '"'), nil
}

// appendJSONString appends s as a JSON string. s must be valid UTF-8.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	dst = appendJSONEscaped(dst, s)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// appendJSONEscaped appends s escaped for the inside of a JSON string.
// Unlike encoding/json it leaves <, > and & alone: the output is for
// terminals and scripts, not HTML. Pieces of a string may be escaped
// separately: only ASCII bytes are ever escaped.
func appendJSONEscaped(dst, s []byte) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		// Skip 8 bytes at a time while none needs escaping.
		for i+8 <= len(s) && !needsEscape8(binary.LittleEndian.Uint64(s[i:])) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// plainJSON reports whether s is ASCII with nothing to escape in a JSON
// string.
func plainJSON(s []byte) bool {
	const highs = 0x8080808080808080
	for len(s) >= 8 {
		if x := binary.LittleEndian.Uint64(s); x&highs != 0 || needsEscape8(x) {
			return false
		}
		s = s[8:]
	}
	for _, c := range s {
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// needsEscape8 reports whether any of the 8 bytes in x is below 0x20, '"'
// or '\\' (the has-zero-byte and has-less-than bit tricks).
func needsEscape8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	below20 := (x - 0x20*ones) & ^x & highs
	return below20|hasZero(x^('"'*ones))|hasZero(x^('\\'*ones)) != 0
}
