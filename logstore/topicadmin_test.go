package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func adminStore(t *testing.T, partitions int) (*Store, *faultFS) {
	t.Helper()
	fault := newFaultFS()
	s := &Store{dir: filepath.Join(t.TempDir(), "data"), fs: fault}
	if err := s.CreateTopic("t", partitions, Settings{RollAfter: time.Hour}); err != nil {
		t.Fatal(err)
	}
	return s, fault
}

// The topic is renamed aside and the data directory synced before any of
// its files is removed: a crash at any point leaves the topic whole or a
// hidden directory recover removes.
func TestDeleteTopicRenamesAsideFirst(t *testing.T) {
	s, fault := adminStore(t, 3)
	w, err := s.OpenWriter("t", 1, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(1, nil, []byte("x")); err != nil {
		t.Fatal(err)
	}
	var locked *LockedError
	if _, err := s.LockTopicForDelete("t", 0); !errors.As(err, &locked) || locked.What != "partition t/1" || locked.Pid != os.Getpid() {
		t.Fatalf("with a writer on t/1: %v, want a *LockedError naming partition t/1 and pid %d", err, os.Getpid())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	start := len(fault.Events())
	d, err := s.LockTopicForDelete("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.Size.Partitions != 3 || d.Size.Bytes == 0 {
		t.Errorf("size %+v, want 3 partitions and the record's bytes", d.Size)
	}
	if err := d.Delete(); err != nil {
		t.Fatal(err)
	}
	events := fault.Events()[start:]
	rename := slices.IndexFunc(events, func(e string) bool {
		return strings.HasPrefix(e, "rename "+filepath.Join(s.dir, "t")+" "+filepath.Join(s.dir, deletePrefix+"t-"))
	})
	sync := slices.Index(events, "syncdir "+s.dir)
	remove := slices.IndexFunc(events, func(e string) bool { return strings.HasPrefix(e, "remove ") })
	if rename < 0 || sync < rename || remove < sync {
		t.Fatalf("want the rename aside, then the data directory synced, then removals; got %q", events)
	}
	if last := events[len(events)-1]; last != "syncdir "+s.dir {
		t.Errorf("the removal is not made durable: last event %q", last)
	}
	if entries, _ := os.ReadDir(s.dir); len(entries) != 0 {
		t.Errorf("the data directory still holds %v", entries)
	}
	if _, err := s.LockTopicForDelete("t", 0); !errors.Is(err, ErrTopicNotFound) {
		t.Errorf("deleting it again: %v, want ErrTopicNotFound", err)
	}
}

// What a killed delete left is removed by RecoverDataDir, unless the
// delete still holds it.
func TestRecoverFinishesDelete(t *testing.T) {
	s, _ := adminStore(t, 1)
	aside := filepath.Join(s.dir, deletePrefix+"t-0123456789ab.tmp")
	if err := os.Rename(filepath.Join(s.dir, "t"), aside); err != nil {
		t.Fatal(err)
	}
	held, err := lockDir(aside, "topic t", 0)
	if err != nil {
		t.Fatal(err)
	}
	left, err := s.RecoverDataDir(RecoverOptions{})
	if err != nil || len(left) != 1 || !left[0].Kept || left[0].What != "topic directory of a delete still running" {
		t.Fatalf("while held: %+v, %v", left, err)
	}
	held.Unlock()
	left, err = s.RecoverDataDir(RecoverOptions{})
	if err != nil || len(left) != 1 || left[0].Kept || left[0].Path != aside || left[0].What != "topic directory of an interrupted delete" {
		t.Fatalf("%+v, %v", left, err)
	}
	if _, err := os.Lstat(aside); !os.IsNotExist(err) {
		t.Fatalf("%s is still there: %v", aside, err)
	}
}

func TestAlterTopic(t *testing.T) {
	s, _ := adminStore(t, 1)
	old, now, err := s.AlterTopic("t", func(st Settings) Settings {
		st.RollAfter, st.Retention = 0, 48*time.Hour
		return st
	}, true, 0)
	if err != nil || old != (Settings{RollAfter: time.Hour}) || now != (Settings{Retention: 48 * time.Hour}) {
		t.Fatalf("dry run: %+v -> %+v, %v", old, now, err)
	}
	if tp, _ := s.Topic("t"); tp.Settings != old {
		t.Fatalf("a dry run stored %+v", tp.Settings)
	}
	if _, _, err := s.AlterTopic("t", func(Settings) Settings { return now }, false, 0); err != nil {
		t.Fatal(err)
	}
	if tp, _ := s.Topic("t"); tp.Settings != now {
		t.Fatalf("stored %+v, want %+v", tp.Settings, now)
	}
	if _, _, err := s.AlterTopic("nosuch", func(st Settings) Settings { return st }, false, 0); !errors.Is(err, ErrTopicNotFound) {
		t.Errorf("a missing topic: %v", err)
	}
}

func TestAddPartitions(t *testing.T) {
	s, _ := adminStore(t, 2)
	if old, err := s.AddPartitions("t", 1, 0); !errors.Is(err, ErrShrink) || old != 2 {
		t.Fatalf("shrinking: %d, %v", old, err)
	}
	if old, err := s.AddPartitions("t", 4, 0); err != nil || old != 2 {
		t.Fatalf("%d, %v", old, err)
	}
	tp, err := s.Topic("t")
	if err != nil || tp.Partitions != 4 {
		t.Fatalf("%+v, %v", tp, err)
	}
	w, err := s.OpenWriter("t", 3, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(1, nil, []byte("x")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if entries, _ := os.ReadDir(tp.Dir); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), addPrefix) }) {
		t.Errorf("a build directory is left in %s", tp.Dir)
	}
	// A partition being built when add-partitions died: recover removes it.
	build := filepath.Join(tp.Dir, addPrefix+"4-0123456789ab.tmp")
	if err := os.Mkdir(build, 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := s.RecoverTopic("t", -1, RecoverOptions{})
	if err != nil || len(rep.Leftovers) != 1 || rep.Leftovers[0].Path != build || rep.Leftovers[0].What != "partition an interrupted add-partitions was building" {
		t.Fatalf("%+v, %v", rep.Leftovers, err)
	}
}
