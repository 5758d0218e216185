package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"sort"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// Record is a record read from a partition.
type Record struct {
	format.Record
	Pos int64  // byte position of its header in the segment (a Kafka record's: its batch's)
	CRC uint32 // as stored (a Kafka record's: its batch's CRC-32C)
	// Headers are a Kafka record's headers, in order; nil in the other
	// layouts, which have none.
	Headers []Header
	// Batch is the Kafka record batch holding the record, the same for
	// every record of a batch; nil in the other layouts.
	Batch *Batch
}

// Header is one of a Kafka record's headers. A nil Value is null.
type Header struct {
	Key   string
	Value []byte
}

// Batch is what a Kafka record batch's header says, as kafka-dump-log
// prints it.
type Batch struct {
	Magic                int8
	BaseOffset           uint64
	LastOffset           uint64
	Pos                  int64 // byte position in its segment
	Size                 int64 // bytes, header included
	Records              int   // as the header counts them
	Codec                string
	LogAppendTime        bool // timestamps set by the broker (else by the producer)
	Transactional        bool
	Control              bool
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	PartitionLeaderEpoch int32
	CRC                  uint32
	BaseTimestamp        int64 // milliseconds, as stored
	MaxTimestamp         int64 // milliseconds, as stored
}

// set makes r the record with header h and bytes b (header included) at
// pos. Field by field, in place: see format.Header.Decode.
func (r *Record) set(h *format.Header, b []byte, pos int64) {
	r.Key, r.Value = h.Split(b)
	r.Offset, r.Timestamp = h.Offset, h.Timestamp
	r.Pos, r.CRC = pos, h.CRC
}

// Iterator reads a partition's records in offset order, in constant memory
// (one record aside), through segfile's Scanner: the one rule for what is
// valid and where valid data resumes. It stops at the end of the data as
// it was when it reached the partition's last segment: records appended
// later are not waited for.
type Iterator struct {
	p       *Partition
	segs    []segment
	from    uint64
	i       int // current segment
	floor   uint64
	limit   int64 // the last segment's size when the iterator reached it
	sf      *segmentFiles
	sc      *segfile.Scanner
	rec     Record
	err     error
	skipped Skipped // what SkipCorrupt went past last
	held    bool    // the current record is still to be returned by Next
	cur     bool    // Next returned the current record
	started bool    // a record was read: first is its offset
	first   uint64
	clock   int64 // the running maximum of the timestamps read
	seeded  bool  // ... and of the partition's before first (recordtime.go)
	closed  bool
	// Park let go of these files (maybe closed since), whose .log this
	// is; reading goes on at (parkPos, parkOff).
	parked   *segmentFiles
	parkedAt os.FileInfo
	parkPos  int64
	parkOff  uint64
}

// Read returns an iterator over records with offsets >= from. Offsets in a
// gap between segments are skipped.
func (p *Partition) Read(from uint64) (*Iterator, error) {
	it := &Iterator{p: p, segs: p.segs, from: from, clock: math.MinInt64}
	if len(p.segs) == 0 {
		it.closed = true
		return it, nil
	}
	// The last segment with base <= from holds from, or from is in a gap
	// after it, or before all of them; unless the segment before goes on
	// past from: then the records from holds are that one's, and those
	// of this one below where it ends overlap it.
	it.i = max(sort.Search(len(p.segs), func(i int) bool { return p.segs[i].base > from })-1, 0)
	for ; ; it.i-- {
		floor, err := p.floorOf(it.i)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p.name, err)
		}
		if from >= floor || it.i == 0 {
			it.floor = floor
			break
		}
	}
	if err := it.open(); err != nil {
		return nil, err
	}
	return it, nil
}

// open starts reading segment it.i, from it.from when that is in it.
func (it *Iterator) open() error {
	seg := it.segs[it.i]
	last := it.i == len(it.segs)-1
	sf, fi, err := it.p.acquire(seg)
	if err != nil {
		return it.p.segmentGone(err, max(it.from, seg.base))
	}
	it.limit = -1
	if last {
		if fi == nil {
			if fi, err = sf.log.Stat(); err != nil {
				it.p.release(sf)
				return fmt.Errorf("read %s: %w", it.p.name, err)
			}
		}
		it.limit = fi.Size()
	}
	if err := it.scan(sf, seg); err != nil {
		return err
	}
	// A segment after the one from is in is read from its first byte:
	// what of it is below its floor overlaps, wherever the read started.
	if it.from > seg.base && it.from >= it.floor {
		if err := it.sc.SeekOffset(it.from); err != nil {
			return fmt.Errorf("read %s: %w", it.p.name, err)
		}
	}
	return nil
}

// scan starts reading seg, whose files are sf, from its first byte.
func (it *Iterator) scan(sf *segmentFiles, seg segment) error {
	it.release()
	it.sf = sf
	sseg := segfileSegment(seg, sf.log, nil, it.floor, it.i == len(it.segs)-1)
	sseg.OpenIndex = sf.index
	var err error
	if it.sc, err = segfile.NewScanner(sseg, it.limit, segfile.Options{Whole: true, ReadAhead: !it.p.noReadAhead}); err != nil {
		it.release()
		return fmt.Errorf("read %s: %w", it.p.name, err)
	}
	return nil
}

// release lets go of the current segment's files.
func (it *Iterator) release() error {
	if it.sf == nil {
		return nil
	}
	if it.sc != nil {
		it.sc.Close()
	}
	err := it.p.release(it.sf)
	it.sf, it.sc = nil, nil
	return err
}

// segmentGone turns a segment vanishing under a reader into the error
// docs/format.md §6 asks for, naming the partition's new start.
func (p *Partition) segmentGone(err error, offset uint64) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", p.name, err)
	}
	start := offset
	if segs, lerr := p.segments(); lerr == nil && len(segs) > 0 {
		start = segs[0].base
	}
	return &NoLongerAvailableError{Partition: p.name, Offset: offset, Start: start}
}

// Next advances to the next record, returning false at the end or on an
// error (see Err).
func (it *Iterator) Next() bool {
	if it.closed || it.err != nil || it.parked != nil {
		if it.closed || it.err != nil || !it.resume() {
			return false
		}
	}
	it.cur = false
	if it.held {
		it.held = false
		it.cur = true
		return true
	}
	for {
		sc := it.sc
		if sc.Next() {
			h := sc.Header()
			if !it.started {
				it.started, it.first = true, h.Offset
			}
			it.clock = runningMax(it.clock, h.Timestamp)
			if h.Offset < it.from {
				continue
			}
			it.cur = true
			return true
		}
		if err := sc.Err(); err != nil {
			it.err = fmt.Errorf("read %s: %w", it.sf.seg.path(format.LogExt), err)
			return false
		}
		last := it.i == len(it.segs)-1
		if d := sc.Damage(); d != nil {
			if d.Class == segfile.Incomplete {
				return false // the end of the data
			}
			it.err = corruption(d)
			return false
		}
		if last || !it.nextSegment() {
			return false
		}
	}
}

// Park lets go of the iterator's open file and read buffer, keeping its
// place: the next Next opens the segment again and returns the record it
// returned last once more, then goes on. A caller holding iterators over
// many partitions at once, of which it reads a few at a time, parks the
// others, so that neither descriptors nor memory grow with the partition
// count. Record is not valid after Park.
func (it *Iterator) Park() {
	if it.closed || it.err != nil || it.parked != nil || it.sf == nil {
		return
	}
	fi, err := it.sf.log.Stat()
	if err != nil {
		return // kept open: an error here would be Next's to report
	}
	it.parkPos, it.parkOff = it.sc.Pos(), it.sc.NextOffset()
	if it.cur || it.held {
		it.parkPos, it.parkOff = it.sc.RecordPos(), it.sc.Header().Offset
		it.cur, it.held = false, false
	}
	it.parked, it.parkedAt = it.sf, fi
	it.release()
	it.rec = Record{} // nothing left to keep the buffer alive
}

// resume opens the parked iterator's segment again. The file must be the
// one it read: a segment replaced under the same name (recover --salvage,
// a partition directory swapped by copy-partition --force) holds other
// bytes at the position it kept.
func (it *Iterator) resume() bool {
	parked := it.parked
	it.parked = nil
	seg := it.segs[it.i]
	sf, _, err := it.p.acquire(seg)
	if err != nil {
		it.err = it.p.segmentGone(err, it.parkOff)
		return false
	}
	if sf != parked && !sameFile(sf.log, it.parkedAt) {
		it.p.release(sf)
		it.err = fmt.Errorf("read %s: segment %s was replaced while it was being read (read it again)", it.p.name, seg.path(format.LogExt))
		return false
	}
	if err := it.scan(sf, seg); err != nil {
		it.err = err
		return false
	}
	if it.parkPos > 0 || it.parkOff != seg.base {
		it.sc.StartAt(it.parkPos, it.parkOff)
	}
	return true
}

// sameFile reports whether f is open on the file fi describes.
func sameFile(f file, fi os.FileInfo) bool {
	now, err := f.Stat()
	return err == nil && os.SameFile(now, fi)
}

// nextSegment moves on to the segment after the current one, whose floor
// is where the current one's valid data ended, or the current one's own
// floor when its records all overlap the segments before.
func (it *Iterator) nextSegment() bool {
	end := it.sc.NextOffset()
	it.floor = max(it.floor, end)
	if end < it.segs[it.i+1].base {
		if err := it.checkGap(end); err != nil {
			it.release()
			it.err = err
			return false
		}
	}
	it.release()
	it.i++
	if err := it.open(); err != nil {
		it.err = err
		return false
	}
	return true
}

// checkGap makes sure offsets from end up to the next segment listed are
// a gap, to be skipped. They are while the current segment is still
// there: the iterator's listing may have been made while retention
// deleted segments, and left out some after one it names (readdir goes in
// hash order), but retention deletes oldest first, so none after a
// segment still there is gone. When it is gone, the partition is listed
// again: a segment holding end is read next, and if none is left the
// offsets are no longer available.
func (it *Iterator) checkGap(end uint64) error {
	_, err := os.Lstat(it.segs[it.i].path(format.LogExt))
	if !errors.Is(err, fs.ErrNotExist) {
		if err != nil {
			return fmt.Errorf("read %s: %w", it.p.name, err)
		}
		return nil
	}
	segs, err := it.p.segments()
	if err != nil {
		return fmt.Errorf("read %s: %w", it.p.name, err)
	}
	// The segments holding end or after it: the last with a base up to
	// end, and those after.
	j := max(sort.Search(len(segs), func(i int) bool { return segs[i].base > end })-1, 0)
	if len(segs) == 0 || segs[j].base > end {
		start := end
		if len(segs) > 0 {
			start = segs[0].base
		}
		return &NoLongerAvailableError{Partition: it.p.name, Offset: end, Start: start}
	}
	// Read on in the new listing (nextSegment moves to j); what of it
	// lies below end overlaps.
	it.segs, it.i = segs, j-1
	return nil
}

// SkipCorrupt goes on after the corrupt record that ended the iteration
// (Err is a *CorruptionError): where valid data resumes by the one rule
// (docs/format.md §3), or else at the next segment. The offsets in
// between are lost to the damage. It reports whether the iteration can
// go on; if so, Err is cleared, and Skipped describes what was skipped.
func (it *Iterator) SkipCorrupt() bool {
	var ce *CorruptionError
	if it.closed || !errors.As(it.err, &ce) || ce.Damage == nil || it.sc == nil || it.sc.Damage() != ce.Damage {
		return false
	}
	it.err = nil
	it.skipped = Skipped{Damage: ce.Damage}
	sk := &it.skipped
	var err error
	if sk.Bytes, err = it.sc.DamagedBytes(ce.Damage, maxSkippedBytes); err == nil {
		sk.Bytes = slices.Clone(sk.Bytes)
		sk.CRC, sk.CRCOK, err = it.sc.ComputedCRC(ce.Damage)
	}
	if err != nil {
		it.err = fmt.Errorf("read %s: %w", ce.Path, err)
		return false
	}
	if it.sc.Resume() {
		return true
	}
	if it.i == len(it.segs)-1 {
		return false
	}
	return it.nextSegment()
}

// maxSkippedBytes bounds the bytes of a skipped record kept for a
// forensic dump.
const maxSkippedBytes = 64 << 10

// Skipped is what SkipCorrupt went past last: the damage, the failing
// record's bytes (header included) when they are all in the file and at
// most 64 KiB, and the CRC computed over them.
type Skipped struct {
	Damage *segfile.Damage
	Bytes  []byte
	CRC    uint32
	CRCOK  bool
}

// Skipped describes the damage SkipCorrupt last went past.
func (it *Iterator) Skipped() Skipped { return it.skipped }

// hold makes the next Next return the current record again.
func (it *Iterator) hold() { it.held = true }

// end is the offset after the last record read: where the iteration
// ended, or would go on.
func (it *Iterator) end() uint64 {
	if it.sc == nil {
		return it.from
	}
	return max(it.sc.NextOffset(), it.from, it.floor) // never below where the segments before end
}

// Record returns the current record. It and its Key and Value are valid
// until the next call to Next.
func (it *Iterator) Record() *Record {
	it.rec.set(it.sc.Header(), it.sc.Bytes(), it.sc.RecordPos())
	return &it.rec
}

// Err returns the error that ended the iteration, if any.
func (it *Iterator) Err() error { return it.err }

// Close releases the iterator's open file.
func (it *Iterator) Close() error {
	it.closed = true
	return it.release()
}
