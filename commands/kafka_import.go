package commands

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/kafkabridge"
	"github.com/seglog/seglog/logstore"
)

type kafkaImportOptions struct {
	topic         string
	kafkaTopic    string
	fromEnd       bool // a partition with no saved position starts at its end
	reset         bool
	follow        bool
	noDropHeaders bool
	json          bool
	sync          logstore.SyncMode
	lockWait      time.Duration
	conn          kafkabridge.Conn
}

// kafkaImportStarts are the values of --from: whether a partition with no
// saved position starts at its end.
var kafkaImportStarts = choices[bool]{
	{"beginning", false, ""},
	{"end", true, ""},
}

func kafkaImportCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "kafka-topic", Usage: "consume Kafka topic `NAME`", DefaultText: "TOPIC"},
		kafkaImportStarts.flag("from", "beginning", "`WHERE` a partition with no saved position starts"),
		&cli.BoolFlag{Name: "reset", Usage: "forget the saved position and start as --from says"},
		&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "then import new records as they are produced, until interrupted"},
		&cli.BoolFlag{Name: "no-drop-headers", Usage: "fail on a record with headers instead of dropping them"},
		&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON"},
	}
	return &cli.Command{
		Name:      "import",
		Usage:     "consume a Kafka topic into a topic",
		ArgsUsage: "TOPIC",
		Description: "Changes files: appends the records of the Kafka topic (TOPIC, or --kafka-topic),\n" +
			"Kafka partition p to partition p of TOPIC, which is created with the Kafka topic's\n" +
			"partition count if it does not exist (one with fewer partitions is refused). Keys and\n" +
			"values are kept byte for byte (an empty key is no key); the timestamp is the Kafka\n" +
			"record's, raised to the partition's newest if older so the time index stays sorted\n" +
			"(a record without one, -1, gets the time of import, as append stamps).\n" +
			"Headers, which seglog records cannot hold, are dropped with a warning that counts\n" +
			"them, or refused with --no-drop-headers (exit status 1 naming the record; the\n" +
			"records before it are kept).\n\n" +
			"Where it got to is saved in <data-dir>/.kafka-import/TOPIC/position.json, each time\n" +
			"only after the records before it are synced (every second and at exit), so a restart\n" +
			"goes on where the last run stopped; a crash imports again at most the records of the\n" +
			"last second. --from (default beginning) applies to partitions with no saved position,\n" +
			"--reset forgets it. Without -f it imports up to the end the partitions had when it\n" +
			"started and exits 0; with -f it goes on until Ctrl-C or SIGTERM, then syncs, saves\n" +
			"its position and exits 0. Prints a summary on stdout.\n\n" +
			"Connection flags as for 'seglog kafka export'.\n\n" +
			"Examples:\n" +
			"  seglog kafka import --brokers kafka1:9092 orders\n" +
			"  seglog kafka import --brokers kafka1:9092 --kafka-topic prod.orders --follow --from end orders",
		Flags:        slices.Concat(flags, writerFlags(), kafkaConnFlags()),
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			o, err := parseKafkaImportOptions(c)
			if err != nil {
				return err
			}
			return runKafkaImport(envFrom(c), o)
		},
	}
}

func parseKafkaImportOptions(c *cli.Context) (kafkaImportOptions, error) {
	topic, err := topicArg(c)
	if err != nil {
		return kafkaImportOptions{}, err
	}
	o := kafkaImportOptions{topic: topic, kafkaTopic: c.String("kafka-topic"), reset: c.Bool("reset"),
		follow: c.Bool("follow"), noDropHeaders: c.Bool("no-drop-headers"), json: c.Bool("json")}
	if o.kafkaTopic == "" {
		o.kafkaTopic = topic
	}
	if o.fromEnd, err = parseChoice(c, "from", kafkaImportStarts); err != nil {
		return o, err
	}
	if err := checkTopicName(o.kafkaTopic); err != nil {
		return o, err
	}
	if o.sync, o.lockWait, err = writerOptionsFrom(c); err != nil {
		return o, err
	}
	o.conn, err = parseKafkaConn(c)
	return o, err
}

func runKafkaImport(e *env, o kafkaImportOptions) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store := logstore.Open(e.dataDir)
	im, err := kafkabridge.NewImporter(ctx, o.conn, store, kafkabridge.ImportOptions{Topic: o.topic, KafkaTopic: o.kafkaTopic,
		FromEnd: o.fromEnd, Reset: o.reset, Follow: o.follow, RefuseHeaders: o.noDropHeaders, Warn: func(msg string) { e.warn("%s", msg) }})
	if err != nil {
		return kafkaError(err)
	}
	defer im.Close()
	partitions := im.Partitions()
	_, err = openTopicForAppend(e, store, appendTarget{topic: o.topic, create: true, partitions: partitions}, func(have int, _ bool) error {
		if have < partitions {
			return fmt.Errorf("topic %s has %d partition%s, Kafka topic %s has %d: Kafka partition p is imported to partition p",
				o.topic, have, plural(have), o.kafkaTopic, partitions)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var writers []*logstore.Writer
	defer func() {
		for _, w := range writers {
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
	}()
	for p := range partitions {
		w, err := store.OpenWriter(o.topic, p, logstore.WriterOptions{Sync: o.sync, LockWait: o.lockWait,
			Warn: func(m string) { e.warn("%s", m) }})
		if err != nil {
			return lockAdvice(err, o.lockWait)
		}
		writers = append(writers, w)
	}
	started := time.Now()
	bar := newCountBar(e, "import", "records")
	moved, err := im.Run(ctx, writers, bar.update)
	bar.finish()
	if err != nil {
		return err
	}
	if moved.HeadersDropped > 0 {
		e.warn("dropped %d header%s of %d record%s: seglog records hold no headers (--no-drop-headers refuses them)",
			moved.HeadersDropped, plural(int(moved.HeadersDropped)), moved.RecordsWithHeaders, plural(int(moved.RecordsWithHeaders)))
	}
	s := newKafkaSummary("import", o.topic, o.kafkaTopic, moved)
	return s.print(e, o.json, time.Since(started))
}
