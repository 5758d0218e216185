package logstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/seglog/seglog/format"
)

// What moving a partition from one data directory to another needs
// beside CopyPartition: where a move stands, a record by record
// comparison of its two ends, and the removal of its source.

// MoveState is where a move of a partition stands, as its two ends show it.
type MoveState struct {
	SourceExists bool
	DestExists   bool
	// Reusable: the destination is an earlier copy of the source, which a
	// forced copy brings up to date; else Other says why it is not.
	Reusable bool
	Other    string
	Bytes    int64 // of the source's files a copy takes
}

// MoveState looks at a move of topic/part to toTopic/toPart in dst
// without changing anything or reading more than the segments' ends.
func (s *Store) MoveState(topic string, part int, dst *Store, toTopic string, toPart int) (MoveState, error) {
	var st MoveState
	final := dst.PartitionDir(toTopic, toPart)
	if fi, err := os.Stat(final); err == nil && fi.IsDir() {
		st.DestExists = true
	}
	src, err := s.openCopySource(topic, part, DefaultLockWait, nil)
	if errors.Is(err, ErrPartitionNotFound) || errors.Is(err, ErrTopicNotFound) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	defer src.close()
	st.SourceExists, st.Bytes = true, src.total
	if st.DestExists {
		p, why := reuseCheck(final, filepath.Dir(final), src)
		if p != nil {
			why, err = p.firstBytesDiffer(src)
		}
		st.Reusable, st.Other = why == "", why
	}
	return st, err
}

// firstBytesDiffer compares the start of the first segment both hold, a
// cheap look that tells another partition from an earlier copy (a copy
// compares every byte it reuses).
func (p *reusePlan) firstBytesDiffer(src *copySource) (string, error) {
	for _, cs := range src.segs {
		size, ok := p.segs[cs.seg.base]
		if !ok {
			continue
		}
		dseg := segment{dir: p.dir, base: cs.seg.base}
		n := min(size, 64<<10)
		at, err := firstDifferentByte(cs.seg.path(format.LogExt), dseg.path(format.LogExt), n, nil)
		if err != nil || at == n {
			return "", err
		}
		return fmt.Sprintf("its segment %s differs from the source's at byte %d", filepath.Base(dseg.path(format.LogExt)), at), nil
	}
	return "", nil
}

// Comparison is what ComparePartitions found.
type Comparison struct {
	Records uint64 // records alike in both
	// Differs names the first record that is not alike ("offset 12: the
	// value differs"); "" when none is.
	Differs string
	// SourceAhead counts the records the source holds past the
	// destination's last (a copy made while it was appended to).
	SourceAhead uint64
	// DestAhead counts the records the destination holds past the
	// source's last.
	DestAhead uint64
}

// Same reports whether both ends hold the same records.
func (c Comparison) Same() bool { return c.Differs == "" && c.SourceAhead == 0 && c.DestAhead == 0 }

// ComparePartitions reads the partition directories src and dst side by
// side and compares them record by record: offset, timestamp, key and
// value. It reads in constant memory; stop, once closed, ends it with
// ErrInterrupted.
func ComparePartitions(src, dst string, stop <-chan struct{}) (Comparison, error) {
	var c Comparison
	a, err := OpenPartitionDir(src, src)
	if err != nil {
		return c, err
	}
	defer a.Close()
	b, err := OpenPartitionDir(dst, dst)
	if err != nil {
		return c, err
	}
	defer b.Close()
	ia, err := a.Read(0)
	if err != nil {
		return c, err
	}
	defer ia.Close()
	ib, err := b.Read(0)
	if err != nil {
		return c, err
	}
	defer ib.Close()
	for {
		okA, okB := ia.Next(), ib.Next()
		if err := errors.Join(ia.Err(), ib.Err()); err != nil {
			return c, err
		}
		switch {
		case !okA && !okB:
			return c, nil
		case !okB:
			c.SourceAhead++
			for ia.Next() {
				c.SourceAhead++
			}
			return c, ia.Err()
		case !okA:
			c.DestAhead++
			for ib.Next() {
				c.DestAhead++
			}
			return c, ib.Err()
		}
		ra, rb := ia.Record(), ib.Record()
		if what := recordDifference(ra, rb); what != "" {
			c.Differs = fmt.Sprintf("offset %d: %s", ra.Offset, what)
			return c, nil
		}
		c.Records++
		if c.Records%4096 == 0 && interrupted(stop) {
			return c, ErrInterrupted
		}
	}
}

// recordDifference says how b differs from a, "" when it does not.
func recordDifference(a, b *Record) string {
	switch {
	case a.Offset != b.Offset:
		return fmt.Sprintf("the destination's record there has offset %d", b.Offset)
	case a.Timestamp != b.Timestamp:
		return "the timestamp differs"
	case !bytes.Equal(a.Key, b.Key) || (a.Key == nil) != (b.Key == nil):
		return "the key differs"
	case !bytes.Equal(a.Value, b.Value):
		return "the value differs"
	}
	return ""
}

// RemoveOptions configure RemovePartition.
type RemoveOptions struct {
	// LockWait is how long to retry a held lock: 0 means DefaultLockWait.
	LockWait time.Duration
	// Check, if set, runs once the locks are held and nothing is changed
	// yet: an error from it stops the removal.
	Check func() error
}

// RemovePartition removes a partition of the store, under the topic's
// maintenance lock and the partition's writer lock (a writer holding it
// is refused, naming its pid): it is renamed aside to a hidden name a
// dead copy's build has, the topic directory synced, and only then is it
// removed, so a crash leaves either the partition or nothing visible, and
// the next copy into the topic or recover removes what is left. The
// topic's partition count is what its directories say: removing a
// partition below the highest leaves the topic missing one, which every
// command refuses, so the caller removes a topic's partitions from the
// highest down; with the last one the topic directory goes too.
func (s *Store) RemovePartition(topic string, part int, opts RemoveOptions) error {
	if opts.LockWait == 0 {
		opts.LockWait = DefaultLockWait
	}
	topicDir, dir := filepath.Join(s.dir, topic), s.PartitionDir(topic, part)
	name := fmt.Sprintf("%s/%d", topic, part)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s (%s): %w", name, dir, ErrPartitionNotFound)
	}
	tlock, err := lockDir(topicDir, "topic "+topic, opts.LockWait)
	if err != nil {
		return err
	}
	defer tlock.Unlock()
	plock, err := lockDirHow(dir, "partition "+name, false, opts.LockWait, nil)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s (%s): %w", name, dir, ErrPartitionNotFound)
	}
	if err != nil {
		return err
	}
	defer plock.Unlock()
	if opts.Check != nil {
		if err := opts.Check(); err != nil {
			return err
		}
	}
	aside := tempName(topicDir, buildPrefix, strconv.Itoa(part))
	if err := s.removeAside(dir, aside); err != nil {
		return err
	}
	// A topic directory left with its settings alone is no topic: the
	// topic goes with its last partition, as recover would take it.
	_, _, err = s.halfMadeLeftover(topicDir, false)
	return err
}
