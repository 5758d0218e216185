package commands

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

type deleteOptions struct {
	topics []string
	yes    bool
	json   bool
}

func deleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Usage:     "delete topics and everything in them",
		ArgsUsage: "TOPIC...",
		Description: "Changes files: removes each TOPIC's directory, records, settings and all. Every\n" +
			"TOPIC must exist, and nothing is deleted unless each can be: a topic whose\n" +
			"maintenance lock (a retention sweep, recover or copy) or a partition's writer lock\n" +
			"(an append, import or kafka import) is held is refused, naming the holder's pid.\n" +
			"On a terminal it asks before deleting each topic; otherwise --yes must say so.\n" +
			"A topic disappears at once: its directory is renamed aside to a hidden\n" +
			"<data-dir>/.delete-TOPIC-*.tmp and the data directory synced before its files\n" +
			"are removed, so a crash leaves the topic whole or gone, and 'seglog recover'\n" +
			"removes what such a crash left. Consumer groups keep their positions in it\n" +
			"(describe --groups notes the topic as not found). A running 'tail -F' says the\n" +
			"topic was deleted and waits for it to come back.\n\n" +
			"Examples:\n" +
			"  seglog delete users\n" +
			"  seglog delete --yes users app-logs\n" +
			"  seglog delete --yes users --json",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "yes", Usage: "delete without asking (needed when stdin is not a terminal)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document instead of a line per topic"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("delete: missing TOPIC (see 'seglog delete --help')")
			}
			o := deleteOptions{yes: c.Bool("yes"), json: c.Bool("json")}
			for _, t := range c.Args().Slice() {
				if err := checkTopicName(t); err != nil {
					return err
				}
				if !slices.Contains(o.topics, t) {
					o.topics = append(o.topics, t)
				}
			}
			return runDelete(envFrom(c), o)
		},
	}
}

type deleteJSON struct {
	Deleted []deletedTopicJSON `json:"deleted"`
}

type deletedTopicJSON struct {
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
	Bytes      int64  `json:"bytes"`
}

func runDelete(e *env, o deleteOptions) error {
	store := logstore.Open(e.dataDir)
	sizes := make([]logstore.TopicSize, len(o.topics))
	for i, t := range o.topics {
		size, err := store.StatTopicSize(t)
		if errors.Is(err, logstore.ErrTopicNotFound) {
			if _, serr := os.Stat(e.dataDir); serr != nil {
				err = missingDataDir(err, e.dataDir)
			}
			return fmt.Errorf("%w; nothing was deleted", err)
		}
		if err != nil {
			return err
		}
		sizes[i] = size
	}
	topics := o.topics
	if !o.yes {
		if !isTerminal(e.stdin) {
			return usagef("delete: pass --yes to delete %s (stdin is not a terminal to ask on)", strings.Join(o.topics, ", "))
		}
		if topics = confirmDeletes(e, bufio.NewReader(e.stdin), o.topics, sizes); len(topics) == 0 {
			return nil
		}
	}
	// Every lock first: a topic in use refuses them all.
	deletions := make([]*logstore.TopicDeletion, 0, len(topics))
	defer func() {
		for _, d := range deletions {
			d.Release()
		}
	}()
	for _, t := range topics {
		d, err := store.LockTopicForDelete(t, 0)
		var locked *logstore.LockedError
		if errors.As(err, &locked) {
			return fmt.Errorf("%w: %s; nothing was deleted (stop it, or wait for it to finish, and run delete again)", err, lockHolderKind(locked))
		}
		if err != nil {
			return fmt.Errorf("%w; nothing was deleted", err)
		}
		deletions = append(deletions, d)
	}
	doc := deleteJSON{Deleted: []deletedTopicJSON{}}
	for i, d := range deletions {
		if err := d.Delete(); err != nil {
			return err
		}
		dj := deletedTopicJSON{Topic: topics[i], Partitions: d.Size.Partitions, Bytes: d.Size.Bytes}
		if o.json {
			doc.Deleted = append(doc.Deleted, dj)
		} else if _, err := fmt.Fprintf(e.stdout, "deleted topic %s (%s)\n", dj.Topic, topicSizeText(d.Size)); err != nil {
			return err
		}
	}
	if o.json {
		return writeJSONDocument(e.stdout, doc)
	}
	return nil
}

// confirmDeletes asks on stderr about each topic, reading the answers from
// in, and returns those the answer was yes to.
func confirmDeletes(e *env, in *bufio.Reader, topics []string, sizes []logstore.TopicSize) []string {
	var yes []string
	for i, t := range topics {
		fmt.Fprintf(e.stderr, "delete topic %s (%s)? [y/N] ", t, topicSizeText(sizes[i]))
		answer, err := in.ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a == "y" || a == "yes" {
			yes = append(yes, t)
		} else {
			fmt.Fprintf(e.stderr, "left topic %s as it is\n", t)
		}
		if err != nil {
			break // end of input: no to the rest
		}
	}
	return yes
}

// topicSizeText is "3 partitions, 1.5MiB".
func topicSizeText(size logstore.TopicSize) string {
	return fmt.Sprintf("%d partition%s, %s", size.Partitions, plural(size.Partitions), humanSize(size.Bytes))
}

// lockHolderKind says what holds a lock delete needs, by which lock it is.
func lockHolderKind(locked *logstore.LockedError) string {
	if strings.HasPrefix(locked.What, "partition ") {
		return "a writer (append, import or kafka import) is writing to it"
	}
	return "a retention sweep, recover or copy is working on it"
}

// topicLockAdvice says what to do about a topic's lock another process
// held for longer than a sweep or copy takes to let go.
func topicLockAdvice(err error) error {
	var locked *logstore.LockedError
	if errors.As(err, &locked) {
		return fmt.Errorf("%w: %s; try again once it is done", err, lockHolderKind(locked))
	}
	return err
}
