package logstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
)

// Test functions of this file carry an fs prefix.

// fsInotifyInstances counts this process's inotify descriptors.
func fsInotifyInstances(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	n := 0
	for _, e := range es {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// fsNext returns the set's next record and the follower it came from,
// failing unless one comes within 5 s.
func fsNext(t *testing.T, s *FollowSet) (*Follower, Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, ok := s.Next(ctx)
	if !ok {
		if f != nil {
			t.Fatalf("%s failed: %v", f.name, f.Err())
		}
		t.Fatal("no record within 5s")
	}
	return f, *f.Record()
}

// A set following 300 partitions uses one inotify instance with a watch
// on each directory, holds a bounded number of descriptors however many
// partitions it follows, and returns every record, each partition's in
// order, and then the next one appended anywhere.
func TestFollowSetManyPartitions(t *testing.T) {
	const parts, each = 300, 3
	s := Open(filepath.Join(t.TempDir(), "data"))
	if err := s.CreateTopic("t", parts, Settings{}); err != nil {
		t.Fatal(err)
	}
	write := func(p int, from, to uint64) {
		w, err := s.OpenWriter("t", p, WriterOptions{Sync: SyncNever})
		if err != nil {
			t.Fatal(err)
		}
		ftAppend(t, w, from, to)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for p := range parts {
		write(p, 0, each)
	}
	fds, instances := ftOpenFDs(t), fsInotifyInstances(t)
	var warns ftWarnings
	set := NewFollowSet(FollowOptions{Poll: time.Hour, Warn: warns.warn})
	defer set.Close()
	set.recheck = time.Hour // only inotify may wake it
	names := map[*Follower]int{}
	for p := range parts {
		f, err := set.Add(s.PartitionDir("t", p), fmt.Sprintf("t/%d", p), 0)
		if err != nil {
			t.Fatal(err)
		}
		names[f] = p
	}
	if set.watch == nil {
		t.Skip("inotify unavailable here")
	}
	if n := fsInotifyInstances(t) - instances; n != 1 {
		t.Errorf("%d inotify instances for %d partitions, want 1", n, parts)
	}
	next := make([]uint64, parts)
	for range parts * each {
		f, r := fsNext(t, set)
		p := names[f]
		ftCheck(t, r, next[p])
		next[p]++
	}
	if held, limit := ftOpenFDs(t)-fds, 2*set.limit+2; held > limit {
		t.Errorf("%d descriptors held following %d partitions, want at most %d", held, parts, limit)
	}
	write(150, each, each+1)
	f, r := fsNext(t, set)
	if names[f] != 150 {
		t.Fatalf("record from %s, want t/150", f.name)
	}
	ftCheck(t, r, each)
	if ws := warns.all(); len(ws) > 0 {
		t.Errorf("warnings: %q", ws)
	}
}

// A watch that cannot be added (here: the instance's descriptor closed;
// in life ENOSPC past fs.inotify.max_user_watches) makes the partitions
// concerned poll, with one warning for them all.
func TestFollowSetWatchFails(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "data"))
	if err := s.CreateTopic("t", 3, Settings{}); err != nil {
		t.Fatal(err)
	}
	var warns ftWarnings
	set := NewFollowSet(FollowOptions{Poll: 2 * time.Millisecond, Warn: warns.warn})
	defer set.Close()
	first, err := set.Add(s.PartitionDir("t", 0), "t/0", 0)
	if err != nil {
		t.Fatal(err)
	}
	if set.watch == nil {
		t.Skip("inotify unavailable here")
	}
	set.watch.Close()
	for p := 1; p < 3; p++ {
		if _, err := set.Add(s.PartitionDir("t", p), fmt.Sprintf("t/%d", p), 0); err != nil {
			t.Fatal(err)
		}
	}
	ws := warns.all()
	if len(ws) != 1 || !strings.Contains(ws[0], "cannot watch t/1 with inotify") || !strings.Contains(ws[0], "polling it, and any other partition it cannot watch, every 2ms") {
		t.Fatalf("warnings %q", ws)
	}
	w, err := s.OpenWriter("t", 2, WriterOptions{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ftAppend(t, w, 0, 5)
	for o := range uint64(5) {
		f, r := fsNext(t, set)
		if f.name != "t/2" {
			t.Fatalf("record from %s, want t/2", f.name)
		}
		ftCheck(t, r, o)
	}
	_ = first
}

// fsOtherRecords are records [from, to) of another log than ftRecords':
// the same offsets, other timestamps and values.
func fsOtherRecords(from, to uint64) []byte {
	var b []byte
	for o := from; o < to; o++ {
		b = format.AppendRecord(b, &format.Record{Offset: o, Timestamp: ftT0 + 1e9 + int64(o), Value: fmt.Appendf(nil, "other %d", o)})
	}
	return b
}

func fsCheckOther(t *testing.T, r Record, o uint64) {
	t.Helper()
	if r.Offset != o || string(r.Value) != fmt.Sprintf("other %d", o) {
		t.Fatalf("record {off %d value %q}, want offset %d of the other log", r.Offset, r.Value, o)
	}
}

// A topic deleted and created again under a follower: the new partition
// directory holds another log, read from its start (as tail -F reads a
// file replaced under its name), with a warning; not from the offset the
// follower had reached in the old one.
func TestFollowReplacedByAnotherLog(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		s, dir := ftStore(t)
		ftWrite(t, s, 0, 0, 4)
		var warns ftWarnings
		opts.Warn = warns.warn
		opts.Poll = 2 * time.Millisecond // while the directory is gone
		f := ftFollow(t, dir, 0, opts)
		tune(f)
		ftExpect(t, f, 0, 4)
		if err := os.RemoveAll(filepath.Dir(dir)); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateTopic("t", 1, Settings{}); err != nil {
			t.Fatal(err)
		}
		ftAppendFile(t, ftLog(dir, 0), fsOtherRecords(0, 6))
		for o := range uint64(6) {
			fsCheckOther(t, ftNext(t, f), o)
		}
		ftNothing(t, f, 20*time.Millisecond)
		ws := warns.all()
		if len(ws) == 0 || !strings.Contains(ws[len(ws)-1], "holds another log now (its offset 3 is another record); reading it from its start") {
			t.Fatalf("warnings %q", ws)
		}
	})
}

// fsFollowing writes records [0, n) into t/0's first segment and returns
// its .log and a follower that has read them, collecting its warnings.
func fsFollowing(t *testing.T, opts FollowOptions, tune func(*Follower), n uint64) (string, *Follower, *ftWarnings) {
	t.Helper()
	_, dir := ftStore(t)
	log := ftLog(dir, 0)
	ftAppendFile(t, log, ftRecords(0, n))
	warns := new(ftWarnings)
	opts.Warn = warns.warn
	f := ftFollow(t, dir, 0, opts)
	tune(f)
	ftExpect(t, f, 0, n)
	return log, f, warns
}

// The segments of a partition replaced in the same directory: another
// log is read from its start; the same log in new files (as recover
// --salvage rewrites a segment) is read on from where the follower was,
// nothing twice.
func TestFollowRestartedInPlace(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		log, f, warns := fsFollowing(t, opts, tune, 10)

		// The same records in a new file, then more of them.
		replace := func(b []byte) {
			t.Helper()
			if err := os.WriteFile(log+".new", b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(log+".new", log); err != nil {
				t.Fatal(err)
			}
		}
		replace(ftRecords(0, 10))
		ftNothing(t, f, 20*time.Millisecond)
		ftAppendFile(t, log, ftRecords(10, 12))
		ftExpect(t, f, 10, 12)
		if ws := warns.all(); len(ws) > 0 {
			t.Fatalf("warnings after the same log was rewritten: %q", ws)
		}

		replace(fsOtherRecords(0, 3))
		for o := range uint64(3) {
			fsCheckOther(t, ftNext(t, f), o)
		}
		ws := warns.all()
		if len(ws) != 1 || !strings.Contains(ws[0], "holds another log now (its segments were replaced: it has no offset 11); reading it from its start") {
			t.Fatalf("warnings %q", ws)
		}
	})
}

// The open segment cut below the records read, then written on with
// other records: the partition's offsets went back, and it is read from
// its start again, as tail -f reads a file truncated under it.
func TestFollowCutBelowRead(t *testing.T) {
	ftModes(t, func(t *testing.T, opts FollowOptions, tune func(*Follower)) {
		log, f, warns := fsFollowing(t, opts, tune, 10)
		if err := os.Truncate(log, int64(len(ftRecords(0, 5)))); err != nil {
			t.Fatal(err)
		}
		ftAppendFile(t, log, fsOtherRecords(5, 8))
		ftExpect(t, f, 0, 5)
		for o := uint64(5); o < 8; o++ {
			fsCheckOther(t, ftNext(t, f), o)
		}
		ws := warns.all()
		if len(ws) != 1 || !strings.Contains(ws[0], "holds another log now (its segment was cut below the records read: it has no offset 9); reading it from its start") {
			t.Fatalf("warnings %q", ws)
		}
	})
}
