package commands

import (
	"bufio"
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"github.com/seglog/seglog/logstore"
)

// recordWriter prints records in one of read's output formats. Values go
// to the output in pieces, never copied whole, so printing a 64 MiB record
// takes no second 64 MiB.
type recordWriter struct {
	out       *bufio.Writer
	format    string // value, json or raw
	topic     string
	partition int
}

// outputPiece bounds how much of a value is encoded into the output
// buffer's free space at a time.
const outputPiece = 16 << 10

func (w *recordWriter) write(r logstore.Record) error {
	switch w.format {
	case "raw":
		_, err := w.out.Write(r.Value)
		return err
	case "json":
		return w.writeJSON(r)
	}
	if _, err := w.out.Write(r.Value); err != nil {
		return err
	}
	return w.out.WriteByte('\n')
}

// writeJSON prints r as CLI.md's JSON object: topic, partition, offset,
// timestamp, timestamp_ns, key (null when none), value; bytes that are not
// UTF-8 go in key_base64 / value_base64 instead.
func (w *recordWriter) writeJSON(r logstore.Record) error {
	b := append(w.out.AvailableBuffer(), `{"topic":`...)
	b = appendJSONString(b, []byte(w.topic))
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(w.partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendUint(b, r.Offset, 10)
	b = append(b, `,"timestamp":"`...)
	b = appendTime(b, r.Timestamp)
	b = append(b, `","timestamp_ns":`...)
	b = strconv.AppendInt(b, r.Timestamp, 10)
	if _, err := w.out.Write(b); err != nil {
		return err
	}
	if err := w.writeJSONBytes("key", r.Key, len(r.Key) == 0); err != nil {
		return err
	}
	if err := w.writeJSONBytes("value", r.Value, false); err != nil {
		return err
	}
	_, err := w.out.WriteString("}\n")
	return err
}

// writeJSONBytes prints `,"name":"..."`, or `,"name_base64":"..."` when b
// is not UTF-8, or `,"name":null` when null, a piece at a time.
func (w *recordWriter) writeJSONBytes(name string, b []byte, null bool) error {
	head := append(w.out.AvailableBuffer(), ',', '"')
	head = append(head, name...)
	switch {
	case null:
		_, err := w.out.Write(append(head, `":null`...))
		return err
	case utf8.Valid(b):
		if _, err := w.out.Write(append(head, `":"`...)); err != nil {
			return err
		}
		for len(b) > 0 {
			n := min(len(b), outputPiece)
			if _, err := w.out.Write(appendJSONEscaped(w.out.AvailableBuffer(), b[:n])); err != nil {
				return err
			}
			b = b[n:]
		}
	default:
		if _, err := w.out.Write(append(head, `_base64":"`...)); err != nil {
			return err
		}
		const piece = outputPiece / 3 * 3 // whole base64 groups, no padding inside
		for len(b) > 0 {
			n := min(len(b), piece)
			if _, err := w.out.Write(base64.StdEncoding.AppendEncode(w.out.AvailableBuffer(), b[:n])); err != nil {
				return err
			}
			b = b[n:]
		}
	}
	return w.out.WriteByte('"')
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
