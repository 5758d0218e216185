package format

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

func TestCRCOf8MatchesHashCRC32(t *testing.T) {
	var b [8]byte
	for _, v := range []uint64{0, 1, 1700000000000000000, 1<<63 - 1, 1 << 63, ^uint64(0)} {
		binary.BigEndian.PutUint64(b[:], v)
		if got, want := crcOf8(b[:]), crc32.ChecksumIEEE(b[:]); got != want {
			t.Errorf("crcOf8(%x) = %08x, want %08x", b, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		binary.LittleEndian.PutUint64(b[:], r.Uint64())
		if got, want := crcOf8(b[:]), crc32.ChecksumIEEE(b[:]); got != want {
			t.Fatalf("crcOf8(%x) = %08x, want %08x", b, got, want)
		}
	}
}
