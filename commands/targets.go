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
	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore"
)

// covered is a partition that an argument of describe or verify-crc
// covers, or a run of missing ones.
type covered struct {
	name    string // as output names it: "topic/P" ("topic/1..4" for a run), or a directory
	dir     string // for a run of several missing partitions, the topic directory; for a lone segment file, the file
	number  int
	last    int  // the run's last partition; number for one partition
	count   int  // the topic's partition count; 0 for a partition directory given by path
	missing bool // no directory, though a higher partition has one
	file    bool // a lone segment file, read as a partition of its own
	// layout is LayoutSimple for a log in that layout (dir); the zero
	// value is a seglog partition.
	layout logstore.Layout
}

// warnReadingWithout warns of what reading l goes on without: each index
// file that is not a regular file, and a Kafka partition's log start
// offset when its log directory's checkpoint does not parse (once).
func warnReadingWithout(e *env, l logstore.Log) {
	if kp, ok := l.(*logstore.KafkaPartition); ok {
		if err := kafkaLogStartDamage(kp.Dir()); err != nil {
			e.warnOnce(err.Error(), "%v: the log start offset is unknown, so records the broker's retention already gave up on may be read", err)
		}
	}
	p, ok := l.(interface {
		IgnoredIndexes() []*logstore.NotRegularError
	})
	if !ok {
		return
	}
	for _, odd := range p.IgnoredIndexes() {
		advice := odd.Advice()
		if l.Layout() == logstore.LayoutKafka {
			advice = "move it out of the partition directory (Kafka rebuilds a missing index on start)"
		}
		e.warn("index file %s is not a regular file (%s): reading without it, as an index is only a hint (verify-crc reports it); %s",
			odd.Path, odd.Kind(), advice)
	}
}

// open opens the partition, to read it.
func (c covered) open() (*logstore.Partition, error) {
	if c.file {
		return logstore.OpenSegmentFile(c.dir, c.name)
	}
	return logstore.OpenPartitionDir(c.dir, c.name)
}

// openLog opens the log c covers, in its layout.
func (c covered) openLog() (logstore.Log, error) {
	return openLog(c.layout, c.dir, c.name, c.file, c.open)
}

// openLog opens the log in dir (a file when file) when it is in the
// simple layout or Apache Kafka's (called name), else the seglog
// partition partition opens: the one place a command's target becomes a
// logstore.Log.
func openLog(layout logstore.Layout, dir, name string, file bool, partition func() (*logstore.Partition, error)) (logstore.Log, error) {
	switch layout {
	case logstore.LayoutSimple:
		l, err := openSimple(dir)
		if err != nil {
			return nil, err
		}
		return l, nil
	case logstore.LayoutKafka:
		open := logstore.OpenKafkaPartition
		if file {
			open = logstore.OpenKafkaSegmentFile
		}
		p, err := open(dir, name)
		if err != nil {
			return nil, err
		}
		if !file {
			if cp, ok := kafkaCheckpoints(dir); ok && cp.LogStartOffset.Known && cp.LogStartOffset.Offset > 0 {
				p.SetLogStart(uint64(cp.LogStartOffset.Offset))
			}
		}
		return p, nil
	}
	p, err := partition()
	if err != nil {
		return nil, err
	}
	return p, nil
}

// coveredTopic is a topic's partitions, in order.
type coveredTopic struct {
	name       string
	dir        string
	partitions int // highest partition directory + 1
	parts      []covered
	found      logstore.TopicPartitions
	file       bool            // a lone segment file
	layout     logstore.Layout // as covered's
}

// missingError is the problem a run of partitions missing in the middle
// of its topic makes.
func (t *coveredTopic) missingError(c covered) error {
	return t.found.MissingErr(t.name, t.dir, logstore.PartitionRange{First: c.number, Last: c.last})
}

// dataDirTopics lists every topic of the data directory, warning of the
// half-made ones interrupted copies left, which are no topics.
func dataDirTopics(e *env) ([]string, error) {
	if d, err := e.kafkaDir(); d != nil || err != nil {
		if err != nil {
			return nil, err
		}
		return d.Topics(), nil
	}
	store := logstore.Open(e.dataDir)
	names, err := store.Topics()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, noDataDir(e)
	}
	if err == nil {
		warnHalfMadeTopics(e, store)
	}
	return names, err
}

// noDataDir is the error of a command over a data directory that does
// not exist.
func noDataDir(e *env) error {
	return fmt.Errorf("data directory %s does not exist (name the right one with --data-dir or SEGLOG_DATA_DIR)", e.dataDir)
}

// topicTargets returns the arguments of a command that lists, or every
// topic when there are none. A data directory without topics lists
// nothing, but says so: it is what an unmounted volume looks like.
func topicTargets(e *env, args []string) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	names, err := dataDirTopics(e)
	if err == nil && len(names) == 0 {
		e.warn("data directory %s holds no topics (name another with --data-dir or SEGLOG_DATA_DIR)", e.dataDir)
	}
	return names, err
}

// nothingToDo is the error of a command over every topic of a data
// directory that holds none, or none it may work on: a check that checked
// nothing must not pass (a monitoring job would stay green over an
// unmounted volume), nor a cron job that did nothing.
func nothingToDo(e *env, verb string, topics int) error {
	if topics == 0 {
		return fmt.Errorf("nothing to %s: data directory %s holds no topics (is it the right one? name another with --data-dir or SEGLOG_DATA_DIR)", verb, e.dataDir)
	}
	return fmt.Errorf("nothing to %s: every topic of %s was skipped (see the warnings)", verb, e.dataDir)
}

// pathKind is what a directory named by path holds.
type pathKind int

const (
	partitionPath   pathKind = iota + 1 // segment files
	topicPath                           // partition directories, one at least holding segment files
	simplePath                          // .store files: a log in the simple store/index layout
	segmentFilePath                     // not a directory: a lone segment file, its .log
	kafkaPath                           // Apache Kafka's segments: a partition directory of a broker's log directory
	kafkaFilePath                       // a lone segment file of Apache Kafka's
)

// kafkaKind reports whether k is of Apache Kafka's layout.
func kafkaKind(k pathKind) bool { return k == kafkaPath || k == kafkaFilePath }

// notALogError is a path that names no log. It is "not found" for tail -F,
// which waits for the log to appear there.
type notALogError struct {
	path string
	why  string
}

func (e *notALogError) Error() string { return e.path + " " + e.why }

func (e *notALogError) Unwrap() error { return logstore.ErrPartitionNotFound }

// classifyPath tells what the directory arg (a path) holds, by its files:
// a partition directory is one with segment files, whatever its name, and
// a topic directory one with partition directories of which one at least
// holds segment files. A file is a lone segment file when it is a .log.
// Anything else (a typo, an unmounted volume, a directory of notes, an
// empty partition directory) is an error: read as an empty log it would
// be a silent wrong answer.
func classifyPath(arg string) (string, pathKind, error) {
	dir := filepath.Clean(arg)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return dir, 0, &notALogError{arg, "does not exist (an argument holding '/' is a path: to a partition or topic directory, or a segment's .log)"}
	case err != nil:
		return dir, 0, err
	case fi.Mode().IsRegular() && strings.HasSuffix(dir, format.LogExt):
		if kafka, err := logstore.IsKafkaSegmentFile(dir); err != nil || kafka {
			return dir, kafkaFilePath, err
		}
		return dir, segmentFilePath, nil
	case !fi.IsDir():
		return dir, 0, fmt.Errorf("%s is neither a directory nor a segment file (name a partition or topic directory, a segment's .log, or a TOPIC without '/')", arg)
	}
	layout, err := logstore.DetectLayout(dir)
	switch {
	case err != nil:
		return dir, 0, err
	case layout == logstore.LayoutSeglog:
		return dir, partitionPath, nil
	case layout == logstore.LayoutSimple:
		return dir, simplePath, nil
	case layout == logstore.LayoutKafka:
		return dir, kafkaPath, nil
	}
	if kafka, _ := logstore.IsKafkaLogDir(dir); kafka {
		return dir, 0, fmt.Errorf("%s is an Apache Kafka log directory: name it with --data-dir (-d), then topics by name, or name one of its partition directories (TOPIC-N) by path", arg)
	}
	if holdsPartitions(dir) {
		return dir, topicPath, nil
	}
	why := "is not a partition directory (no segment files), a topic directory (no partition directories holding them) " +
		"or a log in the simple store/index layout (no .store files)"
	if entries, err := os.ReadDir(dir); err == nil {
		for _, en := range entries {
			if en.IsDir() && format.ValidateTopic(en.Name()) == nil && holdsPartitions(filepath.Join(dir, en.Name())) {
				why = fmt.Sprintf("is a data directory, not a partition or topic directory (name it with --data-dir, then topics by name, e.g. %s)", en.Name())
				break
			}
		}
	}
	return dir, 0, &notALogError{arg, why}
}

// holdsPartitions tells a topic directory: one partition directory at
// least holds segment files.
func holdsPartitions(dir string) bool {
	tp, err := logstore.ReadTopicPartitions(dir)
	if err != nil {
		return false
	}
	for _, p := range tp.Present {
		// A partition directory in the wrong layout, or both, is a
		// partition still: the error about it comes when it is read.
		layout, err := logstore.DetectLayout(filepath.Join(dir, strconv.Itoa(p)))
		if layout == logstore.LayoutSeglog || errors.Is(err, logstore.ErrMixedLayout) {
			return true
		}
	}
	return false
}

// pathTopic is the topic a partition directory named by path belongs to,
// for output: the name of the directory above it.
func pathTopic(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Base(filepath.Dir(dir))
}

// resolve is resolveLogs for a command that reads seglog partitions
// only: a log in the simple layout is an error.
func resolve(e *env, arg string, only int, probs *problems) (*coveredTopic, error) {
	ct, err := resolveLogs(e, arg, only, probs)
	if err == nil && ct.layout == logstore.LayoutSimple {
		return nil, fmt.Errorf("%s is a log in the %s, which has no timestamps to chart or partitions to list here", ct.dir, ct.layout)
	}
	return ct, err
}

// resolveLogs lists the partitions an argument covers: a topic of the
// data directory, or a topic or partition directory or a log in the
// simple layout given by path; only >= 0 limits it to one partition (the
// caller checks it against a simple log, which is partition 0). A topic
// that cannot be listed at all, or a path that holds no log, is an
// error. Partitions missing in the middle are listed as such, a run of
// them as one; a topic without partition directories, or without
// partition only, goes to probs.
func resolveLogs(e *env, arg string, only int, probs *problems) (*coveredTopic, error) {
	if !strings.Contains(arg, "/") {
		if d, err := e.kafkaDir(); d != nil || err != nil {
			if err != nil {
				return nil, err
			}
			return resolveKafkaTopic(d, arg, only)
		}
		return resolveTopic(e, filepath.Join(e.dataDir, arg), arg, arg, e.dataDir, only, probs)
	}
	dir, kind, err := classifyPath(arg)
	switch {
	case err != nil:
		return nil, err
	case kind == simplePath:
		return &coveredTopic{name: filepath.Base(dir), dir: dir, partitions: 1, layout: logstore.LayoutSimple,
			parts: []covered{{name: dir, dir: dir, layout: logstore.LayoutSimple}}}, nil
	case kind == topicPath:
		return resolveTopic(e, dir, filepath.Base(dir), dir, "", only, probs)
	}
	topic, c, err := pathCovered(dir, kind, only)
	if err != nil {
		return nil, err
	}
	return &coveredTopic{name: topic, dir: dir, partitions: 1, file: c.file, layout: c.layout, parts: []covered{c}}, nil
}

// pathCovered is the partition a partition directory or a lone segment
// file named by path (dir) is, and the topic output names it by: numbered
// by its directory's name, else 0 (a copy under another name), in the
// topic named by the directory above; an Apache Kafka partition
// directory is named TOPIC-N itself. A --partition given (only >= 0) must
// be that number.
func pathCovered(dir string, kind pathKind, only int) (string, covered, error) {
	c := covered{name: dir, dir: dir, file: kind == segmentFilePath || kind == kafkaFilePath}
	what, pdir := "partition directory", dir
	if c.file {
		what, pdir = "segment file", filepath.Dir(dir)
	}
	n, err := format.ParsePartition(filepath.Base(pdir))
	if err != nil {
		n = 0
	}
	topic := pathTopic(pdir)
	if kafkaKind(kind) {
		c.layout = logstore.LayoutKafka
		n, topic = 0, filepath.Base(pdir)
		if pd, err := kafka.ParsePartitionDir(filepath.Base(pdir)); err == nil {
			n, topic = int(pd.Partition), pd.Topic
		}
	}
	if only >= 0 && only != n {
		return "", c, usagef("--partition %d does not match the %s %s", only, what, dir)
	}
	c.number, c.last = n, n
	return topic, c, nil
}

// resolveTopic lists the partitions of the topic in dir (label names them
// in output). It reads the directory itself instead of using Store.Topic,
// which refuses a topic with a partition missing in the middle: the others
// must still be covered, and the gap shown.
func resolveTopic(e *env, dir, name, label, dataDir string, only int, probs *problems) (*coveredTopic, error) {
	found, err := logstore.ReadTopicPartitions(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && dataDir != "" {
			return nil, missingTopic(fmt.Errorf("topic %s in %s: %w", name, dataDir, logstore.ErrTopicNotFound), dataDir, "seglog create "+name)
		}
		return nil, fmt.Errorf("topic %s: %w", name, err)
	}
	warnForeign(e, name, dir, found.Foreign)
	t := &coveredTopic{name: name, dir: dir, partitions: found.Count, found: found}
	switch {
	case found.Count == 0:
		*probs = append(*probs, found.Err(name, dir))
		return t, nil
	case only >= found.Count:
		*probs = append(*probs, fmt.Errorf("topic %s has partitions 0..%d, not %d: %w", name, found.Count-1, only, logstore.ErrPartitionNotFound))
		return t, nil
	}
	for r, missing := range found.Runs(only) {
		c := covered{name: label + "/" + r.String(), dir: filepath.Join(dir, strconv.Itoa(r.First)),
			number: r.First, last: r.Last, count: found.Count, missing: missing}
		if r.Len() > 1 {
			c.dir = dir
		}
		t.parts = append(t.parts, c)
	}
	return t, nil
}

// warnForeign warns of the directories of a topic numbered like
// partitions beyond any seglog makes: not counted, never touched.
func warnForeign(e *env, topic, dir string, foreign []string) {
	if len(foreign) == 0 {
		return
	}
	if len(foreign) == 1 {
		e.warn("topic %s: ignoring %s: partitions are numbered 0..%d, so it is none of the topic's (move it out of %s)",
			topic, filepath.Join(dir, foreign[0]), logstore.MaxPartitions-1, dir)
		return
	}
	e.warn("topic %s: ignoring %d directories in %s numbered beyond partition %d (%s): none of the topic's (move them out of %s)",
		topic, len(foreign), dir, logstore.MaxPartitions-1, nameList(foreign), dir)
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
