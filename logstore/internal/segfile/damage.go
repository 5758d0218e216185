package segfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seglog/seglog/format"
)

// ErrOverlap means a record's offset is below the end of the segment
// before it: the segment overlaps an earlier one.
var ErrOverlap = errors.New("segfile: offset below the end of the previous segment")

// Class is what a break in a segment's chain of valid records is.
type Class int

const (
	// Corrupt: a record that does not check out where a valid one must
	// be: valid data resumes after it, or it is in a closed segment, or it
	// is complete and its CRC matches but its offset is not the one its
	// place requires (no torn write can make that).
	Corrupt Class = iota + 1
	// Incomplete: the end of the active segment, a record that runs past
	// the end of the data, fails its check or is zeros, with nothing valid
	// after it: being written now, or torn by a crash.
	Incomplete
)

func (c Class) String() string {
	switch c {
	case Corrupt:
		return "corrupt"
	case Incomplete:
		return "incomplete"
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// Rule names how valid data was found again after damage, strongest
// first (docs/format.md).
type Rule int

const (
	// NotResumed: nothing valid follows the damage in this segment.
	NotResumed Rule = iota
	// BySelf: the failing record is itself sound and confirmed; only its
	// offset is not the one expected (offsets were skipped, or the
	// segment is misnamed).
	BySelf
	// ByClaimedEnd: a valid record where the failing one claims to end.
	ByClaimedEnd
	// ByIndex: a record an index entry names, with that offset.
	ByIndex
	// ByScan: a record found byte by byte.
	ByScan
)

func (r Rule) String() string {
	switch r {
	case NotResumed:
		return "none"
	case BySelf:
		return "the record itself"
	case ByClaimedEnd:
		return "the damaged record's claimed end"
	case ByIndex:
		return "an index entry"
	case ByScan:
		return "a byte scan"
	}
	return fmt.Sprintf("rule(%d)", int(r))
}

// Damage is where a segment's chain of valid records breaks, and what
// follows.
type Damage struct {
	Path   string // the segment's .log
	Pos    int64  // byte position of the record that fails
	Offset uint64 // the offset expected there
	Class  Class
	// Reason is format.ErrShort, ErrKeyLen, ErrCRC or ErrOffset, or
	// ErrOverlap.
	Reason error
	// Header is the failing record's header as stored, when HeaderOK (its
	// 28 bytes were in the data; with ErrKeyLen too).
	Header   format.Header
	HeaderOK bool
	// Sound: the failing record is complete and its CRC matches; only its
	// offset is wrong.
	Sound bool
	// End is where the damaged bytes end: the position valid records
	// resume at when Resumed, else the end of the data.
	End          int64
	Resumed      bool
	ResumeOffset uint64 // the offset of the record at End, when Resumed
	By           Rule
	Zeros        bool  // every byte in [Pos, End) is zero (and there is one)
	Limit        int64 // the end of the data the verdict was made against
	Active       bool  // in the partition's active segment
}

// Lost is the offsets the damage takes: [Offset, ResumeOffset) when
// valid data resumes, else none known (the end of the segment's data).
func (d *Damage) Lost() (from, to uint64, ok bool) {
	if !d.Resumed || d.ResumeOffset <= d.Offset {
		return 0, 0, false
	}
	return d.Offset, d.ResumeOffset, true
}

// Error is the damage as a reader reports it.
func (d *Damage) Error() string {
	return fmt.Sprintf("%s record at byte %d of %s (expected offset %d): %s", d.Class, d.Pos, d.Path, d.Offset, d.Explain())
}

// Unwrap is the reason, for errors.Is.
func (d *Damage) Unwrap() error { return d.Reason }

// Misnamed reports whether the damage is only the segment's name: its
// first record is sound and confirmed, with an offset other than the name's.
func (d *Damage) Misnamed() bool {
	return d.Pos == 0 && d.End == 0 && d.Resumed && errors.Is(d.Reason, format.ErrOffset)
}

// Explain says in words why the record at Pos fails, and what follows.
func (d *Damage) Explain() string {
	var b strings.Builder
	b.WriteString(d.why())
	switch {
	case d.Resumed && d.End == d.Pos && d.Pos == 0:
		fmt.Fprintf(&b, ": its records are valid from offset %d on", d.ResumeOffset)
	case d.Resumed && d.End == d.Pos:
		fmt.Fprintf(&b, ": offsets %d..%d are missing inside the segment", d.Offset, d.ResumeOffset-1)
	case d.Resumed:
		fmt.Fprintf(&b, "; valid records resume at byte %d with offset %d", d.End, d.ResumeOffset)
		if d.ResumeOffset > d.Offset {
			fmt.Fprintf(&b, " (offsets %d..%d lost)", d.Offset, d.ResumeOffset-1)
		}
		fmt.Fprintf(&b, ", found by %s", d.By)
	case d.Class == Corrupt:
		which := "closed"
		if d.Active {
			which = "active"
		}
		fmt.Fprintf(&b, "; no valid record follows: the last %d bytes of this %s segment are unreadable", d.End-d.Pos, which)
	}
	return b.String()
}

func (d *Damage) why() string {
	h := &d.Header
	switch {
	case d.Zeros:
		return fmt.Sprintf("%d zero bytes", d.End-d.Pos)
	case errors.Is(d.Reason, ErrOverlap):
		return fmt.Sprintf("the segment's records start at offset %d, but the segment before goes on to offset %d: offsets %d..%d are in both", h.Offset, d.Offset-1, h.Offset, d.Offset-1)
	case errors.Is(d.Reason, format.ErrOffset) && d.Pos == 0:
		return fmt.Sprintf("the first record has offset %d, but the segment's base offset is %d", h.Offset, d.Offset)
	case errors.Is(d.Reason, format.ErrOffset):
		return fmt.Sprintf("offset %d where %d was expected", h.Offset, d.Offset)
	case errors.Is(d.Reason, format.ErrKeyLen):
		return fmt.Sprintf("keylen %d larger than size %d", h.KeyLen, h.Size)
	case errors.Is(d.Reason, format.ErrCRC):
		return fmt.Sprintf("crc mismatch (stored 0x%08x)", h.CRC)
	case errors.Is(d.Reason, format.ErrShort) && !d.HeaderOK:
		return fmt.Sprintf("only %d bytes, less than a record header", d.Limit-d.Pos)
	case errors.Is(d.Reason, format.ErrShort):
		return fmt.Sprintf("a record of %d bytes runs past the end of the file (%d bytes left)", h.RecordLen(), d.Limit-d.Pos)
	}
	return d.Reason.Error()
}
