package commands

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"github.com/seglog/seglog/logstore"
)

// How read prints the records of Apache Kafka's layout, which carry what
// seglog's do not: null as well as empty keys and values, headers, and
// the batch each record came in.

// kafkaRecord reports whether r comes from Apache Kafka's layout.
func kafkaRecord(r *logstore.Record) bool { return r.Batch != nil }

// appendJSONHeaders appends `,"headers":[...]`: each header an object
// with key and value (value_base64 for bytes that are not UTF-8, null
// for a null value), in order.
func (w *recordWriter) appendJSONHeaders(b []byte, headers []logstore.Header) ([]byte, error) {
	b = append(b, `,"headers":[`...)
	for i, h := range headers {
		if i > 0 {
			b = append(b, ',')
		}
		if utf8.ValidString(h.Key) {
			b = appendJSONString(append(b, `{"key":`...), []byte(h.Key))
		} else {
			b = append(base64.StdEncoding.AppendEncode(append(b, `{"key_base64":"`...), []byte(h.Key)), '"')
		}
		var err error
		if b, err = w.jsonField(b, "value", h.Value, h.Value == nil); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendDumpBatch appends the line a dump prints before a batch's first
// record: what its header says, as kafka-dump-log's batch lines do.
func appendDumpBatch(b []byte, bt *logstore.Batch, times *timeFormatter) []byte {
	b = append(b, "batch base_offset="...)
	b = strconv.AppendUint(b, bt.BaseOffset, 10)
	b = append(b, " last_offset="...)
	b = strconv.AppendUint(b, bt.LastOffset, 10)
	b = append(b, " count="...)
	b = strconv.AppendInt(b, int64(bt.Records), 10)
	b = append(b, " pos="...)
	b = strconv.AppendInt(b, bt.Pos, 10)
	b = append(b, " size="...)
	b = strconv.AppendInt(b, bt.Size, 10)
	b = append(b, " magic="...)
	b = strconv.AppendInt(b, int64(bt.Magic), 10)
	b = append(b, " codec="...)
	b = append(b, bt.Codec...)
	b = append(b, " crc="...)
	b = appendHex32(b, bt.CRC)
	b = append(b, " timestamp_type="...)
	if bt.LogAppendTime {
		b = append(b, "log-append"...)
	} else {
		b = append(b, "create"...)
	}
	b = append(b, " base_ts="...)
	b = times.append(b, bt.BaseTimestamp*1e6)
	b = append(b, " max_ts="...)
	b = times.append(b, bt.MaxTimestamp*1e6)
	b = append(b, " producer_id="...)
	b = strconv.AppendInt(b, bt.ProducerID, 10)
	b = append(b, " producer_epoch="...)
	b = strconv.AppendInt(b, int64(bt.ProducerEpoch), 10)
	b = append(b, " base_sequence="...)
	b = strconv.AppendInt(b, int64(bt.BaseSequence), 10)
	b = append(b, " partition_leader_epoch="...)
	b = strconv.AppendInt(b, int64(bt.PartitionLeaderEpoch), 10)
	b = append(b, " transactional="...)
	b = strconv.AppendBool(b, bt.Transactional)
	b = append(b, " control="...)
	b = strconv.AppendBool(b, bt.Control)
	return append(b, '\n')
}

// appendDumpHeaders appends a dump line's headers, one
// ` header="KEY":"VALUE"` each (`:null` for a null value), escaped as
// dump escapes keys and values.
func appendDumpHeaders(b []byte, headers []logstore.Header) []byte {
	for _, h := range headers {
		b = append(b, ` header="`...)
		b = appendDumpEscaped(b, []byte(h.Key))
		if h.Value == nil {
			b = append(b, `":null`...)
			continue
		}
		b = append(b, `":"`...)
		b = appendDumpEscaped(b, h.Value)
		b = append(b, '"')
	}
	return b
}
