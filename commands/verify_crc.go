package commands

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

type verifyCRCOptions struct {
	targets   []string // topics, or directories when they hold a '/'; none: every topic
	partition int      // -1: all
	jobs      int
	json      bool
	wide      bool // the summary table whole, however wide
}

func verifyCRCCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify-crc",
		Usage:     "check every record, segment boundary and index of partitions",
		ArgsUsage: "[TOPIC|PARTITION-DIR|SEGMENT.log...]",
		Description: "Only reads: opens every file read-only, changes nothing and takes no lock, so it\n" +
			"runs beside writers, readers and sweeps. Checks every record of every segment from\n" +
			"its first byte (header, keylen <= size, CRC, offsets following on from the segment's\n" +
			"base), overlapping segments, offset gaps between segments (a gap recorded in the\n" +
			"partition's .gaps.json is listed as known), the active segment's tail (incomplete\n" +
			"is a note while a writer holds the partition, a problem otherwise) and each .index\n" +
			"and .timeindex entry against the records. No TOPIC: every topic; a data directory\n" +
			"without topics is nothing checked (exit status 1). A TOPIC containing '/' names a\n" +
			"partition (or topic) directory directly, a lone segment file (a .log, checked as\n" +
			"the active segment of a partition of its own: its tail may be incomplete), or a log\n" +
			"in the simple store/index layout: it has no checksums, so its framing, segments\n" +
			"and index entries are checked (zero padding and entries past the store's end, what\n" +
			"a crash leaves, are notes); a directory holding none of them is an error. Each\n" +
			"break in the chain of records is one finding, and the check goes on where valid\n" +
			"data resumes, as read --skip-corrupt does: the valid records after it count.\n\n" +
			"Prints one line per finding: 'problem', 'note' or 'known', the file, the byte\n" +
			"position and offset concerned, and why; then a table per partition and 'N problems\n" +
			"found' or, only when everything asked for was checked, 'no problems found'. What\n" +
			"could not be checked (a topic not found, an I/O error) is named on that line as\n" +
			"not checked or checked in part. With --quiet, no table. Exit status 3 when a\n" +
			"problem was found, 1 when the check could not finish, even with problems.\n" +
			"A missing or short index, entries past the log's end and timestamps going\n" +
			"backwards are notes: 'seglog recover' rebuilds indexes.\n\n" +
			"--json prints one JSON object per line: {\"type\":\"finding\", \"severity\", \"kind\",\n" +
			"\"partition\", \"path\", \"pos\", \"offset\", \"reason\"} for each finding (pos and offset\n" +
			"null when they do not apply), then {\"type\":\"summary\", \"partitions\":[{\"partition\",\n" +
			"\"dir\", \"segments\", \"records\", \"bytes\", \"problems\", \"notes\", \"known\",\n" +
			"\"writer_pid\", \"complete\", \"missing\"}], \"problems\", \"notes\", \"known\",\n" +
			"\"complete\", \"not_checked\" (when something was not)}. Problems: corrupt-record,\n" +
			"overlap, misnamed-segment, empty-segment-below-floor, index-mismatch,\n" +
			"index-no-record, index-order, not-regular-file (an index that is a symbolic\n" +
			"link, a directory...),\n" +
			"missing-partition, gaps-file; incomplete-tail (a note while a writer holds the\n" +
			"partition); gap (known when .gaps.json records it). Notes: index-stale,\n" +
			"index-missing, index-short, index-partial-entry, timestamp-backwards, key-routing\n" +
			"(keys not where FNV-1a routing puts them), segment-gone, no-segments.\n\n" +
			"Apache Kafka's own log directories are read the same way, never written: a broker's\n" +
			"log directory given with -d (topics by name), or a TOPIC-N partition directory or a\n" +
			"segment .log of Kafka's by path (told from seglog's by their contents).\n\n" +
			"Examples:\n" +
			"  seglog verify-crc\n" +
			"  seglog verify-crc orders --partition 2 --jobs 1\n" +
			"  seglog verify-crc ./backup/data/orders/0\n" +
			"  seglog verify-crc ./rescue/00000000000000000000.log\n" +
			"  seglog verify-crc orders --json | jq -c 'select(.severity == \"problem\")'",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "check only partition `P`", DefaultText: "all"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "check `N` segments (or pieces of large ones) at once", DefaultText: "one per CPU"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per finding, then a summary object"},
			wideFlag(),
		},
		Action: func(c *cli.Context) error {
			o := verifyCRCOptions{targets: c.Args().Slice(), partition: c.Int("partition"), jobs: c.Int("jobs"), json: c.Bool("json"), wide: c.Bool("wide")}
			if c.IsSet("partition") && o.partition < 0 {
				return usagef("--partition must be 0 or more, not %d", o.partition)
			}
			if o.jobs < 1 {
				return usagef("--jobs must be 1 or more, not %d", o.jobs)
			}
			if err := checkTargetNames(o.targets, true); err != nil {
				return err
			}
			return runVerifyCRC(envFrom(c), o)
		},
	}
}

// verifyPart is a partition verify-crc covers: to be checked, or a run
// of missing ones.
type verifyPart struct {
	name    string
	dir     string
	missing bool
	run     logstore.PartitionRange // of a missing run
	target  logstore.VerifyTarget
	report  logstore.VerifyReport
}

// verifyRun is what could not be covered, besides the parts checked.
type verifyRun struct {
	probs     problems // exit 1
	unchecked []string // the arguments and partitions not checked at all
}

// verifyGather lists the partitions an argument covers (see resolve).
// Missing partitions are listed as such; what cannot be opened goes to
// run.
func verifyGather(e *env, arg string, only int, run *verifyRun) ([]verifyPart, error) {
	ct, err := resolveLogs(e, arg, only, &run.probs)
	if err == nil && ct.layout == logstore.LayoutSimple {
		err = simplePartition(only, ct.dir)
	}
	if err != nil {
		return nil, err
	}
	var parts []verifyPart
	for _, c := range ct.parts {
		vp := verifyPart{name: c.name, dir: c.dir, missing: c.missing, run: logstore.PartitionRange{First: c.number, Last: c.last}}
		if !c.missing {
			l, err := c.openLog()
			if err != nil {
				run.probs = append(run.probs, err)
				run.unchecked = append(run.unchecked, c.name)
				continue
			}
			// Count is 0 for a partition directory given by path: the
			// topic's partition count is unknown, so no key-routing hint.
			vp.target = logstore.VerifyTarget{Log: l, Number: c.number, Count: c.count}
		}
		parts = append(parts, vp)
	}
	return parts, nil
}

// missingFinding is the problem a run of missing partitions is.
func missingFinding(p verifyPart) logstore.Finding {
	// docs/format.md §1: never a silently different partition count.
	reason := "partition directory missing, though the topic has higher ones: key routing would change"
	if p.run.Len() > 1 {
		reason = fmt.Sprintf("partition directories %s missing, though the topic has higher ones: key routing would change", p.run)
	}
	return logstore.Finding{Severity: logstore.SeverityProblem, Kind: logstore.FindingMissingPartition, Partition: p.name,
		Path: p.dir, Pos: -1, Offset: -1, Reason: reason}
}

func runVerifyCRC(e *env, o verifyCRCOptions) error {
	args := o.targets
	if len(args) == 0 {
		var err error
		if args, err = dataDirTopics(e); err != nil {
			return err
		}
		if len(args) == 0 {
			return nothingToDo(e, "check", 0)
		}
	}
	var run verifyRun
	var parts []verifyPart
	for _, arg := range args {
		before, named := len(run.probs), len(run.unchecked)
		ps, err := verifyGather(e, arg, o.partition, &run)
		var ue *usageError
		if errors.As(err, &ue) {
			return err
		}
		if err != nil {
			run.probs = append(run.probs, err)
		}
		if err != nil || len(ps) == 0 && len(run.probs) > before && len(run.unchecked) == named {
			// A topic without the partitions asked for goes to probs
			// whole, without parts; one whose partitions could not be
			// opened is named by them.
			run.unchecked = append(run.unchecked, arg)
		}
		parts = append(parts, ps...)
	}

	bar := newProgressBar(e, "verify-crc")
	out := &verifyPrinter{w: e.stdout, json: o.json, wide: o.wide, bar: bar}
	var targets []logstore.VerifyTarget
	var index []int // parts[index[i]] is targets[i]
	for i, p := range parts {
		if p.missing {
			if err := out.finding(missingFinding(p)); err != nil {
				return err
			}
			continue
		}
		targets = append(targets, p.target)
		index = append(index, i)
	}
	reports, verr := logstore.Verify(targets, logstore.VerifyOptions{Jobs: o.jobs, Finding: out.finding, Progress: bar.update, Start: out.start})
	bar.finish()
	for i, r := range reports {
		parts[index[i]].report = r
	}
	if verr != nil && !out.checked(verr) {
		return verr // stdout failed: nothing more can be said there
	}
	if err := out.summary(parts, run.unchecked, verr == nil && len(run.probs) == 0, e.quiet); err != nil {
		return err
	}
	probs := run.probs
	if joined, ok := verr.(interface{ Unwrap() []error }); ok {
		probs = append(probs, joined.Unwrap()...) // one "; "-separated error line
	} else if verr != nil {
		probs = append(probs, verr)
	}
	if err := probs.err(); err != nil {
		return err
	}
	if out.problems > 0 {
		return errProblemsFound
	}
	return nil
}

// verifyPrinter writes verify-crc's findings and summary.
type verifyPrinter struct {
	w                      io.Writer
	json                   bool
	wide                   bool
	bar                    *progressBar
	problems, notes, known int
	writeErr               error // the first write to w that failed
}

// checked tells an error of the check (I/O on the data) from one of the
// output.
func (p *verifyPrinter) checked(err error) bool {
	return p.writeErr == nil || !errors.Is(err, p.writeErr)
}

// start says, before a log's findings, what its layout's check cannot
// cover.
func (p *verifyPrinter) start(l logstore.Log) error {
	limits := l.Layout().CheckLimits()
	if limits == "" {
		return nil
	}
	var line []byte
	if p.json {
		line = appendJSONValue([]byte(`{"type":"layout","partition":`), l.Name())
		line = append(line, `,"layout":`...)
		line = appendJSONValue(line, layoutName(l.Layout()))
		line = append(line, `,"checksums":`...)
		line = strconv.AppendBool(line, !l.Layout().ValuesOnly())
		line = append(line, `,"note":`...)
		line = append(appendJSONValue(line, layoutNote(l.Layout())), "}\n"...)
	} else {
		line = fmt.Appendf(nil, "%s: %s\n", l.Name(), layoutNote(l.Layout()))
	}
	p.bar.clear()
	if _, err := p.w.Write(line); err != nil {
		p.writeErr = err
		return err
	}
	return nil
}

// verifyFindingJSON is a finding as --json prints it.
type verifyFindingJSON struct {
	Type      string `json:"type"` // "finding"
	Severity  string `json:"severity"`
	Kind      string `json:"kind"`
	Partition string `json:"partition"`
	Path      string `json:"path"`
	Pos       *int64 `json:"pos"`
	Offset    *int64 `json:"offset"`
	Reason    string `json:"reason"`
}

func (p *verifyPrinter) finding(f logstore.Finding) error {
	switch f.Severity {
	case logstore.SeverityProblem:
		p.problems++
	case logstore.SeverityNote:
		p.notes++
	case logstore.SeverityKnown:
		p.known++
	}
	var b []byte
	if p.json {
		j := verifyFindingJSON{Type: "finding", Severity: f.Severity.String(), Kind: string(f.Kind), Partition: f.Partition,
			Path: f.Path, Reason: f.Reason}
		if f.Pos >= 0 {
			j.Pos = &f.Pos
		}
		if f.Offset >= 0 {
			j.Offset = &f.Offset
		}
		var err error
		if b, err = json.Marshal(j); err != nil {
			return err
		}
		b = append(b, '\n')
	} else {
		b = verifyFindingLine(f)
	}
	p.bar.clear()
	if _, err := p.w.Write(b); err != nil {
		p.writeErr = err
		return err
	}
	return nil
}

// verifyFindingLine is a finding as one line of text:
// "problem PATH byte POS offset OFFSET: REASON", without the byte or offset
// part when it does not apply.
func verifyFindingLine(f logstore.Finding) []byte {
	b := fmt.Appendf(nil, "%-7s %s", f.Severity, f.Path)
	if f.Pos >= 0 {
		b = fmt.Appendf(b, " byte %d", f.Pos)
	}
	if f.Offset >= 0 {
		b = fmt.Appendf(b, " offset %d", f.Offset)
	}
	b = append(b, ": "...)
	b = append(b, strings.ReplaceAll(f.Reason, "\n", " ")...)
	return append(b, '\n')
}

// Columns of verify-crc's table, and which of them hold numbers.
// verifyTable is verify-crc's summary: in 80 columns, long partition
// names are cut.
var verifyTable = tableLayout{
	header:  []string{"PARTITION", "SEGMENTS", "RECORDS", "BYTES", "PROBLEMS", "NOTES", "KNOWN"},
	numeric: "SEGMENTS RECORDS BYTES PROBLEMS NOTES KNOWN",
	shorten: []string{"PARTITION"},
}

type verifySummaryJSON struct {
	Type       string                       `json:"type"` // "summary"
	Partitions []verifyPartitionSummaryJSON `json:"partitions"`
	Problems   int                          `json:"problems"`
	Notes      int                          `json:"notes"`
	Known      int                          `json:"known"`
	Complete   bool                         `json:"complete"`
	NotChecked []string                     `json:"not_checked,omitempty"` // arguments and partitions not checked at all
}

type verifyPartitionSummaryJSON struct {
	Partition string `json:"partition"`
	Dir       string `json:"dir"`
	Segments  int    `json:"segments"`
	Records   uint64 `json:"records"`
	Bytes     int64  `json:"bytes"`
	Problems  int    `json:"problems"`
	Notes     int    `json:"notes"`
	Known     int    `json:"known"`
	WriterPid *int   `json:"writer_pid"`
	Complete  bool   `json:"complete"`
	Missing   bool   `json:"missing"`
}

// summary prints the table (not with quiet) and the last line, or the
// JSON summary object. complete is false when something could not be
// checked: what was not checked at all is named in unchecked, what was
// checked in part by its report.
func (p *verifyPrinter) summary(parts []verifyPart, unchecked []string, complete, quiet bool) error {
	var inPart []string
	for _, vp := range parts {
		if !vp.missing && !vp.report.Complete {
			inPart = append(inPart, vp.name)
		}
	}
	if p.json {
		s := verifySummaryJSON{Type: "summary", Partitions: []verifyPartitionSummaryJSON{}, Problems: p.problems, Notes: p.notes,
			Known: p.known, Complete: complete, NotChecked: unchecked}
		for _, vp := range parts {
			r := vp.report
			j := verifyPartitionSummaryJSON{Partition: vp.name, Dir: vp.dir, Missing: vp.missing}
			if vp.missing {
				j.Problems = 1
			} else {
				j.Segments, j.Records, j.Bytes, j.Problems, j.Notes, j.Known, j.Complete = r.Segments, r.Records, r.Bytes, r.Problems, r.Notes, r.Known, r.Complete
				if r.WriterPid != 0 {
					pid := r.WriterPid
					j.WriterPid = &pid
				}
			}
			s.Partitions = append(s.Partitions, j)
		}
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = p.w.Write(append(b, '\n'))
		return err
	}
	var b bytes.Buffer
	if !quiet && len(parts) > 0 {
		if p.problems+p.notes+p.known > 0 {
			b.WriteByte('\n')
		}
		rows := make([][]string, 0, len(parts))
		for _, vp := range parts {
			r := vp.report
			if vp.missing {
				rows = append(rows, []string{vp.name, "missing", "-", "-", "1", "-", "-"})
				continue
			}
			name := vp.name
			if !r.Complete {
				name += " (incomplete)"
			}
			rows = append(rows, []string{name, strconv.Itoa(r.Segments), strconv.FormatUint(r.Records, 10), humanSize(r.Bytes),
				strconv.Itoa(r.Problems), strconv.Itoa(r.Notes), strconv.Itoa(r.Known)})
		}
		if err := verifyTable.render(&b, rows, p.wide); err != nil {
			return err
		}
	}
	// "no problems found" only when everything asked for was checked.
	switch {
	case p.problems == 1:
		b.WriteString("1 problem found")
	case p.problems > 1:
		fmt.Fprintf(&b, "%d problems found", p.problems)
	case complete:
		b.WriteString("no problems found")
	case len(parts) == 0:
		b.WriteString("nothing was checked")
	default:
		b.WriteString("no problems in what was checked")
	}
	var more []string
	if p.notes > 0 {
		more = append(more, verifyPlural(p.notes, "note", "notes"))
	}
	if p.known > 0 {
		more = append(more, verifyPlural(p.known, "known gap", "known gaps"))
	}
	if len(more) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(more, ", "))
	}
	if !complete {
		if len(parts) > 0 {
			b.WriteString(", but the check could not finish")
		}
		var what []string
		if len(unchecked) > 0 {
			what = append(what, "not checked: "+nameList(unchecked))
		}
		if len(inPart) > 0 {
			what = append(what, "checked in part: "+nameList(inPart))
		}
		if len(what) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(what, "; "))
		}
	}
	b.WriteByte('\n')
	_, err := p.w.Write(b.Bytes())
	return err
}

// nameList is names for a line of text: the first few, and how many more.
func nameList(names []string) string {
	const shown = 5
	s := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		s += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return s
}

func verifyPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
