package segfile

import (
	"encoding/binary"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/format/kafka"
)

// KafkaEntryLen is how long the Kafka entry (a record batch, magic 2, or
// a legacy message, magic 0 or 1) whose first bytes head holds says it
// is, and whether head can start one at all: a magic Kafka has at byte 16
// and a length no shorter than an entry with no records, key or value.
func KafkaEntryLen(head []byte) (int64, bool) {
	magic, ok := kafka.Magic(head)
	if !ok {
		return 0, false
	}
	var least int64 // the length field of the smallest entry
	switch magic {
	case 0:
		least = 14
	case 1:
		least = 22
	case 2:
		least = kafka.BatchHeaderLen - kafka.LogOverhead
	default:
		return 0, false
	}
	length := int64(int32(binary.BigEndian.Uint32(head[8:kafka.LogOverhead])))
	return kafka.LogOverhead + length, length >= least
}

// IsKafkaSegment reports whether first, the first bytes of a non-empty
// .log, begin with a whole Kafka record batch or legacy message whose
// checksum matches, and not with a seglog record whose checksum does.
// Byte 16 is Kafka's magic, and a seglog record's timestamp can put
// anything there, so the magic alone decides nothing; a checksum over the
// whole entry does, so first must hold it.
func IsKafkaSegment(first []byte) bool {
	if _, _, err := format.ParseRecord(first); err == nil {
		return false
	}
	n, ok := KafkaEntryLen(first)
	if !ok || n > int64(len(first)) {
		return false
	}
	b := first[:n]
	if b[kafka.MagicAt] == 2 {
		h, err := kafka.ParseBatchHeader(b)
		return err == nil && h.Attributes>>7 == 0 && h.CheckCRC(b) == nil // no attribute bit Kafka leaves unused set
	}
	m, err := kafka.ParseLegacyMessage(b)
	unused := m.Attributes>>4 != 0 || m.Magic == 0 && m.Attributes&8 != 0 // magic 0 has no timestamp type
	return err == nil && !unused && m.Offset >= 0 && m.Size() == n
}
