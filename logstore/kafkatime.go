package logstore

import (
	"math"

	"github.com/seglog/seglog/logstore/internal/segfile"
)

// OffsetAtTime is the offset of the first data record whose timestamp is
// at or after t (Unix ns), at or above the log start, as Kafka's
// ListOffsets finds it (UnifiedLog.fetchOffsetByTimestamp): the first
// segment whose largest timestamp (its .timeindex's last entry) is at or
// after t, then in it the .timeindex entry at or before t, the .index
// entry at or before that entry's offset, and a scan of the batches from
// there: the first batch whose max timestamp is at or after t holds the
// record, its first at or after t. A segment where the scan finds none
// (its index lied) passes the search on to the next; control batches
// hold no data record and are passed over. Next when no record is that
// recent. An index entry that does not check out is not followed: the
// scan starts at the segment's first byte; nor is a .timeindex entry that
// is not what Kafka writes (timeEntryHolds).
func (p *KafkaPartition) OffsetAtTime(t int64) (uint64, error) {
	target := kafkaMillis(t)
	for i := range p.segs {
		if i < len(p.segs)-1 {
			below, err := p.largestTimestampBelow(i, target)
			if err != nil {
				return 0, err
			}
			if below {
				continue
			}
		}
		off, ok, err := p.searchTime(i, target)
		if err != nil || ok {
			return off, err
		}
	}
	e, err := p.Extent()
	return e.Next, err
}

// largestTimestampBelow reports whether segment i's largest timestamp is
// below target (ms): its .timeindex's last entry says so and checks out
// (timeEntryHolds), and no batch after that entry's is that late.
func (p *KafkaPartition) largestTimestampBelow(i int, target int64) (bool, error) {
	x, closeIndex := openKafkaIndex(p.segs[i].TimeIndex, p.segs[i].Base, TimeIndex)
	if x == nil {
		return false, nil
	}
	defer closeIndex()
	if x.Len() == 0 {
		return false, nil
	}
	e, err := x.Entry(x.Len() - 1)
	if err != nil || e.Timestamp >= target {
		return false, nil
	}
	ks, err := p.openScan(i)
	if err != nil {
		return false, err
	}
	defer ks.close()
	if holds, err := p.timeEntryHolds(i, ks, e); !holds || err != nil {
		return false, err
	}
	// The entry is the largest timestamp up to its batch; the batches
	// after it, which a missing last entry (the one Kafka adds when it
	// rolls the segment) leaves unsaid, are looked at.
	for {
		for ks.sc.Next() {
			if ks.sc.Batch().MaxTimestamp() >= target {
				return false, nil
			}
		}
		if err := ks.sc.Err(); err != nil {
			return false, p.ioError(p.segs[i].Log, err)
		}
		if !ks.sc.Resync() {
			return true, nil
		}
	}
}

// timeEntryHolds reports whether the .timeindex entry e of segment i is
// what Kafka writes (LogSegment.append): the largest timestamp so far and
// the last offset of the batch that carried it, so that the batch holding
// e's offset has e's timestamp as its largest. An entry that does not
// (past the segment's batches, or its timestamp another's) is a lie a
// search must not start from: the records before it may be later. It
// leaves ks's scan after the batch holding e's offset, when it holds.
func (p *KafkaPartition) timeEntryHolds(i int, ks *kafkaScan, e segfile.KafkaIndexEntry) (bool, error) {
	if e.Offset < int64(min(p.segs[i].Base, math.MaxInt64)) {
		return false, nil
	}
	if err := p.seekPos(i, ks, uint64(e.Offset)); err != nil {
		return false, err
	}
	for ks.sc.Next() {
		if b := ks.sc.Batch(); b.LastOffset() >= e.Offset {
			return firstOffset(b) <= e.Offset && b.MaxTimestamp() == e.Timestamp, nil
		}
	}
	if err := ks.sc.Err(); err != nil {
		return false, p.ioError(p.segs[i].Log, err)
	}
	return false, nil // damage, or the end of the segment: not a batch of it
}

// searchTime is segment i's first data record at or after target (ms)
// and the log start.
func (p *KafkaPartition) searchTime(i int, target int64) (uint64, bool, error) {
	ks, err := p.openScan(i)
	if err != nil {
		return 0, false, err
	}
	defer ks.close()
	from := max(p.logStart, p.segs[i].Base)
	if x, closeIndex := openKafkaIndex(p.segs[i].TimeIndex, p.segs[i].Base, TimeIndex); x != nil {
		if k, ok, err := x.FloorTime(target); err == nil && ok {
			if e, err := x.Entry(k); err == nil {
				holds, err := p.timeEntryHolds(i, ks, e)
				ks.sc.StartAt(0) // for seekPos
				if err != nil {
					closeIndex()
					return 0, false, err
				}
				if holds {
					from = max(from, uint64(e.Offset))
				}
			}
		}
		closeIndex()
	}
	if err := p.seekPos(i, ks, from); err != nil {
		return 0, false, err
	}
	recs := segfile.NewKafkaRecords(0)
	defer recs.Close()
	for {
		for ks.sc.Next() {
			b := ks.sc.Batch()
			if uint64(b.LastOffset()) < p.logStart || !b.Legacy() && (b.Header.Control() || b.Header.MaxTimestamp < target) {
				continue
			}
			recs.Reset(b)
			for recs.Next() {
				if recs.Timestamp() >= target && uint64(recs.Offset()) >= p.logStart {
					return uint64(recs.Offset()), true, nil
				}
			}
		}
		if err := ks.sc.Err(); err != nil {
			return 0, false, p.ioError(p.segs[i].Log, err)
		}
		if !ks.sc.Resync() {
			return 0, false, nil
		}
	}
}
