package logstore

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seglog/seglog/format"
)

// Severity says how much a verify finding matters (CLI.md's exit-code
// table decides which findings are problems).
type Severity int

const (
	// SeverityProblem is data that is wrong: verify-crc exits 3.
	SeverityProblem Severity = iota
	// SeverityNote is worth knowing and not wrong: an index recover would
	// rebuild, a record a live writer is still writing, timestamps going
	// backwards.
	SeverityNote
	// SeverityKnown is an offset gap recorded in the partition's .gaps.json.
	SeverityKnown
)

func (s Severity) String() string {
	switch s {
	case SeverityProblem:
		return "problem"
	case SeverityNote:
		return "note"
	case SeverityKnown:
		return "known"
	}
	return "severity(" + strconv.Itoa(int(s)) + ")"
}

// FindingKind names what a finding is about. verify-crc --json prints
// these names: they are part of the command-line contract.
type FindingKind string

// Kinds of findings, and their severity.
const (
	// FindingCorruptRecord: a record that does not check out where a valid
	// one must be (SPEC §2). Problem.
	FindingCorruptRecord FindingKind = "corrupt-record"
	// FindingIncompleteTail: the active segment ends in a record that is
	// incomplete (or zero bytes). A note while a writer holds the
	// partition, else a problem.
	FindingIncompleteTail FindingKind = "incomplete-tail"
	// FindingOverlap: a segment starts below the end of the one before.
	// Problem.
	FindingOverlap FindingKind = "overlap"
	// FindingGap: offsets missing between two segments. Known when
	// .gaps.json records them, else a problem.
	FindingGap FindingKind = "gap"
	// FindingIndexMismatch: an index entry that lies: the record at its
	// position has another offset, or (time index) another timestamp, or
	// no record of the segment has its offset. Problem.
	FindingIndexMismatch FindingKind = "index-mismatch"
	// FindingIndexNoRecord: an index entry pointing inside the log where
	// no record starts. Problem.
	FindingIndexNoRecord FindingKind = "index-no-record"
	// FindingIndexOrder: index entries out of order. Problem.
	FindingIndexOrder FindingKind = "index-order"
	// FindingIndexStale: an entry past the end of the log or its valid
	// records (left by a power loss). Note.
	FindingIndexStale FindingKind = "index-stale"
	// FindingIndexMissing: no index file. Note.
	FindingIndexMissing FindingKind = "index-missing"
	// FindingIndexShort: an index with fewer entries than the records
	// need. Note.
	FindingIndexShort FindingKind = "index-short"
	// FindingIndexPartial: an index whose length is not a multiple of 16;
	// the partial last entry is ignored. Note.
	FindingIndexPartial FindingKind = "index-partial-entry"
	// FindingTimeBackwards: a record older than the one before it
	// (foreign writers stamp the wall clock). Note.
	FindingTimeBackwards FindingKind = "timestamp-backwards"
	// FindingKeyRouting: keyed records in a partition other than the one
	// FNV-1a routing gives them: a hint at a flipped keylen, or data
	// written with a fixed partition. Note.
	FindingKeyRouting FindingKind = "key-routing"
	// FindingSegmentGone: a segment deleted while it was being checked (a
	// retention sweep). Note.
	FindingSegmentGone FindingKind = "segment-gone"
	// FindingNoSegments: a partition directory holding no segment. Note.
	FindingNoSegments FindingKind = "no-segments"
	// FindingMissingPartition: a partition directory missing below the
	// topic's highest. Problem. (Found by whoever lists the topic.)
	FindingMissingPartition FindingKind = "missing-partition"
	// FindingGapsFile: the partition's .gaps.json cannot be parsed.
	// Problem.
	FindingGapsFile FindingKind = "gaps-file"
)

// Finding is one thing Verify found.
type Finding struct {
	Severity  Severity
	Kind      FindingKind
	Partition string // the partition's name
	Path      string // the file (or directory) concerned
	Pos       int64  // byte position in Path (a record's header, an index entry); -1 if none
	Offset    int64  // the offset concerned; -1 if none
	Reason    string
	// Cause is, for corrupt-record and incomplete-tail findings, the
	// format.Err* sentinel (ErrCRC, ErrKeyLen, ErrOffset, ErrShort).
	Cause error
}

// VerifyTarget is a partition to verify. Number and Count place it in its
// topic, for the key-routing hint; Count <= 1 turns the hint off.
type VerifyTarget struct {
	Partition     *Partition
	Number, Count int
}

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Jobs is how many segments are checked at once; <= 0 means one per
	// CPU.
	Jobs int
	// Finding receives each finding, partition by partition and segment by
	// segment, in the same order whatever Jobs is. It is called on the
	// goroutine that called Verify. An error it returns stops the check
	// and is returned.
	Finding func(Finding) error
	// Progress, if set, is told every so often how many bytes of the
	// partitions' .log files have been checked, out of total. It is called
	// on the goroutine that called Verify.
	Progress func(done, total int64)
}

// VerifyReport sums up the check of one partition.
type VerifyReport struct {
	Name      string
	Dir       string
	Segments  int
	Records   uint64 // valid records
	Bytes     int64  // of .log files checked
	Problems  int
	Notes     int
	Known     int
	WriterPid int  // holder of the writer lock when the active segment was checked, 0 if none
	Complete  bool // false when an I/O error cut the check short
}

// Verify checks every record of every segment of the targets, and their
// indexes, segment boundaries and tails, without taking any lock (SPEC
// §4: it reads /proc/locks to tell a live writer). It reports every
// finding through opts.Finding and returns a report per target. The error
// is an I/O error that kept part of the data from being checked (the
// reports say which partitions), or the one opts.Finding returned.
//
// Segments are checked in parallel, opts.Jobs at a time, and large ones
// in pieces: each piece starts at a record an index entry points at, and
// the pieces must meet exactly (each ending at the record where the next
// starts, with the offset it starts with), else the segment is scanned
// again whole from byte 0. So the index is never trusted: every record is
// checked from the segment's first byte on. Memory stays constant
// whatever the data's size.
func Verify(targets []VerifyTarget, opts VerifyOptions) ([]VerifyReport, error) {
	reports := make([]VerifyReport, len(targets))
	var jobs []verifyJob
	var total int64
	firstJob := make([]int, len(targets)+1)
	workers := opts.Jobs
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	for ti, t := range targets {
		p := t.Partition
		reports[ti] = VerifyReport{Name: p.name, Dir: p.dir, Segments: len(p.segs), Complete: true}
		firstJob[ti] = len(jobs)
		for si, seg := range p.segs {
			var size int64
			if fi, err := os.Stat(seg.path(format.LogExt)); err == nil {
				size = fi.Size()
			}
			total += size
			jobs = append(jobs, verifyJob{seg: seg, active: si == len(p.segs)-1, name: p.name,
				number: t.Number, count: t.Count, size: size})
		}
	}
	firstJob[len(targets)] = len(jobs)

	sh := &verifyShared{results: make([]*verifyResult, len(jobs)), done: make([]chan struct{}, len(jobs))}
	sh.total.Store(total)
	// The work: segments, and pieces of the large ones when there are
	// workers to share them, so that --jobs also speeds up a partition of
	// one big segment.
	var work []verifyWork
	for j := range jobs {
		sh.done[j] = make(chan struct{})
		job := &jobs[j]
		if workers > 1 {
			job.ranges = verifyPlan(job.seg, job.size, min(4*workers, int(job.size/verifyMinRange)))
		}
		if len(job.ranges) == 0 {
			work = append(work, verifyWork{job: j, part: -1})
			continue
		}
		job.parts = make([]*verifyResult, len(job.ranges))
		job.left.Store(int32(len(job.ranges)))
		for k := range job.ranges {
			work = append(work, verifyWork{job: j, part: k})
		}
	}
	var wg sync.WaitGroup
	for range min(workers, len(work)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, verifyChunk)
			for {
				w := int(sh.next.Add(1) - 1)
				if w >= len(work) {
					return
				}
				j, job := work[w].job, &jobs[work[w].job]
				if k := work[w].part; k >= 0 {
					job.parts[k] = verifySegment(job, &job.ranges[k], sh, buf)
					if job.left.Add(-1) > 0 {
						continue
					}
					sh.results[j] = verifyMerge(job, sh, buf)
				} else {
					sh.results[j] = verifySegment(job, nil, sh, buf)
				}
				close(sh.done[j])
			}
		}()
	}
	// Whatever happens, no worker outlives the call.
	defer func() {
		sh.stop.Store(true)
		wg.Wait()
	}()

	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	progress := func() {
		if opts.Progress != nil {
			done := sh.checked.Load()
			opts.Progress(done, max(sh.total.Load(), done))
		}
	}
	emit := opts.Finding
	if emit == nil {
		emit = func(Finding) error { return nil }
	}
	var errs []error
	for ti, t := range targets {
		pe := verifyPartitionEmitter{p: t.Partition, report: &reports[ti], emit: emit}
		if err := pe.start(); err != nil {
			return reports, err
		}
		for j := firstJob[ti]; j < firstJob[ti+1]; j++ {
			for waiting := true; waiting; {
				select {
				case <-sh.done[j]:
					waiting = false
				case <-ticker.C:
					progress()
				}
			}
			res := sh.results[j]
			sh.results[j] = nil // emitted results need not stay in memory
			if err := pe.segment(&jobs[j], res); err != nil {
				return reports, err
			}
			if res.err != nil {
				errs = append(errs, res.err)
			}
		}
		if err := pe.finish(); err != nil {
			return reports, err
		}
	}
	progress()
	return reports, errors.Join(errs...)
}

// Verify checks the partition alone (no key-routing hint); see the
// package-level Verify.
func (p *Partition) Verify(opts VerifyOptions) (VerifyReport, error) {
	reports, err := Verify([]VerifyTarget{{Partition: p}}, opts)
	return reports[0], err
}

const (
	verifyChunk      = 256 << 10 // .log bytes read at a time: room for the CPU's L2 cache to keep them for the CRC
	verifyIndexBlock = 4096      // index entries read at a time
	verifyMaxPerKind = 100       // findings of one kind and severity listed per file; the rest are counted
	verifyMinRange   = 1 << 20   // the smallest piece of a segment checked apart
)

// errVerifyStopped ends a segment's check when the caller stopped Verify.
var errVerifyStopped = errors.New("logstore: verify stopped")

// verifyShared is what the workers and the emitting goroutine share.
type verifyShared struct {
	next    atomic.Int64 // next work to take
	stop    atomic.Bool
	checked atomic.Int64 // .log bytes checked, for progress
	total   atomic.Int64 // ... to check
	results []*verifyResult
	done    []chan struct{} // closed when results[i] is ready
}

// verifyJob is one segment to check.
type verifyJob struct {
	seg           segment
	active        bool
	name          string // the partition's
	number, count int    // for the key-routing hint
	size          int64  // of the .log when planned

	// A large segment is checked in pieces, each from a record its index
	// points at (see verifyPlan), then put together by verifyMerge.
	ranges []verifyRange
	parts  []*verifyResult
	left   atomic.Int32 // pieces not checked yet
}

// verifyWork is one piece of work: a whole segment (part -1), or a range.
type verifyWork struct{ job, part int }

// verifyRange is a piece of a segment: from the record at pos (offset
// off, pointed at by entry number entry of both index files) to the one
// at end, where the next range starts (the last: -1, to the end).
type verifyRange struct {
	pos, end      int64
	off           uint64
	entry, endEnt int64
}

// verifyResult is what checking one segment found.
type verifyResult struct {
	log, index, timeIndex []Finding // in file order, each file's at most verifyMaxPerKind per kind (plus a summary)
	extra                 [3]int    // findings counted but not listed, by severity
	records               uint64
	bytes                 int64
	next                  uint64 // offset after the last valid record (the base when none)
	damagedEnd            bool   // the segment ends in damage: the offsets after next are unknown
	firstTS, lastTS       int64  // when records > 0
	routeKeyed            uint64 // keyed records
	routeWrong            uint64 // ... in another partition than FNV routing gives them
	routeFirst            Finding
	writerPid             int // active segment: the writer lock's holder
	gone                  bool
	err                   error
}

// verifyFindings collects a file's findings, listing at most
// verifyMaxPerKind of each kind and severity: a lying index of ten million
// entries must not make ten million lines or hold them in memory.
type verifyFindings struct {
	list   *[]Finding
	extra  *[3]int
	counts map[verifyKindKey]int
}

type verifyKindKey struct {
	kind FindingKind
	sev  Severity
}

func (v *verifyFindings) add(f Finding) {
	if v.counts == nil {
		v.counts = map[verifyKindKey]int{}
	}
	k := verifyKindKey{f.Kind, f.Severity}
	v.counts[k]++
	if v.counts[k] <= verifyMaxPerKind {
		*v.list = append(*v.list, f)
	}
}

// close adds a finding saying how many were not listed, per kind.
func (v *verifyFindings) close(partition, path string) {
	keys := make([]verifyKindKey, 0, len(v.counts))
	for k, n := range v.counts {
		if n > verifyMaxPerKind {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b verifyKindKey) int {
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.sev, b.sev))
	})
	for _, k := range keys {
		more := v.counts[k] - verifyMaxPerKind
		*v.list = append(*v.list, Finding{Severity: k.sev, Kind: k.kind, Partition: partition, Path: path, Pos: -1, Offset: -1,
			Reason: fmt.Sprintf("and %d more %s findings in this file, not listed", more, k.kind)})
		v.extra[k.sev] += more - 1
	}
}

// verifyScan checks one segment: its records from the first byte, and its
// index files in step with the records.
type verifyScan struct {
	job    *verifyJob
	sh     *verifyShared
	res    *verifyResult
	f      *os.File
	path   string
	active bool // the end of the active segment is in the scan
	last   bool // the scan goes to the end of the segment

	// Where the scan starts and (when not last) ends: see verifyRange.
	start, end       int64
	startOff         uint64
	startEnt, endEnt int64

	size   int64 // how far the scan goes: the .log's size when opened
	grown  bool  // size was asked again once, for a record being written
	buf    []byte
	bufPos int64
	lr     *logReader // for resynchronising and for records larger than buf
	shown  int64      // position up to which progress was counted
	logF   verifyFindings

	ix, tx       *verifyIndex
	ixKey, txKey int64 // the pending entries' merge keys (math.MaxInt64: none)

	backwards    uint64 // timestamps going backwards
	backFirstPos int64
	backFirstOff uint64
	backFirstTS  int64
	backPrevTS   int64
}

// verifySegment checks a segment, or the range rg of it.
func verifySegment(job *verifyJob, rg *verifyRange, sh *verifyShared, buf []byte) *verifyResult {
	res := &verifyResult{next: job.seg.base}
	s := &verifyScan{job: job, sh: sh, res: res, buf: buf[:0], bufPos: 0, path: job.seg.path(format.LogExt),
		active: job.active, last: true, start: 0, startOff: job.seg.base, startEnt: 0, end: -1, endEnt: -1}
	if rg != nil {
		s.last = rg.end < 0
		s.active = job.active && s.last
		s.start, s.startOff, s.startEnt, s.end, s.endEnt = rg.pos, rg.off, rg.entry, rg.end, rg.endEnt
		s.shown, res.next = rg.pos, rg.off
	}
	s.logF = verifyFindings{list: &res.log, extra: &res.extra}
	// The indexes first: a writer writes index entries after the log
	// bytes they point at, so a .log size taken afterwards covers every
	// entry read.
	s.ix = s.openIndex(format.IndexExt, false, &res.index)
	s.tx = s.openIndex(format.TimeIndexExt, true, &res.timeIndex)
	s.setKeys()
	defer s.ix.close()
	defer s.tx.close()
	err := s.open()
	if err == nil && s.f != nil {
		defer s.f.Close()
		if s.end >= 0 {
			s.size = min(s.size, s.end)
		}
		if s.active {
			res.writerPid = WriterPid(job.seg.dir)
		}
		err = s.scan()
		res.bytes = s.size
	}
	switch {
	case res.gone:
		// Its index files went with it: nothing to say about them.
		res.index, res.timeIndex, res.extra = nil, nil, [3]int{}
		s.ix.findings.counts, s.tx.findings.counts = nil, nil
	case err == nil:
		s.finishIndexes()
	}
	s.logF.close(job.name, s.path)
	s.ix.findings.close(job.name, s.ix.path)
	s.tx.findings.close(job.name, s.tx.path)
	if err != nil && !errors.Is(err, errVerifyStopped) && res.err == nil {
		res.err = fmt.Errorf("verify %s: %w", s.path, pathErrCause(err, s.path))
	}
	return res
}

// open opens the .log. A segment deleted since the partition was listed
// (by a retention sweep) is a note, not an error.
func (s *verifyScan) open() error {
	f, err := openRead(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.res.gone = true
		s.logF.add(Finding{Severity: SeverityNote, Kind: FindingSegmentGone, Partition: s.job.name, Path: s.path, Pos: -1,
			Offset: int64(s.job.seg.base), Reason: "segment deleted while the check ran (by a retention sweep?): not checked"})
		return nil
	}
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	s.f, s.size = f, fi.Size()
	return nil
}

func (s *verifyScan) add(f Finding) {
	f.Partition, f.Path = s.job.name, s.path
	s.logF.add(f)
}

// scan walks the records from byte 0 to the end. A record that fails is
// reported and the scan goes on at the next valid record after it (SPEC
// §2: then it was corrupt), or, with none, the failure is the segment's
// tail.
func (s *verifyScan) scan() error {
	pos, next := s.start, s.startOff
	for pos < s.size {
		if pos, next = s.fast(pos, next); pos >= s.size {
			break
		}
		h, b, err := s.record(pos)
		if err == nil && h.Offset != next {
			err = format.ErrOffset
			if h.Offset > next {
				h, b, err = s.skipped(pos, next, h)
			}
		}
		if err == nil {
			s.valid(pos, h, b)
			pos += h.RecordLen()
			next = h.Offset + 1
			s.res.next = next
			continue
		}
		if isIOError(err) {
			return err
		}
		if errors.Is(err, format.ErrShort) && s.active && !s.grown {
			// A live writer may have finished this record since the size
			// was taken: ask once more, so as not to chase it forever.
			s.grown = true
			fi, serr := s.f.Stat()
			if serr != nil {
				return serr
			}
			if fi.Size() > s.size {
				s.size = fi.Size()
				continue
			}
		}
		at, off, ok, rerr := validRecordAfter(s.job.seg, s.logReader(), pos, next, s.size)
		if rerr != nil {
			return rerr
		}
		if !ok {
			return s.tail(pos, next, h, b, err)
		}
		s.damage(pos, next, at, off, h, b, err)
		pos, next = at, off
	}
	s.countProgress(s.size)
	return nil
}

// fast is the scan's fast path: whole records in the buffer that check
// out, one after another, with what valid does for each done inline. It
// returns where it stopped, for the slow path to look at.
func (s *verifyScan) fast(pos int64, next uint64) (int64, uint64) {
	i := pos - s.bufPos
	if i < 0 {
		return pos, next
	}
	r := s.res
	buf := s.buf
	records, lastTS := r.records, r.lastTS
	ixKey, txKey := s.ixKey, s.txKey
	route := s.job.count > 1
	var h format.Header
	for i+format.HeaderLen <= int64(len(buf)) {
		err := h.Decode(buf[i:])
		n := h.RecordLen()
		if err != nil || h.Offset != next || i+n > int64(len(buf)) {
			break
		}
		b := buf[i : i+n]
		if h.Verify(b) != nil {
			break
		}
		if records == 0 {
			r.firstTS = h.Timestamp
		} else if h.Timestamp < lastTS {
			s.goesBack(pos, h, lastTS)
		}
		records++
		lastTS = h.Timestamp
		end := pos + n
		if end > ixKey {
			ixKey = s.ix.record(pos, end, h, ixKey)
		}
		if k := int64(min(h.Offset, math.MaxInt64)); k >= txKey {
			txKey = s.tx.record(pos, end, h, txKey)
		}
		if route && h.KeyLen > 0 {
			s.route(pos, h, b)
		}
		pos, i = end, i+n
		next++
	}
	r.records, r.lastTS, r.next = records, lastTS, next
	s.ixKey, s.txKey = ixKey, txKey
	return pos, next
}

// goesBack notes a record older than the one before it.
func (s *verifyScan) goesBack(pos int64, h format.Header, prevTS int64) {
	if s.backwards == 0 {
		s.backFirstPos, s.backFirstOff, s.backFirstTS, s.backPrevTS = pos, h.Offset, h.Timestamp, prevTS
	}
	s.backwards++
}

// skipped decides about a sound record at pos whose offset h.Offset is
// above the next one expected. When the record after it follows on from
// it, offsets were skipped inside the segment: that is reported, and the
// record taken as the next one (returned, re-read). Otherwise its offset
// field is what is damaged: ErrOffset.
func (s *verifyScan) skipped(pos int64, next uint64, h format.Header) (format.Header, []byte, error) {
	h2, _, err := s.record(pos + h.RecordLen())
	if err != nil && isIOError(err) {
		return h, nil, err
	}
	if err != nil || h2.Offset != h.Offset+1 {
		return h, nil, format.ErrOffset
	}
	s.add(Finding{Severity: SeverityProblem, Kind: FindingCorruptRecord, Pos: pos, Offset: int64(next), Cause: format.ErrOffset,
		Reason: s.describe(pos, next, h, nil, format.ErrOffset) + fmt.Sprintf(": offsets %d..%d are missing inside the segment", next, h.Offset-1)})
	s.txSkip(h.Offset)
	return s.record(pos)
}

// record checks the record at pos as logReader.record does, through the
// scan's own larger buffer, bounded by the size the scan goes to. On
// ErrCRC the record's bytes are returned too.
func (s *verifyScan) record(pos int64) (format.Header, []byte, error) {
	i := pos - s.bufPos
	if i < 0 || i+format.HeaderLen > int64(len(s.buf)) {
		if err := s.fill(pos); err != nil {
			return format.Header{}, nil, err
		}
		if i = 0; len(s.buf) < format.HeaderLen {
			return format.Header{}, nil, format.ErrShort
		}
	}
	h, err := format.ParseHeader(s.buf[i:])
	if err != nil {
		return h, nil, err
	}
	n := h.RecordLen()
	if pos+n > s.size {
		return h, nil, format.ErrShort
	}
	if i+n > int64(len(s.buf)) {
		if n > int64(cap(s.buf)) {
			_, err := s.logReader().check(pos)
			return h, nil, err
		}
		if err := s.fill(pos); err != nil {
			return h, nil, err
		}
		if i = 0; n > int64(len(s.buf)) {
			return h, nil, format.ErrShort // the file shrank
		}
	}
	b := s.buf[i : i+n]
	return h, b, h.Verify(b)
}

// fill reads the buffer full from pos, up to the scan's size.
func (s *verifyScan) fill(pos int64) error {
	if s.sh.stop.Load() {
		return errVerifyStopped
	}
	s.countProgress(pos)
	n := max(min(int64(cap(s.buf)), s.size-pos), 0)
	b := s.buf[:n]
	m, err := s.f.ReadAt(b, pos)
	if int64(m) < n {
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		s.size = pos + int64(m) // truncated under us: it ends here now
	}
	s.buf, s.bufPos = b[:m], pos
	return nil
}

func (s *verifyScan) countProgress(pos int64) {
	if pos > s.shown {
		s.sh.checked.Add(pos - s.shown)
		s.shown = pos
	}
}

func (s *verifyScan) logReader() *logReader {
	if s.lr == nil {
		s.lr = newLogReader(osFile{s.f})
	}
	return s.lr
}

// valid takes in a valid record: counts, timestamps, the indexes' entries
// for it, the key's routing.
func (s *verifyScan) valid(pos int64, h format.Header, b []byte) {
	r := s.res
	end := pos + h.RecordLen()
	if r.records == 0 {
		r.firstTS = h.Timestamp
	} else if h.Timestamp < r.lastTS {
		s.goesBack(pos, h, r.lastTS)
	}
	r.records++
	r.lastTS = h.Timestamp
	if end > s.ixKey {
		s.ixKey = s.ix.record(pos, end, h, s.ixKey)
	}
	if k := int64(min(h.Offset, math.MaxInt64)); k >= s.txKey {
		s.txKey = s.tx.record(pos, end, h, s.txKey)
	}
	if s.job.count > 1 && h.KeyLen > 0 {
		s.route(pos, h, b)
	}
}

// route checks the record's key against FNV-1a routing.
func (s *verifyScan) route(pos int64, h format.Header, b []byte) {
	var key []byte
	if b != nil {
		key = b[format.HeaderLen : format.HeaderLen+int64(h.KeyLen)]
	} else if h.KeyLen <= 64<<10 {
		k, err := s.logReader().window(pos+format.HeaderLen, int64(h.KeyLen))
		if err != nil {
			return
		}
		key = k
	} else {
		return
	}
	r := s.res
	r.routeKeyed++
	want := KeyPartition(key, s.job.count)
	if want == s.job.number {
		return
	}
	if r.routeWrong == 0 {
		shown := key[:min(len(key), 64)]
		r.routeFirst = Finding{Severity: SeverityNote, Kind: FindingKeyRouting, Partition: s.job.name, Path: s.path, Pos: pos,
			Offset: int64(h.Offset), Reason: fmt.Sprintf("offset %d has key %s, which FNV-1a routing puts in partition %d of %d",
				h.Offset, strconv.Quote(string(shown)), want, s.job.count)}
	}
	r.routeWrong++
}

// damage reports the record at pos that failed with err when a valid
// record follows at (at, off): corrupt, wherever it is.
func (s *verifyScan) damage(pos int64, next uint64, at int64, off uint64, h format.Header, b []byte, err error) {
	reason := s.describe(pos, next, h, b, err) + fmt.Sprintf("; valid records resume at byte %d with offset %d", at, off)
	if off > next {
		reason += fmt.Sprintf(" (offsets %d..%d lost)", next, off-1)
	}
	s.add(Finding{Severity: SeverityProblem, Kind: FindingCorruptRecord, Pos: pos, Offset: int64(next), Reason: reason, Cause: err})
	s.ixSkip(at)
	s.txSkip(off)
}

// tail reports the record at pos that failed with err when no valid
// record follows it: an incomplete tail in the active segment, damage in
// a closed one (SPEC §2).
func (s *verifyScan) tail(pos int64, next uint64, h format.Header, b []byte, err error) error {
	// Described first: b is in the buffer allZero reads into.
	what := s.describe(pos, next, h, b, err)
	n := s.size - pos
	zero, zerr := s.allZero(pos, s.size)
	s.countProgress(s.size)
	if zerr != nil {
		return zerr
	}
	if zero {
		what = fmt.Sprintf("%d zero bytes", n)
	}
	if !s.active {
		s.res.damagedEnd = true
		s.add(Finding{Severity: SeverityProblem, Kind: FindingCorruptRecord, Pos: pos, Offset: int64(next), Cause: err,
			Reason: fmt.Sprintf("%s; no valid record follows: the last %d bytes of this closed segment are unreadable", what, n)})
		s.ixSkip(s.size)
		s.tx.skipRest()
		s.txKey = s.tx.key()
		return nil
	}
	// Like the writer (scanToEnd), whatever fails with nothing valid after
	// it ends the active segment's data. But only a record running past
	// the end of the file, or zeros, can be one a live writer is writing:
	// a reader sees a write's bytes in order.
	f := Finding{Kind: FindingIncompleteTail, Pos: pos, Offset: int64(next), Cause: err}
	if pid := s.res.writerPid; pid != 0 && (zero || errors.Is(err, format.ErrShort)) {
		f.Severity = SeverityNote
		f.Reason = fmt.Sprintf("incomplete record at the end of the active segment (%d bytes: %s): the writer (pid %d) holding the partition is writing it", n, what, pid)
	} else {
		f.Severity = SeverityProblem
		f.Reason = fmt.Sprintf("incomplete tail: %d bytes after the last valid record (%s) and no writer holds the partition: torn by a crash; 'seglog recover' cuts it", n, what)
		if pid := s.res.writerPid; pid != 0 {
			f.Reason = fmt.Sprintf("damaged tail: %d bytes after the last valid record (%s), which the writer (pid %d) holding the partition cannot be writing: a complete record that does not check out", n, what, pid)
		}
	}
	s.add(f)
	s.ix.onTail(s.size)
	s.ixKey = s.ix.key()
	s.tx.onTailOffsets(next)
	s.txKey = s.tx.key()
	return nil
}

func (s *verifyScan) ixSkip(to int64) {
	s.ix.skip(to)
	s.ixKey = s.ix.key()
}

func (s *verifyScan) txSkip(off uint64) {
	s.tx.skip(int64(min(off, math.MaxInt64)))
	s.txKey = s.tx.key()
}

// describe says why the record at pos failed.
func (s *verifyScan) describe(pos int64, next uint64, h format.Header, b []byte, err error) string {
	switch {
	case errors.Is(err, format.ErrCRC):
		if b != nil {
			return fmt.Sprintf("crc mismatch (stored 0x%08x, computed 0x%08x)", h.CRC, format.Checksum(h.Timestamp, b[format.HeaderLen:], nil))
		}
		return fmt.Sprintf("crc mismatch (stored 0x%08x)", h.CRC)
	case errors.Is(err, format.ErrKeyLen):
		return fmt.Sprintf("keylen %d larger than size %d", h.KeyLen, h.Size)
	case errors.Is(err, format.ErrOffset):
		if pos == 0 {
			return fmt.Sprintf("the first record has offset %d, but the segment's base offset is %d", h.Offset, next)
		}
		return fmt.Sprintf("offset %d where %d was expected", h.Offset, next)
	case errors.Is(err, format.ErrShort):
		if left := s.size - pos; left < format.HeaderLen {
			return fmt.Sprintf("only %d bytes, less than a record header", left)
		}
		return fmt.Sprintf("a record of %d bytes runs past the end of the file (%d bytes left)", h.RecordLen(), s.size-pos)
	}
	return err.Error()
}

// allZero reports whether the file's bytes [from, to) are all zero.
func (s *verifyScan) allZero(from, to int64) (bool, error) {
	for pos := from; pos < to; pos += int64(len(s.buf)) {
		if err := s.fill(pos); err != nil {
			return false, err
		}
		if len(s.buf) == 0 {
			return true, nil
		}
		if !format.IsZero(s.buf[:min(int64(len(s.buf)), to-pos)]) {
			return false, nil
		}
	}
	return true, nil
}

// finishIndexes deals with the entries left after the scan, and the notes
// on the indexes as a whole.
func (s *verifyScan) finishIndexes() {
	s.ix.finish(s.size, s.res.next, s.res.damagedEnd)
	s.tx.finish(s.size, s.res.next, s.res.damagedEnd)
	// With a live writer, an index lagging behind the log is normal. Only
	// a scan to the segment's end knows how many entries it needs.
	if s.last && !(s.active && s.res.writerPid != 0) {
		s.ix.short(s.res)
		s.tx.short(s.res)
	}
	if s.backwards > 0 {
		s.add(Finding{Severity: SeverityNote, Kind: FindingTimeBackwards, Pos: s.backFirstPos, Offset: int64(s.backFirstOff),
			Reason: fmt.Sprintf("timestamps go backwards %d times in this segment; first: offset %d has %d, older than the record before it (%d); time seeks scan this segment",
				s.backwards, s.backFirstOff, s.backFirstTS, s.backPrevTS)})
	}
}

// openIndex opens an index file of the segment for the merge with the
// scan. A missing file is a note; one that cannot be read is an I/O error
// of the check, which goes on without it.
func (s *verifyScan) openIndex(ext string, time bool, list *[]Finding) *verifyIndex {
	x := &verifyIndex{s: s, path: s.job.seg.path(ext), time: time, floor: -1, read: s.startEnt}
	x.findings = verifyFindings{list: list, extra: &s.res.extra}
	if time {
		x.floor = int64(min(s.startOff, math.MaxInt64))
	}
	f, err := openRead(x.path)
	if errors.Is(err, fs.ErrNotExist) {
		x.missing = true
		x.add(Finding{Severity: SeverityNote, Kind: FindingIndexMissing, Pos: -1, Offset: -1,
			Reason: "no " + ext + " file: reads scan the segment instead; 'seglog recover' rebuilds it"})
		return x
	}
	if err != nil {
		x.ioErr(err)
		return x
	}
	x.f = f
	fi, err := f.Stat()
	if err != nil {
		x.ioErr(err)
		return x
	}
	x.n = fi.Size() / format.IndexEntryLen
	if x.stop = x.n; s.endEnt >= 0 {
		x.stop = min(x.n, s.endEnt)
	}
	if part := fi.Size() % format.IndexEntryLen; part != 0 && s.last {
		x.add(Finding{Severity: SeverityNote, Kind: FindingIndexPartial, Pos: x.n * format.IndexEntryLen, Offset: -1,
			Reason: fmt.Sprintf("the file ends in a partial entry (%d of %d bytes), which is ignored", part, format.IndexEntryLen)})
	}
	x.advanceOrStop()
	return x
}

func (s *verifyScan) setKeys() {
	s.ixKey, s.txKey = s.ix.key(), s.tx.key()
}

// verifyIndex checks a .index or .timeindex against the records the scan
// meets, merging both sequences: entries in order are checked when the
// scan reaches their position (.index) or offset (.timeindex). Entries
// out of order are reported as such and not checked further.
type verifyIndex struct {
	s        *verifyScan
	path     string
	time     bool // a .timeindex: offset -> timestamp, merged by offset
	missing  bool
	failed   bool // an I/O error ended its check
	f        *os.File
	n        int64 // whole entries
	stop     int64 // entries from this one on are another range's
	buf      []byte
	bufFirst int64 // entry number of buf's first entry
	read     int64 // entries taken so far
	findings verifyFindings
	problems int

	// The pending entry: in order, waiting for the scan to reach its key.
	pend bool
	pi   int64
	po   uint64
	pv   int64 // position or timestamp
	pk   int64 // merge key: position (.index) or offset (.timeindex)

	// The entry after the last one taken, when already read (for the
	// order check).
	ahead bool
	ao    uint64
	av    int64

	prevBad bool  // the entry just taken was the second of an out-of-order pair
	floor   int64 // keys below this have been passed by the scan

}

func (x *verifyIndex) close() {
	if x != nil && x.f != nil {
		x.f.Close()
	}
}

func (x *verifyIndex) add(f Finding) {
	f.Partition, f.Path = x.s.job.name, x.path
	if f.Severity == SeverityProblem {
		x.problems++
	}
	x.findings.add(f)
}

func (x *verifyIndex) plural() string {
	if x.time {
		return "time index entries"
	}
	return "index entries"
}

func (x *verifyIndex) name() string {
	if x.time {
		return "time index entry"
	}
	return "index entry"
}

// key is the pending entry's merge key, math.MaxInt64 when none is left.
func (x *verifyIndex) key() int64 {
	if x == nil || !x.pend {
		return math.MaxInt64
	}
	return x.pk
}

// entry reads entry i, a block at a time.
func (x *verifyIndex) entry(i int64) (uint64, int64, error) {
	if j := (i - x.bufFirst) * format.IndexEntryLen; j >= 0 && j < int64(len(x.buf)) {
		// Both kinds are an offset, then 8 bytes: a position or a timestamp.
		e, err := format.ParseIndexEntry(x.buf[j:])
		return e.Offset, e.Pos, err
	}
	return x.refill(i)
}

func (x *verifyIndex) refill(i int64) (uint64, int64, error) {
	{
		n := min(verifyIndexBlock, x.n-i)
		if cap(x.buf) < verifyIndexBlock*format.IndexEntryLen {
			x.buf = make([]byte, 0, verifyIndexBlock*format.IndexEntryLen)
		}
		b := x.buf[:n*format.IndexEntryLen]
		m, err := x.f.ReadAt(b, i*format.IndexEntryLen)
		if m < len(b) {
			if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("%s shrank while being checked", x.path)
			}
			return 0, 0, err
		}
		x.buf, x.bufFirst = b, i
	}
	return x.entry(i)
}

func (x *verifyIndex) keyOf(o uint64, v int64) int64 {
	if x.time {
		return int64(min(o, math.MaxInt64))
	}
	if v < 0 {
		return math.MaxInt64 // past any end
	}
	return v
}

// inOrder: b may follow a (both offsets, and positions in an .index, rise).
func (x *verifyIndex) inOrder(ao uint64, av int64, bo uint64, bv int64) bool {
	return bo > ao && (x.time || uint64(bv) > uint64(av))
}

// advance takes the next entry that is in order as the pending one,
// reporting out-of-order pairs of neighbours on the way.
func (x *verifyIndex) advance() error {
	x.pend = false
	for x.f != nil && x.read < x.stop {
		i := x.read
		o, v := x.ao, x.av
		if !x.ahead {
			var err error
			if o, v, err = x.entry(i); err != nil {
				return err
			}
		}
		x.ahead = false
		x.read++
		bad := x.prevBad
		x.prevBad = false
		if i+1 < x.n {
			no, nv, err := x.entry(i + 1)
			if err != nil {
				return err
			}
			x.ao, x.av, x.ahead = no, nv, true
			if !x.inOrder(o, v, no, nv) {
				x.add(Finding{Severity: SeverityProblem, Kind: FindingIndexOrder, Pos: i * format.IndexEntryLen, Offset: int64(o),
					Reason: fmt.Sprintf("%s %d and %d are out of order: %s, then %s", x.plural(), i, i+1, x.show(o, v), x.show(no, nv))})
				bad, x.prevBad = true, true
			}
		}
		if bad {
			continue
		}
		x.pend, x.pi, x.po, x.pv, x.pk = true, i, o, v, x.keyOf(o, v)
		if x.pk < x.floor {
			x.behind()
			continue
		}
		return nil
	}
	return nil
}

// record checks the entries the valid record h at [pos, end) reaches
// (key is the pending entry's, which it reaches) and returns the new
// pending key.
func (x *verifyIndex) record(pos, end int64, h format.Header, key int64) int64 {
	if x.time {
		if key == int64(min(h.Offset, math.MaxInt64)) && x.pv == h.Timestamp && x.step(key+1) {
			return x.pk
		}
	} else if key == pos && x.po == h.Offset && x.step(end) {
		return x.pk
	}
	x.onRecord(pos, end, h.Offset, h.Timestamp)
	return x.key()
}

// step is advance for the common case, made cheap: the pending entry
// checked out, and the next one is in order with its neighbours, in the
// buffer, and for a key at or after end (where the scan goes next). It
// reports whether it took the next entry; if not, nothing changed.
func (x *verifyIndex) step(end int64) bool {
	j := (x.read + 1 - x.bufFirst) * format.IndexEntryLen
	if !x.ahead || x.prevBad || x.read >= x.stop || j < 0 || j+format.IndexEntryLen > int64(len(x.buf)) {
		return false
	}
	o, v := x.ao, x.av
	no, nv := binary.BigEndian.Uint64(x.buf[j:]), int64(binary.BigEndian.Uint64(x.buf[j+8:]))
	k := x.keyOf(o, v)
	if !x.inOrder(o, v, no, nv) || k < end {
		return false
	}
	x.pi, x.po, x.pv, x.pk = x.read, o, v, k
	x.ao, x.av = no, nv
	x.read++
	x.floor = end
	return true
}

// show describes an entry's contents.
func (x *verifyIndex) show(o uint64, v int64) string {
	if x.time {
		return fmt.Sprintf("offset %d with timestamp %d", o, v)
	}
	return fmt.Sprintf("offset %d at byte %d", o, uint64(v))
}

// behind reports the pending entry, in order with its neighbours but
// behind an earlier one.
func (x *verifyIndex) behind() {
	if x.time && x.po < x.s.job.seg.base {
		x.add(Finding{Severity: SeverityProblem, Kind: FindingIndexMismatch, Pos: x.pi * format.IndexEntryLen, Offset: int64(x.po),
			Reason: fmt.Sprintf("%s %d is for offset %d, below the segment's base offset %d", x.name(), x.pi, x.po, x.s.job.seg.base)})
		return
	}
	x.add(Finding{Severity: SeverityProblem, Kind: FindingIndexOrder, Pos: x.pi * format.IndexEntryLen, Offset: int64(x.po),
		Reason: fmt.Sprintf("%s %d (%s) is out of order: an earlier entry is for a later record", x.name(), x.pi, x.show(x.po, x.pv))})
}

// onRecord checks the pending entries a valid record at [pos, end) with
// offset off and timestamp ts reaches.
func (x *verifyIndex) onRecord(pos, end int64, off uint64, ts int64) {
	if x.time {
		k := int64(min(off, math.MaxInt64))
		for x.pend && x.pk <= k {
			if x.pk == k && x.pv != ts {
				x.add(Finding{Severity: SeverityProblem, Kind: FindingIndexMismatch, Pos: x.pi * format.IndexEntryLen, Offset: int64(x.po),
					Reason: fmt.Sprintf("%s %d says offset %d has timestamp %d, but the record's is %d", x.name(), x.pi, x.po, x.pv, ts)})
			} else if x.pk < k {
				x.behind()
			}
			x.floor = k
			x.advanceOrStop()
		}
		x.floor = k + 1
		return
	}
	for x.pend && x.pk < end {
		switch {
		case x.pk == pos:
			if x.po != off {
				x.add(Finding{Severity: SeverityProblem, Kind: FindingIndexMismatch, Pos: x.pi * format.IndexEntryLen, Offset: int64(x.po),
					Reason: fmt.Sprintf("%s %d says offset %d is at byte %d, but the record there has offset %d", x.name(), x.pi, x.po, x.pv, off)})
			}
		case x.pk > pos:
			x.add(Finding{Severity: SeverityProblem, Kind: FindingIndexNoRecord, Pos: x.pi * format.IndexEntryLen, Offset: int64(x.po),
				Reason: fmt.Sprintf("%s %d (offset %d) points at byte %d, inside the record at byte %d (offset %d): no record starts there",
					x.name(), x.pi, x.po, x.pv, pos, off)})
		default:
			x.behind()
		}
		x.floor = pos
		x.advanceOrStop()
	}
	x.floor = end
}

// advanceOrStop advances; an I/O error reading the index ends its check
// (the log's check goes on) and makes the segment's check incomplete.
func (x *verifyIndex) advanceOrStop() {
	if err := x.advance(); err != nil {
		x.ioErr(err)
	}
}

func (x *verifyIndex) ioErr(err error) {
	x.pend, x.failed = false, true
	if x.f != nil {
		x.f.Close()
		x.f = nil
	}
	if x.s.res.err == nil {
		x.s.res.err = fmt.Errorf("verify %s: %w", x.path, pathErrCause(err, x.path))
	}
}

// skip passes over entries with keys below to without checking them: they
// point into damage the log's finding already reports.
func (x *verifyIndex) skip(to int64) {
	for x.pend && x.pk < to {
		if x.pk < x.floor {
			x.behind()
		}
		x.advanceOrStop()
	}
	x.floor = max(x.floor, to)
}

// skipRest passes over every entry left: the segment ends in damage, and
// the offsets they are for are lost to it.
func (x *verifyIndex) skipRest() {
	x.skip(math.MaxInt64)
}

// onTail notes .index entries pointing into an incomplete tail, up to size.
func (x *verifyIndex) onTail(size int64) {
	for x.pend && x.pk < size {
		if x.pk < x.floor {
			x.behind()
		} else {
			x.add(Finding{Severity: SeverityNote, Kind: FindingIndexStale, Pos: x.pi * format.IndexEntryLen, Offset: int64(x.po),
				Reason: fmt.Sprintf("%s %d (offset %d) points at byte %d, into the incomplete tail", x.name(), x.pi, x.po, x.pv)})
		}
		x.advanceOrStop()
	}
	x.floor = max(x.floor, size)
}

// onTailOffsets notes .timeindex entries for offsets in or after an
// incomplete tail: records not there (yet).
func (x *verifyIndex) onTailOffsets(next uint64) {
	k := int64(min(next, math.MaxInt64))
	for x.pend {
		if x.pk < x.floor || x.pk < k {
			x.behind()
		} else {
			x.add(Finding{Severity: SeverityNote, Kind: FindingIndexStale, Pos: x.pi * format.IndexEntryLen, Offset: int64(x.po),
				Reason: fmt.Sprintf("%s %d is for offset %d, in the incomplete tail or after it (the last valid record is %d)", x.name(), x.pi, x.po, int64(next)-1)})
		}
		x.advanceOrStop()
	}
}

// finish deals with the entries the scan never reached: past the end of
// the log (.index) or of its records (.timeindex), they are stale.
func (x *verifyIndex) finish(size int64, next uint64, damagedEnd bool) {
	if x == nil {
		return
	}
	for x.pend {
		switch {
		case x.pk < x.floor:
			x.behind()
		case x.time && damagedEnd:
			// for offsets lost to the damage at the end: nothing to say
		case x.time:
			x.add(Finding{Severity: SeverityNote, Kind: FindingIndexStale, Pos: x.pi * format.IndexEntryLen, Offset: int64(x.po),
				Reason: fmt.Sprintf("%s %d is for offset %d, past the segment's last record (next offset %d); 'seglog recover' rebuilds the index", x.name(), x.pi, x.po, next)})
		default:
			x.add(Finding{Severity: SeverityNote, Kind: FindingIndexStale, Pos: x.pi * format.IndexEntryLen, Offset: int64(x.po),
				Reason: fmt.Sprintf("%s %d (offset %d) points at byte %d, past the end of the log (%d bytes): stale after a power loss; 'seglog recover' rebuilds the index", x.name(), x.pi, x.po, uint64(x.pv), size)})
		}
		x.advanceOrStop()
	}
}

// short notes an index with fewer entries than the segment's records
// need (SPEC §3: an entry for every Nth record, the first always), when
// the index has no worse trouble. The interval is inferred from the first
// two entries: foreign data's is unknown.
func (x *verifyIndex) short(r *verifyResult) {
	if x.missing || x.failed || x.problems > 0 || r.records == 0 {
		return
	}
	base := x.s.job.seg.base
	lastRec := r.next - 1
	switch {
	case x.n == 0:
		x.add(Finding{Severity: SeverityNote, Kind: FindingIndexShort, Pos: 0, Offset: int64(base),
			Reason: fmt.Sprintf("the %s file is empty, though the segment holds %d records; 'seglog recover' rebuilds it", x.kindName(), r.records)})
	case x.n >= 2:
		first, _, err1 := x.entry(0)
		second, _, err2 := x.entry(1)
		last, _, err3 := x.entry(x.n - 1)
		if err := cmp.Or(err1, err2, err3); err != nil {
			x.ioErr(err)
			return
		}
		if second <= first || last >= r.next {
			return
		}
		if every := second - first; last+every <= lastRec {
			x.add(Finding{Severity: SeverityNote, Kind: FindingIndexShort, Pos: x.n * format.IndexEntryLen, Offset: int64(last + every),
				Reason: fmt.Sprintf("the %s ends at offset %d, though records go on to offset %d (an entry every %d records): about %d entries missing; 'seglog recover' rebuilds it",
					x.kindName(), last, lastRec, every, (lastRec-last)/every)})
		}
	}
}

func (x *verifyIndex) kindName() string {
	if x.time {
		return "time index"
	}
	return "index"
}

// verifyPlan splits a segment of size bytes into about parts ranges
// that can be checked apart, at records .index entries point at: each
// entry used is checked against the log (a record that checks out, with
// that offset) and against the .timeindex (an entry for that offset at the
// same place). None when the segment is small or its indexes do not
// allow it; verifyMerge checks that the ranges meet.
func verifyPlan(seg segment, size int64, parts int) []verifyRange {
	if parts < 2 {
		return nil
	}
	x, err := openIndex(seg.path(format.IndexExt))
	if err != nil {
		return nil
	}
	defer x.Close()
	tx, err := openIndex(seg.path(format.TimeIndexExt))
	if err != nil {
		return nil
	}
	defer tx.Close()
	f, err := openRead(seg.path(format.LogExt))
	if err != nil {
		return nil
	}
	defer f.Close()
	lr := newLogReader(osFile{f})
	ranges := []verifyRange{{pos: 0, off: seg.base, entry: 0}}
	for k := 1; k < parts; k++ {
		target := size / int64(parts) * int64(k)
		i, ok, err := x.floorBy(uint64(target), func(_ uint64, p int64) uint64 { return uint64(max(p, 0)) })
		prev := &ranges[len(ranges)-1]
		if err != nil {
			break
		}
		if !ok || i <= prev.entry {
			continue
		}
		e, err := x.entry(i)
		if err != nil || e.Pos <= prev.pos || e.Offset <= prev.off || e.Pos >= size {
			continue
		}
		if h, err := lr.check(e.Pos); err != nil || h.Offset != e.Offset {
			continue
		}
		if i >= tx.n {
			break
		}
		if t, _, err := tx.pair(i); err != nil || t != e.Offset {
			break
		}
		prev.end, prev.endEnt = e.Pos, i
		ranges = append(ranges, verifyRange{pos: e.Pos, off: e.Offset, entry: i})
	}
	if len(ranges) < 2 {
		return nil
	}
	ranges[len(ranges)-1].end, ranges[len(ranges)-1].endEnt = -1, -1
	return ranges
}

// verifyMerge puts the results of a segment's ranges together. Ranges
// that did not meet exactly (one did not end at the record where the next
// starts, with the offset it starts with), or found anything before the
// last, are not trusted: the segment is checked again, whole. Damage is
// rare; checking it again costs time, never accuracy.
func verifyMerge(job *verifyJob, sh *verifyShared, buf []byte) *verifyResult {
	parts := job.parts
	job.parts = nil
	last := parts[len(parts)-1]
	whole := last.err == nil && !last.gone
	for k, p := range parts[:len(parts)-1] {
		rg, next := job.ranges[k], job.ranges[k+1]
		if p.err != nil || p.gone || len(p.log)+len(p.index)+len(p.timeIndex) > 0 || p.damagedEnd ||
			p.bytes != rg.end || p.next != next.off || parts[k+1].records > 0 && parts[k+1].firstTS < p.lastTS {
			whole = false
		}
	}
	if !whole {
		sh.total.Add(job.size)
		return verifySegment(job, nil, sh, buf)
	}
	r := *last
	r.firstTS = parts[0].firstTS
	r.records, r.routeKeyed, r.routeWrong = 0, 0, 0
	for _, p := range parts {
		r.records += p.records
		if p.routeWrong > 0 && r.routeWrong == 0 {
			r.routeFirst = p.routeFirst
		}
		r.routeKeyed += p.routeKeyed
		r.routeWrong += p.routeWrong
	}
	return &r
}

// verifyPartitionEmitter hands a partition's findings to the caller in
// order, adding those only the sequence of segments shows: overlaps, gaps,
// timestamps going backwards from one segment to the next, key routing.
type verifyPartitionEmitter struct {
	p      *Partition
	report *VerifyReport
	emit   func(Finding) error

	gaps     []Gap
	gapCheck *gapCheck
	last     *verifyResult // the last segment's, nil when there are none
	prev     *verifyResult // the segment before, nil for the first or when unknown
	prevSeg  segment
	routeKey uint64
	routeBad uint64
	route    Finding
}

func (pe *verifyPartitionEmitter) send(f Finding) error {
	if f.Partition == "" {
		f.Partition = pe.p.name
	}
	switch f.Severity {
	case SeverityProblem:
		pe.report.Problems++
	case SeverityNote:
		pe.report.Notes++
	case SeverityKnown:
		pe.report.Known++
	}
	return pe.emit(f)
}

func (pe *verifyPartitionEmitter) start() error {
	if len(pe.p.segs) == 0 {
		pe.report.WriterPid = WriterPid(pe.p.dir)
		return pe.send(Finding{Severity: SeverityNote, Kind: FindingNoSegments, Path: pe.p.dir, Pos: -1, Offset: -1,
			Reason: "the partition directory holds no segment"})
	}
	gaps, err := ReadGaps(pe.p.dir)
	if err != nil {
		return pe.send(Finding{Severity: SeverityProblem, Kind: FindingGapsFile, Path: filepath.Join(pe.p.dir, GapsFile), Pos: -1, Offset: -1,
			Reason: fmt.Sprintf("cannot read the record of known gaps: %v; gaps are reported as unexplained", err)})
	}
	pe.gaps, pe.gapCheck = gaps, newGapCheck(GapsFile, gaps)
	return nil
}

func (pe *verifyPartitionEmitter) segment(job *verifyJob, res *verifyResult) error {
	rep := pe.report
	if !res.gone {
		if err := pe.boundary(job, res); err != nil {
			return err
		}
	}
	for _, list := range [][]Finding{res.log, res.index, res.timeIndex} {
		for _, f := range list {
			if err := pe.send(f); err != nil {
				return err
			}
		}
	}
	rep.Problems += res.extra[SeverityProblem]
	rep.Notes += res.extra[SeverityNote]
	rep.Known += res.extra[SeverityKnown]
	rep.Records += res.records
	rep.Bytes += res.bytes
	if job.active {
		rep.WriterPid = res.writerPid
	}
	if res.err != nil {
		rep.Complete = false
	}
	pe.routeKey += res.routeKeyed
	if res.routeWrong > 0 && pe.routeBad == 0 {
		pe.route = res.routeFirst
	}
	pe.routeBad += res.routeWrong
	if !res.gone && pe.gapCheck != nil {
		pe.gapCheck.segment(job.seg, res.next)
	}
	pe.last = res
	pe.prev, pe.prevSeg = res, job.seg
	if res.gone || res.err != nil || res.damagedEnd {
		pe.prev = nil // where it ends is unknown: say nothing about the next boundary
	}
	return nil
}

// boundary checks where the segment starts against where the one before
// ends.
func (pe *verifyPartitionEmitter) boundary(job *verifyJob, res *verifyResult) error {
	prev := pe.prev
	if prev == nil {
		return nil
	}
	base, path := job.seg.base, job.seg.path(format.LogExt)
	overlap := base < prev.next
	switch {
	case overlap:
		if err := pe.send(Finding{Severity: SeverityProblem, Kind: FindingOverlap, Path: path, Pos: 0, Offset: int64(base),
			Reason: fmt.Sprintf("the segment starts at offset %d, but the one before (%s) goes on to offset %d: offsets %d..%d are in both",
				base, format.SegmentName(pe.prevSeg.base, format.LogExt), prev.next-1, base, prev.next-1)}); err != nil {
			return err
		}
	case base > prev.next:
		f := Finding{Severity: SeverityProblem, Kind: FindingGap, Path: path, Pos: 0, Offset: int64(prev.next)}
		what := fmt.Sprintf("offsets %d..%d are missing between this segment and the one before (%s)", prev.next, base-1,
			format.SegmentName(pe.prevSeg.base, format.LogExt))
		switch g, whole := verifyKnownGap(pe.gaps, prev.next, base); {
		case whole:
			f.Severity = SeverityKnown
			f.Reason = fmt.Sprintf("%s: a known gap, recorded in %s (%s: %s)", what, GapsFile, g.Time, g.Reason)
		case g != nil:
			f.Reason = fmt.Sprintf("%s; %s records only part of it (%d..%d)", what, GapsFile, g.From, g.To-1)
		case verifyGapOver(pe.gaps, prev.next, base) != nil:
			g := verifyGapOver(pe.gaps, prev.next, base)
			f.Reason = fmt.Sprintf("%s: lost data; %s records %d..%d, which reaches beyond it, so explains nothing", what, GapsFile, g.From, g.To-1)
		default:
			f.Reason = what + ": lost data, not recorded in " + GapsFile
		}
		if err := pe.send(f); err != nil {
			return err
		}
	}
	// Records in both segments of an overlap go back in time as a matter
	// of course: the overlap says it already.
	if !overlap && prev.records > 0 && res.records > 0 && res.firstTS < prev.lastTS {
		return pe.send(Finding{Severity: SeverityNote, Kind: FindingTimeBackwards, Path: path, Pos: 0, Offset: int64(base),
			Reason: fmt.Sprintf("the segment's first record (offset %d) has timestamp %d, older than the last record of the segment before (%d)",
				base, res.firstTS, prev.lastTS)})
	}
	return nil
}

// verifyKnownGap tells whether the recorded gaps lying inside the hole
// [from, to) cover it whole; g is one that covers part of it, if any. A
// gap reaching out of the hole covers offsets the segments around it
// hold, so explains nothing (see gapCheck).
func verifyKnownGap(gaps []Gap, from, to uint64) (g *Gap, whole bool) {
	inside := func(gp *Gap) bool { return gp.From >= from && gp.To <= to }
	at := from
	for progress := true; progress && at < to; {
		progress = false
		for i := range gaps {
			if inside(&gaps[i]) && gaps[i].From <= at && gaps[i].To > at {
				g, at, progress = &gaps[i], gaps[i].To, true
			}
		}
	}
	if g == nil {
		for i := range gaps {
			if inside(&gaps[i]) {
				g = &gaps[i]
			}
		}
	}
	return g, at >= to
}

// verifyGapOver returns a recorded gap that overlaps [from, to) and
// reaches beyond it, if any.
func verifyGapOver(gaps []Gap, from, to uint64) *Gap {
	for i := range gaps {
		if g := &gaps[i]; g.From < to && g.To > from && (g.From < from || g.To > to) {
			return g
		}
	}
	return nil
}

func (pe *verifyPartitionEmitter) finish() error {
	if err := pe.finishGaps(); err != nil {
		return err
	}
	if pe.routeBad == 0 {
		return nil
	}
	f := pe.route
	f.Reason = fmt.Sprintf("%d of %d keyed records are not in the partition FNV-1a routing gives their key (written with a fixed --partition, or a keylen changed undetectably by damage); first: %s",
		pe.routeBad, pe.routeKey, f.Reason)
	return pe.send(f)
}

// finishGaps reports each recorded gap that cannot be one: it covers
// offsets a segment holds, or, when the partition's end is known, reaches
// past its next offset.
func (pe *verifyPartitionEmitter) finishGaps() error {
	c := pe.gapCheck
	if c == nil {
		return nil
	}
	if l := pe.last; l != nil && !l.gone && l.err == nil && !l.damagedEnd {
		c.end(l.next)
	}
	for _, why := range c.reasons {
		if err := pe.send(Finding{Severity: SeverityProblem, Kind: FindingGapsFile, Path: filepath.Join(pe.p.dir, GapsFile), Pos: -1, Offset: -1,
			Reason: why + ": not a gap recover --salvage could have recorded, so it explains nothing (fix the entry, or remove it)"}); err != nil {
			return err
		}
	}
	return nil
}
