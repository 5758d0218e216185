package kafkabridge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/seglog/seglog/logstore"
)

// ExportOptions say where an export goes and how.
type ExportOptions struct {
	Topic      string // the seglog topic, as messages name it
	KafkaTopic string
	// Partitions is the seglog topic's partition count, which CreateTopic
	// gives the Kafka topic; Highest is the highest partition exported,
	// which must exist in Kafka: partition p goes to partition p.
	Partitions, Highest int
	CreateTopic         bool  // create the Kafka topic if it does not exist
	Replication         int16 // a created topic's replication factor; -1: the brokers' default
	Compression         string
	Follow              bool         // go on with records as they are appended, until the context is done
	Warn                func(string) // what a follower notices on the way
}

// compressions are the batch codecs by name.
var compressions = map[string]func() kgo.CompressionCodec{"none": kgo.NoCompression, "gzip": kgo.GzipCompression,
	"snappy": kgo.SnappyCompression, "lz4": kgo.Lz4Compression, "zstd": kgo.ZstdCompression}

// KnownCompression reports whether name is a codec ExportOptions.Compression
// takes: none, gzip, snappy, lz4 or zstd.
func KnownCompression(name string) bool { return compressions[name] != nil }

// ExportPartition is a partition to export and where.
type ExportPartition struct {
	Number    int // the partition's number, and the Kafka partition it goes to
	Partition *logstore.Partition
	From      uint64 // the first offset exported
	Next      uint64 // the partition's end when the export started: without Follow, where it stops
}

// ExportProgress is how far an export got, handed to ExportRun.Tick.
type ExportProgress struct {
	Acked int64 // records acknowledged
	Total int64 // records there were to export when it started
	// Positions has, for each partition in the order given to Run, the
	// offset after the last record Kafka acknowledged, and all before it.
	// It is the exporter's: read it during the call only.
	Positions []uint64
}

// tickEvery is how often Run checks for a stall and calls Tick.
const tickEvery = 200 * time.Millisecond

// Exporter produces the records of logstore partitions to a Kafka topic.
type Exporter struct {
	conn  Conn
	o     ExportOptions
	cl    *kgo.Client
	limit int64 // the Kafka topic's max.message.bytes, 0 if unknown

	sent   atomic.Int64 // records handed to the client
	acked  atomic.Int64 // records acknowledged
	errMu  sync.Mutex
	err    error  // the first failure
	cancel func() // stops reading and producing, on a failure
}

// NewExporter checks that the Kafka topic can take the partitions,
// creating it with CreateTopic, and connects the producer.
func NewExporter(ctx context.Context, conn Conn, o ExportOptions) (*Exporter, error) {
	codec := compressions[o.Compression]
	if codec == nil {
		return nil, &SettingsError{Err: fmt.Errorf("unknown compression %q", o.Compression)}
	}
	kt, err := exportTopic(ctx, conn, o)
	if err != nil {
		return nil, err
	}
	opts := []kgo.Opt{kgo.DefaultProduceTopic(o.KafkaTopic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(codec()),
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
	cl, err := conn.connect(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return &Exporter{conn: conn, o: o, cl: cl, limit: kt.maxMessage}, nil
}

// Close closes the producer.
func (x *Exporter) Close() { x.cl.Close() }

// exportTopic checks that the Kafka topic can take the partitions,
// creating it with o.CreateTopic with as many as the seglog topic has, and
// returns what the cluster says of it.
func exportTopic(ctx context.Context, conn Conn, o ExportOptions) (topicInfo, error) {
	cl, err := conn.connect(ctx)
	if err != nil {
		return topicInfo{}, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	kt, exists, err := conn.describeTopic(ctx, adm, o.KafkaTopic)
	if err != nil {
		return kt, err
	}
	if !exists && o.CreateTopic {
		cctx, cancel := context.WithTimeout(ctx, conn.RequestTimeout)
		defer cancel()
		resp, err := adm.CreateTopic(cctx, int32(o.Partitions), o.Replication, nil, o.KafkaTopic)
		if err == nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) { // created meanwhile: fine
			err = resp.Err
		}
		if err != nil {
			return kt, conn.explain(fmt.Errorf("create Kafka topic %s: %w", o.KafkaTopic, err))
		}
		// Not asked again: the client keeps the metadata it saw for a while.
		kt, exists = topicInfo{partitions: o.Partitions, maxMessage: maxMessageBytes(cctx, adm, o.KafkaTopic)}, true
	}
	if !exists {
		return kt, fmt.Errorf("%w (create it with --create-topic)", conn.errTopicMissing(o.KafkaTopic))
	}
	if need := o.Highest + 1; kt.partitions < need {
		return kt, fmt.Errorf("Kafka topic %s has %d partition%s, seglog topic %s has %d: partition p is exported to partition p, so it needs %d "+
			"(add partitions to it, or export to a new topic with --kafka-topic NAME --create-topic)",
			o.KafkaTopic, kt.partitions, plural(kt.partitions), o.Topic, o.Partitions, need)
	}
	return kt, nil
}

// exportPart is one partition being exported.
type exportPart struct {
	ExportPartition
	promise  func(*kgo.Record, error) // calls acknowledged
	mu       sync.Mutex               // guards what follows
	inFlight exportQueue              // the records produced and not yet settled
	acked    uint64                   // the offset after the last one acknowledged, all before it too
	failed   bool                     // a record was not acknowledged: acked stays where it is
	stats    PartitionStats
}

// Run, called once, exports parts: the records from each one's From up to its Next, or
// with Follow all of them until ctx is done; then it waits until Kafka
// has acknowledged every record produced. About five times a second, and
// once at the end, it calls tick (which may be nil) with how far Kafka
// acknowledged: an error from tick fails the export.
//
// It fails on the first record Kafka does not take, on a read error (which
// it returns as logstore gave it), or when records wait for longer than
// the connection's RequestTimeout and none is acknowledged. After a
// failure, positions stay where the acknowledgements got.
func (x *Exporter) Run(ctx context.Context, parts []ExportPartition, tick func(ExportProgress) error) (Summary, error) {
	// Readers stop when ctx is done or on a failure; records handed to the
	// client fail only on a failure, so that after a signal Kafka gets
	// them all.
	readCtx, stopReading := context.WithCancel(ctx)
	prodCtx, stopProducing := context.WithCancel(context.Background())
	x.cancel = func() { stopReading(); stopProducing() }
	defer x.cancel()
	progress := ExportProgress{Positions: make([]uint64, len(parts))}
	eps := make([]*exportPart, len(parts))
	for i, p := range parts {
		ep := &exportPart{ExportPartition: p, acked: p.From, stats: PartitionStats{Partition: p.Number}}
		ep.promise = func(rec *kgo.Record, err error) { x.acknowledged(ep, rec, err) }
		progress.Total += int64(p.Next - min(p.From, p.Next))
		eps[i] = ep
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for _, ep := range eps {
			wg.Go(func() {
				if err := x.pump(readCtx, prodCtx, ep); err != nil {
					x.fail(err)
				}
			})
		}
		wg.Wait()
		// Waits for every acknowledgement, or a failure (a stall).
		if err := x.cl.Flush(prodCtx); err != nil && x.failure() == nil {
			x.fail(x.conn.explain(err))
		}
	}()
	ticker := time.NewTicker(tickEvery)
	defer ticker.Stop()
	lastAcked, moved := int64(0), time.Now()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-ticker.C:
		}
		// Records waiting and none acknowledged for the request timeout:
		// the cluster is gone, or refuses them without saying so.
		switch acked := x.acked.Load(); {
		case acked != lastAcked || x.sent.Load() == acked:
			lastAcked, moved = acked, time.Now()
		case time.Since(moved) > x.conn.RequestTimeout:
			x.fail(x.conn.explain(fmt.Errorf("no record acknowledged for %v (--request-timeout), %d waiting: %w",
				x.conn.RequestTimeout, x.sent.Load()-acked, context.DeadlineExceeded)))
		}
		if tick == nil {
			continue
		}
		for i, ep := range eps {
			ep.mu.Lock()
			progress.Positions[i] = ep.acked
			ep.mu.Unlock()
		}
		progress.Acked = x.acked.Load()
		if err := tick(progress); err != nil {
			x.fail(err)
		}
	}
	s := Summary{Partitions: make([]PartitionStats, len(eps))}
	for i, ep := range eps {
		s.Partitions[i] = ep.stats
	}
	return s, x.failure()
}

// pump produces one partition's records with prodCtx: those there when
// the export started, or with Follow all of them until ctx is done.
func (x *Exporter) pump(ctx, prodCtx context.Context, ep *exportPart) error {
	if x.o.Follow {
		f, err := logstore.Follow(ep.Partition.Dir(), ep.Partition.Name(), ep.From, logstore.FollowOptions{Warn: x.o.Warn})
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
	if ep.From >= ep.Next {
		return nil
	}
	it, err := ep.Partition.Read(ep.From)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		r := it.Record()
		if r.Offset >= ep.Next || ctx.Err() != nil {
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
func (x *Exporter) produce(ctx context.Context, ep *exportPart, r *logstore.Record) error {
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
	rec.Partition, rec.Timestamp = int32(ep.Number), time.Unix(0, r.Timestamp)
	x.sent.Add(1)
	x.cl.Produce(ctx, rec, ep.promise)
	return nil
}

// acknowledged is the promise of a record. It moves acked over the
// records acknowledged in a row from the oldest one produced, up to the
// first failure, which fails the export.
func (x *Exporter) acknowledged(ep *exportPart, rec *kgo.Record, err error) {
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
func (x *Exporter) produceError(ep *exportPart, s *exportSent) error {
	if errors.Is(s.err, kerr.MessageTooLarge) || errors.Is(s.err, kerr.RecordListTooLarge) {
		limit := ""
		if x.limit > 0 {
			limit = fmt.Sprintf(" (max.message.bytes %d)", x.limit)
		}
		return fmt.Errorf("record %s offset %d (%d bytes of key and value) is larger than Kafka topic %s accepts%s: %w",
			ep.Partition.Name(), s.offset, len(s.rec.Key)+len(s.rec.Value), x.o.KafkaTopic, limit, s.err)
	}
	return x.conn.explain(fmt.Errorf("produce record %s offset %d to Kafka topic %s partition %d: %w",
		ep.Partition.Name(), s.offset, x.o.KafkaTopic, s.rec.Partition, s.err))
}

// fail records the export's first failure and stops producing.
func (x *Exporter) fail(err error) {
	x.errMu.Lock()
	defer x.errMu.Unlock()
	if x.err == nil {
		x.err = err
		x.cancel()
	}
}

func (x *Exporter) failure() error {
	x.errMu.Lock()
	defer x.errMu.Unlock()
	return x.err
}
