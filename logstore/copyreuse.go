package logstore

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// A forced copy onto an earlier copy of the same partition reuses what
// that copy holds (docs/format.md §7): the build is made as any copy's is,
// in a temporary directory swapped in at the end, but a closed segment
// byte-identical to the source's is hard-linked into it instead of
// copied, and the segment that was active at the earlier copy is built
// from the destination's own bytes (copy_file_range on one filesystem)
// followed by the source's new ones. Every byte is compared with the
// source's before it is reused, and checked record by record as a copied
// one is: size, or a record's CRC and offset, prove nothing.

// reusePlan is what a forced copy may take from the destination it
// replaces: by source segment, the destination segment of the same base.
type reusePlan struct {
	dir     string           // the destination partition
	segs    map[uint64]int64 // base -> the destination .log's size
	last    uint64           // base of the destination's last segment
	lock    *fsx.DirLock     // the destination topic's maintenance lock, shared
	stopped string           // why the rest is copied in full; "" while reusing
}

// planReuse looks at the destination partition a forced copy replaces
// (see reuseCheck), holding the destination topic's maintenance lock for
// the build when the plan is to reuse it.
func (b *partitionBuild) planReuse(src *copySource, held *fsx.DirLock) (*reusePlan, string, error) {
	if !b.opts.Force || b.newTopic {
		return nil, "", nil
	}
	// Held for the build: recover must not cut a file linked into it.
	var lock *fsx.DirLock
	if held == nil || !held.IsOn(b.topicDir) {
		var err error
		if lock, err = lockDirShared(b.topicDir, "topic "+b.opts.ToTopic, b.opts.LockWait, b.opts.Interrupt); err != nil {
			return nil, "", err
		}
	}
	p, why := reuseCheck(b.final, b.topicDir, src)
	if p == nil {
		if lock != nil {
			lock.Unlock()
		}
		return nil, why, nil
	}
	p.lock = lock
	return p, "", nil
}

// reuseCheck looks at the partition directory dir, in topicDir: nil and
// "" when there is none, nil and why when it is no earlier copy of src (a
// different topic settings file, or segments that are not a prefix of
// the source's, those the source's retention removed since aside).
func reuseCheck(dir, topicDir string, src *copySource) (*reusePlan, string) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, ""
	}
	settings, err := readOptional(filepath.Join(topicDir, settingsFile))
	if err != nil {
		return nil, fmt.Sprintf("its topic settings cannot be read (%v)", err)
	}
	if !bytes.Equal(settings, src.settings) {
		return nil, "its topic settings differ from the source's"
	}
	p := &reusePlan{dir: dir, segs: map[uint64]int64{}}
	if why := p.match(src); why != "" {
		return nil, why
	}
	return p, ""
}

// match fills the plan from the destination's segments, or says why they
// are no prefix of the source's.
func (p *reusePlan) match(src *copySource) string {
	segs, odd, err := readSegments(p.dir)
	switch {
	case err != nil:
		return fmt.Sprintf("it cannot be read (%v)", err)
	case len(odd) > 0:
		return fmt.Sprintf("it is damaged (%v)", odd[0])
	case len(segs) == 0 || len(src.segs) == 0:
		return "it shares no segment with the source"
	}
	first := src.segs[0].seg.base
	i := 0
	for _, seg := range segs {
		if seg.base < first {
			continue // gone from the source by retention
		}
		if i >= len(src.segs) || src.segs[i].seg.base != seg.base {
			return fmt.Sprintf("its segment %s is not the source's", filepath.Base(seg.path(format.LogExt)))
		}
		size := fileSize(seg.path(format.LogExt))
		if size > src.segs[i].log || size < src.segs[i].log && seg != segs[len(segs)-1] {
			return fmt.Sprintf("its segment %s is not the size of the source's", filepath.Base(seg.path(format.LogExt)))
		}
		p.segs[seg.base], p.last = size, seg.base
		i++
	}
	if i == 0 {
		return "it shares no segment with the source"
	}
	return ""
}

func (p *reusePlan) close() {
	if p != nil && p.lock != nil {
		p.lock.Unlock()
	}
}

// reusable is how many of cs's .log bytes the destination holds, as a
// prefix, and whether all three of its files are byte-identical to the
// source's (the segment is kept whole). A difference ends the reuse: the
// segment and the rest are copied in full.
func (p *reusePlan) reusable(cs copySegment, pace *pacer) (prefix int64, whole bool, err error) {
	if p == nil || p.stopped != "" {
		return 0, false, nil
	}
	size, ok := p.segs[cs.seg.base]
	if !ok {
		return 0, false, nil
	}
	dseg := segment{dir: p.dir, base: cs.seg.base}
	at, err := firstDifferentByte(cs.seg.path(format.LogExt), dseg.path(format.LogExt), size, pace)
	if err != nil {
		return 0, false, err
	}
	if at < size {
		p.stopped = fmt.Sprintf("its segment %s differs from the source's at byte %d", filepath.Base(dseg.path(format.LogExt)), at)
		return 0, false, nil
	}
	whole = size == cs.log
	for _, x := range []struct {
		ext string
		n   int64
	}{{format.IndexExt, cs.index}, {format.TimeIndexExt, cs.timeidx}} {
		if !whole {
			break
		}
		// An index the source lacks or the copy rebuilt is copied again:
		// only what is identical is kept.
		if whole = x.n > 0 && fileSize(dseg.path(x.ext)) == x.n; whole {
			at, err := firstDifferentByte(cs.seg.path(x.ext), dseg.path(x.ext), x.n, nil)
			if err != nil {
				return 0, false, err
			}
			whole = at == x.n
		}
	}
	return size, whole, nil
}

// firstDifferentByte compares the first n bytes of files a and b, a piece at
// a time (as much as either has when shorter), and returns where they
// first differ: n when they do not.
func firstDifferentByte(a, b string, n int64, pace *pacer) (int64, error) {
	fa, err := fsx.OpenRead(a)
	if err != nil {
		return 0, err
	}
	defer fa.Close()
	fb, err := fsx.OpenRead(b)
	if err != nil {
		return 0, err
	}
	defer fb.Close()
	const piece = 1 << 20
	bufA, bufB := make([]byte, piece), make([]byte, piece)
	for at := int64(0); at < n; {
		m := min(piece, n-at)
		ka, errA := io.ReadFull(io.NewSectionReader(fa, at, m), bufA[:m])
		kb, errB := io.ReadFull(io.NewSectionReader(fb, at, m), bufB[:m])
		k := min(ka, kb)
		for i := range k {
			if bufA[i] != bufB[i] {
				return at + int64(i), nil
			}
		}
		if errA != nil || errB != nil {
			return at + int64(k), nil
		}
		at += m
		pace.count(m)
		if interrupted(pace.stopper()) {
			return 0, ErrInterrupted
		}
	}
	return n, nil
}

// keepSegment links the destination's copy of cs, byte-identical to it,
// into the build and checks it as a copied segment is checked. It reports
// false, having undone the links, when the check would change its indexes
// (the source's are stale) or a link cannot be made: the segment is then
// copied, its indexes rebuilt as need be.
func (b *partitionBuild) keepSegment(cs copySegment, from string) (bool, error) {
	seg, dseg := segment{dir: b.tmp, base: cs.seg.base}, segment{dir: from, base: cs.seg.base}
	exts := []string{format.IndexExt, format.TimeIndexExt, format.LogExt}
	unlink := func() {
		for _, ext := range exts {
			_ = b.s.fs.Remove(seg.path(ext))
		}
	}
	for _, ext := range exts {
		// A filesystem without hard links gets the segment copied.
		if err := b.s.fs.Link(dseg.path(ext), seg.path(ext)); err != nil {
			unlink()
			return false, nil
		}
	}
	check := newSegmentCheck(cs.seg.path(format.LogExt), seg.base, cs.interval)
	if err := check.compareIndexes(seg); err != nil {
		unlink()
		return false, err
	}
	f, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		unlink()
		return false, err
	}
	// Synced once more (cheap when it is already), and closed, by the
	// build's syncer.
	files := []file{osFile{File: f}}
	_, err = readFullAt(f, make([]byte, 512<<10), 0, cs.log, check)
	// finish closes the index files the check opened, whatever happened.
	if ferr := check.finish(); err == nil {
		err = ferr
	}
	if err == nil && !check.indexesKept() {
		f.Close()
		unlink()
		return false, nil
	}
	if err != nil {
		f.Close()
		unlink()
		return false, err
	}
	return true, b.endSegment(seg, check, files)
}

// indexesKept reports whether the check left both index files as they are.
func (c *segmentCheck) indexesKept() bool {
	return c.idx.action() == IndexKept && c.tidx.action() == IndexKept
}
