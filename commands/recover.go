package commands

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

type recoverOptions struct {
	topics    []string // none: every topic
	partition int      // -1: all
	dryRun    bool
	salvage   bool
	json      bool
	lockWait  time.Duration
	waitSet   bool // --wait or --wait-timeout given
}

func recoverCommand() *cli.Command {
	return &cli.Command{
		Name:      "recover",
		Usage:     "repair partitions after a crash: cut torn tails, rebuild indexes, remove leftovers",
		ArgsUsage: "[TOPIC...]",
		Description: "Changes files (see --dry-run). Under each topic's maintenance lock and each\n" +
			"partition's writer lock, scans every segment whole and:\n" +
			"  - cuts an incomplete (torn or zeroed) record at the end of the active segment;\n" +
			"  - rebuilds indexes that are missing, short, too long or wrong, keeping the index\n" +
			"    interval the existing index shows (else the topic's setting, else 1);\n" +
			"  - removes leftovers of interrupted operations: *.deleted (an interrupted\n" +
			"    retention delete), *.tmp files and directories, index files without a .log,\n" +
			"    topic directories holding no partition that an interrupted copy or\n" +
			"    import into a new topic left, and group directories an interrupted\n" +
			"    'groups delete' left aside (operations running are left alone).\n" +
			"Every byte it cuts is first saved to <data-dir>/.quarantine/<topic>/<partition>/\n" +
			"with a JSON note (which file, which bytes, when, why); 'seglog quarantine' lists\n" +
			"and purges them. A corrupt record followed by valid data is reported and left in\n" +
			"place (exit status 3) unless --salvage is given: then the segment is split, the\n" +
			"records after the damage moved to a new segment named after the first of them,\n" +
			"the original kept whole in quarantine and the lost offsets recorded as a known gap\n" +
			"in the partition's .gaps.json. Records whose offsets an earlier segment holds\n" +
			"(an overlap) are corrupt too: --salvage moves them to quarantine, also where\n" +
			"records rescued after damage take them, keeping what 'seglog read' reads, and\n" +
			"removes a segment left with nothing valid at its name; an empty segment named\n" +
			"below the next offset is removed without it. Nothing later in the partition is\n" +
			"ever deleted, and the next offset never goes down. A recover that was\n" +
			"interrupted (killed, a full disk) is finished by running it again.\n\n" +
			"Prints a table for each partition something was (or, with --dry-run, would be)\n" +
			"done to or is wrong with, then a line counting the partitions checked; with\n" +
			"--quiet only the rows of what changed or is wrong, and nothing when nothing was.\n\n" +
			"No TOPIC: every topic; a partition a writer holds (a running append) is then\n" +
			"skipped at once with a warning, unless --wait or --wait-timeout is given, and\n" +
			"the exit status is 0 if all else went well. A named topic whose lock is held is\n" +
			"an error (exit status 1), and so is nothing checked: a data directory without\n" +
			"topics (or leftovers), whose topics were all skipped, or none of whose topics has\n" +
			"the --partition given.\n\n" +
			"Examples:\n" +
			"  seglog recover --dry-run\n" +
			"  seglog recover orders\n" +
			"  seglog recover orders --partition 2 --salvage --json",
		Flags: []cli.Flag{
			wideFlag(),
			&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "recover only partition `P`", DefaultText: "all"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the exact plan and change nothing"},
			&cli.BoolFlag{Name: "salvage", Usage: "split segments around corrupt records to rescue the valid records after them"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document instead of tables"},
			&cli.BoolFlag{Name: "wait", Usage: "wait for locks other processes hold, without limit"},
			&cli.StringFlag{Name: "wait-timeout", Usage: "wait at most `DURATION` for a lock another process holds", DefaultText: "2s"},
		},
		Action: func(c *cli.Context) error {
			o := recoverOptions{topics: c.Args().Slice(), partition: c.Int("partition"), dryRun: c.Bool("dry-run"),
				salvage: c.Bool("salvage"), json: c.Bool("json")}
			if c.IsSet("partition") && o.partition < 0 {
				return usagef("--partition must be 0 or more, not %d", o.partition)
			}
			if err := checkTargetNames(o.topics, false); err != nil {
				return err
			}
			var err error
			if o.lockWait, err = lockWaitFlags(c); err != nil {
				return err
			}
			o.waitSet = c.Bool("wait") || c.IsSet("wait-timeout")
			return runRecover(envFrom(c), o)
		},
	}
}

// recoverRun gathers what a recover run did, for the output.
type recoverRun struct {
	o         recoverOptions
	leftovers []logstore.RecoverLeftover // of the data directory and the topics
	reports   []logstore.RecoverReport
	skipped   []skippedTarget
	probs     problems // runtime errors: exit 1
}

func runRecover(e *env, o recoverOptions) error {
	store := logstore.Open(e.dataDir)
	run := &recoverRun{o: o}
	every := len(o.topics) == 0
	// Over every topic, a partition a writer holds is skipped at once
	// (unless told to wait): an appender holds its partitions for days.
	opts := logstore.RecoverOptions{DryRun: o.dryRun, Salvage: o.salvage, LockWait: o.lockWait,
		TryPartitionLocks: every && !o.waitSet}
	topics := o.topics
	if every {
		all, err := dataDirTopics(e)
		if err != nil {
			return err
		}
		topics = withoutLinks(e, store, "recover", all)
		left, err := store.RecoverDataDir(opts)
		run.leftovers = append(run.leftovers, left...)
		if err != nil {
			run.probs = append(run.probs, err)
		}
		if len(topics) == 0 && len(run.leftovers) == 0 && len(run.probs) == 0 {
			return nothingToDo(e, "check", len(all))
		}
	}
	// Tables go out topic by topic, so a long run shows progress; blocks
	// are separated by blank lines.
	blocks := &blockWriter{w: e.stdout, json: o.json}
	emit := blocks.emit
	// One bar over every topic: the .log bytes scanned.
	bar := &spanBar{progressBar: newProgressBar(e, "recover")}
	defer bar.finish()
	if bar.on() {
		_, bar.total = logstore.Open(e.dataDir).LogBytes(topics, o.partition)
		opts.Progress = bar.update
	}
	var b bytes.Buffer
	for _, l := range run.leftovers {
		writeLeftoverLine(&b, l, o.dryRun, e)
	}
	if err := emit(&b); err != nil {
		return err
	}
	lacking := 0 // topics without partition o.partition
	for _, topic := range topics {
		tr, err := store.RecoverTopic(topic, o.partition, opts)
		bar.next()
		bar.clear()
		warnForeign(e, topic, tr.Dir, tr.Foreign)
		var locked *logstore.LockedError
		switch {
		case err != nil && every && errors.As(err, &locked):
			run.skipped = append(run.skipped, skippedTarget{topic: topic, partition: -1, err: err})
			e.warn("skipped topic %s: %s", topic, errorLine(err))
			continue
		case err != nil && every && errors.Is(err, logstore.ErrPartitionNotFound) && o.partition >= 0:
			lacking++ // --partition P over every topic: topics with fewer partitions have nothing to do
			continue
		case err != nil:
			run.probs = append(run.probs, lockAdvice(err, o.lockWait))
			continue
		}
		run.leftovers = append(run.leftovers, tr.Leftovers...)
		for _, f := range tr.Failed {
			if every && errors.As(f.Err, &locked) {
				run.skipped = append(run.skipped, skippedTarget{topic: topic, partition: f.Partition, err: f.Err})
				e.warn("skipped partition %s/%d: %s", topic, f.Partition, errorLine(f.Err))
				continue
			}
			run.probs = append(run.probs, lockAdvice(f.Err, o.lockWait))
		}
		run.reports = append(run.reports, tr.Partitions...)
		b.Reset()
		for _, l := range tr.Leftovers {
			writeLeftoverLine(&b, l, o.dryRun, e)
		}
		if err := emit(&b); err != nil {
			return err
		}
		// A partition with nothing to do gets no table: a healthy cron run
		// prints the summary line only (with --quiet, nothing).
		for _, rep := range tr.Partitions {
			if !rep.Changed() && len(rep.Problems) == 0 && (e.quiet || len(rep.Leftovers) == 0) {
				continue
			}
			b.Reset()
			if err := writeRecoverTable(&b, rep, e); err != nil {
				return err
			}
			if err := emit(&b); err != nil {
				return err
			}
		}
	}
	bar.finish()
	if lacking > 0 && lacking == len(topics) {
		return fmt.Errorf("nothing to check: no topic of %s has partition %d", e.dataDir, o.partition)
	}
	switch {
	case o.json:
		if err := writeRecoverJSON(e.stdout, run); err != nil {
			return err
		}
	case !e.quiet:
		b.Reset()
		if blocks.blocks > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(run.summary() + "\n")
		if _, err := e.stdout.Write(b.Bytes()); err != nil {
			return err
		}
	}
	// Damage left in place: say what to do, then exit 3 (or 1 when
	// something could not be done at all).
	n := 0
	for _, rep := range run.reports {
		for _, p := range rep.Problems {
			n++
			line := fmt.Sprintf("%s/%d: %s", rep.Topic, rep.Partition, errorLine(p))
			var ce *logstore.CorruptionError
			switch {
			case errors.As(p, &ce) && errors.Is(p, logstore.ErrOverlap) && !o.salvage:
				line += fmt.Sprintf("; left in place: run 'seglog recover %s --partition %d --salvage' to move the overlapping records to quarantine", rep.Topic, rep.Partition)
			case errors.As(p, &ce) && !o.salvage:
				line += fmt.Sprintf("; left in place: run 'seglog recover %s --partition %d --salvage' to rescue the records after it", rep.Topic, rep.Partition)
			default:
				line += "; left in place"
			}
			fmt.Fprintf(e.stderr, "seglog: %s\n", line)
		}
	}
	if err := run.probs.err(); err != nil {
		return err
	}
	if n > 0 {
		return errProblemsFound
	}
	return nil
}

// summary is the last line: how many partitions were checked and what
// came of them.
func (run *recoverRun) summary() string {
	changed, damaged := 0, 0
	for _, rep := range run.reports {
		switch {
		case rep.Changed():
			changed++
		case len(rep.Problems) > 0:
			damaged++
		}
	}
	n := len(run.reports)
	line := fmt.Sprintf("%d partition%s checked", n, plural(n))
	if changed+damaged == 0 {
		line += ", nothing to do"
	} else {
		var parts []string
		if changed > 0 {
			verb := "recovered"
			if run.o.dryRun {
				verb = "to recover"
			}
			parts = append(parts, fmt.Sprintf("%d %s", changed, verb))
		}
		if damaged > 0 {
			parts = append(parts, fmt.Sprintf("%d with damage left in place", damaged))
		}
		if rest := n - changed - damaged; rest > 0 {
			parts = append(parts, fmt.Sprintf("%d with nothing to do", rest))
		}
		line += ": " + strings.Join(parts, ", ")
	}
	if len(run.skipped) > 0 {
		line += fmt.Sprintf("; %d skipped, held by a writer", len(run.skipped))
	}
	if run.o.dryRun {
		line += " (dry run: nothing was changed)"
	}
	return line
}

// writeLeftoverLine tells what became of a leftover; one left in place
// is no news with --quiet.
func writeLeftoverLine(w io.Writer, l logstore.RecoverLeftover, dryRun bool, e *env) {
	if l.Kept && e.quiet {
		return
	}
	verb := "removed"
	switch {
	case l.Kept:
		verb = "left"
	case dryRun:
		verb = "would remove"
	}
	fmt.Fprintf(w, "%s %s (%s)\n", verb, relPath(e.dataDir, l.Path), l.What)
}

// recoverTable is recover's table per partition: in 80 columns, where
// cut bytes were saved and the notes go under it.
var recoverTable = tableLayout{
	header:  []string{"SEGMENT", "RECORDS", "VALID BYTES", "BYTES CUT", "SAVED TO", "INDEX", "NOTE"},
	numeric: "RECORDS VALID BYTES BYTES CUT",
	below:   []string{"NOTE", "SAVED TO"},
}

// writeRecoverTable prints a partition's title line, its table, and lines
// for the leftovers removed and the gaps recorded. With --quiet, the
// table has the rows of segments something was done to or is wrong
// with only.
func writeRecoverTable(w io.Writer, rep logstore.RecoverReport, e *env) error {
	dataDir := e.dataDir
	title := fmt.Sprintf("partition %s/%d (%s): ", rep.Topic, rep.Partition, rep.Dir)
	switch {
	case rep.DryRun && rep.Changed():
		title += "plan (dry run: nothing was changed)"
	case rep.DryRun:
		title += "nothing to do (dry run)"
	case rep.Changed():
		title += "recovered"
	default:
		title += "nothing to do"
	}
	title += fmt.Sprintf(", next offset %d", rep.Next)
	if len(rep.Problems) > 0 {
		title += fmt.Sprintf(", %d problem%s left", len(rep.Problems), plural(len(rep.Problems)))
	}
	if _, err := fmt.Fprintln(w, title); err != nil {
		return err
	}
	rows := make([][]string, 0, len(rep.Segments))
	for _, sr := range rep.Segments {
		if e.quiet && !sr.Changed() && sr.Problem == nil {
			continue
		}
		cut, saved := "-", "-"
		if sr.Cut != nil {
			cut = strconv.FormatInt(sr.Cut.To-sr.Cut.From, 10)
			saved = relPath(dataDir, sr.Cut.Saved)
			if sr.Cut.Saved == "" {
				saved = filepath.Join(logstore.QuarantineDir, rep.Topic, strconv.Itoa(rep.Partition)) + "/"
			}
		}
		rows = append(rows, []string{sr.Name, strconv.FormatUint(sr.Records, 10), strconv.FormatInt(sr.ValidBytes, 10),
			cut, saved, indexCell(sr), segmentNote(sr)})
	}
	if len(rows) > 0 {
		if err := recoverTable.render(w, rows, e.wide); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	for _, l := range rep.Leftovers {
		writeLeftoverLine(&b, l, rep.DryRun, e)
	}
	for _, g := range rep.Gaps {
		verb := "recorded"
		if rep.DryRun {
			verb = "would record"
		}
		fmt.Fprintf(&b, "%s offsets %s as a known gap in %s\n", verb, gapRange(g), relPath(dataDir, filepath.Join(rep.Dir, logstore.GapsFile)))
	}
	_, err := w.Write(b.Bytes())
	return err
}

func gapRange(g logstore.Gap) string {
	if g.To == g.From+1 {
		return strconv.FormatUint(g.From, 10)
	}
	return fmt.Sprintf("%d..%d", g.From, g.To-1)
}

// indexCell is the INDEX column: one word when both indexes fare alike.
func indexCell(sr logstore.SegmentRecovery) string {
	if sr.Index == sr.TimeIndex {
		return string(sr.Index)
	}
	return fmt.Sprintf("index %s, timeindex %s", sr.Index, sr.TimeIndex)
}

// segmentNote is the NOTE column: what happened to the segment and why.
func segmentNote(sr logstore.SegmentRecovery) string {
	var notes []string
	switch {
	case sr.SplitFrom != "":
		notes = append(notes, "rescued from "+sr.SplitFrom)
	case sr.RenamedTo != "":
		notes = append(notes, "misnamed: its first record has another offset; renamed to "+sr.RenamedTo)
	case sr.Cut != nil && sr.Cut.Whole:
		s := fmt.Sprintf("corrupt record at byte %d: split", sr.Cut.From)
		if len(sr.SplitInto) > 0 {
			s += ", records after it moved to " + strings.Join(sr.SplitInto, ", ")
		}
		if sr.Removed {
			s += "; removed, as nothing valid is left at its name"
		}
		if sr.Finished {
			s += " (finishing an interrupted recover)"
		}
		if sr.Cut.Linked {
			s += "; disk full: original hard-linked into quarantine"
		}
		notes = append(notes, s)
	case sr.Cut != nil:
		notes = append(notes, fmt.Sprintf("incomplete record cut at byte %d", sr.Cut.From))
	case sr.Removed:
		notes = append(notes, "empty, and named below where the segment before ends: removed")
	}
	if sr.Problem != nil {
		p := errorLine(sr.Problem)
		var ce *logstore.CorruptionError
		if errors.As(sr.Problem, &ce) && !errors.Is(sr.Problem, logstore.ErrOverlap) {
			p = fmt.Sprintf("corrupt record at byte %d (offset %d): %s; left in place", ce.Pos, ce.Offset,
				ce.Reason.Error())
		}
		notes = append(notes, p)
	}
	if sr.Interval > 1 && sr.Index != logstore.IndexKept && sr.Index != logstore.IndexLeft {
		notes = append(notes, fmt.Sprintf("index interval %d", sr.Interval))
	}
	if len(notes) == 0 {
		return "-"
	}
	return strings.Join(notes, "; ")
}

// recoverJSON is recover's --json document.
type recoverJSON struct {
	DryRun     bool                   `json:"dry_run"`
	Salvage    bool                   `json:"salvage"`
	Leftovers  []leftoverJSON         `json:"leftovers"`
	Partitions []recoverPartitionJSON `json:"partitions"`
	Skipped    []skippedTargetJSON    `json:"skipped"`
	Errors     []string               `json:"errors"`
}

type leftoverJSON struct {
	Path   string `json:"path"`
	What   string `json:"what"`
	Action string `json:"action"` // removed, would remove, left
}

type recoverPartitionJSON struct {
	Topic     string               `json:"topic"`
	Partition int                  `json:"partition"`
	Dir       string               `json:"dir"`
	Next      uint64               `json:"next_offset"`
	Changed   bool                 `json:"changed"`
	Segments  []recoverSegmentJSON `json:"segments"`
	Leftovers []leftoverJSON       `json:"leftovers"`
	Gaps      []logstore.Gap       `json:"gaps"`
	Problems  []string             `json:"problems"`
}

type recoverSegmentJSON struct {
	Segment    string          `json:"segment"`
	Base       uint64          `json:"base_offset"`
	Size       int64           `json:"size"`
	Records    uint64          `json:"records"`
	ValidBytes int64           `json:"valid_bytes"`
	Cut        *recoverCutJSON `json:"cut"`
	Index      string          `json:"index"`
	TimeIndex  string          `json:"timeindex"`
	Interval   int             `json:"index_interval"`
	SplitFrom  *string         `json:"split_from"`
	SplitInto  []string        `json:"split_into"`
	Finished   bool            `json:"finished_interrupted_split"`
	RenamedTo  *string         `json:"renamed_to"`
	Removed    bool            `json:"removed"`
	Problem    *string         `json:"problem"`
}

type recoverCutJSON struct {
	From     int64   `json:"from"`
	To       int64   `json:"to"`
	Bytes    int64   `json:"bytes"`
	Offset   uint64  `json:"expected_offset"`
	Reason   string  `json:"reason"`
	SavedTo  *string `json:"saved_to"`
	Whole    bool    `json:"saved_whole_segment"`
	HardLink bool    `json:"hard_linked"`
}

func leftoversJSON(left []logstore.RecoverLeftover, dryRun bool) []leftoverJSON {
	out := []leftoverJSON{}
	for _, l := range left {
		a := "removed"
		switch {
		case l.Kept:
			a = "left"
		case dryRun:
			a = "would remove"
		}
		out = append(out, leftoverJSON{Path: l.Path, What: l.What, Action: a})
	}
	return out
}

func writeRecoverJSON(w io.Writer, run *recoverRun) error {
	doc := recoverJSON{DryRun: run.o.dryRun, Salvage: run.o.salvage, Leftovers: leftoversJSON(run.leftovers, run.o.dryRun),
		Partitions: []recoverPartitionJSON{}, Skipped: []skippedTargetJSON{}, Errors: []string{}}
	for _, rep := range run.reports {
		pj := recoverPartitionJSON{Topic: rep.Topic, Partition: rep.Partition, Dir: rep.Dir, Next: rep.Next, Changed: rep.Changed(),
			Segments: []recoverSegmentJSON{}, Leftovers: leftoversJSON(rep.Leftovers, rep.DryRun),
			Gaps: append([]logstore.Gap{}, rep.Gaps...), Problems: []string{}}
		for _, p := range rep.Problems {
			pj.Problems = append(pj.Problems, errorLine(p))
		}
		for _, sr := range rep.Segments {
			sj := recoverSegmentJSON{Segment: sr.Name, Base: sr.Base, Size: sr.Size, Records: sr.Records, ValidBytes: sr.ValidBytes,
				Index: string(sr.Index), TimeIndex: string(sr.TimeIndex), Interval: sr.Interval,
				SplitInto: append([]string{}, sr.SplitInto...), Finished: sr.Finished, Removed: sr.Removed}
			if sr.SplitFrom != "" {
				sj.SplitFrom = &sr.SplitFrom
			}
			if sr.RenamedTo != "" {
				sj.RenamedTo = &sr.RenamedTo
			}
			if sr.Problem != nil {
				p := errorLine(sr.Problem)
				sj.Problem = &p
			}
			if c := sr.Cut; c != nil {
				cj := &recoverCutJSON{From: c.From, To: c.To, Bytes: c.To - c.From, Offset: c.Offset, Reason: c.Reason,
					Whole: c.Whole, HardLink: c.Linked}
				if c.Saved != "" {
					saved := c.Saved
					cj.SavedTo = &saved
				}
				sj.Cut = cj
			}
			pj.Segments = append(pj.Segments, sj)
		}
		doc.Partitions = append(doc.Partitions, pj)
	}
	for _, s := range run.skipped {
		sk := skippedTargetJSON{Topic: s.topic, Reason: errorLine(s.err)}
		if s.partition >= 0 {
			p := s.partition
			sk.Partition = &p
		}
		doc.Skipped = append(doc.Skipped, sk)
	}
	for _, err := range run.probs {
		doc.Errors = append(doc.Errors, errorLine(err))
	}
	return writeJSONDocument(w, doc)
}
