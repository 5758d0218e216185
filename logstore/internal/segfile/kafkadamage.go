package segfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seglog/seglog/format/kafka"
)

// KafkaDamage is where a Kafka .log's chain of valid entries breaks, and
// what follows.
type KafkaDamage struct {
	Path string // the .log
	Pos  int64  // byte position of the entry that fails
	// Class is Corrupt, or Incomplete: a torn tail, the file ending
	// inside an entry or in zero bytes with nothing valid after, as a
	// crash (or Kafka's preallocation) leaves it. Whether a torn tail is
	// normal depends on the segment's place in its partition (only those
	// past the recovery point may have one), which the caller knows.
	Class Class
	// Reason is kafka.ErrShort, ErrCRC, ErrMagic or ErrFormat (a codec's
	// error, which says what is wrong in words), ErrKafkaOffset or
	// ErrKafkaBatchSize.
	Reason error
	// What the failing entry's first 17 bytes say, when Framed (the data
	// holds them).
	Framed bool
	Offset int64 // its offset field (a batch's base offset)
	Length int32 // its length field
	Magic  int8
	// Header is a failing batch's header as stored, when HeaderOK (its
	// magic is 2 and its 61 bytes are in the data), whether or not it
	// checks out.
	Header   kafka.BatchHeader
	HeaderOK bool
	// Prev is the last offset of the valid entry before the damage; -1
	// when none was read (the file's start, or StartAt).
	Prev int64
	// Floor is the lowest base offset the failing entry could have had:
	// the previous entry's base offset, or the segment's.
	Floor int64
	// End is where the damaged bytes end: the position valid data resumes
	// at when Resumed, else the end of the file.
	End          int64
	Resumed      bool
	ResumeOffset int64 // the base offset of the entry at End, when Resumed
	By           Rule  // ByClaimedEnd or ByScan, when Resumed
	Zeros        bool  // every byte in [Pos, End) is zero (and there is one)
	Limit        int64 // the file's size the verdict was made against
	MaxBatch     int64 // the largest entry taken (KafkaOptions.MaxBatch)
}

// Error is the damage as a reader reports it.
func (d *KafkaDamage) Error() string {
	return fmt.Sprintf("%s batch at byte %d of %s: %s", d.Class, d.Pos, d.Path, d.Explain())
}

// Unwrap is the reason, for errors.Is.
func (d *KafkaDamage) Unwrap() error { return d.Reason }

// Explain says in words why the entry at Pos fails, and what follows.
func (d *KafkaDamage) Explain() string {
	var b strings.Builder
	b.WriteString(d.why())
	switch {
	case d.Resumed:
		by := "a byte scan"
		if d.By == ByClaimedEnd {
			by = "the damaged batch's claimed end"
		}
		fmt.Fprintf(&b, "; valid batches resume at byte %d with base offset %d, found by %s", d.End, d.ResumeOffset, by)
	case d.Class == Incomplete:
		fmt.Fprintf(&b, "; nothing valid follows: a torn tail of %d bytes", d.End-d.Pos)
	default:
		fmt.Fprintf(&b, "; no valid batch follows: the last %d bytes of the file are unreadable", d.End-d.Pos)
	}
	return b.String()
}

func (d *KafkaDamage) why() string {
	left := d.Limit - d.Pos
	switch {
	case d.Zeros:
		return fmt.Sprintf("%d zero bytes", d.End-d.Pos)
	case errors.Is(d.Reason, errKafkaLength):
		return fmt.Sprintf("entry length %d is less than the smallest message's %d bytes", d.Length, kafkaMinEntry)
	case errors.Is(d.Reason, errKafkaMagic):
		return fmt.Sprintf("magic byte %d is none of Kafka's (0, 1 or 2)", d.Magic)
	case errors.Is(d.Reason, ErrKafkaBatchSize):
		return fmt.Sprintf("an entry of %d bytes is larger than the largest taken, %d", kafka.LogOverhead+int64(d.Length), d.MaxBatch)
	case errors.Is(d.Reason, ErrKafkaOffset) && d.Prev < 0:
		return fmt.Sprintf("base offset %d is below the segment's base offset %d", d.Offset, d.Floor)
	case errors.Is(d.Reason, ErrKafkaOffset):
		return fmt.Sprintf("base offset %d is below the previous batch's, %d", d.Offset, d.Floor)
	case errors.Is(d.Reason, kafka.ErrShort) && !d.Framed:
		return fmt.Sprintf("only %d bytes, less than an entry's header", left)
	case errors.Is(d.Reason, kafka.ErrShort) && d.Magic == 2 && !d.HeaderOK:
		return fmt.Sprintf("the file ends inside a batch header (%d bytes left)", left)
	case errors.Is(d.Reason, kafka.ErrShort):
		return fmt.Sprintf("an entry of %d bytes runs past the end of the file (%d bytes left)", kafka.LogOverhead+int64(d.Length), left)
	}
	return d.Reason.Error()
}
