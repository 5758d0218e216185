package commands

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// ditT0 is the timestamp of offset 0 in these fixtures (2023-11-14T22:13:20Z);
// offset o gets ditT0 + o µs.
const ditT0 = 1700000000000000000

// ditSegment writes a segment of n records from base (no key, value
// "v<o>") with both indexes at interval into the partition directory
// pdir, and returns each record's position. ts, when not nil, gives the
// timestamps.
func ditSegment(t *testing.T, pdir string, base uint64, n, interval int, ts func(o uint64) int64) []int64 {
	t.Helper()
	if ts == nil {
		ts = func(o uint64) int64 { return ditT0 + int64(o)*1000 }
	}
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var log, index, timeindex []byte
	var pos []int64
	for k := 0; k < n; k++ {
		o := base + uint64(k)
		pos = append(pos, int64(len(log)))
		if k%interval == 0 {
			index = format.AppendIndexEntry(index, format.IndexEntry{Offset: o, Pos: int64(len(log))})
			timeindex = format.AppendTimeIndexEntry(timeindex, format.TimeIndexEntry{Offset: o, Timestamp: ts(o)})
		}
		log = format.AppendRecord(log, &format.Record{Offset: o, Timestamp: ts(o), Value: []byte(fmt.Sprintf("v%d", o))})
	}
	for ext, b := range map[string][]byte{format.LogExt: log, format.IndexExt: index, format.TimeIndexExt: timeindex} {
		if err := os.WriteFile(filepath.Join(pdir, format.SegmentName(base, ext)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return pos
}

// ditSetEntry overwrites entry i of an index file.
func ditSetEntry(t *testing.T, path string, i int, offset uint64, v int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(format.AppendIndexEntry(nil, format.IndexEntry{Offset: offset, Pos: v}), int64(i)*format.IndexEntryLen); err != nil {
		t.Fatal(err)
	}
}

func ditSeg(dir, topic string, p int, base uint64, ext string) string {
	return filepath.Join(dir, topic, fmt.Sprint(p), format.SegmentName(base, ext))
}

// ditRun runs seglog in dir and checks the exit status; the data must not
// change, whatever the command found.
func ditRun(t *testing.T, dir string, code int, args ...string) result {
	t.Helper()
	before := snapshot(t, dir)
	r := runIn(t, dir, nil, args...)
	if r.code != code {
		t.Fatalf("seglog %q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, r.code, code, r.stdout, r.stderr)
	}
	sameSnapshot(t, before, snapshot(t, dir))
	return r
}

// ditSquash makes every run of blanks one blank, so table cells compare
// whatever their column's width.
func ditSquash(s string) string { return regexp.MustCompile(` +`).ReplaceAllString(s, " ") }

func ditSame(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n--- got\n%s--- want\n%s", what, got, want)
	}
}

func TestDumpIndexTables(t *testing.T) {
	dir := t.TempDir()
	ditSegment(t, filepath.Join(dir, "t", "0"), 0, 3, 1, nil)

	r := ditRun(t, dir, 0, "dump-index", "t")
	ditSame(t, "dump-index t", strings.ReplaceAll(r.stdout, dir, "DIR"), `DIR/t/0/00000000000000000000.index: 3 entries (offset -> byte position in the .log)
+-------+--------+----------+
| ENTRY | OFFSET | POSITION |
+-------+--------+----------+
|     0 |      0 |        0 |
|     1 |      1 |       30 |
|     2 |      2 |       60 |
+-------+--------+----------+

DIR/t/0/00000000000000000000.timeindex: 3 entries (offset -> timestamp)
+-------+--------+--------------------------------+
| ENTRY | OFFSET | TIMESTAMP                      |
+-------+--------+--------------------------------+
|     0 |      0 | 2023-11-14T22:13:20.000000000Z |
|     1 |      1 | 2023-11-14T22:13:20.000001000Z |
|     2 |      2 | 2023-11-14T22:13:20.000002000Z |
+-------+--------+--------------------------------+
`)
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}

	r = ditRun(t, dir, 0, "dump-index", "t", "--verify")
	ditSame(t, "dump-index t --verify", strings.ReplaceAll(r.stdout, dir, "DIR"), `DIR/t/0/00000000000000000000.index: 3 entries (offset -> byte position in the .log)
+-------+--------+----------+---------+
| ENTRY | OFFSET | POSITION | VERDICT |
+-------+--------+----------+---------+
|     0 |      0 |        0 | ok      |
|     1 |      1 |       30 | ok      |
|     2 |      2 |       60 | ok      |
+-------+--------+----------+---------+
checked against 00000000000000000000.log: 3 ok

DIR/t/0/00000000000000000000.timeindex: 3 entries (offset -> timestamp)
+-------+--------+--------------------------------+---------+
| ENTRY | OFFSET | TIMESTAMP                      | VERDICT |
+-------+--------+--------------------------------+---------+
|     0 |      0 | 2023-11-14T22:13:20.000000000Z | ok      |
|     1 |      1 | 2023-11-14T22:13:20.000001000Z | ok      |
|     2 |      2 | 2023-11-14T22:13:20.000002000Z | ok      |
+-------+--------+--------------------------------+---------+
checked against 00000000000000000000.log: 3 ok

6 entries in 2 files: 6 ok
all entries check out
`)
}

// A wrong entry: its verdict in the listing, "N wrong entries" last, exit
// 3 and nothing on stderr (the report is the product).
func TestDumpIndexWrongEntries(t *testing.T) {
	dir := t.TempDir()
	pos := ditSegment(t, filepath.Join(dir, "t", "0"), 0, 5, 1, nil)
	ditSetEntry(t, ditSeg(dir, "t", 0, 0, ".index"), 1, 1, pos[2])
	ditSetEntry(t, ditSeg(dir, "t", 0, 0, ".index"), 3, 3, pos[3]+4)
	ditSetEntry(t, ditSeg(dir, "t", 0, 0, ".timeindex"), 4, 4, ditT0+99)

	// Without --verify the entries are only printed.
	r := ditRun(t, dir, 0, "dump-index", "t")
	if strings.Contains(r.stdout, "VERDICT") || strings.Contains(r.stdout, "wrong") {
		t.Errorf("verdicts without --verify:\n%s", r.stdout)
	}

	r = ditRun(t, dir, 3, "dump-index", "t", "--verify")
	squashed := ditSquash(r.stdout)
	for _, want := range []string{
		"| 1 | 1 | 60 | wrong position: offset 2 starts there |\n",
		"| 3 | 3 | 94 | no record starts here: it is inside the record at byte 90 (offset 3) |\n",
		"| 4 | 4 | 2023-11-14T22:13:20.000000099Z | wrong timestamp: the record (at byte 120) has 2023-11-14T22:13:20.000004000Z |\n",
		"checked against 00000000000000000000.log: 3 ok, 1 wrong position, 1 no record starts here\n",
		"\n10 entries in 2 files: 7 ok, 1 wrong position, 1 wrong timestamp, 1 no record starts here\n3 wrong entries\n",
	} {
		if !strings.Contains(squashed, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.HasSuffix(r.stdout, "\n3 wrong entries\n") {
		t.Errorf("last line is not the verdict:\n%s", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}

	// The index file alone: same verdicts, no total.
	r = ditRun(t, dir, 3, "dump-index", ditSeg(dir, "t", 0, 0, ".index"), "--verify")
	if strings.Contains(r.stdout, "entries in") || !strings.HasSuffix(r.stdout, "\n2 wrong entries\n") {
		t.Errorf("dump-index FILE --verify:\n%s", r.stdout)
	}
}

func TestDumpIndexExitCodes(t *testing.T) {
	dir := t.TempDir()
	ditSegment(t, filepath.Join(dir, "t", "0"), 0, 3, 1, nil)
	ditSegment(t, filepath.Join(dir, "two", "0"), 0, 2, 1, nil)
	ditSegment(t, filepath.Join(dir, "two", "1"), 0, 2, 1, nil)
	index := ditSeg(dir, "t", 0, 0, ".index")
	notes := filepath.Join(dir, "t", "notes.txt")
	if err := os.WriteFile(notes, []byte("not a segment\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		code  int
		wants []string // in the one error line
	}{
		{[]string{"dump-index", "t"}, 0, nil},
		{[]string{"dump-index", "t", "-p", "0", "--segment", "0", "--kind", "timeindex", "--verify", "--json"}, 0, nil},
		{[]string{"dump-index", index}, 0, nil},
		{[]string{"dump-index", filepath.Join(dir, "t", "0")}, 0, nil},
		{[]string{"dump-index", ditSeg(dir, "t", 0, 0, ".log"), "--kind", "index", "--verify"}, 0, nil},
		{[]string{"dump-index", "two", "--partition", "1", "--verify"}, 0, nil},

		{[]string{"dump-index", "nosuch"}, 1, []string{"topic nosuch", "not found", "seglog create nosuch"}},
		{[]string{"dump-index", "two", "--partition", "2"}, 1, []string{"topic two has partitions 0..1, not 2"}},
		{[]string{"dump-index", "t", "--segment", "7"}, 1, []string{"no segment with base offset 7", "its segments: 0"}},
		{[]string{"dump-index", filepath.Join(dir, "t", "0", "nosuch.index")}, 1, []string{"nosuch.index", "no such file"}},
		{[]string{"dump-index", filepath.Join(dir, "nosuch", "0")}, 1, []string{filepath.Join(dir, "nosuch", "0") + " does not exist"}},
		{[]string{"dump-index", notes}, 1, []string{notes + " is neither a directory nor a segment file"}},

		{[]string{"dump-index"}, 2, []string{"missing FILE, TOPIC or PARTITION-DIR"}},
		{[]string{"dump-index", "t", "u"}, 2, []string{"one FILE, TOPIC or PARTITION-DIR expected"}},
		{[]string{"dump-index", "bad name"}, 2, []string{"invalid topic name"}},
		{[]string{"dump-index", ".hidden"}, 2, []string{"invalid topic name"}},
		{[]string{"dump-index", "two"}, 2, []string{"topic two has 2 partitions", "--partition 0..1"}},
		{[]string{"dump-index", "t", "--partition", "-1"}, 2, []string{"--partition must be 0 or more"}},
		{[]string{"dump-index", "t", "--segment", "x"}, 2, []string{"--segment must be a segment's base offset"}},
		{[]string{"dump-index", "t", "--kind", "log"}, 2, []string{"--kind must be index, timeindex or both"}},
		{[]string{"dump-index", index, "--partition", "0"}, 2, []string{"--partition does not apply to an index file"}},
		{[]string{"dump-index", filepath.Join(dir, "t", "0"), "--partition", "1"}, 2, []string{"--partition 1 does not match"}},
		{[]string{"dump-index", ditSeg(dir, "t", 0, 0, ".log"), "--segment", "0"}, 2, []string{"--segment does not apply to a segment file"}},
		{[]string{"dump-index", ditSeg(dir, "t", 0, 0, ".log"), "--partition", "0"}, 2, []string{"--partition does not apply to a segment file"}},
		{[]string{"dump-index", "t", "--bogus"}, 2, []string{"unknown flag --bogus"}},
	} {
		r := ditRun(t, dir, tc.code, tc.args...)
		if tc.code == 0 {
			if r.stderr != "" {
				t.Errorf("%q: stderr %q", tc.args, r.stderr)
			}
			continue
		}
		wantOneErrorLine(t, r.stderr, tc.wants...)
	}
}

// More than 1000 entries: plain aligned columns, streamed.
func TestDumpIndexColumns(t *testing.T) {
	dir := t.TempDir()
	pos := ditSegment(t, filepath.Join(dir, "t", "0"), 0, 1001, 1, nil)
	r := ditRun(t, dir, 0, "dump-index", "t", "--verify")
	lines := strings.Split(r.stdout, "\n")
	if strings.Contains(r.stdout, "+---") || strings.Contains(r.stdout, "| ") {
		t.Errorf("a table for 1001 entries")
	}
	want := []string{
		"ENTRY                OFFSET              POSITION  VERDICT",
		"    0                     0                     0  ok",
		"    1                     1                    30  ok",
	}
	for i, w := range want {
		if lines[1+i] != w {
			t.Errorf("line %d: %q, want %q", 1+i, lines[1+i], w)
		}
	}
	if !strings.Contains(r.stdout, fmt.Sprintf("\n 1000                  1000  %20d  ok\n", pos[1000])) {
		t.Errorf("no line for entry 1000:\n%s", r.stdout[len(r.stdout)-500:])
	}
	if !strings.Contains(r.stdout, "\nENTRY                OFFSET  TIMESTAMP                       VERDICT\n"+
		"    0                     0  2023-11-14T22:13:20.000000000Z  ok\n") {
		t.Errorf("time index columns wrong:\n%s", r.stdout)
	}
	// Without a verdict the timestamp column ends the line: no trailing
	// blanks.
	r = ditRun(t, dir, 0, "dump-index", "t", "--kind", "timeindex")
	if l := strings.Split(r.stdout, "\n")[2]; l != "    0                     0  2023-11-14T22:13:20.000000000Z" {
		t.Errorf("first line %q", l)
	}
	if strings.Count(r.stdout, "\n") != 1+1+1001 {
		t.Errorf("%d lines", strings.Count(r.stdout, "\n"))
	}
}

// ditJSON is a line of dump-index --json.
type ditJSON struct {
	Type           string           `json:"type"`
	File           string           `json:"file"`
	Entry          int64            `json:"entry"`
	Offset         uint64           `json:"offset"`
	Position       *uint64          `json:"position"`
	Timestamp      *string          `json:"timestamp"`
	TimestampNS    *int64           `json:"timestamp_ns"`
	Verdict        string           `json:"verdict"`
	Detail         string           `json:"detail"`
	RecordPosition *int64           `json:"record_position"`
	FoundOffset    *uint64          `json:"found_offset"`
	FoundTSNS      *int64           `json:"found_timestamp_ns"`
	PrevOffset     *uint64          `json:"prev_offset"`
	Reason         string           `json:"reason"`
	Kind           string           `json:"kind"`
	Entries        int64            `json:"entries"`
	PartialBytes   int64            `json:"partial_bytes"`
	Missing        bool             `json:"missing"`
	Verified       bool             `json:"verified"`
	Verdicts       map[string]int64 `json:"verdicts"`
	Wrong          *int64           `json:"wrong"`
	Damaged        *int64           `json:"damaged"`
	Files          int              `json:"files"`
	MissingFiles   int              `json:"missing_files"`
}

func ditParseJSON(t *testing.T, out string) []ditJSON {
	t.Helper()
	var ls []ditJSON
	for _, s := range strings.SplitAfter(out, "\n") {
		if s == "" {
			continue
		}
		var l ditJSON
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("bad JSON line %q: %v", s, err)
		}
		ls = append(ls, l)
	}
	return ls
}

func TestDumpIndexJSON(t *testing.T) {
	dir := t.TempDir()
	pdir := filepath.Join(dir, "t", "0")
	pos := ditSegment(t, pdir, 0, 1500, 1, nil) // beyond the table limit: JSON all the same
	ditSetEntry(t, ditSeg(dir, "t", 0, 0, ".index"), 7, 7, pos[8])
	ditSetEntry(t, ditSeg(dir, "t", 0, 0, ".timeindex"), 9, 5, ditT0+5000)
	r := ditRun(t, dir, 3, "dump-index", "t", "--verify", "--json")
	ls := ditParseJSON(t, r.stdout)
	if len(ls) != 1500+1+1500+1+1 {
		t.Fatalf("%d lines", len(ls))
	}
	index, timeindex := ditSeg(dir, "t", 0, 0, ".index"), ditSeg(dir, "t", 0, 0, ".timeindex")
	e := ls[7]
	if e.Type != "entry" || e.File != index || e.Entry != 7 || e.Offset != 7 || e.Position == nil || *e.Position != uint64(pos[8]) ||
		e.Verdict != "index-mismatch" || e.FoundOffset == nil || *e.FoundOffset != 8 || e.RecordPosition == nil || *e.RecordPosition != pos[8] ||
		e.Detail != "wrong position: offset 8 starts there" || e.Timestamp != nil {
		t.Errorf("entry 7: %+v", e)
	}
	if e := ls[0]; e.Verdict != "ok" || e.Detail != "" || e.FoundOffset != nil {
		t.Errorf("entry 0: %+v", e)
	}
	s := ls[1500]
	if s.Type != "summary" || s.File != index || s.Kind != "index" || s.Entries != 1500 || !s.Verified ||
		s.Verdicts["ok"] != 1499 || s.Verdicts["index-mismatch"] != 1 || *s.Wrong != 1 || *s.Damaged != 0 {
		t.Errorf("index summary: %+v", s)
	}
	e = ls[1501+9]
	if e.File != timeindex || e.Offset != 5 || e.Timestamp == nil || *e.Timestamp != "2023-11-14T22:13:20.000005000Z" || *e.TimestampNS != ditT0+5000 ||
		e.Verdict != "index-order" || e.PrevOffset == nil || *e.PrevOffset != 8 || e.Position != nil {
		t.Errorf("time index entry 9: %+v", e)
	}
	if tot := ls[len(ls)-1]; tot.Type != "total" || tot.Files != 2 || tot.Entries != 3000 || tot.Verdicts["ok"] != 2998 || *tot.Wrong != 2 {
		t.Errorf("total: %+v", tot)
	}

	// A file argument: entries and one summary, no total; without
	// --verify, no verdicts.
	r = ditRun(t, dir, 0, "dump-index", timeindex, "--json")
	ls = ditParseJSON(t, r.stdout)
	if len(ls) != 1501 || ls[1500].Type != "summary" || ls[1500].Verified || ls[1500].Verdicts != nil || ls[3].Verdict != "" {
		t.Errorf("%d lines, last %+v, entry 3 %+v", len(ls), ls[len(ls)-1], ls[3])
	}
}

// Each segment under its own heading; --segment picks one.
func TestDumpIndexSegments(t *testing.T) {
	dir := t.TempDir()
	pdir := filepath.Join(dir, "t", "0")
	ditSegment(t, pdir, 0, 10, 3, nil)
	ditSegment(t, pdir, 10, 5, 1, nil)
	r := ditRun(t, dir, 0, "dump-index", "t", "--verify")
	var headings []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, dir) {
			headings = append(headings, strings.TrimPrefix(l, dir))
		}
	}
	want := []string{
		"/t/0/00000000000000000000.index: 4 entries (offset -> byte position in the .log)",
		"/t/0/00000000000000000000.timeindex: 4 entries (offset -> timestamp)",
		"/t/0/00000000000000000010.index: 5 entries (offset -> byte position in the .log)",
		"/t/0/00000000000000000010.timeindex: 5 entries (offset -> timestamp)",
	}
	if strings.Join(headings, "\n") != strings.Join(want, "\n") {
		t.Errorf("headings:\n%s", strings.Join(headings, "\n"))
	}
	if !strings.HasSuffix(r.stdout, "\n18 entries in 4 files: 18 ok\nall entries check out\n") {
		t.Errorf("end of report:\n%s", r.stdout)
	}
	for _, seg := range []string{"10", "00000000000000000010", "00000000000000000010.log"} {
		r = ditRun(t, dir, 0, "dump-index", "t", "--segment", seg, "--kind", "index")
		if strings.Contains(r.stdout, "00000000000000000000") || strings.Count(r.stdout, "00000000000000000010.index: 5 entries") != 1 ||
			strings.Contains(r.stdout, ".timeindex") {
			t.Errorf("--segment %s --kind index:\n%s", seg, r.stdout)
		}
	}
}

// Notes and warnings do not make dump-index fail.
func TestDumpIndexNotes(t *testing.T) {
	dir := t.TempDir()
	pdir := filepath.Join(dir, "t", "0")
	// Timestamps step back at offset 3: a foreign writer's wall clock.
	pos := ditSegment(t, pdir, 0, 6, 1, func(o uint64) int64 {
		if o == 3 {
			return ditT0
		}
		return ditT0 + int64(o)*1000
	})
	// Stale entries: the log lost its last record, the indexes did not.
	if err := os.Truncate(ditSeg(dir, "t", 0, 0, ".log"), pos[5]); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(ditSeg(dir, "t", 0, 0, ".index"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{1, 2, 3, 4, 5}) // a partial entry
	f.Close()
	ditSegment(t, pdir, 6, 2, 1, nil)
	if err := os.Remove(ditSeg(dir, "t", 0, 6, ".timeindex")); err != nil {
		t.Fatal(err)
	}

	r := ditRun(t, dir, 0, "dump-index", "t", "--verify")
	squashed := ditSquash(r.stdout)
	for _, want := range []string{
		"/t/0/00000000000000000000.index: 6 entries (offset -> byte position in the .log), and a partial last entry of 5 bytes (ignored)\n",
		"| 5 | 5 | 150 | past the log's end (note) |\n",
		"| 3 | 3 | 2023-11-14T22:13:20.000000000Z | ok, but goes back in time: the entry before has 2023-11-14T22:13:20.000002000Z (warning) |\n",
		"/t/0/00000000000000000006.timeindex: missing (a note: 'seglog recover' rebuilds it)\n",
		"note: 2 entries point past the log's end (stale after a crash; 'seglog recover' rebuilds the index)\n",
		"note: 1 file ends in a partial entry, ignored\n",
		"note: 1 index file is missing ('seglog recover' rebuilds them)\n",
	} {
		if !strings.Contains(squashed, ditSquash(want)) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.HasSuffix(r.stdout, "\nall entries check out\n") {
		t.Errorf("last line:\n%s", r.stdout)
	}
	if r.stderr != "seglog: warning: 1 time index entry goes back in time (foreign writers stamp the wall clock: not an error)\n" {
		t.Errorf("stderr: %q", r.stderr)
	}
	r = ditRun(t, dir, 0, "-q", "dump-index", "t", "--verify")
	if r.stderr != "" {
		t.Errorf("stderr with -q: %q", r.stderr)
	}
	r = ditRun(t, dir, 0, "dump-index", "t", "--verify", "--json")
	ls := ditParseJSON(t, r.stdout)
	if m := ls[len(ls)-2]; m.Type != "summary" || !m.Missing || m.Kind != "timeindex" {
		t.Errorf("missing file's summary: %+v", m)
	}
	if tot := ls[len(ls)-1]; tot.Type != "total" || tot.MissingFiles != 1 || tot.Verdicts["index-stale"] != 2 || tot.Verdicts["timestamp-backwards"] != 1 || *tot.Wrong != 0 {
		t.Errorf("total: %+v", tot)
	}
}

// A topic of several partitions needs --partition; a partition directory
// works as the argument.
func TestDumpIndexPartitions(t *testing.T) {
	dir := t.TempDir()
	ditSegment(t, filepath.Join(dir, "t", "0"), 0, 2, 1, nil)
	ditSegment(t, filepath.Join(dir, "t", "1"), 0, 4, 1, nil)
	r := ditRun(t, dir, 0, "dump-index", "t", "--partition", "1", "--kind", "index")
	if !strings.Contains(r.stdout, "/t/1/00000000000000000000.index: 4 entries") {
		t.Errorf("--partition 1:\n%s", r.stdout)
	}
	r = ditRun(t, dir, 0, "dump-index", filepath.Join(dir, "t", "1")+"/", "--kind", "index", "-p", "1")
	if !strings.Contains(r.stdout, "/t/1/00000000000000000000.index: 4 entries") {
		t.Errorf("partition directory:\n%s", r.stdout)
	}
}

// The VERDICT cell of every verdict.
func TestDumpIndexVerdictText(t *testing.T) {
	for _, tc := range []struct {
		kind logstore.IndexKind
		e    logstore.IndexEntryInfo
		want string
	}{
		{logstore.OffsetIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictOK}, "ok"},
		{logstore.OffsetIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictUnverified}, "not verified"},
		{logstore.TimeIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictBackwards, FoundTimestamp: ditT0},
			"ok, but goes back in time: the entry before has 2023-11-14T22:13:20.000000000Z (warning)"},
		{logstore.OffsetIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictPastEnd, RecordPos: -1}, "past the log's end (note)"},
		{logstore.OffsetIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictPastEnd, RecordPos: 90, Reason: format.ErrShort},
			"past the log's end: the record at byte 90 is cut off (note)"},
		{logstore.OffsetIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictWrongPosition, FoundOffset: 8}, "wrong position: offset 8 starts there"},
		{logstore.TimeIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictWrongTimestamp, RecordPos: 30, FoundTimestamp: ditT0 + 1},
			"wrong timestamp: the record (at byte 30) has 2023-11-14T22:13:20.000000001Z"},
		{logstore.OffsetIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictOutOfOrder, Prev: 4}, "out of order: not after offset 4"},
		{logstore.OffsetIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictNoRecord, RecordPos: 60, FoundOffset: 2},
			"no record starts here: it is inside the record at byte 60 (offset 2)"},
		{logstore.TimeIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictNoSuchOffset, Prev: 100}, "no such offset: the segment starts at 100"},
		{logstore.OffsetIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictCorruptRecord, RecordPos: 120, Reason: format.ErrKeyLen},
			"corrupt record at byte 120 (keylen larger than size)"},
		{logstore.OffsetIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictCorruptRecord, RecordPos: 120, Reason: format.ErrShort},
			"corrupt record at byte 120 (its size runs past the log's end)"},
		{logstore.TimeIndex, logstore.IndexEntryInfo{Verdict: logstore.VerdictUnchecked, RecordPos: 120, FoundOffset: 4, Reason: format.ErrCRC},
			"not checked: the log is damaged from byte 120, offset 4 (crc mismatch)"},
	} {
		w := &indexEntryWriter{kind: tc.kind, verify: true}
		if got := w.verdictText(tc.e); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.e.Verdict, got, tc.want)
		}
	}
}

// checkEntryNames maps each index entry verify-crc --json reports on (its
// file and byte position in it) to the kind it gives; findings on a whole
// file are left out.
func checkEntryNames(t *testing.T, verifyOut string) map[string]string {
	t.Helper()
	kinds := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(verifyOut), "\n") {
		var f struct {
			Type, Kind, Path string
			Pos              *int64
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		whole := f.Kind == string(logstore.FindingIndexPartial) || f.Kind == string(logstore.FindingIndexShort)
		if f.Type == "finding" && f.Pos != nil && !whole && (strings.HasSuffix(f.Path, format.IndexExt) || strings.HasSuffix(f.Path, format.TimeIndexExt)) {
			kinds[fmt.Sprintf("%s@%d", f.Path, *f.Pos)] = f.Kind
		}
	}
	return kinds
}

// What dump-index says of an index entry and what verify-crc says of the
// same entry is one name, in both layouts: the finding kinds of
// docs/cli.md.
func TestIndexEntryNamesAgree(t *testing.T) {
	t.Run("seglog layout", func(t *testing.T) {
		dir, pdir := cdocIndexTopic(t)
		found := checkEntryNames(t, cdocRun(t, dir, "", 3, "verify-crc", "x", "--partition", "0", "--json").stdout)
		compared := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(cdocRun(t, dir, "", 3, "dump-index", pdir, "--verify", "--json").stdout), "\n") {
			var e struct {
				Type, File, Verdict string
				Entry               int64
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if e.Type != "entry" {
				continue
			}
			at := fmt.Sprintf("%s@%d", e.File, e.Entry*format.IndexEntryLen)
			kind, ok := found[at]
			switch e.Verdict {
			case "ok", "timestamp-backwards", "corrupt-record", "unchecked":
				// verify-crc reports no finding on such an entry: it
				// checks out, or the finding is the damage's.
				if ok && kind != e.Verdict {
					t.Errorf("%s: dump-index says %s, verify-crc %s", at, e.Verdict, kind)
				}
			default:
				if kind != e.Verdict {
					t.Errorf("%s: dump-index says %s, verify-crc %q", at, e.Verdict, kind)
				}
				compared[e.Verdict] = true
			}
			delete(found, at)
		}
		for at, kind := range found {
			t.Errorf("%s: verify-crc says %s, dump-index printed no such entry", at, kind)
		}
		for _, k := range []string{"index-mismatch", "index-no-record", "index-order", "index-stale"} {
			if !compared[k] {
				t.Errorf("no entry was %s: the case compares less than it should", k)
			}
		}
	})
	t.Run("simple layout", func(t *testing.T) {
		dir := cdocDamagedSimpleLog(t)
		found := checkEntryNames(t, cdocRun(t, t.TempDir(), "", 3, "verify-crc", dir, "--json").stdout)
		compared := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(cdocRun(t, t.TempDir(), "", 3, "dump-index", dir, "--verify", "--json").stdout), "\n") {
			var e struct {
				Type, File, Class string
				Entry             int64
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if e.Type != "entry" || e.Class == "ok" {
				continue
			}
			at := fmt.Sprintf("%s@%d", e.File, e.Entry*format.SimpleIndexEntryLen)
			if found[at] != e.Class {
				t.Errorf("%s: dump-index says %s, verify-crc %q", at, e.Class, found[at])
			}
			compared[e.Class] = true
		}
		for _, k := range []string{"index-mismatch", "index-padding", "index-stale"} {
			if !compared[k] {
				t.Errorf("no entry was %s: the case compares less than it should", k)
			}
		}
	})
}
