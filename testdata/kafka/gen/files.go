package main

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A logDir is a single KRaft broker's log directory.
type logDir struct {
	partitions []*partitionLog
	laid       []*laid // after write
}

func newLogDir(got *captured) (*logDir, error) {
	events, err := eventsBatches()
	if err != nil {
		return nil, err
	}
	d := &logDir{partitions: []*partitionLog{
		{topic: ordersTopic, partition: 0, writer: "kcat", batches: got.orders[0], retention: 1},
		{topic: ordersTopic, partition: 1, writer: "kcat", batches: got.orders[1]},
		{topic: ordersTopic, partition: 2, writer: "kcat", batches: got.orders[2]},
		{topic: eventsTopic, partition: 0, writer: "kmsg", batches: events},
		{topic: paymentsTopic, partition: 0, writer: "franz-go", batches: got.payments},
	}}
	// After retention took its first segment, a DeleteRecords request
	// moved orders-0's log start offset into the middle of a batch.
	for _, b := range got.orders[0][1:] {
		if b.roll {
			d.partitions[0].deleteRecords = header(b.raw).FirstOffset + 3
			break
		}
	}
	for _, p := range d.partitions {
		p.indexInterval = indexInterval[p.topic]
	}
	return d, nil
}

var (
	clusterID   = fixtureUUID("cluster")
	directoryID = fixtureUUID("directory")
)

// The log directory's offset checkpoints.
const (
	recoveryCheckpoint    = "recovery-point-offset-checkpoint"
	replicationCheckpoint = "replication-offset-checkpoint"
	logStartCheckpoint    = "log-start-offset-checkpoint"
	cleanerCheckpoint     = "cleaner-offset-checkpoint"
)

// write lays every partition out under out/logdir and returns the
// manifest of what it wrote.
func (d *logDir) write(out string) (*manifest, error) {
	root := filepath.Join(out, "logdir")
	if err := os.RemoveAll(root); err != nil {
		return nil, err
	}
	m := &manifest{
		Description: "Apache Kafka log directories written by writers seglog did not write, as a running broker has them: " +
			"the active segments' indexes preallocated to segment.index.bytes=4096. See README.md.",
		LogDir: logDirManifest{
			Dir:            "logdir",
			MetaProperties: metaProperties{Version: 1, NodeID: nodeID, ClusterID: uuidString(clusterID), DirectoryID: uuidString(directoryID)},
			Checkpoints:    map[string][]checkpointEntry{},
		},
	}
	cps := map[string][]checkpointEntry{recoveryCheckpoint: {}, replicationCheckpoint: {}, logStartCheckpoint: {}, cleanerCheckpoint: {}}
	for _, p := range d.partitions {
		l, err := p.lay()
		if err != nil {
			return nil, err
		}
		d.laid = append(d.laid, l)
		dir := filepath.Join(root, p.dirName())
		if err := l.writeTo(dir); err != nil {
			return nil, err
		}
		pm, err := l.describe("logdir/" + p.dirName())
		if err != nil {
			return nil, err
		}
		m.LogDir.Partitions = append(m.LogDir.Partitions, pm)
		at := func(o int64) checkpointEntry { return checkpointEntry{p.topic, p.partition, o} }
		cps[recoveryCheckpoint] = append(cps[recoveryCheckpoint], at(l.recoveryPoint))
		cps[replicationCheckpoint] = append(cps[replicationCheckpoint], at(l.logEnd))
		// Kafka lists only the logs that start past their first segment.
		if l.logStart > l.segments[0].base {
			cps[logStartCheckpoint] = append(cps[logStartCheckpoint], at(l.logStart))
		}
	}
	// No topic is compacted, so the cleaner checkpoint lists nothing.
	for name, es := range cps {
		if err := writeFile(filepath.Join(root, name), checkpointFile(es)); err != nil {
			return nil, err
		}
		m.LogDir.Checkpoints[name] = es
	}
	props := fmt.Sprintf("#\n#Sun Mar 01 09:00:00 UTC 2026\nnode.id=%d\ndirectory.id=%s\nversion=1\ncluster.id=%s\n",
		nodeID, uuidString(directoryID), uuidString(clusterID))
	if err := writeFile(filepath.Join(root, "meta.properties"), []byte(props)); err != nil {
		return nil, err
	}
	return m, nil
}

// writeTo writes a partition's directory.
func (l *laid) writeTo(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{
		"partition.metadata":      fmt.Appendf(nil, "version: 0\ntopic_id: %s\n", uuidString(l.topicID())),
		"leader-epoch-checkpoint": epochCheckpointFile(l.epochs),
	}
	for _, s := range l.segments {
		files[segmentName(s.base, ".log")] = s.log
		files[segmentName(s.base, ".index")] = s.indexFile()
		files[segmentName(s.base, ".timeindex")] = s.timeIndexFile()
		if len(s.aborted) > 0 {
			files[segmentName(s.base, ".txnindex")] = s.txnIndexFile()
		}
	}
	for _, s := range l.snapshots {
		files[segmentName(s.offset, ".snapshot")] = snapshotFile(s.entries)
	}
	for name, b := range files {
		if err := writeFile(filepath.Join(dir, name), b); err != nil {
			return err
		}
	}
	return nil
}

// indexFile is the .index: relative offset and position, each a
// big-endian u32. The active segment's is still preallocated (zeros
// after the entries); Kafka trims an index to its entries when the
// segment is rolled or closed.
func (s *segment) indexFile() []byte {
	var out []byte
	for _, e := range s.index {
		out = enc.AppendUint32(out, uint32(e.Offset-s.base))
		out = enc.AppendUint32(out, uint32(e.Position))
	}
	return s.prealloc(out, offsetEntryLen)
}

// timeIndexFile is the .timeindex: timestamp i64, relative offset u32.
func (s *segment) timeIndexFile() []byte {
	var out []byte
	for _, e := range s.times {
		out = enc.AppendUint64(out, uint64(e.Timestamp))
		out = enc.AppendUint32(out, uint32(e.Offset-s.base))
	}
	return s.prealloc(out, timeEntryLen)
}

// prealloc grows an active segment's index to segment.index.bytes,
// rounded down to whole entries, as the broker creates it.
func (s *segment) prealloc(b []byte, entryLen int) []byte {
	if !s.active {
		return b
	}
	return append(b, make([]byte, segmentIndexBytes/entryLen*entryLen-len(b))...)
}

// txnIndexFile is the .txnindex: per aborted transaction version i16
// (0), producer id, first offset, last offset (its marker's), last
// stable offset, each i64.
func (s *segment) txnIndexFile() []byte {
	var out []byte
	for _, t := range s.aborted {
		out = enc.AppendUint16(out, 0)
		for _, v := range []int64{t.ProducerID, t.FirstOffset, t.LastOffset, t.LastStableOffset} {
			out = enc.AppendUint64(out, uint64(v))
		}
	}
	return out
}

// snapshotFile is a producer state snapshot: version i16 (1), a CRC-32C
// u32 over everything after it, then an i32 count of entries.
func snapshotFile(es []producerEntry) []byte {
	out := []byte{0, 1, 0, 0, 0, 0}
	out = enc.AppendUint32(out, uint32(len(es)))
	for _, e := range es {
		out = enc.AppendUint64(out, uint64(e.ProducerID))
		out = enc.AppendUint16(out, uint16(e.ProducerEpoch))
		out = enc.AppendUint32(out, uint32(e.LastSequence))
		out = enc.AppendUint64(out, uint64(e.LastOffset))
		out = enc.AppendUint32(out, uint32(e.OffsetDelta))
		out = enc.AppendUint64(out, uint64(e.Timestamp))
		out = enc.AppendUint32(out, uint32(e.CoordinatorEpoch))
		out = enc.AppendUint64(out, uint64(e.CurrentTxnFirstOffset))
	}
	enc.PutUint32(out[2:], crc32.Checksum(out[6:], castagnoli))
	return out
}

// checkpointFile is the text of the log directory's offset checkpoints:
// version 0, the count, then "topic partition offset" lines.
func checkpointFile(es []checkpointEntry) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", len(es))
	for _, e := range es {
		fmt.Fprintf(&b, "%s %d %d\n", e.Topic, e.Partition, e.Offset)
	}
	return []byte(b.String())
}

// epochCheckpointFile is a leader-epoch-checkpoint: version 0, the
// count, then "epoch startOffset" lines.
func epochCheckpointFile(es []epochEntry) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", len(es))
	for _, e := range es {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return []byte(b.String())
}

func writeFile(name string, b []byte) error { return os.WriteFile(name, b, 0o644) }

// sortedNames lists a directory's file names.
func sortedNames(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out, nil
}
