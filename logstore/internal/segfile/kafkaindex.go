package segfile

import (
	"fmt"
	"io"
	"sort"

	"github.com/seglog/seglog/format/kafka"
)

// A KafkaIndex reads a Kafka segment's .index or .timeindex through
// format/kafka's decoders: its real entries, the zeros Kafka
// preallocated after them left out, and binary searches over them as
// Kafka's lookups make them. It reads entries as asked, holding none.

// KafkaIndexEntry is an entry of a .index (Offset, Pos) or a .timeindex
// (Offset, Timestamp).
type KafkaIndexEntry struct {
	Offset    int64 // absolute: the segment's base plus the relative offset
	Pos       int64 // .index: the byte of the .log its batch starts at
	Timestamp int64 // .timeindex: milliseconds
}

// KafkaIndex is an open .index or .timeindex.
type KafkaIndex struct {
	r        io.ReaderAt
	size     int64
	base     int64
	time     bool
	entryLen int64
	n        int64 // real entries
}

// NewKafkaOffsetIndex reads the .index of size bytes that r reads, of the
// segment with base offset base. Beyond kafka.OffsetIndexEntries, an
// all-zero entry 0 with nothing after it is padding too: it would name
// the segment's first batch, which Kafka never indexes (an entry is
// written only once index.interval.bytes went in since the last, or
// since the segment's start), so it is what an active segment with no
// entry yet has.
func NewKafkaOffsetIndex(r io.ReaderAt, size, base int64) (*KafkaIndex, error) {
	n, err := kafka.OffsetIndexEntries(r, size)
	if err != nil {
		return nil, err
	}
	x := &KafkaIndex{r: r, size: max(size, 0), base: base, entryLen: kafka.OffsetEntryLen, n: n}
	if n == 1 {
		e, err := x.Entry(0)
		if err != nil {
			return nil, err
		}
		if e.Offset == base && e.Pos == 0 {
			x.n = 0
		}
	}
	return x, nil
}

// NewKafkaTimeIndex reads the .timeindex of size bytes that r reads, of
// the segment with base offset base.
func NewKafkaTimeIndex(r io.ReaderAt, size, base int64) (*KafkaIndex, error) {
	n, err := kafka.TimeIndexEntries(r, size)
	if err != nil {
		return nil, err
	}
	return &KafkaIndex{r: r, size: max(size, 0), base: base, time: true, entryLen: kafka.TimeEntryLen, n: n}, nil
}

// Len is how many real entries the index holds.
func (x *KafkaIndex) Len() int64 { return x.n }

// Whole is how many whole entries the file holds, preallocated zeros
// included.
func (x *KafkaIndex) Whole() int64 { return x.size / x.entryLen }

// Partial is how many bytes of a partial entry end the file.
func (x *KafkaIndex) Partial() int64 { return x.size % x.entryLen }

// EntryLen is the size of an entry.
func (x *KafkaIndex) EntryLen() int64 { return x.entryLen }

// Check is Kafka's sanity check of the file (kafka.CheckOffsetIndex,
// kafka.CheckTimeIndex): nil when the broker would take it as it is.
func (x *KafkaIndex) Check() error {
	if x.time {
		return kafka.CheckTimeIndex(x.r, x.size)
	}
	return kafka.CheckOffsetIndex(x.r, x.size)
}

// Entry reads entry i, real or not (i < Whole).
func (x *KafkaIndex) Entry(i int64) (KafkaIndexEntry, error) {
	if i < 0 || i >= x.Whole() {
		return KafkaIndexEntry{}, fmt.Errorf("index entry %d of %d: %w", i, x.Whole(), io.ErrUnexpectedEOF)
	}
	var buf [kafka.TimeEntryLen]byte
	b := buf[:x.entryLen]
	if err := kafka.ReadFullAt(x.r, b, i*x.entryLen); err != nil {
		return KafkaIndexEntry{}, err
	}
	return x.decode(b), nil
}

// decode is the entry b holds, whole.
func (x *KafkaIndex) decode(b []byte) KafkaIndexEntry {
	if x.time {
		e, _ := kafka.ParseTimeEntry(b)
		return KafkaIndexEntry{Offset: e.Offset(x.base), Timestamp: e.Timestamp}
	}
	e, _ := kafka.ParseOffsetEntry(b)
	return KafkaIndexEntry{Offset: e.Offset(x.base), Pos: int64(e.Position)}
}

// kafkaIndexBlock is how many bytes of an index Each reads at a time.
const kafkaIndexBlock = 64 << 10

// Each hands entries [from, to) to fn in order, reading a block at a
// time; to may run into the preallocated zeros (at most Whole).
func (x *KafkaIndex) Each(from, to int64, fn func(i int64, e KafkaIndexEntry) error) error {
	to = min(to, x.Whole())
	buf := make([]byte, min(max(to-from, 0)*x.entryLen, kafkaIndexBlock/x.entryLen*x.entryLen))
	for i := max(from, 0); i < to; {
		k := min(to-i, int64(len(buf))/x.entryLen)
		b := buf[:k*x.entryLen]
		if err := kafka.ReadFullAt(x.r, b, i*x.entryLen); err != nil {
			return err
		}
		for ; len(b) > 0; b = b[x.entryLen:] {
			if err := fn(i, x.decode(b[:x.entryLen])); err != nil {
				return err
			}
			i++
		}
	}
	return nil
}

// FloorOffset is the last real entry whose offset is at or below off, as
// Kafka's OffsetIndex.lookup finds it by binary search (taking the
// entries as sorted); ok is false when none is.
func (x *KafkaIndex) FloorOffset(off int64) (i int64, ok bool, err error) {
	return x.floor(func(e KafkaIndexEntry) bool { return e.Offset > off })
}

// FloorPos is the last real .index entry whose position is at or below
// pos, by binary search (taking the entries as sorted); ok is false when
// none is.
func (x *KafkaIndex) FloorPos(pos int64) (i int64, ok bool, err error) {
	return x.floor(func(e KafkaIndexEntry) bool { return e.Pos > pos })
}

// FloorTime is the last real .timeindex entry whose timestamp is at or
// below ts (milliseconds), as Kafka's TimeIndex.lookup finds it; ok is
// false when none is.
func (x *KafkaIndex) FloorTime(ts int64) (i int64, ok bool, err error) {
	return x.floor(func(e KafkaIndexEntry) bool { return e.Timestamp > ts })
}

// floor is the last real entry before the first for which above holds.
func (x *KafkaIndex) floor(above func(KafkaIndexEntry) bool) (int64, bool, error) {
	var ferr error
	n := sort.Search(int(x.n), func(i int) bool {
		if ferr != nil {
			return true
		}
		e, err := x.Entry(int64(i))
		ferr = err
		return err != nil || above(e)
	})
	if ferr != nil {
		return 0, false, ferr
	}
	return int64(n) - 1, n > 0, nil
}

// EachAbortedTxn hands each whole entry of the .txnindex of size bytes
// that r reads to fn, in order; a partial last entry is left out (Kafka
// passes over it too; CheckKafkaTxnIndex reports it).
func EachAbortedTxn(r io.ReaderAt, size int64, fn func(i int64, t kafka.AbortedTxn) error) error {
	const block = kafkaIndexBlock / kafka.AbortedTxnLen * kafka.AbortedTxnLen
	n := max(size, 0) / kafka.AbortedTxnLen
	buf := make([]byte, min(n*kafka.AbortedTxnLen, block))
	for i := int64(0); i < n; {
		k := min(n-i, int64(len(buf))/kafka.AbortedTxnLen)
		b := buf[:k*kafka.AbortedTxnLen]
		if err := kafka.ReadFullAt(r, b, i*kafka.AbortedTxnLen); err != nil {
			return err
		}
		for ; len(b) > 0; b = b[kafka.AbortedTxnLen:] {
			t, _ := kafka.ParseAbortedTxn(b) // a whole entry: CheckKafkaTxnIndex judges its version
			if err := fn(i, t); err != nil {
				return err
			}
			i++
		}
	}
	return nil
}

// CheckKafkaTxnIndex is kafka.CheckTxnIndex: whole entries of version 0,
// in order, none below the segment's base offset.
func CheckKafkaTxnIndex(r io.ReaderAt, size, base int64) error {
	return kafka.CheckTxnIndex(r, size, base)
}

// ParseKafkaSnapshot decodes a whole producer-state snapshot.
func ParseKafkaSnapshot(b []byte) (kafka.Snapshot, error) { return kafka.ParseSnapshot(b) }
