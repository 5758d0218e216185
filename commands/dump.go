package commands

import (
	"bufio"
	"encoding/binary"
	"strconv"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// The forensic `read --format dump` line, one per record:
//
//	offset=2 pos=78 size=9 keylen=6 crc=0xe14ccc3d ok ts=2023-11-14T22:13:20.200000000Z key="user-1" value="foo"
//	offset=3 pos=115 size=6 keylen=0 crc=0xde3f83dc ok ts=2023-11-14T22:13:20.300000000Z key=- value="no key"
//	offset=10 pos=401 size=22 keylen=3 crc=0x9c2a23c2 BAD (computed 0x9c2b23c2) ts=2023-11-14T22:13:21.000000000Z key="crc" value="stored crc is wrong"
//
// With --skip-corrupt, each record skipped as damaged gets a line too, the
// same fields as stored (? where the bytes do not hold them), crc
// followed by BAD and what the CRC over the bytes is (or why none was
// computed), and last a damage field saying what the verdict on it is:
//
//	offset=1 pos=29 size=1 keylen=0 crc=0x834fbd2b BAD (computed 0x9c2b23c2) ts=2023-11-14T22:13:20.000001000Z key=- value="b" damage="corrupt record at byte 29 (expected offset 1): crc mismatch ..."
//
// Always the same fields in the same order, each name=value with no space
// inside (except the BAD note and the damage), so grep, awk and cut find
// them. size is
// len(key)+len(value) as the header stores it; crc is the stored CRC,
// followed by ok or by BAD and the CRC the contents really have. A record
// without a key shows key=- (no quotes), which no key with bytes can look
// like. Key and value are quoted, with every byte outside printable ASCII
// written as \xNN and \ and " backslashed, so a line is always one line of
// ASCII whatever the record holds: UTF-8 "ä" shows as \xc3\xa4. That is
// deliberate: this format is for looking at bytes, --format json for text.

// writeDump writes r's dump line to out. A value longer than outputPiece
// is escaped a piece at a time into out's buffer, never whole into memory
// (escaping can make it four times as long).
func writeDump(out *bufio.Writer, r logstore.Record, times *timeFormatter) error {
	head := appendDumpHead(out.AvailableBuffer(), r, times)
	if r.Batch != nil && r.Value == nil { // a Kafka tombstone: value=null
		_, err := out.Write(append(head, '\n'))
		return err
	}
	return writeDumpValue(out, head, r.Value)
}

// writeDumpValue writes head (a dump line up to its value's opening quote,
// in out's free space), then v escaped a piece at a time, the closing
// quote and a newline.
func writeDumpValue(out *bufio.Writer, head, v []byte) error {
	b := head
	for len(v) > outputPiece {
		if _, err := out.Write(appendDumpEscaped(b, v[:outputPiece])); err != nil {
			return err
		}
		b, v = out.AvailableBuffer(), v[outputPiece:]
	}
	_, err := out.Write(append(appendDumpEscaped(b, v), '"', '\n'))
	return err
}

// appendDumpHead appends the dump line up to and including the opening
// quote of the value (up to `value=null` for a Kafka tombstone).
func appendDumpHead(dst []byte, r logstore.Record, times *timeFormatter) []byte {
	dst = append(dst, "offset="...)
	dst = strconv.AppendUint(dst, r.Offset, 10)
	dst = append(dst, " pos="...)
	dst = strconv.AppendInt(dst, r.Pos, 10)
	dst = append(dst, " size="...)
	dst = strconv.AppendInt(dst, int64(len(r.Key))+int64(len(r.Value)), 10)
	dst = append(dst, " keylen="...)
	dst = strconv.AppendInt(dst, int64(len(r.Key)), 10)
	dst = append(dst, " crc="...)
	dst = appendHex32(dst, r.CRC)
	dst = append(dst, " ok ts="...) // a record read is valid: its CRC matched
	dst = times.append(dst, r.Timestamp)
	if len(r.Key) == 0 && (r.Key == nil || r.Batch == nil) { // Kafka's empty key is a key
		dst = append(dst, " key=-"...)
	} else {
		dst = append(dst, ` key="`...)
		dst = appendDumpEscaped(dst, r.Key)
		dst = append(dst, '"')
	}
	dst = appendDumpHeaders(dst, r.Headers)
	if r.Batch != nil && r.Value == nil {
		return append(dst, ` value=null`...)
	}
	return append(dst, ` value="`...)
}

// appendHex32 appends v as 0x and eight lower-case hex digits, like
// fmt's %#08x.
func appendHex32(dst []byte, v uint32) []byte {
	dst = append(dst, '0', 'x')
	for shift := 28; shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[v>>shift&0xf])
	}
	return dst
}

// appendDumpEscaped appends s with printable ASCII as is, except \ and "
// backslashed, and every other byte as \xNN. Each byte is escaped on its
// own, so s may be escaped in pieces split anywhere.
func appendDumpEscaped(dst, s []byte) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		// Skip 8 bytes at a time while none needs escaping.
		for i+8 <= len(s) && !dumpEscape8(binary.LittleEndian.Uint64(s[i:])) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		if c == '"' || c == '\\' {
			dst = append(dst, '\\', c)
		} else {
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// dumpEscape8 reports whether any of the 8 bytes in x needs escaping in a
// dump: what JSON escapes (below 0x20, '"', '\\') plus 0x7f and above. A
// byte >= 0x7f has its high bit set either already or once 1 is added, and
// while no byte has it set the adds carry into no neighbour.
func dumpEscape8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (x|(x+ones))&highs != 0 || needsEscape8(x)
}

// maxDumpedDamage bounds the bytes of a damaged record a dump shows.
const maxDumpedDamage = 64 << 10

// writeDumpDamaged writes the dump line of a record skipped as damaged.
func writeDumpDamaged(out *bufio.Writer, sk logstore.Skipped, times *timeFormatter) error {
	d := sk.Damage
	h := &d.Header
	b := out.AvailableBuffer()
	unknown := func(b []byte, name string) []byte { return append(append(b, name...), "=?"...) }
	whole := d.HeaderOK && int64(len(sk.Bytes)) == h.RecordLen() && h.KeyLen <= h.Size
	if d.HeaderOK {
		b = append(b, "offset="...)
		b = strconv.AppendUint(b, h.Offset, 10)
	} else {
		b = unknown(b, "offset")
	}
	b = append(b, " pos="...)
	b = strconv.AppendInt(b, d.Pos, 10)
	if d.HeaderOK {
		b = append(b, " size="...)
		b = strconv.AppendUint(b, uint64(h.Size), 10)
		b = append(b, " keylen="...)
		b = strconv.AppendUint(b, uint64(h.KeyLen), 10)
		b = append(b, " crc="...)
		b = appendHex32(b, h.CRC)
		switch {
		case sk.CRCOK && sk.CRC == h.CRC:
			b = append(b, " ok"...)
		case sk.CRCOK:
			b = append(b, " BAD (computed "...)
			b = appendHex32(b, sk.CRC)
			b = append(b, ')')
		default:
			b = append(b, " BAD (the record runs past the end of the file)"...)
		}
		b = append(b, " ts="...)
		b = times.append(b, h.Timestamp)
	} else {
		b = append(unknown(unknown(unknown(append(b, ' '), "size"), " keylen"), " crc"), " BAD (less than a header) ts=?"...)
	}
	if whole {
		key, value := sk.Bytes[format.HeaderLen:format.HeaderLen+int64(h.KeyLen)], sk.Bytes[format.HeaderLen+int64(h.KeyLen):]
		if len(key) == 0 {
			b = append(b, " key=-"...)
		} else {
			b = append(appendDumpEscaped(append(b, ` key="`...), key), '"')
		}
		b = append(appendDumpEscaped(append(b, ` value="`...), value), '"')
	} else {
		b = append(b, " key=? value=?"...)
	}
	b = append(b, ` damage="`...)
	b = appendDumpEscaped(b, []byte(d.Error()))
	_, err := out.Write(append(b, '"', '\n'))
	return err
}
