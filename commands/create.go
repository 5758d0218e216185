package commands

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

type createOptions struct {
	topic           string
	partitions      int
	partitionsGiven bool // an existing topic must have that many
	ifNotExists     bool
	settings        logstore.Settings
}

func createCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.IntFlag{Name: "partitions", Value: 1, Usage: "number of partitions `N`"},
		&cli.BoolFlag{Name: "if-not-exists", Usage: "succeed if the topic already exists with the partition count and settings given (any that differ are an error)"},
	}
	return &cli.Command{
		Name:      "create",
		Usage:     "create a topic",
		ArgsUsage: "TOPIC",
		Description: "Changes files: makes <data-dir>/TOPIC/0..N-1/, each with an empty segment 0,\n" +
			"and stores the settings given as the topic's defaults (.seglog.json). An existing\n" +
			"topic is an error; with --if-not-exists it is accepted as long as the partition count\n" +
			"and each setting given match it (exit 1 naming both values otherwise), and left as it is.\n\n" +
			"Examples:\n" +
			"  seglog create orders --partitions 3\n" +
			"  seglog create app-logs --segment-bytes 256MiB --retention 7d\n" +
			"  seglog create orders --if-not-exists",
		Flags: append(append(flags, retentionFlags()...), segmentFlags()...),
		Action: func(c *cli.Context) error {
			topic, err := topicArg(c)
			if err != nil {
				return err
			}
			o := createOptions{topic: topic, partitions: c.Int("partitions"), partitionsGiven: c.IsSet("partitions"), ifNotExists: c.Bool("if-not-exists")}
			if o.settings, err = topicSettingFlags(c); err != nil {
				return err
			}
			if o.partitions < 1 || o.partitions > logstore.MaxPartitions {
				return usagef("--partitions must be between 1 and %d, not %d", logstore.MaxPartitions, o.partitions)
			}
			return runCreate(envFrom(c), o)
		},
	}
}

func runCreate(e *env, o createOptions) error {
	store := logstore.Open(e.dataDir)
	err := store.CreateTopic(o.topic, o.partitions, o.settings)
	if errors.Is(err, logstore.ErrTopicExists) && o.ifNotExists {
		// Only what the command line gives is compared: a plain
		// --if-not-exists accepts the topic as it is.
		t, err := store.Topic(o.topic)
		if err != nil {
			return err
		}
		given := 0
		if o.partitionsGiven {
			given = o.partitions
		}
		return topicMismatch(t, given, o.settings)
	}
	if err != nil {
		if errors.Is(err, logstore.ErrTopicExists) {
			return errors.New(err.Error() + " (use --if-not-exists to accept that)")
		}
		return err
	}
	e.info("created topic %s with %d partition%s in %s", o.topic, o.partitions, plural(o.partitions), e.dataDir)
	return nil
}
