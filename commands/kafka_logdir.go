package commands

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore"
)

// A data directory (--data-dir) that is an Apache Kafka log directory, one
// of a broker's log.dirs: seglog reads its topics by name, and refuses
// every command that would write there.

// kafkaDir is the Kafka log directory the data directory is, or nil when
// it is none (seglog's own, or missing). Which it is is looked at once a
// run; its listing through kafkaLogDirs, so that tail -F sees a topic
// appear without listing the directory once per topic.
func (e *env) kafkaDir() (*logstore.KafkaLogDir, error) {
	if e.kafka == nil {
		ok, _ := logstore.IsKafkaLogDir(e.dataDir)
		e.kafka = &kafkaDirState{is: ok}
	}
	if !e.kafka.is {
		return nil, nil
	}
	return kafkaLogDirs.open(e.dataDir)
}

// kafkaDirState is what kafkaDir found.
type kafkaDirState struct {
	is bool // the data directory is a Kafka log directory
}

// kafkaTopic is the partitions of topic in the Kafka log directory d, all
// of them or only partition only (>= 0). A broker holds the partitions
// assigned to it, so numbers missing between them are no gap.
func kafkaTopic(d *logstore.KafkaLogDir, topic string, only int) ([]logstore.KafkaPartitionDir, error) {
	parts := d.Partitions(topic)
	if len(parts) == 0 {
		return nil, fmt.Errorf("topic %s in Apache Kafka log directory %s: %w (its topics: %s)", topic, d.Dir(), logstore.ErrTopicNotFound,
			nameList(d.Topics()))
	}
	if only < 0 {
		return parts, nil
	}
	var held []string
	for _, p := range parts {
		if int(p.Partition) == only {
			return []logstore.KafkaPartitionDir{p}, nil
		}
		held = append(held, strconv.Itoa(int(p.Partition)))
	}
	return nil, fmt.Errorf("topic %s in Apache Kafka log directory %s holds partitions %s, not %d: %w", topic, d.Dir(), strings.Join(held, ", "), only,
		logstore.ErrPartitionNotFound)
}

// kafkaReadOnly names the commands that only read, which may run on an
// Apache Kafka log directory.
var kafkaReadOnly = map[string]bool{"read": true, "tail": true, "describe": true, "topics": true, "metrics": true, "dump-index": true,
	"verify-crc": true, "version": true, "completion": true, "__complete": true}

// guardKafkaLogDir makes cmd, unless it only reads, refuse a data
// directory that is an Apache Kafka log directory: seglog never writes in
// one.
func guardKafkaLogDir(cmd *cli.Command) {
	if kafkaReadOnly[cmd.Name] {
		return
	}
	for _, sub := range cmd.Subcommands {
		guardKafkaLogDir(sub)
	}
	action := cmd.Action
	if action == nil {
		return
	}
	cmd.Action = func(c *cli.Context) error {
		if d, _ := envFrom(c).kafkaDir(); d != nil {
			return usagef("%s is an Apache Kafka log directory, which seglog only reads: '%s' would change files there "+
				"(read, tail, describe, topics, metrics, verify-crc and dump-index work on it; 'seglog -d DIR import %s/TOPIC-N TOPIC' copies a partition into a seglog data directory)",
				d.Dir(), c.Command.FullName(), d.Dir())
		}
		return action(c)
	}
}

// resolveKafkaTopic is resolveLogs for a topic of the Kafka log directory
// d: its partition directories, by number.
func resolveKafkaTopic(d *logstore.KafkaLogDir, topic string, only int) (*coveredTopic, error) {
	parts, err := kafkaTopic(d, topic, only)
	if err != nil {
		return nil, err
	}
	t := &coveredTopic{name: topic, dir: d.Dir(), layout: logstore.LayoutKafka}
	for _, p := range parts {
		n := int(p.Partition)
		t.parts = append(t.parts, covered{name: topic + "/" + strconv.Itoa(n), dir: p.Dir, number: n, last: n, layout: logstore.LayoutKafka})
		t.partitions = max(t.partitions, n+1)
	}
	return t, nil
}

// kafkaCheckpoints is what the checkpoints of the log directory holding
// the Kafka partition directory dir say of it; false when dir is in no
// log directory (a copy on its own) or not named TOPIC-N.
func kafkaCheckpoints(dir string) (logstore.KafkaCheckpoints, bool) {
	pd, err := kafka.ParsePartitionDir(filepath.Base(filepath.Clean(dir)))
	if err != nil {
		return logstore.KafkaCheckpoints{}, false
	}
	d, err := kafkaLogDirs.open(filepath.Dir(filepath.Clean(dir)))
	if err != nil {
		return logstore.KafkaCheckpoints{}, false
	}
	return d.Checkpoints(pd.Topic, pd.Partition), true
}

// kafkaLogStartDamage is what is wrong with the log-start-offset-checkpoint
// of the Kafka log directory holding the partition directory dir, when it
// is there and cannot be read or parsed.
func kafkaLogStartDamage(dir string) error {
	if _, err := kafka.ParsePartitionDir(filepath.Base(filepath.Clean(dir))); err != nil {
		return nil
	}
	d, err := kafkaLogDirs.open(filepath.Dir(filepath.Clean(dir)))
	if err != nil {
		return nil
	}
	for _, f := range d.Files() {
		if f.Name == kafka.LogStartOffsetCheckpoint && f.Err != nil && !errors.Is(f.Err, fs.ErrNotExist) {
			return f.Err
		}
	}
	return nil
}

// kafkaLogDirs keeps the log directories opened, so that a topic's
// thousand partitions do not list their directory and read its checkpoints
// a thousand times. One is opened again when its listing or a checkpoint
// changed (tail -f runs long): a broker renames checkpoints into place and
// creates and deletes partition directories, each of which changes the
// directory's mtime, and a checkpoint rewritten in place changes its own.
var kafkaLogDirs = &kafkaDirCache{dirs: map[string]kafkaCached{}}

type kafkaDirCache struct {
	mu   sync.Mutex
	dirs map[string]kafkaCached
}

type kafkaCached struct {
	stamp string // of the directory and its checkpoints when opened
	dir   *logstore.KafkaLogDir
}

// kafkaDirStamp is what changes when the listing or a checkpoint of the
// log directory dir does.
func kafkaDirStamp(dir string) string {
	var b strings.Builder
	for _, name := range []string{".", kafka.RecoveryPointCheckpoint, kafka.LogStartOffsetCheckpoint, kafka.ReplicationCheckpoint,
		kafka.CleanerOffsetCheckpoint} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			fmt.Fprintf(&b, "%d/%d;", fi.ModTime().UnixNano(), fi.Size())
		} else {
			b.WriteString("-;")
		}
	}
	return b.String()
}

func (c *kafkaDirCache) open(dir string) (*logstore.KafkaLogDir, error) {
	stamp := kafkaDirStamp(dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	if k, ok := c.dirs[dir]; ok && k.stamp == stamp {
		return k.dir, nil
	}
	d, err := logstore.OpenKafkaLogDir(dir)
	if err != nil {
		return nil, err
	}
	c.dirs[dir] = kafkaCached{stamp: stamp, dir: d}
	return d, nil
}

// kafkaCheckpointsJSON is a partition's checkpoints in describe --json;
// null where the file is missing or damaged or has no entry.
type kafkaCheckpointsJSON struct {
	LogStartOffset *int64 `json:"log_start_offset"`
	RecoveryPoint  *int64 `json:"recovery_point"`
	HighWatermark  *int64 `json:"high_watermark"`
	CleanerOffset  *int64 `json:"cleaner_offset"`
}

func newKafkaCheckpointsJSON(cp logstore.KafkaCheckpoints) *kafkaCheckpointsJSON {
	known := func(o logstore.KafkaOffset) *int64 {
		if !o.Known {
			return nil
		}
		return &o.Offset
	}
	return &kafkaCheckpointsJSON{LogStartOffset: known(cp.LogStartOffset), RecoveryPoint: known(cp.RecoveryPoint),
		HighWatermark: known(cp.HighWatermark), CleanerOffset: known(cp.CleanerOffset)}
}

// kafkaCheckpointLine is a partition's checkpoints under describe's
// table: "orders/0: log start 15, recovery point 33, high watermark 55".
func kafkaCheckpointLine(topic string, partition int, cp logstore.KafkaCheckpoints) string {
	var parts []string
	for _, c := range []struct {
		name string
		o    logstore.KafkaOffset
	}{{"log start", cp.LogStartOffset}, {"recovery point", cp.RecoveryPoint}, {"high watermark", cp.HighWatermark}, {"cleaned up to", cp.CleanerOffset}} {
		if c.o.Known {
			parts = append(parts, c.name+" "+strconv.FormatInt(c.o.Offset, 10))
		}
	}
	if len(parts) == 0 {
		parts = []string{"no checkpoints"}
	}
	return topic + "/" + strconv.Itoa(partition) + ": " + strings.Join(parts, ", ") + "\n"
}
