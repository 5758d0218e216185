package logstore

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
)

// Helpers of this file carry a wt prefix: other test files of the package
// are written at the same time and must not clash.

func wtStore(t *testing.T, topic string, partitions int, st Settings) *Store {
	t.Helper()
	s := Open(filepath.Join(t.TempDir(), "data"))
	if err := s.CreateTopic(topic, partitions, st); err != nil {
		t.Fatal(err)
	}
	return s
}

func wtFaultStore(t *testing.T, topic string, partitions int, st Settings) (*Store, *faultFS) {
	t.Helper()
	fault := newFaultFS()
	s := &Store{dir: filepath.Join(t.TempDir(), "data"), fs: fault}
	if err := s.CreateTopic(topic, partitions, st); err != nil {
		t.Fatal(err)
	}
	fault.reset()
	return s, fault
}

func wtOpen(t *testing.T, s *Store, topic string, opts WriterOptions) *Writer {
	t.Helper()
	if opts.LockWait == 0 {
		opts.LockWait = 100 * time.Millisecond
	}
	w, err := s.OpenWriter(topic, 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func wtAppend(t *testing.T, w *Writer, ts int64, key, value string) uint64 {
	t.Helper()
	var k []byte
	if key != "" {
		k = []byte(key)
	}
	off, err := w.Append(ts, k, []byte(value))
	if err != nil {
		t.Fatalf("append %q: %v", value, err)
	}
	return off
}

func wtClose(t *testing.T, w *Writer) {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// wtReadAll reads a partition from offset 0 and copies out every record.
func wtReadAll(t *testing.T, s *Store, topic string, partition int) []Record {
	t.Helper()
	p, err := s.OpenPartition(topic, partition)
	if err != nil {
		t.Fatal(err)
	}
	it, err := p.Read(0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []Record
	for it.Next() {
		r := it.Record()
		r.Key = bytes.Clone(r.Key)
		r.Value = bytes.Clone(r.Value)
		out = append(out, *r)
	}
	if err := it.Err(); err != nil {
		t.Fatalf("read %s/%d: %v", topic, partition, err)
	}
	return out
}

func wtSegPath(s *Store, topic string, base uint64, ext string) string {
	return filepath.Join(s.PartitionDir(topic, 0), format.SegmentName(base, ext))
}

func wtRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wtWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wtRecord encodes a record as the writer must have written it.
func wtRecord(off uint64, ts int64, key, value string) []byte {
	var k []byte
	if key != "" {
		k = []byte(key)
	}
	return format.AppendRecord(nil, &format.Record{Offset: off, Timestamp: ts, Key: k, Value: []byte(value)})
}

// wtBases lists the base offsets of a partition directory's .log files,
// checking that every segment has its three files with well-formed names.
func wtBases(t *testing.T, dir string) []uint64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[uint64]int{}
	for _, e := range entries {
		base, _, err := format.ParseSegmentName(e.Name())
		if err != nil {
			continue
		}
		if !strings.HasPrefix(e.Name(), fmt.Sprintf("%020d.", base)) {
			t.Errorf("segment file %s is not named by 20 digits", e.Name())
		}
		files[base]++
	}
	var bases []uint64
	for b, n := range files {
		if n != 3 {
			t.Errorf("segment %d has %d of its 3 files", b, n)
		}
		bases = append(bases, b)
	}
	slices.Sort(bases)
	return bases
}

func wtIndex(t *testing.T, path string) []format.IndexEntry {
	t.Helper()
	b := wtRead(t, path)
	if len(b)%format.IndexEntryLen != 0 {
		t.Fatalf("%s: %d bytes, not whole entries", path, len(b))
	}
	var out []format.IndexEntry
	for ; len(b) > 0; b = b[format.IndexEntryLen:] {
		e, err := format.ParseIndexEntry(b)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func wtTimeIndex(t *testing.T, path string) []format.TimeIndexEntry {
	t.Helper()
	b := wtRead(t, path)
	if len(b)%format.IndexEntryLen != 0 {
		t.Fatalf("%s: %d bytes, not whole entries", path, len(b))
	}
	var out []format.TimeIndexEntry
	for ; len(b) > 0; b = b[format.IndexEntryLen:] {
		e, err := format.ParseTimeIndexEntry(b)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// wtCheckIndexes checks every segment of a partition: each .log is a
// whole sequence of valid records with contiguous offsets from its base,
// and every .index/.timeindex entry names a record at that position with
// that timestamp, in increasing offset order.
func wtCheckIndexes(t *testing.T, dir string) {
	t.Helper()
	for _, base := range wtBases(t, dir) {
		seg := segment{dir: dir, base: base}
		log := wtRead(t, seg.path(format.LogExt))
		type at struct {
			pos int64
			ts  int64
		}
		recs := map[uint64]at{}
		next := base
		for pos := 0; pos < len(log); {
			r, h, err := format.ParseRecord(log[pos:])
			if err != nil {
				t.Fatalf("%s: record at %d: %v", seg.path(format.LogExt), pos, err)
			}
			if r.Offset != next {
				t.Fatalf("%s: offset %d at %d, want %d", seg.path(format.LogExt), r.Offset, pos, next)
			}
			recs[r.Offset] = at{int64(pos), r.Timestamp}
			next++
			pos += int(h.RecordLen())
		}
		var prev int64 = -1
		for _, e := range wtIndex(t, seg.path(format.IndexExt)) {
			if int64(e.Offset) <= prev {
				t.Errorf("%s: entry for %d after %d", seg.path(format.IndexExt), e.Offset, prev)
			}
			prev = int64(e.Offset)
			if r, ok := recs[e.Offset]; !ok || r.pos != e.Pos {
				t.Errorf("%s: entry (%d, %d) does not point at that record", seg.path(format.IndexExt), e.Offset, e.Pos)
			}
		}
		prev = -1
		for _, e := range wtTimeIndex(t, seg.path(format.TimeIndexExt)) {
			if int64(e.Offset) <= prev {
				t.Errorf("%s: entry for %d after %d", seg.path(format.TimeIndexExt), e.Offset, prev)
			}
			prev = int64(e.Offset)
			if r, ok := recs[e.Offset]; !ok || r.ts != e.Timestamp {
				t.Errorf("%s: entry (%d, %d) does not match that record", seg.path(format.TimeIndexExt), e.Offset, e.Timestamp)
			}
		}
	}
}

func TestWriterAppendReadBack(t *testing.T) {
	s := wtStore(t, "orders", 1, Settings{})
	w := wtOpen(t, s, "orders", WriterOptions{})
	ins := []struct {
		key   []byte
		value []byte
	}{
		{[]byte("user-1"), []byte("hello")},
		{nil, []byte("keyless")},
		{[]byte("user-2"), []byte{}},
		{[]byte{}, []byte("an empty key is no key")},
		{[]byte{0, 0xff, '\n'}, []byte("binary\x00value\n")},
		{nil, nil},
	}
	for i, in := range ins {
		off, err := w.Append(1000+int64(i), in.key, in.value)
		if err != nil {
			t.Fatal(err)
		}
		if off != uint64(i) {
			t.Fatalf("append %d got offset %d", i, off)
		}
	}
	if w.NextOffset() != uint64(len(ins)) {
		t.Fatalf("NextOffset %d, want %d", w.NextOffset(), len(ins))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.Written() != uint64(len(ins)) {
		t.Fatalf("Written %d after Flush, want %d", w.Written(), len(ins))
	}
	wtClose(t, w)

	recs := wtReadAll(t, s, "orders", 0)
	if len(recs) != len(ins) {
		t.Fatalf("read %d records, want %d", len(recs), len(ins))
	}
	for i, r := range recs {
		in := ins[i]
		if r.Offset != uint64(i) || r.Timestamp != 1000+int64(i) {
			t.Errorf("record %d: offset %d ts %d", i, r.Offset, r.Timestamp)
		}
		if len(in.key) == 0 {
			if r.Key != nil {
				t.Errorf("record %d: keyless record read back with key %q", i, r.Key)
			}
		} else if !bytes.Equal(r.Key, in.key) {
			t.Errorf("record %d: key %q, want %q", i, r.Key, in.key)
		}
		if !bytes.Equal(r.Value, in.value) {
			t.Errorf("record %d: value %q, want %q", i, r.Value, in.value)
		}
	}
	wtCheckIndexes(t, s.PartitionDir("orders", 0))
}

// The docs/format.md §2 worked example, written through a Writer, must give exactly
// the spec's bytes (copied from docs/format.md, not produced by our encoder).
func TestWriterSpecWorkedExample(t *testing.T) {
	s := wtStore(t, "users", 1, Settings{})
	w := wtOpen(t, s, "users", WriterOptions{})
	wtAppend(t, w, 1700000000000000000, "user-1", "hello")
	wtAppend(t, w, 1700000000100000000, "user-2", "world")
	wtAppend(t, w, 1700000000200000000, "user-1", "foo")
	wtClose(t, w)
	want, _ := hex.DecodeString("00000000000000000000000b73b4c3d217979cfe362a000000000006757365722d3168656c6c6f" +
		"00000000000000010000000bc23277ba17979cfe3c1fe10000000006757365722d32776f726c64" +
		"000000000000000200000009e14ccc3d17979cfe4215c20000000006757365722d31666f6f")
	if got := wtRead(t, wtSegPath(s, "users", 0, format.LogExt)); !bytes.Equal(got, want) {
		t.Fatalf(".log bytes\n got %x\nwant %x", got, want)
	}
	idx := wtIndex(t, wtSegPath(s, "users", 0, format.IndexExt))
	wantIdx := []format.IndexEntry{{Offset: 0, Pos: 0}, {Offset: 1, Pos: 39}, {Offset: 2, Pos: 78}}
	if !slices.Equal(idx, wantIdx) {
		t.Fatalf(".index %v, want %v", idx, wantIdx)
	}
}

func TestWriterTimestampFloor(t *testing.T) {
	s := wtStore(t, "ts", 1, Settings{})
	w := wtOpen(t, s, "ts", WriterOptions{})
	wtAppend(t, w, 5000, "", "a")
	wtAppend(t, w, 3000, "", "b") // clock went back: stays at 5000
	wtAppend(t, w, 7000, "", "c")
	wtAppend(t, w, 6999, "", "d")
	wtClose(t, w)

	// A new writer must restore the floor from the file.
	w = wtOpen(t, s, "ts", WriterOptions{})
	wtAppend(t, w, 1, "", "e")
	wtClose(t, w)

	want := []int64{5000, 5000, 7000, 7000, 7000}
	var got []int64
	for _, r := range wtReadAll(t, s, "ts", 0) {
		got = append(got, r.Timestamp)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("timestamps %v, want %v", got, want)
	}
	wtCheckIndexes(t, s.PartitionDir("ts", 0))
}

// After a roll, the active segment may be empty (a crash right after the
// roll, or a sweep that rolled it): the floor then comes from the segment
// before.
func TestWriterTimestampFloorEmptyActiveSegment(t *testing.T) {
	s := wtStore(t, "ts", 1, Settings{})
	rec := format.RecordLen(nil, []byte("x"))
	w := wtOpen(t, s, "ts", WriterOptions{SegmentBytes: 2 * rec})
	wtAppend(t, w, 9000, "", "x")
	wtAppend(t, w, 9500, "", "x")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	wtAppend(t, w, 100, "", "x") // rolls: segment 2 is created, the record stays buffered
	// Crash: the buffered record is lost, the new segment stays empty.
	if err := w.closeFiles(); err != nil {
		t.Fatal(err)
	}
	if err := w.lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	dir := s.PartitionDir("ts", 0)
	if got := wtBases(t, dir); !slices.Equal(got, []uint64{0, 2}) {
		t.Fatalf("segments %v, want [0 2]", got)
	}
	if fi, err := os.Stat(wtSegPath(s, "ts", 2, format.LogExt)); err != nil || fi.Size() != 0 {
		t.Fatalf("segment 2 should be empty: %v %v", fi, err)
	}

	w = wtOpen(t, s, "ts", WriterOptions{SegmentBytes: 2 * rec})
	if w.NextOffset() != 2 {
		t.Fatalf("NextOffset %d, want 2", w.NextOffset())
	}
	if off := wtAppend(t, w, 1, "", "y"); off != 2 {
		t.Fatalf("offset %d, want 2", off)
	}
	wtClose(t, w)
	recs := wtReadAll(t, s, "ts", 0)
	if len(recs) != 3 || recs[2].Timestamp != 9500 || string(recs[2].Value) != "y" {
		t.Fatalf("after reopen on an empty active segment: %+v (want ts 9500 for offset 2)", recs)
	}
}

func TestWriterIndexInterval(t *testing.T) {
	const n = 3
	s := wtStore(t, "idx", 1, Settings{})
	value := "0123456789"
	rec := format.RecordLen(nil, []byte(value))
	opts := WriterOptions{IndexInterval: n, SegmentBytes: 7 * rec}
	ts := func(off uint64) int64 { return 1_000_000 + int64(off)*10 }

	w := wtOpen(t, s, "idx", opts)
	for off := uint64(0); off < 11; off++ {
		wtAppend(t, w, ts(off), "", value)
	}
	wtClose(t, w)
	// Reopening mid-segment must keep counting k from the segment's start.
	w = wtOpen(t, s, "idx", opts)
	for off := uint64(11); off < 20; off++ {
		wtAppend(t, w, ts(off), "", value)
	}
	wtClose(t, w)

	dir := s.PartitionDir("idx", 0)
	bases := wtBases(t, dir)
	if !slices.Equal(bases, []uint64{0, 7, 14}) {
		t.Fatalf("segments %v, want [0 7 14]", bases)
	}
	for i, base := range bases {
		end := uint64(20)
		if i+1 < len(bases) {
			end = bases[i+1]
		}
		var wantIdx []format.IndexEntry
		var wantTidx []format.TimeIndexEntry
		for k := uint64(0); base+k < end; k++ {
			if k%n == 0 {
				wantIdx = append(wantIdx, format.IndexEntry{Offset: base + k, Pos: int64(k) * rec})
				wantTidx = append(wantTidx, format.TimeIndexEntry{Offset: base + k, Timestamp: ts(base + k)})
			}
		}
		seg := segment{dir: dir, base: base}
		if got := wtIndex(t, seg.path(format.IndexExt)); !slices.Equal(got, wantIdx) {
			t.Errorf("segment %d .index %v, want %v", base, got, wantIdx)
		}
		if got := wtTimeIndex(t, seg.path(format.TimeIndexExt)); !slices.Equal(got, wantTidx) {
			t.Errorf("segment %d .timeindex %v, want %v", base, got, wantTidx)
		}
		// Byte-exact too: the files are nothing but these entries.
		var raw []byte
		for _, e := range wantIdx {
			raw = format.AppendIndexEntry(raw, e)
		}
		if got := wtRead(t, seg.path(format.IndexExt)); !bytes.Equal(got, raw) {
			t.Errorf("segment %d .index bytes %x, want %x", base, got, raw)
		}
	}
}

func TestWriterRollBySize(t *testing.T) {
	s := wtStore(t, "roll", 1, Settings{})
	small := "abcdefghij"
	rec := format.RecordLen(nil, []byte(small))
	big := strings.Repeat("B", int(3*rec))
	// Two small records fill a segment exactly: size(S)+len(R) == limit
	// does not roll, one more byte would.
	w := wtOpen(t, s, "roll", WriterOptions{SegmentBytes: 2 * rec})
	values := []string{small, small, small, big, small, big, big, small, small}
	for i, v := range values {
		wtAppend(t, w, int64(i), "", v)
	}
	wtClose(t, w)

	dir := s.PartitionDir("roll", 0)
	// 0,1 | 2 | big 3 | 4 | big 5 | big 6 | 7,8
	want := []uint64{0, 2, 3, 4, 5, 6, 7}
	if got := wtBases(t, dir); !slices.Equal(got, want) {
		t.Fatalf("segments %v, want %v", got, want)
	}
	for _, name := range []string{"00000000000000000000.log", "00000000000000000002.log", "00000000000000000007.timeindex"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("want %s: %v", name, err)
		}
	}
	// Every segment holds whole records, starting with its base offset.
	wtCheckIndexes(t, dir)
	for i, base := range want {
		fi, err := os.Stat(filepath.Join(dir, format.SegmentName(base, format.LogExt)))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 2*rec && values[base] != big {
			t.Errorf("segment %d is %d bytes, over the limit %d", base, fi.Size(), 2*rec)
		}
		if values[base] == big && fi.Size() != format.RecordLen(nil, []byte(big)) {
			t.Errorf("big record %d shares segment %d (%d bytes)", base, i, fi.Size())
		}
	}
	recs := wtReadAll(t, s, "roll", 0)
	if len(recs) != len(values) {
		t.Fatalf("read %d records, want %d", len(recs), len(values))
	}
	for i, r := range recs {
		if r.Offset != uint64(i) || string(r.Value) != values[i] {
			t.Errorf("record %d: offset %d, value of %d bytes", i, r.Offset, len(r.Value))
		}
	}
}

func TestWriterRollByAge(t *testing.T) {
	s := wtStore(t, "age", 1, Settings{})
	t0 := int64(1_700_000_000_000_000_000)
	h := int64(time.Hour)
	w := wtOpen(t, s, "age", WriterOptions{RollAfter: time.Hour})
	wtAppend(t, w, t0, "", "a")
	wtAppend(t, w, t0+h/2, "", "b")     // 30 min after the segment's first: stays
	wtAppend(t, w, t0+2*h, "", "c")     // 2 h after: rolls
	wtAppend(t, w, t0+2*h+h/2, "", "d") // stays with c
	wtClose(t, w)
	// The roll age also holds across a reopen (firstTS read back).
	w = wtOpen(t, s, "age", WriterOptions{RollAfter: time.Hour})
	wtAppend(t, w, t0+3*h+h/2, "", "e") // 1.5 h after c: rolls
	wtClose(t, w)
	if got := wtBases(t, s.PartitionDir("age", 0)); !slices.Equal(got, []uint64{0, 2, 4}) {
		t.Fatalf("segments %v, want [0 2 4]", got)
	}
}

func TestWriterReopenContinues(t *testing.T) {
	s := wtStore(t, "re", 1, Settings{})
	rec := format.RecordLen(nil, []byte("v0"))
	opts := WriterOptions{SegmentBytes: 3 * rec}
	next := uint64(0)
	for round := 0; round < 4; round++ {
		w := wtOpen(t, s, "re", opts)
		if w.NextOffset() != next {
			t.Fatalf("round %d: NextOffset %d, want %d", round, w.NextOffset(), next)
		}
		for i := 0; i < 2+round; i++ {
			if off := wtAppend(t, w, int64(next), "", fmt.Sprintf("v%d", next%10)); off != next {
				t.Fatalf("offset %d, want %d", off, next)
			}
			next++
		}
		wtClose(t, w)
	}
	recs := wtReadAll(t, s, "re", 0)
	if uint64(len(recs)) != next {
		t.Fatalf("read %d records, want %d", len(recs), next)
	}
	for i, r := range recs {
		if r.Offset != uint64(i) || string(r.Value) != fmt.Sprintf("v%d", i%10) {
			t.Errorf("record %d: offset %d value %q", i, r.Offset, r.Value)
		}
	}
	wtCheckIndexes(t, s.PartitionDir("re", 0))
}

// After a power loss the index pages may have reached the disk and the log
// pages not: entries past the log's end, and a partial entry. The writer
// must trim them so its new entries follow in order.
func TestWriterReopenStaleIndex(t *testing.T) {
	s := wtStore(t, "stale", 1, Settings{})
	w := wtOpen(t, s, "stale", WriterOptions{})
	for i := 0; i < 5; i++ {
		wtAppend(t, w, int64(100+i), "k", fmt.Sprintf("value-%d", i))
	}
	wtClose(t, w)
	logPath := wtSegPath(s, "stale", 0, format.LogExt)
	idxPath := wtSegPath(s, "stale", 0, format.IndexExt)
	tidxPath := wtSegPath(s, "stale", 0, format.TimeIndexExt)
	logSize := int64(len(wtRead(t, logPath)))

	idx := wtRead(t, idxPath)
	idx = format.AppendIndexEntry(idx, format.IndexEntry{Offset: 5, Pos: logSize})
	idx = format.AppendIndexEntry(idx, format.IndexEntry{Offset: 6, Pos: logSize + 1000})
	idx = append(idx, 0, 0, 0, 0, 0, 0, 0, 7, 0) // a partial entry
	wtWrite(t, idxPath, idx)
	tidx := wtRead(t, tidxPath)
	tidx = format.AppendTimeIndexEntry(tidx, format.TimeIndexEntry{Offset: 5, Timestamp: 105})
	tidx = format.AppendTimeIndexEntry(tidx, format.TimeIndexEntry{Offset: 6, Timestamp: 106})
	tidx = append(tidx, 1, 2, 3)
	wtWrite(t, tidxPath, tidx)

	var warnings []string
	w = wtOpen(t, s, "stale", WriterOptions{Warn: func(m string) { warnings = append(warnings, m) }})
	if w.NextOffset() != 5 {
		t.Fatalf("NextOffset %d, want 5", w.NextOffset())
	}
	if len(warnings) != 0 {
		t.Errorf("a stale index is no torn tail, but got warnings %q", warnings)
	}
	for i := 5; i < 8; i++ {
		wtAppend(t, w, int64(100+i), "k", fmt.Sprintf("value-%d", i))
	}
	wtClose(t, w)

	gotIdx := wtIndex(t, idxPath)
	gotTidx := wtTimeIndex(t, tidxPath)
	if len(gotIdx) != 8 || len(gotTidx) != 8 {
		t.Fatalf("%d index and %d time-index entries, want 8 each", len(gotIdx), len(gotTidx))
	}
	for i := range 8 {
		if gotIdx[i].Offset != uint64(i) || gotTidx[i].Offset != uint64(i) || gotTidx[i].Timestamp != int64(100+i) {
			t.Errorf("entry %d: %v %v", i, gotIdx[i], gotTidx[i])
		}
	}
	wtCheckIndexes(t, s.PartitionDir("stale", 0))
	if n := len(wtReadAll(t, s, "stale", 0)); n != 8 {
		t.Fatalf("read %d records, want 8", n)
	}
}

func TestWriterTornTail(t *testing.T) {
	type setup struct {
		data  []byte // the .log as the crash left it
		cutAt int64
		next  uint64 // offset the next record gets
	}
	cases := []struct {
		name string
		make func(orig []byte, positions []int64) setup
	}{
		{"half record", func(orig []byte, _ []int64) setup {
			r := wtRecord(3, 1003, "k", "a record torn in two by a crash")
			return setup{data: append(bytes.Clone(orig), r[:len(r)/2]...), cutAt: int64(len(orig)), next: 3}
		}},
		{"half header", func(orig []byte, _ []int64) setup {
			r := wtRecord(3, 1003, "k", "v")
			return setup{data: append(bytes.Clone(orig), r[:10]...), cutAt: int64(len(orig)), next: 3}
		}},
		{"zero tail", func(orig []byte, _ []int64) setup {
			return setup{data: append(bytes.Clone(orig), make([]byte, 100)...), cutAt: int64(len(orig)), next: 3}
		}},
		{"flipped crc of last record", func(orig []byte, pos []int64) setup {
			d := bytes.Clone(orig)
			d[pos[2]+12] ^= 0x40 // crc field of record 2
			return setup{data: d, cutAt: pos[2], next: 2}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := wtStore(t, "torn", 1, Settings{})
			w := wtOpen(t, s, "torn", WriterOptions{})
			var positions []int64
			for i := 0; i < 3; i++ {
				positions = append(positions, int64(len(wtRecord(0, 0, "k", "v0"))*i))
				wtAppend(t, w, int64(1000+i), "k", fmt.Sprintf("v%d", i))
			}
			wtClose(t, w)
			logPath := wtSegPath(s, "torn", 0, format.LogExt)
			orig := wtRead(t, logPath)
			st := tc.make(orig, positions)
			wtWrite(t, logPath, st.data)

			var warnings []string
			w, err := s.OpenWriter("torn", 0, WriterOptions{Warn: func(m string) { warnings = append(warnings, m) }})
			if err != nil {
				t.Fatalf("OpenWriter: %v", err)
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "torn/0") {
				t.Errorf("want one warning naming torn/0, got %q", warnings)
			}
			if got := wtRead(t, logPath); !bytes.Equal(got, st.data[:st.cutAt]) {
				t.Errorf(".log not cut back to byte %d: %d bytes", st.cutAt, len(got))
			}
			if w.NextOffset() != st.next {
				t.Errorf("NextOffset %d, want %d", w.NextOffset(), st.next)
			}

			// The cut bytes are in quarantine, with a note.
			qdir := filepath.Join(s.Dir(), QuarantineDir, "torn", "0")
			entries, err := os.ReadDir(qdir)
			if err != nil {
				t.Fatal(err)
			}
			var bins, notes []string
			for _, e := range entries {
				switch filepath.Ext(e.Name()) {
				case ".bin":
					bins = append(bins, e.Name())
				case ".json":
					notes = append(notes, e.Name())
				default:
					t.Errorf("unexpected quarantine file %s", e.Name())
				}
			}
			if len(bins) != 1 || len(notes) != 1 {
				t.Fatalf("quarantine holds %v", entries)
			}
			if got := wtRead(t, filepath.Join(qdir, bins[0])); !bytes.Equal(got, st.data[st.cutAt:]) {
				t.Errorf("quarantined bytes %x, want %x", got, st.data[st.cutAt:])
			}
			var note struct {
				Source string `json:"source"`
				Pos    int64  `json:"pos"`
				Length int64  `json:"length"`
				Data   string `json:"data"`
			}
			if err := json.Unmarshal(wtRead(t, filepath.Join(qdir, notes[0])), &note); err != nil {
				t.Fatal(err)
			}
			if note.Source != logPath || note.Pos != st.cutAt || note.Length != int64(len(st.data))-st.cutAt || note.Data != bins[0] {
				t.Errorf("note %+v, want source %s pos %d length %d data %s", note, logPath, st.cutAt, int64(len(st.data))-st.cutAt, bins[0])
			}

			if off := wtAppend(t, w, 5000, "k", "after"); off != st.next {
				t.Errorf("append after cut got offset %d, want %d", off, st.next)
			}
			wtClose(t, w)
			recs := wtReadAll(t, s, "torn", 0)
			if uint64(len(recs)) != st.next+1 || string(recs[len(recs)-1].Value) != "after" {
				t.Fatalf("read back %d records, want %d ending with 'after'", len(recs), st.next+1)
			}
			for i, r := range recs {
				if r.Offset != uint64(i) {
					t.Errorf("record %d has offset %d", i, r.Offset)
				}
			}
			wtCheckIndexes(t, s.PartitionDir("torn", 0))
		})
	}
}

func TestWriterRefusesCorruptActiveSegment(t *testing.T) {
	// Opening scans from the last index entry that checks out (it must not
	// read a whole segment), so the damage lies after it: the index either
	// ends before the damaged record or is empty.
	for _, tc := range []struct {
		name  string
		index bool // keep the .index's first entry (else: empty)
	}{{"index ending before the damage", true}, {"without index", false}} {
		t.Run(tc.name, func(t *testing.T) {
			s := wtStore(t, "bad", 1, Settings{})
			w := wtOpen(t, s, "bad", WriterOptions{})
			rec := int64(len(wtRecord(0, 0, "key", "value-0")))
			for i := 0; i < 5; i++ {
				wtAppend(t, w, int64(1000+i), "key", fmt.Sprintf("value-%d", i))
			}
			wtClose(t, w)
			dir := s.PartitionDir("bad", 0)
			logPath := wtSegPath(s, "bad", 0, format.LogExt)
			data := wtRead(t, logPath)
			data[rec+format.HeaderLen+5] ^= 0x01 // a value byte of record 1
			wtWrite(t, logPath, data)
			keep := 0
			if tc.index {
				keep = format.IndexEntryLen
			}
			for _, ext := range []string{format.IndexExt, format.TimeIndexExt} {
				p := wtSegPath(s, "bad", 0, ext)
				wtWrite(t, p, wtRead(t, p)[:keep])
			}
			before := map[string][]byte{}
			for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
				before[ext] = wtRead(t, wtSegPath(s, "bad", 0, ext))
			}

			var warnings []string
			_, err := s.OpenWriter("bad", 0, WriterOptions{LockWait: 100 * time.Millisecond, Warn: func(m string) { warnings = append(warnings, m) }})
			if err == nil {
				t.Fatal("OpenWriter accepted an active segment with a corrupt record in the middle")
			}
			var ce *CorruptionError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is no *CorruptionError", err)
			}
			if ce.Path != logPath || ce.Pos != rec || ce.Offset != 1 {
				t.Errorf("CorruptionError{Path: %s, Pos: %d, Offset: %d}, want %s, %d, 1", ce.Path, ce.Pos, ce.Offset, logPath, rec)
			}
			if !errors.Is(err, format.ErrCRC) {
				t.Errorf("error %v does not wrap format.ErrCRC", err)
			}
			if !strings.Contains(err.Error(), "seglog recover") {
				t.Errorf("error %q gives no advice to run 'seglog recover'", err)
			}
			if len(warnings) != 0 {
				t.Errorf("warnings %q", warnings)
			}
			for ext, b := range before {
				if got := wtRead(t, wtSegPath(s, "bad", 0, ext)); !bytes.Equal(got, b) {
					t.Errorf("%s changed by a refused OpenWriter", ext)
				}
			}
			if _, err := os.Stat(filepath.Join(s.Dir(), QuarantineDir)); err == nil {
				t.Errorf("a refused OpenWriter quarantined something")
			}
			if pid := WriterPid(dir); pid != 0 {
				t.Errorf("lock still held (pid %d) after a refused OpenWriter", pid)
			}
			// The lock was released: a second try fails the same way, not
			// with a LockedError.
			_, err = s.OpenWriter("bad", 0, WriterOptions{LockWait: 10 * time.Millisecond})
			var le *LockedError
			if errors.As(err, &le) || !errors.As(err, &ce) {
				t.Errorf("second OpenWriter: %v", err)
			}
		})
	}
}

func TestWriterPartialWrite(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EFBIG, syscall.ENOSPC, syscall.EIO} {
		t.Run(errno.Error(), func(t *testing.T) {
			s, fault := wtFaultStore(t, "full", 1, Settings{})
			w := wtOpen(t, s, "full", WriterOptions{})
			value := func(i int) string { return fmt.Sprintf("value-%02d-xxxxxxxxxx", i) }
			var want []byte
			for i := 0; i < 2; i++ {
				wtAppend(t, w, int64(100+i), "k", value(i))
				want = append(want, wtRecord(uint64(i), int64(100+i), "k", value(i))...)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			var batch [][]byte
			for i := 2; i < 5; i++ {
				wtAppend(t, w, int64(100+i), "k", value(i))
				batch = append(batch, wtRecord(uint64(i), int64(100+i), "k", value(i)))
			}
			// The write stops in the middle of the batch's third record.
			n := len(batch[0]) + len(batch[1]) + len(batch[2])/2
			fault.failWrite(".log", n, errno)
			err := w.Flush()
			if !errors.Is(err, errno) {
				t.Fatalf("Flush: %v, want an error wrapping %v", err, errno)
			}
			want = append(want, batch[0]...)
			want = append(want, batch[1]...)
			logPath := wtSegPath(s, "full", 0, format.LogExt)
			if got := wtRead(t, logPath); !bytes.Equal(got, want) {
				t.Fatalf(".log holds %d bytes, want exactly the %d bytes of 4 whole records", len(got), len(want))
			}
			if w.Written() != 4 {
				t.Errorf("Written %d, want 4", w.Written())
			}
			if _, err := w.Append(200, nil, []byte("more")); !errors.Is(err, ErrWriterFailed) {
				t.Errorf("Append after a failed write: %v, want ErrWriterFailed", err)
			}
			if err := w.Flush(); !errors.Is(err, ErrWriterFailed) {
				t.Errorf("Flush after a failed write: %v, want ErrWriterFailed", err)
			}
			if err := w.Close(); err == nil {
				t.Errorf("Close of a failed writer returned nil")
			}
			if got := wtRead(t, logPath); !bytes.Equal(got, want) {
				t.Fatalf(".log changed after the failure: %d bytes", len(got))
			}
			recs := wtReadAll(t, s, "full", 0)
			if len(recs) != 4 {
				t.Fatalf("read %d records, want 4", len(recs))
			}
			for i, r := range recs {
				if r.Offset != uint64(i) || string(r.Value) != value(i) {
					t.Errorf("record %d: %d %q", i, r.Offset, r.Value)
				}
			}
			wtCheckIndexes(t, s.PartitionDir("full", 0))
			if got := len(wtIndex(t, wtSegPath(s, "full", 0, format.IndexExt))); got != 4 {
				t.Errorf("%d index entries, want 4 (those of the whole records)", got)
			}
			// Nothing torn was left: a new writer starts cleanly at 4.
			var warnings []string
			w = wtOpen(t, s, "full", WriterOptions{Warn: func(m string) { warnings = append(warnings, m) }})
			if w.NextOffset() != 4 || len(warnings) != 0 {
				t.Errorf("reopen: NextOffset %d, warnings %q", w.NextOffset(), warnings)
			}
			wtClose(t, w)
		})
	}
}

// A write that fails before a single whole record made it keeps nothing.
func TestWriterPartialWriteFirstRecord(t *testing.T) {
	s, fault := wtFaultStore(t, "full", 1, Settings{})
	w := wtOpen(t, s, "full", WriterOptions{})
	wtAppend(t, w, 1, "", "first")
	fault.failWrite(".log", 7, syscall.ENOSPC)
	if err := w.Flush(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Flush: %v", err)
	}
	if got := wtRead(t, wtSegPath(s, "full", 0, format.LogExt)); len(got) != 0 {
		t.Fatalf(".log holds %d bytes, want none", len(got))
	}
	if w.Written() != 0 {
		t.Errorf("Written %d, want 0", w.Written())
	}
	_ = w.Close()
	if got := wtIndex(t, wtSegPath(s, "full", 0, format.IndexExt)); len(got) != 0 {
		t.Errorf("index entries %v for records never written", got)
	}
}

// An index write failing part-way leaves no partial entry and no entry
// ahead of the log; the log keeps its whole records.
func TestWriterPartialIndexWrite(t *testing.T) {
	s, fault := wtFaultStore(t, "full", 1, Settings{})
	w := wtOpen(t, s, "full", WriterOptions{})
	wtAppend(t, w, 1, "", "a")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	wtAppend(t, w, 2, "", "b")
	wtAppend(t, w, 3, "", "c")
	fault.failWrite(".index", 20, syscall.ENOSPC)
	if err := w.Flush(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Flush: %v", err)
	}
	if _, err := w.Append(4, nil, []byte("d")); !errors.Is(err, ErrWriterFailed) {
		t.Errorf("Append after a failed index write: %v", err)
	}
	_ = w.Close()
	wtCheckIndexes(t, s.PartitionDir("full", 0))
	w = wtOpen(t, s, "full", WriterOptions{})
	if w.NextOffset() != 3 {
		t.Errorf("NextOffset %d, want 3", w.NextOffset())
	}
	wtClose(t, w)
}

func TestWriterFailedSyncIsFatal(t *testing.T) {
	t.Run("batch", func(t *testing.T) {
		s, fault := wtFaultStore(t, "sync", 1, Settings{})
		w := wtOpen(t, s, "sync", WriterOptions{Sync: SyncBatch})
		wtAppend(t, w, 1, "", "a")
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		fault.failSync(".log", syscall.EIO)
		wtAppend(t, w, 2, "", "b")
		if err := w.Flush(); !errors.Is(err, syscall.EIO) {
			t.Fatalf("Flush with a failing sync: %v, want EIO", err)
		}
		// The disk "recovers": the writer must not.
		fault.mu.Lock()
		fault.syncErr = nil
		fault.mu.Unlock()
		if _, err := w.Append(3, nil, []byte("c")); !errors.Is(err, ErrWriterFailed) {
			t.Errorf("Append after a failed sync: %v, want ErrWriterFailed", err)
		}
		if err := w.Flush(); !errors.Is(err, ErrWriterFailed) {
			t.Errorf("Flush after a failed sync: %v, want ErrWriterFailed", err)
		}
		if err := w.Close(); !errors.Is(err, syscall.EIO) {
			t.Errorf("Close after a failed sync: %v, want the EIO", err)
		}
	})
	t.Run("exit", func(t *testing.T) {
		s, fault := wtFaultStore(t, "sync", 1, Settings{})
		w := wtOpen(t, s, "sync", WriterOptions{Sync: SyncExit})
		wtAppend(t, w, 1, "", "a")
		fault.failSync(".log", syscall.EIO)
		if err := w.Close(); !errors.Is(err, syscall.EIO) {
			t.Errorf("Close with a failing sync: %v, want EIO", err)
		}
		// The lock is released even so.
		w2 := wtOpen(t, s, "sync", WriterOptions{Sync: SyncNever})
		wtClose(t, w2)
	})
	t.Run("roll", func(t *testing.T) {
		s, fault := wtFaultStore(t, "sync", 1, Settings{})
		rec := format.RecordLen(nil, []byte("a"))
		w := wtOpen(t, s, "sync", WriterOptions{Sync: SyncExit, SegmentBytes: rec})
		wtAppend(t, w, 1, "", "a")
		fault.failSync(".log", syscall.EIO)
		if _, err := w.Append(2, nil, []byte("b")); !errors.Is(err, syscall.EIO) {
			t.Fatalf("Append whose roll fails to sync: %v, want EIO", err)
		}
		if _, err := w.Append(3, nil, []byte("c")); !errors.Is(err, ErrWriterFailed) {
			t.Errorf("Append after a failed sync: %v, want ErrWriterFailed", err)
		}
		_ = w.Close()
		if got := wtBases(t, s.PartitionDir("sync", 0)); !slices.Equal(got, []uint64{0}) {
			t.Errorf("a segment was created after its predecessor failed to sync: %v", got)
		}
	})
}

func TestWriterSyncModes(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode SyncMode
	}{{"batch", SyncBatch}, {"exit", SyncExit}, {"never", SyncNever}} {
		t.Run(mode.name, func(t *testing.T) {
			s, fault := wtFaultStore(t, "sync", 1, Settings{})
			dir := s.PartitionDir("sync", 0)
			seg0 := segment{dir: dir, base: 0}
			seg1 := segment{dir: dir, base: 2}
			rec := format.RecordLen(nil, []byte("r0"))
			w := wtOpen(t, s, "sync", WriterOptions{Sync: mode.mode, SegmentBytes: 2 * rec})
			// A syncing writer fsyncs the partition directory on opening: an
			// earlier writer may have left the active segment's entry unsynced.
			openDirSyncs := 0
			if mode.mode != SyncNever {
				openDirSyncs = 1
			}
			if files, dirs := fault.totalSyncs(); files != 0 || dirs != openDirSyncs {
				t.Errorf("opening a clean partition synced %d files, %d dirs; want 0, %d", files, dirs, openDirSyncs)
			}
			for i := 0; i < 2; i++ {
				before := fault.syncCount(seg0.path(format.LogExt))
				wtAppend(t, w, int64(i), "", fmt.Sprintf("r%d", i))
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				synced := fault.syncCount(seg0.path(format.LogExt)) - before
				switch mode.mode {
				case SyncBatch:
					// Each batch's records are durable once the .log is
					// synced; the indexes, hints, wait for the roll.
					if synced != 1 {
						t.Errorf("SyncBatch: a flush synced the .log %d times, want 1", synced)
					}
					for _, ext := range []string{format.IndexExt, format.TimeIndexExt} {
						if n := fault.syncCount(seg0.path(ext)); n != 0 {
							t.Errorf("SyncBatch: %s synced %d times after %d flushes, want 0 before the roll", ext, n, i+1)
						}
					}
					if w.Durable() != w.Written() {
						t.Errorf("SyncBatch: Durable %d after a flush, Written %d", w.Durable(), w.Written())
					}
				default:
					if synced != 0 {
						t.Errorf("%s: Flush synced the .log", mode.name)
					}
				}
			}
			if n := fault.dirSyncCount(dir) - openDirSyncs; n != 0 {
				t.Errorf("directory synced %d times before any roll", n)
			}
			beforeRoll := fault.syncCount(seg0.path(format.LogExt))
			wtAppend(t, w, 2, "", "r2") // rolls
			if got := wtBases(t, dir); !slices.Equal(got, []uint64{0, 2}) {
				t.Fatalf("segments %v, want [0 2]", got)
			}
			rollSyncs := fault.syncCount(seg0.path(format.LogExt)) - beforeRoll
			dirSyncs := fault.dirSyncCount(dir) - openDirSyncs
			if mode.mode == SyncNever {
				if rollSyncs != 0 || dirSyncs != 0 {
					t.Errorf("SyncNever: roll synced the .log %d times, the directory %d times", rollSyncs, dirSyncs)
				}
			} else {
				if mode.mode == SyncExit && rollSyncs < 1 {
					t.Errorf("roll did not sync the closed segment's .log")
				}
				for _, ext := range []string{format.IndexExt, format.TimeIndexExt} {
					if fault.syncCount(seg0.path(ext)) < 1 {
						t.Errorf("roll did not sync the closed segment's %s", ext)
					}
				}
				if dirSyncs < 1 {
					t.Errorf("roll did not fsync the partition directory")
				}
				// Order: closed segment synced, then the new files created,
				// then the directory synced.
				ev := fault.Events()
				iSync := slices.Index(ev, "sync "+seg0.path(format.LogExt))
				iCreate := slices.Index(ev, "create "+seg1.path(format.LogExt))
				iDir := slices.Index(ev[max(iCreate, 0):], "syncdir "+dir) + max(iCreate, 0)
				if !(iSync >= 0 && iSync < iCreate && iCreate < iDir) {
					t.Errorf("roll order wrong (sync old %d, create new %d, sync dir %d): %q", iSync, iCreate, iDir, ev)
				}
			}
			before1 := fault.syncCount(seg1.path(format.LogExt))
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			flushSyncs := fault.syncCount(seg1.path(format.LogExt)) - before1
			if (mode.mode == SyncBatch) != (flushSyncs > 0) {
				t.Errorf("%s: Flush after the roll synced the new .log %d times", mode.name, flushSyncs)
			}
			before1 = fault.syncCount(seg1.path(format.LogExt))
			wtClose(t, w)
			closeSyncs := fault.syncCount(seg1.path(format.LogExt)) - before1
			if (mode.mode != SyncNever) != (closeSyncs > 0) {
				t.Errorf("%s: Close synced the .log %d times", mode.name, closeSyncs)
			}
			if mode.mode == SyncNever {
				if files, dirs := fault.totalSyncs(); files+dirs != 0 {
					t.Errorf("SyncNever synced %d files and %d directories", files, dirs)
				}
			}
		})
	}
}

// A SyncExit writer starts writing every segment file back as data piles
// up in it, the .log and both indexes, so that the sync at exit has little
// left to wait for; the ranges follow one another. The other modes leave
// writeback alone (SyncBatch syncs each batch anyway).
func TestWriterStartsWriteback(t *testing.T) {
	for _, mode := range []SyncMode{SyncExit, SyncNever, SyncBatch} {
		s, fault := wtFaultStore(t, "wb", 1, Settings{})
		seg := segment{dir: s.PartitionDir("wb", 0), base: 0}
		w := wtOpen(t, s, "wb", WriterOptions{Sync: mode})
		// 29-byte records: the indexes grow past writebackEvery too.
		const records = 600_000
		for i := range records {
			if _, err := w.Append(int64(i), nil, []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		wtClose(t, w)
		started := map[string]int64{}
		for _, e := range fault.Events() {
			var path string
			var off, n int64
			if _, err := fmt.Sscanf(e, "writeback %s %d %d", &path, &off, &n); err != nil {
				continue
			}
			if off != started[path] || n < writebackEvery {
				t.Errorf("sync mode %d: %s after %d bytes started: want the next %d or more", mode, e, started[path], writebackEvery)
			}
			started[path] = off + n
		}
		if mode != SyncExit {
			if len(started) > 0 {
				t.Errorf("sync mode %d started writeback: %v", mode, started)
			}
			continue
		}
		for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
			path := seg.path(ext)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			// What is left for the sync at exit: under one threshold and
			// one batch.
			if left := fi.Size() - started[path]; left >= writebackEvery+flushAt {
				t.Errorf("%s: %d of %d bytes never handed to writeback", path, left, fi.Size())
			}
		}
	}
}

// The .log bytes are written before the index entries that point at them.
func TestWriterWritesLogBeforeIndex(t *testing.T) {
	s, fault := wtFaultStore(t, "order", 1, Settings{})
	seg := segment{dir: s.PartitionDir("order", 0), base: 0}
	w := wtOpen(t, s, "order", WriterOptions{})
	wtAppend(t, w, 1, "", "a")
	wtAppend(t, w, 2, "", "b")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	wtClose(t, w)
	var writes []string
	for _, e := range fault.Events() {
		if strings.HasPrefix(e, "write ") {
			writes = append(writes, e)
		}
	}
	want := []string{
		"write " + seg.path(format.LogExt) + " " + fmt.Sprint(2*format.RecordLen(nil, []byte("a"))),
		"write " + seg.path(format.IndexExt) + " 32",
		"write " + seg.path(format.TimeIndexExt) + " 32",
	}
	if !slices.Equal(writes, want) {
		t.Errorf("writes %q, want %q (one batched write each, .log first)", writes, want)
	}
}

func TestWriterMemoryBounded(t *testing.T) {
	s := wtStore(t, "mem", 1, Settings{})
	w := wtOpen(t, s, "mem", WriterOptions{Sync: SyncNever})
	defer w.Close()
	value := bytes.Repeat([]byte("v"), 100)
	key := []byte("key")
	const records = 200_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < records; i++ {
		if _, err := w.Append(int64(i), key, value); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	data := records * format.RecordLen(key, value)
	allocated := int64(after.TotalAlloc - before.TotalAlloc)
	if allocated > data/4 {
		t.Errorf("appending %d bytes allocated %d bytes: the buffer is not reused", data, allocated)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 8<<20 {
		t.Errorf("heap grew by %d bytes over %d appended", grown, data)
	}
	if c := cap(w.logBuf); c > 2*flushAt {
		t.Errorf("log buffer capacity %d after small records", c)
	}

	// One 8 MiB record: written at once, and its buffer not kept.
	if _, err := w.Append(1, nil, make([]byte, 8<<20)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if c := cap(w.logBuf); c > 2*flushAt {
		t.Errorf("log buffer kept %d bytes of capacity after one big record", c)
	}
	if _, err := w.Append(1, key, value); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if c := cap(w.logBuf); c > 2*flushAt {
		t.Errorf("log buffer capacity %d", c)
	}
	if w.Written() != records+2 {
		t.Errorf("Written %d, want %d", w.Written(), records+2)
	}
}

// Closing twice, or appending after Close, is an error, not a panic.
func TestWriterUseAfterClose(t *testing.T) {
	s := wtStore(t, "closed", 1, Settings{})
	w := wtOpen(t, s, "closed", WriterOptions{})
	wtAppend(t, w, 1, "", "a")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second Close: %v, want os.ErrClosed", err)
	}
	if _, err := w.Append(2, nil, []byte("b")); err == nil {
		t.Error("Append after Close succeeded")
	}
	if err := w.Flush(); err == nil {
		t.Error("Flush after Close succeeded")
	}
}

// TestRunClock: a run's stamps strictly increase across writers, never
// fall below a writer's last timestamp, and kept timestamps are only
// raised to it.
func TestRunClock(t *testing.T) {
	s := Open(t.TempDir())
	if err := s.CreateTopic("t", 2, Settings{}); err != nil {
		t.Fatal(err)
	}
	var ws [2]*Writer
	for p := range ws {
		w, err := s.OpenWriter("t", p, WriterOptions{Sync: SyncNever})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		ws[p] = w
	}
	if _, err := ws[1].Append(5000, nil, []byte("later")); err != nil {
		t.Fatal(err)
	}
	var c RunClock
	var got []int64
	for i, p := range []int{0, 1, 0, 0, 1} {
		ts := c.Stamp(1000, ws[p]) // one clock reading for the batch
		got = append(got, ts)
		if _, err := ws[p].Append(ts, nil, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int64{1000, 5000, 5001, 5002, 5003}; !slices.Equal(got, want) {
		t.Errorf("stamps %v, want %v", got, want)
	}
	if ts, raised := c.Keep(4000, ws[0]); ts != 5002 || !raised {
		t.Errorf("Keep(4000) below the partition's last 5002: %d, raised %v", ts, raised)
	}
	if ts, raised := c.Keep(9000, ws[0]); ts != 9000 || raised {
		t.Errorf("Keep(9000): %d, raised %v", ts, raised)
	}
	if ts := c.Stamp(1000, ws[1]); ts != 9001 {
		t.Errorf("after a kept 9000 the next stamp is %d, want 9001", ts)
	}
	c = RunClock{last: math.MaxInt64}
	if ts := c.Stamp(1000, ws[1]); ts != math.MaxInt64 {
		t.Errorf("at the end of time the stamp is %d, want it to stay there", ts)
	}
}

// TestWriterIdle: a writer from LockWriter holds only its lock until its
// first Append; Idle writes, syncs and closes its files keeping the lock;
// it buffers while idle and opens its files again to write, across a
// roll; a .log changed behind its back is refused; Close of a writer
// never opened releases the lock.
func TestWriterIdle(t *testing.T) {
	s := wtStore(t, "t", 2, Settings{SegmentBytes: 200})
	topic, err := s.Topic("t")
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.LockWriter(topic, 0, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w.FilesOpen() {
		t.Fatal("LockWriter opened the segment files")
	}
	if _, err := s.OpenWriter("t", 0, WriterOptions{LockWait: time.Millisecond}); err == nil {
		t.Fatal("a second writer got the partition LockWriter holds")
	}
	wtAppend(t, w, 10, "", "first")
	if !w.FilesOpen() {
		t.Fatal("no files open after the first Append")
	}
	if err := w.Idle(); err != nil {
		t.Fatal(err)
	}
	if w.FilesOpen() || w.Durable() != 1 || w.Written() != 1 {
		t.Fatalf("after Idle: files open %v, durable %d, written %d; want closed, both 1", w.FilesOpen(), w.Durable(), w.Written())
	}
	// Idle, it buffers without opening its files; writing opens them.
	wtAppend(t, w, 20, "", "second")
	if w.FilesOpen() {
		t.Fatal("a buffered Append opened the files")
	}
	if err := w.Flush(); err != nil || !w.FilesOpen() {
		t.Fatalf("Flush: %v, files open %v", err, w.FilesOpen())
	}
	// Records past the segment size roll, also from an idle writer.
	for i := range 12 {
		if err := w.Idle(); err != nil {
			t.Fatal(err)
		}
		wtAppend(t, w, int64(30+i), "", fmt.Sprintf("record %02d with some padding", i))
	}
	wtClose(t, w)
	recs := wtReadAll(t, s, "t", 0)
	if len(recs) != 14 || string(recs[0].Value) != "first" || string(recs[13].Value) != "record 11 with some padding" {
		t.Fatalf("read back %d records", len(recs))
	}
	if bases := wtBases(t, s.PartitionDir("t", 0)); len(bases) < 3 {
		t.Errorf("segments %v: want the records rolled over several", bases)
	}
	wtCheckIndexes(t, s.PartitionDir("t", 0))

	// A .log another program changed while the writer was idle.
	w, err = s.LockWriter(topic, 1, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wtAppend(t, w, 10, "", "mine")
	if err := w.Idle(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(s.PartitionDir("t", 1), format.SegmentName(0, format.LogExt)), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("foreign"))
	f.Close()
	wtAppend(t, w, 20, "", "after")
	if err := w.Flush(); err == nil || !strings.Contains(err.Error(), "another program changed it") {
		t.Errorf("Flush after the .log changed behind the writer: %v", err)
	}
	if _, err := w.Append(30, nil, []byte("x")); !errors.Is(err, ErrWriterFailed) {
		t.Errorf("Append after that: %v, want the writer failed", err)
	}
	w.Close()

	// Closing a writer that never opened its segment releases the lock.
	w, err = s.LockWriter(topic, 0, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wtClose(t, w)
	wtClose(t, wtOpen(t, s, "t", WriterOptions{}))
}

// Offsets never wrap: the writer gives out 2^64-1 as the last offset,
// refuses the record after it, and refuses to open a partition that holds
// it; nothing is written either time.
func TestWriterLastOffset(t *testing.T) {
	const top = uint64(math.MaxUint64)
	s := wtStore(t, "t", 1, Settings{})
	dir := s.PartitionDir("t", 0)
	for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
		if err := os.Remove(filepath.Join(dir, recName(0, ext))); err != nil {
			t.Fatal(err)
		}
	}
	var recs []recRec
	for o := top - 3; o < top; o++ {
		recs = append(recs, recRec{off: o, ts: 1000, value: "v"})
	}
	recWriteSeg(t, dir, top-3, recSeg(recs, 1))

	w := wtOpen(t, s, "t", WriterOptions{})
	if off := wtAppend(t, w, 1000, "", "last"); off != top {
		t.Fatalf("offset %d, want %d", off, top)
	}
	if off, err := w.Append(1000, nil, []byte("one too many")); err == nil || !strings.Contains(err.Error(), "offsets never wrap") {
		t.Fatalf("Append past the last offset: offset %d, %v", off, err)
	}
	wtClose(t, w)
	before := recPartitionFiles(t, dir)
	offs, vals := recReadAll(t, s, 0)
	if !slices.Equal(offs, []uint64{top - 3, top - 2, top - 1, top}) || vals[3] != "last" {
		t.Fatalf("read back %v %q", offs, vals)
	}

	_, err := s.OpenWriter("t", 0, WriterOptions{LockWait: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "is full") {
		t.Fatalf("OpenWriter on a full partition: %v", err)
	}
	recSameFiles(t, recPartitionFiles(t, dir), before)
}
