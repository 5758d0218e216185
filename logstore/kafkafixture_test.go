package logstore_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seglog/seglog/logstore"
)

// The committed Apache Kafka fixtures (testdata/kafka, written by kcat,
// franz-go and kmsg through franz-go's broker kfake) read against what
// their manifest says they hold.

const kafkaFixtures = "../testdata/kafka"

type kmManifest struct {
	LogDir struct {
		Partitions []kmPartition `json:"partitions"`
	} `json:"logdir"`
	Damaged []kmDamaged `json:"damaged"`
}

type kmPartition struct {
	Dir            string `json:"dir"`
	LogStartOffset uint64 `json:"log_start_offset"`
	LogEndOffset   uint64 `json:"log_end_offset"`
	Segments       []struct {
		BaseOffset       uint64                              `json:"base_offset"`
		Active           bool                                `json:"active"`
		Log              string                              `json:"log"`
		LogBytes         int64                               `json:"log_bytes"`
		IndexEntries     []struct{ Offset, Position int64 }  `json:"index_entries"`
		TimeIndexEntries []struct{ Timestamp, Offset int64 } `json:"timeindex_entries"`
		IndexBytes       int64                               `json:"index_bytes"`
		TimeIndexBytes   int64                               `json:"timeindex_bytes"`
	} `json:"segments"`
	Batches   []kmBatch    `json:"batches"`
	Records   []kmRecord   `json:"records"`
	Snapshots []kmSnapshot `json:"snapshots"`
	TxnIndex  []kmTxn      `json:"txn_index"`
}

type kmSnapshot struct {
	File    string `json:"file"`
	Entries []struct {
		ProducerID            int64 `json:"producer_id"`
		ProducerEpoch         int16 `json:"producer_epoch"`
		LastSequence          int32 `json:"last_sequence"`
		LastOffset            int64 `json:"last_offset"`
		CurrentTxnFirstOffset int64 `json:"current_txn_first_offset"`
	} `json:"entries"`
}

type kmTxn struct {
	File             string `json:"file"`
	ProducerID       int64  `json:"producer_id"`
	FirstOffset      int64  `json:"first_offset"`
	LastOffset       int64  `json:"last_offset"`
	LastStableOffset int64  `json:"last_stable_offset"`
}

type kmBatch struct {
	File          string `json:"file"`
	Position      int64  `json:"position"`
	Bytes         int64  `json:"bytes"`
	Magic         int8   `json:"magic"`
	BaseOffset    uint64 `json:"base_offset"`
	LastOffset    uint64 `json:"last_offset"`
	RecordCount   int    `json:"record_count"`
	Codec         string `json:"codec"`
	TimestampType string `json:"timestamp_type"`
	Transactional bool   `json:"transactional"`
	Control       bool   `json:"control"`
	ProducerID    int64  `json:"producer_id"`
	ProducerEpoch int16  `json:"producer_epoch"`
	BaseSequence  int32  `json:"base_sequence"`
	LeaderEpoch   int32  `json:"partition_leader_epoch"`
	CRC           uint32 `json:"crc"`
	BaseTimestamp int64  `json:"base_timestamp"`
	MaxTimestamp  int64  `json:"max_timestamp"`
}

type kmRecord struct {
	Offset    uint64  `json:"offset"`
	Timestamp int64   `json:"timestamp"`
	Key       *string `json:"key_base64"`
	Value     *string `json:"value_base64"`
	Headers   []struct {
		Key   string  `json:"key"`
		Value *string `json:"value_base64"`
	} `json:"headers"`
	Control       bool `json:"control"`
	Aborted       bool `json:"aborted"`
	BelowLogStart bool `json:"below_log_start"`
}

type kmDamaged struct {
	Name               string       `json:"name"`
	Kind               string       `json:"kind"`
	Dir                string       `json:"dir"`
	CopyOf             string       `json:"copy_of"`
	File               string       `json:"file"`
	Pos                int64        `json:"pos"`
	BaseOffset         uint64       `json:"base_offset"`
	ValidRecordsBefore int          `json:"valid_records_before"`
	ValidRecordsAfter  int          `json:"valid_records_after"`
	Log                *kmPartition `json:"log"`
	IndexEntry         *struct {
		Entry int64 `json:"entry"`
	} `json:"index_entry"`
}

func kmLoad(t *testing.T) *kmManifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(kafkaFixtures, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m kmManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.LogDir.Partitions) == 0 || len(m.Damaged) == 0 {
		t.Fatal("the manifest lists no partitions")
	}
	return &m
}

// partition is the clean partition dir of the manifest.
func (m *kmManifest) partition(t *testing.T, dir string) *kmPartition {
	for i := range m.LogDir.Partitions {
		if m.LogDir.Partitions[i].Dir == dir {
			return &m.LogDir.Partitions[i]
		}
	}
	t.Fatalf("no partition %s in the manifest", dir)
	return nil
}

func kmOpen(t *testing.T, dir string) *logstore.KafkaPartition {
	t.Helper()
	p, err := logstore.OpenKafkaPartition(filepath.Join(kafkaFixtures, dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func kmBytes(t *testing.T, s *string) []byte {
	if s == nil {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(*s)
	if err != nil {
		t.Fatal(err)
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// kmWant is the records a reader yields: data records at or above the
// log start, and with committed none of an aborted transaction.
func (p *kmPartition) want(committed bool) []kmRecord {
	var out []kmRecord
	for _, r := range p.Records {
		if r.Control || r.BelowLogStart || committed && r.Aborted {
			continue
		}
		out = append(out, r)
	}
	return out
}

// batchOf is the manifest's batch holding off.
func (p *kmPartition) batchOf(off uint64) *kmBatch {
	for i := range p.Batches {
		if b := &p.Batches[i]; b.BaseOffset <= off && off <= b.LastOffset {
			return b
		}
	}
	return nil
}

// kmRead reads every record of it, going on after damage, and the
// damage met.
// kmOffsets is the offsets of recs.
func kmOffsets(recs []logstore.Record) []uint64 {
	var offsets []uint64
	for _, r := range recs {
		offsets = append(offsets, r.Offset)
	}
	return offsets
}

func kmRead(t *testing.T, it logstore.RecordIterator) (recs []logstore.Record, damage []*logstore.CorruptionError) {
	t.Helper()
	defer it.Close()
	for {
		for it.Next() {
			r := *it.Record()
			r.Key, r.Value = slices.Clone(r.Key), slices.Clone(r.Value)
			r.Headers = slices.Clone(r.Headers)
			for i, h := range r.Headers {
				r.Headers[i].Value = slices.Clone(h.Value)
			}
			recs = append(recs, r)
		}
		var ce *logstore.CorruptionError
		if !errors.As(it.Err(), &ce) {
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
			return recs, damage
		}
		damage = append(damage, ce)
		if !it.SkipCorrupt() {
			return recs, damage
		}
	}
}

// sameBytes tells nil (null) from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func checkRecords(t *testing.T, p *kmPartition, got []logstore.Record, want []kmRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Offset != w.Offset || g.Timestamp != w.Timestamp*1e6 {
			t.Fatalf("record %d: offset %d timestamp %d, want %d %d", i, g.Offset, g.Timestamp, w.Offset, w.Timestamp*1e6)
		}
		if !sameBytes(g.Key, kmBytes(t, w.Key)) || !sameBytes(g.Value, kmBytes(t, w.Value)) {
			t.Fatalf("offset %d: key %q value %q, want %v %v", g.Offset, g.Key, g.Value, w.Key, w.Value)
		}
		if len(g.Headers) != len(w.Headers) {
			t.Fatalf("offset %d: %d headers, want %d", g.Offset, len(g.Headers), len(w.Headers))
		}
		for j, h := range w.Headers {
			if g.Headers[j].Key != h.Key || !sameBytes(g.Headers[j].Value, kmBytes(t, h.Value)) {
				t.Fatalf("offset %d header %d: %q=%q, want %q", g.Offset, j, g.Headers[j].Key, g.Headers[j].Value, h.Key)
			}
		}
		b := p.batchOf(w.Offset)
		gb := g.Batch
		if b == nil || gb == nil {
			t.Fatalf("offset %d: batch %v, manifest's %v", g.Offset, gb, b)
		}
		wantBatch := logstore.Batch{
			Magic: b.Magic, BaseOffset: b.BaseOffset, LastOffset: b.LastOffset, Pos: b.Position, Size: b.Bytes,
			Records: b.RecordCount, Codec: b.Codec, LogAppendTime: b.TimestampType == "LogAppendTime",
			Transactional: b.Transactional, Control: b.Control, ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch,
			BaseSequence: b.BaseSequence, PartitionLeaderEpoch: b.LeaderEpoch, CRC: b.CRC,
			BaseTimestamp: b.BaseTimestamp, MaxTimestamp: b.MaxTimestamp,
		}
		if *gb != wantBatch || g.Pos != b.Position || g.CRC != b.CRC {
			t.Fatalf("offset %d: batch\n%+v, want\n%+v", g.Offset, *gb, wantBatch)
		}
		if i > 0 && got[i-1].Offset == g.Offset-1 && got[i-1].Batch.BaseOffset == gb.BaseOffset && got[i-1].Batch != gb {
			t.Fatalf("offset %d: a batch's records do not share its *Batch", g.Offset)
		}
	}
}

// wantAtTime is the offset OffsetAtTime finds for ms by Kafka's rule, in
// the manifest's batches: the first data batch with a max timestamp at
// or after ms, its first record at or after ms; next when none.
func (p *kmPartition) wantAtTime(ms int64, next uint64) uint64 {
	for _, b := range p.Batches {
		if b.Control || b.MaxTimestamp < ms || b.LastOffset < p.LogStartOffset {
			continue
		}
		for _, r := range p.Records {
			if r.Offset >= b.BaseOffset && r.Offset <= b.LastOffset && r.Offset >= p.LogStartOffset && r.Timestamp >= ms {
				return r.Offset
			}
		}
	}
	return next
}

func checkOffsetAtTime(t *testing.T, kp *logstore.KafkaPartition, p *kmPartition, next uint64) {
	t.Helper()
	var probes []int64
	for _, r := range p.Records {
		probes = append(probes, r.Timestamp-1, r.Timestamp, r.Timestamp+1)
	}
	for _, b := range p.Batches {
		probes = append(probes, b.MaxTimestamp, b.MaxTimestamp+1)
	}
	probes = append(probes, -1<<40, 1<<43) // 1<<43 ms: the year 2248, still in int64 ns
	for _, ms := range probes {
		want := p.wantAtTime(ms, next)
		got, err := kp.OffsetAtTime(ms * 1e6)
		if err != nil || got != want {
			t.Fatalf("OffsetAtTime(%d ms) = %d, %v; want %d", ms, got, err, want)
		}
		// A time inside the millisecond goes to the next one.
		if got, err := kp.OffsetAtTime(ms*1e6 - 999_999); err != nil || got != want {
			t.Fatalf("OffsetAtTime(%d ms - 999999 ns) = %d, %v; want %d", ms, got, err, want)
		}
	}
}

func TestKafkaFixturePartitions(t *testing.T) {
	m := kmLoad(t)
	for _, p := range m.LogDir.Partitions {
		t.Run(filepath.Base(p.Dir), func(t *testing.T) {
			kp := kmOpen(t, p.Dir)
			kp.SetLogStart(p.LogStartOffset)
			if kp.Layout() != logstore.LayoutKafka || kp.Name() != p.Dir || len(kp.KafkaSegments()) != len(p.Segments) {
				t.Fatalf("layout %v name %q segments %d", kp.Layout(), kp.Name(), len(kp.KafkaSegments()))
			}
			e, err := kp.Extent()
			if err != nil || e != (logstore.Extent{Start: p.LogStartOffset, Next: p.LogEndOffset}) {
				t.Fatalf("Extent %+v, %v; want %d..%d", e, err, p.LogStartOffset, p.LogEndOffset)
			}
			for _, committed := range []bool{false, true} {
				it, err := kp.ReadKafka(0, logstore.KafkaReadOptions{ReadCommitted: committed})
				if err != nil {
					t.Fatal(err)
				}
				got, damage := kmRead(t, it)
				if len(damage) > 0 {
					t.Fatalf("damage in a clean partition: %v", damage[0])
				}
				checkRecords(t, &p, got, p.want(committed))
			}
			// Reading from every offset starts at the first record at or
			// above it.
			want := p.want(false)
			for from := uint64(0); from <= p.LogEndOffset+1; from++ {
				it, err := kp.Records(from)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := kmRead(t, it)
				k := slices.IndexFunc(want, func(r kmRecord) bool { return r.Offset >= from })
				if k < 0 {
					k = len(want)
				}
				checkRecords(t, &p, got, want[k:])
			}

			st, err := kp.Stats()
			if err != nil {
				t.Fatal(err)
			}
			var bytes int64
			for _, s := range p.Segments {
				bytes += s.LogBytes
			}
			var data []kmBatch
			for _, b := range p.Batches {
				if !b.Control && b.LastOffset >= p.LogStartOffset {
					data = append(data, b)
				}
			}
			first := p.want(false)[0]
			wantSt := logstore.PartitionStats{
				Start: p.LogStartOffset, Next: p.LogEndOffset, Records: uint64(len(p.want(false))),
				Segments: len(p.Segments), Bytes: bytes, Oldest: first.Timestamp * 1e6, Newest: data[len(data)-1].MaxTimestamp * 1e6,
			}
			if b := data[0]; b.BaseOffset >= p.LogStartOffset {
				wantSt.Oldest = b.BaseTimestamp * 1e6
				if b.TimestampType == "LogAppendTime" {
					wantSt.Oldest = b.MaxTimestamp * 1e6
				}
			}
			// Counted from record batch headers, but for the batch that
			// holds the log start, which is read.
			wantSt.RecordsFromIndex = slices.ContainsFunc(data, func(b kmBatch) bool {
				return b.Magic == 2 && b.BaseOffset >= p.LogStartOffset
			})
			if st != wantSt {
				t.Fatalf("Stats\n%+v, want\n%+v", st, wantSt)
			}
			checkOffsetAtTime(t, kp, &p, p.LogEndOffset)
		})
	}
}

func TestKafkaFixtureDamaged(t *testing.T) {
	m := kmLoad(t)
	for _, d := range m.Damaged {
		t.Run(d.Name, func(t *testing.T) {
			kp := kmOpen(t, d.Dir)
			it, err := kp.Records(0)
			if err != nil {
				t.Fatal(err)
			}
			got, damage := kmRead(t, it)
			if d.Kind == "legacy-v1" {
				if len(damage) > 0 {
					t.Fatal(damage[0])
				}
				checkRecords(t, d.Log, got, d.Log.want(false))
				checkOffsetAtTime(t, kp, d.Log, d.Log.LogEndOffset)
				return
			}
			clean := m.partition(t, d.CopyOf)
			var wantDamage bool
			switch d.Kind {
			case "torn-tail", "lying-index", "lying-timeindex", "zero-tail":
			default:
				wantDamage = true
			}
			if n := d.ValidRecordsBefore + d.ValidRecordsAfter; len(got) != n {
				t.Fatalf("%d records, want %d", len(got), n)
			}
			if !wantDamage {
				if len(damage) > 0 {
					t.Fatalf("damage: %v", damage[0])
				}
			} else {
				if len(damage) != 1 {
					t.Fatalf("%d damages, want 1: %v", len(damage), damage)
				}
				ce := damage[0]
				if filepath.Base(ce.Path) != d.File || ce.Pos != d.Pos || ce.Reason == nil || ce.Error() == "" {
					t.Fatalf("damage %v, want at byte %d of %s", ce, d.Pos, d.File)
				}
				// Reading stops at the damage, before SkipCorrupt.
				it, _ := kp.Records(0)
				n := 0
				for it.Next() {
					n++
				}
				var ce2 *logstore.CorruptionError
				if n != d.ValidRecordsBefore || !errors.As(it.Err(), &ce2) {
					t.Fatalf("%d records then %v, want %d then damage", n, it.Err(), d.ValidRecordsBefore)
				}
				it.Close()
			}
			// What was read is the clean partition's records, but those of
			// the damaged batch.
			var want []kmRecord
			lost := clean.batchOf(d.BaseOffset)
			for _, r := range clean.Records {
				if wantDamage && lost != nil && r.Offset >= lost.BaseOffset && r.Offset <= lost.LastOffset || d.Kind == "torn-tail" && r.Offset >= d.BaseOffset {
					continue
				}
				want = append(want, r)
			}
			checkRecords(t, clean, got, want)

			e, err := kp.Extent()
			wantNext := clean.LogEndOffset
			switch d.Kind {
			case "torn-tail":
				wantNext = d.BaseOffset
			case "zip-bomb":
				wantNext = d.BaseOffset + 1 // the bomb's batch frames and checks out
			}
			if err != nil || e.Next != wantNext {
				t.Fatalf("Extent %+v, %v; want next %d", e, err, wantNext)
			}
			if _, err := kp.Stats(); err != nil {
				t.Fatal(err)
			}
			if d.Kind == "lying-index" || d.Kind == "lying-timeindex" || d.Kind == "zero-tail" {
				c := *clean
				c.LogStartOffset = 0
				checkOffsetAtTime(t, kp, &c, clean.LogEndOffset)
			}
		})
	}
}

// kmVerify verifies kp, returning its report and findings.
func kmVerify(t *testing.T, kp *logstore.KafkaPartition) (logstore.VerifyReport, []logstore.Finding) {
	t.Helper()
	var fs []logstore.Finding
	rep, err := kp.Verify(0, 0, logstore.VerifyOptions{Finding: func(f logstore.Finding) error {
		fs = append(fs, f)
		return nil
	}})
	if err != nil || !rep.Complete {
		t.Fatalf("Verify: %v (complete %v)", err, rep.Complete)
	}
	if rep.Problems+rep.Notes != len(fs) {
		t.Fatalf("report counts %d problems and %d notes, %d findings given", rep.Problems, rep.Notes, len(fs))
	}
	return rep, fs
}

func (p *kmPartition) dataRecords() uint64 {
	var n uint64
	for _, r := range p.Records {
		if !r.Control {
			n++
		}
	}
	return n
}

func TestKafkaFixtureVerify(t *testing.T) {
	m := kmLoad(t)
	for _, p := range m.LogDir.Partitions {
		t.Run(filepath.Base(p.Dir), func(t *testing.T) {
			rep, fs := kmVerify(t, kmOpen(t, p.Dir))
			var bytes int64
			for _, s := range p.Segments {
				bytes += s.LogBytes
			}
			if rep.Problems != 0 || rep.Records != p.dataRecords() || rep.Segments != len(p.Segments) || rep.Bytes != bytes {
				t.Fatalf("report %+v, findings %v", rep, fs)
			}
			for _, f := range fs {
				// events-0's log-append-time batch is a day ahead of the
				// records after it.
				if f.Kind != logstore.FindingTimeBackwards || p.Dir != "logdir/events-0" {
					t.Errorf("finding %+v", f)
				}
			}
		})
	}
	for _, d := range m.Damaged {
		t.Run(d.Name, func(t *testing.T) {
			rep, fs := kmVerify(t, kmOpen(t, d.Dir))
			if d.Kind == "legacy-v1" {
				if rep.Problems != 0 || rep.Records != d.Log.dataRecords() || len(fs) != 1 || fs[0].Kind != logstore.FindingLegacyFormat ||
					!strings.Contains(fs[0].Reason, "magic 1") || filepath.Base(fs[0].Path) != d.File {
					t.Fatalf("report %+v, findings %+v", rep, fs)
				}
				return
			}
			kind, pos := logstore.FindingCorruptRecord, d.Pos
			switch d.Kind {
			case "torn-tail", "zero-tail":
				kind = logstore.FindingIncompleteTail
			case "lying-index":
				kind, pos = logstore.FindingIndexNoRecord, d.IndexEntry.Entry*8
			case "lying-timeindex":
				kind, pos = logstore.FindingIndexMismatch, d.IndexEntry.Entry*12
			}
			var problems []logstore.Finding
			for _, f := range fs {
				if f.Severity == logstore.SeverityProblem {
					problems = append(problems, f)
				}
			}
			if len(problems) != 1 || rep.Problems != 1 {
				t.Fatalf("problems %+v, want one %s", problems, kind)
			}
			f := problems[0]
			if f.Kind != kind || filepath.Base(f.Path) != d.File || f.Pos != pos || f.Partition != d.Dir || f.Reason == "" {
				t.Fatalf("finding %+v, want %s at byte %d of %s", f, kind, pos, d.File)
			}
			if kind == logstore.FindingCorruptRecord || kind == logstore.FindingIncompleteTail {
				if f.Cause == nil || f.Offset != int64(d.BaseOffset) {
					t.Fatalf("finding %+v: cause %v, offset %d, want %d", f, f.Cause, f.Offset, d.BaseOffset)
				}
			}
			if want := uint64(d.ValidRecordsBefore + d.ValidRecordsAfter); rep.Records != want {
				t.Fatalf("%d records checked, want %d", rep.Records, want)
			}
		})
	}
}

// TestKafkaFixtureIndexes checks every index entry of the clean
// fixtures, as dump-index --verify does: the manifest's entries, all ok,
// then the active segment's preallocated zeros as one run.
func TestKafkaFixtureIndexes(t *testing.T) {
	m := kmLoad(t)
	for _, p := range m.LogDir.Partitions {
		kp := kmOpen(t, p.Dir)
		for i, s := range p.Segments {
			for _, verify := range []bool{false, true} {
				verdict := logstore.FindingUnverified
				if verify {
					verdict = logstore.FindingOK
				}
				var got []logstore.KafkaIndexEntry
				sum, err := kp.CheckKafkaIndex(i, logstore.OffsetIndex, verify, func(e logstore.KafkaIndexEntry) error {
					got = append(got, e)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				n := int64(len(s.IndexEntries))
				if sum.Entries != s.IndexBytes/8 || sum.Padding != sum.Entries-n || sum.PartialBytes != 0 || sum.Verdicts[verdict] != n {
					t.Fatalf("%s segment %d: summary %+v", p.Dir, i, sum)
				}
				for k, w := range s.IndexEntries {
					if e := got[k]; e.Entry != int64(k) || e.Offset != uint64(w.Offset) || e.Pos != w.Position || e.Verdict != verdict || e.Count != 1 {
						t.Fatalf("%s segment %d .index entry %d: %+v, want %+v", p.Dir, i, k, e, w)
					}
				}
				if want := n + min(sum.Padding, 1); int64(len(got)) != want {
					t.Fatalf("%s segment %d: %d entries given, want %d", p.Dir, i, len(got), want)
				}
				if s.Active != (sum.Padding > 0) {
					t.Fatalf("%s segment %d (active %v): padding %d", p.Dir, i, s.Active, sum.Padding)
				}
				if sum.Padding > 0 {
					if e := got[n]; e.Verdict != logstore.FindingIndexPadding || e.Count != sum.Padding || e.Entry != n {
						t.Fatalf("%s segment %d: padding %+v", p.Dir, i, e)
					}
				}

				got = got[:0]
				sum, err = kp.CheckKafkaIndex(i, logstore.TimeIndex, verify, func(e logstore.KafkaIndexEntry) error {
					got = append(got, e)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				n = int64(len(s.TimeIndexEntries))
				if sum.Entries != s.TimeIndexBytes/12 || sum.Padding != sum.Entries-n || sum.Verdicts[verdict] != n {
					t.Fatalf("%s segment %d: time index summary %+v", p.Dir, i, sum)
				}
				for k, w := range s.TimeIndexEntries {
					if e := got[k]; e.Offset != uint64(w.Offset) || e.Timestamp != w.Timestamp || e.Verdict != verdict {
						t.Fatalf("%s segment %d .timeindex entry %d: %+v, want %+v", p.Dir, i, k, e, w)
					}
				}
			}
		}
		var txns []logstore.KafkaAbortedTxn
		for i, s := range kp.KafkaSegments() {
			if err := kp.TxnIndex(i, func(a logstore.KafkaAbortedTxn) error {
				txns = append(txns, a)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if (s.TxnIndex != "") != slices.ContainsFunc(p.TxnIndex, func(w kmTxn) bool {
				return w.File == filepath.Base(s.TxnIndex)
			}) {
				t.Fatalf("%s segment %d: txnindex %q", p.Dir, i, s.TxnIndex)
			}
		}
		snaps := 0
		for i, s := range kp.KafkaSegments() {
			snap, ok, err := kp.ProducerSnapshot(i)
			if err != nil || ok != (s.Snapshot != "") {
				t.Fatalf("%s segment %d: snapshot %v, %v", p.Dir, i, ok, err)
			}
			if !ok {
				continue
			}
			k := slices.IndexFunc(p.Snapshots, func(w kmSnapshot) bool {
				return w.File == filepath.Base(s.Snapshot)
			})
			if k < 0 || len(snap.Producers) != len(p.Snapshots[k].Entries) {
				t.Fatalf("%s: %s holds %d producers, manifest entry %d", p.Dir, s.Snapshot, len(snap.Producers), k)
			}
			for j, w := range p.Snapshots[k].Entries {
				if g := snap.Producers[j]; g.ProducerID != w.ProducerID || g.ProducerEpoch != w.ProducerEpoch || g.LastSequence != w.LastSequence ||
					g.LastOffset != w.LastOffset || g.CurrentTxnFirstOffset != w.CurrentTxnFirstOffset {
					t.Fatalf("%s: %s producer %d: %+v, want %+v", p.Dir, s.Snapshot, j, g, w)
				}
			}
			snaps++
		}
		if snaps != len(p.Snapshots) {
			t.Fatalf("%s: %d snapshots read, the manifest lists %d", p.Dir, snaps, len(p.Snapshots))
		}
		if len(txns) != len(p.TxnIndex) {
			t.Fatalf("%s: %d aborted transactions, want %d", p.Dir, len(txns), len(p.TxnIndex))
		}
		for k, w := range p.TxnIndex {
			if a := txns[k]; a.ProducerID != w.ProducerID || a.FirstOffset != w.FirstOffset || a.LastOffset != w.LastOffset || a.LastStableOffset != w.LastStableOffset {
				t.Fatalf("%s: aborted transaction %d %+v, want %+v", p.Dir, k, a, w)
			}
		}
	}
}

// A time lookup does not start from a .timeindex entry that is not what
// Kafka writes (the largest timestamp so far, at the last offset of the
// batch carrying it), nor pass a segment over on the word of such a last
// entry: whatever the lie, OffsetAtTime finds what the records say.
func TestKafkaTimeIndexLies(t *testing.T) {
	m := kmLoad(t)
	i := slices.IndexFunc(m.LogDir.Partitions, func(p kmPartition) bool { return filepath.Base(p.Dir) == "orders-1" })
	p := m.LogDir.Partitions[i]
	if len(p.Segments) < 3 {
		t.Fatalf("orders-1 has %d segments", len(p.Segments))
	}
	first, second := p.Segments[0], p.Segments[1]
	if b := p.Batches[0]; b.LastOffset+1 >= second.BaseOffset || b.MaxTimestamp >= first.TimeIndexEntries[0].Timestamp {
		t.Fatalf("orders-1's first batch, %+v, is not one of several in its segment", b)
	}
	entry := func(seg uint64, ts, off int64) []byte {
		return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, uint64(ts)), uint32(off-int64(seg)))
	}
	secondLast := int64(p.Segments[2].BaseOffset) - 1
	for name, lie := range map[string]struct {
		seg   uint64
		entry []byte
	}{
		// The one entry names an offset of the segment after.
		"past the segment": {second.BaseOffset, entry(second.BaseOffset, second.TimeIndexEntries[0].Timestamp, secondLast+20)},
		// The one entry's timestamp is below its batch's: the records
		// before it are later than it says.
		"timestamp too low": {second.BaseOffset, entry(second.BaseOffset, p.Records[0].Timestamp, secondLast)},
		// The first segment's last entry says all of it is older than
		// anything after its first record.
		"largest too low": {first.BaseOffset, entry(first.BaseOffset, p.Records[0].Timestamp, int64(second.BaseOffset)-1)},
		// Only an entry for the first batch is left, true of it: the
		// segment's later batches, and the entry Kafka adds when it rolls
		// it, are not in it.
		"last entries lost": {first.BaseOffset, entry(first.BaseOffset, p.Batches[0].MaxTimestamp, int64(p.Batches[0].LastOffset))},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "orders-1")
			if err := os.CopyFS(dir, os.DirFS(filepath.Join(kafkaFixtures, p.Dir))); err != nil {
				t.Fatal(err)
			}
			kdWrite(t, filepath.Join(dir, fmt.Sprintf("%020d.timeindex", lie.seg)), lie.entry)
			kp, err := logstore.OpenKafkaPartition(dir, "orders-1")
			if err != nil {
				t.Fatal(err)
			}
			defer kp.Close()
			kp.SetLogStart(p.LogStartOffset)
			checkOffsetAtTime(t, kp, &p, p.LogEndOffset)
		})
	}
}

// read_committed goes by the transaction markers, whatever the .txnindex
// says; verify-crc reports what it gets wrong.
func TestKafkaTxnIndexLies(t *testing.T) {
	m := kmLoad(t)
	p := m.LogDir.Partitions[slices.IndexFunc(m.LogDir.Partitions, func(p kmPartition) bool { return filepath.Base(p.Dir) == "payments-0" })]
	const txnindex = "00000000000000000006.txnindex" // producer 7602640363166220134's abort, 8..12
	entry := func(pid, first, last, lso int64) []byte {
		b := binary.BigEndian.AppendUint16(nil, 0)
		for _, v := range []int64{pid, first, last, lso} {
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		}
		return b
	}
	for name, c := range map[string]struct {
		index   []byte // nil: no .txnindex
		finding string // a finding verify-crc must make
		sev     logstore.Severity
	}{
		"missing": {nil, "1 abort marker without an entry, the first of producer 7602640363166220134 at offset 12", logstore.SeverityNote},
		// The entry leaves out the transaction's first batch, 8..10.
		"first offset too high": {entry(7602640363166220134, 11, 12, 6), "entry 0: first offset 11, but producer 7602640363166220134's aborted transaction has records from 8", logstore.SeverityProblem},
		// The entry names the other producer's commit at 14.
		"commit named": {entry(1143371588126580514, 13, 14, 6), "entry 0: no abort marker of producer 1143371588126580514 at offset 14", logstore.SeverityProblem},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "payments-0")
			if err := os.CopyFS(dir, os.DirFS(filepath.Join(kafkaFixtures, p.Dir))); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, txnindex)
			if c.index == nil {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			} else {
				kdWrite(t, path, c.index)
			}
			kp, err := logstore.OpenKafkaPartition(dir, "payments-0")
			if err != nil {
				t.Fatal(err)
			}
			defer kp.Close()
			kp.SetLogStart(p.LogStartOffset)
			it, err := kp.ReadKafka(0, logstore.KafkaReadOptions{ReadCommitted: true})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := kmRead(t, it)
			checkRecords(t, &p, got, p.want(true))
			_, fs := kmVerify(t, kp)
			if !slices.ContainsFunc(fs, func(f logstore.Finding) bool { return f.Severity == c.sev && strings.Contains(f.Reason, c.finding) }) {
				t.Errorf("verify-crc findings %v: want one saying %q", fs, c.finding)
			}
		})
	}
}
