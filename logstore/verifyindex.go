package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

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
