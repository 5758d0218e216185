package segfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/format/kafka"
)

// plainSegment is n uncompressed batches of 5 records from offset 1000.
func plainSegment(t testing.TB, n int) ([]byte, []int64) {
	var batches [][]byte
	for i := range n {
		base := int64(1000 + 5*i)
		batches = append(batches, kBatch(t, base, kafka.CodecNone, kRecords(base, 5)))
	}
	return segment(batches...)
}

func TestKafkaScanClean(t *testing.T) {
	data, pos := plainSegment(t, 6)
	s := kafkaScan(data, KafkaOptions{Base: 1000})
	got := kafkaScanAll(t, s)
	if len(got.damages) > 0 {
		t.Fatalf("damage in a clean segment: %v", got.damages[0])
	}
	if !slices.Equal(got.pos, pos) || !slices.Equal(got.bases, []int64{1000, 1005, 1010, 1015, 1020, 1025}) {
		t.Fatalf("positions %v bases %v, want %v", got.pos, got.bases, pos)
	}
	if s.Pos() != int64(len(data)) || s.Limit() != int64(len(data)) {
		t.Fatalf("Pos %d Limit %d, want %d", s.Pos(), s.Limit(), len(data))
	}
}

func TestKafkaScanBatch(t *testing.T) {
	recs := kRecords(77, 3)
	b := kBatch(t, 77, kafka.CodecNone, recs)
	s := kafkaScan(b, KafkaOptions{Base: 70})
	if !s.Next() {
		t.Fatal(s.Damage(), s.Err())
	}
	got := s.Batch()
	if got.Pos != 0 || !bytes.Equal(got.Bytes, b) || got.Magic != 2 || got.Legacy() || got.Size() != int64(len(b)) ||
		got.BaseOffset() != 77 || got.LastOffset() != 79 || got.Codec() != kafka.CodecNone ||
		got.Header.RecordsCount != 3 || got.Header.PartitionLeaderEpoch != 3 || got.Header.ProducerID != -1 {
		t.Fatalf("batch %+v", got.Header)
	}
	if s.Next() || s.Damage() != nil {
		t.Fatalf("past the only batch: %v", s.Damage())
	}
}

// TestKafkaScanTornTail cuts the last batch at every length: what a
// crash leaves of an append.
func TestKafkaScanTornTail(t *testing.T) {
	data, pos := plainSegment(t, 3)
	last := pos[2]
	for cut := last + 1; cut < int64(len(data)); cut++ {
		got := kafkaScanAll(t, kafkaScan(data[:cut], KafkaOptions{Base: 1000}))
		if len(got.pos) != 2 || len(got.damages) != 1 {
			t.Fatalf("cut at %d: batches %v, %d damages", cut, got.pos, len(got.damages))
		}
		d := got.damages[0]
		if d.Class != Incomplete || !errors.Is(d.Reason, kafka.ErrShort) || d.Pos != last || d.Resumed || d.End != cut || d.Prev != 1009 {
			t.Fatalf("cut at %d: %+v", cut, d)
		}
		want := "runs past the end of the file"
		switch {
		case format.IsZero(data[last:cut]): // the base offset's high bytes
			want = "zero bytes"
		case cut-last <= kafka.MagicAt:
			want = "less than an entry's header"
		case cut-last < kafka.BatchHeaderLen:
			want = "ends inside a batch header"
		}
		if msg := d.Error(); !strings.Contains(msg, want) || !strings.Contains(msg, "torn tail") || strings.Contains(msg, "\n") {
			t.Fatalf("cut at %d: %q, want it to say %q", cut, msg, want)
		}
	}
}

// TestKafkaScanZeroTail: Kafka preallocates a segment (file.preallocate)
// and leaves zeros after the last batch; a crash may leave zeros too.
func TestKafkaScanZeroTail(t *testing.T) {
	data, pos := plainSegment(t, 3)
	for _, zeros := range []int{1, 16, 17, 60, 61, 4096, 3 << 20} {
		file := append(bytes.Clone(data), make([]byte, zeros)...)
		got := kafkaScanAll(t, kafkaScan(file, KafkaOptions{Base: 1000}))
		if len(got.pos) != 3 || len(got.damages) != 1 {
			t.Fatalf("%d zeros: batches %v, %d damages", zeros, got.pos, len(got.damages))
		}
		d := got.damages[0]
		if d.Class != Incomplete || d.Pos != int64(len(data)) || d.End != int64(len(file)) || d.Resumed {
			t.Fatalf("%d zeros: %+v", zeros, d)
		}
		if zeros > kafka.MagicAt && (!d.Zeros || !strings.Contains(d.Error(), "zero bytes")) {
			t.Fatalf("%d zeros: %v (Zeros %v)", zeros, d, d.Zeros)
		}
	}
	_ = pos
}

func TestKafkaScanLastBatchCRC(t *testing.T) {
	data, pos := plainSegment(t, 3)
	bad := bytes.Clone(data)
	bad[pos[2]+70] ^= 0x01 // in the last batch's records
	// Nothing after it, or only zeros: torn by a crash.
	for _, tail := range [][]byte{nil, make([]byte, 1000)} {
		got := kafkaScanAll(t, kafkaScan(append(bytes.Clone(bad), tail...), KafkaOptions{Base: 1000}))
		d := got.damages[0]
		if d.Class != Incomplete || !errors.Is(d.Reason, kafka.ErrCRC) || d.Pos != pos[2] {
			t.Fatalf("%d zero bytes after: %+v", len(tail), d)
		}
	}
	// Junk after it: corrupt.
	got := kafkaScanAll(t, kafkaScan(append(bytes.Clone(bad), 1, 2, 3), KafkaOptions{Base: 1000}))
	if d := got.damages[0]; d.Class != Corrupt || !errors.Is(d.Reason, kafka.ErrCRC) || d.Resumed {
		t.Fatalf("junk after: %+v", d)
	}
}

func TestKafkaScanCorruptResyncs(t *testing.T) {
	data, pos := plainSegment(t, 6)
	wantBases := []int64{1000, 1005, 1015, 1020, 1025}
	junk := func(n int) []byte {
		r := rand.New(rand.NewPCG(uint64(n), 1))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
		reason error
		by     Rule
		bases  []int64
	}{
		{"a flipped bit in a batch's records", func(b []byte) []byte { b[pos[2]+80] ^= 0x08; return b }, kafka.ErrCRC, ByClaimedEnd, wantBases},
		{"a flipped bit in a batch's header", func(b []byte) []byte { b[pos[2]+30] ^= 0x08; return b }, kafka.ErrCRC, ByClaimedEnd, wantBases},
		{"a length grown", func(b []byte) []byte { b[pos[2]+10]++; return b }, kafka.ErrCRC, ByScan, wantBases},
		{"a length shrunk", func(b []byte) []byte { binary.BigEndian.PutUint32(b[pos[2]+8:], 100); return b }, kafka.ErrCRC, ByScan, wantBases},
		{"a length of junk", func(b []byte) []byte { binary.BigEndian.PutUint32(b[pos[2]+8:], 0x7fff0000); return b }, ErrKafkaBatchSize, ByScan, wantBases},
		{"a bad magic", func(b []byte) []byte { b[pos[2]+16] = 7; return b }, kafka.ErrMagic, ByClaimedEnd, wantBases},
		{"a batch header out of range", func(b []byte) []byte { b[pos[2]+22] = 6; return b }, kafka.ErrFormat, ByClaimedEnd, wantBases},
		{"junk inserted", func(b []byte) []byte { return slices.Insert(b, int(pos[2]), junk(3000)...) }, nil, ByScan, []int64{1000, 1005, 1010, 1015, 1020, 1025}},
		{"a batch overwritten by junk", func(b []byte) []byte { copy(b[pos[2]:pos[3]], junk(int(pos[3]-pos[2]))); return b }, nil, ByScan, wantBases},
		{"zeros inside", func(b []byte) []byte { clear(b[pos[2]:pos[3]]); return b }, errKafkaLength, ByScan, wantBases},
		{"bytes lost", func(b []byte) []byte { return slices.Delete(b, int(pos[2]+20), int(pos[2]+40)) }, nil, ByScan, wantBases},
	} {
		file := tc.damage(bytes.Clone(data))
		got := kafkaScanAll(t, kafkaScan(file, KafkaOptions{Base: 1000}))
		if !slices.Equal(got.bases, tc.bases) || len(got.damages) != 1 {
			t.Errorf("%s: bases %v, %d damages, want %v and 1", tc.name, got.bases, len(got.damages), tc.bases)
			continue
		}
		d := got.damages[0]
		if d.Class != Corrupt || !d.Resumed || d.By != tc.by || d.Pos != pos[2] || tc.reason != nil && !errors.Is(d.Reason, tc.reason) || d.Prev != 1009 {
			t.Errorf("%s: %+v", tc.name, d)
		}
		if msg := d.Error(); !strings.Contains(msg, "corrupt batch at byte") || !strings.Contains(msg, "valid batches resume") {
			t.Errorf("%s: %q", tc.name, msg)
		}
	}
}

// TestKafkaScanBatchInValue: a record's value holding a Kafka batch (of
// its own offsets) is no place to resume at; the batch after is.
func TestKafkaScanBatchInValue(t *testing.T) {
	inner := kBatch(t, 0, kafka.CodecNone, kRecords(0, 3))
	holder := kBatch(t, 1010, kafka.CodecNone, []kmsg.Record{{Value: inner}})
	data, pos := segment(kBatch(t, 1000, kafka.CodecNone, kRecords(1000, 10)), holder, kBatch(t, 1011, kafka.CodecNone, kRecords(1011, 2)))
	binary.BigEndian.PutUint32(data[pos[1]+8:], 10000) // the holder's length lies: the claimed end shows nothing
	got := kafkaScanAll(t, kafkaScan(data, KafkaOptions{Base: 1000}))
	if !slices.Equal(got.bases, []int64{1000, 1011}) || got.damages[0].End != pos[2] {
		t.Fatalf("bases %v, damage %+v", got.bases, got.damages[0])
	}
}

func TestKafkaScanOffsets(t *testing.T) {
	b := func(base int64) []byte { return kBatch(t, base, kafka.CodecNone, kRecords(base, 5)) }
	// A batch below the one before: corrupt; valid data resumes at the
	// first batch above what came before.
	data, pos := segment(b(1000), b(1005), b(990), b(1003), b(1010))
	got := kafkaScanAll(t, kafkaScan(data, KafkaOptions{Base: 1000}))
	if !slices.Equal(got.bases, []int64{1000, 1005, 1010}) || len(got.damages) != 1 {
		t.Fatalf("bases %v, %d damages", got.bases, len(got.damages))
	}
	d := got.damages[0]
	if !errors.Is(d.Reason, ErrKafkaOffset) || d.Pos != pos[2] || d.End != pos[4] || d.Offset != 990 || d.Floor != 1005 || d.Class != Corrupt ||
		!strings.Contains(d.Error(), "base offset 990 is below the previous batch's, 1005") {
		t.Fatalf("%+v: %v", d, d)
	}
	// Equal base offsets do not go backwards.
	data, _ = segment(b(1000), b(1000))
	if got := kafkaScanAll(t, kafkaScan(data, KafkaOptions{Base: 1000})); len(got.damages) != 0 {
		t.Fatalf("equal bases: %v", got.damages[0])
	}
	// Below the segment's base offset.
	data, _ = segment(b(900), b(1000))
	got = kafkaScanAll(t, kafkaScan(data, KafkaOptions{Base: 1000}))
	if d := got.damages[0]; !strings.Contains(d.Error(), "below the segment's base offset 1000") || d.End != int64(len(b(900))) || !slices.Equal(got.bases, []int64{1000}) {
		t.Fatalf("%v, bases %v", d, got.bases)
	}
}

func TestKafkaScanMaxBatch(t *testing.T) {
	data, pos := segment(kBatch(t, 0, kafka.CodecNone, kRecords(0, 2)), kBatch(t, 2, kafka.CodecNone, kRecords(2, 200)), kBatch(t, 202, kafka.CodecNone, kRecords(202, 2)))
	got := kafkaScanAll(t, kafkaScan(data, KafkaOptions{MaxBatch: 1000}))
	d := got.damages[0]
	if !errors.Is(d.Reason, ErrKafkaBatchSize) || d.Pos != pos[1] || d.End != pos[2] || !strings.Contains(d.Error(), "larger than the largest taken, 1000") {
		t.Fatalf("%v", d)
	}
}

func TestKafkaScanStartAt(t *testing.T) {
	data, pos := plainSegment(t, 4)
	s := kafkaScan(data, KafkaOptions{Base: 1000})
	s.StartAt(pos[2])
	if got := kafkaScanAll(t, s); !slices.Equal(got.bases, []int64{1010, 1015}) {
		t.Fatalf("from batch 2: %v", got.bases)
	}
	// After damage too, and earlier than before.
	bad := bytes.Clone(data)
	bad[pos[1]+16] = 9
	s = kafkaScan(bad, KafkaOptions{Base: 1000})
	for s.Next() {
	}
	if s.Damage() == nil {
		t.Fatal("no damage")
	}
	s.StartAt(0)
	if !s.Next() || s.Batch().BaseOffset() != 1000 {
		t.Fatal("StartAt(0) after damage does not read the first batch")
	}
}

// TestKafkaScanEntryAt: EntryAt judges the one entry at a position as
// the scan would, and neither moves the scan nor reads on past damage:
// an entry into a long damaged stretch costs one entry's read, not a
// byte scan of what follows.
func TestKafkaScanEntryAt(t *testing.T) {
	data, pos := plainSegment(t, 4)
	// 1 MiB of junk after the batches: a resync would read all of it.
	junk := make([]byte, 1<<20)
	for i := range junk {
		junk[i] = byte(i*7 + 3)
	}
	bad := append(bytes.Clone(data), junk...)
	bad[pos[1]+30] ^= 0x40
	cr := &countingReader{r: bytes.NewReader(bad)}
	s := NewKafkaScanner(cr, int64(len(bad)), KafkaOptions{Path: "x.log", Base: 1005})
	for _, c := range []struct {
		pos  int64
		ok   bool
		base int64
	}{
		{pos[2], true, 1010},
		{pos[1], false, 0},           // its CRC fails
		{pos[0], false, 0},           // below the segment's base offset
		{pos[2] + 1, false, 0},       // not an entry's start
		{int64(len(data)), false, 0}, // junk
		{int64(len(bad)), false, 0},  // past the end
		{-1, false, 0},
	} {
		b, ok, err := s.EntryAt(c.pos)
		if err != nil || ok != c.ok || ok && (b.BaseOffset() != c.base || b.Pos != c.pos) {
			t.Fatalf("EntryAt(%d) = %v, %v, %v; want ok %v base %d", c.pos, b, ok, err, c.ok, c.base)
		}
	}
	if s.Pos() != 0 || s.Damage() != nil {
		t.Fatalf("EntryAt moved the scan: at %d, damage %v", s.Pos(), s.Damage())
	}
	if cr.largest > kafkaChunk {
		t.Fatalf("a read of %d bytes", cr.largest)
	}
	var read int
	s = NewKafkaScanner(readCounter{bytes.NewReader(bad), &read}, int64(len(bad)), KafkaOptions{Path: "x.log", Base: 1000})
	if _, ok, _ := s.EntryAt(int64(len(data)) + 5); ok || read > 2*kafkaChunk {
		t.Fatalf("EntryAt into junk: ok %v after reading %d bytes", ok, read)
	}
}

// readCounter counts the bytes read.
type readCounter struct {
	r *bytes.Reader
	n *int
}

func (c readCounter) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	*c.n += n
	return n, err
}

// countingReader records its largest read.
type countingReader struct {
	r       io.ReaderAt
	largest int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.largest = max(c.largest, len(p))
	return c.r.ReadAt(p, off)
}

// TestKafkaScanBlocks: reads are blocks of the chunk, or one batch when
// larger, never the file; batches across blocks read the same.
func TestKafkaScanBlocks(t *testing.T) {
	var batches [][]byte
	for i := range 40 {
		base := int64(10 * i)
		recs := kRecords(base, 10)
		if i == 20 {
			recs[9].Value = bytes.Repeat([]byte("x"), 20000) // larger than a block
		}
		batches = append(batches, kBatch(t, base, kafka.CodecNone, recs))
	}
	data, pos := segment(batches...)
	for _, chunk := range []int{64, 1000, 4096} {
		cr := &countingReader{r: bytes.NewReader(data)}
		s := NewKafkaScanner(cr, int64(len(data)), KafkaOptions{Chunk: chunk})
		got := kafkaScanAll(t, s)
		if !slices.Equal(got.pos, pos) || len(got.damages) > 0 {
			t.Fatalf("chunk %d: positions %v, damages %v", chunk, got.pos, got.damages)
		}
		if cr.largest > max(chunk, len(batches[20])) {
			t.Fatalf("chunk %d: a read of %d bytes", chunk, cr.largest)
		}
	}
}

func TestKafkaScanLegacy(t *testing.T) {
	v0 := kLegacy(0, 0, 0, 0, []byte("k0"), []byte("v0"))
	v1 := kLegacy(1, 1, 0, fixtureTS, nil, []byte("v1"))
	data, pos := segment(v0, v1, kBatch(t, 2, kafka.CodecNone, kRecords(2, 3)))
	s := kafkaScan(data, KafkaOptions{})
	var magics []int8
	for s.Next() {
		magics = append(magics, s.Batch().Magic)
	}
	if s.Damage() != nil || !slices.Equal(magics, []int8{0, 1, 2}) {
		t.Fatalf("magics %v, damage %v", magics, s.Damage())
	}
	// A legacy message's CRC is checked as a batch's is.
	bad := bytes.Clone(data)
	bad[pos[1]+int64(len(v1))-1] ^= 1
	got := kafkaScanAll(t, kafkaScan(bad, KafkaOptions{}))
	if d := got.damages[0]; !errors.Is(d.Reason, kafka.ErrCRC) || d.Pos != pos[1] || d.By != ByClaimedEnd || !slices.Equal(got.bases, []int64{0, 2}) {
		t.Fatalf("%+v, bases %v", d, got.bases)
	}
}

func TestKafkaScanEmpty(t *testing.T) {
	s := kafkaScan(nil, KafkaOptions{})
	if s.Next() || s.Damage() != nil || s.Err() != nil {
		t.Fatal("an empty file is not simply empty")
	}
}

// failingReader fails every read past a position.
type failingReader struct {
	r     io.ReaderAt
	after int64
}

var errDisk = errors.New("input/output error")

func (f failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.after {
		return 0, errDisk
	}
	return f.r.ReadAt(p, off)
}

func TestKafkaScanIOError(t *testing.T) {
	data, pos := plainSegment(t, 3)
	s := NewKafkaScanner(failingReader{bytes.NewReader(data), pos[1] + 10}, int64(len(data)), KafkaOptions{Base: 1000, Chunk: 64})
	n := 0
	for s.Next() {
		n++
	}
	if !errors.Is(s.Err(), errDisk) || s.Damage() != nil || n != 1 {
		t.Fatalf("%d batches, err %v, damage %v", n, s.Err(), s.Damage())
	}
}

// TestKafkaResyncPassesLegacyShapedJunk: in damage, bytes shaped like a
// legacy message's header (a small offset, magic 0, a size of 2 MiB)
// whose fields cannot fit that size are passed over without reading the
// size they claim. Before, the search read and checked the claimed extent
// at each, which made resync quadratic in the damage's length (a 128 MiB
// Kafka segment of 1 KiB records with a bit flipped every 4 KiB: 8.4 s
// to verify, where the zeros of each batch header's timestamps read as
// such a message).
func TestKafkaResyncPassesLegacyShapedJunk(t *testing.T) {
	first := kBatch(t, 0, kafka.CodecNone, kRecords(0, 5))
	first[30] ^= 1 // its CRC fails
	junk := make([]byte, 3<<20)
	const headers, claimed = 20, 2 << 20
	for i := range headers {
		h := junk[i*50_000:]
		binary.BigEndian.PutUint64(h, 7)                // an offset above the damage's
		binary.BigEndian.PutUint32(h[8:], claimed)      // a size inside the file
		binary.BigEndian.PutUint32(h[18:], 0x7fff_fff0) // a key longer than that
		copy(h[22:], "not a message, though shaped as one")
	}
	last := kBatch(t, 50, kafka.CodecNone, kRecords(50, 5))
	data, pos := segment(first, junk, last)
	var read int
	s := NewKafkaScanner(readCounter{bytes.NewReader(data), &read}, int64(len(data)), KafkaOptions{Path: "x.log"})
	got := kafkaScanAll(t, s)
	if !slices.Equal(got.pos, pos[2:]) || len(got.damages) != 1 {
		t.Fatalf("batches at %v, damages %v; want the last batch, at %d, after one", got.pos, got.damages, pos[2])
	}
	// Reading each claimed extent would be 20 x 2 MiB.
	if read > 6*len(data) {
		t.Fatalf("read %d bytes of a %d-byte segment", read, len(data))
	}
}

// TestKafkaLegacyPrecheckKeepsMessages: the check before the CRC takes
// every legacy message the scan takes, of both magics, with and without
// a key, and a compressed wrapper.
func TestKafkaLegacyPrecheckKeepsMessages(t *testing.T) {
	inner := kLegacy(1, 0, 0, 5, nil, []byte("v"))
	for _, m := range [][]byte{
		kLegacy(0, 3, 0, 0, nil, []byte("value")),
		kLegacy(0, 3, 0, 0, []byte("key"), nil),
		kLegacy(1, 4, 0, 9, []byte("key"), []byte("value")),
		kLegacy(1, 4, 0, 9, nil, nil),
		kLegacy(1, 4, 1, 9, nil, kgoCompress(t, kafka.CodecGzip, inner)),
	} {
		data, pos := segment(kBatch(t, 0, kafka.CodecNone, kRecords(0, 1)), m)
		data[30] ^= 1 // the batch fails: the message is found by the search
		got := kafkaScanAll(t, kafkaScan(data, KafkaOptions{}))
		if !slices.Equal(got.pos, pos[1:]) {
			t.Errorf("message %x: entries at %v, want %v", m[:24], got.pos, pos[1:])
		}
	}
}
