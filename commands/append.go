package commands

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

type appendOptions struct {
	topic         string
	partition     int // -1: route by key / round-robin
	key           []byte
	keyDelim      []byte
	delim         []byte
	jsonInput     bool
	keepPartition bool
	restamp       bool // --timestamps now: the input's timestamps are not kept
	target        appendTarget
	settings      logstore.Settings // from flags; zero = topic's stored ones
	maxMessage    int
	sync          logstore.SyncMode
	lockWait      time.Duration
	jsonSummary   bool
	report        bool
}

func appendCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "append every record to partition `P`", DefaultText: "by key; round-robin for records without one"},
		&cli.StringFlag{Name: "key", Aliases: []string{"k"}, Usage: "give every record the key `K`"},
		&cli.StringFlag{Name: "key-delimiter", Aliases: []string{"K"}, Usage: "split each line at the first `SEP` into key and value"},
		&cli.StringFlag{Name: "delimiter", Aliases: []string{"D"}, Usage: "messages end with `D` (may be several bytes; escapes \\n \\t \\r \\0 \\\\ \\xNN) instead of a newline"},
		&cli.BoolFlag{Name: "null", Aliases: []string{"0"}, Usage: "messages end with a NUL byte"},
		appendInputs.flag("input", "lines", "`FORMAT` of stdin"),
		&cli.BoolFlag{Name: "keep-partition", Usage: "with --input json: append each record to the partition its line names"},
		appendTimestamps.flag("timestamps", "input", "with --input json, `WHEN` records are stamped"),
		&cli.BoolFlag{Name: "create", Usage: "create the topic if it does not exist"},
		&cli.IntFlag{Name: "partitions", Value: 1, Usage: "with --create: number of partitions `N`"},
		&cli.StringFlag{Name: "max-message-bytes", Value: "64MiB", Usage: "refuse a message longer than `SIZE`"},
		&cli.BoolFlag{Name: "json", Usage: "print the summary on stderr as JSON"},
		&cli.BoolFlag{Name: "report", Usage: "print \"PARTITION OFFSET\" on stdout for each record, in input order (line k for the k-th record read), " +
			"as soon as it and the records before it are durable: with --sync batch after its batch's fdatasync, exit after the fdatasync " +
			"at a roll or at exit (or once a million records wait), never once written to the OS (not durable). If stdout closes, append stops reading stdin"},
	}
	return &cli.Command{
		Name:      "append",
		Usage:     "append records read from stdin to a topic",
		ArgsUsage: "TOPIC",
		Description: "Changes files: appends one record per line of stdin (or per delimiter) to TOPIC,\n" +
			"holding each partition's writer lock for as long as it runs, and the segment files of\n" +
			"at most 64 partitions at a time (others are synced and closed until written again).\n" +
			"Records with a key go to partition FNV-1a(key) % N, others round-robin. Each record is\n" +
			"stamped with the clock, at least a nanosecond after the record before it in the run (in\n" +
			"any partition) and never below its partition's last timestamp.\n\n" +
			"--input json takes exactly the lines 'read --format json' prints (lower-case fields,\n" +
			"each once; keys and values valid UTF-8, or in key_base64/value_base64; anything else\n" +
			"fails naming the line) and keeps their timestamps, raised to the partition's newest\n" +
			"when older.\n\n" +
			"Prints a summary on stderr. On Ctrl-C or SIGTERM it writes and syncs every record it\n" +
			"has read, then exits 0; an unfinished last line (or JSON object) is a record only at\n" +
			"the real end of input, so there it is dropped with a warning.\n\n" +
			"Examples:\n" +
			"  seglog append app-logs < app.log\n" +
			"  tail -F /var/log/app.log | seglog append app-logs --create\n" +
			"  seglog append users --key-delimiter : <<< 'user-1:hello'\n" +
			"  seglog read orders --format json | seglog -d ./backup/data append orders --input json",
		Flags: slices.Concat(flags, writerFlags(), segmentFlags()),
		Action: func(c *cli.Context) error {
			o, err := parseAppendOptions(c)
			if err != nil {
				return err
			}
			return runAppend(envFrom(c), o)
		},
	}
}

// appendInputs are the values of append --input: whether stdin is JSON.
var appendInputs = choices[bool]{
	{"lines", false, ""},
	{"json", true, "what 'read --format json' prints"},
}

// appendTimestamps are the values of append --timestamps: whether the
// input's timestamps are dropped.
var appendTimestamps = choices[bool]{
	{"input", false, "keep each line's timestamp_ns or timestamp, raised to the partition's newest if older; a line without one is stamped now"},
	{"now", true, "the time of append, as for lines"},
}

func parseAppendOptions(c *cli.Context) (appendOptions, error) {
	topic, err := topicArg(c)
	if err != nil {
		return appendOptions{}, err
	}
	o := appendOptions{topic: topic, partition: c.Int("partition"), keepPartition: c.Bool("keep-partition"), jsonSummary: c.Bool("json"),
		report: c.Bool("report"), delim: []byte{'\n'}}
	o.target = appendTarget{topic: topic, create: c.Bool("create"), partitions: c.Int("partitions"), partitionsGiven: c.IsSet("partitions")}
	if c.IsSet("partition") && o.partition < 0 {
		return o, usagef("--partition must be 0 or more, not %d", o.partition)
	}
	if c.IsSet("partitions") && !o.target.create {
		return o, usagef("--partitions only goes with --create")
	}
	if n := o.target.partitions; n < 1 || n > logstore.MaxPartitions {
		return o, usagef("--partitions must be between 1 and %d, not %d", logstore.MaxPartitions, n)
	}
	if o.jsonInput, err = parseChoice(c, "input", appendInputs); err != nil {
		return o, err
	}
	if o.jsonInput {
		for _, f := range []string{"key", "key-delimiter", "delimiter", "null"} {
			if c.IsSet(f) {
				return o, usagef("--%s does not go with --input json", f)
			}
		}
	}
	if o.keepPartition && !o.jsonInput {
		return o, usagef("--keep-partition only goes with --input json")
	}
	if o.restamp, err = parseChoice(c, "timestamps", appendTimestamps); err != nil {
		return o, err
	}
	if c.IsSet("timestamps") && !o.jsonInput {
		return o, usagef("--timestamps only goes with --input json: lines bring no timestamps")
	}
	if o.keepPartition && c.IsSet("partition") {
		return o, usagef("--keep-partition and --partition exclude each other")
	}
	if c.IsSet("key") && c.IsSet("key-delimiter") {
		return o, usagef("--key and --key-delimiter exclude each other")
	}
	if c.IsSet("delimiter") && c.Bool("null") {
		return o, usagef("--delimiter and --null exclude each other")
	}
	o.key = []byte(c.String("key"))
	if c.IsSet("key-delimiter") {
		if o.keyDelim, err = unescape(c.String("key-delimiter")); err != nil || len(o.keyDelim) == 0 {
			return o, usagef("--key-delimiter: %s", orEmpty(err))
		}
	}
	if c.IsSet("delimiter") {
		if o.delim, err = unescape(c.String("delimiter")); err != nil || len(o.delim) == 0 {
			return o, usagef("--delimiter: %s", orEmpty(err))
		}
	}
	if c.Bool("null") {
		o.delim = []byte{0}
	}
	if o.settings, err = segmentSettings(c); err != nil {
		return o, err
	}
	o.target.settings = o.settings
	maxMessage, err := parseSize(c.String("max-message-bytes"))
	if err != nil {
		return o, usagef("--max-message-bytes: %v", err)
	}
	if maxMessage < 1 || maxMessage > 1<<31 {
		return o, usagef("--max-message-bytes must be between 1 byte and 2GiB, not %s", c.String("max-message-bytes"))
	}
	o.maxMessage = int(maxMessage)
	o.sync, o.lockWait, err = writerOptionsFrom(c)
	return o, err
}

func orEmpty(err error) string {
	if err == nil {
		return "must not be empty"
	}
	return err.Error()
}

// appender routes messages from stdin to the topic's partition writers.
type appender struct {
	e       *env
	o       appendOptions
	topic   *logstore.Topic
	writers []*logstore.Writer // by partition; nil where not locked
	parts   []partState        // by partition
	// The partitions whose writers hold their segment files open, at most
	// maxOpenWriters, and a count of records for telling when each was
	// used last.
	open     []int
	uses     uint64
	buffered int // bytes of records and index entries buffered since all were written
	rr       int // next partition for keyless records
	framer   framer
	ts       int64 // clock reading for the current chunk
	clock    logstore.RunClock
	json     jsonDecoder
	raised   int64 // input timestamps raised to their partition's newest
	// A bar when stdin is a regular file: size bytes to read, read so far.
	bar        *progressBar
	read, size int64
	// With --report: the records waiting to be reported, in input order;
	// reportErr is the write to stdout that failed, ending the run.
	unreported reportQueue
	reportBuf  []byte
	reportErr  error
}

// partState is what the appender keeps of each partition.
type partState struct {
	opened    bool   // the writer's segment is open (from its first record)
	filesOpen bool   // the writer holds its files open: in appender.open
	first     uint64 // the writer's next offset when opened
	reported  uint64 // with --report: offsets below it are printed
	lastUse   uint64
}

func runAppend(e *env, o appendOptions) error {
	store := logstore.Open(e.dataDir)
	topic, err := openTopicForAppend(e, store, o.target, func(partitions int, exists bool) error {
		if o.partition >= partitions {
			return partitionOutside(o.topic, o.partition, partitions, exists)
		}
		return nil
	})
	if err != nil {
		return err
	}
	n := topic.Partitions
	a := &appender{e: e, o: o, topic: topic, writers: make([]*logstore.Writer, n), parts: make([]partState, n), rr: rand.IntN(n)}
	a.framer = framer{delim: o.delim, stripCR: string(o.delim) == "\n", max: o.maxMessage}
	if o.jsonInput {
		// A JSON line is longer than the message it holds: base64 or \u
		// escapes can make it up to six times longer.
		a.framer.max = 6*o.maxMessage + 4096
	}
	// Take every partition's lock before reading anything, so a second
	// appender fails at once rather than when its first record arrives;
	// the segments are opened as records come.
	a.bar, a.size = newProgressBar(e, "append"), stdinSize(e.stdin)
	wopts := logstore.WriterOptions{SegmentBytes: o.settings.SegmentBytes, IndexInterval: o.settings.IndexInterval,
		RollAfter: o.settings.RollAfter, Sync: o.sync, LockWait: o.lockWait, Warn: func(m string) { a.bar.clear(); e.warn("%s", m) }}
	for p := range a.writers {
		if o.partition >= 0 && p != o.partition {
			continue
		}
		w, err := store.LockWriter(topic, p, wopts)
		if err != nil {
			a.closeWriters()
			return lockAdvice(err, o.lockWait)
		}
		a.writers[p] = w
	}
	err = a.pump()
	if cerr := a.closeWriters(); err == nil {
		err = cerr
	}
	a.bar.finish()
	if a.raised > 0 {
		e.warn("the timestamps of %d record%s were older than their partition's newest and were raised to it, so that its time index stays sorted "+
			"(--timestamps now stamps every record with the time of append)", a.raised, plural(int(a.raised)))
	}
	a.summary(err != nil)
	return err
}

// stdinSize is how many bytes are left to read on stdin when it is a
// regular file, for a progress bar; 0 when unknown (a pipe, a terminal).
func stdinSize(in io.Reader) int64 {
	f, ok := in.(*os.File)
	if !ok {
		return 0
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0
	}
	return max(fi.Size()-pos, 0)
}

const readSize = 1 << 20

// pump feeds stdin to the writers until EOF, an error or a signal. Stdin is
// read in its own goroutine, so encoding overlaps reading and a signal is
// seen while a read blocks. Whenever no input is waiting, everything
// buffered is written, so followers see records within moments.
func (a *appender) pump() error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	free := make(chan []byte, 2)
	free <- make([]byte, readSize)
	free <- make([]byte, readSize)
	chunks := make(chan readResult, 1)
	var state atomic.Int32
	go readInput(a.e.stdin, free, chunks, done, &state)

	for {
		var r readResult
		select {
		case r = <-chunks:
		case sig := <-sigs:
			return a.stopped(sig, chunks, &state)
		default:
			if err := a.flush(); err != nil {
				return err
			}
			select {
			case r = <-chunks:
			case sig := <-sigs:
				return a.stopped(sig, chunks, &state)
			}
		}
		// One clock reading per chunk: a time.Now per record would cost
		// more than encoding it. The run's clock steps them apart.
		a.ts = time.Now().UnixNano()
		if err := a.framer.feed(r.buf, a.add); err != nil {
			return err
		}
		if a.read += int64(len(r.buf)); a.size > 0 {
			a.bar.update(a.read, max(a.size, a.read))
		}
		free <- r.buf[:cap(r.buf)]
		if errors.Is(r.err, io.EOF) {
			return a.framer.finish(a.add)
		}
		if r.err != nil {
			return fmt.Errorf("read stdin: %w", r.err)
		}
	}
}

// What readInput is doing, for stopped.
const (
	inputIdle    int32 = iota // between reads
	inputReading              // in a read of stdin
	inputHolding              // read a chunk, handing it over
	inputStopped              // stopped by a signal: no more reads
)

func readInput(in io.Reader, free <-chan []byte, out chan<- readResult, done <-chan struct{}, state *atomic.Int32) {
	for {
		var buf []byte
		select {
		case buf = <-free:
		case <-done:
			return
		}
		if !state.CompareAndSwap(inputIdle, inputReading) {
			return // stopped
		}
		var n int
		var err error
		for n == 0 && err == nil {
			n, err = in.Read(buf)
		}
		state.Store(inputHolding)
		select {
		case out <- readResult{buf: buf[:n], err: err}:
		case <-done:
			return
		}
		state.Store(inputIdle)
		if err != nil {
			return
		}
	}
}

// stopped ends pump on a signal. Every record read from stdin is appended
// (docs/format.md §5), chunks handed over or being handed over included; no read
// starts after it. A read under way is waited for when stdin is a regular
// file (it ends at once); from a pipe or a terminal it may wait for input
// forever, and what it has not returned was not read. An unfinished last
// line is a record only at the real end of input: at a signal it may be
// half of one, so it is dropped, with a warning.
func (a *appender) stopped(sig os.Signal, chunks <-chan readResult, state *atomic.Int32) error {
	for {
		var r readResult
		select {
		case r = <-chunks:
		default:
			st := state.Load()
			switch {
			case st == inputHolding || st == inputReading && a.size > 0:
				r = <-chunks
			case st == inputIdle && !state.CompareAndSwap(inputIdle, inputStopped):
				continue // it moved on meanwhile: look again
			default:
				// Stopped now, or in a read that may wait forever. A
				// chunk handed over just before is in the channel.
				select {
				case r = <-chunks:
				default:
					if n := a.framer.drop(); n > 0 {
						a.bar.clear()
						a.e.warn("stopped by %s in the middle of line %d of the input: dropped the %d byte%s read of it (a record ends at its delimiter, or at the end of the input)",
							signalName(sig), a.framer.line+1, n, plural(n))
					}
					return nil
				}
			}
		}
		a.ts = time.Now().UnixNano()
		if err := a.framer.feed(r.buf, a.add); err != nil {
			return err
		}
		if errors.Is(r.err, io.EOF) {
			return a.framer.finish(a.add)
		}
		if r.err != nil {
			return fmt.Errorf("read stdin: %w", r.err)
		}
	}
}

// signalName is how a user would name sig: SIGTERM, not "terminated".
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// add appends one message.
func (a *appender) add(msg []byte, line int64) error {
	key, value, part := a.o.key, msg, -1
	var in jsonInput
	if a.o.jsonInput {
		var err error
		if in, err = a.json.decode(msg, line, a.o.keepPartition); err != nil {
			return err
		}
		key, value, part = in.key, in.value, in.partition
		if len(key)+len(value) > a.o.maxMessage {
			return &errMessageTooLong{line: line, max: a.o.maxMessage}
		}
	} else if a.o.keyDelim != nil {
		key = nil
		if i := indexOf(msg, a.o.keyDelim); i >= 0 {
			key, value = msg[:i], msg[i+len(a.o.keyDelim):]
		}
	}
	switch {
	case a.o.partition >= 0:
		part = a.o.partition
	case part >= 0:
		if part >= len(a.writers) {
			return fmt.Errorf("line %d of the input names partition %d, but topic %s has partitions 0..%d", line, part, a.o.topic, len(a.writers)-1)
		}
	case len(key) > 0:
		part = logstore.KeyPartition(key, len(a.writers))
	default:
		part = a.rr
		a.rr = (a.rr + 1) % len(a.writers)
	}
	w := a.writers[part]
	if !a.parts[part].opened {
		if err := a.openWriter(part); err != nil {
			return err
		}
	}
	var ts int64
	if in.stamped && !a.o.restamp {
		var raised bool
		if ts, raised = a.clock.Keep(in.timestamp, w); raised {
			a.raised++
		}
	} else {
		ts = a.clock.Stamp(a.ts, w)
	}
	if _, err := w.Append(ts, key, value); err != nil {
		return err
	}
	if err := a.used(part, w); err != nil {
		return err
	}
	// Appending may have rolled or flushed, and so synced.
	if a.o.report {
		if err := a.queueReport(part); err != nil {
			return err
		}
	}
	// With many partitions the writers' buffers, each far from full, may
	// add up: past maxBuffered, all are written.
	if a.buffered += int(format.RecordLen(key, value)) + 2*format.IndexEntryLen; a.buffered > maxBuffered {
		return a.flush()
	}
	return nil
}

// maxOpenWriters is how many partitions may hold their segment files open
// (three descriptors each) at once: a topic of 10,000 partitions must not
// need 30,000.
const maxOpenWriters = 64

// maxBuffered is how many bytes of records and index entries may wait in
// the writers' buffers before all are written. A writer writes by itself
// at 1 MiB, so this matters with more than 32 partitions.
const maxBuffered = 32 << 20

// openWriter opens partition p's segment, on the partition's first
// record.
func (a *appender) openWriter(p int) error {
	w := a.writers[p]
	if err := w.Open(); err != nil {
		return err
	}
	a.parts[p] = partState{opened: true, first: w.NextOffset(), reported: w.NextOffset()}
	if len(a.open) >= maxOpenWriters {
		// Records wait in its buffer as well without its files: opened
		// again when it writes, it need not push out a writer with
		// records to sync now.
		return w.Idle()
	}
	return nil
}

// used notes that partition p's writer w was just used, and whether that
// opened its files.
func (a *appender) used(p int, w *logstore.Writer) error {
	ps := &a.parts[p]
	a.uses++
	ps.lastUse = a.uses
	if ps.filesOpen || !w.FilesOpen() {
		return nil
	}
	return a.filesOpened(p)
}

// filesOpened notes that partition p's writer opened its files. Past
// maxOpenWriters, the syncers used least recently go idle: each writes
// and syncs what it holds (as at exit, so what it acknowledged is
// durable) and closes its files, keeping its lock.
func (a *appender) filesOpened(p int) error {
	a.parts[p].filesOpen = true
	a.open = append(a.open, p)
	if len(a.open) <= maxOpenWriters {
		return nil
	}
	slices.SortFunc(a.open, func(p, q int) int { return cmp.Compare(a.parts[p].lastUse, a.parts[q].lastUse) })
	idle := make([]*logstore.Writer, 0, syncers)
	for _, q := range a.open[:syncers] {
		a.parts[q].filesOpen = false
		idle = append(idle, a.writers[q])
	}
	a.open = append(a.open[:0], a.open[syncers:]...)
	if err := inParallel(idle, (*logstore.Writer).Idle); err != nil {
		return err
	}
	return a.report()
}

func (a *appender) flush() error {
	a.buffered = 0
	for p, w := range a.writers {
		if w != nil && w.Buffered() {
			if err := w.Flush(); err != nil {
				return err
			}
			if err := a.used(p, w); err != nil {
				return err
			}
		}
	}
	return a.report()
}

// closeWriters writes, syncs and unlocks every writer, returning the first
// error; it goes on past a failing one so the others keep their records.
func (a *appender) closeWriters() error {
	var ws []*logstore.Writer
	for _, w := range a.writers {
		if w != nil {
			ws = append(ws, w)
		}
	}
	first := inParallel(ws, (*logstore.Writer).Close)
	if err := a.report(); first == nil {
		first = err
	}
	return first
}

// syncers is how many writers close or go idle at once. Each syncs its
// files, and fdatasyncs from several threads share the filesystem's
// journal commits: with many partitions that is most of the time.
const syncers = 16

// inParallel calls f on each writer, syncers at a time, and returns the
// first error; it goes on past a failing one so the others keep their
// records. Writers share nothing, so distinct ones may run at once.
func inParallel(ws []*logstore.Writer, f func(*logstore.Writer) error) error {
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(syncers, len(ws)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = f(ws[i])
			}
		})
	}
	for i := range ws {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

type partitionSummary struct {
	Partition   int    `json:"partition"`
	Records     uint64 `json:"records"`
	FirstOffset uint64 `json:"first_offset"`
	LastOffset  uint64 `json:"last_offset"`
}

// summary prints on stderr what reached the files, per partition; after a
// failure that wrote nothing, nothing (the error is the one line).
func (a *appender) summary(failed bool) {
	if a.e.quiet {
		return
	}
	var parts []partitionSummary
	var total uint64
	for p, w := range a.writers {
		first := a.parts[p].first
		if w == nil || !a.parts[p].opened || w.Written() == first {
			continue
		}
		n := w.Written() - first
		parts = append(parts, partitionSummary{Partition: p, Records: n, FirstOffset: first, LastOffset: w.Written() - 1})
		total += n
	}
	if failed && total == 0 {
		return // the error says it all: nothing was written
	}
	if a.o.jsonSummary {
		b, _ := json.Marshal(struct {
			Topic      string             `json:"topic"`
			Records    uint64             `json:"records"`
			Partitions []partitionSummary `json:"partitions"`
		}{a.o.topic, total, append([]partitionSummary{}, parts...)})
		fmt.Fprintf(a.e.stderr, "%s\n", b)
		return
	}
	fmt.Fprintf(a.e.stderr, "appended %d record%s to %s\n", total, plural(int(total)), a.o.topic)
	for _, s := range parts {
		fmt.Fprintf(a.e.stderr, "  partition %d: %d record%s, offsets %d..%d\n", s.Partition, s.Records, plural(int(s.Records)), s.FirstOffset, s.LastOffset)
	}
}
