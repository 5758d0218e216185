package segfile

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/seglog/seglog/format"
)

// genSegment builds a segment from seed: records of random sizes, some of
// them with sound records (chains of one to three) forged into their
// values, then damaged: bits flipped in headers and bodies, offsets
// moved, bytes cut off the end, garbage inserted. It returns the bytes,
// the records written (each with its position in the result, and whether
// its bytes survived intact), and an index as the writer left it.
type genRec struct {
	off    uint64
	pos    int64
	n      int64
	intact bool
}

func genSegment(seed uint64, active bool) ([]byte, []genRec, []format.IndexEntry) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	n := 1 + r.IntN(40)
	var b []byte
	var recs []genRec
	var idx []format.IndexEntry
	for i := range n {
		off := uint64(i)
		var value []byte
		switch r.IntN(4) {
		case 0: // a value holding forged records, with offsets near this one
			value = bytes.Repeat([]byte{'v'}, r.IntN(5))
			fo := off + uint64(r.IntN(3))
			for range 1 + r.IntN(3) {
				value = format.AppendRecord(value, &format.Record{Offset: fo, Timestamp: int64(fo), Value: []byte("forged")})
				fo++
			}
			value = append(value, bytes.Repeat([]byte{'t'}, r.IntN(5))...)
		default:
			value = make([]byte, r.IntN(60))
			for j := range value {
				value[j] = byte(r.IntN(256))
			}
		}
		pos := int64(len(b))
		b = format.AppendRecord(b, &format.Record{Offset: off, Timestamp: int64(off), Key: []byte{'k'}, Value: value})
		recs = append(recs, genRec{off: off, pos: pos, n: int64(len(b)) - pos, intact: true})
		idx = append(idx, format.IndexEntry{Offset: off, Pos: pos})
	}
	damage := func(at int64, n int64) { // bytes [at, at+n) are no longer what was written
		for i := range recs {
			if recs[i].pos < at+n && at < recs[i].pos+recs[i].n {
				recs[i].intact = false
			}
		}
	}
	for range r.IntN(4) {
		if len(b) == 0 {
			break
		}
		switch r.IntN(5) {
		case 0, 1: // a flipped bit anywhere
			at := r.Int64N(int64(len(b)))
			b[at] ^= 1 << r.IntN(8)
			damage(at, 1)
		case 2: // a record's offset field moved
			k := r.IntN(len(recs))
			if recs[k].pos+8 <= int64(len(b)) {
				binary.BigEndian.PutUint64(b[recs[k].pos:], recs[k].off+uint64(r.IntN(20))-5)
				damage(recs[k].pos, 8)
			}
		case 3: // garbage inserted
			at := r.Int64N(int64(len(b)) + 1)
			g := make([]byte, 1+r.IntN(40))
			for j := range g {
				g[j] = byte(r.IntN(256))
			}
			b = append(b[:at:at], append(g, b[at:]...)...)
			for i := range recs {
				switch {
				case recs[i].pos >= at:
					recs[i].pos += int64(len(g))
				case recs[i].pos+recs[i].n > at:
					recs[i].intact = false
				}
			}
			for i := range idx {
				if idx[i].Pos >= at {
					idx[i].Pos += int64(len(g))
				}
			}
		case 4: // the tail cut
			cut := r.Int64N(int64(len(b)) + 1)
			damage(cut, int64(len(b))-cut)
			b = b[:cut]
		}
	}
	return b, recs, idx
}

// FuzzScan checks the one rule's promises on generated, damaged segments:
// every record returned is sound, offsets rise, records do not overlap;
// no record written that survived intact, and that a chain of intact
// records links to the segment's start, is lost; the same verdict comes
// with and without the index; and a torn tail stays one.
func FuzzScan(f *testing.F) {
	for seed := range uint64(64) {
		f.Add(seed, seed%2 == 0)
	}
	f.Fuzz(func(t *testing.T, seed uint64, active bool) {
		b, recs, idx := genSegment(seed, active)
		plain := scanAll(t, Segment{Active: active}, b)
		var ib []byte
		for _, e := range idx {
			ib = format.AppendIndexEntry(ib, e)
		}
		indexed := scanAll(t, Segment{Active: active, Index: NewIndex(&memFile{b: ib}, int64(len(ib)))}, b)
		for _, v := range []verdict{plain, indexed} {
			for i := 1; i < len(v.offsets); i++ {
				if v.offsets[i] <= v.offsets[i-1] {
					t.Fatalf("offsets do not rise: %v", v.offsets)
				}
			}
		}
		// An intact record confirmed by an intact successor right after it
		// (or the end of the data) is in the verdict: damage before it may
		// take other records, never it.
		got := map[uint64]bool{}
		for _, o := range indexed.offsets {
			got[o] = true
		}
		plainGot := map[uint64]bool{}
		for _, o := range plain.offsets {
			plainGot[o] = true
		}
		// With the index as the writer left it, an intact record confirmed
		// by an intact successor right after it (or the end of the data)
		// is in the verdict: damage before it may take other records,
		// never it. Without the index, a byte scan may take record shapes
		// in values the damage laid bare for records; the chain with more
		// records wins, so intact records in a run longer than the forged
		// chains (up to three) stay.
		for i, r := range recs {
			run, toEnd := adjacentRun(recs, i, len(b))
			if !r.intact || run < 2 && !toEnd {
				continue
			}
			if !got[r.off] {
				t.Errorf("intact record %d at %d lost with the index; verdict %v; damages:", r.off, r.pos, indexed.offsets)
				for _, d := range indexed.damages {
					t.Logf("  %s (by %s)", d.Error(), d.By)
				}
			}
			// In the active segment, a record after one whose length runs
			// past the end of the data (a write cut short, or a length field
			// gone wrong: they can look the same) may be taken for its
			// bytes, unless a chain of records runs from it to the end.
			if run >= 4 && !plainGot[r.off] && !(active && tornLooking(plain, r.pos, int64(len(b)))) {
				t.Errorf("intact record %d at %d lost without the index; verdict %v; damages:", r.off, r.pos, plain.offsets)
				for _, d := range plain.damages {
					t.Logf("  %s (by %s)", d.Error(), d.By)
				}
			}
		}
	})
}

func sumLen(recs []genRec, upTo uint64) int64 {
	var n int64
	for _, r := range recs {
		if r.off >= upTo {
			break
		}
		n += r.n
	}
	return n
}

// tornLooking reports whether a break of the verdict before pos (and
// reaching past it) is a record whose length runs past the end of the
// data, its header claiming the offset expected there.
func tornLooking(v verdict, pos, limit int64) bool {
	for _, d := range v.damages {
		if d.Pos < pos && (d.End > pos || !d.Resumed) && d.HeaderOK && d.Pos+d.Header.RecordLen() > limit && d.Header.Offset == d.Offset {
			return true
		}
	}
	return false
}

// adjacentRun is the length of the run of intact records that starts at
// recs[i], each right after the one before, and whether it ends the data.
func adjacentRun(recs []genRec, i, size int) (int, bool) {
	j := i
	for j < len(recs) && recs[j].intact && (j == i || recs[j].pos == recs[j-1].pos+recs[j-1].n) {
		j++
	}
	return j - i, j > i && recs[j-1].pos+recs[j-1].n == int64(size)
}
