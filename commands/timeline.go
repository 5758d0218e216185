package commands

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/seglog/seglog/logstore"
)

// Sparkline levels, lowest first; a bucket without records is a space.
var (
	timelineBlocks = []string{"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}
	timelineASCII  = []string{".", ":", "-", "=", "+", "*", "#", "%", "@"}
)

const (
	defaultTimelineWidth = 80 // columns when stdout is no terminal and --width is not given
	minTimelineColumns   = 10 // below this a chart says nothing: overflow the width instead
)

// timelinePart is one partition's row of a timeline.
type timelinePart struct {
	covered
	stats  logstore.PartitionStats
	counts []uint64 // nil when missing, on error, or when the topic has no records
	err    error
}

// timelineTopic is a topic's partitions over its time range: from the
// oldest first record to the newest last one of its partitions.
type timelineTopic struct {
	name, dir string
	from, to  int64
	records   bool // any partition holds records: from and to mean something
	parts     []timelinePart
	columns   int // time buckets a chart has
}

// runTimeline is describe --timeline: per partition, records per time
// bucket, counted from the time indexes.
func runTimeline(e *env, o describeOptions) error {
	targets, err := topicTargets(e, o.targets)
	if err != nil {
		return err
	}
	ascii := o.ascii || !utf8Locale(os.Getenv)
	var probs problems
	return topicReport(targets, o.json, &probs,
		func(arg string) (*timelineTopic, error) {
			ct, err := resolve(e, arg, o.partition, &probs)
			if err != nil {
				return nil, err
			}
			t := gatherTimeline(e, ct, &probs)
			columns := o.width
			if !o.json {
				columns = timelineColumns(e.stdout, o.width, t)
			} else if columns == 0 {
				columns = defaultTimelineWidth
			}
			t.columns = columns
			t.count(columns, &probs)
			return t, nil
		},
		func(t *timelineTopic, first bool) error { return writeTimeline(e.stdout, t, t.columns, ascii, !first) },
		func(topics []*timelineTopic) error { return writeTimelineJSON(e.stdout, topics) })
}

// gatherTimeline reads the stats of a topic's partitions and from them its
// time range.
func gatherTimeline(e *env, ct *coveredTopic, probs *problems) *timelineTopic {
	t := &timelineTopic{name: ct.name, dir: ct.dir}
	for _, c := range ct.parts {
		tp := timelinePart{covered: c}
		if c.missing {
			*probs = append(*probs, ct.missingError(c))
		} else if tp.stats, tp.err = partitionStats(e, c); tp.err != nil {
			*probs = append(*probs, tp.err)
		} else if tp.stats.Records > 0 {
			if !t.records {
				t.from, t.to = tp.stats.Oldest, tp.stats.Newest
			}
			t.records = true
			t.from, t.to = min(t.from, tp.stats.Oldest), max(t.to, tp.stats.Newest)
		}
		t.parts = append(t.parts, tp)
	}
	t.to = max(t.to, t.from) // a clock that stepped back
	return t
}

// count fills in each readable partition's counts over columns buckets.
func (t *timelineTopic) count(columns int, probs *problems) {
	if !t.records {
		return
	}
	for i := range t.parts {
		tp := &t.parts[i]
		if tp.missing || tp.err != nil {
			continue
		}
		p, err := tp.open()
		if err == nil {
			tp.counts, err = p.Timeline(t.from, t.to, columns)
			p.Close()
		}
		if err != nil {
			tp.err = err
			*probs = append(*probs, err)
		}
	}
}

// timelineColumns is how many buckets fit beside the labels: in --width
// columns if given, else the terminal's width, else 80.
func timelineColumns(w io.Writer, width int, t *timelineTopic) int {
	if width == 0 {
		width = defaultTimelineWidth
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
				width = cols
			}
		}
	}
	return max(width-labelWidth(t)-1, minTimelineColumns)
}

func labelWidth(t *timelineTopic) int {
	n := 0
	for _, tp := range t.parts {
		n = max(n, utf8.RuneCountInString(tp.name))
	}
	return n
}

// localeEnv are the locale variables, in POSIX's order of precedence.
var localeEnv = []string{"LC_ALL", "LC_CTYPE", "LANG"}

// utf8Locale tells from the locale variables whether the terminal takes
// UTF-8.
func utf8Locale(getenv func(string) string) bool {
	for _, k := range localeEnv {
		if v := strings.ToLower(getenv(k)); v != "" {
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}

// writeTimeline prints a topic's title, a sparkline row per partition, all
// scaled to the fullest bucket of the topic, and the time axis under them;
// after another topic, a blank line first.
func writeTimeline(w io.Writer, t *timelineTopic, columns int, ascii, blank bool) error {
	levels := timelineBlocks
	if ascii {
		levels = timelineASCII
	}
	var b bytes.Buffer
	if blank {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "topic %s (%s)\n", t.name, t.dir)
	var peak uint64
	for _, tp := range t.parts {
		for _, n := range tp.counts {
			peak = max(peak, n)
		}
	}
	lw := labelWidth(t)
	for _, tp := range t.parts {
		fmt.Fprintf(&b, "%-*s ", lw, tp.name)
		switch {
		case tp.missing:
			b.WriteString("missing")
		case tp.err != nil:
			b.WriteString("error")
		case !t.records:
			b.WriteString("no records")
		default:
			for _, n := range tp.counts {
				b.WriteString(sparkCell(n, peak, levels))
			}
		}
		b.WriteString("\n")
	}
	if t.records {
		var times timeFormatter
		from, to := string(times.append(nil, t.from)), string(times.append(nil, t.to))
		pad := strings.Repeat(" ", lw+1)
		if gap := columns - len(from) - len(to); gap >= 1 {
			fmt.Fprintf(&b, "%s%s%s%s\n", pad, from, strings.Repeat(" ", gap), to)
		} else {
			fmt.Fprintf(&b, "%s%s to %s\n", pad, from, to)
		}
		bucket := logstore.BucketStart(t.from, t.to, columns, 1) - t.from
		fmt.Fprintf(&b, "%seach column %s, %s = %d records\n", pad, roundDuration(time.Duration(bucket)), levels[len(levels)-1], peak)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// sparkCell is the level of n records against the fullest bucket's peak:
// any record at all shows as the lowest level, never as blank.
func sparkCell(n, peak uint64, levels []string) string {
	if n == 0 || peak == 0 {
		return " "
	}
	if peak > 1<<56 { // keep n·levels inside 64 bits
		n, peak = max(n>>8, 1), peak>>8
	}
	l := uint64(len(levels))
	i := (n*l + peak - 1) / peak // ceil(n·l/peak): 1..l
	return levels[min(max(i, 1), l)-1]
}

// roundDuration drops digits of a bucket's length nobody reads: buckets
// differ by a nanosecond anyway.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Microsecond)
	}
	return d
}

// timelineJSON is describe --timeline --json: per topic, the buckets'
// start times and, per partition, its records in each.
type timelineJSON struct {
	Topics []timelineTopicJSON `json:"topics"`
}

type timelineTopicJSON struct {
	Topic string `json:"topic"`
	Dir   string `json:"dir"`
	Width int    `json:"width"` // buckets; 0 when the topic holds no records
	// The time range: the oldest first record and newest last record of
	// the partitions; null with no records.
	From       *string                 `json:"from"`
	FromNS     *int64                  `json:"from_ns"`
	To         *string                 `json:"to"`
	ToNS       *int64                  `json:"to_ns"`
	Buckets    []timelineBucketJSON    `json:"buckets"`
	Partitions []timelinePartitionJSON `json:"partitions"`
}

type timelineBucketJSON struct {
	Start   string `json:"start"`
	StartNS int64  `json:"start_ns"`
}

type timelinePartitionJSON struct {
	Partition int    `json:"partition"`
	Records   uint64 `json:"records"`
	// RecordsExact: as describe --json's (see recordsCell).
	RecordsExact bool     `json:"records_exact"`
	Counts       []uint64 `json:"counts"` // null when missing or unreadable
	Missing      bool     `json:"missing,omitempty"`
	Error        string   `json:"error,omitempty"`
}

func writeTimelineJSON(w io.Writer, topics []*timelineTopic) error {
	doc := timelineJSON{Topics: []timelineTopicJSON{}}
	var times timeFormatter
	for _, t := range topics {
		tj := timelineTopicJSON{Topic: t.name, Dir: t.dir, Buckets: []timelineBucketJSON{}, Partitions: []timelinePartitionJSON{}}
		columns := 0
		for _, tp := range t.parts {
			columns = max(columns, len(tp.counts))
		}
		if t.records {
			from, to := string(times.append(nil, t.from)), string(times.append(nil, t.to))
			tj.From, tj.FromNS, tj.To, tj.ToNS = &from, &t.from, &to, &t.to
		}
		if t.records && columns > 0 {
			tj.Width = columns
			for i := range columns {
				ns := logstore.BucketStart(t.from, t.to, columns, i)
				tj.Buckets = append(tj.Buckets, timelineBucketJSON{Start: string(times.append(nil, ns)), StartNS: ns})
			}
		}
		for _, tp := range t.parts {
			if tp.missing {
				// One object per partition, as scripts count them.
				for _, n := range rangeNumbers(tp.number, tp.last) {
					tj.Partitions = append(tj.Partitions, timelinePartitionJSON{Partition: n, Missing: true})
				}
				continue
			}
			pj := timelinePartitionJSON{Partition: tp.number, Records: tp.stats.Records, Counts: tp.counts}
			if tp.err != nil {
				pj.Error = errorLine(tp.err)
			} else {
				pj.RecordsExact = !tp.stats.RecordsFromIndex
				if pj.Counts == nil {
					pj.Counts = []uint64{}
				}
			}
			tj.Partitions = append(tj.Partitions, pj)
		}
		doc.Topics = append(doc.Topics, tj)
	}
	return writeJSONDocument(w, doc)
}

// checkTimelineFlags refuses --width and --ascii without --timeline, and
// --timeline with --groups.
func checkTimelineFlags(c *cli.Context, o describeOptions) error {
	switch {
	case o.timeline && o.groups:
		return usagef("--timeline and --groups do not go together")
	case !o.timeline && (c.IsSet("width") || c.IsSet("ascii")):
		return usagef("--width and --ascii go with --timeline")
	case c.IsSet("width") && o.width < 1:
		return usagef("--width must be 1 or more, not %d", o.width)
	}
	return nil
}
