package logstore

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
	reps, err := Verify([]VerifyTarget{{Log: p}}, VerifyOptions{Jobs: 1, Finding: func(f Finding) error {
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
