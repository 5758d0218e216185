package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// A KafkaPartition is an Apache Kafka partition directory read as a Log:
// its segments (<20 digits>.log, with .index, .timeindex, .txnindex and
// a .snapshot beside) as they were when it was opened. Every file is
// opened read-only, nothing is locked, created, renamed or written; the
// bytes are segfile's to judge (its KafkaScanner, record cursor and index
// readers). Offsets, timestamps and damage are told in the vocabulary of
// seglog's own partitions: Record.Timestamp in Unix nanoseconds, damage a
// *CorruptionError, findings of kinds.go's kinds.

// KafkaAbortedTxn is a .txnindex entry: a transaction aborted in its
// segment.
type KafkaAbortedTxn = kafka.AbortedTxn

// KafkaPartition is a read-only view of a Kafka partition directory, or
// of a lone Kafka .log.
type KafkaPartition struct {
	dir      string
	name     string
	segs     []KafkaSegmentFiles
	logStart uint64             // SetLogStart's; records below are not the partition's
	odd      []*NotRegularError // index files read without
	// noReadAhead keeps its reads and checks from reading and checking
	// ahead on a second goroutine (segfile.KafkaOptions.ReadAhead), for
	// tests that compare the two.
	noReadAhead bool
}

// KafkaSegmentFiles is a Kafka segment: its base offset and the paths of
// its files, "" for those absent.
type KafkaSegmentFiles struct {
	Base      uint64
	Log       string
	Index     string
	TimeIndex string
	TxnIndex  string
	Snapshot  string // the producer snapshot named by the segment's base offset
}

var _ RecordIterator = (*kafkaRecords)(nil)

// OpenKafkaPartition opens the Kafka partition directory dir (orders-0,
// or any directory holding Kafka segments) for reading; name is what
// messages call it. Files being deleted or replaced by a broker (.deleted,
// .cleaned, .swap) are not segments.
func OpenKafkaPartition(dir, name string) (*KafkaPartition, error) {
	entries, err := fsx.ListDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", name, ErrPartitionNotFound)
		}
		return nil, fmt.Errorf("open partition %s: %w", name, err)
	}
	files := map[string]bool{}
	var bases []int64
	var odd []*NotRegularError
	for _, e := range entries {
		fn, err := kafka.ParseFileName(e.Name())
		if err != nil || fn.Suffix != "" {
			continue
		}
		if !e.Type().IsRegular() {
			// A segment skipped would pass for offsets retention removed;
			// an index is a hint, read without.
			nr := fsx.NewNotRegularError(filepath.Join(dir, e.Name()), e.Type())
			if fn.Ext == kafka.LogExt {
				return nil, fmt.Errorf("open partition %s: %w", name, nr)
			}
			odd = append(odd, nr)
			continue
		}
		files[e.Name()] = true
		if fn.Ext == kafka.LogExt {
			bases = append(bases, fn.Base)
		}
	}
	slices.Sort(bases)
	slices.SortFunc(odd, func(a, b *NotRegularError) int { return strings.Compare(a.Path, b.Path) })
	p := &KafkaPartition{dir: dir, name: name, odd: odd}
	for _, base := range bases {
		stem := fmt.Sprintf("%020d", base)
		path := func(ext string) string {
			if !files[stem+ext] {
				return ""
			}
			return filepath.Join(dir, stem+ext)
		}
		p.segs = append(p.segs, KafkaSegmentFiles{
			Base: uint64(base), Log: path(kafka.LogExt), Index: path(kafka.IndexExt), TimeIndex: path(kafka.TimeIndexExt),
			TxnIndex: path(kafka.TxnIndexExt), Snapshot: path(kafka.SnapshotExt),
		})
	}
	return p, nil
}

// OpenKafkaSegmentFile opens the lone Kafka .log path, with the index
// files beside it named like it if they are there, as a partition of one
// segment: its active one, whose tail may be torn. Its base offset is
// its name's, or 0 when the name is not a segment's. name is what
// messages call it.
func OpenKafkaSegmentFile(path, name string) (*KafkaPartition, error) {
	if err := checkSegmentFile(path, name, "Kafka segment file"); err != nil {
		return nil, err
	}
	seg := KafkaSegmentFiles{Log: path}
	if fn, err := kafka.ParseFileName(filepath.Base(path)); err == nil && fn.Ext == kafka.LogExt && fn.Suffix == "" {
		seg.Base = uint64(fn.Base)
	}
	stem := strings.TrimSuffix(path, kafka.LogExt)
	for ext, field := range map[string]*string{
		kafka.IndexExt: &seg.Index, kafka.TimeIndexExt: &seg.TimeIndex, kafka.TxnIndexExt: &seg.TxnIndex, kafka.SnapshotExt: &seg.Snapshot,
	} {
		if fi, err := os.Lstat(stem + ext); err == nil && fi.Mode().IsRegular() {
			*field = stem + ext
		}
	}
	return &KafkaPartition{dir: filepath.Dir(path), name: name, segs: []KafkaSegmentFiles{seg}}, nil
}

// Name is what messages call the partition.
func (p *KafkaPartition) Name() string { return p.name }

// Dir is the partition's directory.
func (p *KafkaPartition) Dir() string { return p.dir }

// Layout is LayoutKafka.
func (p *KafkaPartition) Layout() Layout { return LayoutKafka }

// Close does nothing: a KafkaPartition holds no file open, its iterators
// do.
func (p *KafkaPartition) Close() error { return nil }

// SetLogStart raises the partition's start to off, the log start offset
// Kafka keeps in log-start-offset-checkpoint (after a DeleteRecords
// request or retention inside a segment): the records below it are on
// disk but no longer the partition's. Extent, Stats, Records and
// OffsetAtTime leave them out; Verify still checks them.
func (p *KafkaPartition) SetLogStart(off uint64) { p.logStart = off }

// IgnoredIndexes lists the partition's index files that are not regular
// files, which it reads without, in name order.
func (p *KafkaPartition) IgnoredIndexes() []*NotRegularError { return p.odd }

// KafkaSegments lists the partition's segments in offset order.
func (p *KafkaPartition) KafkaSegments() []KafkaSegmentFiles { return slices.Clone(p.segs) }

// Extent is the offsets the partition holds. Start is the first
// segment's first valid batch's base offset (its name's when it holds
// none), raised to SetLogStart's. Next is the offset after the last
// valid batch of the active segment (its base offset when it holds
// none), found by scanning from the last .index entry that checks out:
// valid batches after damage count, a torn tail ends the data.
func (p *KafkaPartition) Extent() (Extent, error) {
	if len(p.segs) == 0 {
		return Extent{Start: p.logStart, Next: p.logStart}, nil
	}
	start, err := p.firstBase()
	if err != nil {
		return Extent{}, err
	}
	end, err := p.segmentEnd(len(p.segs) - 1)
	if err != nil {
		return Extent{}, err
	}
	e := Extent{Start: max(start, p.logStart), Next: end.next}
	e.Next = max(e.Next, e.Start)
	return e, nil
}

// firstBase is the base offset of the first valid batch of the first
// segment, or its name's when it holds none.
func (p *KafkaPartition) firstBase() (uint64, error) {
	seg := p.segs[0]
	ks, err := p.openScan(0)
	if err != nil {
		return 0, err
	}
	defer ks.close()
	for {
		if ks.sc.Next() {
			return uint64(firstOffset(ks.sc.Batch())), nil
		}
		if err := ks.sc.Err(); err != nil {
			return 0, p.ioError(seg.Log, err)
		}
		if !ks.sc.Resync() {
			return seg.Base, nil
		}
	}
}

// firstOffset is the offset of b's first record. A legacy compressed
// message's header gives only its last offset: its inner messages tell
// the first, unless they are damaged (reading them will say so).
func firstOffset(b *segfile.KafkaBatch) int64 {
	if b.Legacy() && b.Codec() != kafka.CodecNone {
		recs := segfile.NewKafkaRecords(0)
		defer recs.Close()
		if recs.Reset(b); recs.Next() {
			return recs.Offset()
		}
	}
	return b.BaseOffset()
}

// kafkaEnd is where a segment's valid batches end.
type kafkaEnd struct {
	next    uint64 // the last valid batch's last offset + 1; the base when none
	batches bool   // a valid batch was found
}

// kafkaIndexTries bounds how many .index entries, from the last back,
// segmentEnd tries before it scans the segment from its first byte.
const kafkaIndexTries = 64

// segmentEnd finds where segment i's valid batches end, scanning from
// its last .index entry that checks out.
func (p *KafkaPartition) segmentEnd(i int) (kafkaEnd, error) {
	seg := p.segs[i]
	ks, err := p.openScan(i)
	if err != nil {
		return kafkaEnd{}, err
	}
	defer ks.close()
	if x, closeIndex := p.openOffsetIndex(i); x != nil {
		for k := x.Len() - 1; k >= max(x.Len()-kafkaIndexTries, 0); k-- {
			e, err := x.Entry(k)
			if err != nil {
				break
			}
			if b, err := ks.confirms(e); err != nil {
				closeIndex()
				return kafkaEnd{}, p.ioError(seg.Log, err)
			} else if b != nil {
				break
			}
		}
		closeIndex()
	}
	end := kafkaEnd{next: seg.Base}
	for {
		for ks.sc.Next() {
			end.next, end.batches = uint64(ks.sc.Batch().LastOffset())+1, true
		}
		if err := ks.sc.Err(); err != nil {
			return kafkaEnd{}, p.ioError(seg.Log, err)
		}
		if !ks.sc.Resync() {
			return end, nil
		}
	}
}

// kafkaScan is a segment's .log open for a KafkaScanner.
type kafkaScan struct {
	f    *fsx.ReadFile
	size int64
	sc   *segfile.KafkaScanner
}

func (ks *kafkaScan) close() {
	ks.sc.Close()
	ks.f.Close()
}

// openScan opens segment i's .log for a scan from its first byte.
func (p *KafkaPartition) openScan(i int) (*kafkaScan, error) {
	return p.openScanWith(i, p.scanOptions(i), -1)
}

// openLongScan is openScan for a scan that reads on to the segment's end
// (read, verify): it reads and checks ahead on a second goroutine.
func (p *KafkaPartition) openLongScan(i int) (*kafkaScan, error) {
	opts := p.scanOptions(i)
	opts.ReadAhead = !p.noReadAhead
	return p.openScanWith(i, opts, -1)
}

// openPieceScan opens segment i's .log for the check of piece pc: a
// scan from pc.pos that ends at pc.end. The whole segment's reads ahead;
// the pieces are checked side by side instead.
func (p *KafkaPartition) openPieceScan(i int, pc kafkaPiece) (*kafkaScan, error) {
	if pc.whole() {
		return p.openLongScan(i)
	}
	ks, err := p.openScanWith(i, p.scanOptions(i), pc.end)
	if err == nil {
		ks.sc.StartAt(pc.pos)
	}
	return ks, err
}

// openScanWith opens segment i's .log for a scan of its bytes up to end
// (-1: all).
func (p *KafkaPartition) openScanWith(i int, opts segfile.KafkaOptions, end int64) (*kafkaScan, error) {
	f, size, err := openKafkaFile(p.segs[i].Log)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	limit := size
	if end >= 0 {
		limit = min(end, size)
	}
	return &kafkaScan{f: f, size: size, sc: segfile.NewKafkaScanner(f, limit, opts)}, nil
}

// scanOptions are the options of a scan of segment i.
func (p *KafkaPartition) scanOptions(i int) segfile.KafkaOptions {
	return segfile.KafkaOptions{Path: p.segs[i].Log, Base: int64(min(p.segs[i].Base, math.MaxInt64))}
}

// confirms returns the batch the .index entry e points at if it checks
// out: a valid batch starts at its position and holds its offset; nil if
// not. If so the scan is left to read that batch next; else it is back
// at the first byte. The batch is valid until the scan moves on.
func (ks *kafkaScan) confirms(e segfile.KafkaIndexEntry) (*segfile.KafkaBatch, error) {
	if e.Pos < 0 || e.Pos >= ks.size {
		return nil, nil
	}
	// One entry is read: an entry into damage costs no byte scan for
	// where valid data resumes.
	b, ok, err := ks.sc.EntryAt(e.Pos)
	if ok && b.BaseOffset() <= e.Offset && e.Offset <= b.LastOffset() {
		ks.sc.StartAt(e.Pos)
		return b, nil
	}
	ks.sc.StartAt(0)
	return nil, err
}

// openOffsetIndex opens segment i's .index; nil when it has none that
// can be read (a scan from the first byte does without).
func (p *KafkaPartition) openOffsetIndex(i int) (*segfile.KafkaIndex, func()) {
	return openKafkaIndex(p.segs[i].Index, p.segs[i].Base, OffsetIndex)
}

// openKafkaIndex opens the index file path of kind of the segment with
// base offset base; nil when there is none that can be read.
func openKafkaIndex(path string, base uint64, kind IndexKind) (*segfile.KafkaIndex, func()) {
	if path == "" {
		return nil, nil
	}
	f, size, err := openKafkaFile(path)
	if err != nil {
		return nil, nil
	}
	newIndex := segfile.NewKafkaOffsetIndex
	if kind == TimeIndex {
		newIndex = segfile.NewKafkaTimeIndex
	}
	x, err := newIndex(f, size, int64(min(base, math.MaxInt64)))
	if err != nil {
		f.Close()
		return nil, nil
	}
	return x, func() { f.Close() }
}

// seekPos is where a read of segment i for offsets from on starts: the
// position of the greatest .index entry at or below from that checks
// out, else the first byte. The scan is left there.
func (p *KafkaPartition) seekPos(i int, ks *kafkaScan, from uint64) error {
	if from <= p.segs[i].Base {
		return nil
	}
	x, closeIndex := p.openOffsetIndex(i)
	if x == nil {
		return nil
	}
	defer closeIndex()
	k, ok, err := x.FloorOffset(int64(min(from, math.MaxInt64)))
	if err != nil || !ok {
		return nil
	}
	e, err := x.Entry(k)
	if err != nil {
		return nil
	}
	if _, err := ks.confirms(e); err != nil {
		return p.ioError(p.segs[i].Log, err)
	}
	return nil
}

// ioError is an I/O error reading path.
func (p *KafkaPartition) ioError(path string, err error) error {
	return fmt.Errorf("read %s: %w", path, err)
}

// kafkaNanos is a Kafka timestamp (ms) in Unix nanoseconds, saturated
// at int64's bounds.
func kafkaNanos(ms int64) int64 {
	const perMs = 1_000_000
	switch {
	case ms > math.MaxInt64/perMs:
		return math.MaxInt64
	case ms < math.MinInt64/perMs:
		return math.MinInt64
	}
	return ms * perMs
}

// kafkaMillis is the least Kafka timestamp (ms) at or after t (Unix ns).
func kafkaMillis(t int64) int64 {
	const perMs = 1_000_000
	ms := t / perMs
	if t%perMs > 0 {
		ms++
	}
	return ms
}

// KafkaSnapshot is a producer-state snapshot (.snapshot): the producers
// Kafka knew of at its offset.
type KafkaSnapshot = kafka.Snapshot

// kafkaSnapshotMax bounds the .snapshot read whole: 46 bytes a producer,
// room for over a million.
const kafkaSnapshotMax = 64 << 20

// ProducerSnapshot decodes segment seg's producer snapshot (the one named
// by its base offset); ok is false when it has none.
func (p *KafkaPartition) ProducerSnapshot(seg int) (snap KafkaSnapshot, ok bool, err error) {
	if seg < 0 || seg >= len(p.segs) {
		return snap, false, fmt.Errorf("%s: no segment %d", p.name, seg)
	}
	path := p.segs[seg].Snapshot
	if path == "" {
		return snap, false, nil
	}
	f, size, err := openKafkaFile(path)
	if err != nil {
		return snap, false, err
	}
	defer f.Close()
	if size > kafkaSnapshotMax {
		return snap, false, fmt.Errorf("%s: %d bytes, too large for a producer snapshot", path, size)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return snap, false, fmt.Errorf("read %s: %w", path, err)
	}
	if snap, err = segfile.ParseKafkaSnapshot(b); err != nil {
		return snap, false, fmt.Errorf("%s: %w", path, err)
	}
	return snap, true, nil
}
