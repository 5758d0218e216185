package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"sort"

	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore/internal/segfile"
	"golang.org/x/sys/unix"
)

// KafkaReadOptions choose what ReadKafka reads.
type KafkaReadOptions struct {
	// ReadCommitted skips the records of aborted transactions, as a
	// consumer with isolation.level=read_committed does, and those of
	// transactions still open at the end of the log (see ReadKafka).
	ReadCommitted bool
}

// Records returns an iterator over the partition's data records with
// offsets >= from (and >= SetLogStart's), as ReadKafka reads them
// without ReadCommitted.
func (p *KafkaPartition) Records(from uint64) (RecordIterator, error) {
	return p.ReadKafka(from, KafkaReadOptions{})
}

// ReadKafka returns an iterator over the partition's data records with
// offsets >= from (and >= SetLogStart's), in offset order: control
// records are skipped, and so are records at offsets below one already
// read (segments that overlap). It holds one batch, decompressed within
// segfile's bound, at a time. Damage ends the iteration with a
// *CorruptionError, and SkipCorrupt goes on where valid batches resume;
// a torn tail of the active segment is the end of the data.
//
// With ReadCommitted, the records of aborted transactions are skipped as
// Kafka's consumer skips them: a producer's transactional batches from an
// aborted transaction's first offset to its abort marker. Kafka's fetch
// takes the aborted transactions from the segments' .txnindex; offline,
// a walk over the batch headers from the segment read first to the end
// finds them from the markers themselves before reading, so that an
// index that lies or is missing changes nothing (verify-crc reports it).
// Nor is there a last stable offset to stop at: a transaction with no
// marker by the end of the log is taken as open, not committed, and its
// records are skipped.
func (p *KafkaPartition) ReadKafka(from uint64, o KafkaReadOptions) (RecordIterator, error) {
	it := &kafkaRecords{p: p, from: max(from, p.logStart), committed: o.ReadCommitted}
	if len(p.segs) == 0 {
		it.closed = true
		return it, nil
	}
	it.i = max(sort.Search(len(p.segs), func(i int) bool { return p.segs[i].Base > it.from })-1, 0)
	it.next = it.from
	if o.ReadCommitted {
		aborted, open, err := p.transactions(it.i, it.from)
		if err != nil {
			return nil, err
		}
		it.txn = &kafkaTxnState{aborted: aborted, open: open, abortedPids: map[int64]int64{}}
	}
	it.recs = segfile.NewKafkaRecords(0)
	if err := it.open(); err != nil {
		it.Close()
		return nil, err
	}
	return it, nil
}

// kafkaRecords is ReadKafka's iterator.
type kafkaRecords struct {
	p         *KafkaPartition
	from      uint64
	committed bool
	next      uint64 // offsets below are read, or not the partition's
	i         int    // the segment read
	scanned   uint64 // the offset after the current segment's batches scanned so far
	ks        *kafkaScan
	recs      *segfile.KafkaRecords
	counter   *segfile.KafkaRecords // countWrapper's
	inBatch   bool                  // recs reads the current batch
	batch     *Batch
	rec       Record
	txn       *kafkaTxnState
	err       error
	dmg       *segfile.KafkaDamage // the scan's damage that ended the iteration, if that did
	ended     bool                 // SkipCorrupt found nothing after the damage
	closed    bool
	controls  uint64 // control records passed over, as their batches count them
}

// ControlRecords is how many control records (transaction markers) the
// iteration has passed over: read never gives them, import counts them.
func (it *kafkaRecords) ControlRecords() uint64 { return it.controls }

// kafkaTxnState is what read_committed knows of the transactions.
type kafkaTxnState struct {
	aborted     []KafkaAbortedTxn // by first offset (KafkaPartition.transactions)
	nextAborted int               // the first not yet taken into abortedPids
	abortedPids map[int64]int64   // producers inside an aborted transaction: its marker's offset
	open        map[int64]int64   // producers with a transaction open at the end: its first offset
}

// open starts reading segment it.i, from it.from when it holds it.
func (it *kafkaRecords) open() error {
	ks, err := it.p.openLongScan(it.i)
	if errors.Is(err, fs.ErrNotExist) {
		// Retention deleted it since the listing.
		np, err := OpenKafkaPartition(it.p.dir, it.p.name)
		if err != nil {
			return err
		}
		return np.noLongerAvailable(max(it.next, it.p.segs[it.i].Base))
	}
	if err != nil {
		return err
	}
	it.ks = ks
	it.scanned = it.p.segs[it.i].Base
	if err := it.p.seekPos(it.i, ks, it.from); err != nil {
		return err
	}
	return nil
}

// Next moves to the next record.
func (it *kafkaRecords) Next() bool {
	if it.closed || it.ended || it.err != nil {
		return false
	}
	for {
		if it.inBatch {
			if it.nextInBatch() {
				return true
			}
			if it.err != nil {
				return false
			}
			continue
		}
		if it.ks.sc.Next() {
			b := it.ks.sc.Batch()
			it.scanned = max(it.scanned, uint64(b.LastOffset())+1)
			if uint64(b.LastOffset()) < it.next {
				continue // read, or below where reading starts
			}
			skip, err := it.skipBatch(b)
			if err != nil {
				it.err = err
				return false
			}
			if !skip {
				it.batch = newBatch(b)
				it.rec.Pos, it.rec.CRC, it.rec.Batch = it.batch.Pos, it.batch.CRC, it.batch
				if b.Legacy() && b.Codec() != kafka.CodecNone {
					it.countWrapper(b)
				}
				it.recs.Reset(b)
				it.inBatch = true
			}
			continue
		}
		sc := it.ks.sc
		if err := sc.Err(); err != nil {
			it.err = it.p.ioError(it.p.segs[it.i].Log, err)
			return false
		}
		last := it.i == len(it.p.segs)-1
		if d := sc.Damage(); d != nil {
			if d.Class == segfile.Incomplete && last {
				return false // the end of the data
			}
			it.dmg, it.err = d, kafkaCorruption(d)
			return false
		}
		if last {
			return false
		}
		if it.scanned < it.p.segs[it.i+1].Base {
			if err := it.checkGap(it.scanned); err != nil {
				it.err = err
				return false
			}
		}
		if !it.nextSegment() {
			return false
		}
	}
}

// checkGap makes sure offsets from end up to the next segment listed are
// a gap, to be passed over, as Iterator.checkGap does for seglog's layout:
// they are while the current segment's file is still at its name, since
// a broker deletes (renames to .deleted) oldest first and a listing made
// meanwhile may lack segments after one it names. When it is gone, or
// replaced (the cleaner renames a .swap over it, holding what followed),
// the partition is listed again and read on from the segment holding
// end; if none is left the offsets are no longer available.
func (it *kafkaRecords) checkGap(end uint64) error {
	log := it.p.segs[it.i].Log
	if there, err := it.ks.stillAt(log); there || err != nil {
		return err
	}
	np, err := OpenKafkaPartition(it.p.dir, it.p.name)
	if err != nil {
		return err
	}
	np.logStart, np.noReadAhead = it.p.logStart, it.p.noReadAhead
	j := sort.Search(len(np.segs), func(i int) bool { return np.segs[i].Base > end }) - 1
	if j < 0 {
		return np.noLongerAvailable(end)
	}
	// nextSegment moves to j; what of it lies below end was read.
	it.p, it.i = np, j-1
	return nil
}

// nextInBatch moves to the current batch's next record at or above
// it.next; false at the batch's end or at damage (it.err).
func (it *kafkaRecords) nextInBatch() bool {
	for it.recs.Next() {
		off := uint64(it.recs.Offset())
		if off < it.next {
			continue
		}
		it.next = off + 1
		it.set(off)
		return true
	}
	it.inBatch = false
	var re *segfile.KafkaRecordError
	if errors.As(it.recs.Err(), &re) {
		it.err = kafkaRecordCorruption(it.p.segs[it.i].Log, re)
	}
	return false
}

// countWrapper fills in it.batch's first offset and count of a legacy
// compressed message set, which its header does not say, by decoding it
// once more: such sets are rare, and Kafka's own tools count them so.
func (it *kafkaRecords) countWrapper(b *segfile.KafkaBatch) {
	if it.counter == nil {
		it.counter = segfile.NewKafkaRecords(0)
	}
	c := it.counter
	c.Reset(b)
	for c.Next() {
		if it.batch.Records == 0 {
			it.batch.BaseOffset = uint64(c.Offset())
		}
		it.batch.Records++
	}
}

// set makes the cursor's record, at off, the current one.
func (it *kafkaRecords) set(off uint64) {
	kr := it.recs.Record()
	r := &it.rec
	r.Offset, r.Timestamp = off, kafkaNanos(it.recs.Timestamp())
	r.Key, r.Value = kr.Key, kr.Value // Pos, CRC and Batch are the batch's, set with it
	r.Headers = r.Headers[:0]
	for _, h := range kr.Headers {
		r.Headers = append(r.Headers, Header{Key: string(h.Key), Value: h.Value})
	}
	if len(r.Headers) == 0 {
		r.Headers = nil
	}
}

// skipBatch reports whether b's records are not read: a control batch,
// or with read_committed, an aborted or open transaction's. An abort
// marker ends its producer's aborted transaction (Kafka's consumer reads
// a control batch's first record to tell).
func (it *kafkaRecords) skipBatch(b *segfile.KafkaBatch) (bool, error) {
	h := &b.Header
	if b.Legacy() {
		return false, nil
	}
	if h.Control() && h.LastOffset() >= int64(it.next) {
		it.controls += uint64(max(h.RecordsCount, 0))
	}
	t := it.txn
	if t == nil || h.ProducerID < 0 {
		return h.Control(), nil
	}
	for t.nextAborted < len(t.aborted) && t.aborted[t.nextAborted].FirstOffset <= h.LastOffset() {
		a := t.aborted[t.nextAborted]
		t.abortedPids[a.ProducerID] = a.LastOffset
		t.nextAborted++
	}
	if h.Control() {
		it.recs.Reset(b)
		if it.recs.Next() {
			if segfile.KafkaAbort(it.recs.Record()) {
				delete(t.abortedPids, h.ProducerID)
			}
		}
		var re *segfile.KafkaRecordError
		if errors.As(it.recs.Err(), &re) {
			return true, kafkaRecordCorruption(it.p.segs[it.i].Log, re)
		}
		return true, nil
	}
	if !h.Transactional() {
		return false, nil
	}
	if first, ok := t.open[h.ProducerID]; ok && h.BaseOffset >= first {
		return true, nil
	}
	// Up to its marker: one that cannot be read ends nothing here.
	last, aborted := t.abortedPids[h.ProducerID]
	return aborted && h.BaseOffset <= last, nil
}

// nextSegment moves on to the segment after the current one.
func (it *kafkaRecords) nextSegment() bool {
	it.ks.close()
	it.ks = nil
	it.i++
	if err := it.open(); err != nil {
		it.err = err
		return false
	}
	return true
}

// SkipCorrupt goes on after the damage that ended the iteration: where
// valid batches resume, else at the next segment; after a batch whose
// records do not decode, at the batch after it. It reports whether
// there is anything to go on with; either way Err is cleared.
func (it *kafkaRecords) SkipCorrupt() bool {
	var ce *CorruptionError
	if it.closed || !errors.As(it.err, &ce) {
		return false
	}
	it.err = nil
	d := it.dmg
	it.dmg = nil
	if d == nil || it.ks.sc.Resync() {
		return true // a batch's records failed: the scan is past the batch
	}
	if it.i == len(it.p.segs)-1 {
		it.ended = true // nothing valid follows: the end of the data
		return false
	}
	return it.nextSegment()
}

// Record is the current record, valid until the next call of Next; its
// Batch stays valid.
func (it *kafkaRecords) Record() *Record { return &it.rec }

// Err is what ended the iteration early, if anything.
func (it *kafkaRecords) Err() error { return it.err }

// Close releases the open file.
func (it *kafkaRecords) Close() error {
	it.closed = true
	if it.ks != nil {
		it.ks.close()
		it.ks = nil
	}
	for _, c := range []*segfile.KafkaRecords{it.recs, it.counter} {
		if c != nil {
			c.Close()
		}
	}
	return nil
}

// newBatch is what b's header says.
func newBatch(b *segfile.KafkaBatch) *Batch {
	if b.Legacy() {
		m := &b.Message
		n := 1
		if m.Codec() != kafka.CodecNone {
			n = 0 // a wrapper's header does not count its inner messages: countWrapper does
		}
		return &Batch{
			Magic: m.Magic, BaseOffset: uint64(m.Offset), LastOffset: uint64(m.Offset), Pos: b.Pos, Size: b.Size(),
			Records: n, Codec: m.Codec().String(), LogAppendTime: m.LogAppendTime(),
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1,
			CRC: m.CRC, BaseTimestamp: m.Timestamp, MaxTimestamp: m.Timestamp,
		}
	}
	h := &b.Header
	return &Batch{
		Magic: h.Magic, BaseOffset: uint64(h.BaseOffset), LastOffset: uint64(h.LastOffset()), Pos: b.Pos, Size: h.Size(),
		Records: int(h.RecordsCount), Codec: h.Codec().String(), LogAppendTime: h.LogAppendTime(),
		Transactional: h.Transactional(), Control: h.Control(),
		ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch, BaseSequence: h.BaseSequence,
		PartitionLeaderEpoch: h.PartitionLeaderEpoch, CRC: h.CRC,
		BaseTimestamp: h.BaseTimestamp, MaxTimestamp: h.MaxTimestamp,
	}
}

// kafkaReason is a Kafka verdict as a CorruptionError's reason: its
// words, and errors.Is finds the format/kafka kind under it.
type kafkaReason struct {
	msg string
	err error
}

func (r *kafkaReason) Error() string { return r.msg }
func (r *kafkaReason) Unwrap() error { return r.err }

// kafkaCorruption is the scan's damage d as a *CorruptionError.
func kafkaCorruption(d *segfile.KafkaDamage) *CorruptionError {
	expected := d.Floor
	if d.Prev >= 0 && d.Prev < math.MaxInt64 {
		expected = d.Prev + 1
	}
	return &CorruptionError{Path: d.Path, Pos: d.Pos, Offset: expected, Reason: &kafkaReason{d.Explain(), d}}
}

// kafkaRecordCorruption is a batch whose records fail, in the .log path,
// as a *CorruptionError.
func kafkaRecordCorruption(path string, re *segfile.KafkaRecordError) *CorruptionError {
	return &CorruptionError{Path: path, Pos: re.Pos, Offset: re.Base, Reason: &kafkaReason{re.Error(), re}}
}

// TxnIndex hands each whole entry of segment seg's .txnindex to fn, in
// order; a segment with none has no entries. fn's error stops the walk
// and is returned.
func (p *KafkaPartition) TxnIndex(seg int, fn func(KafkaAbortedTxn) error) error {
	if seg < 0 || seg >= len(p.segs) {
		return fmt.Errorf("%s: no segment %d", p.name, seg)
	}
	path := p.segs[seg].TxnIndex
	if path == "" {
		return nil
	}
	f, size, err := openKafkaFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return segfile.EachAbortedTxn(f, size, func(_ int64, t kafka.AbortedTxn) error { return fn(t) })
}

// transactions walks the batch headers from segment i to the end of the
// log for what read_committed needs, from the transaction markers
// themselves (a .txnindex only says what they say, and can lie or be
// missing): the aborted transactions whose abort marker is at or after
// from, each from its producer's first transactional batch after its
// marker before (or the walk's start) to the marker, by first offset; and
// the transactions with no marker by the end, each producer's first
// offset in its open one. A marker that cannot be read (reading reports
// it when it gets there) leaves its transaction undecided: taken as
// aborted, as an open one is left out.
func (p *KafkaPartition) transactions(i int, from uint64) (aborted []KafkaAbortedTxn, open map[int64]int64, err error) {
	open = map[int64]int64{}
	recs := segfile.NewKafkaRecords(0)
	defer recs.Close()
	for j := i; j < len(p.segs); j++ {
		var ks *kafkaScan // opened at the segment's first marker
		err := p.walkHeaders(j, func(b *segfile.KafkaBatch) error {
			h := &b.Header
			switch {
			case b.Legacy() || !h.Transactional() || h.ProducerID < 0:
			case h.Control():
				if ks == nil {
					var err error
					if ks, err = p.openScan(j); err != nil {
						return err
					}
				}
				first, pending := open[h.ProducerID]
				delete(open, h.ProducerID)
				m, ok, err := ks.sc.EntryAt(b.Pos)
				if err != nil {
					return err
				}
				// A marker that cannot be read leaves its transaction
				// undecided, and its records are left out as an open
				// one's are.
				abort := !ok
				if ok {
					recs.Reset(m)
					abort = !recs.Next() || segfile.KafkaAbort(recs.Record())
				}
				if abort && pending && uint64(h.BaseOffset) >= from {
					aborted = append(aborted, KafkaAbortedTxn{ProducerID: h.ProducerID, FirstOffset: first, LastOffset: h.BaseOffset})
				}
			default:
				if _, ok := open[h.ProducerID]; !ok {
					open[h.ProducerID] = h.BaseOffset
				}
			}
			return nil
		})
		if ks != nil {
			ks.close()
		}
		if err != nil {
			return nil, nil, err
		}
	}
	slices.SortStableFunc(aborted, func(a, b KafkaAbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	return aborted, open, nil
}

// noLongerAvailable is the error for offset, gone with segments retention
// deleted: p is a listing made since, which says where the partition
// starts now.
func (p *KafkaPartition) noLongerAvailable(offset uint64) error {
	start := offset
	if len(p.segs) > 0 {
		start = p.segs[0].Base
	}
	return &NoLongerAvailableError{Partition: p.name, Offset: offset, Start: start}
}

// stillAt reports whether the scan's file is still the one at path: not
// deleted, renamed away or replaced since it was opened.
func (ks *kafkaScan) stillAt(path string) (bool, error) {
	var at unix.Stat_t
	if err := unix.Lstat(path, &at); err != nil {
		if err == unix.ENOENT {
			return false, nil
		}
		return false, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	fi, err := ks.f.Stat()
	if err != nil {
		return false, err
	}
	open, ok := fi.Sys().(*unix.Stat_t)
	return ok && open.Dev == at.Dev && open.Ino == at.Ino, nil
}
