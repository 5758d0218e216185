package commands

import (
	"cmp"
	"context"
	"errors"
	"math"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

type tailOptions struct {
	topic       string // or a partition directory, when it holds a '/'
	partition   int    // -1: all
	lines       int64  // -n: how many of the newest records to print first
	follow      bool   // -f or -F
	retry       bool   // -F: wait for a topic that does not exist yet
	count       int64  // -1: no limit
	timeout     time.Duration
	format      string
	template    template
	skipCorrupt bool
	group       groupOptions
}

func tailCommand() *cli.Command {
	return &cli.Command{
		Name:      "tail",
		Usage:     "print a topic's newest records, and with -f follow new ones as they are appended",
		ArgsUsage: "TOPIC|PARTITION-DIR",
		Description: "Only reads (but --group keeps its positions). Prints the N newest records of\n" +
			"the topic (-n, default 10): across partitions the N newest by timestamp, printed\n" +
			"oldest first. With -f it then prints every record any process appends, partition\n" +
			"by partition as they arrive, across segment rolls, retention sweeps (a warning\n" +
			"says which offsets were deleted before they could be printed) and recover, until\n" +
			"Ctrl-C or SIGTERM (exit status 0).\n" +
			"New records are noticed through inotify (polling where it is unavailable). A record\n" +
			"still being written is waited for, never printed half. On a topic that does not\n" +
			"exist, -f fails and -F waits for it to be created. A corrupt record ends tail with\n" +
			"exit status 1 unless --skip-corrupt. A TOPIC containing '/' names a partition or\n" +
			"topic directory by path, as in read (-F waits for a log to appear there); a log in\n" +
			"the simple store/index layout, named by path, can be tailed but not followed.\n\n" +
			"--count N stops after N records in all (the first -n ones included): with -n 0,\n" +
			"the next N to arrive. --timeout D stops after D without a new record.\n\n" +
			"--group NAME resumes each partition where the last run with that group stopped\n" +
			"(partitions it has no position for start as without it) and commits the positions\n" +
			"of the records printed, at least every second and at exit: at least once, never a\n" +
			"record skipped. One reader per group at a time (--wait to queue).\n\n" +
			"Examples:\n" +
			"  seglog tail orders\n" +
			"  seglog tail -f orders --format json\n" +
			"  seglog tail -F app-logs -n 0 --template '%p/%o %s\\n'\n" +
			"  seglog tail -f orders -n 0 --count 1 --timeout 30s   # wait for one record",
		Flags: append([]cli.Flag{
			&cli.Int64Flag{Name: "lines", Aliases: []string{"n"}, Value: 10, Usage: "print the `N` newest records first"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "then print new records as they are appended, until interrupted"},
			&cli.BoolFlag{Name: "F", Usage: "like -f, and wait for the topic if it does not exist yet"},
			&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "only partition `P`", DefaultText: "all"},
			&cli.Int64Flag{Name: "count", Aliases: []string{"c"}, Value: -1, Usage: "stop after `N` records in all", DefaultText: "no limit"},
			&cli.StringFlag{Name: "timeout", Usage: "with -f: stop after `DURATION` without a new record"},
			&cli.StringFlag{Name: "format", Value: "value", Usage: "`FORMAT`: value, json, dump or raw (as in read)"},
			&cli.StringFlag{Name: "template", Aliases: []string{"t"}, Usage: "print each record as `FMT` (as in read)"},
			&cli.BoolFlag{Name: "skip-corrupt", Usage: "warn about a corrupt record and go on after it instead of failing"},
		}, groupFlags()...),
		Action: func(c *cli.Context) error {
			o, err := parseTailOptions(c)
			if err != nil {
				return err
			}
			return runTail(envFrom(c), o)
		},
	}
}

func parseTailOptions(c *cli.Context) (tailOptions, error) {
	topic, err := targetArg(c)
	if err != nil {
		return tailOptions{}, err
	}
	o := tailOptions{topic: topic, partition: c.Int("partition"), lines: c.Int64("lines"),
		follow: c.Bool("follow") || c.Bool("F"), retry: c.Bool("F"), count: c.Int64("count"),
		skipCorrupt: c.Bool("skip-corrupt")}
	switch {
	case c.IsSet("partition") && o.partition < 0:
		return o, usagef("--partition must be 0 or more, not %d", o.partition)
	case o.lines < 0:
		return o, usagef("-n must be 0 or more, not %d", o.lines)
	case c.IsSet("count") && o.count < 0:
		return o, usagef("--count must be 0 or more, not %d", o.count)
	case c.IsSet("timeout") && !o.follow:
		return o, usagef("--timeout applies with -f or -F only")
	}
	if c.IsSet("timeout") {
		if o.timeout, err = parseDuration(c.String("timeout")); err != nil {
			return o, usagef("--timeout: %v", err)
		}
	}
	if o.format, o.template, err = outputFlags(c); err != nil {
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

// tailPart is one partition being tailed.
type tailPart struct {
	ref         partitionRef
	p           *logstore.Partition
	start, next uint64 // its bounds when tail started
	from        uint64 // the first offset printed
	all         bool   // print every record from `from` (a group's position), not only the newest
	rw          recordWriter
}

func runTail(e *env, o tailOptions) (err error) {
	if dir, ok, err := simpleTarget(o.topic); err != nil || ok {
		if err != nil {
			return err
		}
		return runSimpleTail(e, dir, o)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	parts, err := tailOpen(ctx, e, o)
	if err != nil || parts == nil {
		return err // nil parts: interrupted while waiting for the topic
	}
	gt, err := openGroupTracker(e, o.group, parts[0].ref.topic, false, e.stdout, 64<<10)
	if err != nil {
		return err
	}
	defer func() { err = gt.finish(err) }()
	printed, err := tailNewest(e, gt, parts, o)
	if err == nil && o.follow && (o.count < 0 || printed < o.count) {
		err = tailFollow(ctx, e, gt, parts, o, printed)
	}
	return corruptAdvice(err, o.topic)
}

// tailOpen opens the partitions to tail; with -F it waits for the topic
// to exist (polling: creating a topic is rare and a tenth of a second
// late is soon enough).
func tailOpen(ctx context.Context, e *env, o tailOptions) ([]*tailPart, error) {
	var refs []partitionRef
	waited := false
	for ; ; waited = true {
		var err error
		refs, err = readTargets(e, o.topic, o.partition)
		if err == nil {
			break
		}
		if !o.retry || !errors.Is(err, logstore.ErrTopicNotFound) && !errors.Is(err, logstore.ErrPartitionNotFound) {
			return nil, err
		}
		if !waited {
			e.warn("%s; waiting for it to appear (-F)", errorLine(err))
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
	parts := make([]*tailPart, 0, len(refs))
	for _, ref := range refs {
		p, err := ref.open()
		if err != nil {
			return nil, err
		}
		tp := &tailPart{ref: ref, p: p, rw: recordWriter{format: o.format, template: o.template, topic: ref.topic, partition: ref.partition}}
		if tp.start, tp.next, err = p.Bounds(); err != nil {
			return nil, err
		}
		if waited {
			// A topic that appeared after tail started: all of it is new,
			// as tail -F prints a file that appears from its first line.
			tp.next = tp.start
		}
		parts = append(parts, tp)
	}
	return parts, nil
}

// tailKey orders records the way tail prints the newest ones: by
// timestamp, ties by partition, then offset.
type tailKey struct {
	ts        int64
	partition int
	offset    uint64
}

func (a tailKey) compare(b tailKey) int {
	return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.partition, b.partition), cmp.Compare(a.offset, b.offset))
}

// tailNewest prints the o.lines newest records of the partitions, oldest
// first (stopping at --count), and returns how many it printed. It reads
// each partition's last o.lines records twice: once for their timestamps,
// to find the cut, then to print those at or above it in timestamp order.
// Memory: a few words per candidate, never the records.
func tailNewest(e *env, gt *groupTracker, parts []*tailPart, o tailOptions) (int64, error) {
	out := gt.output()
	var keys []tailKey
	for _, tp := range parts {
		tp.from = tailFirst(tp, o.lines)
		if o.lines == 0 {
			continue
		}
		err := tailScan(e, tp, o, func(r *logstore.Record) error {
			keys = append(keys, tailKey{r.Timestamp, tp.ref.partition, r.Offset})
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	cut := tailKey{ts: math.MaxInt64}
	if len(keys) > 0 {
		slices.SortFunc(keys, tailKey.compare)
		cut = keys[max(len(keys)-int(o.lines), 0)]
	}
	for _, tp := range parts {
		// Where the group stopped wins over the newest records.
		_, resume := gt.position(tp.ref.partition)
		if from := gt.start(tp.ref.partition, tp.from, tp.start, tp.next); resume {
			tp.from, tp.all = from, true
		}
	}
	if o.count == 0 {
		return 0, nil
	}
	// Print: a merge of the partitions' records at or above the cut.
	type head struct {
		tp  *tailPart
		it  *logstore.Iterator
		rec logstore.Record
		ok  bool
	}
	var heads []*head
	defer func() {
		for _, h := range heads {
			h.it.Close()
		}
	}()
	// advance moves h to its next record at or above the cut.
	advance := func(h *head) error {
		for {
			for h.it.Next() {
				r := h.it.Record()
				if r.Offset >= h.tp.next {
					break
				}
				if h.tp.all || (tailKey{r.Timestamp, h.tp.ref.partition, r.Offset}).compare(cut) >= 0 {
					h.rec, h.ok = tailCopy(r), true
					return nil
				}
				gt.advance(h.tp.ref.partition, r.Offset+1) // passed over
			}
			h.ok = false
			err := h.it.Err()
			if tailGone(e, h.tp, err) {
				h.it.Close()
				it, err := tailRead(e, h.tp)
				if err != nil || it == nil {
					return err
				}
				h.it = it
				continue
			}
			var ce *logstore.CorruptionError
			if err == nil || !o.skipCorrupt || !errors.As(err, &ce) {
				return err
			}
			e.warn("skipping %s", errorLine(ce))
			if !h.it.SkipCorrupt() {
				return h.it.Err()
			}
		}
	}
	for _, tp := range parts {
		if tp.from >= tp.next {
			continue
		}
		it, err := tailRead(e, tp)
		if err != nil {
			return 0, err
		}
		if it == nil {
			continue
		}
		h := &head{tp: tp, it: it}
		heads = append(heads, h)
		if err := advance(h); err != nil {
			return 0, err
		}
	}
	var n int64
	for {
		var best *head
		for _, h := range heads {
			if h.ok && (best == nil || (tailKey{h.rec.Timestamp, h.tp.ref.partition, h.rec.Offset}).compare(tailKey{best.rec.Timestamp, best.tp.ref.partition, best.rec.Offset}) < 0) {
				best = h
			}
		}
		if best == nil || n == o.count {
			return n, nil
		}
		best.tp.rw.out = out
		if err := best.tp.rw.write(&best.rec); err != nil {
			return n, err
		}
		n++
		gt.advance(best.tp.ref.partition, best.rec.Offset+1)
		if err := gt.maybeCommit(); err != nil {
			return n, err
		}
		if err := advance(best); err != nil {
			return n, err
		}
	}
}

// tailFirst is where a partition's candidates for the n newest start.
func tailFirst(tp *tailPart, n int64) uint64 {
	if tp.next-tp.start <= uint64(n) {
		return tp.start
	}
	return tp.next - uint64(n)
}

// tailScan calls fn for the records of tp from tp.from up to its end when
// tail started.
func tailScan(e *env, tp *tailPart, o tailOptions, fn func(*logstore.Record) error) error {
	it, err := tailRead(e, tp)
	if err != nil || it == nil {
		return err
	}
	defer func() { it.Close() }()
	for {
		for it.Next() {
			r := it.Record()
			if r.Offset >= tp.next {
				return nil
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		if tailGone(e, tp, it.Err()) {
			it.Close()
			next, err := tailRead(e, tp)
			if err != nil || next == nil {
				return err
			}
			it = next
			continue
		}
		var ce *logstore.CorruptionError
		if !o.skipCorrupt || !errors.As(it.Err(), &ce) {
			return it.Err()
		}
		// The warning comes when the records are printed.
		if !it.SkipCorrupt() {
			return it.Err()
		}
	}
}

// tailRead opens an iterator over tp from tp.from, or returns nil when
// nothing is left before tp.next. Records retention removed since tail
// took the bounds are passed over as a follower passes them over (SPEC
// §5), by tailGone.
func tailRead(e *env, tp *tailPart) (*logstore.Iterator, error) {
	for tries := 0; ; tries++ {
		if tp.from >= tp.next {
			return nil, nil
		}
		it, err := tp.p.Read(tp.from)
		if err == nil || tries == 100 || !tailGone(e, tp, err) {
			return it, err
		}
	}
}

// tailGone reports whether err is retention having removed records tail
// was about to print. If so, it warns naming them, moves tp.from up to the
// partition's new start and lists the partition's segments anew.
func tailGone(e *env, tp *tailPart, err error) bool {
	var gone *logstore.NoLongerAvailableError
	if !errors.As(err, &gone) {
		return false
	}
	start := gone.Start
	if p, err := tp.ref.open(); err == nil {
		tp.p.Close()
		tp.p = p
		// More may have gone since: start where the partition starts now,
		// as Read would pass over offsets below its first segment silently.
		if s, _, err := p.Bounds(); err == nil {
			start = max(start, s)
		}
	}
	switch {
	case start == gone.Offset+1:
		e.warn("offset %d of %s was removed by retention before it was read; going on at %d", gone.Offset, gone.Partition, start)
	case start > gone.Offset:
		e.warn("offsets %d..%d of %s were removed by retention before they were read; going on at %d", gone.Offset, start-1, gone.Partition, start)
	}
	tp.from = max(tp.from, start)
	return true
}

// tailCopy copies a record out of an iterator's buffer.
func tailCopy(r *logstore.Record) logstore.Record {
	c := *r
	c.Key = slices.Clone(r.Key)
	c.Value = slices.Clone(r.Value)
	return c
}

// tailEvent is a followed record, or the error that ended a partition.
type tailEvent struct {
	tp  *tailPart
	rec logstore.Record
	err error
}

// tailFollow prints the records appended to the partitions after tail
// started, as they come, until ctx is done (status 0), --count or
// --timeout is reached, or a partition fails.
func tailFollow(ctx context.Context, e *env, gt *groupTracker, parts []*tailPart, o tailOptions, printed int64) error {
	out := gt.output()
	// What -n printed goes out before the wait for more.
	if err := out.Flush(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	events := make(chan tailEvent, 256)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	// Followers warn from their own goroutines.
	var warnMu sync.Mutex
	warn := func(msg string) {
		warnMu.Lock()
		defer warnMu.Unlock()
		e.warn("%s", msg)
	}
	for _, tp := range parts {
		f, err := logstore.Follow(tp.p.Dir(), tp.p.Name(), max(tp.next, tp.from), logstore.FollowOptions{Warn: warn})
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer f.Close()
			for {
				if !f.Next(ctx) {
					err := f.Err()
					var ce *logstore.CorruptionError
					if o.skipCorrupt && errors.As(err, &ce) {
						warn("skipping " + errorLine(ce))
						if f.SkipCorrupt() {
							continue
						}
						err = f.Err()
					}
					if err != nil && ctx.Err() == nil {
						select {
						case events <- tailEvent{tp: tp, err: err}:
						case <-ctx.Done():
						}
					}
					return
				}
				select {
				case events <- tailEvent{tp: tp, rec: tailCopy(f.Record())}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	// With a group, positions are committed at least every second, also
	// when nothing new comes.
	var tick <-chan time.Time
	if gt.grouped() {
		ticker := time.NewTicker(commitInterval)
		defer ticker.Stop()
		tick = ticker.C
	}
	var idle <-chan time.Time
	var timer *time.Timer
	if o.timeout > 0 {
		timer = time.NewTimer(o.timeout)
		defer timer.Stop()
		idle = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-idle:
			return nil
		case <-tick:
			if err := gt.maybeCommit(); err != nil {
				return err
			}
		case ev := <-events:
			if ev.err != nil {
				return ev.err
			}
			ev.tp.rw.out = out
			if err := ev.tp.rw.write(&ev.rec); err != nil {
				return err
			}
			printed++
			gt.advance(ev.tp.ref.partition, ev.rec.Offset+1)
			if o.count >= 0 && printed >= o.count {
				return nil
			}
			if err := gt.maybeCommit(); err != nil {
				return err
			}
			if timer != nil {
				timer.Reset(o.timeout)
			}
			// Flush once nothing else is waiting: a burst goes out in
			// few writes, a lone record at once.
			if len(events) == 0 {
				if err := out.Flush(); err != nil {
					return err
				}
			}
		}
	}
}
