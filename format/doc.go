// Package format is the byte-level codec of seglog's on-disk format: record
// headers and bodies, CRCs, index and time-index entries, segment file names
// and topic names. It does no I/O: bytes in, bytes out.
//
// A segment's .log file is a sequence of records, all integers big-endian:
//
//	0       8       12      16              24      28
//	+-------+-------+-------+---------------+-------+------+--------+
//	|offset | size  |  crc  |   timestamp   |keylen | key  | value  |
//	|  u64  |  u32  |  u32  |      i64      |  u32  |      |        |
//	+-------+-------+-------+---------------+-------+------+--------+
//
// size is len(key)+len(value); crc is CRC-32 (IEEE) over the 8 timestamp
// bytes, the key and the value; timestamp is Unix nanoseconds; keylen 0 means
// "no key". The CRC covers neither offset, size nor keylen: offsets are
// checked by continuity (each record's offset is the previous one's + 1), and
// a flipped keylen that stays <= size moves bytes between key and value
// undetectably, a limit of the format.
//
// The .index and .timeindex files hold 16-byte entries:
//
//	.index      | offset u64 | position u64 |   byte position of the header
//	.timeindex  | offset u64 | timestamp i64 |  that record's timestamp
//
// Worked example: records with keys user-1, user-2, user-1, values hello,
// world, foo and timestamps 1700000000000000000, 1700000000100000000 and
// 1700000000200000000 start at byte positions 0, 39 and 78 (the next write
// goes to 115) and have CRCs 0x73b4c3d2, 0xc23277ba and 0xe14ccc3d.
//
// Decoders report two kinds of failure apart: [ErrShort] when the bytes given
// end before the thing being decoded does, and a "check failed" error
// ([ErrKeyLen], [ErrCRC]) when the bytes are all there but wrong. Whether a
// short record is a torn tail or corruption depends on where it is in the
// partition, which only the caller knows.
package format
