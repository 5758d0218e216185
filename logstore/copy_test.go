package logstore_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// ctCopy copies partition 0 of rtTopic from src to a fresh data directory
// (or dst) and fails the test on error.
func ctCopy(t *testing.T, src, dst *logstore.Store, opts logstore.CopyOptions) logstore.CopyReport {
	t.Helper()
	rep, err := src.CopyPartition(rtTopic, 0, dst, opts)
	if err != nil {
		t.Fatalf("CopyPartition: %v", err)
	}
	return rep
}

func ctOpts() logstore.CopyOptions { return logstore.CopyOptions{ToPartition: -1} }

// ctLogBytes sums the .log sizes of a partition directory.
func ctLogBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, base := range rtBases(t, dir) {
		fi, err := os.Stat(filepath.Join(dir, format.SegmentName(base, format.LogExt)))
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// ctSameTree fails unless the two directories hold the same files with
// the same bytes.
func ctSameTree(t *testing.T, want, got string) {
	t.Helper()
	w, g := readTree(t, want), readTree(t, got)
	for name, b := range w {
		if gb, ok := g[name]; !ok {
			t.Errorf("copy lacks %s", name)
		} else if !bytes.Equal(gb, b) {
			t.Errorf("%s differs: %d bytes in the copy, %d in the source", name, len(gb), len(b))
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("copy has %s, the source does not", name)
		}
	}
}

// ctNoBuilds fails if a temporary build directory is left in dir.
func ctNoBuilds(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left behind: %s", filepath.Join(dir, e.Name()))
		}
	}
}

func TestCopyPartitionIsByteForByte(t *testing.T) {
	s, dir, bases := rtWrite40(t)
	dst := logstore.Open(filepath.Join(t.TempDir(), "new-data"))
	rep := ctCopy(t, s, dst, ctOpts())
	out := dst.PartitionDir(rtTopic, 0)
	ctSameTree(t, dir, out)
	if rep.Segments != len(bases) || rep.Records != 40 || rep.Start != 0 || rep.Next != 40 ||
		rep.Bytes != ctLogBytes(t, dir) || rep.Replaced || rep.IndexesRebuilt != 0 || rep.Dir != out {
		t.Errorf("report %+v", rep)
	}
	// The copy reads back record for record.
	p, err := dst.OpenPartition(rtTopic, 0)
	if err != nil {
		t.Fatal(err)
	}
	offs, err := rtReadOffsets(t, p, 0)
	if err != nil || len(offs) != 40 {
		t.Fatalf("read %d records of the copy, err %v", len(offs), err)
	}
	ctNoBuilds(t, filepath.Dir(out))
}

func TestCopyPartitionTakesTopicSettingsWhenItCreatesTheTopic(t *testing.T) {
	s := logstore.Open(t.TempDir())
	if err := s.CreateTopic(rtTopic, 2, logstore.Settings{SegmentBytes: 12345, Retention: time.Hour}); err != nil {
		t.Fatal(err)
	}
	dst := logstore.Open(t.TempDir())
	ctCopy(t, s, dst, logstore.CopyOptions{ToTopic: "other", ToPartition: 0})
	top, err := dst.Topic("other")
	if err != nil {
		t.Fatal(err)
	}
	if top.Settings.SegmentBytes != 12345 || top.Settings.Retention != time.Hour || top.Partitions != 1 {
		t.Errorf("the new topic: %d partitions, settings %+v", top.Partitions, top.Settings)
	}
	// An existing topic keeps its own settings.
	if err := dst.CreateTopic("mine", 1, logstore.Settings{SegmentBytes: 999}); err != nil {
		t.Fatal(err)
	}
	ctCopy(t, s, dst, logstore.CopyOptions{ToTopic: "mine", ToPartition: 1})
	if top, err := dst.Topic("mine"); err != nil || top.Settings.SegmentBytes != 999 {
		t.Errorf("existing topic's settings changed: %+v, %v", top, err)
	}
}

func TestCopyPartitionRefusesExistingUnlessForced(t *testing.T) {
	s, dir, _ := rtWrite40(t)
	dst := logstore.Open(t.TempDir())
	ctCopy(t, s, dst, ctOpts())
	out := dst.PartitionDir(rtTopic, 0)

	// More records in the source; a copy without Force is refused and the
	// destination stays as it was.
	w, err := s.OpenWriter(rtTopic, 0, logstore.WriterOptions{Sync: logstore.SyncNever, SegmentBytes: 600})
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(40); i < 60; i++ {
		if _, err := w.Append(rtT0+int64(i)*1000, rtKey(i), rtValue(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before := readTree(t, out)
	_, err = s.CopyPartition(rtTopic, 0, dst, ctOpts())
	if !errors.Is(err, logstore.ErrPartitionExists) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("copy over an existing partition: %v", err)
	}
	if after := readTree(t, out); len(after) != len(before) {
		t.Fatalf("refused copy changed the destination")
	}
	ctNoBuilds(t, filepath.Dir(out))

	opts := ctOpts()
	opts.Force = true
	rep := ctCopy(t, s, dst, opts)
	if !rep.Replaced || rep.Next != 60 {
		t.Errorf("report %+v", rep)
	}
	ctSameTree(t, dir, out)
	ctNoBuilds(t, filepath.Dir(out))
}

func TestCopyPartitionForceWaitsForDestinationWriter(t *testing.T) {
	s, _, _ := rtWrite40(t)
	dst := logstore.Open(t.TempDir())
	ctCopy(t, s, dst, ctOpts())
	w, err := dst.OpenWriter(rtTopic, 0, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	opts := ctOpts()
	opts.Force, opts.LockWait = true, 50*time.Millisecond
	_, err = s.CopyPartition(rtTopic, 0, dst, opts)
	var locked *logstore.LockedError
	if !errors.As(err, &locked) {
		t.Fatalf("forced copy over a partition with a live writer: %v", err)
	}
	ctNoBuilds(t, filepath.Join(dst.Dir(), rtTopic))
}

func TestCopyPartitionOntoItselfIsRefused(t *testing.T) {
	s, _, _ := rtWrite40(t)
	opts := ctOpts()
	opts.Force = true
	if _, err := s.CopyPartition(rtTopic, 0, s, opts); err == nil || !strings.Contains(err.Error(), "both the source and the destination") {
		t.Fatalf("copy onto itself: %v", err)
	}
	// Another partition of the same topic is fine (one lock on the topic).
	rep, err := s.CopyPartition(rtTopic, 0, s, logstore.CopyOptions{ToPartition: 1})
	if err != nil || rep.Records != 40 {
		t.Fatalf("copy to partition 1 of the same topic: %+v, %v", rep, err)
	}
}

// The active segment is copied up to its last valid record: a torn tail
// stays behind.
func TestCopyPartitionStopsAtIncompleteTail(t *testing.T) {
	s, dir, bases := rtWrite40(t)
	active := filepath.Join(dir, format.SegmentName(bases[len(bases)-1], format.LogExt))
	want, err := os.ReadFile(active)
	if err != nil {
		t.Fatal(err)
	}
	torn := format.AppendRecord(nil, &format.Record{Offset: 40, Timestamp: rtT0, Value: []byte("half of a record")})
	f, err := os.OpenFile(active, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(torn[:len(torn)-5])
	f.Close()
	dst := logstore.Open(t.TempDir())
	rep := ctCopy(t, s, dst, ctOpts())
	got, err := os.ReadFile(filepath.Join(dst.PartitionDir(rtTopic, 0), filepath.Base(active)))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("copied active segment: %d bytes (err %v), want the %d valid ones", len(got), err, len(want))
	}
	if rep.Next != 40 {
		t.Errorf("next %d, want 40", rep.Next)
	}
}

// A damaged source is refused, naming the source file and byte; nothing
// is left in the destination.
func TestCopyPartitionRefusesDamagedSource(t *testing.T) {
	for _, export := range []bool{false, true} {
		s, dir, bases := rtWrite40(t)
		seg := filepath.Join(dir, format.SegmentName(bases[1], format.LogExt))
		b, _ := os.ReadFile(seg)
		h, _ := format.ParseHeader(b)
		second := h.RecordLen()
		b[second+format.HeaderLen+2] ^= 0x40 // the second record's key
		if err := os.WriteFile(seg, b, 0o644); err != nil {
			t.Fatal(err)
		}
		dst := logstore.Open(t.TempDir())
		var err error
		var stream bytes.Buffer
		if export {
			_, err = s.ExportPartition(rtTopic, 0, &stream, ctOpts())
		} else {
			_, err = s.CopyPartition(rtTopic, 0, dst, ctOpts())
		}
		var ce *logstore.CorruptionError
		if !errors.As(err, &ce) || ce.Path != seg || ce.Pos != second || ce.Offset != int64(bases[1]+1) || !errors.Is(err, format.ErrCRC) {
			t.Fatalf("export %v: copy of a damaged source: %v", export, err)
		}
		if export {
			// What was sent before the damage is no partition.
			if _, err := dst.ImportPartition(rtTopic, 0, &stream, logstore.CopyOptions{}); !errors.Is(err, logstore.ErrStream) {
				t.Fatalf("import of the stream of a damaged source: %v", err)
			}
		}
		if _, err := os.Stat(dst.PartitionDir(rtTopic, 0)); !os.IsNotExist(err) {
			t.Errorf("export %v: destination partition exists after a refused copy", export)
		}
		ctNoBuilds(t, filepath.Join(dst.Dir(), rtTopic))
	}
}

// Damaged, missing or over-long indexes in the source are rebuilt in the
// copy, to what the writer wrote.
func TestCopyPartitionRebuildsDamagedIndexes(t *testing.T) {
	s, dir, bases := rtWrite40(t)
	want := readTree(t, dir)
	idx0 := filepath.Join(dir, format.SegmentName(bases[0], format.IndexExt))
	tidx1 := filepath.Join(dir, format.SegmentName(bases[1], format.TimeIndexExt))
	idx2 := filepath.Join(dir, format.SegmentName(bases[2], format.IndexExt))
	if err := os.Remove(idx0); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(tidx1)
	b[format.IndexEntryLen+12] ^= 1 // the second entry's timestamp
	os.WriteFile(tidx1, b, 0o644)
	b, _ = os.ReadFile(idx2)
	os.WriteFile(idx2, append(b, format.AppendIndexEntry(nil, format.IndexEntry{Offset: 1000, Pos: 1 << 20})...), 0o644)

	dst := logstore.Open(t.TempDir())
	rep := ctCopy(t, s, dst, ctOpts())
	got := readTree(t, dst.PartitionDir(rtTopic, 0))
	for name, wb := range want {
		if !bytes.Equal(got[name], wb) {
			t.Errorf("%s of the copy is not what the writer wrote", name)
		}
	}
	if rep.IndexesRebuilt != 2 {
		t.Errorf("IndexesRebuilt %d, want 2 (a missing index, a lying time index; an over-long one is cut)", rep.IndexesRebuilt)
	}
}

// A copy while a writer appends and rolls is a valid prefix of the source;
// a second, forced copy after the writer stopped is identical to it.
func TestCopyPartitionWhileAppending(t *testing.T) {
	s, dir, _ := rtWrite40(t)
	w, err := s.OpenWriter(rtTopic, 0, logstore.WriterOptions{Sync: logstore.SyncNever, SegmentBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(40); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.Append(rtT0+int64(i)*1000, rtKey(i), rtValue(i)); err != nil {
				t.Error(err)
				return
			}
			if i%7 == 0 {
				w.Flush()
				time.Sleep(time.Millisecond) // some rolls, not a flood of segments
			}
		}
	}()
	dst := logstore.Open(t.TempDir())
	for range 8 {
		opts := ctOpts()
		opts.Force = true
		rep := ctCopy(t, s, dst, opts)
		p, err := dst.OpenPartition(rtTopic, 0)
		if err != nil {
			t.Fatal(err)
		}
		offs, err := rtReadOffsets(t, p, 0)
		if err != nil || uint64(len(offs)) != rep.Records || rep.Records < 40 {
			t.Fatalf("copy of a live partition: %d records read, report %+v, err %v", len(offs), rep, err)
		}
	}
	close(stop)
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	opts := ctOpts()
	opts.Force = true
	ctCopy(t, s, dst, opts)
	ctSameTree(t, dir, dst.PartitionDir(rtTopic, 0))
}

func TestExportImportRoundTrip(t *testing.T) {
	s, dir, bases := rtWrite40(t)
	if err := os.WriteFile(filepath.Join(dir, logstore.GapsFile), []byte(`{"gaps":[]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	exp, err := s.ExportPartition(rtTopic, 0, &stream, ctOpts())
	if err != nil {
		t.Fatal(err)
	}
	dst := logstore.Open(t.TempDir())
	imp, err := dst.ImportPartition("moved", 2, bytes.NewReader(stream.Bytes()), logstore.CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctSameTree(t, dir, dst.PartitionDir("moved", 2))
	if exp.Records != 40 || imp.Records != 40 || exp.Segments != len(bases) || imp.Segments != len(bases) ||
		imp.From != rtTopic+"/0" || imp.To != "moved/2" || exp.Bytes != imp.Bytes {
		t.Errorf("export %+v, import %+v", exp, imp)
	}
	// Again: refused without Force, replaced with it.
	if _, err := dst.ImportPartition("moved", 2, bytes.NewReader(stream.Bytes()), logstore.CopyOptions{}); !errors.Is(err, logstore.ErrPartitionExists) {
		t.Fatalf("second import: %v", err)
	}
	if rep, err := dst.ImportPartition("moved", 2, bytes.NewReader(stream.Bytes()), logstore.CopyOptions{Force: true}); err != nil || !rep.Replaced {
		t.Fatalf("forced import: %+v, %v", rep, err)
	}
	ctSameTree(t, dir, dst.PartitionDir("moved", 2))
	ctNoBuilds(t, filepath.Join(dst.Dir(), "moved"))
}

// A stream cut anywhere is refused and leaves nothing behind.
func TestImportRefusesStreamCutShort(t *testing.T) {
	s, _, _ := rtWrite40(t)
	var stream bytes.Buffer
	if _, err := s.ExportPartition(rtTopic, 0, &stream, ctOpts()); err != nil {
		t.Fatal(err)
	}
	full := stream.Bytes()
	// Go's tar reader takes a stream ending at an entry boundary for a
	// whole archive: the end entry is what tells. Any cut before its last
	// byte must fail.
	last := bytes.LastIndex(full, []byte("}\n"))
	cuts := []int{last}
	for cut := 0; cut < last; cut += 211 {
		cuts = append(cuts, cut)
	}
	for _, cut := range cuts {
		dst := logstore.Open(t.TempDir())
		_, err := dst.ImportPartition(rtTopic, 0, bytes.NewReader(full[:cut]), logstore.CopyOptions{})
		if !errors.Is(err, logstore.ErrStream) {
			t.Fatalf("stream cut at %d of %d: %v", cut, len(full), err)
		}
		if _, err := os.Stat(dst.PartitionDir(rtTopic, 0)); !os.IsNotExist(err) {
			t.Fatalf("stream cut at %d: a partition appeared", cut)
		}
		ctNoBuilds(t, filepath.Join(dst.Dir(), rtTopic))
	}
}

func TestImportRefusesForeignInput(t *testing.T) {
	dst := logstore.Open(t.TempDir())
	for _, in := range []string{"", "hello, world\n", strings.Repeat("\x00", 4096)} {
		if _, err := dst.ImportPartition(rtTopic, 0, strings.NewReader(in), logstore.CopyOptions{}); !errors.Is(err, logstore.ErrStream) {
			t.Errorf("import of %q: %v", in[:min(len(in), 12)], err)
		}
	}
	if _, err := dst.ImportPartition("../x", 0, strings.NewReader(""), logstore.CopyOptions{}); !errors.Is(err, format.ErrTopicName) {
		t.Errorf("import into a bad topic name: %v", err)
	}
}

// A record altered in the stream (after the exporter checked it) is caught
// by the importer.
func TestImportChecksRecords(t *testing.T) {
	s, dir, bases := rtWrite40(t)
	var stream bytes.Buffer
	if _, err := s.ExportPartition(rtTopic, 0, &stream, ctOpts()); err != nil {
		t.Fatal(err)
	}
	seg, _ := os.ReadFile(filepath.Join(dir, format.SegmentName(bases[2], format.LogExt)))
	b := stream.Bytes()
	at := bytes.Index(b, seg)
	if at < 0 {
		t.Fatal("segment bytes not found in the stream")
	}
	b[at+format.HeaderLen+1] ^= 0x20
	dst := logstore.Open(t.TempDir())
	_, err := dst.ImportPartition(rtTopic, 0, bytes.NewReader(b), logstore.CopyOptions{})
	var ce *logstore.CorruptionError
	if !errors.As(err, &ce) || ce.Pos != 0 || !strings.Contains(ce.Path, format.SegmentName(bases[2], format.LogExt)) {
		t.Fatalf("import of an altered stream: %v", err)
	}
	ctNoBuilds(t, filepath.Join(dst.Dir(), rtTopic))
}

func TestExportToClosedPipeFails(t *testing.T) {
	s, _, _ := rtWrite40(t)
	r, w := io.Pipe()
	r.CloseWithError(unix.EPIPE)
	if _, err := s.ExportPartition(rtTopic, 0, w, ctOpts()); !errors.Is(err, unix.EPIPE) {
		t.Fatalf("export into a closed pipe: %v", err)
	}
}

// Throttle holds a copy to its rate: at least as long as the bytes take at
// that rate (a lower bound only, which a busy machine cannot break).
func TestCopyPartitionThrottle(t *testing.T) {
	s, dir, _ := rtWrite40(t)
	total := int64(0)
	for _, b := range readTree(t, dir) {
		total += int64(len(b))
	}
	opts := ctOpts()
	opts.Throttle = total * 2 // half a second's worth
	var calls int
	var last int64
	opts.Progress = func(done, of int64) {
		calls++
		if done < last || done > of {
			t.Errorf("progress %d of %d after %d", done, of, last)
		}
		last = done
	}
	began := time.Now()
	ctCopy(t, s, logstore.Open(t.TempDir()), opts)
	if took := time.Since(began); took < 400*time.Millisecond {
		t.Errorf("copy of %d bytes at %d B/s took %v", total, opts.Throttle, took)
	}
	if calls < 5 || last != total {
		t.Errorf("progress called %d times, last %d of %d", calls, last, total)
	}
}

// Temporary directories of copies that died are removed by the next copy
// into the topic; one whose copy still runs (its lock held) stays.
func TestCopyPartitionRemovesDeadBuilds(t *testing.T) {
	s, _, _ := rtWrite40(t)
	dst := logstore.Open(t.TempDir())
	topicDir := filepath.Join(dst.Dir(), rtTopic)
	dead := filepath.Join(topicDir, ".copy-0-000000000000.tmp")
	live := filepath.Join(topicDir, ".copy-1-000000000001.tmp")
	for _, d := range []string{dead, live} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "00000000000000000000.log"), []byte("partial"), 0o644)
	}
	f, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctCopy(t, s, dst, logstore.CopyOptions{ToPartition: 3})
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("dead build not removed: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("live build removed: %v", err)
	}
	// recover too keeps the live one and takes the dead.
	if err := os.MkdirAll(dead, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.RecoverTopic(rtTopic, -1, logstore.RecoverOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("recover left a dead build: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("recover removed a live build: %v", err)
	}
}

func TestCopyPartitionErrors(t *testing.T) {
	s, _, _ := rtWrite40(t)
	dst := logstore.Open(t.TempDir())
	if _, err := s.CopyPartition("nope", 0, dst, ctOpts()); !errors.Is(err, logstore.ErrTopicNotFound) {
		t.Errorf("missing topic: %v", err)
	}
	if _, err := s.CopyPartition(rtTopic, 1, dst, ctOpts()); !errors.Is(err, logstore.ErrPartitionNotFound) {
		t.Errorf("missing partition: %v", err)
	}
	if _, err := s.CopyPartition(rtTopic, 0, dst, logstore.CopyOptions{ToTopic: ".hidden", ToPartition: -1}); !errors.Is(err, format.ErrTopicName) {
		t.Errorf("bad destination topic: %v", err)
	}
	if _, err := s.ExportPartition("nope", 0, io.Discard, ctOpts()); !errors.Is(err, logstore.ErrTopicNotFound) {
		t.Errorf("export of a missing topic: %v", err)
	}
}
