package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// segment names one segment of a partition directory.
type segment struct {
	dir  string
	base uint64
	// stem is the files' name without the extension when it is not the
	// base offset's: a lone segment file named otherwise (OpenSegmentFile).
	stem string
}

func (s segment) path(ext string) string {
	if s.stem != "" {
		return filepath.Join(s.dir, s.stem+ext)
	}
	d := s.dir
	if d == "" || d == "." || d[len(d)-1] == '/' || filepath.Clean(d) != d {
		return filepath.Join(d, format.SegmentName(s.base, ext))
	}
	// What Join gives, built in one allocation: scans open several
	// files of every segment.
	var buf [32]byte
	name := format.AppendSegmentName(buf[:0], s.base, ext)
	var b strings.Builder
	b.Grow(len(d) + 1 + len(name))
	b.WriteString(d)
	b.WriteByte(filepath.Separator)
	b.Write(name)
	return b.String()
}

// listSegments returns the segments of a partition directory (those with a
// .log file) sorted by base offset, for a command that changes it: any
// segment file that is not a regular file, an index included, is an error
// naming it, as a change must not go through it. Anything else in it is
// ignored.
func listSegments(dir string) ([]segment, error) {
	segs, odd, err := readSegments(dir)
	if err == nil && len(odd) > 0 {
		err = odd[0]
	}
	return segs, err
}

// readSegments returns the segments of a partition directory for a
// reader, and the index files that are not regular files, which a reader
// goes on without (an index is a hint) and names.
func readSegments(dir string) ([]segment, []*NotRegularError, error) {
	return stableSegments(dir, func() ([]os.DirEntry, error) { return fsx.ListDir(dir) })
}

// stableSegments lists a partition directory's segments with read, again
// and again until two listings in a row agree. One listing is no snapshot:
// readdir goes in hash order, so of the segments a writer creates while
// the directory is read, one may be left out and a later one be in, and
// the missing one would pass for a gap whose records readers skip. Every
// segment the first listing could have missed was created before the
// second began, so the second has it: one below the first's last segment
// that the first lacks means the first was torn. Deletions tear a
// listing too, and no second one tells: it may lack segments after one it
// names that retention deleted meanwhile (it deletes oldest first). So a
// reader takes what a listing lacks after a segment for a gap only while
// that segment is still there (Iterator.checkGap, Follower.moveOn).
func stableSegments(dir string, read func() ([]os.DirEntry, error)) ([]segment, []*NotRegularError, error) {
	entries, err := read()
	if err != nil {
		return nil, nil, err
	}
	segs, odd, err := segmentsIn(dir, entries)
	for tries := 0; err == nil && len(segs) > 0 && tries < maxOpenTries; tries++ {
		if entries, err = read(); err != nil {
			return nil, nil, err
		}
		again, oddAgain, err := segmentsIn(dir, entries)
		if err != nil || !tornListing(segs, again) {
			return segs, odd, err
		}
		segs, odd = again, oddAgain
	}
	return segs, odd, err
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
// entries, sorted by base offset, and the index files among them that are
// not regular files. A segment's .log that is not a regular file (a
// symbolic link, a directory, a pipe...) is an error: skipped, its offsets
// would pass for a gap, and readers, copies and recover would go on
// without it, and append would use them again.
func segmentsIn(dir string, entries []os.DirEntry) ([]segment, []*NotRegularError, error) {
	var segs []segment
	var odd []*NotRegularError
	var badLog *NotRegularError
	for _, e := range entries {
		base, ext, err := format.ParseSegmentName(e.Name())
		if err != nil || e.Type().IsRegular() {
			if err == nil && ext == format.LogExt {
				segs = append(segs, segment{dir: dir, base: base})
			}
			continue
		}
		nr := fsx.NewNotRegularError(filepath.Join(dir, e.Name()), e.Type())
		if ext != format.LogExt {
			odd = append(odd, nr)
		} else if badLog == nil || nr.Path < badLog.Path {
			badLog = nr
		}
	}
	if badLog != nil {
		return nil, nil, badLog
	}
	// The listing is in the file system's order; names are compared as
	// os.ReadDir would sort them, so what is reported does not depend on it.
	slices.SortFunc(segs, func(a, b segment) int { return cmp.Compare(a.base, b.base) })
	slices.SortFunc(odd, func(a, b *NotRegularError) int { return strings.Compare(a.Path, b.Path) })
	return segs, odd, nil
}

// segfileSegment describes seg for a segfile scan of its .log, log (open),
// with its .index when idx is set. floor is where the segment before it
// ends; active says it is the partition's last.
func segfileSegment(seg segment, log segfile.File, idx *segfile.Index, floor uint64, active bool) segfile.Segment {
	return segfile.Segment{Path: seg.path(format.LogExt), Base: seg.base, Floor: floor, Active: active, Log: log, Index: idx}
}

// openSegfileSegment opens seg's .log and .index for a scan (see
// segfileSegment); close closes them.
func openSegfileSegment(seg segment, floor uint64, active bool) (sseg segfile.Segment, close func(), err error) {
	f, err := fsx.OpenReadFile(seg.path(format.LogExt))
	if err != nil {
		return segfile.Segment{}, nil, err
	}
	idx, closeIdx := openSegfileIndex(seg)
	return segfileSegment(seg, f, idx, floor, active), func() { closeIdx(); f.Close() }, nil
}

// openSegfileIndex opens seg's .index for a scan, nil when it has none
// (or it cannot be read, or is not a regular file: an index is a hint).
func openSegfileIndex(seg segment) (*segfile.Index, func()) {
	f, size, err := fsx.OpenIndex(seg.path(format.IndexExt))
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

// precedingEnd is segs[i]'s floor: the most the valid data of the
// segments before it reaches (0 for the first), below which its records
// overlap theirs. Each segment's end is found from its last confirmed
// index entry, its own floor applied, so a segment lying wholly inside an
// earlier one lowers nothing. A segment that cannot be read (deleted
// meanwhile by a sweep, unreadable) overlaps nothing: its failure is
// reported where it is read, not by every read of a later segment.
func precedingEnd(segs []segment, i int) (uint64, error) {
	return floorFrom(segs, 0, 0, i, nil)
}

// floorFrom is segs[i]'s floor, given that segs[j]'s is floor; keep, if
// set, is told each floor found on the way.
//
// Each end needs the segment's floor, which needs the ends before it: a
// chain. But a segment's floor is nearly always its own base offset (the
// segment before ends where it starts), so the ends of a batch of segments
// are found side by side on that guess, and only a segment whose floor
// turns out otherwise is walked again, with its floor.
func floorFrom(segs []segment, j int, floor uint64, i int, keep func(base, floor uint64)) (uint64, error) {
	var guesses [floorBatch]guessedEnd
	for j < i {
		batch := guesses[:min(i-j, floorBatch)]
		guessEnds(segs[j:j+len(batch)], floor, batch)
		for k := range batch {
			g := &batch[k]
			if g.floor != floor {
				g.end, g.err = segmentEnd(segs[j], floor, false, false)
			}
			var pathErr *fs.PathError
			if g.err != nil && !errors.As(g.err, &pathErr) {
				return 0, g.err
			}
			floor = max(floor, g.end.Next)
			if keep != nil {
				keep(segs[j+1].base, floor)
			}
			j++
		}
	}
	return floor, nil
}

// floorBatch is how many segment ends floorFrom finds side by side; it
// bounds what it holds at once.
const floorBatch = 64

// guessedEnd is a segment's end found on a guess of its floor.
type guessedEnd struct {
	floor uint64
	end   segfile.End
	err   error
}

// guessEnds fills in, for each of segs, its end on the guess that its
// floor is its base offset (the first's: floor, which is known), on as
// many goroutines as there are CPUs to run them.
func guessEnds(segs []segment, floor uint64, ends []guessedEnd) {
	guess := func(k int) {
		f := segs[k].base
		if k == 0 {
			f = floor
		}
		e, err := segmentEnd(segs[k], f, false, false)
		ends[k] = guessedEnd{floor: f, end: e, err: err}
	}
	workers := min(runtime.GOMAXPROCS(0), len(segs))
	if workers < 2 {
		for k := range segs {
			guess(k)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for k := int(next.Add(1) - 1); k < len(segs); k = int(next.Add(1) - 1) {
			guess(k)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// corruption is the reader's error for damage: corrupt data, or (where a
// caller insists on whole data) an incomplete tail.
func corruption(d *segfile.Damage) *CorruptionError {
	return &CorruptionError{Path: d.Path, Pos: d.Pos, Offset: int64(d.Offset), Reason: d.Reason, Damage: d}
}

// maxOpenTries bounds how often a segment a listing named may be found
// deleted before it could be opened. Each try lists anew; only retention
// deleting segment after segment faster than we list needs another.
const maxOpenTries = 1000

// emptyBelowFloor is the error for an active segment holding no record
// whose name is below floor, where the segments before it end: appending
// to it, or a copy of it, would take their offsets. Recover removes it.
func emptyBelowFloor(seg segment, end segfile.End, floor uint64, fix string) error {
	if end.Limit != 0 || seg.base >= floor {
		return nil
	}
	return fmt.Errorf("%s holds no record and is named after offset %d, below where the segments before it end (offset %d): %s",
		seg.path(format.LogExt), seg.base, floor, fix)
}
