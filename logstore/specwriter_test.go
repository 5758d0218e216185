package logstore_test

// An independent writer of the on-disk format, written from docs/format.md §2 and §4
// with encoding/binary and hash/crc32 only. It deliberately uses neither
// package format nor logstore's Writer: it stands for "data written by
// another program that follows the format" (a broker), so that tests reading
// its output check logstore against the spec rather than against itself.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// swRecord is one record as docs/format.md §2 lays it out.
type swRecord struct {
	Offset    uint64
	Timestamp int64  // Unix nanoseconds
	Key       []byte // nil or empty: no key (keylen 0)
	Value     []byte
}

// swEncode appends r's docs/format.md §2 encoding to dst: a 28-byte header
// (offset u64, size u32, crc u32, timestamp i64, keylen u32, big-endian),
// then key, then value. The CRC is CRC-32 IEEE over timestamp ‖ key ‖ value.
func swEncode(dst []byte, r swRecord) []byte {
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(r.Timestamp))
	crc := crc32.NewIEEE()
	crc.Write(ts[:])
	crc.Write(r.Key)
	crc.Write(r.Value)

	dst = binary.BigEndian.AppendUint64(dst, r.Offset)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(r.Key)+len(r.Value)))
	dst = binary.BigEndian.AppendUint32(dst, crc.Sum32())
	dst = append(dst, ts[:]...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(r.Key)))
	dst = append(dst, r.Key...)
	return append(dst, r.Value...)
}

// swHeaderLen is docs/format.md §2's header length, restated here so the spec writer
// does not lean on format.HeaderLen.
const swHeaderLen = 28

// swEntryLen is the length of one .index / .timeindex entry (docs/format.md §4).
const swEntryLen = 16

// swEntry encodes one index entry: offset u64, then position (.index) or
// timestamp (.timeindex) as 8 big-endian bytes.
func swEntry(dst []byte, offset uint64, v int64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, offset)
	return binary.BigEndian.AppendUint64(dst, uint64(v))
}

// swName is a segment file name: the base offset in exactly 20 decimal
// digits, zero-padded, then the extension.
func swName(base uint64, ext string) string { return fmt.Sprintf("%020d%s", base, ext) }

// swSegment is one segment to write. Records carry their own offsets, so
// a test can write segments that break the rules on purpose (overlaps,
// wrong offsets).
type swSegment struct {
	Base     uint64
	Records  []swRecord
	Interval int // index interval N (docs/format.md §4); 0 means 1
}

// swLayout is where swWriteSegment put each record of a segment.
type swLayout struct {
	Pos []int64 // byte position of each record's header
	End int64   // size of the .log
}

// swSegmentFiles returns the bytes of a segment's .log, .index and
// .timeindex. An entry goes to the indexes for the k-th record (k from 0)
// when k % Interval == 0.
func swSegmentFiles(seg swSegment) (log, index, timeindex []byte, lay swLayout) {
	n := seg.Interval
	if n <= 0 {
		n = 1
	}
	for k, r := range seg.Records {
		pos := int64(len(log))
		lay.Pos = append(lay.Pos, pos)
		if k%n == 0 {
			index = swEntry(index, r.Offset, pos)
			timeindex = swEntry(timeindex, r.Offset, r.Timestamp)
		}
		log = swEncode(log, r)
	}
	lay.End = int64(len(log))
	return log, index, timeindex, lay
}

// swWriteSegment writes a segment's three files into dir.
func swWriteSegment(tb testing.TB, dir string, seg swSegment) swLayout {
	tb.Helper()
	log, index, timeindex, lay := swSegmentFiles(seg)
	swWriteFile(tb, filepath.Join(dir, swName(seg.Base, ".log")), log)
	swWriteFile(tb, filepath.Join(dir, swName(seg.Base, ".index")), index)
	swWriteFile(tb, filepath.Join(dir, swName(seg.Base, ".timeindex")), timeindex)
	return lay
}

// swWritePartition makes the partition directory dir and writes segs into
// it, returning each segment's layout.
func swWritePartition(tb testing.TB, dir string, segs ...swSegment) []swLayout {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	lays := make([]swLayout, len(segs))
	for i, seg := range segs {
		lays[i] = swWriteSegment(tb, dir, seg)
	}
	return lays
}

func swWriteFile(tb testing.TB, path string, b []byte) {
	tb.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// Damage, applied to files after writing them.

// swFlip XORs the byte at pos of path with mask.
func swFlip(tb testing.TB, path string, pos int64, mask byte) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if pos >= int64(len(b)) {
		tb.Fatalf("flip %s at %d: file has %d bytes", path, pos, len(b))
	}
	b[pos] ^= mask
	swWriteFile(tb, path, b)
}

// swPut overwrites bytes of path at pos.
func swPut(tb testing.TB, path string, pos int64, p []byte) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if pos+int64(len(p)) > int64(len(b)) {
		tb.Fatalf("put %d bytes at %d of %s: file has %d bytes", len(p), pos, path, len(b))
	}
	copy(b[pos:], p)
	swWriteFile(tb, path, b)
}

// swTruncate cuts path to size bytes.
func swTruncate(tb testing.TB, path string, size int64) {
	tb.Helper()
	if err := os.Truncate(path, size); err != nil {
		tb.Fatal(err)
	}
}

// swAppend adds bytes at the end of path.
func swAppend(tb testing.TB, path string, p []byte) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		tb.Fatal(err)
	}
	_, err = f.Write(p)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// swInsert puts bytes into path at pos, moving the rest of the file up.
func swInsert(tb testing.TB, path string, pos int64, p []byte) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if pos > int64(len(b)) {
		tb.Fatalf("insert at %d of %s: file has %d bytes", pos, path, len(b))
	}
	swWriteFile(tb, path, append(b[:pos:pos], append(p, b[pos:]...)...))
}

// swSetEntry overwrites the i-th entry of an index file.
func swSetEntry(tb testing.TB, path string, i int, offset uint64, v int64) {
	tb.Helper()
	swPut(tb, path, int64(i)*swEntryLen, swEntry(nil, offset, v))
}

// swSizeField is the byte position of the size field in a header.
const swSizeField = 8

// swSpecExampleHex is docs/format.md §2's worked example, copied from it.
const swSpecExampleHex = `
00000000000000000000000b73b4c3d217979cfe362a000000000006757365722d3168656c6c6f
00000000000000010000000bc23277ba17979cfe3c1fe10000000006757365722d32776f726c64
000000000000000200000009e14ccc3d17979cfe4215c20000000006757365722d31666f6f
`

// The spec writer is only worth something if it writes what the spec says:
// it must reproduce the worked example byte for byte.
func TestSpecWriterWorkedExample(t *testing.T) {
	want, err := hex.DecodeString(strings.Join(strings.Fields(swSpecExampleHex), ""))
	if err != nil {
		t.Fatal(err)
	}
	log, index, timeindex, lay := swSegmentFiles(swSegment{Records: []swRecord{
		{0, 1700000000000000000, []byte("user-1"), []byte("hello")},
		{1, 1700000000100000000, []byte("user-2"), []byte("world")},
		{2, 1700000000200000000, []byte("user-1"), []byte("foo")},
	}})
	if !bytes.Equal(log, want) {
		t.Fatalf("spec writer:\n got %x\nwant %x", log, want)
	}
	if fmt.Sprint(lay.Pos) != "[0 39 78]" || lay.End != 115 {
		t.Errorf("positions %v, end %d; spec says [0 39 78], 115", lay.Pos, lay.End)
	}
	wantIndex := "0000000000000000" + "0000000000000000" +
		"0000000000000001" + "0000000000000027" +
		"0000000000000002" + "000000000000004e"
	if got := hex.EncodeToString(index); got != wantIndex {
		t.Errorf(".index %s, want %s", got, wantIndex)
	}
	wantTime := "0000000000000000" + "17979cfe362a0000" +
		"0000000000000001" + "17979cfe3c1fe100" +
		"0000000000000002" + "17979cfe4215c200"
	if got := hex.EncodeToString(timeindex); got != wantTime {
		t.Errorf(".timeindex %s, want %s", got, wantTime)
	}
}

// docs/format.md §4: with interval N, the k-th record of a segment is indexed when
// k % N == 0, counting k from the segment's first record.
func TestSpecWriterSparseIndex(t *testing.T) {
	var recs []swRecord
	for o := uint64(100); o < 116; o++ {
		recs = append(recs, swRecord{Offset: o, Value: []byte("v")})
	}
	_, index, timeindex, lay := swSegmentFiles(swSegment{Base: 100, Records: recs, Interval: 7})
	if len(index) != 3*swEntryLen || len(timeindex) != 3*swEntryLen {
		t.Fatalf("%d and %d index bytes, want 3 entries each", len(index), len(timeindex))
	}
	for i, k := range []int{0, 7, 14} {
		e := index[i*swEntryLen:]
		if o, p := binary.BigEndian.Uint64(e), int64(binary.BigEndian.Uint64(e[8:])); o != 100+uint64(k) || p != lay.Pos[k] {
			t.Errorf("entry %d = {%d %d}, want {%d %d}", i, o, p, 100+k, lay.Pos[k])
		}
	}
	if lay.Pos[1] != swHeaderLen+1 {
		t.Errorf("second record at %d, want %d", lay.Pos[1], swHeaderLen+1)
	}
}
