package commands

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// covered is a partition that an argument of describe or verify-crc covers.
type covered struct {
	name    string // as output names it: "topic/P", or a directory
	dir     string
	number  int
	count   int  // the topic's partition count; 0 for a partition directory given by path
	missing bool // no directory, though a higher partition has one
}

// coveredTopic is a topic's partitions, in order.
type coveredTopic struct {
	name       string
	dir        string
	partitions int // highest partition directory + 1
	parts      []covered
}

// topicTargets returns the arguments, or every topic when there are none.
func topicTargets(e *env, args []string) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	store := logstore.Open(e.dataDir)
	names, err := store.Topics()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("data directory %s does not exist (name the right one with --data-dir or SEGLOG_DATA_DIR)", e.dataDir)
	}
	if err == nil {
		warnHalfMadeTopics(e, store)
	}
	return names, err
}

// resolve lists the partitions an argument covers: a topic of the data
// directory, or a topic or partition directory given by path; only >= 0
// limits it to one partition. A topic that cannot be listed at all is an
// error. Partitions missing in the middle are listed as such; a topic
// without partition directories, or without partition only, goes to probs.
func resolve(e *env, arg string, only int, probs *problems) (*coveredTopic, error) {
	if !strings.Contains(arg, "/") {
		return resolveTopic(filepath.Join(e.dataDir, arg), arg, arg, e.dataDir, only, probs)
	}
	dir, simple, err := simpleTarget(arg)
	if err != nil {
		return nil, err
	}
	if simple {
		return nil, fmt.Errorf("%s is a log in the simple store/index layout, which has no timestamps to chart or partitions to list here", dir)
	}
	dir = filepath.Clean(arg)
	if isTopicDir(dir) {
		return resolveTopic(dir, filepath.Base(dir), dir, "", only, probs)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, fmt.Errorf("partition directory %s: %w", dir, err)
	}
	n, err := format.ParsePartition(filepath.Base(dir))
	if err != nil {
		n = 0 // a copy under another name; read numbers it 0 as well
	}
	if only >= 0 && only != n {
		return nil, usagef("--partition %d does not match the partition directory %s", only, dir)
	}
	return &coveredTopic{name: filepath.Base(filepath.Dir(dir)), dir: dir, partitions: 1,
		parts: []covered{{name: dir, dir: dir, number: n}}}, nil
}

// isTopicDir tells a topic directory given by path from a partition
// directory: it holds partition directories and no segments.
func isTopicDir(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	parts := false
	for _, en := range entries {
		if _, _, err := format.ParseSegmentName(en.Name()); err == nil {
			return false
		}
		if _, err := format.ParsePartition(en.Name()); err == nil && en.IsDir() {
			parts = true
		}
	}
	return parts
}

// resolveTopic lists the partitions of the topic in dir (label names them
// in output). It reads the directory itself instead of using Store.Topic,
// which refuses a topic with a partition missing in the middle: the others
// must still be covered, and the gap shown.
func resolveTopic(dir, name, label, dataDir string, only int, probs *problems) (*coveredTopic, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && dataDir != "" {
			return nil, missingTopic(fmt.Errorf("topic %s in %s: %w", name, dataDir, logstore.ErrTopicNotFound), dataDir, "seglog create "+name)
		}
		return nil, fmt.Errorf("topic %s: %w", name, err)
	}
	present := map[int]bool{}
	t := &coveredTopic{name: name, dir: dir}
	for _, en := range entries {
		if p, err := format.ParsePartition(en.Name()); err == nil && en.IsDir() {
			present[p] = true
			t.partitions = max(t.partitions, p+1)
		}
	}
	switch {
	case t.partitions == 0:
		*probs = append(*probs, fmt.Errorf("topic %s (%s) has no partition directories: %w", name, dir, logstore.ErrPartitionNotFound))
		return t, nil
	case only >= t.partitions:
		*probs = append(*probs, fmt.Errorf("topic %s has partitions 0..%d, not %d: %w", name, t.partitions-1, only, logstore.ErrPartitionNotFound))
		return t, nil
	}
	for p := range t.partitions {
		if only < 0 || p == only {
			t.parts = append(t.parts, covered{name: fmt.Sprintf("%s/%d", label, p), dir: filepath.Join(dir, strconv.Itoa(p)),
				number: p, count: t.partitions, missing: !present[p]})
		}
	}
	return t, nil
}

// missingError is the problem a partition missing in the middle of its
// topic makes.
func missingError(t *coveredTopic, c covered) error {
	return fmt.Errorf("topic %s: partition %d of 0..%d is missing (%s): %w", t.name, c.number, t.partitions-1, c.dir, logstore.ErrPartitionNotFound)
}

// withoutLinks drops from every topic, with a warning each, those whose
// directory is a symbolic link: cmd changes nothing through a link, and
// over every topic (from cron) it goes on with the rest rather than fail.
func withoutLinks(e *env, store *logstore.Store, cmd string, topics []string) []string {
	kept := topics[:0]
	for _, t := range topics {
		if store.TopicIsLink(t) {
			link := filepath.Join(e.dataDir, t)
			where := "the data directory the link points into"
			if target, err := filepath.EvalSymlinks(link); err == nil {
				where = "--data-dir " + filepath.Dir(target)
			}
			e.warn("skipping topic %s: %s is a symbolic link, and %s changes nothing through one (run it with %s)", t, link, cmd, where)
			continue
		}
		kept = append(kept, t)
	}
	return kept
}
