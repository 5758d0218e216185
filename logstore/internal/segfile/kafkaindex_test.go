package segfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/seglog/seglog/format/kafka"
)

// Index files for these tests are written from Kafka's format with
// encoding/binary: .index entries of relative offset and position,
// .timeindex entries of timestamp and relative offset.

func offsetIndexBytes(entries ...[2]int32) []byte {
	var b []byte
	for _, e := range entries {
		b = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(b, uint32(e[0])), uint32(e[1]))
	}
	return b
}

func timeIndexBytes(entries ...[2]int64) []byte {
	var b []byte
	for _, e := range entries {
		b = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(b, uint64(e[0])), uint32(e[1]))
	}
	return b
}

func TestKafkaOffsetIndex(t *testing.T) {
	const base = 1000
	data := append(offsetIndexBytes([2]int32{4, 300}, [2]int32{9, 700}, [2]int32{20, 1500}), make([]byte, 8*5+3)...)
	x, err := NewKafkaOffsetIndex(bytes.NewReader(data), int64(len(data)), base)
	if err != nil {
		t.Fatal(err)
	}
	if x.Len() != 3 || x.Whole() != 8 || x.Partial() != 3 || x.EntryLen() != 8 {
		t.Fatalf("Len %d Whole %d Partial %d", x.Len(), x.Whole(), x.Partial())
	}
	var got []KafkaIndexEntry
	if err := x.Each(0, x.Whole(), func(i int64, e KafkaIndexEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 8 || got[1] != (KafkaIndexEntry{Offset: 1009, Pos: 700}) || got[5] != (KafkaIndexEntry{Offset: base}) {
		t.Fatalf("entries %+v", got)
	}
	for _, c := range []struct {
		off  int64
		i    int64
		ok   bool
		want int64
	}{{999, 0, false, 0}, {1003, 0, false, 0}, {1004, 0, true, 300}, {1008, 0, true, 300}, {1009, 1, true, 700}, {5000, 2, true, 1500}} {
		i, ok, err := x.FloorOffset(c.off)
		if err != nil || ok != c.ok || ok && i != c.i {
			t.Fatalf("FloorOffset(%d) = %d, %v, %v", c.off, i, ok, err)
		}
	}
	for _, c := range []struct {
		pos int64
		i   int64
		ok  bool
	}{{299, 0, false}, {300, 0, true}, {699, 0, true}, {700, 1, true}, {1499, 1, true}, {1 << 40, 2, true}} {
		i, ok, err := x.FloorPos(c.pos)
		if err != nil || ok != c.ok || ok && i != c.i {
			t.Fatalf("FloorPos(%d) = %d, %v, %v", c.pos, i, ok, err)
		}
	}
	if _, err := x.Entry(8); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Entry past the file: %v", err)
	}
	if err := x.Check(); !errors.Is(err, kafka.ErrOffsetIndex) {
		t.Fatalf("a partial entry passes Kafka's check: %v", err)
	}
	// An active segment with no entry yet: all of it is preallocation.
	zeros := make([]byte, 4096)
	if x, err := NewKafkaOffsetIndex(bytes.NewReader(zeros), 4096, base); err != nil || x.Len() != 0 || x.Whole() != 512 {
		t.Fatalf("zeros: %v %v", x, err)
	}
	// An empty index file.
	if x, err := NewKafkaOffsetIndex(bytes.NewReader(nil), 0, base); err != nil || x.Len() != 0 || x.Whole() != 0 {
		t.Fatalf("empty: %v %v", x, err)
	}
}

func TestKafkaTimeIndex(t *testing.T) {
	const base = 50
	data := append(timeIndexBytes([2]int64{1000, 3}, [2]int64{1000, 5}, [2]int64{2000, 9}), make([]byte, 12*4)...)
	x, err := NewKafkaTimeIndex(bytes.NewReader(data), int64(len(data)), base)
	if err != nil || x.Len() != 3 || x.Whole() != 7 || x.Partial() != 0 || x.Check() != nil {
		t.Fatalf("%+v %v", x, err)
	}
	for _, c := range []struct {
		ts int64
		i  int64
		ok bool
	}{{999, 0, false}, {1000, 1, true}, {1999, 1, true}, {2000, 2, true}, {1 << 60, 2, true}} {
		i, ok, err := x.FloorTime(c.ts)
		if err != nil || ok != c.ok || ok && i != c.i {
			t.Fatalf("FloorTime(%d) = %d, %v, %v", c.ts, i, ok, err)
		}
	}
	e, err := x.Entry(2)
	if err != nil || e != (KafkaIndexEntry{Offset: 59, Timestamp: 2000}) {
		t.Fatalf("entry 2: %+v %v", e, err)
	}
	// A file that shrank under the reader since its size was taken.
	y, err := NewKafkaTimeIndex(&shrunk{data[:20]}, 36, base)
	if err == nil {
		err = y.Each(0, y.Whole(), func(int64, KafkaIndexEntry) error { return nil })
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("shrunk: %v", err)
	}
}

// shrunk reads as a file shorter than the size it was opened with.
type shrunk struct{ b []byte }

func (s *shrunk) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(s.b)) {
		return 0, io.EOF
	}
	n := copy(p, s.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func txnBytes(entries ...kafka.AbortedTxn) []byte {
	var b []byte
	for _, e := range entries {
		b = binary.BigEndian.AppendUint16(b, uint16(e.Version))
		for _, v := range []int64{e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset} {
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

func TestEachAbortedTxn(t *testing.T) {
	want := []kafka.AbortedTxn{{ProducerID: 7, FirstOffset: 3, LastOffset: 10, LastStableOffset: 3}, {ProducerID: 8, FirstOffset: 11, LastOffset: 14, LastStableOffset: 15}}
	data := append(txnBytes(want...), 1, 2)
	var got []kafka.AbortedTxn
	if err := EachAbortedTxn(bytes.NewReader(data), int64(len(data)), func(i int64, a kafka.AbortedTxn) error {
		got = append(got, a)
		return nil
	}); err != nil || !slices.Equal(got, want) {
		t.Fatalf("%+v %v", got, err)
	}
	if err := CheckKafkaTxnIndex(bytes.NewReader(data), int64(len(data))-2, 0); err != nil {
		t.Fatal(err)
	}
	if err := CheckKafkaTxnIndex(bytes.NewReader(data), int64(len(data)), 0); !errors.Is(err, kafka.ErrTxnIndex) {
		t.Fatalf("partial entry: %v", err)
	}
}

func TestKafkaHeaders(t *testing.T) {
	data, pos := plainSegment(t, 5)
	legacy := kLegacy(1, 1025, 0, fixtureTS, []byte("k"), []byte("v"))
	data = append(data, legacy...)
	pos = append(pos, int64(len(data)-len(legacy)))
	walk := func(data []byte) ([]int64, *KafkaHeaders) {
		w := NewKafkaHeaders(bytes.NewReader(data), int64(len(data)), "x.log", 0)
		var got []int64
		for w.Next() {
			got = append(got, w.Batch().Pos)
			if b := w.Batch(); !b.Legacy() && w.Size() != b.Header.Size() || b.Legacy() && b.Message.Offset != 1025 {
				t.Fatalf("entry at %d: %+v", b.Pos, b)
			}
		}
		if w.Err() != nil {
			t.Fatal(w.Err())
		}
		return got, w
	}
	if got, w := walk(data); !slices.Equal(got, pos) || w.Broken() || w.Pos() != int64(len(data)) {
		t.Fatalf("positions %v, want %v; broken %v", got, pos, w.Broken())
	}
	// A flipped record bit goes unseen: the walk reads no CRC.
	flipped := slices.Clone(data)
	flipped[pos[2]+kafka.BatchHeaderLen+3] ^= 1
	if got, _ := walk(flipped); !slices.Equal(got, pos) {
		t.Fatalf("flipped: %v", got)
	}
	// A length that breaks the framing, and a torn tail, stop it there.
	broken := slices.Clone(data)
	binary.BigEndian.PutUint32(broken[pos[3]+8:], 3)
	if got, w := walk(broken); !slices.Equal(got, pos[:3]) || !w.Broken() || w.Pos() != pos[3] {
		t.Fatalf("broken length: %v at %d", got, w.Pos())
	}
	if got, w := walk(data[:pos[4]+20]); !slices.Equal(got, pos[:4]) || !w.Broken() || w.Pos() != pos[4] {
		t.Fatalf("torn: %v at %d", got, w.Pos())
	}
}

func TestKafkaControl(t *testing.T) {
	key := func(v, typ uint16) []byte {
		return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, v), typ)
	}
	marker := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), 4)
	for _, c := range []struct {
		rec  kafka.Record
		typ  kafka.ControlType
		fail bool
	}{
		{kafka.Record{Key: key(0, 0), Value: marker}, kafka.ControlAbort, false},
		{kafka.Record{Key: key(0, 1), Value: marker}, kafka.ControlCommit, false},
		{kafka.Record{Key: key(0, 2), Value: []byte{1}}, kafka.ControlLeaderChange, false},
		{kafka.Record{Key: key(0, 1), Value: []byte{0}}, kafka.ControlCommit, true},
		{kafka.Record{Key: []byte{0}}, 0, true},
	} {
		typ, err := KafkaControl(&c.rec)
		if typ != c.typ || (err != nil) != c.fail {
			t.Fatalf("%+v: %v %v", c.rec, typ, err)
		}
	}
}

// FuzzKafkaIndex reads any bytes as a .index and a .timeindex: no
// panic, real entries within the file, searches landing on entries.
func FuzzKafkaIndex(f *testing.F) {
	f.Add(offsetIndexBytes([2]int32{4, 300}, [2]int32{9, 700}), int64(0), int64(1005))
	f.Add(append(offsetIndexBytes([2]int32{1, 10}), make([]byte, 64)...), int64(-5), int64(3))
	f.Add(append(timeIndexBytes([2]int64{1000, 3}, [2]int64{2000, 9}), make([]byte, 36)...), int64(100), int64(1500))
	f.Add(make([]byte, 4096), int64(0), int64(0))
	f.Add([]byte{1, 2, 3}, int64(1<<62), int64(-1))
	f.Fuzz(func(t *testing.T, data []byte, base, probe int64) {
		for _, open := range []func(io.ReaderAt, int64, int64) (*KafkaIndex, error){NewKafkaOffsetIndex, NewKafkaTimeIndex} {
			x, err := open(bytes.NewReader(data), int64(len(data)), base)
			if err != nil {
				t.Fatal(err) // a reader of bytes in memory fails no read
			}
			if x.Len() < 0 || x.Len() > x.Whole() || x.Whole()*x.EntryLen()+x.Partial() != int64(len(data)) {
				t.Fatalf("Len %d Whole %d Partial %d of %d bytes", x.Len(), x.Whole(), x.Partial(), len(data))
			}
			n := int64(0)
			if err := x.Each(0, x.Whole(), func(i int64, e KafkaIndexEntry) error {
				if i != n {
					t.Fatalf("entry %d handed as %d", n, i)
				}
				n++
				return nil
			}); err != nil || n != x.Whole() {
				t.Fatalf("Each: %d entries, %v", n, err)
			}
			for _, floor := range []func(int64) (int64, bool, error){x.FloorOffset, x.FloorPos, x.FloorTime} {
				if i, ok, err := floor(probe); err != nil || ok && (i < 0 || i >= x.Len()) {
					t.Fatalf("floor(%d) = %d, %v, %v", probe, i, ok, err)
				}
			}
			_ = x.Check()
		}
	})
}

// FuzzKafkaHeaders walks any bytes as a .log by its headers: no panic,
// entries in order inside the file.
func FuzzKafkaHeaders(f *testing.F) {
	for _, s := range kafkaSegmentSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w := NewKafkaHeaders(bytes.NewReader(data), int64(len(data)), "x.log", 1<<20)
		prev := int64(-1)
		for w.Next() {
			b := w.Batch()
			if b.Pos <= prev || b.Pos+w.Size() > int64(len(data)) || w.Pos() != b.Pos+w.Size() {
				t.Fatalf("entry at %d of %d bytes after %d in %d", b.Pos, w.Size(), prev, len(data))
			}
			prev = b.Pos
		}
		if w.Err() != nil {
			t.Fatal(w.Err())
		}
		if w.Broken() == (w.Pos() >= int64(len(data))) {
			t.Fatalf("broken %v at %d of %d", w.Broken(), w.Pos(), len(data))
		}
	})
}

// FuzzKafkaTxnIndex reads any bytes as a .txnindex.
func FuzzKafkaTxnIndex(f *testing.F) {
	f.Add(txnBytes(kafka.AbortedTxn{ProducerID: 7, FirstOffset: 3, LastOffset: 10, LastStableOffset: 3}), int64(0))
	f.Add(append(txnBytes(kafka.AbortedTxn{Version: 1}), 9), int64(5))
	f.Fuzz(func(t *testing.T, data []byte, base int64) {
		n := int64(0)
		if err := EachAbortedTxn(bytes.NewReader(data), int64(len(data)), func(i int64, _ kafka.AbortedTxn) error {
			n++
			return nil
		}); err != nil || n != int64(len(data)/kafka.AbortedTxnLen) {
			t.Fatalf("%d entries of %d bytes, %v", n, len(data), err)
		}
		if err := CheckKafkaTxnIndex(bytes.NewReader(data), int64(len(data)), base); err != nil && !errors.Is(err, kafka.ErrTxnIndex) {
			t.Fatal(err)
		}
	})
}
