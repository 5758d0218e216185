package commands

import (
	"fmt"
	"strconv"

	"github.com/seglog/seglog/logstore"
)

// A partition number fits the report queue's entries.
var _ uint16 = logstore.MaxPartitions - 1

// maxUnreported bounds the records append --report holds back, waiting
// for the ones before them to be durable: at 2 bytes each, 2 MiB. Past
// it, append makes them durable at once.
const maxUnreported = 1 << 20

// reportQueue holds the partition of each record appended and not yet
// reported, in input order; their offsets follow from where each
// partition's report stands. A ring that grows up to maxUnreported.
type reportQueue struct {
	parts   []uint16
	head, n int
}

func (q *reportQueue) push(p int) {
	if q.n == len(q.parts) {
		grown := make([]uint16, max(1024, 2*len(q.parts)))
		k := copy(grown, q.parts[q.head:])
		copy(grown[k:], q.parts[:q.head])
		q.parts, q.head = grown, 0
	}
	q.parts[(q.head+q.n)%len(q.parts)] = uint16(p)
	q.n++
}

func (q *reportQueue) peek() int { return int(q.parts[q.head]) }

func (q *reportQueue) pop() {
	q.head = (q.head + 1) % len(q.parts)
	q.n--
}

// reportPiece is about how many bytes of --report lines go in one write.
const reportPiece = 64 << 10

// report prints, with --report, a line for each record acknowledged since
// the last call, in input order: durable under --sync batch and exit,
// handed to the OS under never. A record waits for the ones before it, so
// line k of the report is the k-th record of the input. The lines are
// written at once, unbuffered, so a consumer sees them as soon as the
// sync that covers them returned.
func (a *appender) report() error {
	if !a.o.report || a.reportErr != nil {
		return a.reportErr
	}
	b := a.reportBuf[:0]
	for a.unreported.n > 0 {
		p := a.unreported.peek()
		if a.parts[p].reported >= a.acked(p) {
			break
		}
		b = strconv.AppendInt(b, int64(p), 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, a.parts[p].reported, 10)
		b = append(b, '\n')
		a.parts[p].reported++
		a.unreported.pop()
		// In pieces: the sync at exit may acknowledge millions of records.
		if len(b) >= reportPiece {
			if err := a.writeReport(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	a.reportBuf = b
	return a.writeReport(b)
}

func (a *appender) writeReport(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if _, err := a.e.stdout.Write(b); err != nil {
		a.reportErr = fmt.Errorf("--report: write to stdout: %w", err)
	}
	return a.reportErr
}

// acked is the offset below which partition p's records are acknowledged.
func (a *appender) acked(p int) uint64 {
	if a.o.sync == logstore.SyncNever {
		return a.writers[p].Written()
	}
	return a.writers[p].Durable()
}

// queueReport queues, with --report, a record just appended to partition p,
// and prints what can be printed. When maxUnreported records wait, every
// writer holding some syncs now, so that memory stays bounded.
func (a *appender) queueReport(p int) error {
	a.unreported.push(p)
	if a.unreported.n >= maxUnreported {
		for q, w := range a.writers {
			if w != nil && a.acked(q) < w.NextOffset() {
				if err := w.Sync(); err != nil {
					return err
				}
				if err := a.used(q, w); err != nil { // it may have opened its files
					return err
				}
			}
		}
	}
	return a.report()
}
