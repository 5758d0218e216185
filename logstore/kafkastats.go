package logstore

import (
	"fmt"
	"math"

	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// Stats describes the partition: Start and Next are Extent's, Records the
// data records from Start to Next as the batch headers count them
// (control records left out), read from the headers alone, without the
// batches' records, CRCs or decompression; Oldest is the first data
// batch's base timestamp (its max with log-append time) and Newest the
// last one's max timestamp. Only a batch that holds the log start offset
// and a legacy compressed message set, whose header does not count its
// messages, are decompressed, to count them. Damage inside a batch whose
// header frames goes unseen here, so its records are counted (verify-crc
// checks them): a count from record batch headers is, like one from
// seglog's indexes, an upper bound exact on a healthy partition, and
// RecordsFromIndex says so. Bytes are the .log files'. There is no writer
// lock: WriterPid is 0.
func (p *KafkaPartition) Stats() (PartitionStats, error) {
	e, err := p.Extent()
	if err != nil {
		return PartitionStats{}, err
	}
	st := PartitionStats{Start: e.Start, Next: e.Next, Segments: len(p.segs)}
	counted := st.Start // the offsets below are counted: a batch overlapping them (damage) counts only above
	for i := range p.segs {
		size, err := p.walkHeadersSized(i, func(b *segfile.KafkaBatch) error {
			first, last := uint64(b.BaseOffset()), uint64(b.LastOffset())
			if b.Magic == 2 && b.Header.Control() || last < counted || first >= st.Next {
				return nil
			}
			n, oldest, newest := uint64(1), b.Message.Timestamp, b.Message.Timestamp
			if !b.Legacy() {
				// No more records than offsets it holds in the partition's
				// range and not counted yet: a count field, or a last
				// offset delta, can lie.
				n = 0
				if lo, hi := max(first, counted), min(last, st.Next-1); lo <= hi {
					n = min(uint64(max(b.Header.RecordsCount, 0)), hi-lo+1)
				}
				oldest, newest = b.Header.BaseTimestamp, b.Header.MaxTimestamp
				if b.Header.LogAppendTime() {
					oldest = newest
				}
			}
			if first < counted || b.Legacy() && b.Codec() != kafka.CodecNone {
				var err error
				if n, oldest, err = p.countRecords(i, b.Pos, counted); err != nil {
					return err
				}
			} else if !b.Legacy() {
				st.RecordsFromIndex = true
			}
			if last < math.MaxUint64 {
				counted = max(counted, last+1)
			}
			if n == 0 {
				return nil
			}
			if st.Records == 0 {
				st.Oldest = kafkaNanos(oldest)
			}
			st.Records += n
			st.Newest = kafkaNanos(newest)
			return nil
		})
		st.Bytes += size
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// countRecords decodes the batch at pos of segment i: how many of its
// records have offsets >= from, and the first one's timestamp (ms).
func (p *KafkaPartition) countRecords(i int, pos int64, from uint64) (uint64, int64, error) {
	ks, err := p.openScan(i)
	if err != nil {
		return 0, 0, err
	}
	defer ks.close()
	ks.sc.StartAt(pos)
	if !ks.sc.Next() {
		if err := ks.sc.Err(); err != nil {
			return 0, 0, p.ioError(p.segs[i].Log, err)
		}
		return 0, 0, nil // damage: its records are no records
	}
	recs := segfile.NewKafkaRecords(0)
	defer recs.Close()
	recs.Reset(ks.sc.Batch())
	var n uint64
	var first int64
	for recs.Next() {
		if uint64(recs.Offset()) < from {
			continue
		}
		if n == 0 {
			first = recs.Timestamp()
		}
		n++
	}
	return n, first, nil
}

// walkHeaders hands each entry of segment i to fn in file order, by its
// header (segfile.KafkaHeaders); from where an entry's framing breaks on,
// the valid entries a scan finds, resyncing after damage. fn's error
// stops the walk and is returned.
func (p *KafkaPartition) walkHeaders(i int, fn func(*segfile.KafkaBatch) error) error {
	_, err := p.walkHeadersSized(i, fn)
	return err
}

// walkHeadersSized is walkHeaders, also returning the .log's size.
func (p *KafkaPartition) walkHeadersSized(i int, fn func(*segfile.KafkaBatch) error) (int64, error) {
	seg := p.segs[i]
	f, size, err := openKafkaFile(seg.Log)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p.name, err)
	}
	defer f.Close()
	w := segfile.NewKafkaHeaders(f, size, seg.Log, 0)
	for w.Next() {
		if err := fn(w.Batch()); err != nil {
			return size, err
		}
	}
	if err := w.Err(); err != nil {
		return size, p.ioError(seg.Log, err)
	}
	if !w.Broken() {
		return size, nil
	}
	sc := segfile.NewKafkaScanner(f, size, p.scanOptions(i))
	sc.StartAt(w.Pos())
	for {
		for sc.Next() {
			if err := fn(sc.Batch()); err != nil {
				return size, err
			}
		}
		if err := sc.Err(); err != nil {
			return size, p.ioError(seg.Log, err)
		}
		if !sc.Resync() {
			return size, nil
		}
	}
}

// openKafkaFile opens one of a Kafka segment's files read-only, never
// through a symbolic link nor anything but a regular file, and its size.
func openKafkaFile(path string) (*fsx.ReadFile, int64, error) { return fsx.OpenIndex(path) }
