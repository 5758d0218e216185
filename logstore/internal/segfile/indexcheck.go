package segfile

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/seglog/seglog/format"
)

// IndexKind is which of a segment's index files an IndexCheck checks.
type IndexKind int

const (
	// OffsetIndex is the .index: offset -> byte position.
	OffsetIndex IndexKind = iota
	// TimeIndex is the .timeindex: offset -> timestamp.
	TimeIndex
)

// Verdict is what checking an index entry against the segment's records
// found. verify-crc and dump-index both report these, by the names
// logstore gives them.
type Verdict int

const (
	// VerdictUnverified: the entry was not checked (no check was asked).
	VerdictUnverified Verdict = iota
	// VerdictOK: the record with that offset starts at that position
	// (.index), or has that timestamp (.timeindex).
	VerdictOK
	// VerdictBackwards (a warning): a .timeindex entry that checks out,
	// for a record older than the one before it: foreign writers stamp
	// the wall clock, which can step back.
	VerdictBackwards
	// VerdictPastEnd (a note): the entry points past the end of the
	// segment's valid data: a position at or after the end of the .log
	// or in its incomplete tail, or an offset after its last record.
	// Stale after a power loss (index pages reached the disk, log pages
	// did not).
	VerdictPastEnd
	// VerdictWrongPosition: a valid record starts at the position, with
	// another offset (FoundOffset).
	VerdictWrongPosition
	// VerdictWrongTimestamp: the record with that offset has another
	// timestamp (FoundTimestamp).
	VerdictWrongTimestamp
	// VerdictOutOfOrder: the entry's offset is not above the entry's
	// before it that was in order (Prev), or its position (.index) is
	// below that one's; or it is out of order with the next one, which is
	// in order with the entries before.
	VerdictOutOfOrder
	// VerdictNoRecord: the position is inside a valid record (at
	// RecordPos, offset FoundOffset), where no record starts.
	VerdictNoRecord
	// VerdictNoSuchOffset: a .timeindex entry's offset is below the
	// segment's base offset (Prev).
	VerdictNoSuchOffset
	// VerdictCorruptRecord: the entry names the record where the
	// segment's chain breaks (at RecordPos, Reason): the entry may be
	// right; the .log is damaged there.
	VerdictCorruptRecord
	// VerdictUnchecked: the entry points into damaged bytes (or, a
	// .timeindex entry, at an offset damage took) that start at RecordPos
	// (Reason), so it could not be confirmed.
	VerdictUnchecked

	numVerdicts
)

var verdictNames = [numVerdicts]string{
	VerdictUnverified:     "not verified",
	VerdictOK:             "ok",
	VerdictBackwards:      "timestamp goes backwards",
	VerdictPastEnd:        "past the log's end",
	VerdictWrongPosition:  "wrong position",
	VerdictWrongTimestamp: "wrong timestamp",
	VerdictOutOfOrder:     "out of order",
	VerdictNoRecord:       "no record starts here",
	VerdictNoSuchOffset:   "no such offset in this segment",
	VerdictCorruptRecord:  "corrupt record",
	VerdictUnchecked:      "not checked: damaged log",
}

// Verdicts lists every verdict, in order.
func Verdicts() []Verdict {
	vs := make([]Verdict, numVerdicts)
	for i := range vs {
		vs[i] = Verdict(i)
	}
	return vs
}

func (v Verdict) String() string {
	if v < 0 || v >= numVerdicts {
		return fmt.Sprintf("verdict(%d)", int(v))
	}
	return verdictNames[v]
}

// Wrong reports whether the verdict says the entry itself is wrong.
func (v Verdict) Wrong() bool {
	switch v {
	case VerdictWrongPosition, VerdictWrongTimestamp, VerdictOutOfOrder, VerdictNoRecord, VerdictNoSuchOffset:
		return true
	}
	return false
}

// Damaged reports whether the verdict is about damage in the .log, which
// kept the entry from being confirmed.
func (v Verdict) Damaged() bool { return v == VerdictCorruptRecord || v == VerdictUnchecked }

// Note reports whether the verdict is a note: nothing wrong with the data.
func (v Verdict) Note() bool { return v == VerdictPastEnd }

// Warning reports whether the verdict is a warning.
func (v Verdict) Warning() bool { return v == VerdictBackwards }

// EntryVerdict is one index entry and what its check found.
type EntryVerdict struct {
	Entry  int64  // number of the entry in the file, from 0
	Offset uint64 // as stored
	Value  int64  // byte position (.index) or timestamp (.timeindex), as stored

	Verdict Verdict
	// RecordPos is the position of the record the entry was checked
	// against, or of the damage (with VerdictPastEnd: of the incomplete
	// tail the entry points into); -1 when there is none.
	RecordPos int64
	// FoundOffset: with VerdictWrongPosition and VerdictNoRecord, the
	// offset of the record there; with VerdictUnchecked, the first offset
	// the damage took.
	FoundOffset uint64
	// FoundTimestamp: the record's own (VerdictWrongTimestamp), or the
	// record's before it (VerdictBackwards).
	FoundTimestamp int64
	// Prev: the offset of the last entry in order (VerdictOutOfOrder), or
	// the segment's base offset (VerdictNoSuchOffset).
	Prev uint64
	// Reason is what the bytes there fail (a format.Err* sentinel or
	// ErrOverlap), with VerdictCorruptRecord and VerdictUnchecked.
	Reason error
}

// indexBlock is how many entries an IndexCheck reads at a time.
const indexBlock = 4096

// IndexCheck checks an index file's entries, in file order, against the
// records of the segment as one walk of it meets them: the walk reports
// each valid record (OnRecord) and each break (OnDamage), in order, and
// each entry is judged as soon as the walk passes its position (.index)
// or offset (.timeindex). Memory stays constant whatever the sizes.
type IndexCheck struct {
	kind  IndexKind
	base  uint64
	limit int64  // where the segment's data ends
	next  uint64 // the offset after its last valid record
	f     File
	n     int64 // whole entries
	stop  int64 // entries from this one on are not this check's
	emit  func(EntryVerdict) error
	err   error

	buf      []byte
	block    *[]byte // buf's memory, from blocks, until the check is done
	bufFirst int64   // entry number of buf's first entry
	read     int64   // entries taken so far

	// The entry after the one taken last, read to judge that one: the
	// next advance takes it from here.
	aheadI int64 // -1: none read ahead
	aheadO uint64
	aheadV int64

	pend    bool  // the pending entry, waiting for the walk
	pi      int64 // the pending entry's number ...
	pv      entryPair
	pk      uint64 // its key: position (.index) or offset (.timeindex)
	prev    bool   // an entry in order was taken ...
	po, pvv uint64
	judged  bool   // an entry was judged against the records ...
	lastOff uint64 // ... and this was its offset
	lastTS  int64  // the timestamp of the last record checked, for Backwards
	hasTS   bool
	counts  [numVerdicts]int64
	quietOK bool // entries judged OK are counted, not handed to emit
}

// entryPair is an index entry as stored: an offset, and a byte
// position (.index) or timestamp (.timeindex).
type entryPair struct {
	Offset uint64
	Value  int64
}

// EmitOnlyWrong stops handing entries judged OK to emit (they are still
// counted): a check that reports only what is wrong saves a call an
// entry.
func (c *IndexCheck) EmitOnlyWrong() { c.quietOK = true }

// NewIndexCheck checks the entries first..stop-1 (stop < 0: all) of the
// index file f, size bytes long, of the segment with base offset base
// whose data ends at byte limit, before offset next (math.MaxUint64 when
// not known ahead, or when the segment holds that offset, the last there
// is), handing each verdict to emit in file order.
func NewIndexCheck(kind IndexKind, f File, size int64, base uint64, limit int64, next uint64, first, stop int64, emit func(EntryVerdict) error) *IndexCheck {
	c := &IndexCheck{kind: kind, base: base, limit: limit, next: next, f: f, n: size / format.IndexEntryLen, emit: emit, read: first, aheadI: -1}
	c.stop = c.n
	if stop >= 0 {
		c.stop = min(stop, c.n)
	}
	c.advance()
	return c
}

// Err is the first error reading the file or from emit: the check
// stopped there.
func (c *IndexCheck) Err() error { return c.err }

// Count is how many entries got verdict v.
func (c *IndexCheck) Count(v Verdict) int64 {
	if v < 0 || v >= numVerdicts {
		return 0
	}
	return c.counts[v]
}

// Key is the pending entry's key, its position (.index) or offset
// (.timeindex); math.MaxUint64 when none is pending. A walk need tell the
// check only of records reaching it: see OnRecord.
func (c *IndexCheck) Key() uint64 {
	if !c.pend {
		return math.MaxUint64
	}
	return c.pk
}

func (c *IndexCheck) entry(i int64) (uint64, int64, bool) {
	j := (i - c.bufFirst) * format.IndexEntryLen
	if j < 0 || j+format.IndexEntryLen > int64(len(c.buf)) {
		n := min(indexBlock, c.n-i)
		if c.block == nil {
			c.block = blocks.Get().(*[]byte)
			c.buf = (*c.block)[:0]
		}
		b := c.buf[:n*format.IndexEntryLen]
		m, err := c.f.ReadAt(b, i*format.IndexEntryLen)
		if m < len(b) {
			if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("%s shrank while being checked", c.f.Name())
			}
			c.fail(err)
			return 0, 0, false
		}
		c.buf, c.bufFirst, j = b, i, 0
	}
	e, _ := format.ParseIndexEntry(c.buf[j:])
	return e.Offset, e.Pos, true
}

func (c *IndexCheck) fail(err error) {
	if c.err == nil {
		c.err = err
	}
	c.pend, c.stop = false, c.read
	c.release()
}

// blocks are the buffers of entries IndexChecks read through: verify-crc
// checks two indexes a segment, and a block each would be garbage.
var blocks = sync.Pool{New: func() any {
	b := make([]byte, 0, indexBlock*format.IndexEntryLen)
	return &b
}}

// release gives the check's block back once it has taken every entry.
func (c *IndexCheck) release() {
	if c.block != nil {
		blocks.Put(c.block)
		c.block, c.buf, c.bufFirst = nil, nil, 0
	}
}

// inOrder: b may follow a. Entries are taken in the order of the walk:
// by offset in a .timeindex, by position in an .index, where entries at
// one position are each judged by the record there, and an offset that
// does not rise is told by the record at the position (wrong position)
// or, where the record cannot tell, judged out of order then (settle).
func (c *IndexCheck) inOrder(ao uint64, av int64, bo uint64, bv int64) bool {
	if c.kind == TimeIndex {
		return bo > ao
	}
	return uint64(bv) >= uint64(av)
}

// beyond: a is past b, where b follows it: a is too far ahead (an entry
// equal to the next is judged, and the next then found out of order).
func (c *IndexCheck) beyond(ao uint64, av int64, bo uint64, bv int64) bool {
	if c.kind == TimeIndex {
		return ao > bo
	}
	return uint64(av) > uint64(bv)
}

// strictlyInOrder is inOrder with positions rising too: the neighbours of
// an entry blamed for being too far ahead must not share a position.
func (c *IndexCheck) strictlyInOrder(ao uint64, av int64, bo uint64, bv int64) bool {
	return c.inOrder(ao, av, bo, bv) && (c.kind == TimeIndex || uint64(bv) > uint64(av))
}

// advance takes the next entry as the pending one, judging on the way
// those that need no walk: out of order, or below the base offset.
func (c *IndexCheck) advance() {
	c.pend = false
	for c.err == nil && c.read < c.stop {
		i := c.read
		o, v, ok := c.aheadO, c.aheadV, c.aheadI == i
		if !ok {
			if o, v, ok = c.entry(i); !ok {
				return
			}
		}
		c.read++
		bad := c.prev && !c.inOrder(c.po, int64(c.pvv), o, v)
		if !bad && i+1 < c.n {
			// Too far ahead: not below the next entry, which is in order
			// with the ones before.
			no, nv, ok := c.entry(i + 1)
			if !ok {
				return
			}
			c.aheadI, c.aheadO, c.aheadV = i+1, no, nv
			bad = c.beyond(o, v, no, nv) && (!c.prev || c.strictlyInOrder(c.po, int64(c.pvv), no, nv))
		}
		switch {
		case c.pastEnd(o, v):
			// Past the end of the data: stale (index pages a power loss
			// kept), and nothing to order the others by.
			c.judge(EntryVerdict{Entry: i, Offset: o, Value: v, RecordPos: -1, Verdict: VerdictPastEnd})
			continue
		case bad:
			c.judge(EntryVerdict{Entry: i, Offset: o, Value: v, RecordPos: -1, Verdict: VerdictOutOfOrder, Prev: c.po})
			continue
		case c.kind == TimeIndex && o < c.base:
			c.judge(EntryVerdict{Entry: i, Offset: o, Value: v, RecordPos: -1, Verdict: VerdictNoSuchOffset, Prev: c.base})
			continue
		}
		c.prev, c.po, c.pvv = true, o, uint64(v)
		c.pend, c.pi, c.pv = true, i, entryPair{o, v}
		c.pk = c.keyOf(o, v)
		return
	}
	c.release()
}

// pastEnd: the entry points past the end of the segment's data.
func (c *IndexCheck) pastEnd(o uint64, v int64) bool {
	if c.kind == TimeIndex {
		return o >= c.next && c.next != math.MaxUint64
	}
	return uint64(v) >= uint64(c.limit)
}

// takeNext is advance's common case, cheap enough to run for every
// record of a dense index: the next entry, read ahead already, follows the
// one just judged in order, is not beyond the one after it (in the
// buffer) and lies inside the data. It reports false, having changed
// nothing, where advance must decide.
func (c *IndexCheck) takeNext() bool {
	i := c.read
	if c.aheadI != i || i >= c.stop || i+1 >= c.n || !c.prev {
		return false
	}
	j := (i + 1 - c.bufFirst) * format.IndexEntryLen
	if j < 0 || j+format.IndexEntryLen > int64(len(c.buf)) {
		return false
	}
	o, v := c.aheadO, c.aheadV
	after, _ := format.ParseIndexEntry(c.buf[j:])
	if !c.inOrder(c.po, int64(c.pvv), o, v) || c.beyond(o, v, after.Offset, after.Pos) || c.pastEnd(o, v) || c.kind == TimeIndex && o < c.base {
		return false
	}
	c.read++
	c.aheadI, c.aheadO, c.aheadV = i+1, after.Offset, after.Pos
	c.po, c.pvv = o, uint64(v)
	c.pend, c.pi, c.pv = true, i, entryPair{o, v}
	c.pk = c.keyOf(o, v)
	return true
}

func (c *IndexCheck) keyOf(o uint64, v int64) uint64 {
	if c.kind == TimeIndex {
		return o
	}
	return uint64(v) // a negative position reads as past any end
}

// judge counts and emits a verdict.
func (c *IndexCheck) judge(e EntryVerdict) {
	c.counts[e.Verdict]++
	if c.emit != nil && c.err == nil {
		if err := c.emit(e); err != nil {
			c.fail(err)
		}
	}
}

// settle judges the pending entry v, the record or damage concerned at
// recordPos (-1: none), and takes the next.
func (c *IndexCheck) settle(v Verdict, recordPos int64) {
	c.settleFound(v, recordPos, 0, 0, nil)
}

// settleFound is settle with what the log holds instead: an offset
// (wrong position, no record, unchecked) or timestamp (wrong, backwards),
// and the reason the bytes there fail. An .index entry whose offset does
// not rise past the last one judged is out of order, unless the record
// at its position says better what is wrong.
func (c *IndexCheck) settleFound(v Verdict, recordPos int64, off uint64, ts int64, reason error) {
	if v == VerdictOK && !(c.judged && c.pv.Offset <= c.lastOff) && (c.quietOK || c.emit == nil) {
		// The common case, without an EntryVerdict to make.
		c.counts[VerdictOK]++
		c.judged, c.lastOff = true, c.pv.Offset
		if !c.takeNext() {
			c.advance()
		}
		return
	}
	e := EntryVerdict{Entry: c.pi, Offset: c.pv.Offset, Value: c.pv.Value, RecordPos: -1}
	switch {
	case v == VerdictWrongPosition || v == VerdictNoRecord:
		// A wrong entry: the ones after it are ordered by the one before.
		e.Verdict, e.RecordPos, e.FoundOffset = v, recordPos, off
	case c.judged && e.Offset <= c.lastOff:
		e.Verdict, e.Prev = VerdictOutOfOrder, c.lastOff
	default:
		e.Verdict, e.RecordPos, e.FoundOffset, e.FoundTimestamp, e.Reason = v, recordPos, off, ts, reason
		c.judged, c.lastOff = true, e.Offset
	}
	c.judge(e)
	c.advance()
}

// OnRecord tells the check of a valid record at [pos, end) with offset
// off and timestamp ts. Calling it only for records that reach the
// pending entry saves time: end > Key() (.index), off >= Key()
// (.timeindex); a .timeindex check must be told every record's timestamp
// though, the others through OnTimestamp, to tell timestamps that go
// backwards.
func (c *IndexCheck) OnRecord(pos, end int64, off uint64, ts int64) {
	if c.kind == TimeIndex {
		for c.pend && c.pk <= off {
			switch {
			case c.pk < off:
				// An offset the walk passed with no record or damage for
				// it: not one this segment's records have.
				c.settleFound(VerdictUnchecked, pos, off, 0, nil)
			case c.pv.Value != ts:
				c.settleFound(VerdictWrongTimestamp, pos, 0, ts, nil)
			case c.hasTS && ts < c.lastTS:
				c.settleFound(VerdictBackwards, pos, 0, c.lastTS, nil)
			default:
				c.settle(VerdictOK, pos)
			}
		}
		c.OnTimestamp(ts)
		return
	}
	for c.pend && c.pk < uint64(end) {
		switch {
		case c.pk == uint64(pos) && c.pv.Offset == off:
			c.settle(VerdictOK, pos)
		case c.pk == uint64(pos):
			c.settleFound(VerdictWrongPosition, pos, off, 0, nil)
		case c.pk > uint64(pos):
			c.settleFound(VerdictNoRecord, pos, off, 0, nil)
		default:
			// Before where the walk started: not this check's to judge.
			c.settle(VerdictUnchecked, -1)
		}
	}
}

// OnTimestamp tells a .timeindex check of a record's timestamp the walk
// met without calling OnRecord.
func (c *IndexCheck) OnTimestamp(ts int64) {
	c.lastTS, c.hasTS = ts, true
}

// OnDamage tells the check of a break the walk met: the bytes [d.Pos,
// d.End) are damaged, and the offsets from d.Offset up to d.ResumeOffset
// (to the end, when it did not resume) were lost to it.
func (c *IndexCheck) OnDamage(d *Damage) {
	if c.kind == TimeIndex {
		for c.pend && (!d.Resumed || c.pk < d.ResumeOffset) {
			switch {
			case !d.Resumed && d.Class == Incomplete && c.pk >= d.Offset:
				c.settleFound(VerdictPastEnd, d.Pos, 0, 0, d.Reason)
			case c.pk == d.Offset:
				c.settleFound(VerdictCorruptRecord, d.Pos, d.Offset, 0, d.Reason)
			default:
				c.settleFound(VerdictUnchecked, d.Pos, d.Offset, 0, d.Reason)
			}
		}
		return
	}
	for c.pend && (!d.Resumed || c.pk < uint64(d.End)) {
		switch {
		case c.pk >= uint64(d.Limit):
			return // past the data: Finish says so
		case c.pk < uint64(d.Pos):
			c.settle(VerdictUnchecked, -1)
		case d.Class == Incomplete:
			c.settleFound(VerdictPastEnd, d.Pos, 0, 0, d.Reason)
		case c.pk == uint64(d.Pos) && c.pv.Offset == d.Offset:
			c.settleFound(VerdictCorruptRecord, d.Pos, d.Offset, 0, d.Reason)
		default:
			c.settleFound(VerdictUnchecked, d.Pos, d.Offset, 0, d.Reason)
		}
	}
}

// Finish judges the entries the walk never reached: past the end of the
// data (.index) or of its records (.timeindex). It returns Err.
func (c *IndexCheck) Finish() error {
	for c.pend {
		c.settle(VerdictPastEnd, -1)
	}
	return c.err
}

// CheckIndex checks the index file f (size bytes) of kind against seg,
// walked from its first byte to the end of its data, handing each
// entry's verdict to emit in file order.
func CheckIndex(seg Segment, kind IndexKind, f File, size int64, emit func(EntryVerdict) error) (*IndexCheck, error) {
	end, err := FindEnd(seg, false)
	if err != nil {
		return nil, err
	}
	s, err := NewScanner(seg, end.Limit, Options{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	next := end.Next
	if end.Full || end.Tail != nil && end.Tail.Class == Corrupt {
		next = math.MaxUint64 // offsets past a corrupt end are lost to it, not stale
	}
	c := NewIndexCheck(kind, f, size, seg.Base, s.Limit(), next, 0, -1, emit)
	for c.err == nil {
		for s.Next() {
			h := s.Header()
			if kind == TimeIndex {
				if h.Offset >= c.Key() {
					c.OnRecord(s.RecordPos(), s.Pos(), h.Offset, h.Timestamp)
				} else {
					c.OnTimestamp(h.Timestamp)
				}
			} else if uint64(s.Pos()) > c.Key() {
				c.OnRecord(s.RecordPos(), s.Pos(), h.Offset, h.Timestamp)
			}
		}
		if s.Err() != nil {
			return c, s.Err()
		}
		d := s.Damage()
		if d == nil {
			break
		}
		c.OnDamage(d)
		if !s.Resume() {
			break
		}
	}
	return c, c.Finish()
}
