package logstore_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// tlFrom and tlTo bound the timeline tests' ten one-second buckets.
const (
	tlFrom = rtT0
	tlTo   = rtT0 + int64(10*time.Second) - 1
)

// tlBurst is a burst then silence: 30 records over the first three
// seconds, 100 ms apart, then nothing until two records in the last.
func tlBurst() []int64 {
	var ts []int64
	for i := range 30 {
		ts = append(ts, tlFrom+int64(i)*int64(100*time.Millisecond))
	}
	return append(ts, tlFrom+int64(9500*time.Millisecond), tlTo)
}

// tlWrite appends records stamped ts to a fresh one-partition topic and
// returns its directory.
func tlWrite(t *testing.T, ts []int64, opts logstore.WriterOptions) (*logstore.Store, string) {
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
	for i, at := range ts {
		if _, err := w.Append(at, rtKey(uint64(i)), rtValue(uint64(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return s, s.PartitionDir(rtTopic, 0)
}

func tlTimeline(t *testing.T, s *logstore.Store) []uint64 {
	t.Helper()
	p, err := s.OpenPartition(rtTopic, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Timeline(tlFrom, tlTo, 10)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTimelineBurstThenSilence(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval int
		want     []uint64
	}{
		{"interval 1", 1, []uint64{10, 10, 10, 0, 0, 0, 0, 0, 0, 2}},
		// Entries at records 0, 4, …, 28, each counting 4 records at its
		// own timestamp: the last, at 2.8 s, also stands for the two late
		// records.
		{"interval 4", 4, []uint64{12, 8, 12, 0, 0, 0, 0, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := tlWrite(t, tlBurst(), logstore.WriterOptions{IndexInterval: tc.interval})
			if got := tlTimeline(t, s); !slices.Equal(got, tc.want) {
				t.Errorf("Timeline = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTimelineSegments checks the counts against a model when segments
// roll: each segment's entries start again at its first record, and the
// last entry of a segment runs to that segment's end, not the next one's.
func TestTimelineSegments(t *testing.T) {
	ts := tlBurst()
	for _, interval := range []int{1, 3} {
		s, dir := tlWrite(t, ts, logstore.WriterOptions{IndexInterval: interval, SegmentBytes: 200})
		var bases []int
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if base, ext, err := format.ParseSegmentName(e.Name()); err == nil && ext == format.LogExt {
				bases = append(bases, int(base))
			}
		}
		if len(bases) < 3 {
			t.Fatalf("interval %d: %d segments, want several", interval, len(bases))
		}
		want := make([]uint64, 10)
		stamp := ts[0]
		for i, at := range ts {
			if (i-bases[lastLE(bases, i)])%interval == 0 { // an entry
				stamp = at
			}
			want[(stamp-tlFrom)/int64(time.Second)]++
		}
		if got := tlTimeline(t, s); !slices.Equal(got, want) {
			t.Errorf("interval %d, segments %v: Timeline = %v, want %v", interval, bases, got, want)
		}
	}
}

// lastLE is the index of the last of bases <= i.
func lastLE(bases []int, i int) int {
	j := 0
	for k, b := range bases {
		if b <= i {
			j = k
		}
	}
	return j
}

func TestTimelineEmpty(t *testing.T) {
	s, _ := tlWrite(t, nil, logstore.WriterOptions{})
	if got := tlTimeline(t, s); !slices.Equal(got, make([]uint64, 10)) {
		t.Errorf("Timeline of an empty partition = %v, want zeros", got)
	}
}

// TestTimelineForeignIndex damages the time index the way a foreign
// writer or a power loss can: entries out of order, past the log's end, a
// partial last entry, the first entries gone, or no index at all. The
// counts stay those of a clean interval-1 index.
func TestTimelineForeignIndex(t *testing.T) {
	want := []uint64{10, 10, 10, 0, 0, 0, 0, 0, 0, 2}
	entry := func(off uint64, ts int64) []byte {
		return format.AppendTimeIndexEntry(nil, format.TimeIndexEntry{Offset: off, Timestamp: ts})
	}
	for _, tc := range []struct {
		name   string
		damage func(b []byte) []byte // the .timeindex's bytes
	}{
		{"out of order", func(b []byte) []byte {
			// Entry 5 again after entry 20, with another timestamp.
			mid := slices.Clone(b[21*format.IndexEntryLen:])
			b = append(b[:21*format.IndexEntryLen], entry(5, tlTo)...)
			return append(b, mid...)
		}},
		{"past the end", func(b []byte) []byte {
			return append(b, entry(32, tlTo)...)
		}},
		{"partial entry", func(b []byte) []byte { return append(b, 0, 0, 0, 7) }},
		{"first entries gone", func(b []byte) []byte { return b[3*format.IndexEntryLen:] }},
		{"empty", func(b []byte) []byte { return nil }},
		{"missing", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := tlWrite(t, tlBurst(), logstore.WriterOptions{})
			path := filepath.Join(dir, format.SegmentName(0, format.TimeIndexExt))
			if tc.damage == nil {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			} else {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, tc.damage(b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := tlTimeline(t, s); !slices.Equal(got, want) {
				t.Errorf("Timeline = %v, want %v", got, want)
			}
		})
	}
}

// TestTimelineBucketStart checks that a record stamped at a bucket's start
// is counted in it, and at its end in it too, for uneven bucket lengths.
func TestTimelineBucketStart(t *testing.T) {
	const from, to, buckets = 1000, 1000 + 99, 7 // 100 ns in 7 buckets
	var ts []int64
	for i := range buckets {
		start, next := logstore.BucketStart(from, to, buckets, i), logstore.BucketStart(from, to, buckets, i+1)
		if next <= start {
			t.Fatalf("BucketStart(%d) = %d, BucketStart(%d) = %d: not increasing", i, start, i+1, next)
		}
		ts = append(ts, start, next-1)
	}
	if end := logstore.BucketStart(from, to, buckets, buckets); end != to+1 {
		t.Errorf("BucketStart(buckets) = %d, want %d", end, to+1)
	}
	s, _ := tlWrite(t, ts, logstore.WriterOptions{})
	p, err := s.OpenPartition(rtTopic, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Timeline(from, to, buckets)
	if err != nil {
		t.Fatal(err)
	}
	if want := slices.Repeat([]uint64{2}, buckets); !slices.Equal(got, want) {
		t.Errorf("Timeline = %v, want %v", got, want)
	}
}
