package logstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// A data directory may hold symbolic links: to another disk, or planted.
// Whatever they point at, commands that change files must never delete,
// truncate, rename or write anything outside the data directory through
// one. Each case below builds a data directory with some entry replaced
// by a link to outside/, runs every operation that changes files, and
// checks that outside/ is byte-for-byte what it was; an operation that
// refuses must say so with an ErrSymlink naming the link.

// symTS is the records' timestamp: 1970, so that every segment is past
// any retention.
const symTS = int64(1_000_000_000)

// symSegBytes makes segments of a handful of records.
const symSegBytes = 200

// symPartition writes partition 0 of topic t in s: several closed
// segments (one of them damaged inside, for salvage), an active one with
// a torn tail, a stale temporary, a group that has committed, and an
// entry in the quarantine (from topic q).
func symPartition(t *testing.T, s *Store) {
	t.Helper()
	if err := s.CreateTopic("t", 1, Settings{SegmentBytes: symSegBytes}); err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenWriter("t", 0, WriterOptions{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := w.Append(symTS, []byte(fmt.Sprintf("k%d", i%3)), []byte(fmt.Sprintf("value-%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	next := w.NextOffset()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dir := s.PartitionDir("t", 0)
	segs, err := listSegments(dir)
	if err != nil || len(segs) < 4 {
		t.Fatalf("setup: want at least 4 segments, got %d (%v)", len(segs), err)
	}
	// Damage the second record of the second segment: salvage splits it.
	log1 := segs[1].path(format.LogExt)
	b, err := os.ReadFile(log1)
	if err != nil {
		t.Fatal(err)
	}
	h, err := format.ParseHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	b[h.RecordLen()+format.HeaderLen] ^= 0xff
	if err := os.WriteFile(log1, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// A torn tail on the active segment: recover, the sweep's roll and a
	// writer all cut it, saving it to quarantine first.
	torn := format.AppendRecord(nil, &format.Record{Offset: next, Timestamp: symTS, Value: []byte("torn")})
	symAppendFile(t, segs[len(segs)-1].path(format.LogExt), torn[:format.HeaderLen+2])
	// A leftover temporary for recover to remove.
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.index.tmp"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Topic q's torn tail, cut by recover, gives the quarantine an entry.
	if err := s.CreateTopic("q", 1, Settings{}); err != nil {
		t.Fatal(err)
	}
	symAppendFile(t, filepath.Join(s.PartitionDir("q", 0), format.SegmentName(0, format.LogExt)), torn[:format.HeaderLen])
	if tr, err := s.RecoverTopic("q", -1, RecoverOptions{}); err != nil || len(tr.Failed) > 0 {
		t.Fatalf("setup: recover q: %v %+v", err, tr.Failed)
	}
	g, err := s.OpenGroup("g", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Commit("t", map[int]uint64{0: 3}); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

func symAppendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
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

// symMoveOut moves data/rel to outside/name and leaves a link to it.
func symMoveOut(t *testing.T, data, outside, rel, name string) string {
	t.Helper()
	from, to := filepath.Join(data, rel), filepath.Join(outside, name)
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(to, from); err != nil {
		t.Fatal(err)
	}
	return from
}

// symPlant makes data/rel a link to a new file outside/name.
func symPlant(t *testing.T, data, outside, rel, name string) string {
	t.Helper()
	to := filepath.Join(outside, name)
	if err := os.WriteFile(to, []byte("precious bytes that are not seglog's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	from := filepath.Join(data, rel)
	if err := os.MkdirAll(filepath.Dir(from), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(to, from); err != nil {
		t.Fatal(err)
	}
	return from
}

// symSnapshot is a tree as names, kinds and contents.
func symSnapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			snap[rel] = "dir " + fi.Mode().String()
		case d.Type()&fs.ModeSymlink != 0:
			to, err := os.Readlink(path)
			if err != nil {
				return err
			}
			snap[rel] = "link " + to
		default:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			snap[rel] = fmt.Sprintf("file %s %d %x", fi.Mode(), len(b), b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func symSameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: outside/%s changed:\n  before: %.120s\n  after:  %.120s", what, k, v, after[k])
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: outside/%s appeared: %.120s", what, k, v)
		}
	}
}

// symOp is an operation that changes files; it returns every error it
// met, the whole operation's and each partition's.
type symOp struct {
	name string
	run  func(t *testing.T, s *Store, src *Store) []error
}

var symOps = []symOp{
	{"retention-sweep", func(t *testing.T, s *Store, _ *Store) []error {
		ts, err := s.RetentionSweep("t", -1, RetentionOptions{Retention: time.Nanosecond, RetentionBytes: 1})
		errs := []error{err}
		for _, f := range ts.Failed {
			errs = append(errs, f.Err)
		}
		return errs
	}},
	{"recover", func(t *testing.T, s *Store, _ *Store) []error {
		tr, err := s.RecoverTopic("t", -1, RecoverOptions{})
		errs := []error{err}
		for _, f := range tr.Failed {
			errs = append(errs, f.Err)
		}
		return errs
	}},
	{"recover-salvage", func(t *testing.T, s *Store, _ *Store) []error {
		tr, err := s.RecoverTopic("t", -1, RecoverOptions{Salvage: true})
		errs := []error{err}
		for _, f := range tr.Failed {
			errs = append(errs, f.Err)
		}
		return errs
	}},
	{"append", func(t *testing.T, s *Store, _ *Store) []error {
		w, err := s.OpenWriter("t", 0, WriterOptions{Sync: SyncNever, SegmentBytes: symSegBytes})
		if err != nil {
			return []error{err}
		}
		for i := range 40 { // enough to roll twice
			if _, err := w.Append(time.Now().UnixNano(), nil, []byte(fmt.Sprintf("new-%02d", i))); err != nil {
				return []error{err, w.Close()}
			}
		}
		return []error{w.Close()}
	}},
	{"copy-partition-force", func(t *testing.T, s *Store, src *Store) []error {
		_, err := src.CopyPartition("t", 0, s, CopyOptions{ToPartition: -1, Force: true})
		return []error{err}
	}},
	{"import-partition-force", func(t *testing.T, s *Store, src *Store) []error {
		var stream bytes.Buffer
		if _, err := src.ExportPartition("t", 0, &stream, CopyOptions{ToPartition: -1}); err != nil {
			t.Fatal(err)
		}
		_, err := s.ImportPartition("t", 0, &stream, CopyOptions{Force: true})
		return []error{err}
	}},
	{"group-commit", func(t *testing.T, s *Store, _ *Store) []error {
		g, err := s.OpenGroup("g", 0)
		if err != nil {
			return []error{err}
		}
		return []error{g.Commit("t", map[int]uint64{0: 7}), g.Close()}
	}},
	{"quarantine-purge", func(t *testing.T, s *Store, _ *Store) []error {
		entries, err := s.QuarantineEntries("", -1)
		errs := []error{err}
		for _, e := range entries {
			errs = append(errs, s.PurgeQuarantine(e))
		}
		return errs
	}},
}

// symCases replace an entry of the data directory by a link out of it
// and return the link.
var symCases = []struct {
	name string
	make func(t *testing.T, data, outside string) string
	// refused lists the operations that must fail with an ErrSymlink (a
	// *SymlinkError, or a *NotRegularError for a segment file) naming the
	// link; the others must not touch what it points at either,
	// but may succeed (the link is not on their way, or is only renamed or
	// removed itself, never followed).
	refused []string
}{
	{"topic-dir", func(t *testing.T, data, outside string) string {
		return symMoveOut(t, data, outside, "t", "t")
	}, []string{"retention-sweep", "recover", "recover-salvage", "append", "copy-partition-force", "import-partition-force"}},
	{"partition-dir", func(t *testing.T, data, outside string) string {
		return symMoveOut(t, data, outside, "t/0", "0")
	}, []string{"copy-partition-force", "import-partition-force"}},
	{"closed-segment-log", func(t *testing.T, data, outside string) string {
		return symMoveOut(t, data, outside, "t/0/"+symSegName(t, data, 2, format.LogExt), "seg.log")
	}, []string{"retention-sweep", "recover", "recover-salvage", "append"}},
	{"closed-segment-timeindex", func(t *testing.T, data, outside string) string {
		return symMoveOut(t, data, outside, "t/0/"+symSegName(t, data, 2, format.TimeIndexExt), "seg.timeindex")
	}, []string{"retention-sweep", "recover", "recover-salvage", "append"}},
	{"active-segment-index", func(t *testing.T, data, outside string) string {
		return symMoveOut(t, data, outside, "t/0/"+symSegName(t, data, -1, format.IndexExt), "active.index")
	}, []string{"retention-sweep", "recover", "recover-salvage", "append"}},
	{"next-segment-index", func(t *testing.T, data, outside string) string {
		// The name the next roll gives its index: created with O_TRUNC,
		// it must not truncate what a planted link points at.
		return symPlant(t, data, outside, "t/0/"+format.SegmentName(symNext(t, data), format.IndexExt), "precious")
	}, []string{"retention-sweep", "recover", "recover-salvage", "append"}},
	{"temporary-file", func(t *testing.T, data, outside string) string {
		p := filepath.Join(data, "t/0/00000000000000000000.index.tmp")
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		// Rebuilding the damaged index goes through this temporary.
		if err := os.Truncate(filepath.Join(data, "t/0/00000000000000000000.index"), 7); err != nil {
			t.Fatal(err)
		}
		return symPlant(t, data, outside, "t/0/00000000000000000000.index.tmp", "precious")
	}, []string{"recover", "recover-salvage"}},
	{"deleted-leftover", func(t *testing.T, data, outside string) string {
		return symPlant(t, data, outside, "t/0/00000000000000000000.log.deleted", "precious")
	}, nil},
	{"quarantine-dir", func(t *testing.T, data, outside string) string {
		return symMoveOut(t, data, outside, QuarantineDir, "quarantine")
	}, []string{"retention-sweep", "recover", "recover-salvage", "append", "quarantine-purge"}},
	{"quarantine-partition-dir", func(t *testing.T, data, outside string) string {
		if err := os.MkdirAll(filepath.Join(outside, "q0"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(data, QuarantineDir, "t"), 0o755); err != nil {
			t.Fatal(err)
		}
		l := filepath.Join(data, QuarantineDir, "t", "0")
		if err := os.Symlink(filepath.Join(outside, "q0"), l); err != nil {
			t.Fatal(err)
		}
		return l
	}, []string{"retention-sweep", "recover", "recover-salvage", "append"}},
	{"groups-dir", func(t *testing.T, data, outside string) string {
		return symMoveOut(t, data, outside, groupsDir, "groups")
	}, []string{"group-commit"}},
	{"group-dir", func(t *testing.T, data, outside string) string {
		return symMoveOut(t, data, outside, filepath.Join(groupsDir, "g"), "g")
	}, []string{"group-commit"}},
	{"group-file", func(t *testing.T, data, outside string) string {
		return symMoveOut(t, data, outside, filepath.Join(groupsDir, "g", "t.json"), "t.json")
	}, []string{"group-commit"}},
}

// symSegName is the name of segment i of t/0 (-1: the active one).
func symSegName(t *testing.T, data string, i int, ext string) string {
	t.Helper()
	segs, err := listSegments(filepath.Join(data, "t", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if i < 0 {
		i += len(segs)
	}
	return format.SegmentName(segs[i].base, ext)
}

// symNext is t/0's next offset.
func symNext(t *testing.T, data string) uint64 {
	t.Helper()
	p, err := OpenPartitionDir(filepath.Join(data, "t", "0"), "t/0")
	if err != nil {
		t.Fatal(err)
	}
	defer fiClose(p)
	_, next, err := p.Bounds()
	if err != nil {
		t.Fatal(err)
	}
	return next
}

func TestSymlinksNeverFollowedOut(t *testing.T) {
	srcStore := Open(filepath.Join(t.TempDir(), "src"))
	symPartition(t, srcStore)
	// The source of copies and imports must be whole.
	if _, err := srcStore.RecoverTopic("t", -1, RecoverOptions{Salvage: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range symCases {
		for _, op := range symOps {
			t.Run(c.name+"/"+op.name, func(t *testing.T) {
				t.Parallel()
				root := t.TempDir()
				data, outside := filepath.Join(root, "data"), filepath.Join(root, "outside")
				if err := os.Mkdir(outside, 0o755); err != nil {
					t.Fatal(err)
				}
				s := Open(data)
				symPartition(t, s)
				link := c.make(t, data, outside)
				linkTo, err := os.Readlink(link)
				if err != nil {
					t.Fatal(err)
				}
				before := symSnapshot(t, outside)
				errs := op.run(t, s, srcStore)
				symSameTree(t, op.name, before, symSnapshot(t, outside))

				var refusal error
				for _, err := range errs {
					if errors.Is(err, fsx.ErrSymlink) {
						refusal = err
						break
					}
				}
				want := false
				for _, r := range c.refused {
					want = want || r == op.name
				}
				switch {
				case want && refusal == nil:
					t.Errorf("%s: want a refusal naming the link %s, got errors %v", op.name, link, errs)
				case want && !strings.Contains(refusal.Error(), link):
					t.Errorf("%s: the refusal %q does not name the link %s", op.name, refusal, link)
				case !want && refusal != nil:
					t.Errorf("%s: want no refusal (the link is not in its way), got %v", op.name, refusal)
				}
				// A directory link is the user's: it stays, pointing where
				// it pointed.
				if fi, err := os.Stat(link); err == nil && fi.IsDir() {
					if to, err := os.Readlink(link); err != nil || to != linkTo {
						t.Errorf("%s: the link %s now reads %q (%v), want %q", op.name, link, to, err, linkTo)
					}
				}
			})
		}
	}
}

// A link below the data directory that stays inside it is refused too:
// one rule, whatever the link points at, is simpler to trust.
func TestSymlinkInsideRefused(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	s := Open(data)
	symPartition(t, s)
	if err := os.Rename(filepath.Join(data, "t"), filepath.Join(data, "real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(data, "t")); err != nil {
		t.Fatal(err)
	}
	before := symSnapshot(t, filepath.Join(data, "real"))
	ts, err := s.RetentionSweep("t", -1, RetentionOptions{RetentionBytes: 1})
	if err == nil && len(ts.Failed) > 0 {
		err = ts.Failed[0].Err
	}
	var refusal *fsx.SymlinkError
	if !errors.As(err, &refusal) {
		t.Fatalf("sweep through data/t -> real: want a *fsx.SymlinkError, got %v", err)
	}
	symSameTree(t, "retention-sweep", before, symSnapshot(t, filepath.Join(data, "real")))
}

// The data directory itself may be a link (to another disk): that is the
// user's choice of where the data lives, not a way out of it.
func TestDataDirSymlinkAllowed(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	s := Open(real)
	symPartition(t, s)
	link := filepath.Join(root, "data")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	s = Open(link)
	tr, err := s.RecoverTopic("t", -1, RecoverOptions{Salvage: true})
	if err != nil || len(tr.Failed) > 0 {
		t.Fatalf("recover through a linked data directory: %v %+v", err, tr.Failed)
	}
	ts, err := s.RetentionSweep("t", -1, RetentionOptions{Retention: time.Nanosecond})
	if err != nil || len(ts.Failed) > 0 {
		t.Fatalf("sweep through a linked data directory: %v %+v", err, ts.Failed)
	}
	if n, _ := ts.Partitions[0].Deleted(); n == 0 {
		t.Fatalf("sweep through a linked data directory deleted nothing: %+v", ts.Partitions[0].Segments)
	}
}
