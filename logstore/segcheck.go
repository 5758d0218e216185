package logstore

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/seglog/seglog/format"
)

// segmentCheck checks one segment's .log bytes as they stream past, in
// pieces of any size: every record whole, checking out, and carrying the
// next offset (the first one the segment's base). It holds one header's
// bytes, never a record, so a copy checks any segment in constant memory.
// It also compares the segment's index files, already written beside the
// copy, with what a writer with the segment's index interval writes.
type segmentCheck struct {
	where    string // the segment being copied, for errors
	base     uint64
	interval uint64

	pos     int64  // bytes seen
	next    uint64 // offset the next record must have
	lastTS  int64
	recPos  int64 // where the record being read starts
	hdr     [format.HeaderLen]byte
	hn      int // header bytes held
	h       format.Header
	left    int64 // body bytes of the record still to come
	crc     uint32
	failure error

	idx, tidx recIndexCheck
	entry     []byte
}

// newSegmentCheck starts the check of a segment with base offset base and
// the given index interval; where names it in errors.
func newSegmentCheck(where string, base uint64, interval int) *segmentCheck {
	return &segmentCheck{where: where, base: base, interval: uint64(max(interval, 1)), next: base}
}

// compareIndexes makes the check also compare the index files of seg,
// written before its .log is checked, with the entries expected of them;
// fixIndexes then acts on the result. A missing file is rebuilt.
func (c *segmentCheck) compareIndexes(seg segment) error {
	if err := c.idx.open(seg.path(format.IndexExt)); err != nil {
		return err
	}
	if err := c.tidx.open(seg.path(format.TimeIndexExt)); err != nil {
		c.idx.close()
		return err
	}
	return nil
}

// Write checks p, the next bytes of the segment. After a failure every
// call returns it.
func (c *segmentCheck) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && c.failure == nil {
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
	if c.failure != nil {
		return 0, c.failure
	}
	return n, nil
}

func (c *segmentCheck) startRecord() {
	c.recPos = c.pos - format.HeaderLen
	h, err := format.ParseHeader(c.hdr[:])
	if err == nil && h.Offset != c.next {
		err = format.ErrOffset
	}
	if err != nil {
		c.fail(err)
		return
	}
	c.h, c.left = h, int64(h.Size)
	c.crc = format.ChecksumStart(h.Timestamp)
	if c.left == 0 {
		c.endRecord()
	}
}

func (c *segmentCheck) endRecord() {
	if c.crc != c.h.CRC {
		c.fail(format.ErrCRC)
		return
	}
	if (c.h.Offset-c.base)%c.interval == 0 {
		c.entry = format.AppendIndexEntry(c.entry[:0], format.IndexEntry{Offset: c.h.Offset, Pos: c.recPos})
		c.idx.expect(c.entry)
		c.entry = format.AppendTimeIndexEntry(c.entry[:0], format.TimeIndexEntry{Offset: c.h.Offset, Timestamp: c.h.Timestamp})
		c.tidx.expect(c.entry)
	}
	c.next++
	c.lastTS = c.h.Timestamp
	c.hn = 0
}

func (c *segmentCheck) fail(reason error) {
	c.failure = &CorruptionError{Path: c.where, Pos: c.recPos, Offset: int64(c.next), Reason: reason}
}

// finish ends the check once every byte was written: a record cut short
// there is an error too.
func (c *segmentCheck) finish() error {
	c.idx.close()
	c.tidx.close()
	if c.failure == nil && c.hn > 0 {
		// The bytes end inside a record.
		if c.hn < format.HeaderLen {
			c.recPos = c.pos - int64(c.hn)
		}
		c.fail(format.ErrShort)
	}
	return c.failure
}

// records is how many records checked out.
func (c *segmentCheck) records() uint64 { return c.next - c.base }

// fixIndexes brings the index files of the copy seg, whose .log passed the
// check, to what the check expected: kept when they are that, cut when
// they hold that and more (entries past the copied records), else written
// anew from the .log. It tells whether it rebuilt one.
func (c *segmentCheck) fixIndexes(fsys fileSystem, seg segment) (rebuilt bool, err error) {
	for _, x := range []struct {
		ext string
		c   *recIndexCheck
	}{{format.IndexExt, &c.idx}, {format.TimeIndexExt, &c.tidx}} {
		switch x.c.action() {
		case IndexKept:
			continue
		case IndexTrimmed:
			err = truncateFile(fsys, seg.path(x.ext), x.c.n)
		case IndexRebuilt:
			rebuilt = true
			err = c.rebuildIndex(fsys, seg, x.ext)
		}
		if err != nil {
			return rebuilt, fmt.Errorf("index of %s: %w", seg.path(format.LogExt), err)
		}
	}
	return rebuilt, nil
}

func (c *segmentCheck) rebuildIndex(fsys fileSystem, seg segment, ext string) error {
	src, err := openRead(seg.path(format.LogExt))
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := fsys.OpenFile(seg.path(ext), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	var idx, tidx io.Writer
	w := bufio.NewWriterSize(f, 64<<10)
	if ext == format.IndexExt {
		idx = w
	} else {
		tidx = w
	}
	err = recWalkIndex(osFile{src}, 0, c.pos, c.base, int(c.interval), idx, tidx)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func truncateFile(fsys fileSystem, path string, size int64) error {
	f, err := fsys.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// indexPrefix is how many bytes of the index file at path hold entries
// for offsets below next: the part of an active segment's index that
// belongs to the records a copy takes. Entries are in offset order in any
// index seglog trusts; one that is not is rebuilt after the copy anyway.
func indexPrefix(path string, next uint64) (int64, error) {
	x, err := openIndex(path)
	if err != nil {
		if os.IsNotExist(err) {
			return 0, nil
		}
		return 0, err
	}
	defer x.Close()
	lo, hi := int64(0), x.n // entries [0, lo) are below next, [hi, n) are not
	for lo < hi {
		mid := lo + (hi-lo)/2
		off, _, err := x.pair(mid)
		if err != nil {
			return 0, err
		}
		if off < next {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo * format.IndexEntryLen, nil
}
