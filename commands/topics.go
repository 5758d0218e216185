package commands

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

type topicsOptions struct {
	json bool
	wide bool // the table whole, however wide
}

func topicsCommand() *cli.Command {
	return &cli.Command{
		Name:  "topics",
		Usage: "list the topics with their partitions, records, size and time range",
		Description: "Only reads: prints one row per topic of the data directory: partition count,\n" +
			"records, segments and size summed over its partitions, oldest and newest\n" +
			"timestamp. RECORDS is counted as describe counts it: marked * when counted from\n" +
			"the indexes, which may include records lost to damage (verify-crc reads them).\n" +
			"A partition directory missing below the highest is counted and named,\n" +
			"and makes topics exit 1. A data directory without topics lists nothing, with a\n" +
			"warning. 'seglog describe TOPIC' shows the partitions.\n\n" +
			"Examples:\n" +
			"  seglog topics\n" +
			"  seglog -d ./backup/data topics\n" +
			"  seglog topics --json | jq -r '.topics[].topic'",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document instead of a table"},
			wideFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("topics takes no arguments, got %s (see 'seglog describe TOPIC')", strings.Join(c.Args().Slice(), " "))
			}
			return runTopics(envFrom(c), topicsOptions{json: c.Bool("json"), wide: c.Bool("wide")})
		},
	}
}

// topicSummary is a topic's partitions added up.
type topicSummary struct {
	name           string
	partitions     int
	missing        []int
	records        uint64
	fromIndex      bool // some partition's records were counted from its indexes
	segments       int
	bytes          int64
	oldest, newest int64 // when records > 0
}

func summarizeTopic(t *topicInfo) topicSummary {
	s := topicSummary{name: t.name, partitions: t.partitions, missing: t.missing()}
	for _, p := range t.parts {
		if p.missing || p.err != nil {
			continue
		}
		st := p.stats
		s.segments += st.Segments
		s.bytes += st.Bytes
		if st.Records == 0 {
			continue
		}
		if s.records == 0 || st.Oldest < s.oldest {
			s.oldest = st.Oldest
		}
		if s.records == 0 || st.Newest > s.newest {
			s.newest = st.Newest
		}
		s.records += st.Records
		s.fromIndex = s.fromIndex || st.RecordsFromIndex
	}
	return s
}

func runTopics(e *env, o topicsOptions) error {
	names, err := topicTargets(e, nil)
	if err != nil {
		return err
	}
	var probs problems
	var sums []topicSummary
	for _, name := range names {
		t, err := gatherTarget(e, name, -1, &probs)
		if err != nil {
			probs = append(probs, err) // e.g. deleted since it was listed
			continue
		}
		sums = append(sums, summarizeTopic(t))
	}
	if o.json {
		err = writeTopicsJSON(e.stdout, sums)
	} else if len(sums) > 0 {
		err = writeTopicsTable(e.stdout, sums, o.wide)
	}
	if err != nil {
		return err
	}
	return probs.err()
}

// topicsTable is topics' table: in 80 columns, the segments and oldest
// timestamp go first, then long names are cut.
var topicsTable = tableLayout{
	header:  []string{"TOPIC", "PARTITIONS", "RECORDS", "SEGMENTS", "SIZE", "OLDEST", "NEWEST"},
	numeric: "PARTITIONS RECORDS SEGMENTS SIZE",
	drop:    []string{"SEGMENTS", "OLDEST"},
	shorten: []string{"TOPIC"},
}

func writeTopicsTable(w io.Writer, sums []topicSummary, wide bool) error {
	var times timeFormatter
	fromIndex := false
	rows := make([][]string, 0, len(sums))
	for _, s := range sums {
		fromIndex = fromIndex || s.fromIndex
		parts := strconv.Itoa(s.partitions)
		if len(s.missing) > 0 {
			parts += fmt.Sprintf(" (%d missing)", len(s.missing))
		}
		oldest, newest := "-", "-"
		if s.records > 0 {
			oldest, newest = string(times.append(nil, s.oldest)), string(times.append(nil, s.newest))
		}
		rows = append(rows, []string{s.name, parts, recordsCell(s.records, s.fromIndex), strconv.Itoa(s.segments),
			humanSize(s.bytes), oldest, newest})
	}
	var b strings.Builder
	if err := topicsTable.render(&b, rows, wide); err != nil {
		return err
	}
	if fromIndex {
		b.WriteString(recordsFootnote)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type topicsJSON struct {
	Topics []topicJSON `json:"topics"`
}

type topicJSON struct {
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
	Missing    []int  `json:"missing_partitions,omitempty"`
	Records    uint64 `json:"records"`
	// RecordsExact is false when some partition's records were counted
	// from its indexes (see recordsCell).
	RecordsExact bool  `json:"records_exact"`
	Segments     int   `json:"segments"`
	Bytes        int64 `json:"bytes"`
	timesJSON
}

func writeTopicsJSON(w io.Writer, sums []topicSummary) error {
	doc := topicsJSON{Topics: []topicJSON{}}
	var times timeFormatter
	for _, s := range sums {
		doc.Topics = append(doc.Topics, topicJSON{Topic: s.name, Partitions: s.partitions, Missing: s.missing,
			Records: s.records, RecordsExact: !s.fromIndex, Segments: s.segments, Bytes: s.bytes,
			timesJSON: newTimesJSON(&times, s.records, s.oldest, s.newest)})
	}
	return writeJSONDocument(w, doc)
}
