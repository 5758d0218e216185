package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Values longer than outputPiece are encoded a piece at a time: the pieces
// must join into exactly the value, whatever falls on a piece boundary
// (escapes, multi-byte characters, base64 groups).
func TestLargeValuesCrossOutputPieces(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "big")
	utf := []byte(strings.Repeat("ä\"\\\n\x01x", outputPiece/3))        // escapes and 2-byte runes throughout
	bin := bytes.Repeat([]byte{0xff, 0x01, 0xfe, 'a'}, outputPiece/2+7) // no NUL: it frames
	values := [][]byte{utf, bin, bytes.Repeat([]byte("y"), 3*outputPiece+1)}
	for _, v := range values {
		mustRun(t, dir, string(v)+"\x00", "append", "big", "--null")
	}
	recs := readRecords(t, dir, "big")
	if len(recs) != len(values) {
		t.Fatalf("read %d records, want %d", len(recs), len(values))
	}
	for i, r := range recs {
		if !bytes.Equal(r.value, values[i]) {
			t.Errorf("record %d: %d bytes back, want %d equal bytes", i, len(r.value), len(values[i]))
		}
	}
	raw := mustRun(t, dir, "", "read", "big", "--format", "raw").stdout
	if want := string(bytes.Join(values, nil)); raw != want {
		t.Errorf("--format raw: %d bytes, want %d equal bytes", len(raw), len(want))
	}
	value := mustRun(t, dir, "", "read", "big").stdout
	if want := fmt.Sprintf("%s\n%s\n%s\n", values[0], values[1], values[2]); value != want {
		t.Errorf("--format value differs (%d bytes, want %d)", len(value), len(want))
	}
}

// appendJSONEscaped, with its 8-bytes-at-a-time skip, escapes exactly what
// JSON needs: every string decodes back to itself.
func TestAppendJSONEscapedRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte("ab\"\\\x00\x01\x1f\x20\x7f/<>&\n\t\r")
	for i := 0; i < 5000; i++ {
		s := make([]byte, r.IntN(40))
		for j := range s {
			s[j] = alphabet[r.IntN(len(alphabet))]
		}
		s = append(s, "ä€"[:r.IntN(2)*2]...)
		enc := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(enc, &back); err != nil || back != string(s) {
			t.Fatalf("%q encoded as %s decodes to %q, %v", s, enc, back, err)
		}
		for _, c := range enc[1 : len(enc)-1] {
			if c < 0x20 {
				t.Fatalf("%q encoded as %s keeps a control byte", s, enc)
			}
		}
	}
}

// plainJSON, the one-pass fast path, is true exactly when every byte is
// ASCII and needs no escape, wherever in an 8-byte word the first byte
// that says otherwise falls.
func TestPlainJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	special := []byte("\"\\\x00\x1f\x80\xc3\xff")
	for i := 0; i < 20000; i++ {
		s := make([]byte, r.IntN(40))
		for j := range s {
			s[j] = byte(0x20 + r.IntN(0x5f)) // printable ASCII
		}
		if len(s) > 0 && r.IntN(2) == 0 {
			s[r.IntN(len(s))] = special[r.IntN(len(special))]
		}
		want := true
		for _, c := range s {
			if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				want = false
			}
		}
		if got := plainJSON(s); got != want {
			t.Fatalf("plainJSON(%q) = %v, want %v", s, got, want)
		}
	}
}
