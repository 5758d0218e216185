package logstore

import "math"

// A record's time is the running maximum of its partition's timestamps up
// to it (docs/format.md §6, Kafka's rule): for data seglog wrote, whose
// timestamps never go back, the record's own. --since, --until, retention
// and the timeline all take it from here.

// runningMax is the time of a record with timestamp ts after records
// whose time was prev.
func runningMax(prev, ts int64) int64 { return max(prev, ts) }

// timeBefore is the time of the record before offset off, math.MinInt64
// when there is none: what a read starting at off takes the running
// maximum from. It is the timestamp of that one record, which is the
// running maximum wherever timestamps do not go back; where they do
// (verify-crc notes each segment where they do), reading from the
// partition's start is what is exact.
func (p *Partition) timeBefore(off uint64) (int64, error) {
	if len(p.segs) == 0 || off <= p.segs[0].base {
		return math.MinInt64, nil
	}
	it, err := p.Read(off - 1)
	if err != nil {
		return math.MinInt64, err
	}
	defer it.Close()
	if it.Next() && it.sc.Header().Offset < off {
		return it.sc.Header().Timestamp, nil
	}
	// off-1 is in a gap, or damage took it: the last record before it.
	i := it.i
	for ; i >= 0; i-- {
		if p.segs[i].base < off {
			break
		}
	}
	for ; i >= 0; i-- {
		floor, err := p.floorOf(i)
		if err != nil {
			return math.MinInt64, err
		}
		end, err := segmentEnd(p.segs[i], floor, i == len(p.segs)-1, false)
		if err != nil {
			return math.MinInt64, err
		}
		if end.Records > 0 && end.Next <= off {
			return end.LastTS, nil
		}
	}
	return math.MinInt64, nil
}

// Time is the current record's time: the running maximum of the
// partition's timestamps up to it, taken from the record before where the
// iterator started on (looked up on the first call).
func (it *Iterator) Time() (int64, error) {
	if !it.seeded && it.started {
		it.seeded = true
		before, err := it.p.timeBefore(it.first)
		if err != nil {
			return 0, err
		}
		it.clock = runningMax(before, it.clock)
	}
	return it.clock, nil
}
