package commands

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

type sweepOptions struct {
	topics         []string // none: every topic
	partition      int      // -1: all
	retention      time.Duration
	retentionBytes int64 // these two: defaults for topics without their own; 0 none
	override       bool  // apply them over the topics' own settings too
	now            time.Time
	clock          bool // no --now: now is the clock's reading
	dryRun         bool
	json           bool
	lockWait       time.Duration
}

func retentionSweepCommand() *cli.Command {
	return &cli.Command{
		Name:      "retention-sweep",
		Usage:     "delete the oldest segments past a retention time or size",
		ArgsUsage: "[TOPIC...]",
		Description: "Changes files: deletes segments for good (see --dry-run). Under each topic's\n" +
			"maintenance lock, deletes the longest run of oldest segments in which each one\n" +
			"qualifies under a rule:\n" +
			"  - retention D: its newest timestamp is older than now - D. A segment holding a\n" +
			"    timestamp after now never goes by time (it is reported, with a warning), nor\n" +
			"    does one whose newest timestamp damage hides (run verify-crc and recover).\n" +
			"  - retention-bytes SIZE: the partition keeps at least SIZE of .log bytes\n" +
			"    without it (Kafka's rule).\n" +
			"A topic's own settings (create --retention, --retention-bytes) win, each rule on\n" +
			"its own: --retention and --retention-bytes are the defaults for topics that store\n" +
			"none, as a Kafka broker's settings are under a topic's; --override-topic-settings\n" +
			"applies them over the settings of every topic named or swept. The report says\n" +
			"which rules applied to each topic and where each came from (the topic's setting,\n" +
			"a flag, a flag over the topic's setting), and names a flag a topic's own setting\n" +
			"beat. When the active segment itself has expired and no writer holds the\n" +
			"partition, it is rolled first (a new empty segment keeps the next offset) and\n" +
			"deleted; with a live appender it stays.\n" +
			"A read that was about to read a deleted segment fails naming the partition's new\n" +
			"start. A sweep that was interrupted is finished by 'seglog recover'.\n\n" +
			"Prints a table per partition: each segment's records, bytes, newest timestamp,\n" +
			"decision (deleted, would delete, kept, future timestamps) and why; then the\n" +
			"totals. With --quiet, only the partitions segments went from (or would, with\n" +
			"--dry-run) or whose timestamps keep one, with those segments' rows: nothing\n" +
			"when nothing goes.\n\n" +
			"No TOPIC: every topic; topics without a retention setting are listed as\n" +
			"skipped, and a topic whose maintenance lock stays held (a copy, a recover) is\n" +
			"skipped with a warning, and the exit status is 0 if all else went well. A named\n" +
			"topic without a rule, or with its lock held, is an error (exit status 1), and so\n" +
			"is a data directory without topics, whose topics were all skipped as links, or\n" +
			"none of whose topics has the --partition given: from cron, a sweep of nothing\n" +
			"must not pass for one that worked.\n\n" +
			"Examples:\n" +
			"  seglog retention-sweep --retention 7d   # from cron: 7 days where a topic sets none\n" +
			"  seglog retention-sweep --dry-run\n" +
			"  seglog retention-sweep app-logs --retention 7d --override-topic-settings\n" +
			"  seglog retention-sweep orders --retention-bytes 10GiB --json",
		Flags: []cli.Flag{
			wideFlag(),
			&cli.StringFlag{Name: "retention", Usage: "delete segments whose newest record is older than `DURATION`, in topics without a retention of their own", DefaultText: "none"},
			&cli.StringFlag{Name: "retention-bytes", Usage: "delete the oldest segments while the partition keeps at least `SIZE` without them, in topics without a retention_bytes of their own", DefaultText: "none"},
			&cli.BoolFlag{Name: "override-topic-settings", Usage: "apply --retention and --retention-bytes over the topics' own settings too"},
			&cli.StringFlag{Name: "now", Usage: "apply the rules as at `TIME` (RFC 3339, or a duration ago)", DefaultText: "now"},
			&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "sweep only partition `P`", DefaultText: "all"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print what would be deleted and change nothing"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document instead of tables"},
			&cli.BoolFlag{Name: "wait", Usage: "wait for a topic's maintenance lock without limit"},
			&cli.StringFlag{Name: "wait-timeout", Usage: "wait at most `DURATION` for a topic's maintenance lock", DefaultText: "2s"},
		},
		Action: func(c *cli.Context) error {
			o, err := sweepFlags(c)
			if err != nil {
				return err
			}
			return runSweep(envFrom(c), o)
		},
	}
}

func sweepFlags(c *cli.Context) (sweepOptions, error) {
	o := sweepOptions{topics: c.Args().Slice(), partition: c.Int("partition"), dryRun: c.Bool("dry-run"), json: c.Bool("json"),
		now: time.Now(), clock: !c.IsSet("now"), override: c.Bool("override-topic-settings")}
	var err error
	if c.IsSet("partition") && o.partition < 0 {
		return o, usagef("--partition must be 0 or more, not %d", o.partition)
	}
	if err := checkTargetNames(o.topics, false); err != nil {
		return o, err
	}
	if c.IsSet("retention") {
		if o.retention, err = parseDuration(c.String("retention")); err != nil {
			return o, usagef("--retention: %v", err)
		}
		if o.retention == 0 {
			return o, usagef("--retention must be longer than 0")
		}
	}
	if c.IsSet("retention-bytes") {
		if o.retentionBytes, err = parseSize(c.String("retention-bytes")); err != nil {
			return o, usagef("--retention-bytes: %v", err)
		}
		if o.retentionBytes < 1 {
			return o, usagef("--retention-bytes must be at least 1 byte")
		}
	}
	if o.override && o.retention == 0 && o.retentionBytes == 0 {
		return o, usagef("--override-topic-settings applies --retention and --retention-bytes: give one or both")
	}
	if c.IsSet("now") {
		if o.now, err = parseTime(c.String("now"), o.now); err != nil {
			return o, usagef("--now: %v", err)
		}
		// Timestamps are int64 nanoseconds: years 1678 to 2262.
		if ns := o.now.UnixNano(); time.Unix(0, ns).Compare(o.now) != 0 {
			return o, usagef("--now: %s is out of the range of timestamps (years 1678 to 2262)", c.String("now"))
		}
	}
	o.lockWait, err = lockWaitFlags(c)
	return o, err
}

// sweepRun gathers what a sweep did, for the output.
type sweepRun struct {
	o       sweepOptions
	topics  []logstore.TopicSweep
	skipped []skippedTarget
	probs   problems // runtime errors: exit 1
	times   timeFormatter
	wide    bool // tables whole
}

func runSweep(e *env, o sweepOptions) error {
	store := logstore.Open(e.dataDir)
	run := &sweepRun{o: o, wide: e.wide}
	every := len(o.topics) == 0
	topics := o.topics
	if every {
		all, err := dataDirTopics(e)
		if err != nil {
			return err
		}
		if topics = withoutLinks(e, store, "retention-sweep", all); len(topics) == 0 {
			return nothingToDo(e, "sweep", len(all))
		}
	}
	opts := logstore.RetentionOptions{Retention: o.retention, RetentionBytes: o.retentionBytes, Override: o.override,
		Now: o.now, NowIsClock: o.clock, DryRun: o.dryRun,
		LockWait: o.lockWait, Warn: func(m string) { e.warn("%s", m) }}
	// Blocks (a topic's tables, a skipped topic's line) go out as they are
	// done, separated by blank lines.
	blocks := &blockWriter{w: e.stdout, json: o.json}
	emit := blocks.emit
	// One bar over every topic: the segments done with.
	bar := &spanBar{progressBar: newCountBar(e, "retention-sweep", "segments")}
	defer bar.finish()
	if bar.on() {
		bar.total, _ = logstore.Open(e.dataDir).LogBytes(topics, o.partition)
		opts.Progress = bar.update
		opts.Warn = func(m string) { bar.clear(); e.warn("%s", m) }
	}
	var b bytes.Buffer
	lacking := 0 // topics without partition o.partition
	for _, topic := range topics {
		b.Reset()
		ts, err := store.RetentionSweep(topic, o.partition, opts)
		bar.next()
		bar.clear()
		warnForeign(e, topic, ts.Dir, ts.Foreign)
		var locked *logstore.LockedError
		switch {
		case err != nil && every && errors.Is(err, logstore.ErrNoRetention):
			// Over every topic, a topic nobody set a retention for is one
			// to keep whole, not a failure.
			run.skipped = append(run.skipped, skippedTarget{topic: topic, partition: -1, err: errors.New("no retention set")})
			if !e.quiet {
				fmt.Fprintf(&b, "topic %s: skipped, no retention set\n", topic)
			}
			if err := emit(&b); err != nil {
				return err
			}
			continue
		case err != nil && every && errors.As(err, &locked):
			run.skipped = append(run.skipped, skippedTarget{topic: topic, partition: -1, err: err})
			e.warn("skipped topic %s: %s", topic, errorLine(err))
			continue
		case err != nil && every && errors.Is(err, logstore.ErrPartitionNotFound) && o.partition >= 0:
			lacking++ // --partition P over every topic: topics with fewer partitions have nothing to do
			continue
		case err != nil:
			run.probs = append(run.probs, sweepAdvice(err, topic, o.lockWait))
			continue
		}
		run.topics = append(run.topics, ts)
		for _, f := range ts.Failed {
			run.probs = append(run.probs, f.Err)
		}
		if err := run.writeTopic(&b, ts, e.quiet); err != nil {
			return err
		}
		if err := emit(&b); err != nil {
			return err
		}
		run.warnSegments(e, ts)
	}
	bar.finish()
	if lacking > 0 && lacking == len(topics) {
		return fmt.Errorf("nothing to sweep: no topic of %s has partition %d", e.dataDir, o.partition)
	}
	if o.json {
		if err := run.writeJSON(e.stdout); err != nil {
			return err
		}
	} else if !e.quiet && (len(run.topics) > 0 || len(run.probs) == 0) {
		if err := run.writeTotals(e.stdout, blocks.blocks > 0); err != nil {
			return err
		}
	}
	return run.probs.err()
}

// sweepAdvice adds what to do next to a topic's error.
func sweepAdvice(err error, topic string, wait time.Duration) error {
	switch {
	case errors.Is(err, logstore.ErrNoRetention):
		return fmt.Errorf("%w; pass --retention DURATION or --retention-bytes SIZE, or store them when creating a topic ('seglog create %s --retention 7d')", err, topic)
	case errors.Is(err, logstore.ErrTopicNotFound):
		return fmt.Errorf("%w (check the name and --data-dir)", err)
	}
	return lockAdvice(err, wait)
}

// warnSegments warns of segments whose timestamps keep them against the
// rules: in the future, or hidden by damage.
func (run *sweepRun) warnSegments(e *env, ts logstore.TopicSweep) {
	for _, p := range ts.Partitions {
		for _, ss := range p.Segments {
			switch {
			case ss.Future:
				e.warn("%s/%d: segment %s holds timestamps in the future (newest %s is after now %s): it never goes by time",
					p.Topic, p.Partition, ss.Name, run.stamp(ss.Newest), run.stamp(ts.Now))
			case ss.Damage != nil:
				e.warn("%s/%d: segment %s: %s; its newest timestamp is unknown, so it does not go by time (run 'seglog verify-crc %s' and 'seglog recover %s')",
					p.Topic, p.Partition, ss.Name, errorLine(ss.Damage), p.Topic, p.Topic)
			}
		}
	}
}

func (run *sweepRun) stamp(ns int64) string { return string(run.times.append(nil, ns)) }

// sweepTable is the sweep's table per partition: in 80 columns, the
// reasons go under it.
var sweepTable = tableLayout{
	header:  []string{"SEGMENT", "RECORDS", "BYTES", "NEWEST", "DECISION", "REASON"},
	numeric: "RECORDS BYTES",
	below:   []string{"REASON"},
	drop:    []string{"RECORDS", "NEWEST"},
}

// writeTopic prints a topic's rules, then a title line and a table for
// each partition. quiet keeps only what changed or is wrong: the
// partitions with segments deleted or kept by timestamps in the future or
// hidden by damage, with those segments' rows.
func (run *sweepRun) writeTopic(w *bytes.Buffer, ts logstore.TopicSweep, quiet bool) error {
	notable := func(ss logstore.SegmentSweep) bool {
		return !quiet || ss.Decision == logstore.SweepDeleted || ss.Decision == logstore.SweepWouldDelete || ss.Future || ss.Damage != nil
	}
	if !quiet {
		fmt.Fprintf(w, "topic %s: %s\n", ts.Topic, run.rules(ts))
	}
	for _, p := range ts.Partitions {
		if quiet && !slices.ContainsFunc(p.Segments, notable) {
			continue
		}
		if w.Len() > 0 {
			w.WriteByte('\n')
		}
		n, size := p.Deleted()
		title := fmt.Sprintf("partition %s/%d (%s): ", p.Topic, p.Partition, p.Dir)
		switch {
		case n == 0:
			title += "nothing to delete"
		case p.DryRun:
			title += fmt.Sprintf("would delete %d of %d segment%s (%s; dry run: nothing was changed)", n, len(p.Segments), plural(len(p.Segments)), humanSize(size))
		default:
			title += fmt.Sprintf("deleted %d of %d segment%s (%s)", n, len(p.Segments), plural(len(p.Segments)), humanSize(size))
		}
		title += fmt.Sprintf(", start offset %d, next offset %d", p.Start, p.Next)
		fmt.Fprintln(w, title)
		if len(p.Segments) == 0 {
			continue
		}
		rows := make([][]string, 0, len(p.Segments))
		for _, ss := range p.Segments {
			if !notable(ss) {
				continue
			}
			rows = append(rows, []string{ss.Name, strconv.FormatUint(ss.Records, 10), strconv.FormatInt(ss.Bytes, 10),
				run.newestCell(ss), string(ss.Decision), run.reason(ts, p, ss)})
		}
		if err := sweepTable.render(w, rows, run.wide); err != nil {
			return err
		}
	}
	return nil
}

// rules describes the rules applied to a topic and where each came from,
// then the flags its own settings beat.
func (run *sweepRun) rules(ts logstore.TopicSweep) string {
	var rs, beaten []string
	if ts.Retention > 0 {
		rs = append(rs, fmt.Sprintf("retention %s %s (cutoff %s)", durationText(ts.Retention),
			ruleOrigin(ts.RetentionSource, "--retention", durationText(ts.Stored.Retention)), run.stamp(ts.Cutoff)))
	}
	if ts.RetentionBytes > 0 {
		rs = append(rs, fmt.Sprintf("retention-bytes %s %s", sizeText(ts.RetentionBytes),
			ruleOrigin(ts.RetentionBytesSource, "--retention-bytes", sizeText(ts.Stored.RetentionBytes))))
	}
	if run.o.retention > 0 && ts.RetentionSource == logstore.RuleFromTopic {
		beaten = append(beaten, "--retention "+durationText(run.o.retention))
	}
	if run.o.retentionBytes > 0 && ts.RetentionBytesSource == logstore.RuleFromTopic {
		beaten = append(beaten, "--retention-bytes "+sizeText(run.o.retentionBytes))
	}
	s := strings.Join(rs, ", ")
	if len(beaten) > 0 {
		s += fmt.Sprintf("; %s not applied: the topic's own setting wins (--override-topic-settings applies the flag)", strings.Join(beaten, " and "))
	}
	return s
}

// ruleOrigin says where a rule came from, for the report.
func ruleOrigin(src logstore.RuleSource, flag, stored string) string {
	switch src {
	case logstore.RuleFromTopic:
		return "from the topic's setting"
	case logstore.RuleFromOverride:
		return fmt.Sprintf("from %s over the topic's %s", flag, stored)
	}
	return "from " + flag
}

// ruleSourceJSON names a rule's source in --json: "topic", "flag" or
// "override"; null when the rule is off.
func ruleSourceJSON(src logstore.RuleSource) *string {
	var s string
	switch src {
	case logstore.RuleOff:
		return nil
	case logstore.RuleFromDefault:
		s = "flag"
	default:
		s = string(src)
	}
	return &s
}

func (run *sweepRun) newestCell(ss logstore.SegmentSweep) string {
	switch {
	case ss.Damage != nil:
		return "unknown"
	case !ss.HasNewest:
		return "-"
	}
	return run.stamp(ss.Newest)
}

// reason is the REASON column: why the segment goes or stays.
func (run *sweepRun) reason(ts logstore.TopicSweep, p logstore.PartitionSweep, ss logstore.SegmentSweep) string {
	sizeNo := func() string {
		return fmt.Sprintf("size: %s without it < retention-bytes %s", sizeText(ss.Remaining), sizeText(ts.RetentionBytes))
	}
	var s string
	switch ss.Reason {
	case logstore.SweepByTime:
		s = fmt.Sprintf("older than %s (cutoff %s)", durationText(ts.Retention), run.stamp(ts.Cutoff))
		if !ss.HasNewest {
			s = "empty closed segment"
		}
		if ss.Active && p.Rolled != "" {
			verb := "rolled first: new active segment "
			if p.DryRun {
				verb = "would roll first: new active segment "
			}
			s += "; " + verb + p.Rolled
		}
		return s
	case logstore.SweepBySize:
		return fmt.Sprintf("size: partition %s, %s without it >= retention-bytes %s",
			sizeText(ss.Remaining+ss.Bytes), sizeText(ss.Remaining), sizeText(ts.RetentionBytes))
	case logstore.SweepUnderSize:
		return sizeNo()
	case logstore.SweepNewer:
		s = "newer than the cutoff"
	case logstore.SweepInFuture:
		s = fmt.Sprintf("future timestamps: newest %s is after now %s", run.stamp(ss.Newest), run.stamp(ts.Now))
	case logstore.SweepDamaged:
		s = fmt.Sprintf("newest timestamp unknown: damaged at byte %d of %s (%s); run 'seglog verify-crc %s' and 'seglog recover %s'",
			ss.Damage.Pos, ss.Damage.Path, ss.Damage.Reason.Error(), p.Topic, p.Topic)
	case logstore.SweepAfterKept:
		return "after a kept segment"
	case logstore.SweepWriterLive:
		s = "a writer holds the partition"
		if p.WriterPid != 0 {
			s += fmt.Sprintf(" (pid %d)", p.WriterPid)
		}
		return s
	case logstore.SweepEmptyActive:
		return "active segment, empty"
	case logstore.SweepFull:
		return fmt.Sprintf("active segment holding offset %d, the last there is: it cannot be rolled", uint64(math.MaxUint64))
	}
	if ss.SizeJudged {
		s += "; " + sizeNo()
	}
	return s
}

// sizeText is a size for a reason: exact when small, else binary units
// with the exact count beside.
func sizeText(n int64) string {
	if n < 1024 {
		return humanSize(n)
	}
	return fmt.Sprintf("%s (%d bytes)", humanSize(n), n)
}

// durationText prints a duration as the flags take it: "7d", "1d12h",
// "90m", "1.5s".
func durationText(d time.Duration) string {
	const day = 24 * time.Hour
	var s string
	if d >= day {
		s = strconv.FormatInt(int64(d/day), 10) + "d"
		d %= day
		if d == 0 {
			return s
		}
	}
	r := d.String()
	// "12h0m0s" reads as "12h".
	for _, zero := range []string{"0s", "0m"} {
		if t, ok := strings.CutSuffix(r, zero); ok && len(t) > 0 && t[len(t)-1] >= 'a' {
			r = t
		}
	}
	return s + r
}

// writeTotals prints the last line, what went in all; after other
// output, a blank line first.
func (run *sweepRun) writeTotals(w io.Writer, blank bool) error {
	segs, parts := 0, 0
	var size int64
	for _, ts := range run.topics {
		for _, p := range ts.Partitions {
			n, b := p.Deleted()
			segs, size = segs+n, size+b
			if n > 0 {
				parts++
			}
		}
	}
	line := "total: nothing to delete"
	switch {
	case segs > 0 && run.o.dryRun:
		line = fmt.Sprintf("total: would delete %d segment%s (%s) from %d partition%s (dry run: nothing was changed)",
			segs, plural(segs), humanSize(size), parts, plural(parts))
	case segs > 0:
		line = fmt.Sprintf("total: deleted %d segment%s (%s) from %d partition%s", segs, plural(segs), humanSize(size), parts, plural(parts))
	}
	prefix := ""
	if blank {
		prefix = "\n"
	}
	_, err := fmt.Fprintf(w, "%s%s\n", prefix, line)
	return err
}

// sweepJSON is the sweep's --json document.
type sweepJSON struct {
	DryRun     bool                 `json:"dry_run"`
	Now        string               `json:"now"`
	NowNS      int64                `json:"now_ns"`
	Partitions []sweepPartitionJSON `json:"partitions"`
	Skipped    []skippedTargetJSON  `json:"skipped"`
	Errors     []string             `json:"errors"`
	Totals     sweepTotalsJSON      `json:"totals"`
}

type sweepPartitionJSON struct {
	Topic          string             `json:"topic"`
	Partition      int                `json:"partition"`
	Dir            string             `json:"dir"`
	Retention      *string            `json:"retention"`
	RetentionNS    *int64             `json:"retention_ns"`
	RetentionFrom  *string            `json:"retention_source"`
	RetentionBytes *int64             `json:"retention_bytes"`
	BytesFrom      *string            `json:"retention_bytes_source"`
	Cutoff         *string            `json:"cutoff"`
	CutoffNS       *int64             `json:"cutoff_ns"`
	Start          uint64             `json:"start_offset"`
	Next           uint64             `json:"next_offset"`
	RolledInto     *string            `json:"rolled_into"`
	WriterPid      *int               `json:"writer_pid"`
	Deleted        int                `json:"deleted_segments"`
	DeletedBytes   int64              `json:"deleted_bytes"`
	Segments       []sweepSegmentJSON `json:"segments"`
}

type sweepSegmentJSON struct {
	Segment  string  `json:"segment"`
	Base     uint64  `json:"base_offset"`
	Active   bool    `json:"active"`
	Records  uint64  `json:"records"`
	Bytes    int64   `json:"bytes"`
	Newest   *string `json:"newest_timestamp"`
	NewestNS *int64  `json:"newest_timestamp_ns"`
	Decision string  `json:"decision"`
	Code     string  `json:"reason_code"`
	Reason   string  `json:"reason"`
	Future   bool    `json:"future_timestamps"`
	Damaged  *int64  `json:"damaged_at"` // byte position
}

type sweepTotalsJSON struct {
	Segments   int   `json:"deleted_segments"`
	Bytes      int64 `json:"deleted_bytes"`
	Partitions int   `json:"partitions_swept"`
}

func (run *sweepRun) writeJSON(w io.Writer) error {
	doc := sweepJSON{DryRun: run.o.dryRun, Now: run.stamp(run.o.now.UnixNano()), NowNS: run.o.now.UnixNano(),
		Partitions: []sweepPartitionJSON{}, Skipped: []skippedTargetJSON{}, Errors: []string{}}
	for _, ts := range run.topics {
		for _, p := range ts.Partitions {
			pj := sweepPartitionJSON{Topic: p.Topic, Partition: p.Partition, Dir: p.Dir, Start: p.Start, Next: p.Next,
				RetentionFrom: ruleSourceJSON(ts.RetentionSource), BytesFrom: ruleSourceJSON(ts.RetentionBytesSource),
				Segments: []sweepSegmentJSON{}}
			if ts.Retention > 0 {
				r, rns, c, cns := durationText(ts.Retention), int64(ts.Retention), run.stamp(ts.Cutoff), ts.Cutoff
				pj.Retention, pj.RetentionNS, pj.Cutoff, pj.CutoffNS = &r, &rns, &c, &cns
			}
			if ts.RetentionBytes > 0 {
				rb := ts.RetentionBytes
				pj.RetentionBytes = &rb
			}
			if p.Rolled != "" {
				r := p.Rolled
				pj.RolledInto = &r
			}
			if p.WriterPid != 0 {
				pid := p.WriterPid
				pj.WriterPid = &pid
			}
			pj.Deleted, pj.DeletedBytes = p.Deleted()
			doc.Totals.Segments += pj.Deleted
			doc.Totals.Bytes += pj.DeletedBytes
			doc.Totals.Partitions++
			for _, ss := range p.Segments {
				sj := sweepSegmentJSON{Segment: ss.Name, Base: ss.Base, Active: ss.Active, Records: ss.Records, Bytes: ss.Bytes,
					Decision: string(ss.Decision), Code: string(ss.Reason), Reason: run.reason(ts, p, ss), Future: ss.Future}
				if ss.HasNewest && ss.Damage == nil {
					n, ns := run.stamp(ss.Newest), ss.Newest
					sj.Newest, sj.NewestNS = &n, &ns
				}
				if ss.Damage != nil {
					pos := ss.Damage.Pos
					sj.Damaged = &pos
				}
				pj.Segments = append(pj.Segments, sj)
			}
			doc.Partitions = append(doc.Partitions, pj)
		}
	}
	for _, s := range run.skipped {
		doc.Skipped = append(doc.Skipped, skippedTargetJSON{Topic: s.topic, Reason: errorLine(s.err)})
	}
	for _, err := range run.probs {
		doc.Errors = append(doc.Errors, errorLine(err))
	}
	return writeJSONDocument(w, doc)
}
