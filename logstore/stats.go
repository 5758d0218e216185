package logstore

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/seglog/seglog/logstore/internal/segfile"
)

// PartitionStats describes a partition, as describe prints it.
type PartitionStats struct {
	Start   uint64 // first offset held
	Next    uint64 // offset after the last valid record (see Extent for Full)
	Full    bool   // the last record has offset 2^64-1: nothing can be appended
	Records uint64 // valid records held (gaps between segments excluded)
	// RecordsFromIndex: some segments' records were counted from the
	// offsets their index vouches for (in a Kafka partition, from record
	// batch headers), not read, so Records may include records lost to
	// damage there (verify-crc reads them): an upper bound, exact on a
	// healthy partition. Else Records is exact.
	RecordsFromIndex bool
	Segments         int
	Bytes            int64 // of .log files
	// Timestamps of the first and the last record (Unix ns); zero when the
	// partition holds no records.
	Oldest, Newest int64
	WriterPid      int // pid of the process holding the writer lock, 0 if none
}

// Stats describes the partition from segment names, index files and each
// segment's tail: a few reads per segment, never a scan of the data.
// Damage before a segment's last index entry that checks out goes unseen
// here (verify-crc is for that): RecordsFromIndex says when the records
// counted might include some it made invalid.
func (p *Partition) Stats() (PartitionStats, error) {
	pid := WriterPid(p.dir)
	segs := p.segs
	for tries := 0; ; tries++ {
		st, err := segmentStats(segs)
		st.WriterPid = pid
		if !errors.Is(err, fs.ErrNotExist) || tries == maxOpenTries {
			if err != nil {
				err = fmt.Errorf("%s: %w", p.name, err)
			}
			return st, err
		}
		// A sweep deleted a segment since they were listed: describe what
		// is there now.
		if segs, err = p.segments(); err != nil {
			return st, fmt.Errorf("%s: %w", p.name, err)
		}
	}
}

// segmentStats describes a partition made of segs. Each segment's end is
// found from its last confirmed index entry; its records are counted
// from its offsets where its index shows no offsets skipped before that
// entry and nothing read shows damage, else by a scan
// (segfile.CountRecords): holes inside a segment are not records.
func segmentStats(segs []segment) (PartitionStats, error) {
	st := PartitionStats{Segments: len(segs)}
	if len(segs) == 0 {
		return st, nil
	}
	st.Start = segs[0].base
	floor := uint64(0)
	for i, seg := range segs {
		sum, err := summarize(seg, floor, i == len(segs)-1, st.Records == 0)
		if err != nil {
			return st, err
		}
		st.Bytes += sum.end.Limit
		// Offsets below the floor are taken, whatever a segment holds.
		floor = max(floor, sum.end.Next)
		st.Next = floor
		st.Full = sum.end.Full
		if sum.records == 0 {
			continue
		}
		if st.Records == 0 {
			st.Oldest = sum.first
			if i == 0 {
				// A misnamed first segment holds offsets below its name.
				st.Start = min(st.Start, sum.firstOff)
			}
		}
		st.Records += sum.records
		st.RecordsFromIndex = st.RecordsFromIndex || !sum.exact
		st.Newest = sum.end.LastTS
	}
	return st, nil
}

type segmentSummary struct {
	end      segfile.End
	records  uint64
	exact    bool   // records were read, not counted from the index
	first    int64  // the first record's timestamp, when asked for
	firstOff uint64 // and its offset
}

// summarize finds a segment's end and record count and, with wantFirst,
// its first valid record's timestamp.
func summarize(seg segment, floor uint64, active, wantFirst bool) (segmentSummary, error) {
	var sum segmentSummary
	sseg, closeSeg, err := openSegfileSegment(seg, floor, active)
	if err != nil {
		return segmentSummary{}, err
	}
	defer closeSeg()
	if sum.end, err = findEnd(sseg, false); err != nil {
		return sum, err
	}
	if sum.records, sum.exact, err = segfile.CountRecords(sseg, sum.end, 0); err != nil || sum.records == 0 || !wantFirst {
		return sum, err
	}
	h, _, err := firstValid(sseg, sum.end.Limit)
	sum.first, sum.firstOff = h.Timestamp, h.Offset
	return sum, err
}
