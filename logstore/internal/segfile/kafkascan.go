package segfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/format/kafka"
)

// An Apache Kafka .log is a sequence of entries, each its offset (i64)
// and the length of the rest (i32), its magic byte at byte 16: record
// batches (magic 2), or the legacy messages of magic 0 and 1. A
// KafkaScanner walks them in file order and checks each one's framing,
// CRC and offsets; it reports where the chain of valid entries breaks as
// a KafkaDamage, classified as seglog's own layout's breaks are
// (Corrupt, or Incomplete: a torn tail), and where valid data resumes.

const (
	// DefaultKafkaMaxBatch is KafkaOptions.MaxBatch's default: far above
	// Kafka's own default limit (message.max.bytes, 1 MiB).
	DefaultKafkaMaxBatch = 64 << 20
	// kafkaChunk is a scan's own read, as seglog's: a long scan reads
	// ahead in larger chunks, and a reader held open on each of many
	// partitions (read --merge) must not hold much.
	kafkaChunk = scanChunk
	// kafkaMinEntry is Kafka's smallest entry length: a magic 0 message
	// with a null key and value (LegacyRecord.RECORD_OVERHEAD_V0).
	kafkaMinEntry = 14
)

var (
	// ErrKafkaOffset means a batch's base offset is below the previous
	// batch's, or below the segment's base offset.
	ErrKafkaOffset = errors.New("base offset out of order")
	// ErrKafkaBatchSize means an entry's length is above
	// KafkaOptions.MaxBatch: it is not read.
	ErrKafkaBatchSize = errors.New("batch larger than the largest taken")

	// The framing's own failures, before a codec sees the entry.
	errKafkaLength = fmt.Errorf("entry shorter than the smallest message: %w", kafka.ErrFormat)
	errKafkaMagic  = fmt.Errorf("magic byte none of Kafka's: %w", kafka.ErrMagic)
	// errKafkaChanged: the entry's length changed between the read of its
	// header and that of the rest (the file is being rewritten there).
	errKafkaChanged = fmt.Errorf("entry whose length changed while it was read: %w", kafka.ErrCRC)
)

// KafkaOptions choose how a KafkaScanner reads.
type KafkaOptions struct {
	Path string // the .log, for messages
	// Base is the segment's base offset, from its name: no batch's base
	// offset is below it.
	Base int64
	// MaxBatch is the largest entry taken, in bytes; 0 means
	// DefaultKafkaMaxBatch. A length field above it is damage, and no
	// read is ever larger than it or the buffer's chunk.
	MaxBatch int64
	// Chunk is a read's size; 0 means 128 KiB.
	Chunk int
	// Buffer, if set, is where reads go while entries fit in it: a
	// caller scanning many segments reuses one.
	Buffer []byte
	// ReadAhead: a long sequential scan may read and check ahead on a
	// second goroutine; Close stops it.
	ReadAhead bool
}

// KafkaBatch is an entry of a Kafka .log that checked out: a record
// batch, or a legacy message (Magic 0 or 1).
type KafkaBatch struct {
	Pos   int64  // byte position in the file
	Bytes []byte // the whole entry, valid until the scanner moves on
	Magic int8
	// Header is a record batch's header; zero for a legacy message.
	Header kafka.BatchHeader
	// Message is a legacy message, its key and value aliasing Bytes;
	// zero for a record batch.
	Message kafka.LegacyMessage
}

// Legacy reports whether the entry is a magic 0 or 1 message.
func (b *KafkaBatch) Legacy() bool { return b.Magic < 2 }

// BaseOffset is a batch's base offset, or a legacy message's offset: a
// compressed wrapper's is its last inner message's, the only one its
// header knows.
func (b *KafkaBatch) BaseOffset() int64 {
	if b.Legacy() {
		return b.Message.Offset
	}
	return b.Header.BaseOffset
}

// LastOffset is the offset of the batch's last record as its header says
// (a legacy message's own offset).
func (b *KafkaBatch) LastOffset() int64 {
	if b.Legacy() {
		return b.Message.Offset
	}
	return b.Header.LastOffset()
}

// MaxTimestamp is the largest timestamp the entry's header gives: a
// batch's max timestamp, a legacy message's own (a compressed wrapper's is
// its inner messages' largest, or the log append time).
func (b *KafkaBatch) MaxTimestamp() int64 {
	if b.Legacy() {
		return b.Message.Timestamp
	}
	return b.Header.MaxTimestamp
}

// Codec is the compression of the entry's records.
func (b *KafkaBatch) Codec() kafka.Codec {
	if b.Legacy() {
		return b.Message.Codec()
	}
	return b.Header.Codec()
}

// Size is the entry's length in the file.
func (b *KafkaBatch) Size() int64 { return int64(len(b.Bytes)) }

// A KafkaScanner walks a Kafka .log's entries in file order. Every entry
// it yields is whole inside the file and the maximum batch size, its
// header checks out (kafka.ParseBatchHeader, or the legacy message's
// fields) and so does its CRC, and its base offset is at or above the
// segment's and the previous entry's. It reads in blocks of
// KafkaOptions.Chunk and holds at most one entry besides: never the file.
type KafkaScanner struct {
	opts  KafkaOptions
	r     *reader
	limit int64 // the end of the data

	pos      int64 // where the next entry starts
	taken    bool  // an entry was taken since the start or the last StartAt
	prevBase int64 // the last entry taken's base offset, when taken
	prevLast int64 // and its last offset

	batch KafkaBatch // the current entry
	probe KafkaBatch // a resync candidate's

	dmg *KafkaDamage
	err error
}

// NewKafkaScanner reads the Kafka .log f, of size bytes, from its first
// byte.
func NewKafkaScanner(f io.ReaderAt, size int64, opts KafkaOptions) *KafkaScanner {
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultKafkaMaxBatch
	}
	if opts.Chunk <= 0 {
		opts.Chunk = kafkaChunk
	}
	r := newReader(sizedFile{f, opts.Path, size})
	r.max, r.chunk, r.size = opts.Chunk, opts.Chunk, size
	// A file one read-ahead chunk holds gains nothing from reading ahead.
	r.framing, r.scan = kafkaFraming{maxBatch: opts.MaxBatch}, opts.ReadAhead && size > aheadChunkSize
	if opts.Buffer != nil {
		r.buf = opts.Buffer[:0]
	}
	return &KafkaScanner{opts: opts, r: r, limit: size}
}

// StartAt makes the scan go on from pos, where an entry is known to
// start (a .index entry's position), forgetting any damage and the
// entries read: the next one need only be at or above the segment's base
// offset.
func (s *KafkaScanner) StartAt(pos int64) {
	s.pos, s.taken, s.dmg, s.err = pos, false, nil, nil
}

// EntryAt reads the entry at pos and checks it as Next would after
// StartAt(pos): its framing, header and CRC, and its base offset against
// the segment's. Unlike Next it neither looks past damage for where valid
// data resumes (a byte scan, as long as the rest of the file) nor moves
// the scan. ok is false when the entry does not check out; err is an I/O
// error. The entry is valid until the scanner moves on.
func (s *KafkaScanner) EntryAt(pos int64) (b *KafkaBatch, ok bool, err error) {
	if pos < 0 || pos >= s.limit {
		return nil, false, nil
	}
	if err := s.entry(pos, &s.probe); err != nil {
		if isKafkaIOError(err) {
			return nil, false, err
		}
		return nil, false, nil
	}
	if s.probe.BaseOffset() < s.opts.Base {
		return nil, false, nil
	}
	return &s.probe, true, nil
}

// Next advances to the next valid entry. It returns false at the end of
// the file, at damage (Damage says what it is, and Resync goes on after
// it) or on an I/O error (Err).
func (s *KafkaScanner) Next() bool {
	if s.dmg != nil || s.err != nil || s.pos >= s.limit {
		return false
	}
	err := s.entry(s.pos, &s.batch)
	if err == nil {
		err = s.order(&s.batch)
	}
	if err != nil {
		s.fail(err)
		return false
	}
	s.pos += s.batch.Size()
	s.taken, s.prevBase, s.prevLast = true, s.batch.BaseOffset(), s.batch.LastOffset()
	return true
}

// Close stops the read-ahead, if any. It does not close the file.
func (s *KafkaScanner) Close() { s.r.stopAhead() }

// Batch is the current entry, valid until the scanner moves on.
func (s *KafkaScanner) Batch() *KafkaBatch { return &s.batch }

// Pos is where the next entry starts: after Next returned false, the end
// of the valid data read (the damage's position, or the file's end).
func (s *KafkaScanner) Pos() int64 { return s.pos }

// Limit is the file's size, the end of the data.
func (s *KafkaScanner) Limit() int64 { return s.limit }

// Damage is the break Next stopped at, nil if none.
func (s *KafkaScanner) Damage() *KafkaDamage { return s.dmg }

// Err is the I/O error Next stopped at, if any.
func (s *KafkaScanner) Err() error { return s.err }

// Resync goes on after the damage Next stopped at, at the entry where
// valid data resumes (see resync). It reports whether there is one; if
// not, the scan stays at the damage, the end of the file's valid data.
func (s *KafkaScanner) Resync() bool {
	d := s.dmg
	if d == nil || !d.Resumed {
		return false
	}
	s.dmg, s.pos = nil, d.End
	return true
}

// entry reads the entry at pos into b and checks it: its framing, its
// header and its CRC. Errors are kafka's kinds, errKafkaLength,
// errKafkaMagic and ErrKafkaBatchSize, or I/O errors.
func (s *KafkaScanner) entry(pos int64, b *KafkaBatch) error {
	left := s.limit - pos
	if left <= kafka.MagicAt {
		return kafka.ErrShort
	}
	hb, err := s.r.window(pos, min(left, kafka.BatchHeaderLen))
	if err != nil {
		return shortToKafka(err)
	}
	length := int32(binary.BigEndian.Uint32(hb[kafka.LogOverhead-4:]))
	size := kafka.LogOverhead + int64(length)
	b.Pos, b.Magic = pos, int8(hb[kafka.MagicAt])
	switch {
	case length < kafkaMinEntry:
		return errKafkaLength
	case b.Magic < 0 || b.Magic > 2:
		return errKafkaMagic
	case size > s.opts.MaxBatch:
		return ErrKafkaBatchSize
	}
	b.Header, b.Message = kafka.BatchHeader{}, kafka.LegacyMessage{}
	if b.Magic == 2 {
		if b.Header, err = kafka.ParseBatchHeader(hb); err != nil {
			return err
		}
	}
	if size > left {
		return kafka.ErrShort
	}
	if b.Bytes, err = s.r.window(pos, size); err != nil {
		return shortToKafka(err)
	}
	// The header was read first, maybe from another read of the file: a
	// batch rewritten in between (a follower truncating and appending
	// again) is judged by the bytes as they are now, header and all.
	checked := s.r.checkedAhead(pos, pos+size)
	if b.Magic == 2 {
		if b.Header, err = kafka.ParseBatchHeader(b.Bytes); err != nil {
			return err
		}
		if b.Header.Size() != size {
			return errKafkaChanged
		}
		if checked {
			return nil
		}
		return b.Header.CheckCRC(b.Bytes)
	}
	if b.Message, err = kafka.ParseLegacyMessage(b.Bytes); err == nil && b.Message.Size() != size {
		return errKafkaChanged
	}
	return err
}

// kafkaFraming is a Kafka .log's entries as a read-ahead checks them: the
// framing the scan checks first, and a record batch's CRC (a legacy
// message is parsed whole by the scan, CRC and all).
type kafkaFraming struct{ maxBatch int64 }

func (f kafkaFraming) whole(b []byte, check bool) int {
	p := 0
	for {
		size, ok := f.size(b[p:])
		if !ok || size > int64(len(b)-p) {
			return p
		}
		e := b[p : p+int(size)]
		switch e[kafka.MagicAt] {
		case 0, 1:
		case 2:
			if check {
				h, err := kafka.ParseBatchHeader(e)
				if err != nil || h.CheckCRC(e) != nil {
					return p
				}
			}
		default:
			return p
		}
		p += int(size)
	}
}

func (f kafkaFraming) mayStart(b []byte) bool {
	if len(b) <= kafka.MagicAt {
		return true
	}
	_, ok := f.size(b)
	return ok && b[kafka.MagicAt] <= 2
}

// size is the length of the entry b starts with, if its length field is
// one the scan takes; at least kafka.MagicAt+1 bytes.
func (f kafkaFraming) size(b []byte) (int64, bool) {
	if len(b) <= kafka.MagicAt {
		return 0, false
	}
	length := int32(binary.BigEndian.Uint32(b[kafka.LogOverhead-4:]))
	size := kafka.LogOverhead + int64(length)
	return size, length >= kafkaMinEntry && size <= f.maxBatch
}

// order checks b's offsets against the segment's base offset and the
// entry before: base offsets never decrease.
func (s *KafkaScanner) order(b *KafkaBatch) error {
	if base := b.BaseOffset(); base < s.opts.Base || s.taken && base < s.prevBase {
		return ErrKafkaOffset
	}
	return nil
}

// shortToKafka is a read's verdict in kafka's terms.
func shortToKafka(err error) error {
	if errors.Is(err, format.ErrShort) {
		return kafka.ErrShort
	}
	return err
}

// isKafkaIOError tells a failed read apart from a verdict on the bytes.
func isKafkaIOError(err error) bool {
	for _, kind := range []error{kafka.ErrShort, kafka.ErrCRC, kafka.ErrMagic, kafka.ErrFormat, ErrKafkaOffset, ErrKafkaBatchSize} {
		if errors.Is(err, kind) {
			return false
		}
	}
	return err != nil
}

// sizedFile is an io.ReaderAt of a known size as the reader wants a
// File.
type sizedFile struct {
	io.ReaderAt
	name string
	size int64
}

func (f sizedFile) Name() string               { return f.name }
func (f sizedFile) Stat() (fs.FileInfo, error) { return sizedInfo(f), nil }

type sizedInfo sizedFile

func (i sizedInfo) Name() string       { return i.name }
func (i sizedInfo) Size() int64        { return i.size }
func (i sizedInfo) Mode() fs.FileMode  { return 0o444 }
func (i sizedInfo) ModTime() time.Time { return time.Time{} }
func (i sizedInfo) IsDir() bool        { return false }
func (i sizedInfo) Sys() any           { return nil }
