package logstore

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// Helpers of this file carry an nt prefix: other test files of the
// package are written at the same time and must not clash.

// ntSource is a store with topic t (stored settings), two partitions of
// 30 records each, several segments apiece.
func ntSource(t *testing.T) *Store {
	t.Helper()
	s := Open(filepath.Join(t.TempDir(), "src"))
	if err := s.CreateTopic("t", 2, Settings{SegmentBytes: 300, Retention: time.Hour}); err != nil {
		t.Fatal(err)
	}
	for p := range 2 {
		w, err := s.OpenWriter("t", p, WriterOptions{Sync: SyncNever})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			if _, err := w.Append(1700000000000000000+int64(i), nil, []byte("a value of some length")); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// ntCopyTree copies the directory tree from into a new directory, as a
// SIGKILL at this moment would leave it (the page cache survives one).
func ntCopyTree(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(to, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", from, to, err, out)
	}
	return to
}

// ntTopics lists the topics and half-made topics of a store.
func ntTopics(t *testing.T, s *Store) (topics, half []string) {
	t.Helper()
	topics, half, err := s.listTopics()
	if err != nil {
		t.Fatal(err)
	}
	return topics, half
}

// A copy or import into a new topic killed at any step of its work
// leaves a data directory whose listing holds the topic whole or not at
// all, never a topic without partitions; recover then removes what the
// dead build left, and changes nothing else.
func TestNewTopicKilledAtEveryStep(t *testing.T) {
	src := ntSource(t)
	var stream bytes.Buffer
	if _, err := src.ExportPartition("t", 1, &stream, CopyOptions{ToPartition: -1}); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"copy", "import"} {
		t.Run(how, func(t *testing.T) {
			fault := newFaultFS()
			dst := &Store{dir: filepath.Join(t.TempDir(), "data"), fs: fault}
			if err := dst.CreateTopic("other", 1, Settings{}); err != nil {
				t.Fatal(err)
			}
			// Before every change of the copy's, the state a kill there
			// would leave.
			var states []string
			snap := func(string) error {
				states = append(states, ntCopyTree(t, dst.dir))
				return nil
			}
			fault.mkdirErr = func(p string) error { return snap(p) }
			fault.openErr = func(p string, flag int) error {
				if flag&os.O_CREATE != 0 {
					return snap(p)
				}
				return nil
			}
			fault.renameHook = func(a, b string) error { return snap(a) }
			var err error
			if how == "copy" {
				_, err = src.CopyPartition("t", 1, dst, CopyOptions{ToTopic: "n", ToPartition: 0})
			} else {
				_, err = dst.ImportPartition("n", 0, bytes.NewReader(stream.Bytes()), CopyOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			fault.mkdirErr, fault.openErr, fault.renameHook = nil, nil, nil
			states = append(states, ntCopyTree(t, dst.dir))
			placed := 0
			for i, dir := range states {
				s := Open(dir)
				topics, half := ntTopics(t, s)
				switch {
				case len(half) > 0:
					t.Fatalf("killed before step %d: half-made topics %v", i, half)
				case slices.Equal(topics, []string{"n", "other"}):
					placed++
					ntWantWhole(t, s, src)
				case !slices.Equal(topics, []string{"other"}):
					t.Fatalf("killed before step %d: topics %v", i, topics)
				}
				left, err := s.RecoverDataDir(RecoverOptions{})
				if err != nil {
					t.Fatalf("killed before step %d: recover: %v", i, err)
				}
				for _, l := range left {
					if l.Kept {
						t.Errorf("killed before step %d: recover kept %s (%s)", i, l.Path, l.What)
					}
				}
				for _, topic := range topics {
					if _, err := s.RecoverTopic(topic, -1, RecoverOptions{}); err != nil {
						t.Fatalf("killed before step %d: recover %s: %v", i, topic, err)
					}
				}
				if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(m) > 0 {
					t.Fatalf("killed before step %d: recover left %v", i, m)
				}
				if after, _ := ntTopics(t, s); !slices.Equal(after, topics) {
					t.Fatalf("killed before step %d: recover made topics %v of %v", i, after, topics)
				}
			}
			if placed != 1 || len(states) < 10 {
				t.Errorf("%d states, the topic whole in %d; want it only in the last", len(states), placed)
			}
		})
	}
}

// ntWantWhole fails unless topic n of s is partition 1 of t in src, with
// t's settings.
func ntWantWhole(t *testing.T, s, src *Store) {
	t.Helper()
	top, err := s.Topic("n")
	if err != nil || top.Partitions != 1 || top.Settings.Retention != time.Hour || top.Settings.SegmentBytes != 300 {
		t.Fatalf("topic n: %+v, %v", top, err)
	}
	got, want := ntFiles(t, s.PartitionDir("n", 0)), ntFiles(t, src.PartitionDir("t", 1))
	if len(got) != len(want) {
		t.Fatalf("topic n holds %d files, the source %d", len(got), len(want))
	}
	for name, b := range want {
		if got[name] != b {
			t.Fatalf("topic n: %s differs from the source's", name)
		}
	}
}

// ntFiles maps the names of the files in dir to their contents.
func ntFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

// Two copies into the same new topic at once, of different partitions:
// the first to finish makes the topic, the other puts its partition into
// it; the topic has the source's settings and both partitions. Of the
// same partition: one is placed, the other refused (ErrPartitionExists).
// Neither leaves anything behind.
func TestNewTopicConcurrentCopies(t *testing.T) {
	src := ntSource(t)
	for _, samePartition := range []bool{false, true} {
		fault := newFaultFS()
		dst := &Store{dir: filepath.Join(t.TempDir(), "data"), fs: fault}
		// The first copy, about to rename its topic into place, lets the
		// second one run whole first.
		var second error
		var once sync.Once
		fault.renameHook = func(a, b string) error {
			if filepath.Dir(a) == dst.dir && b == filepath.Join(dst.dir, "n") {
				once.Do(func() {
					to := 1
					if samePartition {
						to = 0
					}
					_, second = src.CopyPartition("t", 1, Open(dst.dir), CopyOptions{ToTopic: "n", ToPartition: to})
				})
			}
			return nil
		}
		_, first := src.CopyPartition("t", 0, dst, CopyOptions{ToTopic: "n", ToPartition: 0})
		if second != nil {
			t.Fatalf("same partition %v: the copy that placed the topic first: %v", samePartition, second)
		}
		top, err := dst.Topic("n")
		if err != nil || top.Settings.SegmentBytes != 300 {
			t.Fatalf("same partition %v: topic n: %+v, %v", samePartition, top, err)
		}
		if samePartition {
			if !errors.Is(first, ErrPartitionExists) || top.Partitions != 1 {
				t.Errorf("the copy that came second: %v, %d partitions; want ErrPartitionExists and 1", first, top.Partitions)
			}
		} else if first != nil || top.Partitions != 2 {
			t.Errorf("the copy that came second: %v, %d partitions; want both placed", first, top.Partitions)
		}
		var left []string
		filepath.WalkDir(dst.dir, func(p string, _ os.DirEntry, _ error) error {
			if strings.HasSuffix(p, ".tmp") {
				left = append(left, p)
			}
			return nil
		})
		if len(left) > 0 {
			t.Errorf("same partition %v: left behind %v", samePartition, left)
		}
	}
}

// Commands over every topic list neither the half-made topic directories
// an older version's interrupted copy left nor empty ones; recover
// removes them, keeping one a running copy builds in.
func TestHalfMadeTopics(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "data"))
	if err := s.CreateTopic("whole", 1, Settings{}); err != nil {
		t.Fatal(err)
	}
	for dir, files := range map[string][]string{
		"empty":    nil,
		"settings": {settingsFile},
		"half":     {settingsFile + ".tmp"},
		"dead":     {settingsFile, ".copy-0-000000000000.tmp/" + format.SegmentName(0, format.LogExt)},
		"live":     {settingsFile, ".copy-0-000000000001.tmp/" + format.SegmentName(0, format.LogExt)},
		"foreign":  {"README"},
	} {
		if err := os.MkdirAll(filepath.Join(s.dir, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			p := filepath.Join(s.dir, dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	live, err := fsx.TryLock(filepath.Join(s.dir, "live", ".copy-0-000000000001.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Unlock()
	topics, half := ntTopics(t, s)
	if !slices.Equal(topics, []string{"foreign", "whole"}) || !slices.Equal(half, []string{"dead", "empty", "half", "live", "settings"}) {
		t.Fatalf("topics %v, half-made %v", topics, half)
	}
	if _, err := s.Topic("settings"); !errors.Is(err, ErrPartitionNotFound) || !strings.Contains(err.Error(), "'seglog recover' removes it") {
		t.Errorf("Topic of a half-made one: %v", err)
	}
	if _, err := s.Topic("foreign"); err == nil || strings.Contains(err.Error(), "recover") {
		t.Errorf("Topic of a foreign directory without partitions: %v", err)
	}
	dry, err := s.RecoverDataDir(RecoverOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, half := ntTopics(t, s); len(half) != 5 {
		t.Fatalf("the dry run removed half-made topics: %v left", half)
	}
	left, err := s.RecoverDataDir(RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(dry) != len(left) || len(left) != 5 {
		t.Errorf("dry run %+v, run %+v; want the 5 half-made topics", dry, left)
	}
	for _, l := range left {
		if l.Kept != (filepath.Base(l.Path) == "live") {
			t.Errorf("%s: kept %v", l.Path, l.Kept)
		}
	}
	if topics, half := ntTopics(t, s); !slices.Equal(topics, []string{"foreign", "whole"}) || !slices.Equal(half, []string{"live"}) {
		t.Errorf("after recover: topics %v, half-made %v", topics, half)
	}
	// By name, too, and with nothing to recover in it after that.
	live.Unlock()
	tr, err := s.RecoverTopic("live", -1, RecoverOptions{})
	if err != nil || len(tr.Leftovers) != 2 || tr.Leftovers[1].Path != filepath.Join(s.dir, "live") {
		t.Errorf("recover live: %+v, %v", tr, err)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "live")); !os.IsNotExist(err) {
		t.Errorf("recover live left it: %v", err)
	}
}

// An interrupted copy or import (CopyOptions.Interrupt closed) gives up
// with ErrInterrupted, leaving nothing behind: in the middle of its work,
// or waiting for a lock without limit.
func TestCopyInterrupted(t *testing.T) {
	src := ntSource(t)
	var stream bytes.Buffer
	if _, err := src.ExportPartition("t", 0, &stream, CopyOptions{ToPartition: -1}); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"copy", "export", "import"} {
		dst := Open(filepath.Join(t.TempDir(), "data"))
		stop := make(chan struct{})
		opts := CopyOptions{ToPartition: -1, Interrupt: stop}
		var once sync.Once
		opts.Progress = func(done, total int64) {
			if done > 0 {
				once.Do(func() { close(stop) })
			}
		}
		var err error
		switch how {
		case "copy":
			_, err = src.CopyPartition("t", 0, dst, opts)
		case "export":
			var out bytes.Buffer
			_, err = src.ExportPartition("t", 0, &out, opts)
			if bytes.Contains(out.Bytes(), []byte(streamEnd)) {
				t.Errorf("the interrupted export wrote its end entry")
			}
		case "import":
			_, err = dst.ImportPartition("t", 0, bytes.NewReader(stream.Bytes()), opts)
		}
		if !errors.Is(err, ErrInterrupted) {
			t.Errorf("%s interrupted: %v", how, err)
		}
		if entries, _ := os.ReadDir(dst.dir); len(entries) > 0 {
			t.Errorf("%s interrupted: left %v", how, entries)
		}
	}
	// Waiting for the source topic's maintenance lock (a recover holds
	// it), without limit.
	lock, err := lockDir(filepath.Join(src.dir, "t"), "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	stop := make(chan struct{})
	close(stop)
	dst := Open(filepath.Join(t.TempDir(), "data"))
	if _, err := src.CopyPartition("t", 0, dst, CopyOptions{ToPartition: -1, LockWait: WaitForever, Interrupt: stop}); !errors.Is(err, ErrInterrupted) {
		t.Errorf("copy waiting for a lock, interrupted: %v", err)
	}
}
