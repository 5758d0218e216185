package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

type importOptions struct {
	dir       string
	topic     string
	partition int // -1: not given
	target    appendTarget
	settings  logstore.Settings
	mtime     bool // stamp records with their .store's mtime, not the time of import
	kafkaNow  bool // --timestamps now given: an Apache Kafka source's records get the time of import, not their own
	committed bool // --isolation read_committed: no records of an Apache Kafka source's aborted or open transactions
	sync      logstore.SyncMode
	lockWait  time.Duration
	json      bool
}

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "append every record of a log in the simple store/index layout, or of an Apache Kafka partition, to a topic",
		ArgsUsage: "DIR TOPIC",
		Description: "Changes files in the data directory only: reads DIR, a log in the simple\n" +
			"store/index layout (<base>.store files of length-framed records, <base>.index\n" +
			"files of 12-byte entries), read-only, and appends each record's bytes, in\n" +
			"offset order, to one partition of TOPIC, holding its writer lock like append.\n" +
			"DIR is a path, never a topic; nothing in it is changed. Records get no key, and\n" +
			"the time of import as timestamp, or with --timestamps mtime their .store file's\n" +
			"modification time; each at least a nanosecond after the record before it (one\n" +
			"import's timestamps strictly increase) and never below the partition's last.\n\n" +
			"Without --partition, TOPIC must have one partition: order matters more than\n" +
			"spreading. A store's torn last record (what a crash leaves) is skipped with a\n" +
			"warning; broken framing (a length running past the store's end while the index\n" +
			"shows records after it) stops the import (exit 1), and the records before it\n" +
			"stay imported. Prints what was imported as a table on stdout (--json: one JSON\n" +
			"object); warnings and notes about the source go to stderr.\n\n" +
			"DIR may also be an Apache Kafka partition directory (TOPIC-N in a broker's log\n" +
			"directory), read as read does: its data records with their keys, values and\n" +
			"own timestamps (--timestamps now: the time of import), from its log start\n" +
			"offset; headers and transaction markers, which seglog's records cannot hold,\n" +
			"are left out and counted on stderr. --isolation read_committed leaves out the\n" +
			"records of aborted transactions (and of those with no marker by the end), as\n" +
			"read does; by default they are imported, as Kafka's consumers read them.\n\n" +
			"Examples:\n" +
			"  seglog import ./old-log events --create\n" +
			"  seglog import ./old-log orders --partition 2 --timestamps mtime --json\n" +
			"  seglog import /var/lib/kafka/data/orders-0 orders --create",
		Flags: slices.Concat([]cli.Flag{
			&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "append to partition `P`", DefaultText: "0, when the topic has one partition"},
			&cli.BoolFlag{Name: "create", Usage: "create the topic if it does not exist"},
			&cli.IntFlag{Name: "partitions", Value: 1, Usage: "with --create: number of partitions `N`"},
			importTimestamps.flag("timestamps", "now", "`WHEN` records are stamped"),
			isolationFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON"},
		}, writerFlags(), segmentFlags()),
		Action: func(c *cli.Context) error {
			o, err := parseImportOptions(c)
			if err != nil {
				return err
			}
			return runImport(envFrom(c), o)
		},
	}
}

// importTimestamps are the values of import --timestamps: whether records
// get their .store file's modification time.
var importTimestamps = choices[bool]{
	{"now", false, "the time of import"},
	{"mtime", true, "their .store file's modification time"},
}

func parseImportOptions(c *cli.Context) (importOptions, error) {
	o := importOptions{partition: c.Int("partition"), json: c.Bool("json")}
	if c.NArg() != 2 {
		return o, usagef("import: DIR and TOPIC expected, got %d %s (see 'seglog import --help')", c.NArg(), dumpIndexPlural(int64(c.NArg()), "argument", "arguments"))
	}
	o.dir, o.topic = c.Args().Get(0), c.Args().Get(1)
	if err := checkTopicName(o.topic); err != nil {
		return o, err
	}
	o.target = appendTarget{topic: o.topic, create: c.Bool("create"), partitions: c.Int("partitions"), partitionsGiven: c.IsSet("partitions")}
	switch n := o.target.partitions; {
	case c.IsSet("partition") && o.partition < 0:
		return o, usagef("--partition must be 0 or more, not %d", o.partition)
	case c.IsSet("partitions") && !o.target.create:
		return o, usagef("--partitions only goes with --create")
	case n < 1 || n > logstore.MaxPartitions:
		return o, usagef("--partitions must be between 1 and %d, not %d", logstore.MaxPartitions, n)
	}
	var err error
	if o.mtime, err = parseChoice(c, "timestamps", importTimestamps); err != nil {
		return o, err
	}
	o.kafkaNow = c.IsSet("timestamps") && !o.mtime
	if o.committed, err = parseChoice(c, "isolation", isolationLevels); err != nil {
		return o, err
	}
	if o.settings, err = segmentSettings(c); err != nil {
		return o, err
	}
	o.target.settings = o.settings
	o.sync, o.lockWait, err = writerOptionsFrom(c)
	return o, err
}

// importSource checks that DIR is a simple log or an Apache Kafka
// partition and opens it: one of the two logs is set.
func importSource(arg string) (*logstore.SimpleLog, *logstore.KafkaPartition, string, error) {
	dir := filepath.Clean(arg)
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, nil, dir, fmt.Errorf("import from %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, nil, dir, fmt.Errorf("import from %s: not a directory (name the directory holding the .store and .index files, or an Apache Kafka partition directory)", dir)
	}
	layout, err := logstore.DetectLayout(dir)
	switch {
	case err != nil:
		return nil, nil, dir, err
	case layout == logstore.LayoutKafka:
		l, err := openLog(layout, dir, dir, false, nil)
		if err != nil {
			return nil, nil, dir, err
		}
		return nil, l.(*logstore.KafkaPartition), dir, nil
	case layout == logstore.LayoutSeglog:
		return nil, nil, dir, fmt.Errorf("import from %s: it holds seglog segments, not the simple store/index layout (use copy-partition, or read --format json | append --input json)", dir)
	case layout != logstore.LayoutSimple:
		return nil, nil, dir, fmt.Errorf("import from %s: no <base>.store files or Apache Kafka segments: not a log import reads", dir)
	}
	l, err := openSimple(dir)
	return l, nil, dir, err
}

// importSummary is what import did; --json prints it as is.
type importSummary struct {
	Source            string  `json:"source"`
	Segments          int     `json:"segments"`
	Records           uint64  `json:"records"`
	Bytes             int64   `json:"bytes"`
	FirstSourceOffset *uint64 `json:"first_source_offset"`
	LastSourceOffset  *uint64 `json:"last_source_offset"`
	Topic             string  `json:"topic"`
	Partition         int     `json:"partition"`
	FirstOffset       *uint64 `json:"first_offset"`
	LastOffset        *uint64 `json:"last_offset"`
	TornTailBytes     int64   `json:"torn_tail_bytes"`
	Complete          bool    `json:"complete"`
}

func runImport(e *env, o importOptions) error {
	// DIR is checked first: a wrong path must not create the topic.
	l, kp, dir, err := importSource(o.dir)
	if err != nil {
		return err
	}
	if kp != nil {
		defer kp.Close()
		if o.mtime {
			return usagef("--timestamps mtime: %s is an Apache Kafka partition, whose records have timestamps of their own (the default), or --timestamps now", dir)
		}
	}
	store := logstore.Open(e.dataDir)
	p := o.partition
	_, err = openTopicForAppend(e, store, o.target, func(partitions int, exists bool) error {
		switch {
		case p < 0 && partitions > 1:
			what := fmt.Sprintf("topic %s has", o.topic)
			if !exists {
				what = "--create would make"
			}
			return usagef("%s %d partitions: name the one to import into with --partition 0..%d (records keep their order only within one)",
				what, partitions, partitions-1)
		case p >= partitions:
			return partitionOutside(o.topic, p, partitions, exists)
		}
		return nil
	})
	if err != nil {
		return err
	}
	p = max(p, 0)
	if sameDir(dir, store.PartitionDir(o.topic, p)) {
		return fmt.Errorf("import from %s: that is the destination partition's own directory; seglog never writes into a simple log's directory", dir)
	}
	w, err := store.OpenWriter(o.topic, p, logstore.WriterOptions{SegmentBytes: o.settings.SegmentBytes, IndexInterval: o.settings.IndexInterval,
		RollAfter: o.settings.RollAfter, Sync: o.sync, LockWait: o.lockWait, Warn: func(m string) { e.warn("%s", m) }})
	if err != nil {
		return lockAdvice(err, o.lockWait)
	}
	sum := importSummary{Source: dir, Topic: o.topic, Partition: p}
	var ierr error
	if kp != nil {
		ierr = importKafkaRecords(e, kp, w, o, &sum)
	} else {
		ierr = importRecords(e, l, w, o, &sum)
	}
	if cerr := w.Close(); ierr == nil {
		ierr = cerr
	}
	sum.Complete = ierr == nil
	if err := writeImportSummary(e, o, &sum); err != nil && ierr == nil {
		ierr = err
	}
	if ierr != nil && sum.Records > 0 {
		return fmt.Errorf("%w; %d %s imported before that (source offsets %d..%d, now %s/%d offsets %d..%d) stay",
			ierr, sum.Records, dumpIndexPlural(int64(sum.Records), "record was", "records were"), *sum.FirstSourceOffset, *sum.LastSourceOffset,
			o.topic, p, *sum.FirstOffset, *sum.LastOffset)
	}
	if ierr != nil {
		return fmt.Errorf("%w; no records were imported", ierr)
	}
	if l != nil {
		importNotes(e, l, dir)
	}
	return nil
}

// sameDir reports whether a and b are one directory.
func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// importRecords appends every record of l to w, until the end, an error
// or a signal.
func importRecords(e *env, l *logstore.SimpleLog, w *logstore.Writer, o importOptions, sum *importSummary) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var clock logstore.RunClock
	var store string // the .store of the last record
	var ts int64     // the clock reading for its records
	it := l.Read(0)
	defer it.Close()
	for it.Next() {
		if ctx.Err() != nil {
			return errors.New("interrupted")
		}
		r := it.Record()
		if r.Store != store {
			store, ts = r.Store, time.Now().UnixNano()
			sum.Segments++
			if o.mtime {
				fi, err := os.Stat(r.Store)
				if err != nil {
					return err
				}
				ts = fi.ModTime().UnixNano()
			}
		}
		off, err := w.Append(clock.Stamp(ts, w), nil, r.Value)
		if err != nil {
			return err
		}
		if sum.Records == 0 {
			sum.FirstSourceOffset, sum.FirstOffset = ptr(r.Offset), ptr(off)
		}
		sum.LastSourceOffset, sum.LastOffset = ptr(r.Offset), ptr(off)
		sum.Records++
		sum.Bytes += int64(len(r.Value))
	}
	for _, t := range it.Tails() {
		sum.TornTailBytes += t.Bytes
		e.warn("skipped the %s", t)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("import stopped: %w", err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

func writeImportSummary(e *env, o importOptions, s *importSummary) error {
	if o.json {
		return writeJSONLine(e.stdout, s)
	}
	if e.quiet {
		return nil
	}
	rng := func(a, b *uint64) string {
		if a == nil {
			return "-"
		}
		return strconv.FormatUint(*a, 10) + ".." + strconv.FormatUint(*b, 10)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "imported %s into %s/%d\n", s.Source, s.Topic, s.Partition)
	err := renderTable(&b, []string{"SEGMENTS", "RECORDS", "BYTES", "SOURCE OFFSETS", "PARTITION", "OFFSETS"}, "SEGMENTS RECORDS BYTES PARTITION",
		[][]string{{strconv.Itoa(s.Segments), strconv.FormatUint(s.Records, 10), humanSize(s.Bytes), rng(s.FirstSourceOffset, s.LastSourceOffset),
			strconv.Itoa(s.Partition), rng(s.FirstOffset, s.LastOffset)}})
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(b.Bytes())
	return err
}

// importNotes tells, on stderr, what else a check of the source finds:
// its indexes (only hints: nothing imported depended on them), gaps and
// overlaps between its segments.
func importNotes(e *env, l *logstore.SimpleLog, dir string) {
	if e.quiet {
		return
	}
	counts := map[logstore.FindingKind]int{}
	var kinds []logstore.FindingKind
	_, err := l.Verify(0, 1, logstore.VerifyOptions{Finding: func(f logstore.Finding) error {
		switch f.Kind {
		case logstore.FindingIncompleteTail, logstore.FindingCorruptRecord, logstore.FindingNoSegments:
			return nil // torn records were warned about; damage stops the import
		case logstore.FindingGap, logstore.FindingOverlap, logstore.FindingOrphanIndex:
			e.warn("%s: %s", f.Path, f.Reason) // records lost or doubled in the source
			return nil
		}
		if counts[f.Kind] == 0 {
			kinds = append(kinds, f.Kind)
		}
		counts[f.Kind]++
		return nil
	}})
	if err != nil {
		return
	}
	for _, k := range kinds {
		e.info("seglog: note: %s: %d %s ('seglog verify-crc %s' lists them)", dir, counts[k], importNoteWhat(k, counts[k]), dir)
	}
}

// importNoteWhat says in words what index findings of kind k are.
func importNoteWhat(k logstore.FindingKind, n int) string {
	entries := dumpIndexPlural(int64(n), "index entry", "index entries")
	switch k {
	case logstore.FindingIndexStale:
		return entries + " past the store's end (lost from the store's buffer in a crash)"
	case logstore.FindingIndexPadding:
		return dumpIndexPlural(int64(n), "run", "runs") + " of zero padding (an index not closed cleanly)"
	case logstore.FindingIndexMismatch, logstore.FindingIndexNoRecord, logstore.FindingIndexOrder:
		return entries + " that point at the wrong place"
	case logstore.FindingIndexMissing, logstore.FindingIndexShort, logstore.FindingIndexPartial:
		return dumpIndexPlural(int64(n), "index missing or short", "indexes missing or short")
	}
	return fmt.Sprintf("%s %s", k, dumpIndexPlural(int64(n), "finding", "findings"))
}
