package commands

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// framer cuts a byte stream, fed in chunks, into messages at a delimiter.
// Messages inside a chunk are passed on without copying; only a message
// that spans chunks is gathered in pending.
type framer struct {
	delim   []byte
	stripCR bool // the default "\n" framing also takes "\r\n"
	max     int  // longest message allowed
	pending []byte
	line    int64 // messages passed on so far
}

// errMessageTooLong is a message over --max-message-bytes.
type errMessageTooLong struct {
	line int64
	max  int
}

func (e *errMessageTooLong) Error() string {
	return fmt.Sprintf("line %d of the input is longer than --max-message-bytes (%d bytes); the lines before it were appended", e.line, e.max)
}

// feed passes every message that chunk completes to emit; the slice is
// only valid during the call.
func (f *framer) feed(chunk []byte, emit func(msg []byte, line int64) error) error {
	if len(f.pending) > 0 {
		at := f.indexAcross(chunk)
		if at < 0 {
			if len(f.pending)+len(chunk) > f.max+len(f.delim)+1 {
				return &errMessageTooLong{line: f.line + 1, max: f.max}
			}
			f.hold(chunk)
			return nil
		}
		held := len(f.pending)
		var msg []byte
		if at <= held {
			msg = f.pending[:at]
		} else {
			f.hold(chunk[:at-held])
			msg = f.pending
		}
		chunk = chunk[at+len(f.delim)-held:]
		if err := f.emit(msg, emit); err != nil {
			return err
		}
		f.pending = f.pending[:0]
	}
	for {
		i := f.index(chunk)
		if i < 0 {
			break
		}
		if err := f.emit(chunk[:i], emit); err != nil {
			return err
		}
		chunk = chunk[i+len(f.delim):]
	}
	if len(chunk) > f.max+len(f.delim)+1 {
		return &errMessageTooLong{line: f.line + 1, max: f.max}
	}
	if cap(f.pending) > 4<<20 {
		f.pending = nil // don't keep a huge line's buffer
	}
	f.hold(chunk)
	return nil
}

// hold adds b to pending. A long message grows it by doubling up to 8 MiB,
// then straight to the longest message allowed: append's growth for big
// slices would leave several times the message's size behind as garbage,
// while the pages of a fresh allocation count only once written.
func (f *framer) hold(b []byte) {
	if need := len(f.pending) + len(b); need > cap(f.pending) {
		size := max(need, 2*cap(f.pending))
		if size > 8<<20 {
			size = max(need, f.max+len(f.delim)+1)
		}
		grown := make([]byte, len(f.pending), size)
		copy(grown, f.pending)
		f.pending = grown
	}
	f.pending = append(f.pending, b...)
}

// finish passes on a last message that had no delimiter after it.
func (f *framer) finish(emit func(msg []byte, line int64) error) error {
	if len(f.pending) == 0 {
		return nil
	}
	err := f.emit(f.pending, emit)
	f.pending = f.pending[:0]
	return err
}

// drop forgets an unfinished last message and returns its length.
func (f *framer) drop() int {
	n := len(f.pending)
	f.pending = f.pending[:0]
	return n
}

func (f *framer) emit(msg []byte, emit func([]byte, int64) error) error {
	if f.stripCR && len(msg) > 0 && msg[len(msg)-1] == '\r' {
		msg = msg[:len(msg)-1]
	}
	f.line++
	if len(msg) > f.max {
		return &errMessageTooLong{line: f.line, max: f.max}
	}
	return emit(msg, f.line)
}

func (f *framer) index(b []byte) int { return indexOf(b, f.delim) }

func indexOf(b, sep []byte) int {
	if len(sep) == 1 {
		return bytes.IndexByte(b, sep[0])
	}
	return bytes.Index(b, sep)
}

// indexAcross finds the first delimiter in pending‖chunk, as a position in
// that concatenation, or -1. pending holds no whole delimiter, so one can
// only start in its last len(delim)-1 bytes or in chunk.
func (f *framer) indexAcross(chunk []byte) int {
	k := min(len(f.delim)-1, len(f.pending))
	if k > 0 {
		var seam []byte
		seam = append(seam, f.pending[len(f.pending)-k:]...)
		seam = append(seam, chunk[:min(len(chunk), len(f.delim)-1)]...)
		if j := bytes.Index(seam, f.delim); j >= 0 && j < k {
			return len(f.pending) - k + j
		}
	}
	if i := f.index(chunk); i >= 0 {
		return len(f.pending) + i
	}
	return -1
}

// escapesHelp lists the escapes delimiters and --template take.
const escapesHelp = `\n \t \r \0 \\ \xNN`

// unescape turns a delimiter as typed (`\n`, `\t`, `\r`, `\0`, `\\`,
// `\xNN`, or literal bytes) into bytes. A backslash at the end is itself.
func unescape(s string) ([]byte, error) {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			out = append(out, s[i])
			continue
		}
		b, n, err := decodeEscape(s[i:])
		if err != nil {
			return nil, fmt.Errorf("%v in %q", err, s)
		}
		out = append(out, b)
		i += n - 1
	}
	return out, nil
}

// decodeEscape decodes the escape s starts with (a backslash and at least
// one more byte): the byte it stands for and how many bytes of s it is.
func decodeEscape(s string) (b byte, n int, err error) {
	switch s[1] {
	case 'n':
		return '\n', 2, nil
	case 't':
		return '\t', 2, nil
	case 'r':
		return '\r', 2, nil
	case '0':
		return 0, 2, nil
	case '\\':
		return '\\', 2, nil
	case 'x':
		if len(s) < 4 {
			return 0, 0, errors.New("incomplete \\x escape")
		}
		v, err := strconv.ParseUint(s[2:4], 16, 8)
		if err != nil {
			return 0, 0, fmt.Errorf("bad \\x escape %s", quoteSequence(s[:4]))
		}
		return byte(v), 4, nil
	}
	_, size := utf8.DecodeRuneInString(s[1:])
	return 0, 0, fmt.Errorf("unknown escape %s (use %s)", quoteSequence(s[:1+size]), escapesHelp)
}
