package commands

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
)

// Tests of every command on the simple store/index fixtures written by
// the independent generator in ../testdata/simplelog/gen; each has an
// expect.json manifest.

type simpleManifest struct {
	Segments []struct {
		Base             uint64 `json:"base"`
		Store            string `json:"store"`
		Index            string `json:"index"`
		IndexBytes       int64  `json:"index_bytes"`
		RealIndexEntries int64  `json:"real_index_entries"`
		PaddingEntries   int64  `json:"padding_entries"`
		EntriesPastStore int64  `json:"entries_past_store"`
		WholeRecords     uint64 `json:"whole_records"`
		StoreBytes       int64  `json:"store_bytes"`
	} `json:"segments"`
	Records []struct {
		Offset      uint64 `json:"offset"`
		Position    int64  `json:"position"`
		ValueBase64 string `json:"value_base64"`
	} `json:"records"`
	Torn []struct {
		Store     string `json:"store"`
		TornBytes int64  `json:"torn_bytes"`
	} `json:"torn"`
	FramingBreak *struct {
		Store       string     `json:"store"`
		Position    int64      `json:"position"`
		Offset      uint64     `json:"offset"`
		IntactAfter []struct{} `json:"intact_after"`
	} `json:"framing_break"`
	IndexLies []struct {
		Index string `json:"index"`
	} `json:"index_lies"`
}

// values are the values a reader returns before any framing break.
func (m simpleManifest) values(t *testing.T) (offsets []uint64, values [][]byte) {
	t.Helper()
	for _, r := range m.Records {
		if m.FramingBreak != nil && r.Offset >= m.FramingBreak.Offset {
			break
		}
		v, err := base64.StdEncoding.DecodeString(r.ValueBase64)
		if err != nil {
			t.Fatal(err)
		}
		offsets, values = append(offsets, r.Offset), append(values, v)
	}
	return offsets, values
}

// simpleFixtureNames lists the fixtures: at least those the tests below
// name, and any others the generator writes.
func simpleFixtureNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("..", "testdata", "simplelog"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join("..", "testdata", "simplelog", e.Name(), "expect.json")); err == nil {
			names = append(names, e.Name())
		}
	}
	for _, want := range []string{"clean", "padded-names", "crashed", "crashed-first-run", "torn", "empty", "empty-crashed", "corrupt-length", "lying-index"} {
		if !slices.Contains(names, want) {
			t.Fatalf("fixture %s missing (regenerate: go run ./testdata/simplelog/gen -out testdata/simplelog)", want)
		}
	}
	return names
}

// simpleFixture copies fixture name into a fresh directory and returns
// its path (absolute, so it holds a '/') and manifest.
func simpleFixture(t *testing.T, name string) (string, simpleManifest) {
	t.Helper()
	src := filepath.Join("..", "testdata", "simplelog", name)
	b, err := os.ReadFile(filepath.Join(src, "expect.json"))
	if err != nil {
		t.Fatalf("fixture %s: %v (regenerate: go run ./testdata/simplelog/gen -out testdata/simplelog)", name, err)
	}
	var m simpleManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "expect.json")); err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// untouched runs f and fails if anything in dir changed.
func untouched(t *testing.T, dir string, f func()) {
	t.Helper()
	before := snapshot(t, dir)
	f()
	sameSnapshot(t, before, snapshot(t, dir))
}

func TestSimpleReadFormats(t *testing.T) {
	for _, name := range simpleFixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			dir, m := simpleFixture(t, name)
			offsets, values := m.values(t)
			wantCode := 0
			if m.FramingBreak != nil {
				wantCode = 1
			}
			untouched(t, dir, func() {
				r := run(t, nil, "read", dir, "--format", "json")
				if r.code != wantCode {
					t.Fatalf("exit %d, want %d: %s", r.code, wantCode, r.stderr)
				}
				lines := parseJSONLines(t, r.stdout)
				if len(lines) != len(values) {
					t.Fatalf("%d records, want %d", len(lines), len(values))
				}
				for i, l := range lines {
					rec := l.record(t)
					if rec.offset != offsets[i] || !bytes.Equal(rec.value, values[i]) || rec.key != nil || l.Topic != name || l.Partition != 0 {
						t.Fatalf("record %d = %+v, want offset %d value %q", i, rec, offsets[i], values[i])
					}
					if !strings.Contains(l.raw, `"timestamp":null,"timestamp_ns":null,"key":null`) {
						t.Fatalf("line %s: timestamps and key must be null", l.raw)
					}
				}
				if fb := m.FramingBreak; fb != nil {
					wantLastErrorLine(t, r.stderr, fb.Store, fmt.Sprintf("byte %d", fb.Position), fmt.Sprintf("offset %d", fb.Offset), "--skip-corrupt")
					// Past the break, at the record the index shows after it.
					skip := run(t, nil, "read", dir, "--format", "json", "--skip-corrupt")
					lines := parseJSONLines(t, skip.stdout)
					if skip.code != 0 || len(lines) != len(m.Records)+len(fb.IntactAfter) || !strings.Contains(skip.stderr, "warning: skipping") {
						t.Errorf("--skip-corrupt: exit %d, %d records, want %d+%d:\n%s", skip.code, len(lines), len(m.Records), len(fb.IntactAfter), skip.stderr)
					}
				}
				for _, torn := range m.Torn {
					if !strings.Contains(r.stderr, "torn last record") || !strings.Contains(r.stderr, torn.Store) {
						t.Errorf("no warning about the torn record in %s: %s", torn.Store, r.stderr)
					}
				}

				raw := run(t, nil, "read", dir, "--format", "raw")
				if want := bytes.Join(values, nil); raw.code != wantCode || raw.stdout != string(want) {
					t.Errorf("raw: exit %d, %d bytes; want %d bytes", raw.code, len(raw.stdout), len(want))
				}
				tmpl := run(t, nil, "read", dir, "--template", `%t/%p/%o %T%c %S %b|\n`)
				var want strings.Builder
				for i, r := range m.Records[:len(values)] {
					fmt.Fprintf(&want, "%s/0/%d  %d %d|\n", name, offsets[i], len(values[i]), r.Position)
				}
				if tmpl.stdout != want.String() {
					t.Errorf("template:\n%s\nwant\n%s", tmpl.stdout, want.String())
				}
				dump := run(t, nil, "read", dir, "--format", "dump", "--count", "1")
				if len(values) > 0 {
					wantDump := fmt.Sprintf("offset=%d pos=0 size=%d keylen=0 crc=- ts=- key=- value=\"%s\"\n", offsets[0], len(values[0]),
						appendDumpEscaped(nil, values[0]))
					if dump.stdout != wantDump {
						t.Errorf("dump: %q, want %q", dump.stdout, wantDump)
					}
				}
			})
		})
	}
}

func TestSimpleReadFlags(t *testing.T) {
	dir, m := simpleFixture(t, "clean")
	_, values := m.values(t)
	n := len(values)
	untouched(t, dir, func() {
		for _, args := range [][]string{
			{"--since", "2h"}, {"--until", "2024-01-01T00:00:00Z"}, {"--key", "k"}, {"--group", "g"}, {"--partition", "1"},
		} {
			r := run(t, nil, append([]string{"read", dir}, args...)...)
			if r.code != exitUsage {
				t.Errorf("read %v: exit %d, want 2: %s", args, r.code, r.stderr)
			}
			wantOneErrorLine(t, r.stderr, args[0])
		}
		r := run(t, nil, "read", dir, "--offset", "-2", "--format", "json")
		if lines := parseJSONLines(t, r.stdout); r.code != 0 || len(lines) != 2 || lines[1].Offset != m.Records[n-1].Offset {
			t.Errorf("--offset -2: %v %s", lines, r.stderr)
		}
		r = run(t, nil, "read", dir, "--offset", "21", "--count", "2", "--format", "json", "--partition", "0")
		if lines := parseJSONLines(t, r.stdout); r.code != 0 || len(lines) != 2 || lines[0].Offset != 21 || lines[1].Offset != 22 {
			t.Errorf("--offset 21 --count 2: %v %s", lines, r.stderr)
		}
		r = run(t, nil, "read", dir, "--offset", "100000")
		if r.code != exitError {
			t.Errorf("offset out of range: exit %d", r.code)
		}
		wantOneErrorLine(t, r.stderr, "offset 100000 out of range", dir)

		r = run(t, nil, "tail", dir, "-n", "3", "--format", "json")
		if lines := parseJSONLines(t, r.stdout); r.code != 0 || len(lines) != 3 || lines[2].Offset != m.Records[n-1].Offset {
			t.Errorf("tail -n 3: %v %s", lines, r.stderr)
		}
		r = run(t, nil, "tail", "-f", dir)
		if r.code != exitUsage {
			t.Errorf("tail -f: exit %d", r.code)
		}
		wantOneErrorLine(t, r.stderr, "-f", "simple store/index layout")
	})
}

// read --format json of a simple log is what append --input json takes.
func TestSimpleReadIntoAppend(t *testing.T) {
	dir, m := simpleFixture(t, "clean")
	_, values := m.values(t)
	data := t.TempDir()
	out := mustRun(t, data, "", "read", dir, "--format", "json").stdout
	mustRun(t, data, out, "append", "copy", "--input", "json", "--create")
	got := readRecords(t, data, "copy")
	if len(got) != len(values) {
		t.Fatalf("%d records, want %d", len(got), len(values))
	}
	for i, r := range got {
		if !bytes.Equal(r.value, values[i]) || r.key != nil {
			t.Fatalf("record %d: %q, want %q", i, r.value, values[i])
		}
	}
}

// A seglog topic and a simple log checked in one run are reported in the
// order given, each log's findings together, the simple log's after the
// line saying what its layout allows to check.
func TestVerifyCRCBothLayouts(t *testing.T) {
	simple, _ := simpleFixture(t, "torn")
	data := t.TempDir()
	mustRun(t, data, "a\nb\n", "append", "orders", "--create")
	index := filepath.Join(data, "orders", "0", "00000000000000000000.index")
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"orders", simple}, {simple, "orders"}} {
		r := runIn(t, data, nil, append([]string{"verify-crc", "--wide"}, args...)...)
		if r.code != exitProblems {
			t.Fatalf("%q: exit %d, want %d:\n%s%s", args, r.code, exitProblems, r.stdout, r.stderr)
		}
		var order []string // "seglog", "layout", "simple": each change of what the lines are about
		for _, line := range strings.Split(r.stdout, "\n") {
			what := ""
			switch {
			case line == simple+": "+simpleLayoutNote:
				what = "layout"
			case strings.Contains(line, index):
				what = "seglog"
			case strings.HasPrefix(line, "problem "+simple) || strings.HasPrefix(line, "note    "+simple):
				what = "simple"
			}
			if what != "" && (len(order) == 0 || order[len(order)-1] != what) {
				order = append(order, what)
			}
		}
		want := []string{"seglog", "layout", "simple"}
		if args[0] == simple {
			want = []string{"layout", "simple", "seglog"}
		}
		if !slices.Equal(order, want) {
			t.Errorf("%q: lines about %v, want %v:\n%s", args, order, want, r.stdout)
		}
		if !strings.Contains(r.stdout, "orders/0 ") || !strings.Contains(r.stdout, simple+" ") {
			t.Errorf("%q: table lacks a log:\n%s", args, r.stdout)
		}
	}
}

func TestSimpleVerifyCRC(t *testing.T) {
	want := map[string]int{"clean": 0, "padded-names": 0, "crashed": exitProblems, "crashed-first-run": exitProblems,
		"crashed-reopened": exitProblems, "torn": exitProblems, "empty": 0, "empty-crashed": 0, "corrupt-length": exitProblems,
		"lying-index": exitProblems}
	for _, name := range simpleFixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			dir, m := simpleFixture(t, name)
			if _, ok := want[name]; !ok {
				t.Fatalf("no expected exit status for fixture %s", name)
			}
			untouched(t, dir, func() {
				r := run(t, nil, "verify-crc", dir)
				if r.code != want[name] {
					t.Fatalf("exit %d, want %d:\n%s%s", r.code, want[name], r.stdout, r.stderr)
				}
				if !strings.HasPrefix(r.stdout, dir+": "+simpleLayoutNote+"\n") {
					t.Errorf("report does not start by saying what can be checked:\n%s", r.stdout)
				}
				padding := false
				for _, s := range m.Segments {
					padding = padding || s.PaddingEntries > 0
				}
				if padding != strings.Contains(r.stdout, "zero padding") {
					t.Errorf("zero padding (%v) not reported as such:\n%s", padding, r.stdout)
				}
				if len(m.Torn) > 0 && !strings.Contains(r.stdout, "torn last record") {
					t.Errorf("torn record not reported:\n%s", r.stdout)
				}

				j := run(t, nil, "verify-crc", dir, "--json")
				if j.code != want[name] {
					t.Fatalf("--json: exit %d", j.code)
				}
				lines := strings.Split(strings.TrimSpace(j.stdout), "\n")
				var layout struct {
					Type, Layout string
					Checksums    bool
				}
				var summary struct {
					Type       string
					Problems   int
					Partitions []struct{ Records uint64 }
				}
				if json.Unmarshal([]byte(lines[0]), &layout) != nil || layout.Type != "layout" || layout.Layout != "simple" || layout.Checksums {
					t.Errorf("first line %s", lines[0])
				}
				if json.Unmarshal([]byte(lines[len(lines)-1]), &summary) != nil || summary.Type != "summary" || (summary.Problems > 0) != (want[name] != 0) {
					t.Errorf("summary %s", lines[len(lines)-1])
				}
				var records uint64
				for _, s := range m.Segments {
					records += s.WholeRecords
				}
				if len(summary.Partitions) != 1 || summary.Partitions[0].Records != records {
					t.Errorf("summary %s, want %d records", lines[len(lines)-1], records)
				}
			})
		})
	}
}

func TestSimpleDumpIndex(t *testing.T) {
	for _, name := range simpleFixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			dir, m := simpleFixture(t, name)
			wantCode := 0
			if len(m.IndexLies) > 0 {
				wantCode = exitProblems
			}
			untouched(t, dir, func() {
				for _, s := range m.Segments {
					r := run(t, nil, "dump-index", dir, "--segment", fmt.Sprint(s.Base), "--verify", "--json")
					var sum simpleIndexSummaryJSON
					lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
					if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
						t.Fatalf("%s: %v\n%s", s.Index, err, r.stdout)
					}
					lies := int64(0)
					for _, l := range m.IndexLies {
						if l.Index == s.Index {
							lies++
						}
					}
					if sum.Entries != s.IndexBytes/12 || sum.Padding != s.PaddingEntries || sum.PastStoreEnd != s.EntriesPastStore || sum.Wrong != lies ||
						sum.Real != s.RealIndexEntries-s.EntriesPastStore-lies {
						t.Errorf("%s: %+v, manifest %+v", s.Index, sum, s)
					}
					wantLines := sum.Entries - sum.Padding + min(sum.Padding, 1) + 1 // a padding run is one line
					if int64(len(lines)) != wantLines {
						t.Errorf("%s: %d lines, want %d", s.Index, len(lines), wantLines)
					}
					if (lies > 0) != (r.code == exitProblems) {
						t.Errorf("%s: exit %d with %d wrong entries", s.Index, r.code, lies)
					}
				}
				r := run(t, nil, "dump-index", dir, "--verify")
				if r.code != wantCode {
					t.Fatalf("exit %d, want %d:\n%s%s", r.code, wantCode, r.stdout, r.stderr)
				}
				for _, s := range m.Segments {
					if s.PaddingEntries > 0 {
						line := fmt.Sprintf("entries %d..%d: zero padding (%d ", s.IndexBytes/12-s.PaddingEntries, s.IndexBytes/12-1, s.PaddingEntries)
						if !strings.Contains(r.stdout, line) {
							t.Errorf("no line %q in:\n%s", line, r.stdout)
						}
					}
				}
				// An .index named directly: its .store beside it says the layout.
				s := m.Segments[0]
				f := run(t, nil, "dump-index", filepath.Join(dir, s.Index))
				if f.code != 0 || !strings.Contains(f.stdout, simpleLayoutNote) {
					t.Errorf("dump-index FILE: exit %d\n%s%s", f.code, f.stdout, f.stderr)
				}
			})
		})
	}
}

// A zero-padded index of a million entries is one summary line, read in
// constant memory.
func TestSimpleDumpIndexLongPadding(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	os.Mkdir(dir, 0o755)
	store := format.AppendSimpleRecord(format.AppendSimpleRecord(nil, []byte("a")), []byte("b"))
	index := format.AppendSimpleIndexEntry(format.AppendSimpleIndexEntry(nil, format.SimpleIndexEntry{}), format.SimpleIndexEntry{RelOffset: 1, Pos: 9})
	os.WriteFile(filepath.Join(dir, "0.store"), store, 0o644)
	os.WriteFile(filepath.Join(dir, "0.index"), index, 0o644)
	const entries = 1 << 20
	if err := os.Truncate(filepath.Join(dir, "0.index"), entries*format.SimpleIndexEntryLen); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, "dump-index", dir+"/0.index", "--verify")
	want := fmt.Sprintf("entries 2..%d: zero padding (%d entries)\n", entries-1, entries-2)
	if r.code != 0 || !strings.Contains(r.stdout, want) || strings.Count(r.stdout, "\n") > 10 {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestSimpleDescribe(t *testing.T) {
	dir, m := simpleFixture(t, "crashed")
	var records uint64
	for _, s := range m.Segments {
		records += s.WholeRecords
	}
	last := m.Segments[len(m.Segments)-1]
	untouched(t, dir, func() {
		r := run(t, nil, "describe", dir)
		if r.code != 0 || !strings.Contains(r.stdout, "simple store/index layout") {
			t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
		j := run(t, nil, "describe", dir, "--json")
		var doc struct {
			Topics []struct {
				Layout     string
				Partitions []struct {
					Start    uint64  `json:"start_offset"`
					Next     uint64  `json:"next_offset"`
					Records  uint64  `json:"records"`
					Segments int     `json:"segments"`
					Oldest   *string `json:"oldest_timestamp"`
				}
			}
		}
		if err := json.Unmarshal([]byte(j.stdout), &doc); err != nil || len(doc.Topics) != 1 || len(doc.Topics[0].Partitions) != 1 {
			t.Fatalf("%v:\n%s", err, j.stdout)
		}
		p := doc.Topics[0].Partitions[0]
		if doc.Topics[0].Layout != "simple" || p.Start != 0 || p.Next != last.Base+last.WholeRecords || p.Records != records ||
			p.Segments != len(m.Segments) || p.Oldest != nil {
			t.Errorf("describe --json: %+v", doc)
		}
		if r := run(t, nil, "describe", dir, "--partition", "1"); r.code != exitUsage {
			t.Errorf("--partition 1: exit %d", r.code)
		}
	})
}

func TestSimpleBothLayouts(t *testing.T) {
	dir, _ := simpleFixture(t, "clean")
	seglogFile := format.SegmentName(0, format.LogExt)
	os.WriteFile(filepath.Join(dir, seglogFile), nil, 0o644)
	data := t.TempDir()
	untouched(t, dir, func() {
		for _, args := range [][]string{{"read", dir}, {"verify-crc", dir}, {"describe", dir}, {"dump-index", dir}, {"tail", dir},
			{"import", dir, "t", "--create"}} {
			r := runIn(t, data, nil, args...)
			if r.code != exitError {
				t.Errorf("%v: exit %d, want 1", args, r.code)
			}
			wantLastErrorLine(t, r.stderr, seglogFile, ".store", "both")
		}
	})
	if _, err := os.Stat(filepath.Join(data, "t")); err == nil {
		t.Error("import created the topic though it refused the directory")
	}
}

func TestSimpleImport(t *testing.T) {
	for _, name := range simpleFixtureNames(t) {
		if name == "corrupt-length" {
			continue // TestSimpleImportErrors
		}
		t.Run(name, func(t *testing.T) {
			dir, m := simpleFixture(t, name)
			_, values := m.values(t)
			data := t.TempDir()
			var r result
			untouched(t, dir, func() { r = runIn(t, data, nil, "import", dir, "t", "--create", "--json") })
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var sum importSummary
			if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
				t.Fatalf("%v: %s", err, r.stdout)
			}
			var torn int64
			for _, tt := range m.Torn {
				torn += tt.TornBytes
				if !strings.Contains(r.stderr, "torn last record") {
					t.Errorf("no warning about the torn record: %s", r.stderr)
				}
			}
			if sum.Records != uint64(len(values)) || sum.TornTailBytes != torn || !sum.Complete || sum.Partition != 0 {
				t.Errorf("summary %+v, want %d records, %d torn bytes", sum, len(values), torn)
			}
			got := readRecords(t, data, "t")
			if len(got) != len(values) {
				t.Fatalf("%d records, want %d", len(got), len(values))
			}
			for i, rec := range got {
				if rec.offset != uint64(i) || !bytes.Equal(rec.value, values[i]) || rec.key != nil {
					t.Fatalf("record %d: offset %d %q, want %q", i, rec.offset, rec.value, values[i])
				}
			}
			if len(values) > 0 && (*sum.FirstSourceOffset != m.Records[0].Offset || *sum.LastOffset != uint64(len(values)-1)) {
				t.Errorf("summary offsets %+v", sum)
			}
		})
	}
}

func TestSimpleImportTimestamps(t *testing.T) {
	dir, m := simpleFixture(t, "clean")
	if len(m.Segments) < 3 {
		t.Fatal("the clean fixture should have 3 segments")
	}
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	// The second store is older than the first: its records get the
	// first's time, as timestamps never go back in a partition.
	mtimes := []time.Time{t0, t0.Add(-time.Hour), t0.Add(time.Hour)}
	for i, s := range m.Segments {
		if err := os.Chtimes(filepath.Join(dir, s.Store), mtimes[i], mtimes[i]); err != nil {
			t.Fatal(err)
		}
	}
	data := t.TempDir()
	mustRun(t, data, "", "create", "t")
	r := mustRun(t, data, "", "import", dir, "t", "--timestamps", "mtime")
	if !strings.Contains(r.stdout, "RECORDS") || !strings.Contains(r.stdout, "t/0") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	// Each record is stamped with its store's time, or a nanosecond after
	// the record before it if that is later: one run's records have
	// strictly increasing timestamps.
	lines := parseJSONLines(t, mustRun(t, data, "", "read", "t", "--format", "json").stdout)
	seg, prev := 0, int64(0)
	for _, l := range lines {
		for seg+1 < len(m.Segments) && l.Offset >= m.Segments[seg+1].Base {
			seg++
		}
		want := max(mtimes[seg].UnixNano(), prev+1)
		if l.TimestampNS != want {
			t.Fatalf("offset %d: timestamp %s, want %s", l.Offset, l.Timestamp, time.Unix(0, want).UTC())
		}
		prev = want
	}

	// Stamped with the time of import, likewise strictly increasing, and
	// after those already there.
	start := time.Now().UnixNano()
	mustRun(t, data, "", "import", dir, "t")
	for _, l := range parseJSONLines(t, mustRun(t, data, "", "read", "t", "--format", "json", "--offset", fmt.Sprint(len(lines))).stdout) {
		if l.TimestampNS <= prev || l.TimestampNS < start {
			t.Fatalf("offset %d: timestamp %d, want above %d (the record before) and at least %d (the import's start)", l.Offset, l.TimestampNS, prev, start)
		}
		prev = l.TimestampNS
	}
}

func TestSimpleImportErrors(t *testing.T) {
	dir, m := simpleFixture(t, "corrupt-length")
	data := t.TempDir()
	mustRun(t, data, "", "create", "two", "--partitions", "2")
	mustRun(t, data, "", "create", "one")
	untouched(t, dir, func() {
		r := runIn(t, data, nil, "import", dir, "one")
		if r.code != exitError {
			t.Fatalf("corrupt middle: exit %d: %s", r.code, r.stderr)
		}
		fb := m.FramingBreak
		wantLastErrorLine(t, r.stderr, fb.Store, fmt.Sprintf("byte %d", fb.Position), fmt.Sprintf("%d records were imported", fb.Offset), "stay")
		if got := readRecords(t, data, "one"); uint64(len(got)) != fb.Offset {
			t.Errorf("%d records stayed, want %d", len(got), fb.Offset)
		}
		for _, tc := range []struct {
			args  []string
			code  int
			wants []string
		}{
			{[]string{"import", dir, "missing"}, exitError, []string{"missing", "--create"}},
			{[]string{"import", dir, "two"}, exitUsage, []string{"--partition"}},
			{[]string{"import", dir, "two", "--partition", "2"}, exitError, []string{"partitions 0..1"}},
			{[]string{"import", filepath.Join(dir, "nope"), "one"}, exitError, []string{"nope"}},
			{[]string{"import", data + "/one/0", "one"}, exitError, []string{"seglog segments"}},
			{[]string{"import", dir}, exitUsage, []string{"DIR and TOPIC"}},
			{[]string{"import", dir, "one", "--timestamps", "then"}, exitUsage, []string{"--timestamps"}},
		} {
			r := runIn(t, data, nil, tc.args...)
			if r.code != tc.code {
				t.Errorf("%v: exit %d, want %d: %s", tc.args, r.code, tc.code, r.stderr)
			}
			wantLastErrorLine(t, r.stderr, tc.wants...)
		}
	})
	if _, err := os.Stat(filepath.Join(data, "missing")); err == nil {
		t.Error("import created a topic without --create")
	}
}

// A simple log named by a relative path ending in '/' is still a path:
// the advice after a corrupt record is --skip-corrupt alone, never
// recover, which repairs topics.
func TestSimpleReadTrailingSlash(t *testing.T) {
	dir, m := simpleFixture(t, "corrupt-length")
	t.Chdir(filepath.Dir(dir))
	arg := filepath.Base(dir) + "/"
	r := run(t, nil, "read", arg)
	if r.code != exitError {
		t.Fatalf("read %s: exit %d, want 1: %s", arg, r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, fmt.Sprintf("byte %d", m.FramingBreak.Position), "--skip-corrupt reads past it")
	if strings.Contains(r.stderr, "recover") {
		t.Errorf("advice names recover for a simple log: %s", r.stderr)
	}
}

// tail's flags a simple log cannot take are refused in the order they
// always were: -f before --partition.
func TestSimpleTailRefusals(t *testing.T) {
	dir, _ := simpleFixture(t, "clean")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", "--partition", "1"}, "-f/-F"},
		{[]string{"-F", "--partition", "1"}, "-f/-F"},
		{[]string{"--partition", "1"}, "--partition 1"},
	} {
		r := run(t, nil, append([]string{"tail", dir}, tc.args...)...)
		if r.code != exitUsage {
			t.Errorf("tail %v: exit %d, want 2: %s", tc.args, r.code, r.stderr)
		}
		wantOneErrorLine(t, r.stderr, tc.want, "simple store/index layout")
	}
	r := run(t, nil, "tail", dir, "--partition", "0", "-n", "1")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("tail --partition 0 -n 1: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
}
