package kafka_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/seglog/seglog/format/kafka"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kmsgLegacyV0 and kmsgLegacyV1 encode a legacy message with kmsg, its
// size and CRC-32 filled in as a producer does.
func kmsgLegacyV0(m kmsg.MessageV0) []byte {
	m.Magic = 0
	return sealLegacy(m.AppendTo(nil))
}

func kmsgLegacyV1(m kmsg.MessageV1) []byte {
	m.Magic = 1
	return sealLegacy(m.AppendTo(nil))
}

// sealLegacy fills in a legacy message's size and CRC.
func sealLegacy(b []byte) []byte {
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	return b
}

func TestParseLegacyMessage(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		want kafka.LegacyMessage
	}{
		{"v0", kmsgLegacyV0(kmsg.MessageV0{Offset: 41, Key: []byte("key"), Value: []byte("value")}),
			kafka.LegacyMessage{Offset: 41, MessageSize: 14 + 8, Magic: 0, Timestamp: kafka.NoTimestamp, Key: []byte("key"), Value: []byte("value")}},
		{"v0 null key and value", kmsgLegacyV0(kmsg.MessageV0{Offset: 0}),
			kafka.LegacyMessage{Offset: 0, MessageSize: 14, Magic: 0, Timestamp: kafka.NoTimestamp}},
		{"v1", kmsgLegacyV1(kmsg.MessageV1{Offset: 9, Timestamp: 1_600_000_000_000, Key: []byte{}, Value: []byte("v")}),
			kafka.LegacyMessage{Offset: 9, MessageSize: 22 + 1, Magic: 1, Timestamp: 1_600_000_000_000, Key: []byte{}, Value: []byte("v")}},
		{"v1 log-append gzip wrapper", kmsgLegacyV1(kmsg.MessageV1{Offset: 99, Attributes: 0x09, Timestamp: 5, Value: []byte("zz")}),
			kafka.LegacyMessage{Offset: 99, MessageSize: 22 + 2, Magic: 1, Attributes: 0x09, Timestamp: 5, Value: []byte("zz")}},
	} {
		m, err := kafka.ParseLegacyMessage(append(bytes.Clone(tc.b), 0xee)) // a byte of the next entry
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		tc.want.CRC = binary.BigEndian.Uint32(tc.b[12:])
		if m.Offset != tc.want.Offset || m.MessageSize != tc.want.MessageSize || m.CRC != tc.want.CRC || m.Magic != tc.want.Magic ||
			m.Attributes != tc.want.Attributes || m.Timestamp != tc.want.Timestamp || !sameBytes(m.Key, tc.want.Key) || !sameBytes(m.Value, tc.want.Value) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, m, tc.want)
		}
		if m.Size() != int64(len(tc.b)) {
			t.Errorf("%s: Size %d, want %d", tc.name, m.Size(), len(tc.b))
		}
	}
	m, _ := kafka.ParseLegacyMessage(kmsgLegacyV1(kmsg.MessageV1{Attributes: 0x0b}))
	if m.Codec() != kafka.CodecLZ4 || !m.LogAppendTime() {
		t.Errorf("attributes 0x0b: codec %v, log-append time %v", m.Codec(), m.LogAppendTime())
	}
	m, _ = kafka.ParseLegacyMessage(kmsgLegacyV0(kmsg.MessageV0{Attributes: 0x0a}))
	if m.Codec() != kafka.CodecSnappy || m.LogAppendTime() {
		t.Errorf("magic 0, attributes 0x0a: codec %v, log-append time %v (magic 0 has no timestamp type)", m.Codec(), m.LogAppendTime())
	}
}

// sameBytes compares nil (null) apart from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func TestParseLegacyMessageErrors(t *testing.T) {
	good := kmsgLegacyV1(kmsg.MessageV1{Offset: 5, Key: []byte("key"), Value: []byte("value")})
	// resealed changes b and gives it a CRC that matches again.
	resealed := func(f func(b []byte) []byte) []byte { return sealLegacy(f(bytes.Clone(good))) }
	for _, tc := range []struct {
		name string
		b    []byte
		kind error
		says string
	}{
		{"empty", nil, kafka.ErrShort, ""},
		{"cut", good[:len(good)-1], kafka.ErrShort, ""},
		{"magic 2", func() []byte { b := bytes.Clone(good); b[16] = 2; return b }(), kafka.ErrMagic, "magic 2"},
		{"size below v1's", func() []byte { b := bytes.Clone(good); binary.BigEndian.PutUint32(b[8:], 21); return b }(), kafka.ErrFormat, "message size 21"},
		{"crc", func() []byte { b := bytes.Clone(good); b[len(b)-1] ^= 1; return b }(), kafka.ErrCRC, "stored 0x"},
		{"key length -2", resealed(func(b []byte) []byte { binary.BigEndian.PutUint32(b[26:], 0xfffffffe); return b }), kafka.ErrFormat, "key length -2"},
		{"key past end", resealed(func(b []byte) []byte { binary.BigEndian.PutUint32(b[26:], 100); return b }), kafka.ErrFormat, "key length 100"},
		{"value length cut", resealed(func(b []byte) []byte { return b[:len(good)-7] }), kafka.ErrFormat, "value length runs past"},
		{"trailing", resealed(func(b []byte) []byte { return append(b, 0) }), kafka.ErrFormat, "its fields take"},
		{"zstd", resealed(func(b []byte) []byte { b[17] = 4; return b }), kafka.ErrFormat, "codec 4"},
		{"offset negative", resealed(func(b []byte) []byte { binary.BigEndian.PutUint64(b, 1<<63); return b }), kafka.ErrFormat, "offset -"},
	} {
		_, err := kafka.ParseLegacyMessage(tc.b)
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err %v, want %v saying %q", tc.name, err, tc.kind, tc.says)
		}
	}
}
