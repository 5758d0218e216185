package logstore

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/seglog/seglog/format"
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
		if segs, err = listSegments(p.dir); err != nil {
			return st, fmt.Errorf("%s: %w", p.name, err)
		}
	}
}

// segmentStats describes a partition made of segs.
func segmentStats(segs []segment) (PartitionStats, error) {
	st := PartitionStats{Segments: len(segs)}
	if len(segs) == 0 {
		return st, nil
	}
	st.Start = segs[0].base
	st.Next = st.Start
	for i, seg := range segs {
		end, first, err := summarize(seg, i == len(segs)-1, st.Records == 0)
		if err != nil {
			return st, err
		}
		st.Bytes += end.Size
		st.Next = max(st.Next, end.Next)
		if end.Next == seg.base {
			continue
		}
		if st.Records == 0 {
			st.Oldest = first
		}
		st.Records += end.Next - seg.base
		st.Newest = end.LastTS
	}
	return st, nil
}

// summarize finds a segment's end (see segmentEnd, whose Size is the .log's
// size) and, with wantFirst, its first record's timestamp.
func summarize(seg segment, active, wantFirst bool) (end segmentEnd, first int64, err error) {
	f, err := openRead(seg.path(format.LogExt))
	if err != nil {
		return end, 0, err
	}
	defer f.Close()
	if end, err = validEnd(seg, osFile{f}, active); err != nil || end.Next == seg.base || !wantFirst {
		return end, 0, err
	}
	h, err := newLogReader(osFile{f}).header(0)
	return end, h.Timestamp, err
}

// validEnd is findEnd, going on past damage in the active segment when
// valid records follow it: the next offset is the last valid record's + 1,
// whether or not an index let the scan skip the damage.
func validEnd(seg segment, f file, active bool) (segmentEnd, error) {
	end, err := findEnd(seg, f, active)
	for err == nil && end.Tail == tailCorrupt && active {
		end, err = scanToEnd(seg, newLogReader(f), end.ResumePos, end.ResumeOffset, true)
	}
	return end, err
}
