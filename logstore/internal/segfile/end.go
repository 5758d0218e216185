package segfile

// End is where a segment's valid data ends, and what it ends in.
type End struct {
	Pos  int64  // the end of the last valid record (0 when there is none)
	Next uint64 // the offset after it (its base or floor when none)
	Full bool   // its last record has the last offset there is
	// Records is how many valid records the walk met, from where it
	// started (From): all of them only when From is 0.
	Records uint64
	From    int64
	// FromEntry is the index entry From is at, -1 for none.
	FromEntry int64
	LastTS    int64 // the last valid record's timestamp, when Records > 0
	MaxTS     int64 // the largest timestamp the walk met, when Records > 0
	// Tail is the break the data ends in, nil when it ends cleanly at the
	// limit; First is the first break the walk met (Tail, or one valid
	// data resumed after).
	Tail, First *Damage
	Limit       int64 // the end of the data: the .log's size when looked at
}

// Empty reports whether the walk met no valid record.
func (e *End) Empty() bool { return e.Records == 0 }

// FindEnd walks seg to the end of its data: from the last index entry
// the chain confirms, or with fromStart from its first byte (what a
// writer about to cut a tail wants: a verdict no index entry has a say
// in). Valid records after damage count: readers meet the damage and
// report it when they get there.
func FindEnd(seg Segment, fromStart bool) (End, error) {
	return findEndBefore(seg, -1, fromStart)
}

// findEndBefore is FindEnd of the segment's first limit bytes (limit < 0:
// all of it).
func findEndBefore(seg Segment, limit int64, fromStart bool) (End, error) {
	s, err := NewScanner(seg, limit, Options{})
	if err != nil {
		return End{}, err
	}
	defer s.Close()
	if !fromStart {
		if err := s.SeekEnd(); err != nil {
			return End{}, err
		}
	}
	return s.walkToEnd()
}

// walkToEnd goes on from where the scan is to the end of the data.
func (s *Scanner) walkToEnd() (End, error) {
	e := End{Pos: s.pos, Next: s.next, From: s.pos, FromEntry: s.fromEntry, Limit: s.limit}
	for {
		for s.Next() {
			h := s.Header()
			if e.Records == 0 || h.Timestamp > e.MaxTS {
				e.MaxTS = h.Timestamp
			}
			e.Records++
			e.LastTS = h.Timestamp
		}
		if s.err != nil {
			return e, s.err
		}
		e.Pos, e.Next, e.Full = s.pos, s.next, s.full
		d := s.dmg
		if d == nil {
			return e, nil
		}
		if e.First == nil {
			e.First = d
		}
		if !s.Resume() {
			e.Tail = d
			return e, nil
		}
	}
}

// CountRecords is how many valid records seg holds, given end (FindEnd's
// answer for it), and whether that is exact. Where the walk to the end
// started at an index entry, the records before it are counted from
// their offsets without reading them, when the index tells that no
// offsets were skipped there: entries at one interval from the first
// record on, as a writer leaves them. Such a count is not exact: a
// record there may be damaged (its CRC not matching, say), which only
// reading it shows (verify-crc). Where what was read already shows
// damage or cannot rule skipped offsets out (the walk met damage, the
// entries are not at one interval, the first records lie below the
// floor), the segment is scanned and the count is exact. interval is the
// topic's stored index interval, 0 when unknown.
func CountRecords(seg Segment, end End, interval int) (n uint64, exact bool, err error) {
	if end.From == 0 {
		return end.Records, true, nil
	}
	if end.First == nil && seg.Floor <= seg.Base && seg.Index != nil && evenlyIndexed(seg, end, interval) {
		n = end.Next - seg.Base
		if end.Full {
			n++ // Next stays at the last offset there is, which the segment holds
		}
		return n, false, nil
	}
	// Only the bytes end was found in: a writer may be appending.
	whole, err := findEndBefore(seg, end.Limit, true)
	return whole.Records, true, err
}

// evenlyIndexed reports whether the index's first, second, middle entries
// and the one the walk to the end started from lie at one interval from
// the segment's first record: then no offsets were skipped before it.
func evenlyIndexed(seg Segment, end End, interval int) bool {
	x, last := seg.Index, end.FromEntry
	if last < 1 {
		return false
	}
	first, err0 := x.entry(0)
	second, err1 := x.entry(1)
	if err0 != nil || err1 != nil || first.Pos != 0 || first.Offset != seg.Base || second.Offset <= first.Offset {
		return false
	}
	every := second.Offset - first.Offset
	if interval > 0 && every != uint64(interval) {
		return false
	}
	at := func(i int64) bool {
		e, err := x.entry(i)
		return err == nil && e.Offset == seg.Base+uint64(i)*every
	}
	return at(last/2) && at(last)
}
