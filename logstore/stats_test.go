package logstore_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

const stsT0 = 1700000000000000000

// stsTS is the timestamp stsWrite gives offset o.
func stsTS(o uint64) int64 { return stsT0 + int64(o)*1000 }

// stsRecordLen is the size of every record stsWrite appends: no key, a
// 10-byte value.
const stsRecordLen = format.HeaderLen + 10

// stsWrite creates topic "t" with one partition and appends n records of
// stsRecordLen bytes, perSegment to a segment.
func stsWrite(t *testing.T, n, perSegment int) (*logstore.Store, string) {
	t.Helper()
	s := logstore.Open(t.TempDir())
	if err := s.CreateTopic("t", 1, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenWriter("t", 0, logstore.WriterOptions{Sync: logstore.SyncNever, SegmentBytes: int64(perSegment * stsRecordLen)})
	if err != nil {
		t.Fatal(err)
	}
	for o := uint64(0); o < uint64(n); o++ {
		if _, err := w.Append(stsTS(o), nil, fmt.Appendf(nil, "value-%04d", o)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return s, s.PartitionDir("t", 0)
}

func stsStats(t *testing.T, dir string) logstore.PartitionStats {
	t.Helper()
	p, err := logstore.OpenPartitionDir(dir, "t/0")
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Stats()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// stsLogBytes sums the sizes of a partition directory's .log files.
func stsLogBytes(t *testing.T, dir string) int64 {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*"+format.LogExt))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

func stsSeg(dir string, base uint64, ext string) string {
	return filepath.Join(dir, format.SegmentName(base, ext))
}

func stsCheck(t *testing.T, got, want logstore.PartitionStats) {
	t.Helper()
	if got != want {
		t.Errorf("Stats:\n got  %+v\n want %+v", got, want)
	}
}

func TestStatsEmptyPartition(t *testing.T) {
	_, dir := stsWrite(t, 0, 5)
	stsCheck(t, stsStats(t, dir), logstore.PartitionStats{Segments: 1})

	// A partition directory with no segment at all (a foreign broker
	// creates segment 0 lazily).
	bare := t.TempDir()
	stsCheck(t, stsStats(t, bare), logstore.PartitionStats{})
}

func TestStatsOneSegment(t *testing.T) {
	_, dir := stsWrite(t, 7, 100)
	stsCheck(t, stsStats(t, dir), logstore.PartitionStats{
		Start: 0, Next: 7, Records: 7, RecordsFromIndex: true, Segments: 1, Bytes: 7 * stsRecordLen,
		Oldest: stsTS(0), Newest: stsTS(6),
	})
}

// Segments 0-4, 10-14 and 15-19 (segment 5-9 deleted): the gap is not
// counted as records, and the partition still ends at 20.
func TestStatsGapBetweenSegments(t *testing.T) {
	_, dir := stsWrite(t, 20, 5)
	for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
		if err := os.Remove(stsSeg(dir, 5, ext)); err != nil {
			t.Fatal(err)
		}
	}
	want := logstore.PartitionStats{
		Start: 0, Next: 20, Records: 15, RecordsFromIndex: true, Segments: 3, Bytes: 15 * stsRecordLen,
		Oldest: stsTS(0), Newest: stsTS(19),
	}
	stsCheck(t, stsStats(t, dir), want)
	if got := stsLogBytes(t, dir); got != want.Bytes {
		t.Errorf("test setup: .log files hold %d bytes, want %d", got, want.Bytes)
	}

	// Retention took the first segment too: the partition starts at 10.
	for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
		if err := os.Remove(stsSeg(dir, 0, ext)); err != nil {
			t.Fatal(err)
		}
	}
	stsCheck(t, stsStats(t, dir), logstore.PartitionStats{
		Start: 10, Next: 20, Records: 10, RecordsFromIndex: true, Segments: 2, Bytes: 10 * stsRecordLen,
		Oldest: stsTS(10), Newest: stsTS(19),
	})
}

// Indexes are hints: without any, Stats scans and finds the same, read
// rather than counted from the indexes.
func TestStatsWithoutIndexes(t *testing.T) {
	_, dir := stsWrite(t, 12, 5)
	want := stsStats(t, dir)
	if !want.RecordsFromIndex {
		t.Errorf("Stats %+v with indexes: records not counted from them", want)
	}
	want.RecordsFromIndex = false
	paths, _ := filepath.Glob(filepath.Join(dir, "*"+format.IndexExt))
	for _, p := range paths {
		if err := os.Truncate(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	stsCheck(t, stsStats(t, dir), want)
	if want.Next != 12 || want.Records != 12 || want.Segments != 3 {
		t.Errorf("Stats %+v, want 12 records in 3 segments", want)
	}
}

// A record torn at the end of the active segment (a crash, or a writer
// mid-write) is not counted; its bytes are in the file, so in Bytes.
func TestStatsTornTail(t *testing.T) {
	for _, tc := range []struct {
		name string
		tail []byte
	}{
		{"half-record", format.AppendRecord(nil, &format.Record{Offset: 12, Timestamp: stsTS(12), Value: []byte("value-0012")})[:20]},
		{"header-only", format.AppendRecord(nil, &format.Record{Offset: 12, Timestamp: stsTS(12), Value: []byte("value-0012")})[:format.HeaderLen]},
		{"zeros", make([]byte, 50)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, dir := stsWrite(t, 12, 5)
			f, err := os.OpenFile(stsSeg(dir, 10, format.LogExt), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(tc.tail); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			stsCheck(t, stsStats(t, dir), logstore.PartitionStats{
				Start: 0, Next: 12, Records: 12, RecordsFromIndex: true, Segments: 3, Bytes: 12*stsRecordLen + int64(len(tc.tail)),
				Oldest: stsTS(0), Newest: stsTS(11),
			})
		})
	}
}

// After a roll the new active segment may be empty (a writer rolls, then
// crashes or has nothing more yet): Newest comes from the segment before.
func TestStatsEmptyActiveSegment(t *testing.T) {
	_, dir := stsWrite(t, 10, 5)
	for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
		if err := os.WriteFile(stsSeg(dir, 10, ext), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stsCheck(t, stsStats(t, dir), logstore.PartitionStats{
		Start: 0, Next: 10, Records: 10, RecordsFromIndex: true, Segments: 3, Bytes: 10 * stsRecordLen,
		Oldest: stsTS(0), Newest: stsTS(9),
	})

	// The only segment left is the empty one: nothing held, starting at 10.
	for _, base := range []uint64{0, 5} {
		for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
			if err := os.Remove(stsSeg(dir, base, ext)); err != nil {
				t.Fatal(err)
			}
		}
	}
	stsCheck(t, stsStats(t, dir), logstore.PartitionStats{Start: 10, Next: 10, Segments: 1})
}

// stsProcLocksHasPid reports whether /proc/locks lists a flock held by pid
// (containers may hide it; then the pid cannot be asserted).
func stsProcLocksHasPid(t *testing.T, pid int) bool {
	t.Helper()
	f, err := os.Open("/proc/locks")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 && fields[1] == "FLOCK" && fields[4] == fmt.Sprint(pid) {
			return true
		}
	}
	return false
}

func TestStatsWriterPid(t *testing.T) {
	s, dir := stsWrite(t, 3, 5)
	if st := stsStats(t, dir); st.WriterPid != 0 {
		t.Fatalf("WriterPid %d with no writer", st.WriterPid)
	}
	w, err := s.OpenWriter("t", 0, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(stsTS(3), nil, []byte("value-0003")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	st := stsStats(t, dir)
	if stsProcLocksHasPid(t, os.Getpid()) {
		if st.WriterPid != os.Getpid() {
			t.Errorf("WriterPid %d while this process holds the writer lock, want %d", st.WriterPid, os.Getpid())
		}
	} else {
		t.Logf("/proc/locks does not list our flock: pid assertion skipped")
	}
	if st.Next != 4 || st.Records != 4 || st.Newest != stsTS(3) {
		t.Errorf("Stats %+v while writing, want next 4, 4 records, newest %d", st, stsTS(3))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st := stsStats(t, dir); st.WriterPid != 0 {
		t.Errorf("WriterPid %d after the writer closed", st.WriterPid)
	}
}

// Stats only reads: it must leave every byte and file as it was, torn
// tail included (cutting that is the writer's and recover's business).
func TestStatsChangesNothing(t *testing.T) {
	_, dir := stsWrite(t, 12, 5)
	tail := []byte{0, 0, 0, 0, 0, 0, 0, 12, 0, 0}
	f, err := os.OpenFile(stsSeg(dir, 10, format.LogExt), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(tail); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before := stsTree(t, dir)
	stsStats(t, dir)
	after := stsTree(t, dir)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("Stats changed the partition:\nbefore %v\nafter  %v", before, after)
	}
}

func stsTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = fmt.Sprintf("%x", b)
	}
	return m
}
