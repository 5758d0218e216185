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
//     (ByScan) that does not conflict with the anchor, the first record
//     after p that an index entry names with its offset; else the anchor
//     (ByIndex).
//
// A record is confirmed when the record at its end is sound with its
// offset + 1, or it ends exactly at the end of the data with an offset
// that the bytes from p to it could have held records up to.
//
// Bytes inside the failing record's claimed extent are its payload, not
// records, when its header claims to be the record expected there (its
// offset field holds n) or it is complete with its CRC matching; a
// header claiming another offset may be anything, and so may its length.
// That payload counts as records only where a candidate's chain shows
// the claimed length wrong: it
// runs across the extent's end. An extent that runs past the end of the
// data cannot be shown wrong that way; it is simply wrong, and does not
// count, unless it can be a torn write: in the active segment, a record
// whose header is cut off, or consistent with offset n. Such a torn
// tail stays one whatever its bytes look like, unless an index entry
// names a confirmed record inside it (a writer indexes a record only
// after writing it, so it wrote more after the failing one), or a chain
// of two or more records carrying on after the failing one (offsets
// above n, no more above it than the bytes between could have held) runs
// to the end of the data, or into a tail torn in its turn, crossing only
// damage the claimed-end rule bridges: then the length field went wrong. A candidate
// conflicts with the anchor when its chain runs into the anchor's record
// other than at its start, or reaches the anchor's offsets before its
// position: then the anchor wins.

// A byte-scan candidate can be a record shape inside a value that the
// damage laid bare. The log's real chain runs on; a shape's runs out at
// the end of the value it is in. So a candidate whose chain breaks soon
// is weighed against those in conflict with it found a little further
// on (offsets it has taken, at positions it did not reach them at): the
// chain with more records wins.
const (
	islandRecords = 1024     // a chain this long is no island
	islandWindow  = 64 << 10 // how far past an island a rival is looked for
)

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
	// The failing record's claimed extent: where it says it ends, and
	// whether its bytes are its payload (see above).
	claimedEnd, extEnd := int64(-1), p+1
	if d.HeaderOK {
		claimedEnd = p + d.Header.RecordLen()
		if d.Sound || d.Header.Offset == n {
			extEnd = claimedEnd
		}
	} else if s.seg.Active {
		extEnd = s.limit + 1 // a header cut short: a torn tail
	}
	resume := func(c candidate, by Rule) error {
		d.Resumed, d.End, d.ResumeOffset, d.By = true, c.pos, c.off, by
		return nil
	}

	// 1. The record itself, unless the writer's index names its position
	// with the offset expected there: then the record's offset is wrong.
	if d.Sound && d.Header.Offset >= lower {
		named, err := s.indexNames(p, n)
		if err != nil {
			return err
		}
		ok := false
		if !named {
			ok, err = s.confirmed(p, &d.Header, p, n)
		}
		if err != nil {
			return err
		}
		if ok {
			return resume(candidate{p, d.Header.Offset}, BySelf)
		}
	}
	// 2. Its claimed end.
	if claimedEnd > p && claimedEnd <= s.limit-format.HeaderLen {
		var h format.Header
		sound, err := s.sound(claimedEnd, &h)
		if err != nil {
			return err
		}
		if sound && h.Offset >= lower {
			ok := n != math.MaxUint64 && h.Offset == n+1
			if !ok {
				if ok, err = s.confirmed(claimedEnd, &h, p, n); err != nil {
					return err
				}
			}
			if ok {
				return resume(candidate{claimedEnd, h.Offset}, ByClaimedEnd)
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
		if !s.mayConfirm(q, &h, p, n) {
			continue // before its CRC is read: junk shaped as a header claims any length
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
			c, err := s.longerChain(candidate{q, h.Offset}, p, n, lower, extEnd, hasAnchor, anchor)
			if err != nil {
				return err
			}
			return resume(c, ByScan)
		}
	}
	if hasAnchor {
		return resume(anchor, ByIndex)
	}
	return nil
}

// acceptable: the record at c (its header in h) is sound with c's
// offset, confirmed (unless an index entry names it: indexed), and
// outside the failing record's extent [p, extEnd) or shown by its chain
// (or, past the end of the data, its index entry) to be outside it.
func (s *Scanner) acceptable(c candidate, h *format.Header, p int64, n uint64, extEnd int64, indexed bool) (bool, error) {
	sound, err := s.sound(c.pos, h)
	if err != nil || !sound || h.Offset != c.off {
		return false, err
	}
	if !indexed {
		if ok, err := s.confirmed(c.pos, h, p, n); err != nil || !ok {
			return false, err
		}
	}
	switch {
	case c.pos >= extEnd:
		return true, nil
	case indexed && extEnd <= s.limit:
		// The writer's word that a record starts there, and the record
		// after it carries on: the failing record's length is the lie.
		if ok, err := s.confirmed(c.pos, h, p, n); err != nil || ok {
			return ok, err
		}
		return s.straddles(c, extEnd)
	case extEnd <= s.limit:
		return s.straddles(c, extEnd)
	case indexed || !s.tornHere(p, n):
		return true, nil
	case c.off <= n || c.off-n > uint64((c.pos-p)/format.HeaderLen):
		return false, nil
	}
	// A torn tail, unless records carrying on after the failing one (with
	// offsets the bytes between could have held) run to the end of the
	// data: a length field gone wrong, not a write cut short.
	k, err := s.chainToEnd(c)
	return k >= 2, err
}

// tornHere reports whether the record at p, whose extent runs past the
// end of the data, can be a write of offset n cut short: only in the
// active segment (closed segments were complete when closed), and only
// when what is there of its header is the expected record's: cut off
// itself, or consistent (keylen within size) with offset n. A crash
// leaves the bytes it cut off zero, never a header that contradicts
// itself.
func (s *Scanner) tornHere(p int64, n uint64) bool {
	if !s.seg.Active {
		return false
	}
	if p+format.HeaderLen > s.limit {
		return true
	}
	var h format.Header
	return s.r.header(p, &h) == nil && h.Offset == n
}

// chainToEnd is how many records the chain of valid records from c has
// when it runs to the end of the data: exactly, or into a record there
// cut short (a torn tail after it); else 0. A record on the way that
// fails while the one at its claimed end carries on (the strong rule)
// is crossed.
func (s *Scanner) chainToEnd(c candidate) (int, error) {
	pos, off := c.pos, c.off
	var h, h2 format.Header
	for k := 0; ; k++ {
		if pos == s.limit {
			return k, nil
		}
		sound, err := s.sound(pos, &h)
		if err != nil {
			return 0, err
		}
		if !sound || h.Offset != off {
			if k == 0 {
				return 0, nil
			}
			if !sound && pos+format.HeaderLen <= s.limit && pos+h.RecordLen() > s.limit && s.tornHere(pos, off) {
				return k, nil
			}
			herr := s.r.header(pos, &h)
			if herr != nil && herr != format.ErrKeyLen || off == math.MaxUint64 {
				return 0, ioOnly(herr)
			}
			next := pos + h.RecordLen()
			if next <= pos || next > s.limit-format.HeaderLen {
				return 0, nil
			}
			if sound, err := s.sound(next, &h2); err != nil || !sound || h2.Offset != off+1 {
				return 0, err
			}
			pos, off = next, off+1
			continue
		}
		if off == math.MaxUint64 {
			return 0, nil
		}
		pos, off = pos+h.RecordLen(), off+1
	}
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

// mayConfirm is what confirmed needs of the record at q (header h) and of
// the header after it, checking no CRC: it reads the 28 bytes at q's end
// at most.
func (s *Scanner) mayConfirm(q int64, h *format.Header, p int64, n uint64) bool {
	end := q + h.RecordLen()
	if end == s.limit {
		return h.Offset <= n || h.Offset-n <= uint64((q-p)/format.HeaderLen)+1
	}
	if h.Offset == math.MaxUint64 || end+format.HeaderLen > s.limit {
		return false
	}
	hb, err := s.r.peek(end, format.HeaderLen)
	var next format.Header
	return err == nil && next.Decode(hb) == nil && next.Offset == h.Offset+1
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
// end: one of its records starts before end and ends after it.
func (s *Scanner) straddles(c candidate, end int64) (bool, error) {
	pos, off := c.pos, c.off
	var h format.Header
	for pos < end {
		sound, err := s.sound(pos, &h)
		if err != nil || !sound || h.Offset != off {
			return false, err
		}
		next := pos + h.RecordLen()
		if next > end {
			return true, nil
		}
		if off == math.MaxUint64 {
			return false, nil
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
// entries, that an entry names with its offset and that is acceptable: a
// writer's own word that a record starts there, which no byte scan
// outweighs.
// indexNames reports whether the segment's .index has an entry for byte
// p with offset n.
func (s *Scanner) indexNames(p int64, n uint64) (bool, error) {
	x := s.index()
	if x == nil || x.n == 0 {
		return false, nil
	}
	i, found, err := x.atOrBefore(p)
	if err == ErrUnsorted || !found {
		return false, nil // an index out of order is no help
	}
	if err != nil {
		return false, ioOnly(err)
	}
	e, err := x.entry(i)
	return err == nil && e.Pos == p && e.Offset == n, ioOnly(err)
}

func (s *Scanner) indexAnchor(p int64, n, lower uint64, extEnd int64) (candidate, bool, error) {
	x := s.index()
	if x == nil || x.n == 0 {
		return candidate{}, false, nil
	}
	i, found, err := x.atOrBefore(p)
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

// reach walks the chain of valid records from c and returns where it
// breaks, the offset expected there and how many records it has, up to
// islandRecords; island is false when it runs further, or to the end of
// the data.
func (s *Scanner) reach(c candidate) (end int64, next uint64, records int, island bool, err error) {
	pos, off := c.pos, c.off
	var h format.Header
	for k := 0; k < islandRecords; k++ {
		if pos >= s.limit {
			return pos, off, k, false, nil
		}
		sound, err := s.sound(pos, &h)
		if err != nil {
			return 0, 0, 0, false, err
		}
		if !sound || h.Offset != off {
			return pos, off, k, true, nil
		}
		if off == math.MaxUint64 {
			return pos + h.RecordLen(), off, k + 1, false, nil
		}
		pos, off = pos+h.RecordLen(), off+1
	}
	return pos, off, islandRecords, false, nil
}

// longerChain returns c, or a rival candidate in conflict with c whose
// chain has more records, when c's chain is an island (see
// islandRecords).
func (s *Scanner) longerChain(c candidate, p int64, n, lower uint64, extEnd int64, hasAnchor bool, anchor candidate) (candidate, error) {
	for rounds := 0; rounds < 8; rounds++ {
		end, next, records, island, err := s.reach(c)
		if err != nil || !island {
			return c, err
		}
		stop := min(s.limit-format.HeaderLen, end+islandWindow)
		if hasAnchor {
			stop = min(stop, anchor.pos-1)
		}
		better := false
		var h format.Header
		for q := c.pos + 1; q <= stop; q++ {
			hb, err := s.r.window(q, format.HeaderLen)
			if err != nil {
				if IsIOError(err) {
					return c, err
				}
				break
			}
			// A rival has an offset c's chain took (or was to take next) and
			// is not on c's chain.
			if h.Decode(hb) != nil || h.Offset < lower || h.Offset >= next || q+h.RecordLen() > s.limit || q < end && h.Offset >= c.off && s.onChain(c, q, h.Offset) {
				continue
			}
			ok, err := s.acceptable(candidate{q, h.Offset}, &h, p, n, extEnd, false)
			if err != nil {
				return c, err
			}
			if !ok {
				continue
			}
			r := candidate{q, h.Offset}
			_, _, rRecords, _, err := s.reach(r)
			if err != nil {
				return c, err
			}
			if rRecords > records {
				c, better = r, true
				break
			}
		}
		if !better {
			return c, nil
		}
	}
	return c, nil
}

// onChain reports whether the chain from c has a record at pos with
// offset off.
func (s *Scanner) onChain(c candidate, pos int64, off uint64) bool {
	at, o := c.pos, c.off
	var h format.Header
	for at < pos {
		if sound, err := s.sound(at, &h); err != nil || !sound || h.Offset != o {
			return false
		}
		at, o = at+h.RecordLen(), o+1
	}
	return at == pos && o == off
}
