package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const manifestName = "manifest.json"

// The manifest says what every fixture holds; ../README.md documents
// its fields.
type manifest struct {
	Description string            `json:"description"`
	Writers     map[string]string `json:"writers"`
	LogDir      logDirManifest    `json:"logdir"`
	Damaged     []damageManifest  `json:"damaged"`
}

type logDirManifest struct {
	Dir            string                       `json:"dir"`
	MetaProperties metaProperties               `json:"meta_properties"`
	Checkpoints    map[string][]checkpointEntry `json:"checkpoints"`
	Partitions     []partitionManifest          `json:"partitions"`
}

type metaProperties struct {
	Version     int    `json:"version"`
	NodeID      int    `json:"node_id"`
	ClusterID   string `json:"cluster_id"`
	DirectoryID string `json:"directory_id"`
}

type checkpointEntry struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

type partitionManifest struct {
	Topic              string             `json:"topic"`
	Partition          int32              `json:"partition"`
	Dir                string             `json:"dir"`
	TopicID            string             `json:"topic_id"`
	Writer             string             `json:"writer"`
	IndexIntervalBytes int                `json:"index_interval_bytes"`
	SegmentIndexBytes  int                `json:"segment_index_bytes"`
	LogStartOffset     int64              `json:"log_start_offset"`
	LogEndOffset       int64              `json:"log_end_offset"`
	HighWatermark      int64              `json:"high_watermark"`
	RecoveryPoint      int64              `json:"recovery_point"`
	LeaderEpochs       []epochEntry       `json:"leader_epochs"`
	Segments           []segmentManifest  `json:"segments"`
	Batches            []batchManifest    `json:"batches"`
	Records            []recordManifest   `json:"records"`
	TxnIndex           []txnManifest      `json:"txn_index"`
	Snapshots          []snapshotManifest `json:"snapshots"`
}

type segmentManifest struct {
	BaseOffset                 int64        `json:"base_offset"`
	Active                     bool         `json:"active"`
	Log                        string       `json:"log"`
	LogBytes                   int          `json:"log_bytes"`
	Batches                    int          `json:"batches"`
	Index                      string       `json:"index"`
	IndexBytes                 int          `json:"index_bytes"`
	IndexEntryCount            int          `json:"index_entry_count"`
	IndexEntries               []indexEntry `json:"index_entries"`
	PreallocatedIndexBytes     int          `json:"preallocated_index_bytes"`
	TimeIndex                  string       `json:"timeindex"`
	TimeIndexBytes             int          `json:"timeindex_bytes"`
	TimeIndexEntryCount        int          `json:"timeindex_entry_count"`
	TimeIndexEntries           []timeEntry  `json:"timeindex_entries"`
	PreallocatedTimeIndexBytes int          `json:"preallocated_timeindex_bytes"`
	TxnIndex                   string       `json:"txnindex,omitempty"`
	TxnIndexBytes              int          `json:"txnindex_bytes,omitempty"`
}

type batchManifest struct {
	File                 string `json:"file"`
	Position             int    `json:"position"`
	Bytes                int    `json:"bytes"`
	Magic                int8   `json:"magic"`
	BaseOffset           int64  `json:"base_offset"`
	LastOffset           int64  `json:"last_offset"`
	RecordCount          int    `json:"record_count"`
	Codec                string `json:"codec"`
	SnappyFraming        string `json:"snappy_framing,omitempty"`
	TimestampType        string `json:"timestamp_type"`
	Transactional        bool   `json:"transactional"`
	Control              bool   `json:"control"`
	ProducerID           int64  `json:"producer_id"`
	ProducerEpoch        int16  `json:"producer_epoch"`
	BaseSequence         int32  `json:"base_sequence"`
	PartitionLeaderEpoch int32  `json:"partition_leader_epoch"`
	CRC                  uint32 `json:"crc"`
	BaseTimestamp        int64  `json:"base_timestamp"`
	MaxTimestamp         int64  `json:"max_timestamp"`
	Writer               string `json:"writer"`
}

type recordManifest struct {
	Offset        int64            `json:"offset"`
	Timestamp     int64            `json:"timestamp"`
	KeyBase64     *string          `json:"key_base64"`
	ValueBase64   *string          `json:"value_base64"`
	Headers       []headerManifest `json:"headers"`
	Control       bool             `json:"control"`
	Aborted       bool             `json:"aborted"`
	BelowLogStart bool             `json:"below_log_start"`
}

type headerManifest struct {
	Key         string  `json:"key"`
	ValueBase64 *string `json:"value_base64"`
}

type txnManifest struct {
	File string `json:"file"`
	abortedTxn
}

type snapshotManifest struct {
	File    string          `json:"file"`
	Offset  int64           `json:"offset"`
	Bytes   int             `json:"bytes"`
	Entries []producerEntry `json:"entries"`
}

// b64 is base64 of b, nil for null.
func b64(b []byte) *string {
	if b == nil {
		return nil
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s
}

func segmentName(base int64, ext string) string { return fmt.Sprintf("%020d%s", base, ext) }

// describe is the manifest of a laid partition whose directory is dir.
func (l *laid) describe(dir string) (partitionManifest, error) {
	m := partitionManifest{
		Topic: l.topic, Partition: l.partition, Dir: dir, TopicID: uuidString(l.topicID()), Writer: l.writer,
		IndexIntervalBytes: l.indexInterval, SegmentIndexBytes: segmentIndexBytes,
		LogStartOffset: l.logStart, LogEndOffset: l.logEnd, HighWatermark: l.logEnd, RecoveryPoint: l.recoveryPoint,
		LeaderEpochs: l.epochs, TxnIndex: []txnManifest{}, Snapshots: []snapshotManifest{},
	}
	for _, s := range l.segments {
		sm := segmentManifest{
			BaseOffset: s.base, Active: s.active,
			Log: segmentName(s.base, ".log"), LogBytes: len(s.log), Batches: len(s.batches),
			Index: segmentName(s.base, ".index"), IndexEntryCount: len(s.index), IndexEntries: s.index,
			TimeIndex: segmentName(s.base, ".timeindex"), TimeIndexEntryCount: len(s.times), TimeIndexEntries: s.times,
		}
		sm.IndexBytes, sm.TimeIndexBytes = len(s.indexFile()), len(s.timeIndexFile())
		if s.active {
			sm.PreallocatedIndexBytes, sm.PreallocatedTimeIndexBytes = sm.IndexBytes, sm.TimeIndexBytes
		}
		if len(s.aborted) > 0 {
			sm.TxnIndex, sm.TxnIndexBytes = segmentName(s.base, ".txnindex"), len(s.aborted)*txnEntryLen
			for _, t := range s.aborted {
				m.TxnIndex = append(m.TxnIndex, txnManifest{sm.TxnIndex, t})
			}
		}
		m.Segments = append(m.Segments, sm)
		for i, b := range s.batches {
			bm, rs, err := describeBatch(b, sm.Log, s.pos[i])
			if err != nil {
				return m, fmt.Errorf("%s: %w", dir, err)
			}
			m.Batches = append(m.Batches, bm)
			for _, r := range rs {
				r.BelowLogStart = r.Offset < l.logStart
				m.Records = append(m.Records, r)
			}
		}
	}
	for _, s := range l.snapshots {
		name := segmentName(s.offset, ".snapshot")
		m.Snapshots = append(m.Snapshots, snapshotManifest{name, s.offset, len(snapshotFile(s.entries)), s.entries})
	}
	return m, nil
}

// describeBatch says what a batch (or magic 1 message) holds: its
// records as its writer was asked to write them, and as the broker
// wrote its own markers.
func describeBatch(b *batch, file string, pos int) (batchManifest, []recordManifest, error) {
	bm, err := batchFields(b.raw)
	if err != nil {
		return bm, nil, err
	}
	bm.File, bm.Position, bm.Writer = file, pos, b.writer
	if bm.Control {
		rs, err := storedRecords(b.raw)
		return bm, rs, err
	}
	if len(b.recs) != bm.RecordCount {
		return bm, nil, fmt.Errorf("batch at offset %d holds %d records, its writer was given %d", bm.BaseOffset, bm.RecordCount, len(b.recs))
	}
	var rs []recordManifest
	for i, r := range b.recs {
		ts := r.ts
		if bm.TimestampType == "LogAppendTime" && bm.Magic == 2 {
			ts = bm.MaxTimestamp
		}
		rs = append(rs, recordManifest{Offset: bm.BaseOffset + int64(i), Timestamp: ts, KeyBase64: b64(r.key), ValueBase64: b64(r.value), Headers: headers(r.headers), Aborted: b.aborted})
	}
	return bm, rs, nil
}

// batchFields is what a batch's header says, or a magic 1 message's
// (whose records are its inner messages when it is compressed).
func batchFields(raw []byte) (batchManifest, error) {
	bm := batchManifest{Bytes: len(raw), Magic: magic(raw), TimestampType: "CreateTime"}
	if bm.Magic != 2 {
		first, last, ts, inner, err := v1Span(raw)
		if err != nil {
			return bm, err
		}
		attrs := int8(raw[17])
		bm.BaseOffset, bm.LastOffset, bm.RecordCount, bm.Codec = first, last, len(inner), codecs[attrs&attrCodec]
		if attrs&attrLogAppend != 0 {
			bm.TimestampType = "LogAppendTime"
		}
		bm.ProducerID, bm.ProducerEpoch, bm.BaseSequence, bm.PartitionLeaderEpoch = -1, -1, -1, -1
		bm.CRC, bm.BaseTimestamp, bm.MaxTimestamp = enc.Uint32(raw[12:]), ts, ts
		return bm, nil
	}
	h := header(raw)
	bm.BaseOffset, bm.LastOffset, bm.RecordCount = h.FirstOffset, h.FirstOffset+int64(h.LastOffsetDelta), int(h.NumRecords)
	bm.Codec = codecs[h.Attributes&attrCodec]
	if h.Attributes&attrLogAppend != 0 {
		bm.TimestampType = "LogAppendTime"
	}
	bm.Transactional, bm.Control = h.Attributes&attrTxn != 0, h.Attributes&attrControl != 0
	bm.ProducerID, bm.ProducerEpoch, bm.BaseSequence = h.ProducerID, h.ProducerEpoch, h.FirstSequence
	bm.PartitionLeaderEpoch, bm.CRC = h.PartitionLeaderEpoch, uint32(h.CRC)
	bm.BaseTimestamp, bm.MaxTimestamp = h.FirstTimestamp, h.MaxTimestamp
	if bm.Codec == "snappy" {
		bm.SnappyFraming = "raw"
		if bytes.HasPrefix(h.Records, []byte("\x82SNAPPY\x00")) {
			bm.SnappyFraming = "xerial"
		}
	}
	return bm, nil
}

// storedRecords reads a batch's records (or a magic 1 message's) back.
func storedRecords(raw []byte) ([]recordManifest, error) {
	var out []recordManifest
	if magic(raw) != 2 {
		_, _, _, inner, err := v1Span(raw)
		for _, m := range inner {
			out = append(out, recordManifest{Offset: m.Offset, Timestamp: m.Timestamp, KeyBase64: b64(m.Key), ValueBase64: b64(m.Value), Headers: []headerManifest{}})
		}
		return out, err
	}
	control := header(raw).Attributes&attrControl != 0
	rs, err := records(raw)
	for _, r := range rs {
		out = append(out, recordManifest{Offset: r.offset, Timestamp: r.ts, KeyBase64: b64(r.key), ValueBase64: b64(r.value), Headers: headers(r.headers), Control: control})
	}
	return out, err
}

func headers(hs []kmsg.Header) []headerManifest {
	out := []headerManifest{}
	for _, h := range hs {
		out = append(out, headerManifest{h.Key, b64(h.Value)})
	}
	return out
}

// writeJSON writes v indented, except that what lies deeper than
// manifestDepth stays on one line: a record, a batch or a segment is a
// line of the manifest.
func writeJSON(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(name, append(indentTo(b, manifestDepth), '\n'), 0o644)
}

const manifestDepth = 5

// indentTo indents compact JSON by two spaces a level down to depth.
func indentTo(src []byte, depth int) []byte {
	var out bytes.Buffer
	level := 0
	inString, escaped := false, false
	newline := func(l int) {
		out.WriteByte('\n')
		out.WriteString(strings.Repeat("  ", l))
	}
	for i, c := range src {
		if inString {
			out.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			out.WriteByte(c)
		case '{', '[':
			out.WriteByte(c)
			level++
			if level <= depth && src[i+1] != '}' && src[i+1] != ']' {
				newline(level)
			}
		case '}', ']':
			if level <= depth && src[i-1] != '{' && src[i-1] != '[' {
				newline(level - 1)
			}
			level--
			out.WriteByte(c)
		case ',':
			out.WriteByte(c)
			if level <= depth {
				newline(level)
			}
		case ':':
			out.WriteByte(c)
			if level <= depth {
				out.WriteByte(' ')
			}
		default:
			out.WriteByte(c)
		}
	}
	return out.Bytes()
}

func readManifest(dir string) (*manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", manifestName, err)
	}
	return &m, nil
}
