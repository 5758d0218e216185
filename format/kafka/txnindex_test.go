package kafka_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/seglog/seglog/format/kafka"
)

// Aborted transactions as Kafka's AbortedTxn lays them out: version,
// producer id, first offset, last offset, last stable offset.
const (
	txAbort1 = "0000 00000000000003e8 0000000000000064 000000000000006e 0000000000000064" // producer 1000, 100..110, LSO 100
	txAbort2 = "0000 00000000000003e9 0000000000000060 0000000000000078 0000000000000060" // producer 1001, 96..120, LSO 96
	txTorn   = "0000 00000000000003e9 00000000000000600000"                               // its first 20 bytes
)

func TestParseAbortedTxn(t *testing.T) {
	got, err := kafka.ParseAbortedTxn(ixBytes(t, txAbort1))
	want := kafka.AbortedTxn{ProducerID: 1000, FirstOffset: 100, LastOffset: 110, LastStableOffset: 100}
	if err != nil || got != want {
		t.Errorf("%+v, %v; want %+v", got, err, want)
	}
	if _, err := kafka.ParseAbortedTxn(ixBytes(t, txAbort1)[:33]); !errors.Is(err, kafka.ErrTxnIndex) {
		t.Errorf("33 bytes: %v", err)
	}
	v1 := ixBytes(t, txAbort1)
	v1[1] = 1
	if _, err := kafka.ParseAbortedTxn(v1); err == nil || err.Error() != "transaction index: entry version 1, Kafka writes only 0" {
		t.Errorf("version 1: %v", err)
	}
}

func TestCheckTxnIndex(t *testing.T) {
	for _, tc := range []struct {
		name, hex string
		base      int64
		want      string
	}{
		{"none", "", 100, ""},
		{"two", txAbort1 + txAbort2, 100, ""},
		{"first offset in an earlier segment", txAbort2, 100, ""},
		{"torn last entry", txAbort1 + txTorn, 100, "transaction index: 54 bytes, not a whole number of 34-byte entries"},
		{"version 1", "0001" + txAbort1[4:], 100, "transaction index: entry 0: version 1, Kafka writes only 0"},
		{"last offsets back", txAbort2 + txAbort1, 100, "transaction index: entry 1: last offset 110 is not above entry 0's 120"},
		{"last offset below the base", txAbort1, 111, "transaction index: entry 0: last offset 110 is below the segment's base 111"},
		{"first above last", "0000 00000000000003e8 000000000000006f 000000000000006e 0000000000000064", 100,
			"transaction index: entry 0: first offset 111 is above its last offset 110"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ixBytes(t, tc.hex)
			ixWantErr(t, kafka.CheckTxnIndex(bytes.NewReader(b), int64(len(b)), tc.base), kafka.ErrTxnIndex, tc.want)
		})
	}
}

func FuzzTxnIndex(f *testing.F) {
	for _, s := range []string{"", txAbort1, txAbort1 + txAbort2, txAbort2 + txAbort1, txTorn, "0001" + txAbort1[4:]} {
		f.Add(ixBytes(f, s), int64(100))
	}
	f.Fuzz(func(t *testing.T, b []byte, base int64) {
		if _, err := kafka.ParseAbortedTxn(b); err != nil && !errors.Is(err, kafka.ErrTxnIndex) {
			t.Fatalf("parse: %v", err)
		}
		if err := kafka.CheckTxnIndex(bytes.NewReader(b), int64(len(b)), base); err != nil && !errors.Is(err, kafka.ErrTxnIndex) {
			t.Fatalf("check: %v", err)
		}
	})
}
