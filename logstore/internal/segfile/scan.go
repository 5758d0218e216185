package segfile

import (
	"math"

	"github.com/seglog/seglog/format"
)

// Segment is one segment's .log as a Scanner reads it.
type Segment struct {
	Path string // the .log, for messages
	Base uint64 // the base offset its name gives
	// Floor is the lowest offset its records may have: where the
	// partition's segment before it ends (0 for the first). A record
	// below it overlaps an earlier segment; a first record at or above it
	// whose offset is not Base means the segment is misnamed.
	Floor uint64
	// Active: the partition's last segment, which a writer appends to.
	// A record at its end that fails with nothing valid after it is an
	// incomplete tail, not corruption.
	Active bool
	Log    File
	Index  *Index // its .index; nil when it has none (or OpenIndex gives it)
	// OpenIndex, if set and Index is nil, gives the .index the first time
	// the scan wants one (to resync or seek): a sequential read of a
	// healthy segment never opens it.
	OpenIndex func() *Index
}

// index is the segment's .index, opened on first want; nil when none.
func (s *Scanner) index() *Index {
	if s.seg.Index == nil && s.seg.OpenIndex != nil {
		s.seg.Index, s.seg.OpenIndex = s.seg.OpenIndex(), nil
	}
	return s.seg.Index
}

// Options choose how a Scanner reads.
type Options struct {
	// Whole: records are wanted in full (a reader prints them). Else a
	// record larger than one read is checked a piece at a time.
	Whole bool
	// ReadAhead: a long sequential scan may read and check ahead on a
	// second goroutine.
	ReadAhead bool
	// Chunk is the largest read; 0 means 128 KiB.
	Chunk int
	// Buffer, if set, is where reads go while records fit in it: a
	// caller scanning many segments reuses one.
	Buffer []byte
}

// A Scanner walks one segment's records in order and applies the one
// rule for damage: every record it returns is valid (complete, its CRC
// matches, its offset is the one its place requires), and where the
// chain breaks it reports a Damage that says what the break is and where
// valid data resumes.
type Scanner struct {
	seg   Segment
	opts  Options
	r     *reader
	limit int64 // the end of the data: nothing at or past it is read

	pos   int64  // where the next record starts
	next  uint64 // the offset expected there
	fresh bool   // pos is the segment's first byte and no record was taken
	full  bool   // a record with the last offset there is was taken

	fromEntry int64 // the index entry the scan started at, -1 for none

	h   format.Header // the current record's
	b   []byte        // the current record, header included (nil when checked in pieces)
	cur int64         // the current record's position

	dmg *Damage
	err error
}

// NewScanner reads seg from its first byte up to limit (a negative limit
// means the .log's size now).
func NewScanner(seg Segment, limit int64, opts Options) (*Scanner, error) {
	s := &Scanner{seg: seg, opts: opts, r: newReader(seg.Log), limit: limit}
	if opts.Chunk > 0 {
		s.r.max = opts.Chunk
	}
	s.r.scan = opts.ReadAhead
	if opts.Buffer != nil {
		s.r.buf = opts.Buffer[:0]
	}
	if limit < 0 {
		size, err := s.r.statSize()
		if err != nil {
			return nil, err
		}
		s.limit = size
	}
	s.StartAt(0, seg.Base)
	return s, nil
}

// StartAt makes the scan go on from pos, where a record with offset off
// is known to start (a confirmed index entry, or the end of an earlier
// scan), forgetting any damage met.
func (s *Scanner) StartAt(pos int64, off uint64) {
	s.pos, s.next, s.dmg, s.err, s.full, s.fromEntry = pos, off, nil, nil, false, -1
	s.fresh = pos == 0
	if s.fresh {
		s.next = s.seg.Base
	}
}

// Limit is the end of the data the scan goes to.
func (s *Scanner) Limit() int64 { return s.limit }

// SetLimit moves the end of the data: a writer appended (the .log grew),
// or the scan should stop short. An incomplete tail met before the new
// limit is looked at again.
func (s *Scanner) SetLimit(limit int64) {
	if limit == s.limit {
		return
	}
	s.limit = limit
	if s.dmg != nil && s.dmg.Class == Incomplete {
		s.dmg = nil
	}
}

// Grow takes the .log's size now as the end of the data; it reports
// whether that moved it.
func (s *Scanner) Grow() (bool, error) {
	size, err := s.r.statSize()
	if err != nil {
		return false, err
	}
	if size == s.limit {
		return false, nil
	}
	s.SetLimit(size)
	return true, nil
}

// Pos is where the next record starts: after Next returned false, the end
// of the valid data read (the damage's position, or the limit).
func (s *Scanner) Pos() int64 { return s.pos }

// NextOffset is the offset expected at Pos. After a record with the last
// offset there is, nothing is expected (Full).
func (s *Scanner) NextOffset() uint64 { return s.next }

// Full reports whether the last record taken has the last offset there
// is: offsets never wrap, so the partition can take no more.
func (s *Scanner) Full() bool { return s.full }

// Header is the current record's header.
func (s *Scanner) Header() *format.Header { return &s.h }

// Bytes is the current record, header included, valid until the next
// call; nil for a record larger than one read without Options.Whole.
func (s *Scanner) Bytes() []byte { return s.b }

// RecordPos is the current record's position.
func (s *Scanner) RecordPos() int64 { return s.cur }

// Damage is the break Next stopped at, nil if none.
func (s *Scanner) Damage() *Damage { return s.dmg }

// Err is the I/O error Next stopped at, if any.
func (s *Scanner) Err() error { return s.err }

// Next advances to the next valid record. It returns false at the end of
// the data (Pos is the limit), at damage (Damage says what it is, and
// Resume goes on after it) or on an I/O error (Err).
func (s *Scanner) Next() bool {
	if s.dmg != nil || s.err != nil {
		return false
	}
	if s.pos >= s.limit {
		return false
	}
	h := &s.h
	b, err := s.r.record(s.pos, h, s.opts.Whole)
	if err == nil {
		if s.pos+h.RecordLen() > s.limit {
			err = format.ErrShort
		} else if h.Offset != s.next || s.full || s.fresh && h.Offset < s.seg.Floor {
			err = s.offsetError()
		}
	}
	if err != nil {
		s.fail(err)
		return false
	}
	if b != nil {
		b = b[:h.RecordLen()]
	}
	s.b, s.cur = b, s.pos
	s.pos += h.RecordLen()
	s.fresh = false
	if h.Offset == math.MaxUint64 {
		s.full = true // offsets never wrap: nothing can follow this record
	} else {
		s.next = h.Offset + 1
	}
	return true
}

// offsetError is the reason a sound record whose offset is not the one
// expected fails.
func (s *Scanner) offsetError() error {
	if s.fresh && s.h.Offset < s.seg.Floor {
		return ErrOverlap
	}
	return format.ErrOffset
}

// fail records the break at s.pos and classifies it.
func (s *Scanner) fail(err error) {
	if IsIOError(err) {
		s.err = err
		return
	}
	d := &Damage{Path: s.seg.Path, Pos: s.pos, Offset: s.next, Reason: err, End: s.limit, Limit: s.limit, Active: s.seg.Active}
	if err == ErrOverlap {
		d.Offset = max(s.next, s.seg.Floor) // the partition's next offset there
	}
	d.Sound = err == format.ErrOffset || err == ErrOverlap
	if s.pos+format.HeaderLen <= s.limit {
		herr := s.r.header(s.pos, &d.Header)
		if IsIOError(herr) {
			s.err = herr
			return
		}
		d.HeaderOK = herr == nil || herr == format.ErrKeyLen
	}
	if rerr := s.resync(d); rerr != nil {
		s.err = rerr
		return
	}
	switch {
	case d.Resumed:
		d.Class = Corrupt
	case s.seg.Active && !d.Sound:
		d.Class = Incomplete
	default:
		d.Class = Corrupt
	}
	if !d.Resumed {
		zero, zerr := s.allZero(d.Pos, d.End)
		if zerr != nil {
			s.err = zerr
			return
		}
		d.Zeros = zero && d.End > d.Pos
	}
	s.dmg = d
}

// Resume goes on after the damage Next stopped at, at the record where
// valid data resumes. It reports whether there is one; if not, the scan
// stays at the damage, the end of the segment's valid data.
func (s *Scanner) Resume() bool {
	d := s.dmg
	if d == nil || !d.Resumed {
		return false
	}
	s.dmg = nil
	s.pos, s.next, s.full = d.End, d.ResumeOffset, false
	s.fresh = false
	return true
}

// Reread forgets what the scan has read of the file and any damage it
// met, and takes the file's size now as the end of the data: the bytes
// from Pos on are judged again as they are now. For a follower, whose
// file a writer appends to and recover cuts.
func (s *Scanner) Reread() error {
	s.r.forget()
	s.dmg = nil
	size, err := s.r.statSize()
	if err == nil {
		s.limit = size
	}
	return err
}

// Size is the file's size now.
func (s *Scanner) Size() (int64, error) { return s.r.statSize() }

// SetActive says whether the segment is the partition's last, as a
// follower learns it: a break at its end is judged again.
func (s *Scanner) SetActive(active bool) {
	s.seg.Active = active
	s.dmg = nil
}

// SkipToEnd leaves the damage the scan stopped at for the end of the
// data, when nothing valid follows it: the next Next reports the end.
func (s *Scanner) SkipToEnd() {
	if s.dmg != nil && !s.dmg.Resumed {
		s.dmg, s.pos = nil, s.limit
	}
}

// ComputedCRC is the CRC of the damaged record's bytes as they are; ok is
// false when they are not all in the data (or its header is not).
func (s *Scanner) ComputedCRC(d *Damage) (crc uint32, ok bool, err error) {
	if !d.HeaderOK || d.Pos+d.Header.RecordLen() > s.limit {
		return 0, false, nil
	}
	return s.r.computedCRC(d.Pos, &d.Header)
}

// DamagedBytes returns the failing record's bytes, header included, when
// they are all in the data and at most max long: for a forensic dump.
func (s *Scanner) DamagedBytes(d *Damage, max int64) ([]byte, error) {
	if !d.HeaderOK || d.Pos+d.Header.RecordLen() > s.limit || d.Header.RecordLen() > max {
		return nil, nil
	}
	b, err := s.r.window(d.Pos, d.Header.RecordLen())
	return b, ignoreShort(err)
}

// allZero reports whether the data's bytes [from, to) are all zero.
func (s *Scanner) allZero(from, to int64) (bool, error) {
	for pos := from; pos < to; {
		n := min(to-pos, int64(s.r.max))
		b, err := s.r.window(pos, n)
		if err != nil {
			return false, ignoreShort(err)
		}
		if !format.IsZero(b) {
			return false, nil
		}
		pos += n
	}
	return true, nil
}

// Close stops the read-ahead, if any. It does not close the files.
func (s *Scanner) Close() { s.r.stopAhead() }
