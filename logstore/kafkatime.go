package logstore

import (
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
// scan starts at the segment's first byte.
func (p *KafkaPartition) OffsetAtTime(t int64) (uint64, error) {
	target := kafkaMillis(t)
	for i := range p.segs {
		if i < len(p.segs)-1 && p.largestTimestampBelow(i, target) {
			continue
		}
		off, ok, err := p.searchTime(i, target)
		if err != nil || ok {
			return off, err
		}
	}
	e, err := p.Extent()
	return e.Next, err
}

// largestTimestampBelow reports whether segment i's .timeindex says its
// largest timestamp is below target (ms).
func (p *KafkaPartition) largestTimestampBelow(i int, target int64) bool {
	x, closeIndex := openKafkaIndex(p.segs[i].TimeIndex, p.segs[i].Base, TimeIndex)
	if x == nil {
		return false
	}
	defer closeIndex()
	if x.Len() == 0 {
		return false
	}
	e, err := x.Entry(x.Len() - 1)
	return err == nil && e.Timestamp < target
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
				from = max(from, uint64(max(e.Offset, 0)))
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
