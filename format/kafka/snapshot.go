package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A producer-state snapshot (<20 digits>.snapshot, named by the offset it
// was taken at) is what Kafka's ProducerStateManager writes of its
// producers, all integers big-endian:
//
//	| version i16 (1) | crc u32 | count i32 | count producer entries |
//
// crc is CRC-32C over everything after it. Each entry is 46 bytes:
//
//	| producer id i64 | epoch i16 | last sequence i32 | last offset i64 |
//	| offset delta i32 | timestamp i64 | coordinator epoch i32 | current txn first offset i64 |
//
// A last offset of -1 means no batch of the producer is known; a current
// txn first offset of -1, no transaction open.

// SnapshotVersion is the only snapshot version Kafka reads.
const SnapshotVersion = 1

const (
	snapshotHeaderLen = 10 // version, crc, count
	snapshotCRCAt     = 2
	snapshotEntryLen  = 46
)

// ErrSnapshot means a producer-state snapshot is damaged or not one.
var ErrSnapshot = errors.New("producer snapshot")

// ProducerEntry is a producer's state in a snapshot.
type ProducerEntry struct {
	ProducerID            int64
	ProducerEpoch         int16
	LastSequence          int32
	LastOffset            int64 // of its last batch; -1: none known
	OffsetDelta           int32 // its last batch's last offset minus its first
	Timestamp             int64 // its last batch's largest timestamp (ms)
	CoordinatorEpoch      int32
	CurrentTxnFirstOffset int64 // -1: no transaction open
}

// Snapshot is a decoded producer-state snapshot.
type Snapshot struct {
	Version   int16
	CRC       uint32 // as stored, and checked
	Producers []ProducerEntry
}

// ParseSnapshot decodes a whole .snapshot file and checks its CRC.
func ParseSnapshot(b []byte) (Snapshot, error) {
	if len(b) < snapshotHeaderLen {
		return Snapshot{}, fmt.Errorf("%w: %d bytes, fewer than the %d of its header", ErrSnapshot, len(b), snapshotHeaderLen)
	}
	s := Snapshot{
		Version: int16(binary.BigEndian.Uint16(b)),
		CRC:     binary.BigEndian.Uint32(b[snapshotCRCAt:]),
	}
	if s.Version != SnapshotVersion {
		return s, fmt.Errorf("%w: version %d, Kafka reads only %d", ErrSnapshot, s.Version, SnapshotVersion)
	}
	if sum := castagnoli.Checksum(b[snapshotCRCAt+4:]); sum != s.CRC {
		return s, fmt.Errorf("%w: CRC-32C %08x, stored %08x", ErrSnapshot, sum, s.CRC)
	}
	count := int32(binary.BigEndian.Uint32(b[snapshotCRCAt+4:]))
	body := b[snapshotHeaderLen:]
	if count < 0 {
		return s, fmt.Errorf("%w: producer count %d is negative", ErrSnapshot, count)
	}
	if int64(count)*snapshotEntryLen != int64(len(body)) {
		return s, fmt.Errorf("%w: producer count %d needs %d bytes, %d follow the header", ErrSnapshot, count, int64(count)*snapshotEntryLen, len(body))
	}
	s.Producers = make([]ProducerEntry, count)
	for i := range s.Producers {
		e := body[i*snapshotEntryLen:]
		s.Producers[i] = ProducerEntry{
			ProducerID:            int64(binary.BigEndian.Uint64(e)),
			ProducerEpoch:         int16(binary.BigEndian.Uint16(e[8:])),
			LastSequence:          int32(binary.BigEndian.Uint32(e[10:])),
			LastOffset:            int64(binary.BigEndian.Uint64(e[14:])),
			OffsetDelta:           int32(binary.BigEndian.Uint32(e[22:])),
			Timestamp:             int64(binary.BigEndian.Uint64(e[26:])),
			CoordinatorEpoch:      int32(binary.BigEndian.Uint32(e[34:])),
			CurrentTxnFirstOffset: int64(binary.BigEndian.Uint64(e[38:])),
		}
	}
	return s, nil
}
