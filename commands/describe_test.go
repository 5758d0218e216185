package commands

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seglog/seglog/logstore"
)

// dtPartition is a partition of describe --json, with nullable fields as
// pointers so that null and missing keys can be told from zero.
type dtPartition struct {
	Partition  int     `json:"partition"`
	Start      uint64  `json:"start_offset"`
	Next       uint64  `json:"next_offset"`
	Records    uint64  `json:"records"`
	Exact      bool    `json:"records_exact"` // not in dtCheck: dtWant cannot tell
	Segments   int     `json:"segments"`
	Bytes      int64   `json:"bytes"`
	Oldest     *string `json:"oldest_timestamp"`
	OldestNS   *int64  `json:"oldest_timestamp_ns"`
	Newest     *string `json:"newest_timestamp"`
	NewestNS   *int64  `json:"newest_timestamp_ns"`
	WriterPid  *int    `json:"writer_pid"`
	Missing    bool    `json:"missing"`
	HasMissing bool    `json:"-"` // the key is there at all
}

type dtDoc struct {
	Topics []struct {
		Topic      string        `json:"topic"`
		Partitions []dtPartition `json:"partitions"`
	} `json:"topics"`
}

// dtParse parses describe --json output, checking every partition object
// has exactly the keys the format promises.
func dtParse(t *testing.T, out string) dtDoc {
	t.Helper()
	var doc dtDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("describe --json output is not one JSON document: %v\n%s", err, out)
	}
	var raw struct {
		Topics []struct {
			Partitions []map[string]json.RawMessage `json:"partitions"`
		} `json:"topics"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	always := []string{"partition", "start_offset", "next_offset", "records", "records_exact", "segments", "bytes",
		"oldest_timestamp", "oldest_timestamp_ns", "newest_timestamp", "newest_timestamp_ns", "writer_pid"}
	for i, tp := range raw.Topics {
		for j, p := range tp.Partitions {
			for _, k := range always {
				if _, ok := p[k]; !ok {
					t.Errorf("topic %d partition %d: no %q key in %s", i, j, k, out)
				}
			}
			_, hasMissing := p["missing"]
			doc.Topics[i].Partitions[j].HasMissing = hasMissing
		}
	}
	return doc
}

// dtFixture builds topic "orders" with 3 partitions: 5 records in
// partition 0 over 4 segments (appended twice, so the timestamps differ),
// none in 1, 2 keyed records in 2.
func dtFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "orders", "--partitions", "3")
	mustRun(t, dir, "a1\nb22\nc333\n", "append", "orders", "--partition", "0", "--segment-bytes", "64")
	mustRun(t, dir, "d4444\ne55555\n", "append", "orders", "--partition", "0", "--segment-bytes", "64")
	mustRun(t, dir, "k:x\nk:yy\n", "append", "orders", "--partition", "2", "--key-delimiter", ":")
	return dir
}

// dtWant is what describe must say of a partition, worked out from the
// files (segments, bytes) and from read (offsets, timestamps).
func dtWant(t *testing.T, dir, topic string, p int) dtPartition {
	t.Helper()
	pdir := filepath.Join(dir, topic, fmt.Sprint(p))
	logs, err := filepath.Glob(filepath.Join(pdir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := dtPartition{Partition: p, Segments: len(logs)}
	for _, l := range logs {
		fi, err := os.Stat(l)
		if err != nil {
			t.Fatal(err)
		}
		want.Bytes += fi.Size()
	}
	r := mustRun(t, dir, "", "read", topic, "--partition", fmt.Sprint(p), "--format", "json")
	lines := parseJSONLines(t, r.stdout)
	if len(lines) > 0 {
		first, last := lines[0], lines[len(lines)-1]
		want.Start, want.Next, want.Records = first.Offset, last.Offset+1, uint64(len(lines))
		want.Oldest, want.OldestNS = &first.Timestamp, &first.TimestampNS
		want.Newest, want.NewestNS = &last.Timestamp, &last.TimestampNS
	}
	return want
}

func dtStr[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func dtCheck(t *testing.T, got, want dtPartition) {
	t.Helper()
	if got.Partition != want.Partition || got.Start != want.Start || got.Next != want.Next || got.Records != want.Records ||
		got.Segments != want.Segments || got.Bytes != want.Bytes || got.Missing != want.Missing ||
		dtStr(got.Oldest) != dtStr(want.Oldest) || dtStr(got.OldestNS) != dtStr(want.OldestNS) ||
		dtStr(got.Newest) != dtStr(want.Newest) || dtStr(got.NewestNS) != dtStr(want.NewestNS) ||
		dtStr(got.WriterPid) != dtStr(want.WriterPid) {
		t.Errorf("partition %d:\n got  %s\n want %s", want.Partition, dtShow(got), dtShow(want))
	}
}

func dtShow(p dtPartition) string {
	return fmt.Sprintf("{start %d next %d records %d segments %d bytes %d oldest %s/%s newest %s/%s writer %s missing %v}",
		p.Start, p.Next, p.Records, p.Segments, p.Bytes, dtStr(p.Oldest), dtStr(p.OldestNS), dtStr(p.Newest), dtStr(p.NewestNS),
		dtStr(p.WriterPid), p.Missing)
}

func TestDescribeJSON(t *testing.T) {
	dir := dtFixture(t)
	before := snapshot(t, dir)
	r := mustRun(t, dir, "", "describe", "orders", "--json")
	sameSnapshot(t, before, snapshot(t, dir))
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}
	doc := dtParse(t, r.stdout)
	if len(doc.Topics) != 1 || doc.Topics[0].Topic != "orders" || len(doc.Topics[0].Partitions) != 3 {
		t.Fatalf("want topic orders with 3 partitions:\n%s", r.stdout)
	}
	for p, got := range doc.Topics[0].Partitions {
		want := dtWant(t, dir, "orders", p)
		dtCheck(t, got, want)
		if got.HasMissing {
			t.Errorf("partition %d: a \"missing\" key though it is there", p)
		}
	}
	// The fixture is what it claims to be.
	if p0 := doc.Topics[0].Partitions[0]; p0.Records != 5 || p0.Segments != 4 || p0.Next != 5 || *p0.OldestNS >= *p0.NewestNS {
		t.Errorf("partition 0: %s, want 5 records in 4 segments, oldest before newest", dtShow(p0))
	}
	if p1 := doc.Topics[0].Partitions[1]; p1.Records != 0 || p1.Oldest != nil || p1.NewestNS != nil {
		t.Errorf("partition 1: %s, want empty with null timestamps", dtShow(p1))
	}

	// No TOPIC: every topic, by name.
	mustRun(t, dir, "", "create", "a-first")
	doc = dtParse(t, mustRun(t, dir, "", "describe", "--json").stdout)
	if len(doc.Topics) != 2 || doc.Topics[0].Topic != "a-first" || doc.Topics[1].Topic != "orders" {
		t.Errorf("describe with no TOPIC: want a-first and orders, got %+v", doc.Topics)
	}

	// --partition.
	doc = dtParse(t, mustRun(t, dir, "", "describe", "orders", "--json", "--partition", "2").stdout)
	if ps := doc.Topics[0].Partitions; len(ps) != 1 {
		t.Errorf("--partition 2: want one partition, got %d", len(ps))
	} else {
		dtCheck(t, ps[0], dtWant(t, dir, "orders", 2))
	}
}

// dtRows parses describe's or topics' table output: for each data row,
// its cells, by the first cell.
func dtRows(t *testing.T, out string) map[string][]string {
	t.Helper()
	rows := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "|") {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows[cells[0]] = cells
	}
	return rows
}

// dtRecordsCell is the RECORDS cell of n records: marked when --json
// says they were not counted exactly.
func dtRecordsCell(n uint64, exact bool) string {
	if exact {
		return fmt.Sprint(n)
	}
	return fmt.Sprint(n) + "*"
}

// dtFootnote is the line after a table with a RECORDS cell marked.
const dtFootnote = "* records counted from the indexes (of a Kafka partition, its batch headers), not read: any lost to damage are counted too ('seglog verify-crc' reads them all)"

func TestDescribeTable(t *testing.T) {
	dir := dtFixture(t)
	parts := dtParse(t, mustRun(t, dir, "", "describe", "orders", "--json").stdout).Topics[0].Partitions
	r := mustRun(t, dir, "", "describe", "orders", "--wide")
	if !strings.HasPrefix(r.stdout, "topic orders (") {
		t.Errorf("no title line naming the topic:\n%s", r.stdout)
	}
	rows := dtRows(t, r.stdout)
	header := "PARTITION START NEXT RECORDS SEGMENTS SIZE OLDEST NEWEST WRITER"
	if got := strings.Join(rows["PARTITION"], " "); got != header {
		t.Errorf("header %q, want %q", got, header)
	}
	for p := range 3 {
		w := dtWant(t, dir, "orders", p)
		oldest, newest := "-", "-"
		if w.Oldest != nil {
			oldest, newest = *w.Oldest, *w.Newest
		}
		want := []string{fmt.Sprint(p), fmt.Sprint(w.Start), fmt.Sprint(w.Next), dtRecordsCell(w.Records, parts[p].Exact),
			fmt.Sprint(w.Segments), humanSize(w.Bytes), oldest, newest, "-"}
		if got := rows[fmt.Sprint(p)]; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("row of partition %d:\n got  %q\n want %q", p, got, want)
		}
	}
	// Partition 0's 5 records are counted from its indexes, as every
	// record's entry is there; partition 1 holds none.
	if parts[0].Exact || !parts[1].Exact {
		t.Errorf("records_exact %v, %v for partitions 0 and 1; want false, true", parts[0].Exact, parts[1].Exact)
	}
	if !strings.Contains(r.stdout, "\n"+dtFootnote+"\n") {
		t.Errorf("no footnote %q under the table:\n%s", dtFootnote, r.stdout)
	}
	// Numbers are right-aligned: the row of partition 0 ends its SIZE cell
	// at the column's edge.
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "|         0 |") {
			return
		}
	}
	t.Errorf("partition numbers not right-aligned:\n%s", r.stdout)
}

func TestDescribeMissingPartition(t *testing.T) {
	dir := dtFixture(t)
	want0, want2 := dtWant(t, dir, "orders", 0), dtWant(t, dir, "orders", 2)
	gone := filepath.Join(dir, "orders", "1")
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}

	r := runIn(t, dir, nil, "describe", "orders")
	if r.code != exitError {
		t.Errorf("exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "orders", "partition 1", gone)
	rows := dtRows(t, r.stdout)
	if rows["0"] == nil || rows["2"] == nil || rows["0"][2] != fmt.Sprint(want0.Next) || strings.TrimSuffix(rows["2"][3], "*") != fmt.Sprint(want2.Records) {
		t.Errorf("partitions 0 and 2 not described:\n%s", r.stdout)
	}
	if !strings.Contains(strings.Join(rows["1"], " "), "missing") {
		t.Errorf("partition 1 not shown as missing:\n%s", r.stdout)
	}

	r = runIn(t, dir, nil, "describe", "orders", "--json")
	if r.code != exitError {
		t.Errorf("--json: exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "partition 1")
	doc := dtParse(t, r.stdout)
	ps := doc.Topics[0].Partitions
	if len(ps) != 3 {
		t.Fatalf("--json: want 3 partitions, got %d", len(ps))
	}
	dtCheck(t, ps[0], want0)
	dtCheck(t, ps[2], want2)
	if !ps[1].Missing || ps[1].Partition != 1 {
		t.Errorf("--json: partition 1 not missing: %s", dtShow(ps[1]))
	}
	if ps[0].HasMissing || ps[2].HasMissing {
		t.Errorf("--json: \"missing\" key on a partition that is there")
	}

	// --quiet drops warnings, never the error.
	r = runIn(t, dir, nil, "-q", "describe")
	if r.code != exitError {
		t.Errorf("describe (all topics): exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "partition 1")

	// Asked for a partition that is there: no problem.
	r = runIn(t, dir, nil, "describe", "orders", "--partition", "2")
	if r.code != exitOK {
		t.Errorf("describe --partition 2: exit %d, stderr %s", r.code, r.stderr)
	}
	r = runIn(t, dir, nil, "describe", "orders", "--partition", "1")
	if r.code != exitError || !strings.Contains(r.stdout, "missing") {
		t.Errorf("describe --partition 1: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	r = runIn(t, dir, nil, "describe", "orders", "--partition", "3")
	if r.code != exitError {
		t.Errorf("describe --partition 3: exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "partitions 0..2, not 3")
}

func TestDescribePartitionDir(t *testing.T) {
	dir := dtFixture(t)
	pdir := filepath.Join(dir, "orders", "2")
	want := dtWant(t, dir, "orders", 2)
	// Elsewhere: the data directory does not matter.
	r := mustRun(t, t.TempDir(), "", "describe", pdir, "--json")
	doc := dtParse(t, r.stdout)
	if len(doc.Topics) != 1 || doc.Topics[0].Topic != "orders" || len(doc.Topics[0].Partitions) != 1 {
		t.Fatalf("want topic orders with one partition:\n%s", r.stdout)
	}
	dtCheck(t, doc.Topics[0].Partitions[0], want)

	r = mustRun(t, dir, "", "describe", pdir+"/")
	if rows := dtRows(t, r.stdout); rows["2"] == nil {
		t.Errorf("partition directory %s/ not described:\n%s", pdir, r.stdout)
	}
	// A topic directory by path: every partition.
	doc = dtParse(t, mustRun(t, t.TempDir(), "", "describe", filepath.Join(dir, "orders"), "--json").stdout)
	if len(doc.Topics) != 1 || len(doc.Topics[0].Partitions) != 3 {
		t.Errorf("topic directory by path: want 3 partitions, got %+v", doc.Topics)
	}

	r = runIn(t, dir, nil, "describe", pdir, "--partition", "1")
	if r.code != exitUsage {
		t.Errorf("--partition 1 on directory of partition 2: exit %d, want %d", r.code, exitUsage)
	}
	r = runIn(t, dir, nil, "describe", filepath.Join(dir, "nowhere", "0"))
	if r.code != exitError {
		t.Errorf("missing directory: exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, filepath.Join(dir, "nowhere", "0"))
}

func TestDescribeErrors(t *testing.T) {
	dir := dtFixture(t)
	for _, tt := range []struct {
		args  []string
		code  int
		wants []string
	}{
		{[]string{"describe", "nope"}, exitError, []string{"topic nope", "not found", "seglog create nope"}},
		{[]string{"describe", "orders", "nope"}, exitError, []string{"topic nope"}},
		{[]string{"describe", "bad name"}, exitUsage, []string{"invalid topic name"}},
		{[]string{"describe", "..", "orders"}, exitUsage, []string{"invalid topic name"}},
		{[]string{"describe", "orders", "--partition", "-2"}, exitUsage, []string{"--partition"}},
		{[]string{"describe", "orders", "--bogus"}, exitUsage, []string{"--bogus"}},
		{[]string{"topics", "orders"}, exitUsage, []string{"no arguments"}},
		{[]string{"-d", filepath.Join(dir, "absent"), "describe"}, exitError, []string{"absent", "does not exist"}},
		{[]string{"-d", filepath.Join(dir, "absent"), "topics"}, exitError, []string{"absent", "does not exist"}},
	} {
		r := runIn(t, dir, nil, tt.args...)
		if r.code != tt.code {
			t.Errorf("seglog %q: exit %d, want %d; stderr %s", tt.args, r.code, tt.code, r.stderr)
		}
		wantOneErrorLine(t, r.stderr, tt.wants...)
	}
	// A missing topic among others: the others are still described.
	r := runIn(t, dir, nil, "describe", "orders", "nope")
	if !strings.Contains(r.stdout, "topic orders") {
		t.Errorf("describe orders nope: orders not described:\n%s", r.stdout)
	}
}

func TestDescribeWriterPid(t *testing.T) {
	dir := dtFixture(t)
	w, err := logstore.Open(dir).OpenWriter("orders", 1, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	doc := dtParse(t, mustRun(t, dir, "", "describe", "orders", "--json").stdout)
	ps := doc.Topics[0].Partitions
	if ps[0].WriterPid != nil || ps[2].WriterPid != nil {
		t.Errorf("writer_pid on partitions no writer holds: %s %s", dtStr(ps[0].WriterPid), dtStr(ps[2].WriterPid))
	}
	if logstore.WriterPid(filepath.Join(dir, "orders", "1")) == 0 {
		t.Skip("/proc/locks does not show our flock: writer_pid cannot be checked")
	}
	if ps[1].WriterPid == nil || *ps[1].WriterPid != os.Getpid() {
		t.Errorf("writer_pid of partition 1 %s, want %d", dtStr(ps[1].WriterPid), os.Getpid())
	}
	rows := dtRows(t, mustRun(t, dir, "", "describe", "orders", "--wide").stdout)
	if got := rows["1"][8]; got != fmt.Sprint(os.Getpid()) {
		t.Errorf("WRITER cell %q, want %d", got, os.Getpid())
	}
}

func TestTopics(t *testing.T) {
	dir := dtFixture(t)
	mustRun(t, dir, "", "create", "b-empty", "--partitions", "2")
	var ws [3]dtPartition
	for p := range ws {
		ws[p] = dtWant(t, dir, "orders", p)
	}
	records, segments, bytes := uint64(0), 0, int64(0)
	for _, w := range ws {
		records, segments, bytes = records+w.Records, segments+w.Segments, bytes+w.Bytes
	}
	// Oldest and newest over partitions: partition 2 was appended last.
	oldest, newest := ws[0].Oldest, ws[2].Newest

	r := mustRun(t, dir, "", "topics", "--wide")
	rows := dtRows(t, r.stdout)
	if got, want := strings.Join(rows["TOPIC"], " "), "TOPIC PARTITIONS RECORDS SEGMENTS SIZE OLDEST NEWEST"; got != want {
		t.Errorf("header %q, want %q", got, want)
	}
	// orders' records are counted from its indexes (TestDescribeTable).
	wantRow := []string{"orders", "3", fmt.Sprint(records) + "*", fmt.Sprint(segments), humanSize(bytes), *oldest, *newest}
	if got := rows["orders"]; strings.Join(got, "|") != strings.Join(wantRow, "|") {
		t.Errorf("orders row:\n got  %q\n want %q", got, wantRow)
	}
	if got := strings.Join(rows["b-empty"], "|"); got != "b-empty|2|0|2|0 B|-|-" {
		t.Errorf("b-empty row %q", got)
	}
	if !strings.HasSuffix(r.stdout, "\n"+dtFootnote+"\n") {
		t.Errorf("no footnote %q under the table:\n%s", dtFootnote, r.stdout)
	}

	r = mustRun(t, dir, "", "topics", "--json")
	var doc struct {
		Topics []struct {
			Topic      string  `json:"topic"`
			Partitions int     `json:"partitions"`
			Missing    []int   `json:"missing_partitions"`
			Records    uint64  `json:"records"`
			Exact      bool    `json:"records_exact"`
			Segments   int     `json:"segments"`
			Bytes      int64   `json:"bytes"`
			Oldest     *string `json:"oldest_timestamp"`
			OldestNS   *int64  `json:"oldest_timestamp_ns"`
			Newest     *string `json:"newest_timestamp"`
			NewestNS   *int64  `json:"newest_timestamp_ns"`
		} `json:"topics"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("topics --json: %v\n%s", err, r.stdout)
	}
	if len(doc.Topics) != 2 || doc.Topics[0].Topic != "b-empty" || doc.Topics[1].Topic != "orders" {
		t.Fatalf("topics --json: want b-empty and orders:\n%s", r.stdout)
	}
	e, o := doc.Topics[0], doc.Topics[1]
	if e.Partitions != 2 || e.Records != 0 || !e.Exact || e.Oldest != nil || e.NewestNS != nil {
		t.Errorf("b-empty: %+v", e)
	}
	if o.Partitions != 3 || o.Records != records || o.Exact || o.Segments != segments || o.Bytes != bytes || o.Missing != nil ||
		dtStr(o.Oldest) != *oldest || dtStr(o.OldestNS) != dtStr(ws[0].OldestNS) ||
		dtStr(o.Newest) != *newest || dtStr(o.NewestNS) != dtStr(ws[2].NewestNS) {
		t.Errorf("orders: %+v", o)
	}

	// A missing partition: still listed, counted as missing, exit 1.
	if err := os.RemoveAll(filepath.Join(dir, "orders", "1")); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, dir, nil, "topics")
	if r.code != exitError {
		t.Errorf("topics with a missing partition: exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "orders", "partition 1")
	if got := dtRows(t, r.stdout)["orders"]; len(got) < 2 || got[1] != "3 (1 missing)" {
		t.Errorf("orders row %q, want 3 (1 missing) partitions", got)
	}
	r = runIn(t, dir, nil, "topics", "--json")
	if r.code != exitError || !strings.Contains(r.stdout, `"missing_partitions": [`) {
		t.Errorf("topics --json with a missing partition: exit %d\n%s", r.code, r.stdout)
	}
}

// An empty data directory lists nothing, and says so on stderr: it is what
// an unmounted volume looks like.
func TestTopicsEmptyDataDir(t *testing.T) {
	dir := t.TempDir()
	r := mustRun(t, dir, "", "topics")
	if r.stdout != "" || !strings.Contains(r.stderr, "seglog: warning: data directory "+dir+" holds no topics") {
		t.Errorf("empty data directory: stdout %q stderr %q", r.stdout, r.stderr)
	}
	r = mustRun(t, dir, "", "topics", "--json")
	var doc map[string][]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["topics"] == nil || len(doc["topics"]) != 0 {
		t.Errorf("empty data directory --json: %q (%v)", r.stdout, err)
	}
	r = mustRun(t, dir, "", "describe")
	if r.stdout != "" {
		t.Errorf("describe, empty data directory: %q", r.stdout)
	}
	r = mustRun(t, dir, "", "describe", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["topics"] == nil || len(doc["topics"]) != 0 {
		t.Errorf("describe --json, empty data directory: %q (%v)", r.stdout, err)
	}
}

func TestHumanSize(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{1<<20 - 1, "1.0 MiB"},
		{1288490189, "1.2 GiB"},
		{5 << 40, "5.0 TiB"},
	} {
		if got := humanSize(tt.n); got != tt.want {
			t.Errorf("humanSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// describe on damaged golden partitions (exit 0: it only reads, and
// finding damage is verify-crc's): records below a segment's floor, which
// overlap the segment before, are not counted wherever an index entry
// names one; a count that may include records lost to damage says it is
// from the indexes (records_exact false, and a marked cell), and one that
// read the records is exact.
func TestDescribeRecordsOnDamage(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		records uint64 // written by hand from the damage done
		exact   bool
	}{
		// Segment 1's offsets 1..3 are below segment 0's end.
		{"overlap-entire-active", 5, false},
		{"overlap-entire-closed", 7, false},
		// Segments 2 and 5 lie wholly inside segment 0's offsets 0..9.
		{"overlap-nested", 10, false},
		// Offset 2's CRC fails before segment 0's last index entry: only
		// reading it shows, so the count says it is from the indexes.
		{"crc-flip-closed", 8, false},
		{"crc-flip-first-record-closed", 6, false},
		// Offset 3 is missing inside the segment, which its index shows:
		// the segment is read.
		{"hole-active", 4, true},
		// The only segment, without indexes.
		{"spec-example", 3, true},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			dir := goldenData(t, tc.fixture)
			r := runIn(t, dir, nil, "describe", "t", "--json")
			if r.code != exitOK || r.stderr != "" {
				t.Fatalf("describe --json: exit %d, stderr %q", r.code, r.stderr)
			}
			got := dtParse(t, r.stdout).Topics[0].Partitions[0]
			if got.Records != tc.records || got.Exact != tc.exact {
				t.Errorf("records %d, records_exact %v; want %d, %v", got.Records, got.Exact, tc.records, tc.exact)
			}
			valid := uint64(len(offsetsOf(t, mustRun(t, dir, "", "read", "t", "--skip-corrupt", "--template", `%o\n`).stdout)))
			if tc.exact && got.Records != valid || got.Records < valid {
				t.Errorf("records %d (exact %v), read --skip-corrupt reads %d", got.Records, got.Exact, valid)
			}
			r = runIn(t, dir, nil, "describe", "t")
			if r.code != exitOK {
				t.Fatalf("describe: exit %d, stderr %q", r.code, r.stderr)
			}
			if cell := dtRows(t, r.stdout)["0"][3]; cell != dtRecordsCell(tc.records, tc.exact) {
				t.Errorf("RECORDS cell %q, want %q", cell, dtRecordsCell(tc.records, tc.exact))
			}
			if strings.Contains(r.stdout, dtFootnote) == tc.exact {
				t.Errorf("footnote shown: %v, with records_exact %v:\n%s", !tc.exact, tc.exact, r.stdout)
			}
		})
	}
}
