package commands

import (
	"errors"
	"fmt"
	"time"

	"github.com/seglog/seglog/logstore"
	"github.com/urfave/cli/v2"
)

// writerFlags are the flags of the commands that append to a partition
// (append, import): when to sync, and whether to wait for another writer.
func writerFlags() []cli.Flag {
	return []cli.Flag{
		syncModes.flag("sync", "exit", "`MODE`"),
		&cli.BoolFlag{Name: "wait", Usage: "wait for a partition another writer holds, without limit"},
		&cli.StringFlag{Name: "wait-timeout", Usage: "wait at most `DURATION` for a partition another writer holds", DefaultText: "2s"},
	}
}

// syncModes are the values of --sync.
var syncModes = choices[logstore.SyncMode]{
	{"exit", logstore.SyncExit, "fdatasync on roll and exit"},
	{"batch", logstore.SyncBatch, "also the .log after every batch"},
	{"never", logstore.SyncNever, ""},
}

// writerOptionsFrom parses writerFlags.
func writerOptionsFrom(c *cli.Context) (sync logstore.SyncMode, lockWait time.Duration, err error) {
	if sync, err = parseChoice(c, "sync", syncModes); err != nil {
		return 0, 0, err
	}
	lockWait, err = lockWaitFlags(c)
	return sync, lockWait, err
}

// appendTarget is the topic a command appends to, and what --create
// makes of it when it is missing.
type appendTarget struct {
	topic      string
	create     bool
	partitions int // the count --create gives a new topic
	// partitionsGiven: --partitions was given, so an existing topic must
	// have that many too.
	partitionsGiven bool
	settings        logstore.Settings // stored in a new topic
}

// openTopicForAppend opens the topic a command appends to. check sees
// the partition count: an existing topic's, or the one --create would
// make, before it makes anything, so that no command creates a topic and
// then refuses its own command line. Another process creating the topic
// meanwhile is fine.
func openTopicForAppend(e *env, store *logstore.Store, tg appendTarget, check func(partitions int, exists bool) error) (*logstore.Topic, error) {
	topic, err := store.Topic(tg.topic)
	if errors.Is(err, logstore.ErrTopicNotFound) && tg.create {
		if err := check(tg.partitions, false); err != nil {
			return nil, err
		}
		err = store.CreateTopic(tg.topic, tg.partitions, tg.settings)
		if err == nil || errors.Is(err, logstore.ErrTopicExists) {
			topic, err = store.Topic(tg.topic)
		}
	}
	if errors.Is(err, logstore.ErrTopicNotFound) {
		return nil, missingTopic(err, e.dataDir, "seglog create "+tg.topic+"' or use '--create")
	}
	if err != nil {
		return nil, err
	}
	if tg.partitionsGiven {
		if err := topicMismatch(topic, tg.partitions, logstore.Settings{}); err != nil {
			return nil, fmt.Errorf("%w; nothing was written", err)
		}
	}
	return topic, check(topic.Partitions, true)
}

// partitionOutside is the error for a partition the topic does not have,
// or would not have once --create made it.
func partitionOutside(topic string, p, partitions int, exists bool) error {
	if exists {
		return fmt.Errorf("topic %s has partitions 0..%d, not %d: %w", topic, partitions-1, p, logstore.ErrPartitionNotFound)
	}
	return usagef("--partition %d is outside the %d partition%s --create would make (0..%d): give --partitions %d or more, or another --partition",
		p, partitions, plural(partitions), partitions-1, p+1)
}
