package commands

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAppendStrictJSON: an --input json line that encoding/json would
// take by bending it (invalid UTF-8 or a lone surrogate made U+FFFD, a
// field name matched in another case, the last of two fields kept) or
// that holds anything read --format json does not print is refused: exit
// 1 naming the line and the field, nothing of that line stored, every
// line before it kept.
func TestAppendStrictJSON(t *testing.T) {
	const good = `{"value":"one"}` + "\n" + `{"key":"k","value":"two"}` + "\n"
	for _, tc := range []struct {
		name, line string
		wants      []string
	}{
		{"invalid UTF-8 value", "{\"value\":\"a\xffb\"}", []string{`field "value" is not valid UTF-8`, "value_base64"}},
		{"invalid UTF-8 key", "{\"key\":\"\xc3\x28\",\"value\":\"x\"}", []string{`field "key" is not valid UTF-8`, "key_base64"}},
		{"invalid UTF-8 after an escape", "{\"value\":\"\\n\xff\"}", []string{`field "value" is not valid UTF-8`}},
		{"lone high surrogate", `{"value":"\ud800"}`, []string{`field "value"`, `\ud800`, "surrogate", "value_base64"}},
		{"lone low surrogate in the key", `{"key":"a\udc00","value":"x"}`, []string{`field "key"`, `\udc00`, "surrogate"}},
		{"high surrogate without its low half", `{"value":"\ud800\u0041"}`, []string{`field "value"`, `\ud800`}},
		{"field name in capitals", `{"VALUE":"x"}`, []string{`unknown field "VALUE"`, "lower case"}},
		{"same field in another case", `{"value":"a","Value":"b"}`, []string{`unknown field "Value"`}},
		{"field twice", `{"value":"a","value":"b"}`, []string{`field "value" given twice`}},
		{"unknown field", `{"value":"a","headers":{}}`, []string{`unknown field "headers"`, "timestamp_ns"}},
		{"value and value_base64", `{"value":"a","value_base64":"YQ=="}`, []string{"both value and value_base64"}},
		{"value null", `{"value":null}`, []string{`field "value" must be a string, not null`}},
		{"value a number", `{"value":5}`, []string{`field "value" must be a string, not a number`}},
		{"key an object", `{"key":{},"value":"x"}`, []string{`field "key" must be a string, not an object`}},
		{"topic a number", `{"topic":1,"value":"x"}`, []string{`field "topic" must be a string`}},
		{"partition a string", `{"value":"x","partition":"0"}`, []string{`field "partition" must be a whole number, not a string`}},
		{"offset with a fraction", `{"value":"x","offset":1.5}`, []string{`field "offset" must be a whole number`}},
		{"timestamp_ns a string", `{"value":"x","timestamp_ns":"1"}`, []string{`field "timestamp_ns" must be a whole number`}},
		{"timestamp not RFC 3339", `{"value":"x","timestamp":"yesterday"}`, []string{`timestamp "yesterday" is not an RFC 3339 time`}},
		{"base64 with a newline in it", `{"value_base64":"YQ\n=="}`, []string{"value_base64 is not base64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newTopic(t, 1)
			r := runIn(t, dir, strings.NewReader(good+tc.line+"\n"+`{"value":"never"}`+"\n"), "append", "t", "--input", "json")
			if r.code != exitError {
				t.Fatalf("exit %d, want 1; stderr %q", r.code, r.stderr)
			}
			wantLastErrorLine(t, r.stderr, append([]string{"line 3 of the input"}, tc.wants...)...)
			if got := readValues(t, dir, "t", 0); !equalStrings(got, []string{"one", "two"}) {
				t.Errorf("the topic holds %q, want the two lines before the bad one", got)
			}
		})
	}
	// Bytes that are not text go through the base64 fields exactly.
	dir := newTopic(t, 1)
	mustRun(t, dir, `{"key_base64":"/w==","value_base64":"AP8="}`+"\n", "append", "t", "--input", "json")
	if recs := readRecords(t, dir, "t"); len(recs) != 1 || string(recs[0].key) != "\xff" || string(recs[0].value) != "\x00\xff" {
		t.Errorf("records %+v, want key ff and value 00 ff", recs)
	}
}

// TestAppendJSONTimestamps: read --format json | append --input json keeps
// each record's timestamp (timestamp_ns, else timestamp), raised to the
// partition's newest when older with one warning counting them; a line
// without one, or with null (the simple layout), is stamped now; both
// given and disagreeing is an error naming the line; --timestamps now
// stamps every record with the time of append.
func TestAppendJSONTimestamps(t *testing.T) {
	t.Run("copy", func(t *testing.T) {
		src := newTopic(t, 2)
		for i := range 3 {
			mustRun(t, src, fmt.Sprintf("k%d:run %d\nother:run %d\n", i, i, i), "append", "t", "--key-delimiter", ":")
		}
		out := mustRun(t, src, "", "read", "t", "--format", "json").stdout
		dst := newTopic(t, 2)
		r := mustRun(t, dst, out, "append", "t", "--input", "json", "--keep-partition")
		if strings.Contains(r.stderr, "warning") {
			t.Errorf("copying in order warned: %s", r.stderr)
		}
		want, got := parseJSONLines(t, out), parseJSONLines(t, mustRun(t, dst, "", "read", "t", "--format", "json").stdout)
		if len(got) != len(want) {
			t.Fatalf("copied %d records, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i].TimestampNS != want[i].TimestampNS || got[i].Timestamp != want[i].Timestamp {
				t.Errorf("record %d: timestamp %s (%d) in the copy, %s (%d) in the source", i, got[i].Timestamp, got[i].TimestampNS, want[i].Timestamp, want[i].TimestampNS)
			}
		}
		// So --since finds the same records in both.
		since := want[len(want)/2].Timestamp
		a := mustRun(t, src, "", "read", "t", "--since", since).stdout
		if b := mustRun(t, dst, "", "read", "t", "--since", since).stdout; a != b || a == "" {
			t.Errorf("--since %s: the source gives %q, the copy %q", since, a, b)
		}
	})
	t.Run("raised and stamped", func(t *testing.T) {
		dir := newTopic(t, 1)
		start := time.Now().UnixNano()
		in := `{"value":"a","timestamp_ns":1000}` + "\n" +
			`{"value":"b","timestamp":"1970-01-01T00:00:00.000002Z"}` + "\n" +
			`{"value":"c","timestamp":"1970-01-01T00:00:00.0000015Z","timestamp_ns":1500}` + "\n" +
			`{"value":"d","timestamp_ns":1700}` + "\n" +
			`{"value":"e","timestamp":null,"timestamp_ns":null}` + "\n" +
			`{"value":"f"}` + "\n"
		r := mustRun(t, dir, in, "append", "t", "--input", "json")
		if !strings.Contains(r.stderr, "seglog: warning: the timestamps of 2 records were older than their partition's newest and were raised to it") ||
			strings.Count(r.stderr, "warning") != 1 {
			t.Errorf("want one warning counting 2 raised timestamps; stderr:\n%s", r.stderr)
		}
		lines := parseJSONLines(t, mustRun(t, dir, "", "read", "t", "--format", "json").stdout)
		if len(lines) != 6 {
			t.Fatalf("%d records, want 6", len(lines))
		}
		for i, want := range []int64{1000, 2000, 2000, 2000} {
			if lines[i].TimestampNS != want {
				t.Errorf("%s: timestamp %d, want %d", *lines[i].Value, lines[i].TimestampNS, want)
			}
		}
		if e, f := lines[4].TimestampNS, lines[5].TimestampNS; e < start || f <= e {
			t.Errorf("records without a timestamp got %d and %d, want the time of append (from %d), increasing", e, f, start)
		}
	})
	t.Run("disagreeing", func(t *testing.T) {
		dir := newTopic(t, 1)
		in := `{"value":"a","timestamp_ns":5}` + "\n" + `{"value":"b","timestamp":"2024-05-01T12:00:00Z","timestamp_ns":1714564800000000001}` + "\n"
		r := runIn(t, dir, strings.NewReader(in), "append", "t", "--input", "json")
		if r.code != exitError {
			t.Fatalf("exit %d, want 1; stderr %q", r.code, r.stderr)
		}
		wantLastErrorLine(t, r.stderr, "line 2 of the input", "timestamp and timestamp_ns disagree", "1714564800000000000", "1714564800000000001")
		if got := readValues(t, dir, "t", 0); !equalStrings(got, []string{"a"}) {
			t.Errorf("the topic holds %q, want line 1", got)
		}
	})
	t.Run("now", func(t *testing.T) {
		dir := newTopic(t, 1)
		start := time.Now().UnixNano()
		mustRun(t, dir, `{"value":"a","timestamp_ns":1000}`+"\n"+`{"value":"b","timestamp_ns":1000}`+"\n", "append", "t", "--input", "json", "--timestamps", "now")
		lines := parseJSONLines(t, mustRun(t, dir, "", "read", "t", "--format", "json").stdout)
		if len(lines) != 2 || lines[0].TimestampNS < start || lines[1].TimestampNS <= lines[0].TimestampNS {
			t.Errorf("--timestamps now: %v, want the time of append (from %d), increasing", lines, start)
		}
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"append", "t", "--timestamps", "now"}, "--timestamps only goes with --input json"},
		{[]string{"append", "t", "--input", "json", "--timestamps", "later"}, `--timestamps must be input or now, not "later"`},
	} {
		r := runIn(t, newTopic(t, 1), strings.NewReader("a\n"), tc.args...)
		if r.code != exitUsage {
			t.Errorf("%q: exit %d, want 2", tc.args, r.code)
		}
		wantOneErrorLine(t, r.stderr, tc.want)
	}
}
