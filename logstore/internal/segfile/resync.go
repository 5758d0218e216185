package segfile

import (
	"math"

	"github.com/seglog/seglog/format"
)

// The resync rule (docs/format.md, "Where valid data resumes"): after the
// chain breaks at the record at p, where offset n was expected, valid
// data resumes at the first of these that exists, each record sound
// (complete, CRC matching) with an offset not below the lower bound (n;
// at a segment's first byte, its Floor):
//
//  1. the failing record itself, when only its offset is wrong and it is
//     confirmed (BySelf);
//  2. the record where the failing one claims to end, when its offset is
//     n+1 or it is confirmed (ByClaimedEnd);
//  3. the lowest-placed confirmed record after p found byte by byte
//     (ByScan) that does not conflict with the anchor, the first
//     confirmed record an index entry names with its offset; else the
//     anchor (ByIndex).
//
// A record is confirmed when the record at its end is sound with its
// offset + 1, or it ends exactly at the end of the data with an offset
// that the bytes from p to it could have held records up to.
//
// Bytes inside the failing record's claimed extent are its payload, not
// records, unless a candidate's chain shows the claimed length wrong: it
// runs across the extent's end. An extent that runs past the end of the
// data cannot be shown wrong that way. In the active segment that is a
// torn tail and stays one, whatever its bytes look like, unless an index
// entry names a confirmed record inside it (a writer indexes records
// only after writing them, so it wrote more after the failing one); in a
// closed segment, which no crash tears, a chain that runs exactly to the
// end of the data shows it wrong too. A candidate conflicts with the
// anchor when its chain runs into the anchor's record other than at its
// start, or reaches the anchor's offsets before its position: then the
// anchor wins.

// maxIndexChecks bounds the index entries tried for an anchor: past this
// many bad ones, the byte scan is as good.
const maxIndexChecks = 64

// candidate is a place valid data may resume at.
type candidate struct {
	pos int64
	off uint64
}

// resync fills in where valid data resumes after d, if anywhere.
func (s *Scanner) resync(d *Damage) error {
	if s.full {
		return nil // after the last offset there is, nothing is valid
	}
	p, n := d.Pos, d.Offset
	lower := n
	if s.fresh {
		lower = s.seg.Floor
	}
	extEnd := s.limit // without a header, the damage may run to the end
	if d.HeaderOK {
		extEnd = p + d.Header.RecordLen()
	}
	resume := func(c candidate, by Rule) error {
		d.Resumed, d.End, d.ResumeOffset, d.By = true, c.pos, c.off, by
		return nil
	}

	// 1. The record itself.
	if d.Sound && d.Header.Offset >= lower {
		ok, err := s.confirmed(p, &d.Header, p, n)
		if err != nil {
			return err
		}
		if ok {
			return resume(candidate{p, d.Header.Offset}, BySelf)
		}
	}
	// 2. Its claimed end.
	if d.HeaderOK && extEnd > p && extEnd <= s.limit-format.HeaderLen {
		var h format.Header
		sound, err := s.sound(extEnd, &h)
		if err != nil {
			return err
		}
		if sound && h.Offset >= lower {
			ok := n != math.MaxUint64 && h.Offset == n+1
			if !ok {
				if ok, err = s.confirmed(extEnd, &h, p, n); err != nil {
					return err
				}
			}
			if ok {
				return resume(candidate{extEnd, h.Offset}, ByClaimedEnd)
			}
		}
	}
	// 3. The index's anchor, and the byte scan below it.
	anchor, hasAnchor, err := s.indexAnchor(p, n, lower, extEnd)
	if err != nil {
		return err
	}
	stop := s.limit - format.HeaderLen
	if hasAnchor {
		stop = anchor.pos - 1
	}
	if s.seg.Active && extEnd > s.limit {
		stop = min(stop, p) // a torn tail: no byte in it starts a record
	}
	var h format.Header
	for q := p + 1; q <= stop; q++ {
		hb, err := s.r.window(q, format.HeaderLen)
		if err != nil {
			if IsIOError(err) {
				return err
			}
			break
		}
		// Cheap tests first: most positions fail them.
		if h.Decode(hb) != nil || h.Offset < lower || q+h.RecordLen() > s.limit || hasAnchor && h.Offset >= anchor.off {
			continue
		}
		ok, err := s.acceptable(candidate{q, h.Offset}, &h, p, n, extEnd, false)
		if err != nil {
			return err
		}
		if ok && hasAnchor {
			ok, err = s.compatible(candidate{q, h.Offset}, anchor)
			if err != nil {
				return err
			}
		}
		if ok {
			return resume(candidate{q, h.Offset}, ByScan)
		}
	}
	if hasAnchor {
		return resume(anchor, ByIndex)
	}
	return nil
}

// acceptable: the record at c (its header in h) is sound with c's
// offset, confirmed, and outside the failing record's extent [p, extEnd)
// or shown by its chain (or, past the end of the data, its index entry)
// to be outside it.
func (s *Scanner) acceptable(c candidate, h *format.Header, p int64, n uint64, extEnd int64, indexed bool) (bool, error) {
	sound, err := s.sound(c.pos, h)
	if err != nil || !sound || h.Offset != c.off {
		return false, err
	}
	if ok, err := s.confirmed(c.pos, h, p, n); err != nil || !ok {
		return false, err
	}
	switch {
	case c.pos >= extEnd:
		return true, nil
	case extEnd <= s.limit:
		return s.straddles(c, extEnd)
	case indexed:
		return true, nil
	case !s.seg.Active:
		return s.straddles(c, s.limit+1)
	}
	return false, nil
}

// sound reports whether a complete record whose CRC matches starts at
// pos, inside the data; h is its header.
func (s *Scanner) sound(pos int64, h *format.Header) (bool, error) {
	_, err := s.r.record(pos, h, false)
	if IsIOError(err) {
		return false, err
	}
	return err == nil && pos+h.RecordLen() <= s.limit, nil
}

// confirmed reports whether the sound record at q (header h) is confirmed
// by what follows it: the next record, sound with the offset after h's,
// or the end of the data, reached with an offset the bytes since the
// damage at p (where n was expected) could have held records up to.
func (s *Scanner) confirmed(q int64, h *format.Header, p int64, n uint64) (bool, error) {
	end := q + h.RecordLen()
	if end == s.limit {
		return h.Offset <= n || h.Offset-n <= uint64((q-p)/format.HeaderLen)+1, nil
	}
	if h.Offset == math.MaxUint64 {
		return false, nil
	}
	want := h.Offset + 1
	var h2 format.Header
	sound, err := s.sound(end, &h2)
	return sound && h2.Offset == want, err
}

// straddles reports whether the chain of valid records from c runs across
// end: one of its records starts before end and ends after it. With end
// just past the data, that is whether it runs exactly to the end of it.
func (s *Scanner) straddles(c candidate, end int64) (bool, error) {
	pos, off := c.pos, c.off
	var h format.Header
	for pos < end {
		if pos == s.limit {
			return end == s.limit+1, nil
		}
		sound, err := s.sound(pos, &h)
		if err != nil || !sound || h.Offset != off {
			return false, err
		}
		next := pos + h.RecordLen()
		if next > end {
			return true, nil
		}
		if off == math.MaxUint64 {
			return next == s.limit && end == s.limit+1, nil
		}
		pos, off = next, off+1
	}
	return false, nil
}

// compatible reports whether the chain from c leads to the anchor a: it
// reaches a's position with a's offset, or ends (fails) before a without
// reaching a's offsets. It conflicts when one of its records runs into
// a's, or its offsets reach a's before a's position.
func (s *Scanner) compatible(c, a candidate) (bool, error) {
	pos, off := c.pos, c.off
	var h format.Header
	for pos < a.pos {
		if off >= a.off {
			return false, nil
		}
		sound, err := s.sound(pos, &h)
		if err != nil {
			return false, err
		}
		if !sound || h.Offset != off {
			return true, nil // an island of valid records, damage after it
		}
		pos, off = pos+h.RecordLen(), off+1
	}
	return pos == a.pos && off == a.off, nil
}

// indexAnchor is the first record after p, in the order of the index's
// entries, that an entry names with its offset and that is acceptable.
func (s *Scanner) indexAnchor(p int64, n, lower uint64, extEnd int64) (candidate, bool, error) {
	x := s.seg.Index
	if x == nil || x.n == 0 {
		return candidate{}, false, nil
	}
	i, found, err := x.floorBy(uint64(p), func(_ uint64, pos int64) uint64 { return uint64(max(pos, 0)) })
	if err != nil {
		if err == ErrUnsorted {
			return candidate{}, false, nil // an index out of order is no help
		}
		return candidate{}, false, ioOnly(err)
	}
	if found {
		i++
	}
	var h format.Header
	for end := min(x.n, i+maxIndexChecks); i < end; i++ {
		e, err := x.entry(i)
		if err != nil {
			return candidate{}, false, ioOnly(err)
		}
		if e.Pos >= s.limit {
			break // stale: past the data
		}
		if e.Pos <= p || e.Offset < lower {
			continue
		}
		ok, err := s.acceptable(candidate{e.Pos, e.Offset}, &h, p, n, extEnd, true)
		if err != nil {
			return candidate{}, false, err
		}
		if ok {
			return candidate{e.Pos, e.Offset}, true, nil
		}
	}
	return candidate{}, false, nil
}
