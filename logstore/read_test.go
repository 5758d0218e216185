package logstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

const rtTopic = "events"

// rtT0 is the first timestamp the read tests append with.
const rtT0 = 1700000000000000000

// rtKey and rtValue are what the read tests write at offset i: every third
// record keyless, values of varying length so that index entries are not
// evenly spaced in bytes.
func rtKey(i uint64) []byte {
	if i%3 == 0 {
		return nil
	}
	return fmt.Appendf(nil, "key-%d", i)
}

func rtValue(i uint64) []byte {
	return fmt.Appendf(nil, "value-%05d-%s", i, strings.Repeat("x", int(i%17)))
}

// rtWrite creates a one-partition topic in a fresh data directory and
// appends n records with logstore's own Writer.
func rtWrite(t *testing.T, n int, opts logstore.WriterOptions) (*logstore.Store, string) {
	t.Helper()
	s := logstore.Open(t.TempDir())
	if err := s.CreateTopic(rtTopic, 1, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	opts.Sync = logstore.SyncNever
	w, err := s.OpenWriter(rtTopic, 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < uint64(n); i++ {
		off, err := w.Append(rtT0+int64(i)*1000, rtKey(i), rtValue(i))
		if err != nil {
			t.Fatal(err)
		}
		if off != i {
			t.Fatalf("Append returned offset %d, want %d", off, i)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return s, s.PartitionDir(rtTopic, 0)
}

// rtBases lists the base offsets of a partition directory's segments.
func rtBases(t *testing.T, dir string) []uint64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var bases []uint64
	for _, e := range entries {
		if base, ext, err := format.ParseSegmentName(e.Name()); err == nil && ext == format.LogExt {
			bases = append(bases, base)
		}
	}
	slices.Sort(bases)
	return bases
}

func rtIndexEntries(t *testing.T, path string) []format.IndexEntry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var es []format.IndexEntry
	for ; len(b) >= format.IndexEntryLen; b = b[format.IndexEntryLen:] {
		e, _ := format.ParseIndexEntry(b)
		es = append(es, e)
	}
	return es
}

func rtOpen(t *testing.T, s *logstore.Store) *logstore.Partition {
	t.Helper()
	p, err := s.OpenPartition(rtTopic, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rtCheck fails unless r is the record rtWrite appended at offset o.
func rtCheck(t *testing.T, r *logstore.Record, o uint64) {
	t.Helper()
	if r.Offset != o || r.Timestamp != rtT0+int64(o)*1000 || !bytes.Equal(r.Key, rtKey(o)) || !bytes.Equal(r.Value, rtValue(o)) {
		t.Fatalf("record {off %d ts %d key %q value %q}, want offset %d: {ts %d key %q value %q}",
			r.Offset, r.Timestamp, r.Key, r.Value, o, rtT0+int64(o)*1000, rtKey(o), rtValue(o))
	}
}

// rtReadOffsets reads from `from` to the end and returns the offsets seen,
// checking every record's contents.
func rtReadOffsets(t *testing.T, p *logstore.Partition, from uint64) ([]uint64, error) {
	t.Helper()
	it, err := p.Read(from)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var offs []uint64
	for it.Next() {
		r := it.Record()
		rtCheck(t, r, r.Offset)
		offs = append(offs, r.Offset)
	}
	return offs, it.Err()
}

func rtSpan(from, to uint64) []uint64 {
	var s []uint64
	for o := from; o < to; o++ {
		s = append(s, o)
	}
	return s
}

// A partition written with a sparse index (interval 7), with one segment's
// .index deleted, one truncated mid-entry and one holding an entry that
// lies, still reads every offset correctly.
func TestReadEveryOffsetWithDamagedSparseIndexes(t *testing.T) {
	const n = 2000
	s, dir := rtWrite(t, n, logstore.WriterOptions{SegmentBytes: 12 << 10, IndexInterval: 7})
	bases := rtBases(t, dir)
	if len(bases) < 6 {
		t.Fatalf("%d segments, want at least 6", len(bases))
	}
	idx := func(i int) string { return filepath.Join(dir, format.SegmentName(bases[i], format.IndexExt)) }

	// Segment 1: no .index at all.
	if err := os.Remove(idx(1)); err != nil {
		t.Fatal(err)
	}
	// Segment 2: cut in the middle of an entry.
	es := rtIndexEntries(t, idx(2))
	swTruncate(t, idx(2), int64(len(es)/2)*format.IndexEntryLen+9)
	// Segment 3: entries whose positions are another record's, or inside
	// a record, and an entry claiming an offset its record does not have.
	es = rtIndexEntries(t, idx(3))
	if len(es) < 8 {
		t.Fatalf("segment %d has %d index entries, want at least 8", bases[3], len(es))
	}
	swSetEntry(t, idx(3), 2, es[2].Offset, es[1].Pos)
	swSetEntry(t, idx(3), 4, es[4].Offset, es[4].Pos+5)
	swSetEntry(t, idx(3), 6, es[5].Offset, es[6].Pos)
	swSetEntry(t, idx(3), len(es)-1, es[len(es)-1].Offset, es[0].Pos)
	// The active segment: its last entry lies, and a stale entry points
	// past the end of its .log.
	last := len(bases) - 1
	es = rtIndexEntries(t, idx(last))
	swSetEntry(t, idx(last), len(es)-1, es[len(es)-1].Offset, es[0].Pos)
	swAppend(t, idx(last), format.AppendIndexEntry(nil, format.IndexEntry{Offset: n, Pos: 1 << 20}))

	p := rtOpen(t, s)
	if start, next, err := p.Bounds(); start != 0 || next != n || err != nil {
		t.Fatalf("Bounds() = %d, %d, %v; want 0, %d, nil", start, next, err, n)
	}
	for o := uint64(0); o < n; o++ {
		it, err := p.Read(o)
		if err != nil {
			t.Fatalf("Read(%d): %v", o, err)
		}
		if !it.Next() {
			t.Fatalf("Read(%d): no record (err %v)", o, it.Err())
		}
		rtCheck(t, it.Record(), o)
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
	offs, err := rtReadOffsets(t, p, 0)
	if err != nil || !slices.Equal(offs, rtSpan(0, n)) {
		t.Fatalf("full read: %d records (%v), err %v; want offsets 0..%d", len(offs), offs[:min(len(offs), 5)], err, n-1)
	}
	if offs, err := rtReadOffsets(t, p, n); len(offs) != 0 || err != nil {
		t.Fatalf("Read(%d): %v, %v; want nothing", n, offs, err)
	}
}

func TestBoundsEmptyPartition(t *testing.T) {
	s := logstore.Open(t.TempDir())
	if err := s.CreateTopic(rtTopic, 1, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	p := rtOpen(t, s)
	if start, next, err := p.Bounds(); start != 0 || next != 0 || err != nil {
		t.Errorf("Bounds() of a new partition = %d, %d, %v; want 0, 0, nil", start, next, err)
	}
	for _, from := range []uint64{0, 5} {
		if offs, err := rtReadOffsets(t, p, from); len(offs) != 0 || err != nil {
			t.Errorf("Read(%d) of a new partition: %v, %v", from, offs, err)
		}
	}

	// A directory without any segment (a broker may not have made one yet).
	p, err := logstore.OpenPartitionDir(t.TempDir(), "bare")
	if err != nil {
		t.Fatal(err)
	}
	if start, next, err := p.Bounds(); start != 0 || next != 0 || err != nil {
		t.Errorf("Bounds() of an empty directory = %d, %d, %v; want 0, 0, nil", start, next, err)
	}
	if offs, err := rtReadOffsets(t, p, 0); len(offs) != 0 || err != nil {
		t.Errorf("Read(0) of an empty directory: %v, %v", offs, err)
	}

	if _, err := logstore.OpenPartitionDir(filepath.Join(t.TempDir(), "nope"), "nope"); !errors.Is(err, logstore.ErrPartitionNotFound) {
		t.Errorf("OpenPartitionDir of a missing directory: %v, want %v", err, logstore.ErrPartitionNotFound)
	}
}

// rtWrite40 writes 40 records in four segments and returns their bases.
func rtWrite40(t *testing.T) (*logstore.Store, string, []uint64) {
	t.Helper()
	s, dir := rtWrite(t, 40, logstore.WriterOptions{SegmentBytes: 600})
	bases := rtBases(t, dir)
	if len(bases) != 4 || bases[0] != 0 || bases[1] < 2 || bases[3] > 38 {
		t.Fatalf("segments %v, want 4 of a few records each", bases)
	}
	return s, dir, bases
}

func rtRemoveSegment(t *testing.T, dir string, base uint64) {
	t.Helper()
	for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
		if err := os.Remove(filepath.Join(dir, format.SegmentName(base, ext))); err != nil {
			t.Fatal(err)
		}
	}
}

// A lost segment leaves a gap; reading from inside it starts at the next
// segment.
func TestReadFromInsideGap(t *testing.T) {
	s, dir, b := rtWrite40(t)
	rtRemoveSegment(t, dir, b[1]) // the gap: b[1]..b[2]-1
	p := rtOpen(t, s)
	if start, next, err := p.Bounds(); start != 0 || next != 40 || err != nil {
		t.Fatalf("Bounds() = %d, %d, %v; want 0, 40, nil", start, next, err)
	}
	after := rtSpan(b[2], 40)
	for _, tc := range []struct {
		from uint64
		want []uint64
	}{
		{0, append(rtSpan(0, b[1]), after...)},
		{b[1] - 1, append([]uint64{b[1] - 1}, after...)},
		{b[1], after},
		{(b[1] + b[2]) / 2, after},
		{b[2] - 1, after},
		{b[2], after},
		{b[2] + 1, after[1:]},
		{40, nil},
	} {
		offs, err := rtReadOffsets(t, p, tc.from)
		if err != nil || !slices.Equal(offs, tc.want) {
			t.Errorf("Read(%d) = %v, %v; want %v", tc.from, offs, err, tc.want)
		}
	}
}

// An iterator stops at the end of the data as it was when it was made,
// without an error, however much a writer appends meanwhile.
func TestReadWhileWriterAppends(t *testing.T) {
	s := logstore.Open(t.TempDir())
	if err := s.CreateTopic(rtTopic, 1, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenWriter(rtTopic, 0, logstore.WriterOptions{SegmentBytes: 4 << 10, Sync: logstore.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	next := uint64(0)
	appendN := func(n int) {
		t.Helper()
		for range n {
			if _, err := w.Append(rtT0+int64(next)*1000, rtKey(next), rtValue(next)); err != nil {
				t.Fatal(err)
			}
			next++
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}

	// Deterministic: a snapshot, then appends within the same segment.
	appendN(20)
	p := rtOpen(t, s)
	it, err := p.Read(0)
	if err != nil {
		t.Fatal(err)
	}
	appendN(10)
	var offs []uint64
	for it.Next() {
		rtCheck(t, it.Record(), uint64(len(offs)))
		offs = append(offs, it.Record().Offset)
	}
	if err := it.Err(); err != nil || !slices.Equal(offs, rtSpan(0, 20)) {
		t.Fatalf("iterator made before 10 more appends: %v, %v; want 0..19", offs, err)
	}
	it.Close()
	if offs, err := rtReadOffsets(t, p, 0); err != nil || !slices.Equal(offs, rtSpan(0, 30)) {
		t.Fatalf("new iterator: %v, %v; want 0..29", offs, err)
	}

	// Concurrent: a writer appending small batches and rolling segments,
	// readers opening the partition and reading it whole meanwhile.
	var wg sync.WaitGroup
	done := make(chan struct{})
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for range 150 {
			for range 7 {
				if _, err := w.Append(rtT0+int64(next)*1000, rtKey(next), rtValue(next)); err != nil {
					werr = err
					return
				}
				next++
			}
			if err := w.Flush(); err != nil {
				werr = err
				return
			}
		}
	}()
	reads := 0
	for running := true; running || reads < 3; reads++ {
		select {
		case <-done:
			running = false
		default:
		}
		p, err := logstore.OpenPartitionDir(s.PartitionDir(rtTopic, 0), "events/0")
		if err != nil {
			t.Fatal(err)
		}
		_, bnext, err := p.Bounds()
		if err != nil {
			t.Fatalf("Bounds during appends: %v", err)
		}
		offs, err := rtReadOffsets(t, p, 0)
		if err != nil {
			t.Fatalf("read %d during appends: %v", reads, err)
		}
		if !slices.Equal(offs, rtSpan(0, uint64(len(offs)))) || uint64(len(offs)) < bnext {
			t.Fatalf("read %d during appends: %d records, not 0..%d (Bounds said next %d)", reads, len(offs), bnext-1, bnext)
		}
	}
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	if len(rtBases(t, s.PartitionDir(rtTopic, 0))) < 5 {
		t.Errorf("the writer rolled fewer segments than the test means to read across")
	}
	t.Logf("%d whole reads while appending", reads)
}

// Retention deleting segments under a reader: reading what it removed
// fails with an error naming the partition's new start.
func TestReadSegmentDeletedUnderReader(t *testing.T) {
	s, dir, b := rtWrite40(t)
	p := rtOpen(t, s)
	rtRemoveSegment(t, dir, 0)
	for _, from := range []uint64{0, 1, b[1] - 1} {
		_, err := p.Read(from)
		var nla *logstore.NoLongerAvailableError
		if !errors.As(err, &nla) {
			t.Fatalf("Read(%d) after its segment was deleted: %v, want a *NoLongerAvailableError", from, err)
		}
		if nla.Offset != from || nla.Start != b[1] || nla.Partition != "events/0" {
			t.Errorf("Read(%d): %+v, want offset %d, start %d", from, *nla, from, b[1])
		}
		if msg := err.Error(); !strings.Contains(msg, "events/0") || !strings.Contains(msg, fmt.Sprintf("starts at %d", b[1])) {
			t.Errorf("message %q does not name the partition and its new start %d", msg, b[1])
		}
	}
	if offs, err := rtReadOffsets(t, p, b[1]); err != nil || !slices.Equal(offs, rtSpan(b[1], 40)) {
		t.Errorf("Read(%d): %v, %v; want %d..39", b[1], offs, err, b[1])
	}

	// An iterator inside segment 0 when retention removes the first three
	// segments: it reads on in the file it holds open, then fails where
	// the data it has not opened yet was removed.
	s, dir, b = rtWrite40(t)
	p = rtOpen(t, s)
	it, err := p.Read(0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if !it.Next() {
		t.Fatalf("no first record: %v", it.Err())
	}
	rtRemoveSegment(t, dir, b[0])
	rtRemoveSegment(t, dir, b[1])
	rtRemoveSegment(t, dir, b[2])
	n := 1
	for it.Next() {
		rtCheck(t, it.Record(), uint64(n))
		n++
	}
	var nla *logstore.NoLongerAvailableError
	if !errors.As(it.Err(), &nla) || nla.Offset != b[1] || nla.Start != b[3] {
		t.Fatalf("after %d records: %v; want offset %d no longer available, start %d", n, it.Err(), b[1], b[3])
	}
	if uint64(n) != b[1] {
		t.Errorf("read %d records from the open segment, want %d", n, b[1])
	}
}

func TestOffsetRangeErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  *logstore.OffsetRangeError
		want []string
	}{
		{&logstore.OffsetRangeError{Partition: "orders/3", Offset: 99, Start: 10, Next: 50},
			[]string{"offset 99", "orders/3", "10..49"}},
		{&logstore.OffsetRangeError{Partition: "orders/0", Offset: 5, Start: 5, Next: 5},
			[]string{"offset 5", "orders/0", "no records", "next offset 5"}},
	} {
		msg := tc.err.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q does not contain %q", msg, w)
			}
		}
	}
	// Through the command-line path: the range a real partition reports.
	s, _, _ := rtWrite40(t)
	start, next, err := rtOpen(t, s).Bounds()
	if err != nil {
		t.Fatal(err)
	}
	e := &logstore.OffsetRangeError{Partition: "events/0", Offset: 40, Start: start, Next: next}
	if msg := e.Error(); !strings.Contains(msg, "0..39") {
		t.Errorf("%q does not name the valid range 0..39", msg)
	}
}

// rtAllocated runs f and returns the bytes it allocated.
func rtAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A size field of 0xFFFFFFF0 must not make a reader allocate 4 GiB
// (docs/format.md §3: no allocation larger than the bytes in the file).
func TestHugeSizeFieldAllocatesLittle(t *testing.T) {
	huge := []byte{0xff, 0xff, 0xff, 0xf0}
	for _, tc := range []struct {
		name     string
		seg      uint64 // segment whose record gets the huge size
		pos      int64  // that record's position
		want     []uint64
		wantErr  bool
		wantNext uint64
	}{
		// Offset 1 of closed segment 0: corrupt.
		{"closed", 0, 32, []uint64{0}, true, 6},
		// Offset 4 of the active segment, with offset 5 valid after it:
		// corrupt.
		{"active-with-valid-after", 3, 32, []uint64{0, 1, 2, 3}, true, 6},
		// Offset 5, the active segment's last record: an incomplete tail.
		{"active-last", 3, 64, []uint64{0, 1, 2, 3, 4}, false, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			swWritePartition(t, dir, genSeg(0, 3), genSeg(3, 6))
			swPut(t, segPath(dir, tc.seg, ".log"), tc.pos+swSizeField, huge)
			p, err := logstore.OpenPartitionDir(dir, "p")
			if err != nil {
				t.Fatal(err)
			}
			var offs []uint64
			var rerr, berr error
			var next uint64
			alloc := rtAllocated(func() {
				_, next, berr = p.Bounds()
				offs, rerr = nil, nil
				it, err := p.Read(0)
				if err != nil {
					rerr = err
					return
				}
				for it.Next() {
					offs = append(offs, it.Record().Offset)
				}
				rerr = it.Err()
				it.Close()
			})
			if berr != nil || next != tc.wantNext {
				t.Errorf("Bounds: next %d, %v; want %d", next, berr, tc.wantNext)
			}
			if !slices.Equal(offs, tc.want) {
				t.Errorf("read offsets %v, want %v", offs, tc.want)
			}
			var ce *logstore.CorruptionError
			switch {
			case tc.wantErr && !errors.As(rerr, &ce):
				t.Errorf("error %v, want a *CorruptionError", rerr)
			case tc.wantErr && (ce.Pos != tc.pos || ce.Offset != int64(len(tc.want)) || !errors.Is(rerr, format.ErrShort)):
				t.Errorf("error %v, want corruption at byte %d, offset %d, %v", rerr, tc.pos, len(tc.want), format.ErrShort)
			case !tc.wantErr && rerr != nil:
				t.Errorf("error %v, want none", rerr)
			}
			// A few buffers of at most scanChunk (1 MiB) each, not 4 GiB.
			if alloc > 8<<20 {
				t.Errorf("reading allocated %d bytes", alloc)
			}
		})
	}
}

// Iterating over 1e5 records, again and again, keeps the live heap and the
// open files constant: nothing accumulates per record or per pass.
func TestIteratorConstantMemory(t *testing.T) {
	const (
		n       = 100_000
		perSeg  = 10_000
		samples = 4
	)
	dir := t.TempDir()
	value := bytes.Repeat([]byte("0123456789"), 10)
	var segs []swSegment
	for base := uint64(0); base < n; base += perSeg {
		seg := swSegment{Base: base}
		for o := base; o < base+perSeg; o++ {
			seg.Records = append(seg.Records, swRecord{Offset: o, Timestamp: rtT0 + int64(o), Value: value})
		}
		segs = append(segs, seg)
	}
	swWritePartition(t, dir, segs...)
	segs = nil
	p, err := logstore.OpenPartitionDir(dir, "p")
	if err != nil {
		t.Fatal(err)
	}

	liveHeap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC() // the second empties sync.Pools: pooled buffers are no leak
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	// Files of dir only: tests running in parallel open and close others.
	fds := func() int {
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			return -1
		}
		n := 0
		for _, e := range es {
			if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(target, dir+"/") {
				n++
			}
		}
		return n
	}
	fdsBefore := fds()
	base := liveHeap()
	peak := base
	for pass := range 3 {
		it, err := p.Read(0)
		if err != nil {
			t.Fatal(err)
		}
		want := uint64(0)
		for it.Next() {
			r := it.Record()
			if r.Offset != want || len(r.Value) != len(value) {
				t.Fatalf("pass %d: record %d, want %d", pass, r.Offset, want)
			}
			want++
			if want%(n/samples) == 0 {
				peak = max(peak, liveHeap())
			}
		}
		if err := it.Err(); err != nil || want != n {
			t.Fatalf("pass %d: %d records, %v", pass, want, err)
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
	end := liveHeap()
	t.Logf("live heap: %d before, peak %d while iterating, %d after", base, peak, end)
	// The read-ahead's three 1 MiB chunks, the scan's own buffer (at most
	// 1 MiB) and a record; the data read was 3 × 12.8 MB.
	if peak > base+(5<<20) {
		t.Errorf("live heap grew by %d bytes while iterating", peak-base)
	}
	if end > base+(256<<10) {
		t.Errorf("live heap grew by %d bytes over 3 passes", end-base)
	}
	// The segments a Partition keeps open between reads are its own
	// until it is closed.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if after := fds(); after != fdsBefore {
		t.Errorf("%d open files before, %d after", fdsBefore, after)
	}
}

// Finding where valid data ends (Bounds, OpenWriter) checks a big last
// record's CRC a piece at a time instead of holding it whole.
func TestBigLastRecordCheckedInPieces(t *testing.T) {
	dir := t.TempDir()
	s := logstore.Open(dir)
	if err := s.CreateTopic("t", 1, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenWriter("t", 0, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	const big = 24 << 20
	if _, err := w.Append(1, nil, []byte("small")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(2, nil, bytes.Repeat([]byte{7}, big)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	p, err := s.OpenPartition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := allocated(func() {
		if _, next, err := p.Bounds(); err != nil || next != 2 {
			t.Errorf("Bounds: next %d, %v; want 2", next, err)
		}
	}); n > big/4 {
		t.Errorf("Bounds allocated %d bytes for a %d-byte last record", n, big)
	}
	if n := allocated(func() {
		w, err := s.OpenWriter("t", 0, logstore.WriterOptions{Sync: logstore.SyncNever})
		if err != nil {
			t.Fatal(err)
		}
		if w.NextOffset() != 2 {
			t.Errorf("NextOffset %d, want 2", w.NextOffset())
		}
		w.Close()
	}); n > big/4 {
		t.Errorf("OpenWriter allocated %d bytes for a %d-byte last record", n, big)
	}
	// A flipped byte deep inside the big record is still found.
	path := filepath.Join(dir, "t", "0", "00000000000000000000.log")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{8}, int64(format.RecordLen(nil, []byte("small")))+format.HeaderLen+big-10); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, next, err := p.Bounds(); err != nil || next != 1 {
		t.Errorf("Bounds after damage: next %d, %v; want 1 (a torn last record)", next, err)
	}
}
