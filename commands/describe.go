package commands

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

type describeOptions struct {
	targets   []string // topics, or directories when they hold a '/'; none: every topic
	partition int      // -1: all
	json      bool
	wide      bool // tables whole, however wide
	groups    bool // describe consumer groups: targets are topics to show
	timeline  bool // chart records over time instead (timeline.go)
	width     int  // --width: the chart's columns; 0: the terminal's, or 80
	ascii     bool // chart in ASCII even in a UTF-8 locale
}

func describeCommand() *cli.Command {
	return &cli.Command{
		Name:      "describe",
		Usage:     "print each partition's offsets, record count, size and time range",
		ArgsUsage: "[TOPIC|PARTITION-DIR|SEGMENT.log...] | --groups [TOPIC...]",
		Description: "Only reads: prints a table per topic with each partition's start and next offset,\n" +
			"records, segments, size, oldest and newest timestamp and the pid of the process\n" +
			"holding its writer lock. It reads indexes and segment tails, not whole segments:\n" +
			"a RECORDS count marked * (\"records_exact\": false in --json) is counted from the\n" +
			"indexes, and includes any records lost to damage (verify-crc reads every record).\n" +
			"No TOPIC: every topic (a data directory without topics lists nothing, with a\n" +
			"warning). A TOPIC containing '/' names a partition or topic\n" +
			"directory directly (a copy, a backup), a lone segment file (a .log, described as\n" +
			"the active segment of a partition of its own: its tail may be incomplete; \"layout\":\n" +
			"\"segment-file\" in --json), or a log in the simple store/index layout (one row, no\n" +
			"timestamps); a directory holding none of them is an error. Partition\n" +
			"directories missing below the highest are shown as missing, a run of them in one\n" +
			"row, and make describe exit 1; directories numbered 10000 or more are not\n" +
			"partitions, and are ignored with a warning.\n\n" +
			"--groups describes the consumer groups (read/tail --group) instead: a table per\n" +
			"group with, for each partition it committed (of the TOPICs named, or all), the\n" +
			"committed offset (the next record the group reads), the partition's next offset,\n" +
			"the lag between them and when the group last committed. A committed offset that\n" +
			"retention removed, or past the partition's end, is noted. It takes no group lock:\n" +
			"a running reader may have moved on since its last commit.\n\n" +
			"--timeline charts instead each partition's records over the topic's time range, one\n" +
			"column per time bucket (from the time indexes, not the records), to see when\n" +
			"traffic stopped. It fits the terminal, else --width columns (default 80); blocks\n" +
			"need a UTF-8 locale, else (or with --ascii) ASCII. With --json: the counts.\n\n" +
			"Apache Kafka's own log directories are read the same way, never written: a broker's\n" +
			"log directory given with -d (topics by name), or a TOPIC-N partition directory or a\n" +
			"segment .log of Kafka's by path (told from seglog's by their contents).\n\n" +
			"Examples:\n" +
			"  seglog describe\n" +
			"  seglog describe orders --partition 2\n" +
			"  seglog describe ./backup/data/orders/0 --json\n" +
			"  seglog describe --groups orders\n" +
			"  seglog describe orders --timeline",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "describe only partition `P`", DefaultText: "all"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document instead of tables"},
			wideFlag(),
			&cli.BoolFlag{Name: "groups", Usage: "describe the consumer groups' positions and lag instead"},
			&cli.BoolFlag{Name: "timeline", Usage: "chart each partition's records over time instead"},
			&cli.IntFlag{Name: "width", Usage: "with --timeline: `N` columns, label included", DefaultText: "terminal's, or 80"},
			&cli.BoolFlag{Name: "ascii", Usage: "with --timeline: draw in ASCII, not block characters"},
			&cli.BoolFlag{Name: "prometheus", Usage: "print the Prometheus text format instead, as 'seglog metrics' does"},
		},
		Action: func(c *cli.Context) error {
			o := describeOptions{targets: c.Args().Slice(), partition: c.Int("partition"), json: c.Bool("json"), wide: c.Bool("wide"), groups: c.Bool("groups"),
				timeline: c.Bool("timeline"), width: c.Int("width"), ascii: c.Bool("ascii")}
			if c.IsSet("partition") && o.partition < 0 {
				return usagef("--partition must be 0 or more, not %d", o.partition)
			}
			if err := checkTargetNames(o.targets, !o.groups); err != nil {
				return err
			}
			if err := checkTimelineFlags(c, o); err != nil {
				return err
			}
			if c.Bool("prometheus") {
				return describePrometheus(c, o)
			}
			if o.groups {
				return runDescribeGroups(envFrom(c), o)
			}
			if o.timeline {
				return runTimeline(envFrom(c), o)
			}
			return runDescribe(envFrom(c), o)
		},
	}
}

// Layouts of what describe names by path, as --json gives them.
const (
	simpleLayout      = "simple"       // a log in the simple store/index layout: no timestamps
	segmentFileLayout = "segment-file" // a lone segment file, read as a partition of its own
	kafkaLayout       = "kafka"        // Apache Kafka's own segments
)

func runDescribe(e *env, o describeOptions) error {
	targets, err := topicTargets(e, o.targets)
	if err != nil {
		return err
	}
	var probs problems
	return topicReport(targets, o.json, &probs,
		func(arg string) (*topicInfo, error) { return gatherTarget(e, arg, o.partition, &probs) },
		func(t *topicInfo, first bool) error { return writeDescribeTable(e.stdout, t, !first, o.wide) },
		func(topics []*topicInfo) error { return writeDescribeJSON(e.stdout, topics) })
}

// describeTable is describe's table: in 80 columns, the segment count
// and oldest timestamp go first, then the start and record count.
var describeTable = tableLayout{
	header:  []string{"PARTITION", "START", "NEXT", "RECORDS", "SEGMENTS", "SIZE", "OLDEST", "NEWEST", "WRITER"},
	numeric: "PARTITION START NEXT RECORDS SEGMENTS SIZE WRITER",
	drop:    []string{"SEGMENTS", "OLDEST", "START", "RECORDS"},
}

// writeDescribeTable prints a topic's title line and table; after another
// table, a blank line first.
func writeDescribeTable(w io.Writer, t *topicInfo, blank, wide bool) error {
	var b bytes.Buffer
	if blank {
		b.WriteByte('\n')
	}
	switch t.layout {
	case simpleLayout:
		fmt.Fprintf(&b, "%s: a log in the %s store/index layout (no timestamps)\n", t.dir, t.layout)
	case segmentFileLayout:
		fmt.Fprintf(&b, "%s: a lone segment file, read as the active segment of a partition of its own\n", t.dir)
	case kafkaLayout:
		fmt.Fprintf(&b, "topic %s (%s, Apache Kafka's layout, read-only)\n", t.name, t.dir)
	default:
		fmt.Fprintf(&b, "topic %s (%s)\n", t.name, t.dir)
	}
	if t.settings != nil {
		b.WriteString(settingsLine(*t.settings))
	}
	var times timeFormatter
	fromIndex := false
	rows := make([][]string, 0, len(t.parts))
	for _, p := range t.parts {
		row := []string{p.label(), "", "-", "-", "-", "-", "-", "-", "-"}
		switch {
		case p.missing:
			row[1] = "missing"
		case p.err != nil:
			row[1] = "error"
		default:
			st := p.stats
			oldest, newest := timeCells(&times, st)
			if t.layout == simpleLayout {
				oldest, newest = "-", "-"
			}
			next := strconv.FormatUint(st.Next, 10)
			if st.Full {
				next = "none (full)" // its last record has offset 2^64-1
			}
			fromIndex = fromIndex || st.RecordsFromIndex
			row = []string{strconv.Itoa(p.partition),
				strconv.FormatUint(st.Start, 10), next,
				recordsCell(st.Records, st.RecordsFromIndex), strconv.Itoa(st.Segments),
				humanSize(st.Bytes), oldest, newest, pidCell(st.WriterPid)}
		}
		rows = append(rows, row)
	}
	if err := describeTable.render(&b, rows, wide); err != nil {
		return err
	}
	if fromIndex {
		b.WriteString(recordsFootnote)
	}
	for _, p := range t.parts {
		if p.kafka != nil {
			b.WriteString(kafkaCheckpointLine(t.name, p.partition, *p.kafka))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// settingsLine is a topic's stored settings under its title:
// "settings: retention 7d, segment-bytes default, ...".
func settingsLine(st logstore.Settings) string {
	items := make([]string, len(topicSettings))
	for i, s := range topicSettings {
		items[i] = s.name + " " + cmp.Or(s.show(st), "default")
	}
	return "settings: " + strings.Join(items, ", ") + "\n"
}

// recordsCell is a RECORDS cell: a count from the indexes, which damage
// before a segment's last index entry would not lower, is marked for
// recordsFootnote.
func recordsCell(n uint64, fromIndex bool) string {
	cell := strconv.FormatUint(n, 10)
	if fromIndex {
		cell += "*"
	}
	return cell
}

// recordsFootnote follows a table with a RECORDS cell so marked.
const recordsFootnote = "* records counted from the indexes (of a Kafka partition, its batch headers), not read: any lost to damage are counted too ('seglog verify-crc' reads them all)\n"

// timeCells are the OLDEST and NEWEST cells: '-' with no records.
func timeCells(f *timeFormatter, st logstore.PartitionStats) (oldest, newest string) {
	if st.Records == 0 {
		return "-", "-"
	}
	return string(f.append(nil, st.Oldest)), string(f.append(nil, st.Newest))
}

func pidCell(pid int) string {
	if pid == 0 {
		return "-"
	}
	return strconv.Itoa(pid)
}

// describeJSON is describe's --json document. Numbers are not rounded (how
// records were counted: records_exact); times are null when a partition
// holds no records.
type describeJSON struct {
	Topics []describeTopicJSON `json:"topics"`
}

type describeTopicJSON struct {
	Topic  string `json:"topic"`
	Dir    string `json:"dir"`
	Layout string `json:"layout,omitempty"` // simpleLayout, segmentFileLayout
	// Settings are the topic's stored ones, as their flags take them, by
	// the flag's name in snake case; null where unset.
	Settings   map[string]*string      `json:"settings,omitempty"`
	Partitions []describePartitionJSON `json:"partitions"`
}

type describePartitionJSON struct {
	Partition int    `json:"partition"`
	Start     uint64 `json:"start_offset"`
	Next      uint64 `json:"next_offset"`
	Full      bool   `json:"full,omitempty"` // next_offset is then the last record's: no offset follows 2^64-1
	Records   uint64 `json:"records"`
	// RecordsExact is false for a count from the indexes (see
	// recordsCell), and where nothing could be counted.
	RecordsExact bool  `json:"records_exact"`
	Segments     int   `json:"segments"`
	Bytes        int64 `json:"bytes"`
	timesJSON
	WriterPid *int   `json:"writer_pid"`
	Missing   bool   `json:"missing,omitempty"`
	Error     string `json:"error,omitempty"`
	// Kafka is what the Kafka log directory's checkpoints say of the
	// partition; only in Apache Kafka's layout.
	Kafka *kafkaCheckpointsJSON `json:"kafka,omitempty"`
}

func writeDescribeJSON(w io.Writer, topics []*topicInfo) error {
	doc := describeJSON{Topics: []describeTopicJSON{}}
	var times timeFormatter
	for _, t := range topics {
		tj := describeTopicJSON{Topic: t.name, Dir: t.dir, Layout: t.layout, Partitions: []describePartitionJSON{}}
		if t.settings != nil {
			tj.Settings = map[string]*string{}
			for _, s := range topicSettings {
				tj.Settings[strings.ReplaceAll(s.name, "-", "_")] = nullIfEmpty(s.show(*t.settings))
			}
		}
		for _, p := range t.parts {
			if p.missing {
				// One object per partition, as scripts count them.
				for _, n := range p.numbers() {
					tj.Partitions = append(tj.Partitions, describePartitionJSON{Partition: n, Missing: true})
				}
				continue
			}
			pj := describePartitionJSON{Partition: p.partition}
			if p.err != nil {
				pj.Error = errorLine(p.err)
			}
			if p.err == nil {
				st := p.stats
				pj.Start, pj.Next, pj.Full, pj.Records, pj.Segments, pj.Bytes = st.Start, st.Next, st.Full, st.Records, st.Segments, st.Bytes
				pj.RecordsExact = !st.RecordsFromIndex
				if t.layout != simpleLayout {
					pj.timesJSON = newTimesJSON(&times, st.Records, st.Oldest, st.Newest)
				}
				if st.WriterPid != 0 {
					pid := st.WriterPid
					pj.WriterPid = &pid
				}
			}
			if p.kafka != nil {
				pj.Kafka = newKafkaCheckpointsJSON(*p.kafka)
			}
			tj.Partitions = append(tj.Partitions, pj)
		}
		doc.Topics = append(doc.Topics, tj)
	}
	return writeJSONDocument(w, doc)
}

// groupPartitionInfo is one committed position as describe --groups shows
// it, beside the partition's offsets now.
type groupPartitionInfo struct {
	topic     string
	partition int
	committed uint64
	updated   time.Time // of the topic's last commit; zero if unknown
	// The partition's bounds now, unless note says why there are none.
	start, next uint64
	known       bool
	note        string // "topic not found", "no partition 7", an error
}

// belowStart and pastEnd tell a committed offset retention removed, or
// one the partition does not reach (it was replaced by a shorter one).
func (gp *groupPartitionInfo) belowStart() bool { return gp.known && gp.committed < gp.start }
func (gp *groupPartitionInfo) pastEnd() bool    { return gp.known && gp.committed > gp.next }

// lag is how many offsets the group has yet to read: next − committed,
// 0 past the end.
func (gp *groupPartitionInfo) lag() uint64 {
	if gp.committed >= gp.next {
		return 0
	}
	return gp.next - gp.committed
}

// groupInfo is a group's committed positions, topic by topic, partitions
// in order.
type groupInfo struct {
	name  string
	dir   string
	parts []groupPartitionInfo
	err   error // its positions could not be read
}

// partitionBounds reads the bounds of the partitions describe --groups
// shows, once each.
type partitionBounds struct {
	store    *logstore.Store
	topics   map[string]*logstore.Topic
	errs     map[string]error
	reported map[string]bool               // topics whose error is among the problems
	bounds   map[string]groupPartitionInfo // by "topic/partition"
}

func newPartitionBounds(store *logstore.Store) *partitionBounds {
	return &partitionBounds{store: store, topics: map[string]*logstore.Topic{}, errs: map[string]error{},
		reported: map[string]bool{}, bounds: map[string]groupPartitionInfo{}}
}

// fill sets gp's bounds, or its note. A topic or partition that is gone
// is a note; an error reading one is also a problem.
func (pb *partitionBounds) fill(gp *groupPartitionInfo, probs *problems) {
	key := gp.topic + "/" + strconv.Itoa(gp.partition)
	if b, ok := pb.bounds[key]; ok {
		gp.start, gp.next, gp.known, gp.note = b.start, b.next, b.known, b.note
		return
	}
	defer func() { pb.bounds[key] = *gp }()
	t, ok := pb.topics[gp.topic]
	if !ok {
		t, pb.errs[gp.topic] = pb.store.Topic(gp.topic)
		pb.topics[gp.topic] = t
	}
	if err := pb.errs[gp.topic]; err != nil {
		if errors.Is(err, logstore.ErrTopicNotFound) {
			gp.note = "topic not found"
			return
		}
		gp.note = "error: " + errorLine(err)
		if !pb.reported[gp.topic] {
			pb.reported[gp.topic] = true
			*probs = append(*probs, err)
		}
		return
	}
	if gp.partition >= t.Partitions {
		gp.note = fmt.Sprintf("topic has partitions 0..%d only", t.Partitions-1)
		return
	}
	var err error
	for try := 0; try < 3; try++ { // a sweep may delete a segment between listing and reading
		var p *logstore.Partition
		if p, err = pb.store.OpenPartition(gp.topic, gp.partition); err == nil {
			gp.start, gp.next, err = p.Bounds()
		}
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		gp.note = "error: " + errorLine(err)
		*probs = append(*probs, err)
		return
	}
	gp.known = true
}

func runDescribeGroups(e *env, o describeOptions) error {
	store := logstore.Open(e.dataDir)
	names, err := store.Groups()
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("data directory %s does not exist (name the right one with --data-dir or SEGLOG_DATA_DIR)", e.dataDir)
	}
	if err != nil {
		return err
	}
	only := map[string]bool{}
	for _, t := range o.targets {
		only[t] = true
	}
	pb := newPartitionBounds(store)
	var probs problems
	var groups []*groupInfo
	fill := func(gp *groupPartitionInfo) { pb.fill(gp, &probs) }
	for _, g := range readGroupPositions(store, names, only, o.partition, fill, &probs) {
		// A group with nothing of the topics or partition asked for is
		// left out.
		if g.err != nil || len(g.parts) > 0 || len(only) == 0 && o.partition < 0 {
			groups = append(groups, g)
		}
	}
	if o.json {
		if err := writeGroupsJSON(e.stdout, groups); err != nil {
			return err
		}
		return probs.err()
	}
	if len(groups) == 0 {
		if len(only) > 0 || o.partition >= 0 {
			e.info("no consumer group in %s has positions there", e.dataDir)
		} else {
			e.info("no consumer groups in %s", e.dataDir)
		}
	}
	for i, g := range groups {
		if err := writeGroupTable(e.stdout, g, i > 0, e.quiet, e.wide); err != nil {
			return err
		}
	}
	return probs.err()
}

// groupPositionsTable is describe --groups' table: in 80 columns, the
// notes go under it.
var groupPositionsTable = tableLayout{
	header:  []string{"TOPIC", "PARTITION", "COMMITTED", "NEXT", "LAG", "UPDATED", "NOTE"},
	numeric: "PARTITION COMMITTED NEXT LAG",
	below:   []string{"NOTE"},
	keyCols: 2,
	drop:    []string{"NEXT"},
	shorten: []string{"TOPIC"},
}

// writeGroupTable prints a group's title line and table; after another
// table, a blank line first. quiet drops the note of a group without
// positions.
func writeGroupTable(w io.Writer, g *groupInfo, blank, quiet, wide bool) error {
	var b bytes.Buffer
	if blank {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "group %s (%s)\n", g.name, g.dir)
	if g.err != nil {
		fmt.Fprintf(&b, "error: %s\n", errorLine(g.err))
	}
	if len(g.parts) == 0 {
		if g.err == nil && !quiet {
			b.WriteString("no committed positions\n")
		}
		_, err := w.Write(b.Bytes())
		return err
	}
	var times timeFormatter
	rows := make([][]string, 0, len(g.parts))
	for _, gp := range g.parts {
		row := []string{gp.topic, strconv.Itoa(gp.partition), strconv.FormatUint(gp.committed, 10), "-", "-", "-", "-"}
		if !gp.updated.IsZero() {
			row[5] = string(times.append(nil, gp.updated.UnixNano()))
		}
		switch {
		case !gp.known:
			row[6] = gp.note
		default:
			row[3], row[4] = strconv.FormatUint(gp.next, 10), strconv.FormatUint(gp.lag(), 10)
			switch {
			case gp.belowStart():
				row[6] = fmt.Sprintf("below the start %d: removed by retention unread", gp.start)
			case gp.pastEnd():
				row[6] = "past the end (partition replaced?)"
			}
		}
		rows = append(rows, row)
	}
	if err := groupPositionsTable.render(&b, rows, wide); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// groupsJSON is describe --groups --json's document. Offsets the data
// directory cannot tell (a topic gone) are null, with a note.
type groupsJSON struct {
	Groups []groupJSON `json:"groups"`
}

type groupJSON struct {
	Group      string               `json:"group"`
	Dir        string               `json:"dir"`
	Partitions []groupPartitionJSON `json:"partitions"`
	Error      string               `json:"error,omitempty"`
}

type groupPartitionJSON struct {
	Topic      string  `json:"topic"`
	Partition  int     `json:"partition"`
	Committed  uint64  `json:"committed_offset"`
	Start      *uint64 `json:"start_offset"`
	Next       *uint64 `json:"next_offset"`
	Lag        *uint64 `json:"lag"`
	BelowStart bool    `json:"below_start"` // retention removed records the group had not read
	PastEnd    bool    `json:"past_end"`
	Updated    *string `json:"updated"`
	UpdatedNS  *int64  `json:"updated_ns"`
	Note       string  `json:"note,omitempty"`
}

func writeGroupsJSON(w io.Writer, groups []*groupInfo) error {
	doc := groupsJSON{Groups: []groupJSON{}}
	var times timeFormatter
	for _, g := range groups {
		gj := groupJSON{Group: g.name, Dir: g.dir, Partitions: []groupPartitionJSON{}}
		if g.err != nil {
			gj.Error = errorLine(g.err)
		}
		for _, gp := range g.parts {
			pj := groupPartitionJSON{Topic: gp.topic, Partition: gp.partition, Committed: gp.committed, Note: gp.note,
				BelowStart: gp.belowStart(), PastEnd: gp.pastEnd()}
			if gp.known {
				start, next, lag := gp.start, gp.next, gp.lag()
				pj.Start, pj.Next, pj.Lag = &start, &next, &lag
			}
			if !gp.updated.IsZero() {
				ns := gp.updated.UnixNano()
				s := string(times.append(nil, ns))
				pj.Updated, pj.UpdatedNS = &s, &ns
			}
			gj.Partitions = append(gj.Partitions, pj)
		}
		doc.Groups = append(doc.Groups, gj)
	}
	return writeJSONDocument(w, doc)
}
