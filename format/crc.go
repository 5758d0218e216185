package format

import (
	"hash/crc32"

	"github.com/seglog/seglog/format/internal/crcfold"
)

// ieee is the record CRC's polynomial: crcfold takes a record's 8
// timestamp bytes and the tail of its body, under 16 bytes each, 8 at a
// time, where hash/crc32 would take them a byte at a time (for 100-byte
// records that cost more than the body itself).
var ieee = crcfold.MakeTable(crc32.IEEE)
