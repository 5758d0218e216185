package commands

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"github.com/seglog/seglog/logstore"
)

func indexOf(b, sep []byte) int {
	if len(sep) == 1 {
		return bytes.IndexByte(b, sep[0])
	}
	return bytes.Index(b, sep)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. s must be valid UTF-8.
// Unlike encoding/json it leaves <, > and & alone: the output is for
// terminals and scripts, not HTML.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
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
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// recordWriter prints records in one of read's output formats.
type recordWriter struct {
	format    string // value, json or raw
	topic     string
	partition int
}

// appendRecord appends r's output to dst.
func (w *recordWriter) appendRecord(dst []byte, r logstore.Record) []byte {
	switch w.format {
	case "raw":
		return append(dst, r.Value...)
	case "json":
		return w.appendJSON(dst, r)
	}
	dst = append(dst, r.Value...)
	return append(dst, '\n')
}

// appendJSON appends r as CLI.md's JSON object: topic, partition, offset,
// timestamp, timestamp_ns, key (null when none), value; bytes that are not
// UTF-8 go in key_base64 / value_base64 instead.
func (w *recordWriter) appendJSON(dst []byte, r logstore.Record) []byte {
	dst = append(dst, `{"topic":`...)
	dst = appendJSONString(dst, []byte(w.topic))
	dst = append(dst, `,"partition":`...)
	dst = strconv.AppendInt(dst, int64(w.partition), 10)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendUint(dst, r.Offset, 10)
	dst = append(dst, `,"timestamp":"`...)
	dst = appendTime(dst, r.Timestamp)
	dst = append(dst, `","timestamp_ns":`...)
	dst = strconv.AppendInt(dst, r.Timestamp, 10)
	dst = appendJSONBytes(dst, "key", r.Key, len(r.Key) == 0)
	dst = appendJSONBytes(dst, "value", r.Value, false)
	return append(dst, "}\n"...)
}

// appendJSONBytes appends `,"name":"..."`, or `,"name_base64":"..."` when b
// is not UTF-8, or `,"name":null` when null.
func appendJSONBytes(dst []byte, name string, b []byte, null bool) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	switch {
	case null:
		return append(dst, `":null`...)
	case utf8.Valid(b):
		dst = append(dst, '"', ':')
		return appendJSONString(dst, b)
	}
	dst = append(dst, `_base64":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}
