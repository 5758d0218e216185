package logstore

import (
	"fmt"
	"math"
	"strconv"

	"github.com/seglog/seglog/format"
)

// The simple layout's checks: every index entry classified against the
// store's framing (CheckSimpleSegment), and verify-crc's findings on the
// whole log (SimpleLog.Verify), named in the finding kinds of kinds.go.

// SimpleEntryClass is what a simple .index entry turns out to be.
type SimpleEntryClass int

const (
	// SimpleEntryReal: the entry's number, offset and position are those
	// of a record in the store.
	SimpleEntryReal SimpleEntryClass = iota
	// SimpleEntryPadding: an all-zero entry in the run at the end of the
	// file, never written: the index was not closed cleanly.
	SimpleEntryPadding
	// SimpleEntryPastEnd: an entry for a record the store does not hold,
	// pointing at or past the end of its whole records: written through
	// the map while the record was lost from the store's buffer.
	SimpleEntryPastEnd
	// SimpleEntryWrong: an entry that points elsewhere, or holds another
	// offset than its number.
	SimpleEntryWrong
)

func (c SimpleEntryClass) String() string {
	switch c {
	case SimpleEntryReal:
		return "real"
	case SimpleEntryPadding:
		return "zero padding"
	case SimpleEntryPastEnd:
		return "past the store's end"
	case SimpleEntryWrong:
		return "wrong"
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Kind is the finding kind naming the class: what dump-index --json
// prints, and what verify-crc calls the same entry.
func (c SimpleEntryClass) Kind() FindingKind {
	switch c {
	case SimpleEntryReal:
		return FindingOK
	case SimpleEntryPadding:
		return FindingIndexPadding
	case SimpleEntryPastEnd:
		return FindingIndexStale
	case SimpleEntryWrong:
		return FindingIndexMismatch
	}
	return FindingKind(c.String())
}

// SimpleIndexEntryInfo is one classified .index entry, or a run of zero
// padding (Count entries from Entry on).
type SimpleIndexEntryInfo struct {
	Entry int64
	Count int64
	format.SimpleIndexEntry
	Class SimpleEntryClass
	Why   string // for wrong and past-the-end entries: what the store holds
}

// SimpleSegmentCheck sums up the check of one segment's store and index.
type SimpleSegmentCheck struct {
	Segment      SimpleSegment
	Entries      int64 // whole index entries
	PartialBytes int64 // of a partial last entry
	Real         int64
	Padding      int64
	PastEnd      int64
	Wrong        int64
	Records      uint64 // whole records framed from the store's first byte
	End          int64  // byte after the last of them
	// Reached is the record number the store's end has, counting past
	// damage the index bridges: the segment's next offset is Base+Reached.
	Reached uint64
	Size    int64 // of the store
	// When End < Size: the length field there, if it is whole (HasLen),
	// and whether that is corruption (the index shows a whole record
	// after it, at ResumePos) rather than a torn last record.
	Len       uint64
	HasLen    bool
	Corrupt   bool
	ResumePos int64
}

// CheckSimpleSegment reads seg's store from its first byte and its index
// (if any) alongside, and classifies every index entry (SimpleEntryClass)
// through each; a run of zero padding comes as one call. Memory stays
// constant whatever the sizes: the index is streamed, and a zero run is
// kept as a count until it turns out to end the file (padding) or not
// (wrong entries, reported one by one).
func CheckSimpleSegment(seg SimpleSegment, each func(SimpleIndexEntryInfo) error) (SimpleSegmentCheck, error) {
	c := SimpleSegmentCheck{Segment: seg}
	st, err := openSimpleStore(seg.Store)
	if err != nil {
		return c, err
	}
	defer st.Close()
	c.Size = st.size
	sc := simpleCursor{st: st, index: seg.Index, tried: -1}
	if err := sc.fill(); err != nil {
		return c, err
	}
	if seg.Index != "" {
		if err := c.checkIndex(&sc, each); err != nil {
			return c, err
		}
	}
	if _, err := sc.to(math.MaxUint64); err != nil {
		return c, err
	}
	c.Reached = sc.k
	if sc.broken {
		c.Records, c.End = sc.breakK, sc.breakPos
		c.Len, c.HasLen = sc.breakLen, sc.breakPos <= c.Size-format.SimpleFrameLen
		c.Corrupt, c.ResumePos = sc.corrupt, sc.corruptResume
	} else {
		c.Records, c.End = sc.k, sc.pos
	}
	return c, nil
}

// simpleCursor walks a store's records in step with its index entries.
// Where the framing breaks it goes on, if the index shows a whole record
// after the break, from there: entries past damage are still checked.
type simpleCursor struct {
	st    *simpleStore
	index string
	k     uint64 // number of the record at pos
	pos   int64
	n     uint64 // its length
	fits  bool   // a whole record k starts at pos
	// The first break of the framing; corrupt when the index shows a
	// whole record after it (at corruptResume).
	broken        bool
	breakPos      int64
	breakK        uint64
	breakLen      uint64
	corrupt       bool
	corruptResume int64
	// The last break recordAfter was asked about (-1: none), and its
	// answer.
	tried     int64
	canResume bool
	resumePos int64
	resumeK   uint64
}

func (c *simpleCursor) fill() (err error) {
	c.n, c.fits, err = c.st.frame(c.pos)
	return err
}

// to moves towards record k and reports whether the store holds it whole.
func (c *simpleCursor) to(k uint64) (bool, error) {
	for c.k < k {
		if !c.fits {
			if c.pos >= c.st.size || !c.resume(k) {
				return false, nil
			}
		} else {
			c.pos += format.SimpleFrameLen + int64(c.n)
			c.k++
		}
		if err := c.fill(); err != nil {
			return false, err
		}
	}
	return c.k == k && c.fits, nil
}

// resume jumps over a break of the framing to the record the index shows
// after it, when that record is not past k.
func (c *simpleCursor) resume(k uint64) bool {
	if c.tried != c.pos {
		at, rel, ok := c.st.recordAfter(c.index, c.pos, c.k)
		if !c.broken {
			c.broken, c.breakPos, c.breakK, c.breakLen = true, c.pos, c.k, c.n
			c.corrupt, c.corruptResume = ok, at
		}
		c.tried, c.canResume, c.resumePos, c.resumeK = c.pos, ok, at, rel
	}
	if !c.canResume || c.resumeK > k {
		return false
	}
	c.pos, c.k = c.resumePos, c.resumeK
	return true
}

func (c *SimpleSegmentCheck) checkIndex(sc *simpleCursor, each func(SimpleIndexEntryInfo) error) error {
	x, err := openSimpleIndex(c.Segment.Index)
	if err != nil {
		return err
	}
	defer x.Close()
	c.Entries, c.PartialBytes = x.n, x.partial
	emit := func(info SimpleIndexEntryInfo) error {
		switch info.Class {
		case SimpleEntryReal:
			c.Real += info.Count
		case SimpleEntryPadding:
			c.Padding += info.Count
		case SimpleEntryPastEnd:
			c.PastEnd += info.Count
		case SimpleEntryWrong:
			c.Wrong += info.Count
		}
		return each(info)
	}
	zeroFrom := int64(-1) // first entry of the current run of zero entries
	for i := int64(0); i < x.n; i++ {
		e, err := x.entry(i, true)
		if err != nil {
			return fmt.Errorf("read %s: %w", c.Segment.Index, err)
		}
		if e.IsZero() && (i > 0 || c.Size == 0) {
			// Entry 0 is legitimately all zeros, unless there is no
			// record 0 at all.
			if zeroFrom < 0 {
				zeroFrom = i
			}
			continue
		}
		if zeroFrom >= 0 {
			// Zeros with a written entry after them were not padding.
			for j := zeroFrom; j < i; j++ {
				if err := emit(SimpleIndexEntryInfo{Entry: j, Count: 1, Class: SimpleEntryWrong,
					Why: "an all-zero entry before written ones: not padding"}); err != nil {
					return err
				}
			}
			zeroFrom = -1
		}
		info, err := c.classify(sc, i, e)
		if err != nil {
			return err
		}
		if err := emit(info); err != nil {
			return err
		}
	}
	if zeroFrom >= 0 {
		return emit(SimpleIndexEntryInfo{Entry: zeroFrom, Count: x.n - zeroFrom, Class: SimpleEntryPadding})
	}
	return nil
}

// classify classifies entry i (not zero padding) against the store.
func (c *SimpleSegmentCheck) classify(sc *simpleCursor, i int64, e format.SimpleIndexEntry) (SimpleIndexEntryInfo, error) {
	info := SimpleIndexEntryInfo{Entry: i, Count: 1, SimpleIndexEntry: e}
	if uint64(e.RelOffset) != uint64(i) {
		info.Class = SimpleEntryWrong
		info.Why = fmt.Sprintf("holds relative offset %d where entry %d must hold %d", e.RelOffset, i, i)
		return info, nil
	}
	has, err := sc.to(uint64(i))
	if err != nil {
		return info, err
	}
	switch {
	case has && e.Pos == uint64(sc.pos):
		info.Class = SimpleEntryReal
	case has:
		info.Class = SimpleEntryWrong
		info.Why = fmt.Sprintf("record %d starts at byte %d", i, sc.pos)
	case e.Pos >= uint64(c.Size):
		info.Class = SimpleEntryPastEnd
		info.Why = fmt.Sprintf("the store is %d %s long", c.Size, plural(c.Size != 1, "byte", "bytes"))
	case sc.k == uint64(i) && e.Pos == uint64(sc.pos):
		// Record i does start there; it is cut off or its length is
		// broken, which the store's check reports.
		info.Class = SimpleEntryReal
	default:
		info.Class = SimpleEntryWrong
		info.Why = fmt.Sprintf("no record %d starts there: the store's framing reaches %d whole %s", i, sc.k, plural(sc.k != 1, "record", "records"))
	}
	return info, nil
}

// Verify checks every segment of the simple log: the framing of every
// record from each store's first byte, that segments follow on from each
// other, the tail of the last store, and every index entry (see
// CheckSimpleSegment). There are no checksums: payload integrity cannot be
// checked. Findings go to opts.Finding, with the log's name as their
// partition. A simple log is a partition of its own: no key routing to
// check, so number and count do not matter, nor does opts.Jobs.
func (l *SimpleLog) Verify(number, count int, opts VerifyOptions) (VerifyReport, error) {
	name := l.Name()
	r := VerifyReport{Name: name, Dir: l.dir, Segments: len(l.segs)}
	finding := opts.Finding
	if finding == nil {
		finding = func(Finding) error { return nil }
	}
	add := func(sev Severity, kind FindingKind, path string, pos, offset int64, reason string) error {
		if sev == SeverityProblem {
			r.Problems++
		} else {
			r.Notes++
		}
		return finding(Finding{Severity: sev, Kind: kind, Partition: name, Path: path, Pos: pos, Offset: offset, Reason: reason})
	}
	for _, o := range l.orphans {
		if err := add(SeverityProblem, FindingOrphanIndex, o, -1, -1, "an index without its .store: that segment's records are missing"); err != nil {
			return r, err
		}
	}
	if len(l.segs) == 0 {
		r.Complete = true
		return r, add(SeverityNote, FindingNoSegments, l.dir, -1, -1, "no .store files")
	}
	var next uint64
	for i, seg := range l.segs {
		if i > 0 && seg.Base < next {
			if err := add(SeverityProblem, FindingOverlap, seg.Store, 0, int64(seg.Base),
				fmt.Sprintf("segment starts at offset %d, below the end of the one before (next offset %d)", seg.Base, next)); err != nil {
				return r, err
			}
		} else if i > 0 && seg.Base > next {
			if err := add(SeverityProblem, FindingGap, seg.Store, 0, int64(next),
				fmt.Sprintf("offsets %d..%d are missing between segments", next, seg.Base-1)); err != nil {
				return r, err
			}
		}
		c, err := CheckSimpleSegment(seg, func(e SimpleIndexEntryInfo) error {
			pos, off := e.Entry*format.SimpleIndexEntryLen, int64(seg.Base)+e.Entry
			switch e.Class {
			case SimpleEntryPadding:
				return add(SeverityNote, e.Class.Kind(), seg.Index, pos, off, fmt.Sprintf("entries %d..%d: zero padding (%d %s): the index was not closed cleanly",
					e.Entry, e.Entry+e.Count-1, e.Count, plural(e.Count != 1, "entry", "entries")))
			case SimpleEntryPastEnd:
				return add(SeverityNote, e.Class.Kind(), seg.Index, pos, off, fmt.Sprintf("entry %d points at byte %d, past the store's end: %s (lost from the store's buffer in a crash)", e.Entry, e.Pos, e.Why))
			case SimpleEntryWrong:
				return add(SeverityProblem, e.Class.Kind(), seg.Index, pos, off, fmt.Sprintf("entry %d (offset %d, byte %d) is wrong: %s", e.Entry, e.RelOffset, e.Pos, e.Why))
			}
			return nil
		})
		if err != nil {
			return r, err
		}
		r.Records += c.Records
		r.Bytes += c.Size
		next = seg.Base + c.Reached
		if err := l.verifyEnd(&c, add); err != nil {
			return r, err
		}
	}
	r.Complete = true
	return r, nil
}

// verifyEnd reports a segment's tail and what its index lacks.
func (l *SimpleLog) verifyEnd(c *SimpleSegmentCheck, add func(Severity, FindingKind, string, int64, int64, string) error) error {
	seg := c.Segment
	off := int64(seg.Base + c.Records)
	if c.End < c.Size {
		what := fmt.Sprintf("%d %s after the last whole record", c.Size-c.End, plural(c.Size-c.End != 1, "byte", "bytes"))
		if c.HasLen {
			what += fmt.Sprintf(", whose length field says %d", c.Len)
		}
		if c.Corrupt {
			if err := add(SeverityProblem, FindingCorruptRecord, seg.Store, c.End, off,
				fmt.Sprintf("record length runs past the end of the .store, though the index shows a whole record at byte %d: %s", c.ResumePos, what)); err != nil {
				return err
			}
		} else if err := add(SeverityProblem, FindingIncompleteTail, seg.Store, c.End, off, "torn last record (what a crash leaves): "+what); err != nil {
			return err
		}
	}
	switch {
	case seg.Index == "":
		return add(SeverityNote, FindingIndexMissing, seg.Store, -1, -1, "no .index beside it (it is only a hint)")
	case c.Real < int64(c.Records):
		if err := add(SeverityNote, FindingIndexShort, seg.Index, -1, -1, fmt.Sprintf("%d of the store's %d records are indexed", c.Real, c.Records)); err != nil {
			return err
		}
	}
	if c.PartialBytes > 0 {
		return add(SeverityNote, FindingIndexPartial, seg.Index, c.Entries*format.SimpleIndexEntryLen, -1,
			fmt.Sprintf("a partial last entry of %d %s, ignored", c.PartialBytes, plural(c.PartialBytes != 1, "byte", "bytes")))
	}
	return nil
}
