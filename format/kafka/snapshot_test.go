package kafka_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/seglog/seglog/format/kafka"
)

// snCRC32C is CRC-32C computed bit by bit from its definition (reflected
// polynomial 0x82F63B78), apart from the table the decoder uses.
func snCRC32C(b []byte) uint32 {
	crc := ^uint32(0)
	for _, c := range b {
		crc ^= uint32(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x82F63B78
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

// Producer entries as ProducerStateManager's schema lays them out:
// producer id, epoch, last sequence, last offset, offset delta,
// timestamp, coordinator epoch, current txn first offset.
const (
	snProducer1 = "00000000000003e8 0002 00000009 000000000000006e 00000004 0000018bcfe56800 00000003 ffffffffffffffff"
	snProducer2 = "00000000000003e9 0000 00000000 ffffffffffffffff 00000000 0000018bcfe56c00 ffffffff 0000000000000064"
)

// snFile is a snapshot of version v with count producers and body, its
// CRC filled in.
func snFile(t testing.TB, v int, count string, body string) []byte {
	t.Helper()
	b := ixBytes(t, "0000 00000000"+count+body)
	binary.BigEndian.PutUint16(b, uint16(v))
	binary.BigEndian.PutUint32(b[2:], snCRC32C(b[6:]))
	return b
}

func TestSnapshotCRCReference(t *testing.T) {
	if got := snCRC32C([]byte("123456789")); got != 0xe3069283 {
		t.Fatalf("CRC-32C check value %08x, want e3069283", got)
	}
}

func TestParseSnapshot(t *testing.T) {
	got, err := kafka.ParseSnapshot(snFile(t, 1, "00000002", snProducer1+snProducer2))
	if err != nil {
		t.Fatal(err)
	}
	want := []kafka.ProducerEntry{
		{ProducerID: 1000, ProducerEpoch: 2, LastSequence: 9, LastOffset: 110, OffsetDelta: 4, Timestamp: 1700000000000, CoordinatorEpoch: 3, CurrentTxnFirstOffset: -1},
		{ProducerID: 1001, LastOffset: -1, Timestamp: 1700000001024, CoordinatorEpoch: -1, CurrentTxnFirstOffset: 100},
	}
	if got.Version != 1 || len(got.Producers) != 2 || got.Producers[0] != want[0] || got.Producers[1] != want[1] {
		t.Errorf("%+v, want producers %+v", got, want)
	}
	if empty, err := kafka.ParseSnapshot(snFile(t, 1, "00000000", "")); err != nil || len(empty.Producers) != 0 {
		t.Errorf("no producers: %+v, %v", empty, err)
	}

	flipped := snFile(t, 1, "00000001", snProducer1)
	flipped[20] ^= 1
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"short", []byte{0, 1, 2}, "producer snapshot: 3 bytes, fewer than the 10 of its header"},
		{"version 0", snFile(t, 0, "00000001", snProducer1), "producer snapshot: version 0, Kafka reads only 1"},
		{"bit flipped", flipped, "producer snapshot: CRC-32C"},
		{"negative count", snFile(t, 1, "ffffffff", ""), "producer snapshot: producer count -1 is negative"},
		{"count past the end", snFile(t, 1, "00000002", snProducer1), "producer snapshot: producer count 2 needs 92 bytes, 46 follow the header"},
		{"huge count", snFile(t, 1, "7fffffff", snProducer1), "producer snapshot: producer count 2147483647 needs 98784247762 bytes, 46 follow the header"},
		{"bytes after the last", snFile(t, 1, "00000001", snProducer1+"00"), "producer snapshot: producer count 1 needs 46 bytes, 47 follow the header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kafka.ParseSnapshot(tc.b)
			if err == nil || !errors.Is(err, kafka.ErrSnapshot) || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
				t.Errorf("error %v, want %q...", err, tc.want)
			}
		})
	}
}

func FuzzParseSnapshot(f *testing.F) {
	for _, b := range [][]byte{
		nil,
		snFile(f, 1, "00000002", snProducer1+snProducer2),
		snFile(f, 1, "00000000", ""),
		snFile(f, 1, "7fffffff", snProducer1),
		snFile(f, 0, "00000001", snProducer1),
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := kafka.ParseSnapshot(b)
		if err != nil {
			if !errors.Is(err, kafka.ErrSnapshot) {
				t.Fatalf("error %v is no ErrSnapshot", err)
			}
			return
		}
		if 10+46*len(s.Producers) != len(b) || s.CRC != snCRC32C(b[6:]) {
			t.Fatalf("%d bytes decoded as %d producers, CRC %08x", len(b), len(s.Producers), s.CRC)
		}
	})
}
