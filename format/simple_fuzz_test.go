package format_test

import (
	"bytes"
	"errors"
	"strconv"
	"testing"

	"github.com/seglog/seglog/format"
)

func FuzzParseSimpleName(f *testing.F) {
	for _, s := range []string{"0.store", "00000000.index", "18446744073709551615.store", "18446744073709551616.index",
		"00000000000000000000.log", "1a.store", ".store", "-1.index", "7.index.tmp"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		base, ext, err := format.ParseSimpleName(name)
		if err != nil {
			if !errors.Is(err, format.ErrSimpleName) {
				t.Fatalf("%q: error %v is not ErrSimpleName", name, err)
			}
			return
		}
		if ext != format.SimpleStoreExt && ext != format.SimpleIndexExt {
			t.Fatalf("%q: extension %q", name, ext)
		}
		// Anything that parses names the same base unpadded.
		if b2, e2, err := format.ParseSimpleName(strconv.FormatUint(base, 10) + ext); err != nil || b2 != base || e2 != ext {
			t.Fatalf("%q -> %d%s does not parse back: %d %q %v", name, base, ext, b2, e2, err)
		}
	})
}

func FuzzParseSimpleIndexEntry(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 12))
	f.Add(format.AppendSimpleIndexEntry(nil, format.SimpleIndexEntry{RelOffset: 3, Pos: 45}))
	f.Add(bytes.Repeat([]byte{0xff}, 13))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := format.ParseSimpleIndexEntry(b)
		if len(b) < format.SimpleIndexEntryLen {
			if !errors.Is(err, format.ErrShort) {
				t.Fatalf("%d bytes: %v, want ErrShort", len(b), err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := format.AppendSimpleIndexEntry(nil, e); !bytes.Equal(got, b[:format.SimpleIndexEntryLen]) {
			t.Fatalf("%x re-encodes as %x", b[:12], got)
		}
		if e.IsZero() != format.IsZero(b[:format.SimpleIndexEntryLen]) {
			t.Fatalf("%x: IsZero %v", b[:12], e.IsZero())
		}
	})
}

func FuzzParseSimpleFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add(format.AppendSimpleRecord(nil, []byte("Sushant")))
	f.Add(bytes.Repeat([]byte{0xff}, 8))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := format.ParseSimpleFrame(b)
		if len(b) < format.SimpleFrameLen {
			if !errors.Is(err, format.ErrShort) {
				t.Fatalf("%d bytes: %v, want ErrShort", len(b), err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if n <= uint64(len(b)-format.SimpleFrameLen) {
			// A frame that fits re-encodes to the same bytes.
			v := b[format.SimpleFrameLen : format.SimpleFrameLen+int(n)]
			if got := format.AppendSimpleRecord(nil, v); !bytes.Equal(got, b[:format.SimpleFrameLen+int(n)]) {
				t.Fatalf("%x re-encodes as %x", b, got)
			}
		}
	})
}
