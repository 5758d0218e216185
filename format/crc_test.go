package format

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestCRCUpdateMatchesHashCRC32 checks every length up to 300 bytes (both
// sides of foldMin), then random lengths up to 70 000 at random alignments,
// on each path the CPU has: foldAVX2 where it can run, and without it.
func TestCRCUpdateMatchesHashCRC32(t *testing.T) {
	paths := []bool{false}
	if haveFold {
		paths = append(paths, true)
	} else {
		t.Log("this CPU lacks AVX2 or VPCLMULQDQ: only the hash/crc32 path is checked")
	}
	defer func(was bool) { haveFold = was }(haveFold)
	for _, fold := range paths {
		haveFold = fold
		crcMatches(t, fold)
	}
}

func crcMatches(t *testing.T, fold bool) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 300)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for n := 0; n <= len(buf); n++ {
		for _, start := range []uint32{0, 0xdeadbeef} {
			if got, want := crcUpdate(start, buf[:n]), crc32.Update(start, crc32.IEEETable, buf[:n]); got != want {
				t.Fatalf("fold %v: crcUpdate(%08x, %d bytes) = %08x, want %08x", fold, start, n, got, want)
			}
		}
	}
	long := make([]byte, 70_000)
	for i := range long {
		long[i] = byte(r.Uint32())
	}
	for range 3000 {
		off := r.IntN(64)
		n := r.IntN(len(long) - off)
		if r.IntN(2) == 0 {
			n = r.IntN(3000)
		}
		start := r.Uint32()
		p := long[off : off+n]
		if got, want := crcUpdate(start, p), crc32.Update(start, crc32.IEEETable, p); got != want {
			t.Fatalf("fold %v: crcUpdate(%08x, %d bytes at offset %d) = %08x, want %08x", fold, start, n, off, got, want)
		}
	}
}
