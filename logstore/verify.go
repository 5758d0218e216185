package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
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

// VerifyTarget is a log to verify, in any layout. Number and Count place
// it in its topic, for the key-routing hint; Count <= 1 turns the hint
// off.
type VerifyTarget struct {
	Log           Log
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
	// Start, if set, is called before each log's findings, on the
	// goroutine that called Verify: where a layout's check has limits
	// (Layout.CheckLimits), output says so first. An error it returns
	// stops the check and is returned.
	Start func(Log) error
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
// indexes, segment boundaries and tails, as each target's Log.Verify
// does, without taking any lock
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
// whatever the data's size. The seglog partitions share the workers; a
// log in another layout is checked by its own Verify at its turn.
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
		firstJob[ti] = len(jobs)
		p, ok := t.Log.(*Partition)
		if !ok {
			continue
		}
		reports[ti] = VerifyReport{Name: p.name, Dir: p.dir, Segments: len(p.segs), Complete: true}
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
	others := verifyOthers(targets, workers, sh)
	defer others.stop(sh)
	var errs []error
	for ti, t := range targets {
		if opts.Start != nil {
			if err := opts.Start(t.Log); err != nil {
				return reports, err
			}
		}
		p, ok := t.Log.(*Partition)
		if !ok {
			o := others.take(ti)
			reports[ti] = o.report
			for _, f := range o.findings {
				if err := emit(f); err != nil {
					return reports, err
				}
			}
			if o.err != nil {
				errs = append(errs, o.err) // an I/O error: the others are checked still
			}
			continue
		}
		pe := verifyPartitionEmitter{p: p, sh: sh, report: &reports[ti], emit: emit}
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

// verifyOther is the check of a log in another layout than seglog's,
// run by its own Verify beside the partitions' workers: its findings wait
// here for their turn (each file lists at most verifyMaxPerKind of a
// kind, so they stay few).
type verifyOther struct {
	done     chan struct{}
	report   VerifyReport
	findings []Finding
	err      error
}

// verifyOtherSet is the checks of the targets in other layouts, workers
// at a time and at most twice that many ahead of the one whose findings
// are printed, so memory does not grow with the number of logs.
type verifyOtherSet struct {
	of     map[int]*verifyOther // by target
	window chan struct{}        // a slot per check started and not yet taken
	quit   chan struct{}
	wg     sync.WaitGroup
}

// take waits for target ti's check and frees its slot.
func (s *verifyOtherSet) take(ti int) *verifyOther {
	o := s.of[ti]
	<-o.done
	<-s.window
	return o
}

// stop ends the checks (at their next finding) and waits for them.
func (s *verifyOtherSet) stop(sh *verifyShared) {
	sh.stop.Store(true)
	close(s.quit)
	s.wg.Wait()
}

// verifyOthers starts checking the targets that are not seglog
// partitions, in order.
func verifyOthers(targets []VerifyTarget, workers int, sh *verifyShared) *verifyOtherSet {
	s := &verifyOtherSet{of: map[int]*verifyOther{}, window: make(chan struct{}, 2*workers), quit: make(chan struct{})}
	var order []int
	for ti, t := range targets {
		if _, ok := t.Log.(*Partition); !ok {
			s.of[ti] = &verifyOther{done: make(chan struct{})}
			order = append(order, ti)
		}
	}
	if len(order) == 0 {
		return s
	}
	feed := make(chan int)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(feed)
		for _, ti := range order {
			select {
			case s.window <- struct{}{}:
			case <-s.quit:
				return
			}
			select {
			case feed <- ti:
			case <-s.quit:
				return
			}
		}
	}()
	// Workers the logs do not take check pieces of a log's segments.
	jobs := max(1, workers/len(order))
	for range min(workers, len(order)) {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for ti := range feed {
				o, t := s.of[ti], targets[ti]
				o.report, o.err = t.Log.Verify(t.Number, t.Count, VerifyOptions{Jobs: jobs, Finding: func(f Finding) error {
					if sh.stop.Load() {
						return errVerifyStopped
					}
					o.findings = append(o.findings, f)
					return nil
				}})
				close(o.done)
			}
		}()
	}
	return s
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

// absorb adds w's findings, listed and counted, after v's, leaving out
// the listed ones skip tells.
func (v *verifyFindings) absorb(w verifyFindings, skip func(Finding) bool) {
	unlisted := maps.Clone(w.counts)
	for _, f := range *w.list {
		unlisted[verifyKindKey{f.Kind, f.Severity}]--
		if !skip(f) {
			v.add(f)
		}
	}
	for k, n := range unlisted {
		if n > 0 {
			if v.counts == nil {
				v.counts = map[verifyKindKey]int{}
			}
			v.counts[k] += n
		}
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
