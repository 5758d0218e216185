package format

import (
	"encoding/binary"
	"hash/crc32"
)

// Every record's CRC starts with its 8 timestamp bytes, apart from the
// body. hash/crc32 takes short inputs a byte at a time, which made that
// prefix cost more than a 100-byte body; slicing-by-8 tables do it in one
// step.
var tsTables = func() (t [8][256]uint32) {
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

// crcOf8 is crc32.ChecksumIEEE(b[:8]).
func crcOf8(b []byte) uint32 {
	_ = b[7]
	c := ^uint32(0) ^ binary.LittleEndian.Uint32(b)
	c = tsTables[0][b[7]] ^ tsTables[1][b[6]] ^ tsTables[2][b[5]] ^ tsTables[3][b[4]] ^
		tsTables[4][c>>24] ^ tsTables[5][c>>16&0xff] ^ tsTables[6][c>>8&0xff] ^ tsTables[7][c&0xff]
	return ^c
}
