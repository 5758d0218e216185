package commands

import (
	"cmp"
	"container/list"
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
	if dir, ok, err := simpleTarget(o.topic); err != nil || ok {
		if err != nil {
			return err
		}
		return runSimpleTail(e, dir, o)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// stdout losing its reader ends tail too (quietly, status 0), also
	// while it waits with nothing to print.
	ow := watchOutput(e.stdout, nil)
	defer ow.stop()
	parts, err := tailOpen(ctx, e, o, ow)
	if err != nil || parts == nil {
		return err // nil parts: interrupted while waiting for the topic
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

// tailOpen opens the partitions to tail; with -F it waits for the topic
// to exist (polling: creating a topic is rare and a tenth of a second
// late is soon enough).
func tailOpen(ctx context.Context, e *env, o tailOptions, ow *outputWatch) ([]*tailPart, error) {
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
		case <-ow.gone:
			return nil, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
	if o.follow && refs[0].file {
		return nil, usagef("-f follows a partition as it grows, and %s is a lone segment file: drop -f to print its newest records, or name its partition directory", o.topic)
	}
	parts := make([]*tailPart, 0, len(refs))
	for _, ref := range refs {
		p, err := ref.open()
		if err != nil {
			return nil, err
		}
		warnIgnored(e, p)
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

func recordKey(tp *tailPart, r *logstore.Record) tailKey {
	return tailKey{r.Timestamp, tp.ref.partition, r.Offset}
}

// Cuts that every record is at or above, and none.
var (
	tailAll  = tailKey{ts: math.MinInt64, partition: -1}
	tailNone = tailKey{ts: math.MaxInt64, partition: math.MaxInt}
)

// tailHeapMax is the largest -n whose cut tailCut finds holding the keys
// of the newest records (24 bytes each); above it, it reads the candidates
// a few times over instead (tailCutSelect).
const tailHeapMax = 1 << 16

// tailLive is how many partitions' iterators the merge keeps open at a
// time; the others are parked (no file, no buffer) until their turn.
const tailLive = 32

// tailHead is a partition's next record to print in tailNewest's merge.
type tailHead struct {
	tp     *tailPart
	it     *logstore.Iterator
	key    tailKey
	parked bool
	live   *list.Element // in the merge's list of unparked heads
}

// tailNewest prints the o.lines newest records of the partitions, oldest
// first (stopping at --count), and returns how many it printed. The
// candidates are each partition's last o.lines valid records; first the cut
// between the o.lines newest of them and the rest is found (tailCut),
// then each partition's records at or above it are merged by key, one
// iterator a partition, all but a few parked. Memory grows neither with
// the records nor with -n beyond tailHeapMax, nor much with partitions.
func tailNewest(e *env, gt *groupTracker, parts []*tailPart, o tailOptions) (int64, error) {
	cut := tailNone
	for _, tp := range parts {
		tp.from = tailFirst(tp, o.lines)
	}
	if o.lines > 0 {
		var err error
		if cut, err = tailCut(e, parts, o); err != nil {
			return 0, err
		}
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
	m := tailMerge{e: e, gt: gt, o: o, cut: cut, heads: minHeap[*tailHead]{less: func(a, b *tailHead) bool { return a.key.compare(b.key) < 0 }}}
	defer m.close()
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
		h := &tailHead{tp: tp, it: it}
		if ok, err := m.advance(h); err != nil || !ok {
			h.it.Close()
			if err != nil {
				return 0, err
			}
			continue
		}
		m.heads.push(h)
		m.used(h)
	}
	return m.print()
}

// tailMerge merges the partitions' records at or above the cut.
type tailMerge struct {
	e     *env
	gt    *groupTracker
	o     tailOptions
	cut   tailKey
	heads minHeap[*tailHead]
	live  list.List // unparked heads, most recently read first
}

// print prints the heads' records in key order, up to --count.
func (m *tailMerge) print() (int64, error) {
	out := m.gt.output()
	var n int64
	for len(m.heads.items) > 0 && n != m.o.count {
		best := m.heads.items[0]
		if best.parked {
			// Opened again, the iterator returns its record once more:
			// or a later one, if retention removed it meanwhile.
			was := best.key
			ok, err := m.advance(best)
			if err != nil {
				return n, err
			}
			if !ok || best.key != was {
				m.settle(best, ok)
				continue
			}
		}
		m.used(best)
		best.tp.rw.out = out
		r := best.it.Record()
		if err := best.tp.rw.write(r); err != nil {
			return n, err
		}
		n++
		m.gt.advance(best.tp.ref.partition, r.Offset+1)
		if err := m.gt.maybeCommit(); err != nil {
			return n, err
		}
		ok, err := m.advance(best)
		if err != nil {
			return n, err
		}
		m.settle(best, ok)
	}
	return n, nil
}

// settle puts h, whose key changed, in its place again, or drops it when
// it has nothing more.
func (m *tailMerge) settle(h *tailHead, more bool) {
	if more {
		m.heads.fixTop()
		return
	}
	m.heads.pop()
	m.forget(h)
	h.it.Close()
}

// advance moves h to its next record at or above the cut (any record,
// from a group's position) and reports whether there is one. A parked
// head is opened again, its iterator giving its last record once more.
func (m *tailMerge) advance(h *tailHead) (bool, error) {
	h.parked = false
	for {
		for h.it.Next() {
			r := h.it.Record()
			if r.Offset >= h.tp.next {
				break
			}
			if k := recordKey(h.tp, r); h.tp.all || k.compare(m.cut) >= 0 {
				h.key = k
				return true, nil
			}
			m.gt.advance(h.tp.ref.partition, r.Offset+1) // passed over
		}
		err := h.it.Err()
		if tailGone(m.e, h.tp, err) {
			h.it.Close()
			it, err := tailRead(m.e, h.tp)
			if err != nil || it == nil {
				return false, err
			}
			h.it = it
			continue
		}
		var ce *logstore.CorruptionError
		if err == nil || !m.o.skipCorrupt || !errors.As(err, &ce) {
			return false, err
		}
		m.e.warn("skipping %s", errorLine(ce))
		if !h.it.SkipCorrupt() {
			return false, h.it.Err()
		}
	}
}

// used notes that h was just read; the least recently read heads beyond
// tailLive are parked.
func (m *tailMerge) used(h *tailHead) {
	if h.live != nil {
		m.live.MoveToFront(h.live)
		return
	}
	h.live = m.live.PushFront(h)
	for m.live.Len() > tailLive {
		victim := m.live.Back().Value.(*tailHead)
		m.forget(victim)
		victim.it.Park()
		victim.parked = true
	}
}

// forget takes h off the list of unparked heads, if it is on it.
func (m *tailMerge) forget(h *tailHead) {
	if h.live != nil {
		m.live.Remove(h.live)
		h.live = nil
	}
}

func (m *tailMerge) close() {
	for _, h := range m.heads.items {
		h.it.Close()
	}
}

// tailFirst is where a partition's candidates for the n newest start when
// no offset is missing: n offsets before its end. tailCut moves it back
// where the partition holds fewer records there (tailExtend).
func tailFirst(tp *tailPart, n int64) uint64 {
	return logstore.Extent{Start: tp.start, Next: tp.next}.LastN(uint64(n))
}

// tailExtend moves tp's candidates back to its last n valid records, where
// offsets are missing (a gap between segments, records lost to damage)
// among its last n (logstore.Partition.StartOfLast).
func tailExtend(tp *tailPart, n int64) error {
	if tp.from <= tp.start {
		return nil
	}
	from, err := tp.p.StartOfLast(logstore.Extent{Start: tp.start, Next: tp.next}, uint64(n))
	var gone *logstore.NoLongerAvailableError
	if errors.As(err, &gone) {
		return nil // retention got there first: reading finds what is left
	}
	if err == nil {
		tp.from = min(tp.from, from)
	}
	return err
}

// tailCut returns the cut: the key of the o.lines-th newest candidate
// (each partition's last o.lines records), or tailAll when there are no
// more candidates than that. No more records than offsets lie between a
// candidate and its partition's end, so the bounds tell how many
// candidates there are at most, without reading them.
func tailCut(e *env, parts []*tailPart, o tailOptions) (tailKey, error) {
	extendAll := func() error {
		for _, tp := range parts {
			if err := tailExtend(tp, o.lines); err != nil {
				return err
			}
		}
		return nil
	}
	if tailSpan(parts) <= uint64(o.lines) {
		// Every candidate is printed: each partition's must be its last
		// records, wherever offsets are missing.
		if err := extendAll(); err != nil || tailSpan(parts) <= uint64(o.lines) {
			return tailAll, err
		}
	}
	if o.lines <= o.heapMax {
		return tailCutHeap(e, parts, o)
	}
	if err := extendAll(); err != nil {
		return tailAll, err
	}
	return tailCutSelect(e, parts, o)
}

// tailSpan is how many offsets the partitions' candidates span.
func tailSpan(parts []*tailPart) uint64 {
	var span uint64
	for _, tp := range parts {
		span += min(tp.next-tp.from, math.MaxUint64-span)
	}
	return span
}

// tailCutHeap finds the cut with the o.lines newest keys seen so far in a
// heap, oldest on top. A partition found holding fewer candidates than
// that is extended (tailExtend) and its earlier candidates added.
func tailCutHeap(e *env, parts []*tailPart, o tailOptions) (tailKey, error) {
	newest := minHeap[tailKey]{less: func(a, b tailKey) bool { return a.compare(b) < 0 }}
	held := make([]int64, len(parts))
	take := func(tp *tailPart, r *logstore.Record) {
		held[tp.index]++
		switch k := recordKey(tp, r); {
		case int64(len(newest.items)) < o.lines:
			newest.push(k)
		case k.compare(newest.items[0]) > 0:
			newest.items[0] = k
			newest.fixTop()
		}
	}
	err := tailScanAll(e, parts, o, take)
	for _, tp := range parts {
		if err != nil || held[tp.index] >= o.lines {
			continue
		}
		before := tp.from
		if err = tailExtend(tp, o.lines); err != nil || tp.from == before {
			continue
		}
		err = tailScan(e, tp, o, func(r *logstore.Record) error {
			if r.Offset >= before {
				return errScanDone
			}
			take(tp, r)
			return nil
		})
		if errors.Is(err, errScanDone) {
			err = nil
		}
	}
	if err != nil || int64(len(newest.items)) < o.lines {
		return tailAll, err // fewer candidates than that: gaps
	}
	return newest.items[0], nil
}

// tailCutSelect finds the cut holding no keys: it counts the candidates
// by timestamp, in buckets over the range the cut is known to be in,
// reading them again to narrow the range to the cut's bucket until that
// is one timestamp (a few readings for any spread of timestamps), and
// breaks the tie among the candidates of that timestamp by partition and
// offset.
func tailCutSelect(e *env, parts []*tailPart, o tailOptions) (tailKey, error) {
	const buckets = 4096
	need := uint64(o.lines)
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	var total uint64
	err := tailScanAll(e, parts, o, func(_ *tailPart, r *logstore.Record) {
		lo, hi = min(lo, r.Timestamp), max(hi, r.Timestamp)
		total++
	})
	if err != nil || total <= need {
		return tailAll, err
	}
	// Invariant: the cut's timestamp is in [lo, hi], and above of the
	// candidates are newer than hi.
	var above uint64
	counts := make([]uint64, buckets)
	for lo < hi {
		width := (uint64(hi)-uint64(lo))/buckets + 1
		clear(counts)
		err := tailScanAll(e, parts, o, func(_ *tailPart, r *logstore.Record) {
			if r.Timestamp >= lo && r.Timestamp <= hi {
				counts[(uint64(r.Timestamp)-uint64(lo))/width]++
			}
		})
		if err != nil {
			return tailAll, err
		}
		b := buckets - 1
		for ; b > 0 && above+counts[b] < need; b-- {
			above += counts[b]
		}
		// In uint64, differences of int64s are right even across zero.
		bucketLo := int64(uint64(lo) + uint64(b)*width)
		if uint64(hi)-uint64(bucketLo) >= width {
			hi = int64(uint64(bucketLo) + width - 1)
		}
		lo = bucketLo
	}
	// The cut is the (need-above)-th newest of the candidates stamped lo:
	// count them by partition, then find it in its partition.
	k := need - above
	perPart := make([]uint64, len(parts))
	err = tailScanAll(e, parts, o, func(tp *tailPart, r *logstore.Record) {
		if r.Timestamp == lo {
			perPart[tp.index]++
		}
	})
	if err != nil {
		return tailAll, err
	}
	for i := len(parts) - 1; i >= 0; i-- {
		if k > perPart[i] {
			k -= perPart[i]
			continue
		}
		// The k-th newest of them is the (perPart[i]-k+1)-th in offset order.
		nth, cut := perPart[i]-k+1, tailAll
		err := tailScan(e, parts[i], o, func(r *logstore.Record) error {
			if r.Timestamp == lo {
				if nth--; nth == 0 {
					cut = recordKey(parts[i], r)
					return errScanDone
				}
			}
			return nil
		})
		if errors.Is(err, errScanDone) {
			err = nil
		}
		return cut, err
	}
	return tailAll, nil // the candidates changed between the readings
}

// errScanDone ends a reading of candidates early.
var errScanDone = errors.New("scan done")

// tailScanAll calls fn for every candidate of every partition.
func tailScanAll(e *env, parts []*tailPart, o tailOptions, fn func(*tailPart, *logstore.Record)) error {
	for _, tp := range parts {
		err := tailScan(e, tp, o, func(r *logstore.Record) error {
			fn(tp, r)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
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
		// Past damage even without --skip-corrupt: the candidates are the
		// newest valid records. Printing them reports the damage (and
		// stops there unless --skip-corrupt), as read does.
		var ce *logstore.CorruptionError
		if !errors.As(it.Err(), &ce) || !it.SkipCorrupt() {
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

// tailCopy copies a record out of a follower's buffer.
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
// started, as they come, until ctx is done (status 0), stdout loses its
// reader (status 0), --count or --timeout is reached, or a partition
// fails. One goroutine follows every partition, with one inotify
// instance and a bounded number of files open (logstore.FollowSet).
func tailFollow(ctx context.Context, e *env, gt *groupTracker, parts []*tailPart, o tailOptions, printed int64, ow *outputWatch) error {
	out := gt.output()
	// What -n printed goes out before the wait for more.
	if err := out.Flush(); err != nil {
		return err
	}
	// The follower goroutine warns while this one may.
	var warnMu sync.Mutex
	warn := func(msg string) {
		warnMu.Lock()
		defer warnMu.Unlock()
		e.warn("%s", msg)
	}
	set := logstore.NewFollowSet(logstore.FollowOptions{Warn: warn})
	defer set.Close()
	byFollower := make(map[*logstore.Follower]*tailPart, len(parts))
	for _, tp := range parts {
		f, err := set.Add(tp.p.Dir(), tp.p.Name(), max(tp.next, tp.from))
		if err != nil {
			return err
		}
		byFollower[f] = tp
	}
	ctx, cancel := context.WithCancel(ctx)
	events := make(chan tailEvent, 256)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			f, ok := set.Next(ctx)
			if f == nil {
				return // ctx done
			}
			if !ok {
				err := f.Err()
				var ce *logstore.CorruptionError
				if o.skipCorrupt && errors.As(err, &ce) {
					warn("skipping " + errorLine(ce))
					if f.SkipCorrupt() {
						continue
					}
					err = f.Err()
				}
				select {
				case events <- tailEvent{tp: byFollower[f], err: err}:
				case <-ctx.Done():
				}
				return
			}
			select {
			case events <- tailEvent{tp: byFollower[f], rec: tailCopy(f.Record())}:
			case <-ctx.Done():
				return
			}
		}
	}()
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
		case <-ow.gone:
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

// minHeap is a binary heap, least item (by less) on top.
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *minHeap[T]) push(x T) {
	h.items = append(h.items, x)
	for i := len(h.items) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(h.items[i], h.items[parent]) {
			break
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *minHeap[T]) pop() T {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	var zero T
	h.items[last] = zero
	h.items = h.items[:last]
	if last > 0 {
		h.fixTop()
	}
	return top
}

// fixTop restores the order after the top item changed.
func (h *minHeap[T]) fixTop() {
	for i, n := 0, len(h.items); ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < n && h.less(h.items[l], h.items[least]) {
			least = l
		}
		if r < n && h.less(h.items[r], h.items[least]) {
			least = r
		}
		if least == i {
			return
		}
		h.items[i], h.items[least] = h.items[least], h.items[i]
		i = least
	}
}
