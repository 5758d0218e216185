package commands

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/seglog/seglog/logstore"
)

// importKafkaRecords appends every data record of the Kafka partition p
// to w: key, value and timestamp (or the time of import, with
// --timestamps now); headers, which seglog's records cannot hold, and
// control records (transaction markers) are left out and counted on
// stderr. A null key is no key, a null value (a tombstone) an empty
// value.
func importKafkaRecords(e *env, p *logstore.KafkaPartition, w *logstore.Writer, o importOptions, sum *importSummary) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	it, err := p.ReadKafka(0, logstore.KafkaReadOptions{ReadCommitted: o.committed})
	if err != nil {
		return err
	}
	defer it.Close()
	var clock logstore.RunClock
	var withHeaders, headers uint64
	now := time.Now().UnixNano()
	for it.Next() {
		if ctx.Err() != nil {
			return errors.New("interrupted")
		}
		r := it.Record()
		ts := r.Timestamp
		if o.kafkaNow {
			ts = now
		}
		off, err := w.Append(clock.Stamp(ts, w), r.Key, r.Value)
		if err != nil {
			return err
		}
		if sum.Records == 0 {
			sum.FirstSourceOffset, sum.FirstOffset = ptr(r.Offset), ptr(off)
		}
		sum.LastSourceOffset, sum.LastOffset = ptr(r.Offset), ptr(off)
		sum.Records++
		sum.Bytes += int64(len(r.Key) + len(r.Value))
		if len(r.Headers) > 0 {
			withHeaders++
			headers += uint64(len(r.Headers))
		}
	}
	sum.Segments = len(p.KafkaSegments())
	if err := it.Err(); err != nil {
		return fmt.Errorf("import stopped: %w", err)
	}
	if c, ok := it.(interface{ ControlRecords() uint64 }); ok && c.ControlRecords() > 0 {
		n := c.ControlRecords()
		e.info("seglog: note: %d control %s (transaction markers) left out", n, dumpIndexPlural(int64(n), "record", "records"))
	}
	if headers > 0 {
		e.info("seglog: note: %d %s of %d %s dropped: seglog's records have no headers", headers, dumpIndexPlural(int64(headers), "header", "headers"),
			withHeaders, dumpIndexPlural(int64(withHeaders), "record", "records"))
	}
	return nil
}
