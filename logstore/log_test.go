package logstore

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// readLog reads every record of l from from through the Log interface:
// offsets and values, with a check that values-only records carry
// nothing else.
func readLog(t *testing.T, l Log, from uint64) (offsets []uint64, values []string) {
	t.Helper()
	it, err := l.Records(from)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for it.Next() {
		r := it.Record()
		if l.Layout().ValuesOnly() && (r.Key != nil || r.Timestamp != 0 || r.CRC != 0) {
			t.Errorf("%s: record %d carries more than a value: %+v", l.Name(), r.Offset, r)
		}
		offsets, values = append(offsets, r.Offset), append(values, string(r.Value))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return offsets, values
}

// Both layouts, read through Log, give their records by offset and the
// extent and stats their own types give.
func TestLogLayouts(t *testing.T) {
	_, p := pfSegments(t, 256, 40, 3)
	simpleDir := t.TempDir()
	writeSimple(t, simpleDir, 0, "a", "b", "c")
	writeSimple(t, simpleDir, 3, "d", "e")
	sl, err := OpenSimpleLog(simpleDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		log    Log
		layout Layout
		want   func(off uint64) string
		next   uint64
	}{
		{p, LayoutSeglog, func(off uint64) string { return fmt.Sprintf("value %d", off) }, 40},
		{sl, LayoutSimple, func(off uint64) string { return string(rune('a' + off)) }, 5},
	} {
		l := tc.log
		if l.Layout() != tc.layout || l.Layout().ValuesOnly() != (tc.layout == LayoutSimple) {
			t.Errorf("%s: layout %v, values only %v", l.Name(), l.Layout(), l.Layout().ValuesOnly())
		}
		ext, err := l.Extent()
		if err != nil || ext.Start != 0 || ext.Next != tc.next || ext.Full {
			t.Errorf("%s: extent %+v, %v; want 0..%d", l.Name(), ext, err, tc.next)
		}
		st, err := l.Stats()
		if err != nil || st.Start != ext.Start || st.Next != ext.Next || st.Records != tc.next {
			t.Errorf("%s: stats %+v, %v", l.Name(), st, err)
		}
		for _, from := range []uint64{0, 2, tc.next - 1, tc.next} {
			offsets, values := readLog(t, l, from)
			if uint64(len(offsets)) != tc.next-from {
				t.Errorf("%s from %d: %d records, want %d", l.Name(), from, len(offsets), tc.next-from)
				continue
			}
			for i, off := range offsets {
				if off != from+uint64(i) || values[i] != tc.want(off) {
					t.Errorf("%s from %d: record %d is offset %d %q", l.Name(), from, i, off, values[i])
				}
			}
		}
		if err := l.Close(); err != nil {
			t.Errorf("%s: close: %v", l.Name(), err)
		}
	}
	if s := LayoutSimple.String(); s != "simple store/index layout" {
		t.Errorf("LayoutSimple is %q", s)
	}
}

// The simple layout's iterator, through Log, still tells the torn
// records it passed over; seglog's never has any to tell.
func TestLogTornTails(t *testing.T) {
	dir := t.TempDir()
	store := writeSimple(t, dir, 0, "one", "two")
	if err := os.Truncate(filepath.Join(dir, "00000000.store"), int64(len(store)-1)); err != nil {
		t.Fatal(err)
	}
	l, err := OpenSimpleLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	it, err := l.Records(0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for it.Next() {
	}
	tt, ok := it.(TornTails)
	if !ok || len(tt.Tails()) != 1 || tt.Tails()[0].Offset != 1 {
		t.Fatalf("torn tails %v (%v), want offset 1's", tt, ok)
	}
	_, p := pfSegments(t, 1<<20, 3, 1)
	pit, err := p.Records(0)
	if err != nil {
		t.Fatal(err)
	}
	defer pit.Close()
	if _, ok := pit.(TornTails); ok {
		t.Error("a seglog iterator tells torn tails")
	}
}
