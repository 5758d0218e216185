package commands

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// This file holds what read and tail share for --group NAME (consumer
// groups, README): the flags, and groupTracker, which resumes each
// partition where the group stopped and commits, at least once a second
// and at the end, the positions of the records that really went out.

// commitInterval is how often a --group reader commits while it runs.
const commitInterval = time.Second

// groupOptions are --group NAME and the wait for its lock.
type groupOptions struct {
	name string        // "": no group
	wait time.Duration // 0: logstore.DefaultLockWait; logstore.WaitForever
}

// groupFlags are the flags a command with --group takes: --group and the
// lock waits. (--wait and --wait-timeout mean the group lock here: read
// and tail take no other lock.)
func groupFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "group", Aliases: []string{"g"}, Usage: "resume where the last run with group `NAME` stopped, and remember where this one stops"},
		&cli.BoolFlag{Name: "wait", Usage: "with --group: wait without limit while another reader holds the group"},
		&cli.StringFlag{Name: "wait-timeout", Usage: "with --group: wait at most `DURATION` while another reader holds the group", DefaultText: "2s"},
	}
}

// parseGroupOptions reads groupFlags. A bad NAME, or a wait without
// --group, is a usage error.
func parseGroupOptions(c *cli.Context) (groupOptions, error) {
	o := groupOptions{name: c.String("group")}
	if !c.IsSet("group") {
		if c.Bool("wait") || c.IsSet("wait-timeout") {
			return o, usagef("--wait and --wait-timeout only apply with --group (the group's lock)")
		}
		return o, nil
	}
	if err := format.ValidateTopic(o.name); err != nil {
		return o, usagef("invalid group name %s", strings.TrimPrefix(err.Error(), format.ErrTopicName.Error()+" "))
	}
	var err error
	o.wait, err = lockWaitFlags(c)
	return o, err
}

// groupTracker carries a command's output and, with --group, the group's
// positions in one topic. Use it from the one goroutine that writes the
// output (it is not safe for concurrent use):
//
//	gt, err := openGroupTracker(e, o.group, topic, explicitStart, e.stdout, 256<<10)
//	if err != nil {
//		return err // a bad name is caught earlier; *LockedError, I/O errors
//	}
//	defer func() { err = gt.finish(err) }() // flush, final commit, unlock
//	out := gt.output()                      // print records only through this
//	for each partition p (start, next from Bounds, fallback where the
//	command starts without a group):
//		from := gt.start(p, fallback, start, next)
//		for each record r read from `from` on:
//			print r to out (or skip it: filtered out)
//			gt.advance(p, r.Offset+1) // also for records filtered out
//			if err := gt.maybeCommit(); err != nil {
//				return err
//			}
//
// and a follower calls maybeCommit also when it wakes up with nothing new,
// so the last records printed are committed within about a second.
//
// At least once: a position is committed only when every byte printed
// for its record (and before it) has been accepted by the writer under
// the output, e.g. the stdout pipe. The tracker counts those bytes, so
// when the pipe closes mid-way (seglog read --group g t | head), or a
// later record is corrupt, exactly the records that got out are
// committed. A kill -9 loses at most the last second's commits: those
// records are printed again by the next run.
//
// Without --group the tracker only carries the output: start returns the
// fallback, advance and maybeCommit do nothing, finish flushes. grouped
// tells which; position peeks at a committed position (start applies it).
type groupTracker struct {
	e        *env
	name     string // the group's, "" without one
	topic    string
	explicit bool // the command was told where to start: committed positions are not used
	g        *logstore.Group

	cw  *countingWriter
	out *bufio.Writer

	// pending[head:] are positions whose output is not all through cw
	// yet, in output order; done are those that are through, not yet
	// committed.
	pending []groupMark
	head    int
	done    map[int]uint64
	last    time.Time // of the last commit (or the open)
	// Reading the clock costs more than reading a small record: see
	// maybeCommit.
	advances int   // since the last look at the clock
	lastN    int64 // cw.n then
	advanced bool  // since the last maybeCommit
}

// checkEvery is how many records may go by without a look at the clock
// while no output goes out: a few microseconds of reading.
const checkEvery = 64

// groupMark is a partition's next offset once the output reaches end
// (counted from the tracker's first byte).
type groupMark struct {
	partition int
	next      uint64
	end       int64
}

// openGroupTracker opens the output (a buffered writer of size bytes over
// w) and, when o names a group, takes the group's lock (waiting o.wait;
// a held lock is a *logstore.LockedError, with advice to wait) and loads
// its positions, of which those in topic are used. explicit says the
// command was told where to start (read --offset/--since): each
// partition then starts there, and the group is updated from there.
func openGroupTracker(e *env, o groupOptions, topic string, explicit bool, w io.Writer, size int) (*groupTracker, error) {
	gt := &groupTracker{e: e, name: o.name, topic: topic, explicit: explicit, cw: &countingWriter{w: w}, done: map[int]uint64{}}
	gt.out = bufio.NewWriterSize(gt.cw, size)
	if o.name == "" {
		return gt, nil
	}
	g, err := logstore.Open(e.dataDir).OpenGroup(o.name, o.wait)
	if err != nil {
		return nil, lockAdvice(err, o.wait)
	}
	gt.g, gt.last = g, time.Now()
	return gt, nil
}

// grouped reports whether there is a group.
func (gt *groupTracker) grouped() bool { return gt.g != nil }

// position is the group's committed position of a partition, if any.
func (gt *groupTracker) position(partition int) (uint64, bool) {
	if gt.g == nil {
		return 0, false
	}
	return gt.g.Position(gt.topic, partition)
}

// output is the writer the command prints records through.
func (gt *groupTracker) output() *bufio.Writer { return gt.out }

// start returns the offset to start reading a partition at, given its
// bounds (start: first offset held; next: offset after the last record)
// and fallback, where the command would start without a group: the
// group's committed position when it has one (and the command was not
// told where to start), else fallback. A committed position that
// retention removed resumes at start, one past the end (the partition was
// replaced by a shorter one) at next, each with a warning. The offset
// returned is committed at the end even if nothing is read from it, so
// a group started at the end (tail -f) stays there.
func (gt *groupTracker) start(partition int, fallback, start, next uint64) uint64 {
	if gt.g == nil {
		return fallback
	}
	from := fallback
	if pos, ok := gt.g.Position(gt.topic, partition); ok && !gt.explicit {
		from = pos
		switch {
		case pos < start:
			gt.e.warn("group %s: %s/%d offset %d was removed by retention; resuming at %d", gt.name, gt.topic, partition, pos, start)
			from = start
		case pos > next:
			gt.e.warn("group %s: %s/%d offset %d is past the end of the partition (next offset %d; was it replaced?); resuming at %d",
				gt.name, gt.topic, partition, pos, next, next)
			from = next
		}
	}
	gt.advance(partition, from)
	return from
}

// advance records that everything of partition before next has been
// printed to output (or skipped, filtered out): next is committed once
// what output holds now has got through.
func (gt *groupTracker) advance(partition int, next uint64) {
	if gt.g != nil { // kept apart so that ungrouped reads pay no call per record
		gt.advanceGrouped(partition, next)
	}
}

func (gt *groupTracker) advanceGrouped(partition int, next uint64) {
	gt.advances++
	gt.advanced = true
	end := gt.cw.n + int64(gt.out.Buffered())
	// Marks that the output has not moved past since are merged, which
	// bounds pending by the buffer's size, whatever a filter skips.
	if k := len(gt.pending); k > gt.head && gt.pending[k-1].partition == partition && gt.pending[k-1].end == end {
		gt.pending[k-1].next = next
	} else {
		gt.pending = append(gt.pending, groupMark{partition: partition, next: next, end: end})
	}
	gt.settle()
}

// settle moves the marks whose output has got through to done.
func (gt *groupTracker) settle() {
	i, n := gt.head, len(gt.pending)
	if i == n || gt.pending[i].end > gt.cw.n {
		return
	}
	// Of a run of one partition's marks, the last is the one that counts.
	for i < n && gt.pending[i].end <= gt.cw.n {
		if i+1 == n || gt.pending[i+1].partition != gt.pending[i].partition || gt.pending[i+1].end > gt.cw.n {
			gt.done[gt.pending[i].partition] = gt.pending[i].next
		}
		i++
	}
	switch {
	case i == n: // the usual case after a flush: start over, keeping the array
		gt.pending, gt.head = gt.pending[:0], 0
	case i > n/2:
		gt.pending, gt.head = gt.pending[:copy(gt.pending, gt.pending[i:])], 0
	default:
		gt.head = i
	}
}

// maybeCommit flushes the output and commits when a second has passed
// since the last commit. An error (the output's or the commit's) should
// end the command; finish still commits what got out.
func (gt *groupTracker) maybeCommit() error {
	if gt.g == nil { // kept apart so that ungrouped reads pay no call per record
		return nil
	}
	return gt.maybeCommitGrouped()
}

func (gt *groupTracker) maybeCommitGrouped() error {
	// In a run of records, the clock is read every checkEvery records or
	// when output went out; a call with no record since the last one (a
	// follower waking up with nothing new) always reads it.
	advanced := gt.advanced
	gt.advanced = false
	if advanced && gt.advances < checkEvery && gt.cw.n == gt.lastN {
		return nil
	}
	gt.advances, gt.lastN = 0, gt.cw.n
	if time.Since(gt.last) < commitInterval {
		return nil
	}
	return gt.commit()
}

// commit flushes the output, then commits the positions whose output got
// through: all of them, unless the flush failed.
func (gt *groupTracker) commit() error {
	ferr := gt.out.Flush()
	if gt.g == nil {
		return ferr
	}
	gt.settle()
	var cerr error
	if len(gt.done) > 0 {
		if cerr = gt.g.Commit(gt.topic, gt.done); cerr == nil {
			clear(gt.done)
		} else {
			cerr = &commitError{cerr}
		}
	}
	gt.last = time.Now()
	switch {
	case cerr == nil:
		return ferr
	case ferr == nil || errors.Is(ferr, syscall.EPIPE):
		return cerr
	}
	return fmt.Errorf("%w; %w", ferr, cerr)
}

// finish ends the command: flushes the output, commits what got out and
// releases the group. It returns the error the command ends with: err,
// the command's own, unless that is nil or a closed stdout (a quiet exit)
// and the commit failed.
func (gt *groupTracker) finish(err error) error {
	ferr := gt.commit()
	if gt.g != nil {
		if uerr := gt.g.Close(); ferr == nil {
			ferr = uerr
		}
		gt.g = nil
	}
	var ce *commitError
	switch {
	case ferr == nil:
		return err
	case err == nil:
		return ferr
	case errors.Is(ferr, syscall.EPIPE): // said again by the flush
		return err
	case errors.Is(err, syscall.EPIPE):
		return ferr
	case errors.As(err, &ce) && errors.As(ferr, &ce): // the same failure again
		return err
	}
	return fmt.Errorf("%w; %w", err, ferr)
}

// commitError is a failed commit, told apart so that finish does not
// report the same failure twice.
type commitError struct{ err error }

func (e *commitError) Error() string { return e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

// countingWriter counts the bytes its writer accepted.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
