package logstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seglog/seglog/format"
)

// Index dumps (dump-index): a .index or .timeindex file read from start to
// end in constant memory, each entry handed to a callback and, on request,
// checked against the segment's .log (SPEC §3: indexes are hints, and this
// says how good a hint each entry is).

// IndexKind tells the two index files apart.
type IndexKind int

const (
	OffsetIndex IndexKind = iota // .index: offset -> byte position in the .log
	TimeIndex                    // .timeindex: offset -> that record's timestamp
)

// Ext is the file extension of the kind, ".index" or ".timeindex".
func (k IndexKind) Ext() string {
	if k == TimeIndex {
		return format.TimeIndexExt
	}
	return format.IndexExt
}

func (k IndexKind) String() string { return strings.TrimPrefix(k.Ext(), ".") }

// IndexKindOf tells the kind of an index file from its name.
func IndexKindOf(path string) (IndexKind, bool) {
	switch {
	case strings.HasSuffix(path, format.TimeIndexExt):
		return TimeIndex, true
	case strings.HasSuffix(path, format.IndexExt):
		return OffsetIndex, true
	}
	return 0, false
}

// IndexVerdict is what checking an index entry against the .log found.
type IndexVerdict int

const (
	// VerdictUnverified: the entry was not checked (no verify asked).
	VerdictUnverified IndexVerdict = iota
	// VerdictOK: the record with that offset starts at that position
	// (.index), or has that timestamp (.timeindex).
	VerdictOK
	// VerdictBackwards (a warning): a .timeindex entry that checks out but
	// is earlier than the entry before that checked out. Foreign writers
	// stamp the wall clock, which can step back.
	VerdictBackwards
	// VerdictPastEnd (a note): the entry points past the end of the
	// .log's data: a position at or after its end or at a record cut off
	// by it, or an offset after its last whole record. Stale after a power
	// loss (index pages reached the disk, log pages did not).
	VerdictPastEnd
	// VerdictWrongPosition: a valid record starts at the position, with
	// another offset (FoundOffset).
	VerdictWrongPosition
	// VerdictWrongTimestamp: the record with that offset has another
	// timestamp (FoundTimestamp).
	VerdictWrongTimestamp
	// VerdictOutOfOrder: the offset is not above that of the last entry
	// that checked out (Prev).
	VerdictOutOfOrder
	// VerdictNoRecord: the position is inside the log, but no record with
	// that offset starts there (Reason says what the bytes fail).
	VerdictNoRecord
	// VerdictNoSuchOffset: a .timeindex entry's offset is below the
	// segment's base offset (Prev), so no record of the segment has it.
	VerdictNoSuchOffset
	// VerdictCorruptRecord: the record the entry points at, with that
	// offset, fails its check (Reason): the entry may be right, the .log
	// is damaged there.
	VerdictCorruptRecord
	// VerdictUnchecked: the record the entry names lies in a damaged part
	// of the .log that starts at byte RecordPos (Reason), so it could not
	// be found.
	VerdictUnchecked

	numVerdicts
)

var verdictNames = [numVerdicts]struct{ text, code string }{
	VerdictUnverified:     {"not verified", "unverified"},
	VerdictOK:             {"ok", "ok"},
	VerdictBackwards:      {"timestamp goes backwards", "timestamp_backwards"},
	VerdictPastEnd:        {"past the log's end", "past_end"},
	VerdictWrongPosition:  {"wrong position", "wrong_position"},
	VerdictWrongTimestamp: {"wrong timestamp", "wrong_timestamp"},
	VerdictOutOfOrder:     {"out of order", "out_of_order"},
	VerdictNoRecord:       {"no record starts here", "no_record"},
	VerdictNoSuchOffset:   {"no such offset in this segment", "no_such_offset"},
	VerdictCorruptRecord:  {"corrupt record", "corrupt_record"},
	VerdictUnchecked:      {"not checked: damaged log", "unchecked"},
}

// IndexVerdicts lists every verdict, in order.
func IndexVerdicts() []IndexVerdict {
	vs := make([]IndexVerdict, numVerdicts)
	for i := range vs {
		vs[i] = IndexVerdict(i)
	}
	return vs
}

func (v IndexVerdict) String() string {
	if v < 0 || v >= numVerdicts {
		return fmt.Sprintf("verdict(%d)", int(v))
	}
	return verdictNames[v].text
}

// Code is the verdict as a short identifier, for JSON.
func (v IndexVerdict) Code() string {
	if v < 0 || v >= numVerdicts {
		return fmt.Sprintf("verdict_%d", int(v))
	}
	return verdictNames[v].code
}

// Wrong reports whether the verdict says the entry itself is wrong: the
// problems CLI.md's exit status 3 is for.
func (v IndexVerdict) Wrong() bool {
	switch v {
	case VerdictWrongPosition, VerdictWrongTimestamp, VerdictOutOfOrder, VerdictNoRecord, VerdictNoSuchOffset:
		return true
	}
	return false
}

// Damaged reports whether the verdict is about damage in the .log, which
// kept the entry from being confirmed: also a problem (exit 3), for
// verify-crc to explain.
func (v IndexVerdict) Damaged() bool { return v == VerdictCorruptRecord || v == VerdictUnchecked }

// Note reports whether the verdict is a note: nothing wrong with the
// data, an index entry recover would drop.
func (v IndexVerdict) Note() bool { return v == VerdictPastEnd }

// Warning reports whether the verdict is a warning.
func (v IndexVerdict) Warning() bool { return v == VerdictBackwards }

// IndexEntryInfo is one index entry and, when verified, its verdict and
// what the .log holds instead.
type IndexEntryInfo struct {
	Entry  int64  // number of the entry in the file, from 0
	Offset uint64 // as stored
	Value  int64  // byte position (.index) or timestamp (.timeindex), as stored

	Verdict IndexVerdict
	// RecordPos is the byte position of the record the entry was checked
	// against (.timeindex: the record with that offset), or with
	// VerdictUnchecked of the damage; -1 when there is none.
	RecordPos int64
	// FoundOffset is, with VerdictWrongPosition, the offset of the record
	// at the entry's position; with VerdictUnchecked, the first offset the
	// damage makes unreadable.
	FoundOffset uint64
	// FoundTimestamp is the record's own timestamp (VerdictWrongTimestamp)
	// or the earlier entry's (VerdictBackwards).
	FoundTimestamp int64
	// Prev is the offset of the last entry that checked out
	// (VerdictOutOfOrder), or the segment's base offset
	// (VerdictNoSuchOffset).
	Prev uint64
	// Reason is what the bytes there fail (a format.Err* sentinel), with
	// VerdictNoRecord, VerdictCorruptRecord, VerdictUnchecked and, when a
	// record is cut off by the log's end, VerdictPastEnd.
	Reason error
}

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

	counts [numVerdicts]int64
}

// Count is the number of entries given verdict v.
func (s *IndexSummary) Count(v IndexVerdict) int64 {
	if v < 0 || v >= numVerdicts {
		return 0
	}
	return s.counts[v]
}

func (s *IndexSummary) countIf(f func(IndexVerdict) bool) int64 {
	var n int64
	for v := IndexVerdict(0); v < numVerdicts; v++ {
		if f(v) {
			n += s.counts[v]
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
	for v := IndexVerdict(0); v < numVerdicts; v++ {
		if s.counts[v] > 0 {
			vs = append(vs, v)
		}
	}
	return vs
}

// idumpChunk is how much of the index file is read at a time: 4096
// entries, whatever the file's size.
const idumpChunk = 4096 * format.IndexEntryLen

// IndexDump is an index file open for dumping.
type IndexDump struct {
	sum    IndexSummary
	f      file
	size   int64 // the index file's size when opened: a writer may append meanwhile
	verify bool
	lr     *logReader // the .log, when verifying
	logF   file
	seg    segment      // where the .index of the segment is, to find valid records after damage
	walk   *idumpWalker // .timeindex: finds records by offset
}

// OpenIndexDump opens the .index or .timeindex file at path for a dump;
// with verify, also the .log beside it (and, for a .timeindex, the .index,
// used to find records when it checks out). Nothing is ever written.
func OpenIndexDump(path string, verify bool) (*IndexDump, error) {
	kind, ok := IndexKindOf(path)
	if !ok {
		return nil, fmt.Errorf("%s: not an index file (its name must end in %s or %s)", path, format.IndexExt, format.TimeIndexExt)
	}
	d := &IndexDump{verify: verify}
	d.sum = IndexSummary{Path: path, LogPath: strings.TrimSuffix(path, kind.Ext()) + format.LogExt, Kind: kind, Verified: verify}
	f, err := openRead(path)
	if err != nil {
		return nil, err
	}
	d.f = osFile{f}
	fi, err := f.Stat()
	if err != nil {
		d.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		d.Close()
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	d.size = fi.Size()
	d.sum.Entries, d.sum.PartialBytes = d.size/format.IndexEntryLen, d.size%format.IndexEntryLen
	base, ext, nameErr := format.ParseSegmentName(filepath.Base(path))
	if nameErr == nil && ext == kind.Ext() {
		d.sum.Base = base
	}
	if !verify {
		return d, nil
	}
	lf, err := openRead(d.sum.LogPath)
	if err != nil {
		d.Close()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("cannot verify %s: no .log beside it (%s): %w", path, d.sum.LogPath, err)
		}
		return nil, err
	}
	d.logF = osFile{lf}
	d.lr = newLogReader(d.logF)
	if _, err := d.lr.statSize(); err != nil {
		d.Close()
		return nil, err
	}
	if nameErr != nil {
		// A file not named after its base offset: the log's first record
		// says it.
		if h, err := d.lr.header(0); err == nil || errors.Is(err, format.ErrKeyLen) {
			d.sum.Base = h.Offset
		}
	}
	d.seg = segment{dir: filepath.Dir(path), base: d.sum.Base}
	if kind == TimeIndex {
		d.walk = &idumpWalker{lr: d.lr, seg: d.seg, idumpWalk: idumpWalk{noff: d.sum.Base}}
		if xf, err := openRead(strings.TrimSuffix(path, kind.Ext()) + format.IndexExt); err == nil {
			d.walk.ix = &idumpEntries{f: osFile{xf}}
			if fi, err := xf.Stat(); err == nil {
				d.walk.ix.n = fi.Size() / format.IndexEntryLen
			}
		}
	}
	return d, nil
}

// Summary describes the file; after Run, with the entries' verdicts.
func (d *IndexDump) Summary() IndexSummary { return d.sum }

// Close closes the files.
func (d *IndexDump) Close() error {
	var err error
	for _, f := range []file{d.f, d.logF} {
		if f != nil {
			err = errors.Join(err, f.Close())
		}
	}
	if d.walk != nil && d.walk.ix != nil {
		err = errors.Join(err, d.walk.ix.f.Close())
		d.walk.ix = nil
	}
	d.f, d.logF = nil, nil
	return err
}

// Run hands each entry, in file order, to each (its error stops the dump
// and is returned as is) and returns the summary. Memory stays constant
// whatever the file's size: the index is read a chunk at a time, and the
// .log through one buffer.
func (d *IndexDump) Run(each func(IndexEntryInfo) error) (IndexSummary, error) {
	entries := idumpEntries{f: d.f, n: d.sum.Entries}
	var c idumpChecker
	c.d = d
	for i := int64(0); i < entries.n; i++ {
		o, v, err := entries.at(i)
		if errors.Is(err, format.ErrShort) {
			// The file shrank since it was opened (a recover rebuilt it):
			// what is left was dumped.
			d.sum.Entries, d.sum.PartialBytes = i, 0
			break
		}
		if err != nil {
			return d.sum, fmt.Errorf("read %s: %w", d.sum.Path, err)
		}
		e := IndexEntryInfo{Entry: i, Offset: o, Value: v, RecordPos: -1}
		if d.verify {
			if err := c.check(&e); err != nil {
				return d.sum, fmt.Errorf("verify %s against %s: %w", d.sum.Path, d.sum.LogPath, err)
			}
		}
		d.sum.counts[e.Verdict]++
		if err := each(e); err != nil {
			return d.sum, err
		}
	}
	return d.sum, nil
}

// DumpIndex opens the index file at path, runs each over its entries (see
// IndexDump.Run) and closes it.
func DumpIndex(path string, verify bool, each func(IndexEntryInfo) error) (IndexSummary, error) {
	d, err := OpenIndexDump(path, verify)
	if err != nil {
		return IndexSummary{}, err
	}
	sum, err := d.Run(each)
	if cerr := d.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return sum, err
}

// IndexSegment is one segment of a partition directory and its index
// files' paths (which may be missing).
type IndexSegment struct {
	Base                  uint64
	Log, Index, TimeIndex string
}

// IndexSegments lists the segments of a partition directory (those with a
// .log), sorted by base offset.
func IndexSegments(dir string) ([]IndexSegment, error) {
	segs, err := listSegments(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", dir, ErrPartitionNotFound)
		}
		return nil, err
	}
	out := make([]IndexSegment, len(segs))
	for i, s := range segs {
		out[i] = IndexSegment{Base: s.base, Log: s.path(format.LogExt), Index: s.path(format.IndexExt), TimeIndex: s.path(format.TimeIndexExt)}
	}
	return out, nil
}

// idumpEntries reads an index file's entries in order, a chunk at a time,
// with positional reads.
type idumpEntries struct {
	f      file
	n      int64 // whole entries when opened
	buf    []byte
	bufPos int64 // file position of buf[0]
}

// at returns entry i; reading in order, one read per chunk.
func (x *idumpEntries) at(i int64) (uint64, int64, error) {
	pos := i * format.IndexEntryLen
	if pos < x.bufPos || pos+format.IndexEntryLen > x.bufPos+int64(len(x.buf)) {
		want := min(idumpChunk, (x.n-i)*format.IndexEntryLen)
		if want < format.IndexEntryLen {
			return 0, 0, format.ErrShort
		}
		if x.buf == nil {
			x.buf = make([]byte, 0, idumpChunk)
		}
		x.buf = x.buf[:want]
		m, err := x.f.ReadAt(x.buf, pos)
		x.buf, x.bufPos = x.buf[:m-m%format.IndexEntryLen], pos
		if len(x.buf) == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				err = format.ErrShort
			}
			return 0, 0, err
		}
	}
	e, err := format.ParseIndexEntry(x.buf[pos-x.bufPos:])
	return e.Offset, e.Pos, err
}

// idumpChecker holds what checking one entry needs of the entries before.
type idumpChecker struct {
	d       *IndexDump
	good    bool   // an entry checked out
	lastOff uint64 // its offset
	lastTS  int64  // its timestamp (.timeindex)

	afterKnown bool // validAfter's last answer
	afterPos   int64
	after      bool
}

func (c *idumpChecker) check(e *IndexEntryInfo) error {
	var err error
	if c.d.sum.Kind == TimeIndex {
		err = c.checkTime(e)
	} else {
		err = c.checkPos(e)
	}
	if err != nil {
		return err
	}
	if e.Verdict == VerdictOK || e.Verdict == VerdictBackwards || e.Verdict == VerdictWrongTimestamp {
		c.good, c.lastOff = true, e.Offset
	}
	return nil
}

// checkPos checks a .index entry by reading the record at its position.
func (c *idumpChecker) checkPos(e *IndexEntryInfo) error {
	lr, pos := c.d.lr, e.Value
	if in, err := idumpInLog(lr, pos); err != nil || !in {
		e.Verdict = VerdictPastEnd
		return err
	}
	e.RecordPos = pos
	h, err := lr.check(pos)
	switch {
	case err == nil && h.Offset == e.Offset:
		if c.good && e.Offset <= c.lastOff {
			e.Verdict, e.Prev = VerdictOutOfOrder, c.lastOff
		} else {
			e.Verdict = VerdictOK
		}
	case err == nil:
		e.Verdict, e.FoundOffset = VerdictWrongPosition, h.Offset
	case isIOError(err):
		return err
	case errors.Is(err, format.ErrShort):
		// The record, or its header, runs past the log's end: stale if it
		// claims that offset (or too little is left to tell), unless a
		// valid record follows, which makes it a corrupt size field.
		claimed, known, err := idumpOffsetAt(lr, pos)
		if err != nil {
			return err
		}
		e.Reason = format.ErrShort
		switch {
		case known && claimed != e.Offset:
			e.Verdict = VerdictNoRecord
		case pos+format.HeaderLen > lr.size:
			e.Verdict = VerdictPastEnd
		default:
			later, err := c.validAfter(pos, e.Offset)
			if err != nil {
				return err
			}
			e.Verdict = VerdictPastEnd
			if later {
				e.Verdict = VerdictCorruptRecord
			}
		}
	default:
		e.Reason = err
		if h.Offset == e.Offset {
			e.Verdict = VerdictCorruptRecord
		} else {
			e.Verdict = VerdictNoRecord
		}
	}
	return nil
}

// validAfter reports whether a valid record follows the one with offset
// off at pos (SPEC §2: then that one is corrupt, not cut off by the end).
// The answer for the last pos is kept: entries repeating it cost nothing.
func (c *idumpChecker) validAfter(pos int64, off uint64) (bool, error) {
	if c.afterKnown && c.afterPos == pos {
		return c.after, nil
	}
	_, _, ok, err := validRecordAfter(c.d.seg, c.d.lr, pos, off+1, c.d.lr.size)
	if err != nil {
		return false, err
	}
	c.afterKnown, c.afterPos, c.after = true, pos, ok
	return ok, nil
}

// idumpInLog reports whether pos is a position inside the log, asking its
// size again before saying no (a writer may have appended). A position
// read as negative is a u64 past 2^63, far past any end.
func idumpInLog(lr *logReader, pos int64) (bool, error) {
	if pos < 0 {
		return false, nil
	}
	if pos < lr.size {
		return true, nil
	}
	size, err := lr.statSize()
	return pos < size, err
}

// idumpOffsetAt reads the offset field of a header at pos, when the file
// holds its 8 bytes.
func idumpOffsetAt(lr *logReader, pos int64) (uint64, bool, error) {
	b, err := lr.window(pos, 8)
	if errors.Is(err, format.ErrShort) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	var o uint64
	for _, x := range b {
		o = o<<8 | uint64(x)
	}
	return o, true, nil
}

// checkTime checks a .timeindex entry: finds the record with its offset
// (walking the log forward in step with the entries) and compares
// timestamps.
func (c *idumpChecker) checkTime(e *IndexEntryInfo) error {
	if c.good && e.Offset <= c.lastOff {
		// The walk only goes forward: going back for it could make a
		// shuffled file cost a scan per entry.
		e.Verdict, e.Prev = VerdictOutOfOrder, c.lastOff
		return nil
	}
	r, err := c.d.walk.locate(e.Offset)
	if err != nil {
		return err
	}
	switch r.status {
	case idumpBelow:
		e.Verdict, e.Prev = VerdictNoSuchOffset, c.d.sum.Base
	case idumpPastEnd:
		e.Verdict = VerdictPastEnd
	case idumpDamaged:
		e.Verdict, e.RecordPos, e.FoundOffset, e.Reason = VerdictUnchecked, r.gap.pos, r.gap.off, r.gap.reason
		if r.gap.off == e.Offset {
			e.Verdict = VerdictCorruptRecord
		}
	case idumpFound:
		e.RecordPos = r.pos
		switch {
		case r.ts != e.Value:
			e.Verdict, e.FoundTimestamp = VerdictWrongTimestamp, r.ts
		case c.good && r.ts < c.lastTS:
			e.Verdict, e.FoundTimestamp = VerdictBackwards, c.lastTS
		default:
			e.Verdict = VerdictOK
		}
		// Going backwards is a fact about the records, whatever the
		// entries claim.
		c.lastTS = r.ts
	}
	return nil
}

// idumpGap is where walking a .log stops: its end (end), or damage (a
// record that does not check out) with, when a valid record follows it,
// where walking can resume.
type idumpGap struct {
	pos       int64  // where the record that fails was expected
	off       uint64 // the offset expected there
	end       bool   // nothing valid follows: the log's valid data ends here
	reason    error
	resumePos int64 // the first valid record after the damage
	resumeOff uint64
}

type idumpStatus int

const (
	idumpFound   idumpStatus = iota
	idumpBelow               // the offset is below the segment's base
	idumpPastEnd             // after the log's last valid record
	idumpDamaged             // inside damage (gap)
)

type idumpLocated struct {
	status idumpStatus
	pos    int64 // idumpFound: the record's position and timestamp
	ts     int64
	gap    idumpGap // idumpDamaged
}

// idumpWalk is the walker's place: the last record found and where the
// next one must start.
type idumpWalk struct {
	cur  bool // a record was found
	cpos int64
	coff uint64
	cts  int64
	npos int64 // where the next record must start, with offset noff
	noff uint64
}

// idumpWalker finds records of a segment by offset, for offsets asked in
// increasing order, in O(size of the log) over all of them: it jumps ahead
// by the segment's .index where an entry checks out, and otherwise walks
// forward from the last record it found. What it learns of the log's end
// and its damage is remembered, so no part of the log is walked twice
// looking for an offset that is not there.
type idumpWalker struct {
	lr  *logReader
	seg segment
	idumpWalk
	ix      *idumpEntries // the .index, read in step; nil without one
	ixNext  int64         // next .index entry to consider
	ixTried int64         // the last entry checked against the log, +1 (0: none)
	ixGood  bool          // whether it checked out, as ixWalk
	ixWalk  idumpWalk
	gaps    []idumpGap // known, sorted by offset
}

// locate finds the record with offset o, o greater than any found before.
func (w *idumpWalker) locate(o uint64) (idumpLocated, error) {
	if !w.cur && o < w.noff {
		return idumpLocated{status: idumpBelow}, nil
	}
	saved := w.idumpWalk
	r, err := w.locateFrom(o)
	if err != nil || r.status != idumpFound {
		// Later offsets may lie before what was walked looking for this one.
		w.idumpWalk = saved
	}
	return r, err
}

func (w *idumpWalker) locateFrom(o uint64) (idumpLocated, error) {
	if err := w.jump(o); err != nil {
		return idumpLocated{}, err
	}
	for {
		if w.cur && w.coff == o {
			return idumpLocated{status: idumpFound, pos: w.cpos, ts: w.cts}, nil
		}
		// A known gap between the walker and o?
		if g, ok := w.gapBefore(o); ok {
			switch {
			case g.end:
				return idumpLocated{status: idumpPastEnd}, nil
			case o < g.resumeOff:
				return idumpLocated{status: idumpDamaged, gap: g}, nil
			}
			h, err := w.lr.check(g.resumePos)
			if err != nil || h.Offset != g.resumeOff {
				if err != nil && isIOError(err) {
					return idumpLocated{}, err
				}
				// The file changed under us: give up on what follows.
				return idumpLocated{status: idumpDamaged, gap: g}, nil
			}
			w.idumpWalk = idumpWalk{cur: true, cpos: g.resumePos, coff: h.Offset, cts: h.Timestamp,
				npos: g.resumePos + h.RecordLen(), noff: h.Offset + 1}
			continue
		}
		// Walk forward, up to o or the next known gap.
		stopAt := uint64(0)
		if i, _ := w.gapIndex(w.noff); i < len(w.gaps) {
			stopAt = w.gaps[i].off
		}
		for !(w.cur && w.coff == o) && (stopAt == 0 || w.noff < stopAt) {
			h, err := w.lr.check(w.npos)
			if err == nil && h.Offset != w.noff {
				err = format.ErrOffset
			}
			if err != nil {
				if isIOError(err) {
					return idumpLocated{}, err
				}
				if err := w.learnGap(h, err); err != nil {
					return idumpLocated{}, err
				}
				break
			}
			w.idumpWalk = idumpWalk{cur: true, cpos: w.npos, coff: w.noff, cts: h.Timestamp,
				npos: w.npos + h.RecordLen(), noff: w.noff + 1}
		}
	}
}

// gapIndex is the index of the first known gap with offset >= off.
func (w *idumpWalker) gapIndex(off uint64) (int, bool) {
	return slices.BinarySearchFunc(w.gaps, off, func(g idumpGap, off uint64) int {
		switch {
		case g.off < off:
			return -1
		case g.off > off:
			return 1
		}
		return 0
	})
}

// gapBefore returns the last known gap between the walker (inclusive) and
// o (inclusive).
func (w *idumpWalker) gapBefore(o uint64) (idumpGap, bool) {
	i, found := w.gapIndex(o)
	if found {
		i++
	}
	if i == 0 || w.gaps[i-1].off < w.noff {
		return idumpGap{}, false
	}
	return w.gaps[i-1], true
}

// learnGap records the failure of the record expected at the walker's
// next position (h, read there, failed with reason): the end of the log's
// valid data, or damage followed by valid records (SPEC §2 tells them
// apart the same way).
func (w *idumpWalker) learnGap(h format.Header, reason error) error {
	g := idumpGap{pos: w.npos, off: w.noff, reason: reason}
	size, err := w.lr.statSize()
	if err != nil {
		return err
	}
	switch {
	case w.npos >= size:
		g.end, g.reason = true, nil
	case errors.Is(reason, format.ErrOffset) && h.Offset > w.noff:
		// A valid record whose offset skips some: the walk goes on from it.
		g.resumePos, g.resumeOff = w.npos, h.Offset
	default:
		at, off, ok, err := validRecordAfter(w.seg, w.lr, w.npos, w.noff, size)
		if err != nil {
			return err
		}
		if ok {
			g.resumePos, g.resumeOff = at, off
		} else {
			g.end = true
		}
	}
	i, found := w.gapIndex(g.off)
	if found {
		w.gaps[i] = g
	} else {
		w.gaps = slices.Insert(w.gaps, i, g)
	}
	return nil
}

// jump moves the walker ahead to the last .index entry with an offset <= o,
// when that entry checks out against the log and is ahead of the walker.
func (w *idumpWalker) jump(o uint64) error {
	if w.ix == nil {
		return nil
	}
	for w.ixNext < w.ix.n {
		off, _, err := w.ix.at(w.ixNext)
		if err != nil {
			if errors.Is(err, format.ErrShort) {
				w.ix.n = w.ixNext
				break
			}
			return err
		}
		if off > o {
			break
		}
		w.ixNext++
	}
	i := w.ixNext - 1
	if i < 0 {
		return nil
	}
	if w.ixTried != i+1 {
		off, pos, err := w.ix.at(i)
		if err != nil {
			return ignoreShort(err)
		}
		w.ixTried, w.ixGood = i+1, false
		in, err := idumpInLog(w.lr, pos)
		if err != nil {
			return err
		}
		if off >= w.noff && off <= o && in {
			h, err := w.lr.check(pos)
			if err != nil && isIOError(err) {
				return err
			}
			if err == nil && h.Offset == off {
				w.ixGood = true
				w.ixWalk = idumpWalk{cur: true, cpos: pos, coff: off, cts: h.Timestamp, npos: pos + h.RecordLen(), noff: off + 1}
			}
		}
	}
	if w.ixGood && w.ixWalk.coff >= w.noff && w.ixWalk.coff <= o && !(w.cur && w.coff == w.ixWalk.coff) {
		w.idumpWalk = w.ixWalk
	}
	return nil
}
