package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// SyncMode says when a writer makes its data durable.
type SyncMode int

const (
	// SyncExit syncs when a segment rolls and when the writer closes.
	SyncExit SyncMode = iota
	// SyncBatch also syncs after every batch written.
	SyncBatch
	// SyncNever never syncs (nor fsyncs directories).
	SyncNever
)

// flushAt is the buffered size at which a writer writes without being asked:
// large writes, not a write per record, are what make appending fast
// (docs/performance.md).
const flushAt = 1 << 20

// writebackEvery is how much data a SyncExit writer lets pile up in a
// segment file before it asks the kernel to start writing it back
// (sync_file_range).
const writebackEvery = 8 << 20

// WriterOptions configure a partition writer. Zero values take the
// topic's stored settings, then the built-in defaults.
type WriterOptions struct {
	SegmentBytes  int64
	IndexInterval int
	RollAfter     time.Duration
	Sync          SyncMode
	// LockWait is how long to retry a held writer lock: 0 means
	// DefaultLockWait, WaitForever no limit.
	LockWait time.Duration
	// Warn receives warnings, such as an incomplete tail cut on opening.
	Warn func(msg string)
}

// Writer appends to one partition. It holds the partition's writer lock
// from OpenWriter to Close. Appends are buffered; Flush writes them.
type Writer struct {
	fs    fileSystem
	store *Store
	topic string
	part  int
	name  string
	dir   string // the partition's
	opts  WriterOptions
	lock  *fsx.DirLock
	// opened: the active segment was found and prepared (Open); its files
	// are open unless Idle closed them.
	opened bool

	seg            segment
	log, idx, tidx file
	logSize        int64 // bytes of the .log in the file (not buffered)
	idxSize        int64
	tidxSize       int64
	count          uint64 // records in the active segment, buffered ones too
	firstTS        int64  // of the active segment's first record, when count > 0
	lastTS         int64  // of the partition's last record
	next           uint64 // offset the next Append gets
	full           bool   // offset 2^64-1 was given out: next wrapped, and no Append may follow
	written        uint64 // offset after the last record in the file
	durable        uint64 // offset after the last record synced to disk
	logWriteback   int64  // .log bytes below this were handed to writeback
	idxWriteback   int64  // and .index bytes
	tidxWriteback  int64  // and .timeindex bytes
	logBuf         []byte
	idxBuf         []byte
	tidxBuf        []byte
	bigHeader      []byte // header of a record too big for logBuf
	unsynced       bool   // written to since its files were last all synced
	failed         error
	closed         bool
}

// OpenWriter locks a topic's partition for writing and prepares its active
// segment: an incomplete tail (a crash artifact, since nobody else can be
// writing) is saved to quarantine and cut, with a warning; a corrupt record
// is refused with advice to run recover.
func (s *Store) OpenWriter(topic string, partition int, opts WriterOptions) (*Writer, error) {
	if opts.LockWait == 0 {
		opts.LockWait = DefaultLockWait
	}
	return s.openWriter(topic, partition, opts)
}

// openWriter is OpenWriter taking opts.LockWait as it is: 0 tries the lock
// once, as a retention sweep must never wait for a live writer.
func (s *Store) openWriter(topic string, partition int, opts WriterOptions) (*Writer, error) {
	t, err := s.Topic(topic)
	if err != nil {
		return nil, err
	}
	w, err := s.lockWriter(t, partition, opts)
	if err != nil {
		return nil, err
	}
	if err := w.Open(); err != nil {
		w.lock.Unlock()
		return nil, err
	}
	return w, nil
}

// LockWriter takes the writer lock of partition p of t, as OpenWriter
// does, and returns its writer without opening the active segment: that
// waits for the first Append (or Open). So a caller can lock every
// partition of a topic before reading its input, so that a second writer
// fails at once, while holding one descriptor for each (the lock) and
// opening the segments of only those it writes to.
func (s *Store) LockWriter(t *Topic, partition int, opts WriterOptions) (*Writer, error) {
	if opts.LockWait == 0 {
		opts.LockWait = DefaultLockWait
	}
	return s.lockWriter(t, partition, opts)
}

func (s *Store) lockWriter(t *Topic, partition int, opts WriterOptions) (*Writer, error) {
	if partition < 0 || partition >= t.Partitions {
		return nil, fmt.Errorf("topic %s has partitions 0..%d, not %d: %w", t.Name, t.Partitions-1, partition, ErrPartitionNotFound)
	}
	st := t.EffectiveSettings()
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = st.SegmentBytes
	}
	if opts.IndexInterval <= 0 {
		opts.IndexInterval = st.IndexInterval
	}
	if opts.RollAfter <= 0 {
		opts.RollAfter = st.RollAfter
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	w := &Writer{fs: s.fs, store: s, topic: t.Name, part: partition, opts: opts,
		name: fmt.Sprintf("%s/%d", t.Name, partition), dir: s.PartitionDir(t.Name, partition)}
	var err error
	if w.lock, err = lockDir(w.dir, "partition "+w.name, opts.LockWait); err != nil {
		return nil, err
	}
	return w, nil
}

// Open prepares the partition's active segment for appending, as
// OpenWriter describes, unless that was done; a writer that Idle closed
// opens its files again.
func (w *Writer) Open() error {
	switch {
	case w.closed:
		return fmt.Errorf("%s: %w", w.name, os.ErrClosed)
	case w.failed != nil:
		return fmt.Errorf("%s: %w: %v", w.name, ErrWriterFailed, w.failed)
	case w.opened:
		return w.reopen()
	}
	if err := w.openActive(w.dir); err != nil {
		w.closeFiles()
		return fmt.Errorf("open %s for writing: %w", w.name, err)
	}
	w.opened = true
	return nil
}

// reopen opens the active segment's files again after Idle. Holding the
// lock, this writer is the only one to change them: a .log of another
// size than it left means someone else did, and nothing can go on.
func (w *Writer) reopen() error {
	if w.log != nil {
		return nil
	}
	err := w.openSegmentFiles()
	if err == nil {
		var fi os.FileInfo
		if fi, err = w.log.Stat(); err == nil && fi.Size() != w.logSize {
			err = fmt.Errorf("%s is %d bytes, not the %d this writer left while it held the partition's lock: another program changed it (run 'seglog verify-crc %s')",
				w.log.Name(), fi.Size(), w.logSize, w.topic)
		}
	}
	if err != nil {
		w.closeFiles()
		return w.fail(fmt.Errorf("open %s again: %w", w.name, err))
	}
	return nil
}

// FilesOpen reports whether the writer holds its active segment's files
// open: from its first Append (or Open) until Idle or Close.
func (w *Writer) FilesOpen() bool { return w.log != nil }

// Idle makes the writer hold nothing but its lock, as if closed and opened
// again: what is buffered is written and, unless SyncNever, synced as
// Close does (so Durable covers it), the segment files are closed and the
// buffers freed. The next write opens the files again. A failed sync is as
// fatal as anywhere.
func (w *Writer) Idle() error {
	if w.log == nil {
		return nil
	}
	err := w.Flush()
	if err == nil && w.opts.Sync != SyncNever && w.unsynced {
		err = w.sync(true)
	}
	if cerr := w.closeFiles(); err == nil && cerr != nil {
		err = w.fail(cerr)
	}
	w.logBuf, w.idxBuf, w.tidxBuf, w.bigHeader = nil, nil, nil, nil
	return err
}

func (w *Writer) openActive(dir string) error {
	segs, err := listSegments(dir)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		segs = []segment{{dir: dir, base: 0}}
		if err := createSegmentFiles(w.fs, segs[0], w.opts.Sync != SyncNever); err != nil {
			return err
		}
	} else if w.opts.Sync != SyncNever {
		// A writer that did not sync (--sync never, a crash) may have left
		// the active segment's directory entry unsynced: records this one
		// syncs and acknowledges must not vanish with the entry.
		if err := w.fs.SyncDir(dir); err != nil {
			return err
		}
	}
	w.seg = segs[len(segs)-1]
	// Missing index files are made only once the partition is known to
	// take appends: one refused is left as it was.
	if err := w.openFiles(false); err != nil {
		return err
	}
	// Offsets below where the segment before ends are taken.
	floor, err := precedingEnd(segs, len(segs)-1)
	if err != nil {
		return err
	}
	// Only the part after the last index entry the chain confirms is
	// walked: opening must not read a whole 1 GiB segment. Damage behind
	// that point is for readers, verify-crc and recover to find.
	end, err := w.findEnd(floor, false)
	if err != nil {
		return err
	}
	if end.Tail != nil && end.Tail.Class == segfile.Incomplete && end.First == end.Tail {
		// About to cut: the verdict must not depend on any index entry.
		if end, err = w.findEnd(floor, true); err != nil {
			return err
		}
	}
	if err := emptyBelowFloor(w.seg, end, floor, fmt.Sprintf("run 'seglog recover %s --partition %d' to remove it", w.topic, w.part)); err != nil {
		return err
	}
	switch {
	case end.First != nil && end.First.Class == segfile.Corrupt:
		// Plain recover leaves corrupt records in place: salvage repairs.
		return fmt.Errorf("%w; run 'seglog recover %s --partition %d --salvage' to repair it", corruption(end.First), w.topic, w.part)
	case end.Next < floor:
		// Appending here would take offsets the segment before holds.
		ce := &CorruptionError{Path: w.log.Name(), Pos: 0, Offset: int64(floor), Reason: ErrOverlap}
		return fmt.Errorf("%w (its records end at offset %d); run 'seglog recover %s --partition %d --salvage' to repair it", ce, end.Next, w.topic, w.part)
	case end.Full:
		return fmt.Errorf("partition %s is full: its last record has offset %d, the last there is (offsets never wrap)", w.name, uint64(math.MaxUint64))
	case end.Tail != nil:
		if err := w.cutTail(end); err != nil {
			return err
		}
	}
	if err := w.openFiles(true); err != nil {
		return err
	}
	w.logSize, w.next, w.written, w.logWriteback = end.Pos, end.Next, end.Next, end.Pos
	w.durable = end.Next
	w.count = end.Next - w.seg.base
	w.lastTS = end.MaxTS
	if w.count > 0 {
		if w.firstTS, err = firstRecordTime(w.seg, w.log); err != nil {
			return err
		}
	} else if len(segs) > 1 {
		// An empty active segment: the clock floor comes from the one before.
		w.lastTS = previousLastTS(segs[len(segs)-2])
	}
	if w.idxSize, err = trimIndex(w.idx, func(b []byte) bool {
		e := segfile.Entry(b)
		return e.Offset < w.next && e.Pos < w.logSize
	}); err != nil {
		return err
	}
	w.tidxSize, err = trimIndex(w.tidx, func(b []byte) bool { return segfile.Entry(b).Offset < w.next })
	w.idxWriteback, w.tidxWriteback = w.idxSize, w.tidxSize
	return err
}

func (w *Writer) openSegmentFiles() error { return w.openFiles(true) }

// openFiles opens the active segment's files that are not open yet; with
// create, it makes missing index files, else leaves them unopened.
func (w *Writer) openFiles(create bool) error {
	var err error
	if w.log == nil {
		if w.log, err = w.fs.OpenFile(w.seg.path(format.LogExt), os.O_RDWR|os.O_APPEND, 0); err != nil {
			return err
		}
	}
	flag := os.O_RDWR | os.O_APPEND
	if create {
		flag |= os.O_CREATE
	}
	for _, x := range []struct {
		f   *file
		ext string
	}{{&w.idx, format.IndexExt}, {&w.tidx, format.TimeIndexExt}} {
		if *x.f != nil {
			continue
		}
		if *x.f, err = w.fs.OpenFile(w.seg.path(x.ext), flag, 0o644); err != nil && (create || !errors.Is(err, fs.ErrNotExist)) {
			return err
		}
	}
	return nil
}

// findEnd finds where the active segment's valid data ends, walking from
// its last confirmed index entry or, with fromStart, from its first byte;
// offsets below floor are the segment's before.
func (w *Writer) findEnd(floor uint64, fromStart bool) (segfile.End, error) {
	var idx *segfile.Index
	if w.idx != nil { // none before openFiles(true) when it is missing
		if fi, err := w.idx.Stat(); err == nil {
			idx = segfile.NewIndex(w.idx, fi.Size())
		}
	}
	end, err := segfile.FindEnd(segfileSegment(w.seg, w.log, idx, floor, true), fromStart)
	if err != nil {
		return end, fmt.Errorf("scan %s: %w", w.log.Name(), err)
	}
	return end, nil
}

// firstRecordTime is the timestamp of the first record of seg, whose .log
// is open as log.
func firstRecordTime(seg segment, log file) (int64, error) {
	sc, err := segfile.NewScanner(segfileSegment(seg, log, nil, 0, true), -1, segfile.Options{})
	if err != nil {
		return 0, err
	}
	defer sc.Close()
	if !sc.Next() {
		return 0, sc.Err()
	}
	return sc.Header().Timestamp, nil
}

// cutTail saves an incomplete tail to quarantine, then cuts it in place
// (a tail -f reader may hold the file open).
func (w *Writer) cutTail(end segfile.End) error {
	t := end.Tail
	q, err := w.store.quarantine(w.topic, w.part, w.log, t.Pos, t.Limit, t.Offset, "incomplete record at the end of the active segment, cut on opening for append: "+t.Explain())
	if err != nil {
		return fmt.Errorf("%w (found an incomplete record at byte %d of %s and left it in place)", err, t.Pos, w.log.Name())
	}
	if err := w.log.Truncate(t.Pos); err != nil {
		return err
	}
	if w.opts.Sync != SyncNever {
		if err := w.log.Sync(); err != nil {
			return err
		}
	}
	w.opts.Warn(fmt.Sprintf("partition %s: cut an incomplete record at the end of %s (%d bytes at byte %d, offset %d would have been next); saved to %s",
		w.name, w.log.Name(), t.Limit-t.Pos, t.Pos, t.Offset, q))
	return nil
}

// previousLastTS is the newest timestamp of a closed segment's last
// records, or 0 if it cannot be found.
func previousLastTS(seg segment) int64 {
	end, err := segmentEnd(seg, 0, false, false)
	if err != nil {
		return 0
	}
	return end.MaxTS
}

// trimIndex drops a partial last entry and, from the end, entries for which
// keep is false (stale ones past the valid log), so new entries follow in
// order. It returns the new size.
func trimIndex(f file, keep func(entry []byte) bool) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size() - fi.Size()%format.IndexEntryLen
	var b [format.IndexEntryLen]byte
	for size > 0 {
		if _, err := f.ReadAt(b[:], size-format.IndexEntryLen); err != nil {
			return 0, err
		}
		if keep(b[:]) {
			break
		}
		size -= format.IndexEntryLen
	}
	if size != fi.Size() {
		if err := f.Truncate(size); err != nil {
			return 0, err
		}
	}
	return size, nil
}

// NextOffset is the offset the next Append gets.
func (w *Writer) NextOffset() uint64 { return w.next }

// Written is the offset after the last record that reached the file.
func (w *Writer) Written() uint64 { return w.written }

// Durable is the offset after the last record this writer knows to be on
// disk: its segment's files fdatasync'd after it was written (under
// SyncBatch after every batch, under SyncExit at a roll and on Close, under
// SyncNever never), and the segment's directory entry synced (when the
// writer created it, or opened it as the active one). It starts at the
// offset the writer opened at. An acknowledgement given for a record this
// writer appended below it survives a power cut.
func (w *Writer) Durable() uint64 { return w.durable }

// Append buffers a record with timestamp max(ts, the last one) and returns
// its offset. It rolls the segment first when the record would push it
// past the segment size or the segment's first record is older than the
// roll age. Buffered records reach the file on Flush, on Close, or when
// the buffer fills.
func (w *Writer) Append(ts int64, key, value []byte) (uint64, error) {
	if w.failed != nil {
		return 0, fmt.Errorf("%s: %w: %v", w.name, ErrWriterFailed, w.failed)
	}
	if !w.opened {
		if err := w.Open(); err != nil {
			return 0, err
		}
	}
	if w.full {
		return 0, fmt.Errorf("partition %s is full: offset %d was the last there is (offsets never wrap)", w.name, uint64(math.MaxUint64))
	}
	ts = max(ts, w.lastTS)
	n := format.RecordLen(key, value)
	if w.count > 0 && (w.logSize+int64(len(w.logBuf))+n > w.opts.SegmentBytes || ts-w.firstTS > int64(w.opts.RollAfter)) {
		if err := w.roll(); err != nil {
			return 0, err
		}
	}
	k := w.count
	if every := uint64(w.opts.IndexInterval); every == 1 || k%every == 0 { // a division per record is dear
		pos := w.logSize + int64(len(w.logBuf))
		w.idxBuf = format.AppendIndexEntry(w.idxBuf, format.IndexEntry{Offset: w.next, Pos: pos})
		w.tidxBuf = format.AppendTimeIndexEntry(w.tidxBuf, format.TimeIndexEntry{Offset: w.next, Timestamp: ts})
	}
	var rec format.Record // field by field: see format.Header.Decode
	rec.Offset, rec.Timestamp, rec.Key, rec.Value = w.next, ts, key, value
	if k == 0 {
		w.firstTS = ts
	}
	w.count++
	w.lastTS = ts
	w.next++
	w.full = w.next == 0
	if n > flushAt {
		// Too big to buffer: written from where key and value are, so a
		// 64 MiB record is never held twice.
		w.bigHeader = format.AppendHeader(w.bigHeader[:0], &rec)
		return rec.Offset, w.write(w.bigHeader, key, value)
	}
	w.logBuf = format.AppendRecord(w.logBuf, &rec)
	if len(w.logBuf) >= flushAt {
		return rec.Offset, w.Flush()
	}
	return rec.Offset, nil
}

// RunClock stamps the records of one run (an append, an import) so that
// their timestamps strictly increase across every partition it writes,
// never below a partition's last: tail -n and merged reads then show one
// writer's records in the order it appended them. The clock is
// read once per batch; the nanosecond steps are what keep the records of
// a batch apart.
type RunClock struct{ last int64 }

// Stamp is the timestamp of the next record the run stamps itself, for
// w, now being the clock reading: max(now, the run's last + 1ns, w's
// last).
func (c *RunClock) Stamp(now int64, w *Writer) int64 {
	next := c.last + 1
	if c.last == math.MaxInt64 {
		next = c.last // the end of time: no later stamp exists
	}
	c.last = max(now, next, w.lastTS)
	return c.last
}

// Keep is the timestamp of a record for w that brings its own, ts, raised
// to w's last if older so the time index stays sorted; raised says
// whether it was.
func (c *RunClock) Keep(ts int64, w *Writer) (stamp int64, raised bool) {
	stamp = max(ts, w.lastTS)
	c.last = max(c.last, stamp)
	return stamp, stamp != ts
}

// Buffered reports whether records wait to be written.
func (w *Writer) Buffered() bool { return len(w.logBuf) > 0 }

// Flush writes the buffered records: the .log first, then the index entries,
// so no index entry ever points at log bytes not yet written. With
// SyncBatch it then syncs. A write that fails part-way is cut back to the
// last whole record before the error is returned, and the writer fails.
func (w *Writer) Flush() error { return w.write() }

// write writes the buffered records, then the parts of one more record
// given unbuffered, then their index entries.
func (w *Writer) write(unbuffered ...[]byte) error {
	if w.failed != nil {
		return fmt.Errorf("%s: %w: %v", w.name, ErrWriterFailed, w.failed)
	}
	if len(w.logBuf) == 0 && len(unbuffered) == 0 {
		return nil
	}
	if err := w.reopen(); err != nil {
		return err
	}
	n, err := w.log.Write(w.logBuf)
	for _, part := range unbuffered {
		if err != nil {
			break
		}
		var m int
		m, err = w.log.Write(part)
		n += m
	}
	if err != nil {
		return w.fail(w.failedWrite(n, err))
	}
	w.logSize += int64(n)
	w.written = w.next
	if err := appendAll(w.idx, w.idxBuf, &w.idxSize); err != nil {
		return w.fail(err)
	}
	if err := appendAll(w.tidx, w.tidxBuf, &w.tidxSize); err != nil {
		return w.fail(err)
	}
	if w.opts.Sync == SyncExit {
		// Start writing back now what the sync at roll or exit must wait
		// for: the disk works while we go on encoding. The indexes too:
		// with 100-byte records they are a fifth of the data.
		startWriteback(w.log, &w.logWriteback, w.logSize)
		startWriteback(w.idx, &w.idxWriteback, w.idxSize)
		startWriteback(w.tidx, &w.tidxWriteback, w.tidxSize)
	}
	w.resetBuffers()
	w.unsynced = true
	if w.opts.Sync == SyncBatch {
		return w.sync(false)
	}
	return nil
}

// Sync writes what is buffered and, unless the writer never syncs, makes
// it durable now, whatever its SyncMode says about when: an importer
// saves where it got to only after the records before it are safe.
func (w *Writer) Sync() error {
	if err := w.Flush(); err != nil || w.opts.Sync == SyncNever || w.durable == w.written {
		return err
	}
	return w.sync(true)
}

// failedWrite handles a .log write that wrote n bytes and failed: it keeps
// the whole records among those n bytes (and their index entries), cuts
// the rest, and describes what happened.
func (w *Writer) failedWrite(n int, werr error) error {
	kept, records := segfile.WholeRecords(w.logBuf, int64(n))
	first := w.written
	cause := fsx.PathErrCause(werr, w.log.Name())
	msg := fmt.Sprintf("write %s: %v", w.log.Name(), cause)
	if err := w.log.Truncate(w.logSize + kept); err != nil {
		return fmt.Errorf("%s; cutting the partial record back also failed: %v (run 'seglog recover %s')", msg, err, w.topic)
	}
	w.logSize += kept
	w.written = first + records
	if records > 0 {
		_ = appendAll(w.idx, entriesBefore(w.idxBuf, w.written), &w.idxSize)
		_ = appendAll(w.tidx, entriesBefore(w.tidxBuf, w.written), &w.tidxSize)
	}
	return fmt.Errorf("write %s: %w (%s holds offsets up to %d; nothing partial was left behind)", w.log.Name(), cause, w.name, int64(w.written)-1)
}

// entriesBefore returns the leading index entries of buf whose offsets are
// below next.
func entriesBefore(buf []byte, next uint64) []byte { return buf[:segfile.EntriesBelow(buf, next)] }

// appendAll writes b to an index file; on failure it cuts the file back so
// no partial entry stays.
func appendAll(f file, b []byte, size *int64) error {
	if len(b) == 0 {
		return nil
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Truncate(*size)
		return fmt.Errorf("write %s: %w", f.Name(), fsx.PathErrCause(err, f.Name()))
	}
	*size += int64(len(b))
	return nil
}

func (w *Writer) fail(err error) error {
	w.failed = err
	w.resetBuffers()
	return err
}

func (w *Writer) resetBuffers() {
	if cap(w.logBuf) > 2*flushAt { // after one huge record, don't keep its buffer
		w.logBuf = nil
	}
	w.logBuf, w.idxBuf, w.tidxBuf = w.logBuf[:0], w.idxBuf[:0], w.tidxBuf[:0]
}

// sync makes the active segment's records durable: the .log, and with
// indexes its .index and .timeindex too. After each batch under SyncBatch
// the .log alone: the indexes are hints a crash may leave short (docs/format.md §4,
// §4), synced at a roll, on Close and on Sync, and each fdatasync of a
// file that grew is a disk flush, so a batch costs one instead of three.
// A failed sync is fatal: the kernel may have dropped the dirty pages, so
// retrying proves nothing.
func (w *Writer) sync(indexes bool) error {
	files := []file{w.log, w.idx, w.tidx}
	if !indexes {
		files = files[:1]
	}
	for _, f := range files {
		if err := f.Sync(); err != nil {
			return w.fail(err)
		}
	}
	w.durable = w.written
	w.unsynced = w.unsynced && !indexes
	return nil
}

// roll closes the active segment (written and synced) and starts a new one
// named after the next offset.
func (w *Writer) roll() error {
	if err := w.Flush(); err != nil {
		return err
	}
	if w.opts.Sync != SyncNever && w.log != nil { // closed by Idle: synced then
		if err := w.sync(true); err != nil {
			return err
		}
	}
	if err := w.closeFiles(); err != nil {
		return w.fail(err)
	}
	w.seg = segment{dir: w.seg.dir, base: w.next}
	if err := createSegmentFiles(w.fs, w.seg, w.opts.Sync != SyncNever); err != nil {
		return w.fail(fmt.Errorf("roll %s: %w", w.name, err))
	}
	if err := w.openSegmentFiles(); err != nil {
		return w.fail(fmt.Errorf("roll %s: %w", w.name, err))
	}
	w.logSize, w.idxSize, w.tidxSize, w.count = 0, 0, 0, 0
	w.logWriteback, w.idxWriteback, w.tidxWriteback = 0, 0, 0
	return nil
}

// startWriteback starts writing f back from *mark to size once
// writebackEvery bytes have piled up there, and moves *mark on.
func startWriteback(f file, mark *int64, size int64) {
	if size-*mark >= writebackEvery {
		_ = f.StartWriteback(*mark, size-*mark)
		*mark = size
	}
}

func (w *Writer) closeFiles() error {
	var err error
	for _, f := range []*file{&w.log, &w.idx, &w.tidx} {
		if *f != nil {
			if cerr := (*f).Close(); err == nil {
				err = cerr
			}
			*f = nil
		}
	}
	return err
}

// Close writes what is buffered, syncs (unless SyncNever), closes the files
// and releases the lock. The lock is released even when an error is
// returned.
func (w *Writer) Close() error {
	if w.closed {
		return fmt.Errorf("%s: %w", w.name, os.ErrClosed)
	}
	w.closed = true
	var err error
	if w.opened {
		err = w.Flush()
		if err == nil && w.opts.Sync != SyncNever && w.log != nil { // closed by Idle: synced then
			err = w.sync(true)
		}
	}
	if cerr := w.closeFiles(); err == nil {
		err = cerr
	}
	if uerr := w.lock.Unlock(); err == nil {
		err = uerr
	}
	if errors.Is(err, ErrWriterFailed) {
		err = w.failed
	}
	if w.failed == nil {
		w.failed = os.ErrClosed // later appends fail instead of writing to closed files
	}
	return err
}
