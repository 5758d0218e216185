package logstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
)

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(fds)
}

// pfWrite appends records "value N" for offsets [from, to) to t/0.
func pfWrite(t *testing.T, s *Store, opts WriterOptions, from, to int) {
	t.Helper()
	w, err := s.OpenWriter("t", 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < to; i++ {
		if _, err := w.Append(time.Now().UnixNano(), nil, []byte(fmt.Sprintf("value %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// pfSegments makes t/0 of records "value N" for offsets [0, n), in
// segments of segmentBytes, at least want of them, and opens it (closed
// at the test's end).
func pfSegments(t *testing.T, segmentBytes int64, n, want int) (*Store, *Partition) {
	t.Helper()
	s := Open(t.TempDir())
	if err := s.CreateTopic("t", 1, Settings{SegmentBytes: segmentBytes}); err != nil {
		t.Fatal(err)
	}
	pfWrite(t, s, WriterOptions{Sync: SyncNever}, 0, n)
	p, err := s.OpenPartition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if len(p.segs) < want {
		t.Fatalf("%d segments; the test needs %d or more", len(p.segs), want)
	}
	return s, p
}

func pfLookup(t *testing.T, p *Partition, o uint64) {
	t.Helper()
	it, err := p.Read(o)
	if err != nil {
		t.Fatalf("Read(%d): %v", o, err)
	}
	defer it.Close()
	if !it.Next() {
		t.Fatalf("Read(%d): no record (%v)", o, it.Err())
	}
	if r := it.Record(); r.Offset != o || string(r.Value) != fmt.Sprintf("value %d", o) {
		t.Fatalf("Read(%d) gave offset %d %q", o, r.Offset, r.Value)
	}
}

// A Partition keeps a bounded number of segments open between reads, and
// Close lets them all go.
func TestPartitionKeepsFewSegmentsOpen(t *testing.T) {
	s := Open(t.TempDir())
	if err := s.CreateTopic("t", 1, Settings{SegmentBytes: 200}); err != nil {
		t.Fatal(err)
	}
	pfWrite(t, s, WriterOptions{Sync: SyncNever}, 0, 3500) // ~6 records a segment: 580 segments
	p, err := s.OpenPartition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.segs) < 4*maxKeptOpen {
		t.Fatalf("only %d segments; the test needs many more than %d", len(p.segs), maxKeptOpen)
	}
	before := openFDs(t)
	for o := uint64(0); o < 3500; o += 3 {
		pfLookup(t, p, o)
	}
	if held := openFDs(t) - before; held > 2*maxKeptOpen {
		t.Errorf("%d descriptors held after lookups in %d segments; want at most %d", held, len(p.segs), 2*maxKeptOpen)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if held := openFDs(t) - before; held > 0 {
		t.Errorf("%d descriptors still open after Close", held)
	}
	pfLookup(t, p, 7) // a closed Partition still reads, keeping nothing open
	if held := openFDs(t) - before; held > 0 {
		t.Errorf("%d descriptors open after a read on a closed Partition", held)
	}
}

// Records and index entries appended after a Partition kept the active
// segment open are found: the kept index is asked for its new size.
func TestPartitionKeptIndexGrows(t *testing.T) {
	s := Open(t.TempDir())
	if err := s.CreateTopic("t", 1, Settings{}); err != nil {
		t.Fatal(err)
	}
	pfWrite(t, s, WriterOptions{Sync: SyncNever}, 0, 10)
	p, err := s.OpenPartition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pfLookup(t, p, 5)
	pfWrite(t, s, WriterOptions{Sync: SyncNever}, 10, 5000)
	pfLookup(t, p, 4321)
	sf := p.open[0]
	if sf == nil || sf.idx == nil || sf.idx.Len() != 5000 {
		t.Fatalf("the kept index was not refreshed: %+v", sf)
	}
}

// A segment a Partition keeps open and another process deletes is no
// longer served once keptOpenRecheck has passed: reads get
// NoLongerAvailableError. (This process's sweeps are seen at once:
// TestRetentionReadAcrossSweep.)
func TestPartitionNoticesKeptSegmentDeleted(t *testing.T) {
	_, p := pfSegments(t, 400, 60, 3)
	first := p.segs[0]
	pfLookup(t, p, first.base+1)
	if p.open[first.base] == nil {
		t.Fatal("the first segment is not kept open after a lookup")
	}
	for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
		if err := os.Remove(first.path(ext)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(keptOpenRecheck + 5*time.Millisecond)
	it, err := p.Read(first.base + 1)
	if err == nil {
		defer it.Close()
		if it.Next() {
			t.Fatalf("read offset %d of a segment deleted %v ago: got it", first.base+1, keptOpenRecheck)
		}
		err = it.Err()
	}
	var gone *NoLongerAvailableError
	if !errors.As(err, &gone) || gone.Start != p.segs[1].base {
		t.Fatalf("read of a deleted segment: %v; want NoLongerAvailableError with start %d", err, p.segs[1].base)
	}
	pfLookup(t, p, p.segs[1].base+1) // the rest still reads
}

// With the index's entry after the target at hand, a point lookup reads
// the record alone, not a page; an index lying about where the next record
// starts costs a second read, never a wrong record.
func TestPartitionLookupReadsOneRecord(t *testing.T) {
	for _, lie := range []struct {
		name string
		pos  func(real int64) int64 // the position written for entry 2
	}{
		{"true index", nil},
		{"next entry too close", func(real int64) int64 { return real - 20 }},
		{"next entry too far", func(real int64) int64 { return real + 5000 }},
		{"next entry past the file", func(real int64) int64 { return 1 << 40 }},
	} {
		t.Run(lie.name, func(t *testing.T) {
			s := Open(t.TempDir())
			if err := s.CreateTopic("t", 1, Settings{}); err != nil {
				t.Fatal(err)
			}
			pfWrite(t, s, WriterOptions{Sync: SyncNever}, 0, 50)
			p, err := s.OpenPartition("t", 0)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			idx := p.segs[0].path(format.IndexExt)
			b, err := os.ReadFile(idx)
			if err != nil {
				t.Fatal(err)
			}
			pos := func(i int) []byte { return b[i*format.IndexEntryLen+8 : (i+1)*format.IndexEntryLen] }
			pos2 := int64(binary.BigEndian.Uint64(pos(2)))
			if lie.pos != nil {
				binary.BigEndian.PutUint64(pos(2), uint64(lie.pos(pos2)))
				if err := os.WriteFile(idx, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			it, err := p.Read(1)
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			if !it.Next() {
				t.Fatalf("no record: %v", it.Err())
			}
			if r := it.Record(); r.Offset != 1 || string(r.Value) != "value 1" {
				t.Fatalf("got offset %d %q", r.Offset, r.Value)
			}
			// Every record still reads, from the same Partition.
			for o := uint64(0); o < 50; o++ {
				pfLookup(t, p, o)
			}
		})
	}
}

// Partitions opened together (every partition of a topic, read in turn)
// keep, between them, no more segments open than one Partition may: the
// bound is the process's, not each partition's.
func TestPartitionsShareKeptOpenBound(t *testing.T) {
	const parts = 300
	s := Open(t.TempDir())
	if err := s.CreateTopic("t", parts, Settings{}); err != nil {
		t.Fatal(err)
	}
	for p := range parts {
		w, err := s.OpenWriter("t", p, WriterOptions{Sync: SyncNever})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if _, err := w.Append(time.Now().UnixNano(), nil, []byte(fmt.Sprintf("value %d", i))); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	before := openFDs(t)
	var open []*Partition
	for p := range parts {
		pt, err := s.OpenPartition("t", p)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, pt)
		pfLookup(t, pt, 1) // a lookup: the .log and the .index kept
	}
	if held := openFDs(t) - before; held > 2*maxKeptOpen {
		t.Errorf("%d descriptors held by %d partitions after a lookup each; want at most %d", held, parts, 2*maxKeptOpen)
	}
	for _, pt := range open {
		pfLookup(t, pt, 2) // those let go of open again
		if err := pt.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if held := openFDs(t) - before; held > 0 {
		t.Errorf("%d descriptors still open after Close", held)
	}
}

// A parked iterator holds no file; the next Next opens the segment again
// and returns the same record once more, then reads on, across segments.
// A segment deleted meanwhile is NoLongerAvailableError; one replaced by
// another file under its name is an error, not other bytes read as if
// they were the same.
func TestIteratorPark(t *testing.T) {
	s, p := pfSegments(t, 300, 60, 4)
	it, err := p.Read(3)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	it.Park() // before any Next: nothing to give again
	for o := uint64(3); o < 60; o++ {
		if !it.Next() || it.Record().Offset != o {
			t.Fatalf("want offset %d: %v", o, it.Err())
		}
		it.Park()
		if it.sf != nil || it.sc != nil {
			t.Fatal("a parked iterator holds its files")
		}
		if !it.Next() {
			t.Fatalf("no record after Park at %d: %v", o, it.Err())
		}
		if r := it.Record(); r.Offset != o || string(r.Value) != fmt.Sprintf("value %d", o) {
			t.Fatalf("after Park: offset %d %q, want %d again", r.Offset, r.Value, o)
		}
	}
	if it.Next() || it.Err() != nil {
		t.Fatalf("past the end: %v", it.Err())
	}

	// Parked in the first segment, which retention then deletes.
	it2, err := p.Read(1)
	if err != nil {
		t.Fatal(err)
	}
	defer it2.Close()
	if !it2.Next() {
		t.Fatal(it2.Err())
	}
	it2.Park()
	if err := s.deleteSegment(p.segs[0]); err != nil {
		t.Fatal(err)
	}
	var gone *NoLongerAvailableError
	if it2.Next() || !errors.As(it2.Err(), &gone) {
		t.Fatalf("a parked segment deleted: %v, want NoLongerAvailableError", it2.Err())
	}

	// Parked in the second, which is then replaced by another file.
	it3, err := p.Read(p.segs[1].base)
	if err != nil {
		t.Fatal(err)
	}
	defer it3.Close()
	if !it3.Next() {
		t.Fatal(it3.Err())
	}
	it3.Park()
	keptOpen.mu.Lock()
	keptOpen.forget(p.open[p.segs[1].base]) // closed, as the process-wide bound closes it
	keptOpen.mu.Unlock()
	log := p.segs[1].path(format.LogExt)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log+".new", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(log+".new", log); err != nil {
		t.Fatal(err)
	}
	if it3.Next() || it3.Err() == nil || !strings.Contains(it3.Err().Error(), "was replaced while it was being read") {
		t.Fatalf("a parked segment replaced: %v", it3.Err())
	}
}
