package commands

import (
	"context"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/kafkabridge"
	"github.com/seglog/seglog/logstore"
)

type kafkaExportOptions struct {
	topic       string
	kafkaTopic  string
	partition   int // -1: all
	offset      offsetSpec
	since       *int64
	explicit    bool // --offset or --since given: they win over the group's positions
	follow      bool
	group       groupOptions
	createTopic bool
	replication int
	compression string
	json        bool
	conn        kafkabridge.Conn
}

// kafkaCompressions are the values of --compression: the codecs
// kafkabridge knows, by the names it knows them by.
var kafkaCompressions = choices[string]{
	{"none", "none", ""},
	{"gzip", "gzip", ""},
	{"snappy", "snappy", ""},
	{"lz4", "lz4", ""},
	{"zstd", "zstd", ""},
}

func kafkaExportCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "kafka-topic", Usage: "produce to Kafka topic `NAME`", DefaultText: "TOPIC"},
		&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "export only partition `P`", DefaultText: "all"},
		&cli.StringFlag{Name: "offset", Aliases: []string{"o"}, Value: "beginning", Usage: "start at offset `N`, the last -N of each partition, beginning or end"},
		&cli.StringFlag{Name: "since", Usage: "start at the first record at or after `TIME` (with --offset: whichever comes later)"},
		&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "then export new records as they are appended, until interrupted"},
		&cli.BoolFlag{Name: "create-topic", Usage: "create the Kafka topic, with as many partitions as TOPIC, if it does not exist"},
		&cli.IntFlag{Name: "replication-factor", Value: -1, Usage: "with --create-topic: `N` copies of each partition", DefaultText: "the brokers' default"},
		kafkaCompressions.flag("compression", "none", "compress batches with `CODEC`"),
		&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON"},
	}
	return &cli.Command{
		Name:      "export",
		Usage:     "produce a topic's records to a Kafka topic",
		ArgsUsage: "TOPIC",
		Description: "Only reads (but --group keeps its positions): produces every record of TOPIC,\n" +
			"partition p to partition p of the Kafka topic (TOPIC, or --kafka-topic), with its\n" +
			"key (none when the record has none), value and timestamp (as CreateTime, in\n" +
			"milliseconds), in order within each partition. A Kafka topic with fewer partitions\n" +
			"is refused; --create-topic creates a missing one with TOPIC's partition count.\n" +
			"Without -f it exports the records there when it starts, waits until Kafka has\n" +
			"acknowledged them all, prints a summary on stdout and exits 0. With -f it goes on\n" +
			"exporting records as they are appended, like 'tail -f', until Ctrl-C or SIGTERM,\n" +
			"then waits for the acknowledgements and exits 0.\n\n" +
			"--group NAME resumes each partition where the last read, tail or export with that\n" +
			"group stopped and commits, at least every second and at exit, the position after\n" +
			"the last record Kafka acknowledged: a restart after a crash produces again at most\n" +
			"the records of the last second (at least once); within a run the idempotent\n" +
			"producer removes duplicates. A record larger than the topic's max.message.bytes\n" +
			"stops the export with exit status 1, naming it.\n\n" +
			"Connection: --brokers (or SEGLOG_KAFKA_BROKERS), TLS with --tls and the --tls-*\n" +
			"files, SASL with --sasl-mechanism, --sasl-user and SEGLOG_KAFKA_PASSWORD. An\n" +
			"unreachable cluster fails within --dial-timeout and --request-timeout.\n\n" +
			"Examples:\n" +
			"  seglog kafka export --brokers kafka1:9092,kafka2:9092 --create-topic orders\n" +
			"  seglog kafka export --brokers kafka1:9092 --follow --group to-kafka orders\n" +
			"  seglog kafka export --brokers kafka1:9092 --tls --sasl-mechanism scram-sha-512 --sasl-user seglog orders",
		Flags:        slices.Concat(flags, groupFlags(), kafkaConnFlags()),
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			o, err := parseKafkaExportOptions(c, time.Now())
			if err != nil {
				return err
			}
			return runKafkaExport(envFrom(c), o)
		},
	}
}

func parseKafkaExportOptions(c *cli.Context, now time.Time) (kafkaExportOptions, error) {
	topic, err := topicArg(c)
	if err != nil {
		return kafkaExportOptions{}, err
	}
	o := kafkaExportOptions{topic: topic, kafkaTopic: c.String("kafka-topic"), partition: c.Int("partition"),
		follow: c.Bool("follow"), createTopic: c.Bool("create-topic"), replication: c.Int("replication-factor"),
		json: c.Bool("json"), explicit: c.IsSet("offset") || c.IsSet("since")}
	if o.kafkaTopic == "" {
		o.kafkaTopic = topic
	}
	switch {
	case c.IsSet("partition") && o.partition < 0:
		return o, usagef("--partition must be 0 or more, not %d", o.partition)
	case c.IsSet("replication-factor") && !o.createTopic:
		return o, usagef("--replication-factor only goes with --create-topic")
	case o.replication == 0 || o.replication < -1 || o.replication > 32767:
		return o, usagef("--replication-factor must be between 1 and 32767, or -1 for the brokers' default, not %d", o.replication)
	}
	if err := checkTopicName(o.kafkaTopic); err != nil {
		return o, err
	}
	if o.compression, err = parseChoice(c, "compression", kafkaCompressions); err != nil {
		return o, err
	}
	if o.offset, err = parseOffset(c.String("offset")); err != nil {
		return o, err
	}
	if c.IsSet("since") {
		t, err := parseTime(c.String("since"), now)
		if err != nil {
			return o, usagef("--since: %v", err)
		}
		ns := unixNanoClamped(t)
		o.since = &ns
	}
	if o.group, err = parseGroupOptions(c); err != nil {
		return o, err
	}
	o.conn, err = parseKafkaConn(c)
	return o, err
}

func runKafkaExport(e *env, o kafkaExportOptions) (err error) {
	refs, err := readTargets(e, o.topic, o.partition)
	if err != nil {
		return err
	}
	sigCtx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t, err := logstore.Open(e.dataDir).Topic(o.topic)
	if err != nil {
		return err
	}
	x, err := kafkabridge.NewExporter(sigCtx, o.conn, kafkabridge.ExportOptions{Topic: o.topic, KafkaTopic: o.kafkaTopic,
		Partitions: t.Partitions, Highest: refs[len(refs)-1].partition, CreateTopic: o.createTopic,
		Replication: int16(o.replication), Compression: o.compression, Follow: o.follow, Warn: func(msg string) { e.warn("%s", msg) }})
	if err != nil {
		return kafkaError(err)
	}
	defer x.Close()
	// The tracker's output is not used: a position is advanced only once
	// Kafka acknowledged the records before it.
	gt, err := openGroupTracker(e, o.group, o.topic, o.explicit, io.Discard, 0)
	if err != nil {
		return err
	}
	defer func() { err = gt.finish(err) }()
	parts, err := exportStarts(gt, refs, o)
	defer func() {
		for _, p := range parts {
			p.Partition.Close()
		}
	}()
	if err != nil {
		return err
	}
	started := time.Now()
	bar := newCountBar(e, "export", "records")
	moved, err := x.Run(sigCtx, parts, func(p kafkabridge.ExportProgress) error {
		for i, next := range p.Positions {
			gt.advance(parts[i].Number, next)
		}
		if !o.follow {
			bar.update(p.Acked, p.Total)
		}
		return gt.maybeCommit()
	})
	bar.finish()
	if err != nil {
		return corruptAdvice(err, o.topic)
	}
	s := newKafkaSummary("export", o.topic, o.kafkaTopic, moved)
	return s.print(e, o.json, time.Since(started))
}

// exportStarts opens the partitions and works out where each one's export
// starts: --offset and --since as in read, or where the group stopped.
func exportStarts(gt *groupTracker, refs []partitionRef, o kafkaExportOptions) ([]kafkabridge.ExportPartition, error) {
	var parts []kafkabridge.ExportPartition
	for _, ref := range refs {
		p, err := ref.open()
		if err != nil {
			return parts, err
		}
		parts = append(parts, kafkabridge.ExportPartition{Number: ref.partition, Partition: p})
		ep := &parts[len(parts)-1]
		ext, err := p.Extent()
		if err != nil {
			return parts, err
		}
		if ext.Full {
			return parts, errFullPartition(p.Name(), "kafka export")
		}
		start, next := ext.Start, ext.Next
		from, _, err := o.offset.start(p.Name(), ext, p.StartOfLast)
		if err != nil {
			return parts, err
		}
		if o.since != nil {
			at, err := p.OffsetAtTime(*o.since)
			if err != nil {
				return parts, err
			}
			from = max(from, at)
		}
		ep.From, ep.Next = gt.start(ref.partition, from, start, next), next
	}
	return parts, nil
}
