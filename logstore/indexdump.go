package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// Index dumps (dump-index): a .index or .timeindex file read from start to
// end in constant memory, each entry handed to a callback and, on request,
// checked against the segment's .log (docs/format.md §4: indexes are hints, and this
// says how good a hint each entry is).

// IndexVerdict is what checking an index entry against the segment's
// records found, the same judgement verify-crc makes; VerdictKind names it
// in the vocabulary of finding kinds.
type IndexVerdict = segfile.Verdict

// The verdicts; see segfile.
const (
	VerdictUnverified     = segfile.VerdictUnverified
	VerdictOK             = segfile.VerdictOK
	VerdictBackwards      = segfile.VerdictBackwards
	VerdictPastEnd        = segfile.VerdictPastEnd
	VerdictWrongPosition  = segfile.VerdictWrongPosition
	VerdictWrongTimestamp = segfile.VerdictWrongTimestamp
	VerdictOutOfOrder     = segfile.VerdictOutOfOrder
	VerdictNoRecord       = segfile.VerdictNoRecord
	VerdictNoSuchOffset   = segfile.VerdictNoSuchOffset
	VerdictCorruptRecord  = segfile.VerdictCorruptRecord
	VerdictUnchecked      = segfile.VerdictUnchecked
)

// IndexVerdicts lists every verdict, in order.
func IndexVerdicts() []IndexVerdict { return segfile.Verdicts() }

// IndexEntryInfo is one index entry and, when verified, its verdict and
// what the .log holds instead.
type IndexEntryInfo = segfile.EntryVerdict

// IndexSummary describes an index file and, after a dump, counts its
// entries by verdict.
type IndexSummary struct {
	Path         string // the index file
	LogPath      string // the .log beside it
	Kind         IndexKind
	Base         uint64 // the segment's base offset (from the file name, else the log's first record)
	Entries      int64  // whole entries
	PartialBytes int64  // bytes of a partial last entry, ignored
	Verified     bool

	counts map[IndexVerdict]int64
}

// Count is the number of entries given verdict v.
func (s *IndexSummary) Count(v IndexVerdict) int64 { return s.counts[v] }

func (s *IndexSummary) countIf(f func(IndexVerdict) bool) int64 {
	var n int64
	for v, c := range s.counts {
		if f(v) {
			n += c
		}
	}
	return n
}

// Wrong is the number of wrong entries.
func (s *IndexSummary) Wrong() int64 { return s.countIf(IndexVerdict.Wrong) }

// Damaged is the number of entries not confirmed because of damage in
// the .log.
func (s *IndexSummary) Damaged() int64 { return s.countIf(IndexVerdict.Damaged) }

// Verdicts lists the verdicts given, in verdict order.
func (s *IndexSummary) Verdicts() []IndexVerdict {
	var vs []IndexVerdict
	for _, v := range IndexVerdicts() {
		if s.counts[v] > 0 {
			vs = append(vs, v)
		}
	}
	return vs
}

// dumpChunk is how much of the index file is read at a time: 4096
// entries, whatever the file's size.
const dumpChunk = 4096 * format.IndexEntryLen

// IndexDump is an index file open for dumping.
type IndexDump struct {
	sum    IndexSummary
	f      readFile
	size   int64 // the index file's size when opened: a writer may append meanwhile
	verify bool
	logF   readFile // the .log, when verifying
	ixF    readFile // the .index, when verifying a .timeindex (where valid data resumes)
	active bool     // the segment is its partition's last
	floor  uint64
}

// OpenIndexDump opens the .index or .timeindex file at path for a dump;
// with verify, also the .log beside it (and, for a .timeindex, the .index,
// which helps find where valid data resumes after damage). The segment is
// its directory's active one when it is the last there. Nothing is ever
// written.
func OpenIndexDump(path string, verify bool) (*IndexDump, error) {
	kind, ok := IndexKindOf(path)
	if !ok {
		return nil, fmt.Errorf("%s: not an index file (its name must end in %s or %s)", path, format.IndexExt, format.TimeIndexExt)
	}
	stem := strings.TrimSuffix(path, kind.Ext())
	seg := IndexSegment{Log: stem + format.LogExt, Index: stem + format.IndexExt, TimeIndex: stem + format.TimeIndexExt, Active: true}
	base, ext, nameErr := format.ParseSegmentName(filepath.Base(path))
	named := nameErr == nil && ext == kind.Ext()
	if named {
		seg.Base = base
		// The last segment of its directory is the active one, whose tail
		// may be incomplete rather than corrupt.
		if segs, _, err := readSegments(filepath.Dir(path)); err == nil && len(segs) > 0 {
			seg.Active = segs[len(segs)-1].base <= base
			if i, found := slices.BinarySearchFunc(segs, base, func(s segment, b uint64) int { return cmp.Compare(s.base, b) }); found {
				seg.part, seg.i = &Partition{dir: filepath.Dir(path), segs: segs}, i
			}
		}
	}
	// Named on the command line, the file is read through a link, as
	// files named there are.
	return seg.openDump(kind, verify, !named, func(name string) (readFile, int64, error) {
		f, err := fsx.OpenRead(name)
		if err != nil {
			return nil, 0, err
		}
		return fsx.AsRegular(f, name)
	})
}

// OpenDump opens the segment's index file of the given kind for a dump, as
// OpenIndexDump does, with what its partition's listing knows: its base
// offset and whether it is the active segment. An index file that is not
// a regular file is a *NotRegularError.
func (s IndexSegment) OpenDump(kind IndexKind, verify bool) (*IndexDump, error) {
	return s.openDump(kind, verify, false, func(name string) (readFile, int64, error) {
		return fsx.OpenIndex(name)
	})
}

// openDump opens the segment's index of the kind with open; baseFromLog
// takes the base offset from the .log's first record.
func (s IndexSegment) openDump(kind IndexKind, verify, baseFromLog bool, open func(string) (readFile, int64, error)) (*IndexDump, error) {
	path := s.Index
	if kind == TimeIndex {
		path = s.TimeIndex
	}
	d := &IndexDump{verify: verify, active: s.Active, sum: IndexSummary{Path: path, LogPath: s.Log, Kind: kind, Base: s.Base,
		Verified: verify, counts: map[IndexVerdict]int64{}}}
	f, size, err := open(path)
	if err != nil {
		return nil, err
	}
	d.f, d.size = f, size
	d.sum.Entries, d.sum.PartialBytes = d.size/format.IndexEntryLen, d.size%format.IndexEntryLen
	if !verify {
		return d, nil
	}
	lf, err := fsx.OpenRead(d.sum.LogPath)
	if err != nil {
		d.Close()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("cannot verify %s: no .log beside it (%s): %w", path, d.sum.LogPath, err)
		}
		return nil, err
	}
	d.logF = osFile{File: lf}
	if baseFromLog {
		// A file not named after its base offset: the log's first record
		// says it.
		if off, ok, err := segfile.FirstOffset(d.logF); err != nil {
			d.Close()
			return nil, err
		} else if ok {
			d.sum.Base = off
		}
	}
	if kind == TimeIndex {
		if xf, _, err := fsx.OpenIndex(s.Index); err == nil {
			d.ixF = xf
		}
	}
	if d.floor, err = s.floor(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Summary describes the file; after Run, with the entries' verdicts.
func (d *IndexDump) Summary() IndexSummary { return d.sum }

// Close closes the files.
func (d *IndexDump) Close() error {
	var err error
	for _, f := range []readFile{d.f, d.logF, d.ixF} {
		if f != nil {
			err = errors.Join(err, f.Close())
		}
	}
	d.f, d.logF, d.ixF = nil, nil, nil
	return err
}

// Run hands each entry, in file order, to each (its error stops the dump
// and is returned as is) and returns the summary. Verifying, the
// segment's records are walked once, from the first byte, and each entry
// judged as the walk passes it (segfile.IndexCheck, as verify-crc does).
// Memory stays constant whatever the file's size.
func (d *IndexDump) Run(each func(IndexEntryInfo) error) (IndexSummary, error) {
	var eachErr error
	emit := func(e IndexEntryInfo) error {
		d.sum.counts[e.Verdict]++
		if err := each(e); err != nil {
			eachErr = err
			return err
		}
		return nil
	}
	if !d.verify {
		return d.sum, d.dumpEntries(emit)
	}
	kind := segfile.OffsetIndex
	if d.sum.Kind == TimeIndex {
		kind = segfile.TimeIndex
	}
	seg := segfile.Segment{Path: d.sum.LogPath, Base: d.sum.Base, Floor: d.floor, Active: d.active, Log: d.logF}
	if d.sum.Kind == OffsetIndex {
		seg.Index = segfile.NewIndex(d.f, d.size)
	} else if d.ixF != nil {
		if fi, err := d.ixF.Stat(); err == nil {
			seg.Index = segfile.NewIndex(d.ixF, fi.Size())
		}
	}
	_, err := segfile.CheckIndex(seg, kind, d.f, d.size, emit)
	if eachErr != nil {
		return d.sum, eachErr
	}
	if err != nil {
		return d.sum, fmt.Errorf("verify %s against %s: %w", d.sum.Path, d.sum.LogPath, err)
	}
	return d.sum, nil
}

// dumpEntries hands each entry to emit unchecked. A file that shrank
// since it was opened (a recover rebuilt it) was dumped up to where it
// ends now.
func (d *IndexDump) dumpEntries(emit func(IndexEntryInfo) error) error {
	n, err := segfile.ReadEntries(d.f, d.size, 0, func(i int64, e format.IndexEntry) error {
		return emit(IndexEntryInfo{Entry: i, Offset: e.Offset, Value: e.Pos, RecordPos: -1})
	})
	if err == nil && n < d.sum.Entries {
		d.sum.Entries, d.sum.PartialBytes = n, 0
	}
	return err
}

// IndexSegment is one segment of a partition and its index files' paths
// (which may be missing).
type IndexSegment struct {
	Base                  uint64
	Log, Index, TimeIndex string
	Active                bool // the partition's last segment

	// Its place among its partition's segments, when known: where the
	// segments before it end.
	part *Partition
	i    int
}

// floor is where the segment before ends, below which the segment's
// records overlap it.
func (s IndexSegment) floor() (uint64, error) {
	if s.part == nil {
		return 0, nil
	}
	return s.part.floorOf(s.i)
}

// IndexSegments lists the segments of a partition directory (those with a
// .log), sorted by base offset.
func IndexSegments(dir string) ([]IndexSegment, error) {
	p, err := OpenPartitionDir(dir, dir)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.IndexSegments(), nil
}

// IndexSegments lists the partition's segments and their index files.
func (p *Partition) IndexSegments() []IndexSegment {
	out := make([]IndexSegment, len(p.segs))
	for i, s := range p.segs {
		out[i] = IndexSegment{Base: s.base, Log: s.path(format.LogExt), Index: s.path(format.IndexExt), TimeIndex: s.path(format.TimeIndexExt),
			Active: i == len(p.segs)-1}
		out[i].part, out[i].i = p, i
	}
	return out
}
