package commands

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore"
)

// dump-index on Apache Kafka's layout: each segment's .index and
// .timeindex entry by entry (the preallocated zeros of the active one as
// one line), judged against the batches with --verify, then its
// .txnindex entries; a .snapshot file named by path, its producers.

// kafkaDumpTarget is a Kafka partition dump-index works on: the segments
// and kinds of file to dump, or one file named by path.
type kafkaDumpTarget struct {
	dir      string // the partition directory, or a lone .log
	file     bool   // dir is a lone .log
	name     string
	only     string // a file named by path: dump it alone
	onlyKind logstore.IndexKind
	text     string // a checkpoint or leader-epoch-checkpoint file named by path: dump it instead
}

// kafkaDumpFile is the Kafka target a path names, when it names one: a
// partition directory, a lone .log, or an index, .txnindex or .snapshot
// file in a partition directory.
func kafkaDumpFile(path string) (kafkaDumpTarget, bool, error) {
	t := kafkaDumpTarget{dir: filepath.Dir(path), name: filepath.Dir(path), only: path}
	switch base := filepath.Base(path); base {
	case kafka.RecoveryPointCheckpoint, kafka.LogStartOffsetCheckpoint, kafka.ReplicationCheckpoint, kafka.CleanerOffsetCheckpoint:
		ok, err := logstore.IsKafkaLogDir(t.dir)
		t.text = path
		return t, ok, err
	case kafka.LeaderEpochCheckpoint:
		layout, err := logstore.DetectLayout(t.dir)
		t.text = path
		return t, layout == logstore.LayoutKafka, err
	}
	fn, err := kafka.ParseFileName(filepath.Base(path))
	if err != nil || fn.Suffix != "" {
		return t, false, nil
	}
	layout, err := logstore.DetectLayout(t.dir)
	if err != nil || layout != logstore.LayoutKafka {
		return t, false, err
	}
	switch fn.Ext {
	case kafka.TimeIndexExt:
		t.onlyKind = logstore.TimeIndex
	case kafka.IndexExt, kafka.TxnIndexExt, kafka.SnapshotExt:
	default:
		return t, false, nil
	}
	return t, true, nil
}

// dumpKafka runs dump-index on t.
func dumpKafka(e *env, o dumpIndexOptions, t kafkaDumpTarget) error {
	if t.text != "" {
		return dumpKafkaText(e, o, t.text)
	}
	open := logstore.OpenKafkaPartition
	if t.file {
		open = logstore.OpenKafkaSegmentFile
	}
	p, err := open(t.dir, t.name)
	if err != nil {
		return err
	}
	defer p.Close()
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	defer out.Flush()
	d := &kafkaDumper{out: out, o: o}
	for i, s := range p.KafkaSegments() {
		if o.onlySeg && s.Base != o.segment || t.only != "" && !slices.Contains([]string{s.Index, s.TimeIndex, s.TxnIndex, s.Snapshot}, t.only) {
			continue
		}
		d.segments++
		switch {
		case t.only != "" && t.only == s.TxnIndex:
			err = d.txnIndex(p, i, s)
		case t.only != "" && t.only == s.Snapshot:
			err = d.snapshot(p, i, s)
		case t.only != "":
			err = d.index(p, i, t.onlyKind)
		default:
			for _, k := range o.kinds {
				if err = d.index(p, i, k); err != nil {
					break
				}
			}
			if err == nil && s.TxnIndex != "" {
				err = d.txnIndex(p, i, s)
			}
		}
		if err != nil {
			return err
		}
	}
	if d.segments == 0 && o.onlySeg {
		return fmt.Errorf("no segment with base offset %d in %s", o.segment, t.name)
	}
	if !o.json && o.verify {
		if d.wrong == 0 {
			out.WriteString("\nall entries check out\n")
		} else {
			fmt.Fprintf(out, "\n%d wrong %s\n", d.wrong, dumpIndexPlural(d.wrong, "entry", "entries"))
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if o.verify && d.wrong > 0 {
		return errProblemsFound
	}
	return nil
}

// kafkaDumper prints a Kafka partition's files for dump-index.
type kafkaDumper struct {
	out      *bufio.Writer
	o        dumpIndexOptions
	segments int
	printed  int   // files printed, for the blank line between them
	wrong    int64 // entries whose verdict is a problem
}

func (d *kafkaDumper) heading(path, what string) {
	if !d.o.json {
		if d.printed > 0 {
			d.out.WriteByte('\n')
		}
		fmt.Fprintf(d.out, "%s: %s\n", path, what)
	}
	d.printed++
}

// index prints one .index or .timeindex file's entries.
func (d *kafkaDumper) index(p *logstore.KafkaPartition, seg int, kind logstore.IndexKind) error {
	s := p.KafkaSegments()[seg]
	path, col := s.Index, "POSITION"
	if kind == logstore.TimeIndex {
		path, col = s.TimeIndex, "TIMESTAMP"
	}
	if path == "" {
		return nil
	}
	d.heading(path, "Apache Kafka "+map[logstore.IndexKind]string{logstore.OffsetIndex: "offset index (offset -> byte position in the .log)",
		logstore.TimeIndex: "time index (timestamp ms -> offset)"}[kind])
	if !d.o.json {
		fmt.Fprintf(d.out, "%10s  %20s  %20s  %s\n", "ENTRY", "OFFSET", col, "VERDICT")
	}
	file := appendJSONValue(nil, path)
	sum, err := p.CheckKafkaIndex(seg, kind, d.o.verify, func(en logstore.KafkaIndexEntry) error {
		if kafkaEntryWrong(en.Verdict) {
			d.wrong++
		}
		if d.o.json {
			b := append(d.out.AvailableBuffer(), `{"type":"entry","layout":"kafka","file":`...)
			b = append(b, file...)
			b = append(b, `,"entry":`...)
			b = strconv.AppendInt(b, en.Entry, 10)
			if en.Count > 1 {
				b = append(b, `,"count":`...)
				b = strconv.AppendInt(b, en.Count, 10)
			}
			b = append(b, `,"offset":`...)
			b = strconv.AppendUint(b, en.Offset, 10)
			if kind == logstore.TimeIndex {
				b = append(b, `,"timestamp":`...)
				b = strconv.AppendInt(b, en.Timestamp, 10)
			} else {
				b = append(b, `,"position":`...)
				b = strconv.AppendInt(b, en.Pos, 10)
			}
			b = append(b, `,"verdict":"`...)
			b = append(b, en.Verdict...)
			b = append(b, '"')
			if en.Why != "" {
				b = appendJSONValue(append(b, `,"detail":`...), en.Why)
			}
			_, err := d.out.Write(append(b, "}\n"...))
			return err
		}
		if en.Verdict == logstore.FindingIndexPadding {
			_, err := fmt.Fprintf(d.out, "entries %d..%d: zero padding (%d %s preallocated by the broker)\n", en.Entry, en.Entry+en.Count-1, en.Count,
				dumpIndexPlural(en.Count, "entry", "entries"))
			return err
		}
		v := en.Pos
		if kind == logstore.TimeIndex {
			v = en.Timestamp
		}
		verdict := string(en.Verdict)
		if en.Why != "" {
			verdict += ": " + en.Why
		}
		_, err := fmt.Fprintf(d.out, "%10d  %20d  %20d  %s\n", en.Entry, en.Offset, v, verdict)
		return err
	})
	if err != nil {
		return err
	}
	if d.o.json {
		return writeJSONLine(d.out, kafkaIndexSummaryJSON{Type: "summary", Layout: "kafka", File: path, Segment: s.Base, Entries: sum.Entries,
			Padding: sum.Padding, PartialBytes: sum.PartialBytes, Verdicts: verdictMap(sum.Verdicts)})
	}
	var counts []string
	for _, k := range slices.Sorted(maps.Keys(sum.Verdicts)) {
		counts = append(counts, fmt.Sprintf("%d %s", sum.Verdicts[k], k))
	}
	fmt.Fprintf(d.out, "%d %s (%d zero padding)", sum.Entries, dumpIndexPlural(sum.Entries, "entry", "entries"), sum.Padding)
	if len(counts) > 0 {
		fmt.Fprintf(d.out, ": %s", strings.Join(counts, ", "))
	}
	d.out.WriteByte('\n')
	if sum.PartialBytes > 0 {
		fmt.Fprintf(d.out, "note: a partial last entry of %d %s, ignored\n", sum.PartialBytes, dumpIndexPlural(sum.PartialBytes, "byte", "bytes"))
	}
	return nil
}

// kafkaEntryWrong tells the verdicts that make dump-index --verify exit
// 3, as on seglog's own indexes: an entry that lies, is out of order or
// names no record. Stale entries, padding and entries into damage
// (verify-crc reports the damage) do not.
func kafkaEntryWrong(k logstore.FindingKind) bool {
	return k == logstore.FindingIndexMismatch || k == logstore.FindingIndexOrder || k == logstore.FindingIndexNoRecord
}

// kafkaIndexSummaryJSON is the line after a Kafka index file's entries.
type kafkaIndexSummaryJSON struct {
	Type         string           `json:"type"` // "summary"
	Layout       string           `json:"layout"`
	File         string           `json:"file"`
	Segment      uint64           `json:"segment"`
	Entries      int64            `json:"entries"`
	Padding      int64            `json:"padding"`
	PartialBytes int64            `json:"partial_bytes"`
	Verdicts     map[string]int64 `json:"verdicts"`
}

func verdictMap(m map[logstore.FindingKind]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, n := range m {
		out[string(k)] = n
	}
	return out
}

// txnIndex prints a segment's aborted transactions.
func (d *kafkaDumper) txnIndex(p *logstore.KafkaPartition, seg int, s logstore.KafkaSegmentFiles) error {
	d.heading(s.TxnIndex, "Apache Kafka aborted transactions")
	if !d.o.json {
		fmt.Fprintf(d.out, "%20s  %20s  %20s  %20s\n", "PRODUCER", "FIRST-OFFSET", "LAST-OFFSET", "LAST-STABLE-OFFSET")
	}
	return p.TxnIndex(seg, func(t logstore.KafkaAbortedTxn) error {
		if d.o.json {
			return writeJSONLine(d.out, struct {
				Type             string `json:"type"`
				File             string `json:"file"`
				ProducerID       int64  `json:"producer_id"`
				FirstOffset      int64  `json:"first_offset"`
				LastOffset       int64  `json:"last_offset"`
				LastStableOffset int64  `json:"last_stable_offset"`
			}{"aborted-transaction", s.TxnIndex, t.ProducerID, t.FirstOffset, t.LastOffset, t.LastStableOffset})
		}
		_, err := fmt.Fprintf(d.out, "%20d  %20d  %20d  %20d\n", t.ProducerID, t.FirstOffset, t.LastOffset, t.LastStableOffset)
		return err
	})
}

// snapshot prints a producer-state snapshot's producers.
func (d *kafkaDumper) snapshot(p *logstore.KafkaPartition, seg int, s logstore.KafkaSegmentFiles) error {
	snap, ok, err := p.ProducerSnapshot(seg)
	if errors.Is(err, kafka.ErrSnapshot) && d.o.verify {
		// A verdict, as a wrong index entry is: exit 3.
		d.wrong++
		if d.o.json {
			return writeJSONLine(d.out, struct {
				Type   string `json:"type"`
				File   string `json:"file"`
				Reason string `json:"reason"`
			}{"snapshot-wrong", s.Snapshot, err.Error()})
		}
		_, err = fmt.Fprintf(d.out, "%v\n", err)
		return err
	}
	if err != nil {
		return err
	}
	if !ok {
		return errors.New(s.Snapshot + ": no producer snapshot")
	}
	d.heading(s.Snapshot, fmt.Sprintf("Apache Kafka producer snapshot, version %d, crc %s (checks out), %d %s", snap.Version,
		appendHex32(nil, snap.CRC), len(snap.Producers), dumpIndexPlural(int64(len(snap.Producers)), "producer", "producers")))
	for _, pe := range snap.Producers {
		if d.o.json {
			if err := writeJSONLine(d.out, struct {
				Type                  string `json:"type"`
				File                  string `json:"file"`
				ProducerID            int64  `json:"producer_id"`
				ProducerEpoch         int16  `json:"producer_epoch"`
				LastSequence          int32  `json:"last_sequence"`
				LastOffset            int64  `json:"last_offset"`
				OffsetDelta           int32  `json:"offset_delta"`
				Timestamp             int64  `json:"timestamp_ms"`
				CoordinatorEpoch      int32  `json:"coordinator_epoch"`
				CurrentTxnFirstOffset int64  `json:"current_txn_first_offset"`
			}{"producer", s.Snapshot, pe.ProducerID, pe.ProducerEpoch, pe.LastSequence, pe.LastOffset, pe.OffsetDelta, pe.Timestamp,
				pe.CoordinatorEpoch, pe.CurrentTxnFirstOffset}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(d.out, "producer_id=%d epoch=%d last_sequence=%d last_offset=%d offset_delta=%d timestamp=%d coordinator_epoch=%d txn_first_offset=%d\n",
			pe.ProducerID, pe.ProducerEpoch, pe.LastSequence, pe.LastOffset, pe.OffsetDelta, pe.Timestamp, pe.CoordinatorEpoch, pe.CurrentTxnFirstOffset)
	}
	return nil
}

// dumpKafkaText prints a log directory's offset checkpoint file, or a
// partition's leader-epoch-checkpoint, entry by entry.
func dumpKafkaText(e *env, o dumpIndexOptions, path string) error {
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	if filepath.Base(path) == kafka.LeaderEpochCheckpoint {
		pd := logstore.KafkaPartitionDir{Dir: filepath.Dir(path)}
		epochs, err := pd.LeaderEpochs()
		if err != nil {
			return err
		}
		if !o.json {
			fmt.Fprintf(out, "%s: Apache Kafka leader epochs (the first offset each leader wrote)\n%10s  %20s\n", path, "EPOCH", "START-OFFSET")
		}
		for _, ep := range epochs {
			if o.json {
				if err := writeJSONLine(out, struct {
					Type        string `json:"type"`
					File        string `json:"file"`
					Epoch       int32  `json:"epoch"`
					StartOffset int64  `json:"start_offset"`
				}{"leader-epoch", path, ep.Epoch, ep.StartOffset}); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(out, "%10d  %20d\n", ep.Epoch, ep.StartOffset)
		}
		return out.Flush()
	}
	entries, err := logstore.ReadKafkaCheckpoint(path)
	if err != nil {
		return err
	}
	if !o.json {
		fmt.Fprintf(out, "%s: Apache Kafka offset checkpoint, %d %s\n%-30s  %10s  %20s\n", path, len(entries), dumpIndexPlural(int64(len(entries)), "entry", "entries"),
			"TOPIC", "PARTITION", "OFFSET")
	}
	for _, en := range entries {
		if o.json {
			if err := writeJSONLine(out, struct {
				Type      string `json:"type"`
				File      string `json:"file"`
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
				Offset    int64  `json:"offset"`
			}{"checkpoint", path, en.Topic, en.Partition, en.Offset}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(out, "%-30s  %10d  %20d\n", en.Topic, en.Partition, en.Offset)
	}
	return out.Flush()
}
