package logstore

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/seglog/seglog/format"
)

// PartitionRange is the partitions First..Last of a topic.
type PartitionRange struct{ First, Last int }

// String is "3" for one partition, "1..4" for several.
func (r PartitionRange) String() string {
	if r.First == r.Last {
		return strconv.Itoa(r.First)
	}
	return strconv.Itoa(r.First) + ".." + strconv.Itoa(r.Last)
}

// Len is the number of partitions in the range.
func (r PartitionRange) Len() int { return r.Last - r.First + 1 }

// TopicPartitions is what a topic directory holds: its partition
// directories, found from the entries there and never from the numbers
// they carry, so one stray directory costs what any entry costs.
type TopicPartitions struct {
	// Count is the topic's partition count: the highest partition
	// directory's number + 1.
	Count int
	// Present lists the partition directories there, in increasing order.
	Present []int
	// Foreign lists the directories named like partitions but numbered
	// MaxPartitions or more. seglog never makes one (create,
	// copy-partition and import-partition stop below MaxPartitions), so
	// they are not counted: a stray "999999999" would otherwise make a
	// topic of a billion partitions, all but a few of them missing.
	Foreign []string
}

// ReadTopicPartitions lists the partition directories of the topic
// directory dir.
func ReadTopicPartitions(dir string) (TopicPartitions, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return TopicPartitions{}, err
	}
	var tp TopicPartitions
	for _, e := range entries {
		p, err := format.ParsePartition(e.Name())
		switch {
		case err != nil || !e.IsDir():
		case p >= MaxPartitions:
			tp.Foreign = append(tp.Foreign, e.Name())
		default:
			tp.Present = append(tp.Present, p)
		}
	}
	slices.Sort(tp.Present) // ParsePartition refuses leading zeros: no two names for one number
	if n := len(tp.Present); n > 0 {
		tp.Count = tp.Present[n-1] + 1
	}
	return tp, nil
}

// Runs yields the topic's partitions in order, each partition directory
// there as a range of one with missing false, and each run of missing
// ones below Count as one range with missing true. only >= 0 limits it to
// that partition.
func (tp TopicPartitions) Runs(only int) iter.Seq2[PartitionRange, bool] {
	return func(yield func(PartitionRange, bool) bool) {
		next := 0 // the first partition not yet yielded
		for _, p := range tp.Present {
			if p > next {
				gap := PartitionRange{next, p - 1}
				if only >= 0 {
					gap = PartitionRange{only, only}
				}
				if (only < 0 || only >= next && only < p) && !yield(gap, true) {
					return
				}
			}
			next = p + 1
			if (only < 0 || only == p) && !yield(PartitionRange{p, p}, false) {
				return
			}
		}
	}
}

// Missing lists the runs of partitions below Count without a directory.
func (tp TopicPartitions) Missing() []PartitionRange {
	var runs []PartitionRange
	for r, missing := range tp.Runs(-1) {
		if missing {
			runs = append(runs, r)
		}
	}
	return runs
}

// Err is why the topic in dir cannot be used whole: it has no partition
// directories, or some are missing below the highest; nil when neither.
func (tp TopicPartitions) Err(topic, dir string) error {
	if tp.Count == 0 {
		why := ""
		if n := len(tp.Foreign); n > 0 {
			why = fmt.Sprintf(" (only %s, numbered beyond the %d partitions seglog supports)", strings.Join(tp.Foreign[:min(n, 3)], ", "), MaxPartitions)
			if n > 3 {
				why = fmt.Sprintf(" (only %s and %d more, numbered beyond the %d partitions seglog supports)", strings.Join(tp.Foreign[:3], ", "), n-3, MaxPartitions)
			}
		}
		if halfMadeTopic(dir) {
			why += "; it is what an interrupted copy or import into a new topic left, and 'seglog recover' removes it"
			return fmt.Errorf("topic %s (%s) has no partition directories: %w%s", topic, dir, ErrPartitionNotFound, why)
		}
		return fmt.Errorf("topic %s (%s) has no partition directories%s: %w", topic, dir, why, ErrPartitionNotFound)
	}
	if runs := tp.Missing(); len(runs) > 0 {
		return &MissingPartitionsError{Topic: topic, Dir: dir, Count: tp.Count, Missing: runs}
	}
	return nil
}

// MissingPartitionsError is partition directories missing below a topic's
// highest. They are never skipped silently: the partition count decides
// key routing.
type MissingPartitionsError struct {
	Topic   string
	Dir     string // the topic directory
	Count   int    // the topic's partition count
	Missing []PartitionRange
}

func (e *MissingPartitionsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "topic %s: ", e.Topic)
	n := 0
	for _, r := range e.Missing {
		n += r.Len()
	}
	if n == 1 {
		b.WriteString("partition ")
	} else {
		b.WriteString("partitions ")
	}
	// A topic whose directories are every other number has thousands of
	// runs: a few name the pattern.
	const shown = 3
	for i, r := range e.Missing[:min(len(e.Missing), shown)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.String())
	}
	if len(e.Missing) > shown {
		fmt.Fprintf(&b, " and %d more runs", len(e.Missing)-shown)
	}
	verb := "are"
	if n == 1 {
		verb = "is"
	}
	fmt.Fprintf(&b, " of 0..%d %s missing (", e.Count-1, verb)
	switch r := e.Missing[0]; {
	case len(e.Missing) > 1:
		fmt.Fprintf(&b, "in %s", e.Dir)
	case r.First == r.Last:
		b.WriteString(filepath.Join(e.Dir, strconv.Itoa(r.First)))
	default:
		fmt.Fprintf(&b, "%s to %s", filepath.Join(e.Dir, strconv.Itoa(r.First)), filepath.Join(e.Dir, strconv.Itoa(r.Last)))
	}
	b.WriteString("): ")
	b.WriteString(ErrPartitionNotFound.Error())
	return b.String()
}

func (e *MissingPartitionsError) Unwrap() error { return ErrPartitionNotFound }

// MissingErr is the error for the run r of missing partitions, found by
// Runs.
func (tp TopicPartitions) MissingErr(topic, dir string, r PartitionRange) error {
	return &MissingPartitionsError{Topic: topic, Dir: dir, Count: tp.Count, Missing: []PartitionRange{r}}
}
