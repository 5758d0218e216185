package commands

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// docs/cli.md is the command-line contract, and these tests keep it true:
// the JSON every command prints has exactly the fields its table lists,
// of the types and presence given; each row of the exit-status table by
// command is what an example of it returns; the enumerated values, the
// environment variables and the flag values listed are the code's.
// Helpers of this file carry a cdoc prefix.

const cdocFile = "../docs/cli.md"

// cdocTable is a table of docs/cli.md, with the headings it is under.
type cdocTable struct {
	section string // the last "## " heading
	heading string // the last heading of any level
	line    int    // of its header row
	header  []string
	rows    [][]string
}

// cdocTables parses the tables of docs/cli.md.
func cdocTables(t *testing.T) []cdocTable {
	t.Helper()
	b, err := os.ReadFile(cdocFile)
	if err != nil {
		t.Fatalf("the command-line contract: %v", err)
	}
	var tables []cdocTable
	var section, heading string
	inTable, fenced := false, false
	for i, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			fenced = !fenced
		case fenced:
		case strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
			if strings.HasPrefix(line, "## ") {
				section = heading
			}
		case strings.HasPrefix(line, "|"):
			cells := cdocCells(line)
			switch {
			case !inTable:
				tables = append(tables, cdocTable{section: section, heading: heading, line: i + 1, header: cells})
			case strings.Trim(strings.Join(cells, ""), "-: ") == "":
				// the row under the header
			default:
				tb := &tables[len(tables)-1]
				if len(cells) != len(tb.header) {
					t.Errorf("%s:%d: %d cells, the header has %d", cdocFile, i+1, len(cells), len(tb.header))
				}
				tb.rows = append(tb.rows, cells)
			}
			inTable = true
			continue
		}
		inTable = false
	}
	return tables
}

// cdocCells splits a table row into its cells; `\|` is a '|' inside one.
func cdocCells(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "|"), "|")
	cells := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|"))
	}
	return cells
}

var cdocCode = regexp.MustCompile("`([^`]*)`")

// cdocCodes is the backticked spans of a cell.
func cdocCodes(cell string) []string {
	var out []string
	for _, m := range cdocCode.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// cdocTablesUnder returns the tables whose last heading is heading.
func cdocTablesUnder(tables []cdocTable, heading string) []cdocTable {
	var out []cdocTable
	for _, tb := range tables {
		if tb.heading == heading {
			out = append(out, tb)
		}
	}
	return out
}

// cdocSlug is the anchor GitHub gives a heading.
func cdocSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cdocEnums is the enumerated values the doc lists, by the anchor of
// their heading.
func cdocEnums(t *testing.T, tables []cdocTable) map[string][]string {
	t.Helper()
	enums := map[string][]string{}
	for _, tb := range tables {
		if tb.section != "Enumerated values" || tb.header[0] != "value" {
			continue
		}
		for _, row := range tb.rows {
			codes := cdocCodes(row[0])
			if len(codes) != 1 {
				t.Errorf("%s, table under %q: the value %q is not one `value`", cdocFile, tb.heading, row[0])
				continue
			}
			enums[cdocSlug(tb.heading)] = append(enums[cdocSlug(tb.heading)], codes[0])
		}
	}
	return enums
}

// cdocField is a row of a JSON table: a key path and what it holds.
type cdocField struct {
	path   string // "partitions[].segments[].cut.saved_to"
	kind   string // string, integer, number, boolean, object or array
	elem   string // for an array, its elements' kind
	enum   string // the anchor of the enumerated values it takes (or, or, for an object, its keys)
	null   bool
	always bool
	rare   bool
}

var (
	cdocEnumLink = regexp.MustCompile(`\(#([a-z0-9_-]+)\)`)
	cdocKinds    = []string{"string", "integer", "number", "boolean", "object", "array"}
)

// cdocFields reads a JSON table.
func cdocFields(t *testing.T, tb cdocTable) []cdocField {
	t.Helper()
	want := []string{"key", "type", "null", "present", "meaning"}
	if !slices.Equal(tb.header, want) {
		t.Fatalf("%s:%d: a JSON table's columns are %q, want %q", cdocFile, tb.line, tb.header, want)
	}
	var fields []cdocField
	for _, row := range tb.rows {
		codes := cdocCodes(row[0])
		if len(codes) == 0 {
			t.Errorf("%s, table under %q: key %q is not in backticks", cdocFile, tb.heading, row[0])
			continue
		}
		f := cdocField{path: codes[0], rare: strings.Contains(row[0], "(rare)"), always: row[3] == "always"}
		kind := strings.TrimSpace(strings.SplitN(row[1], "(", 2)[0])
		if m := cdocEnumLink.FindStringSubmatch(row[1]); m != nil {
			f.enum = m[1]
		}
		if elem, ok := strings.CutPrefix(kind, "array of "); ok {
			kind, f.elem = "array", strings.TrimSuffix(elem, "s")
		}
		f.kind = kind
		if !slices.Contains(cdocKinds, f.kind) || f.kind == "array" && !slices.Contains(cdocKinds, f.elem) {
			t.Errorf("%s, table under %q: %s has type %q, not one of %q (or an array of one)", cdocFile, tb.heading, f.path, row[1], cdocKinds)
		}
		switch row[2] {
		case "yes":
			f.null = true
		case "no":
		default:
			t.Errorf("%s, table under %q: %s: null is %q, want yes or no", cdocFile, tb.heading, f.path, row[2])
		}
		fields = append(fields, f)
	}
	return fields
}

// cdocSeen is what the runs printed at one key path.
type cdocSeen struct {
	kinds, elems, values map[string]bool
	example              string
}

// cdocObserved gathers the key paths of JSON values.
type cdocObserved struct {
	paths   map[string]*cdocSeen
	objects map[string][]map[string]any // by key path: the objects there
}

func newCdocObserved() *cdocObserved {
	return &cdocObserved{paths: map[string]*cdocSeen{}, objects: map[string][]map[string]any{}}
}

func cdocJoin(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func cdocKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "number"
		}
		return "integer"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// object records the object m at path and walks its fields.
func (o *cdocObserved) object(path string, m map[string]any, example string) {
	o.objects[path] = append(o.objects[path], m)
	for k, v := range m {
		o.value(cdocJoin(path, k), v, example)
	}
}

func (o *cdocObserved) value(path string, v any, example string) {
	s := o.paths[path]
	if s == nil {
		s = &cdocSeen{kinds: map[string]bool{}, elems: map[string]bool{}, values: map[string]bool{}, example: cdocShort(example)}
		o.paths[path] = s
	}
	s.kinds[cdocKind(v)] = true
	switch x := v.(type) {
	case string:
		s.values[x] = true
	case map[string]any:
		for k := range x {
			s.values[k] = true // an object's keys, for one whose keys are enumerated
		}
		o.object(path, x, example)
	case []any:
		for _, e := range x {
			s.elems[cdocKind(e)] = true
			if m, ok := e.(map[string]any); ok {
				o.object(path+"[]", m, example)
			}
		}
	}
}

// cdocShort is the start of an output, for a message.
func cdocShort(s string) string {
	if len(s) > 600 {
		return s[:600] + " ..."
	}
	return s
}

// cdocDecode decodes one JSON value, keeping numbers as written.
func cdocDecode(t *testing.T, text string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, text)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("more than one JSON value:\n%s", text)
	}
	return v
}

// cdocMatch reports whether an observed key path is the field's.
func cdocMatch(field, path string) bool {
	fs, ps := strings.Split(field, "."), strings.Split(path, ".")
	if len(fs) != len(ps) {
		return false
	}
	for i := range fs {
		if fs[i] != ps[i] && !(strings.HasPrefix(fs[i], "<") && strings.HasSuffix(fs[i], ">")) {
			return false
		}
	}
	return true
}

// cdocParent is the key path of the objects a field is in: "" at the top.
func cdocParent(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

// cdocCompare checks what the runs printed against a JSON table: every
// key printed is listed and every key listed was printed (unless rare),
// each of its type, present where it says always, and holding the
// enumerated values it names.
func cdocCompare(t *testing.T, heading string, fields []cdocField, obs *cdocObserved, enums map[string][]string) {
	t.Helper()
	where := fmt.Sprintf("%s, ### %s", cdocFile, heading)
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range obs.paths {
			if !yield(p) {
				return
			}
		}
	})
	matched := map[string]bool{}
	for _, p := range paths {
		seen := obs.paths[p]
		i := slices.IndexFunc(fields, func(f cdocField) bool { return cdocMatch(f.path, p) })
		if i < 0 {
			t.Errorf("%s: the output has %s (%s), which the table does not list; e.g. in\n%s", where, p, cdocKeys(seen.kinds), seen.example)
			continue
		}
		f := fields[i]
		matched[f.path] = true
		for k := range seen.kinds {
			switch {
			case k == "null" && !f.null:
				t.Errorf("%s: %s is null, but its null column says no; e.g. in\n%s", where, p, seen.example)
			case k != "null" && k != f.kind && !(k == "integer" && f.kind == "number"):
				t.Errorf("%s: %s is a JSON %s, but the table says %s; e.g. in\n%s", where, p, k, f.kind, seen.example)
			}
		}
		for k := range seen.elems {
			if k != f.elem && !(k == "integer" && f.elem == "number") {
				t.Errorf("%s: %s holds a JSON %s, but the table says an array of %ss", where, p, k, f.elem)
			}
		}
		if f.enum != "" {
			values, ok := enums[f.enum]
			if !ok {
				t.Errorf("%s: %s links to #%s, which is no table of enumerated values", where, f.path, f.enum)
			}
			for v := range seen.values {
				if ok && !slices.Contains(values, v) {
					t.Errorf("%s: %s is %q, which #%s does not list", where, p, v, f.enum)
				}
			}
		}
	}
	for _, f := range fields {
		if !matched[f.path] && !f.rare {
			t.Errorf("%s: lists %s, which no run printed (make a run print it, or mark it (rare))", where, f.path)
		}
		if !f.always || strings.Contains(f.path, "<") {
			continue
		}
		key := f.path[strings.LastIndexByte(f.path, '.')+1:]
		for p, objs := range obs.objects {
			if !cdocMatch(cdocParent(f.path), p) && !(p == "" && cdocParent(f.path) == "") {
				continue
			}
			for _, m := range objs {
				if _, ok := m[key]; !ok {
					b, _ := json.Marshal(m)
					t.Errorf("%s: %s is present always, says the table, but this object lacks it:\n%s", where, f.path, cdocShort(string(b)))
					break
				}
			}
		}
	}
}

func cdocKeys(m map[string]bool) string {
	return strings.Join(slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}), " or ")
}

// cdocJSONCase is a command whose JSON the tables describe: runs that
// make its fields appear, and which table each kind of output goes to.
type cdocJSONCase struct {
	name string
	// lines: each line is a JSON object; else the output is one value.
	lines bool
	// tables are the headings of the tables, by the "type" of the lines
	// they describe ("" for a document, or lines without a type).
	tables map[string]string
	// outputs makes the data and runs the commands, returning what they
	// printed.
	outputs func(t *testing.T) []string
}

func TestCLIDocJSONFields(t *testing.T) {
	tables := cdocTables(t)
	enums := cdocEnums(t, tables)
	documented := map[string]bool{}
	for _, tb := range tables {
		if tb.section == "JSON output" && len(tb.header) > 0 && tb.header[0] == "key" {
			documented[tb.heading] = true
		}
	}
	covered := map[string]bool{}
	for _, c := range cdocJSONCases {
		for _, h := range c.tables {
			covered[h] = true
			if !documented[h] {
				t.Errorf("%s has no JSON table under ### %s", cdocFile, h)
			}
		}
	}
	for h := range documented {
		if !covered[h] {
			t.Errorf("%s: the JSON table under ### %s is checked against no command's output (add a case to cdocJSONCases)", cdocFile, h)
		}
	}
	for _, c := range cdocJSONCases {
		t.Run(c.name, func(t *testing.T) {
			obs := map[string]*cdocObserved{}
			for _, h := range c.tables {
				obs[h] = newCdocObserved()
			}
			for _, out := range c.outputs(t) {
				texts := []string{out}
				if c.lines {
					texts = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				}
				for _, text := range texts {
					m, ok := cdocDecode(t, text).(map[string]any)
					if !ok {
						t.Fatalf("not a JSON object: %s", text)
					}
					typ, _ := m["type"].(string)
					h, ok := c.tables[typ]
					if !ok {
						h, ok = c.tables[""]
					}
					if !ok {
						t.Fatalf("a line of type %q, for which %s has no table: %s", typ, cdocFile, text)
					}
					obs[h].object("", m, text)
				}
			}
			for _, h := range c.tables {
				tbs := cdocTablesUnder(tables, h)
				if len(tbs) != 1 {
					t.Fatalf("%s: %d tables under ### %s, want 1", cdocFile, len(tbs), h)
				}
				cdocCompare(t, h, cdocFields(t, tbs[0]), obs[h], enums)
			}
		})
	}
}

// cdocRun runs seglog with --data-dir dir and fails the test unless it
// exits want.
func cdocRun(t *testing.T, dir, stdin string, want int, args ...string) result {
	t.Helper()
	r := runIn(t, dir, strings.NewReader(stdin), args...)
	if r.code != want {
		t.Fatalf("seglog %q: exit %d, want %d; stderr:\n%s", args, r.code, want, r.stderr)
	}
	return r
}

// cdocTS0 is when the records written straight into segments begin.
var cdocTS0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano()

// cdocRec is a record to write straight into a segment.
type cdocRec struct {
	off        uint64
	ts         int64
	key, value string
}

// cdocRecs is records from..to-1, a millisecond apart.
func cdocRecs(from, to uint64) []cdocRec {
	var rs []cdocRec
	for o := from; o < to; o++ {
		rs = append(rs, cdocRec{off: o, ts: cdocTS0 + int64(o)*1e6, value: fmt.Sprintf("value %d", o)})
	}
	return rs
}

// cdocSegment writes the segment of recs based at base into the
// partition directory pdir, with an index and a time index entry per
// record, and returns each record's position.
func cdocSegment(t *testing.T, pdir string, base uint64, recs []cdocRec) []int64 {
	t.Helper()
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var log, idx, tidx []byte
	var pos []int64
	for _, r := range recs {
		pos = append(pos, int64(len(log)))
		idx = format.AppendIndexEntry(idx, format.IndexEntry{Offset: r.off, Pos: int64(len(log))})
		tidx = format.AppendTimeIndexEntry(tidx, format.TimeIndexEntry{Offset: r.off, Timestamp: r.ts})
		var key []byte
		if r.key != "" {
			key = []byte(r.key)
		}
		log = format.AppendRecord(log, &format.Record{Offset: r.off, Timestamp: r.ts, Key: key, Value: []byte(r.value)})
	}
	for ext, b := range map[string][]byte{format.LogExt: log, format.IndexExt: idx, format.TimeIndexExt: tidx} {
		cdocWrite(t, filepath.Join(pdir, format.SegmentName(base, ext)), b)
	}
	return pos
}

func cdocWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// cdocSetEntry writes entry i of an index file (past its end: appends).
func cdocSetEntry(t *testing.T, path string, i int, offset uint64, v int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e := format.AppendIndexEntry(nil, format.IndexEntry{Offset: offset, Pos: v})
	at := i * format.IndexEntryLen
	b = append(b[:min(at, len(b))], append(e, b[min(at+len(e), len(b)):]...)...)
	cdocWrite(t, path, b)
}

// cdocDamagedTopic makes topic, of partitions partitions, with records
// in partition 0; partition broken cannot be read (a segment's name is
// on a directory), and partition missing has no directory.
func cdocDamagedTopic(t *testing.T, dir, topic string, partitions, broken, missing int) {
	t.Helper()
	cdocRun(t, dir, "", 0, "create", topic, "--partitions", strconv.Itoa(partitions))
	cdocRun(t, dir, "a\nb\nc\n", 0, "append", topic, "--partition", "0")
	if err := os.MkdirAll(filepath.Join(dir, topic, strconv.Itoa(broken), format.SegmentName(7, format.LogExt)), 0o755); err != nil {
		t.Fatal(err)
	}
	cdocRemove(t, filepath.Join(dir, topic, strconv.Itoa(missing)))
}

func cdocRemove(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

// cdocStore writes <base>.store of values into dir, a log in the simple
// store/index layout, and returns each record's position and the end.
func cdocStore(t *testing.T, dir string, base uint64, values ...string) (pos []uint64, end uint64) {
	t.Helper()
	var b []byte
	for _, v := range values {
		pos = append(pos, uint64(len(b)))
		b = format.AppendSimpleRecord(b, []byte(v))
	}
	cdocWrite(t, filepath.Join(dir, fmt.Sprintf("%d%s", base, format.SimpleStoreExt)), b)
	return pos, uint64(len(b))
}

// cdocSimpleIndex writes <base>.index of entries into dir.
func cdocSimpleIndex(t *testing.T, dir string, base uint64, entries ...format.SimpleIndexEntry) {
	t.Helper()
	var b []byte
	for _, e := range entries {
		b = format.AppendSimpleIndexEntry(b, e)
	}
	cdocWrite(t, filepath.Join(dir, fmt.Sprintf("%d%s", base, format.SimpleIndexExt)), b)
}

// cdocSimpleLog is a sound log in the simple layout: records a, b, c.
func cdocSimpleLog(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "old-log")
	pos, _ := cdocStore(t, dir, 0, "a", "b", "c")
	cdocSimpleIndex(t, dir, 0, format.SimpleIndexEntry{RelOffset: 0, Pos: pos[0]},
		format.SimpleIndexEntry{RelOffset: 1, Pos: pos[1]}, format.SimpleIndexEntry{RelOffset: 2, Pos: pos[2]})
	return dir
}

// cdocDamagedSimpleLog is a log in the simple layout whose index has
// entries of every class: real, wrong, past the store's end and zero
// padding; its second segment has no index.
func cdocDamagedSimpleLog(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "crashed-log")
	pos, end := cdocStore(t, dir, 0, "a", "b", "c")
	cdocSimpleIndex(t, dir, 0, format.SimpleIndexEntry{RelOffset: 0, Pos: pos[0]},
		format.SimpleIndexEntry{RelOffset: 1, Pos: pos[1] + 1}, format.SimpleIndexEntry{RelOffset: 2, Pos: pos[2]},
		format.SimpleIndexEntry{RelOffset: 3, Pos: end}, format.SimpleIndexEntry{}, format.SimpleIndexEntry{})
	cdocStore(t, dir, 3, "d", "e")
	return dir
}

// cdocIndexTopic is topic x of a data directory, written straight into
// its segments so that dump-index --verify and verify-crc find every
// kind of index entry: partition 0's first segment has a record older
// than the one before it and index entries that lie, point inside a
// record, go out of order or past the end; its second segment a corrupt
// record and a time index entry below its base; its third no time index
// and a partial index entry. Partition 1 is missing; partition 2 has a
// gap its .gaps.json records.
func cdocIndexTopic(t *testing.T) (dir, pdir string) {
	t.Helper()
	dir = t.TempDir()
	pdir = filepath.Join(dir, "x", "0")
	a := cdocRecs(0, 6)
	a[3].ts = a[1].ts + 5e5
	posA := cdocSegment(t, pdir, 0, a)
	index := filepath.Join(pdir, format.SegmentName(0, format.IndexExt))
	cdocSetEntry(t, index, 1, 1, posA[2])
	cdocSetEntry(t, index, 2, 2, posA[2]+1)
	cdocSetEntry(t, index, 3, 4, posA[4])
	cdocSetEntry(t, index, 4, 3, posA[3])
	cdocSetEntry(t, index, 6, 6, 1<<20)
	cdocSetEntry(t, filepath.Join(pdir, format.SegmentName(0, format.TimeIndexExt)), 1, 1, a[1].ts+12345)

	posB := cdocSegment(t, pdir, 6, cdocRecs(6, 10))
	vcFlip(t, filepath.Join(pdir, format.SegmentName(6, format.LogExt)), posB[2]+format.HeaderLen+1)
	cdocSetEntry(t, filepath.Join(pdir, format.SegmentName(6, format.IndexExt)), 3, 9, posB[2]+5)
	cdocSetEntry(t, filepath.Join(pdir, format.SegmentName(6, format.TimeIndexExt)), 0, 5, cdocTS0)

	cdocSegment(t, pdir, 10, cdocRecs(10, 12))
	cdocRemove(t, filepath.Join(pdir, format.SegmentName(10, format.TimeIndexExt)))
	f, err := os.OpenFile(filepath.Join(pdir, format.SegmentName(10, format.IndexExt)), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	p2 := filepath.Join(dir, "x", "2")
	cdocSegment(t, p2, 0, cdocRecs(0, 2))
	cdocSegment(t, p2, 5, cdocRecs(5, 7))
	gaps, err := json.Marshal(map[string]any{"gaps": []logstore.Gap{{From: 2, To: 5, Time: "2024-05-01T12:00:00Z", Reason: "cut out by recover --salvage"}}})
	if err != nil {
		t.Fatal(err)
	}
	cdocWrite(t, filepath.Join(p2, logstore.GapsFile), gaps)
	return dir, pdir
}

var cdocJSONCases = []cdocJSONCase{
	{name: "append", tables: map[string]string{"": "`append --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "", 0, "create", "a", "--partitions", "2")
		return []string{cdocRun(t, dir, "x:1\ny:2\nz:3\n", 0, "append", "a", "--key-delimiter", ":", "--json").stderr}
	}},
	{name: "read", lines: true, tables: map[string]string{"": "`read --format json` and `tail --format json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "", 0, "create", "r")
		b64 := base64.StdEncoding.EncodeToString
		in := fmt.Sprintf("{\"key\":\"k\",\"value\":\"v\"}\n{\"value\":\"no key\"}\n{\"key_base64\":%q,\"value_base64\":%q}\n", b64([]byte{0xff}), b64([]byte{0xfe, 0}))
		cdocRun(t, dir, in, 0, "append", "r", "--input", "json")
		return []string{
			cdocRun(t, dir, "", 0, "read", "r", "--format", "json").stdout,
			cdocRun(t, dir, "", 0, "tail", "r", "--format", "json").stdout,
			cdocRun(t, dir, "", 0, "read", filepath.Join(dir, "r", "0"), "--format", "json").stdout,
			cdocRun(t, dir, "", 0, "read", cdocSimpleLog(t), "--format", "json").stdout,
			cdocRun(t, dir, "", 0, "-d", filepath.Join(kafkaFixtures, "logdir"), "read", "events", "--format", "json").stdout,
		}
	}},
	{name: "describe", tables: map[string]string{"": "`describe --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocDamagedTopic(t, dir, "d", 5, 2, 3)
		const top = uint64(math.MaxUint64)
		cdocSegment(t, filepath.Join(dir, "f", "0"), top, []cdocRec{{off: top, ts: cdocTS0, value: "the last"}})
		return []string{cdocRun(t, dir, "", 1, "describe", "d", "f", cdocSimpleLog(t), "--json").stdout,
			cdocRun(t, dir, "", 0, "-d", filepath.Join(kafkaFixtures, "logdir"), "describe", "--json").stdout}
	}},
	{name: "dump-index kafka", lines: true, tables: map[string]string{"": "`dump-index --json` on Apache Kafka's layout"}, outputs: func(t *testing.T) []string {
		logdir := filepath.Join(kafkaFixtures, "logdir")
		return []string{
			cdocRun(t, logdir, "", 0, "dump-index", filepath.Join(logdir, "orders-1"), "--json", "--verify").stdout,
			cdocRun(t, logdir, "", 0, "dump-index", filepath.Join(logdir, "payments-0"), "--json").stdout,
			cdocRun(t, logdir, "", 0, "dump-index", filepath.Join(logdir, "payments-0", "00000000000000000015.snapshot"), "--json").stdout,
			cdocRun(t, logdir, "", 0, "dump-index", filepath.Join(logdir, "recovery-point-offset-checkpoint"), "--json").stdout,
			cdocRun(t, logdir, "", 0, "dump-index", filepath.Join(logdir, "orders-0", "leader-epoch-checkpoint"), "--json").stdout,
			cdocRun(t, logdir, "", 3, "dump-index", filepath.Join(kafkaFixtures, "damaged", "lying-index", "orders-0"), "--json", "--verify").stdout,
		}
	}},
	{name: "describe groups", tables: map[string]string{"": "`describe --groups --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "", 0, "create", "g", "--partitions", "2")
		cdocRun(t, dir, "a\nb\nc\nd\n", 0, "append", "g")
		cdocRun(t, dir, "", 0, "read", "g", "--group", "g1", "--count", "3")
		cdocRun(t, dir, "x\n", 0, "append", "h", "--create")
		cdocRun(t, dir, "", 0, "read", "h", "--group", "g2")
		cdocRemove(t, filepath.Join(dir, "h"))
		cdocWrite(t, filepath.Join(dir, ".groups", "g3", "g.json"), []byte("not JSON"))
		return []string{cdocRun(t, dir, "", 1, "describe", "--groups", "--json").stdout}
	}},
	{name: "groups", tables: map[string]string{"": "`groups --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "", 0, "create", "g", "--partitions", "2")
		cdocRun(t, dir, "a\nb\nc\nd\n", 0, "append", "g")
		cdocRun(t, dir, "", 0, "read", "g", "--group", "g1", "--count", "3")
		cdocWrite(t, filepath.Join(dir, ".groups", "g3", "g.json"), []byte("not JSON"))
		return []string{cdocRun(t, dir, "", 1, "groups", "--json").stdout}
	}},
	{name: "groups describe", tables: map[string]string{"": "`groups describe --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "", 0, "create", "g", "--partitions", "2")
		cdocRun(t, dir, "a\nb\nc\nd\n", 0, "append", "g")
		cdocRun(t, dir, "", 0, "read", "g", "--group", "g1", "--partition", "0", "--count", "1")
		cdocRun(t, dir, "x\n", 0, "append", "h", "--create")
		cdocRun(t, dir, "", 0, "read", "h", "--group", "g1")
		cdocRemove(t, filepath.Join(dir, "h"))
		return []string{cdocRun(t, dir, "", 0, "groups", "describe", "g1", "--json").stdout}
	}},
	{name: "groups delete", tables: map[string]string{"": "`groups delete --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "a\n", 0, "append", "g", "--create")
		cdocRun(t, dir, "", 0, "read", "g", "--group", "g1")
		return []string{cdocRun(t, dir, "", 1, "groups", "delete", "g1", "nosuch", "--json").stdout}
	}},
	{name: "groups reset", tables: map[string]string{"": "`groups reset --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "", 0, "create", "g", "--partitions", "2")
		cdocRun(t, dir, "a\nb\nc\nd\n", 0, "append", "g")
		cdocRun(t, dir, "", 0, "read", "g", "--group", "g1", "--partition", "0")
		return []string{cdocRun(t, dir, "", 0, "groups", "reset", "g1", "--topic", "g", "--to-offset", "1", "--dry-run", "--json").stdout}
	}},
	{name: "describe timeline", tables: map[string]string{"": "`describe --timeline --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocDamagedTopic(t, dir, "tl", 4, 1, 2)
		cdocRun(t, dir, "", 0, "create", "empty")
		return []string{cdocRun(t, dir, "", 1, "describe", "--timeline", "tl", "empty", "--json", "--width", "5").stdout}
	}},
	{name: "topics", tables: map[string]string{"": "`topics --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocDamagedTopic(t, dir, "tp", 4, 2, 1)
		cdocRun(t, dir, "", 0, "create", "empty")
		return []string{cdocRun(t, dir, "", 1, "topics", "--json").stdout}
	}},
	{name: "dump-index", lines: true, tables: map[string]string{
		"entry":   "`dump-index --json`, `entry` lines",
		"summary": "`dump-index --json`, `summary` lines",
		"total":   "`dump-index --json`, `total` line",
	}, outputs: func(t *testing.T) []string {
		dir, pdir := cdocIndexTopic(t)
		return []string{
			cdocRun(t, dir, "", 0, "dump-index", pdir, "--json").stdout,
			cdocRun(t, dir, "", 3, "dump-index", pdir, "--json", "--verify").stdout,
			cdocRun(t, dir, "", 0, "dump-index", filepath.Join(pdir, format.SegmentName(0, format.IndexExt)), "--json").stdout,
		}
	}},
	{name: "dump-index simple", lines: true, tables: map[string]string{
		"entry":   "`dump-index --json` on the simple layout, `entry` lines",
		"summary": "`dump-index --json` on the simple layout, `summary` lines",
	}, outputs: func(t *testing.T) []string {
		dir := cdocDamagedSimpleLog(t)
		return []string{
			cdocRun(t, t.TempDir(), "", 0, "dump-index", dir, "--json").stdout,
			cdocRun(t, t.TempDir(), "", 3, "dump-index", dir, "--json", "--verify").stdout,
		}
	}},
	{name: "verify-crc", lines: true, tables: map[string]string{
		"finding": "`verify-crc --json`, `finding` lines",
		"layout":  "`verify-crc --json`, `layout` lines",
		"summary": "`verify-crc --json`, `summary` line",
	}, outputs: func(t *testing.T) []string {
		dir, _ := cdocIndexTopic(t)
		r := cdocRun(t, dir, "", 1, "verify-crc", "x", cdocDamagedSimpleLog(t), "nosuch", "--json")
		cdocSeverities(t, r.stdout)
		return []string{r.stdout}
	}},
	{name: "recover", tables: map[string]string{"": "`recover --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "a\nb\nc\n", 0, "append", "torn", "--create")
		rcTear(t, dir, "torn", 0, 3)
		cdocWrite(t, filepath.Join(dir, "torn", "0", format.SegmentName(99, format.IndexExt)), nil)
		cdocRun(t, dir, "a\nb\nc\nd\ne\n", 0, "append", "corrupt", "--create")
		vcFlip(t, logPath(dir, "corrupt", 0), 40)
		cdocSegment(t, filepath.Join(dir, "mis", "0"), 0, cdocRecs(0, 3))
		cdocSegment(t, filepath.Join(dir, "mis", "0"), 5, cdocRecs(3, 5))
		cdocRun(t, dir, "a\n", 0, "append", "busy", "--create")
		if err := os.Mkdir(filepath.Join(dir, ".copy-gone-1.tmp"), 0o755); err != nil {
			t.Fatal(err)
		}
		w, err := logstore.Open(dir).OpenWriter("busy", 0, logstore.WriterOptions{Sync: logstore.SyncNever})
		if err != nil {
			t.Fatal(err)
		}
		every := cdocRun(t, dir, "", 3, "recover", "--json")
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return []string{every.stdout, cdocRun(t, dir, "", 1, "recover", "corrupt", "nosuch", "--salvage", "--json").stdout}
	}},
	{name: "retention-sweep", tables: map[string]string{"": "`retention-sweep --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "", 0, "create", "kept", "--retention", "1h", "--retention-bytes", "1k")
		cdocRun(t, dir, "a\n", 0, "append", "kept")
		cdocRun(t, dir, "a\n", 0, "append", "plain", "--create")
		every := cdocRun(t, dir, "", 0, "retention-sweep", "--dry-run", "--json")
		cdocRun(t, dir, "a\nb\n", 0, "append", "old", "--create")
		later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		named := cdocRun(t, dir, "", 1, "retention-sweep", "old", "nosuch", "--retention", "1s", "--now", later, "--json")
		return []string{every.stdout, named.stdout}
	}},
	{name: "quarantine", tables: map[string]string{"": "`quarantine --json`"}, outputs: func(t *testing.T) []string {
		dir := cdocQuarantined(t)
		return []string{cdocRun(t, dir, "", 0, "quarantine", "--json").stdout, cdocRun(t, dir, "", 0, "quarantine", "list", "q", "--json").stdout}
	}},
	{name: "quarantine purge", tables: map[string]string{"": "`quarantine purge --json`"}, outputs: func(t *testing.T) []string {
		dir := cdocQuarantined(t)
		return []string{cdocRun(t, dir, "", 0, "quarantine", "purge", "--dry-run", "--json").stdout, cdocRun(t, dir, "", 0, "quarantine", "purge", "--json").stdout}
	}},
	{name: "copy", tables: map[string]string{"": "`copy-partition --json` and `import-partition --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "a\nb\n", 0, "append", "c", "--create")
		to := t.TempDir()
		copied := cdocRun(t, dir, "", 0, "copy-partition", "c", "0", "--to", to, "--json")
		stream := cdocRun(t, dir, "", 0, "copy-partition", "c", "0", "--to", "-", "--json")
		imported := cdocRun(t, t.TempDir(), stream.stdout, 0, "import-partition", "c", "0", "--json")
		cdocRun(t, dir, "d\n", 0, "append", "d", "--create")
		other := cdocRun(t, dir, "", 0, "copy-partition", "d", "0", "--to", to, "--to-topic", "c", "--force", "--json")
		return []string{copied.stdout, stream.stderr, imported.stdout, other.stdout}
	}},
	{name: "reassign", tables: map[string]string{"": "`reassign --json`"}, outputs: func(t *testing.T) []string {
		from, to := t.TempDir(), t.TempDir()
		cdocRun(t, from, "", 0, "create", "r", "--partitions", "2")
		cdocRun(t, from, "a\nb\n", 0, "append", "r", "--partition", "0")
		plan := cdocPlan(t, from, to)
		dry := cdocRun(t, from, "", 0, "reassign", "--plan", plan, "--dry-run", "--json")
		executed := cdocRun(t, from, "", 0, "reassign", "--plan", plan, "--execute", "--json")
		cdocRun(t, from, "c\n", 0, "append", "r", "--partition", "0")
		cdocRun(t, to, "x\n", 0, "append", "r", "--partition", "1")
		behind := cdocRun(t, from, "", 3, "reassign", "--plan", plan, "--verify", "--json")
		cdocRemove(t, filepath.Join(to, "r", "0"))
		cdocRun(t, from, "d\ne\nf\n", 0, "append", "s", "--create")
		cdocRun(t, from, "", 0, "copy-partition", "s", "0", "--to", to, "--to-topic", "r")
		differs := cdocRun(t, from, "", 3, "reassign", "--plan", plan, "--verify", "--json")
		cdocRemove(t, filepath.Join(to, "r", "0"))
		missing := cdocRun(t, from, "", 3, "reassign", "--plan", plan, "--verify", "--json")
		cdocRemove(t, filepath.Join(to, "r", "1"))
		cdocRun(t, from, "", 0, "reassign", "--plan", plan, "--execute", "--remove-source")
		done := cdocRun(t, from, "", 0, "reassign", "--plan", plan, "--verify", "--json")
		return []string{dry.stdout, executed.stdout, behind.stdout, differs.stdout, missing.stdout, done.stdout}
	}},
	{name: "import", tables: map[string]string{"": "`import --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		good := cdocRun(t, dir, "", 0, "import", cdocSimpleLog(t), "imp", "--create", "--json")
		broken := filepath.Join(t.TempDir(), "broken-log")
		pos, _ := cdocStore(t, broken, 0, "a", "b", "c")
		cdocSimpleIndex(t, broken, 0, format.SimpleIndexEntry{RelOffset: 0, Pos: pos[0]},
			format.SimpleIndexEntry{RelOffset: 1, Pos: pos[1]}, format.SimpleIndexEntry{RelOffset: 2, Pos: pos[2]})
		store := filepath.Join(broken, "0"+format.SimpleStoreExt)
		b, err := os.ReadFile(store)
		if err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint64(b[pos[1]:], 1<<40)
		cdocWrite(t, store, b)
		stopped := cdocRun(t, dir, "", 1, "import", broken, "imp", "--json")
		empty := filepath.Join(t.TempDir(), "empty-log")
		cdocStore(t, empty, 0)
		none := cdocRun(t, dir, "", 0, "import", empty, "imp", "--json")
		return []string{good.stdout, stopped.stdout, none.stdout}
	}},
	{name: "delete", tables: map[string]string{"": "`delete --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "", 0, "create", "a", "--partitions", "2")
		cdocRun(t, dir, "x\n", 0, "append", "a")
		cdocRun(t, dir, "", 0, "create", "b")
		return []string{cdocRun(t, dir, "", 0, "delete", "a", "b", "--yes", "--json").stdout}
	}},
	{name: "alter", tables: map[string]string{"": "`alter --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "", 0, "create", "a", "--retention", "7d")
		return []string{
			cdocRun(t, dir, "", 0, "alter", "a", "--unset", "retention", "--segment-bytes", "1MiB", "--dry-run", "--json").stdout,
			cdocRun(t, dir, "", 0, "alter", "a", "--retention", "7d", "--json").stdout,
		}
	}},
	{name: "add-partitions", tables: map[string]string{"": "`add-partitions --json`"}, outputs: func(t *testing.T) []string {
		dir := t.TempDir()
		cdocRun(t, dir, "", 0, "create", "a")
		return []string{cdocRun(t, dir, "", 0, "add-partitions", "a", "--partitions", "3", "--json").stdout}
	}},
	{name: "kafka", tables: map[string]string{"": "`kafka export --json` and `kafka import --json`"}, outputs: func(t *testing.T) []string {
		addr := cdocKafka(t)
		dir := t.TempDir()
		cdocRun(t, dir, "", 0, "create", "k", "--partitions", "2")
		cdocRun(t, dir, "a\nb\n", 0, "append", "k", "--partition", "0")
		exported := cdocRun(t, dir, "", 0, "kafka", "export", "--brokers", addr, "--create-topic", "--json", "k")
		imported := cdocRun(t, t.TempDir(), "", 0, "kafka", "import", "--brokers", addr, "--json", "k")
		return []string{exported.stdout, imported.stdout}
	}},
}

// cdocPlan writes a plan moving partitions 0 and 1 of topic r or t,
// whichever from holds (t when neither), from from to to.
func cdocPlan(t *testing.T, from, to string) string {
	t.Helper()
	topic := "t"
	if _, err := os.Stat(filepath.Join(from, "r")); err == nil {
		topic = "r"
	}
	parts := `{"topic":"` + topic + `","partition":0,"from":"` + from + `","to":"` + to + `"}`
	if topic == "r" {
		parts += `,{"topic":"r","partition":1,"from":"` + from + `","to":"` + to + `","new_topic":"r","new_partition":1}`
	}
	path := filepath.Join(t.TempDir(), "plan.json")
	cdocWrite(t, path, []byte(`{"version":1,"moves":[`+parts+`]}`))
	return path
}

// cdocQuarantined is a data directory whose quarantine holds the torn tail
// recover cut from topic q.
func cdocQuarantined(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cdocRun(t, dir, "a\nb\nc\n", 0, "append", "q", "--create")
	rcTear(t, dir, "q", 0, 3)
	cdocRun(t, dir, "", 0, "-q", "recover")
	return dir
}

// cdocKafka starts a one-broker Kafka-protocol cluster on loopback and
// returns its address.
func cdocKafka(t *testing.T) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

// cdocSeverities checks the severity of each finding verify-crc printed
// against the severities the doc gives its kind.
func cdocSeverities(t *testing.T, out string) {
	t.Helper()
	var kinds *cdocTable
	tables := cdocTables(t)
	for i, tb := range tables {
		if tb.heading == "Finding kinds" {
			kinds = &tables[i]
		}
	}
	if kinds == nil || !slices.Equal(kinds.header[:2], []string{"value", "severity"}) {
		t.Fatalf("%s: no table of finding kinds with a severity column under ### Finding kinds", cdocFile)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var f struct{ Type, Severity, Kind string }
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatal(err)
		}
		if f.Type != "finding" {
			continue
		}
		i := slices.IndexFunc(kinds.rows, func(row []string) bool { return slices.Contains(cdocCodes(row[0]), f.Kind) })
		if i < 0 {
			t.Errorf("verify-crc found a %s, which ### Finding kinds does not list: %s", f.Kind, line)
			continue
		}
		if !strings.Contains(kinds.rows[i][1], f.Severity) {
			t.Errorf("verify-crc found a %s of severity %s; ### Finding kinds says %q: %s", f.Kind, f.Severity, kinds.rows[i][1], line)
		}
		if by := kinds.rows[i][len(kinds.rows[i])-1]; !strings.Contains(by, "`verify-crc`") {
			t.Errorf("verify-crc found a %s; ### Finding kinds says it is reported by %s: %s", f.Kind, by, line)
		}
	}
}

// cdocKindReporters is the "reported by" cell of kind's row of ### Finding
// kinds.
func cdocKindReporters(t *testing.T, kind string) string {
	t.Helper()
	tbs := cdocTablesUnder(cdocTables(t), "Finding kinds")
	if len(tbs) != 1 || tbs[0].header[len(tbs[0].header)-1] != "reported by" {
		t.Fatalf("%s: want one table under ### Finding kinds, its last column \"reported by\"", cdocFile)
	}
	for _, row := range tbs[0].rows {
		if slices.Contains(cdocCodes(row[0]), kind) {
			return row[len(row)-1]
		}
	}
	return ""
}

// cdocConsts returns the values of the string constants of type typ
// declared in logstore (its non-test files).
func cdocConsts(t *testing.T, typ string) []string {
	t.Helper()
	files, err := filepath.Glob("../logstore/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: a %s constant that is not a string literal", fset.Position(v.Pos()), typ)
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					values = append(values, s)
				}
			}
		}
	}
	if len(values) == 0 {
		t.Fatalf("no constants of type %s in logstore", typ)
	}
	return values
}

// The enumerated values docs/cli.md lists are exactly those the code has.
func TestCLIDocEnumerations(t *testing.T) {
	enums := cdocEnums(t, cdocTables(t))
	var severities []string
	for s := logstore.SeverityProblem; !strings.HasPrefix(s.String(), "severity("); s++ {
		severities = append(severities, s.String())
	}
	kinds := cdocConsts(t, "FindingKind")
	// dump-index's verdicts and the simple layout's classes are finding
	// kinds, each in the table and said to be reported by dump-index.
	var entryKinds []logstore.FindingKind
	for _, v := range logstore.IndexVerdicts() {
		entryKinds = append(entryKinds, logstore.VerdictKind(v))
	}
	for c := logstore.SimpleEntryReal; !strings.HasPrefix(c.String(), "class("); c++ {
		entryKinds = append(entryKinds, c.Kind())
	}
	for _, k := range entryKinds {
		if !slices.Contains(kinds, string(k)) {
			t.Errorf("dump-index gives an entry the verdict %q, which is no finding kind", k)
		} else if by := cdocKindReporters(t, string(k)); !strings.Contains(by, "`dump-index`") {
			t.Errorf("%s, #finding-kinds: dump-index reports %q, but its row says it is reported by %s", cdocFile, k, by)
		}
	}
	var sources []string
	for _, s := range cdocConsts(t, "RuleSource") {
		if j := ruleSourceJSON(logstore.RuleSource(s)); j != nil {
			sources = append(sources, *j)
		}
	}
	for slug, want := range map[string][]string{
		"severities":      severities,
		"finding-kinds":   kinds,
		"index-kinds":     {logstore.OffsetIndex.String(), logstore.TimeIndex.String()},
		"index-actions":   cdocConsts(t, "IndexAction"),
		"sweep-decisions": cdocConsts(t, "SweepDecision"),
		"sweep-reasons":   cdocConsts(t, "SweepReason"),
		"rule-sources":    sources,
	} {
		got := enums[slug]
		for _, v := range want {
			if !slices.Contains(got, v) {
				t.Errorf("%s, #%s: does not list %q", cdocFile, slug, v)
			}
		}
		for _, v := range got {
			if !slices.Contains(want, v) {
				t.Errorf("%s, #%s: lists %q, which the code does not have", cdocFile, slug, v)
			}
		}
	}
}

// The environment variables docs/cli.md lists are those seglog reads.
func TestCLIDocEnvironment(t *testing.T) {
	var want []string
	for _, e := range environment(docsApp()) {
		want = append(want, strings.Split(e.name, ", ")...)
	}
	var got []string
	for _, tb := range cdocTables(t) {
		if tb.section == "Environment" {
			for _, row := range tb.rows {
				got = append(got, cdocCodes(row[0])...)
			}
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%s lists the environment variables %q; seglog reads %q", cdocFile, got, want)
	}
}

// The flag values docs/cli.md lists are the tables the commands parse,
// and the completions offer, them from: a row for every flag (and
// argument) taking a closed set of values, naming its commands, and no
// other row.
func TestCLIDocFlagValues(t *testing.T) {
	tbs := cdocTablesUnder(cdocTables(t), "Flag values")
	if len(tbs) != 1 {
		t.Fatalf("%s: %d tables under ### Flag values, want 1", cdocFile, len(tbs))
	}
	type closedSet struct {
		name, command string
		values        []string
	}
	want := []closedSet{
		{"completion", "completion", completionShells.names()},
		{"quarantine", "quarantine", quarantineActions.names()},
	}
	for _, cmd := range manCommands(docsApp()) {
		for _, f := range docFlags(cmd.Flags) {
			if f.values != nil {
				want = append(want, closedSet{"--" + f.long, cmd.Name, f.values})
			}
		}
	}
	rows := tbs[0].rows
	covered := make([]bool, len(rows))
	for _, w := range want {
		found := false
		for i, row := range rows {
			codes := cdocCodes(row[0])
			if len(codes) == 0 || codes[0] != w.name || !slices.Equal(cdocCodes(row[1]), w.values) {
				continue
			}
			// "kafka" names both of its commands; "append --input json" is append.
			if slices.ContainsFunc(codes, func(c string) bool {
				return c == w.command || strings.HasPrefix(c, w.command+" ") || strings.HasPrefix(w.command, c+" ")
			}) {
				found, covered[i] = true, true
			}
		}
		if !found {
			t.Errorf("%s, ### Flag values: no row for %s of %s taking %q", cdocFile, w.name, w.command, w.values)
		}
	}
	for i, row := range rows {
		if !covered[i] {
			t.Errorf("%s, ### Flag values: %s takes %s, says the doc; no command's table has those values", cdocFile, row[0], row[1])
		}
	}
}

// README's sections on flags and exit codes point at the contract.
func TestCLIDocReadmePointers(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	name := ""
	for _, line := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			name = h
		}
		sections[name] += line + "\n"
	}
	for _, s := range []string{"Flags, sizes and times", "Exit codes"} {
		if !strings.Contains(sections[s], "(docs/cli.md") {
			t.Errorf("README.md's section %q does not link docs/cli.md", s)
		}
	}
}

// cdocEPIPE is a stdout whose reader went away.
type cdocEPIPE struct{}

func (cdocEPIPE) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// cdocExit is an example of a command exiting with a status, run in a
// data directory that holds topic t (records a, b, c).
type cdocExit struct {
	command string
	code    int
	run     func(t *testing.T, dir string) result
}

// cdocArgs runs args in dir with no input.
func cdocArgs(args ...string) func(t *testing.T, dir string) result {
	return func(t *testing.T, dir string) result { return runIn(t, dir, nil, args...) }
}

var cdocExits = []cdocExit{
	{"create", 0, cdocArgs("create", "new")},
	{"create", 1, cdocArgs("create", "t")},
	{"create", 2, cdocArgs("create")},
	{"delete", 0, cdocArgs("delete", "t", "--yes")},
	{"delete", 1, cdocArgs("delete", "t", "nosuch", "--yes")},
	{"delete", 2, cdocArgs("delete", "t")},
	{"alter", 0, cdocArgs("alter", "t", "--retention", "30d")},
	{"alter", 1, cdocArgs("alter", "nosuch", "--retention", "30d")},
	{"alter", 2, cdocArgs("alter", "t")},
	{"add-partitions", 0, cdocArgs("add-partitions", "t", "--partitions", "3")},
	{"add-partitions", 1, func(t *testing.T, dir string) result {
		cdocRun(t, dir, "", 0, "add-partitions", "t", "--partitions", "3")
		return runIn(t, dir, nil, "add-partitions", "t", "--partitions", "2")
	}},
	{"add-partitions", 2, cdocArgs("add-partitions", "t")},
	{"append", 0, func(t *testing.T, dir string) result { return runIn(t, dir, strings.NewReader("d\n"), "append", "t") }},
	{"append", 1, cdocArgs("append", "nosuch")},
	{"append", 2, cdocArgs("append", "t", "--bogus")},
	{"read", 0, func(t *testing.T, dir string) result {
		runMu.Lock()
		defer runMu.Unlock()
		var errb bytes.Buffer
		return result{code: Run([]string{"seglog", "-d", dir, "read", "t"}, strings.NewReader(""), cdocEPIPE{}, &errb), stderr: errb.String()}
	}},
	{"read", 1, cdocArgs("read", "nosuch")},
	{"read", 2, cdocArgs("read", "t", "--offset", "010")},
	{"tail", 0, cdocArgs("tail", "t", "-n", "1")},
	{"tail", 1, cdocArgs("tail", "-f", "nosuch")},
	{"tail", 2, cdocArgs("tail", "t", "--timeout", "1s")},
	{"describe", 0, cdocArgs("describe", "t")},
	{"describe", 1, cdocArgs("describe", "nosuch")},
	{"describe", 2, cdocArgs("describe", "t", "--width", "5")},
	{"topics", 0, cdocArgs("topics")},
	{"topics", 1, func(t *testing.T, dir string) result {
		cdocRun(t, dir, "", 0, "create", "gappy", "--partitions", "3")
		cdocRemove(t, filepath.Join(dir, "gappy", "1"))
		return runIn(t, dir, nil, "topics")
	}},
	{"topics", 2, cdocArgs("topics", "t")},
	{"metrics", 0, cdocArgs("metrics")},
	{"metrics", 1, cdocArgs("metrics", "nosuch")},
	{"metrics", 2, cdocArgs("describe", "--prometheus", "--json")},
	{"dump-index", 0, cdocArgs("dump-index", "t", "--verify")},
	{"dump-index", 1, cdocArgs("dump-index", "nosuch")},
	{"dump-index", 2, cdocArgs("dump-index")},
	{"dump-index", 3, func(t *testing.T, dir string) result {
		cdocSetEntry(t, filepath.Join(dir, "t", "0", format.SegmentName(0, format.IndexExt)), 1, 1, 0)
		return runIn(t, dir, nil, "dump-index", "t", "--verify")
	}},
	{"verify-crc", 0, cdocArgs("verify-crc")},
	{"verify-crc", 1, cdocArgs("verify-crc", "nosuch")},
	{"verify-crc", 2, cdocArgs("verify-crc", "--jobs", "0")},
	{"verify-crc", 3, func(t *testing.T, dir string) result {
		rcTear(t, dir, "t", 0, 3)
		return runIn(t, dir, nil, "verify-crc", "t")
	}},
	{"recover", 0, cdocArgs("recover")},
	{"recover", 1, cdocArgs("recover", "nosuch")},
	{"recover", 2, cdocArgs("recover", ".hidden")},
	{"recover", 3, func(t *testing.T, dir string) result {
		vcFlip(t, logPath(dir, "t", 0), format.HeaderLen)
		return runIn(t, dir, nil, "recover", "t")
	}},
	{"retention-sweep", 0, cdocArgs("retention-sweep", "t", "--retention", "7d")},
	{"retention-sweep", 1, cdocArgs("retention-sweep", "t")},
	{"retention-sweep", 2, cdocArgs("retention-sweep", "--retention", "0")},
	{"groups", 0, cdocArgs("groups")},
	{"groups", 1, cdocArgs("-d", "nosuch", "groups")},
	{"groups", 2, cdocArgs("groups", "--nosuch")},
	{"groups describe", 0, func(t *testing.T, dir string) result {
		mustRun(t, dir, "", "read", "t", "--group", "g")
		return runIn(t, dir, nil, "groups", "describe", "g")
	}},
	{"groups describe", 1, cdocArgs("groups", "describe", "nosuch")},
	{"groups describe", 2, cdocArgs("groups", "describe")},
	{"groups delete", 0, func(t *testing.T, dir string) result {
		mustRun(t, dir, "", "read", "t", "--group", "g")
		return runIn(t, dir, nil, "groups", "delete", "g")
	}},
	{"groups delete", 1, cdocArgs("groups", "delete", "nosuch")},
	{"groups delete", 2, cdocArgs("groups", "delete", "bad/name")},
	{"groups reset", 0, cdocArgs("groups", "reset", "g", "--topic", "t", "--to-earliest")},
	{"groups reset", 1, cdocArgs("groups", "reset", "nosuch", "--to-earliest")},
	{"groups reset", 2, cdocArgs("groups", "reset", "g", "--to-earliest", "--to-latest")},
	{"quarantine", 0, cdocArgs("quarantine")},
	{"quarantine", 1, cdocArgs("quarantine", "list", "nosuch")},
	{"quarantine", 2, cdocArgs("quarantine", "--older-than", "1d")},
	{"copy-partition", 0, func(t *testing.T, dir string) result {
		return runIn(t, dir, nil, "copy-partition", "t", "0", "--to", t.TempDir())
	}},
	{"copy-partition", 1, func(t *testing.T, dir string) result {
		to := t.TempDir()
		cdocRun(t, dir, "", 0, "copy-partition", "t", "0", "--to", to)
		return runIn(t, dir, nil, "copy-partition", "t", "0", "--to", to)
	}},
	{"copy-partition", 2, cdocArgs("copy-partition", "t", "0")},
	{"reassign", 0, func(t *testing.T, dir string) result {
		return runIn(t, dir, nil, "reassign", "--plan", cdocPlan(t, dir, t.TempDir()), "--execute")
	}},
	{"reassign", 1, func(t *testing.T, dir string) result {
		return runIn(t, dir, nil, "reassign", "--plan", cdocPlan(t, t.TempDir(), t.TempDir()), "--execute")
	}},
	{"reassign", 2, cdocArgs("reassign", "--plan", "plan.json")},
	{"reassign", 3, func(t *testing.T, dir string) result {
		return runIn(t, dir, nil, "reassign", "--plan", cdocPlan(t, dir, t.TempDir()), "--verify")
	}},
	{"import-partition", 0, func(t *testing.T, dir string) result {
		stream := cdocRun(t, dir, "", 0, "copy-partition", "t", "0", "--to", "-")
		return runIn(t, t.TempDir(), strings.NewReader(stream.stdout), "import-partition", "t", "0")
	}},
	{"import-partition", 1, func(t *testing.T, dir string) result {
		return runIn(t, dir, strings.NewReader("not a stream"), "import-partition", "u", "0")
	}},
	{"import-partition", 2, cdocArgs("import-partition", "u")},
	{"import", 0, func(t *testing.T, dir string) result {
		return runIn(t, dir, nil, "import", cdocSimpleLog(t), "imported", "--create")
	}},
	{"import", 1, func(t *testing.T, dir string) result {
		return runIn(t, dir, nil, "import", filepath.Join(t.TempDir(), "nothing-here"), "imported", "--create")
	}},
	{"import", 2, cdocArgs("import", "t")},
	{"kafka export", 0, func(t *testing.T, dir string) result {
		return runIn(t, dir, nil, "kafka", "export", "--brokers", cdocKafka(t), "--create-topic", "t")
	}},
	{"kafka export", 1, func(t *testing.T, dir string) result {
		return runIn(t, dir, nil, "kafka", "export", "--brokers", cdocKafka(t), "--kafka-topic", "nope", "t")
	}},
	{"kafka export", 2, cdocArgs("kafka", "export", "--brokers", "no-port", "t")},
	{"kafka import", 0, func(t *testing.T, dir string) result {
		addr := cdocKafka(t)
		cdocRun(t, dir, "", 0, "kafka", "export", "--brokers", addr, "--create-topic", "t")
		return runIn(t, t.TempDir(), nil, "kafka", "import", "--brokers", addr, "t")
	}},
	{"kafka import", 1, func(t *testing.T, dir string) result {
		return runIn(t, dir, nil, "kafka", "import", "--brokers", cdocKafka(t), "--kafka-topic", "nope", "t")
	}},
	{"kafka import", 2, cdocArgs("kafka", "import", "--brokers", "no-port", "t")},
	{"completion", 0, cdocArgs("completion", "bash")},
	{"completion", 2, cdocArgs("completion", "tcsh")},
	{"version", 0, cdocArgs("version")},
	{"version", 2, cdocArgs("version", "extra")},
}

// The exit statuses docs/cli.md gives are exit.go's, each command's rows
// are the statuses its help gives, and an example of each row exits so.
func TestCLIDocExitStatus(t *testing.T) {
	tables := cdocTables(t)
	var general, byCommand []cdocTable
	for _, tb := range tables {
		switch {
		case tb.heading == "Exit status" && tb.header[0] == "status":
			general = append(general, tb)
		case tb.heading == "By command" && tb.section == "Exit status":
			byCommand = append(byCommand, tb)
		}
	}
	if len(general) != 1 || len(byCommand) != 1 {
		t.Fatalf("%s: want one table under ## Exit status and one under ### By command, got %d and %d", cdocFile, len(general), len(byCommand))
	}
	var codes []int
	for _, row := range general[0].rows {
		n, err := strconv.Atoi(row[0])
		if err != nil {
			t.Errorf("%s, ## Exit status: %q is no status", cdocFile, row[0])
		}
		codes = append(codes, n)
	}
	if want := []int{exitOK, exitError, exitUsage, exitProblems}; !slices.Equal(codes, want) {
		t.Errorf("%s, ## Exit status: the statuses are %v; exit.go's are %v", cdocFile, codes, want)
	}

	key := func(cmd string, code int) string { return fmt.Sprintf("%s %d", cmd, code) }
	doc := map[string]bool{}
	for _, row := range byCommand[0].rows {
		cmds := cdocCodes(row[0])
		code, err := strconv.Atoi(row[1])
		if len(cmds) != 1 || err != nil || !slices.Contains(codes, code) {
			t.Errorf("%s, ### By command: row %q is not `command` and a status", cdocFile, row)
			continue
		}
		if doc[key(cmds[0], code)] {
			t.Errorf("%s, ### By command: %s exit %d twice", cdocFile, cmds[0], code)
		}
		doc[key(cmds[0], code)] = true
	}
	code := map[string]bool{}
	for cmd := range commandExits {
		for _, e := range exitsOf(cmd) {
			code[key(cmd, e.code)] = true
		}
	}
	for _, cmd := range docsApp().VisibleCommands() {
		names := []string{cmd.Name}
		if len(cmd.Subcommands) > 0 {
			names = nil
			for _, sub := range cmd.VisibleCommands() {
				names = append(names, cmd.Name+" "+sub.Name)
			}
		}
		for _, n := range names {
			if _, ok := commandExits[n]; !ok {
				t.Errorf("command %s has no exit statuses in commandExits", n)
			}
		}
	}
	examples := map[string]cdocExit{}
	for _, ex := range cdocExits {
		examples[key(ex.command, ex.code)] = ex
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range code {
			if !yield(k) {
				return
			}
		}
	}) {
		if !doc[k] {
			t.Errorf("%s, ### By command: no row for %s (the command's help gives it)", cdocFile, k)
		}
		if _, ok := examples[k]; !ok {
			t.Errorf("no example of %s in cdocExits", k)
		}
	}
	for k := range doc {
		if !code[k] {
			t.Errorf("%s, ### By command: a row for %s, which the command's help does not give", cdocFile, k)
		}
	}
	for _, ex := range cdocExits {
		t.Run(strings.ReplaceAll(key(ex.command, ex.code), " ", "_"), func(t *testing.T) {
			if !doc[key(ex.command, ex.code)] {
				t.Fatalf("%s, ### By command: no row for this example", cdocFile)
			}
			dir := t.TempDir()
			cdocRun(t, dir, "a\nb\nc\n", 0, "append", "t", "--create")
			r := ex.run(t, dir)
			if r.code != ex.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, ex.code, r.stderr)
			}
			if ex.code != exitOK && ex.code != exitProblems {
				wantLastErrorLine(t, r.stderr)
			}
			for _, line := range strings.Split(r.stderr, "\n") {
				if ex.code == exitOK && strings.HasPrefix(line, "seglog: ") && !strings.HasPrefix(line, "seglog: warning: ") && !strings.HasPrefix(line, "seglog: note: ") {
					t.Errorf("exit 0, with an error on stderr: %s", line)
				}
			}
		})
	}
}
