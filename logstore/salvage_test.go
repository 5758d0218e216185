package logstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seglog/seglog/format"
)

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
