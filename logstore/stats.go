package logstore

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// PartitionStats describes a partition, as describe prints it.
type PartitionStats struct {
	Start    uint64 // first offset held
	Next     uint64 // offset after the last valid record
	Records  uint64 // valid records held (gaps between segments excluded)
	Segments int
	Bytes    int64 // of .log files
	// Timestamps of the first and the last record (Unix ns); zero when the
	// partition holds no records.
	Oldest, Newest int64
	WriterPid      int // pid of the process holding the writer lock, 0 if none
}

// Stats describes the partition from segment names, index files and each
// segment's tail: a few reads per segment, never a scan of the data.
// Damage before a segment's last index entry that checks out goes unseen
// here; verify-crc is for that.
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
// entry, else by a scan (segfile.CountRecords): holes inside a segment
// are not records.
func segmentStats(segs []segment) (PartitionStats, error) {
	st := PartitionStats{Segments: len(segs)}
	if len(segs) == 0 {
		return st, nil
	}
	st.Start = segs[0].base
	st.Next = st.Start
	floor := uint64(0)
	for i, seg := range segs {
		sum, err := summarize(seg, floor, i == len(segs)-1, st.Records == 0)
		if err != nil {
			return st, err
		}
		st.Bytes += sum.end.Limit
		st.Next = max(st.Next, sum.end.Next)
		floor = sum.end.Next
		if sum.records == 0 {
			continue
		}
		if st.Records == 0 {
			st.Oldest = sum.first
		}
		st.Records += sum.records
		st.Newest = sum.end.LastTS
	}
	return st, nil
}

type segmentSummary struct {
	end     segfile.End
	records uint64
	first   int64 // the first record's timestamp, when asked for
}

// summarize finds a segment's end and record count and, with wantFirst,
// its first valid record's timestamp.
func summarize(seg segment, floor uint64, active, wantFirst bool) (segmentSummary, error) {
	f, err := openRead(seg.path(format.LogExt))
	if err != nil {
		return segmentSummary{}, err
	}
	defer f.Close()
	idx, closeIdx := openSegfileIndex(seg)
	defer closeIdx()
	return summarizeOpen(segfileSegment(seg, osFile{f}, idx, floor, active), wantFirst)
}

// summarizeOpen is summarize of the segment sseg describes, its files
// open.
func summarizeOpen(sseg segfile.Segment, wantFirst bool) (segmentSummary, error) {
	var sum segmentSummary
	var err error
	if sum.end, err = segfile.FindEnd(sseg, false); err != nil {
		return sum, fmt.Errorf("scan %s: %w", sseg.Path, err)
	}
	if sum.records, err = segfile.CountRecords(sseg, sum.end, 0); err != nil || sum.records == 0 || !wantFirst {
		return sum, err
	}
	sc, err := segfile.NewScanner(sseg, sum.end.Limit, segfile.Options{})
	if err != nil {
		return sum, err
	}
	defer sc.Close()
	for !sc.Next() && sc.Err() == nil && sc.Resume() {
	}
	sum.first = sc.Header().Timestamp
	return sum, sc.Err()
}
