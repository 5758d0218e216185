package commands

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seglog/seglog/logstore"
)

// The partitions read, tail and kafka export read, and how their output
// names them.

// errFullPartition refuses, for a command that bounds a partition by the
// offset after its last record, a partition where there is none.
func errFullPartition(name, command string) error {
	return fmt.Errorf("partition %s is full: its last record has offset %d, the last there is, and %s needs an offset after it; read it with 'seglog read' (--offset -N for the last N)",
		name, uint64(math.MaxUint64), command)
}

// partitionRef is a partition to read and how output names it.
type partitionRef struct {
	topic     string
	partition int
	open      func() (*logstore.Partition, error) // nil for a log in another layout
	file      bool                                // a lone segment file
	// layout is LayoutSimple for a log in that layout, named by path
	// (dir); the zero value is a seglog partition.
	layout logstore.Layout
	dir    string
	name   string // what messages call it when not TOPIC/PARTITION: a path
}

// openLog opens the log ref names, in its layout.
func (ref partitionRef) openLog() (logstore.Log, error) {
	return openLog(ref.layout, ref.dir, cmp.Or(ref.name, ref.topic+"/"+strconv.Itoa(ref.partition)), ref.file, ref.open)
}

// readTargets lists the partitions a read covers, in order: of a topic,
// a topic directory named by path, a partition directory, a lone segment
// file, or a log in the simple layout (partition 0, whatever partition
// says: checkLayoutRead and checkLayoutTail check it, after what they
// refuse first).
func readTargets(e *env, topic string, partition int) ([]partitionRef, error) {
	if strings.Contains(topic, "/") {
		dir, kind, err := classifyPath(topic)
		if err != nil {
			return nil, err
		}
		if kind == simplePath {
			return []partitionRef{{topic: filepath.Base(dir), layout: logstore.LayoutSimple, dir: dir}}, nil
		}
		if kind == topicPath {
			t, err := logstore.OpenTopicDir(dir)
			if err != nil {
				return nil, err
			}
			return topicRefs(t, partition, func(p int) (*logstore.Partition, error) {
				return logstore.OpenPartitionDir(t.PartitionDir(p), t.PartitionDir(p))
			})
		}
		topic, c, err := pathCovered(dir, kind, partition)
		if err != nil {
			return nil, err
		}
		return []partitionRef{{topic: topic, partition: c.number, open: c.open, file: c.file, layout: c.layout, dir: c.dir, name: c.name}}, nil
	}
	if d, err := e.kafkaDir(); d != nil || err != nil {
		if err != nil {
			return nil, err
		}
		parts, err := kafkaTopic(d, topic, partition)
		var refs []partitionRef
		for _, p := range parts {
			refs = append(refs, partitionRef{topic: topic, partition: int(p.Partition), layout: logstore.LayoutKafka, dir: p.Dir})
		}
		return refs, err
	}
	store := logstore.Open(e.dataDir)
	t, err := store.Topic(topic)
	if errors.Is(err, logstore.ErrTopicNotFound) {
		return nil, missingTopic(err, e.dataDir, "seglog create "+topic)
	}
	if err != nil {
		return nil, err
	}
	// By its directory: the topic was looked at once above, not again per
	// partition (a topic of 10 000 partitions would list its directory
	// 10 000 times).
	return topicRefs(t, partition, func(p int) (*logstore.Partition, error) {
		return logstore.OpenPartitionDir(t.PartitionDir(p), topic+"/"+strconv.Itoa(p))
	})
}

// topicRefs lists partition of t, or all of them when it is -1.
func topicRefs(t *logstore.Topic, partition int, open func(p int) (*logstore.Partition, error)) ([]partitionRef, error) {
	if partition >= t.Partitions {
		return nil, fmt.Errorf("topic %s has partitions 0..%d, not %d: %w", t.Name, t.Partitions-1, partition, logstore.ErrPartitionNotFound)
	}
	var refs []partitionRef
	for p := 0; p < t.Partitions; p++ {
		if partition >= 0 && p != partition {
			continue
		}
		refs = append(refs, partitionRef{topic: t.Name, partition: p, open: func() (*logstore.Partition, error) { return open(p) }})
	}
	return refs, nil
}
