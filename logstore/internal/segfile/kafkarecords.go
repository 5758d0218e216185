package segfile

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/seglog/seglog/format/kafka"
)

// KafkaRecordError is damage inside a batch whose CRC matched: its
// records do not decompress, do not decode, or disagree with its header.
// No torn write makes that: it is corruption the batch was written with.
type KafkaRecordError struct {
	Pos    int64 // the batch's byte position
	Base   int64 // its base offset
	Last   int64 // its last offset
	Record int   // the failing record's index in the batch; -1 for the batch as a whole
	Err    error // kafka.ErrFormat, ErrKafkaDecompress, ErrKafkaDecompressLimit, kafka.ErrLegacyCompressed...
}

func (e *KafkaRecordError) Error() string {
	at := fmt.Sprintf("record batch at byte %d (offsets %d..%d)", e.Pos, e.Base, e.Last)
	if e.Record >= 0 {
		return fmt.Sprintf("%s, record %d: %v", at, e.Record, e.Err)
	}
	return fmt.Sprintf("%s: %v", at, e.Err)
}

func (e *KafkaRecordError) Unwrap() error { return e.Err }

// KafkaRecords is a cursor over the records of one entry a KafkaScanner
// yielded: a batch's records, decompressed, or a legacy message (or a
// compressed legacy wrapper's inner messages). One serves batch after
// batch, reusing its buffers and decoders:
//
//	recs := NewKafkaRecords(0)
//	defer recs.Close()
//	for scan.Next() {
//		recs.Reset(scan.Batch())
//		for recs.Next() {
//			use(recs.Offset(), recs.Timestamp(), recs.Record())
//		}
//		if err := recs.Err(); err != nil { ... }
//	}
//
// Every record it yields has an offset inside its batch's range, above
// the one before; a batch holding fewer or more records than its header
// counts, or bytes after them, fails with a *KafkaRecordError.
type KafkaRecords struct {
	dec decompressor

	b       *KafkaBatch
	started bool
	v2      bool   // reading a record batch's records, its header counting
	count   int    // this many
	data    []byte // the records (or inner messages) not read yet
	decoded int    // bytes of records the batch held, decompressed
	read    int    // records yielded
	rec     kafka.Record
	offset  int64
	ts      int64
	prev    int64 // the last offset yielded
	// legacyBase turns a magic 1 wrapper's inner relative offsets into
	// offsets: the wrapper's offset minus its last inner message's.
	legacyBase int64
	err        error
}

// NewKafkaRecords is a cursor decompressing a batch's records to at most
// maxDecompressed bytes; 0 means DefaultKafkaMaxDecompressed.
func NewKafkaRecords(maxDecompressed int64) *KafkaRecords {
	if maxDecompressed <= 0 {
		maxDecompressed = DefaultKafkaMaxDecompressed
	}
	return &KafkaRecords{dec: decompressor{limit: maxDecompressed}}
}

// Reset makes the cursor read b's records, from the first. b and its
// bytes must stay as they are while it does: read the records before the
// scanner moves on.
func (c *KafkaRecords) Reset(b *KafkaBatch) {
	c.v2 = false
	c.b, c.started, c.data, c.decoded, c.read, c.err = b, false, nil, 0, 0, nil
	c.prev = -1 // a legacy wrapper's header knows only its last offset
	if !b.Legacy() {
		c.prev = b.Header.BaseOffset - 1
	}
}

// Next advances to the next record; false at the end of the batch's
// records or at damage (Err). A record batch's next record, when it
// decodes the fast way and follows the one before, takes one call below
// the caller's: at 100 B a record, every call more costs a twentieth of
// a read. Everything else is next's.
func (c *KafkaRecords) Next() bool {
	if c.v2 && c.read < c.count && len(c.data) > 0 {
		if n, ok := kafka.TryParseRecord(c.data, &c.rec); ok {
			if off, ok := c.follows(); ok {
				return c.take(n, off)
			}
		}
	}
	return c.next()
}

// next is Next for every record: a batch's first, one that needs
// kafka.ParseRecord, a legacy message, and the end of the records or
// damage.
func (c *KafkaRecords) next() bool {
	if c.b == nil || c.err != nil {
		return false
	}
	if !c.started {
		c.started = true
		if c.err = c.start(); c.err != nil {
			return false
		}
		c.v2, c.count = !c.b.Legacy(), int(c.b.Header.RecordsCount)
	}
	if !c.v2 {
		if err := c.nextLegacy(); err != nil {
			return c.stop(err)
		}
		c.read++
		c.prev = c.offset
		return true
	}
	if c.read == c.count || len(c.data) == 0 {
		return c.stop(c.countDamage())
	}
	n, err := kafka.ParseRecord(c.data, &c.rec)
	if err != nil {
		return c.stop(c.damage(c.read, err))
	}
	off, ok := c.follows()
	if !ok {
		return c.stop(c.deltaDamage())
	}
	return c.take(n, off)
}

// stop ends the batch's records at err: errEnd, or damage.
func (c *KafkaRecords) stop(err error) bool {
	c.v2, c.err = false, err
	return false
}

// follows is the offset of the record just decoded, if it lies inside
// the batch and above the record before.
func (c *KafkaRecords) follows() (int64, bool) {
	h := &c.b.Header
	delta := c.rec.OffsetDelta
	off := h.BaseOffset + int64(delta)
	return off, delta >= 0 && delta <= h.LastOffsetDelta && off > c.prev
}

// take makes the record just decoded, of n bytes and at offset off, the
// current one.
func (c *KafkaRecords) take(n int, off int64) bool {
	h := &c.b.Header
	c.data = c.data[n:]
	c.offset, c.ts = off, h.BaseTimestamp+c.rec.TimestampDelta
	if h.LogAppendTime() {
		c.ts = h.MaxTimestamp
	}
	c.read++
	c.prev = off
	return true
}

// errEnd is the end of a batch's records, no failure.
var errEnd = errors.New("end of records")

// Record is the current record, reused by the next (a legacy message's
// has no deltas and no headers). Its key, value and headers alias the
// batch's bytes or the cursor's buffer: valid until the cursor reads
// another batch.
func (c *KafkaRecords) Record() *kafka.Record { return &c.rec }

// Offset is the current record's offset.
func (c *KafkaRecords) Offset() int64 { return c.offset }

// Timestamp is the current record's timestamp, in milliseconds: the
// batch's base timestamp plus its delta, or with log-append time the
// batch's max timestamp, as Kafka reads them; kafka.NoTimestamp for a
// magic 0 message.
func (c *KafkaRecords) Timestamp() int64 { return c.ts }

// Err is the damage Next stopped at, a *KafkaRecordError; nil at the end.
func (c *KafkaRecords) Err() error {
	if c.err == errEnd {
		return nil
	}
	return c.err
}

// Decoded is how many bytes the batch's records take decompressed, once
// Next has been called.
func (c *KafkaRecords) Decoded() int { return c.decoded }

// Close releases the decoders.
func (c *KafkaRecords) Close() { c.dec.close() }

// damage is err as a failure of the batch (record -1) or of its record.
func (c *KafkaRecords) damage(record int, err error) error {
	return &KafkaRecordError{Pos: c.b.Pos, Base: c.b.BaseOffset(), Last: c.b.LastOffset(), Record: record, Err: err}
}

// start sets data to the batch's records, decompressed.
func (c *KafkaRecords) start() error {
	b := c.b
	var src []byte
	var codec kafka.Codec
	switch {
	case b.Legacy() && b.Message.Codec() == kafka.CodecNone:
		return nil
	case b.Legacy():
		src, codec = b.Message.Value, b.Message.Codec()
	case b.Header.RecordsCount == 0 && b.Header.Codec() != kafka.CodecNone:
		return nil // Kafka reads nothing of an empty batch
	default:
		src, codec = b.Header.Records(b.Bytes), b.Header.Codec()
	}
	if codec == kafka.CodecNone {
		c.data = src
	} else {
		out, err := c.dec.decompress(codec, src)
		if err != nil {
			return c.damage(-1, err)
		}
		c.data = out
	}
	c.decoded = len(c.data)
	if b.Legacy() {
		return c.legacyOffsets()
	}
	return nil
}

// countDamage is the end of the batch's records when c.read of them are
// read or no bytes are left: errEnd when both, else damage.
func (c *KafkaRecords) countDamage() error {
	h := &c.b.Header
	switch {
	case c.read == int(h.RecordsCount) && len(c.data) > 0:
		return c.damage(-1, fmt.Errorf("%d bytes after the %d records the header counts: %w", len(c.data), h.RecordsCount, kafka.ErrFormat))
	case c.read != int(h.RecordsCount):
		return c.damage(-1, fmt.Errorf("%d records where the header counts %d: %w", c.read, h.RecordsCount, kafka.ErrFormat))
	}
	return errEnd
}

// deltaDamage is the current record's offset delta outside its batch, or
// not above the record before.
func (c *KafkaRecords) deltaDamage() error {
	h := &c.b.Header
	delta := c.rec.OffsetDelta
	if delta < 0 || delta > h.LastOffsetDelta {
		return c.damage(c.read, fmt.Errorf("offset delta %d is outside the batch's 0..%d: %w", delta, h.LastOffsetDelta, kafka.ErrFormat))
	}
	return c.damage(c.read, fmt.Errorf("offset %d does not follow the record before it, at %d: %w", h.BaseOffset+int64(delta), c.prev, kafka.ErrFormat))
}

// nextLegacy yields a legacy message, or a wrapper's next inner message.
func (c *KafkaRecords) nextLegacy() error {
	w := &c.b.Message
	if w.Codec() == kafka.CodecNone {
		if c.read > 0 {
			return errEnd
		}
		c.setLegacy(w, w.Offset, w.Timestamp)
		return nil
	}
	if len(c.data) == 0 {
		if c.read == 0 {
			return c.damage(-1, fmt.Errorf("a compressed message with no inner messages: %w", kafka.ErrFormat))
		}
		return errEnd
	}
	m, err := kafka.ParseLegacyMessage(c.data)
	if err != nil {
		return c.damage(c.read, err)
	}
	c.data = c.data[m.Size():]
	off, ts := m.Offset, m.Timestamp
	if w.Magic == 1 {
		off = c.legacyBase + m.Offset
	}
	if w.LogAppendTime() {
		ts = w.Timestamp
	}
	switch {
	case m.Codec() != kafka.CodecNone:
		return c.damage(c.read, fmt.Errorf("a compressed message inside a compressed one: %w", kafka.ErrFormat))
	case m.Magic != w.Magic:
		return c.damage(c.read, fmt.Errorf("magic %d inside a magic %d message: %w", m.Magic, w.Magic, kafka.ErrMagic))
	case off <= c.prev || off > w.Offset:
		return c.damage(c.read, fmt.Errorf("offset %d is not between the message before it, at %d, and the wrapper's %d: %w", off, c.prev, w.Offset, kafka.ErrFormat))
	}
	c.setLegacy(&m, off, ts)
	return nil
}

// setLegacy makes m, with offset off and timestamp ts, the current record.
func (c *KafkaRecords) setLegacy(m *kafka.LegacyMessage, off, ts int64) {
	c.rec = kafka.Record{Attributes: m.Attributes, Key: m.Key, Value: m.Value, Headers: c.rec.Headers[:0]}
	c.offset, c.ts = off, ts
}

// legacyOffsets finds a magic 1 wrapper's base: its inner messages carry
// offsets relative to the first, and the wrapper the last one's offset.
// Walking their framing costs a header read each.
func (c *KafkaRecords) legacyOffsets() error {
	w := &c.b.Message
	if w.Magic == 0 {
		return nil // inner messages carry their own offsets
	}
	last := int64(-1)
	for rest := c.data; len(rest) > 0; {
		if len(rest) < kafka.LogOverhead {
			return c.damage(-1, fmt.Errorf("%d bytes after the last inner message: %w", len(rest), kafka.ErrFormat))
		}
		last = int64(binary.BigEndian.Uint64(rest))
		size := kafka.LogOverhead + int64(int32(binary.BigEndian.Uint32(rest[kafka.LogOverhead-4:])))
		if size < kafka.LogOverhead || size > int64(len(rest)) {
			return c.damage(-1, fmt.Errorf("an inner message of %d bytes where %d are left: %w", size, len(rest), kafka.ErrFormat))
		}
		rest = rest[size:]
	}
	c.legacyBase = w.Offset - last
	return nil
}
