package kafkabridge

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/seglog/seglog/logstore"
)

// ImportOptions say what an import reads and how.
type ImportOptions struct {
	Topic      string // the seglog topic imported into
	KafkaTopic string
	// FromEnd starts a partition with no saved position at its end offset
	// (only records produced from then on), rather than at its start.
	FromEnd       bool
	Reset         bool // forget the saved position
	Follow        bool // go on with records as they are produced, until the context is done
	RefuseHeaders bool // fail on a record with headers instead of dropping them
	Warn          func(string)
}

// Importer appends the records of a Kafka topic to a seglog topic,
// Kafka partition p to partition p, and saves how far it got in the
// store's import position for the topic.
type Importer struct {
	conn    Conn
	o       ImportOptions
	store   *logstore.Store
	cl      *kgo.Client
	adm     *kadm.Client
	writers []*logstore.Writer // by partition
	next    map[int32]int64    // Kafka partition -> next offset to import
	saved   map[int32]int64    // what the position file holds
	until   map[int32]int64    // without Follow: the end offsets when the import started
	summary Summary
	clock   logstore.RunClock
}

// NewImporter connects, looks the Kafka topic up and works out where each
// partition's import starts: at the saved position, else as FromEnd says;
// and, without Follow, where it ends. It changes nothing on disk, so a
// refusal (a position saved from another Kafka topic, offsets the cluster
// does not give) leaves nothing behind.
func NewImporter(ctx context.Context, conn Conn, store *logstore.Store, o ImportOptions) (*Importer, error) {
	cl, err := conn.connect(ctx, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	im := &Importer{conn: conn, o: o, store: store, cl: cl, adm: kadm.NewClient(cl)}
	kt, exists, err := conn.describeTopic(ctx, im.adm, o.KafkaTopic)
	if err == nil && !exists {
		err = conn.errTopicMissing(o.KafkaTopic)
	}
	if err == nil {
		err = im.starts(ctx, kt.partitions)
	}
	if err != nil {
		cl.Close()
		return nil, err
	}
	im.summary.Partitions = make([]PartitionStats, kt.partitions)
	for p := range im.summary.Partitions {
		im.summary.Partitions[p].Partition = p
	}
	return im, nil
}

// Partitions is the Kafka topic's partition count: Run needs a writer for
// each.
func (im *Importer) Partitions() int { return len(im.summary.Partitions) }

// Close closes the client. The writers are the caller's to close.
func (im *Importer) Close() { im.cl.Close() }

// starts works out where each partition's import starts: at the saved
// position, else as FromEnd says; and, without Follow, where it ends.
func (im *Importer) starts(ctx context.Context, partitions int) error {
	pos, ok, err := im.store.KafkaImportPosition(im.o.Topic)
	if err != nil {
		return err
	}
	if ok && pos.KafkaTopic != im.o.KafkaTopic && !im.o.Reset {
		return fmt.Errorf("topic %s was imported from Kafka topic %s, not %s (--reset starts over from --from)",
			im.o.Topic, pos.KafkaTopic, im.o.KafkaTopic)
	}
	if im.o.Reset {
		ok = false
	}
	ctx, cancel := context.WithTimeout(ctx, im.conn.RequestTimeout)
	defer cancel()
	starts, err := im.adm.ListStartOffsets(ctx, im.o.KafkaTopic)
	if err == nil {
		err = starts.Error()
	}
	var ends kadm.ListedOffsets
	if err == nil {
		ends, err = im.adm.ListEndOffsets(ctx, im.o.KafkaTopic)
	}
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return im.conn.explain(fmt.Errorf("list offsets of Kafka topic %s: %w", im.o.KafkaTopic, err))
	}
	im.next, im.until = map[int32]int64{}, map[int32]int64{}
	for p := range int32(partitions) {
		first, _ := starts.Lookup(im.o.KafkaTopic, p)
		end, _ := ends.Lookup(im.o.KafkaTopic, p)
		at, saved := pos.Next[p]
		switch {
		case !ok || !saved:
			at = first.Offset
			if im.o.FromEnd {
				at = end.Offset
			}
		case at < first.Offset:
			im.warnf("Kafka topic %s partition %d: offsets %d..%d were deleted before they were imported; going on at %d",
				im.o.KafkaTopic, p, at, first.Offset-1, first.Offset)
			at = first.Offset
		case at > end.Offset:
			im.warnf("Kafka topic %s partition %d: the saved position %d is past its end %d (was the topic recreated?); going on at %d",
				im.o.KafkaTopic, p, at, end.Offset, end.Offset)
			at = end.Offset
		}
		im.next[p] = at
		if !im.o.Follow {
			im.until[p] = end.Offset
		}
	}
	if ok {
		im.saved = pos.Next
	}
	return nil
}

func (im *Importer) warnf(format string, args ...any) {
	if im.o.Warn != nil {
		im.o.Warn(fmt.Sprintf(format, args...))
	}
}

// Run, called once, appends the records with writers, one for each
// partition of the seglog topic from 0 to Partitions()-1: those up to the
// end offsets the Kafka partitions had when NewImporter looked, or with
// Follow all of them until ctx is done. Without Follow it calls progress
// (which may be nil) with the records imported and the total to import.
//
// Every second and at the end it syncs the writers and then saves the
// position, also after a failure: what was appended is kept. An append or
// fetch error, or a record with headers with RefuseHeaders, stops it.
func (im *Importer) Run(ctx context.Context, writers []*logstore.Writer, progress func(done, total int64)) (Summary, error) {
	if len(writers) != im.Partitions() {
		return im.summary, fmt.Errorf("import into topic %s: %d writers for %d partitions", im.o.Topic, len(writers), im.Partitions())
	}
	im.writers = writers
	if err := im.consume(ctx, progress); err != nil {
		if serr := im.checkpoint(); serr != nil {
			return im.summary, fmt.Errorf("%w; %w", err, serr)
		}
		return im.summary, err
	}
	return im.summary, im.checkpoint()
}

// idlePolls is how many empty one-second polls in a row end an import
// without Follow that has not reached the end offsets it started with:
// if the cluster still answers, the offsets left are not records
// (transaction markers, records compacted away).
const idlePolls = 3

// consume appends the records from im.next on, saving the position every
// second.
func (im *Importer) consume(ctx context.Context, progress func(done, total int64)) error {
	offsets := map[int32]kgo.Offset{}
	for p, at := range im.next {
		if im.o.Follow || at < im.until[p] {
			offsets[p] = kgo.NewOffset().At(at)
		}
	}
	if len(offsets) == 0 {
		return nil
	}
	im.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{im.o.KafkaTopic: offsets})
	var total, done int64
	for p, end := range im.until {
		total += max(end-im.next[p], 0)
	}
	last := time.Now()
	for idle := 0; ; {
		if !im.o.Follow && idle == idlePolls {
			return im.idleEnd(ctx)
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fetches := im.cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil // a signal: what was appended is saved by Run
		}
		for _, fe := range fetches.Errors() {
			if !errors.Is(fe.Err, context.DeadlineExceeded) && !errors.Is(fe.Err, context.Canceled) {
				return im.conn.explain(fmt.Errorf("fetch Kafka topic %s partition %d: %w", fe.Topic, fe.Partition, fe.Err))
			}
		}
		n := 0
		for it := fetches.RecordIter(); !it.Done(); {
			r := it.Next()
			if !im.o.Follow && r.Offset >= im.until[r.Partition] {
				continue
			}
			if err := im.append(r); err != nil {
				return err
			}
			n++
		}
		done += int64(n)
		if !im.o.Follow {
			if progress != nil {
				progress(done, total)
			}
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

// idleEnd ends an import without Follow that got nothing for a while
// short of the end offsets: an error if the cluster does not answer, else
// a warning naming what was not reached.
func (im *Importer) idleEnd(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, im.conn.RequestTimeout)
	defer cancel()
	ends, err := im.adm.ListEndOffsets(ctx, im.o.KafkaTopic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return im.conn.explain(fmt.Errorf("fetch Kafka topic %s: nothing came for %ds: %w", im.o.KafkaTopic, idlePolls, err))
	}
	for _, p := range slices.Sorted(maps.Keys(im.until)) {
		if end := im.until[p]; im.next[p] < end {
			im.warnf("Kafka topic %s partition %d: offsets %d..%d hold no records to import (transaction markers, or compacted away)",
				im.o.KafkaTopic, p, im.next[p], end-1)
		}
	}
	return nil
}

// append appends one Kafka record to its partition.
func (im *Importer) append(r *kgo.Record) error {
	if len(r.Headers) > 0 {
		if im.o.RefuseHeaders {
			return fmt.Errorf("Kafka topic %s partition %d offset %d has %d header%s, which seglog records cannot hold (without --no-drop-headers they are dropped)",
				r.Topic, r.Partition, r.Offset, len(r.Headers), plural(len(r.Headers)))
		}
		im.summary.HeadersDropped += int64(len(r.Headers))
		im.summary.RecordsWithHeaders++
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
	im.summary.Partitions[r.Partition].add(r.Offset, len(r.Key)+len(r.Value))
	return nil
}

// reachedEnd reports whether every partition got to the end offset it had
// when the import started.
func (im *Importer) reachedEnd() bool {
	for _, p := range slices.Sorted(maps.Keys(im.until)) {
		if end := im.until[p]; im.next[p] < end {
			return false
		}
	}
	return true
}

// checkpoint syncs the writers, then saves the position if it moved: a
// position is never saved before the records below it are durable.
func (im *Importer) checkpoint() error {
	if maps.Equal(im.next, im.saved) {
		return nil
	}
	for _, w := range im.writers {
		if err := w.Sync(); err != nil {
			return err
		}
	}
	pos := logstore.KafkaImportPosition{KafkaTopic: im.o.KafkaTopic, Next: maps.Clone(im.next)}
	if err := im.store.SaveKafkaImportPosition(im.o.Topic, pos); err != nil {
		return err
	}
	im.saved = pos.Next
	return nil
}
