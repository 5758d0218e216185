package logstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
)

// Helpers of this file carry a rec prefix: other test files of the package
// are written at the same time and must not clash.
//
// Fixtures come from an independent writer of the format, written from
// docs/format.md §2 and §4 with encoding/binary and hash/crc32 only, like
// specwriter_test.go's (which lives in package logstore_test, out of reach
// of the fault-injecting file systems these tests need).

type recRec struct {
	off   uint64
	ts    int64
	key   string
	value string
}

// recEncode appends r's docs/format.md §2 encoding: offset u64, size u32, crc u32,
// timestamp i64, keylen u32, key, value; CRC-32 IEEE over ts ‖ key ‖ value.
func recEncode(dst []byte, r recRec) []byte {
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(r.ts))
	c := crc32.NewIEEE()
	c.Write(ts[:])
	c.Write([]byte(r.key))
	c.Write([]byte(r.value))
	dst = binary.BigEndian.AppendUint64(dst, r.off)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(r.key)+len(r.value)))
	dst = binary.BigEndian.AppendUint32(dst, c.Sum32())
	dst = append(dst, ts[:]...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(r.key)))
	dst = append(dst, r.key...)
	return append(dst, r.value...)
}

// recFiles is a segment's three files and where each record starts.
type recFiles struct {
	log, idx, tidx []byte
	pos            []int64
}

// recSeg lays records out as one segment, with an index entry for the
// k-th record (k from 0) when k % interval == 0 (docs/format.md §4).
func recSeg(recs []recRec, interval int) recFiles {
	var f recFiles
	for k, r := range recs {
		pos := int64(len(f.log))
		f.pos = append(f.pos, pos)
		if k%interval == 0 {
			f.idx = binary.BigEndian.AppendUint64(f.idx, r.off)
			f.idx = binary.BigEndian.AppendUint64(f.idx, uint64(pos))
			f.tidx = binary.BigEndian.AppendUint64(f.tidx, r.off)
			f.tidx = binary.BigEndian.AppendUint64(f.tidx, uint64(r.ts))
		}
		f.log = recEncode(f.log, r)
	}
	return f
}

// recRecs makes records with offsets [from, to).
func recRecs(from, to uint64) []recRec {
	var recs []recRec
	for o := from; o < to; o++ {
		recs = append(recs, recRec{off: o, ts: 1_700_000_000_000_000_000 + int64(o)*1000,
			key: fmt.Sprintf("k%d", o%3), value: fmt.Sprintf("value %d %s", o, strings.Repeat("x", int(o%7)))})
	}
	return recs
}

func recName(base uint64, ext string) string { return fmt.Sprintf("%020d%s", base, ext) }

// recStore makes a data directory with topic t of the given partition
// count (directories only) and returns it.
func recStore(t *testing.T, partitions int) *Store {
	t.Helper()
	s := Open(filepath.Join(t.TempDir(), "data"))
	for p := range partitions {
		if err := os.MkdirAll(s.PartitionDir("t", p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func recWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func recRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recWriteSeg writes a segment's files into a partition directory.
func recWriteSeg(t *testing.T, dir string, base uint64, f recFiles) {
	t.Helper()
	recWrite(t, filepath.Join(dir, recName(base, ".log")), f.log)
	recWrite(t, filepath.Join(dir, recName(base, ".index")), f.idx)
	recWrite(t, filepath.Join(dir, recName(base, ".timeindex")), f.tidx)
}

// recStandard writes partition 0 of t: segments 0 (offsets 0..9), 10
// (10..19) and the active 20 (20..24), index interval 1. It returns the
// segments' files by base.
func recStandard(t *testing.T, s *Store) map[uint64]recFiles {
	t.Helper()
	dir := s.PartitionDir("t", 0)
	segs := map[uint64]recFiles{}
	for _, r := range [][2]uint64{{0, 10}, {10, 20}, {20, 25}} {
		segs[r[0]] = recSeg(recRecs(r[0], r[1]), 1)
		recWriteSeg(t, dir, r[0], segs[r[0]])
	}
	return segs
}

// recReadAll reads a partition whole and returns its records' offsets and
// values; any error fails the test (no SkipCorrupt).
func recReadAll(t *testing.T, s *Store, p int) ([]uint64, []string) {
	t.Helper()
	part, err := s.OpenPartition("t", p)
	if err != nil {
		t.Fatal(err)
	}
	it, err := part.Read(0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var offs []uint64
	var vals []string
	for it.Next() {
		r := it.Record()
		offs = append(offs, r.Offset)
		vals = append(vals, string(r.Value))
	}
	if err := it.Err(); err != nil {
		t.Fatalf("reading t/%d after recover: %v", p, err)
	}
	return offs, vals
}

func recOffsets(ranges ...[2]uint64) []uint64 {
	var o []uint64
	for _, r := range ranges {
		for x := r[0]; x < r[1]; x++ {
			o = append(o, x)
		}
	}
	return o
}

func recRecover(t *testing.T, s *Store, opts RecoverOptions) RecoverReport {
	t.Helper()
	if opts.LockWait == 0 {
		opts.LockWait = time.Second
	}
	rep, err := s.recoverOne("t", 0, opts)
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	return rep
}

// recNoChange runs Recover again and checks it finds nothing to do.
func recNoChange(t *testing.T, s *Store, opts RecoverOptions) {
	t.Helper()
	before := recSnapshot(t, s.Dir())
	rep := recRecover(t, s, opts)
	if rep.Changed() || len(rep.Problems) > 0 {
		t.Errorf("second recover changed something: %+v", rep)
	}
	recSameSnapshot(t, before, recSnapshot(t, s.Dir()))
}

// recSnapshot describes every file and directory under root: bytes,
// inode, ctime and mtime, so that "changes nothing" means that.
func recSnapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		desc := fmt.Sprintf("%v ino=%d ctime=%d.%d mtime=%d", fi.Mode(), st.Ino, st.Ctim.Sec, st.Ctim.Nsec, fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %d %x", len(b), sha256.Sum256(b))
		}
		m[path] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func recSameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, d := range before {
		if after[p] != d {
			t.Errorf("%s changed:\n  %s\n  %s", p, d, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared", p)
		}
	}
}

// recPartitionFiles returns the contents of a partition directory's
// files, by name.
func recPartitionFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range entries {
		if e.Name() == GapsFile {
			continue // holds times; compared by recGapRanges
		}
		m[e.Name()] = recRead(t, filepath.Join(dir, e.Name()))
	}
	return m
}

func recGapRanges(t *testing.T, dir string) []string {
	t.Helper()
	gaps, err := ReadGaps(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range gaps {
		out = append(out, fmt.Sprintf("%d..%d", g.From, g.To))
	}
	return out
}

func recSameFiles(t *testing.T, got, want map[string][]byte) {
	t.Helper()
	for name, b := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s missing", name)
		case !bytes.Equal(g, b):
			t.Errorf("%s differs: %d bytes, want %d", name, len(g), len(b))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected file %s", name)
		}
	}
}

// recQuarantine returns the quarantine's data files for t/0 and their
// notes, checking each data file has its note.
func recQuarantine(t *testing.T, s *Store) (data map[string][]byte, notes []quarantineNote) {
	t.Helper()
	dir := filepath.Join(s.Dir(), QuarantineDir, "t", "0")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	data = map[string][]byte{}
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".bin":
			data[e.Name()] = recRead(t, filepath.Join(dir, e.Name()))
		case ".json":
			var n quarantineNote
			if err := json.Unmarshal(recRead(t, filepath.Join(dir, e.Name())), &n); err != nil {
				t.Fatal(err)
			}
			notes = append(notes, n)
		default:
			t.Errorf("unexpected quarantine file %s", e.Name())
		}
	}
	if len(notes) != len(data) {
		t.Errorf("%d quarantine copies, %d notes", len(data), len(notes))
	}
	for _, n := range notes {
		if _, ok := data[n.Data]; !ok {
			t.Errorf("note for %s names a missing copy", n.Data)
		}
	}
	return data, notes
}

func TestRecoverCleanPartitionDoesNothing(t *testing.T) {
	s := recStore(t, 1)
	recStandard(t, s)
	before := recSnapshot(t, s.Dir())
	rep := recRecover(t, s, RecoverOptions{Salvage: true})
	recSameSnapshot(t, before, recSnapshot(t, s.Dir()))
	if rep.Changed() || len(rep.Problems) > 0 || len(rep.Segments) != 3 || rep.Next != 25 {
		t.Fatalf("report %+v", rep)
	}
	for _, sr := range rep.Segments {
		if sr.Index != IndexKept || sr.TimeIndex != IndexKept || sr.Cut != nil || sr.Interval != 1 {
			t.Errorf("segment %+v", sr)
		}
	}
	if sr := rep.Segments[1]; sr.Name != recName(10, ".log") || sr.Records != 10 || sr.ValidBytes != sr.Size {
		t.Errorf("segment 10: %+v", sr)
	}
}

func TestRecoverTornTail(t *testing.T) {
	extra := recEncode(nil, recRec{off: 25, ts: 5, key: "k", value: "a record torn in two by a crash"})
	cases := []struct {
		name string
		tail func(active []byte, f recFiles) (data []byte, cutAt int64)
		// the torn record's index entry reached the disk before its log bytes
		staleIndex bool
	}{
		{"half record", func(a []byte, _ recFiles) ([]byte, int64) {
			return append(bytes.Clone(a), extra[:len(extra)/2]...), int64(len(a))
		}, false},
		{"half header", func(a []byte, _ recFiles) ([]byte, int64) {
			return append(bytes.Clone(a), extra[:11]...), int64(len(a))
		}, false},
		{"zero tail", func(a []byte, _ recFiles) ([]byte, int64) {
			return append(bytes.Clone(a), make([]byte, 4096)...), int64(len(a))
		}, true},
		{"zeroed last record", func(a []byte, f recFiles) ([]byte, int64) {
			d := bytes.Clone(a)
			clear(d[f.pos[4]:])
			return d, f.pos[4]
		}, false},
		{"flipped crc of last record", func(a []byte, f recFiles) ([]byte, int64) {
			d := bytes.Clone(a)
			d[f.pos[4]+12] ^= 0x40
			return d, f.pos[4]
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := recStore(t, 1)
			segs := recStandard(t, s)
			dir := s.PartitionDir("t", 0)
			logPath := filepath.Join(dir, recName(20, ".log"))
			data, cutAt := tc.tail(segs[20].log, segs[20])
			recWrite(t, logPath, data)
			kept := uint64(20 + len(segs[20].pos))
			if cutAt < int64(len(segs[20].log)) {
				kept--
			}
			if tc.staleIndex {
				idx := binary.BigEndian.AppendUint64(bytes.Clone(segs[20].idx), 25)
				idx = binary.BigEndian.AppendUint64(idx, uint64(len(segs[20].log)))
				recWrite(t, filepath.Join(dir, recName(20, ".index")), idx)
			}
			p, _ := s.OpenPartition("t", 0)
			_, nextBefore, _ := p.Bounds()

			rep := recRecover(t, s, RecoverOptions{})
			sr := rep.Segments[2]
			if sr.Cut == nil || sr.Cut.From != cutAt || sr.Cut.To != int64(len(data)) || sr.Cut.Saved == "" || sr.Cut.Whole {
				t.Fatalf("cut %+v, want %d..%d saved", sr.Cut, cutAt, len(data))
			}
			if sr.Records != kept-20 || sr.ValidBytes != cutAt || rep.Next != nextBefore || rep.Next != kept {
				t.Errorf("segment %+v, next %d; want %d records, next %d", sr, rep.Next, kept-20, kept)
			}
			if got := recRead(t, logPath); !bytes.Equal(got, data[:cutAt]) {
				t.Errorf(".log is %d bytes, want the first %d", len(got), cutAt)
			}
			want := recSeg(recRecs(20, kept), 1)
			if got := recRead(t, filepath.Join(dir, recName(20, ".index"))); !bytes.Equal(got, want.idx) {
				t.Errorf(".index %x\nwant  %x", got, want.idx)
			}
			if got := recRead(t, filepath.Join(dir, recName(20, ".timeindex"))); !bytes.Equal(got, want.tidx) {
				t.Errorf(".timeindex %x\nwant      %x", got, want.tidx)
			}
			wantAction := IndexKept
			if tc.staleIndex || kept < 25 {
				wantAction = IndexTrimmed
			}
			if sr.Index != wantAction {
				t.Errorf("index action %s, want %s", sr.Index, wantAction)
			}

			qdata, notes := recQuarantine(t, s)
			if len(notes) != 1 || !bytes.Equal(qdata[notes[0].Data], data[cutAt:]) {
				t.Fatalf("quarantine holds %d notes; want the %d cut bytes", len(notes), len(data)-int(cutAt))
			}
			n := notes[0]
			if n.Source != logPath || n.Pos != cutAt || n.Length != int64(len(data))-cutAt || n.ExpectedOffset != kept ||
				!strings.Contains(n.Reason, "incomplete") || n.Time == "" || filepath.Join(filepath.Dir(sr.Cut.Saved), n.Data) != sr.Cut.Saved {
				t.Errorf("note %+v", n)
			}

			offs, _ := recReadAll(t, s, 0)
			if !slices.Equal(offs, recOffsets([2]uint64{0, kept})) {
				t.Errorf("read offsets %v", offs)
			}
			recNoChange(t, s, RecoverOptions{})

			// A writer carries on at the next offset.
			w, err := s.OpenWriter("t", 0, WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if w.NextOffset() != kept {
				t.Errorf("writer's next offset %d, want %d", w.NextOffset(), kept)
			}
			w.Close()
		})
	}
}

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

func TestRecoverLeftovers(t *testing.T) {
	s := recStore(t, 2)
	segs := recStandard(t, s)
	dir := s.PartitionDir("t", 0)
	qdir := filepath.Join(s.Dir(), QuarantineDir, "t", "0")
	if err := os.MkdirAll(qdir, 0o755); err != nil {
		t.Fatal(err)
	}
	recWrite(t, filepath.Join(s.PartitionDir("t", 1), recName(0, ".log")), nil)
	left := []string{
		// An interrupted retention delete of a segment before 0.
		filepath.Join(dir, "00000000000000000000.log.deleted"),
		filepath.Join(dir, "00000000000000000000.index.deleted"),
		// Temporary files: an index being rebuilt, gaps being replaced.
		filepath.Join(dir, recName(10, ".index.tmp")),
		filepath.Join(dir, GapsFile+".tmp"),
		filepath.Join(dir, recName(12, ".log.tmp")),
		// An index file without its .log.
		filepath.Join(dir, recName(30, ".index")),
		filepath.Join(dir, recName(30, ".timeindex")),
		// An interrupted quarantine copy, and one without its note.
		filepath.Join(qdir, "x.log.1-2.3.bin.tmp"),
		filepath.Join(qdir, "y.log.1-2.3.bin"),
		// A settings file being replaced, and a copy's temporary directory.
		filepath.Join(s.Dir(), "t", ".seglog.json.tmp"),
		filepath.Join(s.Dir(), "t", ".copy-0-abc.tmp", "0", recName(0, ".log")),
		// A create of topic t that lost the race, and an old create of a
		// topic that never came to be.
		filepath.Join(s.Dir(), ".create-t-0123456789ab.tmp", "0", recName(0, ".log")),
		filepath.Join(s.Dir(), ".create-gone-0123456789ab.tmp", "0", recName(0, ".log")),
	}
	kept := []string{
		filepath.Join(dir, "notes.txt"),
		filepath.Join(dir, GapsFile),
		filepath.Join(qdir, "z.log.1-2.3.bin"),
		filepath.Join(qdir, "z.log.1-2.3.json"),
		filepath.Join(s.Dir(), ".create-young-0123456789ab.tmp", "0", recName(0, ".log")),
		filepath.Join(s.Dir(), ".groups", "g", "x.tmp"),
	}
	for _, p := range append(slices.Clone(left), kept...) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		recWrite(t, p, []byte("x"))
	}
	recWrite(t, filepath.Join(dir, GapsFile), []byte(`{"gaps":[]}`))
	recWrite(t, filepath.Join(qdir, "z.log.1-2.3.json"), []byte(`{"data":"z.log.1-2.3.bin"}`))
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(s.Dir(), ".create-gone-0123456789ab.tmp"), old, old); err != nil {
		t.Fatal(err)
	}

	// A dry run lists them and removes nothing.
	before := recSnapshot(t, s.Dir())
	dry, err := s.RecoverTopic("t", -1, RecoverOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	dataDry, err := s.RecoverDataDir(RecoverOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	recSameSnapshot(t, before, recSnapshot(t, s.Dir()))

	tr, err := s.RecoverTopic("t", -1, RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dataLeft, err := s.RecoverDataDir(RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Failed) > 0 || len(tr.Partitions) != 2 {
		t.Fatalf("recover: %+v", tr)
	}
	var listed, listedDry []string
	collect := func(dst *[]string, tr TopicRecovery, data []RecoverLeftover) {
		all := slices.Concat(tr.Leftovers, data)
		for _, p := range tr.Partitions {
			all = append(all, p.Leftovers...)
		}
		for _, l := range all {
			if !l.Kept {
				*dst = append(*dst, l.Path)
			}
		}
		slices.Sort(*dst)
		*dst = slices.Compact(*dst)
	}
	collect(&listed, tr, dataLeft)
	collect(&listedDry, dry, dataDry)
	var want []string
	for _, p := range left {
		// Directories are listed themselves, not their contents.
		for filepath.Base(filepath.Dir(p)) == "0" && strings.HasSuffix(p, ".log") && strings.Contains(p, ".tmp/") {
			p = filepath.Dir(filepath.Dir(p))
		}
		want = append(want, p)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(listed, want) {
		t.Errorf("removed\n  %q\nwant\n  %q", listed, want)
	}
	if !slices.Equal(listedDry, want) {
		t.Errorf("dry run listed\n  %q\nwant\n  %q", listedDry, want)
	}
	for _, p := range want {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s still there", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	var young bool
	for _, l := range dataLeft {
		young = young || l.Kept && strings.Contains(l.Path, ".create-young-")
	}
	if !young {
		t.Errorf("a young create directory of a missing topic is not listed as kept: %+v", dataLeft)
	}
	// The segments are untouched.
	for base, f := range segs {
		if got := recRead(t, filepath.Join(dir, recName(base, ".log"))); !bytes.Equal(got, f.log) {
			t.Errorf("segment %d changed", base)
		}
	}
	recNoChange(t, s, RecoverOptions{})
}

// damageFixture makes t/0 with a corrupt record in closed segment 10
// (offset 14's CRC) and in the active segment 20 (offset 22's value), and
// a missing index on segment 0.
func recDamageFixture(t *testing.T, s *Store) map[uint64]recFiles {
	t.Helper()
	segs := recStandard(t, s)
	dir := s.PartitionDir("t", 0)
	l10 := bytes.Clone(segs[10].log)
	l10[segs[10].pos[4]+12] ^= 0x01
	recWrite(t, filepath.Join(dir, recName(10, ".log")), l10)
	l20 := bytes.Clone(segs[20].log)
	l20[segs[20].pos[2]+30] ^= 0x20
	recWrite(t, filepath.Join(dir, recName(20, ".log")), l20)
	os.Remove(filepath.Join(dir, recName(0, ".index")))
	return segs
}

func TestRecoverCorruptWithoutSalvage(t *testing.T) {
	s := recStore(t, 1)
	segs := recDamageFixture(t, s)
	dir := s.PartitionDir("t", 0)
	before := recPartitionFiles(t, dir)

	rep := recRecover(t, s, RecoverOptions{})
	if len(rep.Problems) != 2 {
		t.Fatalf("problems %v, want the two corrupt records", rep.Problems)
	}
	for i, want := range []struct {
		seg    uint64
		pos    int64
		offset int64
		reason error
	}{{10, segs[10].pos[4], 14, format.ErrCRC}, {20, segs[20].pos[2], 22, format.ErrCRC}} {
		var ce *CorruptionError
		if !errors.As(rep.Problems[i], &ce) || ce.Path != filepath.Join(dir, recName(want.seg, ".log")) || ce.Pos != want.pos ||
			ce.Offset != want.offset || !errors.Is(ce, want.reason) {
			t.Errorf("problem %d: %v; want at byte %d of segment %d, offset %d", i, rep.Problems[i], want.pos, want.seg, want.offset)
		}
		sr := rep.Segments[i+1]
		if sr.Problem == nil || sr.Cut != nil || sr.Index != IndexLeft || sr.Records != 9 && sr.Records != 4 {
			t.Errorf("segment %+v", sr)
		}
	}
	// Only segment 0's index was rebuilt; nothing else changed.
	after := recPartitionFiles(t, dir)
	before[recName(0, ".index")] = segs[0].idx
	recSameFiles(t, after, before)
	if rep.Segments[0].Index != IndexRebuilt {
		t.Errorf("segment 0 index %s", rep.Segments[0].Index)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), QuarantineDir)); err == nil {
		t.Error("something went to quarantine")
	}
	if rep.Next != 25 {
		t.Errorf("next %d", rep.Next)
	}
	// A second run finds the same problems and changes nothing.
	snap := recSnapshot(t, s.Dir())
	rep = recRecover(t, s, RecoverOptions{})
	if len(rep.Problems) != 2 || rep.Changed() {
		t.Errorf("second run: %+v", rep)
	}
	recSameSnapshot(t, snap, recSnapshot(t, s.Dir()))
}

func TestRecoverSalvage(t *testing.T) {
	s := recStore(t, 1)
	segs := recDamageFixture(t, s)
	dir := s.PartitionDir("t", 0)
	orig10 := recRead(t, filepath.Join(dir, recName(10, ".log")))
	orig20 := recRead(t, filepath.Join(dir, recName(20, ".log")))

	rep := recRecover(t, s, RecoverOptions{Salvage: true})
	if len(rep.Problems) > 0 {
		t.Fatalf("problems: %v", rep.Problems)
	}
	var names []string
	for _, sr := range rep.Segments {
		names = append(names, fmt.Sprintf("%d:%d", sr.Base, sr.Records))
	}
	if got := strings.Join(names, " "); got != "0:10 10:4 15:5 20:2 23:2" {
		t.Errorf("segments (base:records) %s", got)
	}
	s10, s15, s20, s23 := rep.Segments[1], rep.Segments[2], rep.Segments[3], rep.Segments[4]
	if !s10.Cut.Whole || s10.Cut.From != segs[10].pos[4] || s10.Cut.To != int64(len(orig10)) ||
		!slices.Equal(s10.SplitInto, []string{recName(15, ".log")}) || s10.Finished {
		t.Errorf("segment 10: %+v cut %+v", s10, s10.Cut)
	}
	if s15.SplitFrom != recName(10, ".log") || s15.Index != IndexCreated || s23.SplitFrom != recName(20, ".log") || s20.Cut == nil {
		t.Errorf("new segments: %+v %+v", s15, s23)
	}
	if got := recGapRanges(t, dir); !slices.Equal(got, []string{"14..15", "22..23"}) {
		t.Errorf("gaps %v", got)
	}
	gaps, _ := ReadGaps(dir)
	for _, g := range gaps {
		if g.Time == "" || !strings.Contains(g.Reason, "corrupt record") {
			t.Errorf("gap %+v", g)
		}
	}

	// Every valid record reads back without SkipCorrupt, the gaps skipped.
	offs, vals := recReadAll(t, s, 0)
	if !slices.Equal(offs, recOffsets([2]uint64{0, 14}, [2]uint64{15, 22}, [2]uint64{23, 25})) {
		t.Errorf("offsets %v", offs)
	}
	all := recRecs(0, 25)
	for i, o := range offs {
		if vals[i] != all[o].value {
			t.Errorf("offset %d: %q, want %q", o, vals[i], all[o].value)
		}
	}
	// The new and the cut segments are what a writer would have written.
	want := map[string][]byte{}
	for base, recs := range map[uint64][]recRec{0: all[0:10], 10: all[10:14], 15: all[15:20], 20: all[20:22], 23: all[23:25]} {
		f := recSeg(recs, 1)
		want[recName(base, ".log")], want[recName(base, ".index")], want[recName(base, ".timeindex")] = f.log, f.idx, f.tidx
	}
	recSameFiles(t, recPartitionFiles(t, dir), want)

	// The originals are in quarantine, whole.
	qdata, notes := recQuarantine(t, s)
	if len(notes) != 2 {
		t.Fatalf("%d quarantine notes", len(notes))
	}
	for _, n := range notes {
		orig := orig10
		if strings.HasSuffix(n.Source, recName(20, ".log")) {
			orig = orig20
		}
		if !bytes.Equal(qdata[n.Data], orig) || n.Pos != 0 || n.Length != int64(len(orig)) || !strings.Contains(n.Reason, "split") {
			t.Errorf("quarantine %s: %d bytes, note %+v", n.Data, len(qdata[n.Data]), n)
		}
	}
	// A writer goes on after the last rescued record.
	w, err := s.OpenWriter("t", 0, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w.NextOffset() != 25 {
		t.Errorf("next offset %d, want 25", w.NextOffset())
	}
	w.Close()
	recNoChange(t, s, RecoverOptions{Salvage: true})
	recNoChange(t, s, RecoverOptions{})

	// The gaps stay known once the quarantine is purged.
	entries, err := s.QuarantineEntries("t", -1)
	if err != nil || len(entries) != 2 {
		t.Fatalf("quarantine entries %v, %v", entries, err)
	}
	for _, e := range entries {
		if err := s.PurgeQuarantine(e); err != nil {
			t.Fatal(err)
		}
	}
	if got := recGapRanges(t, dir); len(got) != 2 {
		t.Errorf("gaps after purge: %v", got)
	}
}

func TestRecoverSalvageShapes(t *testing.T) {
	all := recRecs(0, 40)
	cases := []struct {
		name string
		// make writes partition t/0 and returns the offsets that must be
		// readable afterwards
		make     func(t *testing.T, dir string) []uint64
		segments string // base:records after
		gaps     []string
	}{
		{"two damaged records in one segment", func(t *testing.T, dir string) []uint64 {
			f := recSeg(all[0:20], 1)
			f.log[f.pos[3]+20] ^= 1  // timestamp of offset 3
			f.log[f.pos[11]+29] ^= 1 // value of offset 11
			recWriteSeg(t, dir, 0, f)
			recWriteSeg(t, dir, 20, recSeg(all[20:25], 1))
			return recOffsets([2]uint64{0, 3}, [2]uint64{4, 11}, [2]uint64{12, 25})
		}, "0:3 4:7 12:8 20:5", []string{"3..4", "11..12"}},
		{"garbage between records, no offset lost", func(t *testing.T, dir string) []uint64 {
			f := recSeg(all[0:10], 1)
			log := slices.Concat(f.log[:f.pos[5]], []byte("garbage!"), f.log[f.pos[5]:])
			recWrite(t, filepath.Join(dir, recName(0, ".log")), log)
			recWriteSeg(t, dir, 10, recSeg(all[10:12], 1))
			return recOffsets([2]uint64{0, 12})
		}, "0:5 5:5 10:2", nil},
		{"offsets jump inside a segment", func(t *testing.T, dir string) []uint64 {
			recs := slices.Concat(all[0:4], all[7:10])
			recWriteSeg(t, dir, 0, recSeg(recs, 1))
			recWriteSeg(t, dir, 10, recSeg(all[10:12], 1))
			return recOffsets([2]uint64{0, 4}, [2]uint64{7, 12})
		}, "0:4 7:3 10:2", []string{"4..7"}},
		{"torn tail of a closed segment", func(t *testing.T, dir string) []uint64 {
			f := recSeg(all[0:8], 1)
			f.log = f.log[:len(f.log)-5]
			recWriteSeg(t, dir, 0, f)
			recWriteSeg(t, dir, 10, recSeg(all[10:12], 1))
			return recOffsets([2]uint64{0, 7}, [2]uint64{10, 12})
		}, "0:7 10:2", []string{"7..10"}},
		{"damage at the start of a segment", func(t *testing.T, dir string) []uint64 {
			recWriteSeg(t, dir, 0, recSeg(all[0:5], 1))
			f := recSeg(all[5:15], 1)
			f.log[0] ^= 0xff // offset of record 5
			recWriteSeg(t, dir, 5, f)
			recWriteSeg(t, dir, 15, recSeg(all[15:16], 1))
			return recOffsets([2]uint64{0, 5}, [2]uint64{6, 16})
		}, "0:5 5:removed 6:9 15:1", []string{"5..6"}},
		{"damaged active segment with a torn tail", func(t *testing.T, dir string) []uint64 {
			recWriteSeg(t, dir, 0, recSeg(all[0:5], 1))
			f := recSeg(all[5:15], 1)
			f.log[f.pos[2]+8] ^= 0x10 // size of offset 7
			f.log = f.log[:len(f.log)-3]
			recWriteSeg(t, dir, 5, f)
			return recOffsets([2]uint64{0, 7}, [2]uint64{8, 14})
		}, "0:5 5:2 8:6", []string{"7..8"}},
		{"sparse index kept in both parts", func(t *testing.T, dir string) []uint64 {
			f := recSeg(all[0:30], 4)
			f.log[f.pos[13]+30] ^= 1
			recWriteSeg(t, dir, 0, f)
			recWriteSeg(t, dir, 30, recSeg(all[30:31], 4))
			return recOffsets([2]uint64{0, 13}, [2]uint64{14, 31})
		}, "0:13 14:16 30:1", []string{"13..14"}},
		{"a closed segment of garbage only", func(t *testing.T, dir string) []uint64 {
			recWriteSeg(t, dir, 0, recSeg(all[0:10], 1))
			recWrite(t, filepath.Join(dir, recName(10, ".log")), bytes.Repeat([]byte("garbage!"), 40))
			recWriteSeg(t, dir, 20, recSeg(all[20:25], 1))
			return recOffsets([2]uint64{0, 10}, [2]uint64{20, 25})
		}, "0:10 10:removed 20:5", []string{"10..20"}},
		{"garbage, then records above the segment's base", func(t *testing.T, dir string) []uint64 {
			recWriteSeg(t, dir, 0, recSeg(all[0:10], 1))
			f := recSeg(all[13:20], 1)
			recWrite(t, filepath.Join(dir, recName(10, ".log")), slices.Concat([]byte("garbage!"), f.log))
			recWriteSeg(t, dir, 20, recSeg(all[20:25], 1))
			return recOffsets([2]uint64{0, 10}, [2]uint64{13, 25})
		}, "0:10 10:removed 13:7 20:5", []string{"10..13"}},
		{"a segment named below its first record", func(t *testing.T, dir string) []uint64 {
			recWriteSeg(t, dir, 0, recSeg(all[0:10], 1))
			recWriteSeg(t, dir, 5, recSeg(all[10:20], 1))
			recWriteSeg(t, dir, 20, recSeg(all[20:25], 1))
			return recOffsets([2]uint64{0, 25})
		}, "0:10 5:10->10 20:5", nil},
		{"a segment named above its first record", func(t *testing.T, dir string) []uint64 {
			recWriteSeg(t, dir, 0, recSeg(all[0:10], 1))
			recWriteSeg(t, dir, 12, recSeg(all[10:20], 1))
			recWriteSeg(t, dir, 20, recSeg(all[20:25], 1))
			return recOffsets([2]uint64{0, 25})
		}, "0:10 12:10->10 20:5", nil},
		{"a segment named before offsets that are missing", func(t *testing.T, dir string) []uint64 {
			recWriteSeg(t, dir, 0, recSeg(all[0:10], 1))
			recWriteSeg(t, dir, 10, recSeg(all[15:20], 1))
			recWriteSeg(t, dir, 20, recSeg(all[20:25], 1))
			return recOffsets([2]uint64{0, 10}, [2]uint64{15, 25})
		}, "0:10 10:removed 15:5 20:5", []string{"10..15"}},
		{"a segment partly overlapping the one before", func(t *testing.T, dir string) []uint64 {
			recWriteSeg(t, dir, 0, recSeg(all[0:10], 1))
			recWriteSeg(t, dir, 5, recSeg(all[5:20], 1))
			recWriteSeg(t, dir, 20, recSeg(all[20:25], 1))
			return recOffsets([2]uint64{0, 25})
		}, "0:10 5:removed 10:10 20:5", nil},
		{"a segment entirely inside the one before", func(t *testing.T, dir string) []uint64 {
			recWriteSeg(t, dir, 0, recSeg(all[0:15], 1))
			recWriteSeg(t, dir, 10, recSeg(all[10:15], 1))
			recWriteSeg(t, dir, 15, recSeg(all[15:20], 1))
			return recOffsets([2]uint64{0, 20})
		}, "0:15 10:removed 15:5", nil},
		{"the active segment of garbage only", func(t *testing.T, dir string) []uint64 {
			recWriteSeg(t, dir, 0, recSeg(all[0:10], 1))
			recWrite(t, filepath.Join(dir, recName(10, ".log")), bytes.Repeat([]byte("garbage!"), 40))
			return recOffsets([2]uint64{0, 10})
		}, "0:10 10:0", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := recStore(t, 1)
			dir := s.PartitionDir("t", 0)
			readable := tc.make(t, dir)
			p, _ := s.OpenPartition("t", 0)
			_, nextBefore, _ := p.Bounds()
			logsBefore := map[string][]byte{}
			for name, b := range recPartitionFiles(t, dir) {
				if strings.HasSuffix(name, ".log") {
					logsBefore[name] = b
				}
			}

			rep := recRecover(t, s, RecoverOptions{Salvage: true})
			if len(rep.Problems) > 0 {
				t.Fatalf("problems %v", rep.Problems)
			}
			var got []string
			for _, sr := range rep.Segments {
				switch {
				case sr.Removed:
					got = append(got, fmt.Sprintf("%d:removed", sr.Base))
				case sr.RenamedTo != "":
					got = append(got, fmt.Sprintf("%d:%d->%s", sr.Base, sr.Records, strings.TrimLeft(strings.TrimSuffix(sr.RenamedTo, ".log"), "0")))
				default:
					got = append(got, fmt.Sprintf("%d:%d", sr.Base, sr.Records))
				}
			}
			if strings.Join(got, " ") != tc.segments {
				t.Errorf("segments %s, want %s", strings.Join(got, " "), tc.segments)
			}
			if g := recGapRanges(t, dir); !slices.Equal(g, tc.gaps) {
				t.Errorf("gaps %v, want %v", g, tc.gaps)
			}
			offs, vals := recReadAll(t, s, 0)
			if !slices.Equal(offs, readable) {
				t.Errorf("offsets %v\nwant    %v", offs, readable)
			}
			for i, o := range offs {
				if vals[i] != all[o].value {
					t.Errorf("offset %d reads %q", o, vals[i])
				}
			}
			// Each segment's indexes are what a writer with the interval
			// would have written for what it holds.
			segsAfter, _ := listSegments(dir)
			for _, seg := range segsAfter {
				var recs []recRec
				for _, o := range offs {
					if o >= seg.base && (seg == segsAfter[len(segsAfter)-1] || o < recNextBase(segsAfter, seg)) {
						recs = append(recs, all[o])
					}
				}
				interval := rep.Segments[0].Interval
				f := recSeg(recs, interval)
				for ext, b := range map[string][]byte{".log": f.log, ".index": f.idx, ".timeindex": f.tidx} {
					if g := recRead(t, seg.path(ext)); !bytes.Equal(g, b) {
						t.Errorf("%s: %d bytes, want %d", recName(seg.base, ext), len(g), len(b))
					}
				}
			}
			for _, seg := range segsAfter[:len(segsAfter)-1] {
				if fi, err := os.Stat(seg.path(".log")); err != nil || fi.Size() == 0 {
					t.Errorf("%s is left empty (%v)", recName(seg.base, ".log"), err)
				}
			}
			// Every .log cut or removed is in quarantine as it was.
			saved, _ := recQuarantine(t, s)
			after := recPartitionFiles(t, dir)
			for name, b := range logsBefore {
				if a, ok := after[name]; ok && bytes.Equal(a, b) {
					continue
				}
				renamed := false
				for _, sr := range rep.Segments {
					renamed = renamed || (sr.Name == name && sr.RenamedTo != "" && bytes.Equal(after[sr.RenamedTo], b))
				}
				found := renamed
				for _, q := range saved {
					found = found || bytes.Equal(q, b)
				}
				if !found {
					t.Errorf("%s changed and is not in quarantine as it was", name)
				}
			}
			recVerifyClean(t, s)
			p, _ = s.OpenPartition("t", 0)
			if _, next, _ := p.Bounds(); next != nextBefore {
				t.Errorf("next offset %d, was %d", next, nextBefore)
			}
			recNoChange(t, s, RecoverOptions{Salvage: true})
		})
	}
}

func recNextBase(segs []segment, seg segment) uint64 {
	for _, s := range segs {
		if s.base > seg.base {
			return s.base
		}
	}
	return ^uint64(0)
}

// recOverlapAfterDamage writes segment 0 with offsets 0..9, those in
// damaged damaged, and segment base with other values at offsets
// base..11. It returns the records of both, and the second's files.
func recOverlapAfterDamage(t *testing.T, s *Store, base uint64, damaged ...int) (all, other []recRec, otherSeg recFiles) {
	dir := s.PartitionDir("t", 0)
	all = recRecs(0, 20)
	f := recSeg(all[0:10], 1)
	for _, o := range damaged {
		f.log[f.pos[o]+29] ^= 1
	}
	recWriteSeg(t, dir, 0, f)
	other = slices.Clone(all[base:12])
	for i := range other {
		other[i].value = "other"
	}
	otherSeg = recSeg(other, 1)
	recWriteSeg(t, dir, base, otherSeg)
	return all, other, otherSeg
}

// A later segment holding other data at the offsets of records rescued
// after damage: readers take the rescued records for valid and the other
// segment's for overlap, and so does recover. Plain recover reports the
// damage for --salvage, and changes nothing; salvage keeps what readers
// read, and moves the other segment's overlapping records to quarantine.
func TestRecoverSalvageOverlapAfterDamage(t *testing.T) {
	s := recStore(t, 1)
	dir := s.PartitionDir("t", 0)
	all, other, otherSeg := recOverlapAfterDamage(t, s, 5, 3)
	before := recSnapshot(t, s.Dir())
	rep := recRecover(t, s, RecoverOptions{})
	if len(rep.Problems) != 2 || !errors.Is(rep.Problems[0], format.ErrCRC) || !errors.Is(rep.Problems[1], ErrOverlap) || rep.Changed() {
		t.Fatalf("plain recover: %+v", rep)
	}
	recSameSnapshot(t, before, recSnapshot(t, s.Dir()))

	rep = recRecover(t, s, RecoverOptions{Salvage: true})
	if len(rep.Problems) > 0 || rep.Next != 12 {
		t.Fatalf("salvage: %+v", rep)
	}
	offs, vals := recReadAll(t, s, 0)
	var want []string
	for _, r := range slices.Concat(all[0:3], all[4:10], other[10-5:]) {
		want = append(want, r.value)
	}
	if !slices.Equal(offs, recOffsets([2]uint64{0, 3}, [2]uint64{4, 12})) || !slices.Equal(vals, want) {
		t.Errorf("after salvage: offsets %v, values %v; want values %v", offs, vals, want)
	}
	if g := recGapRanges(t, dir); !slices.Equal(g, []string{"3..4"}) {
		t.Errorf("gaps %v", g)
	}
	qdata, _ := recQuarantine(t, s)
	found := false
	for _, q := range qdata {
		found = found || bytes.Equal(q, otherSeg.log)
	}
	if !found {
		t.Errorf("the overlapping segment is not in quarantine as it was")
	}
	recNoChange(t, s, RecoverOptions{Salvage: true})
}

func TestRecoverDryRun(t *testing.T) {
	make := func(t *testing.T) *Store {
		s := recStore(t, 1)
		recDamageFixture(t, s)
		dir := s.PartitionDir("t", 0)
		// A torn tail on top, and leftovers.
		l := recRead(t, filepath.Join(dir, recName(20, ".log")))
		recWrite(t, filepath.Join(dir, recName(20, ".log")), append(l, 0, 0, 0, 1, 2))
		recWrite(t, filepath.Join(dir, recName(3, ".log.deleted")), []byte("old"))
		recWrite(t, filepath.Join(dir, recName(10, ".index.tmp")), []byte("tmp"))
		return s
	}
	for _, salvage := range []bool{false, true} {
		t.Run(fmt.Sprint("salvage=", salvage), func(t *testing.T) {
			s := make(t)
			before := recSnapshot(t, s.Dir())
			dry := recRecover(t, s, RecoverOptions{DryRun: true, Salvage: salvage})
			recSameSnapshot(t, before, recSnapshot(t, s.Dir()))
			if !dry.DryRun || !dry.Changed() {
				t.Errorf("dry run report %+v", dry)
			}
			real := recRecover(t, s, RecoverOptions{Salvage: salvage})
			// The plan is exactly what was done, but for where the bytes
			// were saved and when.
			for i := range real.Segments {
				if c := real.Segments[i].Cut; c != nil {
					if c.Saved == "" {
						t.Errorf("segment %s: cut bytes not saved", real.Segments[i].Name)
					}
					cc := *c
					cc.Saved = ""
					real.Segments[i].Cut = &cc
				}
			}
			for i := range real.Gaps {
				real.Gaps[i].Time = ""
			}
			real.DryRun = true
			if g, w := recDescribe(dry), recDescribe(real); g != w {
				t.Errorf("dry run planned\n%s\nrecover did\n%s", g, w)
			}
		})
	}
}

// recDescribe prints a report with pointers followed and errors as text.
func recDescribe(rep RecoverReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%d %s dry=%v next=%d\n", rep.Topic, rep.Partition, rep.Dir, rep.DryRun, rep.Next)
	for _, sr := range rep.Segments {
		c := sr
		c.Cut, c.Problem = nil, nil
		fmt.Fprintf(&b, "  %+v", c)
		if sr.Cut != nil {
			fmt.Fprintf(&b, " cut=%+v", *sr.Cut)
		}
		if sr.Problem != nil {
			fmt.Fprintf(&b, " problem=%v", sr.Problem)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "  leftovers %+v\n  gaps %+v\n  problems %v\n", rep.Leftovers, rep.Gaps, rep.Problems)
	return b.String()
}

func TestRecoverLocked(t *testing.T) {
	s := recStore(t, 2)
	recStandard(t, s)
	recWrite(t, filepath.Join(s.PartitionDir("t", 1), recName(0, ".log")), nil)

	w, err := s.OpenWriter("t", 0, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.recoverOne("t", 0, RecoverOptions{LockWait: 20 * time.Millisecond})
	var le *LockedError
	if !errors.As(err, &le) || le.What != "partition t/0" || le.Pid != 0 && le.Pid != os.Getpid() {
		t.Errorf("recover of a partition with a live writer: %v", err)
	}
	// Over the topic, the held partition fails and the other is done.
	tr, err := s.RecoverTopic("t", -1, RecoverOptions{LockWait: 20 * time.Millisecond})
	if err != nil || len(tr.Failed) != 1 || tr.Failed[0].Partition != 0 || !errors.As(tr.Failed[0].Err, &le) ||
		len(tr.Partitions) != 1 || tr.Partitions[0].Partition != 1 {
		t.Errorf("RecoverTopic: %+v, %v", tr, err)
	}
	w.Close()

	// The maintenance lock on the topic directory.
	l, err := lockDir(filepath.Join(s.Dir(), "t"), "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.recoverOne("t", 0, RecoverOptions{LockWait: 20 * time.Millisecond})
	if !errors.As(err, &le) || le.What != "topic t" {
		t.Errorf("recover under a held maintenance lock: %v", err)
	}
	l.Unlock()

	// TryPartitionLocks: one try, no waiting.
	w, err = s.OpenWriter("t", 0, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tr, err = s.RecoverTopic("t", -1, RecoverOptions{LockWait: time.Minute, TryPartitionLocks: true})
	if err != nil || len(tr.Failed) != 1 || !errors.As(tr.Failed[0].Err, &le) || time.Since(start) > 10*time.Second {
		t.Errorf("RecoverTopic trying once: %+v, %v after %v", tr, err, time.Since(start))
	}
	w.Close()
	if _, err := s.recoverOne("t", 0, RecoverOptions{}); err != nil {
		t.Error(err)
	}
	if _, err := s.recoverOne("t", 2, RecoverOptions{}); !errors.Is(err, ErrPartitionNotFound) {
		t.Errorf("partition 2: %v", err)
	}
	if _, err := s.recoverOne("nope", 0, RecoverOptions{}); !errors.Is(err, ErrTopicNotFound) {
		t.Errorf("topic nope: %v", err)
	}
}

// recCrashFS lets budget changes through, then "crashes": that change and
// every later one fail without doing anything (a write at the crash point
// writes half its bytes), as if the process was killed there. A killed
// process's writes stay in the page cache, so syncs are counted as changes
// but not made: that keeps a hundred crashed runs fast.
type recCrashFS struct {
	osFS
	budget, ops int
}

var recErrCrash = errors.New("simulated crash")

func (c *recCrashFS) step() error {
	if c.ops >= c.budget {
		c.ops++
		return recErrCrash
	}
	c.ops++
	return nil
}

func (c *recCrashFS) crashed() bool { return c.ops > c.budget }

func (c *recCrashFS) OpenFile(name string, flag int, perm os.FileMode) (file, error) {
	if flag&(os.O_CREATE|os.O_TRUNC) != 0 {
		if err := c.step(); err != nil {
			return nil, err
		}
	}
	f, err := c.osFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &recCrashFile{file: f, c: c}, nil
}

func (c *recCrashFS) Rename(oldpath, newpath string, noReplace bool) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.osFS.Rename(oldpath, newpath, noReplace)
}

func (c *recCrashFS) Remove(name string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.osFS.Remove(name)
}

func (c *recCrashFS) Link(oldname, newname string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.osFS.Link(oldname, newname)
}

func (c *recCrashFS) Mkdir(name string, perm os.FileMode) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.osFS.Mkdir(name, perm)
}

func (c *recCrashFS) SyncDir(name string) error {
	return c.step()
}

type recCrashFile struct {
	file
	c *recCrashFS
}

func (f *recCrashFile) Write(b []byte) (int, error) {
	if err := f.c.step(); err != nil {
		if f.c.ops == f.c.budget+1 {
			n, _ := f.file.Write(b[:len(b)/2])
			return n, err
		}
		return 0, err
	}
	return f.file.Write(b)
}

func (f *recCrashFile) Truncate(size int64) error {
	if err := f.c.step(); err != nil {
		return err
	}
	return f.file.Truncate(size)
}

func (f *recCrashFile) Sync() error {
	return f.c.step()
}

// A recover killed at any point leaves a directory the next recover
// finishes: the same segments as a clean run's, the same gaps, no record
// lost, nothing left over.
func TestRecoverCrashAtEveryStep(t *testing.T) {
	salvage := func(t *testing.T, s *Store) {
		recDamageFixture(t, s)
		dir := s.PartitionDir("t", 0)
		l := recRead(t, filepath.Join(dir, recName(20, ".log")))
		recWrite(t, filepath.Join(dir, recName(20, ".log")), append(l, 0, 0, 7))
		recWrite(t, filepath.Join(dir, recName(0, ".timeindex")), []byte("lies, all lies"))
		recWrite(t, filepath.Join(dir, recName(2, ".log.deleted")), []byte("old"))
	}
	tail := func(t *testing.T, s *Store) {
		segs := recStandard(t, s)
		dir := s.PartitionDir("t", 0)
		torn := recEncode(nil, recRec{off: 25, ts: 1, value: "torn"})
		recWrite(t, filepath.Join(dir, recName(20, ".log")), append(bytes.Clone(segs[20].log), torn[:30]...))
		idx := binary.BigEndian.AppendUint64(bytes.Clone(segs[20].idx), 25)
		recWrite(t, filepath.Join(dir, recName(20, ".index")), binary.BigEndian.AppendUint64(idx, uint64(len(segs[20].log))))
		os.Remove(filepath.Join(dir, recName(10, ".timeindex")))
		recWrite(t, filepath.Join(dir, recName(30, ".index")), nil)
	}
	misnamed := func(t *testing.T, s *Store) {
		dir := s.PartitionDir("t", 0)
		all := recRecs(0, 25)
		recWriteSeg(t, dir, 0, recSeg(all[0:10], 1))
		recWriteSeg(t, dir, 7, recSeg(all[10:20], 1))
		recWriteSeg(t, dir, 20, recSeg(all[20:25], 1))
	}
	garbage := func(t *testing.T, s *Store) {
		dir := s.PartitionDir("t", 0)
		all := recRecs(0, 25)
		recWriteSeg(t, dir, 0, recSeg(all[0:10], 1))
		f := recSeg(all[13:20], 1)
		recWriteSeg(t, dir, 10, f)
		recWrite(t, filepath.Join(dir, recName(10, ".log")), slices.Concat([]byte("garbage!"), f.log))
		recWriteSeg(t, dir, 20, recSeg(all[20:25], 1))
	}
	overlapping := func(base uint64, damaged ...int) func(t *testing.T, s *Store) {
		return func(t *testing.T, s *Store) { recOverlapAfterDamage(t, s, base, damaged...) }
	}
	for _, tc := range []struct {
		name    string
		fixture func(*testing.T, *Store)
		second  RecoverOptions
	}{
		{"salvage, second run salvage", salvage, RecoverOptions{Salvage: true}},
		{"salvage, second run plain", salvage, RecoverOptions{}},
		{"torn tail", tail, RecoverOptions{}},
		{"misnamed segment renamed", misnamed, RecoverOptions{}},
		{"garbage segment removed", garbage, RecoverOptions{Salvage: true}},
		// The rescued 4..9 wait for segment 5's overlapping 5..9 to go to
		// quarantine; for segment 4's, which holds their name, too.
		{"rescued run after an overlapping segment", overlapping(5, 3), RecoverOptions{Salvage: true}},
		{"rescued run into an overlapping segment's name", overlapping(4, 3), RecoverOptions{Salvage: true}},
		// Two runs rescued, 4..5 and 7..9; after them segment 10, or
		// segment 6, named where offset 6 was lost.
		{"two runs rescued", overlapping(10, 3, 6), RecoverOptions{Salvage: true}},
		{"two runs rescued around an overlapping segment", overlapping(6, 3, 6), RecoverOptions{Salvage: true}},
	} {
		fixture, second := tc.fixture, tc.second
		t.Run(tc.name, func(t *testing.T) {
			ref := recStore(t, 1)
			fixture(t, ref)
			recRecover(t, ref, RecoverOptions{Salvage: true})
			wantFiles := recPartitionFiles(t, ref.PartitionDir("t", 0))
			wantGaps := recGapRanges(t, ref.PartitionDir("t", 0))
			wantOffs, _ := recReadAll(t, ref, 0)

			// A run that never crashes counts the changes recover makes;
			// then it is killed before each of them in turn.
			count := &recCrashFS{budget: 1 << 30}
			cs := recStore(t, 1)
			fixture(t, cs)
			if _, err := (&Store{dir: cs.dir, fs: count}).recoverOne("t", 0, RecoverOptions{Salvage: true}); err != nil {
				t.Fatal(err)
			}
			if count.ops < 8 {
				t.Fatalf("recover made only %d changes", count.ops)
			}
			for budget := range count.ops {
				t.Run(fmt.Sprint(budget), func(t *testing.T) {
					t.Parallel()
					s := recStore(t, 1)
					fixture(t, s)
					crash := &recCrashFS{budget: budget}
					_, err := (&Store{dir: s.dir, fs: crash}).recoverOne("t", 0, RecoverOptions{Salvage: true, LockWait: time.Second})
					if !crash.crashed() || err == nil {
						t.Fatalf("crashed %v, error %v", crash.crashed(), err)
					}
					dir := s.PartitionDir("t", 0)
					s.fs = &recCrashFS{budget: 1 << 30}
					rep, err := s.recoverOne("t", 0, second)
					if err != nil {
						t.Fatalf("second recover: %v", err)
					}
					if !second.Salvage && len(rep.Problems) > 0 {
						// The crash came before a split had begun: nothing of
						// it happened, and its damage is reported as before.
						for _, p := range rep.Problems {
							if !errors.Is(p, format.ErrCRC) {
								t.Fatal(p)
							}
						}
						recRecover(t, s, RecoverOptions{Salvage: true})
					}
					recSameFiles(t, recPartitionFiles(t, dir), wantFiles)
					if g := recGapRanges(t, dir); !slices.Equal(g, wantGaps) {
						t.Errorf("gaps %v, want %v", g, wantGaps)
					}
					if offs, _ := recReadAll(t, s, 0); !slices.Equal(offs, wantOffs) {
						t.Errorf("offsets %v", offs)
					}
					// Whatever the crash left in quarantine is whole and noted.
					qdata, notes := recQuarantine(t, s)
					for _, n := range notes {
						if int64(len(qdata[n.Data])) != n.Length {
							t.Errorf("quarantine %s holds %d bytes, note says %d", n.Data, len(qdata[n.Data]), n.Length)
						}
					}
					recNoChange(t, s, RecoverOptions{Salvage: true})
				})
			}
		})
	}
}

// Failures injected through the fault seam, one step at a time: the
// recover that fails reports it, and the next one ends where a clean run
// does.
func TestRecoverFaults(t *testing.T) {
	cases := []struct {
		name string
		arm  func(f *faultFS)
	}{
		{"rename of the rescued .log", func(f *faultFS) {
			f.renameHook = func(old, new string) error {
				if strings.HasSuffix(new, recName(15, ".log")) {
					return syscall.EIO
				}
				return nil
			}
		}},
		{"rename of a rebuilt index", func(f *faultFS) {
			f.renameHook = func(old, new string) error {
				if strings.HasSuffix(new, recName(0, ".timeindex")) {
					return syscall.EIO
				}
				return nil
			}
		}},
		{"sync of a rescued segment", func(f *faultFS) { f.failSync(recName(23, ".log.tmp"), syscall.EIO) }},
		{"sync of the cut segment", func(f *faultFS) { f.failSync(recName(10, ".log"), syscall.EIO) }},
		{"write of the gaps", func(f *faultFS) { f.failWrite(GapsFile+".tmp", 3, syscall.EIO) }},
		{"write of the quarantine copy", func(f *faultFS) { f.failWrite(".bin.tmp", 10, syscall.EIO) }},
		{"mkdir of the quarantine", func(f *faultFS) {
			f.mkdirErr = func(string) error { return syscall.EACCES }
		}},
	}
	fixture := func(t *testing.T, s *Store) {
		recDamageFixture(t, s)
		os.Remove(filepath.Join(s.PartitionDir("t", 0), recName(0, ".timeindex")))
	}
	ref := recStore(t, 1)
	fixture(t, ref)
	recRecover(t, ref, RecoverOptions{Salvage: true})
	wantFiles := recPartitionFiles(t, ref.PartitionDir("t", 0))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := recStore(t, 1)
			fixture(t, s)
			fault := newFaultFS()
			tc.arm(fault)
			fst := &Store{dir: s.dir, fs: fault}
			if _, err := fst.recoverOne("t", 0, RecoverOptions{Salvage: true}); err == nil {
				t.Fatalf("no error; events:\n%s", strings.Join(fault.Events(), "\n"))
			}
			recRecover(t, s, RecoverOptions{Salvage: true})
			recSameFiles(t, recPartitionFiles(t, s.PartitionDir("t", 0)), wantFiles)
			if g := recGapRanges(t, s.PartitionDir("t", 0)); !slices.Equal(g, []string{"14..15", "22..23"}) {
				t.Errorf("gaps %v", g)
			}
			recQuarantine(t, s)
			recNoChange(t, s, RecoverOptions{Salvage: true})
		})
	}
}

// The crash-safe order, as the fault seam records it: quarantine before
// any cut, new segments' files synced and renamed (the .log last) before
// the damaged segment is cut, the gap recorded before the cut.
func TestRecoverSplitOrder(t *testing.T) {
	s := recStore(t, 1)
	recDamageFixture(t, s)
	fault := newFaultFS()
	fst := &Store{dir: s.dir, fs: fault}
	if _, err := fst.recoverOne("t", 0, RecoverOptions{Salvage: true}); err != nil {
		t.Fatal(err)
	}
	ev := fault.Events()
	i := 0
	// next finds the next event, after the one found before.
	next := func(prefix, suffix string) {
		t.Helper()
		for ; i < len(ev); i++ {
			if strings.HasPrefix(ev[i], prefix) && strings.HasSuffix(ev[i], suffix) {
				return
			}
		}
		t.Fatalf("no %q ... %q event in order in\n%s", prefix, suffix, strings.Join(ev, "\n"))
	}
	dir := s.PartitionDir("t", 0)
	seg10 := filepath.Join(dir, recName(10, ".log"))
	seg15 := filepath.Join(dir, recName(15, ".log"))
	next("rename ", ".bin")                // the original saved
	next("sync "+seg15+".tmp", "")         // the new segment synced
	next("rename ", recName(15, ".index")) // its indexes in place
	next("rename "+seg15+".tmp", seg15)    // then its .log
	next("syncdir "+dir, "")               // the directory synced
	next("rename ", GapsFile)              // the gap recorded
	next("truncate "+seg10, "")            // only then the cut
	cut := i
	next("sync "+seg10, "") // made durable
	for _, e := range ev[:cut] {
		if strings.HasPrefix(e, "truncate ") || strings.HasPrefix(e, "remove ") {
			t.Errorf("%s before the cut was due", e)
		}
	}
}

func TestRecoverNoSpace(t *testing.T) {
	t.Run("tail: stops without cutting", func(t *testing.T) {
		s := recStore(t, 1)
		segs := recStandard(t, s)
		dir := s.PartitionDir("t", 0)
		torn := append(bytes.Clone(segs[20].log), 1, 2, 3)
		recWrite(t, filepath.Join(dir, recName(20, ".log")), torn)
		fault := newFaultFS()
		fault.failWrite(".bin.tmp", 1, syscall.ENOSPC)
		fs := &Store{dir: s.dir, fs: fault}
		_, err := fs.recoverOne("t", 0, RecoverOptions{})
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "nothing was cut") {
			t.Fatalf("error %v", err)
		}
		if got := recRead(t, filepath.Join(dir, recName(20, ".log"))); !bytes.Equal(got, torn) {
			t.Error("cut although the bytes could not be saved")
		}
		if data, _ := recQuarantine(t, s); len(data) > 0 {
			t.Errorf("quarantine holds %d copies", len(data))
		}
	})
	t.Run("split: hard link and replace", func(t *testing.T) {
		s := recStore(t, 1)
		segs := recStandard(t, s)
		dir := s.PartitionDir("t", 0)
		logPath := filepath.Join(dir, recName(10, ".log"))
		l := bytes.Clone(segs[10].log)
		l[segs[10].pos[6]+12] ^= 4
		recWrite(t, logPath, l)
		origInfo, _ := os.Stat(logPath)
		fault := newFaultFS()
		fault.failWrite(".bin.tmp", 100, syscall.ENOSPC)
		fs := &Store{dir: s.dir, fs: fault}
		rep, err := fs.recoverOne("t", 0, RecoverOptions{Salvage: true})
		if err != nil {
			t.Fatal(err)
		}
		c := rep.Segments[1].Cut
		if c == nil || !c.Linked || !c.Whole {
			t.Fatalf("cut %+v", c)
		}
		qi, err := os.Stat(c.Saved)
		if err != nil || !os.SameFile(qi, origInfo) {
			t.Errorf("quarantine copy is not the original file: %v", err)
		}
		if got := recRead(t, c.Saved); !bytes.Equal(got, l) {
			t.Error("quarantine copy changed")
		}
		if got := recRead(t, logPath); !bytes.Equal(got, l[:segs[10].pos[6]]) {
			t.Errorf("segment 10 is %d bytes, want %d", len(got), segs[10].pos[6])
		}
		_, notes := recQuarantine(t, s)
		if len(notes) != 1 || !strings.Contains(notes[0].Reason, "hard-linked") {
			t.Errorf("notes %+v", notes)
		}
		offs, _ := recReadAll(t, s, 0)
		if !slices.Equal(offs, recOffsets([2]uint64{0, 16}, [2]uint64{17, 25})) {
			t.Errorf("offsets %v", offs)
		}
		recNoChange(t, s, RecoverOptions{Salvage: true})
	})
	t.Run("split: no room for the rescued records", func(t *testing.T) {
		s := recStore(t, 1)
		segs := recStandard(t, s)
		dir := s.PartitionDir("t", 0)
		l := bytes.Clone(segs[10].log)
		l[segs[10].pos[6]+12] ^= 4
		recWrite(t, filepath.Join(dir, recName(10, ".log")), l)
		before := recPartitionFiles(t, dir)
		fault := newFaultFS()
		fault.failWrite(recName(17, ".log.tmp"), 10, syscall.ENOSPC)
		if _, err := (&Store{dir: s.dir, fs: fault}).recoverOne("t", 0, RecoverOptions{Salvage: true}); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("error %v", err)
		}
		recSameFiles(t, recPartitionFiles(t, dir), before)
		if data, notes := recQuarantine(t, s); len(data)+len(notes) > 0 {
			t.Errorf("the copy of a segment left whole stays in quarantine: %d files", len(data)+len(notes))
		}
	})
	t.Run("split: a link left by a crash is undone", func(t *testing.T) {
		s := recStore(t, 1)
		segs := recStandard(t, s)
		dir := s.PartitionDir("t", 0)
		logPath := filepath.Join(dir, recName(10, ".log"))
		l := bytes.Clone(segs[10].log)
		l[segs[10].pos[6]+12] ^= 4
		recWrite(t, logPath, l)
		// Killed right after linking and noting.
		qdir := filepath.Join(s.Dir(), QuarantineDir, "t", "0")
		os.MkdirAll(qdir, 0o755)
		if err := os.Link(logPath, filepath.Join(qdir, "seg.0-1.2.bin")); err != nil {
			t.Fatal(err)
		}
		recWrite(t, filepath.Join(qdir, "seg.0-1.2.json"), []byte(`{"data":"seg.0-1.2.bin"}`))
		rep := recRecover(t, s, RecoverOptions{Salvage: true})
		if len(rep.Leftovers) != 2 {
			t.Errorf("leftovers %+v", rep.Leftovers)
		}
		data, _ := recQuarantine(t, s)
		if len(data) != 1 {
			t.Fatalf("quarantine holds %d copies", len(data))
		}
		for _, b := range data {
			if !bytes.Equal(b, l) {
				t.Error("quarantine copy is not the original")
			}
		}
	})
}

func TestRecoverFinishesSplitWithoutSalvage(t *testing.T) {
	s := recStore(t, 1)
	segs := recStandard(t, s)
	dir := s.PartitionDir("t", 0)
	l := bytes.Clone(segs[10].log)
	l[segs[10].pos[4]+12] ^= 1
	recWrite(t, filepath.Join(dir, recName(10, ".log")), l)
	// The split fails once the rescued segment is in place, before the cut.
	fault := newFaultFS()
	fault.failWrite(GapsFile+".tmp", 0, syscall.EIO)
	if _, err := (&Store{dir: s.dir, fs: fault}).recoverOne("t", 0, RecoverOptions{Salvage: true}); err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Stat(filepath.Join(dir, recName(15, ".log"))); err != nil {
		t.Fatal(err)
	}
	if got := recRead(t, filepath.Join(dir, recName(10, ".log"))); !bytes.Equal(got, l) {
		t.Fatal("segment 10 changed")
	}
	// Without --salvage, the next recover finishes it.
	rep := recRecover(t, s, RecoverOptions{})
	if len(rep.Problems) > 0 || !rep.Segments[1].Finished || rep.Segments[1].Cut == nil {
		t.Fatalf("report %s", recDescribe(rep))
	}
	offs, _ := recReadAll(t, s, 0)
	if !slices.Equal(offs, recOffsets([2]uint64{0, 14}, [2]uint64{15, 25})) {
		t.Errorf("offsets %v", offs)
	}
	if g := recGapRanges(t, dir); !slices.Equal(g, []string{"14..15"}) {
		t.Errorf("gaps %v", g)
	}
	recNoChange(t, s, RecoverOptions{})
}

func TestQuarantineEntries(t *testing.T) {
	s := recStore(t, 2)
	segs := recStandard(t, s)
	dir := s.PartitionDir("t", 0)
	torn := append(bytes.Clone(segs[20].log), 9, 9, 9, 9)
	recWrite(t, filepath.Join(dir, recName(20, ".log")), torn)
	recWrite(t, filepath.Join(s.PartitionDir("t", 1), recName(0, ".log")), []byte{1})
	before := time.Now().UTC()
	if _, err := s.RecoverTopic("t", -1, RecoverOptions{}); err != nil {
		t.Fatal(err)
	}
	entries, err := s.QuarantineEntries("", -1)
	if err != nil || len(entries) != 2 {
		t.Fatalf("%+v, %v", entries, err)
	}
	e := entries[0]
	if e.Partition != 0 {
		e = entries[1]
	}
	if e.Topic != "t" || e.Source != filepath.Join(dir, recName(20, ".log")) || e.Pos != int64(len(segs[20].log)) || e.Length != 4 ||
		e.DataBytes != 4 || e.ExpectedOffset != 25 || e.Time.Before(before.Add(-time.Second)) || !strings.HasSuffix(e.Data, ".bin") {
		t.Errorf("entry %+v", e)
	}
	if only, _ := s.QuarantineEntries("t", 1); len(only) != 1 || only[0].Partition != 1 {
		t.Errorf("partition 1: %+v", only)
	}
	if err := s.PurgeQuarantine(e); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{e.Data, e.Note} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s still there", p)
		}
	}
	if left, _ := s.QuarantineEntries("", -1); len(left) != 1 {
		t.Errorf("after purge: %+v", left)
	}
}

// recGarbageAtBase damages segment base of the standard partition by
// putting bytes that hold no record in front of its first record: the
// valid records after the damage start at the segment's own base offset.
// With corruptAlso, record base+4 of it gets a flipped CRC byte as well.
// The segment's indexes are left as they were, pointing inside records.
func recGarbageAtBase(base uint64, garbage []byte, corruptAlso bool) func(*testing.T, *Store) {
	return func(t *testing.T, s *Store) {
		t.Helper()
		segs := recStandard(t, s)
		l := bytes.Clone(segs[base].log)
		if corruptAlso {
			l[segs[base].pos[4]+12] ^= 0x01
		}
		recWrite(t, filepath.Join(s.PartitionDir("t", 0), recName(base, ".log")), append(bytes.Clone(garbage), l...))
	}
}

// recTornFirst is the first 30 bytes of a record with the given offset:
// a torn write in front of the record that was written whole after it.
func recTornFirst(off uint64) []byte {
	return recEncode(nil, recRec{off: off, ts: 1, key: "torn", value: "a record torn by a crash"})[:30]
}

// recVerifyClean runs Verify on t/0 and fails on any problem.
func recVerifyClean(t *testing.T, s *Store) {
	t.Helper()
	p, err := s.OpenPartition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	var finds []Finding
	reps, err := Verify([]VerifyTarget{{Partition: p}}, VerifyOptions{Jobs: 1, Finding: func(f Finding) error {
		finds = append(finds, f)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || !reps[0].Complete || reps[0].Problems > 0 || reps[0].Notes > 0 {
		t.Fatalf("verify: %+v, findings %+v", reps, finds)
	}
}

// Garbage before the first record of a segment, the records after it
// starting at the segment's own base offset: salvage keeps them in the
// segment, whose files end up as a writer would have written them, the
// original goes whole to quarantine, and no gap is recorded (no offset was
// lost).
func TestRecoverSalvageGarbageAtBase(t *testing.T) {
	for _, tc := range []struct {
		name    string
		base    uint64
		garbage []byte
	}{
		{"closed segment, stray bytes", 10, []byte("\x00garbage")},
		{"closed segment, torn first record", 10, recTornFirst(10)},
		{"first segment, stray bytes", 0, []byte("\x00garbage")},
		{"active segment, stray bytes", 20, []byte("\x00garbage")},
		{"active segment, torn first record", 20, recTornFirst(20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := recStore(t, 1)
			want := recPartitionFiles(t, func() string {
				ref := recStore(t, 1)
				recStandard(t, ref)
				return ref.PartitionDir("t", 0)
			}())
			recGarbageAtBase(tc.base, tc.garbage, false)(t, s)
			dir := s.PartitionDir("t", 0)
			damaged := recRead(t, filepath.Join(dir, recName(tc.base, ".log")))

			// Without --salvage it is reported and left alone.
			rep := recRecover(t, s, RecoverOptions{})
			var ce *CorruptionError
			if len(rep.Problems) != 1 || !errors.As(rep.Problems[0], &ce) || ce.Pos != 0 || ce.Offset != int64(tc.base) {
				t.Fatalf("plain recover: problems %v", rep.Problems)
			}

			rep = recRecover(t, s, RecoverOptions{Salvage: true})
			if len(rep.Problems) > 0 || len(rep.Gaps) > 0 {
				t.Fatalf("salvage: problems %v, gaps %v", rep.Problems, rep.Gaps)
			}
			var sr *SegmentRecovery
			for i := range rep.Segments {
				if rep.Segments[i].Base == tc.base {
					sr = &rep.Segments[i]
				}
			}
			if len(rep.Segments) != 3 || sr == nil || sr.Cut == nil || !sr.Cut.Whole || len(sr.SplitInto) > 0 ||
				sr.Records != uint64(len(recRecs(tc.base, recNextBase2(tc.base)))) || sr.Index != IndexRebuilt {
				t.Fatalf("report %s", recDescribe(rep))
			}
			recSameFiles(t, recPartitionFiles(t, dir), want)
			if g := recGapRanges(t, dir); len(g) > 0 {
				t.Errorf("gaps %v", g)
			}
			if offs, _ := recReadAll(t, s, 0); !slices.Equal(offs, recOffsets([2]uint64{0, 25})) {
				t.Errorf("offsets %v", offs)
			}
			recVerifyClean(t, s)
			qdata, notes := recQuarantine(t, s)
			if len(notes) != 1 || !bytes.Equal(qdata[notes[0].Data], damaged) || notes[0].Pos != 0 {
				t.Errorf("quarantine: %d notes, want the whole damaged segment", len(notes))
			}
			recNoChange(t, s, RecoverOptions{Salvage: true})
		})
	}
}

// recNextBase2 is the base after base in the standard partition.
func recNextBase2(base uint64) uint64 {
	switch base {
	case 0:
		return 10
	case 10:
		return 20
	}
	return 25
}

// Garbage at the front and a corrupt record further on: the first run
// stays in the segment, the second becomes a segment of its own, and the
// one lost offset is a gap.
func TestRecoverSalvageGarbageAtBaseAndSplit(t *testing.T) {
	s := recStore(t, 1)
	segs := map[uint64]recFiles{}
	recGarbageAtBase(10, []byte("\x00garbage"), true)(t, s)
	dir := s.PartitionDir("t", 0)
	rep := recRecover(t, s, RecoverOptions{Salvage: true})
	if len(rep.Problems) > 0 {
		t.Fatal(rep.Problems)
	}
	segs[0] = recSeg(recRecs(0, 10), 1)
	segs[10] = recSeg(recRecs(10, 14), 1)
	segs[15] = recSeg(recRecs(15, 20), 1)
	segs[20] = recSeg(recRecs(20, 25), 1)
	want := map[string][]byte{}
	for base, f := range segs {
		want[recName(base, ".log")], want[recName(base, ".index")], want[recName(base, ".timeindex")] = f.log, f.idx, f.tidx
	}
	recSameFiles(t, recPartitionFiles(t, dir), want)
	if g := recGapRanges(t, dir); !slices.Equal(g, []string{"14..15"}) {
		t.Errorf("gaps %v", g)
	}
	if offs, _ := recReadAll(t, s, 0); !slices.Equal(offs, recOffsets([2]uint64{0, 14}, [2]uint64{15, 25})) {
		t.Errorf("offsets %v", offs)
	}
	recNoChange(t, s, RecoverOptions{Salvage: true})
}

// A salvage of a segment with garbage at its front, killed at every step:
// the next recover (with or without --salvage) finds the segment either
// whole or with its new .log in place, and ends where a clean run does.
func TestRecoverCrashGarbageAtBase(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fixture func(*testing.T, *Store)
		base    uint64
	}{
		{"closed", recGarbageAtBase(10, []byte("\x00garbage"), false), 10},
		{"active", recGarbageAtBase(20, recTornFirst(20), false), 20},
		{"closed, and a split", recGarbageAtBase(10, []byte("\x00garbage"), true), 10},
	} {
		for _, second := range []RecoverOptions{{Salvage: true}, {}} {
			fixture := tc.fixture
			t.Run(fmt.Sprintf("%s, second salvage %v", tc.name, second.Salvage), func(t *testing.T) {
				ref := recStore(t, 1)
				fixture(t, ref)
				damaged := recRead(t, filepath.Join(ref.PartitionDir("t", 0), recName(tc.base, ".log")))
				recRecover(t, ref, RecoverOptions{Salvage: true})
				wantFiles := recPartitionFiles(t, ref.PartitionDir("t", 0))
				wantGaps := recGapRanges(t, ref.PartitionDir("t", 0))
				wantOffs, _ := recReadAll(t, ref, 0)

				count := &recCrashFS{budget: 1 << 30}
				cs := recStore(t, 1)
				fixture(t, cs)
				if _, err := (&Store{dir: cs.dir, fs: count}).recoverOne("t", 0, RecoverOptions{Salvage: true}); err != nil {
					t.Fatal(err)
				}
				if count.ops < 8 {
					t.Fatalf("recover made only %d changes", count.ops)
				}
				for budget := range count.ops {
					t.Run(fmt.Sprint(budget), func(t *testing.T) {
						t.Parallel()
						s := recStore(t, 1)
						fixture(t, s)
						crash := &recCrashFS{budget: budget}
						_, err := (&Store{dir: s.dir, fs: crash}).recoverOne("t", 0, RecoverOptions{Salvage: true, LockWait: time.Second})
						if !crash.crashed() || err == nil {
							t.Fatalf("crashed %v, error %v", crash.crashed(), err)
						}
						dir := s.PartitionDir("t", 0)
						s.fs = &recCrashFS{budget: 1 << 30}
						rep, err := s.recoverOne("t", 0, second)
						if err != nil {
							t.Fatalf("second recover: %v", err)
						}
						if len(rep.Problems) > 0 {
							// Only a salvage not yet begun is left to do:
							// the segment is whole.
							var ce *CorruptionError
							for _, p := range rep.Problems {
								if second.Salvage || !errors.As(p, &ce) {
									t.Fatal(p)
								}
							}
							if got := recRead(t, filepath.Join(dir, recName(tc.base, ".log"))); !bytes.Equal(got, damaged) {
								t.Fatalf("problems %v, but the segment is not whole", rep.Problems)
							}
							recRecover(t, s, RecoverOptions{Salvage: true})
						}
						recSameFiles(t, recPartitionFiles(t, dir), wantFiles)
						if g := recGapRanges(t, dir); !slices.Equal(g, wantGaps) {
							t.Errorf("gaps %v, want %v", g, wantGaps)
						}
						if offs, _ := recReadAll(t, s, 0); !slices.Equal(offs, wantOffs) {
							t.Errorf("offsets %v", offs)
						}
						qdata, notes := recQuarantine(t, s)
						for _, n := range notes {
							if int64(len(qdata[n.Data])) != n.Length {
								t.Errorf("quarantine %s holds %d bytes, note says %d", n.Data, len(qdata[n.Data]), n.Length)
							}
						}
						recVerifyClean(t, s)
						recNoChange(t, s, RecoverOptions{Salvage: true})
					})
				}
			})
		}
	}
}

// The in-place rewrite through the fault seam: the rescued .log is synced
// and renamed over the original before the indexes; nothing is truncated.
// A failed rename of the .log takes the quarantine copy back; a failed
// rename of an index after it leaves a clean .log whose indexes any
// recover rebuilds.
func TestRecoverGarbageAtBaseFaults(t *testing.T) {
	fixture := recGarbageAtBase(10, []byte("\x00garbage"), false)
	ref := recStore(t, 1)
	fixture(t, ref)
	recRecover(t, ref, RecoverOptions{Salvage: true})
	wantFiles := recPartitionFiles(t, ref.PartitionDir("t", 0))

	t.Run("order", func(t *testing.T) {
		s := recStore(t, 1)
		fixture(t, s)
		fault := newFaultFS()
		if _, err := (&Store{dir: s.dir, fs: fault}).recoverOne("t", 0, RecoverOptions{Salvage: true}); err != nil {
			t.Fatal(err)
		}
		ev := fault.Events()
		dir := s.PartitionDir("t", 0)
		seg := filepath.Join(dir, recName(10, ".log"))
		idx := filepath.Join(dir, recName(10, ".index"))
		i := 0
		next := func(prefix, suffix string) {
			t.Helper()
			for ; i < len(ev); i++ {
				if strings.HasPrefix(ev[i], prefix) && strings.HasSuffix(ev[i], suffix) {
					return
				}
			}
			t.Fatalf("no %q ... %q event in order in\n%s", prefix, suffix, strings.Join(ev, "\n"))
		}
		next("rename ", ".bin")             // the original saved
		next("sync "+idx+".tmp", "")        // the new files synced
		next("sync "+seg+".tmp", "")        // (the .log last)
		next("rename "+seg+".tmp "+seg, "") // the .log replaced first
		next("rename "+idx+".tmp "+idx, "") // then the indexes
		next("syncdir "+dir, "")            // the directory synced
		for _, e := range ev {
			if strings.HasPrefix(e, "truncate ") || strings.HasPrefix(e, "remove "+dir) {
				t.Errorf("%s: the segment is replaced, not cut", e)
			}
		}
		recSameFiles(t, recPartitionFiles(t, dir), wantFiles)
	})
	for _, tc := range []struct {
		name        string
		suffix      string
		second      RecoverOptions
		quarantined int // quarantine copies left by the failed run
	}{
		{"rename of the .log", recName(10, ".log"), RecoverOptions{Salvage: true}, 0},
		{"rename of the .timeindex", recName(10, ".timeindex"), RecoverOptions{}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := recStore(t, 1)
			fixture(t, s)
			fault := newFaultFS()
			fault.renameHook = func(old, new string) error {
				if strings.HasSuffix(new, tc.suffix) {
					return syscall.EIO
				}
				return nil
			}
			if _, err := (&Store{dir: s.dir, fs: fault}).recoverOne("t", 0, RecoverOptions{Salvage: true}); !errors.Is(err, syscall.EIO) {
				t.Fatalf("error %v; events:\n%s", err, strings.Join(fault.Events(), "\n"))
			}
			if _, notes := recQuarantine(t, s); len(notes) != tc.quarantined {
				t.Errorf("%d quarantine copies after the failure, want %d", len(notes), tc.quarantined)
			}
			rep := recRecover(t, s, tc.second)
			if len(rep.Problems) > 0 {
				t.Fatal(rep.Problems)
			}
			dir := s.PartitionDir("t", 0)
			recSameFiles(t, recPartitionFiles(t, dir), wantFiles)
			if g := recGapRanges(t, dir); len(g) > 0 {
				t.Errorf("gaps %v", g)
			}
			if _, notes := recQuarantine(t, s); len(notes) != 1 {
				t.Errorf("%d quarantine copies, want 1", len(notes))
			}
			recVerifyClean(t, s)
			recNoChange(t, s, RecoverOptions{Salvage: true})
		})
	}
}

// An empty segment named below where the segment before ends (what a
// salvage that cut every record of it left, before it removed such a
// segment) is in the way of the next append: recover removes it, also
// without --salvage, as there is nothing in it to cut.
func TestRecoverEmptySegmentBelowFloor(t *testing.T) {
	for _, salvage := range []bool{false, true} {
		t.Run(fmt.Sprint("salvage=", salvage), func(t *testing.T) {
			s := recStore(t, 1)
			dir := s.PartitionDir("t", 0)
			recWriteSeg(t, dir, 0, recSeg(recRecs(0, 5), 1))
			recWriteSeg(t, dir, 3, recFiles{})
			if w, err := s.OpenWriter("t", 0, WriterOptions{}); err == nil {
				w.Close()
				t.Fatal("a writer opened on an active segment named below the next offset")
			}
			dry := recRecover(t, s, RecoverOptions{DryRun: true, Salvage: salvage})
			if len(dry.Segments) != 2 || !dry.Segments[1].Removed || dry.Segments[1].Cut != nil || dry.Next != 5 {
				t.Fatalf("dry run: %+v", dry)
			}
			rep := recRecover(t, s, RecoverOptions{Salvage: salvage})
			if len(rep.Problems) > 0 || !rep.Changed() || rep.Next != 5 {
				t.Fatalf("recover: %+v", rep)
			}
			for _, ext := range []string{".log", ".index", ".timeindex"} {
				if _, err := os.Stat(filepath.Join(dir, recName(3, ext))); err == nil {
					t.Errorf("%s is still there", recName(3, ext))
				}
			}
			recVerifyClean(t, s)
			w, err := s.OpenWriter("t", 0, WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if off, err := w.Append(0, nil, []byte("next")); err != nil || off != 5 {
				t.Errorf("append: offset %d, %v", off, err)
			}
			w.Close()
			recNoChange(t, s, RecoverOptions{Salvage: true})
		})
	}
}

// A split an interrupted recover began waits for a later segment whose
// records overlap its runs: plain recover, which leaves that segment's
// corruption in place, leaves the split unfinished too and says so; with
// --salvage both are repaired.
func TestRecoverFinishSplitWaitsForDamagedSegment(t *testing.T) {
	s := recStore(t, 1)
	dir := s.PartitionDir("t", 0)
	all, _, _ := recOverlapAfterDamage(t, s, 8, 3, 6)
	// The run 4..5 is a segment already, as an interrupted split left it.
	recWriteSeg(t, dir, 4, recSeg(all[4:6], 1))
	before := recSnapshot(t, s.Dir())
	rep := recRecover(t, s, RecoverOptions{})
	if rep.Changed() || len(rep.Problems) == 0 || !strings.Contains(fmt.Sprint(rep.Segments[0].Problem), "overlap segment") ||
		!strings.Contains(fmt.Sprint(rep.Segments[0].Problem), "recover --salvage repairs both") {
		t.Fatalf("plain recover: %+v", rep)
	}
	recSameSnapshot(t, before, recSnapshot(t, s.Dir()))

	rep = recRecover(t, s, RecoverOptions{Salvage: true})
	if len(rep.Problems) > 0 || !rep.Segments[0].Finished {
		t.Fatalf("salvage: %+v", rep)
	}
	offs, vals := recReadAll(t, s, 0)
	if want := recOffsets([2]uint64{0, 3}, [2]uint64{4, 6}, [2]uint64{7, 12}); !slices.Equal(offs, want) {
		t.Errorf("offsets %v, want %v", offs, want)
	}
	if vals[len(vals)-3] != all[9].value || vals[len(vals)-2] != "other" {
		t.Errorf("values %q", vals)
	}
	if g := recGapRanges(t, dir); !slices.Equal(g, []string{"3..4", "6..7"}) {
		t.Errorf("gaps %v", g)
	}
	recVerifyClean(t, s)
	recNoChange(t, s, RecoverOptions{Salvage: true})
}
