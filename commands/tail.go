package commands

import (
	"context"
	"errors"
	"os/signal"
	"strings"
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
	format      outputFormat
	template    template
	skipCorrupt bool
	group       groupOptions
	heapMax     int64 // tuning.tailHeapMax
}

func tailCommand(tn tuning) *cli.Command {
	return &cli.Command{
		Name:      "tail",
		Usage:     "print a topic's newest records, and with -f follow new ones as they are appended",
		ArgsUsage: "TOPIC|PARTITION-DIR|SEGMENT.log",
		Description: "Only reads (but --group keeps its positions). Prints the N newest records of\n" +
			"the topic (-n, default 10): across partitions the N newest by timestamp, printed\n" +
			"oldest first. With -f it then prints every record any process appends, partition\n" +
			"by partition as they arrive, across segment rolls, retention sweeps (a warning\n" +
			"says which offsets were deleted before they could be printed) and recover, until\n" +
			"Ctrl-C or SIGTERM (exit status 0).\n" +
			"New records are noticed through one inotify instance watching every partition\n" +
			"directory (polling where it is unavailable). A record still being written is waited\n" +
			"for, never printed half. On a topic that does not exist, -f fails and -F waits for\n" +
			"it to be created. A partition directory that comes back holding another log (the\n" +
			"topic deleted and created again) is read from its start, with a warning. stdout\n" +
			"losing its reader (| head -1) ends tail with status 0, also while it waits.\n" +
			"-n counts records, not offsets: offsets lost to damage or in a gap between\n" +
			"segments are passed over. A corrupt record met while printing ends tail there\n" +
			"with exit status 1, after the records before it, as it ends read, unless\n" +
			"--skip-corrupt. A TOPIC containing '/' names a partition or topic directory by\n" +
			"path, as in read (-F waits for a log to appear there), or a lone segment file (its\n" +
			"newest records, not followed: its tail may be incomplete); a log in the simple\n" +
			"store/index layout, named by path, can be tailed but not followed.\n\n" +
			"--count N stops after N records in all (the first -n ones included): with -n 0,\n" +
			"the next N to arrive. --timeout D stops after D without a new record.\n\n" +
			"--group NAME resumes each partition where the last run with that group stopped\n" +
			"(partitions it has no position for start as without it) and commits the positions\n" +
			"of the records printed, at least every second and at exit: at least once, never a\n" +
			"record skipped. One reader per group at a time (--wait to queue).\n\n" +
			"Apache Kafka's own log directories are read the same way, never written: a broker's\n" +
			"log directory given with -d (topics by name), or a TOPIC-N partition directory or a\n" +
			"segment .log of Kafka's by path (told from seglog's by their contents).\n\n" +
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
			formatFlag(),
			&cli.StringFlag{Name: "template", Aliases: []string{"t"}, Usage: "print each record as `FMT` (as in read)"},
			&cli.BoolFlag{Name: "skip-corrupt", Usage: "warn about a corrupt record and go on after it instead of failing"},
		}, groupFlags()...),
		Action: func(c *cli.Context) error {
			o, err := parseTailOptions(c)
			if err != nil {
				return err
			}
			o.heapMax = tn.tailHeapMax
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
	index       int    // its place in the partitions tailed
	rw          recordWriter
}

func runTail(e *env, o tailOptions) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// stdout losing its reader ends tail too (quietly, status 0), also
	// while it waits with nothing to print.
	ow := watchOutput(e.stdout, nil)
	defer ow.stop()
	refs, waited, err := tailTargets(ctx, e, o, ow)
	if err != nil || refs == nil {
		return err // nil refs: interrupted while waiting for the topic
	}
	if err := checkLayoutTail(o, refs[0]); err != nil {
		return err
	}
	if refs[0].layout == logstore.LayoutKafka {
		return tailKafka(ctx, e, o, refs, ow)
	}
	if refs[0].layout.ValuesOnly() {
		// Printed as read prints, which watches the output itself and
		// lets a signal end it as usual.
		stop()
		ow.stop()
		return tailValuesOnly(e, o, refs)
	}
	parts, err := tailOpen(e, o, refs, waited)
	if err != nil {
		return err
	}
	defer func() {
		for _, tp := range parts {
			tp.p.Close()
		}
	}()
	gt, err := openGroupTracker(e, o.group, parts[0].ref.topic, false, e.stdout, 64<<10)
	if err != nil {
		return err
	}
	defer func() { err = gt.finish(err) }()
	printed, err := tailNewest(e, gt, parts, o)
	if err == nil && o.follow && (o.count < 0 || printed < o.count) {
		err = tailFollow(ctx, e, gt, parts, o, printed, ow)
	}
	return corruptAdvice(err, o.topic)
}

// tailTargets lists the partitions to tail; with -F it waits for the
// topic to exist (polling: creating a topic is rare and a tenth of a
// second late is soon enough), and says whether it waited. Interrupted
// while waiting, it returns none.
func tailTargets(ctx context.Context, e *env, o tailOptions, ow *outputWatch) ([]partitionRef, bool, error) {
	for waited := false; ; waited = true {
		refs, err := readTargets(e, o.topic, o.partition)
		if err == nil {
			return refs, waited, nil
		}
		if !o.retry || !errors.Is(err, logstore.ErrTopicNotFound) && !errors.Is(err, logstore.ErrPartitionNotFound) {
			return nil, false, err
		}
		if !waited {
			e.warn("%s; waiting for it to appear (-F)", errorLine(err))
		}
		select {
		case <-ctx.Done():
			return nil, false, nil
		case <-ow.gone:
			return nil, false, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tailOpen opens the partitions to tail (waited: for them to appear).
func tailOpen(e *env, o tailOptions, refs []partitionRef, waited bool) ([]*tailPart, error) {
	if o.follow && refs[0].file {
		return nil, usagef("-f follows a partition as it grows, and %s is a lone segment file: drop -f to print its newest records, or name its partition directory", o.topic)
	}
	parts := make([]*tailPart, 0, len(refs))
	for _, ref := range refs {
		p, err := ref.open()
		if err != nil {
			return nil, err
		}
		warnReadingWithout(e, p)
		tp := &tailPart{ref: ref, p: p, index: len(parts), rw: recordWriter{format: o.format, template: o.template, topic: ref.topic, partition: ref.partition}}
		ext, err := p.Extent()
		if err != nil {
			return nil, err
		}
		if ext.Full {
			return nil, errFullPartition(p.Name(), "tail")
		}
		tp.start, tp.next = ext.Start, ext.Next
		if waited {
			// A topic that appeared after tail started: all of it is new,
			// as tail -F prints a file that appears from its first line.
			tp.next = tp.start
		}
		parts = append(parts, tp)
	}
	return parts, nil
}

// tailRead opens an iterator over tp from tp.from, or returns nil when
// nothing is left before tp.next. Records retention removed since tail
// took the bounds are passed over as a follower passes them over
// (docs/format.md §6), by tailGone.
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
