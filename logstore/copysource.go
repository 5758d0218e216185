package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// The source of a copy: its segments, fixed when the copy begins, and the
// bytes of each that the copy takes.

// copySegment is one segment of a copy's source, with the bytes of each
// file the copy takes.
type copySegment struct {
	seg                 segment
	log, index, timeidx int64
	interval            int
	closed              bool
}

// copySource is a partition being copied: its segments, fixed when the
// copy starts, under the topic's maintenance lock (shared: no sweep or
// recover can change them, other copies can run).
type copySource struct {
	name     string
	dir      string
	segs     []copySegment
	gaps     []byte // the partition's .gaps.json, nil when none
	gapList  []Gap  // what it records
	settings []byte // the topic's settings file, nil when none
	lock     *fsx.DirLock
	total    int64 // bytes of every file the copy takes
}

func (s *Store) openCopySource(topic string, part int, wait time.Duration, stop <-chan struct{}) (*copySource, error) {
	if err := format.ValidateTopic(topic); err != nil {
		return nil, err
	}
	t, err := s.Topic(topic)
	if err != nil {
		return nil, err
	}
	if part < 0 || part >= t.Partitions {
		return nil, fmt.Errorf("topic %s has partitions 0..%d, not %d: %w", topic, t.Partitions-1, part, ErrPartitionNotFound)
	}
	src := &copySource{name: fmt.Sprintf("%s/%d", topic, part), dir: s.PartitionDir(topic, part)}
	if fi, err := os.Stat(src.dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("topic %s: partition %d is missing (%s): %w", topic, part, src.dir, ErrPartitionNotFound)
	}
	if src.lock, err = lockDirShared(t.Dir, "topic "+topic, wait, stop); err != nil {
		return nil, err
	}
	if err := src.plan(t.Dir); err != nil {
		src.close()
		return nil, err
	}
	return src, nil
}

// plan fixes what the copy takes: closed segments whole, the active one up
// to its last valid record (a writer may be appending).
func (src *copySource) plan(topicDir string) error {
	// An index that is not a regular file is left out, and rebuilt in
	// the copy.
	segs, _, err := readSegments(src.dir)
	if err != nil {
		return err
	}
	settings := filepath.Join(topicDir, settingsFile)
	if src.settings, err = readOptional(settings); err != nil {
		return err
	}
	// The topic's settings were read once already, and may have changed.
	if _, err := parseSettings(src.settings); src.settings != nil && err != nil {
		return settingsError(settings, err)
	}
	gaps := filepath.Join(src.dir, GapsFile)
	if src.gaps, err = readOptional(gaps); err != nil {
		return err
	}
	if src.gaps != nil {
		if src.gapList, err = parseGaps(src.gaps); err != nil {
			return fmt.Errorf("%w: %s: %v; %s", ErrInvalidGaps, gaps, err, gapsAdvice)
		}
	}
	intervals, err := segmentIntervals(segs, 0)
	if err != nil {
		return err
	}
	for i, seg := range segs {
		cs := copySegment{seg: seg, interval: intervals[i], closed: i < len(segs)-1}
		if cs.closed {
			cs.log, cs.index, cs.timeidx = fileSize(seg.path(format.LogExt)), fileSize(seg.path(format.IndexExt)), fileSize(seg.path(format.TimeIndexExt))
		} else if err := cs.planActive(segs); err != nil {
			return err
		}
		src.segs = append(src.segs, cs)
		src.total += cs.log + cs.index + cs.timeidx
	}
	return nil
}

func (cs *copySegment) planActive(segs []segment) error {
	// Records below where the segments before end overlap them.
	floor, err := precedingEnd(segs, len(segs)-1)
	if err != nil {
		return err
	}
	f, err := fsx.OpenRead(cs.seg.path(format.LogExt))
	if err != nil {
		return err
	}
	defer f.Close()
	idx, closeIdx := openSegfileIndex(cs.seg)
	defer closeIdx()
	sseg := segfileSegment(cs.seg, osFile{File: f}, idx, floor, true)
	end, err := segfile.FindEnd(sseg, false)
	if err == nil && end.Tail != nil {
		// A copy stops short of a tail only on a verdict no index entry
		// has a say in.
		end, err = segfile.FindEnd(sseg, true)
	}
	if err != nil {
		return fmt.Errorf("scan %s: %w", cs.seg.path(format.LogExt), err)
	}
	if err := emptyBelowFloor(cs.seg, end, floor, "run 'seglog recover' on the source first"); err != nil {
		return err
	}
	if end.First != nil && end.First.Class == segfile.Corrupt {
		return fmt.Errorf("%w; run 'seglog recover' on the source first", corruption(end.First))
	}
	cs.log = end.Pos
	if cs.index, err = indexPrefix(cs.seg.path(format.IndexExt), end.Next); err != nil {
		return err
	}
	cs.timeidx, err = indexPrefix(cs.seg.path(format.TimeIndexExt), end.Next)
	return err
}

func (src *copySource) close() { src.lock.Unlock() }

// gapsAdvice is what to do with a source's gaps file that is wrong.
const gapsAdvice = "fix it or remove it (verify-crc then reports the offsets missing as lost data), then copy again"

// readOptional reads a small file that may not exist (nil then).
func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// fileSize is the size of path, 0 when it is missing or not a regular file
// (an index a copy rebuilds: a directory's size is not index bytes, and a
// link's target is not read).
func fileSize(path string) int64 {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return fi.Size()
}
