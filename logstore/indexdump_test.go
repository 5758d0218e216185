package logstore_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// idtT0 is the timestamp of offset 0 in these fixtures; offset o gets
// idtT0 + o µs.
const idtT0 = 1700000000000000000

func idtTS(o uint64) int64 { return idtT0 + int64(o)*1000 }

// idtSeg is a segment of records base..base+n-1, every value "value-<o>"
// (so records of one-digit offsets are 28+7 bytes long).
func idtSeg(base uint64, n int, interval int) swSegment {
	seg := swSegment{Base: base, Interval: interval}
	for o := base; o < base+uint64(n); o++ {
		seg.Records = append(seg.Records, swRecord{Offset: o, Timestamp: idtTS(o), Value: []byte(fmt.Sprintf("value-%d", o))})
	}
	return seg
}

// idtWrite writes seg into a fresh partition directory and returns the
// paths of its .index, .timeindex and .log, and its layout.
func idtWrite(t *testing.T, seg swSegment) (index, timeindex, log string, lay swLayout) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t", "0")
	lay = swWritePartition(t, dir, seg)[0]
	return segPath(dir, seg.Base, ".index"), segPath(dir, seg.Base, ".timeindex"), segPath(dir, seg.Base, ".log"), lay
}

// idtDump dumps path and returns every entry and the summary.
func idtDump(t *testing.T, path string, verify bool) ([]logstore.IndexEntryInfo, logstore.IndexSummary) {
	t.Helper()
	var got []logstore.IndexEntryInfo
	sum, err := dumpIndex(path, verify, func(e logstore.IndexEntryInfo) error {
		got = append(got, e)
		return nil
	})
	if err != nil {
		t.Fatalf("DumpIndex %s: %v", path, err)
	}
	if sum.Entries != int64(len(got)) {
		t.Errorf("summary says %d entries, %d seen", sum.Entries, len(got))
	}
	return got, sum
}

// idtWant is what one entry's check must find; zero fields are not
// compared except the verdict.
type idtWant struct {
	v         logstore.IndexVerdict
	found     uint64 // FoundOffset
	foundTS   int64  // FoundTimestamp
	prev      uint64
	reason    error
	recordPos int64 // compared when set (use idtNone for -1)
}

const idtNone = -2 // in idtWant.recordPos: RecordPos must be -1

func idtOK() idtWant { return idtWant{v: logstore.VerdictOK} }

// idtCheck compares entries' verdicts with want, entry by entry.
func idtCheck(t *testing.T, got []logstore.IndexEntryInfo, want []idtWant) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Entry != int64(i) {
			t.Errorf("entry %d numbered %d", i, g.Entry)
		}
		bad := g.Verdict != w.v ||
			(w.found != 0 && g.FoundOffset != w.found) ||
			(w.foundTS != 0 && g.FoundTimestamp != w.foundTS) ||
			(w.prev != 0 && g.Prev != w.prev) ||
			(w.reason != nil && !errors.Is(g.Reason, w.reason)) ||
			(w.reason == nil && g.Reason != nil && g.Verdict != logstore.VerdictPastEnd) ||
			(w.recordPos > 0 && g.RecordPos != w.recordPos) ||
			(w.recordPos == idtNone && g.RecordPos != -1)
		if bad {
			t.Errorf("entry %d {offset %d value %d}: got %v (found %d, found ts %d, prev %d, reason %v, record at %d), want %v %+v",
				i, g.Offset, g.Value, g.Verdict, g.FoundOffset, g.FoundTimestamp, g.Prev, g.Reason, g.RecordPos, w.v, w)
		}
	}
}

func idtAllOK(n int) []idtWant {
	w := make([]idtWant, n)
	for i := range w {
		w[i] = idtOK()
	}
	return w
}

func TestDumpIndexIntact(t *testing.T) {
	for _, tc := range []struct {
		name     string
		base     uint64
		n        int
		interval int
		entries  int
	}{
		{"interval 1", 0, 10, 1, 10},
		{"interval 7", 100, 16, 7, 3},
		{"interval 7, last record indexed", 100, 15, 7, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seg := idtSeg(tc.base, tc.n, tc.interval)
			index, timeindex, _, lay := idtWrite(t, seg)
			got, sum := idtDump(t, index, true)
			idtCheck(t, got, idtAllOK(tc.entries))
			for i, e := range got {
				k := i * tc.interval
				if e.Offset != tc.base+uint64(k) || e.Value != lay.Pos[k] || e.RecordPos != lay.Pos[k] {
					t.Errorf(".index entry %d = {%d %d} checked at %d, want {%d %d}", i, e.Offset, e.Value, e.RecordPos, tc.base+uint64(k), lay.Pos[k])
				}
			}
			if sum.Kind != logstore.OffsetIndex || sum.Base != tc.base || sum.Count(logstore.VerdictOK) != int64(tc.entries) || sum.Wrong() != 0 || sum.Damaged() != 0 || sum.PartialBytes != 0 || !sum.Verified {
				t.Errorf(".index summary %+v", sum)
			}
			got, sum = idtDump(t, timeindex, true)
			idtCheck(t, got, idtAllOK(tc.entries))
			for i, e := range got {
				k := i * tc.interval
				if o := tc.base + uint64(k); e.Offset != o || e.Value != idtTS(o) || e.RecordPos != lay.Pos[k] {
					t.Errorf(".timeindex entry %d = {%d %d} record at %d, want {%d %d} at %d", i, e.Offset, e.Value, e.RecordPos, o, idtTS(o), lay.Pos[k])
				}
			}
			if sum.Kind != logstore.TimeIndex || sum.Count(logstore.VerdictOK) != int64(tc.entries) || sum.Wrong() != 0 {
				t.Errorf(".timeindex summary %+v", sum)
			}
		})
	}
}

func TestDumpIndexWithoutVerify(t *testing.T) {
	index, timeindex, log, _ := idtWrite(t, idtSeg(0, 4, 1))
	removeFile(t, log) // not needed without verify
	for _, path := range []string{index, timeindex} {
		got, sum := idtDump(t, path, false)
		if len(got) != 4 || sum.Verified || sum.Count(logstore.VerdictUnverified) != 4 {
			t.Fatalf("%s: %d entries, summary %+v", path, len(got), sum)
		}
		for _, e := range got {
			if e.Verdict != logstore.VerdictUnverified || e.RecordPos != -1 {
				t.Errorf("%s entry %d: verdict %v, record at %d", path, e.Entry, e.Verdict, e.RecordPos)
			}
		}
	}
	// With verify, the missing .log is an error naming it.
	_, err := dumpIndex(index, true, func(logstore.IndexEntryInfo) error { return nil })
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), log) {
		t.Errorf("verify without a .log: %v", err)
	}
}

func TestDumpIndexNotAnIndex(t *testing.T) {
	_, _, log, _ := idtWrite(t, idtSeg(0, 1, 1))
	if _, err := dumpIndex(log, false, func(logstore.IndexEntryInfo) error { return nil }); err == nil {
		t.Error("dumping a .log as an index: no error")
	}
	_, err := dumpIndex(filepath.Join(t.TempDir(), "00000000000000000000.index"), false, func(logstore.IndexEntryInfo) error { return nil })
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// Every kind of lie and damage, with the exact verdicts it must get.
func TestDumpIndexVerdicts(t *testing.T) {
	const n = 10
	type files struct{ index, timeindex, log string }
	for _, tc := range []struct {
		name      string
		seg       swSegment
		damage    func(t *testing.T, f files, lay swLayout)
		index     []idtWant // nil: all ok
		timeindex []idtWant
		partial   int64
	}{
		{
			name: "lying position",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swSetEntry(t, f.index, 2, 2, lay.Pos[3])
			},
			index: replace(idtAllOK(n), 2, idtWant{v: logstore.VerdictWrongPosition, found: 3}),
		},
		{
			name: "lying timestamp",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swSetEntry(t, f.timeindex, 2, 2, idtTS(2)+5)
			},
			timeindex: replace(idtAllOK(n), 2, idtWant{v: logstore.VerdictWrongTimestamp, foundTS: idtTS(2)}),
		},
		{
			// Entry 3 repeats entry 1: both point where they should, but
			// the order is broken.
			name: "out of order",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swSetEntry(t, f.index, 3, 1, lay.Pos[1])
				swSetEntry(t, f.timeindex, 3, 1, idtTS(1))
			},
			index:     replace(idtAllOK(n), 3, idtWant{v: logstore.VerdictOutOfOrder, prev: 2}),
			timeindex: replace(idtAllOK(n), 3, idtWant{v: logstore.VerdictOutOfOrder, prev: 2}),
		},
		{
			// A flipped high byte in one entry's offset: that entry is
			// wrong, the ones after it are still in order.
			name: "one offset flipped",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swFlip(t, f.index, 4*swEntryLen, 0x40)
				swFlip(t, f.timeindex, 4*swEntryLen, 0x40)
			},
			index:     replace(idtAllOK(n), 4, idtWant{v: logstore.VerdictWrongPosition, found: 4}),
			timeindex: replace(idtAllOK(n), 4, idtWant{v: logstore.VerdictPastEnd, recordPos: idtNone}),
		},
		{
			// Stale entries after a power loss: the index reached the disk,
			// the log's last records did not.
			name: "entries past the log's end",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swTruncate(t, f.log, lay.Pos[7])
			},
			index:     replace(idtAllOK(n), 7, idtWant{v: logstore.VerdictPastEnd, recordPos: idtNone}, idtWant{v: logstore.VerdictPastEnd}, idtWant{v: logstore.VerdictPastEnd}),
			timeindex: replace(idtAllOK(n), 7, idtWant{v: logstore.VerdictPastEnd}, idtWant{v: logstore.VerdictPastEnd}, idtWant{v: logstore.VerdictPastEnd}),
		},
		{
			name: "last record cut off",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swTruncate(t, f.log, lay.End-3)
			},
			index:     replace(idtAllOK(n), 9, idtWant{v: logstore.VerdictPastEnd, reason: format.ErrShort, recordPos: 9 * 35}),
			timeindex: replace(idtAllOK(n), 9, idtWant{v: logstore.VerdictPastEnd}),
		},
		{
			// Record 4's size field claims more than the log holds, but
			// valid records follow: damage, not a record cut off by the end.
			name: "size field past the end",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swPut(t, f.log, lay.Pos[4]+swSizeField, []byte{0x10, 0, 0, 0})
			},
			index:     replace(idtAllOK(n), 4, idtWant{v: logstore.VerdictCorruptRecord, reason: format.ErrShort, recordPos: 4 * 35}),
			timeindex: replace(idtAllOK(n), 4, idtWant{v: logstore.VerdictCorruptRecord, reason: format.ErrShort, recordPos: 4 * 35}),
		},
		{
			name: "entry far past EOF",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swAppend(t, f.index, swEntry(nil, 10, 1<<40))
				swAppend(t, f.index, swEntry(nil, 11, -1))
				swAppend(t, f.index, swEntry(nil, 12, math.MaxInt64-5)) // pos+HeaderLen overflows
				swAppend(t, f.timeindex, swEntry(nil, 10, idtTS(10)))
			},
			index: append(idtAllOK(n), idtWant{v: logstore.VerdictPastEnd, recordPos: idtNone}, idtWant{v: logstore.VerdictPastEnd, recordPos: idtNone},
				idtWant{v: logstore.VerdictPastEnd, recordPos: idtNone}),
			timeindex: append(idtAllOK(n), idtWant{v: logstore.VerdictPastEnd, recordPos: idtNone}),
		},
		{
			// The time index's check jumps by the .index: never by an entry
			// whose position is past the end (nor one that overflows).
			name: ".index entries past EOF, time index intact",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swSetEntry(t, f.index, 5, 5, math.MaxInt64-5)
				swSetEntry(t, f.index, 6, 6, lay.End)
			},
			index: replace(idtAllOK(n), 5, idtWant{v: logstore.VerdictPastEnd, recordPos: idtNone}, idtWant{v: logstore.VerdictPastEnd, recordPos: idtNone}),
		},
		{
			name: "partial last entry",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swAppend(t, f.index, []byte{0, 0, 0, 0, 0, 0, 0})
				swAppend(t, f.timeindex, []byte{0, 0, 0, 0, 0, 0, 0})
			},
			partial: 7,
		},
		{
			name: "position inside a record",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swSetEntry(t, f.index, 2, 2, lay.Pos[2]+5)
				swSetEntry(t, f.index, 5, 5, lay.Pos[5]+1)
			},
			// The record around the position is named.
			index: replace(replace(idtAllOK(n), 2, idtWant{v: logstore.VerdictNoRecord, found: 2, recordPos: 2 * 35}), 5,
				idtWant{v: logstore.VerdictNoRecord, found: 5, recordPos: 5 * 35}),
		},
		{
			// The wall clock of a foreign writer stepped back at offset 5.
			name: "timestamps going backwards",
			seg: func() swSegment {
				seg := idtSeg(0, n, 1)
				seg.Records[5].Timestamp = idtTS(2)
				return seg
			}(),
			timeindex: replace(idtAllOK(n), 5, idtWant{v: logstore.VerdictBackwards, foundTS: idtTS(4)}),
		},
		{
			// Record 4's value is damaged: the entries for it point at the
			// right place, the log is wrong there.
			name: "corrupt record",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swFlip(t, f.log, lay.Pos[4]+swHeaderLen+2, 0xff)
			},
			index:     replace(idtAllOK(n), 4, idtWant{v: logstore.VerdictCorruptRecord, reason: format.ErrCRC, recordPos: 4 * 35}),
			timeindex: replace(idtAllOK(n), 4, idtWant{v: logstore.VerdictCorruptRecord, reason: format.ErrCRC, recordPos: 4 * 35}),
		},
		{
			// Without a .index, the time index's records are found by
			// walking the log, which resumes after the damage.
			name: "corrupt records, no .index",
			seg:  idtSeg(0, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swFlip(t, f.log, lay.Pos[4]+swHeaderLen+2, 0xff)
				swFlip(t, f.log, lay.Pos[5]+swHeaderLen+2, 0xff)
				removeFile(t, f.index)
			},
			index: nil, // not dumped
			timeindex: replace(idtAllOK(n), 4,
				idtWant{v: logstore.VerdictCorruptRecord, reason: format.ErrCRC, recordPos: 4 * 35, found: 4},
				idtWant{v: logstore.VerdictUnchecked, reason: format.ErrCRC, recordPos: 4 * 35, found: 4}),
		},
		{
			// Sparse indexes, and a .index that lies: records are found by
			// walking from the last entry that checked out.
			name: "interval 7, lying .index",
			seg:  idtSeg(100, 30, 7),
			damage: func(t *testing.T, f files, lay swLayout) {
				swSetEntry(t, f.index, 1, 107, lay.Pos[8])
				swSetEntry(t, f.index, 3, 121, 3)
			},
			// Entry 3 points back before entry 2: out of order.
			index: replace(idtAllOK(5), 1, idtWant{v: logstore.VerdictWrongPosition, found: 108}, idtOK(),
				idtWant{v: logstore.VerdictOutOfOrder, prev: 114, recordPos: idtNone}),
			timeindex: idtAllOK(5),
		},
		{
			// Offsets 3 and 4 are missing from the log: the records after
			// them are found all the same, and an entry for 3 is told the
			// log is wrong there.
			name: "offsets skipped in the log",
			seg: func() swSegment {
				seg := idtSeg(0, 7, 1)
				seg.Records = append(seg.Records[:3], seg.Records[5:]...)
				return seg
			}(),
			damage: func(t *testing.T, f files, lay swLayout) {
				var tix []byte
				for _, o := range []uint64{0, 1, 2, 3, 5, 6} {
					tix = swEntry(tix, o, idtTS(o))
				}
				swWriteFile(t, f.timeindex, tix)
				removeFile(t, f.index)
			},
			timeindex: []idtWant{idtOK(), idtOK(), idtOK(),
				{v: logstore.VerdictCorruptRecord, reason: format.ErrOffset, recordPos: 3 * 35},
				idtOK(), idtOK()},
		},
		{
			name: "time index entry below the base offset",
			seg:  idtSeg(100, n, 1),
			damage: func(t *testing.T, f files, lay swLayout) {
				swSetEntry(t, f.timeindex, 0, 50, idtTS(50))
			},
			timeindex: replace(idtAllOK(n), 0, idtWant{v: logstore.VerdictNoSuchOffset, prev: 100, recordPos: idtNone}),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			index, timeindex, log, lay := idtWrite(t, tc.seg)
			f := files{index, timeindex, log}
			if tc.damage != nil {
				tc.damage(t, f, lay)
			}
			entries := (len(tc.seg.Records) + max(tc.seg.Interval, 1) - 1) / max(tc.seg.Interval, 1)
			for _, k := range []struct {
				path string
				want []idtWant
			}{{index, tc.index}, {timeindex, tc.timeindex}} {
				if _, err := os.Stat(k.path); err != nil {
					continue
				}
				want := k.want
				if want == nil {
					want = idtAllOK(entries)
				}
				got, sum := idtDump(t, k.path, true)
				idtCheck(t, got, want)
				if sum.PartialBytes != tc.partial {
					t.Errorf("%s: partial bytes %d, want %d", filepath.Base(k.path), sum.PartialBytes, tc.partial)
				}
				var wrong, damaged int64
				for _, w := range want {
					if w.v.Wrong() {
						wrong++
					}
					if w.v.Damaged() {
						damaged++
					}
				}
				if sum.Wrong() != wrong || sum.Damaged() != damaged {
					t.Errorf("%s: %d wrong, %d damaged; want %d, %d", filepath.Base(k.path), sum.Wrong(), sum.Damaged(), wrong, damaged)
				}
			}
		})
	}
}

// replace returns ws with ws[i], ws[i+1]... set to vs.
func replace(ws []idtWant, i int, vs ...idtWant) []idtWant {
	copy(ws[i:], vs)
	return ws
}

// Verdict classes: what makes dump-index --verify exit 3.
func TestIndexVerdictClasses(t *testing.T) {
	for v, want := range map[logstore.IndexVerdict]string{
		logstore.VerdictUnverified:     "",
		logstore.VerdictOK:             "",
		logstore.VerdictBackwards:      "warning",
		logstore.VerdictPastEnd:        "note",
		logstore.VerdictWrongPosition:  "wrong",
		logstore.VerdictWrongTimestamp: "wrong",
		logstore.VerdictOutOfOrder:     "wrong",
		logstore.VerdictNoRecord:       "wrong",
		logstore.VerdictNoSuchOffset:   "wrong",
		logstore.VerdictCorruptRecord:  "damaged",
		logstore.VerdictUnchecked:      "damaged",
	} {
		var got []string
		for _, c := range []struct {
			name string
			is   bool
		}{{"warning", v.Warning()}, {"note", v.Note()}, {"wrong", v.Wrong()}, {"damaged", v.Damaged()}} {
			if c.is {
				got = append(got, c.name)
			}
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%v (%s): classes %v, want %q", v, logstore.VerdictKind(v), got, want)
		}
		if k := logstore.VerdictKind(v); v.String() == "" || k == "" || strings.ContainsAny(string(k), " _") {
			t.Errorf("verdict %d: text %q, kind %q", v, v.String(), k)
		}
	}
}

// A file not named after its segment: the base offset comes from the
// log's first record.
func TestDumpIndexUnnamedFiles(t *testing.T) {
	index, timeindex, log, _ := idtWrite(t, idtSeg(40, 5, 1))
	dir := t.TempDir()
	for _, p := range [][2]string{{index, "copy.index"}, {timeindex, "copy.timeindex"}, {log, "copy.log"}} {
		b, err := os.ReadFile(p[0])
		if err != nil {
			t.Fatal(err)
		}
		swWriteFile(t, filepath.Join(dir, p[1]), b)
	}
	for _, name := range []string{"copy.index", "copy.timeindex"} {
		got, sum := idtDump(t, filepath.Join(dir, name), true)
		idtCheck(t, got, idtAllOK(5))
		if sum.Base != 40 || sum.LogPath != filepath.Join(dir, "copy.log") {
			t.Errorf("%s: base %d, log %s", name, sum.Base, sum.LogPath)
		}
	}
}

// The dump stops at the callback's error and returns it as is.
func TestDumpIndexCallbackError(t *testing.T) {
	index, _, _, _ := idtWrite(t, idtSeg(0, 10, 1))
	stop := errors.New("stop")
	seen := 0
	_, err := dumpIndex(index, true, func(logstore.IndexEntryInfo) error {
		seen++
		if seen == 3 {
			return stop
		}
		return nil
	})
	if err != stop || seen != 3 {
		t.Errorf("err %v after %d entries, want the callback's after 3", err, seen)
	}
}

// idtBig writes a segment of n one-byte records and both indexes with
// interval 1, fast: the spec writer's per-record slices would take long.
func idtBig(t *testing.T, n int) (index, timeindex string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "big", "0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	log := make([]byte, 0, n*(swHeaderLen+1))
	idx := make([]byte, 0, n*swEntryLen)
	tix := make([]byte, 0, n*swEntryLen)
	for o := 0; o < n; o++ {
		idx = swEntry(idx, uint64(o), int64(len(log)))
		tix = swEntry(tix, uint64(o), idtTS(uint64(o)))
		log = swEncode(log, swRecord{Offset: uint64(o), Timestamp: idtTS(uint64(o)), Value: []byte{'x'}})
	}
	swWriteFile(t, filepath.Join(dir, swName(0, ".log")), log)
	index, timeindex = filepath.Join(dir, swName(0, ".index")), filepath.Join(dir, swName(0, ".timeindex"))
	swWriteFile(t, index, idx)
	swWriteFile(t, timeindex, tix)
	return index, timeindex
}

// A 2-million-entry index streams: what the dump allocates does not grow
// with the file (32 MiB of index, 58 MiB of log).
func TestDumpIndexConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 120 MB")
	}
	const n = 2_000_000
	index, timeindex := idtBig(t, n)
	for _, tc := range []struct {
		path   string
		verify bool
	}{{index, false}, {index, true}, {timeindex, true}} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var count int64
		var peak uint64
		start := time.Now()
		sum, err := dumpIndex(tc.path, tc.verify, func(e logstore.IndexEntryInfo) error {
			if tc.verify && e.Verdict != logstore.VerdictOK {
				return fmt.Errorf("entry %d: %v", e.Entry, e.Verdict)
			}
			count++
			if count%(1<<18) == 0 {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if count != n || sum.Entries != n {
			t.Fatalf("%d entries seen, summary %d, want %d", count, sum.Entries, n)
		}
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s verify=%v: %v, %d bytes allocated, heap peak %d (before %d)", filepath.Base(tc.path), tc.verify, time.Since(start), allocated, peak, before.HeapAlloc)
		// A few buffers, whatever the file's size: one byte per entry
		// would already be 2 MB.
		if allocated > 1<<20 {
			t.Errorf("%s verify=%v allocated %d bytes for %d entries", filepath.Base(tc.path), tc.verify, allocated, n)
		}
		if peak > before.HeapAlloc+4<<20 {
			t.Errorf("%s verify=%v: heap grew from %d to %d", filepath.Base(tc.path), tc.verify, before.HeapAlloc, peak)
		}
	}
}

// Walking the log for the time index stays linear whatever the entries
// claim: here every other entry is stale, past the log's end, and there
// is no .index to jump by. Going back to the start for each entry would
// read the log 100 000 times.
func TestDumpTimeIndexLinear(t *testing.T) {
	const n = 200_000
	_, timeindex := idtBig(t, n)
	removeFile(t, strings.TrimSuffix(timeindex, ".timeindex")+".index")
	var tix []byte
	for o := uint64(0); o < n; o += 2 {
		tix = swEntry(tix, o, idtTS(o))
		tix = swEntry(tix, o+n, idtTS(o+n)) // past the end; the next entry is in order again after it
	}
	swWriteFile(t, timeindex, tix)
	start := time.Now()
	got, sum := idtDump(t, timeindex, true)
	if sum.Count(logstore.VerdictOK) != n/2 || sum.Count(logstore.VerdictPastEnd) != n/2 {
		t.Errorf("%d ok, %d past end; want %d each (first entries %+v)", sum.Count(logstore.VerdictOK), sum.Count(logstore.VerdictPastEnd), n/2, got[:4])
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}

// dumpIndex opens the index file at path, runs each over its entries (see
// IndexDump.Run) and closes it.
func dumpIndex(path string, verify bool, each func(logstore.IndexEntryInfo) error) (logstore.IndexSummary, error) {
	d, err := logstore.OpenIndexDump(path, verify)
	if err != nil {
		return logstore.IndexSummary{}, err
	}
	sum, err := d.Run(each)
	if cerr := d.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return sum, err
}
