package commands

import (
	"errors"
	"io/fs"

	"github.com/seglog/seglog/logstore"
)

// What describe and topics gather of a topic: its partitions' stats, or why
// there are none.

// partitionInfo is one partition as describe and topics show it: its
// stats, or why there are none.
type partitionInfo struct {
	partition int
	last      int // of a run of missing partitions; else partition
	stats     logstore.PartitionStats
	missing   bool  // no directory, though a higher partition has one
	err       error // stats could not be read
	// kafka is what the checkpoints of the Kafka log directory holding
	// the partition say of it; nil outside one.
	kafka *logstore.KafkaCheckpoints
}

// numbers is the partition, or those of the run.
func (p partitionInfo) numbers() []int { return rangeNumbers(p.partition, p.last) }

// rangeNumbers is first..last (first alone when last is below it): a run
// of missing partitions, which lies below logstore.MaxPartitions.
func rangeNumbers(first, last int) []int {
	ns := make([]int, 0, max(last-first, 0)+1)
	for n := first; n <= max(last, first); n++ {
		ns = append(ns, n)
	}
	return ns
}

// label is the PARTITION cell: "3", or "1..4" for a run.
func (p partitionInfo) label() string {
	return logstore.PartitionRange{First: p.partition, Last: max(p.last, p.partition)}.String()
}

// topicInfo is a topic's partitions, in order.
type topicInfo struct {
	name       string
	dir        string
	partitions int // highest partition directory + 1
	parts      []partitionInfo
	layout     string // simpleLayout, segmentFileLayout, or "" for a topic or partition directory
	// settings are the topic's stored ones; nil for a partition directory
	// or a log named by path, which have none of their own, and when they
	// could not be read.
	settings *logstore.Settings
}

// missing lists the partitions without a directory (fewer than
// logstore.MaxPartitions).
func (t *topicInfo) missing() []int {
	var ps []int
	for _, p := range t.parts {
		if p.missing {
			ps = append(ps, p.numbers()...)
		}
	}
	return ps
}

// gatherTarget reads the stats of the partitions a describe argument
// covers (see resolve). A topic that cannot be read at all is an error;
// partitions missing or unreadable are recorded in the result and added
// to probs.
func gatherTarget(e *env, arg string, only int, probs *problems) (*topicInfo, error) {
	ct, err := resolveLogs(e, arg, only, probs)
	if err != nil {
		return nil, err
	}
	t := &topicInfo{name: ct.name, dir: ct.dir, partitions: ct.partitions}
	switch {
	case ct.layout == logstore.LayoutSimple:
		if err := simplePartition(only, ct.dir); err != nil {
			return nil, err
		}
		t.layout = simpleLayout
	case ct.layout == logstore.LayoutKafka:
		t.layout = kafkaLayout
	case ct.file:
		t.layout = segmentFileLayout
	case ct.found.Count > 0:
		st, err := logstore.ReadTopicSettings(ct.dir)
		if err != nil {
			*probs = append(*probs, err)
		} else {
			t.settings = &st
		}
	}
	for _, c := range ct.parts {
		pi := partitionInfo{partition: c.number, last: c.last, missing: c.missing}
		if c.missing {
			*probs = append(*probs, ct.missingError(c))
		} else if pi.stats, pi.err = partitionStats(e, c); pi.err != nil {
			*probs = append(*probs, pi.err)
		}
		if c.layout == logstore.LayoutKafka && !c.file {
			if cp, ok := kafkaCheckpoints(c.dir); ok {
				pi.kafka = &cp
			}
		}
		t.parts = append(t.parts, pi)
	}
	return t, nil
}

// partitionStats opens a partition and reads its stats. A segment deleted
// between listing and reading (a retention sweep) is no damage: the
// directory is listed again.
func partitionStats(e *env, c covered) (logstore.PartitionStats, error) {
	for try := 0; ; try++ {
		l, err := c.openLog()
		if err != nil {
			return logstore.PartitionStats{}, err
		}
		st, err := l.Stats()
		l.Close()
		if err == nil || try == 2 || !errors.Is(err, fs.ErrNotExist) {
			if err == nil {
				warnReadingWithout(e, l)
			}
			return st, err
		}
	}
}
