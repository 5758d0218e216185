package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A segment's .txnindex lists the transactions aborted in it (those whose
// abort marker it holds), one 34-byte entry each, in the order of their
// markers, as Kafka's TransactionIndex writes them:
//
//	| version i16 | producer id i64 | first offset i64 | last offset i64 | last stable offset i64 |
//
// The first offset may lie in an earlier segment: a transaction can span
// segments. Kafka writes the file only when a transaction is aborted, so
// most segments have none, and never preallocates it.

// AbortedTxnLen is the size of a .txnindex entry.
const AbortedTxnLen = 34

// AbortedTxnVersion is the only entry version Kafka writes.
const AbortedTxnVersion = 0

// ErrTxnIndex means a .txnindex is damaged, or shorter than an entry.
var ErrTxnIndex = errors.New("transaction index")

// AbortedTxn is an entry of a .txnindex.
type AbortedTxn struct {
	Version          int16
	ProducerID       int64
	FirstOffset      int64 // the transaction's first record
	LastOffset       int64 // its abort marker
	LastStableOffset int64 // the partition's last stable offset when it was aborted
}

// ParseAbortedTxn decodes the .txnindex entry at the start of b.
func ParseAbortedTxn(b []byte) (AbortedTxn, error) {
	if len(b) < AbortedTxnLen {
		return AbortedTxn{}, fmt.Errorf("%w: an entry takes %d bytes, %d given", ErrTxnIndex, AbortedTxnLen, len(b))
	}
	t := AbortedTxn{
		Version:          int16(binary.BigEndian.Uint16(b)),
		ProducerID:       int64(binary.BigEndian.Uint64(b[2:])),
		FirstOffset:      int64(binary.BigEndian.Uint64(b[10:])),
		LastOffset:       int64(binary.BigEndian.Uint64(b[18:])),
		LastStableOffset: int64(binary.BigEndian.Uint64(b[26:])),
	}
	if t.Version != AbortedTxnVersion {
		return t, fmt.Errorf("%w: entry version %d, Kafka writes only %d", ErrTxnIndex, t.Version, AbortedTxnVersion)
	}
	return t, nil
}

// CheckTxnIndex checks the .txnindex of size bytes that r reads, of the
// segment with base offset base: whole entries (Kafka passes over a torn
// last one; it is reported here), each of version 0 with its first offset
// not above its last, and Kafka's own checks: last offsets not below the
// base (TransactionIndex.sanityCheck) and strictly increasing (its
// append refuses anything else).
func CheckTxnIndex(r io.ReaderAt, size, base int64) error {
	var prev AbortedTxn
	err := eachEntry(r, size/AbortedTxnLen, AbortedTxnLen, func(i int64, b []byte) error {
		t, _ := ParseAbortedTxn(b) // a whole entry: only its version can be wrong
		switch {
		case t.Version != AbortedTxnVersion:
			return fmt.Errorf("%w: entry %d: version %d, Kafka writes only %d", ErrTxnIndex, i, t.Version, AbortedTxnVersion)
		case t.FirstOffset > t.LastOffset:
			return fmt.Errorf("%w: entry %d: first offset %d is above its last offset %d", ErrTxnIndex, i, t.FirstOffset, t.LastOffset)
		case t.LastOffset < base:
			return fmt.Errorf("%w: entry %d: last offset %d is below the segment's base %d", ErrTxnIndex, i, t.LastOffset, base)
		case i > 0 && t.LastOffset <= prev.LastOffset:
			return fmt.Errorf("%w: entry %d: last offset %d is not above entry %d's %d", ErrTxnIndex, i, t.LastOffset, i-1, prev.LastOffset)
		}
		prev = t
		return nil
	})
	if err != nil {
		return err
	}
	if size%AbortedTxnLen != 0 {
		return fmt.Errorf("%w: %d bytes, not a whole number of %d-byte entries", ErrTxnIndex, size, AbortedTxnLen)
	}
	return nil
}
