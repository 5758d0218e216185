package logstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
)

// stLeftovers lists the entries of the data directory that a create must
// not leave behind.
func stLeftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".create-") || strings.HasSuffix(e.Name(), ".tmp") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestCreateTopicLayout(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "data"))
	if err := s.CreateTopic("orders", 3, Settings{}); err != nil {
		t.Fatal(err)
	}
	topicDir := filepath.Join(s.Dir(), "orders")
	entries, err := os.ReadDir(topicDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// No settings given: no .seglog.json (data looks like any broker's).
	if !slices.Equal(names, []string{"0", "1", "2"}) {
		t.Fatalf("topic directory holds %v, want [0 1 2]", names)
	}
	for p := 0; p < 3; p++ {
		pdir := s.PartitionDir("orders", p)
		entries, err := os.ReadDir(pdir)
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		for _, e := range entries {
			files = append(files, e.Name())
			if fi, err := e.Info(); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
				t.Errorf("%s/%s: want an empty regular file (%v, %v)", pdir, e.Name(), fi, err)
			}
		}
		want := []string{"00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex"}
		if !slices.Equal(files, want) {
			t.Errorf("partition %d holds %v, want %v", p, files, want)
		}
	}
	tp, err := s.Topic("orders")
	if err != nil {
		t.Fatal(err)
	}
	if tp.Partitions != 3 || tp.Settings != (Settings{}) || tp.Name != "orders" || tp.Dir != topicDir {
		t.Errorf("Topic: %+v", tp)
	}
	eff := tp.EffectiveSettings()
	if eff.SegmentBytes != DefaultSegmentBytes || eff.IndexInterval != DefaultIndexInterval || eff.RollAfter != DefaultRollAfter || eff.Retention != 0 {
		t.Errorf("EffectiveSettings without stored ones: %+v", eff)
	}
	if got := stLeftovers(t, s.Dir()); len(got) != 0 {
		t.Errorf("create left %v", got)
	}
	// A fresh partition reads as empty and a writer starts at 0.
	if recs := wtReadAll(t, s, "orders", 2); len(recs) != 0 {
		t.Errorf("new partition holds %d records", len(recs))
	}
}

func TestCreateTopicSettingsRoundTrip(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "data"))
	st := Settings{
		SegmentBytes:   3 << 20,
		IndexInterval:  4,
		RollAfter:      90 * time.Minute,
		Retention:      36*time.Hour + 30*time.Second,
		RetentionBytes: 5 << 30,
	}
	if err := s.CreateTopic("logs", 2, st); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir(), "logs", settingsFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("settings given but no %s: %v", settingsFile, err)
	}
	var j map[string]any
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatalf("%s is no JSON: %v", path, err)
	}
	if j["roll_after"] != "1h30m0s" || j["retention"] != "36h0m30s" {
		t.Errorf("durations stored as %v and %v, want Go duration strings", j["roll_after"], j["retention"])
	}
	tp, err := s.Topic("logs")
	if err != nil {
		t.Fatal(err)
	}
	if tp.Settings != st {
		t.Errorf("settings read back %+v, want %+v", tp.Settings, st)
	}
	if eff := tp.EffectiveSettings(); eff != st {
		t.Errorf("EffectiveSettings %+v, want the stored %+v", eff, st)
	}

	// Only some set: the rest stays unset, and defaults fill in.
	if err := s.CreateTopic("partial", 1, Settings{Retention: time.Hour}); err != nil {
		t.Fatal(err)
	}
	tp, err = s.Topic("partial")
	if err != nil {
		t.Fatal(err)
	}
	if tp.Settings != (Settings{Retention: time.Hour}) {
		t.Errorf("partial settings read back %+v", tp.Settings)
	}
	if eff := tp.EffectiveSettings(); eff.SegmentBytes != DefaultSegmentBytes || eff.Retention != time.Hour {
		t.Errorf("EffectiveSettings %+v", eff)
	}
}

// A writer with zero options takes the topic's stored settings.
func TestWriterUsesStoredSettings(t *testing.T) {
	rec := format.RecordLen(nil, []byte("x"))
	s := wtStore(t, "stored", 1, Settings{SegmentBytes: 2 * rec, IndexInterval: 2})
	w := wtOpen(t, s, "stored", WriterOptions{})
	for i := 0; i < 5; i++ {
		wtAppend(t, w, int64(i), "", "x")
	}
	wtClose(t, w)
	if got := wtBases(t, s.PartitionDir("stored", 0)); !slices.Equal(got, []uint64{0, 2, 4}) {
		t.Errorf("segments %v, want [0 2 4] (stored segment bytes ignored?)", got)
	}
	if got := wtIndex(t, wtSegPath(s, "stored", 0, format.IndexExt)); len(got) != 1 {
		t.Errorf("segment 0 has %d index entries, want 1 (stored interval 2 ignored?)", len(got))
	}
	// Options override stored settings.
	w = wtOpen(t, s, "stored", WriterOptions{SegmentBytes: 1 << 20})
	for i := 0; i < 5; i++ {
		wtAppend(t, w, int64(10+i), "", "x")
	}
	wtClose(t, w)
	if got := wtBases(t, s.PartitionDir("stored", 0)); !slices.Equal(got, []uint64{0, 2, 4}) {
		t.Errorf("segments %v, want [0 2 4] (option did not override)", got)
	}
}

func TestCreateTopicExists(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "data"))
	if err := s.CreateTopic("orders", 2, Settings{}); err != nil {
		t.Fatal(err)
	}
	w := wtOpen(t, s, "orders", WriterOptions{})
	wtAppend(t, w, 1, "", "keep me")
	wtClose(t, w)
	err := s.CreateTopic("orders", 5, Settings{SegmentBytes: 100})
	if !errors.Is(err, ErrTopicExists) {
		t.Fatalf("second create: %v, want ErrTopicExists", err)
	}
	tp, err := s.Topic("orders")
	if err != nil || tp.Partitions != 2 || tp.Settings != (Settings{}) {
		t.Fatalf("existing topic changed: %+v %v", tp, err)
	}
	if n := len(wtReadAll(t, s, "orders", 0)); n != 1 {
		t.Errorf("existing data changed: %d records", n)
	}
	if got := stLeftovers(t, s.Dir()); len(got) != 0 {
		t.Errorf("create left %v", got)
	}
}

// The topic appearing between create's check and its rename (another
// create racing) is ErrTopicExists too, and the half-built copy goes.
func TestCreateTopicRaceLost(t *testing.T) {
	fault := newFaultFS()
	s := &Store{dir: filepath.Join(t.TempDir(), "data"), fs: fault}
	fault.renameHook = func(oldpath, newpath string) error {
		if filepath.Base(newpath) == "orders" {
			return os.MkdirAll(filepath.Join(newpath, "0"), 0o755)
		}
		return nil
	}
	if err := s.CreateTopic("orders", 3, Settings{}); !errors.Is(err, ErrTopicExists) {
		t.Fatalf("create racing another: %v, want ErrTopicExists", err)
	}
	if got := stLeftovers(t, s.Dir()); len(got) != 0 {
		t.Errorf("create left %v", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(s.Dir(), "orders")); len(entries) != 1 {
		t.Errorf("the winner's topic was touched: %v", entries)
	}
}

func TestCreateTopicFailureLeavesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		arm  func(f *faultFS)
	}{
		{"open fails", func(f *faultFS) {
			f.openErr = func(p string, _ int) error {
				if strings.HasSuffix(p, filepath.Join("2", "00000000000000000000.timeindex")) {
					return syscall.ENOSPC
				}
				return nil
			}
		}},
		{"mkdir fails", func(f *faultFS) {
			f.mkdirErr = func(p string) error {
				if filepath.Base(p) == "1" {
					return syscall.EDQUOT
				}
				return nil
			}
		}},
		{"settings write fails", func(f *faultFS) {
			f.writeFaults = append(f.writeFaults, &writeFault{
				match: func(p string) bool { return strings.Contains(p, settingsFile) },
				n:     3, err: syscall.ENOSPC,
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fault := newFaultFS()
			s := &Store{dir: filepath.Join(t.TempDir(), "data"), fs: fault}
			tc.arm(fault)
			err := s.CreateTopic("orders", 3, Settings{RollAfter: time.Hour})
			if err == nil {
				t.Fatal("create succeeded despite the fault")
			}
			if _, serr := os.Stat(filepath.Join(s.Dir(), "orders")); serr == nil {
				t.Errorf("a failed create left the topic directory")
			}
			if got := stLeftovers(t, s.Dir()); len(got) != 0 {
				t.Errorf("a failed create left %v", got)
			}
			if _, err := s.Topic("orders"); !errors.Is(err, ErrTopicNotFound) {
				t.Errorf("Topic after a failed create: %v", err)
			}
			// With the fault gone, the same create works.
			fault.mu.Lock()
			fault.openErr, fault.mkdirErr, fault.writeFaults = nil, nil, nil
			fault.mu.Unlock()
			if err := s.CreateTopic("orders", 3, Settings{RollAfter: time.Hour}); err != nil {
				t.Fatalf("create after the fault: %v", err)
			}
		})
	}
}

func TestCreateTopicDurable(t *testing.T) {
	fault := newFaultFS()
	data := filepath.Join(t.TempDir(), "data")
	s := &Store{dir: data, fs: fault}
	if err := s.CreateTopic("orders", 2, Settings{}); err != nil {
		t.Fatal(err)
	}
	// The new topic's entry in the data directory, and the data directory's
	// own entry in its parent, are made durable.
	if fault.dirSyncCount(data) < 1 {
		t.Errorf("data directory not fsynced after the rename")
	}
	if fault.dirSyncCount(filepath.Dir(data)) < 1 {
		t.Errorf("new data directory's parent not fsynced")
	}
	ev := fault.Events()
	iRename := slices.IndexFunc(ev, func(e string) bool { return strings.HasPrefix(e, "rename ") })
	if iRename < 0 {
		t.Fatalf("no rename in %q", ev)
	}
	if !slices.Contains(ev[iRename+1:], "syncdir "+data) {
		t.Errorf("data directory not fsynced after the topic was renamed into place: %q", ev[iRename:])
	}
}

func TestCreateTopicRejectsBadNames(t *testing.T) {
	bad := []string{"", ".", "..", "../x", "a/b", "/abs", ".x", ".quarantine", "a b", "naïve", "x~", "a\x00b",
		strings.Repeat("a", 250)}
	for _, name := range bad {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			parent := t.TempDir()
			data := filepath.Join(parent, "data")
			s := Open(data)
			err := s.CreateTopic(name, 1, Settings{})
			if !errors.Is(err, format.ErrTopicName) {
				t.Errorf("CreateTopic(%q): %v, want format.ErrTopicName", name, err)
			}
			if _, err := s.Topic(name); !errors.Is(err, format.ErrTopicName) {
				t.Errorf("Topic(%q): %v", name, err)
			}
			if _, err := s.OpenWriter(name, 0, WriterOptions{}); !errors.Is(err, format.ErrTopicName) {
				t.Errorf("OpenWriter(%q): %v", name, err)
			}
			if _, err := s.OpenPartition(name, 0); !errors.Is(err, format.ErrTopicName) {
				t.Errorf("OpenPartition(%q): %v", name, err)
			}
			// Nothing was touched: not even the data directory exists.
			entries, err := os.ReadDir(parent)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 0 {
				t.Errorf("rejected name %q, but %s now holds %v", name, parent, entries)
			}
		})
	}
	s := Open(filepath.Join(t.TempDir(), "data"))
	for _, name := range []string{strings.Repeat("a", 249), "a", "x.y_z-1", "a..b"} {
		if err := s.CreateTopic(name, 1, Settings{}); err != nil {
			t.Errorf("CreateTopic(%q): %v", name, err)
		}
	}
	for _, n := range []int{0, -1, MaxPartitions + 1} {
		if err := s.CreateTopic(fmt.Sprintf("count%d", n+1), n, Settings{}); err == nil {
			t.Errorf("CreateTopic with %d partitions succeeded", n)
		}
	}
}

func TestTopicMissingPartition(t *testing.T) {
	s := wtStore(t, "orders", 3, Settings{})
	if err := os.RemoveAll(s.PartitionDir("orders", 1)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Topic("orders")
	if !errors.Is(err, ErrPartitionNotFound) {
		t.Fatalf("Topic with partition 1 missing: %v, want ErrPartitionNotFound", err)
	}
	if !strings.Contains(err.Error(), "partition 1") {
		t.Errorf("error %q does not name partition 1", err)
	}
	for p := 0; p < 3; p++ {
		if _, err := s.OpenWriter("orders", p, WriterOptions{LockWait: 10 * time.Millisecond}); !errors.Is(err, ErrPartitionNotFound) {
			t.Errorf("OpenWriter(orders, %d) with partition 1 missing: %v", p, err)
		}
		if _, err := s.OpenPartition("orders", p); !errors.Is(err, ErrPartitionNotFound) {
			t.Errorf("OpenPartition(orders, %d) with partition 1 missing: %v", p, err)
		}
	}
	// A stray file named like a partition does not count as one.
	if err := os.WriteFile(s.PartitionDir("orders", 1), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Topic("orders"); !errors.Is(err, ErrPartitionNotFound) {
		t.Errorf("Topic with a file as partition 1: %v", err)
	}
}

func TestTopicPartitionCountAndJunk(t *testing.T) {
	s := wtStore(t, "orders", 2, Settings{})
	dir := filepath.Join(s.Dir(), "orders")
	for _, junk := range []string{"00", "01", "-1", "+2", "2.bak", ".gaps.json", "x"} {
		if err := os.Mkdir(filepath.Join(dir, junk), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tp, err := s.Topic("orders")
	if err != nil {
		t.Fatal(err)
	}
	if tp.Partitions != 2 {
		t.Errorf("Partitions %d, want 2 (junk entries counted?)", tp.Partitions)
	}
	if _, err := s.OpenWriter("orders", 2, WriterOptions{}); !errors.Is(err, ErrPartitionNotFound) {
		t.Errorf("OpenWriter(orders, 2) of a 2-partition topic: %v", err)
	}
	if _, err := s.OpenWriter("orders", -1, WriterOptions{}); !errors.Is(err, ErrPartitionNotFound) {
		t.Errorf("OpenWriter(orders, -1): %v", err)
	}
	if _, err := s.Topic("missing"); !errors.Is(err, ErrTopicNotFound) {
		t.Errorf("Topic(missing): %v, want ErrTopicNotFound", err)
	}
}

func TestTopicsSkipsJunk(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "data"))
	for _, name := range []string{"orders", "logs", "a.b_c-d"} {
		if err := s.CreateTopic(name, 1, Settings{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{QuarantineDir, ".groups", "foo~", ".create-x-0123.tmp", "#emacs#", "bad name"} {
		if err := os.Mkdir(filepath.Join(s.Dir(), d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"orders2", ".orders.swp", "notes.txt", "logs~"} {
		if err := os.WriteFile(filepath.Join(s.Dir(), f), []byte("junk"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Topics()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"a.b_c-d", "logs", "orders"}; !slices.Equal(got, want) {
		t.Errorf("Topics %v, want %v", got, want)
	}
	empty := Open(filepath.Join(t.TempDir(), "nothing"))
	if _, err := empty.Topics(); err == nil {
		t.Errorf("Topics of a missing data directory succeeded")
	}
}

func TestKeyPartition(t *testing.T) {
	fnv32a := func(b []byte) uint32 {
		h := fnv.New32a()
		h.Write(b)
		return h.Sum32()
	}
	// Published FNV-1a-32 vectors, so the test does not just trust hash/fnv.
	for _, v := range []struct {
		in   string
		want uint32
	}{{"", 0x811c9dc5}, {"a", 0xe40c292c}, {"foobar", 0xbf9cf968}} {
		if got := fnv32a([]byte(v.in)); got != v.want {
			t.Fatalf("fnv1a32(%q) = %#x, want %#x", v.in, got, v.want)
		}
		if got := KeyPartition([]byte(v.in), 1<<20+7); got != int(v.want%(1<<20+7)) {
			t.Errorf("KeyPartition(%q, %d) = %d, want %d", v.in, 1<<20+7, got, v.want%(1<<20+7))
		}
	}
	keys := [][]byte{[]byte("a"), []byte("user-1"), []byte("user-2"), []byte("orders"), {0}, {0xff, 0xfe, 0x80}, []byte(strings.Repeat("k", 1000))}
	for _, key := range keys {
		for _, n := range []int{1, 2, 3, 7, 10, 100, MaxPartitions} {
			want := int(fnv32a(key) % uint32(n))
			if got := KeyPartition(key, n); got != want {
				t.Errorf("KeyPartition(%q, %d) = %d, want %d", key, n, got, want)
			}
		}
	}
	// Keys spread over partitions.
	counts := make([]int, 3)
	const n = 3000
	for i := range n {
		p := KeyPartition(fmt.Appendf(nil, "key-%d", i), 3)
		if p < 0 || p >= 3 {
			t.Fatalf("KeyPartition out of range: %d", p)
		}
		counts[p]++
	}
	for p, c := range counts {
		if c < n/3-n/10 || c > n/3+n/10 {
			t.Errorf("partition %d got %d of %d keys: %v", p, c, n, counts)
		}
	}
}
