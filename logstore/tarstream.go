package logstore

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// A partition as a tar stream (copy-partition --to -, import-partition):
//
//	seglog-partition.json    the manifest: source, segments and their sizes
//	.seglog.json             the topic's settings, when it has them
//	.gaps.json               the partition's known gaps, when it has them
//	<base>.index, <base>.timeindex, <base>.log    per segment, in order
//	seglog-end.json          records, next offset: the stream is whole
//
// The end entry comes only after every record was sent and checked, so a
// stream cut short, or from a source found damaged on the way, is never
// taken for a whole partition.
const (
	streamManifest = "seglog-partition.json"
	streamEnd      = "seglog-end.json"
	streamFormat   = "seglog-partition"
	streamVersion  = 1
	// streamMetaMax bounds what is read of a stream's small JSON entries.
	streamMetaMax = 64 << 20
)

type streamManifestJSON struct {
	Format    string              `json:"format"`
	Version   int                 `json:"version"`
	Topic     string              `json:"topic"`
	Partition int                 `json:"partition"`
	Segments  []streamSegmentJSON `json:"segments"`
	Settings  bool                `json:"settings"`
	Gaps      bool                `json:"gaps"`
}

type streamSegmentJSON struct {
	Base          uint64 `json:"base"`
	LogBytes      int64  `json:"log_bytes"`
	IndexBytes    int64  `json:"index_bytes"`
	TimeIndex     int64  `json:"timeindex_bytes"`
	IndexInterval int    `json:"index_interval"`
}

// bytes is how long the segment's file with extension ext is.
func (sm streamSegmentJSON) bytes(ext string) int64 {
	switch ext {
	case format.IndexExt:
		return sm.IndexBytes
	case format.TimeIndexExt:
		return sm.TimeIndex
	}
	return sm.LogBytes
}

// check rejects sizes no segment has: an index longer than one entry per
// record the .log can hold would be written for nothing (a stream that
// says so could fill the disk).
func (sm streamSegmentJSON) check() error {
	most := (max(sm.LogBytes, 0)/format.HeaderLen + 1) * format.IndexEntryLen
	if sm.LogBytes < 0 || sm.IndexBytes < 0 || sm.TimeIndex < 0 || sm.IndexBytes > most || sm.TimeIndex > most {
		return fmt.Errorf("%w: its manifest gives segment %d impossible sizes (log %d, index %d, time index %d bytes)",
			ErrStream, sm.Base, sm.LogBytes, sm.IndexBytes, sm.TimeIndex)
	}
	return nil
}

type streamEndJSON struct {
	Segments int    `json:"segments"`
	Records  uint64 `json:"records"`
	Next     uint64 `json:"next"`
}

// ExportPartition writes a partition of the store to w as a tar stream
// that ImportPartition reads: the same segments and bytes CopyPartition
// would copy, each record checked on the way; a damaged source ends the
// stream without its end entry and with an error saying where.
func (s *Store) ExportPartition(topic string, part int, w io.Writer, opts CopyOptions) (rep CopyReport, err error) {
	began := time.Now()
	opts = opts.withDefaults(topic, part)
	rep = CopyReport{From: fmt.Sprintf("%s/%d", topic, part), To: "-"}
	src, err := s.openCopySource(topic, part, opts.LockWait, opts.Interrupt)
	if err != nil {
		return rep, err
	}
	defer src.close()
	m := streamManifestJSON{Format: streamFormat, Version: streamVersion, Topic: topic, Partition: part,
		Settings: src.settings != nil, Gaps: src.gaps != nil}
	for _, cs := range src.segs {
		m.Segments = append(m.Segments, streamSegmentJSON{Base: cs.seg.base, LogBytes: cs.log,
			IndexBytes: cs.index, TimeIndex: cs.timeidx, IndexInterval: cs.interval})
	}
	tw := tar.NewWriter(w)
	if err := writeStreamJSON(tw, streamManifest, m); err != nil {
		return rep, err
	}
	for _, x := range []struct {
		name string
		data []byte
	}{{settingsFile, src.settings}, {GapsFile, src.gaps}} {
		if x.data != nil {
			if err := writeStreamEntry(tw, x.name, int64(len(x.data))); err != nil {
				return rep, err
			}
			if _, err := tw.Write(x.data); err != nil {
				return rep, err
			}
		}
	}
	pace := newPacer(opts.Throttle, src.total, opts.Progress, opts.Interrupt)
	buf := make([]byte, copyPiece)
	gaps := newGapCheck(filepath.Join(src.dir, GapsFile), src.gapList)
	for i, cs := range src.segs {
		next, err := exportSegment(tw, cs, pace, buf)
		if err != nil {
			return rep, err
		}
		gaps.segment(cs.seg, next)
		if i == 0 {
			rep.Start = cs.seg.base
		} else if cs.seg.base < rep.Next {
			return rep, &CorruptionError{Path: cs.seg.path(format.LogExt), Pos: 0, Offset: int64(rep.Next), Reason: ErrOverlap}
		}
		rep.Segments++
		rep.Records += next - cs.seg.base
		rep.Bytes += cs.log
		rep.IndexBytes += cs.index + cs.timeidx
		rep.Next = next
	}
	// Before the end entry: a stream carrying a wrong gap is not whole.
	gaps.end(rep.Next)
	if err := gaps.err(gapsAdvice); err != nil {
		return rep, err
	}
	if err := writeStreamJSON(tw, streamEnd, streamEndJSON{Segments: rep.Segments, Records: rep.Records, Next: rep.Next}); err != nil {
		return rep, err
	}
	if err := tw.Close(); err != nil {
		return rep, err
	}
	rep.Duration = time.Since(began)
	return rep, nil
}

// exportSegment writes one segment's three files, the .log checked record
// by record before it goes out. It returns the offset after its records.
func exportSegment(tw *tar.Writer, cs copySegment, pace *pacer, buf []byte) (uint64, error) {
	for _, x := range []struct {
		ext string
		n   int64
	}{{format.IndexExt, cs.index}, {format.TimeIndexExt, cs.timeidx}} {
		if err := writeStreamEntry(tw, format.SegmentName(cs.seg.base, x.ext), x.n); err != nil {
			return 0, err
		}
		if x.n > 0 {
			if err := exportFile(tw, cs.seg.path(x.ext), x.n, pace, buf, nil); err != nil {
				return 0, err
			}
		}
	}
	if err := writeStreamEntry(tw, format.SegmentName(cs.seg.base, format.LogExt), cs.log); err != nil {
		return 0, err
	}
	check := newSegmentCheck(cs.seg.path(format.LogExt), cs.seg.base, cs.interval)
	if err := exportFile(tw, cs.seg.path(format.LogExt), cs.log, pace, buf, check); err != nil {
		return 0, err
	}
	return check.Next(), check.finish()
}

// exportFile writes the first n bytes of the file at path to tw, each
// piece shown to check (when set) before it goes out.
func exportFile(tw *tar.Writer, path string, n int64, pace *pacer, buf []byte, check *segmentCheck) error {
	f, err := fsx.OpenRead(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for at := int64(0); at < n; {
		piece := buf[:min(int64(len(buf)), pace.piece(), n-at)]
		if _, err := io.ReadFull(io.NewSectionReader(f, at, int64(len(piece))), piece); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("read %s: %w", path, err)
		}
		if check != nil {
			if _, err := check.Write(piece); err != nil {
				return err
			}
		}
		if _, err := tw.Write(piece); err != nil {
			return err
		}
		at += int64(len(piece))
		if err := pace.add(int64(len(piece))); err != nil {
			return err
		}
	}
	return nil
}

func writeStreamEntry(tw *tar.Writer, name string, size int64) error {
	return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644,
		ModTime: time.Now().Truncate(time.Second), Format: tar.FormatPAX})
}

func writeStreamJSON(tw *tar.Writer, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := writeStreamEntry(tw, name, int64(len(b))); err != nil {
		return err
	}
	_, err = tw.Write(b)
	return err
}

// ErrStream means an import's input is not a whole partition stream.
var ErrStream = errors.New("not a whole partition stream")

// ImportPartition reads a stream ExportPartition wrote and makes it
// partition part of topic, checked and placed the way CopyPartition places
// a copy (opts.ToTopic and ToPartition are ignored). A stream that is cut
// short, damaged or not one at all leaves nothing behind.
func (s *Store) ImportPartition(topic string, part int, r io.Reader, opts CopyOptions) (rep CopyReport, err error) {
	began := time.Now()
	opts.ToTopic, opts.ToPartition = topic, part
	opts = opts.withDefaults(topic, part)
	var b *partitionBuild
	defer func() {
		// A read of the stream the interruption cut short fails as
		// the interruption, unless the partition is in place already.
		if err != nil && interrupted(opts.Interrupt) && (b == nil || !b.placed) {
			err = ErrInterrupted
		}
	}()
	rep = CopyReport{To: fmt.Sprintf("%s/%d", topic, part)}
	if err := format.ValidateTopic(topic); err != nil {
		return rep, err
	}
	in := &streamReader{tr: tar.NewReader(r)}
	var m streamManifestJSON
	if err := in.json(streamManifest, &m); err != nil {
		return rep, err
	}
	if m.Format != streamFormat || m.Version != streamVersion {
		return rep, fmt.Errorf("%w: its manifest is for %q version %d, not %q version %d", ErrStream, m.Format, m.Version, streamFormat, streamVersion)
	}
	for _, sm := range m.Segments {
		if err := sm.check(); err != nil {
			return rep, err
		}
	}
	rep.From = fmt.Sprintf("%s/%d", m.Topic, m.Partition)
	var settings, gaps []byte
	if m.Settings {
		if settings, err = in.small(settingsFile); err != nil {
			return rep, err
		}
		// Taken as they are, bad ones would make the topic unreadable.
		if _, err := parseSettings(settings); err != nil {
			return rep, fmt.Errorf("%w: its %s is not the settings of a topic: %v", ErrStream, settingsFile, err)
		}
	}
	var gapList []Gap
	if m.Gaps {
		if gaps, err = in.small(GapsFile); err != nil {
			return rep, err
		}
		if gapList, err = parseGaps(gaps); err != nil {
			return rep, fmt.Errorf("%w: its %s is not a record of gaps: %v", ErrStream, GapsFile, err)
		}
	}
	b, err = s.beginBuild(opts, buildMeta{settings: settings, gaps: gaps, gapCheck: newGapCheck("the stream's "+GapsFile, gapList),
		gapsAdvice: "the stream is refused"}, &rep)
	if err != nil {
		return rep, err
	}
	defer b.end(&err)
	var total int64
	for _, sm := range m.Segments {
		total += sm.LogBytes + sm.IndexBytes + sm.TimeIndex
	}
	pace := newPacer(0, total, opts.Progress, opts.Interrupt)
	buf := make([]byte, copyPiece)
	for _, sm := range m.Segments {
		if err := b.importSegment(in, sm, pace, buf); err != nil {
			return rep, err
		}
	}
	var end streamEndJSON
	if err := in.json(streamEnd, &end); err != nil {
		return rep, err
	}
	if end.Segments != rep.Segments || end.Records != rep.Records || end.Next != rep.Next {
		return rep, fmt.Errorf("%w: its end entry says %d segments, %d records, next offset %d; it held %d, %d, %d",
			ErrStream, end.Segments, end.Records, end.Next, rep.Segments, rep.Records, rep.Next)
	}
	if err := b.finish(); err != nil {
		return rep, err
	}
	if err := b.place(nil); err != nil {
		return rep, err
	}
	rep.Duration = time.Since(began)
	return rep, nil
}

// importSegment writes one segment of the stream into the build, its .log
// checked as it arrives.
func (b *partitionBuild) importSegment(in *streamReader, sm streamSegmentJSON, pace *pacer, buf []byte) error {
	seg := segment{dir: b.tmp, base: sm.Base}
	var files []file
	for _, ext := range []string{format.IndexExt, format.TimeIndexExt, format.LogExt} {
		name := format.SegmentName(sm.Base, ext)
		size, err := in.next(name)
		if want := sm.bytes(ext); err == nil && size != want {
			err = fmt.Errorf("%w: %s holds %d bytes, its manifest says %d", ErrStream, name, size, want)
		}
		var f file
		if err == nil {
			f, err = b.create(seg, ext)
		}
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return err
		}
		files = append(files, f)
		var w io.Writer = f
		var check *segmentCheck
		if ext == format.LogExt {
			check = newSegmentCheck("the stream's "+name, sm.Base, sm.IndexInterval)
			if err = check.compareIndexes(seg); err == nil {
				w = io.MultiWriter(check, f)
			}
		}
		if err == nil {
			err = in.copyTo(name, w, size, pace, buf)
		}
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return err
		}
		if check != nil {
			return b.endSegment(seg, check, files)
		}
	}
	return nil
}

// streamReader reads the entries of a partition stream in the order they
// must come.
type streamReader struct {
	tr *tar.Reader
}

// next moves to the next entry, which must be called name, and returns
// its size.
func (in *streamReader) next(name string) (int64, error) {
	h, err := in.tr.Next()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, fmt.Errorf("%w: it ends before %s (cut short?)", ErrStream, name)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrStream, err)
	}
	if h.Name != name || h.Typeflag != tar.TypeReg {
		return 0, fmt.Errorf("%w: expected %s next, found %q", ErrStream, name, h.Name)
	}
	return h.Size, nil
}

// small reads the whole of the next entry, name, a small file.
func (in *streamReader) small(name string) ([]byte, error) {
	size, err := in.next(name)
	if err != nil {
		return nil, err
	}
	if size > streamMetaMax {
		return nil, fmt.Errorf("%w: %s is %d bytes, more than such a file holds", ErrStream, name, size)
	}
	b, err := io.ReadAll(in.tr)
	if err != nil {
		return nil, in.cut(name, err)
	}
	return b, nil
}

func (in *streamReader) json(name string, v any) error {
	b, err := in.small(name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrStream, name, err)
	}
	return nil
}

// copyTo copies the current entry, of size bytes, to w.
func (in *streamReader) copyTo(name string, w io.Writer, size int64, pace *pacer, buf []byte) error {
	for done := int64(0); done < size; {
		n, err := io.ReadFull(in.tr, buf[:min(int64(len(buf)), size-done)])
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			done += int64(n)
			if err := pace.add(int64(n)); err != nil {
				return err
			}
		}
		if err != nil && done < size {
			return in.cut(name, err)
		}
	}
	return nil
}

func (in *streamReader) cut(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: it ends inside %s (cut short?)", ErrStream, what)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrStream, err)
}
