package logstore_test

// Golden partitions: small partition directories under ../testdata/golden,
// written by the spec writer (specwriter_test.go, not logstore's Writer) and
// then damaged the way crashes, disks and other programs damage them. Each
// is named after what it reproduces.
//
//	go test ./logstore -run TestGolden -update   # rewrite them
//
// Without -update, TestGoldenGenerate checks that the committed files are
// exactly what the generator writes, and TestGoldenRead reads the committed
// files and compares with expectations written out by hand in goldenCases
// (never derived from the files).

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

var goldenUpdate = flag.Bool("update", false, "rewrite the golden partitions in ../testdata/golden")

const goldenDir = "../testdata/golden"

// goldenT0 is the timestamp of offset 0 in the generated fixtures (the
// spec example's first timestamp); offset o gets goldenT0 + o µs.
const goldenT0 = 1700000000000000000

// genRecord is the generator's everyday record: key "k<o>", value "v<o>".
// With a one-digit offset it is 32 bytes long, so record o of a segment
// based at b starts at byte 32*(o-b).
func genRecord(o uint64) swRecord {
	return swRecord{
		Offset:    o,
		Timestamp: goldenT0 + int64(o)*1000,
		Key:       []byte("k" + strconv.FormatUint(o, 10)),
		Value:     []byte("v" + strconv.FormatUint(o, 10)),
	}
}

// genRecords returns genRecord(o) for o in [from, to).
func genRecords(from, to uint64) []swRecord {
	var rs []swRecord
	for o := from; o < to; o++ {
		rs = append(rs, genRecord(o))
	}
	return rs
}

func genSeg(from, to uint64) swSegment { return swSegment{Base: from, Records: genRecords(from, to)} }

// genOffsets returns genRecord(o) for each o.
func genOffsets(offsets ...uint64) []swRecord {
	var rs []swRecord
	for _, o := range offsets {
		rs = append(rs, genRecord(o))
	}
	return rs
}

// forgedSeg is genSeg(from, to) with the value of record holder made of
// records shaped as the offsets forged: a log stored as a value, say.
func forgedSeg(from, to, holder uint64, forged ...uint64) swSegment {
	seg := genSeg(from, to)
	seg.Records[holder-from].Value = forgedValue(forged...)
	return seg
}

// forgedValue is genRecord's records with the offsets forged and the
// values "f<o>", one after the other.
func forgedValue(forged ...uint64) []byte {
	var value []byte
	for _, o := range forged {
		r := genRecord(o)
		r.Value = []byte("f" + strconv.FormatUint(o, 10))
		value = swEncode(value, r)
	}
	return value
}

// otherValues gives records the values "w<o>", to tell them from
// genRecord's with the same offsets.
func otherValues(rs []swRecord) []swRecord {
	for i := range rs {
		rs[i].Value = []byte("w" + strconv.FormatUint(rs[i].Offset, 10))
	}
	return rs
}

func removeIndexes(tb testing.TB, dir string, base uint64) {
	tb.Helper()
	removeFile(tb, segPath(dir, base, ".index"))
	removeFile(tb, segPath(dir, base, ".timeindex"))
}

func segPath(dir string, base uint64, ext string) string {
	return filepath.Join(dir, swName(base, ext))
}

func removeFile(tb testing.TB, path string) {
	tb.Helper()
	if err := os.Remove(path); err != nil {
		tb.Fatal(err)
	}
}

// goldenFixtures builds each golden partition into dir.
var goldenFixtures = []struct {
	name  string
	build func(tb testing.TB, dir string)
}{
	{"clean", func(tb testing.TB, dir string) {
		binary := make([]byte, 256)
		for i := range binary {
			binary[i] = byte(i)
		}
		swWritePartition(tb, dir,
			swSegment{Base: 0, Records: []swRecord{
				{0, goldenT0, []byte("user-1"), []byte("hello")},
				{1, goldenT0 + 1000, nil, []byte("keyless")},
				{2, goldenT0 + 2000, []byte("k"), nil},
				{3, goldenT0 + 2000, nil, nil}, // shares offset 2's clock reading
			}},
			swSegment{Base: 4, Records: []swRecord{
				{4, goldenT0 + 3000, []byte{0xff, 0xfe, 0x00, 0x80}, []byte{0x00, 0xc3, 0x28, 0xff, 0x0a}},
				{5, goldenT0 + 4000, []byte("user-2"), []byte("world")},
			}},
			swSegment{Base: 6, Records: []swRecord{
				{6, goldenT0 + 5000, []byte("user-1"), []byte("foo")},
				{7, goldenT0 + 6000, nil, binary},
				{8, goldenT0 + 7000, []byte("x"), []byte("y")},
			}},
		)
	}},
	{"spec-example", func(tb testing.TB, dir string) {
		// docs/format.md §2's worked example, copied from format's pinned golden file,
		// as the only segment of a partition. It comes without indexes.
		b, err := os.ReadFile("../format/testdata/spec-example.log")
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		swWriteFile(tb, segPath(dir, 0, ".log"), b)
	}},
	{"empty-active-segment", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 3))
	}},
	{"gap-between-segments", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(10, 13), genSeg(20, 22))
	}},
	{"empty-active-below-floor", func(tb testing.TB, dir string) {
		// An empty active segment named inside the offsets of the one
		// before.
		swWritePartition(tb, dir, genSeg(0, 5), genSeg(3, 3))
	}},
	{"torn-tail", func(tb testing.TB, dir string) {
		// Offset 6 (at byte 96) has its header and half its body.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 7))
		swTruncate(tb, segPath(dir, 3, ".log"), 96+30)
	}},
	{"torn-tail-mid-header", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 7))
		swTruncate(tb, segPath(dir, 3, ".log"), 96+10)
	}},
	{"zero-tail", func(tb testing.TB, dir string) {
		// The file grew over offsets 6 and 7 (bytes 96..160) and 36 more
		// bytes, but only zeros reached the disk; their index entries did.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 8))
		path := segPath(dir, 3, ".log")
		swPut(tb, path, 96, make([]byte, 64))
		swAppend(tb, path, make([]byte, 36))
	}},
	{"crc-flip-closed", func(tb testing.TB, dir string) {
		// Offset 2 starts at 64; its value "v2" at 64+28+2.
		swWritePartition(tb, dir, genSeg(0, 5), genSeg(5, 8))
		swFlip(tb, segPath(dir, 0, ".log"), 64+28+2, 0x01)
	}},
	{"crc-flip-active-with-valid-after", func(tb testing.TB, dir string) {
		// Offset 5 is at byte 64 of segment 3; offsets 6 and 7 follow.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 8))
		swFlip(tb, segPath(dir, 3, ".log"), 64+28+2, 0x01)
	}},
	{"crc-flip-active-with-valid-after-no-index", func(tb testing.TB, dir string) {
		// As above, but the valid records after the damage can only be
		// found by scanning: the active segment has no indexes.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 8))
		swFlip(tb, segPath(dir, 3, ".log"), 64+28+2, 0x01)
		removeFile(tb, segPath(dir, 3, ".index"))
		removeFile(tb, segPath(dir, 3, ".timeindex"))
	}},
	{"crc-flip-last-record-active", func(tb testing.TB, dir string) {
		// Offset 5 is the active segment's last record, at byte 64.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 6))
		swFlip(tb, segPath(dir, 3, ".log"), 64+28+2, 0x01)
	}},
	{"truncated-closed", func(tb testing.TB, dir string) {
		// Offset 4 (at byte 128) keeps its header and half its body.
		swWritePartition(tb, dir, genSeg(0, 5), genSeg(5, 7))
		swTruncate(tb, segPath(dir, 0, ".log"), 128+30)
	}},
	{"keylen-over-size-closed", func(tb testing.TB, dir string) {
		// Offset 1 (at byte 32) claims a 16-byte key in a 4-byte body.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 4))
		swPut(tb, segPath(dir, 0, ".log"), 32+24, []byte{0, 0, 0, 16})
	}},
	{"wrong-offset-closed", func(tb testing.TB, dir string) {
		// Offset 2 (at byte 64) says it is offset 7; the CRC does not
		// cover the offset, only continuity does.
		swWritePartition(tb, dir, genSeg(0, 4), genSeg(4, 5))
		swPut(tb, segPath(dir, 0, ".log"), 64, []byte{0, 0, 0, 0, 0, 0, 0, 7})
	}},
	{"wrong-offset-last-record-active", func(tb testing.TB, dir string) {
		// The active segment's last record (offset 5, at byte 64) says 9.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 6))
		swPut(tb, segPath(dir, 3, ".log"), 64, []byte{0, 0, 0, 0, 0, 0, 0, 9})
	}},
	{"max-offset-indexed-last-active", func(tb testing.TB, dir string) {
		// The active segment's last record (offset 5, at byte 64) says
		// 2^64-1, and so does its .index entry: an entry naming a record
		// with its own offset does not make the offsets up to it records.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 6))
		swPut(tb, segPath(dir, 3, ".log"), 64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		swSetEntry(tb, segPath(dir, 3, ".index"), 2, math.MaxUint64, 64)
	}},
	{"offset-flip-last-closed", func(tb testing.TB, dir string) {
		// A closed segment's last record (offset 5, at byte 160) says 6,
		// the next segment's first offset; its .index entry says 5.
		swWritePartition(tb, dir, genSeg(0, 6), genSeg(6, 8))
		swPut(tb, segPath(dir, 0, ".log"), 160, []byte{0, 0, 0, 0, 0, 0, 0, 6})
	}},
	{"size-lie-run-then-garbage", func(tb testing.TB, dir string) {
		// Offset 0's size ends its extent inside offset 17, offsets 1..15
		// follow intact, then 10 bytes of garbage where offset 16 was and
		// offsets 16..23: the run 1..15 ends inside the extent, and the
		// writer's index names each of its records.
		lays := swWritePartition(tb, dir, genSeg(0, 24), genSeg(24, 26))
		log, idx := segPath(dir, 0, ".log"), segPath(dir, 0, ".index")
		pos := lays[0].Pos
		size := uint32(pos[17] + 10 + 8 - swHeaderLen)
		swPut(tb, log, 8, []byte{byte(size >> 24), byte(size >> 16), byte(size >> 8), byte(size)})
		swInsert(tb, log, pos[16], []byte("garbage!!!"))
		for o := 16; o < 24; o++ {
			swSetEntry(tb, idx, o, uint64(o), pos[o]+10)
		}
	}},
	{"index-past-eof", func(tb testing.TB, dir string) {
		// Power loss: the active segment's indexes reached the disk for
		// offsets 3..12, its .log only up to offset 8 (6 records, 192
		// bytes); entries for 9..12 point at 192..288.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 13))
		swTruncate(tb, segPath(dir, 3, ".log"), 192)
	}},
	{"sparse-index-7", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir,
			swSegment{Base: 0, Records: genRecords(0, 20), Interval: 7},
			swSegment{Base: 20, Records: genRecords(20, 30), Interval: 7},
		)
	}},
	{"missing-index", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 10), genSeg(10, 15))
		removeFile(tb, segPath(dir, 0, ".index"))
		removeFile(tb, segPath(dir, 10, ".index"))
		removeFile(tb, segPath(dir, 10, ".timeindex"))
	}},
	{"index-truncated-mid-entry", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 10), genSeg(10, 15))
		swTruncate(tb, segPath(dir, 0, ".index"), 2*16+9)
		swTruncate(tb, segPath(dir, 10, ".index"), 7)
		swTruncate(tb, segPath(dir, 10, ".timeindex"), 3*16+5)
	}},
	{"lying-index", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 10), genSeg(10, 15))
		idx := segPath(dir, 0, ".index")
		swSetEntry(tb, idx, 4, 7, 128) // claims offset 7 where offset 4 is
		swSetEntry(tb, idx, 6, 6, 96)  // offset 6, but the position of offset 3
		swSetEntry(tb, idx, 8, 8, 5)   // a position inside offset 0
		swSetEntry(tb, idx, 9, 9, -32) // a negative position
		active := segPath(dir, 10, ".index")
		swSetEntry(tb, active, 4, 14, 34) // the active segment's last entry: offset 11's position
	}},
	{"overlap", func(tb testing.TB, dir string) {
		// Segment 3 starts below the end of segment 0 (offsets 0..4).
		var second []swRecord
		for o := uint64(3); o < 7; o++ {
			r := genRecord(o)
			r.Value = []byte("w" + strconv.FormatUint(o, 10))
			second = append(second, r)
		}
		swWritePartition(tb, dir, genSeg(0, 5), swSegment{Base: 3, Records: second})
	}},
	{"foreign-junk", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 5))
		// Valid-looking records in files that are not segments: reading
		// any of them would show up as wrong values or offsets.
		junk := func(o uint64) []byte {
			r := genRecord(o)
			r.Value = []byte("junk")
			return swEncode(nil, r)
		}
		swWriteFile(tb, filepath.Join(dir, ".gaps.json"), []byte(`[{"from":100,"to":200,"why":"salvage"}]`+"\n"))
		swWriteFile(tb, filepath.Join(dir, "foo.txt"), []byte("not a segment\n"))
		swWriteFile(tb, filepath.Join(dir, swName(0, ".log.deleted")), append(junk(0), junk(1)...))
		swWriteFile(tb, filepath.Join(dir, swName(7, ".log.tmp")), junk(7))
		swWriteFile(tb, filepath.Join(dir, "123.log"), junk(123))
		swWriteFile(tb, filepath.Join(dir, swName(50, ".index")), swEntry(nil, 50, 0))
		swWriteFile(tb, filepath.Join(dir, swName(50, ".timeindex")), swEntry(nil, 50, goldenT0))
	}},

	// The fixtures below are the agreement test's (agreement_test.go):
	// each is damage that some command's view could judge differently
	// from the others.

	{"hole-active", func(tb testing.TB, dir string) {
		// Offset 3 is missing inside the active segment; every record is
		// CRC-valid and indexed where it is.
		swWritePartition(tb, dir, swSegment{Base: 0, Records: genOffsets(0, 1, 2, 4)})
	}},
	{"hole-active-no-index", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, swSegment{Base: 0, Records: genOffsets(0, 1, 2, 4)})
		removeIndexes(tb, dir, 0)
	}},
	{"hole-closed", func(tb testing.TB, dir string) {
		// Offsets 3..9 are missing inside a closed segment: offset 10 is
		// at byte 96.
		swWritePartition(tb, dir, swSegment{Base: 0, Records: genOffsets(0, 1, 2, 10, 11, 12)}, genSeg(13, 15))
	}},
	{"hole-wide-active", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, swSegment{Base: 0, Records: genOffsets(0, 1, 2, 10, 11, 12)})
	}},
	{"crc-flip-forged-15", func(tb testing.TB, dir string) {
		// Offset 14 (at byte 136 of the active segment) holds records 15
		// and 16 in its value, and its key is flipped.
		lays := swWritePartition(tb, dir, genSeg(0, 10), forgedSeg(10, 18, 14, 15, 16))
		swFlip(tb, segPath(dir, 10, ".log"), lays[1].Pos[4]+swHeaderLen, 0x01)
	}},
	{"crc-flip-forged-15-closed", func(tb testing.TB, dir string) {
		lays := swWritePartition(tb, dir, genSeg(0, 10), forgedSeg(10, 18, 14, 15, 16), genSeg(18, 20))
		swFlip(tb, segPath(dir, 10, ".log"), lays[1].Pos[4]+swHeaderLen, 0x01)
	}},
	{"crc-flip-forged-15-real-15-too", func(tb testing.TB, dir string) {
		// As crc-flip-forged-15, and the real offset 15 after it is
		// damaged too: only the forged 15 in offset 14's value checks out.
		lays := swWritePartition(tb, dir, genSeg(0, 10), forgedSeg(10, 18, 14, 15, 16))
		swFlip(tb, segPath(dir, 10, ".log"), lays[1].Pos[4]+swHeaderLen, 0x01)
		swFlip(tb, segPath(dir, 10, ".log"), lays[1].Pos[5]+swHeaderLen, 0x01)
	}},
	{"crc-flip-forged-15-real-15-too-no-index", func(tb testing.TB, dir string) {
		lays := swWritePartition(tb, dir, genSeg(0, 10), forgedSeg(10, 18, 14, 15, 16))
		swFlip(tb, segPath(dir, 10, ".log"), lays[1].Pos[4]+swHeaderLen, 0x01)
		swFlip(tb, segPath(dir, 10, ".log"), lays[1].Pos[5]+swHeaderLen, 0x01)
		removeIndexes(tb, dir, 10)
	}},
	{"crc-flip-last-active-shaped", func(tb testing.TB, dir string) {
		// The active segment's last record (offset 5, at byte 64) fails
		// its CRC, and its value ends in a record shaped as offset 6 that
		// ends the data.
		lays := swWritePartition(tb, dir, genSeg(0, 3), forgedSeg(3, 6, 5, 6))
		swFlip(tb, segPath(dir, 3, ".log"), lays[1].Pos[2]+swHeaderLen, 0x01)
	}},
	{"lying-last-index-active", func(tb testing.TB, dir string) {
		// Offset 12's value (at byte 68+31 of the active segment) holds a
		// record shaped as offset 14, where the last .index entry points.
		lays := swWritePartition(tb, dir, genSeg(0, 10), forgedSeg(10, 15, 12, 14))
		swSetEntry(tb, segPath(dir, 10, ".index"), 4, 14, lays[1].Pos[2]+swHeaderLen+3)
	}},
	{"lying-index-chain", func(tb testing.TB, dir string) {
		// Offset 3's value holds records shaped as offsets 4 and 5, and
		// the .index entries of 4 and 5 point at them: each leads to the
		// next, inside offset 3's value.
		lays := swWritePartition(tb, dir, forgedSeg(0, 10, 3, 4, 5), genSeg(10, 12))
		forged := lays[0].Pos[3] + swHeaderLen + int64(len("k3"))
		swSetEntry(tb, segPath(dir, 0, ".index"), 4, 4, forged)
		swSetEntry(tb, segPath(dir, 0, ".index"), 5, 5, forged+32)
	}},
	{"duplicate-indexed", func(tb testing.TB, dir string) {
		// Offset 3 twice (at bytes 96 and 128), both indexed.
		swWritePartition(tb, dir, swSegment{Base: 0, Records: genOffsets(0, 1, 2, 3, 3, 4, 5, 6)}, genSeg(7, 9))
	}},
	{"torn-tail-shaped", func(tb testing.TB, dir string) {
		// Offset 6 (at byte 96 of the active segment) was cut right after
		// a record shaped as offset 6 in its value: a torn tail whose
		// surviving bytes end in a sound record with the expected offset.
		seg := forgedSeg(3, 7, 6, 6)
		seg.Records[3].Value = append(seg.Records[3].Value, "padding"...)
		lays := swWritePartition(tb, dir, genSeg(0, 3), seg)
		swTruncate(tb, segPath(dir, 3, ".log"), lays[1].End-int64(len("padding")))
	}},
	{"misnamed-above", func(tb testing.TB, dir string) {
		// The active segment named 10 holds offsets 5..7.
		swWritePartition(tb, dir, genSeg(0, 5), swSegment{Base: 10, Records: genRecords(5, 8)})
	}},
	{"misnamed-below", func(tb testing.TB, dir string) {
		// The active segment named 3 holds offsets 5..7: its name is below
		// the end of the segment before.
		swWritePartition(tb, dir, genSeg(0, 5), swSegment{Base: 3, Records: genRecords(5, 8)})
	}},
	{"misnamed-first", func(tb testing.TB, dir string) {
		// The only segment, named 10, holds offsets 5..7.
		swWritePartition(tb, dir, swSegment{Base: 10, Records: genRecords(5, 8)})
	}},
	{"crc-flip-first-misnamed", func(tb testing.TB, dir string) {
		// The only segment, named 4, holds offsets 2..6; offset 2's key
		// (at byte 28) is flipped. Nothing is before it: valid data
		// resumes at offset 3, below its name.
		swWritePartition(tb, dir, swSegment{Base: 4, Records: genRecords(2, 7)})
		swFlip(tb, segPath(dir, 4, ".log"), swHeaderLen, 0x01)
	}},
	{"misnamed-below-one-record", func(tb testing.TB, dir string) {
		// The active segment named 3 holds one record, offset 5: where
		// segment 0 (offsets 0..4) ends.
		swWritePartition(tb, dir, genSeg(0, 5), swSegment{Base: 3, Records: genRecords(5, 6)})
	}},
	{"misnamed-closed", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 5), swSegment{Base: 7, Records: genRecords(5, 8)}, genSeg(8, 10))
	}},
	{"crc-flip-before-misnamed", func(tb testing.TB, dir string) {
		// Offset 2 (at byte 64) is damaged; the segment after, named 5,
		// holds offsets 6..8: salvage's rescued 3..5 overlap only its name.
		swWritePartition(tb, dir, genSeg(0, 6), swSegment{Base: 5, Records: genRecords(6, 9)})
		swFlip(tb, segPath(dir, 0, ".log"), 64+swHeaderLen, 0x01)
	}},
	{"hole-before-overlap", func(tb testing.TB, dir string) {
		// Segment 6 skips offset 9: its last record is 10 (value w10).
		// Segment 10 starts with another offset 10, below segment 6's end.
		swWritePartition(tb, dir, swSegment{Base: 6, Records: append(genOffsets(6, 7, 8), otherValues(genOffsets(10))...)}, genSeg(10, 14))
	}},
	{"overlap-entire-active", func(tb testing.TB, dir string) {
		// The active segment's records (1..3) are all below the end of the
		// segment before (offsets 0..4).
		swWritePartition(tb, dir, genSeg(0, 5), swSegment{Base: 1, Records: otherValues(genRecords(1, 4))})
	}},
	{"overlap-entire-closed", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 5), swSegment{Base: 2, Records: otherValues(genRecords(2, 4))}, genSeg(5, 7))
	}},
	{"overlap-nested", func(tb testing.TB, dir string) {
		// Segments 2 (offsets 2, 3) and 5 (5, 6) both lie inside segment
		// 0's offsets 0..9; segment 5 is above segment 2's end.
		swWritePartition(tb, dir, genSeg(0, 10), swSegment{Base: 2, Records: otherValues(genRecords(2, 4))},
			swSegment{Base: 5, Records: otherValues(genRecords(5, 7))})
	}},
	{"missing-middle-segment", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 6), genSeg(6, 9))
		removeFile(tb, segPath(dir, 3, ".log"))
		removeIndexes(tb, dir, 3)
	}},
	{"index-backwards", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 10), genSeg(10, 15))
		idx := segPath(dir, 0, ".index")
		swSetEntry(tb, idx, 6, 2, 64)
		swSetEntry(tb, idx, 7, 1, 32)
		active := segPath(dir, 10, ".index")
		swSetEntry(tb, active, 3, 11, 34)
		swSetEntry(tb, active, 4, 10, 0)
	}},
	{"index-short", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 10), genSeg(10, 15))
		swTruncate(tb, segPath(dir, 0, ".index"), 3*swEntryLen)
		swTruncate(tb, segPath(dir, 10, ".index"), 1*swEntryLen)
		swTruncate(tb, segPath(dir, 10, ".timeindex"), 2*swEntryLen)
	}},
	{"size-huge-closed", func(tb testing.TB, dir string) {
		// Offset 2 (at byte 64) claims 4 GiB.
		swWritePartition(tb, dir, genSeg(0, 5), genSeg(5, 7))
		swPut(tb, segPath(dir, 0, ".log"), 64+swSizeField, []byte{0xff, 0xff, 0xff, 0xf0})
	}},
	{"size-huge-active", func(tb testing.TB, dir string) {
		// Offset 5 (at byte 64 of the active segment) claims 4 GiB;
		// offsets 6 and 7 follow.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 8))
		swPut(tb, segPath(dir, 3, ".log"), 64+swSizeField, []byte{0xff, 0xff, 0xff, 0xf0})
	}},
	{"size-huge-active-no-index", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 8))
		swPut(tb, segPath(dir, 3, ".log"), 64+swSizeField, []byte{0xff, 0xff, 0xff, 0xf0})
		removeIndexes(tb, dir, 3)
	}},
	{"size-huge-active-one-after-no-index", func(tb testing.TB, dir string) {
		// Only offset 6 follows the record claiming 4 GiB, and no index
		// names it: it cannot be told from that record's torn bytes.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 7))
		swPut(tb, segPath(dir, 3, ".log"), 64+swSizeField, []byte{0xff, 0xff, 0xff, 0xf0})
		removeIndexes(tb, dir, 3)
	}},
	{"garbage-inserted-closed", func(tb testing.TB, dir string) {
		// 13 bytes of garbage before offset 3 (byte 96): the records after
		// it are 13 bytes later than the index says.
		swWritePartition(tb, dir, genSeg(0, 6), genSeg(6, 8))
		swInsert(tb, segPath(dir, 0, ".log"), 96, []byte("garbage bytes"))
	}},
	{"garbage-inserted-active", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 9))
		swInsert(tb, segPath(dir, 3, ".log"), 64, []byte("garbage bytes"))
	}},
	{"keylen-over-size-active", func(tb testing.TB, dir string) {
		// Offset 4 (at byte 32 of the active segment) claims a 16-byte key
		// in a 4-byte body; offsets 5 and 6 follow.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 7))
		swPut(tb, segPath(dir, 3, ".log"), 32+24, []byte{0, 0, 0, 16})
	}},
	{"keylen-over-size-active-last", func(tb testing.TB, dir string) {
		// The active segment's last record (offset 6, at byte 96).
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 7))
		swPut(tb, segPath(dir, 3, ".log"), 96+24, []byte{0, 0, 0, 16})
	}},
	{"dup-record-active", func(tb testing.TB, dir string) {
		// Offset 4 is written twice (at bytes 32 and 64), then offset 5.
		swWritePartition(tb, dir, genSeg(0, 3), swSegment{Base: 3, Records: genOffsets(3, 4, 4, 5)})
	}},
	{"zero-record-active", func(tb testing.TB, dir string) {
		// Offset 5 (bytes 64..96 of the active segment) is zeros; offsets 6
		// and 7 follow.
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 8))
		swPut(tb, segPath(dir, 3, ".log"), 64, make([]byte, 32))
	}},
	{"crc-flip-first-record-closed", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 4), genSeg(4, 6))
		swFlip(tb, segPath(dir, 0, ".log"), swHeaderLen, 0x01)
	}},
	{"empty-closed-segment", func(tb testing.TB, dir string) {
		swWritePartition(tb, dir, genSeg(0, 3), genSeg(3, 3), genSeg(5, 7))
	}},
	{"torn-only-record", func(tb testing.TB, dir string) {
		// The only record (offset 0) of the only segment lost its last
		// bytes; its index entries reached the disk.
		swWritePartition(tb, dir, genSeg(0, 1))
		swTruncate(tb, segPath(dir, 0, ".log"), 20)
	}},
	{"max-offset", func(tb testing.TB, dir string) {
		// The last record has offset 2^64-1: the partition is full.
		swWritePartition(tb, dir, swSegment{Base: math.MaxUint64 - 2,
			Records: []swRecord{genRecord(math.MaxUint64 - 2), genRecord(math.MaxUint64 - 1), genRecord(math.MaxUint64)}})
	}},
	{"max-offset-wrapped", func(tb testing.TB, dir string) {
		// After offset 2^64-1, records with offsets 0 and 1: offsets never
		// wrap, so they are corrupt.
		swWritePartition(tb, dir, swSegment{Base: math.MaxUint64 - 1,
			Records: []swRecord{genRecord(math.MaxUint64 - 1), genRecord(math.MaxUint64), genRecord(0), genRecord(1)}})
	}},
}

// TestGoldenGenerate rewrites the golden partitions with -update; without
// it, it checks that the committed ones are what the generator writes, so
// the generator and the files cannot drift apart.
func TestGoldenGenerate(t *testing.T) {
	root := goldenDir
	if !*goldenUpdate {
		root = t.TempDir()
	} else if err := os.RemoveAll(goldenDir); err != nil {
		t.Fatal(err)
	}
	for _, fx := range goldenFixtures {
		fx.build(t, filepath.Join(root, fx.name))
	}
	if *goldenUpdate {
		return
	}
	want, got := readTree(t, goldenDir), readTree(t, root)
	for name, b := range got {
		if c, ok := want[name]; !ok {
			t.Errorf("%s: generated but not in %s (run with -update)", name, goldenDir)
		} else if !bytes.Equal(b, c) {
			t.Errorf("%s: committed file differs from the generator's (run with -update)", name)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: in %s but no longer generated (run with -update)", name, goldenDir)
		}
	}
}

// readTree returns the contents of every regular file under root, by path
// relative to root.
func readTree(tb testing.TB, root string) map[string][]byte {
	tb.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[rel] = b
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// gw is one expected record.
type gw struct {
	Offset uint64
	TS     int64
	Key    []byte // nil: no key
	Value  []byte
	Pos    int64  // byte position in its segment; -1: not checked
	CRC    uint32 // 0: not checked
}

// std is the expected genRecord(o) for each o, written out independently
// of the generator.
func std(offsets ...uint64) []gw {
	var ws []gw
	for _, o := range offsets {
		ws = append(ws, gw{Offset: o, TS: goldenT0 + int64(o)*1000,
			Key: fmt.Appendf(nil, "k%d", o), Value: fmt.Appendf(nil, "v%d", o), Pos: -1})
	}
	return ws
}

func span(from, to uint64) []uint64 {
	var os []uint64
	for o := from; o < to; o++ {
		os = append(os, o)
	}
	return os
}

// gerr is an expected *logstore.CorruptionError.
type gerr struct {
	Seg    uint64 // base offset of the segment named in Path
	Pos    int64
	Offset int64
	Is     error
}

type gread struct {
	From uint64
	Want []gw
	Err  *gerr
}

var goldenCases = []struct {
	Name        string
	Start, Next uint64 // Partition.Bounds
	Reads       []gread
	// EveryOffset: reading from each offset of Reads[0] returns the rest of
	// Reads[0] and its error.
	EveryOffset bool
}{
	{
		Name: "clean", Start: 0, Next: 9, EveryOffset: true,
		Reads: []gread{{From: 0, Want: []gw{
			{0, goldenT0, []byte("user-1"), []byte("hello"), 0, 0},
			{1, goldenT0 + 1000, nil, []byte("keyless"), 39, 0},
			{2, goldenT0 + 2000, []byte("k"), []byte{}, 74, 0},
			{3, goldenT0 + 2000, nil, []byte{}, 103, 0},
			{4, goldenT0 + 3000, []byte{0xff, 0xfe, 0x00, 0x80}, []byte{0x00, 0xc3, 0x28, 0xff, 0x0a}, 0, 0},
			{5, goldenT0 + 4000, []byte("user-2"), []byte("world"), 37, 0},
			{6, goldenT0 + 5000, []byte("user-1"), []byte("foo"), 0, 0},
			{7, goldenT0 + 6000, nil, bytes0to255(), 37, 0},
			{8, goldenT0 + 7000, []byte("x"), []byte("y"), 321, 0},
		}}},
	},
	{
		Name: "spec-example", Start: 0, Next: 3, EveryOffset: true,
		Reads: []gread{{From: 0, Want: []gw{
			{0, 1700000000000000000, []byte("user-1"), []byte("hello"), 0, 0x73b4c3d2},
			{1, 1700000000100000000, []byte("user-2"), []byte("world"), 39, 0xc23277ba},
			{2, 1700000000200000000, []byte("user-1"), []byte("foo"), 78, 0xe14ccc3d},
		}}, {From: 3}},
	},
	{
		Name: "empty-active-segment", Start: 0, Next: 3, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2)}, {From: 3}},
	},
	{
		Name: "empty-active-below-floor", Start: 0, Next: 5, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4)}, {From: 3, Want: std(3, 4)}, {From: 5}},
	},
	{
		Name: "gap-between-segments", Start: 0, Next: 22, EveryOffset: true,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 10, 11, 12, 20, 21)},
			{From: 3, Want: std(10, 11, 12, 20, 21)},
			{From: 5, Want: std(10, 11, 12, 20, 21)},
			{From: 9, Want: std(10, 11, 12, 20, 21)},
			{From: 13, Want: std(20, 21)},
			{From: 19, Want: std(20, 21)},
			{From: 22},
		},
	},
	{
		Name: "torn-tail", Start: 0, Next: 6, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4, 5)}, {From: 6}, {From: 7}},
	},
	{
		Name: "torn-tail-mid-header", Start: 0, Next: 6, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4, 5)}, {From: 6}},
	},
	{
		Name: "zero-tail", Start: 0, Next: 6, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4, 5)}, {From: 6}, {From: 7}},
	},
	{
		Name: "crc-flip-closed", Start: 0, Next: 8,
		Reads: []gread{
			{From: 0, Want: std(0, 1), Err: &gerr{0, 64, 2, format.ErrCRC}},
			{From: 1, Want: std(1), Err: &gerr{0, 64, 2, format.ErrCRC}},
			{From: 2, Err: &gerr{0, 64, 2, format.ErrCRC}},
			// Past the damage, the index leads straight to a valid record.
			{From: 3, Want: std(3, 4, 5, 6, 7)},
			{From: 5, Want: std(5, 6, 7)},
		},
	},
	{
		Name: "crc-flip-active-with-valid-after", Start: 0, Next: 8,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{3, 64, 5, format.ErrCRC}},
			{From: 4, Want: std(4), Err: &gerr{3, 64, 5, format.ErrCRC}},
			{From: 5, Err: &gerr{3, 64, 5, format.ErrCRC}},
			{From: 6, Want: std(6, 7)},
			{From: 8},
		},
	},
	{
		// Bounds must not depend on the index: the next offset is the
		// last valid record's + 1, also when only a scan finds the valid
		// records after the damage.
		Name: "crc-flip-active-with-valid-after-no-index", Start: 0, Next: 8,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{3, 64, 5, format.ErrCRC}},
			{From: 5, Err: &gerr{3, 64, 5, format.ErrCRC}},
			// Without an index, reading offset 6 means scanning through
			// the damage.
			{From: 6, Err: &gerr{3, 64, 5, format.ErrCRC}},
		},
	},
	{
		// docs/format.md §3: nothing valid after it, so it is an incomplete tail.
		Name: "crc-flip-last-record-active", Start: 0, Next: 5, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4)}, {From: 5}, {From: 6}},
	},
	{
		Name: "truncated-closed", Start: 0, Next: 7,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3), Err: &gerr{0, 128, 4, format.ErrShort}},
			{From: 4, Err: &gerr{0, 128, 4, format.ErrShort}},
			{From: 5, Want: std(5, 6)},
		},
	},
	{
		Name: "keylen-over-size-closed", Start: 0, Next: 4,
		Reads: []gread{
			{From: 0, Want: std(0), Err: &gerr{0, 32, 1, format.ErrKeyLen}},
			{From: 2, Want: std(2, 3)},
			{From: 3, Want: std(3)},
		},
	},
	{
		Name: "wrong-offset-closed", Start: 0, Next: 5,
		Reads: []gread{
			{From: 0, Want: std(0, 1), Err: &gerr{0, 64, 2, format.ErrOffset}},
			{From: 2, Err: &gerr{0, 64, 2, format.ErrOffset}},
			{From: 3, Want: std(3, 4)},
		},
	},
	{
		// Like crc-flip-last-record-active: nothing valid follows, so it
		// ends the data without an error.
		// A complete record whose CRC matches and whose offset is wrong is
		// corrupt wherever it is, the active segment's end too: no torn
		// write makes one. Offset 9 is too far ahead for the bytes to have
		// held records up to it, so nothing valid resumes.
		Name: "wrong-offset-last-record-active", Start: 0, Next: 5, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{3, 64, 5, format.ErrOffset}}, {From: 5, Err: &gerr{3, 64, 5, format.ErrOffset}}},
	},
	{
		Name: "max-offset-indexed-last-active", Start: 0, Next: 5, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{3, 64, 5, format.ErrOffset}}, {From: 5, Err: &gerr{3, 64, 5, format.ErrOffset}}},
	},
	{
		Name: "offset-flip-last-closed", Start: 0, Next: 8,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{0, 160, 5, format.ErrOffset}}, {From: 6, Want: std(6, 7)}},
	},
	{
		Name: "size-lie-run-then-garbage", Start: 0, Next: 26,
		Reads: []gread{{From: 0, Err: &gerr{0, 0, 0, format.ErrCRC}}, {From: 1, Want: std(span(1, 16)...), Err: &gerr{0, 524, 16, format.ErrKeyLen}}, {From: 16, Want: std(span(16, 26)...)}},
	},
	{
		Name: "index-past-eof", Start: 0, Next: 9, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(span(0, 9)...)}, {From: 9}, {From: 10}, {From: 12}, {From: 13}},
	},
	{
		Name: "sparse-index-7", Start: 0, Next: 30, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(span(0, 30)...)}, {From: 30}},
	},
	{
		Name: "missing-index", Start: 0, Next: 15, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(span(0, 15)...)}, {From: 15}},
	},
	{
		Name: "index-truncated-mid-entry", Start: 0, Next: 15, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(span(0, 15)...)}, {From: 15}},
	},
	{
		Name: "lying-index", Start: 0, Next: 15, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(span(0, 15)...)}, {From: 15}},
	},
	{
		Name: "overlap", Start: 0, Next: 7,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{3, 0, 5, logstore.ErrOverlap}},
			// Offsets 3 and 4 are the first segment's: the second's records
			// with those offsets (values w3, w4) overlap it, wherever a
			// read starts; its records from offset 5 on are valid.
			{From: 3, Want: std(3, 4), Err: &gerr{3, 0, 5, logstore.ErrOverlap}},
			{From: 5, Want: overlapSecond(5, 6)},
		},
	},
	{
		Name: "foreign-junk", Start: 0, Next: 5, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4)}, {From: 5}, {From: 50}, {From: 123}},
	},

	{
		// Offset 3 is missing: offset 4 is where it was expected. With the
		// index, a read of offset 4 starts at its confirmed entry.
		Name: "hole-active", Start: 0, Next: 5,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2), Err: &gerr{0, 96, 3, format.ErrOffset}},
			{From: 3, Err: &gerr{0, 96, 3, format.ErrOffset}},
			{From: 4, Want: std(4)},
			{From: 5},
		},
	},
	{
		Name: "hole-active-no-index", Start: 0, Next: 5,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2), Err: &gerr{0, 96, 3, format.ErrOffset}},
			{From: 4, Err: &gerr{0, 96, 3, format.ErrOffset}},
		},
	},
	{
		Name: "hole-closed", Start: 0, Next: 15,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2), Err: &gerr{0, 96, 3, format.ErrOffset}},
			{From: 10, Want: std(10, 11, 12, 13, 14)},
			{From: 13, Want: std(13, 14)},
		},
	},
	{
		Name: "hole-wide-active", Start: 0, Next: 13,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2), Err: &gerr{0, 96, 3, format.ErrOffset}},
			{From: 10, Want: std(10, 11, 12)},
		},
	},
	{
		Name: "crc-flip-forged-15", Start: 0, Next: 18,
		Reads: []gread{
			{From: 0, Want: std(span(0, 14)...), Err: &gerr{10, 136, 14, format.ErrCRC}},
			{From: 15, Want: std(15, 16, 17)},
		},
	},
	{
		Name: "crc-flip-forged-15-closed", Start: 0, Next: 20,
		Reads: []gread{
			{From: 0, Want: std(span(0, 14)...), Err: &gerr{10, 136, 14, format.ErrCRC}},
			{From: 15, Want: std(span(15, 20)...)},
		},
	},
	{
		// The entries for 15 and 14 name damaged records: a read of 15
		// starts at 13's.
		Name: "crc-flip-forged-15-real-15-too", Start: 0, Next: 18,
		Reads: []gread{
			{From: 0, Want: std(span(0, 14)...), Err: &gerr{10, 136, 14, format.ErrCRC}},
			{From: 15, Err: &gerr{10, 136, 14, format.ErrCRC}},
			{From: 16, Want: std(16, 17)},
		},
	},
	{
		Name: "crc-flip-forged-15-real-15-too-no-index", Start: 0, Next: 18,
		Reads: []gread{
			{From: 0, Want: std(span(0, 14)...), Err: &gerr{10, 136, 14, format.ErrCRC}},
			{From: 16, Err: &gerr{10, 136, 14, format.ErrCRC}},
		},
	},
	{
		Name: "crc-flip-last-active-shaped", Start: 0, Next: 5, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4)}, {From: 5}, {From: 6}},
	},
	{
		Name: "lying-last-index-active", Start: 0, Next: 15, EveryOffset: true,
		Reads: []gread{{From: 0, Want: withValue(std(span(0, 15)...), 12, forgedValue(14))}, {From: 15}},
	},
	{
		Name: "lying-index-chain", Start: 0, Next: 12, EveryOffset: true,
		Reads: []gread{{From: 0, Want: withValue(std(span(0, 12)...), 3, forgedValue(4, 5))}, {From: 12}},
	},
	{
		Name: "duplicate-indexed", Start: 0, Next: 9,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3), Err: &gerr{0, 128, 4, format.ErrOffset}},
			{From: 3, Want: std(3), Err: &gerr{0, 128, 4, format.ErrOffset}},
			{From: 4, Want: std(4, 5, 6, 7, 8)},
		},
	},
	{
		Name: "torn-tail-shaped", Start: 0, Next: 6, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4, 5)}, {From: 6}},
	},
	{
		Name: "misnamed-above", Start: 0, Next: 8,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{10, 0, 10, format.ErrOffset}},
			{From: 5, Err: &gerr{10, 0, 10, format.ErrOffset}},
		},
	},
	{
		// Offsets 3 and 4 are segment 0's, below segment 3's records.
		Name: "misnamed-below", Start: 0, Next: 8,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{3, 0, 3, format.ErrOffset}},
			{From: 3, Want: std(3, 4), Err: &gerr{3, 0, 3, format.ErrOffset}},
			{From: 4, Want: std(4), Err: &gerr{3, 0, 3, format.ErrOffset}},
		},
	},
	{
		// The partition starts at its first record, below the name.
		Name: "misnamed-first", Start: 5, Next: 8,
		Reads: []gread{
			{From: 5, Err: &gerr{10, 0, 10, format.ErrOffset}},
			{From: 7, Err: &gerr{10, 0, 10, format.ErrOffset}},
		},
	},
	{
		Name: "crc-flip-first-misnamed", Start: 3, Next: 7,
		Reads: []gread{
			{From: 3, Err: &gerr{4, 0, 4, format.ErrCRC}},
			{From: 5, Want: std(5, 6)},
		},
	},
	{
		// Its one record, 5 where the name says 3, is not confirmed: the
		// bytes before it in its segment hold no records up to it.
		Name: "misnamed-below-one-record", Start: 0, Next: 5,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{3, 0, 3, format.ErrOffset}}},
	},
	{
		Name: "misnamed-closed", Start: 0, Next: 10,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{7, 0, 7, format.ErrOffset}},
			{From: 8, Want: std(8, 9)},
		},
	},
	{
		Name: "crc-flip-before-misnamed", Start: 0, Next: 9,
		Reads: []gread{
			{From: 0, Want: std(0, 1), Err: &gerr{0, 64, 2, format.ErrCRC}},
			{From: 3, Want: std(3, 4, 5), Err: &gerr{5, 0, 5, format.ErrOffset}},
			{From: 7, Want: std(7, 8)},
		},
	},
	{
		Name: "hole-before-overlap", Start: 6, Next: 14,
		Reads: []gread{
			{From: 6, Want: std(6, 7, 8), Err: &gerr{6, 96, 9, format.ErrOffset}},
			{From: 10, Want: overlapSecond(10), Err: &gerr{10, 0, 11, logstore.ErrOverlap}},
			{From: 11, Want: std(11, 12, 13)},
		},
	},
	{
		// Segment 1's records duplicate offsets 1..3 of segment 0: they are
		// corrupt wherever a read starts.
		Name: "overlap-entire-active", Start: 0, Next: 5,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{1, 0, 5, logstore.ErrOverlap}},
			{From: 2, Want: std(2, 3, 4), Err: &gerr{1, 0, 5, logstore.ErrOverlap}},
			{From: 4, Want: std(4), Err: &gerr{1, 0, 5, logstore.ErrOverlap}},
			// Offset 5 is expected where the overlap is: a read from it
			// meets it, as in wrong-offset-last-record-active: segment 1's
			// index entries, all below offset 5, are no place to start.
			{From: 5, Err: &gerr{1, 0, 5, logstore.ErrOverlap}},
		},
	},
	{
		Name: "overlap-entire-closed", Start: 0, Next: 7,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{2, 0, 5, logstore.ErrOverlap}},
			{From: 3, Want: std(3, 4), Err: &gerr{2, 0, 5, logstore.ErrOverlap}},
			{From: 5, Want: std(5, 6)},
		},
	},
	{
		Name: "overlap-nested", Start: 0, Next: 10,
		Reads: []gread{
			{From: 0, Want: std(span(0, 10)...), Err: &gerr{2, 0, 10, logstore.ErrOverlap}},
			{From: 8, Want: std(8, 9), Err: &gerr{2, 0, 10, logstore.ErrOverlap}},
		},
	},
	{
		Name: "missing-middle-segment", Start: 0, Next: 9, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 6, 7, 8)}, {From: 3, Want: std(6, 7, 8)}, {From: 9}},
	},
	{
		Name: "index-backwards", Start: 0, Next: 15, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(span(0, 15)...)}, {From: 15}},
	},
	{
		Name: "index-short", Start: 0, Next: 15, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(span(0, 15)...)}, {From: 15}},
	},
	{
		Name: "size-huge-closed", Start: 0, Next: 7,
		Reads: []gread{
			{From: 0, Want: std(0, 1), Err: &gerr{0, 64, 2, format.ErrShort}},
			{From: 3, Want: std(3, 4, 5, 6)},
		},
	},
	{
		Name: "size-huge-active", Start: 0, Next: 8,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{3, 64, 5, format.ErrShort}},
			{From: 6, Want: std(6, 7)},
		},
	},
	{
		Name: "size-huge-active-no-index", Start: 0, Next: 8,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{3, 64, 5, format.ErrShort}},
			{From: 6, Err: &gerr{3, 64, 5, format.ErrShort}},
		},
	},
	{
		Name: "size-huge-active-one-after-no-index", Start: 0, Next: 5, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4)}, {From: 5}, {From: 6}},
	},
	{
		// The garbage's header claims 1.6 GB ("byte"); the index entries
		// after it point 13 bytes short of the records.
		Name: "garbage-inserted-closed", Start: 0, Next: 8,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2), Err: &gerr{0, 96, 3, format.ErrShort}},
			{From: 4, Err: &gerr{0, 96, 3, format.ErrShort}},
			{From: 6, Want: std(6, 7)},
		},
	},
	{
		Name: "garbage-inserted-active", Start: 0, Next: 9,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{3, 64, 5, format.ErrShort}}},
	},
	{
		Name: "keylen-over-size-active", Start: 0, Next: 7,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3), Err: &gerr{3, 32, 4, format.ErrKeyLen}},
			{From: 5, Want: std(5, 6)},
		},
	},
	{
		Name: "keylen-over-size-active-last", Start: 0, Next: 6, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 3, 4, 5)}, {From: 6}},
	},
	{
		Name: "dup-record-active", Start: 0, Next: 6,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{3, 64, 5, format.ErrOffset}},
			{From: 5, Want: std(5)},
		},
	},
	{
		Name: "zero-record-active", Start: 0, Next: 8,
		Reads: []gread{
			{From: 0, Want: std(0, 1, 2, 3, 4), Err: &gerr{3, 64, 5, format.ErrCRC}},
			{From: 6, Want: std(6, 7)},
		},
	},
	{
		Name: "crc-flip-first-record-closed", Start: 0, Next: 6,
		Reads: []gread{
			{From: 0, Err: &gerr{0, 0, 0, format.ErrCRC}},
			{From: 1, Want: std(1, 2, 3, 4, 5)},
		},
	},
	{
		Name: "empty-closed-segment", Start: 0, Next: 7, EveryOffset: true,
		Reads: []gread{{From: 0, Want: std(0, 1, 2, 5, 6)}, {From: 3, Want: std(5, 6)}, {From: 7}},
	},
	{
		Name: "torn-only-record", Start: 0, Next: 0,
		Reads: []gread{{From: 0}},
	},
	{
		// Next is the last offset there is: the partition is full.
		Name: "max-offset", Start: math.MaxUint64 - 2, Next: math.MaxUint64, EveryOffset: true,
		Reads: []gread{{From: math.MaxUint64 - 2, Want: std(math.MaxUint64-2, math.MaxUint64-1, math.MaxUint64)}},
	},
	{
		// The offset expected after 2^64-1 does not fit the error's int64:
		// -1, unknown.
		Name: "max-offset-wrapped", Start: math.MaxUint64 - 1, Next: math.MaxUint64,
		Reads: []gread{{From: math.MaxUint64 - 1, Want: std(math.MaxUint64-1, math.MaxUint64), Err: &gerr{math.MaxUint64 - 1, 140, -1, format.ErrOffset}}},
	},
}

func bytes0to255() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// withValue is ws with the value of offset o's record v.
func withValue(ws []gw, o uint64, v []byte) []gw {
	for i := range ws {
		if ws[i].Offset == o {
			ws[i].Value = v
		}
	}
	return ws
}

func overlapSecond(offsets ...uint64) []gw {
	ws := std(offsets...)
	for i := range ws {
		ws[i].Value = fmt.Appendf(nil, "w%d", ws[i].Offset)
	}
	return ws
}

// goldenGot is what one read returned: the records, copied, and the error.
type goldenGot struct {
	recs []logstore.Record
	err  error
}

func readFrom(tb testing.TB, p *logstore.Partition, from uint64) goldenGot {
	tb.Helper()
	it, err := p.Read(from)
	if err != nil {
		return goldenGot{err: err}
	}
	var g goldenGot
	for it.Next() {
		r := it.Record()
		r.Key = bytes.Clone(r.Key)
		r.Value = bytes.Clone(r.Value)
		g.recs = append(g.recs, *r)
	}
	g.err = it.Err()
	if err := it.Close(); err != nil {
		tb.Errorf("Close: %v", err)
	}
	return g
}

// checkRead compares a read with its expectation and describes each
// difference.
func checkRead(tb testing.TB, dir string, from uint64, g goldenGot, want []gw, werr *gerr) {
	tb.Helper()
	for i := 0; i < max(len(g.recs), len(want)); i++ {
		if i >= len(g.recs) {
			tb.Errorf("Read(%d): record %d missing, want offset %d", from, i, want[i].Offset)
			continue
		}
		r := g.recs[i]
		if i >= len(want) {
			tb.Errorf("Read(%d): unexpected record %d: offset %d key %q value %q", from, i, r.Offset, r.Key, r.Value)
			continue
		}
		w := want[i]
		if r.Offset != w.Offset || r.Timestamp != w.TS || !bytes.Equal(r.Key, w.Key) || (r.Key == nil) != (w.Key == nil) ||
			!bytes.Equal(r.Value, w.Value) || (w.Pos >= 0 && r.Pos != w.Pos) || (w.CRC != 0 && r.CRC != w.CRC) {
			tb.Errorf("Read(%d): record %d = {off %d ts %d key %q value %q pos %d crc %#x}\n"+
				"                      want {off %d ts %d key %q value %q pos %d crc %#x}",
				from, i, r.Offset, r.Timestamp, r.Key, r.Value, r.Pos, r.CRC,
				w.Offset, w.TS, w.Key, w.Value, w.Pos, w.CRC)
		}
	}
	if werr == nil {
		if g.err != nil {
			tb.Errorf("Read(%d): error %v, want none", from, g.err)
		}
		return
	}
	var ce *logstore.CorruptionError
	if !errors.As(g.err, &ce) {
		tb.Errorf("Read(%d): error %v, want a *logstore.CorruptionError", from, g.err)
		return
	}
	wantPath := segPath(dir, werr.Seg, ".log")
	if ce.Path != wantPath || ce.Pos != werr.Pos || ce.Offset != werr.Offset {
		tb.Errorf("Read(%d): corruption at %s byte %d offset %d, want %s byte %d offset %d",
			from, ce.Path, ce.Pos, ce.Offset, wantPath, werr.Pos, werr.Offset)
	}
	if !errors.Is(g.err, werr.Is) {
		tb.Errorf("Read(%d): error %v is not %v", from, g.err, werr.Is)
	}
}

func TestGoldenRead(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range goldenCases {
		seen[tc.Name] = true
		t.Run(tc.Name, func(t *testing.T) {
			dir := filepath.Join(goldenDir, tc.Name)
			before := readTree(t, dir)
			if len(before) == 0 {
				t.Fatalf("%s is empty or missing (run go test ./logstore -run TestGolden -update)", dir)
			}
			p, err := logstore.OpenPartitionDir(dir, tc.Name)
			if err != nil {
				t.Fatal(err)
			}
			if start, next, err := p.Bounds(); err != nil || start != tc.Start || next != tc.Next {
				t.Errorf("Bounds() = %d, %d, %v; want %d, %d, nil", start, next, err, tc.Start, tc.Next)
			}
			for _, rd := range tc.Reads {
				checkRead(t, dir, rd.From, readFrom(t, p, rd.From), rd.Want, rd.Err)
			}
			if tc.EveryOffset {
				all := tc.Reads[0]
				for i, w := range all.Want {
					checkRead(t, dir, w.Offset, readFrom(t, p, w.Offset), all.Want[i:], all.Err)
				}
			}
			// Reading changes nothing on disk.
			after := readTree(t, dir)
			for name, b := range before {
				if !bytes.Equal(after[name], b) {
					t.Errorf("%s changed by reading", name)
				}
			}
			if len(after) != len(before) {
				t.Errorf("reading changed the set of files: %d before, %d after", len(before), len(after))
			}
		})
	}
	for _, fx := range goldenFixtures {
		if !seen[fx.name] {
			t.Errorf("golden partition %s has no case in goldenCases", fx.name)
		}
	}
}
