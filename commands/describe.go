package commands

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

type describeOptions struct {
	targets   []string // topics, or directories when they hold a '/'; none: every topic
	partition int      // -1: all
	json      bool
}

func describeCommand() *cli.Command {
	return &cli.Command{
		Name:      "describe",
		Usage:     "print each partition's offsets, record count, size and time range",
		ArgsUsage: "[TOPIC|PARTITION-DIR...]",
		Description: "Only reads: prints a table per topic with each partition's start and next offset,\n" +
			"records, segments, size, oldest and newest timestamp and the pid of the process\n" +
			"holding its writer lock. No TOPIC: every topic. A TOPIC containing '/' names a\n" +
			"partition directory directly (a copy, a backup). A partition directory missing\n" +
			"below the highest is shown as missing and makes describe exit 1.\n\n" +
			"Examples:\n" +
			"  seglog describe\n" +
			"  seglog describe orders --partition 2\n" +
			"  seglog describe /backup/data/orders/0 --json",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "describe only partition `P`", DefaultText: "all"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document instead of tables"},
		},
		Action: func(c *cli.Context) error {
			o := describeOptions{targets: c.Args().Slice(), partition: c.Int("partition"), json: c.Bool("json")}
			if c.IsSet("partition") && o.partition < 0 {
				return usagef("--partition must be 0 or more, not %d", o.partition)
			}
			if err := checkTargetNames(o.targets, true); err != nil {
				return err
			}
			return runDescribe(envFrom(c), o)
		},
	}
}

// partitionInfo is one partition as describe and topics show it: its
// stats, or why there are none.
type partitionInfo struct {
	partition int
	stats     logstore.PartitionStats
	missing   bool  // no directory, though a higher partition has one
	err       error // stats could not be read
}

// topicInfo is a topic's partitions, in order.
type topicInfo struct {
	name       string
	dir        string
	partitions int // highest partition directory + 1
	parts      []partitionInfo
}

// missing lists the partitions without a directory.
func (t *topicInfo) missing() []int {
	var ps []int
	for _, p := range t.parts {
		if p.missing {
			ps = append(ps, p.partition)
		}
	}
	return ps
}

// problems collects what went wrong with some of the topics or partitions
// while the rest are still described. It ends the command with exit
// status 1 and a single error line naming each problem.
type problems []error

func (ps problems) Error() string {
	const shown = 5
	var b strings.Builder
	for i, err := range ps[:min(len(ps), shown)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	if len(ps) > shown {
		fmt.Fprintf(&b, "; and %d more", len(ps)-shown)
	}
	return b.String()
}

func (ps problems) Unwrap() []error { return ps }

// err returns nil when nothing went wrong, else the problems.
func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// gatherTarget reads the stats of the partitions a describe argument
// covers (see resolve). A topic that cannot be read at all is an error;
// partitions missing or unreadable are recorded in the result and added
// to probs.
func gatherTarget(e *env, arg string, only int, probs *problems) (*topicInfo, error) {
	ct, err := resolve(e, arg, only, probs)
	if err != nil {
		return nil, err
	}
	t := &topicInfo{name: ct.name, dir: ct.dir, partitions: ct.partitions}
	for _, c := range ct.parts {
		pi := partitionInfo{partition: c.number, missing: c.missing}
		if c.missing {
			*probs = append(*probs, missingError(ct, c))
		} else if pi.stats, pi.err = partitionStats(c.dir, c.name); pi.err != nil {
			*probs = append(*probs, pi.err)
		}
		t.parts = append(t.parts, pi)
	}
	return t, nil
}

// partitionStats opens a partition directory and reads its stats. A
// segment deleted between listing and reading (a retention sweep) is no
// damage: the directory is listed again.
func partitionStats(dir, name string) (logstore.PartitionStats, error) {
	for try := 0; ; try++ {
		p, err := logstore.OpenPartitionDir(dir, name)
		if err != nil {
			return logstore.PartitionStats{}, err
		}
		st, err := p.Stats()
		if err == nil || try == 2 || !errors.Is(err, fs.ErrNotExist) {
			return st, err
		}
	}
}

func runDescribe(e *env, o describeOptions) error {
	targets, err := topicTargets(e, o.targets)
	if err != nil {
		return err
	}
	var probs problems
	var topics []*topicInfo
	tables := 0
	for _, arg := range targets {
		t, err := gatherTarget(e, arg, o.partition, &probs)
		var ue *usageError
		if errors.As(err, &ue) {
			return err
		}
		if err != nil {
			probs = append(probs, err)
			continue
		}
		if o.json {
			topics = append(topics, t)
			continue
		}
		// Tables go out topic by topic: a data directory of many topics
		// shows the first at once.
		if err := writeDescribeTable(e.stdout, t, tables > 0); err != nil {
			return err
		}
		tables++
	}
	if o.json && (len(topics) > 0 || len(probs) == 0) {
		if err := writeDescribeJSON(e.stdout, topics); err != nil {
			return err
		}
	}
	return probs.err()
}

// Columns of describe's table, and which of them hold numbers.
var describeHeader = []string{"PARTITION", "START", "NEXT", "RECORDS", "SEGMENTS", "SIZE", "OLDEST", "NEWEST", "WRITER"}

const describeNumeric = "PARTITION START NEXT RECORDS SEGMENTS SIZE WRITER"

// writeDescribeTable prints a topic's title line and table; after another
// table, a blank line first.
func writeDescribeTable(w io.Writer, t *topicInfo, blank bool) error {
	var b bytes.Buffer
	if blank {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "topic %s (%s)\n", t.name, t.dir)
	var times timeFormatter
	rows := make([][]string, 0, len(t.parts))
	for _, p := range t.parts {
		row := []string{strconv.Itoa(p.partition), "", "-", "-", "-", "-", "-", "-", "-"}
		switch {
		case p.missing:
			row[1] = "missing"
		case p.err != nil:
			row[1] = "error"
		default:
			st := p.stats
			oldest, newest := timeCells(&times, st)
			row = []string{strconv.Itoa(p.partition),
				strconv.FormatUint(st.Start, 10), strconv.FormatUint(st.Next, 10),
				strconv.FormatUint(st.Records, 10), strconv.Itoa(st.Segments),
				humanSize(st.Bytes), oldest, newest, pidCell(st.WriterPid)}
		}
		rows = append(rows, row)
	}
	if err := renderTable(&b, describeHeader, describeNumeric, rows); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

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

// renderTable renders a table in plain ASCII (logs, pipes and any terminal
// show it the same) with the columns named in numeric right-aligned.
func renderTable(w io.Writer, header []string, numeric string, rows [][]string) error {
	align := make([]tw.Align, len(header))
	for i, h := range header {
		align[i] = tw.AlignLeft
		if strings.Contains(" "+numeric+" ", " "+h+" ") {
			align[i] = tw.AlignRight
		}
	}
	table := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Alignment:  tw.CellAlignment{PerColumn: align},
				Formatting: tw.CellFormatting{AutoFormat: tw.Off},
			},
			Row: tw.CellConfig{
				Alignment:  tw.CellAlignment{PerColumn: align},
				Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
			},
		}))
	table.Header(header)
	if err := table.Bulk(rows); err != nil {
		return err
	}
	return table.Render()
}

// humanSize prints a byte count in binary units, one decimal: "1.2 GiB".
func humanSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v := float64(n)
	unit := ""
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"} {
		v /= 1024
		unit = u
		if v < 1023.95 { // would print as 1024.0
			break
		}
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + unit
}

// describeJSON is describe's --json document. Numbers are exact; times
// are null when a partition holds no records.
type describeJSON struct {
	Topics []describeTopicJSON `json:"topics"`
}

type describeTopicJSON struct {
	Topic      string                  `json:"topic"`
	Dir        string                  `json:"dir"`
	Partitions []describePartitionJSON `json:"partitions"`
}

type describePartitionJSON struct {
	Partition int    `json:"partition"`
	Start     uint64 `json:"start_offset"`
	Next      uint64 `json:"next_offset"`
	Records   uint64 `json:"records"`
	Segments  int    `json:"segments"`
	Bytes     int64  `json:"bytes"`
	timesJSON
	WriterPid *int   `json:"writer_pid"`
	Missing   bool   `json:"missing,omitempty"`
	Error     string `json:"error,omitempty"`
}

// timesJSON is a time range as the JSON outputs give it: RFC 3339 with
// nanoseconds, and the Unix nanoseconds, each null with no records.
type timesJSON struct {
	Oldest   *string `json:"oldest_timestamp"`
	OldestNS *int64  `json:"oldest_timestamp_ns"`
	Newest   *string `json:"newest_timestamp"`
	NewestNS *int64  `json:"newest_timestamp_ns"`
}

func newTimesJSON(f *timeFormatter, records uint64, oldest, newest int64) timesJSON {
	if records == 0 {
		return timesJSON{}
	}
	o, n := string(f.append(nil, oldest)), string(f.append(nil, newest))
	return timesJSON{Oldest: &o, OldestNS: &oldest, Newest: &n, NewestNS: &newest}
}

func writeDescribeJSON(w io.Writer, topics []*topicInfo) error {
	doc := describeJSON{Topics: []describeTopicJSON{}}
	var times timeFormatter
	for _, t := range topics {
		tj := describeTopicJSON{Topic: t.name, Dir: t.dir, Partitions: []describePartitionJSON{}}
		for _, p := range t.parts {
			pj := describePartitionJSON{Partition: p.partition, Missing: p.missing}
			if p.err != nil {
				pj.Error = errorLine(p.err)
			}
			if !p.missing && p.err == nil {
				st := p.stats
				pj.Start, pj.Next, pj.Records, pj.Segments, pj.Bytes = st.Start, st.Next, st.Records, st.Segments, st.Bytes
				pj.timesJSON = newTimesJSON(&times, st.Records, st.Oldest, st.Newest)
				if st.WriterPid != 0 {
					pid := st.WriterPid
					pj.WriterPid = &pid
				}
			}
			tj.Partitions = append(tj.Partitions, pj)
		}
		doc.Topics = append(doc.Topics, tj)
	}
	return writeJSONDocument(w, doc)
}

// writeJSONDocument prints v as indented JSON and a newline.
func writeJSONDocument(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
