package segfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
)

// memFile is a File over bytes in memory.
type memFile struct {
	name string
	b    []byte
}

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (m *memFile) Name() string               { return m.name }
func (m *memFile) Stat() (fs.FileInfo, error) { return memInfo{m}, nil }

type memInfo struct{ m *memFile }

func (i memInfo) Name() string       { return i.m.name }
func (i memInfo) Size() int64        { return int64(len(i.m.b)) }
func (i memInfo) Mode() fs.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

// rec is a record for a test segment.
type rec struct {
	off   uint64
	key   string
	value []byte
}

func val(o uint64) []byte { return []byte("value-" + strconv.FormatUint(o, 10)) }

// build encodes records one after another; it returns the bytes and each
// record's position.
func build(recs ...rec) ([]byte, []int64) {
	var b []byte
	var pos []int64
	for _, r := range recs {
		pos = append(pos, int64(len(b)))
		var key []byte
		if r.key != "" {
			key = []byte(r.key)
		}
		b = format.AppendRecord(b, &format.Record{Offset: r.off, Timestamp: 1_700_000_000_000_000_000 + int64(r.off), Key: key, Value: r.value})
	}
	return b, pos
}

func seq(from, to uint64) []rec {
	var rs []rec
	for o := from; o < to; o++ {
		rs = append(rs, rec{off: o, key: "k", value: val(o)})
	}
	return rs
}

// indexOf builds an .index with an entry for every record.
func indexOf(recs []rec, pos []int64) *Index {
	var b []byte
	for i, r := range recs {
		b = format.AppendIndexEntry(b, format.IndexEntry{Offset: r.off, Pos: pos[i]})
	}
	return NewIndex(&memFile{name: "x.index", b: b}, int64(len(b)))
}

func rawIndex(entries ...format.IndexEntry) *Index {
	var b []byte
	for _, e := range entries {
		b = format.AppendIndexEntry(b, e)
	}
	return NewIndex(&memFile{name: "x.index", b: b}, int64(len(b)))
}

// verdict is what a whole scan found: the valid offsets, and each break.
type verdict struct {
	offsets []uint64
	damages []*Damage
}

func scanAll(t *testing.T, seg Segment, b []byte) verdict {
	t.Helper()
	seg.Log = &memFile{name: "seg.log", b: b}
	if seg.Path == "" {
		seg.Path = "seg.log"
	}
	s, err := NewScanner(seg, -1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var v verdict
	for {
		for s.Next() {
			v.offsets = append(v.offsets, s.Header().Offset)
		}
		if s.Err() != nil {
			t.Fatal(s.Err())
		}
		d := s.Damage()
		if d == nil {
			break
		}
		v.damages = append(v.damages, d)
		if !s.Resume() {
			break
		}
	}
	return v
}

func offsets(from, to uint64) []uint64 {
	var os []uint64
	for o := from; o < to; o++ {
		os = append(os, o)
	}
	return os
}

// want is a break a scan must find.
type want struct {
	pos    int64
	offset uint64
	class  Class
	reason error
	by     Rule
	resume int64 // -1: not resumed
}

func checkVerdict(t *testing.T, v verdict, valid []uint64, ws ...want) {
	t.Helper()
	if !slices.Equal(v.offsets, valid) {
		t.Errorf("valid offsets %v, want %v", v.offsets, valid)
	}
	if len(v.damages) != len(ws) {
		for _, d := range v.damages {
			t.Logf("damage: %s (by %s, class %s)", d.Error(), d.By, d.Class)
		}
		t.Fatalf("%d breaks, want %d", len(v.damages), len(ws))
	}
	for i, w := range ws {
		d := v.damages[i]
		if d.Pos != w.pos || d.Offset != w.offset || d.Class != w.class || !errors.Is(d, w.reason) || d.By != w.by {
			t.Errorf("break %d: at %d offset %d %s %v by %s; want at %d offset %d %s %v by %s (%s)", i,
				d.Pos, d.Offset, d.Class, d.Reason, d.By, w.pos, w.offset, w.class, w.reason, w.by, d.Error())
		}
		switch {
		case w.resume < 0 && d.Resumed:
			t.Errorf("break %d: resumed at %d, want not resumed", i, d.End)
		case w.resume >= 0 && (!d.Resumed || d.End != w.resume):
			t.Errorf("break %d: resumed %v at %d, want at %d", i, d.Resumed, d.End, w.resume)
		}
	}
}

func flip(b []byte, at int64) { b[at] ^= 0x01 }

func putU64(b []byte, at int64, v uint64) { binary.BigEndian.PutUint64(b[at:], v) }
func putU32(b []byte, at int64, v uint32) { binary.BigEndian.PutUint32(b[at:], v) }

const (
	sizeAt   = 8
	crcAt    = 12
	keyLenAt = 24
)

func TestScanClean(t *testing.T) {
	b, _ := build(seq(0, 10)...)
	for _, active := range []bool{false, true} {
		checkVerdict(t, scanAll(t, Segment{Base: 0, Active: active}, b), offsets(0, 10))
	}
	checkVerdict(t, scanAll(t, Segment{Base: 0, Active: true}, nil), nil)
}

func TestScanTornTail(t *testing.T) {
	b, pos := build(seq(0, 7)...)
	torn := b[:pos[6]+30]
	checkVerdict(t, scanAll(t, Segment{Active: true}, torn), offsets(0, 6),
		want{pos: pos[6], offset: 6, class: Incomplete, reason: format.ErrShort, resume: -1})
	checkVerdict(t, scanAll(t, Segment{}, torn), offsets(0, 6),
		want{pos: pos[6], offset: 6, class: Corrupt, reason: format.ErrShort, resume: -1})
	// Less than a header.
	checkVerdict(t, scanAll(t, Segment{Active: true}, b[:pos[6]+5]), offsets(0, 6),
		want{pos: pos[6], offset: 6, class: Incomplete, reason: format.ErrShort, resume: -1})
	// Zeros after the last record.
	z := append(slices.Clone(b[:pos[6]]), make([]byte, 100)...)
	v := scanAll(t, Segment{Active: true}, z)
	checkVerdict(t, v, offsets(0, 6), want{pos: pos[6], offset: 6, class: Incomplete, reason: format.ErrCRC, resume: -1})
	if !v.damages[0].Zeros {
		t.Errorf("zero tail not marked Zeros: %s", v.damages[0].Error())
	}
}

func TestScanCRCFlip(t *testing.T) {
	rs := seq(0, 10)
	b, pos := build(rs...)
	flip(b, pos[3]+crcAt)
	for _, active := range []bool{false, true} {
		checkVerdict(t, scanAll(t, Segment{Active: active}, b), slices.Concat(offsets(0, 3), offsets(4, 10)),
			want{pos: pos[3], offset: 3, class: Corrupt, reason: format.ErrCRC, by: ByClaimedEnd, resume: pos[4]})
	}
	// The last record of the active segment: a torn write can do that.
	b, pos = build(rs...)
	flip(b, pos[9]+30)
	checkVerdict(t, scanAll(t, Segment{Active: true}, b), offsets(0, 9),
		want{pos: pos[9], offset: 9, class: Incomplete, reason: format.ErrCRC, resume: -1})
}

// A sound record with an offset further on starts a new chain where it
// is, when what follows confirms it: no valid record is dropped.
func TestScanOffsetsSkipped(t *testing.T) {
	rs := slices.Concat(seq(0, 3), seq(10, 13))
	b, pos := build(rs...)
	checkVerdict(t, scanAll(t, Segment{}, b), []uint64{0, 1, 2, 10, 11, 12},
		want{pos: pos[3], offset: 3, class: Corrupt, reason: format.ErrOffset, by: BySelf, resume: pos[3]})
	// 0,1,2,4 at the end of the active segment: corrupt (no torn write
	// makes a sound record), and 4 is valid, ending the data.
	rs = append(seq(0, 3), rec{off: 4, key: "k", value: val(4)})
	b, pos = build(rs...)
	v := scanAll(t, Segment{Active: true}, b)
	checkVerdict(t, v, []uint64{0, 1, 2, 4},
		want{pos: pos[3], offset: 3, class: Corrupt, reason: format.ErrOffset, by: BySelf, resume: pos[3]})
	if from, to, ok := v.damages[0].Lost(); !ok || from != 3 || to != 4 {
		t.Errorf("lost %d..%d %v, want 3..4", from, to, ok)
	}
	// An offset far beyond what the bytes could have held, alone at the
	// end: not confirmed, so corrupt to the end.
	rs = append(seq(0, 3), rec{off: 1000, key: "k", value: val(1000)})
	b, pos = build(rs...)
	checkVerdict(t, scanAll(t, Segment{Active: true}, b), offsets(0, 3),
		want{pos: pos[3], offset: 3, class: Corrupt, reason: format.ErrOffset, resume: -1})
}

// A flipped offset field (the CRC does not cover it): the record after
// it continues the offsets, so the damaged one alone is lost.
func TestScanOffsetFieldFlipped(t *testing.T) {
	for _, bad := range []uint64{7, 1, 3 ^ 1<<40} {
		rs := seq(0, 10)
		b, pos := build(rs...)
		putU64(b, pos[3], bad)
		checkVerdict(t, scanAll(t, Segment{}, b), slices.Concat(offsets(0, 3), offsets(4, 10)),
			want{pos: pos[3], offset: 3, class: Corrupt, reason: format.ErrOffset, by: ByClaimedEnd, resume: pos[4]})
	}
}

// forge returns a value that holds a sound record with offset o, after
// some filler, and where in the value the record starts.
func forge(o uint64, filler int, tail int) ([]byte, int64) {
	v := bytes.Repeat([]byte("f"), filler)
	at := int64(len(v))
	v = format.AppendRecord(v, &format.Record{Offset: o, Timestamp: 7, Key: []byte("forged"), Value: []byte("forged value")})
	return append(v, bytes.Repeat([]byte("t"), tail)...), at
}

// A CRC flip in record 14, whose value holds a sound record shaped as
// offset 15: the real 15 at 14's claimed end wins; the forgery is 14's
// payload.
func TestScanForgeryInsideDamagedRecord(t *testing.T) {
	rs := seq(0, 20)
	fv, _ := forge(15, 3, 10)
	rs[14].value = fv
	b, pos := build(rs...)
	flip(b, pos[14]+crcAt)
	for _, idx := range []bool{false, true} {
		seg := Segment{}
		if idx {
			seg.Index = indexOf(rs, pos)
		}
		checkVerdict(t, scanAll(t, seg, b), slices.Concat(offsets(0, 14), offsets(15, 20)),
			want{pos: pos[14], offset: 14, class: Corrupt, reason: format.ErrCRC, by: ByClaimedEnd, resume: pos[15]})
	}
	// 15 damaged too: the forgery (and a forged 16 after it) are still
	// 14's payload; valid data resumes at the real 16.
	rs = seq(0, 20)
	v1 := format.AppendRecord(nil, &format.Record{Offset: 15, Timestamp: 7, Value: []byte("forged")})
	v1 = format.AppendRecord(v1, &format.Record{Offset: 16, Timestamp: 7, Value: []byte("forged")})
	rs[14].value = append(v1, "tail bytes"...)
	b, pos = build(rs...)
	flip(b, pos[14]+crcAt)
	flip(b, pos[15]+crcAt)
	for _, idx := range []bool{false, true} {
		seg := Segment{}
		by := ByScan
		if idx {
			seg.Index = indexOf(rs, pos)
			by = ByIndex
		}
		checkVerdict(t, scanAll(t, seg, b), slices.Concat(offsets(0, 14), offsets(16, 20)),
			want{pos: pos[14], offset: 14, class: Corrupt, reason: format.ErrCRC, by: by, resume: pos[16]})
	}
}

// A torn tail whose surviving bytes hold something shaped like the next
// record stays a torn tail.
func TestScanTornTailWithRecordShape(t *testing.T) {
	rs := seq(0, 6)
	fv, _ := forge(5, 2, 200)
	rs[5].value = fv
	b, pos := build(rs...)
	for _, cut := range []int64{60, 80, int64(len(b)) - pos[5] - 150} {
		torn := b[:pos[5]+cut]
		checkVerdict(t, scanAll(t, Segment{Active: true}, torn), offsets(0, 5),
			want{pos: pos[5], offset: 5, class: Incomplete, reason: format.ErrShort, resume: -1})
	}
	// The forged shape carries offset 6 and ends where the tear is.
	rs = seq(0, 6)
	fv, at := forge(6, 2, 0)
	rs[5].value = append(fv, bytes.Repeat([]byte("x"), 100)...)
	b, pos = build(rs...)
	end := pos[5] + format.HeaderLen + 1 + at + int64(len(fv)) - at // just after the forged record
	checkVerdict(t, scanAll(t, Segment{Active: true}, b[:end]), offsets(0, 5),
		want{pos: pos[5], offset: 5, class: Incomplete, reason: format.ErrShort, resume: -1})
}

// A size field flipped huge in the middle of a closed segment: the
// records after it chain to the segment's end, which shows the claimed
// length wrong.
func TestScanSizeFlipped(t *testing.T) {
	rs := seq(0, 10)
	b, pos := build(rs...)
	putU32(b, pos[4]+sizeAt, 1<<30)
	checkVerdict(t, scanAll(t, Segment{}, b), slices.Concat(offsets(0, 4), offsets(5, 10)),
		want{pos: pos[4], offset: 4, class: Corrupt, reason: format.ErrShort, by: ByScan, resume: pos[5]})
	// In the active segment too: the records after it carry on from it
	// to the end of the data, which no torn write leaves.
	checkVerdict(t, scanAll(t, Segment{Active: true}, b), slices.Concat(offsets(0, 4), offsets(5, 10)),
		want{pos: pos[4], offset: 4, class: Corrupt, reason: format.ErrShort, by: ByScan, resume: pos[5]})
	// Also when they end in a torn tail of their own.
	cut := b[:len(b)-5]
	for _, x := range []*Index{nil, indexOf(rs, pos)} {
		by := ByScan
		if x != nil {
			by = ByIndex
		}
		checkVerdict(t, scanAll(t, Segment{Active: true, Index: x}, cut), slices.Concat(offsets(0, 4), offsets(5, 9)),
			want{pos: pos[4], offset: 4, class: Corrupt, reason: format.ErrShort, by: by, resume: pos[5]},
			want{pos: pos[9], offset: 9, class: Incomplete, reason: format.ErrShort, resume: -1})
	}
	// Also across a record whose claimed end carries on, with or
	// without the index.
	bad := slices.Clone(b)
	flip(bad, pos[7]+crcAt)
	for _, x := range []*Index{nil, indexOf(rs, pos)} {
		by := ByScan
		if x != nil {
			by = ByIndex
		}
		checkVerdict(t, scanAll(t, Segment{Active: true, Index: x}, bad), slices.Concat(offsets(0, 4), offsets(5, 7), offsets(8, 10)),
			want{pos: pos[4], offset: 4, class: Corrupt, reason: format.ErrShort, by: by, resume: pos[5]},
			want{pos: pos[7], offset: 7, class: Corrupt, reason: format.ErrCRC, by: ByClaimedEnd, resume: pos[8]})
	}
	// Not across worse: then the index, naming the records, tells.
	worse := slices.Clone(b)
	putU32(worse, pos[7]+sizeAt, 5)
	checkVerdict(t, scanAll(t, Segment{Active: true}, worse), slices.Concat(offsets(0, 4), offsets(8, 10)),
		want{pos: pos[4], offset: 4, class: Corrupt, reason: format.ErrShort, by: ByScan, resume: pos[8]})
	checkVerdict(t, scanAll(t, Segment{Active: true, Index: indexOf(rs, pos)}, worse), slices.Concat(offsets(0, 4), offsets(5, 7), offsets(8, 10)),
		want{pos: pos[4], offset: 4, class: Corrupt, reason: format.ErrShort, by: ByIndex, resume: pos[5]},
		want{pos: pos[7], offset: 7, class: Corrupt, reason: format.ErrCRC, by: ByIndex, resume: pos[8]})
	// A chain too short to tell: a torn tail.
	short := slices.Clone(b[:pos[6]+5])
	checkVerdict(t, scanAll(t, Segment{Active: true}, short), offsets(0, 4),
		want{pos: pos[4], offset: 4, class: Incomplete, reason: format.ErrShort, resume: -1})
	// Flipped smaller: the claimed end is inside its own value, and the
	// real next record, past it, is found by the scan.
	b, pos = build(rs...)
	putU32(b, pos[4]+sizeAt, 3)
	putU32(b, pos[4]+keyLenAt, 1)
	checkVerdict(t, scanAll(t, Segment{}, b), slices.Concat(offsets(0, 4), offsets(5, 10)),
		want{pos: pos[4], offset: 4, class: Corrupt, reason: format.ErrCRC, by: ByScan, resume: pos[5]})
	// A garbage header with a keylen over its size.
	b, pos = build(rs...)
	putU32(b, pos[4]+keyLenAt, 1<<31)
	checkVerdict(t, scanAll(t, Segment{}, b), slices.Concat(offsets(0, 4), offsets(5, 10)),
		want{pos: pos[4], offset: 4, class: Corrupt, reason: format.ErrKeyLen, by: ByClaimedEnd, resume: pos[5]})
}

// Garbage bytes inserted between records.
func TestScanGarbageInserted(t *testing.T) {
	a, _ := build(seq(0, 3)...)
	c, _ := build(seq(3, 6)...)
	garbage := bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef, 0x01}, 13)
	b := slices.Concat(a, garbage, c)
	checkVerdict(t, scanAll(t, Segment{}, b), offsets(0, 6),
		want{pos: int64(len(a)), offset: 3, class: Corrupt, reason: format.ErrShort, by: ByScan, resume: int64(len(a) + len(garbage))})
}

func TestScanSegmentStart(t *testing.T) {
	rs := seq(3, 6)
	b, pos := build(rs...)
	// Named 5, its records 3..5, the segment before ending at 3: misnamed.
	checkVerdict(t, scanAll(t, Segment{Base: 5, Floor: 3}, b), offsets(3, 6),
		want{pos: 0, offset: 5, class: Corrupt, reason: format.ErrOffset, by: BySelf, resume: 0})
	// Named 2, the segment before ending at 3: the name overlaps, the
	// records do not: misnamed too.
	checkVerdict(t, scanAll(t, Segment{Base: 2, Floor: 3}, b), offsets(3, 6),
		want{pos: 0, offset: 2, class: Corrupt, reason: format.ErrOffset, by: BySelf, resume: 0})
	// Named 3, the segment before ending at 5: 3 and 4 are duplicates of
	// its offsets; 5 is new.
	checkVerdict(t, scanAll(t, Segment{Base: 3, Floor: 5}, b), []uint64{5},
		want{pos: 0, offset: 5, class: Corrupt, reason: ErrOverlap, by: ByScan, resume: pos[2]})
	// Entirely overlapped.
	checkVerdict(t, scanAll(t, Segment{Base: 3, Floor: 6}, b), nil,
		want{pos: 0, offset: 6, class: Corrupt, reason: ErrOverlap, resume: -1})
}

func TestScanLastOffset(t *testing.T) {
	top := uint64(math.MaxUint64)
	rs := []rec{{off: top - 2, value: val(1)}, {off: top - 1, value: val(2)}, {off: top, value: val(3)}}
	b, _ := build(rs...)
	seg := Segment{Base: top - 2, Active: true, Log: &memFile{b: b}}
	s, err := NewScanner(seg, -1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for s.Next() {
		n++
	}
	if n != 3 || !s.Full() || s.Damage() != nil {
		t.Fatalf("%d records, full %v, damage %v; want 3, full", n, s.Full(), s.Damage())
	}
	// Anything after the last offset is damage, never a wrapped 0.
	more, _ := build(rec{off: 0, value: val(0)}, rec{off: top, value: val(0)})
	checkVerdict(t, scanAll(t, Segment{Base: top - 2}, slices.Concat(b, more)), []uint64{top - 2, top - 1, top},
		want{pos: int64(len(b)), offset: top, class: Corrupt, reason: format.ErrOffset, resume: -1})
}

// A lying index entry, pointing into a record's value where a record
// shape with the right offset sits, is never a place to start reading.
func TestSeekLyingIndex(t *testing.T) {
	rs := seq(0, 10)
	fv, at := forge(7, 5, 5)
	rs[5].value = fv
	b, pos := build(rs...)
	forged := pos[5] + format.HeaderLen + int64(len("k")) + at
	entries := make([]format.IndexEntry, len(rs))
	for i, r := range rs {
		entries[i] = format.IndexEntry{Offset: r.off, Pos: pos[i]}
	}
	entries[7].Pos = forged
	seg := Segment{Active: true, Log: &memFile{b: b}, Index: rawIndex(entries...)}
	s, err := NewScanner(seg, -1, Options{Whole: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SeekOffset(7); err != nil {
		t.Fatal(err)
	}
	if s.Pos() == forged {
		t.Fatalf("seek started at the forged record")
	}
	for s.Next() {
		if s.Header().Offset == 7 {
			if s.RecordPos() != pos[7] || !bytes.Equal(s.Bytes()[format.HeaderLen+1:], val(7)) {
				t.Fatalf("offset 7 read at %d, want %d", s.RecordPos(), pos[7])
			}
			break
		}
	}
	// The last entry lying: the end is found from one that checks out.
	entries = entries[:10]
	entries[7].Pos = pos[7]
	entries[9].Pos = forged
	entries[9].Offset = 7
	seg.Index = rawIndex(entries...)
	s, _ = NewScanner(seg, -1, Options{})
	if err := s.SeekEnd(); err != nil {
		t.Fatal(err)
	}
	if s.Pos() == forged {
		t.Fatalf("end search started at the forged record")
	}
	for s.Next() {
	}
	if s.Damage() != nil || s.NextOffset() != 10 || s.Pos() != int64(len(b)) {
		t.Fatalf("end at %d offset %d damage %v; want %d, 10, none", s.Pos(), s.NextOffset(), s.Damage(), len(b))
	}
}

func TestChainCheck(t *testing.T) {
	b, pos := build(seq(5, 9)...)
	for _, piece := range []int{1, 7, 28, 1000} {
		var got []int64
		c := NewChainCheck("x", 5, func(p int64, h *format.Header) { got = append(got, p) })
		for i := 0; i < len(b); i += piece {
			if _, err := c.Write(b[i:min(i+piece, len(b))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Finish(); err != nil || c.Records() != 4 || c.Next() != 9 || !slices.Equal(got, pos) {
			t.Fatalf("piece %d: %v, %d records, next %d, positions %v", piece, err, c.Records(), c.Next(), got)
		}
	}
	bad := slices.Clone(b)
	flip(bad, pos[2]+crcAt)
	c := NewChainCheck("x", 5, nil)
	c.Write(bad)
	var d *Damage
	if err := c.Finish(); !errors.As(err, &d) || d.Pos != pos[2] || d.Offset != 7 || !errors.Is(err, format.ErrCRC) {
		t.Fatalf("crc flip: %v", err)
	}
	c = NewChainCheck("x", 5, nil)
	c.Write(b[:len(b)-3])
	if err := c.Finish(); !errors.As(err, &d) || d.Pos != pos[3] || !errors.Is(err, format.ErrShort) {
		t.Fatalf("cut short: %v", err)
	}
}

func checkEntries(t *testing.T, seg Segment, b []byte, kind IndexKind, entries []format.IndexEntry) []Verdict {
	t.Helper()
	seg.Log = &memFile{name: "seg.log", b: b}
	var ib []byte
	for _, e := range entries {
		ib = format.AppendIndexEntry(ib, e)
	}
	var got []Verdict
	c, err := CheckIndex(seg, kind, &memFile{name: "x", b: ib}, int64(len(ib)), func(v EntryVerdict) error {
		if v.Entry != int64(len(got)) {
			t.Fatalf("entry %d judged out of file order (after %d)", v.Entry, len(got))
		}
		got = append(got, v.Verdict)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for v := range numVerdicts {
		n := int64(0)
		for _, g := range got {
			if g == v {
				n++
			}
		}
		if c.Count(v) != n {
			t.Errorf("count of %s: %d, emitted %d", v, c.Count(v), n)
		}
	}
	return got
}

func TestIndexCheck(t *testing.T) {
	rs := seq(0, 8)
	fv, at := forge(6, 4, 4)
	rs[3].value = fv
	b, pos := build(rs...)
	forged := pos[3] + format.HeaderLen + 1 + at
	ok := func(i int) format.IndexEntry { return format.IndexEntry{Offset: uint64(i), Pos: pos[i]} }
	type tc struct {
		name    string
		b       []byte
		active  bool
		entries []format.IndexEntry
		want    []Verdict
	}
	torn := b[:pos[7]+10]
	crc := slices.Clone(b)
	flip(crc, pos[5]+crcAt)
	for _, c := range []tc{
		{"clean", b, true, []format.IndexEntry{ok(0), ok(1), ok(2), ok(3), ok(4)},
			[]Verdict{VerdictOK, VerdictOK, VerdictOK, VerdictOK, VerdictOK}},
		{"lying into a value", b, true, []format.IndexEntry{ok(0), ok(2), {Offset: 6, Pos: forged}, ok(7)},
			[]Verdict{VerdictOK, VerdictOK, VerdictNoRecord, VerdictOK}},
		{"another record's position", b, true, []format.IndexEntry{ok(0), {Offset: 3, Pos: pos[4]}, ok(6)},
			[]Verdict{VerdictOK, VerdictWrongPosition, VerdictOK}},
		{"offsets back", b, true, []format.IndexEntry{ok(0), ok(1), ok(6), ok(3), ok(4)},
			[]Verdict{VerdictOK, VerdictOK, VerdictOutOfOrder, VerdictOK, VerdictOK}},
		{"past the end", b, true, []format.IndexEntry{ok(6), ok(7), {Offset: 8, Pos: int64(len(b))}, {Offset: 9, Pos: int64(len(b)) + 40}},
			[]Verdict{VerdictOK, VerdictOK, VerdictPastEnd, VerdictPastEnd}},
		{"into a torn tail", torn, true, []format.IndexEntry{ok(6), ok(7)},
			[]Verdict{VerdictOK, VerdictPastEnd}},
		{"the damaged record", crc, false, []format.IndexEntry{ok(4), ok(5), ok(6)},
			[]Verdict{VerdictOK, VerdictCorruptRecord, VerdictOK}},
		{"into damage", crc, false, []format.IndexEntry{ok(4), {Offset: 5, Pos: pos[5] + 3}, ok(6)},
			[]Verdict{VerdictOK, VerdictUnchecked, VerdictOK}},
	} {
		got := checkEntries(t, Segment{Active: c.active, Index: nil}, c.b, OffsetIndex, c.entries)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	ts := func(o int) int64 { return 1_700_000_000_000_000_000 + int64(o) }
	te := func(o int, t int64) format.IndexEntry { return format.IndexEntry{Offset: uint64(o), Pos: t} }
	for _, c := range []tc{
		{"clean", b, true, []format.IndexEntry{te(0, ts(0)), te(4, ts(4)), te(7, ts(7))},
			[]Verdict{VerdictOK, VerdictOK, VerdictOK}},
		{"wrong time", b, true, []format.IndexEntry{te(0, ts(0)), te(4, 99)},
			[]Verdict{VerdictOK, VerdictWrongTimestamp}},
		{"after the last record", torn, true, []format.IndexEntry{te(6, ts(6)), te(7, ts(7)), te(9, ts(9))},
			[]Verdict{VerdictOK, VerdictPastEnd, VerdictPastEnd}},
		{"lost to damage", crc, false, []format.IndexEntry{te(4, ts(4)), te(5, ts(5)), te(6, ts(6))},
			[]Verdict{VerdictOK, VerdictCorruptRecord, VerdictOK}},
		{"below the base", b, true, []format.IndexEntry{te(0, ts(0)), te(2, ts(2))},
			[]Verdict{VerdictOK, VerdictOK}},
	} {
		got := checkEntries(t, Segment{Active: c.active}, c.b, TimeIndex, c.entries)
		if !slices.Equal(got, c.want) {
			t.Errorf("time %s: %v, want %v", c.name, got, c.want)
		}
	}
	rs = seq(10, 14)
	b, _ = build(rs...)
	got := checkEntries(t, Segment{Base: 10}, b, TimeIndex, []format.IndexEntry{te(3, 0), te(10, ts(10))})
	if want := []Verdict{VerdictNoSuchOffset, VerdictOK}; !slices.Equal(got, want) {
		t.Errorf("below the base: %v, want %v", got, want)
	}
}

// changingFile is a File whose bytes are old for its first read and new
// from then on, as a file rewritten between two reads is.
type changingFile struct {
	memFile
	new   []byte
	reads int
}

func (c *changingFile) ReadAt(p []byte, off int64) (int, error) {
	if c.reads++; c.reads == 2 {
		c.b = c.new
	}
	return c.memFile.ReadAt(p, off)
}

// TestRecordRewrittenBetweenReads: a record whose header and rest come
// from two reads, the file rewritten in between, is judged as the file is
// now: the new record, header and all, when its length stayed; a CRC
// mismatch when it did not. (Judging the new bytes by the old header gave
// a CRC mismatch for a record that is whole, and with the read-ahead's
// check the old header taken over new bytes.)
func TestRecordRewrittenBetweenReads(t *testing.T) {
	rec := func(value string) []byte {
		return format.AppendRecord(nil, &format.Record{Offset: 7, Timestamp: 11, Value: []byte(value)})
	}
	for _, c := range []struct {
		name     string
		new      []byte
		wantErr  error
		wantBody string
	}{
		{"same length", rec("new value"), nil, "new value"},
		{"longer", rec("a longer new value"), format.ErrCRC, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			old := rec("old value")
			f := &changingFile{memFile: memFile{name: "x.log", b: old}, new: c.new}
			r := newReader(f)
			r.chunk, r.max = format.HeaderLen, format.HeaderLen // the header alone first
			var h format.Header
			b, err := r.record(0, &h, true)
			if !errors.Is(err, c.wantErr) || err == nil && string(b[format.HeaderLen:]) != c.wantBody {
				t.Fatalf("record: %q, %v; want %q, %v", b, err, c.wantBody, c.wantErr)
			}
			if err == nil && h.CRC != binary.BigEndian.Uint32(c.new[12:]) { // the CRC, after offset and size
				t.Fatalf("header CRC %08x is not the new record's", h.CRC)
			}
		})
	}
}
