package segfile

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/seglog/seglog/format"
)

// TestFloorAboveEntries: a segment whose records lie partly or wholly
// below its floor (they overlap the segment before). No index entry
// naming a record below the floor is confirmed, whichever way it is
// reached, and the records counted are those at or above the floor.
func TestFloorAboveEntries(t *testing.T) {
	recs := seq(2, 7) // offsets 2..6, every one indexed
	b, pos := build(recs...)
	for _, tc := range []struct {
		name      string
		floor     uint64
		confirmed []uint64 // the entries' offsets Confirms accepts
		records   uint64
		exact     bool // records below the floor are damage: the count reads them
	}{
		{"no overlap", 0, offsets(2, 7), 5, false},
		{"floor at base", 2, offsets(2, 7), 5, false},
		{"floor inside", 5, offsets(5, 7), 2, true},
		{"floor at the last record", 6, offsets(6, 7), 1, true},
		{"floor at the end", 7, nil, 0, true},
		{"floor above the end", 9, nil, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seg := Segment{Path: "seg.log", Base: 2, Floor: tc.floor, Log: &memFile{name: "seg.log", b: b}, Index: indexOf(recs, pos)}
			s, err := NewScanner(seg, -1, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var confirmed []uint64
			for i, r := range recs {
				ok, err := s.Confirms(int64(i))
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					confirmed = append(confirmed, r.off)
				}
			}
			if !slices.Equal(confirmed, tc.confirmed) {
				t.Errorf("entries confirmed: %v, want %v", confirmed, tc.confirmed)
			}
			end, err := FindEnd(seg, false)
			if err != nil {
				t.Fatal(err)
			}
			if end.Next < tc.floor && end.Records > 0 {
				t.Errorf("FindEnd: %d records ending at offset %d, below the floor %d", end.Records, end.Next, tc.floor)
			}
			n, exact, err := CountRecords(seg, end, 1)
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.records || exact != tc.exact {
				t.Errorf("CountRecords: %d (exact %v), want %d (exact %v)", n, exact, tc.records, tc.exact)
			}
		})
	}
}

// TestCountRecords: a segment's records are counted from its offsets,
// and the count said not to be exact, only where the index shows no
// offsets skipped and the walk to the end met no damage; elsewhere they
// are read and counted exactly.
func TestCountRecords(t *testing.T) {
	recs := seq(0, 8)
	clean, pos := build(recs...)
	valueOf := func(i int) int64 { return pos[i+1] - int64(len(val(uint64(i)))) }
	entries := func(idx ...int) *Index {
		var b []byte
		for _, i := range idx {
			b = format.AppendIndexEntry(b, format.IndexEntry{Offset: recs[i].off, Pos: pos[i]})
		}
		return NewIndex(&memFile{name: "x.index", b: b}, int64(len(b)))
	}
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	for _, tc := range []struct {
		name     string
		flip     int   // the record whose value is damaged, -1 for none
		index    []int // the records indexed
		interval int
		records  uint64
		exact    bool
	}{
		{"healthy", -1, all, 0, 8, false},
		{"healthy, the topic's interval", -1, all, 1, 8, false},
		// What verify-crc is for: the count is not said to be exact.
		{"damage before the last entry", 2, all, 0, 8, false},
		{"damage the walk to the end meets", 6, []int{0, 1, 2, 3, 4, 5}, 0, 7, true},
		{"entries not at one interval", 2, []int{0, 1, 3, 4, 6, 7}, 0, 7, true},
		{"entries at another interval than the topic's", 2, all, 2, 7, true},
		{"no index", 2, nil, 0, 7, true},
		{"healthy, no index", -1, nil, 0, 8, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := slices.Clone(clean)
			if tc.flip >= 0 {
				flip(b, valueOf(tc.flip))
			}
			seg := Segment{Path: "seg.log", Log: &memFile{name: "seg.log", b: b}}
			if tc.index != nil {
				seg.Index = entries(tc.index...)
			}
			end, err := FindEnd(seg, false)
			if err != nil {
				t.Fatal(err)
			}
			n, exact, err := CountRecords(seg, end, tc.interval)
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.records || exact != tc.exact {
				t.Errorf("CountRecords: %d (exact %v), want %d (exact %v)", n, exact, tc.records, tc.exact)
			}
		})
	}
}

// A count that reads the records counts those in the bytes its end was
// found in, not records a writer appended since: describe's records
// would exceed its offsets.
func TestCountRecordsWhileAppending(t *testing.T) {
	recs := seq(0, 5)
	b, pos := build(recs...)
	log := &memFile{name: "seg.log", b: b}
	// Entries for offsets 0, 1 and 3: not at one interval, so the count
	// reads the records.
	picked := []int{0, 1, 3}
	var idx []byte
	for _, i := range picked {
		idx = format.AppendIndexEntry(idx, format.IndexEntry{Offset: recs[i].off, Pos: pos[i]})
	}
	seg := Segment{Path: "seg.log", Active: true, Log: log, Index: NewIndex(&memFile{name: "seg.index", b: idx}, int64(len(idx)))}
	end, err := FindEnd(seg, false)
	if err != nil || end.Next != 5 || end.From == 0 {
		t.Fatalf("FindEnd: next %d from byte %d, %v; want 5, from the last entry", end.Next, end.From, err)
	}
	more, _ := build(seq(5, 7)...)
	log.b = append(log.b, more...)
	n, exact, err := CountRecords(seg, end, 0)
	if err != nil || n != 5 || !exact {
		t.Errorf("CountRecords after 2 more were appended: %d (exact %v), %v; want the 5 the end was found with", n, exact, err)
	}
}

// countingFile counts the bytes read from it.
type countingFile struct {
	*memFile
	read int64
}

func (c *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.memFile.ReadAt(p, off)
	c.read += int64(n)
	return n, err
}

// Junk shaped as headers of the offset expected, each claiming a small
// length and failing its CRC, is passed over with reads that stay in
// proportion to the junk: no candidate's CRC is read before the header
// after it could confirm it.
func TestByteScanOverHeaderShapedJunk(t *testing.T) {
	before, _ := build(seq(0, 5)...)
	after, _ := build(seq(5, 10)...)
	rng := rand.New(rand.NewPCG(1, 2))
	var junk []byte
	for len(junk) < 256<<10 {
		var h [format.HeaderLen]byte
		binary.BigEndian.PutUint64(h[0:], 5)
		binary.BigEndian.PutUint32(h[8:], uint32(rng.IntN(61)))
		binary.BigEndian.PutUint32(h[12:], rng.Uint32())
		junk = append(junk, h[:]...)
		for range rng.IntN(31) {
			junk = append(junk, byte(rng.Uint32()))
		}
	}
	log := &countingFile{memFile: &memFile{name: "seg.log", b: slices.Concat(before, junk, after)}}
	end, err := FindEnd(Segment{Path: "seg.log", Log: log}, true)
	if err != nil || end.Next != 10 || end.Records != 10 {
		t.Fatalf("FindEnd: %d records, next %d, %v; want the 10 around the junk", end.Records, end.Next, err)
	}
	if size := int64(len(log.b)); log.read > 2*size {
		t.Errorf("read %d bytes of a %d-byte segment", log.read, size)
	}
}
