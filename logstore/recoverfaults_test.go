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
