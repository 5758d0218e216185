package format

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

func TestCRCUpdateMatchesHashCRC32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 300)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for n := 0; n <= len(buf); n++ {
		for _, start := range []uint32{0, 0xdeadbeef} {
			if got, want := crcUpdate(start, buf[:n]), crc32.Update(start, crc32.IEEETable, buf[:n]); got != want {
				t.Fatalf("crcUpdate(%08x, %d bytes) = %08x, want %08x", start, n, got, want)
			}
		}
	}
}
