package commands

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/seglog/seglog/logstore"
)

// template is a compiled kcat-style --template FMT. Each record prints as
// FMT with these replaced:
//
//	%t  topic                      %k  key, raw bytes (nothing when none)
//	%p  partition                  %s  value, raw bytes
//	%o  offset                     %K  key length, -1 when none (as kcat)
//	%T  timestamp, Unix ms         %S  value length
//	%b  byte position of the header in its segment
//	%c  CRC as stored (not checked), 0x and 8 hex digits: 0xe14ccc3d
//	%%  a literal %
//
// and the escapes delimiters take (unescape): \n, \t, \r, \0, \\ and
// \xNN. %T is whole milliseconds, rounded down, like kcat's; the
// nanoseconds are in --format json. %K is -1 for a record
// without a key, as kcat prints for a NULL key: seglog stores no key and
// an empty key alike, as keylen 0, and json calls both null. No newline is
// added: as with kcat, FMT says where records end ('%s\n').
type template struct {
	parts []templatePart
}

// templatePart is a literal (verb 0) or one % verb.
type templatePart struct {
	verb byte
	lit  string
}

// templateHelp lists what a template may hold, for error messages.
const templateHelp = `%t %p %o %k %s %T %K %S %b %c %%, ` + escapesHelp

// parseTemplate compiles s. A % or \ sequence it does not know is an
// error naming it and its position (in characters, from 1), for the
// command to report as a usage error.
func parseTemplate(s string) (template, error) {
	var t template
	var lit []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' && c != '\\' {
			lit = append(lit, c)
			continue
		}
		if i+1 == len(s) {
			return template{}, fmt.Errorf("lone %s at position %d, the end of the template (write %c%c for a literal %c)", quoteSequence(s[i:]), utf8.RuneCountInString(s[:i])+1, c, c, c)
		}
		next := s[i+1]
		switch {
		case c == '%' && strings.IndexByte("tpokTsKSbc", next) >= 0:
			if len(lit) > 0 {
				t.parts = append(t.parts, templatePart{lit: string(lit)})
				lit = lit[:0]
			}
			t.parts = append(t.parts, templatePart{verb: next})
		case c == '%' && next == '%':
			lit = append(lit, next)
		case c == '\\':
			b, n, err := decodeEscape(s[i:])
			if err != nil {
				return template{}, fmt.Errorf("%v at position %d of the template", err, utf8.RuneCountInString(s[:i])+1)
			}
			lit = append(lit, b)
			i += n - 2
		default:
			_, n := utf8.DecodeRuneInString(s[i+1:])
			return template{}, fmt.Errorf("unknown %s at position %d of the template (known: %s)", quoteSequence(s[i:i+1+n]), utf8.RuneCountInString(s[:i])+1, templateHelp)
		}
		i++
	}
	if len(lit) > 0 {
		t.parts = append(t.parts, templatePart{lit: string(lit)})
	}
	return t, nil
}

// quoteSequence quotes a bad template sequence for a message as the user
// typed it: "\q", not Go's "\\q", unless it holds something unprintable.
func quoteSequence(seq string) string {
	for _, r := range seq {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return strconv.Quote(seq)
		}
	}
	return `"` + seq + `"`
}

// write writes r as t prints it to out. Keys and values longer than
// outputPiece go to out straight from the record, not copied into a line.
func (t template) write(out *bufio.Writer, r logstore.Record, topic string, partition int) error {
	b := out.AvailableBuffer()
	for _, p := range t.parts {
		var raw []byte
		switch p.verb {
		case 'k':
			raw = r.Key
		case 's':
			raw = r.Value
		}
		if len(raw) <= outputPiece {
			b = p.append(b, r, topic, partition)
			continue
		}
		if _, err := out.Write(b); err != nil {
			return err
		}
		if _, err := out.Write(raw); err != nil {
			return err
		}
		b = out.AvailableBuffer()
	}
	_, err := out.Write(b)
	return err
}

func (p templatePart) append(dst []byte, r logstore.Record, topic string, partition int) []byte {
	switch p.verb {
	case 0:
		return append(dst, p.lit...)
	case 't':
		return append(dst, topic...)
	case 'p':
		return strconv.AppendInt(dst, int64(partition), 10)
	case 'o':
		return strconv.AppendUint(dst, r.Offset, 10)
	case 'k':
		return append(dst, r.Key...)
	case 's':
		return append(dst, r.Value...)
	case 'T':
		ms := r.Timestamp / 1e6
		if r.Timestamp%1e6 < 0 {
			ms-- // round down, not toward zero, before 1970
		}
		return strconv.AppendInt(dst, ms, 10)
	case 'K':
		if len(r.Key) == 0 {
			return append(dst, '-', '1')
		}
		return strconv.AppendInt(dst, int64(len(r.Key)), 10)
	case 'S':
		return strconv.AppendInt(dst, int64(len(r.Value)), 10)
	case 'b':
		return strconv.AppendInt(dst, r.Pos, 10)
	case 'c':
		return appendHex32(dst, r.CRC)
	}
	panic("template: unknown verb " + string(p.verb))
}
