package logstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/seglog/seglog/format"
)

func TestRecoverIndexes(t *testing.T) {
	recs := recRecs(20, 30)
	entry := func(o uint64, v int64) []byte {
		return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, o), uint64(v))
	}
	cases := []struct {
		name     string
		interval int                                 // of the fixture
		stored   int                                 // topic setting, 0: none
		others   int                                 // interval of the other segments' indexes, 0: no index
		damage   func(f recFiles) (idx, tidx []byte) // nil: file missing
		want     IndexAction
		wantT    IndexAction
		wantN    int // interval of the result
	}{
		{"intact", 1, 0, 1, func(f recFiles) ([]byte, []byte) { return f.idx, f.tidx }, IndexKept, IndexKept, 1},
		{"missing", 1, 0, 1, func(f recFiles) ([]byte, []byte) { return nil, f.tidx }, IndexRebuilt, IndexKept, 1},
		{"missing timeindex", 1, 0, 1, func(f recFiles) ([]byte, []byte) { return f.idx, nil }, IndexKept, IndexRebuilt, 1},
		{"empty", 1, 0, 1, func(f recFiles) ([]byte, []byte) { return []byte{}, []byte{} }, IndexRebuilt, IndexRebuilt, 1},
		{"short", 1, 0, 1, func(f recFiles) ([]byte, []byte) { return f.idx[:5*16], f.tidx[:9*16] }, IndexRebuilt, IndexRebuilt, 1},
		{"long", 1, 0, 1, func(f recFiles) ([]byte, []byte) {
			return append(bytes.Clone(f.idx), entry(30, int64(len(f.log)))...), append(bytes.Clone(f.tidx), entry(30, 99)...)
		}, IndexTrimmed, IndexTrimmed, 1},
		{"partial entry", 1, 0, 1, func(f recFiles) ([]byte, []byte) {
			return append(bytes.Clone(f.idx), 0, 0, 0, 0, 0, 0, 0), f.tidx
		}, IndexTrimmed, IndexKept, 1},
		{"lying position", 1, 0, 1, func(f recFiles) ([]byte, []byte) {
			b := bytes.Clone(f.idx)
			copy(b[3*16+8:], entry(0, f.pos[3]+1)[8:])
			return b, f.tidx
		}, IndexRebuilt, IndexKept, 1},
		{"lying timestamp", 1, 0, 1, func(f recFiles) ([]byte, []byte) {
			b := bytes.Clone(f.tidx)
			b[7*16+15] ^= 1
			return f.idx, b
		}, IndexKept, IndexRebuilt, 1},
		{"out of order", 1, 0, 1, func(f recFiles) ([]byte, []byte) {
			b := bytes.Clone(f.idx)
			e := slices.Clone(b[2*16 : 3*16])
			copy(b[2*16:], b[3*16:4*16])
			copy(b[3*16:], e)
			return b, f.tidx
		}, IndexRebuilt, IndexKept, 1},
		{"sparse intact", 3, 0, 3, func(f recFiles) ([]byte, []byte) { return f.idx, f.tidx }, IndexKept, IndexKept, 3},
		{"sparse short", 3, 0, 3, func(f recFiles) ([]byte, []byte) { return f.idx[:3*16], f.tidx }, IndexRebuilt, IndexKept, 3},
		{"sparse, timeindex shows it", 4, 0, 0, func(f recFiles) ([]byte, []byte) { return nil, f.tidx }, IndexRebuilt, IndexKept, 4},
		{"missing, other segments show it", 5, 0, 5, func(f recFiles) ([]byte, []byte) { return nil, nil }, IndexRebuilt, IndexRebuilt, 5},
		{"missing, stored setting", 2, 2, 0, func(f recFiles) ([]byte, []byte) { return nil, nil }, IndexRebuilt, IndexRebuilt, 2},
		{"missing, nothing shows it", 1, 0, 0, func(f recFiles) ([]byte, []byte) { return nil, nil }, IndexRebuilt, IndexRebuilt, 1},
		{"one entry, others show it", 6, 0, 6, func(f recFiles) ([]byte, []byte) { return f.idx[:16], f.tidx[:16] }, IndexRebuilt, IndexRebuilt, 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := recStore(t, 1)
			dir := s.PartitionDir("t", 0)
			if tc.stored > 0 {
				recWrite(t, filepath.Join(s.Dir(), "t", settingsFile), fmt.Appendf(nil, `{"index_interval": %d}`, tc.stored))
			}
			for _, base := range []uint64{0, 10} {
				f := recSeg(recRecs(base, base+10), max(tc.others, 1))
				recWrite(t, filepath.Join(dir, recName(base, ".log")), f.log)
				if tc.others > 0 {
					recWrite(t, filepath.Join(dir, recName(base, ".index")), f.idx)
					recWrite(t, filepath.Join(dir, recName(base, ".timeindex")), f.tidx)
				}
			}
			f := recSeg(recs, tc.interval)
			recWrite(t, filepath.Join(dir, recName(20, ".log")), f.log)
			idx, tidx := tc.damage(f)
			if idx != nil {
				recWrite(t, filepath.Join(dir, recName(20, ".index")), idx)
			}
			if tidx != nil {
				recWrite(t, filepath.Join(dir, recName(20, ".timeindex")), tidx)
			}
			rep := recRecover(t, s, RecoverOptions{})
			sr := rep.Segments[2]
			if sr.Index != tc.want || sr.TimeIndex != tc.wantT || sr.Interval != tc.wantN || sr.Cut != nil {
				t.Errorf("index %s, timeindex %s, interval %d; want %s, %s, %d", sr.Index, sr.TimeIndex, sr.Interval, tc.want, tc.wantT, tc.wantN)
			}
			want := recSeg(recs, tc.wantN)
			if got := recRead(t, filepath.Join(dir, recName(20, ".index"))); !bytes.Equal(got, want.idx) {
				t.Errorf(".index %x\nwant   %x", got, want.idx)
			}
			if got := recRead(t, filepath.Join(dir, recName(20, ".timeindex"))); !bytes.Equal(got, want.tidx) {
				t.Errorf(".timeindex %x\nwant       %x", got, want.tidx)
			}
			if got := recRead(t, filepath.Join(dir, recName(20, ".log"))); !bytes.Equal(got, f.log) {
				t.Error(".log changed")
			}
			if _, err := os.Stat(filepath.Join(s.Dir(), QuarantineDir)); err == nil {
				t.Error("index repairs put something in quarantine")
			}
			recNoChange(t, s, RecoverOptions{})
		})
	}
}

// A rebuilt index is byte for byte what the Writer wrote with the interval
// the old one showed.
func TestRecoverIndexMatchesWriter(t *testing.T) {
	for _, interval := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(interval), func(t *testing.T) {
			s := Open(filepath.Join(t.TempDir(), "data"))
			if err := s.CreateTopic("t", 1, Settings{}); err != nil {
				t.Fatal(err)
			}
			w, err := s.OpenWriter("t", 0, WriterOptions{IndexInterval: interval, SegmentBytes: 700})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 60 {
				if _, err := w.Append(int64(1000+i*7), []byte("key"), fmt.Appendf(nil, "value %d", i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			dir := s.PartitionDir("t", 0)
			segs, _ := listSegments(dir)
			if len(segs) < 3 {
				t.Fatalf("want several segments, got %d", len(segs))
			}
			want := recPartitionFiles(t, dir)
			// The last segment loses both indexes; the one before keeps
			// only its first entry and a half.
			last := segs[len(segs)-1]
			os.Remove(last.path(format.IndexExt))
			os.Remove(last.path(format.TimeIndexExt))
			swTrunc := segs[len(segs)-2].path(format.IndexExt)
			if err := os.Truncate(swTrunc, 24); err != nil {
				t.Fatal(err)
			}
			rep := recRecover(t, s, RecoverOptions{})
			recSameFiles(t, recPartitionFiles(t, dir), want)
			for _, sr := range rep.Segments {
				if sr.Interval != interval {
					t.Errorf("%s: interval %d, want %d", sr.Name, sr.Interval, interval)
				}
			}
		})
	}
}
