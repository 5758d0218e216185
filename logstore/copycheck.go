package logstore

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// segmentCheck checks one segment's .log bytes as they stream past, in
// pieces of any size (segfile.ChainCheck: every record whole, checking
// out, carrying the next offset), in constant memory. It also compares the
// segment's index files, already written beside the copy, with what a
// writer with the segment's index interval writes.
type segmentCheck struct {
	*segfile.ChainCheck
	where    string
	base     uint64
	interval uint64
	pos      int64 // where the records checked end

	idx, tidx indexFileCheck
	entry     []byte
}

// newSegmentCheck starts the check of a segment with base offset base and
// the given index interval; where names it in errors.
func newSegmentCheck(where string, base uint64, interval int) *segmentCheck {
	c := &segmentCheck{where: where, base: base, interval: uint64(max(interval, 1))}
	c.ChainCheck = segfile.NewChainCheck(where, base, c.record)
	return c
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

// Write checks p, the next bytes of the segment (segfile.ChainCheck's
// Write, its damage a *CorruptionError).
func (c *segmentCheck) Write(p []byte) (int, error) {
	n, err := c.ChainCheck.Write(p)
	var d *segfile.Damage
	if errors.As(err, &d) {
		err = corruption(d)
	}
	return n, err
}

// record takes in a record that checked out.
func (c *segmentCheck) record(pos int64, h *format.Header) {
	if (h.Offset-c.base)%c.interval == 0 {
		c.entry = format.AppendIndexEntry(c.entry[:0], format.IndexEntry{Offset: h.Offset, Pos: pos})
		c.idx.expect(c.entry)
		c.entry = format.AppendTimeIndexEntry(c.entry[:0], format.TimeIndexEntry{Offset: h.Offset, Timestamp: h.Timestamp})
		c.tidx.expect(c.entry)
	}
	c.pos = pos + h.RecordLen()
}

// finish ends the check once every byte was written: a record cut short
// there is an error too.
func (c *segmentCheck) finish() error {
	c.idx.close()
	c.tidx.close()
	if err := c.Finish(); err != nil {
		var d *segfile.Damage
		if errors.As(err, &d) {
			return corruption(d)
		}
		return err
	}
	return nil
}

// records is how many records checked out.
func (c *segmentCheck) records() uint64 { return c.Records() }

// lastTimestamp is the last record's timestamp.
func (c *segmentCheck) lastTimestamp() int64 { return c.LastTimestamp() }

// fixIndexes brings the index files of the copy seg, whose .log passed the
// check, to what the check expected: kept when they are that, cut when
// they hold that and more (entries past the copied records), else written
// anew from the .log. It tells whether it rebuilt one.
func (c *segmentCheck) fixIndexes(fsys fileSystem, seg segment) (rebuilt bool, err error) {
	for _, x := range []struct {
		ext string
		c   *indexFileCheck
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
	src, err := fsx.OpenRead(seg.path(format.LogExt))
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
	err = writeIndexEntries(osFile{File: src}, 0, c.pos, c.base, int(c.interval), idx, tidx)
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
	f, size, err := fsx.OpenIndex(path)
	if err != nil {
		var odd *NotRegularError
		if os.IsNotExist(err) || errors.As(err, &odd) {
			return 0, nil // none to copy: the copy's is rebuilt
		}
		return 0, err
	}
	defer f.Close()
	x := segfile.NewIndex(f, size)
	lo, hi := int64(0), x.Len() // entries [0, lo) are below next, [hi, n) are not
	for lo < hi {
		mid := lo + (hi-lo)/2
		e, err := x.Entry(mid)
		if err != nil {
			return 0, err
		}
		if e.Offset < next {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo * format.IndexEntryLen, nil
}
