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
	if i > 0 && e.Pos > 0 {
		prev, err := x.entry(i - 1)
		if err != nil {
			return false, ioOnly(err)
		}
		if prev.Pos >= 0 && prev.Pos < e.Pos && prev.Offset < e.Offset {
			if walked, over, err = s.walks(prev.Pos, prev.Offset, e.Pos, e.Offset, true); err != nil {
				return false, err
			}
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
	ok, over, err := s.walks(0, s.seg.Base, e.Pos, e.Offset, false)
	if err != nil || ok {
		return ok, err
	}
	if inside, err := s.soundAt(over); err != nil || inside {
		return false, err
	}
	// Damage before it, which no walk crosses: the chain after it tells,
	// as it does for where valid data resumes.
	return s.confirmed(e.Pos, &h, e.Pos, e.Offset)
}

// walks reports whether the record headers from (pos, off) lead, each
// with the offset after the one before, exactly to (to, toOff), within
// maxConfirmWalk records. With checkFirst, the record at pos must be
// sound too (it is an index entry's, not the segment's first byte). A
// walk that shows the entry wrong gives over, the position of the record
// it passed to in, or of the one before to when the chain wants a higher
// offset there (else -1).
func (s *Scanner) walks(pos int64, off uint64, to int64, toOff uint64, checkFirst bool) (ok bool, over int64, err error) {
	if toOff-off > maxConfirmWalk {
		return false, -1, nil
	}
	var h format.Header
	if checkFirst {
		if sound, err := s.sound(pos, &h); err != nil || !sound || h.Offset != off {
			return false, -1, err
		}
	}
	last := int64(-1)
	for pos < to {
		if err := s.r.header(pos, &h); err != nil {
			return false, -1, ioOnly(err)
		}
		if h.Offset != off {
			return false, -1, nil
		}
		last = pos
		pos += h.RecordLen()
		off++
	}
	switch {
	case pos == to && off == toOff:
		return true, -1, nil
	case pos > to, pos == to && toOff < off:
		// Past to inside the record at last; or at to, where the chain
		// wants a higher offset than the entry's (a duplicate).
		return false, last, nil
	}
	return false, -1, nil
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
	_, over, err := s.walks(prev.Pos, prev.Offset, e.Pos, e.Offset, true)
	if err != nil {
		return false, err
	}
	inside, err := s.soundAt(over)
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
