package logstore

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seglog/seglog/format"
)

// actionSplit carries out a salvage split of a segment: the original to
// quarantine, the rescued runs into segments of their own, the gaps
// recorded, and only then the damage cut off.
func (s *Store) splitSegment(p *partitionPlan, sp *segmentPlan) error {
	sr := &p.rep.Segments[sp.rep]
	sc := &sp.scan
	logPath := sp.seg.path(format.LogExt)
	f, err := s.fs.OpenFile(logPath, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	c := sr.Cut
	q, err := s.quarantine(p.topic, p.part, f, 0, sc.size, sp.seg.base, c.Reason)
	if err != nil && isNoSpace(err) {
		// Too full to copy: keep the original by a second name, and
		// replace the segment rather than cut its (shared) bytes.
		q, err = s.quarantineByLink(p.topic, p.part, logPath, sc.size, sp.seg.base, c.Reason)
		c.Linked = err == nil
	}
	if err != nil {
		return fmt.Errorf("%w (nothing of %s was changed)", err, logPath)
	}
	c.Saved = q
	// Until the cut, the segment is whole: a failure takes the copy back
	// (it is in the way on a full disk, and a hard link would only be a
	// second name of the live segment), note first, as a purge does.
	undo := func(err error) error {
		_ = s.fs.Remove(strings.TrimSuffix(q, ".bin") + ".json")
		_ = s.fs.Remove(q)
		return err
	}
	for j, r := range sc.runs {
		if j == 0 || sp.present[j] || j == sp.kept {
			continue
		}
		if _, err := s.writeRescuedSegment(f, r, sp.interval, p.dir, false); err != nil {
			return undo(err)
		}
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, gi := range sp.gaps {
		p.rep.Gaps[gi].Time = now
		if err := s.recordGapOnce(p.dir, p.rep.Gaps[gi]); err != nil {
			return undo(err)
		}
	}
	if sp.kept > 0 {
		// The cut: the segment's files replaced by ones holding only the
		// rescued run. Once its .log is renamed, the original lives on in
		// quarantine only (a hard link there is now its only name).
		if replaced, err := s.writeRescuedSegment(f, sc.runs[sp.kept], sp.interval, p.dir, true); err != nil {
			if replaced {
				return err
			}
			return undo(err)
		}
		return nil
	}
	if sr.Removed {
		// The cut: the .log goes (on a full disk, its hard link in
		// quarantine stays the original's name).
		if err := s.fs.Remove(logPath); err != nil {
			return undo(err)
		}
		return s.removeSegmentIndexes(sp.seg)
	}
	end := sc.runs[0].end
	if c.Linked {
		if replaced, err := s.replaceLogByPrefix(f, logPath, end); err != nil {
			if replaced {
				return err // the link is now the original's only name
			}
			return undo(err)
		}
	} else {
		if err := f.Truncate(end); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return s.repairIndexes(sp, logPath)
}

// quarantineByLink saves a whole segment to quarantine as a hard link, for
// when the disk is too full for a copy, with the same note a copy gets.
func (s *Store) quarantineByLink(topic string, part int, src string, size int64, expected uint64, reason string) (string, error) {
	dir := filepath.Join(s.dir, QuarantineDir, topic, strconv.Itoa(part))
	if err := s.mkdirAll(dir); err != nil {
		return "", fmt.Errorf("quarantine: %w", err)
	}
	now := time.Now().UTC()
	base := fmt.Sprintf("%s.%d-%d.%d", filepath.Base(src), 0, size, now.UnixNano())
	data := filepath.Join(dir, base+".bin")
	if err := s.fs.Link(src, data); err != nil {
		return "", fmt.Errorf("quarantine %s by hard link: %w", src, err)
	}
	note, err := json.MarshalIndent(quarantineNote{
		Source: src, Pos: 0, Length: size, ExpectedOffset: expected,
		Reason: reason + " (hard-linked: the disk was too full to copy it; the segment was replaced by a copy of the bytes it keeps)",
		Time:   now.Format(time.RFC3339Nano), Data: base + ".bin",
	}, "", "  ")
	if err == nil {
		err = s.writeFileAtomic(filepath.Join(dir, base+".json"), append(note, '\n'))
	}
	if err == nil {
		err = s.fs.SyncDir(dir)
	}
	if err != nil {
		_ = s.fs.Remove(data)
		return "", fmt.Errorf("quarantine note: %w", err)
	}
	return data, nil
}

// replaceLogByPrefix replaces the .log at path by a copy of its first end
// bytes: temporary, fsync, rename, fsync of the directory. It is how a
// segment whose file is hard-linked into quarantine is cut. replaced tells whether
// the rename was made.
func (s *Store) replaceLogByPrefix(src file, path string, end int64) (replaced bool, err error) {
	return s.writeFileDurably(path, false, func(f file) error {
		w := bufio.NewWriterSize(f, 256<<10)
		if _, err := io.Copy(w, io.NewSectionReader(src, 0, end)); err != nil {
			return err
		}
		return w.Flush()
	})
}

// writeRescuedSegment makes a segment of a run of records of src: its three
// files written under temporary names, synced, and renamed into place, the
// .log last, then the directory synced. With replace, the segment exists
// (src is its .log) and its files are replaced, the .log first: a crash
// before that rename leaves it whole, one after it a clean .log whose
// indexes at worst are stale. replaced tells whether the .log was renamed.
func (s *Store) writeRescuedSegment(src file, r validRun, interval int, dir string, replace bool) (replaced bool, err error) {
	seg := segment{dir: dir, base: r.first}
	exts := []string{format.IndexExt, format.TimeIndexExt, format.LogExt}
	renames := exts
	if replace {
		renames = []string{format.LogExt, format.IndexExt, format.TimeIndexExt}
	}
	var files [3]file
	cleanup := func() {
		for i, f := range files {
			if f != nil {
				f.Close()
			}
			_ = s.fs.Remove(seg.path(exts[i]) + ".tmp")
		}
	}
	for i, ext := range exts {
		if files[i], err = s.fs.OpenFile(seg.path(ext)+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
			cleanup()
			return false, err
		}
	}
	idx := bufio.NewWriterSize(files[0], 64<<10)
	tidx := bufio.NewWriterSize(files[1], 64<<10)
	log := bufio.NewWriterSize(files[2], 256<<10)
	_, err = io.Copy(log, io.NewSectionReader(src, r.pos, r.end-r.pos))
	if err == nil {
		err = writeIndexEntries(src, r.pos, r.end, r.first, interval, idx, tidx)
	}
	for _, w := range []*bufio.Writer{idx, tidx, log} {
		if err == nil {
			err = w.Flush()
		}
	}
	for i := range files {
		if err == nil {
			err = files[i].Sync()
		}
		if cerr := files[i].Close(); err == nil {
			err = cerr
		}
		files[i] = nil
	}
	for _, ext := range renames {
		if err == nil {
			err = s.renameIntoPlace(seg.path(ext)+".tmp", seg.path(ext), ext == format.LogExt && !replace)
			if replace && ext == format.LogExt && err == nil {
				replaced = true
			}
		}
	}
	if err != nil {
		cleanup()
		return replaced, fmt.Errorf("write segment %s: %w", seg.path(format.LogExt), err)
	}
	return replaced, s.fs.SyncDir(dir)
}

// recordGapOnce records a gap unless the same range is recorded already (a
// re-run finishing an interrupted split).
func (s *Store) recordGapOnce(dir string, g Gap) error {
	gaps, err := ReadGaps(dir)
	if err != nil {
		return err
	}
	for _, old := range gaps {
		if old.From == g.From && old.To == g.To {
			return nil
		}
	}
	return s.recordGap(dir, g)
}
