// Package crcfold computes the bit-reflected CRC-32s of seglog's formats:
// IEEE's, over a seglog record, and Castagnoli's (CRC-32C), over an
// Apache Kafka record batch. Both are on every record read and checked,
// and hash/crc32 leaves speed behind at each end: it folds long inputs 64
// bytes a round (IEEE, with PCLMULQDQ) or takes them 24 bytes a round
// (Castagnoli, with the CRC32 instruction), and takes inputs under 16
// bytes a byte at a time. A Table folds inputs of Min bytes or more 128
// bytes a round with VPCLMULQDQ on YMM registers where the CPU has it,
// tail included, and takes shorter ones 8 bytes at a time with
// slicing-by-8 tables. Figures: docs/performance.md, "The CRC".
package crcfold

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
)

// A Table computes one polynomial's CRC.
type Table struct {
	keys keys
	std  *crc32.Table // hash/crc32's, for long inputs where fold cannot run
	// slices[k][b] is the CRC register after byte b and k zero bytes.
	slices [8][256]uint32
}

// keys are a polynomial P's constants for fold, in the order
// fold_amd64.s reads them: for folding a 16-byte lane D bits on (D =
// 1024, 512, 256, 128), x^(D+32) mod P and x^(D-32) mod P; x^64 mod P
// and zero; then P and floor(x^64 / P) for the Barrett reduction. All
// are bit-reflected, as the CRC is, and the remainders shifted left by
// one, as hash/crc32's own constants are (the product of two reflected
// 64-bit lanes comes out one bit low).
type keys [12]uint64

// MakeTable returns the Table of poly, given bit-reflected as
// hash/crc32's constants are (crc32.IEEE, crc32.Castagnoli).
func MakeTable(poly uint32) *Table {
	t := &Table{std: crc32.MakeTable(poly)}
	t.slices[0] = *t.std
	for i := range 256 {
		c := t.slices[0][i]
		for k := 1; k < 8; k++ {
			c = t.slices[0][c&0xff] ^ c>>8
			t.slices[k][i] = c
		}
	}
	normal := bits.Reverse32(poly) // P without its x^32 term, x^31 the top bit
	for i, d := range []int{1024, 512, 256, 128} {
		t.keys[2*i] = reflectedRemainder(d+32, normal)
		t.keys[2*i+1] = reflectedRemainder(d-32, normal)
	}
	t.keys[8] = reflectedRemainder(64, normal)
	t.keys[10] = uint64(poly)<<1 | 1
	t.keys[11] = bits.Reverse64(quotientX64(normal)) >> 31
	return t
}

// reflectedRemainder is x^n mod P, bit-reflected and shifted left by one.
func reflectedRemainder(n int, normal uint32) uint64 {
	r := uint32(1)
	for range n {
		top := r & (1 << 31)
		r <<= 1
		if top != 0 {
			r ^= normal
		}
	}
	return uint64(bits.Reverse32(r)) << 1
}

// quotientX64 is floor(x^64 / P), a polynomial of degree 32, by long
// division: bit i of the result is x^i's coefficient.
func quotientX64(normal uint32) uint64 {
	p := 1<<32 | uint64(normal)
	var q, r uint64
	for i := 64; i >= 0; i-- {
		r <<= 1
		if i == 64 {
			r |= 1
		}
		if r&(1<<32) != 0 {
			r ^= p
			q |= 1 << i
		}
	}
	return q
}

// Min is the shortest input folded; shorter ones go through the tables.
const Min = 64

// Update returns the CRC of p appended to the input whose CRC is crc,
// as crc32.Update with the same polynomial does.
func (t *Table) Update(crc uint32, p []byte) uint32 {
	if len(p) >= Min {
		if haveFold {
			return ^foldAVX2(^crc, p, &t.keys)
		}
		n := len(p) &^ 15
		crc = crc32.Update(crc, t.std, p[:n])
		p = p[n:]
	}
	s := &t.slices
	c := ^crc
	for len(p) >= 8 {
		c ^= binary.LittleEndian.Uint32(p)
		c = s[0][p[7]] ^ s[1][p[6]] ^ s[2][p[5]] ^ s[3][p[4]] ^
			s[4][c>>24] ^ s[5][c>>16&0xff] ^ s[6][c>>8&0xff] ^ s[7][c&0xff]
		p = p[8:]
	}
	for _, b := range p {
		c = s[0][byte(c)^b] ^ c>>8
	}
	return ^c
}

// Checksum is the CRC of p.
func (t *Table) Checksum(p []byte) uint32 { return t.Update(0, p) }
