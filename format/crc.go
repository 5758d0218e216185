package format

import (
	"encoding/binary"
	"hash/crc32"
)

// hash/crc32 takes inputs shorter than 16 bytes a byte at a time, and those
// are a record's 8 timestamp bytes and the tail of its body: for 100-byte
// records that cost more than the body itself. crcUpdate sends inputs of
// 64 bytes or more to carry-less multiply code: foldAVX2, tail included,
// where the CPU has it, else hash/crc32's for the 16-byte-aligned part.
// The rest it takes 8 bytes at a time with slicing-by-8 tables.
var crcTables = func() (t [8][256]uint32) {
	t[0] = *crc32.IEEETable
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}()

// crcUpdate is crc32.Update(c, crc32.IEEETable, p).
func crcUpdate(c uint32, p []byte) uint32 {
	if haveFold && len(p) >= foldMin {
		return ^foldAVX2(^c, p)
	}
	rest := p
	if len(p) >= 64 {
		n := len(p) &^ 15
		c = crc32.Update(c, crc32.IEEETable, p[:n])
		rest = p[n:]
	}
	t := &crcTables
	c = ^c
	for len(rest) >= 8 {
		c ^= binary.LittleEndian.Uint32(rest)
		c = t[0][rest[7]] ^ t[1][rest[6]] ^ t[2][rest[5]] ^ t[3][rest[4]] ^
			t[4][c>>24] ^ t[5][c>>16&0xff] ^ t[6][c>>8&0xff] ^ t[7][c&0xff]
		rest = rest[8:]
	}
	for _, b := range rest {
		c = t[0][byte(c)^b] ^ c>>8
	}
	return ^c
}
