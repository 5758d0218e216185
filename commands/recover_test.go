package commands

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// Helpers of this file carry an rc prefix: other test files of the package
// are written at the same time and must not clash.

// rcJSON is recover --json's document.
type rcJSON struct {
	DryRun    bool `json:"dry_run"`
	Salvage   bool `json:"salvage"`
	Leftovers []struct {
		Path   string `json:"path"`
		Action string `json:"action"`
	} `json:"leftovers"`
	Partitions []struct {
		Topic     string `json:"topic"`
		Partition int    `json:"partition"`
		Next      uint64 `json:"next_offset"`
		Changed   bool   `json:"changed"`
		Segments  []struct {
			Segment    string `json:"segment"`
			Base       uint64 `json:"base_offset"`
			Size       int64  `json:"size"`
			Records    uint64 `json:"records"`
			ValidBytes int64  `json:"valid_bytes"`
			Cut        *struct {
				From    int64   `json:"from"`
				To      int64   `json:"to"`
				Bytes   int64   `json:"bytes"`
				Offset  uint64  `json:"expected_offset"`
				Reason  string  `json:"reason"`
				SavedTo *string `json:"saved_to"`
				Whole   bool    `json:"saved_whole_segment"`
			} `json:"cut"`
			Index     string   `json:"index"`
			TimeIndex string   `json:"timeindex"`
			Interval  int      `json:"index_interval"`
			SplitFrom *string  `json:"split_from"`
			SplitInto []string `json:"split_into"`
			Problem   *string  `json:"problem"`
		} `json:"segments"`
		Leftovers []struct {
			Path   string `json:"path"`
			Action string `json:"action"`
		} `json:"leftovers"`
		Gaps []struct {
			From uint64 `json:"from"`
			To   uint64 `json:"to"`
		} `json:"gaps"`
		Problems []string `json:"problems"`
	} `json:"partitions"`
	Skipped []struct {
		Topic     string `json:"topic"`
		Partition *int   `json:"partition"`
		Reason    string `json:"reason"`
	} `json:"skipped"`
	Errors []string `json:"errors"`
}

func rcParse(t *testing.T, out string) rcJSON {
	t.Helper()
	var doc rcJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("recover --json output is not one JSON document: %v\n%s", err, out)
	}
	// Lists are [] rather than null, so scripts can iterate them.
	var raw map[string]json.RawMessage
	json.Unmarshal([]byte(out), &raw)
	for _, k := range []string{"leftovers", "partitions", "skipped", "errors"} {
		if string(raw[k]) == "null" || raw[k] == nil {
			t.Errorf("%q is %s", k, raw[k])
		}
	}
	return doc
}

// rcFixture makes topic t (partitions partitions) with records a, b, c in
// partition 0, and returns the data directory.
func rcFixture(t *testing.T, partitions int) string {
	t.Helper()
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "t", "--partitions", fmt.Sprint(partitions))
	mustRun(t, dir, "a\nb\nc\n", "append", "t", "--partition", "0")
	return dir
}

// rcTear cuts n bytes off the end of a partition's first segment.
func rcTear(t *testing.T, dir, topic string, p, n int) {
	t.Helper()
	path := logPath(dir, topic, p)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()-int64(n)); err != nil {
		t.Fatal(err)
	}
}

// rcFlip inverts the byte at pos of a partition's first segment.
func rcFlip(t *testing.T, dir, topic string, p int, pos int64) {
	t.Helper()
	path := logPath(dir, topic, p)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[pos] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRecoverTornTailTable(t *testing.T) {
	dir := rcFixture(t, 1)
	rcTear(t, dir, "t", 0, 5) // three records of 29 bytes: c is torn
	before := snapshot(t, dir)
	r := mustRun(t, dir, "", "recover", "t", "--dry-run")
	sameSnapshot(t, before, snapshot(t, dir))
	// In 80 columns, the note and where the cut bytes go are under the
	// table, each whole.
	for _, want := range []string{
		"| SEGMENT                  | RECORDS | VALID BYTES | BYTES CUT | INDEX   |\n",
		"| 00000000000000000000.log |       2 |          58 |        24 | trimmed |\n",
		"+\n00000000000000000000.log: incomplete record cut at byte 58; saved to: .quarantine/t/0/\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for line := range strings.SplitSeq(r.stdout, "\n") {
		if strings.HasPrefix(line, "|") && len(line) > 80 {
			t.Errorf("table wider than 80 columns: %q", line)
		}
	}
	r = mustRun(t, dir, "", "recover", "t", "--wide")
	for _, want := range []string{
		"partition t/0 (" + filepath.Join(dir, "t", "0") + "): recovered, next offset 2\n",
		"| SEGMENT                  | RECORDS | VALID BYTES | BYTES CUT | SAVED TO",
		"| 00000000000000000000.log |       2 |          58 |        24 | .quarantine/t/0/00000000000000000000.log.58-82.",
		"| trimmed | incomplete record cut at byte 58 |",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}
	if got := readValues(t, dir, "t", 0); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("read %q", got)
	}
	bins, _ := filepath.Glob(filepath.Join(dir, ".quarantine", "t", "0", "*.bin"))
	if len(bins) != 1 {
		t.Fatalf("quarantine: %q", bins)
	}
	if b, _ := os.ReadFile(bins[0]); len(b) != 24 {
		t.Errorf("quarantined %d bytes", len(b))
	}
	// Nothing more to do: one line, no table; appending goes on at
	// offset 2.
	r = mustRun(t, dir, "", "recover", "t")
	if r.stdout != "1 partition checked, nothing to do\n" {
		t.Errorf("second run:\n%s", r.stdout)
	}
	mustRun(t, dir, "d\n", "append", "t")
	if got := readRecords(t, dir, "t"); len(got) != 3 || got[2].offset != 2 || string(got[2].value) != "d" {
		t.Errorf("after append: %+v", got)
	}
}

func TestRecoverJSONOutput(t *testing.T) {
	dir := rcFixture(t, 2)
	rcTear(t, dir, "t", 0, 5)
	pdir := filepath.Join(dir, "t", "0")
	os.WriteFile(filepath.Join(pdir, "00000000000000000000.index.tmp"), []byte("x"), 0o644)
	r := mustRun(t, dir, "", "recover", "--json")
	doc := rcParse(t, r.stdout)
	if doc.DryRun || doc.Salvage || len(doc.Partitions) != 2 || len(doc.Skipped) != 0 || len(doc.Errors) != 0 {
		t.Fatalf("document %+v", doc)
	}
	p := doc.Partitions[0]
	if p.Topic != "t" || p.Partition != 0 || p.Next != 2 || !p.Changed || len(p.Segments) != 1 || len(p.Problems) != 0 {
		t.Fatalf("partition %+v", p)
	}
	sg := p.Segments[0]
	if sg.Segment != "00000000000000000000.log" || sg.Size != 82 || sg.Records != 2 || sg.ValidBytes != 58 ||
		sg.Index != "trimmed" || sg.TimeIndex != "trimmed" || sg.Interval != 1 || sg.SplitFrom != nil || sg.SplitInto == nil || sg.Problem != nil {
		t.Errorf("segment %+v", sg)
	}
	c := sg.Cut
	if c == nil || c.From != 58 || c.To != 82 || c.Bytes != 24 || c.Offset != 2 || c.SavedTo == nil || c.Whole ||
		!strings.HasPrefix(*c.SavedTo, filepath.Join(dir, ".quarantine", "t", "0")+"/") || !strings.Contains(c.Reason, "incomplete") {
		t.Errorf("cut %+v", c)
	}
	if len(p.Leftovers) != 1 || p.Leftovers[0].Action != "removed" || !strings.HasSuffix(p.Leftovers[0].Path, ".index.tmp") {
		t.Errorf("leftovers %+v", p.Leftovers)
	}
	if q := doc.Partitions[1]; q.Changed || q.Next != 0 || len(q.Segments) != 1 || q.Segments[0].Cut != nil || q.Segments[0].Index != "kept" {
		t.Errorf("partition 1: %+v", q)
	}
}

func TestRecoverCorruptExitCodes(t *testing.T) {
	dir := rcFixture(t, 1)
	rcFlip(t, dir, "t", 0, 29+28) // b's value
	pdir := filepath.Join(dir, "t", "0")
	before := snapshot(t, pdir)

	// Reported with advice, nothing cut: exit 3.
	r := runIn(t, dir, nil, "recover", "t")
	if r.code != exitProblems {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "t/0: corrupt record at byte 29 of ", "(expected offset 1): crc mismatch",
		"left in place", "seglog recover t --partition 0 --salvage")
	if !strings.Contains(r.stdout, "1 problem left") || !strings.Contains(r.stdout, "\n00000000000000000000.log: corrupt record at byte 29 (offset 1): crc mismatch; left in place\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	sameSnapshot(t, before, snapshot(t, pdir))
	if _, err := os.Stat(filepath.Join(dir, ".quarantine")); err == nil {
		t.Error("something went to quarantine")
	}
	// The plan says the same.
	if r := runIn(t, dir, nil, "recover", "t", "--dry-run", "--json"); r.code != exitProblems || len(rcParse(t, r.stdout).Partitions[0].Problems) != 1 {
		t.Errorf("dry run: exit %d\n%s", r.code, r.stdout)
	}

	// --salvage splits the segment: exit 0, every valid record readable.
	r = runIn(t, dir, nil, "recover", "t", "--salvage", "--json")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("salvage: exit %d, stderr %s", r.code, r.stderr)
	}
	doc := rcParse(t, r.stdout)
	p := doc.Partitions[0]
	if len(p.Segments) != 2 || p.Segments[0].Records != 1 || !slices.Equal(p.Segments[0].SplitInto, []string{"00000000000000000002.log"}) ||
		p.Segments[1].Base != 2 || p.Segments[1].SplitFrom == nil || p.Segments[1].Index != "created" ||
		len(p.Gaps) != 1 || p.Gaps[0].From != 1 || p.Gaps[0].To != 2 || !p.Segments[0].Cut.Whole {
		t.Errorf("salvage: %s", r.stdout)
	}
	recs := readRecords(t, dir, "t")
	if len(recs) != 2 || recs[0].offset != 0 || recs[1].offset != 2 || string(recs[1].value) != "c" {
		t.Errorf("read after salvage: %+v", recs)
	}
	// verify-crc lists the gap as known, also once the quarantine is gone.
	verify := func() {
		t.Helper()
		if r := runIn(t, dir, nil, "verify-crc", "t"); r.code != exitOK || !strings.Contains(r.stdout, "known") {
			t.Errorf("verify-crc after salvage: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	verify()
	mustRun(t, dir, "", "quarantine", "purge")
	verify()
	mustRun(t, dir, "", "recover", "t")
}

func TestRecoverUsageAndRuntimeErrors(t *testing.T) {
	dir := rcFixture(t, 1)
	for _, tc := range []struct {
		args  []string
		code  int
		wants []string
	}{
		{[]string{"recover", "no/such"}, exitUsage, []string{"invalid topic name"}},
		{[]string{"recover", "t", "--partition", "-1"}, exitUsage, []string{"--partition must be 0 or more"}},
		{[]string{"recover", "t", "--wait", "--wait-timeout", "1s"}, exitUsage, []string{"exclude each other"}},
		{[]string{"recover", "t", "--wait-timeout", "soon"}, exitUsage, []string{"--wait-timeout"}},
		{[]string{"recover", "--bogus"}, exitUsage, []string{"unknown flag --bogus"}},
		{[]string{"recover", "nope"}, exitError, []string{"topic nope", "not found"}},
		{[]string{"recover", "t", "--partition", "3"}, exitError, []string{"topic t has partitions 0..0, not 3"}},
		{[]string{"-d", filepath.Join(dir, "missing"), "recover"}, exitError, []string{"does not exist"}},
		{[]string{"quarantine", "list", "--older-than", "1h"}, exitUsage, []string{"for 'seglog quarantine purge'"}},
		{[]string{"quarantine", "purge", "--older-than", "bogus"}, exitUsage, []string{"--older-than"}},
		{[]string{"quarantine", "purge", "../x"}, exitUsage, []string{"invalid topic name"}},
	} {
		r := runIn(t, dir, nil, tc.args...)
		if r.code != tc.code {
			t.Errorf("%q: exit %d, want %d; stderr %s", tc.args, r.code, tc.code, r.stderr)
			continue
		}
		wantOneErrorLine(t, r.stderr, tc.wants...)
	}
}

func TestRecoverEveryTopicSkipsLocked(t *testing.T) {
	dir := rcFixture(t, 2)
	mustRun(t, dir, "", "create", "u")
	mustRun(t, dir, "x\ny\n", "append", "u")
	rcTear(t, dir, "t", 0, 5)
	rcTear(t, dir, "u", 0, 3)
	// A live appender holds u/0 for the whole run.
	w, err := logstore.Open(dir).OpenWriter("u", 0, logstore.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			w.Close()
		}
	})
	uBefore := snapshot(t, filepath.Join(dir, "u", "0"))

	r := runIn(t, dir, nil, "recover", "--wait-timeout", "50ms")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.HasPrefix(r.stderr, "seglog: warning: skipped partition u/0: partition u/0 is locked by another process") ||
		strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr: %q", r.stderr)
	}
	// t/1 has nothing to do: counted in the last line, no table.
	if !strings.Contains(r.stdout, "partition t/0 (") || strings.Contains(r.stdout, "partition t/1 (") || strings.Contains(r.stdout, "partition u/0") ||
		!strings.HasSuffix(r.stdout, "\n\n2 partitions checked: 1 recovered, 1 with nothing to do; 1 skipped, held by a writer\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if got := readValues(t, dir, "t", 0); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("t/0 reads %q", got)
	}
	sameSnapshot(t, uBefore, snapshot(t, filepath.Join(dir, "u", "0")))

	// Without --wait-timeout it is skipped at once; --json lists it as
	// skipped; --quiet drops the warning.
	start := time.Now()
	r = runIn(t, dir, nil, "recover", "--json", "--quiet")
	if d := time.Since(start); d > time.Second {
		t.Errorf("skipping a partition a writer holds took %v", d)
	}
	doc := rcParse(t, r.stdout)
	if r.code != exitOK || r.stderr != "" || len(doc.Skipped) != 1 || doc.Skipped[0].Topic != "u" || doc.Skipped[0].Partition == nil ||
		*doc.Skipped[0].Partition != 0 || !strings.Contains(doc.Skipped[0].Reason, "locked") {
		t.Errorf("exit %d, stderr %q, skipped %+v", r.code, r.stderr, doc.Skipped)
	}

	// Named, it is an error.
	r = runIn(t, dir, nil, "recover", "u", "--wait-timeout", "50ms")
	if r.code != exitError {
		t.Fatalf("recover u: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, "partition u/0 is locked by another process", "--wait")

	// Once the writer is gone it is recovered (the writer cut its own tail
	// on opening, so there is nothing left to do).
	closed = true
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, dir, "", "recover", "u")
	if r.stdout != "1 partition checked, nothing to do\n" {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

func TestRecoverDryRunChangesNothing(t *testing.T) {
	dir := rcFixture(t, 1)
	rcFlip(t, dir, "t", 0, 29+28)
	mustRun(t, dir, "d\n", "append", "t", "--segment-bytes", "1") // a second segment, which the damage is not in
	pdir := filepath.Join(dir, "t", "0")
	os.Remove(filepath.Join(pdir, "00000000000000000003.index"))
	os.WriteFile(filepath.Join(pdir, "00000000000000000009.timeindex"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "t", ".settings.tmp"), nil, 0o644)
	before := snapshot(t, dir)
	r := mustRun(t, dir, "", "recover", "--dry-run", "--salvage", "--wide")
	sameSnapshot(t, before, snapshot(t, dir))
	for _, want := range []string{
		"would remove t/.settings.tmp (temporary file of an interrupted operation)\n",
		"partition t/0 (" + pdir + "): plan (dry run: nothing was changed), next offset 4\n",
		"| 00000000000000000000.log |       1 |          29 |        58 | .quarantine/t/0/ | trimmed ",
		"| corrupt record at byte 29: split, records after it moved to 00000000000000000002.log |",
		"| 00000000000000000002.log |       1 |          29 |         - | -                | created ",
		"| rescued from 00000000000000000000.log ",
		"| 00000000000000000003.log |       1 |          29 |         - | -                | index rebuilt, timeindex kept | - ",
		"would remove t/0/00000000000000000009.timeindex (index file without its .log)\n",
		"would record offsets 1 as a known gap in t/0/.gaps.json\n",
	} {
		if !strings.Contains(strings.ReplaceAll(r.stdout, dir+"/", ""), strings.ReplaceAll(want, dir+"/", "")) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	// The real run does what the plan said.
	r2 := mustRun(t, dir, "", "recover", "--salvage")
	if !strings.Contains(r2.stdout, "recorded offsets 1 as a known gap") || !strings.Contains(r2.stdout, "removed t/.settings.tmp") {
		t.Errorf("recover:\n%s", r2.stdout)
	}
	if got := readValues(t, dir, "t", 0); !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Errorf("read %q", got)
	}
}

func TestQuarantineListPurge(t *testing.T) {
	dir := rcFixture(t, 2)
	r := mustRun(t, dir, "", "quarantine")
	if !strings.Contains(r.stdout, "is empty") {
		t.Errorf("empty quarantine: %s", r.stdout)
	}
	rcTear(t, dir, "t", 0, 5)
	mustRun(t, dir, "", "recover")
	r = mustRun(t, dir, "", "quarantine", "list", "--wide")
	for _, want := range []string{"| TOPIC | PARTITION | SAVED", "| t     |         0 |", "| 00000000000000000000.log |   58 |    24 | .quarantine/t/0/", "incomplete record"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("list lacks %q:\n%s", want, r.stdout)
		}
	}
	var doc struct {
		Entries []struct {
			Topic     string `json:"topic"`
			Partition int    `json:"partition"`
			Time      string `json:"time"`
			Source    string `json:"source"`
			Pos       int64  `json:"pos"`
			Length    int64  `json:"length"`
			Data      string `json:"data"`
			DataBytes *int64 `json:"data_bytes"`
			Note      string `json:"note"`
		} `json:"entries"`
	}
	r = mustRun(t, dir, "", "quarantine", "--json", "t", "--partition", "0")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Entries) != 1 {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	e := doc.Entries[0]
	if e.Topic != "t" || e.Pos != 58 || e.Length != 24 || e.DataBytes == nil || *e.DataBytes != 24 || len(e.Time) != len("2006-01-02T15:04:05.000000000Z") ||
		e.Source != logPath(dir, "t", 0) {
		t.Errorf("entry %+v", e)
	}
	if r := mustRun(t, dir, "", "quarantine", "list", "t", "--partition", "1", "--json"); !strings.Contains(r.stdout, `"entries": []`) {
		t.Errorf("partition 1: %s", r.stdout)
	}

	// Too young for --older-than; a dry run deletes nothing.
	if r := mustRun(t, dir, "", "quarantine", "purge", "--older-than", "1h"); !strings.HasPrefix(r.stdout, "purged 0 pieces (0 B)") {
		t.Errorf("purge --older-than: %s", r.stdout)
	}
	if r := mustRun(t, dir, "", "quarantine", "purge", "--dry-run"); !strings.HasPrefix(r.stdout, "would purge 1 piece (24 B)") {
		t.Errorf("purge --dry-run: %s", r.stdout)
	}
	for _, p := range []string{e.Data, e.Note} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("after a dry run: %v", err)
		}
	}
	if r := mustRun(t, dir, "", "quarantine", "purge", "t"); !strings.HasPrefix(r.stdout, "purged 1 piece (24 B) from ") {
		t.Errorf("purge: %s", r.stdout)
	}
	for _, p := range []string{e.Data, e.Note} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s still there", p)
		}
	}
	if r := mustRun(t, dir, "", "quarantine"); !strings.Contains(r.stdout, "is empty") {
		t.Errorf("after purge: %s", r.stdout)
	}
}

// TestRecoverIndexIsADirectory: a directory where an index file belongs is
// left alone and named as such (rename(2) alone says "file exists"); the
// data stays readable.
func TestRecoverIndexIsADirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "a\nb\n", "append", "t", "--create")
	idx := filepath.Join(dir, "t", "0", "00000000000000000000.index")
	if err := os.Remove(idx); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(idx, 0o755); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, dir, nil, "recover", "t")
	if r.code != 1 {
		t.Fatalf("recover: exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, idx+" is not a regular file (a directory)", "move it out of the partition directory")
	if fi, err := os.Stat(idx); err != nil || !fi.IsDir() {
		t.Errorf("the directory in the index's place: %v, %v; recover must leave it", fi, err)
	}
	if _, err := os.Stat(idx + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("recover left %s.tmp behind (%v)", idx, err)
	}
	if got := mustRun(t, dir, "", "read", "t").stdout; got != "a\nb\n" {
		t.Errorf("read after the failed recover: %q", got)
	}
}

// rcOverlapping writes partition 0's segment base after segment 0, with
// records at offsets base.. valued x<offset>.
func rcOverlapping(t *testing.T, dir string, base uint64, n int) {
	t.Helper()
	var b []byte
	for o := base; o < base+uint64(n); o++ {
		b = format.AppendRecord(b, &format.Record{Offset: o, Timestamp: 1, Value: []byte(fmt.Sprint("x", o))})
	}
	if err := os.WriteFile(filepath.Join(dir, "t", "0", fmt.Sprintf("%020d.log", base)), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An active segment whose records all overlap the segment before: plain
// recover reports them with the --salvage advice (exit 3) and changes
// nothing; --salvage moves them to quarantine, and append goes on after
// the segment before.
func TestRecoverOverlappingActiveSegment(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "t")
	mustRun(t, dir, "a\nb\nc\nd\ne\n", "append", "t")
	rcOverlapping(t, dir, 1, 3)
	pdir := filepath.Join(dir, "t", "0")
	before := snapshot(t, pdir)

	r := runIn(t, dir, nil, "recover", "t")
	if r.code != exitProblems {
		t.Fatalf("recover: exit %d, stderr %s", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "t/0: corrupt record at byte 0 of ", "00000000000000000001.log (expected offset 5)",
		"offsets 1..4 are in both", "seglog recover t --partition 0 --salvage", "to move the overlapping records to quarantine")
	sameSnapshot(t, before, snapshot(t, pdir))
	if r := runIn(t, dir, nil, "recover", "t", "--dry-run", "--salvage", "--json"); r.code != exitOK {
		t.Fatalf("dry run: exit %d, stderr %s", r.code, r.stderr)
	} else if p := rcParse(t, r.stdout).Partitions[0]; p.Next != 5 || len(p.Problems) != 0 {
		t.Errorf("dry run: %s", r.stdout)
	}
	sameSnapshot(t, before, snapshot(t, pdir))

	r = runIn(t, dir, nil, "recover", "t", "--salvage")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("salvage: exit %d, stderr %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "recovered, next offset 5") || !strings.Contains(r.stdout, "removed, as nothing valid is left at its name") {
		t.Errorf("salvage:\n%s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(pdir, "00000000000000000001.log")); err == nil {
		t.Error("the overlapping segment is still there")
	}
	if r := runIn(t, dir, nil, "verify-crc", "t"); r.code != exitOK {
		t.Errorf("verify-crc after salvage: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	mustRun(t, dir, "f\n", "append", "t")
	if got := readValues(t, dir, "t", 0); !slices.Equal(got, []string{"a", "b", "c", "d", "e", "f"}) {
		t.Errorf("read after salvage and append: %q", got)
	}
	r = mustRun(t, dir, "", "quarantine", "list", "t", "--wide")
	if !strings.Contains(r.stdout, "00000000000000000001.log") {
		t.Errorf("quarantine list:\n%s", r.stdout)
	}
	mustRun(t, dir, "", "recover", "t")
}
