package commands

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

// metrics (and describe --prometheus) prints what describe and describe
// --groups know in the Prometheus text exposition format 0.0.4, for
// node_exporter's textfile collector. The families are metricFamilies;
// docs/cli.md (Monitoring) lists them, and a test holds the two together.

type metricsOptions struct {
	targets   []string // topics, or directories when they hold a '/'; none: every topic
	partition int      // -1: all
	output    string   // a file to replace atomically; "": stdout
}

func metricsCommand() *cli.Command {
	return &cli.Command{
		Name:      "metrics",
		Usage:     "print every partition's and group's figures in the Prometheus text format",
		ArgsUsage: "[TOPIC|PARTITION-DIR...]",
		Description: "Only reads: prints, in the Prometheus text exposition format (0.0.4), what\n" +
			"describe and describe --groups show: each topic's partitions, each\n" +
			"partition's size, segments, start and next offset, oldest and newest\n" +
			"timestamp and whether a live writer holds it, each consumer group's committed\n" +
			"offsets and lag, and when and how fast the figures were taken. It reads what\n" +
			"describe reads (indexes and segment tails), so a data directory of 10,000\n" +
			"partitions takes seconds. No TOPIC: every topic and group; with TOPICs, those\n" +
			"and the groups' positions in them. 'seglog describe --prometheus' prints the\n" +
			"same.\n\n" +
			"--output FILE replaces FILE atomically (a temporary beside it, fsync,\n" +
			"rename), so node_exporter's textfile collector never reads half a file. A\n" +
			"topic or partition that cannot be read is exported with seglog_topic_up or\n" +
			"seglog_partition_up 0 and the rest as usual, FILE is still written, and\n" +
			"metrics exits 1 with the error. When the data directory cannot be listed at\n" +
			"all nothing is written: the old FILE's seglog_scrape_timestamp_seconds then\n" +
			"ages, which is what to alert on.\n\n" +
			"Examples:\n" +
			"  seglog metrics\n" +
			"  seglog metrics orders --partition 0\n" +
			"  seglog metrics --output /var/lib/node_exporter/textfile/seglog.prom   # from cron",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "export only partition `P`", DefaultText: "all"},
			&cli.StringFlag{Name: "output", Usage: "replace `FILE` atomically instead of printing"},
		},
		Action: func(c *cli.Context) error {
			o := metricsOptions{targets: c.Args().Slice(), partition: c.Int("partition"), output: c.String("output")}
			if c.IsSet("partition") && o.partition < 0 {
				return usagef("--partition must be 0 or more, not %d", o.partition)
			}
			if c.IsSet("output") && o.output == "" {
				return usagef("--output needs a file name")
			}
			if err := checkTargetNames(o.targets, true); err != nil {
				return err
			}
			return runMetrics(envFrom(c), o)
		},
	}
}

// describePrometheus is describe --prometheus: metrics' output on stdout.
func describePrometheus(c *cli.Context, o describeOptions) error {
	for _, other := range []string{"json", "groups", "timeline"} {
		if c.IsSet(other) {
			return usagef("--prometheus and --%s do not go together", other)
		}
	}
	return runMetrics(envFrom(c), metricsOptions{targets: o.targets, partition: o.partition})
}

// metricsSnapshot is everything one run exports: memory in proportion to
// the partitions and groups, never to their records.
type metricsSnapshot struct {
	taken  time.Time
	took   time.Duration
	topics []topicMetrics
	groups []*groupInfo
}

// topicMetrics is a target as exported: its partitions, or nil when it
// could not be read at all.
type topicMetrics struct {
	name string
	info *topicInfo
}

func runMetrics(e *env, o metricsOptions) error {
	var probs problems
	s, err := takeMetrics(e, o, &probs)
	if err != nil {
		return err
	}
	write := func(bw *bufio.Writer) error { return writeMetrics(bw, s) }
	if o.output != "" {
		err = logstore.ReplaceFile(o.output, write)
		if err != nil {
			return fmt.Errorf("--output %s: %w (nothing was replaced; check the directory exists and is writable)", o.output, err)
		}
	} else {
		bw := bufio.NewWriter(e.stdout)
		if err = write(bw); err == nil {
			err = bw.Flush()
		}
		if err != nil {
			return err
		}
	}
	return probs.err()
}

// takeMetrics gathers what describe and describe --groups would show. A
// topic, partition or group that cannot be read is a problem the rest goes
// on past; a data directory that cannot be listed is the error.
func takeMetrics(e *env, o metricsOptions, probs *problems) (*metricsSnapshot, error) {
	s := &metricsSnapshot{taken: time.Now()}
	targets := o.targets
	if len(targets) == 0 {
		names, err := dataDirTopics(e)
		if err != nil {
			return nil, err
		}
		if len(names) == 0 {
			*probs = append(*probs, nothingToDo(e, "export", 0))
		}
		targets = names
	}
	stats := map[string]logstore.PartitionStats{} // by "topic/partition", of topics read by name
	exported := map[string]string{}               // topic label -> the argument it came from
	for _, arg := range targets {
		t, err := gatherTarget(e, arg, o.partition, probs)
		var ue *usageError
		if errors.As(err, &ue) {
			return nil, err
		}
		tm := topicMetrics{name: arg, info: t}
		if err == nil {
			tm.name = t.name
		}
		// Two series alike make the collector refuse the whole file.
		if first, ok := exported[tm.name]; ok {
			*probs = append(*probs, fmt.Errorf("%s: topic %s is exported already, from %s (name each topic once)", arg, tm.name, first))
			continue
		}
		exported[tm.name] = arg
		if err != nil {
			*probs = append(*probs, err)
		} else {
			for _, p := range t.parts {
				if t.layout == "" && !p.missing && p.err == nil {
					stats[partitionKey(t.name, p.partition)] = p.stats
				}
			}
		}
		s.topics = append(s.topics, tm)
	}
	groups, err := metricsGroups(e, o, stats, probs)
	if err != nil {
		return nil, err
	}
	s.groups = groups
	s.took = time.Since(s.taken)
	return s, nil
}

func partitionKey(topic string, partition int) string { return topic + "/" + strconv.Itoa(partition) }

// metricsGroups reads each group's committed positions, of the topics
// named (all without TOPICs), with their lag where the partition was read
// above: no partition is read twice.
func metricsGroups(e *env, o metricsOptions, stats map[string]logstore.PartitionStats, probs *problems) ([]*groupInfo, error) {
	store := logstore.Open(e.dataDir)
	names, err := store.Groups()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, noDataDir(e)
	}
	if err != nil {
		return nil, err
	}
	only := map[string]bool{}
	for _, t := range o.targets {
		only[t] = true
	}
	fill := func(gp *groupPartitionInfo) {
		if st, ok := stats[partitionKey(gp.topic, gp.partition)]; ok {
			gp.start, gp.next, gp.known = st.Start, st.Next, true
		}
	}
	var groups []*groupInfo
	for _, g := range readGroupPositions(store, names, only, o.partition, fill, probs) {
		if g.err != nil || len(g.parts) > 0 {
			groups = append(groups, g)
		}
	}
	return groups, nil
}

// metricFamily is one metric as exported: every one is a gauge, each
// sample of it made by samples.
type metricFamily struct {
	name, help string
	samples    func(s *metricsSnapshot, emit sampleFunc)
}

// sampleFunc exports one sample: its value, and its labels as name, value
// pairs.
type sampleFunc func(value string, labels ...string)

// eachPartition calls f with every partition read, of directories in the
// topic layout or the simple one (which has no timestamps).
func eachPartition(s *metricsSnapshot, f func(topic string, simple bool, p partitionInfo)) {
	for _, tm := range s.topics {
		if tm.info == nil {
			continue
		}
		for _, p := range tm.info.parts {
			if !p.missing && p.err == nil {
				f(tm.name, tm.info.layout == simpleLayout, p)
			}
		}
	}
}

// partitionGauge is a family with a sample per partition read.
func partitionGauge(name, help string, value func(st logstore.PartitionStats) string) metricFamily {
	return metricFamily{name, help, func(s *metricsSnapshot, emit sampleFunc) {
		eachPartition(s, func(topic string, _ bool, p partitionInfo) {
			emit(value(p.stats), "topic", topic, "partition", strconv.Itoa(p.partition))
		})
	}}
}

// timestampGauge is a family with a sample per partition read that holds
// records with timestamps.
func timestampGauge(name, help string, ns func(st logstore.PartitionStats) int64) metricFamily {
	return metricFamily{name, help, func(s *metricsSnapshot, emit sampleFunc) {
		eachPartition(s, func(topic string, simple bool, p partitionInfo) {
			if p.stats.Records > 0 && !simple {
				emit(nsSeconds(ns(p.stats)), "topic", topic, "partition", strconv.Itoa(p.partition))
			}
		})
	}}
}

// metricFamilies are the families metrics exports, in order. No record
// count: describe counts records from the indexes, an upper bound that
// damage it does not read can make wrong, and a metric must be exact;
// next_offset − start_offset is the span exactly.
var metricFamilies = []metricFamily{
	{"seglog_topic_up", "Whether the topic could be read: 1, or 0 when it could not be read at all (the error is on stderr).", func(s *metricsSnapshot, emit sampleFunc) {
		for _, tm := range s.topics {
			emit(boolValue(tm.info != nil), "topic", tm.name)
		}
	}},
	{"seglog_topic_partitions", "Partitions of the topic: its highest partition directory + 1.", func(s *metricsSnapshot, emit sampleFunc) {
		for _, tm := range s.topics {
			if tm.info != nil {
				emit(strconv.Itoa(tm.info.partitions), "topic", tm.name)
			}
		}
	}},
	{"seglog_partition_up", "Whether the partition could be read: 1, or 0 when it is missing below the highest or unreadable.", func(s *metricsSnapshot, emit sampleFunc) {
		for _, tm := range s.topics {
			if tm.info == nil {
				continue
			}
			for _, p := range tm.info.parts {
				for _, n := range p.numbers() {
					emit(boolValue(!p.missing && p.err == nil), "topic", tm.name, "partition", strconv.Itoa(n))
				}
			}
		}
	}},
	partitionGauge("seglog_partition_size_bytes", "Bytes of the partition's .log files.",
		func(st logstore.PartitionStats) string { return strconv.FormatInt(st.Bytes, 10) }),
	partitionGauge("seglog_partition_segments", "Segments of the partition.",
		func(st logstore.PartitionStats) string { return strconv.Itoa(st.Segments) }),
	partitionGauge("seglog_partition_start_offset", "The first offset the partition holds (its next offset when it holds none).",
		func(st logstore.PartitionStats) string { return strconv.FormatUint(st.Start, 10) }),
	partitionGauge("seglog_partition_next_offset", "The offset the partition's next record gets (of a full partition, its last record's).",
		func(st logstore.PartitionStats) string { return strconv.FormatUint(st.Next, 10) }),
	timestampGauge("seglog_partition_oldest_timestamp_seconds", "Timestamp of the partition's oldest record, in Unix seconds; absent with no records.",
		func(st logstore.PartitionStats) int64 { return st.Oldest }),
	timestampGauge("seglog_partition_newest_timestamp_seconds", "Timestamp of the partition's newest record, in Unix seconds; absent with no records.",
		func(st logstore.PartitionStats) int64 { return st.Newest }),
	partitionGauge("seglog_partition_writer_active", "Whether a live process holds the partition's writer lock: 1, or 0.",
		func(st logstore.PartitionStats) string { return boolValue(st.WriterPid != 0) }),
	{"seglog_group_up", "Whether the consumer group's positions could be read: 1, or 0.", func(s *metricsSnapshot, emit sampleFunc) {
		for _, g := range s.groups {
			emit(boolValue(g.err == nil), "group", g.name)
		}
	}},
	{"seglog_group_committed_offset", "The group's committed position: the offset of the next record it reads.", func(s *metricsSnapshot, emit sampleFunc) {
		for _, g := range s.groups {
			for _, gp := range g.parts {
				emit(strconv.FormatUint(gp.committed, 10), "group", g.name, "topic", gp.topic, "partition", strconv.Itoa(gp.partition))
			}
		}
	}},
	{"seglog_group_lag", "Records the group has yet to read: next offset - committed offset, 0 past the end; absent where the partition could not be read.", func(s *metricsSnapshot, emit sampleFunc) {
		for _, g := range s.groups {
			for _, gp := range g.parts {
				if gp.known {
					emit(strconv.FormatUint(gp.lag(), 10), "group", g.name, "topic", gp.topic, "partition", strconv.Itoa(gp.partition))
				}
			}
		}
	}},
	{"seglog_group_total_lag", "The group's lag summed over the partitions exported.", func(s *metricsSnapshot, emit sampleFunc) {
		for _, g := range s.groups {
			var sum uint64
			for _, gp := range g.parts {
				if gp.known {
					sum += gp.lag()
				}
			}
			emit(strconv.FormatUint(sum, 10), "group", g.name)
		}
	}},
	{"seglog_group_last_commit_timestamp_seconds", "When the group last committed to the topic, in Unix seconds.", func(s *metricsSnapshot, emit sampleFunc) {
		for _, g := range s.groups {
			for i, gp := range g.parts {
				if !gp.updated.IsZero() && (i == 0 || g.parts[i-1].topic != gp.topic) {
					emit(nsSeconds(gp.updated.UnixNano()), "group", g.name, "topic", gp.topic)
				}
			}
		}
	}},
	{"seglog_scrape_timestamp_seconds", "When these figures were taken, in Unix seconds.", func(s *metricsSnapshot, emit sampleFunc) {
		emit(nsSeconds(s.taken.UnixNano()))
	}},
	{"seglog_scrape_duration_seconds", "How long taking these figures took, in seconds.", func(s *metricsSnapshot, emit sampleFunc) {
		emit(strconv.FormatFloat(s.took.Seconds(), 'f', -1, 64))
	}},
}

// writeMetrics prints s in the text exposition format: each family's HELP
// and TYPE, then its samples together, as the format requires; a family
// without samples is left out.
func writeMetrics(bw *bufio.Writer, s *metricsSnapshot) error {
	for _, f := range metricFamilies {
		headed := false
		f.samples(s, func(value string, labels ...string) {
			if !headed {
				headed = true
				fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s gauge\n", f.name, escapeHelp(f.help), f.name)
			}
			bw.WriteString(f.name)
			for i := 0; i+1 < len(labels); i += 2 {
				if i == 0 {
					bw.WriteByte('{')
				} else {
					bw.WriteByte(',')
				}
				bw.WriteString(labels[i] + `="` + escapeLabelValue(labels[i+1]) + `"`)
			}
			if len(labels) > 0 {
				bw.WriteByte('}')
			}
			bw.WriteString(" " + value + "\n")
		})
	}
	// A bufio.Writer keeps its first error: one check covers every write.
	_, err := bw.Write(nil)
	return err
}

// The text format's escapes: in HELP, backslash and newline; in a label
// value, also the double quote, and bytes that are not UTF-8, which the
// format refuses, become U+FFFD. Topic names need none of it, but a
// directory named by path may.
var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string { return helpEscaper.Replace(s) }
func escapeLabelValue(s string) string {
	return labelEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD"))
}

func boolValue(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// nsSeconds is Unix nanoseconds as seconds, the base unit Prometheus
// wants, in the shortest form that reads back as the same float64.
func nsSeconds(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e9, 'f', -1, 64)
}
