package kafka_test

import (
	"errors"
	"testing"

	"github.com/seglog/seglog/format/kafka"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestParseControlKey(t *testing.T) {
	for _, tc := range []struct {
		key  kmsg.ControlRecordKey
		want kafka.ControlType
		name string
	}{
		{kmsg.ControlRecordKey{Type: kmsg.ControlRecordKeyTypeAbort}, kafka.ControlAbort, "abort"},
		{kmsg.ControlRecordKey{Type: kmsg.ControlRecordKeyTypeCommit}, kafka.ControlCommit, "commit"},
		{kmsg.ControlRecordKey{Type: kmsg.ControlRecordKeyTypeSnapshotHeader}, kafka.ControlSnapshotHeader, "snapshot header"},
		{kmsg.ControlRecordKey{Type: kmsg.ControlRecordKeyTypeKraftVoters}, kafka.ControlKRaftVoters, "kraft voters"},
		{kmsg.ControlRecordKey{Version: 3, Type: 9}, 9, "control type 9"}, // a later version, a type to come
	} {
		k, err := kafka.ParseControlKey(tc.key.AppendTo(nil))
		if err != nil || k.Type != tc.want || k.Version != tc.key.Version || k.Type.String() != tc.name {
			t.Errorf("%+v: %+v %q, %v", tc.key, k, k.Type, err)
		}
	}
	if _, err := kafka.ParseControlKey([]byte{0, 0, 0}); !errors.Is(err, kafka.ErrShort) {
		t.Errorf("3 bytes: %v", err)
	}
	if _, err := kafka.ParseControlKey(nil); !errors.Is(err, kafka.ErrShort) {
		t.Errorf("null key: %v", err)
	}
	neg := kmsg.ControlRecordKey{Version: -1}
	if _, err := kafka.ParseControlKey(neg.AppendTo(nil)); !errors.Is(err, kafka.ErrFormat) {
		t.Errorf("version -1: %v", err)
	}
}

func TestParseEndTransactionMarker(t *testing.T) {
	v := kmsg.EndTxnMarker{Version: 0, CoordinatorEpoch: 31}
	m, err := kafka.ParseEndTransactionMarker(v.AppendTo(nil))
	if err != nil || m != (kafka.EndTransactionMarker{Version: 0, CoordinatorEpoch: 31}) {
		t.Fatalf("%+v, %v", m, err)
	}
	later := kmsg.EndTxnMarker{Version: 1, CoordinatorEpoch: -1}
	if m, err := kafka.ParseEndTransactionMarker(append(later.AppendTo(nil), 0, 0)); err != nil || m.CoordinatorEpoch != -1 {
		t.Fatalf("a later version with more bytes: %+v, %v", m, err)
	}
	if _, err := kafka.ParseEndTransactionMarker(v.AppendTo(nil)[:5]); !errors.Is(err, kafka.ErrShort) {
		t.Errorf("5 bytes: %v", err)
	}
	neg := kmsg.EndTxnMarker{Version: -2}
	if _, err := kafka.ParseEndTransactionMarker(neg.AppendTo(nil)); !errors.Is(err, kafka.ErrFormat) {
		t.Errorf("version -2: %v", err)
	}
}
