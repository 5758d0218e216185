package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// A read-only view of an Apache Kafka log directory (one of a broker's
// log.dirs): its topics' partition directories, the directories Kafka
// moved aside, meta.properties and the offset checkpoints, and each
// partition's leader epochs and topic id. Every file is opened read-only;
// nothing is locked, created, renamed or written, so it is safe beside a
// running broker (which may replace a checkpoint between two reads).
// The files' formats are format/kafka's.

// ErrNotKafkaLogDir means a directory is no Apache Kafka log directory.
var ErrNotKafkaLogDir = errors.New("not an Apache Kafka log directory")

// kafkaTextMax bounds the text files read whole (meta.properties, the
// checkpoints): a checkpoint takes a line per partition of the broker,
// far below this for any broker.
const kafkaTextMax = 64 << 20

// kafkaProbeMax bounds the first batch read to tell a Kafka segment from
// a seglog one: larger than any batch a broker accepts unless told to.
const kafkaProbeMax = 64 << 20

// IsKafkaLogDir reports whether dir is an Apache Kafka log directory: it
// holds a meta.properties, or a partition directory (TOPIC-PARTITION)
// holding Kafka's files. Kafka and seglog both name segments
// <20 digits>.log, so a partition directory that holds nothing only Kafka
// writes (a leader-epoch-checkpoint, a partition.metadata, a .snapshot, a
// .txnindex) is told by the content of its first non-empty .log (see
// IsKafkaSegment). seglog's own data directory is never one: its topic
// directories hold partition directories, not segments.
func IsKafkaLogDir(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	return isKafkaLogDir(dir, entries)
}

func isKafkaLogDir(dir string, entries []os.DirEntry) (bool, error) {
	for _, e := range entries {
		if e.Name() == kafka.MetaPropertiesFile && e.Type().IsRegular() {
			return true, nil
		}
	}
	var firstErr error
	for _, e := range entries {
		if _, err := kafka.ParsePartitionDir(e.Name()); err != nil || !entryIsDir(dir, e) {
			continue
		}
		ok, err := isKafkaPartitionDir(filepath.Join(dir, e.Name()))
		if ok {
			return true, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return false, firstErr
}

// isKafkaPartitionDir reports whether dir holds a Kafka partition's
// files. A live partition's oldest segments may be deleted by retention
// between the listing and the probe: the first that is still there tells,
// and when every one listed has gone, a new listing does.
func isKafkaPartitionDir(dir string) (bool, error) {
	for range maxOpenTries {
		kafka, logs, err := kafkaPartitionNames(dir)
		if err != nil || kafka || len(logs) == 0 {
			return kafka, err
		}
		allGone := true
		for _, name := range logs {
			first, err := readKafkaProbe(filepath.Join(dir, name))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil || len(first) > 0 {
				return err == nil && IsKafkaSegment(first), err
			}
			allGone = false
		}
		if !allGone {
			return false, nil // empty segments only
		}
	}
	return false, fmt.Errorf("%s: segments keep disappearing before they can be read", dir)
}

// kafkaPartitionNames lists dir: whether a name only Kafka writes is
// there, else its segment .logs in name order (so by base offset).
func kafkaPartitionNames(dir string) (bool, []string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, nil, err
	}
	var logs []string
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		name := e.Name()
		if name == kafka.LeaderEpochCheckpoint || name == kafka.PartitionMetadataFile {
			return true, nil, nil
		}
		fn, err := kafka.ParseFileName(name)
		switch {
		case err != nil:
		case fn.Ext == kafka.TxnIndexExt || fn.Ext == kafka.SnapshotExt:
			return true, nil, nil
		case fn.Ext == kafka.LogExt && fn.Suffix == "":
			logs = append(logs, name)
		}
	}
	return false, logs, nil
}

// IsKafkaSegmentFile reports whether the .log at path begins with a
// Kafka batch or message (IsKafkaSegment); an empty file does not.
func IsKafkaSegmentFile(path string) (bool, error) {
	first, err := readKafkaProbe(path)
	return err == nil && len(first) > 0 && IsKafkaSegment(first), err
}

// readKafkaProbe reads the start of a .log, its first batch whole when
// its header gives a length the file can hold (and kafkaProbeMax does):
// what IsKafkaSegment needs. An empty file gives nothing.
func readKafkaProbe(path string) ([]byte, error) {
	f, size, err := fsx.OpenIndex(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, min(size, kafka.BatchHeaderLen))
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, err
	}
	n, ok := segfile.KafkaEntryLen(head)
	if !ok || n > size || n > kafkaProbeMax || n <= int64(len(head)) {
		return head, nil
	}
	first := make([]byte, n)
	if _, err := f.ReadAt(first, 0); err != nil {
		return nil, err
	}
	return first, nil
}

// IsKafkaSegment reports whether first, the first bytes of a non-empty
// .log, begin with a whole Kafka record batch or legacy message whose
// checksum matches, and not with a seglog record whose checksum does
// (segfile.IsKafkaSegment).
func IsKafkaSegment(first []byte) bool { return segfile.IsKafkaSegment(first) }

// KafkaLogDir is a Kafka log directory as it was when opened.
type KafkaLogDir struct {
	dir         string
	partitions  map[string][]KafkaPartitionDir // by topic, by number
	leftovers   []KafkaLeftover
	meta        kafka.MetaProperties
	metaOK      bool
	files       []KafkaDirFile
	checkpoints map[kafka.PartitionDir]KafkaCheckpoints
}

// KafkaPartitionDir is a partition directory of a Kafka log directory.
type KafkaPartitionDir struct {
	Topic     string
	Partition int32
	Dir       string // its path
}

// KafkaLeftover is a partition directory Kafka moved aside: deleted,
// being moved in from another log directory, or a stray.
type KafkaLeftover struct {
	kafka.LeftoverDir
	Dir string // its path
}

// KafkaDirFile is one of a log directory's own files and what reading it
// gave.
type KafkaDirFile struct {
	Name string // kafka.MetaPropertiesFile, kafka.RecoveryPointCheckpoint, ...
	Path string
	// Err is why it could not be read or parsed, naming it; it wraps
	// fs.ErrNotExist when the file is missing. nil: read and parsed.
	Err error
}

// KafkaOffset is an offset a checkpoint may hold for a partition.
type KafkaOffset struct {
	Offset int64
	Known  bool // false: the file is missing or damaged, or has no entry for the partition
}

// KafkaCheckpoints is what the log directory's checkpoints hold for a
// partition.
type KafkaCheckpoints struct {
	RecoveryPoint  KafkaOffset // recovery-point-offset-checkpoint: flushed up to here
	LogStartOffset KafkaOffset // log-start-offset-checkpoint
	HighWatermark  KafkaOffset // replication-offset-checkpoint
	CleanerOffset  KafkaOffset // cleaner-offset-checkpoint: compacted up to here
}

// kafkaCheckpointFiles are the offset checkpoints, in the order Files
// lists them, with the value each holds.
var kafkaCheckpointFiles = []struct {
	name  string
	field func(*KafkaCheckpoints) *KafkaOffset
}{
	{kafka.RecoveryPointCheckpoint, func(c *KafkaCheckpoints) *KafkaOffset { return &c.RecoveryPoint }},
	{kafka.LogStartOffsetCheckpoint, func(c *KafkaCheckpoints) *KafkaOffset { return &c.LogStartOffset }},
	{kafka.ReplicationCheckpoint, func(c *KafkaCheckpoints) *KafkaOffset { return &c.HighWatermark }},
	{kafka.CleanerOffsetCheckpoint, func(c *KafkaCheckpoints) *KafkaOffset { return &c.CleanerOffset }},
}

// OpenKafkaLogDir lists the Kafka log directory dir and reads its
// meta.properties and offset checkpoints. A file that is missing or
// damaged is no failure: Files says what is wrong with it, and the
// values it would give are unknown.
func OpenKafkaLogDir(dir string) (*KafkaLogDir, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if ok, err := isKafkaLogDir(dir, entries); !ok {
		if err == nil {
			err = fmt.Errorf("%s: %w", dir, ErrNotKafkaLogDir)
		}
		return nil, err
	}
	d := &KafkaLogDir{dir: dir, partitions: map[string][]KafkaPartitionDir{}, checkpoints: map[kafka.PartitionDir]KafkaCheckpoints{}}
	for _, e := range entries {
		if !entryIsDir(dir, e) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if p, err := kafka.ParsePartitionDir(e.Name()); err == nil {
			d.partitions[p.Topic] = append(d.partitions[p.Topic], KafkaPartitionDir{Topic: p.Topic, Partition: p.Partition, Dir: path})
		} else if l, err := kafka.ParseLeftoverDir(e.Name()); err == nil {
			d.leftovers = append(d.leftovers, KafkaLeftover{LeftoverDir: l, Dir: path})
		}
	}
	for _, ps := range d.partitions {
		sort.Slice(ps, func(i, j int) bool { return ps[i].Partition < ps[j].Partition })
	}

	path := filepath.Join(dir, kafka.MetaPropertiesFile)
	b, err := readKafkaText(path)
	if err == nil {
		if d.meta, err = kafka.ParseMetaProperties(b); err == nil {
			d.metaOK = true
		} else {
			err = fmt.Errorf("%s: %w", path, err)
		}
	}
	d.files = append(d.files, KafkaDirFile{Name: kafka.MetaPropertiesFile, Path: path, Err: err})
	for _, cf := range kafkaCheckpointFiles {
		path := filepath.Join(dir, cf.name)
		b, err := readKafkaText(path)
		var offsets []kafka.OffsetCheckpointEntry
		if err == nil {
			if offsets, err = kafka.ParseOffsetCheckpoint(b); err != nil {
				err = fmt.Errorf("%s: %w", path, err)
			}
		}
		for _, e := range offsets {
			tp := kafka.PartitionDir{Topic: e.Topic, Partition: e.Partition}
			c := d.checkpoints[tp]
			*cf.field(&c) = KafkaOffset{Offset: e.Offset, Known: true}
			d.checkpoints[tp] = c
		}
		d.files = append(d.files, KafkaDirFile{Name: cf.name, Path: path, Err: err})
	}
	return d, nil
}

// Dir is the log directory's path.
func (d *KafkaLogDir) Dir() string { return d.dir }

// Topics lists the topics that have a partition directory, sorted.
func (d *KafkaLogDir) Topics() []string {
	topics := make([]string, 0, len(d.partitions))
	for t := range d.partitions {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	return topics
}

// Partitions lists topic's partition directories, by number.
func (d *KafkaLogDir) Partitions(topic string) []KafkaPartitionDir {
	return slices.Clone(d.partitions[topic])
}

// Leftovers lists the directories Kafka moved aside (-delete, -future,
// -stray), by name.
func (d *KafkaLogDir) Leftovers() []KafkaLeftover { return slices.Clone(d.leftovers) }

// Meta is what meta.properties says; false when it is missing or damaged
// (Files says which).
func (d *KafkaLogDir) Meta() (kafka.MetaProperties, bool) { return d.meta, d.metaOK }

// Files lists meta.properties and the offset checkpoints, each with why
// it could not be read, if it could not.
func (d *KafkaLogDir) Files() []KafkaDirFile { return slices.Clone(d.files) }

// Checkpoints is what the offset checkpoints hold for a partition.
func (d *KafkaLogDir) Checkpoints(topic string, partition int32) KafkaCheckpoints {
	return d.checkpoints[kafka.PartitionDir{Topic: topic, Partition: partition}]
}

// LeaderEpochs reads the partition's leader-epoch-checkpoint: the offset
// each leader epoch started at, by epoch.
func (p KafkaPartitionDir) LeaderEpochs() ([]kafka.EpochEntry, error) {
	path := filepath.Join(p.Dir, kafka.LeaderEpochCheckpoint)
	b, err := readKafkaText(path)
	if err != nil {
		return nil, err
	}
	epochs, err := kafka.ParseLeaderEpochCheckpoint(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return epochs, nil
}

// TopicID reads the partition's partition.metadata: the id of its topic.
func (p KafkaPartitionDir) TopicID() (kafka.UUID, error) {
	path := filepath.Join(p.Dir, kafka.PartitionMetadataFile)
	b, err := readKafkaText(path)
	if err != nil {
		return kafka.UUID{}, err
	}
	m, err := kafka.ParsePartitionMetadata(b)
	if err != nil {
		return kafka.UUID{}, fmt.Errorf("%s: %w", path, err)
	}
	return m.TopicID, nil
}

// kafkaMissingError is a Kafka file that is not there.
type kafkaMissingError struct{ path string }

func (e *kafkaMissingError) Error() string { return e.path + " is missing" }
func (e *kafkaMissingError) Unwrap() error { return fs.ErrNotExist }

// readKafkaText reads one of Kafka's text files whole, read-only, never
// through a symbolic link nor from anything but a regular file.
func readKafkaText(path string) ([]byte, error) {
	f, size, err := fsx.OpenIndex(path)
	var nr *fsx.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &kafkaMissingError{path}
	case errors.As(err, &nr):
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, nr.Kind())
	case err != nil:
		return nil, err
	}
	defer f.Close()
	if size > kafkaTextMax {
		return nil, fmt.Errorf("%s: %d bytes, too large for one of Kafka's text files", path, size)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, err
	}
	return b, nil
}

// entryIsDir reports whether the entry of dir is a directory, or a
// symbolic link to one.
func entryIsDir(dir string, e os.DirEntry) bool {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.IsDir()
	}
	fi, err := os.Stat(filepath.Join(dir, e.Name()))
	return err == nil && fi.IsDir()
}

// ReadKafkaCheckpoint reads one of a log directory's offset checkpoint
// files (recovery-point-offset-checkpoint and the like) whole, every
// entry in file order.
func ReadKafkaCheckpoint(path string) ([]kafka.OffsetCheckpointEntry, error) {
	b, err := readKafkaText(path)
	if err != nil {
		return nil, err
	}
	entries, err := kafka.ParseOffsetCheckpoint(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}
