package commands

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/seglog/seglog/logstore"
)

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
