package logstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// indexFileCheck compares an index file, as it is read, with the entries
// expected of it.
type indexFileCheck struct {
	f    *os.File
	br   *bufio.Reader
	size int64 // -1: no such file
	n    int64 // bytes expected so far
	same bool  // the file starts with them
	buf  [format.IndexEntryLen]byte
}

func (c *indexFileCheck) open(path string) error {
	*c = indexFileCheck{size: -1}
	f, err := fsx.OpenRead(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	c.f, c.br, c.size, c.same = f, bufio.NewReaderSize(f, 64<<10), fi.Size(), true
	return nil
}

func (c *indexFileCheck) expect(e []byte) {
	c.n += int64(len(e))
	if !c.same {
		return
	}
	if _, err := io.ReadFull(c.br, c.buf[:]); err != nil || !bytes.Equal(c.buf[:], e) {
		c.same = false
		c.close()
	}
}

func (c *indexFileCheck) close() {
	if c.f != nil {
		c.f.Close()
		c.f, c.br = nil, nil
	}
}

// action is what the file needs, once every expected entry was seen.
func (c *indexFileCheck) action() IndexAction {
	switch {
	case c.size < 0 || !c.same:
		return IndexRebuilt
	case c.size == c.n:
		return IndexKept
	}
	return IndexTrimmed
}

// writeIndexEntries writes the index entries a writer with the given interval
// writes for the (checked) records in [from, end) of src, the first
// having offset base and going to byte 0 of its segment. A nil writer is
// skipped.
func writeIndexEntries(src file, from, end int64, base uint64, interval int, idx, tidx io.Writer) error {
	sc, err := segfile.NewScanner(segfile.Segment{Path: src.Name(), Base: base, Floor: base, Log: src}, end, segfile.Options{})
	if err != nil {
		return err
	}
	defer sc.Close()
	sc.StartAt(from, base)
	var b []byte
	for sc.Next() {
		h, pos := sc.Header(), sc.RecordPos()
		if (h.Offset-base)%uint64(interval) == 0 {
			if idx != nil {
				b = format.AppendIndexEntry(b[:0], format.IndexEntry{Offset: h.Offset, Pos: pos - from})
				if _, err := idx.Write(b); err != nil {
					return err
				}
			}
			if tidx != nil {
				b = format.AppendTimeIndexEntry(b[:0], format.TimeIndexEntry{Offset: h.Offset, Timestamp: h.Timestamp})
				if _, err := tidx.Write(b); err != nil {
					return err
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", src.Name(), err)
	}
	if sc.Pos() != end {
		return fmt.Errorf("read %s: the records at bytes %d..%d no longer check out", src.Name(), sc.Pos(), end)
	}
	return nil
}

// repairIndexes brings a segment's indexes to what a writer would have
// written for its runs[0]: trimmed in place when they hold that and more,
// replaced through a temporary file when they are wrong.
func (s *Store) repairIndexes(sp *segmentPlan, logPath string) error {
	rebuild := map[string]bool{}
	for _, x := range []struct {
		ext string
		c   *indexFileCheck
	}{{format.IndexExt, &sp.idx}, {format.TimeIndexExt, &sp.tidx}} {
		switch x.c.action() {
		case IndexTrimmed:
			f, err := s.fs.OpenFile(sp.seg.path(x.ext), os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			err = f.Truncate(x.c.n)
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case IndexRebuilt:
			rebuild[x.ext] = true
		}
	}
	var exts []string
	for _, ext := range []string{format.IndexExt, format.TimeIndexExt} {
		if rebuild[ext] {
			exts = append(exts, ext)
		}
	}
	if len(exts) == 0 {
		return nil
	}
	src, err := fsx.OpenRead(logPath)
	if err != nil {
		return err
	}
	defer src.Close()
	r := sp.scan.runs[0]
	if err := s.writeIndexes(osFile{File: src}, validRun{end: r.end, first: sp.seg.base}, sp.interval, sp.seg, exts...); err != nil {
		return fmt.Errorf("rebuild index of %s: %w", logPath, err)
	}
	return nil
}

// writeIndexes writes the named index files (both when none are
// named) of seg as a writer with the interval would have for run r of
// src, whose first record goes to byte 0 of seg: each through a temporary
// file renamed into place.
func (s *Store) writeIndexes(src file, r validRun, interval int, seg segment, exts ...string) error {
	if len(exts) == 0 {
		exts = []string{format.IndexExt, format.TimeIndexExt}
	}
	var files []file
	w := map[string]*bufio.Writer{}
	var err error
	for _, ext := range exts {
		var f file
		if f, err = s.fs.OpenFile(seg.path(ext)+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
			break
		}
		files = append(files, f)
		w[ext] = bufio.NewWriterSize(f, 64<<10)
	}
	writer := func(ext string) io.Writer {
		if b := w[ext]; b != nil {
			return b
		}
		return nil
	}
	if err == nil {
		err = writeIndexEntries(src, r.pos, r.end, r.first, interval, writer(format.IndexExt), writer(format.TimeIndexExt))
	}
	for _, ext := range exts {
		if b := w[ext]; b != nil && err == nil {
			err = b.Flush()
		}
	}
	for _, f := range files {
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	for _, ext := range exts {
		if err == nil {
			err = s.renameIntoPlace(seg.path(ext)+".tmp", seg.path(ext), false)
		}
	}
	if err != nil {
		for _, ext := range exts {
			_ = s.fs.Remove(seg.path(ext) + ".tmp")
		}
		return err
	}
	return s.fs.SyncDir(seg.dir)
}
