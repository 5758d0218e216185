package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// Changes to a topic as a whole: delete, alter and add-partitions. Each
// holds the topic's maintenance lock exclusively, so no sweep, recover or
// copy runs in the middle of it.

// deletePrefix begins the name of a topic directory being deleted: it is
// renamed aside to deletePrefix+topic[:200]+"-"+12 hex digits+".tmp" in
// the data directory before its files go, so that a crash leaves either
// the topic or a hidden directory recover removes.
const deletePrefix = ".delete-"

// TopicSize is what a topic holds, as delete reports it.
type TopicSize struct {
	Partitions int   // the partition count: highest directory + 1
	Bytes      int64 // of its .log files
}

// StatTopicSize measures a topic for delete's question and report. It
// reads directory entries only, one partition at a time.
func (s *Store) StatTopicSize(name string) (TopicSize, error) {
	dir, err := s.topicDirToChange(name)
	if err != nil {
		return TopicSize{}, err
	}
	return topicSize(dir)
}

func topicSize(dir string) (TopicSize, error) {
	tp, err := ReadTopicPartitions(dir)
	if err != nil {
		return TopicSize{}, err
	}
	size := TopicSize{Partitions: tp.Count}
	for _, p := range tp.Present {
		segs, _, err := readSegments(filepath.Join(dir, strconv.Itoa(p)))
		if err != nil {
			return size, err
		}
		for _, seg := range segs {
			if fi, err := os.Lstat(seg.path(format.LogExt)); err == nil {
				size.Bytes += fi.Size()
			}
		}
	}
	return size, nil
}

// topicDirToChange is the directory of topic name, which must be a
// directory of its own: changes never go through a symbolic link.
func (s *Store) topicDirToChange(name string) (string, error) {
	if err := format.ValidateTopic(name); err != nil {
		return "", err
	}
	dir := filepath.Join(s.dir, name)
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("topic %s in %s: %w", name, s.dir, ErrTopicNotFound)
	case err != nil:
		return "", fmt.Errorf("topic %s: %w", name, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", fmt.Errorf("topic %s (%s) is a symbolic link: change the topic where it points", name, dir)
	case !fi.IsDir():
		return "", fmt.Errorf("topic %s (%s) is not a directory: %w", name, dir, ErrTopicNotFound)
	}
	return dir, nil
}

// lockTopicWhole takes the topic's maintenance lock, then the writer lock
// of each of its partitions: while they are held, nothing else reads
// for a change or writes the topic. A lock held past wait is a
// *LockedError naming its holder.
func lockTopicWhole(name, dir string, wait time.Duration) (unlock func(), err error) {
	var locks []*fsx.DirLock
	unlock = func() {
		for _, l := range locks {
			l.Unlock()
		}
	}
	l, err := lockDir(dir, "topic "+name, wait)
	if err != nil {
		return nil, err
	}
	locks = append(locks, l)
	tp, err := ReadTopicPartitions(dir)
	if err != nil {
		unlock()
		return nil, fmt.Errorf("topic %s: %w", name, err)
	}
	for _, p := range tp.Present {
		l, err := lockDir(filepath.Join(dir, strconv.Itoa(p)), fmt.Sprintf("partition %s/%d", name, p), wait)
		if err != nil {
			unlock()
			return nil, err
		}
		locks = append(locks, l)
	}
	return unlock, nil
}

// TopicDeletion is a topic locked for DeleteTopic: its maintenance lock
// and every partition's writer lock, so that deleting several topics can
// refuse before removing any.
type TopicDeletion struct {
	s      *Store
	name   string
	dir    string
	Size   TopicSize
	unlock func()
}

// LockTopicForDelete takes the locks deleting the topic needs, refusing
// (a *LockedError) while a writer or a maintenance lock holds any part of
// it past wait, and measures it. Delete or Release must follow.
func (s *Store) LockTopicForDelete(name string, wait time.Duration) (*TopicDeletion, error) {
	dir, err := s.topicDirToChange(name)
	if err != nil {
		return nil, err
	}
	unlock, err := lockTopicWhole(name, dir, wait)
	if err != nil {
		return nil, err
	}
	size, err := topicSize(dir)
	if err != nil {
		unlock()
		return nil, fmt.Errorf("topic %s: %w", name, err)
	}
	return &TopicDeletion{s: s, name: name, dir: dir, Size: size, unlock: unlock}, nil
}

// Release lets go of the locks; after Delete it does nothing.
func (d *TopicDeletion) Release() {
	if d.unlock != nil {
		d.unlock()
		d.unlock = nil
	}
}

// Delete removes the topic and everything in it, then releases its locks.
// The topic directory is renamed aside (see deletePrefix) and the data
// directory synced before anything in it is removed, so the topic
// disappears at once; a crash after that leaves a hidden directory that
// RecoverDataDir removes.
func (d *TopicDeletion) Delete() error {
	// The locks stay on the directory once it is renamed: recover leaves
	// it to a delete still running.
	defer d.Release()
	s := d.s
	aside := tempName(s.dir, deletePrefix, d.name)
	if err := s.removeAside(d.dir, aside); err != nil {
		return fmt.Errorf("delete topic %s: %w", d.name, err)
	}
	if _, err := os.Lstat(aside); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete topic %s: %s could not be emptied; the topic is gone, and 'seglog recover' removes what is left", d.name, aside)
	}
	return nil
}

// deletingInUse reports whether path, a topic directory renamed aside by
// DeleteTopic, is still locked by the delete that renamed it.
func deletingInUse(path string) bool {
	l, err := fsx.TryLock(path)
	if err != nil {
		return true
	}
	l.Unlock()
	return false
}

// AlterTopic replaces the topic's stored settings by what change makes of
// them, durably, under the topic's maintenance lock; with dryRun it
// writes nothing. It returns the settings before and after. A writer
// already running keeps the settings it opened the topic with.
func (s *Store) AlterTopic(name string, change func(Settings) Settings, dryRun bool, wait time.Duration) (old, now Settings, err error) {
	dir, err := s.topicDirToChange(name)
	if err != nil {
		return old, now, err
	}
	lock, err := lockDir(dir, "topic "+name, wait)
	if err != nil {
		return old, now, err
	}
	defer lock.Unlock()
	if old, err = readSettings(filepath.Join(dir, settingsFile)); err != nil {
		return old, now, err
	}
	now = change(old)
	if dryRun || now == old {
		return old, now, nil
	}
	if err := s.writeSettings(dir, now); err != nil {
		return old, now, fmt.Errorf("alter topic %s: %w", name, err)
	}
	return old, now, nil
}

// addPrefix begins the name of a partition directory add-partitions is
// building in the topic's directory: addPrefix+partition+"-"+random+".tmp".
const addPrefix = ".add-"

// ErrShrink means add-partitions was asked for fewer partitions than the
// topic has: partitions are never removed, as keys would route elsewhere
// and their records be lost.
var ErrShrink = errors.New("a topic's partitions are never removed")

// AddPartitions grows the topic to total partitions under its
// maintenance lock and returns the count it had. Each new partition is
// built in a hidden temporary directory in the topic's (which recover
// removes if left) and renamed into place, lowest first, so the topic
// never misses a partition below its highest: a crash leaves fewer new
// partitions, and running it again adds the rest.
func (s *Store) AddPartitions(name string, total int, wait time.Duration) (int, error) {
	dir, err := s.topicDirToChange(name)
	if err != nil {
		return 0, err
	}
	if total < 1 || total > MaxPartitions {
		return 0, fmt.Errorf("add partitions to topic %s: partition count %d out of range 1..%d", name, total, MaxPartitions)
	}
	lock, err := lockDir(dir, "topic "+name, wait)
	if err != nil {
		return 0, err
	}
	defer lock.Unlock()
	tp, err := ReadTopicPartitions(dir)
	if err != nil {
		return 0, fmt.Errorf("topic %s: %w", name, err)
	}
	if err := tp.Err(name, dir); err != nil {
		return tp.Count, err
	}
	if total < tp.Count {
		return tp.Count, fmt.Errorf("topic %s has %d partitions, more than the %d asked for: %w", name, tp.Count, total, ErrShrink)
	}
	for p := tp.Count; p < total; p++ {
		if err := s.addPartition(dir, p); err != nil {
			return tp.Count, fmt.Errorf("add partition %s/%d: %w", name, p, err)
		}
	}
	return tp.Count, nil
}

func (s *Store) addPartition(topicDir string, p int) error {
	tmp := tempName(topicDir, addPrefix, strconv.Itoa(p))
	if err := s.fs.Mkdir(tmp, 0o755); err != nil {
		return err
	}
	if err := createSegmentFiles(s.fs, segment{dir: tmp, base: 0}, true); err != nil {
		s.removeAll(tmp)
		return err
	}
	if err := s.fs.Rename(tmp, filepath.Join(topicDir, strconv.Itoa(p)), true); err != nil {
		s.removeAll(tmp)
		return err
	}
	return s.fs.SyncDir(topicDir)
}
