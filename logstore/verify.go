package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
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
// indexes, segment boundaries and tails, without taking any lock
// (docs/format.md §5: it reads /proc/locks to tell a live writer). It reports every
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
					job.parts[k] = verifySegment(job, &job.ranges[k], job.seg.base, sh, buf)
					if job.left.Add(-1) > 0 {
						continue
					}
					sh.results[j] = verifyMerge(job, sh, buf)
				} else {
					sh.results[j] = verifySegment(job, nil, job.seg.base, sh, buf)
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
		pe := verifyPartitionEmitter{p: t.Partition, sh: sh, report: &reports[ti], emit: emit}
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
var errVerifyStopped = errors.New("verify stopped")

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
	firstOff              uint64 // the first valid record's offset, when records > 0
	startBroke            bool   // the chain broke at byte 0, where the floor bounds where valid data resumes
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

// verifyScan checks one segment, or a range of it: its records from the
// first byte, and its index files in step with them, all in one walk
// through segfile's Scanner and IndexCheck, the rule every command shares.
type verifyScan struct {
	job    *verifyJob
	sh     *verifyShared
	res    *verifyResult
	path   string
	active bool // the end of the active segment is in the scan
	last   bool // the scan goes to the end of the segment
	rg     *verifyRange
	floor  uint64
	next   uint64 // the offset after the segment's last valid record

	f     *os.File
	sc    *segfile.Scanner
	grown bool  // the size was asked again once, for a record being written
	shown int64 // position up to which progress was counted
	logF  verifyFindings

	ix, tx *verifyIndex

	backwards    uint64 // timestamps going backwards
	backFirstPos int64
	backFirstOff uint64
	backFirstTS  int64
	backPrevTS   int64
}

// verifySegment checks a segment, or the range rg of it, offsets below
// floor being an earlier segment's.
func verifySegment(job *verifyJob, rg *verifyRange, floor uint64, sh *verifyShared, buf []byte) *verifyResult {
	res := &verifyResult{next: job.seg.base}
	s := &verifyScan{job: job, sh: sh, res: res, path: job.seg.path(format.LogExt), active: job.active, last: true, rg: rg, floor: floor}
	if rg != nil {
		s.last = rg.end < 0
		s.active = job.active && s.last
		s.shown, res.next = rg.pos, rg.off
	}
	s.logF = verifyFindings{list: &res.log, extra: &res.extra}
	// The indexes first: a writer writes index entries after the log
	// bytes they point at, so a .log size taken afterwards covers every
	// entry read.
	s.ix = s.openIndex(format.IndexExt, false, &res.index)
	s.tx = s.openIndex(format.TimeIndexExt, true, &res.timeIndex)
	defer s.ix.close()
	defer s.tx.close()
	err := s.open(buf)
	if err == nil && s.f != nil {
		defer s.f.Close()
		defer s.sc.Close()
		if s.active {
			res.writerPid = WriterPid(job.seg.dir)
		}
		err = s.scan()
		res.bytes = s.sc.Limit()
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
		res.err = fmt.Errorf("verify %s: %w", s.path, fsx.PathErrCause(err, s.path))
	}
	return res
}

// open opens the .log for the scan. A segment deleted since the partition
// was listed (by a retention sweep) is a note, not an error.
func (s *verifyScan) open(buf []byte) error {
	f, err := fsx.OpenRead(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.res.gone = true
		s.logF.add(Finding{Severity: SeverityNote, Kind: FindingSegmentGone, Partition: s.job.name, Path: s.path, Pos: -1,
			Offset: int64(s.job.seg.base), Reason: "segment deleted while the check ran (by a retention sweep?): not checked"})
		return nil
	}
	if err != nil {
		return err
	}
	seg := segfile.Segment{Path: s.path, Base: s.job.seg.base, Floor: s.floor, Active: s.active, Log: osFile{File: f}}
	if s.ix.f != nil {
		seg.Index = segfile.NewIndex(s.ix.f, s.ix.n*format.IndexEntryLen)
	}
	limit := int64(-1)
	if s.rg != nil && s.rg.end >= 0 {
		limit = s.rg.end
	}
	sc, err := segfile.NewScanner(seg, limit, segfile.Options{Chunk: verifyChunk, Buffer: buf})
	if err == nil {
		// Where the segment's valid data ends, found from its index: the
		// index entries past it are stale whatever their order.
		var end segfile.End
		if end, err = segfile.FindEnd(seg, false); err == nil {
			s.next = end.Next
			if end.Full || end.Tail != nil && end.Tail.Class == segfile.Corrupt {
				s.next = math.MaxUint64 // offsets past a corrupt end are lost to it, not stale
			}
			s.ix.begin(end.Limit)
			s.tx.begin(end.Limit)
		}
	}
	if err != nil {
		f.Close()
		return err
	}
	if s.rg != nil {
		sc.StartAt(s.rg.pos, s.rg.off)
	}
	s.f, s.sc = f, sc
	return nil
}

func (s *verifyScan) add(f Finding) {
	f.Partition, f.Path = s.job.name, s.path
	s.logF.add(f)
}

// scan walks the records to the end of the data. Each break in the chain
// is reported, and the walk goes on where valid data resumes; with none,
// the break is the segment's tail.
func (s *verifyScan) scan() error {
	sc, r := s.sc, s.res
	route := s.job.count > 1
	ixKey, txKey := s.ix.key(), s.tx.key()
	for {
		for sc.Next() {
			h := sc.Header()
			pos, end := sc.RecordPos(), sc.Pos()
			if r.records == 0 {
				r.firstTS, r.firstOff = h.Timestamp, h.Offset
			} else if h.Timestamp < r.lastTS {
				s.goesBack(pos, h, r.lastTS)
			}
			r.records++
			r.lastTS = h.Timestamp
			if uint64(end) > ixKey {
				s.ix.c.OnRecord(pos, end, h.Offset, h.Timestamp)
				ixKey = s.ix.key()
			}
			if h.Offset >= txKey && s.tx.c != nil {
				s.tx.c.OnRecord(pos, end, h.Offset, h.Timestamp)
				txKey = s.tx.key()
			} else if s.tx.c != nil {
				s.tx.c.OnTimestamp(h.Timestamp)
			}
			if route && h.KeyLen > 0 {
				s.route(pos, h, sc.Bytes())
			}
			if end-s.shown >= verifyChunk {
				if s.sh.stop.Load() {
					return errVerifyStopped
				}
				s.countProgress(end)
			}
		}
		r.next = sc.NextOffset()
		if err := sc.Err(); err != nil {
			return err
		}
		d := sc.Damage()
		if d == nil {
			break
		}
		if d.Class == segfile.Incomplete && errors.Is(d.Reason, format.ErrShort) && !s.grown && s.rg == nil {
			// A live writer may have finished this record since the size
			// was taken: ask once more, so as not to chase it forever.
			s.grown = true
			if grew, err := sc.Grow(); err != nil {
				return err
			} else if grew {
				continue
			}
		}
		if d.Pos == 0 {
			r.startBroke = true
		}
		s.damage(d)
		s.ix.onDamage(d)
		s.tx.onDamage(d)
		ixKey, txKey = s.ix.key(), s.tx.key()
		if !sc.Resume() {
			r.damagedEnd = d.Class == segfile.Corrupt
			break
		}
	}
	s.countProgress(sc.Limit())
	return nil
}

// goesBack notes a record older than the one before it.
func (s *verifyScan) goesBack(pos int64, h *format.Header, prevTS int64) {
	if s.backwards == 0 {
		s.backFirstPos, s.backFirstOff, s.backFirstTS, s.backPrevTS = pos, h.Offset, h.Timestamp, prevTS
	}
	s.backwards++
}

func (s *verifyScan) countProgress(pos int64) {
	if pos > s.shown {
		s.sh.checked.Add(pos - s.shown)
		s.shown = pos
	}
}

// route checks the record's key against FNV-1a routing.
func (s *verifyScan) route(pos int64, h *format.Header, b []byte) {
	if b == nil || h.KeyLen > 64<<10 {
		return // a record too large for one read: its key is not at hand
	}
	key := b[format.HeaderLen : format.HeaderLen+int64(h.KeyLen)]
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

// damage reports a break in the chain.
func (s *verifyScan) damage(d *segfile.Damage) {
	what := d.Explain()
	if errors.Is(d.Reason, format.ErrCRC) && d.HeaderOK {
		if crc, ok, err := s.sc.ComputedCRC(d); err == nil && ok {
			what = strings.Replace(what, fmt.Sprintf("(stored 0x%08x)", d.Header.CRC), fmt.Sprintf("(stored 0x%08x, computed 0x%08x)", d.Header.CRC, crc), 1)
		}
	}
	f := Finding{Severity: SeverityProblem, Kind: FindingCorruptRecord, Pos: d.Pos, Offset: int64(d.Offset), Cause: d.Reason, Reason: what}
	switch {
	case errors.Is(d.Reason, segfile.ErrOverlap):
		f.Kind = FindingOverlap
	case d.Misnamed():
		f.Kind = FindingMisnamed
	}
	if d.Class == segfile.Incomplete {
		f.Kind = FindingIncompleteTail
		n := d.End - d.Pos
		// Only a record running past the end of the file, or zeros, can be
		// one a live writer is writing: a reader sees a write's bytes in
		// order.
		switch pid := s.res.writerPid; {
		case pid != 0 && (d.Zeros || errors.Is(d.Reason, format.ErrShort)):
			f.Severity = SeverityNote
			f.Reason = fmt.Sprintf("incomplete record at the end of the active segment (%d bytes: %s): the writer (pid %d) holding the partition is writing it", n, what, pid)
		case pid != 0:
			f.Reason = fmt.Sprintf("damaged tail: %d bytes after the last valid record (%s), which the writer (pid %d) holding the partition cannot be writing: a complete record that does not check out", n, what, pid)
		default:
			f.Reason = fmt.Sprintf("incomplete tail: %d bytes after the last valid record (%s) and no writer holds the partition: torn by a crash; 'seglog recover' cuts it", n, what)
		}
	}
	if errors.Is(d.Reason, segfile.ErrOverlap) {
		f.Offset = int64(d.Header.Offset)
	}
	s.add(f)
}

// finishIndexes deals with the entries left after the scan, and the notes
// on the indexes as a whole.
func (s *verifyScan) finishIndexes() {
	s.ix.finish()
	s.tx.finish()
	// With a live writer, an index lagging behind the log is normal. Only
	// a scan to the segment's end knows how many entries it needs.
	if s.last && !(s.active && s.res.writerPid != 0) {
		s.ix.short(s.res)
		s.tx.short(s.res)
	}
	if s.backwards > 0 {
		s.add(Finding{Severity: SeverityNote, Kind: FindingTimeBackwards, Pos: s.backFirstPos, Offset: int64(s.backFirstOff),
			Reason: fmt.Sprintf("timestamps go backwards %d times in this segment; first: offset %d has %s, older than the record before it (%s); %s",
				s.backwards, s.backFirstOff, reasonTime(s.backFirstTS), reasonTime(s.backPrevTS), timeSearchLimit)})
	}
}

// verifyIndex is one index file's check against the scan, and the
// findings it makes.
type verifyIndex struct {
	s        *verifyScan
	path     string
	time     bool
	missing  bool
	f        *fsx.ReadFile
	n        int64 // whole entries
	logSize  int64 // the .log's, when the check began
	c        *segfile.IndexCheck
	findings verifyFindings
	problems int
}

// openIndex opens an index file of the segment for its check with the
// scan. A missing file is a note, one that is not a regular file a
// problem; one that cannot be read is an I/O error of the check, which
// goes on without it.
func (s *verifyScan) openIndex(ext string, time bool, list *[]Finding) *verifyIndex {
	x := &verifyIndex{s: s, path: s.job.seg.path(ext), time: time}
	x.findings = verifyFindings{list: list, extra: &s.res.extra}
	f, size, err := fsx.OpenIndex(x.path)
	var odd *NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		x.missing = true
		x.add(Finding{Severity: SeverityNote, Kind: FindingIndexMissing, Pos: -1, Offset: -1,
			Reason: "no " + ext + " file: reads scan the segment instead; 'seglog recover' rebuilds it"})
		return x
	case errors.As(err, &odd):
		x.missing = true
		x.add(Finding{Severity: SeverityProblem, Kind: FindingNotRegular, Pos: -1, Offset: -1,
			Reason: fmt.Sprintf("not a regular file (%s): readers go on without this index, and commands that change files refuse the partition; %s",
				odd.Kind(), odd.Advice())})
		return x
	case err != nil:
		x.ioErr(err)
		return x
	}
	x.f, x.n = f, size/format.IndexEntryLen
	if part := size % format.IndexEntryLen; part != 0 && s.last {
		x.add(Finding{Severity: SeverityNote, Kind: FindingIndexPartial, Pos: x.n * format.IndexEntryLen, Offset: -1,
			Reason: fmt.Sprintf("the file ends in a partial entry (%d of %d bytes), which is ignored", part, format.IndexEntryLen)})
	}
	return x
}

// begin starts the index's check, once the .log's size is known.
func (x *verifyIndex) begin(logSize int64) {
	x.logSize = logSize
	if x.f == nil {
		return
	}
	first, stop := int64(0), int64(-1)
	if rg := x.s.rg; rg != nil {
		first, stop = rg.entry, rg.endEnt
	}
	kind := segfile.OffsetIndex
	if x.time {
		kind = segfile.TimeIndex
	}
	x.c = segfile.NewIndexCheck(kind, x.f, x.n*format.IndexEntryLen, x.s.job.seg.base, logSize, x.s.next, first, stop, x.judged)
	x.c.EmitOnlyWrong() // judged makes findings of what is wrong only
}

func (x *verifyIndex) close() {
	if x.f != nil {
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

// key is the pending entry's, math.MaxUint64 when none is left.
func (x *verifyIndex) key() uint64 {
	if x.c == nil {
		return math.MaxUint64
	}
	return x.c.Key()
}

func (x *verifyIndex) onDamage(d *segfile.Damage) {
	if x.c != nil {
		x.c.OnDamage(d)
	}
}

func (x *verifyIndex) finish() {
	if x.c == nil {
		return
	}
	if err := x.c.Finish(); err != nil {
		x.ioErr(err)
	}
}

// ioErr ends the index's check (the log's goes on) and makes the
// segment's check incomplete.
func (x *verifyIndex) ioErr(err error) {
	if x.s.res.err == nil {
		x.s.res.err = fmt.Errorf("verify %s: %w", x.path, fsx.PathErrCause(err, x.path))
	}
}

func (x *verifyIndex) name() string {
	if x.time {
		return "time index entry"
	}
	return "index entry"
}

func (x *verifyIndex) kindName() string {
	if x.time {
		return "time index"
	}
	return "index"
}

// judged turns an entry's verdict into a finding. Entries naming damaged
// records are left to the finding on the damage.
func (x *verifyIndex) judged(e segfile.EntryVerdict) error {
	switch e.Verdict {
	case segfile.VerdictOK, segfile.VerdictBackwards, segfile.VerdictCorruptRecord, segfile.VerdictUnchecked:
		return nil // the common case: no words to make
	}
	f := Finding{Severity: SeverityProblem, Kind: VerdictKind(e.Verdict), Pos: e.Entry * format.IndexEntryLen, Offset: int64(e.Offset)}
	what := fmt.Sprintf("%s %d", x.name(), e.Entry)
	switch e.Verdict {
	case segfile.VerdictPastEnd:
		f.Severity = SeverityNote
		switch {
		case x.time:
			f.Reason = fmt.Sprintf("%s is for offset %d, past the segment's last valid record (next offset %d): stale after a power loss or in the incomplete tail; 'seglog recover' rebuilds the index",
				what, e.Offset, x.s.next)
		case e.RecordPos >= 0:
			f.Reason = fmt.Sprintf("%s (offset %d) points at byte %d, into the incomplete tail", what, e.Offset, e.Value)
		default:
			f.Reason = fmt.Sprintf("%s (offset %d) points at byte %d, past the end of the log (%d bytes): stale after a power loss; 'seglog recover' rebuilds the index",
				what, e.Offset, uint64(e.Value), x.logSize)
		}
	case segfile.VerdictWrongPosition:
		f.Reason = fmt.Sprintf("%s says offset %d is at byte %d, but the record there has offset %d", what, e.Offset, e.Value, e.FoundOffset)
	case segfile.VerdictWrongTimestamp:
		f.Reason = fmt.Sprintf("%s says offset %d has timestamp %s, but the record's is %s", what, e.Offset, reasonRawTime(e.Value), reasonTime(e.FoundTimestamp))
	case segfile.VerdictNoSuchOffset:
		f.Reason = fmt.Sprintf("%s is for offset %d, below the segment's base offset %d", what, e.Offset, e.Prev)
	case segfile.VerdictNoRecord:
		f.Reason = fmt.Sprintf("%s (offset %d) points at byte %d, inside the record at byte %d (offset %d): no record starts there",
			what, e.Offset, e.Value, e.RecordPos, e.FoundOffset)
	case segfile.VerdictOutOfOrder:
		f.Reason = fmt.Sprintf("%s (%s) is out of order: not after the entry before it in order (offset %d), or after the one after it", what, x.show(e), e.Prev)
	}
	x.add(f)
	return nil
}

func (x *verifyIndex) show(e segfile.EntryVerdict) string {
	if x.time {
		return fmt.Sprintf("offset %d with timestamp %s", e.Offset, reasonRawTime(e.Value))
	}
	return fmt.Sprintf("offset %d at byte %d", e.Offset, uint64(e.Value))
}

// short notes an index with fewer entries than the segment's records
// need (an entry for every Nth record, the first always), when the index
// has no worse trouble. The interval is inferred from the first two
// entries: foreign data's is unknown.
func (x *verifyIndex) short(r *verifyResult) {
	if x.missing || x.c == nil || x.c.Err() != nil || x.problems > 0 || r.records == 0 {
		return
	}
	base := x.s.job.seg.base
	lastRec := r.next - 1
	switch {
	case x.n == 0:
		x.add(Finding{Severity: SeverityNote, Kind: FindingIndexShort, Pos: 0, Offset: int64(base),
			Reason: fmt.Sprintf("the %s file is empty, though the segment holds %d records; 'seglog recover' rebuilds it", x.kindName(), r.records)})
	case x.n >= 2:
		idx := segfile.NewIndex(x.f, x.n*format.IndexEntryLen)
		first, err1 := idx.Entry(0)
		second, err2 := idx.Entry(1)
		last, err3 := idx.Entry(x.n - 1)
		if err := cmp.Or(err1, err2, err3); err != nil {
			x.ioErr(err)
			return
		}
		if second.Offset <= first.Offset || last.Offset >= r.next {
			return
		}
		if every := second.Offset - first.Offset; last.Offset+every <= lastRec {
			x.add(Finding{Severity: SeverityNote, Kind: FindingIndexShort, Pos: x.n * format.IndexEntryLen, Offset: int64(last.Offset + every),
				Reason: fmt.Sprintf("the %s ends at offset %d, though records go on to offset %d (an entry every %d records): about %d entries missing; 'seglog recover' rebuilds it",
					x.kindName(), last.Offset, lastRec, every, (lastRec-last.Offset)/every)})
		}
	}
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
	xf, xsize, err := fsx.OpenIndex(seg.path(format.IndexExt))
	if err != nil {
		return nil
	}
	defer xf.Close()
	x := segfile.NewIndex(xf, xsize)
	tf, tsize, err := fsx.OpenIndex(seg.path(format.TimeIndexExt))
	if err != nil {
		return nil
	}
	defer tf.Close()
	tx := segfile.NewIndex(tf, tsize)
	f, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		return nil
	}
	defer f.Close()
	sc, err := segfile.NewScanner(segfileSegment(seg, osFile{File: f}, x, seg.base, false), size, segfile.Options{})
	if err != nil {
		return nil
	}
	defer sc.Close()
	ranges := []verifyRange{{pos: 0, off: seg.base, entry: 0}}
	for k := 1; k < parts; k++ {
		target := size / int64(parts) * int64(k)
		i, ok, err := x.FloorBy(uint64(target), func(_ uint64, p int64) uint64 { return uint64(max(p, 0)) })
		prev := &ranges[len(ranges)-1]
		if err != nil {
			break
		}
		if !ok || i <= prev.entry {
			continue
		}
		e, err := x.Entry(i)
		if err != nil || e.Pos <= prev.pos || e.Offset <= prev.off || e.Pos >= size {
			continue
		}
		if ok, err := sc.Confirms(i); err != nil || !ok {
			continue
		}
		if i >= tx.Len() {
			break
		}
		if t, err := tx.Entry(i); err != nil || t.Offset != e.Offset {
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
		return verifySegment(job, nil, job.seg.base, sh, buf)
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
	sh     *verifyShared
	report *VerifyReport
	emit   func(Finding) error

	gaps     []Gap
	gapCheck *gapCheck
	last     *verifyResult // the last segment's, nil when there are none
	prev     *verifyResult // the segment before, nil for the first or when unknown
	// floor is where the segments before end (the most any of them
	// reached): offsets below it are theirs. Not known after one whose
	// check an I/O error cut short.
	floor    uint64
	noFloor  bool
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
	if pe.p.lone {
		return nil // the gaps file beside it is its partition's, if any: not about this one segment
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
	if !pe.noFloor && !res.gone && pe.floor != job.seg.base && (pe.floor > job.seg.base || res.startBroke) {
		// Checked apart, the segment was taken to start at its name's
		// offset; where the ones before end decides what its first
		// records are (misnamed, or overlapping).
		res = verifySegment(job, nil, pe.floor, pe.sh, make([]byte, verifyChunk))
	}
	if !res.gone {
		if err := pe.boundary(job, res); err != nil {
			return err
		}
		if err := pe.emptyBelowFloor(job, res); err != nil {
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
	switch {
	case res.err != nil:
		pe.noFloor = true
	case !res.gone:
		pe.floor = max(pe.floor, res.next)
	}
	pe.prev, pe.prevSeg = res, job.seg
	if res.gone || res.err != nil || res.damagedEnd {
		pe.prev = nil // where it ends is unknown: say nothing about the next boundary
	}
	return nil
}

// emptyBelowFloor reports a segment holding no record named below where
// the segments before end: a writer would append offsets they hold to it
// (append refuses it), and recover removes it.
func (pe *verifyPartitionEmitter) emptyBelowFloor(job *verifyJob, res *verifyResult) error {
	if pe.noFloor || res.records > 0 || len(res.log) > 0 || job.seg.base >= pe.floor {
		return nil
	}
	return pe.send(Finding{Severity: SeverityProblem, Kind: FindingEmptyBelowFloor, Path: job.seg.path(format.LogExt), Pos: 0, Offset: int64(pe.floor),
		Reason: fmt.Sprintf("the segment is named after offset %d and holds no record, but the segments before it go on to offset %d: 'seglog recover' removes it",
			job.seg.base, pe.floor-1)})
}

// boundary checks where the segment starts against where the one before
// ends: offsets missing between them, and time going back.
func (pe *verifyPartitionEmitter) boundary(job *verifyJob, res *verifyResult) error {
	prev := pe.prev
	if prev == nil {
		return nil
	}
	base, path := job.seg.base, job.seg.path(format.LogExt)
	start := base // a misnamed segment's records may start below its name
	if res.records > 0 && res.firstOff < base {
		start = res.firstOff
	}
	if start > prev.next {
		f := Finding{Severity: SeverityProblem, Kind: FindingGap, Path: path, Pos: 0, Offset: int64(prev.next)}
		what := fmt.Sprintf("offsets %d..%d are missing between this segment and the one before (%s)", prev.next, start-1,
			format.SegmentName(pe.prevSeg.base, format.LogExt))
		switch g, whole := verifyKnownGap(pe.gaps, prev.next, start); {
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
	if prev.records > 0 && res.records > 0 && res.firstTS < prev.lastTS {
		return pe.send(Finding{Severity: SeverityNote, Kind: FindingTimeBackwards, Path: path, Pos: 0, Offset: int64(res.firstOff),
			Reason: fmt.Sprintf("the segment's first record (offset %d) has timestamp %s, older than the last record of the segment before (%s)",
				res.firstOff, reasonTime(res.firstTS), reasonTime(prev.lastTS))})
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
