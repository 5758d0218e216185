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
)

// The recovery tests' helpers, here and beside the tests that use them
// alone, carry a rec prefix: other test files of the package are written
// at the same time and must not clash.
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
