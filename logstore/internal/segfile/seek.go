package segfile

import (
	"github.com/seglog/seglog/format"
)

// An index entry is a hint. One is trusted as a place to start reading
// only once the chain confirms it: the record at its position is sound
// and has its offset, and the walk of record headers from the entry
// before it (or from the segment's first byte) arrives exactly there
// with that offset, or, where damage before it stops every walk, the
// record after it carries on from it (or it ends the data). A lying entry, pointing into another record's value
// where the bytes happen to look like a record, fails the walk, which
// lands on the real records' boundaries. Confirming costs the records
// between two entries: one with the interval of 1 seglog writes.

// maxConfirmWalk bounds the records walked to confirm an entry: an index
// sparser than this is confirmed by nothing but a scan.
const maxConfirmWalk = 4096

// maxEndChecks bounds the entries tried, from the last one back, for a
// place to walk to the end of the data from.
const maxEndChecks = 64

// SeekOffset makes the scan start at the confirmed index entry with the
// largest offset at or below target, or at the segment's first byte when
// none is (no index, or one that lies). Records before target are then
// still returned by Next: the caller skips them.
func (s *Scanner) SeekOffset(target uint64) error {
	x := s.index()
	if x == nil || target <= s.seg.Base {
		s.StartAt(0, s.seg.Base)
		return nil
	}
	e, i, ok, err := x.floor(target)
	if err == nil && ok && i == x.n-1 && e.Offset < target && x.refresh() {
		// An index kept open grew since (the active segment's).
		e, i, ok, err = x.floor(target)
	}
	if err != nil && err != ErrUnsorted {
		if err = ioOnly(err); err != nil {
			return err
		}
	}
	if !ok || err != nil {
		s.StartAt(0, s.seg.Base)
		return nil
	}
	// When the search read the entry after too (an exact interpolation
	// does), its position says how long the record is: a point lookup
	// reads that record rather than a page.
	// With the entry before known too, the first read starts there: the
	// walk that confirms the entry reads the same bytes.
	if next, ok := x.known(i + 1); ok && e.Offset == target && next.Pos > e.Pos {
		from := e.Pos
		if prev, ok := x.known(i - 1); ok && i > 0 && prev.Pos < e.Pos {
			from = prev.Pos
		}
		s.r.firstRead(next.Pos - from)
	}
	for tries := 0; tries < 4 && i >= 0; tries++ {
		ok, err := s.confirmEntry(i)
		if err != nil {
			return err
		}
		if ok {
			e, _ := x.entry(i)
			s.StartAt(e.Pos, e.Offset)
			return nil
		}
		i--
	}
	s.StartAt(0, s.seg.Base)
	return nil
}

// SeekEnd makes the scan start at the last confirmed index entry, for a
// walk to the end of the data, or at the segment's first byte. Entries
// past the end of the data are stale (a power loss wrote index pages and
// not log pages) and skipped without a read.
func (s *Scanner) SeekEnd() error {
	x := s.index()
	if x == nil {
		s.StartAt(0, s.seg.Base)
		return nil
	}
	s.prefetchEnd(x)
	checks := 0
	for i := x.n - 1; i >= 0 && checks < maxEndChecks; i-- {
		e, err := x.entry(i)
		if err != nil {
			if err = ioOnly(err); err != nil {
				return err
			}
			break
		}
		if e.Pos < 0 || e.Pos >= s.limit || e.Offset < s.lowest() {
			continue
		}
		checks++
		ok, err := s.confirmEntry(i)
		if err != nil {
			return err
		}
		if ok {
			s.StartAt(e.Pos, e.Offset)
			s.fromEntry = i
			return nil
		}
	}
	s.StartAt(0, s.seg.Base)
	return nil
}

// endEntries is how many of the last index entries confirming the last
// one reads: it, the one before (the walk to it) and the one before that
// (that the walk did not start inside a record).
const endEntries = 3

// prefetchEnd reads the last index entries and the .log bytes from the
// first of them to the end of the data, each with one read, when that is
// at most a page or two (a segment's last index interval): confirming the
// last entry then reads nothing more, and the floor of a segment is found
// from the end of every segment before it.
func (s *Scanner) prefetchEnd(x *Index) {
	n := min(x.n, endEntries)
	if n == 0 {
		return
	}
	first, _, err := x.read(x.n-n, n)
	if err != nil || first.Pos < 0 || first.Pos >= s.limit || s.limit-first.Pos > prefetchMax {
		return
	}
	// Only a hint: a read that fails is read again, and reported, where
	// the bytes are needed.
	s.r.firstRead(s.limit - first.Pos)
	_, _ = s.r.window(first.Pos, s.limit-first.Pos)
}

// prefetchMax bounds prefetchEnd's read of the .log.
const prefetchMax = 4 * lookupChunk

// confirmEntry reports whether index entry i is confirmed by the chain:
// the header walk from entry i-1 (itself a record with its offset) or,
// for the first entry or when i-1 is no help, from the segment's first
// byte, reaches its position with its offset, and its record is sound.
// An entry below the segment's floor names a record that overlaps the
// segment before, however well the chain holds: never a place to start.
func (s *Scanner) confirmEntry(i int64) (bool, error) {
	x := s.index()
	e, err := x.entry(i)
	if err != nil {
		return false, ioOnly(err)
	}
	if e.Pos < 0 || e.Pos >= s.limit || e.Offset < s.lowest() {
		return false, nil
	}
	// The walk from the entry before first: it reads the bytes up to this
	// entry's record in order.
	walked, over := false, int64(-1)
	stopped := walkEnd{over: -1, pos: -1} // where the walk from the entry before stopped
	if i > 0 && e.Pos > 0 {
		prev, err := x.entry(i - 1)
		if err != nil {
			return false, ioOnly(err)
		}
		if prev.Pos >= 0 && prev.Pos < e.Pos && prev.Offset < e.Offset {
			w, err := s.walks(prev.Pos, prev.Offset, e.Pos, e.Offset, true)
			if err != nil {
				return false, err
			}
			walked, over, stopped = w.landed, w.over, w
			if walked && i > 1 && prev.Pos > 0 {
				// Entries that lie together, each leading to the next
				// inside another record's value: the entry before must
				// not lie inside a record the one before it leads to.
				if walked, err = s.notInside(i-1, prev); err != nil {
					return false, err
				}
			}
		}
	}
	if inside, err := s.soundAt(over); err != nil || inside {
		// The walk passed over the entry's position inside a sound
		// record: the entry points into that record's bytes.
		return false, err
	}
	var h format.Header
	if sound, err := s.sound(e.Pos, &h); err != nil || !sound || h.Offset != e.Offset {
		return false, err
	}
	if e.Pos == 0 {
		return e.Offset == s.seg.Base, nil
	}
	if walked {
		return true, nil
	}
	w, err := s.walks(0, s.seg.Base, e.Pos, e.Offset, false)
	if err != nil || w.landed {
		return w.landed, err
	}
	if inside, err := s.soundAt(w.over); err != nil || inside {
		return false, err
	}
	// Damage before it, which no walk crosses: the chain after it tells,
	// as it does for where valid data resumes, from where the walk
	// stopped.
	if w.pos < 0 {
		w = stopped
	}
	if w.pos < 0 {
		w.pos, w.off = e.Pos, e.Offset
	}
	return s.confirmed(e.Pos, &h, w.pos, w.off)
}

// walkEnd is how a walk of record headers toward an index entry ended.
type walkEnd struct {
	landed bool  // exactly on the entry's position, with its offset
	over   int64 // the record the entry lies inside, shown wrong (else -1)
	// Where the walk stopped, and the offset the chain wanted there; pos
	// is -1 when it did not walk.
	pos int64
	off uint64
}

// walks walks the record headers from (pos, off), each with the offset
// after the one before, toward (to, toOff), within maxConfirmWalk
// records. With checkFirst, the record at pos must be sound too (it is an
// index entry's, not the segment's first byte). It shows the entry wrong
// when it passes over to inside a record, or reaches to wanting a higher
// offset than the entry's (a duplicate).
func (s *Scanner) walks(pos int64, off uint64, to int64, toOff uint64, checkFirst bool) (walkEnd, error) {
	none := walkEnd{over: -1, pos: -1}
	var h format.Header
	if checkFirst {
		if sound, err := s.sound(pos, &h); err != nil || !sound || h.Offset != off {
			return none, err
		}
	}
	last := int64(-1)
	for walked := 0; pos < to; walked++ {
		if walked == maxConfirmWalk {
			return none, nil
		}
		if err := s.r.header(pos, &h); err != nil {
			return none, ioOnly(err)
		}
		if h.Offset != off {
			return walkEnd{over: -1, pos: pos, off: off}, nil
		}
		last = pos
		pos += h.RecordLen()
		off++
	}
	w := walkEnd{over: -1, pos: pos, off: off}
	switch {
	case pos == to && off == toOff:
		w.landed = true
	case pos > to, toOff < off:
		w.over, w.pos = last, last
	}
	return w, nil
}

// notInside reports whether index entry i (e) is not shown to point
// inside a sound record by the walk from the entry before it.
func (s *Scanner) notInside(i int64, e format.IndexEntry) (bool, error) {
	prev, err := s.index().entry(i - 1)
	if err != nil {
		return false, ioOnly(err)
	}
	if prev.Pos < 0 || prev.Pos >= e.Pos || prev.Offset >= e.Offset {
		return true, nil
	}
	w, err := s.walks(prev.Pos, prev.Offset, e.Pos, e.Offset, true)
	if err != nil {
		return false, err
	}
	inside, err := s.soundAt(w.over)
	return !inside, err
}

// soundAt reports whether a sound record starts at pos (pos < 0: none).
func (s *Scanner) soundAt(pos int64) (bool, error) {
	if pos < 0 {
		return false, nil
	}
	var h format.Header
	return s.sound(pos, &h)
}

// Confirms reports whether the segment's index entry i is confirmed by
// the chain (see above): a place reading may start.
func (s *Scanner) Confirms(i int64) (bool, error) {
	if x := s.index(); x == nil || i < 0 || i >= x.n {
		return false, nil
	}
	return s.confirmEntry(i)
}

// lowest is the lowest offset a record of the segment may have.
func (s *Scanner) lowest() uint64 { return max(s.seg.Base, s.seg.Floor) }
