package logstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
)

// Helpers of this file carry a ret prefix: other test files of the package
// are written at the same time and must not clash. Fixtures come from
// recover_test.go's independent writer (recSeg), so timestamps are exactly
// the ones a test gives, in any order a foreign writer might write them.

// retT0 is 2023-11-14T22:13:20Z; retAt(n) is n seconds after it.
const retT0 = int64(1_700_000_000_000_000_000)

func retAt(n int) int64 { return retT0 + int64(n)*int64(time.Second) }

// retRecs makes records from offset base on, one per timestamp.
func retRecs(base uint64, tss []int64) []recRec {
	var recs []recRec
	for i, ts := range tss {
		o := base + uint64(i)
		recs = append(recs, recRec{off: o, ts: ts, key: "k", value: fmt.Sprintf("value %d", o)})
	}
	return recs
}

// retSegs writes partition 0 of t as consecutive segments, the i-th holding
// a record per timestamp of segs[i] (index interval 1); the last is the
// active one. It returns the bases and each segment's files.
func retSegs(t *testing.T, s *Store, segs ...[]int64) ([]uint64, map[uint64]recFiles) {
	t.Helper()
	dir := s.PartitionDir("t", 0)
	var bases []uint64
	files := map[uint64]recFiles{}
	next := uint64(0)
	for _, tss := range segs {
		files[next] = recSeg(retRecs(next, tss), 1)
		recWriteSeg(t, dir, next, files[next])
		bases = append(bases, next)
		next += uint64(len(tss))
	}
	return bases, files
}

// retSweep sweeps t/0 and fails the test on any error.
func retSweep(t *testing.T, s *Store, opts RetentionOptions) PartitionSweep {
	t.Helper()
	if opts.LockWait == 0 {
		opts.LockWait = time.Second
	}
	ts, err := s.RetentionSweep("t", 0, opts)
	if err != nil {
		t.Fatalf("RetentionSweep: %v", err)
	}
	if len(ts.Failed) > 0 || len(ts.Partitions) != 1 {
		t.Fatalf("RetentionSweep: failed %v, %d partitions", ts.Failed, len(ts.Partitions))
	}
	return ts.Partitions[0]
}

// retCutoff is RetentionOptions whose cutoff falls at cutoff, now being
// an hour later.
func retCutoff(cutoff int64) RetentionOptions {
	return RetentionOptions{Retention: time.Hour, Now: time.Unix(0, cutoff).Add(time.Hour)}
}

// retDecisions lists "base decision/reason" for each segment of a report.
func retDecisions(rep PartitionSweep) []string {
	var out []string
	for _, ss := range rep.Segments {
		out = append(out, fmt.Sprintf("%d %s/%s", ss.Base, ss.Decision, ss.Reason))
	}
	return out
}

func retWantDecisions(t *testing.T, rep PartitionSweep, want ...string) {
	t.Helper()
	if got := retDecisions(rep); !slices.Equal(got, want) {
		t.Errorf("decisions:\n  %q\nwant\n  %q", got, want)
	}
}

// retBases lists the segments left in t/0.
func retBases(t *testing.T, s *Store) []uint64 {
	t.Helper()
	segs, err := listSegments(s.PartitionDir("t", 0))
	if err != nil {
		t.Fatal(err)
	}
	var bases []uint64
	for _, seg := range segs {
		bases = append(bases, seg.base)
	}
	return bases
}

// retLeftFiles checks that t/0 holds exactly the files of the segments
// kept, byte for byte, and nothing else (no .deleted leftover).
func retLeftFiles(t *testing.T, s *Store, files map[uint64]recFiles, kept ...uint64) {
	t.Helper()
	want := map[string][]byte{}
	for _, b := range kept {
		want[recName(b, ".log")], want[recName(b, ".index")], want[recName(b, ".timeindex")] = files[b].log, files[b].idx, files[b].tidx
	}
	recSameFiles(t, recPartitionFiles(t, s.PartitionDir("t", 0)), want)
}

// Time: a segment goes when its newest timestamp is strictly older than
// the cutoff; Newest, Records and Bytes are the segment's own.
func TestRetentionTime(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cutoff int64
		want   []string
		kept   []uint64
	}{
		{"cutoff at the second segment's newest", retAt(12), []string{"0 deleted/time", "3 kept/newer", "6 kept/newer"}, []uint64{3, 6}},
		{"cutoff just after it", retAt(12) + 1, []string{"0 deleted/time", "3 deleted/time", "6 kept/newer"}, []uint64{6}},
		{"cutoff before everything", retAt(0), []string{"0 kept/newer", "3 kept/newer", "6 kept/newer"}, []uint64{0, 3, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := recStore(t, 1)
			_, files := retSegs(t, s, []int64{retAt(0), retAt(1), retAt(2)}, []int64{retAt(10), retAt(11), retAt(12)},
				[]int64{retAt(20), retAt(21), retAt(22)})
			rep := retSweep(t, s, retCutoff(tc.cutoff))
			retWantDecisions(t, rep, tc.want...)
			for i, ss := range rep.Segments {
				base := uint64(3 * i)
				if !ss.HasNewest || ss.Newest != retAt(10*i+2) || ss.Records != 3 || ss.Bytes != int64(len(files[base].log)) ||
					ss.Active != (i == 2) || ss.Future || ss.Damage != nil {
					t.Errorf("segment %d: %+v", base, ss)
				}
			}
			retLeftFiles(t, s, files, tc.kept...)
			if rep.Start != tc.kept[0] || rep.Next != 9 || rep.Rolled != "" {
				t.Errorf("start %d, next %d, rolled %q", rep.Start, rep.Next, rep.Rolled)
			}
			if offs, _ := recReadAll(t, s, 0); !slices.Equal(offs, recOffsets([2]uint64{tc.kept[0], 9})) {
				t.Errorf("offsets after the sweep: %v", offs)
			}
		})
	}
}

// Size, Kafka's rule, at its boundary: the oldest segment goes while the
// partition keeps at least retention-bytes without it; never the active one.
func TestRetentionSize(t *testing.T) {
	s0 := recStore(t, 1)
	_, files := retSegs(t, s0, []int64{retAt(0), retAt(1)}, []int64{retAt(2), retAt(3), retAt(4)}, []int64{retAt(5)})
	size := func(b uint64) int64 { return int64(len(files[b].log)) }
	total := size(0) + size(2) + size(5)
	for _, tc := range []struct {
		name  string
		bytes int64
		want  []string
		kept  []uint64
	}{
		{"exactly what stays without the first", total - size(0), []string{"0 deleted/size", "2 kept/under-size", "5 kept/after-kept"}, []uint64{2, 5}},
		{"one byte more", total - size(0) + 1, []string{"0 kept/under-size", "2 kept/after-kept", "5 kept/after-kept"}, []uint64{0, 2, 5}},
		{"exactly the active segment", size(5), []string{"0 deleted/size", "2 deleted/size", "5 kept/under-size"}, []uint64{5}},
		{"one byte", 1, []string{"0 deleted/size", "2 deleted/size", "5 kept/under-size"}, []uint64{5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := recStore(t, 1)
			retSegs(t, s, []int64{retAt(0), retAt(1)}, []int64{retAt(2), retAt(3), retAt(4)}, []int64{retAt(5)})
			rep := retSweep(t, s, RetentionOptions{RetentionBytes: tc.bytes})
			retWantDecisions(t, rep, tc.want...)
			retLeftFiles(t, s, files, tc.kept...)
			// Remaining is what the partition keeps without the segment
			// and those before it.
			left := total
			for _, ss := range rep.Segments {
				if ss.Reason == SweepAfterKept {
					if ss.SizeJudged {
						t.Errorf("segment %d after a kept one was judged by size", ss.Base)
					}
					break
				}
				if !ss.SizeJudged || ss.Remaining != left-ss.Bytes {
					t.Errorf("segment %d: remaining %d, want %d", ss.Base, ss.Remaining, left-ss.Bytes)
				}
				left -= ss.Bytes
			}
			if n, b := rep.Deleted(); n != len(rep.Segments)-len(tc.kept) || b != total-sumSizes(files, tc.kept) {
				t.Errorf("Deleted: %d segments, %d bytes", n, b)
			}
		})
	}
}

func sumSizes(files map[uint64]recFiles, bases []uint64) int64 {
	var n int64
	for _, b := range bases {
		n += int64(len(files[b].log))
	}
	return n
}

// Both rules: a segment goes if either selects it, and sweeping stops at
// the first that neither does.
func TestRetentionBothRules(t *testing.T) {
	s := recStore(t, 1)
	_, files := retSegs(t, s,
		[]int64{retAt(50), retAt(51)}, // young, but size takes it
		[]int64{retAt(1), retAt(2)},   // old: time takes it
		[]int64{retAt(60)},            // young, and size keeps it
		[]int64{retAt(3)},             // old, but after a kept one
		[]int64{retAt(70)})
	var total int64
	for _, f := range files {
		total += int64(len(f.log))
	}
	rep := retSweep(t, s, RetentionOptions{Retention: time.Hour, RetentionBytes: total - int64(len(files[0].log)),
		Now: time.Unix(0, retAt(40)).Add(time.Hour)})
	retWantDecisions(t, rep, "0 deleted/size", "2 deleted/time", "4 kept/newer", "5 kept/after-kept", "6 kept/newer")
	retLeftFiles(t, s, files, 4, 5, 6)
}

// Foreign writers' clocks step back: a segment whose last record is old
// but which holds a younger one is kept, and stops the sweep, though
// older segments follow it. The young record sits where neither the last
// record nor the time index shows it: only the walk finds it.
func TestRetentionPrefixNonMonotonic(t *testing.T) {
	s := recStore(t, 1)
	dir := s.PartitionDir("t", 0)
	old := recSeg(retRecs(0, []int64{retAt(1), retAt(2)}), 1)
	hidden := recSeg(retRecs(2, []int64{retAt(3), retAt(90), retAt(4)}), 2) // entries for offsets 2 and 4 only
	older := recSeg(retRecs(5, []int64{retAt(5), retAt(6)}), 1)
	active := recSeg(retRecs(7, []int64{retAt(95)}), 1)
	for base, f := range map[uint64]recFiles{0: old, 2: hidden, 5: older, 7: active} {
		recWriteSeg(t, dir, base, f)
	}
	rep := retSweep(t, s, retCutoff(retAt(50)))
	retWantDecisions(t, rep, "0 deleted/time", "2 kept/newer", "5 kept/after-kept", "7 kept/newer")
	if ss := rep.Segments[1]; ss.Newest != retAt(90) || ss.Records != 3 {
		t.Errorf("segment 2: newest %d records %d, want the walk's %d and 3", ss.Newest, ss.Records, retAt(90))
	}
	if got := retBases(t, s); !slices.Equal(got, []uint64{2, 5, 7}) {
		t.Errorf("segments left %v", got)
	}
}

// retDamaged writes t/0: segment 0 of four old records but one (offset 1)
// young; record 2's offset field is broken, so the chain breaks there
// while the CRCs (which do not cover offsets) still hold; then an active
// segment 4. With lieIndex, the time index entry of offset 1 gives a
// timestamp that is not its record's. It returns the position of record
// 2 and the segments' files.
func retDamaged(t *testing.T, s *Store, lieIndex bool) (int64, map[uint64]recFiles) {
	t.Helper()
	dir := s.PartitionDir("t", 0)
	seg := recSeg(retRecs(0, []int64{retAt(1), retAt(80), retAt(2), retAt(3)}), 1)
	binary.BigEndian.PutUint64(seg.log[seg.pos[2]:], 77)
	if lieIndex {
		binary.BigEndian.PutUint64(seg.tidx[16+8:], uint64(retAt(85)))
	}
	files := map[uint64]recFiles{0: seg, 4: recSeg(retRecs(4, []int64{retAt(90)}), 1)}
	recWriteSeg(t, dir, 0, seg)
	recWriteSeg(t, dir, 4, files[4])
	return seg.pos[2], files
}

// Damage hides a segment's newest timestamp: it is not deleted by time
// (reason and position given), unless its time index shows, checked, a
// young record; size may still take it.
func TestRetentionDamaged(t *testing.T) {
	t.Run("a checked time-index entry keeps it without a walk", func(t *testing.T) {
		s := recStore(t, 1)
		retDamaged(t, s, false)
		rep := retSweep(t, s, retCutoff(retAt(50)))
		retWantDecisions(t, rep, "0 kept/newer", "4 kept/newer")
		if ss := rep.Segments[0]; ss.Newest != retAt(80) || ss.Damage != nil {
			t.Errorf("segment 0: %+v", ss)
		}
	})
	t.Run("a lying entry does not", func(t *testing.T) {
		s := recStore(t, 1)
		pos, files := retDamaged(t, s, true)
		rep := retSweep(t, s, retCutoff(retAt(50)))
		retWantDecisions(t, rep, "0 kept/damaged", "4 kept/newer")
		d := rep.Segments[0].Damage
		if d == nil || d.Pos != pos || d.Offset != 2 || d.Path != filepath.Join(s.PartitionDir("t", 0), recName(0, ".log")) ||
			!errors.Is(d, format.ErrOffset) {
			t.Errorf("damage %+v, want offset mismatch at byte %d", d, pos)
		}
		retLeftFiles(t, s, files, 0, 4)
	})
	t.Run("damage hiding the newest keeps it", func(t *testing.T) {
		s := recStore(t, 1)
		dir := s.PartitionDir("t", 0)
		seg := recSeg(retRecs(0, []int64{retAt(1), retAt(2), retAt(80), retAt(3)}), 1)
		seg.log[seg.pos[2]+format.HeaderLen] ^= 0xff // record 2's key: its CRC fails
		recWriteSeg(t, dir, 0, seg)
		recWriteSeg(t, dir, 4, recSeg(retRecs(4, []int64{retAt(90)}), 1))
		rep := retSweep(t, s, retCutoff(retAt(50)))
		retWantDecisions(t, rep, "0 kept/damaged", "4 kept/newer")
		if d := rep.Segments[0].Damage; d == nil || d.Pos != seg.pos[2] || d.Offset != 2 || !errors.Is(d, format.ErrCRC) {
			t.Errorf("damage %+v, want a crc mismatch at byte %d", d, seg.pos[2])
		}
	})
	t.Run("size takes it", func(t *testing.T) {
		s := recStore(t, 1)
		_, files := retDamaged(t, s, true)
		rep := retSweep(t, s, RetentionOptions{Retention: time.Hour, RetentionBytes: int64(len(files[4].log)),
			Now: time.Unix(0, retAt(50)).Add(time.Hour)})
		retWantDecisions(t, rep, "0 deleted/size", "4 kept/newer")
		retLeftFiles(t, s, files, 4)
	})
	t.Run("corrupt active segment", func(t *testing.T) {
		s := recStore(t, 1)
		_, files := retSegs(t, s, []int64{retAt(1)}, []int64{retAt(2), retAt(3), retAt(4)})
		// Record 2's key flipped (a CRC mismatch, valid data after it),
		// and only record 1 indexed, so that finding the end meets it.
		log := bytes.Clone(files[1].log)
		log[files[1].pos[1]+format.HeaderLen] ^= 0xff
		recWrite(t, filepath.Join(s.PartitionDir("t", 0), recName(1, ".log")), log)
		recWrite(t, filepath.Join(s.PartitionDir("t", 0), recName(1, ".index")), files[1].idx[:16])
		rep := retSweep(t, s, retCutoff(retAt(50)))
		retWantDecisions(t, rep, "0 deleted/time", "1 kept/damaged")
		if d := rep.Segments[1].Damage; d == nil || d.Pos != files[1].pos[1] || !errors.Is(d, format.ErrCRC) {
			t.Errorf("damage %+v", d)
		}
		if rep.Next != 4 {
			t.Errorf("next %d, want 4 (past the damage, as readers see it)", rep.Next)
		}
	})
}

// A segment holding a timestamp after now never goes by time and says so,
// whether the cheap look or the walk finds it; size may still take it.
func TestRetentionFuture(t *testing.T) {
	now := time.Unix(0, retAt(100))
	opts := RetentionOptions{Retention: 10 * time.Second, Now: now}
	t.Run("last record", func(t *testing.T) {
		s := recStore(t, 1)
		retSegs(t, s, []int64{retAt(1)}, []int64{retAt(2), retAt(200)}, []int64{retAt(3)}, []int64{retAt(4)})
		rep := retSweep(t, s, opts)
		retWantDecisions(t, rep, "0 deleted/time", "1 future timestamps/future", "3 kept/after-kept", "4 kept/after-kept")
		if ss := rep.Segments[1]; !ss.Future || ss.Newest != retAt(200) {
			t.Errorf("segment 1: %+v", ss)
		}
	})
	t.Run("hidden in the middle", func(t *testing.T) {
		s := recStore(t, 1)
		dir := s.PartitionDir("t", 0)
		recWriteSeg(t, dir, 0, recSeg(retRecs(0, []int64{retAt(1), retAt(300), retAt(2)}), 2))
		recWriteSeg(t, dir, 3, recSeg(retRecs(3, []int64{retAt(5)}), 1))
		rep := retSweep(t, s, opts)
		retWantDecisions(t, rep, "0 future timestamps/future", "3 kept/after-kept")
		if ss := rep.Segments[0]; !ss.Future || ss.Newest != retAt(300) {
			t.Errorf("segment 0: %+v", ss)
		}
	})
	t.Run("after a kept segment", func(t *testing.T) {
		s := recStore(t, 1)
		retSegs(t, s, []int64{retAt(95)}, []int64{retAt(400)}, []int64{retAt(96)})
		rep := retSweep(t, s, opts)
		retWantDecisions(t, rep, "0 kept/newer", "1 future timestamps/future", "2 kept/newer")
	})
	t.Run("size takes it", func(t *testing.T) {
		s := recStore(t, 1)
		retSegs(t, s, []int64{retAt(200)}, []int64{retAt(95)})
		o := opts
		o.RetentionBytes = 1
		rep := retSweep(t, s, o)
		retWantDecisions(t, rep, "0 deleted/size", "1 kept/newer")
		if !rep.Segments[0].Future {
			t.Error("a future segment deleted by size is not marked as future")
		}
	})
}

// Empty closed segments go by time (nothing in them is newer); the empty
// active segment never goes.
func TestRetentionEmptySegments(t *testing.T) {
	s := recStore(t, 1)
	dir := s.PartitionDir("t", 0)
	// An empty closed segment sits before a gap (as salvage may leave).
	files := map[uint64]recFiles{0: recSeg(retRecs(0, []int64{retAt(1)}), 1), 1: {}, 5: recSeg(retRecs(5, []int64{retAt(2)}), 1), 6: {}}
	for base, f := range files {
		recWriteSeg(t, dir, base, f)
	}
	rep := retSweep(t, s, retCutoff(retAt(50)))
	retWantDecisions(t, rep, "0 deleted/time", "1 deleted/time", "5 deleted/time", "6 kept/active-empty")
	retLeftFiles(t, s, files, 6)
	if rep.Start != 6 || rep.Next != 6 || rep.Rolled != "" {
		t.Errorf("start %d next %d rolled %q", rep.Start, rep.Next, rep.Rolled)
	}
}

// A dry run decides the same and changes nothing: not a byte, not an
// inode, not a time; not even the torn tail of the active segment it
// would roll.
func TestRetentionDryRunChangesNothing(t *testing.T) {
	s := recStore(t, 1)
	_, files := retSegs(t, s, []int64{retAt(1), retAt(2)}, []int64{retAt(3)}, []int64{retAt(4), retAt(5)})
	active := filepath.Join(s.PartitionDir("t", 0), recName(3, ".log"))
	recWrite(t, active, append(bytes.Clone(files[3].log), recEncode(nil, recRec{off: 5, ts: 1, value: "torn"})[:20]...))
	before := recSnapshot(t, s.Dir())
	opts := retCutoff(retAt(50))
	opts.DryRun = true
	rep := retSweep(t, s, opts)
	recSameSnapshot(t, before, recSnapshot(t, s.Dir()))
	retWantDecisions(t, rep, "0 would delete/time", "2 would delete/time", "3 would delete/time")
	if !rep.DryRun || rep.Rolled != recName(5, ".log") || rep.Start != 5 || rep.Next != 5 {
		t.Errorf("dry run report: rolled %q start %d next %d", rep.Rolled, rep.Start, rep.Next)
	}
	if n, b := rep.Deleted(); n != 3 || b != int64(len(files[0].log)+len(files[2].log)+len(files[3].log)+20) {
		t.Errorf("would delete %d segments, %d bytes", n, b)
	}
}

// Everything expired: the active segment is rolled (its torn tail
// quarantined and cut, with a warning) and goes too; the next append gets
// the offset after the last record, and reads start there.
func TestRetentionEverythingExpired(t *testing.T) {
	s := recStore(t, 1)
	_, files := retSegs(t, s, []int64{retAt(1), retAt(2)}, []int64{retAt(3), retAt(4), retAt(5)})
	torn := recEncode(nil, recRec{off: 5, ts: retAt(6), value: "torn"})[:30]
	recWrite(t, filepath.Join(s.PartitionDir("t", 0), recName(2, ".log")), append(bytes.Clone(files[2].log), torn...))
	var warnings []string
	opts := retCutoff(retAt(50))
	opts.Warn = func(m string) { warnings = append(warnings, m) }
	rep := retSweep(t, s, opts)
	retWantDecisions(t, rep, "0 deleted/time", "2 deleted/time")
	if rep.Rolled != recName(5, ".log") || rep.Start != 5 || rep.Next != 5 {
		t.Errorf("rolled %q start %d next %d", rep.Rolled, rep.Start, rep.Next)
	}
	if ss := rep.Segments[1]; ss.Bytes != int64(len(files[2].log)) || ss.Records != 3 || ss.Newest != retAt(5) {
		t.Errorf("active segment after its tail was cut: %+v", ss)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "cut an incomplete record") || !strings.Contains(warnings[0], "30 bytes") {
		t.Errorf("warnings %q", warnings)
	}
	if data, _ := recQuarantine(t, s); len(data) != 1 {
		t.Errorf("quarantine holds %d pieces, want the torn tail", len(data))
	}
	recSameFiles(t, recPartitionFiles(t, s.PartitionDir("t", 0)),
		map[string][]byte{recName(5, ".log"): nil, recName(5, ".index"): nil, recName(5, ".timeindex"): nil})

	w, err := s.OpenWriter("t", 0, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if off, err := w.Append(retAt(7), nil, []byte("after")); err != nil || off != 5 {
		t.Errorf("append after the sweep: offset %d, %v; want 5", off, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if offs, vals := recReadAll(t, s, 0); !slices.Equal(offs, []uint64{5}) || vals[0] != "after" {
		t.Errorf("read %v %q", offs, vals)
	}
	// Nothing left to do.
	rep = retSweep(t, s, RetentionOptions{Retention: time.Hour, Now: time.Unix(0, retAt(8))})
	retWantDecisions(t, rep, "5 kept/newer")
}

// With a live writer, the expired closed segments go and the active one
// stays; the writer goes on at its next offset.
func TestRetentionLiveWriterKeepsActive(t *testing.T) {
	s := recStore(t, 1)
	_, files := retSegs(t, s, []int64{retAt(1)}, []int64{retAt(2), retAt(3)})
	w, err := s.OpenWriter("t", 0, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// A dry run takes no lock: /proc/locks tells it of the writer.
	if ltProcLocksNames(t, s.PartitionDir("t", 0), os.Getpid()) {
		opts := retCutoff(retAt(50))
		opts.DryRun = true
		dry := retSweep(t, s, opts)
		retWantDecisions(t, dry, "0 would delete/time", "1 kept/writer")
		if dry.WriterPid != os.Getpid() || dry.Rolled != "" {
			t.Errorf("dry run: writer pid %d, rolled %q", dry.WriterPid, dry.Rolled)
		}
	} else {
		t.Log("/proc/locks does not show the writer; dry run not checked")
	}
	start := time.Now()
	rep := retSweep(t, s, retCutoff(retAt(50)))
	if d := time.Since(start); d > DefaultLockWait {
		t.Errorf("the sweep waited %v for the writer lock", d)
	}
	retWantDecisions(t, rep, "0 deleted/time", "1 kept/writer")
	if rep.WriterPid != 0 && rep.WriterPid != os.Getpid() {
		t.Errorf("writer pid %d", rep.WriterPid)
	}
	retLeftFiles(t, s, files, 1)
	if off, err := w.Append(retAt(60), nil, []byte("more")); err != nil || off != 3 {
		t.Errorf("append: %d, %v", off, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if offs, _ := recReadAll(t, s, 0); !slices.Equal(offs, []uint64{1, 2, 3}) {
		t.Errorf("offsets %v", offs)
	}
}

// Each segment goes oldest first: its files renamed to .deleted (the .log
// first), the directory synced, then unlinked.
func TestRetentionDeleteOrder(t *testing.T) {
	fault := newFaultFS()
	s := recStore(t, 1)
	s.fs = fault
	retSegs(t, s, []int64{retAt(1)}, []int64{retAt(2)}, []int64{retAt(90)})
	retSweep(t, s, retCutoff(retAt(50)))
	dir := s.PartitionDir("t", 0)
	var want []string
	for _, base := range []uint64{0, 1} {
		for _, ext := range []string{".log", ".index", ".timeindex"} {
			p := filepath.Join(dir, recName(base, ext))
			want = append(want, fmt.Sprintf("rename %s %s.deleted", p, p))
		}
		want = append(want, "syncdir "+dir)
		for _, ext := range []string{".log", ".index", ".timeindex"} {
			want = append(want, fmt.Sprintf("remove %s.deleted", filepath.Join(dir, recName(base, ext))))
		}
	}
	if got := fault.Events(); !slices.Equal(got, want) {
		t.Errorf("changes:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// retNoUnlinkFS fails every unlink: the process "dies" between renaming a
// segment's files and unlinking them.
type retNoUnlinkFS struct{ osFS }

func (retNoUnlinkFS) Remove(name string) error {
	return &os.PathError{Op: "remove", Path: name, Err: syscall.EIO}
}

// A sweep stopped between rename and unlink: the segment is already gone
// for readers, and recover removes the .deleted files; offsets and reads
// are as a whole sweep leaves them.
func TestRetentionInterruptedThenRecover(t *testing.T) {
	s := recStore(t, 1)
	_, files := retSegs(t, s, []int64{retAt(1), retAt(2)}, []int64{retAt(3)}, []int64{retAt(90), retAt(91)})
	s.fs = retNoUnlinkFS{}
	ts, err := s.RetentionSweep("t", 0, retCutoff(retAt(50)))
	if err != nil || len(ts.Failed) != 1 {
		t.Fatalf("sweep with unlinks failing: %v, %+v", err, ts.Failed)
	}
	if msg := ts.Failed[0].Err.Error(); !strings.Contains(msg, "t/0") || !strings.Contains(msg, recName(0, ".log")) ||
		!strings.Contains(msg, "seglog recover") {
		t.Errorf("error %q does not name the partition, the segment and the way out", msg)
	}
	dir := s.PartitionDir("t", 0)
	left, _ := filepath.Glob(filepath.Join(dir, "*.deleted"))
	if len(left) != 3 {
		t.Fatalf(".deleted files %q, want segment 0's three", left)
	}
	if got := retBases(t, s); !slices.Equal(got, []uint64{2, 3}) {
		t.Errorf("segments listed %v", got)
	}
	if offs, _ := recReadAll(t, s, 0); !slices.Equal(offs, []uint64{2, 3, 4}) {
		t.Errorf("offsets before recover %v", offs)
	}

	s.fs = osFS{}
	rep := recRecover(t, s, RecoverOptions{})
	if len(rep.Leftovers) != 3 || rep.Next != 5 {
		t.Errorf("recover: leftovers %+v, next %d", rep.Leftovers, rep.Next)
	}
	for _, l := range rep.Leftovers {
		if l.What != "file of an interrupted retention delete" {
			t.Errorf("leftover %+v", l)
		}
	}
	// Segment 2 is intact, not yet swept: the next sweep takes it.
	retLeftFiles(t, s, files, 2, 3)
	retWantDecisions(t, retSweep(t, s, retCutoff(retAt(50))), "2 deleted/time", "3 kept/newer")
	retLeftFiles(t, s, files, 3)
	if offs, _ := recReadAll(t, s, 0); !slices.Equal(offs, []uint64{3, 4}) {
		t.Errorf("offsets %v", offs)
	}
}

// A sweep killed before any change it makes leaves a partition that reads
// as a suffix of the original with its next offset kept; recover, then
// another sweep, end where an uninterrupted sweep ends.
func TestRetentionCrashAtEveryStep(t *testing.T) {
	for _, tc := range []struct {
		name   string
		active int64 // the active segment's timestamp: old makes it rolled
	}{
		{"closed segments", retAt(90)},
		{"and the active one, rolled", retAt(30)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fixture := func(t *testing.T, s *Store) {
				retSegs(t, s, []int64{retAt(1), retAt(2)}, []int64{retAt(3)}, []int64{retAt(4), retAt(5)}, []int64{tc.active})
			}
			ref := recStore(t, 1)
			fixture(t, ref)
			retSweep(t, ref, retCutoff(retAt(50)))
			wantFiles := recPartitionFiles(t, ref.PartitionDir("t", 0))

			count := &recCrashFS{budget: 1 << 30}
			cs := recStore(t, 1)
			fixture(t, cs)
			cs.fs = count
			retSweep(t, cs, retCutoff(retAt(50)))
			if count.ops < 12 {
				t.Fatalf("the sweep made only %d changes", count.ops)
			}
			for budget := range count.ops {
				t.Run(fmt.Sprint(budget), func(t *testing.T) {
					t.Parallel()
					s := recStore(t, 1)
					fixture(t, s)
					crash := &recCrashFS{budget: budget}
					s.fs = crash
					ts, err := s.RetentionSweep("t", 0, retCutoff(retAt(50)))
					if !crash.crashed() || err == nil && len(ts.Failed) == 0 {
						t.Fatalf("crashed %v, error %v %v", crash.crashed(), err, ts.Failed)
					}
					s.fs = osFS{}
					offs, _ := recReadAll(t, s, 0)
					if len(offs) > 0 && !slices.Equal(offs, recOffsets([2]uint64{offs[0], 6})) {
						t.Errorf("after the crash the partition reads %v, not a suffix of 0..5", offs)
					}
					rep := recRecover(t, s, RecoverOptions{})
					if rep.Next != 6 {
						t.Errorf("next offset %d after the crash, want 6", rep.Next)
					}
					if left, _ := filepath.Glob(filepath.Join(s.PartitionDir("t", 0), "*.deleted")); len(left) > 0 {
						t.Errorf("recover left %q", left)
					}
					retSweep(t, s, retCutoff(retAt(50)))
					recSameFiles(t, recPartitionFiles(t, s.PartitionDir("t", 0)), wantFiles)
				})
			}
		})
	}
}

// A reader across a sweep: it goes on in the segment it holds open, then
// meets NoLongerAvailableError where a deleted segment was to come, never
// wrong records; a reader past the deleted segments reads on.
func TestRetentionReadAcrossSweep(t *testing.T) {
	s := recStore(t, 1)
	var segs [][]int64
	for i := range 4 {
		var tss []int64
		for j := range 5 {
			tss = append(tss, retAt(10*i+j))
		}
		segs = append(segs, tss)
	}
	_, files := retSegs(t, s, segs...)
	p, err := s.OpenPartition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	early, err := p.Read(0)
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()
	late, err := p.Read(12)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	var seen []uint64
	for range 2 {
		if !early.Next() {
			t.Fatal(early.Err())
		}
		seen = append(seen, early.Record().Offset)
	}
	retWantDecisions(t, retSweep(t, s, retCutoff(retAt(15))), "0 deleted/time", "5 deleted/time", "10 kept/newer", "15 kept/newer")
	retLeftFiles(t, s, files, 10, 15)

	for early.Next() {
		r := early.Record()
		if want := fmt.Sprintf("value %d", r.Offset); string(r.Value) != want {
			t.Errorf("offset %d reads %q, want %q", r.Offset, r.Value, want)
		}
		seen = append(seen, r.Offset)
	}
	var nla *NoLongerAvailableError
	if !errors.As(early.Err(), &nla) || nla.Offset != 5 || nla.Start != 10 || nla.Partition != "t/0" {
		t.Errorf("after %v: %v, want offset 5 no longer available, start 10", seen, early.Err())
	}
	if !slices.Equal(seen, recOffsets([2]uint64{0, 5})) {
		t.Errorf("the reader saw %v, want 0..4 from the segment it held open", seen)
	}

	seen = nil
	for late.Next() {
		seen = append(seen, late.Record().Offset)
	}
	if late.Err() != nil || !slices.Equal(seen, recOffsets([2]uint64{12, 20})) {
		t.Errorf("reader from 12: %v, %v", seen, late.Err())
	}
	if _, err := p.Read(3); !errors.As(err, &nla) || nla.Start != 10 {
		t.Errorf("Read(3) after the sweep: %v", err)
	}
}

// Rules come from the options, else the topic's settings, one by one; a
// topic with neither is refused before anything is locked.
func TestRetentionRules(t *testing.T) {
	s := recStore(t, 1)
	_, files := retSegs(t, s, []int64{retAt(1)}, []int64{retAt(60)}, []int64{retAt(70)})
	now := time.Unix(0, retAt(100))

	_, err := s.RetentionSweep("t", -1, RetentionOptions{Now: now})
	if !errors.Is(err, ErrNoRetention) || !strings.Contains(err.Error(), settingsFile) {
		t.Errorf("no rule: %v", err)
	}
	// A rule out of create's range is no rule to guess at.
	recWrite(t, filepath.Join(s.Dir(), "t", settingsFile), []byte(`{"retention": "-1ns", "retention_bytes": -1}`))
	if _, err := s.RetentionSweep("t", -1, RetentionOptions{Now: now}); !errors.Is(err, ErrInvalidSettings) || !strings.Contains(err.Error(), settingsFile) {
		t.Errorf("negative settings: %v", err)
	}

	if err := s.writeSettings(filepath.Join(s.Dir(), "t"), Settings{Retention: 90 * time.Second, RetentionBytes: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	ts, err := s.RetentionSweep("t", -1, RetentionOptions{Now: now, DryRun: true})
	if err != nil || ts.Retention != 90*time.Second || ts.RetentionBytes != 1<<40 || ts.Cutoff != retAt(10) || ts.Now != retAt(100) {
		t.Fatalf("stored rules: %+v, %v", ts, err)
	}
	retWantDecisions(t, ts.Partitions[0], "0 would delete/time", "1 kept/newer", "2 kept/newer")
	// The options are defaults: the topic's own setting wins, rule by
	// rule, unless Override, which replaces only the rules it sets.
	ts, err = s.RetentionSweep("t", -1, RetentionOptions{Now: now, Retention: 35 * time.Second, DryRun: true})
	if err != nil || ts.Retention != 90*time.Second || ts.RetentionSource != RuleFromTopic || ts.RetentionBytes != 1<<40 || ts.RetentionBytesSource != RuleFromTopic {
		t.Fatalf("stored rules, given time: %+v, %v", ts, err)
	}
	retWantDecisions(t, ts.Partitions[0], "0 would delete/time", "1 kept/newer", "2 kept/newer")
	ts, err = s.RetentionSweep("t", -1, RetentionOptions{Now: now, Retention: 35 * time.Second, Override: true, DryRun: true})
	if err != nil || ts.Retention != 35*time.Second || ts.RetentionSource != RuleFromOverride || ts.RetentionBytes != 1<<40 || ts.RetentionBytesSource != RuleFromTopic ||
		ts.Stored.Retention != 90*time.Second {
		t.Fatalf("stored rules, given time, overriding: %+v, %v", ts, err)
	}
	retWantDecisions(t, ts.Partitions[0], "0 would delete/time", "1 would delete/time", "2 kept/newer")
	if err := s.writeSettings(filepath.Join(s.Dir(), "t"), Settings{Retention: 90 * time.Second}); err != nil {
		t.Fatal(err)
	}
	ts, err = s.RetentionSweep("t", -1, RetentionOptions{Now: now, RetentionBytes: int64(len(files[2].log)), DryRun: true})
	if err != nil || ts.Retention != 90*time.Second || ts.RetentionSource != RuleFromTopic || ts.RetentionBytesSource != RuleFromDefault {
		t.Fatalf("stored time, given size: %+v, %v", ts, err)
	}
	retWantDecisions(t, ts.Partitions[0], "0 would delete/size", "1 would delete/size", "2 kept/newer")
	ts, err = s.RetentionSweep("t", -1, RetentionOptions{Now: now, RetentionBytes: int64(len(files[2].log)), Override: true, DryRun: true})
	if err != nil || ts.RetentionSource != RuleFromTopic || ts.RetentionBytesSource != RuleFromDefault {
		t.Fatalf("stored time, given size, overriding nothing: %+v, %v", ts, err)
	}

	if _, err := s.RetentionSweep("nope", -1, RetentionOptions{}); !errors.Is(err, ErrTopicNotFound) {
		t.Errorf("missing topic: %v", err)
	}
	if _, err := s.RetentionSweep("../t", -1, RetentionOptions{}); !errors.Is(err, format.ErrTopicName) {
		t.Errorf("bad name: %v", err)
	}
	if _, err := s.RetentionSweep("t", 1, RetentionOptions{}); !errors.Is(err, ErrPartitionNotFound) {
		t.Errorf("partition 1 of 1: %v", err)
	}
}

// A partition missing in the middle fails alone; the others are swept.
func TestRetentionMissingPartition(t *testing.T) {
	s := recStore(t, 3)
	retSegs(t, s, []int64{retAt(1)}, []int64{retAt(90)})
	if err := os.Remove(s.PartitionDir("t", 1)); err != nil {
		t.Fatal(err)
	}
	recWrite(t, filepath.Join(s.PartitionDir("t", 2), recName(0, ".log")), nil)
	ts, err := s.RetentionSweep("t", -1, retCutoff(retAt(50)))
	if err != nil || len(ts.Failed) != 1 || ts.Failed[0].Partition != 1 || !errors.Is(ts.Failed[0].Err, ErrPartitionNotFound) {
		t.Fatalf("%v, failed %+v", err, ts.Failed)
	}
	if len(ts.Partitions) != 2 || ts.Partitions[0].Partition != 0 || ts.Partitions[1].Partition != 2 {
		t.Fatalf("partitions swept: %+v", ts.Partitions)
	}
	retWantDecisions(t, ts.Partitions[0], "0 deleted/time", "1 kept/newer")
	retWantDecisions(t, ts.Partitions[1], "0 kept/active-empty")
}

// The topic's maintenance lock held (a copy, a recover): the sweep waits
// LockWait, then fails naming the topic, having changed nothing.
func TestRetentionMaintenanceLockHeld(t *testing.T) {
	s := recStore(t, 1)
	retSegs(t, s, []int64{retAt(1)}, []int64{retAt(90)})
	l, err := lockDir(filepath.Join(s.Dir(), "t"), "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	before := recSnapshot(t, s.Dir())
	const wait = 100 * time.Millisecond
	start := time.Now()
	opts := retCutoff(retAt(50))
	opts.LockWait = wait
	_, err = s.RetentionSweep("t", -1, opts)
	var le *LockedError
	if !errors.As(err, &le) || le.What != "topic t" || le.Pid != 0 && le.Pid != os.Getpid() {
		t.Errorf("sweep under a held maintenance lock: %v", err)
	}
	if d := time.Since(start); d < wait {
		t.Errorf("gave up after %v, before the %v wait", d, wait)
	}
	recSameSnapshot(t, before, recSnapshot(t, s.Dir()))
}
