package segfile

import (
	"encoding/binary"
	"io"

	"github.com/seglog/seglog/format/kafka"
)

// kafkaHeaderChunk is a header walk's read: small, since most of what it
// reads it skips.
const kafkaHeaderChunk = 64 << 10

// KafkaHeaders walks a Kafka .log's entries by their headers alone: a
// record batch's 61 bytes are read and parsed, its records and CRC left
// alone, so a walk costs a read per chunk of small batches or per large
// one, and no decompression. A legacy message is read whole (its header
// is its fields). It stops at the first entry whose framing or header
// fails; a KafkaScanner, from Pos, says what the damage is.
type KafkaHeaders struct {
	r      *reader
	limit  int64
	max    int64
	pos    int64
	batch  KafkaBatch
	broken bool
	err    error
}

// NewKafkaHeaders walks the .log f, of size bytes, from its first byte;
// entries above maxBatch bytes (0: DefaultKafkaMaxBatch) break the walk.
func NewKafkaHeaders(f io.ReaderAt, size int64, path string, maxBatch int64) *KafkaHeaders {
	if maxBatch <= 0 {
		maxBatch = DefaultKafkaMaxBatch
	}
	r := newReader(sizedFile{f, path, size})
	r.max, r.chunk, r.size = kafkaHeaderChunk, kafkaHeaderChunk, size
	return &KafkaHeaders{r: r, limit: size, max: maxBatch}
}

// Next moves to the next entry; false at the end of the file, at an
// entry that does not frame (Broken) or on an I/O error (Err).
func (w *KafkaHeaders) Next() bool {
	if w.broken || w.err != nil || w.pos >= w.limit {
		return false
	}
	if err := w.entry(); err != nil {
		if isKafkaIOError(err) {
			w.err = err
		} else {
			w.broken = true
		}
		return false
	}
	w.pos += w.Size()
	return true
}

// entry reads the header of the entry at w.pos into w.batch.
func (w *KafkaHeaders) entry() error {
	b := &w.batch
	left := w.limit - w.pos
	if left <= kafka.MagicAt {
		return kafka.ErrShort
	}
	hb, err := w.r.window(w.pos, min(left, kafka.BatchHeaderLen))
	if err != nil {
		return shortToKafka(err)
	}
	length := int32(binary.BigEndian.Uint32(hb[kafka.LogOverhead-4:]))
	size := kafka.LogOverhead + int64(length)
	*b = KafkaBatch{Pos: w.pos, Magic: int8(hb[kafka.MagicAt])}
	switch {
	case length < kafkaMinEntry:
		return errKafkaLength
	case b.Magic < 0 || b.Magic > 2:
		return errKafkaMagic
	case size > w.max:
		return ErrKafkaBatchSize
	case size > left:
		return kafka.ErrShort
	}
	if b.Magic == 2 {
		b.Header, err = kafka.ParseBatchHeader(hb)
		b.Bytes = hb // the header only: Size is the header's claim
		return err
	}
	if b.Bytes, err = w.r.window(w.pos, size); err != nil {
		return shortToKafka(err)
	}
	b.Message, err = kafka.ParseLegacyMessage(b.Bytes)
	return err
}

// Batch is the current entry. A record batch's Bytes are its header
// only: its length is the walker's Size, not the batch's.
func (w *KafkaHeaders) Batch() *KafkaBatch { return &w.batch }

// Size is the current entry's length in the file.
func (w *KafkaHeaders) Size() int64 {
	if w.batch.Legacy() {
		return w.batch.Message.Size()
	}
	return w.batch.Header.Size()
}

// Pos is where the next entry starts: after Next returned false, the
// end of the file or the entry that broke the walk.
func (w *KafkaHeaders) Pos() int64 { return w.pos }

// Broken reports whether the walk stopped at an entry that does not
// frame, before the end of the file.
func (w *KafkaHeaders) Broken() bool { return w.broken }

// Err is the I/O error the walk stopped at, if any.
func (w *KafkaHeaders) Err() error { return w.err }

// KafkaAbort reports whether a control record is an abort marker: its
// key says so. Kafka's consumer decides by the key alone; a value that
// does not decode is the record's damage (KafkaControl), not a commit.
func KafkaAbort(rec *kafka.Record) bool {
	k, err := kafka.ParseControlKey(rec.Key)
	return err == nil && k.Type == kafka.ControlAbort
}

// KafkaControl decodes a control record: its key and, for a transaction
// marker, its value. The error is the record's damage.
func KafkaControl(rec *kafka.Record) (kafka.ControlType, error) {
	k, err := kafka.ParseControlKey(rec.Key)
	if err != nil {
		return 0, err
	}
	if k.Type == kafka.ControlAbort || k.Type == kafka.ControlCommit {
		if _, err := kafka.ParseEndTransactionMarker(rec.Value); err != nil {
			return k.Type, err
		}
	}
	return k.Type, nil
}
