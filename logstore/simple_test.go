package logstore

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/seglog/seglog/format"
)

// The fixtures under ../testdata/simplelog are written by an independent
// generator (testdata/simplelog/gen, which imports no seglog package); each
// has an expect.json saying what a correct reader finds.

const simpleFixtures = "../testdata/simplelog"

type simpleExpect struct {
	Segments []struct {
		Base             uint64 `json:"base"`
		Store            string `json:"store"`
		Index            string `json:"index"`
		StoreBytes       int64  `json:"store_bytes"`
		IndexBytes       int64  `json:"index_bytes"`
		RealIndexEntries int64  `json:"real_index_entries"`
		PaddingEntries   int64  `json:"padding_entries"`
		EntriesPastStore int64  `json:"entries_past_store"`
		Closed           bool   `json:"closed"`
		WholeRecords     uint64 `json:"whole_records"`
		FramedBytes      int64  `json:"framed_bytes"`
	} `json:"segments"`
	Records []simpleExpectRecord `json:"records"`
	Torn    []struct {
		Store     string `json:"store"`
		Offset    uint64 `json:"offset"`
		Position  int64  `json:"position"`
		TornBytes int64  `json:"torn_bytes"`
	} `json:"torn"`
	FramingBreak *struct {
		Store       string               `json:"store"`
		Position    int64                `json:"position"`
		Offset      uint64               `json:"offset"`
		IntactAfter []simpleExpectRecord `json:"intact_after"`
	} `json:"framing_break"`
	IndexLies []struct {
		Index string `json:"index"`
		Entry int64  `json:"entry"`
	} `json:"index_lies"`
}

type simpleExpectRecord struct {
	Offset      uint64 `json:"offset"`
	Position    int64  `json:"position"`
	ValueBase64 string `json:"value_base64"`
}

// simpleFixtureDirs lists the fixtures with their manifests.
func simpleFixtureDirs(t testing.TB) map[string]simpleExpect {
	t.Helper()
	entries, err := os.ReadDir(simpleFixtures)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]simpleExpect{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(simpleFixtures, e.Name(), "expect.json"))
		if err != nil {
			continue
		}
		var x simpleExpect
		if err := json.Unmarshal(b, &x); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		out[e.Name()] = x
	}
	for _, want := range []string{"clean", "padded-names", "crashed", "torn", "empty", "empty-crashed", "corrupt-length", "lying-index"} {
		if _, ok := out[want]; !ok {
			t.Fatalf("fixture %s missing under %s (regenerate: go run ./testdata/simplelog/gen -out testdata/simplelog)", want, simpleFixtures)
		}
	}
	return out
}

// readSimpleAll reads every record from offset from, going on past
// corruption when skip; it returns the records, tails and first error.
func readSimpleAll(t *testing.T, l *SimpleLog, from uint64, skip bool) ([]simpleExpectRecord, []SimpleTail, error) {
	t.Helper()
	it := l.Read(from)
	defer it.Close()
	var got []simpleExpectRecord
	var first error
	for {
		for it.Next() {
			r := it.Record()
			got = append(got, simpleExpectRecord{Offset: r.Offset, Position: r.Pos, ValueBase64: base64.StdEncoding.EncodeToString(r.Value)})
		}
		if it.Err() != nil && first == nil {
			first = it.Err()
		}
		if !skip || !it.SkipCorrupt() {
			break
		}
	}
	return got, it.Tails(), first
}

func TestSimpleFixturesRead(t *testing.T) {
	for name, x := range simpleFixtureDirs(t) {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(simpleFixtures, name)
			if layout, err := DetectLayout(dir); err != nil || layout != LayoutSimple {
				t.Fatalf("DetectLayout = %v, %v; want simple", layout, err)
			}
			l, err := OpenSimpleLog(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Segments()) != len(x.Segments) {
				t.Fatalf("%d segments, want %d", len(l.Segments()), len(x.Segments))
			}
			got, tails, err := readSimpleAll(t, l, 0, false)
			want := x.Records
			if fb := x.FramingBreak; fb != nil {
				// The read stops at the break, with its place.
				var ce *CorruptionError
				if !errors.As(err, &ce) || !errors.Is(err, format.ErrFrameLen) || ce.Pos != fb.Position || ce.Offset != int64(fb.Offset) ||
					filepath.Base(ce.Path) != fb.Store {
					t.Fatalf("error %v, want corruption at byte %d of %s, offset %d", err, fb.Position, fb.Store, fb.Offset)
				}
				want = slices.DeleteFunc(slices.Clone(want), func(r simpleExpectRecord) bool { return r.Offset >= fb.Offset })
			} else if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("records:\n got %v\nwant %v", got, want)
			}
			if len(tails) != len(x.Torn) {
				t.Fatalf("tails %v, want %d", tails, len(x.Torn))
			}
			for i, tt := range x.Torn {
				if g := tails[i]; filepath.Base(g.Path) != tt.Store || g.Offset != tt.Offset || g.Pos != tt.Position || g.Bytes != tt.TornBytes {
					t.Errorf("tail %d = %+v, want %+v", i, g, tt)
				}
			}
			if fb := x.FramingBreak; fb != nil {
				// Going on past it: the records the index reaches after
				// the break, then the rest.
				got, _, _ := readSimpleAll(t, l, 0, true)
				want := slices.Concat(x.Records, fb.IntactAfter)
				slices.SortFunc(want, func(a, b simpleExpectRecord) int { return int(a.Offset) - int(b.Offset) })
				if !slices.Equal(got, want) {
					t.Fatalf("with SkipCorrupt:\n got %v\nwant %v", got, want)
				}
			}
			// Every offset read from the middle gives the same records:
			// the index is a validated hint (lying-index lies).
			for i, r := range want {
				if i%3 != 0 {
					continue
				}
				got, _, _ := readSimpleAll(t, l, r.Offset, false)
				if !slices.Equal(got, want[i:]) {
					t.Fatalf("from offset %d:\n got %v\nwant %v", r.Offset, got, want[i:])
				}
			}
		})
	}
}

func TestSimpleFixturesCheck(t *testing.T) {
	for name, x := range simpleFixtureDirs(t) {
		t.Run(name, func(t *testing.T) {
			l, err := OpenSimpleLog(filepath.Join(simpleFixtures, name))
			if err != nil {
				t.Fatal(err)
			}
			lies := map[string]int64{}
			for _, li := range x.IndexLies {
				lies[li.Index]++
			}
			for i, seg := range l.Segments() {
				xs := x.Segments[i]
				var padRuns int
				c, err := CheckSimpleSegment(seg, func(e SimpleIndexEntryInfo) error {
					if e.Class == SimpleEntryPadding {
						padRuns++
						if e.Entry+e.Count != xs.IndexBytes/format.SimpleIndexEntryLen {
							t.Errorf("padding run %d+%d does not end the index", e.Entry, e.Count)
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if seg.Base != xs.Base || filepath.Base(seg.Store) != xs.Store || filepath.Base(seg.Index) != xs.Index {
					t.Errorf("segment %+v, want %d %s %s", seg, xs.Base, xs.Store, xs.Index)
				}
				if c.Records != xs.WholeRecords || c.End != xs.FramedBytes || c.Size != xs.StoreBytes {
					t.Errorf("%s: records %d end %d size %d, want %d %d %d", xs.Store, c.Records, c.End, c.Size, xs.WholeRecords, xs.FramedBytes, xs.StoreBytes)
				}
				wantReal := xs.RealIndexEntries - xs.EntriesPastStore - lies[xs.Index]
				if c.Entries != xs.IndexBytes/format.SimpleIndexEntryLen || c.Padding != xs.PaddingEntries || c.PastEnd != xs.EntriesPastStore ||
					c.Wrong != lies[xs.Index] || c.Real != wantReal {
					t.Errorf("%s: entries %d real %d padding %d past %d wrong %d; want %d %d %d %d %d", xs.Index, c.Entries, c.Real, c.Padding, c.PastEnd, c.Wrong,
						xs.IndexBytes/12, wantReal, xs.PaddingEntries, xs.EntriesPastStore, lies[xs.Index])
				}
				if want := min(xs.PaddingEntries, 1); int64(padRuns) != want {
					t.Errorf("%s: %d padding runs, want %d", xs.Index, padRuns, want)
				}
				if c.Corrupt != (x.FramingBreak != nil && x.FramingBreak.Store == xs.Store) {
					t.Errorf("%s: corrupt %v", xs.Store, c.Corrupt)
				}
			}
		})
	}
}

func TestSimpleFixturesVerifyAndStats(t *testing.T) {
	problems := map[string]map[FindingKind]int{
		"clean":          {},
		"padded-names":   {},
		"crashed":        {FindingIncompleteTail: 1},
		"torn":           {FindingIncompleteTail: 1},
		"empty":          {},
		"empty-crashed":  {},
		"corrupt-length": {FindingCorruptRecord: 1},
		"lying-index":    {FindingIndexMismatch: 2},
	}
	for name, x := range simpleFixtureDirs(t) {
		t.Run(name, func(t *testing.T) {
			l, err := OpenSimpleLog(filepath.Join(simpleFixtures, name))
			if err != nil {
				t.Fatal(err)
			}
			got := map[FindingKind]int{}
			var notes []Finding
			r, err := l.Verify(0, 1, VerifyOptions{Finding: func(f Finding) error {
				if f.Severity == SeverityProblem {
					got[f.Kind]++
				} else {
					notes = append(notes, f)
				}
				return nil
			}})
			if err != nil || !r.Complete {
				t.Fatal(err)
			}
			if want, ok := problems[name]; ok && !sameCounts(got, want) {
				t.Errorf("problems %v, want %v", got, want)
			}
			padding := 0
			for _, s := range x.Segments {
				padding += min(int(s.PaddingEntries), 1)
			}
			pads := 0
			for _, n := range notes {
				if n.Kind == FindingIndexPadding {
					pads++
				}
			}
			if pads != padding {
				t.Errorf("%d padding notes, want %d: %v", pads, padding, notes)
			}
			var records uint64
			for _, s := range x.Segments {
				records += s.WholeRecords
			}
			if r.Records != records || r.Segments != len(x.Segments) {
				t.Errorf("report %+v, want %d records", r, records)
			}
			st, err := l.Stats()
			if err != nil {
				t.Fatal(err)
			}
			last := x.Segments[len(x.Segments)-1]
			if st.Start != x.Segments[0].Base || st.Next != last.Base+last.WholeRecords || st.Segments != len(x.Segments) {
				t.Errorf("stats %+v", st)
			}
			if x.FramingBreak == nil && st.Records != records {
				t.Errorf("stats: %d records, want %d", st.Records, records)
			}
			ext, err := l.Extent()
			if err != nil || ext != (Extent{Start: st.Start, Next: st.Next}) {
				t.Errorf("extent %+v %v, want %d %d", ext, err, st.Start, st.Next)
			}
		})
	}
}

func sameCounts(a, b map[FindingKind]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// writeSimple writes a simple log of the given values to dir as one
// segment based at base, with a full index; it returns the store bytes.
func writeSimple(t testing.TB, dir string, base uint64, values ...string) []byte {
	t.Helper()
	var store, index []byte
	for i, v := range values {
		index = format.AppendSimpleIndexEntry(index, format.SimpleIndexEntry{RelOffset: uint32(i), Pos: uint64(len(store))})
		store = format.AppendSimpleRecord(store, []byte(v))
	}
	name := fmt.Sprintf("%08d", base)
	for ext, b := range map[string][]byte{format.SimpleStoreExt: store, format.SimpleIndexExt: index} {
		if err := os.WriteFile(filepath.Join(dir, name+ext), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

func TestDetectLayout(t *testing.T) {
	touch := func(dir string, names ...string) string {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	tests := []struct {
		files []string
		want  Layout
		mixed bool
	}{
		{nil, LayoutNone, false},
		{[]string{"0.index"}, LayoutNone, false}, // both layouts have .index
		{[]string{"0.store"}, LayoutSimple, false},
		{[]string{"00000000.store", "00000000.index", "notes.txt"}, LayoutSimple, false},
		{[]string{format.SegmentName(0, ".log"), format.SegmentName(0, ".index")}, LayoutSeglog, false},
		{[]string{format.SegmentName(0, ".timeindex")}, LayoutSeglog, false},
		{[]string{format.SegmentName(0, ".log"), "0.store"}, LayoutNone, true},
	}
	for _, tc := range tests {
		dir := touch(t.TempDir(), tc.files...)
		got, err := DetectLayout(dir)
		var me *MixedLayoutError
		if tc.mixed {
			if !errors.As(err, &me) || !errors.Is(err, ErrMixedLayout) || me.SeglogFile != tc.files[0] || me.SimpleFile != tc.files[1] {
				t.Errorf("%v: %v, want a mixed-layout error naming both", tc.files, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %v, %v; want %v", tc.files, got, err, tc.want)
		}
	}
}

func TestOpenSimpleLogNames(t *testing.T) {
	dir := t.TempDir()
	writeSimple(t, dir, 0, "a", "b")
	if err := os.WriteFile(filepath.Join(dir, "0.store"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSimpleLog(dir); err == nil || !strings.Contains(err.Error(), "0.store") || !strings.Contains(err.Error(), "00000000.store") {
		t.Fatalf("two stores for base 0: %v", err)
	}
	os.Remove(filepath.Join(dir, "0.store"))
	if err := os.WriteFile(filepath.Join(dir, "7.index"), make([]byte, 24), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := OpenSimpleLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if o := l.orphans; len(o) != 1 || filepath.Base(o[0]) != "7.index" {
		t.Fatalf("orphans %v", o)
	}
	var kinds []FindingKind
	if _, err := l.Verify(0, 1, VerifyOptions{Finding: func(f Finding) error { kinds = append(kinds, f.Kind); return nil }}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(kinds, FindingOrphanIndex) {
		t.Fatalf("findings %v lack the orphan index", kinds)
	}
}

// A length field that cannot be a record is never allocated, wherever it
// is: the last record (a torn tail) or the middle (corruption).
func TestSimpleHugeLength(t *testing.T) {
	dir := t.TempDir()
	store := writeSimple(t, dir, 0, "one", "two", "three")
	huge := binaryLen(math.MaxInt64 - 3)
	store = append(store, huge...)
	store = append(store, "junk"...)
	if err := os.WriteFile(filepath.Join(dir, "00000000.store"), store, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := OpenSimpleLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, tails, err := readSimpleAll(t, l, 0, false)
	c, cerr := CheckSimpleSegment(l.Segments()[0], func(SimpleIndexEntryInfo) error { return nil })
	runtime.ReadMemStats(&after)
	if err != nil || cerr != nil || len(got) != 3 || len(tails) != 1 || !tails[0].HasLen || tails[0].Len != math.MaxInt64-3 {
		t.Fatalf("records %v tails %+v err %v %v", got, tails, err, cerr)
	}
	if c.Records != 3 || !c.HasLen || c.Corrupt {
		t.Fatalf("check %+v", c)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Fatalf("reading allocated %d bytes", grew)
	}

	// The same length in the middle, with the index showing the record
	// after it: corruption, still never allocated.
	mid := slices.Concat(format.AppendSimpleRecord(nil, []byte("one")), binaryLen(math.MaxInt64-3), []byte("two"))
	after2 := int64(len(mid))
	mid = format.AppendSimpleRecord(mid, []byte("three"))
	index := slices.Concat(format.AppendSimpleIndexEntry(nil, format.SimpleIndexEntry{}),
		format.AppendSimpleIndexEntry(nil, format.SimpleIndexEntry{RelOffset: 1, Pos: 11}),
		format.AppendSimpleIndexEntry(nil, format.SimpleIndexEntry{RelOffset: 2, Pos: uint64(after2)}))
	if err := os.WriteFile(filepath.Join(dir, "00000000.store"), mid, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "00000000.index"), index, 0o644); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&before)
	got, tails, err = readSimpleAll(t, l, 0, false)
	var ce *CorruptionError
	if len(got) != 1 || len(tails) != 0 || !errors.As(err, &ce) || ce.Pos != 11 || ce.Offset != 1 {
		t.Fatalf("records %v tails %v err %v", got, tails, err)
	}
	got, _, _ = readSimpleAll(t, l, 0, true)
	if len(got) != 2 || got[1].Offset != 2 || got[1].Position != after2 {
		t.Fatalf("skipping the corruption: %v", got)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Fatalf("reading allocated %d bytes", grew)
	}
}

func binaryLen(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }
