package segfile

import (
	"math"

	"github.com/seglog/seglog/format"
)

// ChainCheck checks a segment's .log bytes as they stream past, in pieces
// of any size, for a copy: every record whole, its CRC matching, with the
// next offset (the first one the segment's base). A copy takes only data
// with no damage at all, so there is nothing to resume: the first break
// ends the check. It holds one header's bytes, never a record, so it
// checks any segment in constant memory.
type ChainCheck struct {
	path string
	base uint64

	pos    int64  // bytes seen
	next   uint64 // offset the next record must have
	lastTS int64
	recPos int64 // where the record being read starts
	hdr    [format.HeaderLen]byte
	hn     int // header bytes held
	h      format.Header
	left   int64 // body bytes of the record still to come
	crc    uint32
	fail   *Damage
	full   bool // a record with the last offset there is was taken

	onRecord func(pos int64, h *format.Header)
}

// NewChainCheck starts the check of the segment at path (for messages)
// with base offset base. onRecord, if set, is told of each record that
// checked out.
func NewChainCheck(path string, base uint64, onRecord func(pos int64, h *format.Header)) *ChainCheck {
	return &ChainCheck{path: path, base: base, next: base, onRecord: onRecord}
}

// Write checks p, the next bytes of the segment. After a failure every
// call returns it (a *Damage).
func (c *ChainCheck) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && c.fail == nil {
		if c.hn < format.HeaderLen {
			k := copy(c.hdr[c.hn:], p)
			c.hn += k
			c.pos += int64(k)
			p = p[k:]
			if c.hn == format.HeaderLen {
				c.startRecord()
			}
			continue
		}
		k := min(int64(len(p)), c.left)
		c.crc = format.UpdateChecksum(c.crc, p[:k])
		c.left -= k
		c.pos += k
		p = p[k:]
		if c.left == 0 {
			c.endRecord()
		}
	}
	if c.fail != nil {
		return 0, c.fail
	}
	return n, nil
}

func (c *ChainCheck) startRecord() {
	c.recPos = c.pos - format.HeaderLen
	err := c.h.Decode(c.hdr[:])
	if err == nil && (c.h.Offset != c.next || c.full) {
		err = format.ErrOffset
	}
	if err != nil {
		c.failWith(err)
		return
	}
	c.left = int64(c.h.Size)
	c.crc = format.ChecksumStart(c.h.Timestamp)
	if c.left == 0 {
		c.endRecord()
	}
}

func (c *ChainCheck) endRecord() {
	if c.crc != c.h.CRC {
		c.failWith(format.ErrCRC)
		return
	}
	if c.onRecord != nil {
		c.onRecord(c.recPos, &c.h)
	}
	if c.h.Offset == math.MaxUint64 {
		c.full = true // offsets never wrap: nothing may follow
	} else {
		c.next++
	}
	c.lastTS = c.h.Timestamp
	c.hn = 0
}

func (c *ChainCheck) failWith(reason error) {
	c.fail = &Damage{Path: c.path, Pos: c.recPos, Offset: c.next, Class: Corrupt, Reason: reason,
		Header: c.h, HeaderOK: c.hn == format.HeaderLen, End: c.pos, Limit: c.pos}
}

// Finish ends the check once every byte was written: a record cut short
// there fails it too.
func (c *ChainCheck) Finish() error {
	if c.fail == nil && c.hn > 0 {
		if c.hn < format.HeaderLen {
			c.recPos = c.pos - int64(c.hn)
		}
		c.failWith(format.ErrShort)
	}
	if c.fail != nil {
		return c.fail
	}
	return nil
}

// Next is the offset after the last record that checked out (the last
// offset there is, after a record that has it).
func (c *ChainCheck) Next() uint64 { return c.next }

// Records is how many records checked out.
func (c *ChainCheck) Records() uint64 {
	if c.full {
		return c.next - c.base + 1
	}
	return c.next - c.base
}

// LastTimestamp is the last record's timestamp.
func (c *ChainCheck) LastTimestamp() int64 { return c.lastTS }
