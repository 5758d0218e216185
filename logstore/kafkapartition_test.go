package logstore_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore"
)

// Kafka partitions built here: batches from franz-go's kmsg, compressed
// by kgo's compressors, their lengths and CRCs filled in as a producer
// does; the .index, .timeindex and .txnindex written from Kafka's
// documented formats with encoding/binary, by LogSegment's rules.

const kpTS = 1_700_000_000_000 // ms

// kpRecord is a record to put in a batch: nil key or value is null.
type kpRecord struct {
	key, value []byte
	headers    []kmsg.Header
	tsDelta    int64
}

// kpBatch says how a batch is built.
type kpBatch struct {
	codec         kafka.Codec
	logAppendTime int64 // the broker's time, when set
	pid           int64 // -1: none
	transactional bool
	control       kafka.ControlType // with controlBatch
	controlBatch  bool
	markerValue   []byte // with controlBatch, when set: the marker's value, in place of a version 0 one
	recs          []kpRecord
}

// encode is the batch at base, sealed.
func (b kpBatch) encode(t testing.TB, base int64) []byte {
	t.Helper()
	recs := b.recs
	if b.controlBatch {
		key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(b.control))
		value := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), 7)
		if b.markerValue != nil {
			value = b.markerValue
		}
		recs = []kpRecord{{key: key, value: value}}
	}
	var raw []byte
	maxTS := int64(kpTS)
	for i, r := range recs {
		kr := kmsg.Record{TimestampDelta64: r.tsDelta, OffsetDelta: int32(i), Key: r.key, Value: r.value, Headers: r.headers}
		kr.Length = int32(len(kr.AppendTo(nil)) - 1) // a zero length takes one byte
		raw = kr.AppendTo(raw)
		maxTS = max(maxTS, kpTS+r.tsDelta)
	}
	attrs := int16(b.codec)
	if b.logAppendTime != 0 {
		attrs |= 0x08
		maxTS = b.logAppendTime
	}
	if b.transactional {
		attrs |= 0x10
	}
	if b.controlBatch {
		attrs |= 0x30
	}
	pid, epoch, seq := b.pid, int16(-1), int32(-1)
	if pid >= 0 {
		epoch, seq = 0, 0
	} else {
		pid = -1
	}
	section := kpCompress(t, b.codec, raw)
	rb := kmsg.RecordBatch{
		FirstOffset: base, Length: int32(49 + len(section)), PartitionLeaderEpoch: 5, Magic: 2, Attributes: attrs,
		LastOffsetDelta: int32(max(len(recs)-1, 0)), FirstTimestamp: kpTS, MaxTimestamp: maxTS,
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, NumRecords: int32(len(recs)), Records: section,
	}
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

func kpCompress(t testing.TB, codec kafka.Codec, raw []byte) []byte {
	var c kgo.CompressionCodec
	switch codec {
	case kafka.CodecNone:
		return raw
	case kafka.CodecGzip:
		c = kgo.GzipCompression()
	case kafka.CodecSnappy:
		c = kgo.SnappyCompression()
	case kafka.CodecLZ4:
		c = kgo.Lz4Compression()
	case kafka.CodecZstd:
		c = kgo.ZstdCompression()
	}
	comp, err := kgo.DefaultCompressor(c)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := comp.Compress(new(bytes.Buffer), raw)
	return bytes.Clone(out)
}

// kpSegment is a segment being built, with its indexes as Kafka's
// LogSegment.append writes them: an .index entry (the batch's last
// offset and position) when more than interval bytes went in since the
// last entry, and with it a .timeindex entry when the largest timestamp
// grew; one more time entry when the segment is rolled.
type kpSegment struct {
	base               int64
	log, index, tindex []byte
	txn                []byte
	interval           int
	sinceEntry         int
	maxTS, maxTSOff    int64 // the largest batch max timestamp so far, and the last offset of the first batch with it
	lastTS             int64 // the last time entry's timestamp
	next               int64 // the next offset
}

func newKPSegment(base int64, interval int) *kpSegment {
	return &kpSegment{base: base, next: base, interval: interval, maxTS: -1, lastTS: -1}
}

// add appends b at the next offset and returns its position.
func (s *kpSegment) add(t testing.TB, b kpBatch) int64 {
	enc := b.encode(t, s.next)
	pos := int64(len(s.log))
	last := s.next + int64(binary.BigEndian.Uint32(enc[23:]))
	if ts := int64(binary.BigEndian.Uint64(enc[35:])); ts > s.maxTS {
		s.maxTS, s.maxTSOff = ts, last
	}
	if s.sinceEntry > s.interval {
		s.index = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(s.index, uint32(last-s.base)), uint32(pos))
		s.timeEntry()
		s.sinceEntry = 0
	}
	s.sinceEntry += len(enc)
	s.log = append(s.log, enc...)
	s.next = last + 1
	return pos
}

func (s *kpSegment) timeEntry() {
	if s.maxTS > s.lastTS {
		s.tindex = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(s.tindex, uint64(s.maxTS)), uint32(s.maxTSOff-s.base))
		s.lastTS = s.maxTS
	}
}

// abort lists an aborted transaction in the segment's .txnindex.
func (s *kpSegment) abort(pid, first, last, lso int64) {
	b := binary.BigEndian.AppendUint16(s.txn, 0)
	for _, v := range []int64{pid, first, last, lso} {
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	s.txn = b
}

// write writes the segment's files into dir: rolled, with a time entry
// for its largest timestamp, or active, its indexes preallocated to
// prealloc bytes of zeros.
func (s *kpSegment) write(t testing.TB, dir string, rolled bool, prealloc int) {
	t.Helper()
	if rolled {
		s.timeEntry()
	}
	index, tindex := s.index, s.tindex
	if !rolled {
		index = append(slices.Clone(index), make([]byte, max(prealloc-len(index), 0))...)
		tindex = append(slices.Clone(tindex), make([]byte, max(prealloc/12*12-len(tindex), 0))...)
	}
	stem := filepath.Join(dir, fmt.Sprintf("%020d", s.base))
	files := map[string][]byte{".log": s.log, ".index": index, ".timeindex": tindex}
	if s.txn != nil {
		files[".txnindex"] = s.txn
	}
	for ext, b := range files {
		if err := os.WriteFile(stem+ext, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// kpWant is a record a reader should yield.
type kpWant struct {
	off     uint64
	ts      int64 // ms
	key     []byte
	value   []byte
	headers []kmsg.Header
}

// kpLog builds a partition of segments in a temporary directory and
// what its records are.
type kpLog struct {
	t       testing.TB
	dir     string
	segs    []*kpSegment
	want    []kpWant // data records, in offset order
	clock   int64    // ms after kpTS the next batch's records start at
	batches []kpSpan // data batches, in offset order
}

// kpSpan is a data batch's offsets and max timestamp.
type kpSpan struct {
	first, last uint64
	maxTS       int64
}

func newKPLog(t testing.TB) *kpLog {
	dir := filepath.Join(t.TempDir(), "orders-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &kpLog{t: t, dir: dir}
}

// roll starts a segment at the next offset.
func (l *kpLog) roll(interval int) *kpSegment {
	base := int64(0)
	if n := len(l.segs); n > 0 {
		base = l.segs[n-1].next
	}
	s := newKPSegment(base, interval)
	l.segs = append(l.segs, s)
	return s
}

// add appends b to the active segment; data records of it are wanted
// unless dropped.
func (l *kpLog) add(b kpBatch, dropped bool) (pos int64, base int64) {
	s := l.segs[len(l.segs)-1]
	base = s.next
	b.recs = slices.Clone(b.recs)
	for i := range b.recs {
		b.recs[i].tsDelta += l.clock
	}
	l.clock += int64(len(b.recs))
	pos = s.add(l.t, b)
	if b.controlBatch || dropped {
		return pos, base
	}
	span := kpSpan{first: uint64(base), last: uint64(base) + uint64(len(b.recs)) - 1, maxTS: b.logAppendTime}
	for i, r := range b.recs {
		ts := kpTS + r.tsDelta
		if b.logAppendTime != 0 {
			ts = b.logAppendTime
		}
		span.maxTS = max(span.maxTS, ts)
		l.want = append(l.want, kpWant{off: uint64(base) + uint64(i), ts: ts, key: r.key, value: r.value, headers: r.headers})
	}
	l.batches = append(l.batches, span)
	return pos, base
}

// atTime is the offset OffsetAtTime finds for ms by Kafka's rule: in the
// first data batch whose max timestamp reaches it, its first record
// that does; next when none.
func (l *kpLog) atTime(ms int64, next uint64) uint64 {
	for _, b := range l.batches {
		if b.maxTS < ms {
			continue
		}
		for _, w := range l.want {
			if w.off >= b.first && w.off <= b.last && w.ts >= ms {
				return w.off
			}
		}
	}
	return next
}

// write writes every segment, the last one active.
func (l *kpLog) write() *logstore.KafkaPartition {
	for i, s := range l.segs {
		s.write(l.t, l.dir, i < len(l.segs)-1, 4096)
	}
	p, err := logstore.OpenKafkaPartition(l.dir, "orders-0")
	if err != nil {
		l.t.Fatal(err)
	}
	return p
}

// path is a file of segment i.
func (l *kpLog) path(i int, ext string) string {
	return filepath.Join(l.dir, fmt.Sprintf("%020d%s", l.segs[i].base, ext))
}

func kpRecords(n int, tag string) []kpRecord {
	recs := make([]kpRecord, n)
	for i := range recs {
		recs[i] = kpRecord{key: fmt.Appendf(nil, "%s-k%d", tag, i), value: fmt.Appendf(nil, "%s-value-%d-%s", tag, i, bytes.Repeat([]byte("x"), i*7)), tsDelta: int64(i)}
	}
	return recs
}

// checkKP reads p from every offset and compares with want.
func checkKP(t *testing.T, p logstore.Log, want []kpWant) {
	t.Helper()
	for from := uint64(0); ; from++ {
		it, err := p.Records(from)
		if err != nil {
			t.Fatal(err)
		}
		got, damage := kmRead(t, it)
		if len(damage) > 0 {
			t.Fatalf("from %d: damage %v", from, damage[0])
		}
		k := slices.IndexFunc(want, func(w kpWant) bool { return w.off >= from })
		if k < 0 {
			if len(got) > 0 {
				t.Fatalf("from %d: %d records past the last", from, len(got))
			}
			return
		}
		kpCompare(t, got, want[k:])
	}
}

func kpCompare(t *testing.T, got []logstore.Record, want []kpWant) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Offset != w.off || g.Timestamp != w.ts*1e6 || !sameBytes(g.Key, w.key) || !sameBytes(g.Value, w.value) || len(g.Headers) != len(w.headers) {
			t.Fatalf("record %d: %d %d %q %q %v, want %+v", i, g.Offset, g.Timestamp, g.Key, g.Value, g.Headers, w)
		}
		for j, h := range w.headers {
			if g.Headers[j].Key != h.Key || !sameBytes(g.Headers[j].Value, h.Value) {
				t.Fatalf("offset %d header %d: %+v, want %+v", g.Offset, j, g.Headers[j], h)
			}
		}
		if g.Batch == nil || g.Batch.BaseOffset > g.Offset || g.Batch.LastOffset < g.Offset || g.Pos != g.Batch.Pos || g.CRC != g.Batch.CRC {
			t.Fatalf("offset %d: batch %+v", g.Offset, g.Batch)
		}
	}
}

// kpCodecsLog is three segments of batches in every codec, with null and
// empty keys, values and header values, a log-append-time batch and a
// record older than its batch's first.
func kpCodecsLog(t *testing.T) *kpLog {
	l := newKPLog(t)
	codecs := []kafka.Codec{kafka.CodecNone, kafka.CodecGzip, kafka.CodecSnappy, kafka.CodecLZ4, kafka.CodecZstd}
	for s := range 3 {
		l.roll(200)
		for i, codec := range codecs {
			recs := kpRecords(3+i, fmt.Sprintf("s%d-%v", s, codec))
			recs[0].key = nil
			recs[1].value = nil
			recs[2].key, recs[2].value = []byte{}, []byte{}
			recs[1].headers = []kmsg.Header{{Key: "trace", Value: nil}, {Key: "empty", Value: []byte{}}, {Key: "trace", Value: []byte("2")}}
			if i == 2 {
				recs[2].tsDelta = -5000 // older than the batch's first
			}
			b := kpBatch{codec: codec, pid: -1, recs: recs}
			if s == 1 && i == 3 {
				b.logAppendTime = kpTS + 86_400_000
			}
			l.add(b, false)
		}
	}
	return l
}

func TestKafkaPartitionCodecs(t *testing.T) {
	l := kpCodecsLog(t)
	p := l.write()
	checkKP(t, p, l.want)
	next := l.segs[2].next
	e, err := p.Extent()
	if err != nil || e != (logstore.Extent{Start: 0, Next: uint64(next)}) {
		t.Fatalf("Extent %+v, %v", e, err)
	}
	st, err := p.Stats()
	if err != nil || st.Records != uint64(len(l.want)) || st.Segments != 3 || st.Start != 0 || st.Next != uint64(next) ||
		st.Oldest != l.want[0].ts*1e6 || st.Newest != l.batches[len(l.batches)-1].maxTS*1e6 {
		t.Fatalf("Stats %+v, %v", st, err)
	}
	rep, fs := kmVerify(t, p)
	for _, f := range fs {
		if f.Kind != logstore.FindingTimeBackwards {
			t.Errorf("finding %+v", f)
		}
	}
	if rep.Problems != 0 || rep.Records != uint64(len(l.want)) {
		t.Fatalf("report %+v", rep)
	}
	// Every index entry checks out; the active segment's zeros are one
	// run of padding.
	for i := range l.segs {
		for _, kind := range []logstore.IndexKind{logstore.OffsetIndex, logstore.TimeIndex} {
			sum, err := p.CheckKafkaIndex(i, kind, true, func(logstore.KafkaIndexEntry) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			real := int64(len(l.segs[i].index) / 8)
			if kind == logstore.TimeIndex {
				real = int64(len(l.segs[i].tindex) / 12)
			}
			if real == 0 || sum.Verdicts[logstore.FindingOK] != real || sum.Entries-sum.Padding != real || (sum.Padding > 0) != (i == 2) {
				t.Fatalf("segment %d %v: %d real entries, summary %+v", i, kind, real, sum)
			}
		}
	}
	// Time lookups land on the first record at or after the time among
	// the batches whose max timestamp reaches it.
	probes := []int64{0, kpTS + 86_400_001}
	for _, w := range l.want {
		probes = append(probes, w.ts-1, w.ts, w.ts+1)
	}
	for _, ms := range probes {
		if got, err := p.OffsetAtTime(ms * 1e6); err != nil || got != l.atTime(ms, uint64(next)) {
			t.Fatalf("OffsetAtTime(%d ms) = %d, %v; want %d", ms, got, err, l.atTime(ms, uint64(next)))
		}
	}
}

// wantOffset is the base offset of segment seg's batch number b (of
// kpCodecsLog's five a segment: 3+i records each).
func (l *kpLog) wantOffset(seg, b int) uint64 {
	off := l.segs[seg].base
	for i := range b {
		off += int64(3 + i)
	}
	return uint64(off)
}

func TestKafkaPartitionEmpty(t *testing.T) {
	dir := t.TempDir()
	p, err := logstore.OpenKafkaPartition(dir, "empty")
	if err != nil {
		t.Fatal(err)
	}
	if e, err := p.Extent(); err != nil || e != (logstore.Extent{}) {
		t.Fatalf("Extent %+v, %v", e, err)
	}
	checkKP(t, p, nil)
	rep, fs := kmVerify(t, p)
	if len(fs) != 1 || fs[0].Kind != logstore.FindingNoSegments || rep.Notes != 1 {
		t.Fatalf("findings %+v", fs)
	}
	if _, err := logstore.OpenKafkaPartition(filepath.Join(dir, "none"), "none"); !errors.Is(err, logstore.ErrPartitionNotFound) {
		t.Fatalf("missing directory: %v", err)
	}
}

// TestKafkaSegmentFile reads a lone .log, its indexes beside it.
func TestKafkaSegmentFile(t *testing.T) {
	l := kpCodecsLog(t)
	l.write()
	lone, err := logstore.OpenKafkaSegmentFile(l.path(1, ".log"), "lone")
	if err != nil {
		t.Fatal(err)
	}
	var want []kpWant
	for _, w := range l.want {
		if w.off >= uint64(l.segs[1].base) && w.off < uint64(l.segs[1].next) {
			want = append(want, w)
		}
	}
	checkKP(t, lone, want)
	if segs := lone.KafkaSegments(); len(segs) != 1 || segs[0].Base != uint64(l.segs[1].base) || segs[0].Index == "" || segs[0].TxnIndex != "" {
		t.Fatalf("segments %+v", segs)
	}
	// Cut inside its last batch, it ends there: a torn tail.
	data, _ := os.ReadFile(l.path(1, ".log"))
	cut := filepath.Join(t.TempDir(), "copy.log")
	if err := os.WriteFile(cut, data[:len(data)-9], 0o644); err != nil {
		t.Fatal(err)
	}
	lone, err = logstore.OpenKafkaSegmentFile(cut, "cut")
	if err != nil {
		t.Fatal(err)
	}
	n := slices.IndexFunc(want, func(w kpWant) bool { return w.off >= l.wantOffset(1, 4) })
	checkKP(t, lone, want[:n])
	if _, err := logstore.OpenKafkaSegmentFile(l.dir, "dir"); err == nil {
		t.Fatal("a directory opened as a segment file")
	}
}

// TestKafkaReadCommitted: producer 1 commits, producer 2 aborts a
// transaction that spans a segment boundary (its marker, and so its
// .txnindex entry, in the later segment), producer 3 leaves one open at
// the end; plain records between.
func TestKafkaReadCommitted(t *testing.T) {
	l := newKPLog(t)
	add := func(b kpBatch) { l.add(b, false) }
	txn := func(pid int64, tag string) kpBatch {
		return kpBatch{pid: pid, transactional: true, recs: kpRecords(2, tag)}
	}
	marker := func(pid int64, typ kafka.ControlType) kpBatch {
		return kpBatch{pid: pid, transactional: true, controlBatch: true, control: typ}
	}
	l.roll(100)
	add(kpBatch{pid: -1, recs: kpRecords(2, "plain")})
	add(txn(1, "p1"))
	_, abortFirst := l.add(txn(2, "p2a"), false)
	abortedRecs := l.want[len(l.want)-2:]
	add(marker(1, kafka.ControlCommit))
	seg1 := l.roll(100)
	add(kpBatch{pid: 9, recs: kpRecords(1, "idem")}) // idempotent, not transactional
	l.add(txn(2, "p2b"), false)
	abortedRecs = append(abortedRecs, l.want[len(l.want)-2:]...)
	_, abortLast := l.add(marker(2, kafka.ControlAbort), false)
	seg1.abort(2, abortFirst, abortLast, abortFirst)
	add(txn(2, "p2c")) // its next transaction, committed
	add(marker(2, kafka.ControlCommit))
	l.roll(100)
	add(txn(1, "p1b"))
	l.add(txn(3, "open"), false) // no marker by the end
	add(marker(1, kafka.ControlCommit))
	add(kpBatch{pid: -1, recs: kpRecords(1, "tail")})
	p := l.write()

	checkKP(t, p, l.want)
	var want []kpWant
	for _, w := range l.want {
		if !slices.ContainsFunc(abortedRecs, func(a kpWant) bool { return a.off == w.off }) && !bytes.HasPrefix(w.key, []byte("open")) {
			want = append(want, w)
		}
	}
	for from := uint64(0); from <= uint64(l.segs[2].next); from++ {
		it, err := p.ReadKafka(from, logstore.KafkaReadOptions{ReadCommitted: true})
		if err != nil {
			t.Fatal(err)
		}
		got, damage := kmRead(t, it)
		if len(damage) > 0 {
			t.Fatal(damage[0])
		}
		k := slices.IndexFunc(want, func(w kpWant) bool { return w.off >= from })
		if k < 0 {
			k = len(want)
		}
		kpCompare(t, got, want[k:])
	}
	var txns []logstore.KafkaAbortedTxn
	if err := p.TxnIndex(1, func(a logstore.KafkaAbortedTxn) error { txns = append(txns, a); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(txns) != 1 || txns[0].ProducerID != 2 || txns[0].FirstOffset != abortFirst || txns[0].LastOffset != abortLast {
		t.Fatalf("aborted %+v", txns)
	}
	st, err := p.Stats()
	if err != nil || st.Records != uint64(len(l.want)) {
		t.Fatalf("Stats %+v, %v: want %d data records", st, err, len(l.want))
	}
	if rep, fs := kmVerify(t, p); rep.Problems+rep.Notes != 0 || rep.Records != uint64(len(l.want)) {
		t.Fatalf("report %+v findings %+v", rep, fs)
	}
	// A .txnindex Kafka would not take is a problem.
	bad := slices.Clone(l.segs[1].txn)
	binary.BigEndian.PutUint16(bad, 3)
	if err := os.WriteFile(l.path(1, ".txnindex"), append(bad, 1, 2, 3), 0o644); err != nil {
		t.Fatal(err)
	}
	_, fs := kmVerify(t, p)
	if len(fs) != 2 || fs[0].Kind != logstore.FindingIndexMismatch || fs[1].Kind != logstore.FindingIndexPartial || fs[1].Pos != kafka.AbortedTxnLen {
		t.Fatalf("findings %+v", fs)
	}
}

// kpDamage is a healthy three-segment log to damage.
func kpDamage(t *testing.T) (*kpLog, [][]int64) {
	l := newKPLog(t)
	var pos [][]int64
	for range 3 {
		l.roll(300)
		var ps []int64
		for i := range 10 {
			p, _ := l.add(kpBatch{codec: kafka.Codec(i % 5), pid: -1, recs: kpRecords(4, "d")}, false)
			ps = append(ps, p)
		}
		pos = append(pos, ps)
	}
	return l, pos
}

func TestKafkaPartitionDamage(t *testing.T) {
	t.Run("flipped bit in a closed segment", func(t *testing.T) {
		l, pos := kpDamage(t)
		p := l.write()
		data, _ := os.ReadFile(l.path(1, ".log"))
		data[pos[1][2]+70] ^= 0x10
		os.WriteFile(l.path(1, ".log"), data, 0o644)
		it, _ := p.Records(0)
		got, damage := kmRead(t, it)
		lost := func(w kpWant) bool {
			return w.off >= l.wantOffset2(1, 2) && w.off < l.wantOffset2(1, 3)
		}
		want := slices.DeleteFunc(slices.Clone(l.want), lost)
		if len(damage) != 1 || damage[0].Pos != pos[1][2] || damage[0].Path != l.path(1, ".log") || !errors.Is(damage[0], kafka.ErrCRC) {
			t.Fatalf("damage %v", damage)
		}
		kpCompare(t, got, want)
		_, fs := kmVerify(t, p)
		if len(fs) != 1 || fs[0].Kind != logstore.FindingCorruptRecord || fs[0].Pos != pos[1][2] || !errors.Is(fs[0].Cause, kafka.ErrCRC) {
			t.Fatalf("findings %+v", fs)
		}
		if e, _ := p.Extent(); e.Next != uint64(l.segs[2].next) {
			t.Fatalf("Extent %+v", e)
		}
	})
	t.Run("torn tail of the active segment", func(t *testing.T) {
		l, pos := kpDamage(t)
		p := l.write()
		data, _ := os.ReadFile(l.path(2, ".log"))
		os.WriteFile(l.path(2, ".log"), data[:pos[2][9]+30], 0o644)
		want := l.want[:len(l.want)-4]
		checkKP(t, p, want)
		if e, _ := p.Extent(); e.Next != want[len(want)-1].off+1 {
			t.Fatalf("Extent %+v", e)
		}
		_, fs := kmVerify(t, p)
		// The index entry for the lost batch, if any, is stale.
		for _, f := range fs {
			switch {
			case f.Kind == logstore.FindingIncompleteTail && f.Severity == logstore.SeverityProblem && f.Pos == pos[2][9]:
			case f.Kind == logstore.FindingIndexStale && f.Severity == logstore.SeverityNote:
			default:
				t.Errorf("finding %+v", f)
			}
		}
		if fs[0].Kind != logstore.FindingIncompleteTail {
			t.Fatalf("findings %+v", fs)
		}
	})
	t.Run("torn closed segment", func(t *testing.T) {
		l, pos := kpDamage(t)
		p := l.write()
		data, _ := os.ReadFile(l.path(0, ".log"))
		os.WriteFile(l.path(0, ".log"), data[:pos[0][9]+30], 0o644)
		it, _ := p.Records(0)
		got, damage := kmRead(t, it)
		if len(damage) != 1 || damage[0].Pos != pos[0][9] || len(got) != len(l.want)-4 {
			t.Fatalf("%d records, damage %v", len(got), damage)
		}
		_, fs := kmVerify(t, p)
		if fs[0].Kind != logstore.FindingCorruptRecord || fs[0].Severity != logstore.SeverityProblem || fs[0].Pos != pos[0][9] {
			t.Fatalf("findings %+v", fs)
		}
	})
	t.Run("lying index", func(t *testing.T) {
		l, pos := kpDamage(t)
		p := l.write()
		index, _ := os.ReadFile(l.path(1, ".index"))
		if len(index) < 16 {
			t.Fatalf("only %d index bytes", len(index))
		}
		// Entry 0 five bytes into its batch, entry 1 at the batch after
		// its own.
		binary.BigEndian.PutUint32(index[4:], binary.BigEndian.Uint32(index[4:])+5)
		e1 := int64(binary.BigEndian.Uint32(index[12:]))
		after := pos[1][slices.Index(pos[1], e1)+1]
		if len(index) > 16 && int64(binary.BigEndian.Uint32(index[20:])) <= after {
			t.Fatal("index entries too close for the test")
		}
		binary.BigEndian.PutUint32(index[12:], uint32(after))
		os.WriteFile(l.path(1, ".index"), index, 0o644)
		checkKP(t, p, l.want)
		_, fs := kmVerify(t, p)
		if len(fs) != 2 || fs[0].Kind != logstore.FindingIndexNoRecord || fs[0].Pos != 0 || fs[1].Kind != logstore.FindingIndexMismatch || fs[1].Pos != 8 {
			t.Fatalf("findings %+v", fs)
		}
		var got []logstore.KafkaIndexEntry
		sum, err := p.CheckKafkaIndex(1, logstore.OffsetIndex, false, func(e logstore.KafkaIndexEntry) error { got = append(got, e); return nil })
		if err != nil || sum.Verdicts[logstore.FindingUnverified] != int64(len(index)/8) || got[0].Verdict != logstore.FindingUnverified {
			t.Fatalf("without verify: %+v %+v %v", sum, got, err)
		}
	})
	t.Run("index out of order and past the end", func(t *testing.T) {
		l, _ := kpDamage(t)
		p := l.write()
		index, _ := os.ReadFile(l.path(0, ".index"))
		n := len(index) / 8
		// A last entry below the one before, then one past the .log.
		swapped := slices.Concat(index[:(n-2)*8], index[(n-1)*8:], index[(n-2)*8:(n-1)*8])
		past := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(l.segs[0].next-1+1000)), 1<<20)
		os.WriteFile(l.path(0, ".index"), append(swapped, past...), 0o644)
		var verdicts []logstore.FindingKind
		if _, err := p.CheckKafkaIndex(0, logstore.OffsetIndex, true, func(e logstore.KafkaIndexEntry) error {
			verdicts = append(verdicts, e.Verdict)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := slices.Repeat([]logstore.FindingKind{logstore.FindingOK}, n-1)
		want = append(want, logstore.FindingIndexOrder, logstore.FindingIndexStale)
		if !slices.Equal(verdicts, want) {
			t.Fatalf("verdicts %v, want %v", verdicts, want)
		}
		checkKP(t, p, l.want)
	})
	t.Run("zeros after a closed segment's index entries", func(t *testing.T) {
		l, _ := kpDamage(t)
		p := l.write()
		for _, ext := range []string{".index", ".timeindex"} {
			b, _ := os.ReadFile(l.path(0, ext))
			os.WriteFile(l.path(0, ext), append(b, make([]byte, 96)...), 0o644)
		}
		_, fs := kmVerify(t, p)
		if len(fs) != 2 || fs[0].Kind != logstore.FindingIndexPadding || fs[1].Kind != logstore.FindingIndexPadding || fs[0].Severity != logstore.SeverityNote {
			t.Fatalf("findings %+v", fs)
		}
		checkKP(t, p, l.want)
	})
	t.Run("missing indexes", func(t *testing.T) {
		l, _ := kpDamage(t)
		l.write()
		os.Remove(l.path(1, ".index"))
		os.Remove(l.path(1, ".timeindex"))
		p, _ := logstore.OpenKafkaPartition(l.dir, "orders-0")
		checkKP(t, p, l.want)
		_, fs := kmVerify(t, p)
		if len(fs) != 2 || fs[0].Kind != logstore.FindingIndexMissing || fs[1].Kind != logstore.FindingIndexMissing {
			t.Fatalf("findings %+v", fs)
		}
	})
}

// wantOffset2 is the base offset of batch b of segment seg of kpDamage's
// log (four records a batch).
func (l *kpLog) wantOffset2(seg, b int) uint64 { return uint64(l.segs[seg].base) + uint64(4*b) }

// A listing made while a broker deletes its oldest segments may name one
// and lack the next, deleted or not: reading passes over the offsets
// between them as a gap only while the one named is still there, else
// lists again and reads what is left, or says the offsets are gone.
func TestKafkaReadListingTornByRetention(t *testing.T) {
	for _, tc := range []struct {
		name    string
		whole   bool  // the listing has segment 1 after all
		deleted []int // segments deleted once reading has begun
		want    []int // the segments whose records are read
		gone    bool  // reading ends with NoLongerAvailableError at segment 1's base
	}{
		{name: "first still there: a gap", deleted: nil, want: []int{0, 2}},
		{name: "first deleted, second there", deleted: []int{0}, want: []int{0, 1, 2}},
		{name: "both deleted", deleted: []int{0, 1}, want: []int{0}, gone: true},
		{name: "listing whole, both deleted", whole: true, deleted: []int{0, 1}, want: []int{0}, gone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, p := kpThreeSegments(t)
			if !tc.whole {
				p = kpTornListing(t, l, 1)
			}
			it, err := p.Records(0)
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			kpDeleteSegments(t, l, tc.deleted)
			var got, want []uint64
			for it.Next() {
				got = append(got, it.Record().Offset)
			}
			for _, s := range tc.want {
				for off := l.segs[s].base; off < l.segs[s].next; off++ {
					want = append(want, uint64(off))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("read offsets %v, want %v", got, want)
			}
			var gone *logstore.NoLongerAvailableError
			switch err := it.Err(); {
			case tc.gone && (!errors.As(err, &gone) || gone.Offset != uint64(l.segs[1].base) || gone.Start != uint64(l.segs[2].base)):
				t.Errorf("err %v, want offset %d no longer available, the partition starting at %d", err, l.segs[1].base, l.segs[2].base)
			case !tc.gone && err != nil:
				t.Errorf("err %v", err)
			}
		})
	}
}

// verify-crc on a partition whose broker deletes segments meanwhile: a
// segment gone before its check is a note, and so are offsets missing
// after one deleted since its check (the listing may lack what went with
// it); only while it is still there are they lost data.
func TestKafkaVerifyUnderRetention(t *testing.T) {
	for _, tc := range []struct {
		name     string
		torn     bool  // the listing lacks segment 1
		deleted  []int // once segment 0 is checked
		want     []logstore.FindingKind
		problems int
	}{
		{name: "torn listing, first still there", torn: true, want: []logstore.FindingKind{logstore.FindingGap}, problems: 1},
		{name: "torn listing, first deleted after its check", torn: true, deleted: []int{0, 1}, want: []logstore.FindingKind{logstore.FindingSegmentGone}},
		{name: "second deleted before its check", deleted: []int{0, 1}, want: []logstore.FindingKind{logstore.FindingSegmentGone}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, p := kpThreeSegments(t)
			if tc.torn {
				p = kpTornListing(t, l, 1)
			}
			var got []logstore.FindingKind
			checked := 0
			rep, err := p.Verify(0, 1, logstore.VerifyOptions{Jobs: 1,
				Finding: func(f logstore.Finding) error {
					got = append(got, f.Kind)
					return nil
				},
				Progress: func(done, total int64) {
					if checked++; checked > 1 {
						return
					}
					kpDeleteSegments(t, l, tc.deleted)
				}})
			if err != nil || !rep.Complete {
				t.Fatalf("err %v, complete %v", err, rep.Complete)
			}
			if !slices.Equal(got, tc.want) || rep.Problems != tc.problems {
				t.Errorf("findings %v, %d problems; want %v, %d", got, rep.Problems, tc.want, tc.problems)
			}
		})
	}
}

// kpMoveSegment moves segment seg's files that are there from directory
// from to directory to.
func kpMoveSegment(t *testing.T, l *kpLog, seg int, from, to string) {
	t.Helper()
	for _, ext := range []string{kafka.LogExt, kafka.IndexExt, kafka.TimeIndexExt, kafka.TxnIndexExt} {
		name := fmt.Sprintf("%020d%s", l.segs[seg].base, ext)
		if err := os.Rename(filepath.Join(from, name), filepath.Join(to, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

// kpSwap does what Kafka's cleaner does: the batches of segments segs,
// written to a .swap file, renamed over segment 0's .log.
func kpSwap(t *testing.T, l *kpLog, segs []int, txnIndex []byte) {
	t.Helper()
	var b []byte
	for _, s := range segs {
		b = append(b, l.segs[s].log...)
	}
	swap := l.path(0, kafka.LogExt+".swap")
	if err := os.WriteFile(swap, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(swap, l.path(0, kafka.LogExt)); err != nil {
		t.Fatal(err)
	}
	if txnIndex != nil {
		if err := os.WriteFile(l.path(0, kafka.TxnIndexExt), txnIndex, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A segment the cleaner replaced under its own name while it was read,
// the listing lacking the one after it: the new file holds what followed,
// and is read, not passed over as a gap.
func TestKafkaReadSegmentReplacedUnderItsName(t *testing.T) {
	l, _ := kpThreeSegments(t)
	it, err := kpTornListing(t, l, 1).Records(0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	kpSwap(t, l, []int{0, 1}, nil)
	var got []uint64
	for it.Next() {
		got = append(got, it.Record().Offset)
	}
	if want := []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; !slices.Equal(got, want) || it.Err() != nil {
		t.Errorf("read %v, err %v; want %v", got, it.Err(), want)
	}
}

// Read-committed after the partition is listed again mid-read: the
// segment read next holds an aborted transaction whose marker was read
// already, and the same producer's later committed records are kept.
func TestKafkaReadCommittedAfterRelist(t *testing.T) {
	l := newKPLog(t)
	txn := func(pid int64, tag string) kpBatch {
		return kpBatch{pid: pid, transactional: true, recs: kpRecords(2, tag)}
	}
	marker := func(pid int64, typ kafka.ControlType) kpBatch {
		return kpBatch{pid: pid, transactional: true, controlBatch: true, control: typ}
	}
	s0 := l.roll(100)
	_, first := l.add(txn(2, "aborted"), true) // 0, 1
	_, last := l.add(marker(2, kafka.ControlAbort), false)
	s0.abort(2, first, last, first)
	l.add(kpBatch{pid: -1, recs: kpRecords(1, "a")}, false) // 3
	l.roll(100)
	l.add(kpBatch{pid: -1, recs: kpRecords(2, "b")}, false) // 4, 5
	l.roll(100)
	l.add(txn(2, "committed"), false) // 6, 7
	l.add(marker(2, kafka.ControlCommit), false)
	l.roll(100)
	l.add(kpBatch{pid: -1, recs: kpRecords(1, "c")}, false) // 9
	l.write()
	aside := t.TempDir()
	kpMoveSegment(t, l, 2, l.dir, aside) // the listing lacks segment 2
	p, err := logstore.OpenKafkaPartition(l.dir, "orders-0")
	if err != nil {
		t.Fatal(err)
	}
	it, err := p.ReadKafka(0, logstore.KafkaReadOptions{ReadCommitted: true})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var got []uint64
	for it.Next() {
		got = append(got, it.Record().Offset)
		if it.Record().Offset == 4 {
			// Segment 1 is being read: the cleaner puts 0, 1 and 2 into
			// segment 0 and deletes segment 1.
			kpSwap(t, l, []int{0, 1, 2}, s0.txn)
			kpMoveSegment(t, l, 1, l.dir, aside)
		}
	}
	if want := []uint64{3, 4, 5, 6, 7, 9}; !slices.Equal(got, want) || it.Err() != nil {
		t.Errorf("read %v, err %v; want %v", got, it.Err(), want)
	}
}

// Read-committed decides a marker by its key, as Kafka's consumer does:
// an abort whose value does not decode still aborts. A marker that cannot
// be read at all leaves its transaction undecided, left out as an open
// one is; the same producer's later transaction is read.
func TestKafkaReadCommittedDamagedMarker(t *testing.T) {
	for _, damage := range []string{"short value", "crc"} {
		t.Run(damage, func(t *testing.T) {
			l := newKPLog(t)
			l.roll(100)
			txn := func(tag string) kpBatch { return kpBatch{pid: 2, transactional: true, recs: kpRecords(2, tag)} }
			marker := kpBatch{pid: 2, transactional: true, controlBatch: true, control: kafka.ControlAbort}
			if damage == "short value" {
				marker.markerValue = []byte{0, 0}
			}
			l.add(txn("aborted"), true) // 0, 1
			pos, _ := l.add(marker, false)
			l.add(kpBatch{pid: -1, recs: kpRecords(1, "a")}, false) // 3
			l.add(txn("committed"), false)                          // 4, 5
			l.add(kpBatch{pid: 2, transactional: true, controlBatch: true, control: kafka.ControlCommit}, false)
			p := l.write()
			defer p.Close()
			if damage == "crc" {
				path := filepath.Join(l.dir, "00000000000000000000.log")
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				b[pos+17] ^= 1
				kdWrite(t, path, b)
			}
			it, err := p.ReadKafka(0, logstore.KafkaReadOptions{ReadCommitted: true})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := kmRead(t, it)
			if offsets, want := kmOffsets(got), []uint64{3, 4, 5}; !slices.Equal(offsets, want) {
				t.Errorf("read_committed --skip-corrupt: %v, want %v", offsets, want)
			}
		})
	}
}

// kpThreeSegments is a partition of three segments of four records each.
func kpThreeSegments(t *testing.T) (*kpLog, *logstore.KafkaPartition) {
	l := newKPLog(t)
	for s := range 3 {
		l.roll(200)
		l.add(kpBatch{codec: kafka.CodecNone, pid: -1, recs: kpRecords(4, fmt.Sprintf("s%d", s))}, false)
	}
	return l, l.write()
}

// kpTornListing opens l's partition with a listing that lacks segment
// seg, as one made while a broker deletes can: its files are elsewhere
// while the partition is opened, then back.
func kpTornListing(t *testing.T, l *kpLog, seg int) *logstore.KafkaPartition {
	t.Helper()
	aside := t.TempDir()
	kpMoveSegment(t, l, seg, l.dir, aside)
	p, err := logstore.OpenKafkaPartition(l.dir, "orders-0")
	if err != nil {
		t.Fatal(err)
	}
	kpMoveSegment(t, l, seg, aside, l.dir)
	return p
}

// kpDeleteSegments deletes the segments segs as retention does.
func kpDeleteSegments(t *testing.T, l *kpLog, segs []int) {
	t.Helper()
	for _, s := range segs {
		for _, ext := range []string{kafka.LogExt, kafka.IndexExt, kafka.TimeIndexExt} {
			if err := os.Remove(l.path(s, ext)); err != nil {
				t.Fatal(err)
			}
		}
	}
}
