package logstore

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/seglog/seglog/format"
)

// simpleFuzzSeeds adds the first segment of every fixture (store, index)
// and a few hand-made cases.
func simpleFuzzSeeds(f *testing.F) {
	entries, _ := os.ReadDir(simpleFixtures)
	for _, e := range entries {
		dir := filepath.Join(simpleFixtures, e.Name())
		l, err := OpenSimpleLog(dir)
		if err != nil || len(l.Segments()) == 0 {
			continue
		}
		for _, seg := range l.Segments() {
			store, _ := os.ReadFile(seg.Store)
			index, _ := os.ReadFile(seg.Index)
			f.Add(store, index)
		}
	}
	one := format.AppendSimpleRecord(nil, []byte("Sushant"))
	f.Add(one, make([]byte, 120))
	f.Add(append(one, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1), format.AppendSimpleIndexEntry(nil, format.SimpleIndexEntry{RelOffset: 1, Pos: 15}))
	f.Add([]byte{}, []byte{})
}

// framing is the records of a store by plain framing from byte 0, the
// independent answer the reader must agree with.
func framing(store []byte) (starts []int64, end int64) {
	for {
		if int64(len(store))-end < format.SimpleFrameLen {
			return starts, end
		}
		n := binary.BigEndian.Uint64(store[end:])
		if n > uint64(int64(len(store))-end-format.SimpleFrameLen) {
			return starts, end
		}
		starts = append(starts, end)
		end += format.SimpleFrameLen + int64(n)
	}
}

func writeFuzzSimple(t *testing.T, store, index []byte) SimpleSegment {
	dir := t.TempDir()
	seg := SimpleSegment{Base: 5, Store: filepath.Join(dir, "5.store"), Index: filepath.Join(dir, "5.index")}
	if err := os.WriteFile(seg.Store, store, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seg.Index, index, 0o644); err != nil {
		t.Fatal(err)
	}
	return seg
}

// FuzzSimpleStoreScan: whatever the bytes, reading never panics or
// allocates past them, and returns exactly the records plain framing
// finds up to the first break (then more only past corruption the index
// bridged).
func FuzzSimpleStoreScan(f *testing.F) {
	simpleFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, store, index []byte) {
		seg := writeFuzzSimple(t, store, index)
		l, err := OpenSimpleLog(filepath.Dir(seg.Store))
		if err != nil {
			t.Fatal(err)
		}
		starts, end := framing(store)
		it := l.Read(0)
		defer it.Close()
		var n int
		for it.Next() {
			r := it.Record()
			if n >= len(starts) || r.Pos != starts[n] || r.Offset != seg.Base+uint64(n) {
				t.Fatalf("record %d at %d offset %d; framing says %v", n, r.Pos, r.Offset, starts)
			}
			if !bytes.Equal(r.Value, store[r.Pos+format.SimpleFrameLen:r.Pos+format.SimpleFrameLen+int64(len(r.Value))]) {
				t.Fatalf("record %d: value differs", n)
			}
			n++
		}
		if n != len(starts) {
			t.Fatalf("%d records, framing finds %d", n, len(starts))
		}
		tails := it.Tails()
		switch {
		case end == int64(len(store)):
			if it.Err() != nil || len(tails) != 0 {
				t.Fatalf("clean end: err %v tails %v", it.Err(), tails)
			}
		case it.Err() == nil:
			if len(tails) != 1 || tails[0].Pos != end || tails[0].Bytes != int64(len(store))-end {
				t.Fatalf("tail %v, want one at %d", tails, end)
			}
		}
		c, err := CheckSimpleSegment(seg, func(SimpleIndexEntryInfo) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if c.Records != uint64(len(starts)) || c.End != end || c.Size != int64(len(store)) || c.Corrupt != (it.Err() != nil) {
			t.Fatalf("check %+v; framing %d records to %d, read err %v", c, len(starts), end, it.Err())
		}
	})
}

// FuzzSimpleIndexClassify: every entry is classified once, padding only
// in one run that ends the file, and a real entry always points at a
// record's start.
func FuzzSimpleIndexClassify(f *testing.F) {
	simpleFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, store, index []byte) {
		seg := writeFuzzSimple(t, store, index)
		starts, _ := framing(store)
		var seen int64
		runs := 0
		c, err := CheckSimpleSegment(seg, func(e SimpleIndexEntryInfo) error {
			if e.Entry != seen || e.Count < 1 || e.Count > 1 && e.Class != SimpleEntryPadding {
				t.Fatalf("entry %+v after %d", e, seen)
			}
			seen += e.Count
			switch e.Class {
			case SimpleEntryPadding:
				runs++
				b := index[e.Entry*format.SimpleIndexEntryLen : (e.Entry+e.Count)*format.SimpleIndexEntryLen]
				if !format.IsZero(b) {
					t.Fatalf("padding %+v is not zeros", e)
				}
			case SimpleEntryReal:
				if e.RelOffset != uint32(e.Entry) {
					t.Fatalf("real entry %+v holds another offset", e)
				}
				if e.Entry < int64(len(starts)) && int64(e.Pos) != starts[e.Entry] {
					t.Fatalf("real entry %+v, but record %d starts at %d", e, e.Entry, starts[e.Entry])
				}
			case SimpleEntryPastEnd:
				if e.Pos < uint64(len(store)) {
					t.Fatalf("past-end entry %+v inside a %d-byte store", e, len(store))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n := int64(len(index)) / format.SimpleIndexEntryLen
		if seen != n || c.Entries != n || c.Real+c.Padding+c.PastEnd+c.Wrong != n || runs > 1 {
			t.Fatalf("classified %d of %d entries (%+v), %d padding runs", seen, n, c, runs)
		}
		if runs == 1 && seen > 0 && !format.IsZero(index[(n-c.Padding)*format.SimpleIndexEntryLen:n*format.SimpleIndexEntryLen]) {
			t.Fatal("padding run does not end the index")
		}
	})
}
