package commands

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/logstore"
)

// Helpers of this file carry an rs prefix: other test files of the package
// are written at the same time and must not clash.

// rsT0 is 2023-11-14T22:13:20Z, in Unix ns.
const rsT0 = int64(1_700_000_000_000_000_000)

// rsFixture makes topic name in dir with the given settings (segments of
// three 30-byte records) and writes n records to its partition 0, record
// i stamped rsT0 + i seconds with value "v<i>".
func rsFixture(t *testing.T, dir, name string, n int, st logstore.Settings) {
	t.Helper()
	st.SegmentBytes = 90
	s := logstore.Open(dir)
	if err := s.CreateTopic(name, 1, st); err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenWriter(name, 0, logstore.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := w.Append(rsT0+int64(i)*int64(time.Second), nil, []byte(fmt.Sprintf("v%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// rsNewTopic is a data directory holding topic t of 10 records: segments
// 0, 3 and 6 (newest records at +2 s, +5 s, +8 s) and the active 9.
func rsNewTopic(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	rsFixture(t, dir, "t", 10, logstore.Settings{})
	return dir
}

// rsJSON is retention-sweep --json's document.
type rsJSON struct {
	DryRun     bool   `json:"dry_run"`
	Now        string `json:"now"`
	NowNS      int64  `json:"now_ns"`
	Partitions []struct {
		Topic          string  `json:"topic"`
		Partition      int     `json:"partition"`
		Retention      *string `json:"retention"`
		RetentionNS    *int64  `json:"retention_ns"`
		RetentionFrom  *string `json:"retention_source"`
		RetentionBytes *int64  `json:"retention_bytes"`
		BytesFrom      *string `json:"retention_bytes_source"`
		Cutoff         *string `json:"cutoff"`
		CutoffNS       *int64  `json:"cutoff_ns"`
		Start          uint64  `json:"start_offset"`
		Next           uint64  `json:"next_offset"`
		RolledInto     *string `json:"rolled_into"`
		WriterPid      *int    `json:"writer_pid"`
		Deleted        int     `json:"deleted_segments"`
		DeletedBytes   int64   `json:"deleted_bytes"`
		Segments       []struct {
			Segment  string  `json:"segment"`
			Base     uint64  `json:"base_offset"`
			Active   bool    `json:"active"`
			Records  uint64  `json:"records"`
			Bytes    int64   `json:"bytes"`
			Newest   *string `json:"newest_timestamp"`
			NewestNS *int64  `json:"newest_timestamp_ns"`
			Decision string  `json:"decision"`
			Code     string  `json:"reason_code"`
			Reason   string  `json:"reason"`
			Future   bool    `json:"future_timestamps"`
		} `json:"segments"`
	} `json:"partitions"`
	Skipped []struct {
		Topic  string `json:"topic"`
		Reason string `json:"reason"`
	} `json:"skipped"`
	Errors []string `json:"errors"`
	Totals struct {
		Segments   int   `json:"deleted_segments"`
		Bytes      int64 `json:"deleted_bytes"`
		Partitions int   `json:"partitions_swept"`
	} `json:"totals"`
}

func rsParse(t *testing.T, out string) rsJSON {
	t.Helper()
	var doc rsJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("retention-sweep --json output is not one JSON document: %v\n%s", err, out)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal([]byte(out), &raw)
	for _, k := range []string{"partitions", "skipped", "errors"} {
		if string(raw[k]) == "null" || raw[k] == nil {
			t.Errorf("%q is %s", k, raw[k])
		}
	}
	return doc
}

// rsDecisions lists "base decision" for partition i of a document.
func rsDecisions(doc rsJSON, i int) []string {
	var out []string
	for _, s := range doc.Partitions[i].Segments {
		out = append(out, fmt.Sprintf("%d %s", s.Base, s.Decision))
	}
	return out
}

// The table, whole: rules, a title per partition, a row per segment, the
// totals.
func TestRetentionSweepTable(t *testing.T) {
	dir := rsNewTopic(t)
	r := mustRun(t, dir, "", "retention-sweep", "t", "--retention", "1h", "--now", "2023-11-14T23:13:26Z")
	want := `topic t: retention 1h from --retention (cutoff 2023-11-14T22:13:26.000000000Z)

partition t/0 (DATA/t/0): deleted 2 of 4 segments (180 B), start offset 6, next offset 10
+--------------------------+---------+-------+---------------------+----------+
| SEGMENT                  | RECORDS | BYTES | NEWEST              | DECISION |
+--------------------------+---------+-------+---------------------+----------+
| 00000000000000000000.log |       3 |    90 | 2023-11-14 22:13:22 | deleted  |
| 00000000000000000003.log |       3 |    90 | 2023-11-14 22:13:25 | deleted  |
| 00000000000000000006.log |       3 |    90 | 2023-11-14 22:13:28 | kept     |
| 00000000000000000009.log |       1 |    30 | 2023-11-14 22:13:29 | kept     |
+--------------------------+---------+-------+---------------------+----------+
00000000000000000000.log: older than 1h (cutoff 2023-11-14T22:13:26.000000000Z)
00000000000000000003.log: older than 1h (cutoff 2023-11-14T22:13:26.000000000Z)
00000000000000000006.log: newer than the cutoff
00000000000000000009.log: newer than the cutoff

total: deleted 2 segments (180 B) from 1 partition
`
	if got := strings.ReplaceAll(r.stdout, dir, "DATA"); got != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, want)
	}
	if r.stderr != "" {
		t.Errorf("stderr %q", r.stderr)
	}
	if got := readValues(t, dir, "t", 0); !slices.Equal(got, []string{"v6", "v7", "v8", "v9"}) {
		t.Errorf("after the sweep t reads %q", got)
	}

	// Size, with the topic's stored retention (24 days) applying too.
	dir = filepath.Join(t.TempDir(), "data")
	rsFixture(t, dir, "t", 10, logstore.Settings{Retention: 24 * 24 * time.Hour})
	r = mustRun(t, dir, "", "retention-sweep", "t", "--retention-bytes", "150", "--now", "2023-11-14T23:13:26Z", "--wide")
	for _, want := range []string{
		"topic t: retention 24d from the topic's setting (cutoff 2023-10-21T23:13:26.000000000Z), retention-bytes 150 B from --retention-bytes\n",
		"| deleted  | size: partition 300 B, 210 B without it >= retention-bytes 150 B      |",
		"| kept     | newer than the cutoff; size: 120 B without it < retention-bytes 150 B |",
		"| 00000000000000000006.log |       3 |    90 | 2023-11-14T22:13:28.000000000Z | kept     | newer than the cutoff                                                 |",
		"start offset 3, next offset 10",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
}

// --json: one document with the same decisions, exact numbers and times.
func TestRetentionSweepJSON(t *testing.T) {
	dir := rsNewTopic(t)
	r := mustRun(t, dir, "", "retention-sweep", "t", "--json", "--retention", "1h", "--now", "2023-11-14T23:13:26Z")
	doc := rsParse(t, r.stdout)
	if doc.DryRun || doc.Now != "2023-11-14T23:13:26.000000000Z" || doc.NowNS != rsT0+3606*int64(time.Second) || len(doc.Partitions) != 1 {
		t.Fatalf("document: %+v", doc)
	}
	p := doc.Partitions[0]
	if p.Topic != "t" || p.Partition != 0 || *p.Retention != "1h" || *p.RetentionNS != int64(time.Hour) || p.RetentionBytes != nil ||
		*p.Cutoff != "2023-11-14T22:13:26.000000000Z" || *p.CutoffNS != rsT0+6*int64(time.Second) ||
		p.Start != 6 || p.Next != 10 || p.RolledInto != nil || p.WriterPid != nil || p.Deleted != 2 || p.DeletedBytes != 180 {
		t.Errorf("partition: %+v", p)
	}
	if got := rsDecisions(doc, 0); !slices.Equal(got, []string{"0 deleted", "3 deleted", "6 kept", "9 kept"}) {
		t.Errorf("decisions %q", got)
	}
	s := p.Segments[1]
	if s.Segment != "00000000000000000003.log" || s.Records != 3 || s.Bytes != 90 || s.Active || *s.Newest != "2023-11-14T22:13:25.000000000Z" ||
		*s.NewestNS != rsT0+5*int64(time.Second) || s.Code != "time" || !strings.HasPrefix(s.Reason, "older than 1h") || s.Future {
		t.Errorf("segment 3: %+v", s)
	}
	if s := p.Segments[3]; !s.Active || s.Code != "newer" {
		t.Errorf("segment 9: %+v", s)
	}
	if doc.Totals.Segments != 2 || doc.Totals.Bytes != 180 || doc.Totals.Partitions != 1 || len(doc.Errors) != 0 {
		t.Errorf("totals %+v, errors %q", doc.Totals, doc.Errors)
	}

	// Everything expired, in a dry run: the active segment would be rolled.
	r = mustRun(t, dir, "", "retention-sweep", "t", "--json", "--dry-run", "--retention", "1h", "--now", "2100-01-01T00:00:00Z")
	doc = rsParse(t, r.stdout)
	p = doc.Partitions[0]
	if !doc.DryRun || p.RolledInto == nil || *p.RolledInto != "00000000000000000010.log" || p.Start != 10 || p.Deleted != 2 ||
		!slices.Equal(rsDecisions(doc, 0), []string{"6 would delete", "9 would delete"}) {
		t.Errorf("dry run: %+v", doc)
	}
}

// Exit statuses: 2 for what does not parse, 1 for what cannot be done;
// one error line; nothing changed.
func TestRetentionSweepErrors(t *testing.T) {
	dir := rsNewTopic(t)
	rsFixture(t, dir, "held", 4, logstore.Settings{Retention: time.Hour})
	unlock := rsLockTopic(t, dir, "held")
	defer unlock()
	before := snapshot(t, dir)
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"t", "--retention", "soon"}, 2, []string{"--retention", `"soon"`}},
		{[]string{"t", "--retention", "0s"}, 2, []string{"--retention must be longer than 0"}},
		{[]string{"t", "--retention", "-1h"}, 2, []string{"--retention", "negative"}},
		{[]string{"t", "--retention-bytes", "lots"}, 2, []string{"--retention-bytes", `"lots"`}},
		{[]string{"t", "--retention-bytes", "0"}, 2, []string{"--retention-bytes must be at least 1 byte"}},
		{[]string{"t", "--retention", "1h", "--now", "whenever"}, 2, []string{"--now", `"whenever"`}},
		{[]string{"t", "--retention", "1h", "--now", "1066-10-14T09:00:00Z"}, 2, []string{"--now", "out of the range"}},
		{[]string{"../t", "--retention", "1h"}, 2, []string{"invalid topic name", `"../t"`}},
		{[]string{"t", "--partition", "-1", "--retention", "1h"}, 2, []string{"--partition", "-1"}},
		{[]string{"t", "--wait", "--wait-timeout", "1s", "--retention", "1h"}, 2, []string{"--wait"}},
		{[]string{"t", "--bogus"}, 2, []string{"unknown flag --bogus"}},

		{[]string{"nope", "--retention", "1h"}, 1, []string{"topic nope", "not found", "--data-dir"}},
		{[]string{"t"}, 1, []string{"topic t", "no retention set", "--retention DURATION", "--retention-bytes SIZE", "seglog create"}},
		{[]string{"t", "--partition", "1", "--retention", "1h"}, 1, []string{"topic t has partitions 0..0, not 1"}},
		{[]string{"held", "--wait-timeout", "50ms"}, 1, []string{"topic held is locked", "--wait"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runIn(t, dir, nil, append([]string{"retention-sweep"}, tc.args...)...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", r.code, tc.code, r.stderr)
			}
			wantOneErrorLine(t, r.stderr, tc.want...)
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
		})
	}
	sameSnapshot(t, before, snapshot(t, dir))
}

// rsLockTopic holds a topic's maintenance lock (a flock on its directory,
// as a copy or a recover would) until the returned func is called.
func rsLockTopic(t *testing.T, dir, topic string) func() {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, topic))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// Over every topic: a topic without a rule is listed as skipped, one whose
// maintenance lock is held is skipped with a warning; the rest is swept
// and the exit status is 0.
func TestRetentionSweepEveryTopic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	rsFixture(t, dir, "a", 10, logstore.Settings{Retention: time.Hour})
	rsFixture(t, dir, "b", 10, logstore.Settings{})
	rsFixture(t, dir, "c", 10, logstore.Settings{Retention: time.Hour})
	unlock := rsLockTopic(t, dir, "c")
	defer unlock()
	now := "2023-11-14T23:13:26Z"

	r := runIn(t, dir, nil, "retention-sweep", "--now", now, "--wait-timeout", "50ms")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"topic a: retention 1h", "partition a/0 (", "topic b: skipped, no retention set\n",
		"total: deleted 2 segments (180 B) from 1 partition\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "topic c") {
		t.Errorf("locked topic c in the output:\n%s", r.stdout)
	}
	if !strings.HasPrefix(r.stderr, "seglog: warning: skipped topic c: topic c is locked by another process") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr %q", r.stderr)
	}
	if got := readValues(t, dir, "a", 0); len(got) != 4 {
		t.Errorf("a holds %d records, want 4", len(got))
	}
	if got := readValues(t, dir, "c", 0); len(got) != 10 {
		t.Errorf("c holds %d records, want 10", len(got))
	}

	// --json lists both as skipped, with the reasons; --quiet drops the
	// warning. The rule given applies to b now.
	r = runIn(t, dir, nil, "retention-sweep", "--now", now, "--wait-timeout", "50ms", "--json", "--quiet", "--retention", "1h")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	doc := rsParse(t, r.stdout)
	if len(doc.Skipped) != 1 || doc.Skipped[0].Topic != "c" || !strings.Contains(doc.Skipped[0].Reason, "locked") {
		t.Errorf("skipped %+v", doc.Skipped)
	}
	if len(doc.Partitions) != 2 || doc.Partitions[1].Topic != "b" || doc.Partitions[1].Deleted != 2 {
		t.Errorf("partitions %+v", doc.Partitions)
	}
	unlock()
	r = runIn(t, dir, nil, "retention-sweep", "--now", now, "--json")
	doc = rsParse(t, r.stdout)
	if r.code != 0 || len(doc.Skipped) != 1 || doc.Skipped[0].Topic != "b" || doc.Skipped[0].Reason != "no retention set" ||
		len(doc.Partitions) != 2 || doc.Partitions[1].Topic != "c" || doc.Totals.Segments != 2 {
		t.Errorf("exit %d, %+v", r.code, doc)
	}
}

// Future timestamps keep a segment, in the row and in a warning; damage
// hiding the newest timestamp too. --quiet drops the warnings, and keeps
// on stdout the rows of what goes and of what is wrong only.
func TestRetentionSweepWarnings(t *testing.T) {
	dir := rsNewTopic(t)
	args := []string{"retention-sweep", "t", "--retention", "1s", "--now", "2023-11-14T22:13:25Z", "--dry-run", "--wide"}
	r := mustRun(t, dir, "", args...)
	if !strings.Contains(r.stdout, "| future timestamps | future timestamps: newest 2023-11-14T22:13:28.000000000Z is after now 2023-11-14T22:13:25.000000000Z |") {
		t.Errorf("no future row:\n%s", r.stdout)
	}
	warn := "seglog: warning: t/0: segment 00000000000000000006.log holds timestamps in the future (newest 2023-11-14T22:13:28.000000000Z is after now 2023-11-14T22:13:25.000000000Z): it never goes by time\n"
	if !strings.HasPrefix(r.stderr, warn) || strings.Count(r.stderr, "\n") != 2 || !strings.Contains(r.stderr, "segment 00000000000000000009.log holds") {
		t.Errorf("stderr %q, want a warning for segments 6 and 9, starting %q", r.stderr, warn)
	}
	q := mustRun(t, dir, "", append([]string{"-q"}, args...)...)
	if q.stderr != "" || !strings.Contains(q.stdout, "| future timestamps | future timestamps: newest 2023-11-14T22:13:28.000000000Z") ||
		!strings.Contains(q.stdout, "| 00000000000000000000.log |       3 |    90 | 2023-11-14T22:13:22.000000000Z | would delete ") ||
		strings.Contains(q.stdout, "00000000000000000003.log") || strings.Contains(q.stdout, "total:") || strings.Contains(q.stdout, "topic t:") {
		t.Errorf("--quiet: stderr %q, stdout:\n%s", q.stderr, q.stdout)
	}

	// Segment 3's second record gets a wrong offset: its age is unknown.
	log := filepath.Join(dir, "t", "0", "00000000000000000003.log")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b[30+7] = 9
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "t", "0", "00000000000000000003.timeindex")); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, dir, "", "retention-sweep", "t", "--retention", "1h", "--now", "2100-01-01T00:00:00Z", "--wide")
	for _, want := range []string{
		"| 00000000000000000000.log |       3 |    90 | 2023-11-14T22:13:22.000000000Z | deleted  | older than 1h",
		"| 00000000000000000003.log |       3 |    90 | unknown                        | kept     | newest timestamp unknown: damaged at byte 30 of " + log + " (unexpected offset); run 'seglog verify-crc t' and 'seglog recover t' |",
		"| 00000000000000000006.log |       3 |    90 | 2023-11-14T22:13:28.000000000Z | kept     | after a kept segment",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "seglog: warning: t/0: segment 00000000000000000003.log: corrupt record at byte 30 of "+log) ||
		!strings.Contains(r.stderr, "so it does not go by time") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// A dry run changes nothing, not even for an active segment it would roll.
func TestRetentionSweepDryRun(t *testing.T) {
	dir := rsNewTopic(t)
	before := snapshot(t, dir)
	r := mustRun(t, dir, "", "retention-sweep", "t", "--dry-run", "--retention", "1h", "--now", "2100-01-01T00:00:00Z", "--wide")
	sameSnapshot(t, before, snapshot(t, dir))
	for _, want := range []string{
		"would delete 4 of 4 segments (300 B; dry run: nothing was changed), start offset 10, next offset 10",
		"would roll first: new active segment 00000000000000000010.log |",
		"total: would delete 4 segments (300 B) from 1 partition (dry run: nothing was changed)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
}

// A sweep beside a real appender process: the expired closed segments go,
// the active one stays; the appender goes on, and the partition reads
// back whole from its new start with contiguous offsets. Once the
// appender is gone, the next sweep rolls and deletes the rest, and the
// next append continues the offsets.
func TestRetentionSweepWhileAppending(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--segment-bytes", "200")
	p := startAppend(t, dir, "t")
	var values []string
	write := func(n int) {
		var b strings.Builder
		for range n {
			v := fmt.Sprintf("line-%04d", len(values))
			values = append(values, v)
			b.WriteString(v + "\n")
		}
		p.write(t, b.String())
	}
	write(40)
	eventually(t, 5*time.Second, "40 records visible", valuesVisible(t, dir, "t", 0, 40))

	sweep := []string{"retention-sweep", "t", "--retention", "1d", "--now", "2100-01-01T00:00:00Z", "--json"}
	doc := rsParse(t, mustRun(t, dir, "", sweep...).stdout)
	part := doc.Partitions[0]
	last := part.Segments[len(part.Segments)-1]
	if len(part.Segments) < 3 || part.Deleted != len(part.Segments)-1 || !last.Active || last.Decision != "kept" || last.Code != "writer" {
		t.Fatalf("sweep beside the appender: %+v", part)
	}
	if part.WriterPid != nil && *part.WriterPid != p.cmd.Process.Pid {
		t.Errorf("writer pid %d, appender is %d", *part.WriterPid, p.cmd.Process.Pid)
	}
	start := part.Start
	if start != last.Base {
		t.Errorf("start %d, want the active segment's base %d", start, last.Base)
	}

	write(60)
	p.stdin.Close()
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("appender: exit %d, %s", code, p.stderr)
	}
	recs := readRecords(t, dir, "t")
	if len(recs) != len(values)-int(start) {
		t.Fatalf("%d records from %d on, want %d", len(recs), start, len(values)-int(start))
	}
	for i, r := range recs {
		if o := start + uint64(i); r.offset != o || string(r.value) != values[o] {
			t.Fatalf("record %d: offset %d %q, want %d %q", i, r.offset, r.value, o, values[o])
		}
	}

	// No writer now: everything goes, the active segment rolled first.
	doc = rsParse(t, mustRun(t, dir, "", sweep...).stdout)
	part = doc.Partitions[0]
	rolled := fmt.Sprintf("%020d.log", len(values))
	if part.RolledInto == nil || *part.RolledInto != rolled || part.Deleted != len(part.Segments) || part.Start != uint64(len(values)) {
		t.Fatalf("second sweep: %+v", part)
	}
	if got := readRecords(t, dir, "t"); len(got) != 0 {
		t.Errorf("%d records left", len(got))
	}
	mustRun(t, dir, "after\n", "append", "t")
	recs = readRecords(t, dir, "t")
	if len(recs) != 1 || recs[0].offset != uint64(len(values)) || string(recs[0].value) != "after" {
		t.Errorf("append after everything expired: %+v", recs)
	}
	out := mustRun(t, dir, "", "describe", "t", "--json").stdout
	if !strings.Contains(out, `"start_offset": `+strconv.Itoa(len(values))) {
		t.Errorf("describe: %s", out)
	}
}

// A topic's own retention wins over the flags, which are the defaults for
// topics without one (Kafka's broker and topic settings), rule by rule:
// the cron line 'retention-sweep --retention 7d' keeps a 90-day topic's
// month-old data. --override-topic-settings applies the flags to every
// topic. The report names each rule's source.
func TestRetentionSweepTopicSettingWins(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	rsFixture(t, dir, "keep", 10, logstore.Settings{Retention: 90 * 24 * time.Hour})
	rsFixture(t, dir, "plain", 10, logstore.Settings{})
	rsFixture(t, dir, "sized", 10, logstore.Settings{RetentionBytes: 150})
	month := "2023-12-14T22:13:20Z" // rsT0 + 30 days

	r := mustRun(t, dir, "", "retention-sweep", "--retention", "7d", "--now", month)
	for _, want := range []string{
		"topic keep: retention 90d from the topic's setting (cutoff 2023-09-15T22:13:20.000000000Z); --retention 7d not applied: the topic's own setting wins (--override-topic-settings applies the flag)\n",
		"topic plain: retention 7d from --retention (cutoff 2023-12-07T22:13:20.000000000Z)\n",
		"topic sized: retention 7d from --retention (cutoff 2023-12-07T22:13:20.000000000Z), retention-bytes 150 B from the topic's setting\n",
		"partition keep/0 (" + dir + "/keep/0): nothing to delete, start offset 0, next offset 10\n",
		"partition plain/0 (" + dir + "/plain/0): deleted 4 of 4 segments (300 B), start offset 10, next offset 10\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if got := readValues(t, dir, "keep", 0); len(got) != 10 {
		t.Errorf("keep, stored retention 90d, holds %d of its 10 month-old records after --retention 7d", len(got))
	}
	if got := readValues(t, dir, "plain", 0); len(got) != 0 {
		t.Errorf("plain, no retention of its own, holds %q after --retention 7d", got)
	}

	// The flag given stays a default for one rule when the topic stores
	// the other: a stored retention_bytes does not stop --retention.
	r = mustRun(t, dir, "", "retention-sweep", "keep", "sized", "--retention-bytes", "1k", "--now", month, "--json", "--dry-run")
	doc := rsParse(t, r.stdout)
	if len(doc.Partitions) != 2 {
		t.Fatalf("partitions %+v", doc.Partitions)
	}
	rsWantSources(t, doc.Partitions[0].Topic, doc.Partitions[0].RetentionFrom, doc.Partitions[0].BytesFrom, "topic", "flag")
	rsWantSources(t, doc.Partitions[1].Topic, doc.Partitions[1].RetentionFrom, doc.Partitions[1].BytesFrom, "", "topic")
	if p := doc.Partitions[0]; *p.RetentionNS != int64(90*24*time.Hour) || *p.RetentionBytes != 1024 {
		t.Errorf("keep: retention %d ns, retention_bytes %d; want 90 days and 1024", *p.RetentionNS, *p.RetentionBytes)
	}
	if p := doc.Partitions[1]; p.Retention != nil || *p.RetentionBytes != 150 {
		t.Errorf("sized: retention %v, retention_bytes %d; want none and 150", p.Retention, *p.RetentionBytes)
	}

	// Overridden: the flag applies to keep too, and the report says over
	// what.
	r = mustRun(t, dir, "", "retention-sweep", "keep", "--retention", "7d", "--override-topic-settings", "--now", month)
	want := "topic keep: retention 7d from --retention over the topic's 90d (cutoff 2023-12-07T22:13:20.000000000Z)\n"
	if !strings.HasPrefix(r.stdout, want) {
		t.Errorf("stdout does not begin with %q:\n%s", want, r.stdout)
	}
	if got := readValues(t, dir, "keep", 0); len(got) != 0 {
		t.Errorf("keep holds %q after --retention 7d --override-topic-settings", got)
	}
	rsFixture(t, dir, "again", 10, logstore.Settings{Retention: 90 * 24 * time.Hour, RetentionBytes: 1 << 30})
	doc = rsParse(t, mustRun(t, dir, "", "retention-sweep", "again", "--retention", "7d", "--override-topic-settings", "--now", month, "--json").stdout)
	p0 := doc.Partitions[0]
	rsWantSources(t, p0.Topic, p0.RetentionFrom, p0.BytesFrom, "override", "topic")
	if p0.Deleted != 4 || *p0.RetentionBytes != 1<<30 {
		t.Errorf("again: deleted %d segments, retention_bytes %d; want 4 and the stored 1 GiB", p0.Deleted, *p0.RetentionBytes)
	}

	// The override flag with nothing to apply is a usage error.
	r = runIn(t, dir, nil, "retention-sweep", "--override-topic-settings", "--now", month)
	if r.code != 2 || r.stdout != "" {
		t.Errorf("--override-topic-settings alone: exit %d, stdout %q; want 2 and nothing", r.code, r.stdout)
	}
	wantOneErrorLine(t, r.stderr, "--override-topic-settings", "--retention", "--retention-bytes")
}

// rsWantSources checks a partition's retention_source and
// retention_bytes_source ("" for null).
func rsWantSources(t *testing.T, topic string, time, size *string, wantTime, wantSize string) {
	t.Helper()
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if str(time) != wantTime || str(size) != wantSize {
		t.Errorf("%s: retention_source %q, retention_bytes_source %q; want %q and %q", topic, str(time), str(size), wantTime, wantSize)
	}
}
