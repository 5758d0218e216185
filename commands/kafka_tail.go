package commands

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/logstore"
)

// tail on Apache Kafka's layout. A broker writes its partitions with no
// lock seglog could see and no notice of a roll or a retention delete, so
// following is polling: every kafkaPoll the partition is listed and
// opened again (a roll adds a segment, retention removes the oldest) and
// read from the offset after the last one printed.

// kafkaPoll is how often tail -f looks at a Kafka partition again: a
// tenth of a second late is what a person watching expects of tail.
const kafkaPoll = 100 * time.Millisecond

// kafkaTailPart is one Kafka partition tailed: where it goes on.
type kafkaTailPart struct {
	ref  partitionRef
	next uint64
	rw   recordWriter
	// The directory read last (its device and inode), and the last record
	// printed: a directory that replaced it (the topic deleted and created
	// again) holds another log unless it has that record too.
	dir  [2]uint64
	prev struct {
		ok     bool
		offset uint64
		ts     int64
		crc    uint32
	}
}

// remember takes the record before tp.next, where printing starts, as
// the last one read: a copy of the log that replaces its directory holds
// it, even when nothing is printed before.
func (tp *kafkaTailPart) remember(l logstore.Log, ext logstore.Extent) error {
	if tp.next == 0 || tp.next <= ext.Start {
		return nil
	}
	it, err := l.Records(tp.next - 1)
	if err != nil {
		return err
	}
	defer it.Close()
	if it.Next() && it.Record().Offset < tp.next {
		r := it.Record()
		tp.prev.ok, tp.prev.offset, tp.prev.ts, tp.prev.crc = true, r.Offset, r.Timestamp, r.CRC
	}
	return nil
}

// replaced reports why the partition directory of l, when it is not the
// one read last, holds another log ("" when it holds the same one, or is
// the same directory), as seglog's own follower judges it
// (logstore.Follower's sameLog).
func (tp *kafkaTailPart) replaced(l logstore.Log) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(tp.ref.dir, &st); err != nil {
		return "", nil // gone again: the next poll waits for it
	}
	id := [2]uint64{st.Dev, st.Ino}
	was := tp.dir
	tp.dir = id
	switch {
	case was == ([2]uint64{}) || was == id:
		return "", nil
	case !tp.prev.ok && tp.next == 0:
		return "", nil // nothing read, nothing to miss
	case !tp.prev.ok:
		return "nothing read from it tells", nil
	}
	it, err := l.Records(tp.prev.offset)
	if err != nil {
		return "", err
	}
	defer it.Close()
	switch {
	case !it.Next() || it.Record().Offset != tp.prev.offset:
		return fmt.Sprintf("it has no offset %d", tp.prev.offset), nil
	case it.Record().Timestamp != tp.prev.ts || it.Record().CRC != tp.prev.crc:
		return fmt.Sprintf("its offset %d is another record", tp.prev.offset), nil
	}
	return "", nil
}

// tailKafka prints the records among the last o.lines offsets of each
// partition, partition by partition, then with -f the records that
// arrive, each partition's as they come.
func tailKafka(ctx context.Context, e *env, o tailOptions, refs []partitionRef, ow *outputWatch) error {
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	defer out.Flush()
	parts := make([]*kafkaTailPart, len(refs))
	printed := int64(0)
	limit := func() bool { return o.count >= 0 && printed >= o.count }
	for i, ref := range refs {
		tp := &kafkaTailPart{ref: ref, rw: recordWriter{out: out, format: o.format, template: o.template, topic: ref.topic, partition: ref.partition}}
		parts[i] = tp
		l, err := ref.openLog()
		if err != nil {
			return err
		}
		warnReadingWithout(e, l)
		ext, err := l.Extent()
		if err == nil {
			tp.next = max(ext.Start, ext.Next-min(ext.Next, uint64(o.lines)))
			err = tp.remember(l, ext)
		}
		l.Close()
		if err != nil {
			return err
		}
		if _, err := tp.read(e, o, &printed, limit); err != nil {
			return err
		}
	}
	if err := out.Flush(); err != nil || !o.follow || limit() {
		return err
	}
	idle := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ow.gone:
			return nil
		case <-time.After(kafkaPoll):
		}
		for _, tp := range parts {
			n, err := tp.read(e, o, &printed, limit)
			if err != nil {
				return err
			}
			if n > 0 {
				idle = time.Now()
			}
		}
		if err := out.Flush(); err != nil || limit() {
			return err
		}
		if o.timeout > 0 && time.Since(idle) >= o.timeout {
			return nil
		}
	}
}

// read prints the partition's records from tp.next to its end as it is
// now, and counts them in printed; a partition that has gone (deleted,
// or its directory replaced) is waited for, as tail -F waits for a file.
// With -f, segments the broker deletes while they are read are looked at
// again at the next poll, which warns of the offsets they took.
func (tp *kafkaTailPart) read(e *env, o tailOptions, printed *int64, limit func() bool) (int, error) {
	l, err := tp.ref.openLog()
	if (errors.Is(err, logstore.ErrPartitionNotFound) || errors.Is(err, fs.ErrNotExist)) && o.follow {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer l.Close()
	ext, err := l.Extent()
	if err != nil {
		return 0, tp.pollAgain(o, err)
	}
	why, err := tp.replaced(l)
	if err != nil {
		return 0, tp.pollAgain(o, err)
	}
	if why != "" {
		e.warn("the partition directory of %s (%s) holds another log now (%s); reading it from its start", l.Name(), tp.ref.dir, why)
		tp.next, tp.prev.ok = ext.Start, false
	}
	if ext.Start > tp.next {
		e.warn("offsets %d..%d of %s were removed by retention before they were read; going on at %d", tp.next, ext.Start-1, l.Name(), ext.Start)
		tp.next = ext.Start
	}
	if ext.Next <= tp.next || limit() {
		return 0, nil
	}
	it, err := l.Records(tp.next)
	if err != nil {
		return 0, tp.pollAgain(o, err)
	}
	defer it.Close()
	n := 0
	for !limit() {
		if !it.Next() {
			var ce *logstore.CorruptionError
			if o.skipCorrupt && errors.As(it.Err(), &ce) {
				e.warn("skipping %s", errorLine(ce))
				if it.SkipCorrupt() {
					continue
				}
			}
			if err := it.Err(); err != nil {
				if err := tp.pollAgain(o, err); err != nil {
					return n, corruptAdvice(err, o.topic)
				}
				return n, nil
			}
			// Offsets up to the end held no more data records (control
			// records, or compacted away).
			tp.next = max(tp.next, ext.Next)
			return n, nil
		}
		r := it.Record()
		if r.Offset >= ext.Next {
			break
		}
		if err := tp.rw.write(r); err != nil {
			return n, err
		}
		tp.next = r.Offset + 1
		tp.prev.ok, tp.prev.offset, tp.prev.ts, tp.prev.crc = true, r.Offset, r.Timestamp, r.CRC
		*printed++
		n++
	}
	return n, nil
}

// pollAgain is nil for an error the next poll of a followed partition
// gets past (a segment the broker deleted while it was read, or the
// partition itself, as read waits for it), else err.
func (tp *kafkaTailPart) pollAgain(o tailOptions, err error) error {
	var gone *logstore.NoLongerAvailableError
	if o.follow && (errors.As(err, &gone) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, logstore.ErrPartitionNotFound)) {
		return nil
	}
	return err
}
