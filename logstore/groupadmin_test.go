package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/logstore/internal/fsx"
)

// gaGroup makes group name with a position in topic orders.
func gaGroup(t *testing.T, s *Store, name string) {
	t.Helper()
	g := gtOpen(t, s, name)
	if err := g.Commit("orders", map[int]uint64{0: 3}); err != nil {
		t.Fatal(err)
	}
	g.Close()
}

// A delete renames the group aside and syncs that before it removes
// anything: a crash at any point leaves the group whole or gone.
func TestDeleteGroupRenamesAsideFirst(t *testing.T) {
	s, fault := gtStore(t)
	gaGroup(t, s, "billing")
	fault.reset()
	if err := s.DeleteGroup("billing", 0); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(s.dir, groupsDir)
	aside := filepath.Join(parent, deletedGroupPrefix+"billing")
	ev := fault.Events()
	rename := slices.Index(ev, "rename "+filepath.Join(parent, "billing")+" "+aside)
	sync := slices.Index(ev, "syncdir "+parent)
	firstRemove := slices.IndexFunc(ev, func(e string) bool { return strings.HasPrefix(e, "remove ") })
	if rename < 0 || sync < rename || firstRemove < sync {
		t.Errorf("events %q: want the rename aside, then the directory synced, then removes", ev)
	}
	if _, err := s.GroupCommits("billing"); !errors.Is(err, ErrGroupNotFound) {
		t.Errorf("after delete: %v", err)
	}
	if _, err := os.Stat(aside); !os.IsNotExist(err) {
		t.Errorf("aside left: %v", err)
	}
	if err := s.DeleteGroup("billing", 0); !errors.Is(err, ErrGroupNotFound) {
		t.Errorf("second delete: %v", err)
	}
}

// A delete that fails before its rename leaves the group whole; after
// it, gone: no state shows half a group.
func TestDeleteGroupFailures(t *testing.T) {
	s, fault := gtStore(t)
	gaGroup(t, s, "billing")
	fault.mu.Lock()
	fault.renameHook = func(string, string) error { return syscall.EIO }
	fault.mu.Unlock()
	if err := s.DeleteGroup("billing", 0); err == nil {
		t.Fatal("delete with a failing rename succeeded")
	}
	if c, err := s.GroupCommits("billing"); err != nil || len(c) != 1 || c[0].Partitions[0] != 3 {
		t.Errorf("after a failed rename: %v, %v", c, err)
	}
	fault.mu.Lock()
	fault.renameHook = nil
	fault.mu.Unlock()

	// A crash after the rename leaves the directory aside: no group, and
	// the next delete of any group removes it.
	parent := filepath.Join(s.dir, groupsDir)
	aside := filepath.Join(parent, deletedGroupPrefix+"billing")
	if err := os.Rename(filepath.Join(parent, "billing"), aside); err != nil {
		t.Fatal(err)
	}
	if names, err := s.Groups(); err != nil || len(names) != 0 {
		t.Errorf("groups with one left aside: %q, %v", names, err)
	}
	gaGroup(t, s, "other")
	if err := s.DeleteGroup("other", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(aside); !os.IsNotExist(err) {
		t.Errorf("left aside by a crash, still there: %v", err)
	}
}

// A group a reader holds is not deleted, and the error names the holder.
func TestDeleteGroupHeld(t *testing.T) {
	s, _ := gtStore(t)
	gaGroup(t, s, "billing")
	gtOpen(t, s, "billing")
	err := s.DeleteGroup("billing", 1)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.Pid != os.Getpid() {
		t.Fatalf("delete of a held group: %v", err)
	}
	if c, err := s.GroupCommits("billing"); err != nil || len(c) != 1 {
		t.Errorf("held group after refused delete: %v, %v", c, err)
	}
}

// Reset clamps to the partition and says so, including a shift below 0.
func TestResetGroupClamps(t *testing.T) {
	s, _ := gtStore(t)
	if err := s.CreateTopic("orders", 2, Settings{}); err != nil {
		t.Fatal(err)
	}
	gaGroup(t, s, "billing")
	plan, err := s.ResetGroup("billing", ResetScope{Partition: -1}, ResetTarget{Kind: ResetShiftBy, Shift: -10}, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Partition 1 never committed: nothing to shift.
	if len(plan) != 1 || plan[0].Partition != 0 || plan[0].New != 0 || plan[0].Clamp != ClampedToStart || plan[0].Current != 3 {
		t.Errorf("shift -10: %+v", plan)
	}
	plan, err = s.ResetGroup("billing", ResetScope{Partition: -1}, ResetTarget{Kind: ResetToOffset, Offset: 5}, true, 0)
	if err != nil || len(plan) != 2 || plan[1].Clamp != ClampedToEnd || plan[1].New != 0 || plan[1].HasCurrent {
		t.Errorf("to offset 5: %+v, %v", plan, err)
	}
	c, err := s.GroupCommits("billing")
	if err != nil || c[0].Partitions[0] != 0 || len(c[0].Partitions) != 1 {
		t.Errorf("positions %v, %v: want 0 for partition 0 only (the second reset was a dry run)", c, err)
	}
}

// recover removes what a crashed group delete left aside, and keeps one a
// delete still holds.
func TestRecoverFinishesGroupDelete(t *testing.T) {
	s, _ := gtStore(t)
	gaGroup(t, s, "billing")
	gaGroup(t, s, "audit")
	parent := filepath.Join(s.dir, groupsDir)
	crashed := filepath.Join(parent, deletedGroupPrefix+"billing")
	running := filepath.Join(parent, deletedGroupPrefix+"audit")
	for _, name := range []string{"billing", "audit"} {
		if err := os.Rename(filepath.Join(parent, name), filepath.Join(parent, deletedGroupPrefix+name)); err != nil {
			t.Fatal(err)
		}
	}
	held, err := fsx.TryLock(running)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	left, err := s.RecoverDataDir(RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range left {
		got = append(got, filepath.Base(l.Path)+" kept="+strconv.FormatBool(l.Kept))
	}
	want := []string{deletedGroupPrefix + "audit kept=true", deletedGroupPrefix + "billing kept=false"}
	if !slices.Equal(got, want) {
		t.Errorf("leftovers %q, want %q", got, want)
	}
	if _, err := os.Stat(crashed); !os.IsNotExist(err) {
		t.Errorf("crashed delete's directory still there: %v", err)
	}
	if _, err := os.Stat(running); err != nil {
		t.Errorf("running delete's directory removed: %v", err)
	}
}

// A reader waiting for a group's lock while the group is deleted gets the
// group as it is now, new and empty, not an error about the directory the
// delete took away.
func TestOpenGroupWaitingThroughDelete(t *testing.T) {
	s, _ := gtStore(t)
	gaGroup(t, s, "billing")
	g := gtOpen(t, s, "billing")
	type opened struct {
		g   *Group
		err error
	}
	done := make(chan opened, 1)
	go func() {
		g, err := s.OpenGroup("billing", time.Minute)
		done <- opened{g, err}
	}()
	// Let the second reader open the directory and wait on its lock (if it
	// comes later, it finds no group and makes one: the same outcome).
	time.Sleep(100 * time.Millisecond)
	dir := s.GroupDir("billing")
	aside := filepath.Join(filepath.Dir(dir), deletedGroupPrefix+"billing")
	if err := os.Rename(dir, aside); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(aside); err != nil {
		t.Fatal(err)
	}
	g.Close()
	got := <-done
	if got.err != nil {
		t.Fatalf("OpenGroup waiting through a delete: %v", got.err)
	}
	defer got.g.Close()
	if _, ok := got.g.Position("orders", 0); ok {
		t.Errorf("the group came back with a position after its delete")
	}
	if err := got.g.Commit("orders", map[int]uint64{0: 5}); err != nil {
		t.Fatalf("commit to the new group: %v", err)
	}
	if c, err := s.GroupCommits("billing"); err != nil || len(c) != 1 || c[0].Partitions[0] != 5 {
		t.Errorf("after the commit: %v, %v", c, err)
	}
}
