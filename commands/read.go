package commands

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

type readOptions struct {
	topic       string // or a partition directory, when it holds a '/'
	partition   int    // -1: all
	offset      offsetSpec
	since       *int64 // Unix ns; nil: not given
	until       *int64
	key         []byte // nil: any
	count       int64  // -1: no limit
	format      outputFormat
	template    template
	delim       []byte // --delimiter; nil: a newline
	skipCorrupt bool
	merge       bool // --merge: partitions merged by timestamp, not one after another
	group       groupOptions
	explicit    bool // --offset or --since given: they win over the group's positions
	committed   bool // --isolation read_committed: no records of aborted or open Kafka transactions
}

func readCommand() *cli.Command {
	return &cli.Command{
		Name:      "read",
		Usage:     "print a topic's records",
		ArgsUsage: "TOPIC|PARTITION-DIR|SEGMENT.log",
		Description: "Only reads (but --group keeps its positions, see below): prints records from\n" +
			"the given offset or time to the end of the log as it was when read started,\n" +
			"partition 0 first; --offset N reads each partition that holds offset N from there\n" +
			"and names on stderr those it skips (and their ranges). A TOPIC containing '/' names\n" +
			"a directory directly (a copy, a backup): a partition directory (one holding segment\n" +
			"files), a topic directory (its partitions, as for a TOPIC) or a log in the simple\n" +
			"store/index layout (see 'seglog import'), whose records have no key, timestamp or\n" +
			"CRC: json gives null for them, dump '-', and %T and %c print nothing; a directory\n" +
			"holding none of them is an error. It may also name a lone segment file, a .log\n" +
			"(with its .index and .timeindex beside it, if there): read as the active segment of\n" +
			"a partition of its own, so its tail may be incomplete rather than corrupt; its base\n" +
			"offset is its name's, or its first record's for a file named otherwise.\n\n" +
			"--merge prints the partitions' records in timestamp order instead, ties by partition\n" +
			"then offset, as a consumer of all of them sees them (and tail prints them), with\n" +
			"every other flag; one record a partition is held at a time. --group commits each\n" +
			"partition's position after its last record printed.\n\n" +
			"Exits 1 on a corrupt record, after printing the records before it, unless\n" +
			"--skip-corrupt: then a warning, and reading goes on where valid data resumes (the\n" +
			"rule every command shares: records after skipped offsets keep their offsets, a\n" +
			"damaged record's bytes are never read as records); --format dump shows each\n" +
			"damaged record too, marked BAD with its stored and computed CRC. A stdout pipe\n" +
			"losing its reader stops read between records, with status 0.\n\n" +
			"--group NAME resumes each partition where the last read or tail with that group\n" +
			"stopped (the committed position; a partition never committed starts where it would\n" +
			"without a group) and commits, at least every second and at the end, the position\n" +
			"after the last record written to stdout: at least once, never a record skipped.\n" +
			"Positions are kept in <data-dir>/.groups/NAME/, the only files read changes. An\n" +
			"explicit --offset or --since wins over the committed position, and the group goes\n" +
			"on from there. A position that retention removed resumes at the partition's start\n" +
			"with a warning. One reader per group at a time: another one fails after 2 s, or\n" +
			"waits with --wait / --wait-timeout. With a group, SIGINT and SIGTERM stop reading\n" +
			"between records: what was printed is committed, and the exit status is 0. Records\n" +
			"written into a pipe count as printed, so use --count rather than '| head'.\n\n" +
			"Times are RFC 3339 (2024-05-01T12:00:00Z), a date (2024-05-01, midnight UTC), @MS\n" +
			"(Unix epoch milliseconds) or a duration meaning that long ago (2h, 7d, 2w3d); a\n" +
			"bare number is refused. --until +D is D after --since (rpk's @T:+D); --offset s@MS\n" +
			"and e@MS (kcat's) stand for --since @MS and --until @MS. A --since after --until\n" +
			"is a usage error. A record's time is the newest timestamp up to it in its\n" +
			"partition, as in Kafka. --since finds it by binary search; where timestamps go back\n" +
			"(verify-crc notes it), it scans only when what it reads goes back, and may\n" +
			"otherwise start late.\n" +
			"--template tokens: %t topic, %p partition, %o offset, %k key, %s value, %T timestamp\n" +
			"(ms), %K key length, %S value length, %b byte position, %c crc, %% a percent sign;\n" +
			"escapes \\n \\t \\r \\0 \\\\ \\xNN, as --delimiter's. No newline is added. --delimiter\n" +
			"(-D) SEP ends each record of --format value with SEP instead of a newline: -D '\\0'\n" +
			"reverses 'seglog append --null'.\n\n" +
			"Apache Kafka's own log directories are read the same way, never written: a broker's\n" +
			"log directory given with -d (topics by name), or a TOPIC-N partition directory or a\n" +
			"segment .log of Kafka's by path (told from seglog's by their contents).\n\n" +
			"Examples:\n" +
			"  seglog read orders\n" +
			"  seglog read orders --partition 2 --offset -10 --format json\n" +
			"  seglog read orders --since 2h --until 1h --key user-1\n" +
			"  seglog read orders --since 2026-12-01 --until +1w\n" +
			"  seglog read orders --offset s@1764547200000\n" +
			"  seglog read orders --format dump --skip-corrupt\n" +
			"  seglog read orders --group billing --count 1000\n" +
			"  seglog read orders --merge --since 1h --format json\n" +
			"  seglog read orders -D '\\0' | seglog append orders-copy --create --null\n" +
			"  seglog read orders --template '%p/%o %k=%s\\n'\n" +
			"  seglog read ./backup/data/orders/0 --format json | seglog append orders --input json\n" +
			"  seglog read ./rescue/00000000000000000000.log --format dump --skip-corrupt",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "read only partition `P`", DefaultText: "all, partition 0 first"},
			&cli.StringFlag{Name: "offset", Aliases: []string{"o"}, Value: "beginning", Usage: "start at offset `N` (in each partition holding it), the last -N of each partition, beginning or end"},
			&cli.StringFlag{Name: "since", Usage: "start at the first record at or after `TIME` (with --offset: whichever comes later)"},
			&cli.StringFlag{Name: "until", Usage: "stop before the first record after `TIME`"},
			&cli.StringFlag{Name: "key", Aliases: []string{"k"}, Usage: "print only records with key `K`"},
			&cli.Int64Flag{Name: "count", Aliases: []string{"c"}, Value: -1, Usage: "stop after `N` records in all", DefaultText: "no limit"},
			formatFlag(),
			&cli.StringFlag{Name: "delimiter", Aliases: []string{"D"}, Usage: "with --format value: end each record with `SEP` instead of a newline (escapes \\n \\t \\r \\0 \\\\ \\xNN, as append's)"},
			&cli.StringFlag{Name: "template", Aliases: []string{"t"}, Usage: "print each record as `FMT` (kcat style, see above)"},
			&cli.BoolFlag{Name: "merge", Aliases: []string{"m"}, Usage: "print the partitions' records in timestamp order, ties by partition then offset, instead of partition by partition"},
			&cli.BoolFlag{Name: "skip-corrupt", Usage: "warn about a corrupt record and go on after it instead of failing"},
			isolationFlag(),
		}, groupFlags()...),
		Action: func(c *cli.Context) error {
			o, err := parseReadOptions(c, time.Now())
			if err != nil {
				return err
			}
			return runRead(envFrom(c), o)
		},
	}
}

func parseReadOptions(c *cli.Context, now time.Time) (readOptions, error) {
	topic, err := targetArg(c)
	if err != nil {
		return readOptions{}, err
	}
	o := readOptions{topic: topic, partition: c.Int("partition"), count: c.Int64("count"), skipCorrupt: c.Bool("skip-corrupt"), merge: c.Bool("merge")}
	if o.committed, err = parseChoice(c, "isolation", isolationLevels); err != nil {
		return o, err
	}
	if c.IsSet("partition") && o.partition < 0 {
		return o, usagef("--partition must be 0 or more, not %d", o.partition)
	}
	if c.IsSet("count") && o.count < 0 {
		return o, usagef("--count must be 0 or more, not %d", o.count)
	}
	if o.format, o.template, err = outputFlags(c); err != nil {
		return o, err
	}
	if c.IsSet("delimiter") {
		if o.format != formatValue {
			return o, usagef("--delimiter goes with --format value only: --template says itself where records end, and the other formats end them with a newline")
		}
		if o.delim, err = unescape(c.String("delimiter")); err != nil || len(o.delim) == 0 {
			return o, usagef("--delimiter: %s", orEmpty(err))
		}
	}
	if c.IsSet("key") {
		o.key = []byte(c.String("key"))
	}
	offset, err := parseWindow(c, now, &o)
	if err != nil {
		return o, err
	}
	if o.offset, err = parseOffset(offset); err != nil {
		return o, err
	}
	if o.group, err = parseGroupOptions(c); err != nil {
		return o, err
	}
	if o.group.name != "" && strings.Contains(o.topic, "/") {
		return o, usagef("--group needs a TOPIC, not a partition directory (%s)", o.topic)
	}
	return o, nil
}

// parseWindow sets o.since, o.until and o.explicit from --since, --until
// and kcat's --offset s@MS and e@MS, which stand for --since @MS and
// --until @MS; it returns the --offset left to parse. --until +D is D
// after --since, as rpk's @T:+D. A window ending before it starts holds
// no record: a usage error rather than a read printing nothing.
func parseWindow(c *cli.Context, now time.Time, o *readOptions) (offset string, err error) {
	offset = c.String("offset")
	text := map[string]string{}
	flag := map[string]string{"since": "--since", "until": "--until"}
	shown := map[string]string{} // as typed, for messages
	for name := range flag {
		if c.IsSet(name) {
			text[name] = c.String(name)
			shown[name] = flag[name] + " " + text[name]
		}
	}
	for prefix, name := range map[string]string{"s@": "since", "e@": "until"} {
		ms, ok := strings.CutPrefix(offset, prefix)
		if !ok {
			continue
		}
		if _, both := text[name]; both {
			return "", usagef("--offset %s and --%s exclude each other: give the time once", offset, name)
		}
		shown[name] = "--offset " + offset
		text[name], flag[name], offset = "@"+ms, "--offset", "beginning"
	}
	var since, until time.Time
	if s, ok := text["since"]; ok {
		if since, err = parseTime(s, now); err != nil {
			return "", usagef("%s: %v", flag["since"], err)
		}
		o.since = new(int64)
		*o.since = unixNanoClamped(since)
	}
	// An --offset that is an offset, or a --since, wins over a group's
	// positions.
	o.explicit = o.since != nil || c.IsSet("offset") && offset == c.String("offset")
	u, ok := text["until"]
	if !ok {
		return offset, nil
	}
	if after, relative := strings.CutPrefix(u, "+"); relative {
		if o.since == nil {
			return "", usagef("--until %s is a time after --since: give --since too", u)
		}
		d, err := parseDuration(after)
		if err != nil {
			return "", usagef("--until: %v", err)
		}
		until = since.Add(d)
	} else if until, err = parseTime(u, now); err != nil {
		return "", usagef("%s: %v", flag["until"], err)
	}
	o.until = new(int64)
	*o.until = unixNanoClamped(until)
	if o.since != nil && *o.since > *o.until {
		return "", usagef("%s (%s) is after %s (%s): no record is in that window; --since is the earlier time",
			shown["since"], since.UTC().Format(time.RFC3339Nano), shown["until"], until.UTC().Format(time.RFC3339Nano))
	}
	return offset, nil
}

// errStopped ends a read stopped by a signal (with --group) or by stdout
// losing its reader: what was printed is committed and the exit status is
// 0.
var errStopped = errors.New("stopped")

func runRead(e *env, o readOptions) error {
	refs, err := readTargets(e, o.topic, o.partition)
	if err != nil {
		return err
	}
	if err := checkLayoutRead(o, refs[0]); err != nil {
		return err
	}
	return readRefs(e, o, refs)
}

// readRefs prints the records of refs, partition by partition, up to
// o.count in all.
func readRefs(e *env, o readOptions, refs []partitionRef) (err error) {
	gt, err := openGroupTracker(e, o.group, o.topic, o.explicit, e.stdout, 256<<10)
	if err != nil {
		return err
	}
	defer func() { err = gt.finish(err) }()
	// A signal (with a group) or stdout losing its reader ends the read
	// between records.
	stop := new(atomic.Bool)
	if gt.grouped() {
		defer stopOnSignal(stop)()
	}
	defer watchOutput(e.stdout, stop).stop()
	var skip map[int]bool
	if o.offset.kind == "at" && len(refs) > 1 {
		if skip, err = partitionsWithout(e, refs, o.offset.n); err != nil {
			return err
		}
	}
	if o.merge && len(refs) > 1 {
		if err := readMerged(e, gt, stop, refs, o, skip); err != nil && !errors.Is(err, errStopped) {
			return corruptAdvice(err, o.topic)
		}
		return nil
	}
	left := o.count
	for _, ref := range refs {
		if left == 0 {
			break
		}
		if skip[ref.partition] {
			continue
		}
		n, err := readPartition(e, gt, stop, ref, o, left)
		if errors.Is(err, errStopped) {
			return nil
		}
		if err != nil {
			return corruptAdvice(err, o.topic)
		}
		if left > 0 {
			left -= n
		}
	}
	return nil
}

// offsetRange is a partition's bounds, for messages.
type offsetRange struct {
	partition   int
	start, next uint64
}

// partitionsWithout finds the partitions that do not hold offset n, for
// read --offset N over several partitions: those are skipped, with a
// warning naming them and their ranges, and the others are read from n.
// When none holds it, the error names every partition's range.
func partitionsWithout(e *env, refs []partitionRef, n uint64) (map[int]bool, error) {
	var without []offsetRange
	for _, ref := range refs {
		l, err := ref.openLog()
		if err != nil {
			return nil, err
		}
		_, _, err = offsetSpec{kind: "at", n: n}.startIn(l)
		l.Close()
		var out *logstore.OffsetRangeError
		if errors.As(err, &out) {
			without = append(without, offsetRange{ref.partition, out.Start, out.Next})
		} else if err != nil {
			return nil, err
		}
	}
	topic := refs[0].topic
	if len(without) == len(refs) {
		return nil, fmt.Errorf("offset %d out of range for every partition of %s: partitions %s", n, topic, rangesText(without))
	}
	if len(without) > 0 {
		e.warn("offset %d is not in partition%s %s of %s: reading the others from it", n, plural(len(without)), rangesText(without), topic)
	}
	skip := make(map[int]bool, len(without))
	for _, r := range without {
		skip[r.partition] = true
	}
	return skip, nil
}

// rangesText lists partitions' ranges, partitions in a row with the same
// bounds as one: "0 (0..9), 1-3 (no records, next offset 0)".
func rangesText(rs []offsetRange) string {
	var b strings.Builder
	for i := 0; i < len(rs); {
		j := i + 1
		for j < len(rs) && rs[j].partition == rs[j-1].partition+1 && rs[j].start == rs[i].start && rs[j].next == rs[i].next {
			j++
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(rs[i].partition))
		if j-i > 1 {
			fmt.Fprintf(&b, "-%d", rs[j-1].partition)
		}
		if r := rs[i]; r.start == r.next {
			fmt.Fprintf(&b, " (no records, next offset %d)", r.next)
		} else {
			fmt.Fprintf(&b, " (%d..%d)", r.start, r.next-1)
		}
		i = j
	}
	return b.String()
}

// stopOnSignal makes the first SIGINT or SIGTERM set stop instead of
// killing the process, so that a --group read can end between records
// and commit what it printed. A second signal kills as usual (a reader
// blocked on a full pipe never gets between records). release undoes it.
func stopOnSignal(stop *atomic.Bool) (release func()) {
	sigs := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-sigs:
			stop.Store(true)
			signal.Stop(sigs)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// readPartition prints up to limit records (-1: all) of one partition and
// returns how many it printed. stop, once set, ends it between records
// with errStopped.
func readPartition(e *env, gt *groupTracker, stop *atomic.Bool, ref partitionRef, o readOptions, limit int64) (int64, error) {
	pr, err := openPartitionReader(e, gt, ref, &o)
	if err != nil || pr == nil {
		return 0, err
	}
	defer pr.close()
	var n int64
	for limit < 0 || n < limit {
		if stop.Load() {
			return n, errStopped
		}
		if err := gt.maybeCommit(); err != nil {
			return n, err
		}
		if _, ok, err := pr.next(); err != nil || !ok {
			return n, err
		}
		if err := pr.print(); err != nil {
			return n, err
		}
		n++
	}
	return n, pr.end()
}

// readMerged prints the records of refs in timestamp order, ties by
// partition then offset (recordMerge, as tail -n prints them), up to
// o.count in all.
func readMerged(e *env, gt *groupTracker, stop *atomic.Bool, refs []partitionRef, o readOptions, skip map[int]bool) error {
	m := newRecordMerge[*partitionReader]()
	defer m.close()
	for _, ref := range refs {
		if skip[ref.partition] {
			continue
		}
		pr, err := openPartitionReader(e, gt, ref, &o)
		if err != nil {
			return err
		}
		if pr == nil {
			continue
		}
		if err := m.add(pr); err != nil {
			return err
		}
	}
	var n int64
	err := m.each(func() bool { return n == o.count || stop.Load() }, func(h *mergeHead[*partitionReader]) error {
		if err := gt.maybeCommit(); err != nil {
			return err
		}
		n++
		return h.src.print()
	})
	if err == nil && stop.Load() {
		return errStopped
	}
	return err
}

// partitionReader is one partition's records as read prints them: from
// where o says, past damage with --skip-corrupt, up to --until, of --key.
// It is a mergeSource for read --merge.
type partitionReader struct {
	e   *env
	gt  *groupTracker
	o   *readOptions
	ref partitionRef
	l   logstore.Log
	it  logstore.RecordIterator
	// seglogIt is it in a seglog partition: what only seglog's records
	// carry, their time, and damage to dump (checkLayoutRead refuses
	// --until elsewhere).
	seglogIt *logstore.Iterator
	rw       recordWriter
}

// openPartitionReader opens ref for reading; nil when o names nothing
// there.
func openPartitionReader(e *env, gt *groupTracker, ref partitionRef, o *readOptions) (_ *partitionReader, err error) {
	l, err := ref.openLog()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	warnReadingWithout(e, l)
	// Only a group needs the partition's whole extent (where it ends);
	// without one the start is found from what is read (offsetSpec.startIn).
	var ext logstore.Extent
	var from uint64
	var none bool
	if gt.grouped() {
		if ext, err = l.Extent(); err == nil {
			from, none, err = o.offset.start(l.Name(), ext, startOfLast(l))
		}
	} else {
		from, none, err = o.offset.startIn(l)
	}
	if err != nil {
		return nil, err
	}
	if none {
		l.Close()
		return nil, nil
	}
	if ext.Full {
		return nil, errFullPartition(l.Name(), "read --group")
	}
	it, err := readFrom(l, gt, ref, *o, from, ext)
	if err != nil {
		return nil, err
	}
	pr := &partitionReader{e: e, gt: gt, o: o, ref: ref, l: l, it: it,
		rw: recordWriter{out: gt.output(), format: o.format, template: o.template, delim: o.delim, topic: ref.topic, partition: ref.partition}}
	pr.seglogIt, _ = it.(*logstore.Iterator)
	if l.Layout().ValuesOnly() {
		pr.rw.printValuesOnly()
	}
	return pr, nil
}

// next moves to the next record to print and returns its key, or false at
// the end, with what ended it (end).
func (pr *partitionReader) next() (mergeKey, bool, error) {
	o := pr.o
	for {
		if !pr.it.Next() {
			var ce *logstore.CorruptionError
			if o.skipCorrupt && errors.As(pr.it.Err(), &ce) {
				pr.e.warn("skipping %s", errorLine(ce))
				more := pr.it.SkipCorrupt()
				if o.format == formatDump && pr.seglogIt != nil {
					if sk := pr.seglogIt.Skipped(); sk.Damage != nil && sk.Damage == ce.Damage {
						if err := writeDumpDamaged(pr.rw.out, sk, &pr.rw.times); err != nil {
							return mergeKey{}, false, err
						}
					}
				}
				if more {
					continue
				}
			}
			return mergeKey{}, false, pr.end()
		}
		r := pr.it.Record()
		if o.until != nil && kafkaRecord(r) && r.Timestamp > *o.until {
			return mergeKey{}, false, pr.end() // as kcat's -o e@: a Kafka record's own time
		}
		if o.until != nil && pr.seglogIt != nil {
			// A record's time is the running maximum of the partition's
			// timestamps up to it, from its start, not from where this
			// read started.
			t, err := pr.seglogIt.Time()
			if err != nil {
				return mergeKey{}, false, err
			}
			if t > *o.until {
				return mergeKey{}, false, pr.end()
			}
		}
		if o.key != nil && !bytes.Equal(r.Key, o.key) {
			pr.gt.advance(pr.ref.partition, r.Offset+1)
			continue
		}
		return keyOf(pr.ref.partition, r), true, nil
	}
}

// print prints the record next moved to, and notes it printed.
func (pr *partitionReader) print() error {
	r := pr.it.Record()
	if err := pr.rw.write(r); err != nil {
		return err
	}
	pr.gt.advance(pr.ref.partition, r.Offset+1)
	return nil
}

// end is what ended the partition's records, after warning of records a
// crash cut off.
func (pr *partitionReader) end() error {
	if err := warnTorn(pr.e, pr.rw.out, pr.it); err != nil {
		return err
	}
	return pr.it.Err()
}

func (pr *partitionReader) record() *logstore.Record { return pr.it.Record() }

// park lets go of the iterator's file and buffer while the merge reads
// other partitions: only a seglog partition's can (a topic's partitions
// all are).
func (pr *partitionReader) park() {
	if pr.seglogIt != nil {
		pr.seglogIt.Park()
	}
}

func (pr *partitionReader) close() {
	pr.it.Close()
	pr.l.Close()
}

// warnTorn warns, after what was printed, of the records cut off by a
// crash that it passed over, in a layout where any segment may end in one.
func warnTorn(e *env, out *bufio.Writer, it logstore.RecordIterator) error {
	tt, ok := it.(logstore.TornTails)
	if !ok || len(tt.Tails()) == 0 {
		return nil
	}
	if err := out.Flush(); err != nil {
		return err
	}
	for _, t := range tt.Tails() {
		e.warn("%s: not printed (what a crash leaves)", t)
	}
	return nil
}

// startOfLast is how offsetSpec finds where the last N records of l
// start: by the records themselves in a seglog partition, which may have
// holes; else from the offsets (nil).
func startOfLast(l logstore.Log) func(logstore.Extent, uint64) (uint64, error) {
	if p, ok := l.(*logstore.Partition); ok {
		return p.StartOfLast
	}
	return nil
}

// readFrom opens the iterator read starts with: at from, or with a group
// where it stopped, or with --since at the first record at or after that
// time; the last two only in a seglog partition (checkLayoutRead and
// --group's need of a TOPIC refuse them elsewhere).
func readFrom(l logstore.Log, gt *groupTracker, ref partitionRef, o readOptions, from uint64, ext logstore.Extent) (logstore.RecordIterator, error) {
	if kp, ok := l.(*logstore.KafkaPartition); ok {
		return readKafkaFrom(kp, o, from)
	}
	p, ok := l.(*logstore.Partition)
	if !ok {
		return l.Records(from)
	}
	var it *logstore.Iterator
	var err error
	switch {
	case gt.grouped():
		// The start must be an offset, to be committed even if nothing
		// follows it.
		if o.since != nil {
			var at uint64
			if at, err = p.OffsetAtTime(*o.since); err != nil {
				return nil, err
			}
			from = max(from, at)
		}
		it, err = p.Read(gt.start(ref.partition, from, ext.Start, ext.Next))
	case o.since != nil && o.offset.kind == "beginning":
		it, err = p.ReadAtTime(*o.since)
	case o.since != nil:
		var at uint64
		if at, err = p.OffsetAtTime(*o.since); err == nil {
			it, err = p.Read(max(from, at))
		}
	default:
		it, err = p.Read(from)
	}
	if err != nil {
		return nil, err
	}
	return it, nil
}
