package segfile

import (
	"slices"
	"testing"
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
	}{
		{"no overlap", 0, offsets(2, 7), 5},
		{"floor at base", 2, offsets(2, 7), 5},
		{"floor inside", 5, offsets(5, 7), 2},
		{"floor at the last record", 6, offsets(6, 7), 1},
		{"floor at the end", 7, nil, 0},
		{"floor above the end", 9, nil, 0},
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
			n, err := CountRecords(seg, end, 1)
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.records {
				t.Errorf("CountRecords: %d, want %d", n, tc.records)
			}
		})
	}
}
