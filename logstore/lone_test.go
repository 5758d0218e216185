package logstore_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seglog/seglog/logstore"
)

// loneOffsets reads p from its start, going past damage, and returns the
// offsets read and the first corruption met.
func loneOffsets(t *testing.T, p *logstore.Partition, from uint64) ([]uint64, error) {
	t.Helper()
	it, err := p.Read(from)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var offs []uint64
	var first error
	for {
		for it.Next() {
			offs = append(offs, it.Record().Offset)
		}
		var ce *logstore.CorruptionError
		if !errors.As(it.Err(), &ce) {
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
			return offs, first
		}
		if first == nil {
			first = ce
		}
		if !it.SkipCorrupt() {
			return offs, first
		}
	}
}

// A closed segment whose last record was torn, opened as a lone file, is
// the active segment of a partition of its own: its tail is incomplete,
// not corrupt, and every view of it agrees. Nothing is written.
func TestOpenSegmentFileIsActive(t *testing.T) {
	dir := vfTwoSegments(t)
	log := vfPath(dir, 0, ".log")
	swTruncate(t, log, vfPos(9)+20)
	before := vfSnapshot(t, dir)

	// In its partition, the torn record is corrupt: the segment is closed.
	r := vfVerify(t, dir, 1)
	if len(r.lines) == 0 || !strings.HasPrefix(r.lines[0], "problem corrupt-record "+seg0+".log 342 9") {
		t.Fatalf("in its partition: %q, want a corrupt record at byte 342", r.lines)
	}

	p, err := logstore.OpenSegmentFile(log, log)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if start, next, err := p.Bounds(); err != nil || start != 0 || next != 9 {
		t.Errorf("Bounds: %d, %d, %v; want 0, 9", start, next, err)
	}
	offs, ce := loneOffsets(t, p, 0)
	if want := []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(offs, want) || ce != nil {
		t.Errorf("read %v (%v), want %v and no corruption", offs, ce, want)
	}
	if offs, _ := loneOffsets(t, p, 7); !slices.Equal(offs, []uint64{7, 8}) {
		t.Errorf("read from 7: %v", offs)
	}
	st, err := p.Stats()
	if err != nil || st.Start != 0 || st.Next != 9 || st.Records != 9 || st.Segments != 1 || st.Bytes != vfPos(9)+20 {
		t.Errorf("Stats: %+v, %v", st, err)
	}
	var lines []string
	rep, err := logstore.VerifyOne(p, logstore.VerifyOptions{Finding: func(f logstore.Finding) error { lines = append(lines, vfLine(f)); return nil }})
	want := []string{
		"problem incomplete-tail " + seg0 + ".log 342 9",
		"note index-stale " + seg0 + ".index 144 9",
		"note index-stale " + seg0 + ".timeindex 144 9",
	}
	if err != nil || rep.Records != 9 || rep.Segments != 1 || !slices.Equal(lines, want) {
		t.Errorf("Verify: %v, %+v, findings %q; want %q", err, rep, lines, want)
	}
	segs := p.IndexSegments()
	if len(segs) != 1 || !segs[0].Active || segs[0].Base != 0 || segs[0].Index != vfPath(dir, 0, ".index") {
		t.Fatalf("IndexSegments: %+v", segs)
	}
	for _, kind := range []logstore.IndexKind{logstore.OffsetIndex, logstore.TimeIndex} {
		d, err := segs[0].OpenDump(kind, true)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := d.Run(func(logstore.IndexEntryInfo) error { return nil })
		d.Close()
		if err != nil || sum.Wrong() != 0 || sum.Count(logstore.VerdictPastEnd) != 1 || sum.Count(logstore.VerdictOK) != 9 {
			t.Errorf("%s dump: %v, %d wrong, verdicts %v", kind, err, sum.Wrong(), sum.Verdicts())
		}
	}
	vfSameSnapshot(t, before, vfSnapshot(t, dir))
}

// A lone file not named after its base offset takes its first record's
// offset, with its index files beside it under the same name; when that
// record is damaged, valid data is found wherever it resumes.
func TestOpenSegmentFileMisnamed(t *testing.T) {
	src := filepath.Join(t.TempDir(), "t", "0")
	swWritePartition(t, src, vfSeg(100, 105, 1))
	dir := t.TempDir()
	for _, ext := range []string{".log", ".index", ".timeindex"} {
		b, err := os.ReadFile(vfPath(src, 100, ext))
		if err != nil {
			t.Fatal(err)
		}
		swWriteFile(t, filepath.Join(dir, "rescued"+ext), b)
	}
	log := filepath.Join(dir, "rescued.log")
	before := vfSnapshot(t, dir)
	p, err := logstore.OpenSegmentFile(log, "rescued")
	if err != nil {
		t.Fatal(err)
	}
	if start, next, err := p.Bounds(); err != nil || start != 100 || next != 105 {
		t.Errorf("Bounds: %d, %d, %v; want 100, 105", start, next, err)
	}
	if offs, ce := loneOffsets(t, p, 102); !slices.Equal(offs, []uint64{102, 103, 104}) || ce != nil {
		t.Errorf("read from 102: %v, %v", offs, ce)
	}
	rep, err := logstore.VerifyOne(p, logstore.VerifyOptions{})
	if err != nil || rep.Problems != 0 || rep.Notes != 0 || rep.Records != 5 {
		t.Errorf("Verify: %v, %+v", err, rep)
	}
	if segs := p.IndexSegments(); len(segs) != 1 || segs[0].Base != 100 || segs[0].TimeIndex != filepath.Join(dir, "rescued.timeindex") {
		t.Errorf("IndexSegments: %+v", segs)
	}
	p.Close()
	vfSameSnapshot(t, before, vfSnapshot(t, dir))

	swFlip(t, log, vfPos(0)+30, 0x01)
	p, err = logstore.OpenSegmentFile(log, "rescued")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	offs, ce := loneOffsets(t, p, 0)
	var c *logstore.CorruptionError
	if !slices.Equal(offs, []uint64{101, 102, 103, 104}) || !errors.As(ce, &c) || c.Pos != 0 {
		t.Errorf("read past a damaged first record: %v, %v; want 101..104 after damage at byte 0", offs, ce)
	}
}

// A lone segment file that is not a file, or not a .log, is an error
// naming it.
func TestOpenSegmentFileRefused(t *testing.T) {
	dir := t.TempDir()
	notLog := filepath.Join(dir, "x.bin")
	swWriteFile(t, notLog, nil)
	for _, c := range []struct{ path, want string }{
		{dir + "/missing.log", "partition not found"},
		{notLog, notLog + " is not a segment file: its name must end in .log"},
		{dir, dir + " is not a regular file (a directory)"},
	} {
		if p, err := logstore.OpenSegmentFile(c.path, c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			if p != nil {
				p.Close()
			}
			t.Errorf("OpenSegmentFile(%s): %v, want %q", c.path, err, c.want)
		}
	}
}

// A segment .log that is a symbolic link is an error naming it for every
// listing, readers' and writers': skipped, its offsets would pass for a
// gap and append would use them again.
func TestSegmentLogSymlinkRefused(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "t", "0")
	swWritePartition(t, dir, vfSeg(0, 5, 1), vfSeg(5, 10, 1))
	log := vfPath(dir, 5, ".log")
	aside := filepath.Join(t.TempDir(), "seg.log")
	if err := os.Rename(log, aside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(aside, log); err != nil {
		t.Fatal(err)
	}
	before := vfSnapshot(t, data)
	want := "segment " + log + " is not a regular file (a symbolic link to " + aside + ")"
	_, err := logstore.OpenPartitionDir(dir, "t/0")
	var odd *logstore.NotRegularError
	if !errors.As(err, &odd) || odd.Mode.Type() != fs.ModeSymlink || !strings.Contains(err.Error(), want) {
		t.Errorf("OpenPartitionDir: %v, want %q", err, want)
	}
	s := logstore.Open(data)
	w, err := s.OpenWriter("t", 0, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err == nil {
		w.Close()
	}
	if !errors.As(err, &odd) || odd.Mode.Type() != fs.ModeSymlink || !strings.Contains(err.Error(), want) {
		t.Errorf("OpenWriter: %v, want %q", err, want)
	}
	vfSameSnapshot(t, before, vfSnapshot(t, data))
}

// An index that is a symbolic link or a directory is a hint readers go on
// without, naming it; Verify reports it as a problem; writers refuse it.
func TestIndexNotRegular(t *testing.T) {
	for _, kind := range []string{"link", "dir"} {
		t.Run(kind, func(t *testing.T) {
			data := t.TempDir()
			dir := filepath.Join(data, "t", "0")
			swWritePartition(t, dir, vfSeg(0, 5, 1), vfSeg(5, 10, 1))
			idx := vfPath(dir, 5, ".index")
			if kind == "link" {
				aside := filepath.Join(t.TempDir(), "seg.index")
				if err := os.Rename(idx, aside); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(aside, idx); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.Remove(idx); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(idx, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			before := vfSnapshot(t, data)
			p, err := logstore.OpenPartitionDir(dir, "t/0")
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if odd := p.IgnoredIndexes(); len(odd) != 1 || odd[0].Path != idx {
				t.Errorf("IgnoredIndexes: %v, want %s", odd, idx)
			}
			if offs, ce := loneOffsets(t, p, 7); !slices.Equal(offs, []uint64{7, 8, 9}) || ce != nil {
				t.Errorf("read from 7: %v, %v", offs, ce)
			}
			r := vfVerify(t, dir, 1)
			vfCheck(t, r, "problem not-regular-file "+seg5+".index -1 -1 | not a regular file (a ")
			_, err = logstore.Open(data).OpenWriter("t", 0, logstore.WriterOptions{Sync: logstore.SyncNever})
			var odd *logstore.NotRegularError
			if !errors.As(err, &odd) || odd.Path != idx || !strings.Contains(err.Error(), "index file "+idx+" is not a regular file") {
				t.Errorf("OpenWriter: %v, want a refusal naming %s", err, idx)
			}
			if kind == "link" && (odd == nil || odd.Mode.Type() != fs.ModeSymlink) {
				t.Errorf("OpenWriter: %v is not about a symbolic link", err)
			}
			vfSameSnapshot(t, before, vfSnapshot(t, data))
		})
	}
}

const seg5 = "00000000000000000005"

// What a listing finds not regular is reported in name order, whatever
// order the file system lists the directory in: the lowest such .log is
// the error, and the indexes read without are sorted.
func TestNotRegularInNameOrder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t", "0")
	var segs []swSegment
	for b := uint64(0); b < 40; b += 5 {
		segs = append(segs, vfSeg(b, b+5, 1))
	}
	swWritePartition(t, dir, segs...)
	var want []string
	for _, b := range []uint64{35, 5, 20, 10, 30, 25} {
		idx := vfPath(dir, b, ".index")
		if err := os.Remove(idx); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(idx, 0o755); err != nil {
			t.Fatal(err)
		}
		want = append(want, idx)
	}
	slices.Sort(want)
	p, err := logstore.OpenPartitionDir(dir, "t/0")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, odd := range p.IgnoredIndexes() {
		got = append(got, odd.Path)
	}
	p.Close()
	if !slices.Equal(got, want) {
		t.Errorf("IgnoredIndexes: %v, want %v", got, want)
	}

	for _, b := range []uint64{30, 10, 25, 15} {
		log := vfPath(dir, b, ".log")
		if err := os.Remove(log); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(log, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, err = logstore.OpenPartitionDir(dir, "t/0")
	var odd *logstore.NotRegularError
	if !errors.As(err, &odd) || odd.Path != vfPath(dir, 10, ".log") {
		t.Errorf("OpenPartitionDir: %v, want the refusal of %s", err, vfPath(dir, 10, ".log"))
	}
}
