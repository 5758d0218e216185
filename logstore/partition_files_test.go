package logstore

import (
	"fmt"
	"os"
	"testing"
	"time"
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
	if len(p.segs) < 4*maxOpenSegments {
		t.Fatalf("only %d segments; the test needs many more than %d", len(p.segs), maxOpenSegments)
	}
	before := openFDs(t)
	for o := uint64(0); o < 3500; o += 3 {
		pfLookup(t, p, o)
	}
	if held := openFDs(t) - before; held > 2*maxOpenSegments {
		t.Errorf("%d descriptors held after lookups in %d segments; want at most %d", held, len(p.segs), 2*maxOpenSegments)
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
	if sf == nil || sf.idx == nil || sf.idx.n != 5000 {
		t.Fatalf("the kept index was not refreshed: %+v", sf)
	}
}
