package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// segment names one segment of a partition directory.
type segment struct {
	dir  string
	base uint64
}

func (s segment) path(ext string) string {
	return filepath.Join(s.dir, format.SegmentName(s.base, ext))
}

// listSegments returns the segments of a partition directory (those with a
// .log file) sorted by base offset. Anything else in it is ignored.
func listSegments(dir string) ([]segment, error) {
	return stableSegments(dir, func() ([]os.DirEntry, error) { return os.ReadDir(dir) })
}

// stableSegments lists a partition directory's segments with read, again
// and again until two listings in a row agree. One listing is no snapshot:
// readdir goes in hash order, so of the segments a writer creates while
// the directory is read, one may be left out and a later one be in, and
// the missing one would pass for a gap whose records readers skip. Every
// segment the first listing could have missed was created before the
// second began, so the second has it: one below the first's last segment
// that the first lacks means the first was torn.
func stableSegments(dir string, read func() ([]os.DirEntry, error)) ([]segment, error) {
	entries, err := read()
	if err != nil {
		return nil, err
	}
	segs, err := segmentsIn(dir, entries)
	for tries := 0; err == nil && len(segs) > 0 && tries < maxOpenTries; tries++ {
		if entries, err = read(); err != nil {
			return nil, err
		}
		again, err := segmentsIn(dir, entries)
		if err != nil || !tornListing(segs, again) {
			return segs, err
		}
		segs = again
	}
	return segs, err
}

// tornListing reports whether later holds a segment below first's last
// one that first lacks.
func tornListing(first, later []segment) bool {
	last, i := first[len(first)-1].base, 0
	for _, s := range later {
		if s.base >= last {
			return false
		}
		for i < len(first) && first[i].base < s.base {
			i++
		}
		if first[i].base != s.base {
			return true
		}
	}
	return false
}

// segmentsIn picks the segments of partition directory dir out of its
// entries, sorted by base offset. A segment's .log that is a directory (or
// a pipe, socket or device) is an error: skipped, its offsets would pass
// for a gap, and readers, copies and recover would go on without it.
// Symbolic links are left to nofollow.go's rules.
func segmentsIn(dir string, entries []os.DirEntry) ([]segment, error) {
	var segs []segment
	for _, e := range entries {
		base, ext, err := format.ParseSegmentName(e.Name())
		if err != nil || ext != format.LogExt || e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("segment %s is not a regular file (%s)", filepath.Join(dir, e.Name()), fileKind(e.Type()))
		}
		segs = append(segs, segment{dir: dir, base: base})
	}
	// ReadDir sorts by name, and 20-digit names sort as their numbers do.
	slices.SortFunc(segs, func(a, b segment) int {
		switch {
		case a.base < b.base:
			return -1
		case a.base > b.base:
			return 1
		}
		return 0
	})
	return segs, nil
}

// fileKind names a file type for messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}

// segfileSegment describes seg for a segfile scan of its .log, log (open),
// with its .index when idx is set. floor is where the segment before it
// ends; active says it is the partition's last.
func segfileSegment(seg segment, log file, idx *segfile.Index, floor uint64, active bool) segfile.Segment {
	return segfile.Segment{Path: seg.path(format.LogExt), Base: seg.base, Floor: floor, Active: active, Log: log, Index: idx}
}

// openSegfileSegment opens seg's .log and .index for a scan (see
// segfileSegment); close closes them.
func openSegfileSegment(seg segment, floor uint64, active bool) (sseg segfile.Segment, close func(), err error) {
	f, err := openRead(seg.path(format.LogExt))
	if err != nil {
		return segfile.Segment{}, nil, err
	}
	idx, closeIdx := openSegfileIndex(seg)
	return segfileSegment(seg, osFile{f}, idx, floor, active), func() { closeIdx(); f.Close() }, nil
}

// openSegfileIndex opens seg's .index for a scan, nil when it has none
// (or it cannot be read: an index is a hint).
func openSegfileIndex(seg segment) (*segfile.Index, func()) {
	f, size, err := openReadStat(seg.path(format.IndexExt))
	if err != nil {
		return nil, func() {}
	}
	return segfile.NewIndex(f, size), func() { f.Close() }
}

// segmentEnd walks seg to the end of its data (segfile.FindEnd): from its
// last confirmed index entry, or with fromStart from its first byte.
func segmentEnd(seg segment, floor uint64, active, fromStart bool) (segfile.End, error) {
	sseg, closeSeg, err := openSegfileSegment(seg, floor, active)
	if err != nil {
		return segfile.End{}, err
	}
	defer closeSeg()
	return findEnd(sseg, fromStart)
}

// findEnd is segfile.FindEnd, its error naming the segment.
func findEnd(sseg segfile.Segment, fromStart bool) (segfile.End, error) {
	end, err := segfile.FindEnd(sseg, fromStart)
	if err != nil {
		return end, fmt.Errorf("scan %s: %w", sseg.Path, err)
	}
	return end, nil
}

// firstValid is the header of the segment's first valid record before
// limit (a negative limit: the .log's size), scanned from its first byte;
// ok is false when it holds none.
func firstValid(sseg segfile.Segment, limit int64) (h format.Header, ok bool, err error) {
	sc, err := segfile.NewScanner(sseg, limit, segfile.Options{})
	if err != nil {
		return h, false, err
	}
	defer sc.Close()
	for {
		if sc.Next() {
			return *sc.Header(), true, nil
		}
		if sc.Err() != nil || !sc.Resume() {
			return h, false, sc.Err()
		}
	}
}

// precedingEnd is where the valid data of segs[i-1] ends, found from its
// last confirmed index entry (0 for the first segment): the floor of
// segs[i], whose records below it overlap the segment before. A view that
// does not walk every segment from the first takes it for the floor;
// segments before segs[i-1] are not looked at. A segment deleted meanwhile
// (by a sweep) overlaps nothing.
func precedingEnd(segs []segment, i int) (uint64, error) {
	if i == 0 {
		return 0, nil
	}
	end, err := segmentEnd(segs[i-1], 0, false, false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	return end.Next, err
}

// corruption is the reader's error for damage: corrupt data, or (where a
// caller insists on whole data) an incomplete tail.
func corruption(d *segfile.Damage) *CorruptionError {
	return &CorruptionError{Path: d.Path, Pos: d.Pos, Offset: int64(d.Offset), Reason: d.Reason, Damage: d}
}
