package commands

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

func addPartitionsCommand() *cli.Command {
	return &cli.Command{
		Name:      "add-partitions",
		Usage:     "grow a topic to more partitions",
		ArgsUsage: "TOPIC",
		Description: "Changes files: adds empty partitions to the topic, under its maintenance lock,\n" +
			"until it has --partitions N (the new total, as kafka-topics --alter takes it).\n" +
			"Partitions are never removed: N below the count the topic has is an error naming\n" +
			"both; N equal to it changes nothing. Each new partition is made whole in a\n" +
			"hidden directory and renamed into place, lowest first: a crash leaves fewer of\n" +
			"them, never a gap, and running it again adds the rest. As kafka-topics warns,\n" +
			"records with a key route to another partition from now on (FNV-1a of the key\n" +
			"modulo the partition count), so a key's old and new records are no longer in\n" +
			"one partition. Appends running now keep routing over the count they opened\n" +
			"the topic with until they end, so it is not refused while one writes.\n\n" +
			"Examples:\n" +
			"  seglog add-partitions orders --partitions 6\n" +
			"  seglog -q add-partitions orders --partitions 12 --json",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "partitions", Usage: "the topic's new partition count `N`", DefaultText: "none: required"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document instead of a line"},
		},
		Action: func(c *cli.Context) error {
			topic, err := topicArg(c)
			if err != nil {
				return err
			}
			if !c.IsSet("partitions") {
				return usagef("add-partitions: missing --partitions N, the topic's new partition count")
			}
			n := c.Int("partitions")
			if n < 1 || n > logstore.MaxPartitions {
				return usagef("--partitions must be between 1 and %d, not %d", logstore.MaxPartitions, n)
			}
			return runAddPartitions(envFrom(c), topic, n, c.Bool("json"))
		},
	}
}

type addPartitionsJSON struct {
	Topic string `json:"topic"`
	Old   int    `json:"old_partitions"`
	New   int    `json:"new_partitions"`
}

func runAddPartitions(e *env, topic string, n int, asJSON bool) error {
	old, err := logstore.Open(e.dataDir).AddPartitions(topic, n, logstore.DefaultLockWait)
	if errors.Is(err, logstore.ErrShrink) {
		return fmt.Errorf("%w; it was left as it is", err)
	}
	if err != nil {
		return topicLockAdvice(err)
	}
	if old < n {
		e.warn("records with a key in topic %s now route to other partitions than before (%d partitions instead of %d): a key's new records are no longer in the partition of its old ones", topic, n, old)
	}
	if asJSON {
		return writeJSONDocument(e.stdout, addPartitionsJSON{Topic: topic, Old: old, New: n})
	}
	msg := fmt.Sprintf("topic %s: %d -> %d partitions\n", topic, old, n)
	if old == n {
		msg = fmt.Sprintf("topic %s already has %d partition%s: nothing changed\n", topic, n, plural(n))
	}
	_, err = fmt.Fprint(e.stdout, msg)
	return err
}
