package main

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// check reads the fixtures under out back, with kmsg and plain
// encoding/binary, and fails unless every file says what the manifest
// says. It derives the indexes anew from the batches it reads, by
// Kafka's rules, rather than trusting the writer's.
func check(out string) error {
	m, err := readManifest(out)
	if err != nil {
		return err
	}
	var errs []error
	errs = append(errs, checkLogDir(out, m.LogDir))
	clean := map[string]partitionManifest{}
	for _, pm := range m.LogDir.Partitions {
		clean[pm.Dir] = pm
		errs = append(errs, checkPartition(out, pm))
	}
	for _, dm := range m.Damaged {
		if err := checkDamage(out, dm, clean); err != nil {
			errs = append(errs, fmt.Errorf("damaged case %s: %w", dm.Name, err))
		}
	}
	return errors.Join(errs...)
}

func checkLogDir(out string, ld logDirManifest) error {
	root := filepath.Join(out, ld.Dir)
	want := []string{"meta.properties", cleanerCheckpoint, logStartCheckpoint, recoveryCheckpoint, replicationCheckpoint}
	for _, pm := range ld.Partitions {
		want = append(want, filepath.Base(pm.Dir))
	}
	if err := sameNames(root, want); err != nil {
		return err
	}
	props, err := os.ReadFile(filepath.Join(root, "meta.properties"))
	if err != nil {
		return err
	}
	kv := map[string]string{}
	for _, l := range strings.Split(string(props), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			kv[k] = v
		}
	}
	mp := ld.MetaProperties
	if got := (metaProperties{atoi(kv["version"]), atoi(kv["node.id"]), kv["cluster.id"], kv["directory.id"]}); got != mp || len(kv) != 4 {
		return fmt.Errorf("meta.properties holds %v, the manifest says %+v", kv, mp)
	}
	for name, want := range ld.Checkpoints {
		lines, err := checkpointLines(filepath.Join(root, name))
		if err != nil {
			return err
		}
		var got []checkpointEntry
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) != 3 {
				return fmt.Errorf("%s: line %q", name, l)
			}
			p, _ := strconv.ParseInt(f[1], 10, 32)
			got = append(got, checkpointEntry{f[0], int32(p), int64(atoi(f[2]))})
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s holds %v, the manifest says %v", name, got, want)
		}
	}
	for _, pm := range ld.Partitions {
		at := func(o int64) checkpointEntry { return checkpointEntry{pm.Topic, pm.Partition, o} }
		if !slices.Contains(ld.Checkpoints[recoveryCheckpoint], at(pm.Segments[len(pm.Segments)-1].BaseOffset)) ||
			!slices.Contains(ld.Checkpoints[replicationCheckpoint], at(pm.LogEndOffset)) ||
			slices.Contains(ld.Checkpoints[logStartCheckpoint], at(pm.LogStartOffset)) != (pm.LogStartOffset > pm.Segments[0].BaseOffset) {
			return fmt.Errorf("%s: the checkpoints disagree with its log", pm.Dir)
		}
	}
	return nil
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// checkpointLines reads a version 0 text checkpoint's entry lines.
func checkpointLines(name string) ([]string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) < 2 || lines[0] != "0" || atoi(lines[1]) != len(lines)-2 {
		return nil, fmt.Errorf("%s: not a version 0 checkpoint with its count", name)
	}
	return lines[2:], nil
}

func sameNames(dir string, want []string) error {
	got, err := sortedNames(dir)
	if err != nil {
		return err
	}
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s holds %v, the manifest names %v", dir, got, want)
	}
	return nil
}

func checkPartition(out string, pm partitionManifest) error {
	dir := filepath.Join(out, filepath.FromSlash(pm.Dir))
	want := []string{"partition.metadata", "leader-epoch-checkpoint"}
	for _, s := range pm.Segments {
		want = append(want, s.Log, s.Index, s.TimeIndex)
		if s.TxnIndex != "" {
			want = append(want, s.TxnIndex)
		}
	}
	for _, s := range pm.Snapshots {
		want = append(want, s.File)
	}
	if err := sameNames(dir, want); err != nil {
		return err
	}
	meta, err := os.ReadFile(filepath.Join(dir, "partition.metadata"))
	if err != nil {
		return err
	}
	if string(meta) != "version: 0\ntopic_id: "+pm.TopicID+"\n" {
		return fmt.Errorf("%s: partition.metadata is %q", pm.Dir, meta)
	}
	lines, err := checkpointLines(filepath.Join(dir, "leader-epoch-checkpoint"))
	if err != nil {
		return err
	}
	var epochs []epochEntry
	for _, l := range lines {
		e, o, _ := strings.Cut(l, " ")
		epochs = append(epochs, epochEntry{int32(atoi(e)), int64(atoi(o))})
	}
	if !slices.Equal(epochs, pm.LeaderEpochs) {
		return fmt.Errorf("%s: leader-epoch-checkpoint holds %v, the manifest says %v", pm.Dir, epochs, pm.LeaderEpochs)
	}

	r := partitionReader{pm: pm, dir: dir, next: pm.Segments[0].BaseOffset}
	for _, s := range pm.Segments {
		if err := r.segment(s); err != nil {
			return fmt.Errorf("%s: %s: %w", pm.Dir, s.Log, err)
		}
	}
	if r.next != pm.LogEndOffset || len(r.batches) != len(pm.Batches) || len(r.records) != len(pm.Records) {
		return fmt.Errorf("%s: read %d batches, %d records to offset %d; the manifest lists %d, %d to %d",
			pm.Dir, len(r.batches), len(r.records), r.next, len(pm.Batches), len(pm.Records), pm.LogEndOffset)
	}
	for _, rm := range pm.Records {
		if rm.BelowLogStart != (rm.Offset < pm.LogStartOffset) {
			return fmt.Errorf("%s: offset %d: below_log_start is wrong", pm.Dir, rm.Offset)
		}
	}
	if err := r.txnIndex(); err != nil {
		return fmt.Errorf("%s: %w", pm.Dir, err)
	}
	for _, s := range pm.Snapshots {
		if err := checkSnapshot(filepath.Join(dir, s.File), s); err != nil {
			return fmt.Errorf("%s: %w", pm.Dir, err)
		}
	}
	return nil
}

// A partitionReader walks a partition's segments in order.
type partitionReader struct {
	pm      partitionManifest
	dir     string
	next    int64
	batches []batchManifest
	records []recordManifest
	aborted []txnManifest
}

// segment reads one segment's log, batch by batch from its first byte,
// and its indexes.
func (r *partitionReader) segment(s segmentManifest) error {
	log, err := os.ReadFile(filepath.Join(r.dir, s.Log))
	if err != nil {
		return err
	}
	if len(log) != s.LogBytes {
		return fmt.Errorf("%d bytes, the manifest says %d", len(log), s.LogBytes)
	}
	if s.BaseOffset != r.next && len(r.batches) > 0 {
		return fmt.Errorf("base offset %d after offset %d", s.BaseOffset, r.next-1)
	}
	raws, err := splitBatches(log)
	if err != nil {
		return err
	}
	if len(raws) != s.Batches {
		return fmt.Errorf("%d batches, the manifest says %d", len(raws), s.Batches)
	}
	var bms []batchManifest
	pos := 0
	for _, raw := range raws {
		bm, err := r.batch(s.Log, pos, raw)
		if err != nil {
			return fmt.Errorf("at byte %d: %w", pos, err)
		}
		bms = append(bms, bm)
		pos += len(raw)
	}
	if err := r.indexes(s, bms); err != nil {
		return err
	}
	if s.TxnIndex != "" {
		b, err := os.ReadFile(filepath.Join(r.dir, s.TxnIndex))
		if err != nil {
			return err
		}
		if len(b)%txnEntryLen != 0 || len(b) != s.TxnIndexBytes {
			return fmt.Errorf("%s: %d bytes", s.TxnIndex, len(b))
		}
		for ; len(b) > 0; b = b[txnEntryLen:] {
			if enc.Uint16(b) != 0 {
				return fmt.Errorf("%s: version %d", s.TxnIndex, enc.Uint16(b))
			}
			i64 := func(at int) int64 { return int64(enc.Uint64(b[at:])) }
			r.aborted = append(r.aborted, txnManifest{s.TxnIndex, abortedTxn{i64(2), i64(10), i64(18), i64(26)}})
		}
	}
	return nil
}

// batch decodes one batch (or magic 1 message) and compares it, and its
// records, with the manifest's next ones.
func (r *partitionReader) batch(file string, pos int, raw []byte) (batchManifest, error) {
	n := len(r.batches)
	if n >= len(r.pm.Batches) {
		return batchManifest{}, errors.New("a batch the manifest does not list")
	}
	want := r.pm.Batches[n]
	if magic(raw) == 2 && !crcOK(raw) {
		return want, errors.New("CRC mismatch")
	}
	got, err := batchFields(raw)
	if err != nil {
		return got, err
	}
	got.File, got.Position, got.Writer = file, pos, want.Writer
	recs, err := storedRecords(raw)
	if err != nil {
		return got, err
	}
	if got != want {
		return got, fmt.Errorf("read %+v, the manifest says %+v", got, want)
	}
	if got.BaseOffset != r.next {
		return got, fmt.Errorf("base offset %d where %d comes next", got.BaseOffset, r.next)
	}
	r.next = got.LastOffset + 1
	for i, rec := range recs {
		if rec.Offset != got.BaseOffset+int64(i) {
			return got, fmt.Errorf("record %d has offset %d", i, rec.Offset)
		}
		if len(r.records) >= len(r.pm.Records) {
			return got, errors.New("a record the manifest does not list")
		}
		w := r.pm.Records[len(r.records)]
		rec.Aborted, rec.BelowLogStart = w.Aborted, w.BelowLogStart // checked against the transaction index and the log start
		if !reflect.DeepEqual(rec, w) {
			return got, fmt.Errorf("record %+v, the manifest says %+v", rec, w)
		}
		r.records = append(r.records, rec)
	}
	r.batches = append(r.batches, got)
	return got, nil
}

// indexes checks a segment's .index and .timeindex against Kafka's
// rules applied to its batches: a batch gets an offset index entry (its
// last offset, its position) when more than the index interval of bytes
// lie between it and the last indexed batch (or the segment's start),
// and then a time index entry for the greatest timestamp so far if that
// grew; a closed segment ends with one for its greatest timestamp.
func (r *partitionReader) indexes(s segmentManifest, bms []batchManifest) error {
	var wantIdx []indexEntry
	var wantTime []timeEntry
	anchor, maxTS, maxAt := 0, int64(-1), s.BaseOffset
	lastTS := int64(-1)
	timeIndexed := func() {
		if maxTS > lastTS {
			wantTime = append(wantTime, timeEntry{maxTS, maxAt})
			lastTS = maxTS
		}
	}
	for _, b := range bms {
		if b.MaxTimestamp > maxTS {
			maxTS, maxAt = b.MaxTimestamp, b.LastOffset
		}
		if b.Position-anchor > r.pm.IndexIntervalBytes {
			wantIdx = append(wantIdx, indexEntry{b.LastOffset, b.Position})
			timeIndexed()
			anchor = b.Position
		}
	}
	if !s.Active {
		timeIndexed()
	}
	idx, err := r.readIndex(s.Index, s.IndexBytes, offsetEntryLen, len(wantIdx), s.Active)
	if err != nil {
		return err
	}
	var gotIdx []indexEntry
	for _, e := range idx {
		gotIdx = append(gotIdx, indexEntry{s.BaseOffset + int64(enc.Uint32(e)), int(enc.Uint32(e[4:]))})
	}
	if !slices.Equal(gotIdx, wantIdx) || !slices.Equal(s.IndexEntries, wantIdx) {
		return fmt.Errorf("%s holds %v, Kafka's rule gives %v, the manifest says %v", s.Index, gotIdx, wantIdx, s.IndexEntries)
	}
	ti, err := r.readIndex(s.TimeIndex, s.TimeIndexBytes, timeEntryLen, len(wantTime), s.Active)
	if err != nil {
		return err
	}
	var gotTime []timeEntry
	for _, e := range ti {
		gotTime = append(gotTime, timeEntry{int64(enc.Uint64(e)), s.BaseOffset + int64(enc.Uint32(e[8:]))})
	}
	if !slices.Equal(gotTime, wantTime) || !slices.Equal(s.TimeIndexEntries, wantTime) {
		return fmt.Errorf("%s holds %v, Kafka's rule gives %v, the manifest says %v", s.TimeIndex, gotTime, wantTime, s.TimeIndexEntries)
	}
	return nil
}

// readIndex returns an index file's n entries; a closed segment's file
// holds exactly those, an active one's is preallocated to
// segment.index.bytes in whole entries, zeros after the entries.
func (r *partitionReader) readIndex(name string, size, entryLen, n int, active bool) ([][]byte, error) {
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		return nil, err
	}
	want := n * entryLen
	if active {
		want = segmentIndexBytes / entryLen * entryLen
	}
	if len(b) != want || len(b) != size {
		return nil, fmt.Errorf("%s: %d bytes, want %d (manifest %d)", name, len(b), want, size)
	}
	if slices.ContainsFunc(b[n*entryLen:], func(c byte) bool { return c != 0 }) {
		return nil, fmt.Errorf("%s: bytes after its entries that are not zero", name)
	}
	var out [][]byte
	for i := range n {
		out = append(out, b[i*entryLen:(i+1)*entryLen])
	}
	return out, nil
}

// txnIndex checks the transaction index entries against the log: each
// names an abort marker of its producer and the first batch of the
// transaction it ends, and the records marked aborted are exactly those
// of the producer's batches between the two.
func (r *partitionReader) txnIndex() error {
	if !slices.Equal(r.aborted, r.pm.TxnIndex) {
		return fmt.Errorf("transaction indexes hold %v, the manifest says %v", r.aborted, r.pm.TxnIndex)
	}
	aborted := map[int64]bool{}
	for _, t := range r.aborted {
		var first, marker *batchManifest
		for i, b := range r.batches {
			if b.ProducerID != t.ProducerID {
				continue
			}
			if b.BaseOffset == t.FirstOffset && b.Transactional && !b.Control {
				first = &r.batches[i]
			}
			if b.BaseOffset == t.LastOffset && b.Control {
				marker = &r.batches[i]
			}
			if b.BaseOffset >= t.FirstOffset && b.LastOffset < t.LastOffset && !b.Control {
				for o := b.BaseOffset; o <= b.LastOffset; o++ {
					aborted[o] = true
				}
			}
		}
		if first == nil || marker == nil {
			return fmt.Errorf("aborted transaction %+v: no batch of its producer at its first or last offset", t)
		}
		for _, rec := range r.records {
			if rec.Offset == t.LastOffset && (rec.KeyBase64 == nil || *rec.KeyBase64 != "AAAAAA==") {
				return fmt.Errorf("aborted transaction %+v: its marker is no abort", t)
			}
		}
	}
	for _, rec := range r.pm.Records {
		if rec.Aborted != aborted[rec.Offset] {
			return fmt.Errorf("offset %d: aborted is %t, the transaction index says %t", rec.Offset, rec.Aborted, aborted[rec.Offset])
		}
	}
	return nil
}

// checkSnapshot reads a producer snapshot: version 1, its CRC-32C over
// the rest, the count and the entries.
func checkSnapshot(name string, sm snapshotManifest) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	const entryLen = 46
	if len(b) < 10 || enc.Uint16(b) != 1 || enc.Uint32(b[2:]) != crc32.Checksum(b[6:], castagnoli) || int(enc.Uint32(b[6:]))*entryLen != len(b)-10 || len(b) != sm.Bytes {
		return fmt.Errorf("%s: not a version 1 producer snapshot with a good CRC", filepath.Base(name))
	}
	got := []producerEntry{}
	for e := b[10:]; len(e) > 0; e = e[entryLen:] {
		got = append(got, producerEntry{
			ProducerID: int64(enc.Uint64(e)), ProducerEpoch: int16(enc.Uint16(e[8:])), LastSequence: int32(enc.Uint32(e[10:])),
			LastOffset: int64(enc.Uint64(e[14:])), OffsetDelta: int32(enc.Uint32(e[22:])), Timestamp: int64(enc.Uint64(e[26:])),
			CoordinatorEpoch: int32(enc.Uint32(e[34:])), CurrentTxnFirstOffset: int64(enc.Uint64(e[38:])),
		})
	}
	if !slices.Equal(got, sm.Entries) {
		return fmt.Errorf("%s holds %+v, the manifest says %+v", filepath.Base(name), got, sm.Entries)
	}
	return nil
}

// checkDamage checks that a damaged copy differs from its clean source
// exactly as its manifest says.
func checkDamage(out string, dm damageManifest, clean map[string]partitionManifest) error {
	if dm.Log != nil {
		if dm.Log.Dir != dm.Dir {
			return errors.New("its log's manifest names another directory")
		}
		if dm.Log.Batches[0].Magic != 1 || dm.Log.Batches[len(dm.Log.Batches)-1].Magic != 2 {
			return errors.New("not a magic 1 segment before magic 2 batches")
		}
		return checkPartition(out, *dm.Log)
	}
	src, ok := clean[dm.CopyOf]
	if !ok {
		return fmt.Errorf("a copy of %s, which the log directory does not hold", dm.CopyOf)
	}
	srcDir, dir := filepath.Join(out, filepath.FromSlash(dm.CopyOf)), filepath.Join(out, filepath.FromSlash(dm.Dir))
	names, err := sortedNames(srcDir)
	if err != nil {
		return err
	}
	if err := sameNames(dir, names); err != nil {
		return err
	}
	for _, n := range names {
		a, errA := os.ReadFile(filepath.Join(srcDir, n))
		b, errB := os.ReadFile(filepath.Join(dir, n))
		if err := errors.Join(errA, errB); err != nil {
			return err
		}
		if bytes.Equal(a, b) != (n != dm.File) {
			return fmt.Errorf("%s: changed is %t", n, !bytes.Equal(a, b))
		}
	}
	was, err := os.ReadFile(filepath.Join(srcDir, dm.File))
	if err != nil {
		return err
	}
	now, err := os.ReadFile(filepath.Join(dir, dm.File))
	if err != nil {
		return err
	}
	if err := checkCounts(dm, src); err != nil {
		return err
	}
	switch {
	case dm.Cut != nil:
		if !bytes.Equal(now, was[:dm.Pos+dm.Cut.KeptBytes]) || dm.Pos+dm.Cut.BatchBytes != len(was) {
			return errors.New("not its last batch cut short")
		}
	case dm.Flip != nil:
		diff := slices.Clone(now)
		diff[dm.Flip.Byte] ^= 1 << dm.Flip.Bit
		b := now[dm.Pos:]
		b = b[:logOverhead+int(enc.Uint32(b[8:]))]
		if !bytes.Equal(diff, was) || enc.Uint32(b[17:]) != dm.Flip.StoredCRC || crcOf(b) != dm.Flip.ComputedCRC || crcOK(b) {
			return errors.New("not one flipped bit that breaks the batch's CRC")
		}
	case dm.Length != nil:
		if int32(enc.Uint32(now[dm.Pos+8:])) != dm.Length.Stored || int32(enc.Uint32(was[dm.Pos+8:])) != dm.Length.True ||
			!bytes.Equal(now[:dm.Pos+8], was[:dm.Pos+8]) || !bytes.Equal(now[dm.Pos+12:], was[dm.Pos+12:]) {
			return errors.New("not one batch length changed")
		}
	case dm.IndexEntry != nil:
		e, entryLen := dm.IndexEntry, offsetEntryLen
		lie, truth := int64(e.Position), int64(e.TruePosition)
		read := func(b []byte) int64 { return int64(enc.Uint32(b[dm.Pos+4:])) }
		if strings.HasSuffix(dm.File, ".timeindex") {
			entryLen, lie, truth = timeEntryLen, e.Timestamp, e.TrueTimestamp
			read = func(b []byte) int64 { return int64(enc.Uint64(b[dm.Pos:])) }
		}
		if dm.Pos != e.Entry*entryLen || read(was) != truth || read(now) != lie || lie == truth {
			return errors.New("not the one index entry changed")
		}
	case dm.ZeroBytes > 0:
		if !bytes.Equal(now, append(slices.Clone(was), make([]byte, dm.ZeroBytes)...)) || dm.Pos != len(was) {
			return errors.New("not the log with zeros after it")
		}
	case dm.Bomb != nil:
		if !bytes.Equal(now[:dm.Pos], was) || dm.Pos != len(was) {
			return errors.New("not the log with a batch after it")
		}
		raw := now[dm.Pos:]
		h := header(raw)
		if len(raw) != logOverhead+int(h.Length) || !crcOK(raw) || h.FirstOffset != src.LogEndOffset || codecs[h.Attributes&attrCodec] != dm.Bomb.Codec || len(h.Records) != dm.Bomb.CompressedBytes {
			return errors.New("not one whole batch with a good CRC at the log's end")
		}
		body, err := decompressor.Decompress(h.Records, codecOf(h))
		if err != nil {
			return err
		}
		var r kmsg.Record
		if h.NumRecords != 1 || r.ReadFrom(body) != nil || len(body) != dm.Bomb.DecompressedBytes || !zeros(r.Value, bombValue) {
			return errors.New("its record is not 64 MiB of zeros")
		}
	default:
		return errors.New("no damage described")
	}
	return nil
}

// zeros says whether b is n zero bytes.
func zeros(b []byte, n int) bool {
	zero := make([]byte, 64<<10)
	for len(b) > 0 {
		k := min(len(b), len(zero))
		if !bytes.Equal(b[:k], zero[:k]) {
			return false
		}
		b, n = b[k:], n-k
	}
	return n == 0
}

// checkCounts checks valid_records_before and _after against the clean
// copy's batches: those before and after the damaged one, in offset
// order; all of them before damage to an index or after the log.
func checkCounts(dm damageManifest, src partitionManifest) error {
	before, after := 0, 0
	isLog := strings.HasSuffix(dm.File, ".log")
	for _, b := range src.Batches {
		switch {
		case !isLog || dm.Bomb != nil || dm.ZeroBytes > 0 || b.File < dm.File || b.File == dm.File && b.Position < dm.Pos:
			before += b.RecordCount
		case b.File > dm.File || b.Position > dm.Pos:
			after += b.RecordCount
		}
	}
	if before != dm.ValidRecordsBefore || after != dm.ValidRecordsAfter {
		return fmt.Errorf("valid records before and after are %d and %d, the manifest says %d and %d", before, after, dm.ValidRecordsBefore, dm.ValidRecordsAfter)
	}
	return nil
}
