package logstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// A power cut keeps what was made durable, and of the rest anything or
// nothing. plFS passes every change on to the disk (the engine reads
// through os directly) and keeps beside it a model of what a cut would
// leave:
//
//   - a file's bytes as of its last Sync; of what changed after it, nothing,
//     any prefix, or that prefix with some of its pages never written
//     (zeros);
//   - a directory's entries as of its last SyncDir: an unsynced create
//     disappears, an unsynced rename reverts, an unsynced remove comes
//     back, and a file whose entry is not durable is lost even if its data
//     was synced. A variant lets each directory keep either its synced or
//     its current entries, as a journal may have committed them.
//
// At every sync point (before and after each Sync and SyncDir) the test
// writes such a crash image to a fresh directory and runs the real engine
// on it: recover, verify, read, reopen for writing. Every record the
// writer acknowledged (Writer.Durable, what `append --report` prints)
// before the cut must be there, byte for byte, and nothing else may be
// wrong.

// plNode is a file or a directory of the model.
type plNode struct {
	dir bool
	// A file: its bytes now and as of its last Sync; low is the lowest
	// byte changed since (cur[:low] equals synced[:low]).
	cur, synced []byte
	low         int
	// A directory: its entries now and as of its last SyncDir.
	entries, syncedEntries map[string]*plNode
}

func newPLDir() *plNode {
	return &plNode{dir: true, entries: map[string]*plNode{}, syncedEntries: map[string]*plNode{}}
}

func (n *plNode) writeAt(pos int, b []byte) {
	if end := pos + len(b); end > len(n.cur) {
		n.cur = append(n.cur, make([]byte, end-len(n.cur))...)
	}
	copy(n.cur[pos:], b)
	n.low = min(n.low, pos)
}

func (n *plNode) truncate(size int) {
	if size <= len(n.cur) {
		n.cur = n.cur[:size:size] // a later append must not write into synced's past
	} else {
		n.cur = append(n.cur, make([]byte, size-len(n.cur))...)
	}
	n.low = min(n.low, size)
}

// plFiles says what a crash image keeps of a file's unsynced changes.
type plFiles int

const (
	plLost   plFiles = iota // nothing: the file as last synced
	plPrefix                // any prefix of the changes
	plTorn                  // any prefix, some of its pages zeros
)

type plVariant struct {
	files plFiles
	// anyDirs: each directory keeps its synced or its current entries.
	anyDirs bool
}

func (v plVariant) String() string {
	s := [...]string{"unsynced data lost", "a prefix of unsynced data kept", "unsynced pages torn"}[v.files]
	if v.anyDirs {
		return s + ", directories synced or not"
	}
	return s + ", unsynced directory entries lost"
}

var plVariants = []plVariant{{plLost, false}, {plPrefix, true}, {plTorn, true}, {plTorn, false}}

const plPage = 4096

// image is what a crash leaves of the file.
func (n *plNode) image(how plFiles, rng *rand.Rand) []byte {
	if how == plLost || n.low == len(n.cur) && len(n.synced) == len(n.cur) {
		return bytes.Clone(n.synced)
	}
	end := n.low + rng.IntN(len(n.cur)-n.low+1)
	b := bytes.Clone(n.cur[:end])
	if how == plTorn {
		for p := n.low / plPage * plPage; p < end; p += plPage {
			if rng.IntN(2) == 0 {
				clear(b[max(p, n.low):min(p+plPage, end)])
			}
		}
	}
	return b
}

func (n *plNode) materialise(path string, v plVariant, rng *rand.Rand) error {
	entries := n.syncedEntries
	if v.anyDirs && rng.IntN(2) == 0 {
		entries = n.entries
	}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		c, p := entries[name], filepath.Join(path, name)
		if !c.dir {
			if err := os.WriteFile(p, c.image(v.files, rng), 0o644); err != nil {
				return err
			}
			continue
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		if err := c.materialise(p, v, rng); err != nil {
			return err
		}
	}
	return nil
}

// plFS is the power-loss model over the real files under root.
type plFS struct {
	osFS
	root string

	mu      sync.Mutex
	top     *plNode
	changed bool     // the model changed since the last cut
	outside []string // changes the model could not place
	// cut, if set, is called at every sync point at which the model
	// changed, on the goroutine that syncs.
	cut func(at string)
}

// newPLFS models root as it is now, all of it durable.
func newPLFS(t *testing.T, root string) *plFS {
	t.Helper()
	top, err := plLoad(root)
	if err != nil {
		t.Fatal(err)
	}
	return &plFS{root: filepath.Clean(root), top: top}
}

func plLoad(path string) (*plNode, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return &plNode{cur: b, synced: bytes.Clone(b), low: len(b)}, nil
	}
	n := newPLDir()
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if n.entries[e.Name()], err = plLoad(filepath.Join(path, e.Name())); err != nil {
			return nil, err
		}
	}
	n.syncedEntries = maps.Clone(n.entries)
	return n, nil
}

// parent finds the directory holding path and the name in it; nil when
// path is not inside the model. fs.mu must be held.
func (fs *plFS) parent(path string) (*plNode, string) {
	rel, err := filepath.Rel(fs.root, filepath.Clean(path))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, ""
	}
	parts := strings.Split(rel, "/")
	d := fs.top
	for _, p := range parts[:len(parts)-1] {
		if d = d.entries[p]; d == nil || !d.dir {
			return nil, ""
		}
	}
	return d, parts[len(parts)-1]
}

// node finds path's file or directory. fs.mu must be held.
func (fs *plFS) node(path string) *plNode {
	if filepath.Clean(path) == fs.root {
		return fs.top
	}
	if d, name := fs.parent(path); d != nil {
		return d.entries[name]
	}
	return nil
}

func (fs *plFS) unplaced(format string, args ...any) {
	fs.outside = append(fs.outside, fmt.Sprintf(format, args...))
}

// point is a sync point: the cut runs if the model changed since the last.
func (fs *plFS) point(at string) {
	fs.mu.Lock()
	cut := fs.cut
	fire := fs.changed && cut != nil
	fs.changed = false
	fs.mu.Unlock()
	if fire {
		cut(at)
	}
}

func (fs *plFS) materialise(dst string, v plVariant, rng *rand.Rand) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.top.materialise(dst, v, rng)
}

func (fs *plFS) OpenFile(name string, flag int, perm os.FileMode) (file, error) {
	f, err := fs.osFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, base := fs.parent(name)
	if d == nil {
		fs.unplaced("open %s", name)
		return f, nil
	}
	n := d.entries[base]
	if n == nil {
		n = &plNode{}
		d.entries[base] = n
		fs.changed = true
	}
	if flag&os.O_TRUNC != 0 && len(n.cur) > 0 {
		n.truncate(0)
		fs.changed = true
	}
	return &plFile{file: f, fs: fs, node: n, append: flag&os.O_APPEND != 0}, nil
}

func (fs *plFS) Rename(oldpath, newpath string, noReplace bool) error {
	if err := fs.osFS.Rename(oldpath, newpath, noReplace); err != nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	od, ob := fs.parent(oldpath)
	nd, nb := fs.parent(newpath)
	if od == nil || nd == nil || od.entries[ob] == nil {
		fs.unplaced("rename %s %s", oldpath, newpath)
		return nil
	}
	nd.entries[nb] = od.entries[ob]
	delete(od.entries, ob)
	fs.changed = true
	return nil
}

func (fs *plFS) Exchange(a, b string) error {
	if err := fs.osFS.Exchange(a, b); err != nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	ad, an := fs.parent(a)
	bd, bn := fs.parent(b)
	if ad == nil || bd == nil || ad.entries[an] == nil || bd.entries[bn] == nil {
		fs.unplaced("exchange %s %s", a, b)
		return nil
	}
	ad.entries[an], bd.entries[bn] = bd.entries[bn], ad.entries[an]
	fs.changed = true
	return nil
}

func (fs *plFS) Remove(name string) error {
	if err := fs.osFS.Remove(name); err != nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, base := fs.parent(name)
	if d == nil || d.entries[base] == nil {
		fs.unplaced("remove %s", name)
		return nil
	}
	delete(d.entries, base)
	fs.changed = true
	return nil
}

func (fs *plFS) Link(oldname, newname string) error {
	if err := fs.osFS.Link(oldname, newname); err != nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	od, ob := fs.parent(oldname)
	nd, nb := fs.parent(newname)
	if od == nil || nd == nil || od.entries[ob] == nil {
		fs.unplaced("link %s %s", oldname, newname)
		return nil
	}
	nd.entries[nb] = od.entries[ob]
	fs.changed = true
	return nil
}

func (fs *plFS) Mkdir(name string, perm os.FileMode) error {
	if err := fs.osFS.Mkdir(name, perm); err != nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, base := fs.parent(name)
	if d == nil {
		fs.unplaced("mkdir %s", name)
		return nil
	}
	d.entries[base] = newPLDir()
	fs.changed = true
	return nil
}

func (fs *plFS) SyncDir(name string) error {
	fs.point("before fsync of directory " + name)
	if err := fs.osFS.SyncDir(name); err != nil {
		return err
	}
	fs.mu.Lock()
	if n := fs.node(name); n == nil || !n.dir {
		fs.unplaced("fsync directory %s", name)
	} else if !maps.Equal(n.entries, n.syncedEntries) {
		n.syncedEntries = maps.Clone(n.entries)
		fs.changed = true
	}
	fs.mu.Unlock()
	fs.point("after fsync of directory " + name)
	return nil
}

// plFile is an open file whose changes the model follows.
type plFile struct {
	file
	fs     *plFS
	node   *plNode
	append bool
	pos    int // the file offset, without O_APPEND
}

func (f *plFile) Write(b []byte) (int, error) {
	n, err := f.file.Write(b)
	if n > 0 {
		f.fs.mu.Lock()
		pos := f.pos
		if f.append {
			pos = len(f.node.cur)
		}
		f.node.writeAt(pos, b[:n])
		f.pos = pos + n
		f.fs.changed = true
		f.fs.mu.Unlock()
	}
	return n, err
}

// CopyFrom goes through Write, so the model sees the bytes.
func (f *plFile) CopyFrom(src *os.File, off, n int64) error {
	return fsx.CopyThroughBuffer(f, src, off, n)
}

func (f *plFile) Truncate(size int64) error {
	if err := f.file.Truncate(size); err != nil {
		return err
	}
	f.fs.mu.Lock()
	f.node.truncate(int(size))
	f.fs.changed = true
	f.fs.mu.Unlock()
	return nil
}

func (f *plFile) Sync() error {
	f.fs.point("before fdatasync of " + f.Name())
	if err := f.file.Sync(); err != nil {
		return err
	}
	f.fs.mu.Lock()
	if n := f.node; n.low < len(n.cur) || len(n.synced) != len(n.cur) {
		n.synced, n.low = bytes.Clone(n.cur), len(n.cur)
		f.fs.changed = true
	}
	f.fs.mu.Unlock()
	f.fs.point("after fdatasync of " + f.Name())
	return nil
}

// plRec is a record as given to Append (timestamp as the writer stamps it).
type plRec struct {
	ts         int64
	key, value []byte
}

// plRun is one randomised run of a scenario, with its crash checks.
type plRun struct {
	t      *testing.T
	seed   uint64
	rng    *rand.Rand // the run's choices and its crash images'
	fs     *plFS
	store  *Store // on the model
	root   string
	images string
	topic  string

	written []plRec // every record given to Append, by offset
	// Records [ackFrom, acked) were acknowledged: they must survive.
	ackFrom, acked uint64
	// Records below lossyBelow were never made durable (--sync never): they
	// may be missing, leaving gaps, but what is there must be right.
	lossyBelow uint64
	// topicMade: CreateTopic returned, so the topic must survive.
	topicMade bool
	// before, if set, checks an image before recover touches it.
	before func(dir string) error
	// check replaces the record check (for runs that write no records).
	check func(dir string) error

	cuts, checks, failures int
}

// plTempDir is a temporary directory, on tmpfs where there is one: the
// model, not the disk, decides what survives a cut, and tmpfs spares the
// machine the thousands of real fsyncs and file creations a run makes.
func plTempDir(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "seglog-powerloss-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

func newPLRun(t *testing.T, seed uint64) *plRun {
	base := plTempDir(t)
	r := &plRun{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
		root: filepath.Join(base, "data"), images: filepath.Join(base, "images"), topic: "pl"}
	for _, d := range []string{r.root, r.images} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.fs = newPLFS(t, r.root)
	r.fs.cut = r.cut
	r.store = &Store{dir: r.root, fs: r.fs}
	t.Cleanup(func() {
		if len(r.fs.outside) > 0 {
			t.Errorf("changes outside the modelled data directory %s: %q", r.root, r.fs.outside)
		}
	})
	return r
}

// cut simulates a power cut now: in long mode once per variant, else in
// one variant, taking turns.
func (r *plRun) cut(at string) {
	r.cuts++
	vs := plVariants
	if !longMode() {
		vs = vs[r.cuts%len(vs) : r.cuts%len(vs)+1]
	}
	for _, v := range vs {
		if r.failures >= 3 {
			return
		}
		r.checks++
		dir, err := os.MkdirTemp(r.images, "cut-")
		if err != nil {
			r.t.Fatal(err)
		}
		if err := r.fs.materialise(dir, v, r.rng); err != nil {
			r.t.Fatalf("write crash image: %v", err)
		}
		if err := r.checkImage(dir, v); err != nil {
			r.failures++
			r.t.Errorf("seed %d, power cut %d %s (%s), %d records written, %d acknowledged: %v\n(replay: SEGLOG_POWERLOSS_SEED=%d)",
				r.seed, r.cuts, at, v, len(r.written), r.acked-r.ackFrom, err, r.seed)
		}
		if err := os.RemoveAll(dir); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *plRun) checkImage(dir string, v plVariant) error {
	if r.before != nil {
		if err := r.before(dir); err != nil {
			return err
		}
	}
	if r.check != nil {
		return r.check(dir)
	}
	s := Open(dir)
	if _, err := s.RecoverDataDir(RecoverOptions{}); err != nil {
		return fmt.Errorf("recover of the data directory: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, r.topic)); errors.Is(err, fs.ErrNotExist) {
		if r.topicMade {
			return fmt.Errorf("topic %s is gone, though its creation had returned", r.topic)
		}
		return nil // the cut came before the topic was made
	}
	problems := func(opts RecoverOptions) ([]error, error) {
		tr, err := s.RecoverTopic(r.topic, -1, opts)
		if err != nil {
			return nil, fmt.Errorf("recover: %w", err)
		}
		for _, f := range tr.Failed {
			return nil, fmt.Errorf("recover of partition %d: %w", f.Partition, f.Err)
		}
		var ps []error
		for _, p := range tr.Partitions {
			ps = append(ps, p.Problems...)
		}
		return ps, nil
	}
	ps, err := problems(RecoverOptions{})
	if err != nil {
		return err
	}
	if len(ps) > 0 {
		// Only a zeroed page inside unsynced data can leave valid records
		// behind damage (salvage must then make the partition whole).
		// So can a --sync never run, whose closed segments were never
		// synced.
		if v.files != plTorn && r.lossyBelow == 0 {
			return fmt.Errorf("recover left damage: %v", ps)
		}
		if ps, err = problems(RecoverOptions{Salvage: true}); err != nil || len(ps) > 0 {
			return fmt.Errorf("recover --salvage left damage %v (%v)", ps, err)
		}
	}
	p, err := s.OpenPartition(r.topic, 0)
	if err != nil {
		return err
	}
	var bad []string
	if _, err := Verify([]VerifyTarget{{Log: p}}, VerifyOptions{Jobs: 1, Finding: func(f Finding) error {
		if f.Severity == SeverityProblem && !(f.Kind == FindingGap && uint64(f.Offset) < r.lossyBelow) {
			bad = append(bad, fmt.Sprintf("%s at byte %d of %s (offset %d): %s", f.Kind, f.Pos, filepath.Base(f.Path), f.Offset, f.Reason))
		}
		return nil
	}}); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if len(bad) > 0 {
		return fmt.Errorf("verify after recover found %d problems: %s", len(bad), strings.Join(bad, "; "))
	}
	last, any, err := r.readBack(p)
	if err != nil {
		return err
	}
	w, err := s.OpenWriter(r.topic, 0, WriterOptions{Sync: SyncNever})
	if err != nil {
		return fmt.Errorf("open for writing after recover: %w", err)
	}
	next := w.NextOffset()
	_, aerr := w.Append(0, nil, []byte("after the cut"))
	cerr := w.Close()
	switch {
	case next < r.acked && r.acked > r.lossyBelow:
		return fmt.Errorf("next offset %d after recover, below the %d acknowledged", next, r.acked)
	case any && (next <= last || next != last+1 && last+1 >= r.lossyBelow):
		return fmt.Errorf("next offset %d after recover, but the last record is %d", next, last)
	case aerr != nil || cerr != nil:
		return fmt.Errorf("append after recover: %v, %v", aerr, cerr)
	}
	return nil
}

// readBack reads the partition and checks every record against what was
// written, and that every acknowledged one is there.
func (r *plRun) readBack(p *Partition) (last uint64, any bool, err error) {
	it, err := p.Read(0)
	if err != nil {
		return 0, false, fmt.Errorf("read: %w", err)
	}
	defer it.Close()
	want := r.ackFrom // the next acknowledged offset not yet seen
	n := 0
	for it.Next() {
		n++
		rec := it.Record()
		o := rec.Offset
		switch {
		case o >= uint64(len(r.written)):
			return 0, false, fmt.Errorf("read offset %d, but only %d records were written", o, len(r.written))
		case any && o <= last:
			return 0, false, fmt.Errorf("read offset %d after %d", o, last)
		}
		w := r.written[o]
		if rec.Timestamp != w.ts || !bytes.Equal(rec.Key, w.key) || !bytes.Equal(rec.Value, w.value) {
			return 0, false, fmt.Errorf("offset %d holds timestamp %d, key %q, value %s; written was %d, %q, %s",
				o, rec.Timestamp, rec.Key, plShort(rec.Value), w.ts, w.key, plShort(w.value))
		}
		if want < r.acked && o >= want {
			if o > want {
				return 0, false, fmt.Errorf("acknowledged offsets %d..%d are missing (the next record read is %d)", want, min(o, r.acked)-1, o)
			}
			want++
		}
		last, any = o, true
	}
	if err := it.Err(); err != nil {
		return 0, false, fmt.Errorf("read: %w", err)
	}
	if want < r.acked {
		return 0, false, fmt.Errorf("acknowledged offsets %d..%d are missing (%d records read)", want, r.acked-1, n)
	}
	return last, any, nil
}

func plShort(b []byte) string {
	if len(b) > 24 {
		return fmt.Sprintf("%q... (%d bytes)", b[:24], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// appendBatches appends batches of random records through w, flushing
// after each, and follows what w acknowledges.
func (r *plRun) appendBatches(w *Writer, batches int, segBytes int64, tsBase int64) {
	r.t.Helper()
	for b := range batches {
		n := 1 + r.rng.IntN(12)
		ts := tsBase + int64(len(r.written))*int64(time.Millisecond)
		for range n {
			size := r.rng.IntN(160)
			if r.rng.IntN(25) == 0 {
				size = int(segBytes) + r.rng.IntN(300) // a segment of its own
			}
			var key []byte
			if r.rng.IntN(3) > 0 {
				key = []byte("k-" + strconv.Itoa(r.rng.IntN(50)))
			}
			value := make([]byte, size)
			for i := range value {
				value[i] = byte('a' + r.rng.IntN(26))
			}
			if len(r.written) > 0 {
				ts = max(ts, r.written[len(r.written)-1].ts)
			}
			r.written = append(r.written, plRec{ts: ts, key: key, value: value})
			off, err := w.Append(ts, key, value)
			if err != nil {
				r.t.Fatalf("append: %v", err)
			}
			if off != uint64(len(r.written)-1) {
				r.t.Fatalf("append gave offset %d, want %d", off, len(r.written)-1)
			}
			r.ack(w)
		}
		if b%5 != 4 || r.rng.IntN(2) == 0 { // now and then two batches go out together
			if err := w.Flush(); err != nil {
				r.t.Fatalf("flush: %v", err)
			}
			r.ack(w)
		}
	}
}

// ack takes what the writer acknowledges now.
func (r *plRun) ack(w *Writer) {
	if d := w.Durable(); d > r.acked {
		r.acked = d
	}
}

// closeWriter closes w; under SyncBatch and SyncExit that acknowledges
// everything written.
func (r *plRun) closeWriter(w *Writer) {
	r.t.Helper()
	if err := w.Close(); err != nil {
		r.t.Fatalf("close: %v", err)
	}
	r.ack(w)
	if w.opts.Sync != SyncNever && r.acked != uint64(len(r.written)) {
		r.t.Errorf("after Close the writer acknowledges offsets below %d, want all %d written", r.acked, len(r.written))
	}
}

func (r *plRun) openWriter(sync SyncMode) *Writer {
	r.t.Helper()
	w, err := r.store.OpenWriter(r.topic, 0, WriterOptions{Sync: sync})
	if err != nil {
		r.t.Fatalf("open writer: %v", err)
	}
	// Only what this writer syncs is acknowledged by it.
	r.ackFrom, r.acked = w.NextOffset(), w.NextOffset()
	return w
}

func (r *plRun) createTopic(segBytes int64) {
	r.t.Helper()
	st := Settings{SegmentBytes: segBytes, IndexInterval: 1 + r.rng.IntN(3)}
	if err := r.store.CreateTopic(r.topic, 1, st); err != nil {
		r.t.Fatalf("create topic: %v", err)
	}
	r.topicMade = true
}

// finish cuts once more at the end and reports the run's figures.
func (r *plRun) finish(name string) {
	r.fs.mu.Lock()
	r.fs.changed = true
	r.fs.mu.Unlock()
	r.fs.point("at the end of the run")
	r.t.Logf("%s: seed %d: %d records written, %d power cuts, %d crash images checked", name, r.seed, len(r.written), r.cuts, r.checks)
	plTotals.add(len(r.written), r.cuts, r.checks)
}

// plTotals adds up the figures of every run in the process.
var plTotals plCounts

type plCounts struct {
	sync.Mutex
	records, cuts, checks, runs int
}

func (c *plCounts) add(records, cuts, checks int) {
	c.Lock()
	defer c.Unlock()
	c.records, c.cuts, c.checks, c.runs = c.records+records, c.cuts+cuts, c.checks+checks, c.runs+1
}

const plSegBytes = 2048

// plScenarios drive the engine through the model; each returns after its
// last cut.
var plScenarios = []struct {
	name string
	run  func(r *plRun)
}{
	// Appends rolling across many segments, acknowledged batch by batch.
	{"sync-batch", func(r *plRun) {
		r.createTopic(plSegBytes)
		w := r.openWriter(SyncBatch)
		r.appendBatches(w, plBatches(), plSegBytes, time.Now().UnixNano())
		r.closeWriter(w)
	}},
	// Acknowledged only at a roll and at Close.
	{"sync-exit", func(r *plRun) {
		r.createTopic(plSegBytes)
		w := r.openWriter(SyncExit)
		r.appendBatches(w, plBatches(), plSegBytes, time.Now().UnixNano())
		r.closeWriter(w)
	}},
	// A --sync never run rolls segments it never makes durable (their
	// directory entries included); a --sync batch run then appends to the
	// last of them, and what it acknowledges must survive.
	{"never-then-batch", func(r *plRun) {
		r.createTopic(plSegBytes)
		w := r.openWriter(SyncNever)
		r.appendBatches(w, 1+plBatches()/3, plSegBytes, time.Now().UnixNano())
		r.closeWriter(w)
		r.lossyBelow = uint64(len(r.written))
		w = r.openWriter(SyncBatch)
		r.appendBatches(w, plBatches(), plSegBytes, time.Now().UnixNano())
		r.closeWriter(w)
	}},
	// An incomplete record at the end (a crash of an earlier writer) is
	// saved to quarantine and cut by the next writer: at no point may a
	// power cut lose those bytes from both places.
	{"cut-tail-on-open", func(r *plRun) {
		r.createTopic(plSegBytes)
		w := r.openWriter(SyncBatch)
		r.appendBatches(w, 1+plBatches()/3, plSegBytes, time.Now().UnixNano())
		r.closeWriter(w)
		partial, logPath, pos := r.writePartial()
		r.before = func(dir string) error { return plPartialKept(dir, r.topic, r.root, logPath, pos, partial) }
		w = r.openWriter(SyncBatch)
		r.appendBatches(w, plBatches(), plSegBytes, time.Now().UnixNano())
		r.closeWriter(w)
	}},
	// Retention by size, then by time once everything expired (the
	// active segment is rolled so the next offset lives on): the records
	// kept stay whole and the next offset never goes down.
	{"retention", func(r *plRun) {
		r.createTopic(plSegBytes)
		w := r.openWriter(SyncBatch)
		old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
		r.appendBatches(w, plBatches(), plSegBytes, old)
		r.closeWriter(w)
		total := int64(0)
		for _, rec := range r.written {
			total += format.RecordLen(rec.key, rec.value)
		}
		for _, opts := range []RetentionOptions{{RetentionBytes: max(total/2, 1)}, {Retention: time.Hour}} {
			dry := opts
			dry.DryRun = true
			plan, err := r.store.RetentionSweep(r.topic, -1, dry)
			if err != nil || len(plan.Partitions) != 1 {
				r.t.Fatalf("retention dry run: %v, %+v", err, plan)
			}
			// What the sweep would keep must survive any cut; what it
			// deletes may go.
			r.ackFrom = plan.Partitions[0].Start
			r.lossyBelow = 0
			done, err := r.store.RetentionSweep(r.topic, -1, opts)
			if err != nil || len(done.Failed) > 0 || done.Partitions[0].Start != plan.Partitions[0].Start {
				r.t.Fatalf("retention: %v, %+v; the dry run planned %+v", err, done, plan)
			}
			if opts.Retention > 0 && done.Partitions[0].Next != uint64(len(r.written)) {
				r.t.Fatalf("retention by time left next offset %d, want %d", done.Partitions[0].Next, len(r.written))
			}
		}
	}},
	// A consumer group's commits: after a cut the group holds the last
	// commit that returned, or the one under way.
	{"group-commits", func(r *plRun) {
		var acked, inflight uint64
		var any bool
		r.check = func(dir string) error {
			pos, err := groupPositions(Open(dir), "g")
			if errors.Is(err, ErrGroupNotFound) && !any {
				return nil
			}
			if err != nil {
				return fmt.Errorf("group positions: %w", err)
			}
			got, ok := pos[r.topic][0]
			switch {
			case ok && (got == inflight || any && got == acked):
			case !ok && !any:
			default:
				return fmt.Errorf("group g holds %d (present: %v); the last commit that returned was %d (any: %v), the one under way %d", got, ok, acked, any, inflight)
			}
			return nil
		}
		g, err := r.store.OpenGroup("g", 0)
		if err != nil {
			r.t.Fatal(err)
		}
		defer g.Close()
		for range plBatches() {
			inflight += 1 + uint64(r.rng.IntN(1000))
			if err := g.Commit(r.topic, map[int]uint64{0: inflight}); err != nil {
				r.t.Fatal(err)
			}
			acked, any = inflight, true
		}
	}},
}

// plBatches is how many batches a run appends.
func plBatches() int {
	if longMode() {
		return 20
	}
	return 8
}

// plSeeds are the runs' seeds: SEGLOG_POWERLOSS_SEED replays one.
func plSeeds(t *testing.T) []uint64 {
	if s := os.Getenv("SEGLOG_POWERLOSS_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SEGLOG_POWERLOSS_SEED=%q: %v", s, err)
		}
		return []uint64{seed}
	}
	n := 2
	if longMode() {
		n = 12
	}
	base := uint64(time.Now().UnixNano())
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = base + uint64(i)
	}
	return seeds
}

// writePartial appends the first half of the next record to the active
// segment and syncs it: what a writer killed mid-write leaves.
func (r *plRun) writePartial() (partial []byte, logPath string, pos int64) {
	r.t.Helper()
	segs, err := listSegments(r.store.PartitionDir(r.topic, 0))
	if err != nil || len(segs) == 0 {
		r.t.Fatalf("segments: %v, %v", segs, err)
	}
	logPath = segs[len(segs)-1].path(format.LogExt)
	fi, err := os.Stat(logPath)
	if err != nil {
		r.t.Fatal(err)
	}
	rec := format.AppendRecord(nil, &format.Record{Offset: uint64(len(r.written)), Timestamp: time.Now().UnixNano(),
		Key: []byte("torn"), Value: bytes.Repeat([]byte("t"), 100)})
	partial = rec[:len(rec)/2]
	f, err := r.fs.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := f.Write(partial); err != nil {
		r.t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		r.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		r.t.Fatal(err)
	}
	return partial, logPath, fi.Size()
}

// plPartialKept checks that a crash image still holds the incomplete
// record at pos of logPath (a path under root), in place or in quarantine.
func plPartialKept(dir, topic, root, logPath string, pos int64, partial []byte) error {
	rel, err := filepath.Rel(root, logPath)
	if err != nil {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(dir, rel)); err == nil && int64(len(b)) >= pos+int64(len(partial)) &&
		bytes.Equal(b[pos:pos+int64(len(partial))], partial) {
		return nil
	}
	qdir := filepath.Join(dir, QuarantineDir, topic, "0")
	entries, _ := os.ReadDir(qdir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".bin") {
			if b, err := os.ReadFile(filepath.Join(qdir, e.Name())); err == nil && bytes.Equal(b, partial) {
				return nil
			}
		}
	}
	return fmt.Errorf("the %d bytes of the incomplete record at byte %d of %s are neither there nor in %s (%d entries)",
		len(partial), pos, rel, qdir, len(entries))
}

// TestPowerLoss cuts the power at every sync point of appends (rolling
// across segments under --sync batch and exit, after a --sync never run,
// after cutting an incomplete tail), of retention sweeps and of group
// commits, and checks each crash image with the real engine.
func TestPowerLoss(t *testing.T) {
	seeds := plSeeds(t)
	start := time.Now()
	for _, sc := range plScenarios {
		t.Run(sc.name, func(t *testing.T) {
			for _, seed := range seeds {
				r := newPLRun(t, seed)
				sc.run(r)
				r.finish(sc.name)
				if t.Failed() {
					return
				}
			}
		})
	}
	plTotals.Lock()
	defer plTotals.Unlock()
	t.Logf("%d runs (%d seeds), %d records written, %d power cuts, %d crash images recovered and checked, in %v",
		plTotals.runs, len(seeds), plTotals.records, plTotals.cuts, plTotals.checks, time.Since(start).Round(time.Millisecond))
}

// plImage writes a crash image of fs and returns its files (path relative
// to the image: content) and directories (path: "/").
func plImage(t *testing.T, fs *plFS, v plVariant, seed uint64) map[string]string {
	t.Helper()
	dir, err := os.MkdirTemp(plTempDir(t), "image-")
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.materialise(dir, v, rand.New(rand.NewPCG(seed, 1))); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			got[rel] = "/"
			return nil
		}
		b, err := os.ReadFile(p)
		got[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestPowerLossModel pins what the model lets a power cut keep, so the
// power-loss runs test the engine against the right rules.
func TestPowerLossModel(t *testing.T) {
	root := plTempDir(t)
	fsys := newPLFS(t, root)
	path := func(name string) string { return filepath.Join(root, name) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	strict := plVariant{plLost, false}
	want := func(what string, v plVariant, w map[string]string) {
		t.Helper()
		if got := plImage(t, fsys, v, 1); !maps.Equal(got, w) {
			t.Errorf("%s (%s): crash image holds %q, want %q", what, v, got, w)
		}
	}
	// images collects what a variant's images hold over many seeds.
	images := func(v plVariant, name string) map[string]bool {
		seen := map[string]bool{}
		for seed := range uint64(64) {
			c, ok := plImage(t, fsys, v, seed)[name]
			seen[fmt.Sprintf("%v:%q", ok, c)] = true
		}
		return seen
	}

	f, err := fsys.OpenFile(path("a"), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	must(err)
	_, err = f.Write([]byte("abc"))
	must(err)
	must(f.Sync())
	want("a synced file whose entry is not", strict, map[string]string{})
	if got := images(plVariant{plLost, true}, "a"); !got[`false:""`] || !got[`true:"abc"`] || len(got) != 2 {
		t.Errorf("a created file with an unsynced entry, directories synced or not: images hold %v, want it gone or %q", got, "abc")
	}
	must(fsys.SyncDir(root))
	want("a synced file and entry", strict, map[string]string{"a": "abc"})

	_, err = f.Write([]byte("defgh"))
	must(err)
	want("unsynced bytes, lost", strict, map[string]string{"a": "abc"})
	wantPrefixes := map[string]bool{}
	for i := 3; i <= 8; i++ {
		wantPrefixes[fmt.Sprintf("true:%q", "abcdefgh"[:i])] = true
	}
	if got := images(plVariant{plPrefix, false}, "a"); !maps.Equal(got, wantPrefixes) {
		t.Errorf("unsynced bytes, a prefix kept: images hold %v, want each of %v", got, wantPrefixes)
	}
	for c := range images(plVariant{plTorn, false}, "a") {
		if !wantPrefixes[c] && !strings.HasPrefix(c, `true:"abc\x00`) {
			t.Errorf("unsynced bytes on one page, torn: an image holds %s, want a prefix of abcdefgh or abc and zeros", c)
		}
	}
	must(f.Sync())
	must(fsys.Rename(path("a"), path("b"), false))
	want("an unsynced rename", strict, map[string]string{"a": "abcdefgh"})
	must(fsys.SyncDir(root))
	want("a synced rename", strict, map[string]string{"b": "abcdefgh"})

	must(fsys.Mkdir(path("d"), 0o755))
	x, err := fsys.OpenFile(path("d/x"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	must(err)
	_, err = x.Write([]byte("x"))
	must(err)
	must(x.Sync())
	must(x.Close())
	must(fsys.SyncDir(path("d")))
	want("a synced file in a directory whose own entry is not synced", strict, map[string]string{"b": "abcdefgh"})
	must(fsys.SyncDir(root))
	want("a synced directory", strict, map[string]string{"b": "abcdefgh", "d": "/", "d/x": "x"})

	must(f.Truncate(2))
	want("an unsynced truncate, lost", strict, map[string]string{"b": "abcdefgh", "d": "/", "d/x": "x"})
	want("an unsynced truncate, kept", plVariant{plPrefix, false}, map[string]string{"b": "ab", "d": "/", "d/x": "x"})
	must(f.Sync())
	must(f.Close())
	must(fsys.Remove(path("b")))
	must(fsys.Link(path("d/x"), path("y")))
	want("an unsynced remove and link", strict, map[string]string{"b": "ab", "d": "/", "d/x": "x"})
	must(fsys.SyncDir(root))
	want("a synced remove and link", strict, map[string]string{"d": "/", "d/x": "x", "y": "x"})

	// Torn pages: bytes synced stay, each page after them is all written
	// or all zeros, and some image holds a zeroed page before a written one.
	p, err := fsys.OpenFile(path("p"), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	must(err)
	head := bytes.Repeat([]byte{'h'}, 100)
	_, err = p.Write(head)
	must(err)
	must(p.Sync())
	must(fsys.SyncDir(root))
	_, err = p.Write(bytes.Repeat([]byte{0xff}, 3*plPage))
	must(err)
	holes := 0
	for seed := range uint64(64) {
		b := []byte(plImage(t, fsys, plVariant{plTorn, false}, seed)["p"])
		if len(b) < len(head) || !bytes.Equal(b[:len(head)], head) {
			t.Fatalf("seed %d: torn image of p is %d bytes starting %q, want the %d synced bytes first", seed, len(b), b[:min(len(b), 8)], len(head))
		}
		var pages []byte // 'z' zeros, 'w' written
		for pg := 0; pg < len(b); pg += plPage {
			part := b[max(pg, len(head)):min(pg+plPage, len(b))]
			switch {
			case len(part) == 0:
			case format.IsZero(part):
				pages = append(pages, 'z')
			case bytes.Count(part, []byte{0xff}) == len(part):
				pages = append(pages, 'w')
			default:
				t.Fatalf("seed %d: a page of the torn image of p is neither all written nor all zeros", seed)
			}
		}
		if bytes.Contains(pages, []byte("zw")) {
			holes++
		}
	}
	if holes == 0 {
		t.Error("no torn image of p holds a zeroed page before a written one")
	}
	if len(fsys.outside) > 0 {
		t.Errorf("changes the model could not place: %q", fsys.outside)
	}
}

// A --sync never writer rolls a segment without syncing its directory
// entry; a --sync batch writer then appends to it and acknowledges. Before
// writers synced the partition directory on opening, a power cut took
// the entry, and the acknowledged record, with it.
func TestPowerLossUnsyncedSegmentEntry(t *testing.T) {
	root := plTempDir(t)
	if err := Open(root).CreateTopic("t", 1, Settings{}); err != nil {
		t.Fatal(err)
	}
	fsys := newPLFS(t, root)
	s := &Store{dir: root, fs: fsys}
	w, err := s.OpenWriter("t", 0, WriterOptions{Sync: SyncNever, SegmentBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := w.Append(0, nil, bytes.Repeat([]byte{'n'}, 60+i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = s.OpenWriter("t", 0, WriterOptions{Sync: SyncBatch, SegmentBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	off, err := w.Append(0, nil, []byte("acknowledged"))
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	if w.Durable() != off+1 {
		t.Fatalf("after a batch was synced Durable() = %d, want %d", w.Durable(), off+1)
	}
	img := plImage(t, fsys, plVariant{plLost, false}, 1)
	seg := filepath.Join("t", "0", format.SegmentName(1, format.LogExt))
	if !strings.Contains(img[seg], "acknowledged") {
		var names []string
		for n := range img {
			names = append(names, n)
		}
		slices.Sort(names)
		t.Errorf("after a power cut %s does not hold record %d, which Durable() acknowledged; the image holds %q", seg, off, names)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
