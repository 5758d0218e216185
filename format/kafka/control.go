package kafka

import (
	"encoding/binary"
	"strconv"
)

// A control batch (its Control attribute set) holds one control record,
// written by the broker, never by a producer. Its key is a version (i16)
// and a type (i16); a transaction marker's value (abort or commit) is a
// version (i16) and the coordinator's epoch (i32). Like Kafka, a reader
// takes versions above 0 as version 0 with bytes it does not know after.
const (
	controlKeyLen = 4
	endMarkerLen  = 6
)

// ControlType is what a control record marks.
type ControlType int16

// The control record types of Kafka's ControlRecordType: transaction
// markers, and the KRaft records of __cluster_metadata.
const (
	ControlAbort ControlType = iota
	ControlCommit
	ControlLeaderChange
	ControlSnapshotHeader
	ControlSnapshotFooter
	ControlKRaftVersion
	ControlKRaftVoters
)

func (t ControlType) String() string {
	switch t {
	case ControlAbort:
		return "abort"
	case ControlCommit:
		return "commit"
	case ControlLeaderChange:
		return "leader change"
	case ControlSnapshotHeader:
		return "snapshot header"
	case ControlSnapshotFooter:
		return "snapshot footer"
	case ControlKRaftVersion:
		return "kraft version"
	case ControlKRaftVoters:
		return "kraft voters"
	}
	return "control type " + strconv.Itoa(int(t))
}

// ControlKey is a control record's key.
type ControlKey struct {
	Version int16
	Type    ControlType // possibly one this package does not name
}

// ParseControlKey decodes a control record's key.
func ParseControlKey(key []byte) (ControlKey, error) {
	if len(key) < controlKeyLen {
		return ControlKey{}, errorf(ErrShort, "a control record key of %d bytes, less than %d", len(key), controlKeyLen)
	}
	k := ControlKey{
		Version: int16(binary.BigEndian.Uint16(key)),
		Type:    ControlType(binary.BigEndian.Uint16(key[2:])),
	}
	if k.Version < 0 {
		return k, errorf(ErrFormat, "control record key version %d is negative", k.Version)
	}
	return k, nil
}

// EndTransactionMarker is the value of an abort or commit control record.
type EndTransactionMarker struct {
	Version          int16
	CoordinatorEpoch int32
}

// ParseEndTransactionMarker decodes an abort or commit record's value.
func ParseEndTransactionMarker(value []byte) (EndTransactionMarker, error) {
	if len(value) < endMarkerLen {
		return EndTransactionMarker{}, errorf(ErrShort, "a transaction marker value of %d bytes, less than %d", len(value), endMarkerLen)
	}
	m := EndTransactionMarker{
		Version:          int16(binary.BigEndian.Uint16(value)),
		CoordinatorEpoch: int32(binary.BigEndian.Uint32(value[2:])),
	}
	if m.Version < 0 {
		return m, errorf(ErrFormat, "transaction marker version %d is negative", m.Version)
	}
	return m, nil
}
