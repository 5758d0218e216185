package logstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/format"
)

// Helpers of this file carry an ft prefix: other test files of the package
// are written at the same time and must not clash.

const ftT0 = 1700000000000000000

func ftKey(o uint64) []byte {
	if o%4 == 0 {
		return nil
	}
	return fmt.Appendf(nil, "key-%d", o)
}

func ftValue(o uint64) []byte {
	return fmt.Appendf(nil, "value-%06d-%s", o, strings.Repeat("v", int(o%29)))
}

// ftRecord is the record the tests write at offset o, encoded.
func ftRecord(o uint64) []byte {
	return format.AppendRecord(nil, &format.Record{Offset: o, Timestamp: ftT0 + int64(o), Key: ftKey(o), Value: ftValue(o)})
}

func ftRecords(from, to uint64) []byte {
	var b []byte
	for o := from; o < to; o++ {
		b = append(b, ftRecord(o)...)
	}
	return b
}

// ftCheck fails unless r is the record the tests write at offset o.
func ftCheck(t testing.TB, r Record, o uint64) {
	t.Helper()
	if r.Offset != o || r.Timestamp != ftT0+int64(o) || !bytes.Equal(r.Key, ftKey(o)) || !bytes.Equal(r.Value, ftValue(o)) {
		t.Fatalf("record {off %d ts %d key %q value %q}, want offset %d {ts %d key %q value %q}",
			r.Offset, r.Timestamp, r.Key, r.Value, o, ftT0+int64(o), ftKey(o), ftValue(o))
	}
}

// ftStore makes a data directory with a one-partition topic "t".
func ftStore(t *testing.T) (*Store, string) {
	t.Helper()
	s := Open(filepath.Join(t.TempDir(), "data"))
	if err := s.CreateTopic("t", 1, Settings{}); err != nil {
		t.Fatal(err)
	}
	return s, s.PartitionDir("t", 0)
}

func ftWriter(t *testing.T, s *Store, segmentBytes int64) *Writer {
	t.Helper()
	w, err := s.OpenWriter("t", 0, WriterOptions{SegmentBytes: segmentBytes, Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// ftAppend appends offsets [from, to) with w and flushes.
func ftAppend(t testing.TB, w *Writer, from, to uint64) {
	t.Helper()
	for o := from; o < to; o++ {
		got, err := w.Append(ftT0+int64(o), ftKey(o), ftValue(o))
		if err != nil {
			t.Fatal(err)
		}
		if got != o {
			t.Fatalf("appended offset %d, want %d", got, o)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// ftWrite appends to one partition [from, to) with a writer of its own.
func ftWrite(t *testing.T, s *Store, segmentBytes int64, from, to uint64) {
	t.Helper()
	w := ftWriter(t, s, segmentBytes)
	ftAppend(t, w, from, to)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func ftAppendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func ftSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func ftLog(dir string, base uint64) string {
	return filepath.Join(dir, format.SegmentName(base, format.LogExt))
}

// ftBases lists the base offsets of a partition directory's segments.
func ftBases(t *testing.T, dir string) []uint64 {
	t.Helper()
	segs, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b []uint64
	for _, s := range segs {
		b = append(b, s.base)
	}
	return b
}

// ftWarnings collects a follower's warnings.
type ftWarnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *ftWarnings) warn(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *ftWarnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

// ftModes runs a test with inotify and with polling. With inotify, the
// slow safety re-check is pushed out of reach and the poll interval too:
// whatever the follower sees, inotify must have woken it for.
func ftModes(t *testing.T, test func(t *testing.T, opts FollowOptions, tune func(*Follower))) {
	t.Run("inotify", func(t *testing.T) {
		test(t, FollowOptions{Poll: time.Hour}, func(f *Follower) {
			if f.set.watch == nil || f.wd < 0 {
				t.Fatalf("the follower is not watching with inotify")
			}
			f.set.recheck = time.Hour
		})
	})
	t.Run("poll", func(t *testing.T) {
		test(t, FollowOptions{NoInotify: true, Poll: 2 * time.Millisecond}, func(f *Follower) {
			if f.set.watch != nil {
				t.Fatalf("NoInotify, and the follower watches with inotify")
			}
		})
	})
}

func ftFollow(t *testing.T, dir string, from uint64, opts FollowOptions) *Follower {
	t.Helper()
	f, err := Follow(dir, "t/0", from, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// ftNext returns the next record, failing unless it comes within 5 s.
func ftNext(t testing.TB, f *Follower) Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !f.Next(ctx) {
		t.Fatalf("no record at position %d within 5s: %v", f.Position(), f.Err())
	}
	return *f.Record()
}

// ftExpect reads offsets [from, to), checking each record.
func ftExpect(t testing.TB, f *Follower, from, to uint64) {
	t.Helper()
	for o := from; o < to; o++ {
		ftCheck(t, ftNext(t, f), o)
	}
	if f.Position() != to {
		t.Fatalf("Position() = %d after reading up to %d", f.Position(), to-1)
	}
}

// ftNothing checks that the follower waits, without error, for d.
func ftNothing(t testing.TB, f *Follower, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if f.Next(ctx) {
		t.Fatalf("record %d returned, want the follower waiting", f.Record().Offset)
	}
	if f.Err() != nil {
		t.Fatalf("waiting follower failed: %v", f.Err())
	}
}

// A writer appending 20 000 records in bursts and rolling hundreds of
// segments: the follower returns every one exactly once, in order, whole.
func TestFollowWriterRolls(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		const n = 20000
		s, dir := ftStore(t)
		var warns ftWarnings
		opts.Warn = warns.warn
		f := ftFollow(t, dir, 0, opts)
		tune(f)
		w := ftWriter(t, s, 4<<10)
		werr := make(chan error, 1)
		go func() {
			rnd := rand.New(rand.NewPCG(1, 2))
			defer close(werr)
			for o := uint64(0); o < n; {
				burst := min(uint64(1+rnd.IntN(300)), n-o)
				for end := o + burst; o < end; o++ {
					if _, err := w.Append(ftT0+int64(o), ftKey(o), ftValue(o)); err != nil {
						werr <- err
						return
					}
				}
				if err := w.Flush(); err != nil {
					werr <- err
					return
				}
				if rnd.IntN(4) == 0 {
					time.Sleep(time.Duration(rnd.IntN(1000)) * time.Microsecond)
				}
			}
			werr <- w.Close()
		}()
		for o := uint64(0); o < n; o++ {
			ftCheck(t, ftNext(t, f), o)
		}
		if err := <-werr; err != nil {
			t.Fatal(err)
		}
		ftNothing(t, f, 50*time.Millisecond)
		if segs := len(ftBases(t, dir)); segs < 100 {
			t.Errorf("the writer rolled %d segments, fewer than the test means to follow across", segs)
		}
		if ws := warns.all(); len(ws) > 0 {
			t.Errorf("warnings: %q", ws)
		}
	})
}

// Records arrive within a few milliseconds of the writer's flush, woken by
// inotify alone (no polling, no re-check). Only liveness is asserted; the
// latencies are logged.
func TestFollowLatency(t *testing.T) {
	s, dir := ftStore(t)
	f := ftFollow(t, dir, 0, FollowOptions{Poll: time.Hour})
	if f.set.watch == nil {
		t.Fatal("not watching with inotify")
	}
	f.set.recheck = time.Hour
	w := ftWriter(t, s, 2<<10)
	defer w.Close()
	const n = 300
	lat := make([]time.Duration, 0, n)
	for o := uint64(0); o < n; o++ {
		flushed := make(chan time.Time, 1)
		go func() {
			if _, err := w.Append(ftT0+int64(o), ftKey(o), ftValue(o)); err != nil {
				panic(err)
			}
			if err := w.Flush(); err != nil {
				panic(err)
			}
			flushed <- time.Now()
		}()
		ftCheck(t, ftNext(t, f), o)
		lat = append(lat, time.Since(<-flushed))
	}
	slices.Sort(lat)
	t.Logf("flush to Next: p50 %v, p99 %v, max %v (negative: returned before Flush did)", lat[n/2], lat[n*99/100], lat[n-1])
}

func TestFollowFromPastEnd(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		s, dir := ftStore(t)
		w := ftWriter(t, s, 1<<10)
		defer w.Close()
		ftAppend(t, w, 0, 10)
		f := ftFollow(t, dir, 40, opts)
		tune(f)
		if f.Position() != 40 {
			t.Fatalf("Position() = %d, want 40", f.Position())
		}
		ftNothing(t, f, 50*time.Millisecond)
		ftAppend(t, w, 10, 35)
		ftNothing(t, f, 50*time.Millisecond)
		if f.Position() != 40 {
			t.Fatalf("Position() = %d while waiting for 40", f.Position())
		}
		ftAppend(t, w, 35, 60)
		ftExpect(t, f, 40, 60)
	})
}

func TestFollowFromBelowStart(t *testing.T) {
	s, dir := ftStore(t)
	ftWrite(t, s, 1<<10, 0, 100)
	bases := ftBases(t, dir)
	if len(bases) < 5 {
		t.Fatalf("segments %v: too few", bases)
	}
	for _, b := range bases[:3] {
		if err := s.deleteSegment(segment{dir: dir, base: b}); err != nil {
			t.Fatal(err)
		}
	}
	start := bases[3]
	var warns ftWarnings
	f := ftFollow(t, dir, 0, FollowOptions{Warn: warns.warn})
	want := fmt.Sprintf("offsets 0..%d of t/0 are no longer available (removed by retention); starting at %d", start-1, start)
	ftOneWarning(t, &warns, want)
	if f.Position() != start {
		t.Errorf("Position() = %d, want %d", f.Position(), start)
	}
	ftExpect(t, f, start, 100)
	ftNothing(t, f, 20*time.Millisecond)

	// From the start itself, and from inside the partition: no warning.
	for _, from := range []uint64{start, start + 5} {
		var warns ftWarnings
		f := ftFollow(t, dir, from, FollowOptions{Warn: warns.warn})
		ftExpect(t, f, from, 100)
		if ws := warns.all(); len(ws) > 0 {
			t.Errorf("from %d: warnings %q", from, ws)
		}
	}
}

// Retention deleting, under a follower that lags behind, the segment it
// reads and the ones ahead: it reads the open one to its end, warns, and
// jumps to the new start.
func TestFollowRetentionUnderLaggingFollower(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		s, dir := ftStore(t)
		w := ftWriter(t, s, 1<<10)
		defer w.Close()
		ftAppend(t, w, 0, 300)
		b := ftBases(t, dir)
		if len(b) < 10 {
			t.Fatalf("segments %v: too few", b)
		}
		var warns ftWarnings
		opts.Warn = warns.warn
		f := ftFollow(t, dir, 0, opts)
		tune(f)
		ftExpect(t, f, 0, 3)

		// The segment being read and the four after it go.
		ftDelete(t, s, dir, b[:5])
		ftExpect(t, f, 3, b[1]) // the rest of the open one
		ftCheck(t, ftNext(t, f), b[5])
		want := fmt.Sprintf("offsets %d..%d of t/0 were removed by retention before they were read; going on at %d", b[1], b[5]-1, b[5])
		ftOneWarning(t, &warns, want)

		// At the exact end of a segment, not moved on yet: it and the next
		// one go.
		ftExpect(t, f, b[5]+1, b[6])
		ftDelete(t, s, dir, b[5:7])
		ftCheck(t, ftNext(t, f), b[7])
		if ws := warns.all(); len(ws) != 2 || !strings.Contains(ws[1], fmt.Sprintf("offsets %d..%d of t/0 were removed", b[6], b[7]-1)) {
			t.Fatalf("warnings %q", ws)
		}

		// A real sweep by size, with the writer live, while the follower
		// waits at the end: nothing it has not read goes, so no warning.
		ftExpect(t, f, b[7]+1, 300)
		sw, err := s.RetentionSweep("t", 0, RetentionOptions{RetentionBytes: 1})
		if err != nil || len(sw.Partitions) != 1 {
			t.Fatalf("sweep: %+v, %v", sw, err)
		}
		if n, _ := sw.Partitions[0].Deleted(); n == 0 {
			t.Fatalf("the sweep deleted nothing: %+v", sw.Partitions[0])
		}
		ftAppend(t, w, 300, 400)
		ftExpect(t, f, 300, 400)
		if ws := warns.all(); len(ws) != 2 {
			t.Fatalf("warnings %q", ws)
		}
	})
}

// A listing made while retention deletes can leave out segments after one
// it names (readdir goes in hash order): the follower is told of the
// segment after the one it reads, b[1], by a listing that lacked it and
// named b[2]. Retention then removes the open segment and b[1]: the
// offsets between are warned about, not passed over as a gap. A real gap
// after a segment that is still there is passed over silently.
func TestFollowListingTornByRetention(t *testing.T) {
	s, dir := ftStore(t)
	w := ftWriter(t, s, 1<<10)
	defer w.Close()
	ftAppend(t, w, 0, 100)
	b := ftBases(t, dir)
	var warns ftWarnings
	f := ftFollow(t, dir, 0, FollowOptions{Warn: warns.warn})
	ftExpect(t, f, 0, 2)
	f.later, f.laterBase = true, b[2] // what the torn listing said
	ftDelete(t, s, dir, b[:2])
	ftExpect(t, f, 2, b[1]) // the rest of the open one
	ftCheck(t, ftNext(t, f), b[2])
	want := fmt.Sprintf("offsets %d..%d of t/0 were removed by retention before they were read; going on at %d", b[1], b[2]-1, b[2])
	ftOneWarning(t, &warns, want)

	// The same listing, the open segment still there: b[3] is a gap (made
	// here by deleting it, which retention would not do before b[2]).
	ftExpect(t, f, b[2]+1, b[3]-2)
	f.later, f.laterBase = true, b[4]
	if err := s.deleteSegment(segment{dir: dir, base: b[3]}); err != nil {
		t.Fatal(err)
	}
	ftExpect(t, f, b[3]-2, b[3])
	ftCheck(t, ftNext(t, f), b[4])
	if ws := warns.all(); len(ws) != 1 {
		t.Fatalf("warnings %q after a gap, want only the first", ws)
	}
}

// An iterator's listing torn the same way, left without b[1]: when the
// segment read is gone at its end, b[1] is read if it is still there, and
// is no longer available if it is not. While the segment read is still
// there, what the listing lacks is a gap.
func TestReadListingTornByRetention(t *testing.T) {
	for _, tc := range []struct {
		name    string
		deleted int // of the oldest segments, once reading is in the first
		want    string
	}{
		{"gone with what the listing lacked", 2, "no longer available"},
		{"gone, what the listing lacked still there", 1, ""},
		{"still there", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir, b, p := ftSegmented(t)
			defer p.Close()
			p.segs = slices.Delete(slices.Clone(p.segs), 1, 2)
			it, err := p.Read(0)
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			if !it.Next() {
				t.Fatal(it.Err())
			}
			ftDelete(t, s, dir, b[:tc.deleted])
			var got []uint64
			for it.Next() {
				got = append(got, it.Record().Offset)
			}
			var gone *NoLongerAvailableError
			switch {
			case tc.want != "":
				if !errors.As(it.Err(), &gone) || gone.Offset != b[1] || gone.Start != b[2] {
					t.Fatalf("after offsets %v: %v; want offset %d no longer available, the start %d", got[len(got)-1], it.Err(), b[1], b[2])
				}
				if !slices.Equal(got, ftSpan(1, b[1])) {
					t.Fatalf("read %v, want 1..%d", got, b[1]-1)
				}
			case it.Err() != nil:
				t.Fatal(it.Err())
			case tc.deleted == 0:
				if want := slices.Concat(ftSpan(1, b[1]), ftSpan(b[2], 100)); !slices.Equal(got, want) {
					t.Fatalf("read %v, want %v: a gap at b[1]", got, want)
				}
			case !slices.Equal(got, ftSpan(1, 100)):
				t.Fatalf("read %v, want 1..99", got)
			}
		})
	}
}

// ftSpan is the offsets from..to-1.
func ftSpan(from, to uint64) []uint64 {
	var s []uint64
	for o := from; o < to; o++ {
		s = append(s, o)
	}
	return s
}

// A sweep by size while the follower lags in the oldest segment.
func TestFollowRetentionSweepWhileLagging(t *testing.T) {
	s, dir := ftStore(t)
	w := ftWriter(t, s, 1<<10)
	defer w.Close()
	ftAppend(t, w, 0, 500)
	var warns ftWarnings
	f := ftFollow(t, dir, 0, FollowOptions{Warn: warns.warn})
	ftExpect(t, f, 0, 2)
	b := ftBases(t, dir)
	sw, err := s.RetentionSweep("t", 0, RetentionOptions{RetentionBytes: 8 << 10})
	if err != nil || len(sw.Partitions) != 1 {
		t.Fatalf("sweep: %+v, %v", sw, err)
	}
	start := sw.Partitions[0].Start
	if start <= b[1] {
		t.Fatalf("the sweep left the partition starting at %d; the test wants segments after the one being read gone", start)
	}
	ftExpect(t, f, 2, b[1])
	ftExpect(t, f, start, 500)
	want := fmt.Sprintf("offsets %d..%d of t/0 were removed by retention before they were read; going on at %d", b[1], start-1, start)
	ftOneWarning(t, &warns, want)
}

// Half a record written by hand is waited for, never reported and never
// returned half; once the rest is there it comes once, whole.
func TestFollowTornRecord(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		s, dir := ftStore(t)
		ftWrite(t, s, 0, 0, 5)
		f := ftFollow(t, dir, 0, opts)
		tune(f)
		ftExpect(t, f, 0, 5)
		log := ftLog(dir, 0)
		for _, o := range []uint64{5, 6} {
			rec := ftRecord(o)
			for _, cut := range []int{10, format.HeaderLen, len(rec) - 1} { // in the header, after it, one byte short
				ftAppendFile(t, log, rec[:cut])
				ftNothing(t, f, 30*time.Millisecond)
				if err := os.Truncate(log, ftSize(t, log)-int64(cut)); err != nil {
					t.Fatal(err)
				}
			}
			ftAppendFile(t, log, rec[:len(rec)/2])
			ftNothing(t, f, 30*time.Millisecond)
			ftAppendFile(t, log, rec[len(rec)/2:])
			ftCheck(t, ftNext(t, f), o)
		}
		// A zeroed tail (a crash after the size grew) is waited out too.
		ftAppendFile(t, log, make([]byte, 100))
		ftNothing(t, f, 30*time.Millisecond)
		if f.Position() != 7 {
			t.Fatalf("Position() = %d, want 7", f.Position())
		}
	})
}

// Damage in the active segment, with a valid record after it: a
// *CorruptionError saying where, and SkipCorrupt goes on.
func TestFollowCorruptRecord(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		s, dir := ftStore(t)
		ftWrite(t, s, 0, 0, 5)
		f := ftFollow(t, dir, 0, opts)
		tune(f)
		ftExpect(t, f, 0, 5)
		log := ftLog(dir, 0)
		at := ftSize(t, log)
		bad := ftRecord(5)
		bad[len(bad)-1] ^= 0x20
		ftAppendFile(t, log, append(bad, ftRecord(6)...))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if f.Next(ctx) {
			t.Fatalf("record %d returned over a corrupt one", f.Record().Offset)
		}
		var ce *CorruptionError
		if !errors.As(f.Err(), &ce) || ce.Path != log || ce.Pos != at || ce.Offset != 5 || !errors.Is(f.Err(), format.ErrCRC) {
			t.Fatalf("Err() = %v, want a CRC *CorruptionError at byte %d of %s, offset 5", f.Err(), at, log)
		}
		if f.Next(ctx) {
			t.Fatal("Next went on after the error without SkipCorrupt")
		}
		if !f.SkipCorrupt() || f.Err() != nil {
			t.Fatalf("SkipCorrupt: %v", f.Err())
		}
		ftCheck(t, ftNext(t, f), 6)
		if f.SkipCorrupt() {
			t.Error("SkipCorrupt with no error reported true")
		}
		ftAppendFile(t, log, ftRecord(7))
		ftExpect(t, f, 7, 8)
	})
}

// An incomplete record at the end of a segment that is no longer the last
// is corrupt (docs/format.md §3); SkipCorrupt goes on at the next segment.
func TestFollowTornEndOfClosedSegment(t *testing.T) {
	dir := t.TempDir()
	torn := ftRecord(5)
	seg0 := append(ftRecords(0, 5), torn[:len(torn)/2]...)
	if err := os.WriteFile(ftLog(dir, 0), seg0, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ftLog(dir, 5), ftRecords(5, 10), 0o644); err != nil {
		t.Fatal(err)
	}
	f := ftFollow(t, dir, 0, FollowOptions{})
	ftExpect(t, f, 0, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if f.Next(ctx) {
		t.Fatalf("record %d returned", f.Record().Offset)
	}
	var ce *CorruptionError
	if !errors.As(f.Err(), &ce) || ce.Path != ftLog(dir, 0) || ce.Pos != int64(len(seg0)-len(torn)/2) || ce.Offset != 5 || !errors.Is(ce, format.ErrShort) {
		t.Fatalf("Err() = %v, want the torn record at the end of segment 0 reported", f.Err())
	}
	if !f.SkipCorrupt() {
		t.Fatalf("SkipCorrupt: %v", f.Err())
	}
	ftExpect(t, f, 5, 10)
}

// Gaps between segments are skipped silently, and a segment a foreign
// writer adds later is moved on to.
func TestFollowGaps(t *testing.T) {
	dir := t.TempDir()
	for _, r := range [][2]uint64{{0, 5}, {10, 15}} {
		if err := os.WriteFile(ftLog(dir, r[0]), ftRecords(r[0], r[1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var warns ftWarnings
	f := ftFollow(t, dir, 0, FollowOptions{Warn: warns.warn})
	ftExpect(t, f, 0, 5)
	ftExpect(t, f, 10, 15)
	g := ftFollow(t, dir, 7, FollowOptions{Warn: warns.warn})
	ftExpect(t, g, 10, 15)
	ftNothing(t, f, 20*time.Millisecond)
	if err := os.WriteFile(ftLog(dir, 20), ftRecords(20, 25), 0o644); err != nil {
		t.Fatal(err)
	}
	ftExpect(t, f, 20, 25)
	ftExpect(t, g, 20, 25)
	if ws := warns.all(); len(ws) > 0 {
		t.Errorf("warnings: %q", ws)
	}
}

// Recover cutting the torn tail the follower waits at, then a writer
// appending there again: the new records come once each, and nothing of
// the cut bytes (still in the follower's read buffer) is taken for them.
func TestFollowRecoverCutsTornTail(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		s, dir := ftStore(t)
		ftWrite(t, s, 0, 0, 10)
		var warns ftWarnings
		opts.Warn = warns.warn
		f := ftFollow(t, dir, 0, opts)
		tune(f)
		ftExpect(t, f, 0, 10)
		log := ftLog(dir, 0)
		// Torn by a crash: record 10 whole in length, its value never
		// written (zeros), so its CRC fails and nothing follows it.
		torn := ftRecord(10)
		clear(torn[format.HeaderLen+len(ftKey(10)):])
		ftAppendFile(t, log, torn)
		ftNothing(t, f, 50*time.Millisecond)

		rep, err := s.recoverOne("t", 0, RecoverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Segments) == 0 || rep.Segments[len(rep.Segments)-1].Cut == nil {
			t.Fatalf("recover cut nothing: %+v", rep)
		}
		ftNothing(t, f, 20*time.Millisecond)
		w := ftWriter(t, s, 2<<10)
		ftAppend(t, w, 10, 200)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		ftExpect(t, f, 10, 200)
		ftNothing(t, f, 20*time.Millisecond)
		if ws := warns.all(); len(ws) > 0 {
			t.Errorf("warnings: %q", ws)
		}
	})
}

// copy-partition --force swapping a new directory in under the follower:
// it warns and reads on from where it was, in the new one, and watches the
// new one. A directory that does not hold the record read last is another
// log, read from its start.
func TestFollowDirectoryReplaced(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		src, _ := ftStore(t)
		ftWrite(t, src, 1<<10, 0, 30)
		dst, dir := ftStore(t)
		ftWrite(t, dst, 1<<10, 0, 20)
		var warns ftWarnings
		opts.Warn = warns.warn
		f := ftFollow(t, dir, 0, opts)
		tune(f)
		ftExpect(t, f, 0, 20)
		ftNothing(t, f, 20*time.Millisecond)

		rep, err := src.CopyPartition("t", 0, dst, CopyOptions{ToPartition: -1, Force: true})
		if err != nil || !rep.Replaced {
			t.Fatalf("forced copy: %+v, %v", rep, err)
		}
		ftExpect(t, f, 20, 30)
		if ws := warns.all(); len(ws) != 1 || !strings.Contains(ws[0], "was replaced; reading on from offset 20") {
			t.Fatalf("warnings %q", ws)
		}
		w := ftWriter(t, dst, 1<<10)
		ftAppend(t, w, 30, 100)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		ftExpect(t, f, 30, 100)

		// A directory that does not hold the record read last: one
		// starting later, one ending before it.
		swap := func(build func(dir string)) {
			t.Helper()
			tmp := dir + ".new"
			if err := os.Mkdir(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			build(tmp)
			if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); err != nil {
				t.Skipf("renameat2 RENAME_EXCHANGE: %v", err)
			}
			if err := os.RemoveAll(tmp); err != nil {
				t.Fatal(err)
			}
		}
		swap(func(d string) {
			if err := os.WriteFile(ftLog(d, 150), ftRecords(150, 160), 0o644); err != nil {
				t.Fatal(err)
			}
		})
		ftExpect(t, f, 150, 160)
		if ws := warns.all(); len(ws) != 2 || !strings.Contains(ws[1], "holds another log now (it has no offset 99); reading it from its start") {
			t.Fatalf("warnings %q", ws)
		}
		swap(func(d string) {
			if err := os.WriteFile(ftLog(d, 0), ftRecords(0, 10), 0o644); err != nil {
				t.Fatal(err)
			}
		})
		ftExpect(t, f, 0, 10)
		ftAppendFile(t, ftLog(dir, 0), ftRecords(10, 165))
		ftExpect(t, f, 10, 165)
		if ws := warns.all(); len(ws) != 3 || !strings.Contains(ws[2], "holds another log now (it has no offset 159); reading it from its start") {
			t.Fatalf("warnings %q", ws)
		}
	})
}

// The directory removed and made again from scratch: the follower waits
// for it and reads the new one.
func TestFollowDirectoryRemovedAndBack(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		dir := filepath.Join(t.TempDir(), "0")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ftLog(dir, 0), ftRecords(0, 5), 0o644); err != nil {
			t.Fatal(err)
		}
		var warns ftWarnings
		opts.Warn = warns.warn
		opts.Poll = 2 * time.Millisecond // while the directory is gone
		f := ftFollow(t, dir, 0, opts)
		tune(f)
		ftExpect(t, f, 0, 5)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		ftNothing(t, f, 50*time.Millisecond)
		if err := os.Mkdir(dir+".new", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ftLog(dir+".new", 0), ftRecords(0, 8), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(dir+".new", dir); err != nil {
			t.Fatal(err)
		}
		ftExpect(t, f, 5, 8)
		ftAppendFile(t, ftLog(dir, 0), ftRecords(8, 10))
		ftExpect(t, f, 8, 10)
		ws := warns.all()
		if len(ws) != 2 || !strings.Contains(ws[0], "is gone") || !strings.Contains(ws[1], "was replaced") {
			t.Fatalf("warnings %q", ws)
		}
	})
}

func ftOpenFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(es)
}

// Cancelling the context ends a wait promptly, leaves the follower usable,
// and Close releases every descriptor and leaves no goroutine behind.
func TestFollowCancelAndClose(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		opts.Poll = time.Hour // a cancelled wait must not wait for the poll
		s, dir := ftStore(t)
		ftWrite(t, s, 0, 0, 3)
		fds, routines := ftOpenFDs(t), runtime.NumGoroutine()
		f, err := Follow(dir, "t/0", 0, opts)
		if err != nil {
			t.Fatal(err)
		}
		tune(f)
		ftExpect(t, f, 0, 3)
		for range 3 {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			began := time.Now()
			if f.Next(ctx) {
				t.Fatalf("record %d on an idle partition", f.Record().Offset)
			}
			if f.Err() != nil {
				t.Fatalf("Err() after cancel = %v, want nil", f.Err())
			}
			if d := time.Since(began); d > 5*time.Second {
				t.Fatalf("cancelled Next returned after %v", d)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if f.Next(ctx) {
			t.Fatal("Next with a done context returned a record")
		}
		// Still usable after the cancelled waits (polling hourly, it finds
		// the record because it reads before it waits).
		ftAppendFile(t, ftLog(dir, 0), ftRecord(3))
		ftExpect(t, f, 3, 4)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if f.Next(context.Background()) {
			t.Fatal("Next after Close returned a record")
		}
		if n := ftOpenFDs(t); n != fds {
			t.Errorf("%d descriptors open after Close, %d before Follow", n, fds)
		}
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > routines && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > routines {
			buf := make([]byte, 1<<16)
			t.Errorf("%d goroutines after Close, %d before Follow:\n%s", n, routines, buf[:runtime.Stack(buf, true)])
		}
	})
}

func ftCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A follower waiting on an idle partition costs next to no CPU: no busy
// loop, with inotify or polling at the default interval.
func TestFollowIdleCPU(t *testing.T) {
	for _, opts := range []FollowOptions{{}, {NoInotify: true}} {
		t.Run(fmt.Sprintf("NoInotify=%v", opts.NoInotify), func(t *testing.T) {
			s, dir := ftStore(t)
			ftWrite(t, s, 1<<10, 0, 100)
			f := ftFollow(t, dir, 0, opts)
			ftExpect(t, f, 0, 100)
			runtime.GC()
			before, began := ftCPU(t), time.Now()
			ftNothing(t, f, 300*time.Millisecond)
			used, took := ftCPU(t)-before, time.Since(began)
			t.Logf("%v of CPU in %v of waiting", used, took)
			if used > 50*time.Millisecond {
				t.Errorf("waiting %v used %v of CPU", took, used)
			}
		})
	}
}

// inotify failing under a follower (its instance broken here; in life a
// read error) makes it fall back to polling, with a warning, and go on.
func TestFollowFallsBackToPolling(t *testing.T) {
	s, dir := ftStore(t)
	w := ftWriter(t, s, 1<<10)
	defer w.Close()
	ftAppend(t, w, 0, 10)
	var warns ftWarnings
	f := ftFollow(t, dir, 0, FollowOptions{Poll: 2 * time.Millisecond, Warn: warns.warn})
	if f.set.watch == nil {
		t.Skip("inotify unavailable here: the fallback is all there is")
	}
	ftExpect(t, f, 0, 10)
	f.set.watch.Close()
	ftAppend(t, w, 10, 200)
	ftExpect(t, f, 10, 200)
	if f.set.watch != nil {
		t.Error("still watching with a broken inotify instance")
	}
	if ws := warns.all(); len(ws) != 1 || !strings.Contains(ws[0], "polling every 2ms") {
		t.Errorf("warnings %q", ws)
	}
}

func TestFollowMissingPartition(t *testing.T) {
	for _, opts := range []FollowOptions{{}, {NoInotify: true}} {
		_, err := Follow(filepath.Join(t.TempDir(), "nope"), "t/9", 0, opts)
		if !errors.Is(err, ErrPartitionNotFound) || !strings.Contains(err.Error(), "t/9") {
			t.Errorf("NoInotify=%v: %v, want ErrPartitionNotFound naming t/9", opts.NoInotify, err)
		}
	}
}

// An empty partition directory (a writer has not made its first segment
// yet) is waited on.
func TestFollowEmptyDirectory(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		dir := t.TempDir()
		f := ftFollow(t, dir, 0, opts)
		tune(f)
		ftNothing(t, f, 20*time.Millisecond)
		if err := os.WriteFile(ftLog(dir, 0), ftRecords(0, 3), 0o644); err != nil {
			t.Fatal(err)
		}
		ftExpect(t, f, 0, 3)
	})
}

// The topic deleted while its partitions are followed: the set says so
// once, not once per partition directory, and reads the topic made again.
func TestFollowTopicDeletedAndBack(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		s := Open(t.TempDir())
		if err := s.CreateTopic("t", 2, Settings{}); err != nil {
			t.Fatal(err)
		}
		for p := range 2 {
			if err := os.WriteFile(ftLog(s.PartitionDir("t", p), 0), ftRecords(0, 2), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var warns ftWarnings
		opts.Warn = warns.warn
		opts.Poll = 2 * time.Millisecond // while the directories are gone
		set := NewFollowSet(opts)
		t.Cleanup(func() { set.Close() })
		var members []*Follower
		for p := range 2 {
			f, err := set.Add(s.PartitionDir("t", p), fmt.Sprintf("t/%d", p), 0)
			if err != nil {
				t.Fatal(err)
			}
			tune(f)
			members = append(members, f)
		}
		next := func(d time.Duration) *Follower {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			f, ok := set.Next(ctx)
			if !ok && f != nil {
				t.Fatalf("following: %v", f.Err())
			}
			if !ok {
				return nil
			}
			return f
		}
		for range 4 {
			if next(5*time.Second) == nil {
				t.Fatal("no record within 5 s")
			}
		}
		d, err := s.LockTopicForDelete("t", 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Delete(); err != nil {
			t.Fatal(err)
		}
		// Until both followers have seen their directory go.
		for deadline := time.Now().Add(5 * time.Second); !members[0].gone || !members[1].gone; {
			if time.Now().After(deadline) {
				t.Fatal("the followers did not notice the delete within 5 s")
			}
			if f := next(10 * time.Millisecond); f != nil {
				t.Fatalf("record %d of %s after the delete", f.Record().Offset, f.name)
			}
		}
		if ws := warns.all(); len(ws) != 1 || ws[0] != fmt.Sprintf("topic t was deleted (%s is gone); waiting for it to come back", filepath.Join(s.Dir(), "t")) {
			t.Fatalf("warnings %q", ws)
		}
		if err := s.CreateTopic("t", 1, Settings{}); err != nil {
			t.Fatal(err)
		}
		w, err := s.OpenWriter("t", 0, WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if _, err := w.Append(int64(i+1), nil, []byte(fmt.Sprintf("new %d", i))); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		for o := uint64(0); o < 3; o++ {
			f := next(5 * time.Second)
			if f == nil {
				t.Fatal("no record of the new topic within 5 s")
			}
			if r := f.Record(); r.Offset != o || string(r.Value) != fmt.Sprintf("new %d", o) {
				t.Fatalf("record %d %q of the new topic, want %d", r.Offset, r.Value, o)
			}
		}
	})
}

// verify-crc takes offsets missing after a segment for lost data only
// while that segment is still there: once retention has deleted it, the
// listing may lack segments after it that went too.
func TestVerifyListingTornByRetention(t *testing.T) {
	for _, deleted := range []bool{false, true} {
		s, dir, b, p := ftSegmented(t)
		torn := []segment{p.segs[0], p.segs[2]} // the listing lacks the second
		var findings []Finding
		pe := verifyPartitionEmitter{p: p, sh: &verifyShared{}, report: &VerifyReport{}, emit: func(f Finding) error {
			findings = append(findings, f)
			return nil
		}}
		for i, seg := range torn {
			job := &verifyJob{seg: seg, name: p.name, size: -1}
			res := verifySegment(job, nil, seg.base, pe.sh, make([]byte, verifyChunk))
			if i == 0 && deleted {
				ftDelete(t, s, dir, b[:2])
			}
			if err := pe.segment(job, res); err != nil {
				t.Fatal(err)
			}
		}
		p.Close()
		want := FindingGap
		if deleted {
			want = FindingSegmentGone
		}
		if len(findings) != 1 || findings[0].Kind != want || findings[0].Offset != int64(b[1]) {
			t.Errorf("segment deleted %v: findings %+v, want one %s at %d", deleted, findings, want, b[1])
		}
	}
}

// ftDelete deletes the segments at bases as retention does.
func ftDelete(t *testing.T, s *Store, dir string, bases []uint64) {
	t.Helper()
	for _, base := range bases {
		if err := s.deleteSegment(segment{dir: dir, base: base}); err != nil {
			t.Fatal(err)
		}
	}
}

// ftOneWarning fails unless want is the one warning given.
func ftOneWarning(t *testing.T, warns *ftWarnings, want string) {
	t.Helper()
	if ws := warns.all(); len(ws) != 1 || ws[0] != want {
		t.Fatalf("warnings %q, want [%q]", ws, want)
	}
}

// ftSegmented is a partition of offsets 0..99 in segments of 1 KiB, opened:
// its store, directory and segments' base offsets.
func ftSegmented(t *testing.T) (*Store, string, []uint64, *Partition) {
	t.Helper()
	s, dir := ftStore(t)
	w := ftWriter(t, s, 1<<10)
	ftAppend(t, w, 0, 100)
	w.Close()
	p, err := OpenPartitionDir(dir, "t/0")
	if err != nil {
		t.Fatal(err)
	}
	return s, dir, ftBases(t, dir), p
}
