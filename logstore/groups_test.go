package logstore

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
)

func gtStore(t *testing.T) (*Store, *faultFS) {
	t.Helper()
	fault := newFaultFS()
	return &Store{dir: filepath.Join(t.TempDir(), "data"), fs: fault}, fault
}

func gtOpen(t *testing.T, s *Store, name string) *Group {
	t.Helper()
	g, err := s.OpenGroup(name, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func gtWant(t *testing.T, g *Group, topic string, want map[int]uint64) {
	t.Helper()
	for p := 0; p < 8; p++ {
		got, ok := g.Position(topic, p)
		w, wok := want[p]
		if ok != wok || got != w {
			t.Errorf("Position(%s, %d) = %d, %v; want %d, %v", topic, p, got, ok, w, wok)
		}
	}
}

// A group's positions survive closing it: reopened, and read without the
// lock, they are what was committed, merged per topic.
func TestGroupCommitReopen(t *testing.T) {
	s, _ := gtStore(t)
	g := gtOpen(t, s, "billing")
	gtWant(t, g, "orders", nil)
	if err := g.Commit("orders", map[int]uint64{0: 1234, 1: 99}); err != nil {
		t.Fatal(err)
	}
	if err := g.Commit("orders", map[int]uint64{1: 100, 3: 7}); err != nil {
		t.Fatal(err)
	}
	if err := g.Commit("payments.v2", map[int]uint64{0: 5}); err != nil {
		t.Fatal(err)
	}
	gtWant(t, g, "orders", map[int]uint64{0: 1234, 1: 100, 3: 7})
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Commit("orders", map[int]uint64{0: 1}); err == nil {
		t.Error("Commit after Close succeeded")
	}

	dir := filepath.Join(s.Dir(), ".groups", "billing")
	b, err := os.ReadFile(filepath.Join(dir, "orders.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Topic      string            `json:"topic"`
		Partitions map[string]uint64 `json:"partitions"`
		Updated    string            `json:"updated"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("orders.json: %v\n%s", err, b)
	}
	if doc.Topic != "orders" || !maps.Equal(doc.Partitions, map[string]uint64{"0": 1234, "1": 100, "3": 7}) {
		t.Errorf("orders.json holds %s", b)
	}
	if u, err := time.Parse(time.RFC3339, doc.Updated); err != nil || time.Since(u) > time.Minute || !strings.HasSuffix(doc.Updated, "Z") {
		t.Errorf("updated %q: %v", doc.Updated, err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"orders.json", "payments.v2.json"}) {
		t.Errorf("group directory holds %q", names)
	}

	g2 := gtOpen(t, s, "billing")
	gtWant(t, g2, "orders", map[int]uint64{0: 1234, 1: 100, 3: 7})
	gtWant(t, g2, "payments.v2", map[int]uint64{0: 5})
	pos, err := groupPositions(s, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if len(pos) != 2 || !maps.Equal(pos["orders"], map[int]uint64{0: 1234, 1: 100, 3: 7}) || !maps.Equal(pos["payments.v2"], map[int]uint64{0: 5}) {
		t.Errorf("groupPositions = %v", pos)
	}
	commits, err := s.GroupCommits("billing")
	if err != nil || len(commits) != 2 || commits[0].Topic != "orders" || commits[1].Topic != "payments.v2" || commits[0].Updated.IsZero() {
		t.Errorf("GroupCommits = %+v, %v", commits, err)
	}
	// Going back is allowed (a reader told to start earlier).
	if err := g2.Commit("orders", map[int]uint64{0: 10}); err != nil {
		t.Fatal(err)
	}
	gtWant(t, g2, "orders", map[int]uint64{0: 10, 1: 100, 3: 7})
}

// The group directory is made durably, and a commit replaces the topic's
// file the durable way: temporary, sync, rename, directory sync. The same
// positions again write nothing.
func TestGroupCommitDurable(t *testing.T) {
	s, fault := gtStore(t)
	g := gtOpen(t, s, "g")
	groups := filepath.Join(s.Dir(), ".groups")
	dir := filepath.Join(groups, "g")
	if fault.dirSyncCount(groups) == 0 || fault.dirSyncCount(s.Dir()) == 0 {
		t.Errorf("the new group directory's parents were not synced: %q", fault.Events())
	}
	fault.reset()
	if err := g.Commit("orders", map[int]uint64{0: 3}); err != nil {
		t.Fatal(err)
	}
	tmp, final := filepath.Join(dir, ".commit.tmp"), filepath.Join(dir, "orders.json")
	want := []string{"create " + tmp, "write " + tmp, "sync " + tmp, "rename " + tmp + " " + final, "syncdir " + dir}
	got := fault.Events()
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("event %d: %q, want %q...", i, got[i], want[i])
		}
	}
	fault.reset()
	if err := g.Commit("orders", map[int]uint64{0: 3}); err != nil {
		t.Fatal(err)
	}
	if err := g.Commit("orders", nil); err != nil {
		t.Fatal(err)
	}
	if ev := fault.Events(); len(ev) != 0 {
		t.Errorf("committing the same positions again did %q", ev)
	}
}

// A commit that fails part-way (a short write, a failed sync or rename)
// leaves the old positions on disk and in the group, and no temporary.
func TestGroupCommitFailureKeepsOld(t *testing.T) {
	for _, tc := range []struct {
		name string
		arm  func(f *faultFS)
	}{
		{"short write", func(f *faultFS) { f.failWrite(".commit.tmp", 5, syscall.ENOSPC) }},
		{"sync", func(f *faultFS) { f.failSync(".commit.tmp", syscall.EIO) }},
		{"rename", func(f *faultFS) {
			f.renameHook = func(string, string) error { return syscall.EIO }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fault := gtStore(t)
			g := gtOpen(t, s, "g")
			if err := g.Commit("orders", map[int]uint64{0: 10, 1: 20}); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(s.Dir(), ".groups", "g", "orders.json")
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tc.arm(fault)
			err = g.Commit("orders", map[int]uint64{0: 11})
			if err == nil {
				t.Fatal("commit succeeded")
			}
			if !strings.Contains(err.Error(), "group g") || !strings.Contains(err.Error(), "orders") {
				t.Errorf("error does not name the group and topic: %v", err)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Errorf("orders.json changed: %s -> %s", before, after)
			}
			gtWant(t, g, "orders", map[int]uint64{0: 10, 1: 20})
			if _, err := os.Stat(filepath.Join(s.Dir(), ".groups", "g", ".commit.tmp")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("temporary left behind: %v", err)
			}
			g.Close()
			g2 := gtOpen(t, s, "g")
			gtWant(t, g2, "orders", map[int]uint64{0: 10, 1: 20})
			// Once the fault is gone, the same commit goes through.
			fault.renameHook = nil
			fault.syncErr = nil
			if err := g2.Commit("orders", map[int]uint64{0: 11}); err != nil {
				t.Fatal(err)
			}
			gtWant(t, g2, "orders", map[int]uint64{0: 11, 1: 20})
		})
	}
}

// One holder at a time: a second OpenGroup waits up to its limit and
// fails with *LockedError naming the group and the holder; after Close it
// gets the group, and a waiting one gets it as soon as it is free.
func TestGroupLock(t *testing.T) {
	s, _ := gtStore(t)
	g := gtOpen(t, s, "g")
	dir := filepath.Join(s.Dir(), ".groups", "g")

	start := time.Now()
	_, err := s.OpenGroup("g", 200*time.Millisecond)
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second OpenGroup: %v, want *LockedError", err)
	}
	if el := time.Since(start); el < 150*time.Millisecond || el > 5*time.Second {
		t.Errorf("second OpenGroup failed after %v, want about 200ms", el)
	}
	if le.What != "group g" || le.Path != dir || !strings.Contains(le.Error(), "group g") {
		t.Errorf("LockedError %+v: %v", le, le)
	}
	if ltProcLocksNames(t, dir, os.Getpid()) && le.Pid != os.Getpid() {
		t.Errorf("LockedError names pid %d, want %d", le.Pid, os.Getpid())
	}
	// The default wait is DefaultLockWait, not a single try.
	start = time.Now()
	if _, err := s.OpenGroup("g", 0); !errors.As(err, &le) {
		t.Fatalf("OpenGroup(0): %v", err)
	}
	if el := time.Since(start); el < DefaultLockWait-100*time.Millisecond {
		t.Errorf("OpenGroup(0) gave up after %v, want DefaultLockWait", el)
	}
	// Another group is independent.
	gtOpen(t, s, "other")

	got := make(chan error, 1)
	go func() {
		g2, err := s.OpenGroup("g", WaitForever)
		if err == nil {
			err = g2.Close()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("WaitForever returned while the group was held: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitForever did not get the group after Close")
	}
	g3, err := s.OpenGroup("g", 0)
	if err != nil {
		t.Fatal(err)
	}
	g3.Close()
}

// A group file that does not check out is an error naming it, from
// OpenGroup and GroupCommits alike: never a silent reset.
func TestGroupCorruptFile(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"garbage", "not json\n", "invalid character"},
		{"empty", "", "unexpected end of JSON input"},
		{"truncated", `{"topic":"orders","partitions":{"0":12`, "unexpected end"},
		{"trailing", `{"topic":"orders","partitions":{"0":12}}}`, "invalid character"},
		{"other topic", `{"topic":"payments","partitions":{"0":12}}`, `topic field is "payments"`},
		{"no topic", `{"partitions":{"0":12}}`, "topic field is none"},
		{"no partitions", `{"topic":"orders"}`, "no partitions field"},
		{"bad partition", `{"topic":"orders","partitions":{"x":12}}`, `"x" is not a partition number`},
		{"negative", `{"topic":"orders","partitions":{"0":-1}}`, "cannot unmarshal"},
		{"bad time", `{"topic":"orders","partitions":{"0":1},"updated":"yesterday"}`, "updated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := gtStore(t)
			g := gtOpen(t, s, "g")
			if err := g.Commit("orders", map[int]uint64{0: 1}); err != nil {
				t.Fatal(err)
			}
			g.Close()
			path := filepath.Join(s.Dir(), ".groups", "g", "orders.json")
			if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := s.OpenGroup("g", 0)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("OpenGroup: %v; want an error naming %s and saying %q", err, path, tc.want)
			}
			if _, err := groupPositions(s, "g"); err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("groupPositions: %v", err)
			}
			// The lock was let go: once the file is fixed, the group opens.
			os.Remove(path)
			gtOpen(t, s, "g")
		})
	}
}

// Groups lists group directories with valid names; entries of a group
// directory that are not TOPIC.json are ignored.
func TestGroupsList(t *testing.T) {
	s, _ := gtStore(t)
	if names, err := s.Groups(); err == nil || names != nil {
		t.Errorf("Groups of a missing data directory: %q, %v", names, err)
	}
	if err := os.MkdirAll(s.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if names, err := s.Groups(); err != nil || names != nil {
		t.Errorf("Groups without .groups: %q, %v", names, err)
	}
	for _, n := range []string{"b", "a.1"} {
		g := gtOpen(t, s, n)
		if err := g.Commit("t", map[int]uint64{0: 1}); err != nil {
			t.Fatal(err)
		}
		g.Close()
	}
	groups := filepath.Join(s.Dir(), ".groups")
	os.Mkdir(filepath.Join(groups, ".hidden"), 0o755)
	os.WriteFile(filepath.Join(groups, "file"), nil, 0o644)
	os.WriteFile(filepath.Join(groups, "b", ".commit.tmp"), []byte("half"), 0o644)
	os.WriteFile(filepath.Join(groups, "b", "t.json~"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(groups, "b", ".x.json"), []byte("x"), 0o644)
	names, err := s.Groups()
	if err != nil || !slices.Equal(names, []string{"a.1", "b"}) {
		t.Errorf("Groups = %q, %v", names, err)
	}
	if pos, err := groupPositions(s, "b"); err != nil || len(pos) != 1 || pos["t"][0] != 1 {
		t.Errorf("groupPositions(b) = %v, %v", pos, err)
	}
	if _, err := groupPositions(s, "nope"); !errors.Is(err, ErrGroupNotFound) {
		t.Errorf("groupPositions(nope): %v", err)
	}
}

// Names follow the topic rules, checked before any file is touched.
func TestGroupBadName(t *testing.T) {
	s, _ := gtStore(t)
	for _, name := range []string{"", ".", "..", "../x", "a/b", ".hidden", strings.Repeat("x", 250)} {
		if _, err := s.OpenGroup(name, 0); !errors.Is(err, format.ErrTopicName) {
			t.Errorf("OpenGroup(%q): %v", name, err)
		}
		if _, err := groupPositions(s, name); !errors.Is(err, format.ErrTopicName) {
			t.Errorf("groupPositions(%q): %v", name, err)
		}
	}
	g := gtOpen(t, s, "g")
	if err := g.Commit("../x", map[int]uint64{0: 1}); !errors.Is(err, format.ErrTopicName) {
		t.Errorf("Commit to a bad topic: %v", err)
	}
	if _, err := os.Stat(s.Dir()); err != nil {
		t.Fatal(err)
	}
	names, _ := os.ReadDir(filepath.Join(s.Dir(), ".groups"))
	if len(names) != 1 {
		t.Errorf(".groups holds %d entries, want only g", len(names))
	}
}

// A 249-byte topic name still fits: the temporary's name does not grow
// with it.
func TestGroupLongTopic(t *testing.T) {
	s, _ := gtStore(t)
	g := gtOpen(t, s, strings.Repeat("g", format.MaxTopicLen))
	topic := strings.Repeat("t", format.MaxTopicLen)
	if err := g.Commit(topic, map[int]uint64{2: 42}); err != nil {
		t.Fatal(err)
	}
	g.Close()
	g = gtOpen(t, s, strings.Repeat("g", format.MaxTopicLen))
	gtWant(t, g, topic, map[int]uint64{2: 42})
}

// groupPositions is what group name has committed: topic -> partition ->
// next offset.
func groupPositions(s *Store, name string) (map[string]map[int]uint64, error) {
	commits, err := s.GroupCommits(name)
	if err != nil {
		return nil, err
	}
	pos := make(map[string]map[int]uint64, len(commits))
	for _, c := range commits {
		pos[c.Topic] = c.Partitions
	}
	return pos, nil
}
