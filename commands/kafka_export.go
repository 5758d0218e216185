package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/urfave/cli/v2"

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
	compression kgo.CompressionCodec
	json        bool
	conn        kafkaConn
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
		&cli.StringFlag{Name: "compression", Value: "none", Usage: "compress batches with `CODEC`: none, gzip, snappy, lz4 or zstd"},
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
	codecs := map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
		"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}
	var ok bool
	if o.compression, ok = codecs[c.String("compression")]; !ok {
		return o, usagef("--compression must be none, gzip, snappy, lz4 or zstd, not %q", c.String("compression"))
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

// exportPart is one partition being exported.
type exportPart struct {
	ref      partitionRef
	p        *logstore.Partition
	from     uint64                   // the first offset exported
	next     uint64                   // the partition's end when the export started
	promise  func(*kgo.Record, error) // calls acknowledged
	mu       sync.Mutex               // guards what follows
	inFlight exportQueue              // the records produced and not yet settled
	acked    uint64                   // the offset after the last one acknowledged, all before it too
	failed   bool                     // a record was not acknowledged: acked stays where it is
	stats    kafkaPartStats
}

// exporter produces the records of some partitions to Kafka.
type exporter struct {
	e      *env
	o      kafkaExportOptions
	cl     *kgo.Client
	limit  int64        // the Kafka topic's max.message.bytes, 0 if unknown
	sent   atomic.Int64 // records handed to the client
	acked  atomic.Int64 // records acknowledged
	errMu  sync.Mutex
	err    error  // the first failure
	cancel func() // stops reading and producing, on a failure
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
	kt, err := exportTopic(sigCtx, o, t.Partitions, refs)
	if err != nil {
		return err
	}
	opts := []kgo.Opt{kgo.DefaultProduceTopic(o.kafkaTopic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(o.compression),
		// Larger batches, as librdkafka makes them (linger.ms 5): fewer
		// requests for the cluster to handle. Buffered records bound the
		// memory: franz-go's default, 50000, costs more and is no faster.
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.MaxBufferedRecords(20000)}
	if kt.maxMessage > 0 && kt.maxMessage <= 1<<31-1 {
		// Records up to the topic's limit may go; a larger one fails as
		// Kafka itself would refuse it.
		opts = append(opts, kgo.ProducerBatchMaxBytes(int32(kt.maxMessage)))
	}
	cl, err := o.conn.connect(sigCtx, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	// The tracker's output is not used: a position is advanced only once
	// Kafka acknowledged the records before it.
	gt, err := openGroupTracker(e, o.group, o.topic, o.explicit, io.Discard, 0)
	if err != nil {
		return err
	}
	defer func() { err = gt.finish(err) }()
	parts, err := exportStarts(gt, refs, o)
	defer func() {
		for _, ep := range parts {
			ep.p.Close()
		}
	}()
	if err != nil {
		return err
	}
	started := time.Now()
	// Readers stop on a signal or a failure; records handed to the client
	// fail only on a failure, so that after a signal Kafka gets them all.
	readCtx, stopReading := context.WithCancel(sigCtx)
	prodCtx, stopProducing := context.WithCancel(context.Background())
	x := &exporter{e: e, o: o, cl: cl, limit: kt.maxMessage, cancel: func() { stopReading(); stopProducing() }}
	defer x.cancel()
	bar := newCountBar(e, "export", "records")
	var total int64
	for _, ep := range parts {
		total += int64(ep.next - min(ep.from, ep.next))
		ep.promise = func(rec *kgo.Record, err error) { x.acknowledged(ep, rec, err) }
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for _, ep := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := x.pump(readCtx, prodCtx, ep); err != nil {
					x.fail(corruptAdvice(err, o.topic))
				}
			}()
		}
		wg.Wait()
		// Waits for every acknowledgement, or a failure (a stall).
		if err := cl.Flush(prodCtx); err != nil && x.failure() == nil {
			x.fail(o.conn.explain(err))
		}
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	lastAcked, progress := int64(0), time.Now()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-tick.C:
		}
		// Records waiting and none acknowledged for the request timeout:
		// the cluster is gone, or refuses them without saying so.
		switch acked := x.acked.Load(); {
		case acked != lastAcked || x.sent.Load() == acked:
			lastAcked, progress = acked, time.Now()
		case time.Since(progress) > o.conn.requestTimeout:
			x.fail(o.conn.explain(fmt.Errorf("no record acknowledged for %v (--request-timeout), %d waiting: %w",
				o.conn.requestTimeout, x.sent.Load()-acked, context.DeadlineExceeded)))
		}
		x.advance(gt, parts)
		if err := gt.maybeCommit(); err != nil {
			x.fail(err)
		}
		if !o.follow {
			bar.update(x.acked.Load(), total)
		}
	}
	bar.finish()
	if err := x.failure(); err != nil {
		return err
	}
	s := kafkaSummary{Direction: "export", Topic: o.topic, KafkaTopic: o.kafkaTopic}
	for _, ep := range parts {
		s.Partitions = append(s.Partitions, &ep.stats)
	}
	return s.print(e, o.json, time.Since(started))
}

// exportTopic checks that the Kafka topic can take the partitions,
// creating it with --create-topic with as many as the seglog topic has
// (partitions), and returns what the cluster says of it.
func exportTopic(ctx context.Context, o kafkaExportOptions, partitions int, refs []partitionRef) (kafkaTopic, error) {
	cl, err := o.conn.connect(ctx)
	if err != nil {
		return kafkaTopic{}, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	kt, exists, err := o.conn.describeKafkaTopic(ctx, adm, o.kafkaTopic)
	if err != nil {
		return kt, err
	}
	if !exists && o.createTopic {
		cctx, cancel := context.WithTimeout(ctx, o.conn.requestTimeout)
		defer cancel()
		resp, err := adm.CreateTopic(cctx, int32(partitions), int16(o.replication), nil, o.kafkaTopic)
		if err == nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) { // created meanwhile: fine
			err = resp.Err
		}
		if err != nil {
			return kt, o.conn.explain(fmt.Errorf("create Kafka topic %s: %w", o.kafkaTopic, err))
		}
		// Not asked again: the client keeps the metadata it saw for a while.
		kt, exists = kafkaTopic{partitions: partitions, maxMessage: maxMessageBytes(cctx, adm, o.kafkaTopic)}, true
	}
	if !exists {
		return kt, fmt.Errorf("Kafka topic %s does not exist on %s (create it with --create-topic)", o.kafkaTopic, strings.Join(o.conn.brokers, ","))
	}
	// Partition p goes to partition p: the highest one exported must exist.
	if need := refs[len(refs)-1].partition + 1; kt.partitions < need {
		return kt, fmt.Errorf("Kafka topic %s has %d partition%s, seglog topic %s has %d: partition p is exported to partition p, so it needs %d "+
			"(add partitions to it, or export to a new topic with --kafka-topic NAME --create-topic)",
			o.kafkaTopic, kt.partitions, plural(kt.partitions), o.topic, partitions, need)
	}
	return kt, nil
}

// exportStarts opens the partitions and works out where each one's export
// starts: --offset and --since as in read, or where the group stopped.
func exportStarts(gt *groupTracker, refs []partitionRef, o kafkaExportOptions) ([]*exportPart, error) {
	var parts []*exportPart
	for _, ref := range refs {
		p, err := ref.open()
		if err != nil {
			return parts, err
		}
		ep := &exportPart{ref: ref, p: p, stats: kafkaPartStats{Partition: ref.partition}}
		parts = append(parts, ep)
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
		ep.from = gt.start(ref.partition, from, start, next)
		ep.next, ep.acked = next, ep.from
	}
	return parts, nil
}

// pump produces one partition's records with prodCtx: those there when
// the export started, or with --follow all of them until ctx is done.
func (x *exporter) pump(ctx, prodCtx context.Context, ep *exportPart) error {
	if x.o.follow {
		f, err := logstore.Follow(ep.p.Dir(), ep.p.Name(), ep.from, logstore.FollowOptions{Warn: func(msg string) { x.e.warn("%s", msg) }})
		if err != nil {
			return err
		}
		defer f.Close()
		for f.Next(ctx) {
			if err := x.produce(prodCtx, ep, f.Record()); err != nil {
				return nil // the failure is already recorded
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		return f.Err()
	}
	if ep.from >= ep.next {
		return nil
	}
	it, err := ep.p.Read(ep.from)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		r := it.Record()
		if r.Offset >= ep.next || ctx.Err() != nil {
			return nil
		}
		if err := x.produce(prodCtx, ep, r); err != nil {
			return nil
		}
	}
	return it.Err()
}

// produce hands a record to the client, copied out of the reader's buffer.
// It returns the export's failure, if any, instead.
func (x *exporter) produce(ctx context.Context, ep *exportPart, r *logstore.Record) error {
	if err := x.failure(); err != nil {
		return err
	}
	var key []byte
	if len(r.Key) > 0 {
		key = r.Key
	}
	ep.mu.Lock()
	rec := ep.inFlight.put(r.Offset, key, r.Value)
	ep.mu.Unlock()
	rec.Partition, rec.Timestamp = int32(ep.ref.partition), time.Unix(0, r.Timestamp)
	x.sent.Add(1)
	x.cl.Produce(ctx, rec, ep.promise)
	return nil
}

// acknowledged is the promise of a record. It moves acked over the
// records acknowledged in a row from the oldest one produced, up to the
// first failure, which fails the export.
func (x *exporter) acknowledged(ep *exportPart, rec *kgo.Record, err error) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if s := ep.inFlight.find(rec); s != nil {
		s.done, s.err = err == nil, err
	}
	for head := ep.inFlight.oldest(); head != nil && !ep.failed; head = ep.inFlight.oldest() {
		switch {
		case head.err != nil:
			ep.failed = true
			x.fail(x.produceError(ep, head))
		case head.done:
			ep.acked = head.offset + 1
			ep.stats.add(int64(head.offset), len(head.rec.Key)+len(head.rec.Value))
			x.acked.Add(1)
			ep.inFlight.drop()
			continue
		}
		break
	}
}

// produceError says which record Kafka did not take, and why.
func (x *exporter) produceError(ep *exportPart, s *exportSent) error {
	if errors.Is(s.err, kerr.MessageTooLarge) || errors.Is(s.err, kerr.RecordListTooLarge) {
		limit := ""
		if x.limit > 0 {
			limit = fmt.Sprintf(" (max.message.bytes %d)", x.limit)
		}
		return fmt.Errorf("record %s offset %d (%d bytes of key and value) is larger than Kafka topic %s accepts%s: %w",
			ep.p.Name(), s.offset, len(s.rec.Key)+len(s.rec.Value), x.o.kafkaTopic, limit, s.err)
	}
	return x.o.conn.explain(fmt.Errorf("produce record %s offset %d to Kafka topic %s partition %d: %w",
		ep.p.Name(), s.offset, x.o.kafkaTopic, s.rec.Partition, s.err))
}

// fail records the export's first failure and stops producing.
func (x *exporter) fail(err error) {
	x.errMu.Lock()
	defer x.errMu.Unlock()
	if x.err == nil {
		x.err = err
		x.cancel()
	}
}

func (x *exporter) failure() error {
	x.errMu.Lock()
	defer x.errMu.Unlock()
	return x.err
}

// advance moves the group's positions up to what Kafka acknowledged.
func (x *exporter) advance(gt *groupTracker, parts []*exportPart) {
	for _, ep := range parts {
		ep.mu.Lock()
		acked := ep.acked
		ep.mu.Unlock()
		gt.advance(ep.ref.partition, acked)
	}
}
