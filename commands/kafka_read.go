package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

// isolationLevels are the values of --isolation, as Kafka's consumers
// name them: whether records of aborted (or still open) transactions are
// left out.
var isolationLevels = choices[bool]{
	{"read_uncommitted", false, "every data record, as Kafka's consumers read by default"},
	{"read_committed", true, "no records of aborted transactions, or of transactions still open at the log's end"},
}

// isolationFlag is read's and tail's --isolation.
func isolationFlag() cli.Flag {
	return isolationLevels.flag("isolation", "read_uncommitted", "`LEVEL` of Apache Kafka transactions to read (seglog's own layout has none)")
}

// readKafkaFrom opens the iterator read starts with on a Kafka partition:
// at from, or with --since at the first record the time index and the
// batches put at or after that time, whichever comes later.
func readKafkaFrom(p *logstore.KafkaPartition, o readOptions, from uint64) (logstore.RecordIterator, error) {
	if o.since != nil {
		at, err := p.OffsetAtTime(*o.since)
		if err != nil {
			return nil, err
		}
		from = max(from, at)
	}
	return p.ReadKafka(from, logstore.KafkaReadOptions{ReadCommitted: o.committed})
}
