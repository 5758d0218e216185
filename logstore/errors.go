package logstore

import (
	"errors"
	"fmt"

	"github.com/seglog/seglog/logstore/internal/segfile"
)

var (
	// ErrTopicNotFound means the topic's directory does not exist.
	ErrTopicNotFound = errors.New("topic not found")
	// ErrTopicExists means create found the topic already there.
	ErrTopicExists = errors.New("topic already exists")
	// ErrPartitionNotFound means a partition number is outside the topic
	// or its directory is missing.
	ErrPartitionNotFound = errors.New("partition not found")
	// ErrOverlap means a segment's records have offsets below the end of
	// the segment before it.
	ErrOverlap = segfile.ErrOverlap
	// ErrWriterFailed means an earlier write or sync of this writer failed
	// and it accepts nothing more.
	ErrWriterFailed = errors.New("writer failed earlier")
)

// CorruptionError is a record that does not check out where a valid one
// must be (docs/format.md §3): inside a closed segment, or in the active
// segment with valid data after it.
type CorruptionError struct {
	Path   string // segment file
	Pos    int64  // byte position of the record header
	Offset int64  // offset expected there, -1 if unknown
	Reason error  // a format.Err* sentinel, or ErrOverlap
	// Damage is the verdict on it, where valid data resumes among it; nil
	// when the error is not a segment's.
	Damage *segfile.Damage
}

func (e *CorruptionError) Error() string {
	where := fmt.Sprintf("byte %d of %s", e.Pos, e.Path)
	if e.Offset >= 0 {
		where += fmt.Sprintf(" (expected offset %d)", e.Offset)
	}
	what := e.Reason.Error()
	if e.Damage != nil {
		what = e.Damage.Explain()
	}
	return fmt.Sprintf("corrupt record at %s: %s", where, what)
}

func (e *CorruptionError) Unwrap() error { return e.Reason }

// OffsetRangeError is a requested offset outside what the partition holds.
type OffsetRangeError struct {
	Partition string // topic/partition or directory, for the message
	Offset    uint64
	Start     uint64 // first offset held
	Next      uint64 // next offset to be written
}

func (e *OffsetRangeError) Error() string {
	if e.Start == e.Next {
		return fmt.Sprintf("offset %d out of range for %s: it holds no records (next offset %d)", e.Offset, e.Partition, e.Next)
	}
	return fmt.Sprintf("offset %d out of range for %s: valid offsets are %d..%d", e.Offset, e.Partition, e.Start, e.Next-1)
}

// NoLongerAvailableError means retention removed records a reader was
// about to read.
type NoLongerAvailableError struct {
	Partition string
	Offset    uint64
	Start     uint64 // the partition's start now
}

func (e *NoLongerAvailableError) Error() string {
	return fmt.Sprintf("offset %d of %s is no longer available (removed by retention; the partition now starts at %d)", e.Offset, e.Partition, e.Start)
}

// LockedError means another process holds a lock seglog needs.
type LockedError struct {
	What string // "partition orders/0" or "topic orders"
	Path string
	Pid  int // holder from /proc/locks, 0 if unknown
}

func (e *LockedError) Error() string {
	s := e.What + " is locked by another process"
	if e.Pid > 0 {
		s = fmt.Sprintf("%s is locked by another process (pid %d)", e.What, e.Pid)
	}
	return s
}
