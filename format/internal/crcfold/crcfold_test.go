package crcfold

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// polys are the two polynomials seglog's formats use.
var polys = []struct {
	name string
	poly uint32
}{{"IEEE", crc32.IEEE}, {"Castagnoli", crc32.Castagnoli}}

// TestKeys holds MakeTable's derivation to the constants published for
// these folds (Intel's "Fast CRC Computation for Generic Polynomials
// Using PCLMULQDQ", as Linux's crc32 and crc32c code carries them).
func TestKeys(t *testing.T) {
	want := map[uint32]keys{
		crc32.IEEE: {
			0x1e88ef372, 0x14a7fe880, 0x154442bd4, 0x1c6e41596, 0xf1da05aa, 0x15a546366,
			0x1751997d0, 0xccaa009e, 0x163cd6124, 0, 0x1db710641, 0x1f7011641,
		},
		crc32.Castagnoli: {
			0x6992cea2, 0xd3b6092, 0x740eef02, 0x9e4addf8, 0x1384aa63a, 0xba4fc28e,
			0xf20c0dfe, 0x14cd00bd6, 0xdd45aab8, 0, 0x105ec76f1, 0xdea713f1,
		},
	}
	for _, p := range polys {
		if got := MakeTable(p.poly).keys; got != want[p.poly] {
			t.Errorf("%s keys\n got %#x\nwant %#x", p.name, got, want[p.poly])
		}
	}
}

// TestUpdateMatchesHashCRC32 checks every length up to 300 bytes (both
// sides of Min), then random lengths up to 70 000 at random alignments,
// for each polynomial on each path the CPU has: fold where it can run,
// and without it.
func TestUpdateMatchesHashCRC32(t *testing.T) {
	paths := []bool{false}
	if haveFold {
		paths = append(paths, true)
	} else {
		t.Log("this CPU lacks AVX2 or VPCLMULQDQ: only the hash/crc32 path is checked")
	}
	defer func(was bool) { haveFold = was }(haveFold)
	for _, p := range polys {
		for _, fold := range paths {
			haveFold = fold
			t.Run(fmt.Sprintf("%s/fold=%v", p.name, fold), func(t *testing.T) {
				matches(t, MakeTable(p.poly), crc32.MakeTable(p.poly))
			})
		}
	}
}

func matches(t *testing.T, tab *Table, std *crc32.Table) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 300)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for n := 0; n <= len(buf); n++ {
		for _, start := range []uint32{0, 0xdeadbeef} {
			if got, want := tab.Update(start, buf[:n]), crc32.Update(start, std, buf[:n]); got != want {
				t.Fatalf("Update(%08x, %d bytes) = %08x, want %08x", start, n, got, want)
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
		if got, want := tab.Update(start, p), crc32.Update(start, std, p); got != want {
			t.Fatalf("Update(%08x, %d bytes at offset %d) = %08x, want %08x", start, n, off, got, want)
		}
	}
	if got, want := tab.Checksum(long), crc32.Checksum(long, std); got != want {
		t.Fatalf("Checksum of %d bytes = %08x, want %08x", len(long), got, want)
	}
}

// FuzzUpdate: on whichever path the CPU takes, each polynomial's CRC is
// hash/crc32's for any input and starting value.
func FuzzUpdate(f *testing.F) {
	f.Add([]byte(""), uint32(0))
	f.Add(bytes.Repeat([]byte{0xa5}, 127), uint32(1))
	f.Add(bytes.Repeat([]byte("0123456789abcdef"), 8), uint32(0xffffffff))
	f.Add(bytes.Repeat([]byte{1, 2, 3}, 700), uint32(0xdeadbeef))
	tabs := make([]*Table, len(polys))
	stds := make([]*crc32.Table, len(polys))
	for i, p := range polys {
		tabs[i], stds[i] = MakeTable(p.poly), crc32.MakeTable(p.poly)
	}
	f.Fuzz(func(t *testing.T, p []byte, start uint32) {
		for i := range polys {
			if got, want := tabs[i].Update(start, p), crc32.Update(start, stds[i], p); got != want {
				t.Fatalf("%s: Update(%08x, %d bytes) = %08x, want %08x", polys[i].name, start, len(p), got, want)
			}
		}
	})
}

// BenchmarkUpdate is each polynomial's CRC beside hash/crc32's, at the
// sizes of a seglog record's body and of a Kafka producer's batch.
func BenchmarkUpdate(b *testing.B) {
	for _, p := range polys {
		tab, std := MakeTable(p.poly), crc32.MakeTable(p.poly)
		for _, n := range []int{100, 1 << 10, 16 << 10, 1 << 20} {
			buf := bytes.Repeat([]byte("v"), n)
			b.Run(fmt.Sprintf("%s/%d/crcfold", p.name, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				for b.Loop() {
					tab.Update(0, buf)
				}
			})
			b.Run(fmt.Sprintf("%s/%d/hash-crc32", p.name, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				for b.Loop() {
					crc32.Update(0, std, buf)
				}
			})
		}
	}
}
