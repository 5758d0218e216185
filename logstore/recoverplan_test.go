package logstore

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

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
