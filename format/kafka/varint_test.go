package kafka

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// Kafka's varints are zigzag varints, which encoding/binary's AppendVarint
// writes too: it is the independent encoder here.
func TestVarint(t *testing.T) {
	for _, v := range []int32{0, 1, -1, 63, -64, 64, 300, -300, math.MaxInt32, math.MinInt32} {
		b := binary.AppendVarint(nil, int64(v))
		got, n, err := varint(append(b, 0xff))
		if err != nil || got != v || n != len(b) {
			t.Errorf("varint %d (%x): %d, %d bytes, %v", v, b, got, n, err)
		}
	}
	for _, v := range []int64{0, -1, 1 << 40, -(1 << 40), math.MaxInt64, math.MinInt64} {
		b := binary.AppendVarint(nil, v)
		got, n, err := varlong(b)
		if err != nil || got != v || n != len(b) {
			t.Errorf("varlong %d (%x): %d, %d bytes, %v", v, b, got, n, err)
		}
	}
}

func TestVarintLimits(t *testing.T) {
	if _, _, err := varint(nil); err != ErrShort {
		t.Errorf("no bytes: %v", err)
	}
	if _, _, err := varint([]byte{0x80, 0x80}); err != ErrShort {
		t.Errorf("cut: %v", err)
	}
	if _, _, err := varint([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}); !errors.Is(err, ErrFormat) {
		t.Errorf("6-byte varint: %v", err)
	}
	if _, n, err := varlong([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}); err != nil || n != 10 {
		t.Errorf("10-byte varlong: %d bytes, %v", n, err)
	}
	if _, _, err := varlong([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}); !errors.Is(err, ErrFormat) {
		t.Errorf("11-byte varlong: %v", err)
	}
	// As Kafka's ByteUtils, bits past 32 in a 5-byte varint are dropped.
	if v, n, err := varint([]byte{0xfe, 0xff, 0xff, 0xff, 0x7f}); err != nil || n != 5 || v != math.MaxInt32 {
		t.Errorf("5-byte varint with high bits: %d, %d bytes, %v", v, n, err)
	}
}
