package logstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// Built-in defaults for topics without stored settings.
const (
	DefaultSegmentBytes  = 1 << 30
	DefaultIndexInterval = 1
	DefaultRollAfter     = 7 * 24 * time.Hour
	// MaxPartitions bounds create's partition count: every partition is a
	// directory and, while appending, three open files.
	MaxPartitions = 10000
)

const settingsFile = ".seglog.json"

// Settings are a topic's stored defaults (docs/format.md §1). Zero means unset.
type Settings struct {
	SegmentBytes   int64
	IndexInterval  int
	RollAfter      time.Duration
	Retention      time.Duration
	RetentionBytes int64
}

// settingsJSON is the stored form: durations as Go strings, for people who
// look at the file.
type settingsJSON struct {
	SegmentBytes   int64  `json:"segment_bytes,omitempty"`
	IndexInterval  int    `json:"index_interval,omitempty"`
	RollAfter      string `json:"roll_after,omitempty"`
	Retention      string `json:"retention,omitempty"`
	RetentionBytes int64  `json:"retention_bytes,omitempty"`
}

func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// Store is a data directory.
type Store struct {
	dir string
	fs  fileSystem
}

// Open returns the store at dir. Nothing is read until used.
func Open(dir string) *Store { return &Store{dir: dir, fs: osFS{Root: dir}} }

// Dir is the data directory.
func (s *Store) Dir() string { return s.dir }

// PartitionDir is the directory of a topic's partition. The topic name must
// have been validated.
func (s *Store) PartitionDir(topic string, partition int) string {
	return filepath.Join(s.dir, topic, strconv.Itoa(partition))
}

// Topic is a topic as found on disk.
type Topic struct {
	Name       string
	Dir        string
	Partitions int
	Settings   Settings
	// Foreign names the directories numbered like partitions beyond
	// MaxPartitions: not counted, never touched (see TopicPartitions).
	Foreign []string
}

// Topic opens a topic's metadata: its partition count (highest partition
// directory + 1; a missing one below that is an error, as it would change
// key routing) and stored settings.
func (s *Store) Topic(name string) (*Topic, error) {
	if err := format.ValidateTopic(name); err != nil {
		return nil, err
	}
	t, err := openTopic(filepath.Join(s.dir, name), name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("topic %s in %s: %w", name, s.dir, ErrTopicNotFound)
	}
	return t, err
}

// OpenTopicDir opens the topic directory dir named by path (a copy, a
// backup) as Topic does; the topic is named after the directory.
func OpenTopicDir(dir string) (*Topic, error) {
	t, err := openTopic(dir, filepath.Base(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("topic directory %s: %w", dir, ErrTopicNotFound)
	}
	return t, err
}

func openTopic(dir, name string) (*Topic, error) {
	tp, err := ReadTopicPartitions(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("open topic %s: %w", name, err)
	}
	if err := tp.Err(name, dir); err != nil {
		return nil, err
	}
	st, err := readSettings(filepath.Join(dir, settingsFile))
	if err != nil {
		return nil, err
	}
	return &Topic{Name: name, Dir: dir, Partitions: tp.Count, Settings: st, Foreign: tp.Foreign}, nil
}

// PartitionDir is the directory of the topic's partition p.
func (t *Topic) PartitionDir(p int) string { return filepath.Join(t.Dir, strconv.Itoa(p)) }

// Topics lists the data directory's topics by name, with those that are
// symbolic links to directories (read through, never changed: see
// TopicIsLink). Entries that are not valid topic names (seglog's own
// dot-files, editor leftovers) are skipped, and so are the half-made
// topic directories interrupted copies of older versions left, which
// hold no partition (see HalfMadeTopics).
func (s *Store) Topics() ([]string, error) {
	topics, _, err := s.listTopics()
	return topics, err
}

// HalfMadeTopics lists the directories of the data directory that have a
// topic's name and hold what an interrupted copy or import into a new
// topic left: no partition, only settings or build directories. They are
// no topics; recover removes them.
func (s *Store) HalfMadeTopics() ([]string, error) {
	_, half, err := s.listTopics()
	return half, err
}

func (s *Store) listTopics() (topics, halfMade []string, err error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("data directory: %w", err)
	}
	for _, e := range entries {
		if format.ValidateTopic(e.Name()) != nil {
			continue
		}
		path := filepath.Join(s.dir, e.Name())
		if e.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
				continue
			}
		} else if !e.IsDir() {
			continue
		}
		if halfMadeTopic(path) {
			halfMade = append(halfMade, e.Name())
			continue
		}
		topics = append(topics, e.Name())
	}
	return topics, halfMade, nil
}

// TopicIsLink reports whether the topic's directory is a symbolic link:
// reads go through it, changes never do (fsx.CheckNoSymlink).
func (s *Store) TopicIsLink(name string) bool {
	fi, err := os.Lstat(filepath.Join(s.dir, name))
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// validDirNames is the names of the directories among entries that follow
// the topic-name rules (group names); seglog's own dot-files and
// anything foreign are skipped.
func validDirNames(entries []os.DirEntry) []string {
	var names []string
	for _, e := range entries {
		if e.IsDir() && format.ValidateTopic(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	return names
}

// CreateTopic makes a topic with partitions 0..partitions-1, each holding
// an empty segment 0, and stores its settings. The topic is built in a
// hidden temporary directory and renamed into place, so it appears whole
// or not at all; ErrTopicExists if it is already there.
func (s *Store) CreateTopic(name string, partitions int, st Settings) error {
	if err := format.ValidateTopic(name); err != nil {
		return err
	}
	if partitions < 1 || partitions > MaxPartitions {
		return fmt.Errorf("create topic %s: partition count %d out of range 1..%d", name, partitions, MaxPartitions)
	}
	if err := s.mkdirAll(s.dir); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	final := filepath.Join(s.dir, name)
	if _, err := os.Stat(final); err == nil {
		return fmt.Errorf("topic %s in %s: %w", name, s.dir, ErrTopicExists)
	}
	tmp := tempName(s.dir, ".create-", name)
	if err := s.buildTopic(tmp, partitions, st); err != nil {
		s.removeAll(tmp)
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	if err := s.fs.Rename(tmp, final, true); err != nil {
		s.removeAll(tmp)
		if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTEMPTY) {
			return fmt.Errorf("topic %s in %s: %w", name, s.dir, ErrTopicExists)
		}
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	return nil
}

func (s *Store) buildTopic(dir string, partitions int, st Settings) error {
	if err := s.fs.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if st != (Settings{}) {
		if err := s.writeSettings(dir, st); err != nil {
			return err
		}
	}
	for p := 0; p < partitions; p++ {
		pdir := filepath.Join(dir, strconv.Itoa(p))
		if err := s.fs.Mkdir(pdir, 0o755); err != nil {
			return err
		}
		if err := createSegmentFiles(s.fs, segment{dir: pdir, base: 0}, true); err != nil {
			return err
		}
	}
	return s.fs.SyncDir(dir)
}

func (s *Store) writeSettings(dir string, st Settings) error {
	b, err := encodeSettings(st)
	if err != nil {
		return err
	}
	return s.writeFileAtomic(filepath.Join(dir, settingsFile), b)
}

// encodeSettings is the settings file holding st, which parseSettings
// reads back.
func encodeSettings(st Settings) ([]byte, error) {
	b, err := json.MarshalIndent(settingsJSON{
		SegmentBytes:   st.SegmentBytes,
		IndexInterval:  st.IndexInterval,
		RollAfter:      durationString(st.RollAfter),
		Retention:      durationString(st.Retention),
		RetentionBytes: st.RetentionBytes,
	}, "", "  ")
	return append(b, '\n'), err
}

// writeFileAtomic replaces path with data by way of path.tmp (see
// fsx.WriteFileDurably).
func (s *Store) writeFileAtomic(path string, data []byte) error {
	return fsx.WriteFile(s.fs, path, path+".tmp", data)
}

// writeFileDurably is fsx.WriteFileDurably through the store's file
// system, by way of path.tmp.
func (s *Store) writeFileDurably(path string, noReplace bool, write func(file) error) (renamed bool, err error) {
	return fsx.WriteFileDurably(s.fs, path, path+".tmp", noReplace, write)
}

// renameIntoPlace is fsx.RenameIntoPlace through the store's file system.
func (s *Store) renameIntoPlace(tmp, path string, noReplace bool) error {
	return fsx.RenameIntoPlace(s.fs, tmp, path, noReplace)
}

// mkdirAll is fsx.MkdirAll through the store's file system.
func (s *Store) mkdirAll(dir string) error { return fsx.MkdirAll(s.fs, dir) }

// removeAll is fsx.RemoveAll through the store's file system.
func (s *Store) removeAll(dir string) { fsx.RemoveAll(s.fs, dir) }

// removeAside removes the directory dir by renaming it to aside (beside
// it) first and making the rename durable, so that a crash leaves dir
// whole or gone; what is left aside is a leftover for recover. Its parent
// is synced again once the files are gone.
func (s *Store) removeAside(dir, aside string) error {
	parent := filepath.Dir(dir)
	if err := s.fs.Rename(dir, aside, true); err != nil {
		return err
	}
	if err := s.fs.SyncDir(parent); err != nil {
		return err
	}
	s.removeAll(aside)
	return s.fs.SyncDir(parent)
}

// createSegmentFiles creates a segment's three files. The .log comes first,
// with O_EXCL: it is what makes the segment exist, and must not clobber one.
// Index files without a .log are orphans of a crash and are truncated.
func createSegmentFiles(fsys fileSystem, seg segment, syncDir bool) error {
	for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
		flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if ext == format.LogExt {
			flag = os.O_WRONLY | os.O_CREATE | os.O_EXCL
		}
		f, err := fsys.OpenFile(seg.path(ext), flag, 0o644)
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if syncDir {
		return fsys.SyncDir(seg.dir)
	}
	return nil
}

// EffectiveSettings returns the settings a writer uses for this topic: stored ones
// over built-in defaults. Retention keeps no default.
func (t *Topic) EffectiveSettings() Settings {
	st := t.Settings
	if st.SegmentBytes <= 0 {
		st.SegmentBytes = DefaultSegmentBytes
	}
	if st.IndexInterval <= 0 {
		st.IndexInterval = DefaultIndexInterval
	}
	if st.RollAfter <= 0 {
		st.RollAfter = DefaultRollAfter
	}
	return st
}

// OpenPartition opens a topic's partition for reading.
func (s *Store) OpenPartition(topic string, partition int) (*Partition, error) {
	t, err := s.Topic(topic)
	if err != nil {
		return nil, err
	}
	if partition < 0 || partition >= t.Partitions {
		return nil, fmt.Errorf("topic %s has partitions 0..%d, not %d: %w", topic, t.Partitions-1, partition, ErrPartitionNotFound)
	}
	return OpenPartitionDir(s.PartitionDir(topic, partition), fmt.Sprintf("%s/%d", topic, partition))
}
