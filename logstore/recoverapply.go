package logstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// executePlan carries out a plan, segment by segment, each after the ones
// it waits for: a split writes a rescued run only once the segments named
// among its offsets are gone from there, so that at every step readers
// take the same records for valid as before.
func (s *Store) executePlan(p *partitionPlan) error {
	done := make([]bool, len(p.segs))
	var execute func(i int) error
	execute = func(i int) error {
		if done[i] {
			return nil
		}
		done[i] = true
		sp := p.segs[i]
		switch sp.action {
		case actionCutTail:
			return s.cutIncompleteTail(p, sp)
		case actionSplit:
			for _, k := range sp.waitsFor {
				if err := execute(k); err != nil {
					return err
				}
			}
			return s.splitSegment(p, sp)
		case actionRename:
			return s.renameMisnamed(sp)
		case actionDrop:
			return s.dropEmptySegment(sp)
		case actionNone:
			return s.repairIndexes(sp, sp.seg.path(format.LogExt))
		}
		return nil
	}
	for i := range p.segs {
		if err := execute(i); err != nil {
			return err
		}
	}
	return nil
}

// actionDrop removes an empty segment, its .log first.
func (s *Store) dropEmptySegment(sp *segmentPlan) error {
	if err := s.fs.Remove(sp.seg.path(format.LogExt)); err != nil {
		return err
	}
	return s.removeSegmentIndexes(sp.seg)
}

// cutIncompleteTail saves the active segment's incomplete tail to
// quarantine and cuts it in place (a tail -f reader may hold the file
// open).
func (s *Store) cutIncompleteTail(p *partitionPlan, sp *segmentPlan) error {
	sr := &p.rep.Segments[sp.rep]
	f, err := s.fs.OpenFile(sp.seg.path(format.LogExt), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	c := sr.Cut
	q, err := s.quarantine(p.topic, p.part, f, c.From, c.To, c.Offset, c.Reason)
	if err != nil {
		if isNoSpace(err) {
			return fmt.Errorf("%w: the disk is too full to save the %d bytes of the incomplete record at byte %d of %s; nothing was cut (free some space and run recover again)",
				err, c.To-c.From, c.From, f.Name())
		}
		return fmt.Errorf("%w (nothing was cut from %s)", err, f.Name())
	}
	c.Saved = q
	if err := f.Truncate(c.From); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return s.repairIndexes(sp, f.Name())
}

// actionRename gives a misnamed segment its first record's name: indexes for
// the new name first, then the .log renamed, then the old indexes
// removed. A crash between leaves only orphan indexes, which the next
// recover removes.
func (s *Store) renameMisnamed(sp *segmentPlan) error {
	r := sp.scan.runs[1]
	to := segment{dir: sp.seg.dir, base: r.first}
	src, err := fsx.OpenRead(sp.seg.path(format.LogExt))
	if err != nil {
		return err
	}
	defer src.Close()
	if err := s.writeIndexes(osFile{File: src}, r, sp.interval, to); err != nil {
		return err
	}
	if err := s.fs.Rename(sp.seg.path(format.LogExt), to.path(format.LogExt), true); err != nil {
		return fmt.Errorf("rename %s: %w", sp.seg.path(format.LogExt), err)
	}
	return s.removeSegmentIndexes(sp.seg)
}

// removeSegmentIndexes removes a segment's index files, once its .log is gone.
func (s *Store) removeSegmentIndexes(seg segment) error {
	for _, ext := range []string{format.IndexExt, format.TimeIndexExt} {
		if err := s.fs.Remove(seg.path(ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return s.fs.SyncDir(seg.dir)
}

// isNoSpace tells a full disk (or quota).
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
