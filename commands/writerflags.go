package commands

import (
	"errors"
	"time"

	"github.com/seglog/seglog/logstore"
	"github.com/urfave/cli/v2"
)

// writerFlags are the flags of the commands that append to a partition
// (append, import): when to sync, and whether to wait for another writer.
func writerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "sync", Value: "exit", Usage: "`MODE`: exit (fdatasync on roll and exit), batch (also the .log after every batch), never"},
		&cli.BoolFlag{Name: "wait", Usage: "wait for a partition another writer holds, without limit"},
		&cli.StringFlag{Name: "wait-timeout", Usage: "wait at most `DURATION` for a partition another writer holds", DefaultText: "2s"},
	}
}

// writerOptionsFrom parses writerFlags.
func writerOptionsFrom(c *cli.Context) (sync logstore.SyncMode, lockWait time.Duration, err error) {
	switch c.String("sync") {
	case "exit":
		sync = logstore.SyncExit
	case "batch":
		sync = logstore.SyncBatch
	case "never":
		sync = logstore.SyncNever
	default:
		return 0, 0, usagef("--sync must be exit, batch or never, not %q", c.String("sync"))
	}
	switch {
	case c.Bool("wait") && c.IsSet("wait-timeout"):
		return 0, 0, usagef("--wait and --wait-timeout exclude each other")
	case c.Bool("wait"):
		lockWait = logstore.WaitForever
	case c.IsSet("wait-timeout"):
		d, err := parseDuration(c.String("wait-timeout"))
		if err != nil {
			return 0, 0, usagef("--wait-timeout: %v", err)
		}
		lockWait = max(d, time.Nanosecond) // 0 would mean the default
	}
	return sync, lockWait, nil
}

// openTopicForAppend opens the topic a command appends to, creating it
// first with --create (another process creating it meanwhile is fine).
func openTopicForAppend(e *env, store *logstore.Store, name string, create bool, partitions int, settings logstore.Settings) (*logstore.Topic, error) {
	topic, err := store.Topic(name)
	if errors.Is(err, logstore.ErrTopicNotFound) && create {
		err = store.CreateTopic(name, partitions, settings)
		if err == nil || errors.Is(err, logstore.ErrTopicExists) {
			topic, err = store.Topic(name)
		}
	}
	if errors.Is(err, logstore.ErrTopicNotFound) {
		return nil, missingTopic(err, e.dataDir, "seglog create "+name+"' or use '--create")
	}
	return topic, err
}
