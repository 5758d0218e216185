package commands

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

type kafkaImportOptions struct {
	topic         string
	kafkaTopic    string
	from          string // beginning or end: where a partition with no saved position starts
	reset         bool
	follow        bool
	noDropHeaders bool
	json          bool
	sync          logstore.SyncMode
	lockWait      time.Duration
	conn          kafkaConn
}

func kafkaImportCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "kafka-topic", Usage: "consume Kafka topic `NAME`", DefaultText: "TOPIC"},
		&cli.StringFlag{Name: "from", Value: "beginning", Usage: "where a partition with no saved position starts: `beginning` or end"},
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
	o := kafkaImportOptions{topic: topic, kafkaTopic: c.String("kafka-topic"), from: c.String("from"), reset: c.Bool("reset"),
		follow: c.Bool("follow"), noDropHeaders: c.Bool("no-drop-headers"), json: c.Bool("json")}
	if o.kafkaTopic == "" {
		o.kafkaTopic = topic
	}
	if o.from != "beginning" && o.from != "end" {
		return o, usagef("--from must be beginning or end, not %q", o.from)
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

// importer appends the records of a Kafka topic to a seglog topic.
type importer struct {
	e       *env
	o       kafkaImportOptions
	store   *logstore.Store
	writers []*logstore.Writer // by partition
	next    map[int32]int64    // Kafka partition -> next offset to import
	saved   map[int32]int64    // what the position file holds
	until   map[int32]int64    // without --follow: the end offsets when the import started
	stats   []kafkaPartStats
	clock   logstore.RunClock
	headers int64 // headers dropped
	withHdr int64 // records that had them
}

func runKafkaImport(e *env, o kafkaImportOptions) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cl, err := o.conn.connect(ctx, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	kt, exists, err := o.conn.describeKafkaTopic(ctx, adm, o.kafkaTopic)
	if err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("Kafka topic %s does not exist on %s", o.kafkaTopic, strings.Join(o.conn.brokers, ","))
	}
	store := logstore.Open(e.dataDir)
	im := &importer{e: e, o: o, store: store, stats: make([]kafkaPartStats, kt.partitions)}
	// Where to start is settled before the topic is created: a refusal
	// (a position saved from another Kafka topic, offsets the cluster does
	// not give) leaves nothing behind.
	if err := im.starts(ctx, adm, kt.partitions); err != nil {
		return err
	}
	_, err = openTopicForAppend(e, store, appendTarget{topic: o.topic, create: true, partitions: kt.partitions}, func(partitions int, _ bool) error {
		if partitions < kt.partitions {
			return fmt.Errorf("topic %s has %d partition%s, Kafka topic %s has %d: Kafka partition p is imported to partition p",
				o.topic, partitions, plural(partitions), o.kafkaTopic, kt.partitions)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := im.close(); err == nil {
			err = cerr
		}
	}()
	for p := range kt.partitions {
		im.stats[p].Partition = p
		w, err := store.OpenWriter(o.topic, p, logstore.WriterOptions{Sync: o.sync, LockWait: o.lockWait,
			Warn: func(m string) { e.warn("%s", m) }})
		if err != nil {
			return lockAdvice(err, o.lockWait)
		}
		im.writers = append(im.writers, w)
	}
	started := time.Now()
	if err := im.consume(ctx, cl, adm); err != nil {
		// Keep what was imported before the failure.
		if serr := im.checkpoint(); serr != nil {
			return fmt.Errorf("%w; %w", err, serr)
		}
		return err
	}
	if err := im.checkpoint(); err != nil {
		return err
	}
	if im.headers > 0 {
		e.warn("dropped %d header%s of %d record%s: seglog records hold no headers (--no-drop-headers refuses them)",
			im.headers, plural(int(im.headers)), im.withHdr, plural(int(im.withHdr)))
	}
	s := kafkaSummary{Direction: "import", Topic: o.topic, KafkaTopic: o.kafkaTopic}
	for i := range im.stats {
		s.Partitions = append(s.Partitions, &im.stats[i])
	}
	return s.print(e, o.json, time.Since(started))
}

// starts works out where each partition's import starts: at the saved
// position, else as --from says; and, without --follow, where it ends.
func (im *importer) starts(ctx context.Context, adm *kadm.Client, partitions int) error {
	pos, ok, err := im.store.KafkaImportPosition(im.o.topic)
	if err != nil {
		return err
	}
	if ok && pos.KafkaTopic != im.o.kafkaTopic && !im.o.reset {
		return fmt.Errorf("topic %s was imported from Kafka topic %s, not %s (--reset starts over from --from)",
			im.o.topic, pos.KafkaTopic, im.o.kafkaTopic)
	}
	if im.o.reset {
		ok = false
	}
	ctx, cancel := context.WithTimeout(ctx, im.o.conn.requestTimeout)
	defer cancel()
	starts, err := adm.ListStartOffsets(ctx, im.o.kafkaTopic)
	if err == nil {
		err = starts.Error()
	}
	var ends kadm.ListedOffsets
	if err == nil {
		ends, err = adm.ListEndOffsets(ctx, im.o.kafkaTopic)
	}
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return im.o.conn.explain(fmt.Errorf("list offsets of Kafka topic %s: %w", im.o.kafkaTopic, err))
	}
	im.next, im.until = map[int32]int64{}, map[int32]int64{}
	for p := range int32(partitions) {
		first, _ := starts.Lookup(im.o.kafkaTopic, p)
		end, _ := ends.Lookup(im.o.kafkaTopic, p)
		at, saved := pos.Next[p]
		switch {
		case !ok || !saved:
			at = first.Offset
			if im.o.from == "end" {
				at = end.Offset
			}
		case at < first.Offset:
			im.e.warn("Kafka topic %s partition %d: offsets %d..%d were deleted before they were imported; going on at %d",
				im.o.kafkaTopic, p, at, first.Offset-1, first.Offset)
			at = first.Offset
		case at > end.Offset:
			im.e.warn("Kafka topic %s partition %d: the saved position %d is past its end %d (was the topic recreated?); going on at %d",
				im.o.kafkaTopic, p, at, end.Offset, end.Offset)
			at = end.Offset
		}
		im.next[p] = at
		if !im.o.follow {
			im.until[p] = end.Offset
		}
	}
	if ok {
		im.saved = pos.Next
	}
	return nil
}

// idlePolls is how many empty one-second polls in a row end an import
// without --follow that has not reached the end offsets it started with:
// if the cluster still answers, the offsets left are not records
// (transaction markers, records compacted away).
const idlePolls = 3

// consume appends the records from im.next on, saving the position every
// second.
func (im *importer) consume(ctx context.Context, cl *kgo.Client, adm *kadm.Client) error {
	offsets := map[int32]kgo.Offset{}
	for p, at := range im.next {
		if im.o.follow || at < im.until[p] {
			offsets[p] = kgo.NewOffset().At(at)
		}
	}
	if len(offsets) == 0 {
		return nil
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{im.o.kafkaTopic: offsets})
	bar := newCountBar(im.e, "import", "records")
	defer bar.finish()
	var total, done int64
	for p, end := range im.until {
		total += max(end-im.next[p], 0)
	}
	last := time.Now()
	for idle := 0; ; {
		if !im.o.follow && idle == idlePolls {
			return im.idleEnd(ctx, adm)
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fetches := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil // a signal: what was appended is saved by the caller
		}
		for _, fe := range fetches.Errors() {
			if !errors.Is(fe.Err, context.DeadlineExceeded) && !errors.Is(fe.Err, context.Canceled) {
				return im.o.conn.explain(fmt.Errorf("fetch Kafka topic %s partition %d: %w", fe.Topic, fe.Partition, fe.Err))
			}
		}
		n := 0
		for it := fetches.RecordIter(); !it.Done(); {
			r := it.Next()
			if !im.o.follow && r.Offset >= im.until[r.Partition] {
				continue
			}
			if err := im.append(r); err != nil {
				return err
			}
			n++
		}
		done += int64(n)
		if !im.o.follow {
			bar.update(done, total)
			if im.reachedEnd() {
				return nil
			}
		}
		if idle++; n > 0 {
			idle = 0
		}
		if time.Since(last) >= time.Second {
			if err := im.checkpoint(); err != nil {
				return err
			}
			last = time.Now()
		}
	}
}

// idleEnd ends an import without --follow that got nothing for a while
// short of the end offsets: an error if the cluster does not answer, else
// a warning naming what was not reached.
func (im *importer) idleEnd(ctx context.Context, adm *kadm.Client) error {
	ctx, cancel := context.WithTimeout(ctx, im.o.conn.requestTimeout)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, im.o.kafkaTopic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return im.o.conn.explain(fmt.Errorf("fetch Kafka topic %s: nothing came for %ds: %w", im.o.kafkaTopic, idlePolls, err))
	}
	for _, p := range slices.Sorted(maps.Keys(im.until)) {
		if end := im.until[p]; im.next[p] < end {
			im.e.warn("Kafka topic %s partition %d: offsets %d..%d hold no records to import (transaction markers, or compacted away)",
				im.o.kafkaTopic, p, im.next[p], end-1)
		}
	}
	return nil
}

// append appends one Kafka record to its partition.
func (im *importer) append(r *kgo.Record) error {
	if len(r.Headers) > 0 {
		if im.o.noDropHeaders {
			return fmt.Errorf("Kafka topic %s partition %d offset %d has %d header%s, which seglog records cannot hold (without --no-drop-headers they are dropped)",
				r.Topic, r.Partition, r.Offset, len(r.Headers), plural(len(r.Headers)))
		}
		im.headers += int64(len(r.Headers))
		im.withHdr++
	}
	w := im.writers[r.Partition]
	var ts int64
	if ms := r.Timestamp.UnixMilli(); r.Timestamp.IsZero() || ms < 0 {
		// No timestamp (-1, or a v0 message): stamped as append stamps.
		ts = im.clock.Stamp(time.Now().UnixNano(), w)
	} else {
		// Nanoseconds end in the year 2262.
		ts, _ = im.clock.Keep(min(ms, math.MaxInt64/int64(time.Millisecond))*int64(time.Millisecond), w)
	}
	if _, err := w.Append(ts, r.Key, r.Value); err != nil {
		return err
	}
	im.next[r.Partition] = r.Offset + 1
	im.stats[r.Partition].add(r.Offset, len(r.Key)+len(r.Value))
	return nil
}

// reachedEnd reports whether every partition got to the end offset it had
// when the import started.
func (im *importer) reachedEnd() bool {
	for _, p := range slices.Sorted(maps.Keys(im.until)) {
		if end := im.until[p]; im.next[p] < end {
			return false
		}
	}
	return true
}

// checkpoint syncs the writers, then saves the position if it moved: a
// position is never saved before the records below it are durable.
func (im *importer) checkpoint() error {
	if maps.Equal(im.next, im.saved) {
		return nil
	}
	for _, w := range im.writers {
		if err := w.Sync(); err != nil {
			return err
		}
	}
	pos := logstore.KafkaImportPosition{KafkaTopic: im.o.kafkaTopic, Next: maps.Clone(im.next)}
	if err := im.store.SaveKafkaImportPosition(im.o.topic, pos); err != nil {
		return err
	}
	im.saved = pos.Next
	return nil
}

// close closes the writers, returning the first error.
func (im *importer) close() error {
	var first error
	for _, w := range im.writers {
		if err := w.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
