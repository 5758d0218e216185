package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

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
