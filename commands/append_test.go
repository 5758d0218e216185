package commands

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// splitRef is what framing must produce: the input cut at every delimiter,
// a last piece without a delimiter after it being a message too.
func splitRef(input, delim string) []string {
	if input == "" {
		return nil
	}
	parts := strings.Split(input, delim)
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// newTopic creates topic t with n partitions in a fresh data directory.
func newTopic(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--partitions", fmt.Sprint(n))
	return dir
}

// TestAppendFraming appends through the whole command, stdin fed whole,
// 1 byte and 3 bytes per Read, so delimiters straddle read boundaries.
func TestAppendFraming(t *testing.T) {
	tests := []struct {
		name  string
		flags []string
		input string
		want  []string // nil: splitRef(input, delim)
		delim string
	}{
		{"newline", nil, "a\nbb\nccc\n", nil, "\n"},
		{"crlf stripped", nil, "a\r\nb\r\n\r\nc\n", []string{"a", "b", "", "c"}, ""},
		{"only last cr stripped", nil, "a\r\r\nb\rc\n", []string{"a\r", "b\rc"}, ""},
		{"final line without newline", nil, "a\nb", nil, "\n"},
		{"final line with cr only", nil, "a\nb\r", []string{"a", "b"}, ""},
		{"empty lines", nil, "\n\na\n\n", nil, "\n"},
		{"single empty line", nil, "\n", []string{""}, ""},
		{"no input", nil, "", nil, "\n"},
		{"null", []string{"--null"}, "a\x00b\nc\x00\x00d", nil, "\x00"},
		{"null keeps cr", []string{"--null"}, "a\r\x00b\r\n\x00", nil, "\x00"},
		{"delimiter ||", []string{"--delimiter", "||"}, "a||b||||c|d||e|||f|", nil, "||"},
		{"delimiter || trailing", []string{"--delimiter", "||"}, "||x||", nil, "||"},
		{"delimiter crlf--crlf", []string{"--delimiter", `\r\n--\r\n`}, "one\r\n--\r\ntwo\r\n-\r\n--\r\n\r\n--\r\nthree\r\n--\nfour\r\n--\r\n", nil, "\r\n--\r\n"},
		{"delimiter prefix repeats", []string{"--delimiter", "aab"}, "xaaabyaabaabzaa", nil, "aab"},
		{"delimiter hex", []string{"--delimiter", `\x1e`}, "a\x1eb\x1e", nil, "\x1e"},
		{"delimiter tab", []string{"--delimiter", `\t`}, "a\tb\nc\t", nil, "\t"},
	}
	readers := map[string]func(string) io.Reader{
		"whole":  func(s string) io.Reader { return strings.NewReader(s) },
		"1-byte": func(s string) io.Reader { return &chunkReader{data: []byte(s), n: 1} },
		"3-byte": func(s string) io.Reader { return &chunkReader{data: []byte(s), n: 3} },
	}
	dir := filepath.Join(t.TempDir(), "data")
	n := 0
	for _, tt := range tests {
		want := tt.want
		if want == nil {
			want = splitRef(tt.input, tt.delim)
		}
		for rname, reader := range readers {
			n++
			topic := fmt.Sprintf("t%d", n)
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				r := runIn(t, dir, reader(tt.input), append([]string{"append", topic, "--create", "--sync", "never"}, tt.flags...)...)
				if r.code != 0 {
					t.Fatalf("append: exit %d: %s", r.code, r.stderr)
				}
				if r.stdout != "" {
					t.Errorf("append wrote to stdout: %q", r.stdout)
				}
				got := readValues(t, dir, topic, -1)
				if !equalStrings(got, want) {
					t.Errorf("messages\n got %q\nwant %q", got, want)
				}
				if len(want) > 0 && !strings.Contains(r.stderr, fmt.Sprintf("appended %d record", len(want))) {
					t.Errorf("summary: %q", r.stderr)
				}
			})
		}
	}
}

// TestAppendEmptyLine: an empty line is an empty message, shown as "".
func TestAppendEmptyLine(t *testing.T) {
	dir := newTopic(t, 1)
	mustRun(t, dir, "a\n\nb\n", "append", "t")
	out := mustRun(t, dir, "", "read", "t", "--format", "json", "--offset", "1").stdout
	lines := parseJSONLines(t, out)
	if len(lines) != 2 || !strings.Contains(lines[0].raw, `"key":null,"value":""`) {
		t.Errorf("json of an empty line: %q", out)
	}
}

func fnvPartition(key string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

func TestAppendKeys(t *testing.T) {
	t.Run("key-delimiter", func(t *testing.T) {
		dir := newTopic(t, 3)
		input := "user-1:hello\nno key here\n:empty key\nuser-2:a:b\nuser-1:\n::x\nuser-3:x\r\n"
		mustRun(t, dir, input, "append", "t", "--key-delimiter", ":")
		type kv struct{ key, value string }
		want := map[kv]int{ // record -> partition, -1 for round-robin
			{"user-1", "hello"}: fnvPartition("user-1", 3),
			{"", "no key here"}: -1,
			{"", "empty key"}:   -1,
			{"user-2", "a:b"}:   fnvPartition("user-2", 3),
			{"user-1", ""}:      fnvPartition("user-1", 3),
			{"", ":x"}:          -1,
			{"user-3", "x"}:     fnvPartition("user-3", 3),
		}
		recs := readRecords(t, dir, "t")
		if len(recs) != len(want) {
			t.Fatalf("%d records, want %d: %+v", len(recs), len(want), recs)
		}
		for _, r := range recs {
			p, ok := want[kv{string(r.key), string(r.value)}]
			if !ok {
				t.Errorf("unexpected record key %q value %q", r.key, r.value)
				continue
			}
			if r.key != nil && len(r.key) == 0 {
				t.Errorf("record %q has an empty key, want none", r.value)
			}
			if p >= 0 && r.partition != p {
				t.Errorf("key %q in partition %d, want FNV-1a %% 3 = %d", r.key, r.partition, p)
			}
		}
		// key null in JSON for lines without one.
		out := mustRun(t, dir, "", "read", "t", "--format", "json").stdout
		for _, l := range parseJSONLines(t, out) {
			if l.Key == nil && !strings.Contains(l.raw, `"key":null`) {
				t.Errorf("no key but not null: %s", l.raw)
			}
		}
	})
	t.Run("multi-byte key-delimiter", func(t *testing.T) {
		dir := newTopic(t, 1)
		mustRun(t, dir, "k=>v=>w\nplain\n", "append", "t", "--key-delimiter", "=>")
		recs := readRecords(t, dir, "t")
		if len(recs) != 2 || string(recs[0].key) != "k" || string(recs[0].value) != "v=>w" || recs[1].key != nil || string(recs[1].value) != "plain" {
			t.Errorf("records: %+v", recs)
		}
	})
	t.Run("key", func(t *testing.T) {
		dir := newTopic(t, 3)
		mustRun(t, dir, "a\nb\nc\nd\n", "append", "t", "--key", "fixed")
		p := fnvPartition("fixed", 3)
		if got := readValues(t, dir, "t", p); strings.Join(got, "") != "abcd" {
			t.Errorf("partition %d holds %q, want all four", p, got)
		}
		for _, r := range readRecords(t, dir, "t") {
			if string(r.key) != "fixed" {
				t.Errorf("key %q", r.key)
			}
		}
	})
	t.Run("many keys route by FNV-1a", func(t *testing.T) {
		dir := newTopic(t, 5)
		var in strings.Builder
		for i := range 200 {
			fmt.Fprintf(&in, "key-%d:v%d\n", i*7919, i)
		}
		mustRun(t, dir, in.String(), "append", "t", "-K", ":")
		recs := readRecords(t, dir, "t")
		if len(recs) != 200 {
			t.Fatalf("%d records", len(recs))
		}
		for _, r := range recs {
			if want := fnvPartition(string(r.key), 5); r.partition != want {
				t.Errorf("key %q in partition %d, want %d", r.key, r.partition, want)
			}
		}
	})
	t.Run("round-robin", func(t *testing.T) {
		dir := newTopic(t, 3)
		for _, n := range []int{100, 7, 1, 2} { // several invocations, each balanced
			before := partitionCounts(t, dir, 3)
			mustRun(t, dir, strings.Repeat("x\n", n), "append", "t")
			after := partitionCounts(t, dir, 3)
			lo, hi := n, 0
			for p := range 3 {
				d := after[p] - before[p]
				lo, hi = min(lo, d), max(hi, d)
			}
			if hi-lo > 1 {
				t.Errorf("%d keyless records spread %v -> %v: counts differ by %d", n, before, after, hi-lo)
			}
		}
	})
	t.Run("partition fixed", func(t *testing.T) {
		dir := newTopic(t, 3)
		mustRun(t, dir, "a\nb\nk:c\n", "append", "t", "--partition", "2", "--key-delimiter", ":")
		if c := partitionCounts(t, dir, 3); c != [3]int{0, 0, 3} {
			t.Errorf("counts %v, want all in 2", c)
		}
		mustRun(t, dir, "d\n", "append", "t", "-p", "1", "--key", "user-1")
		if c := partitionCounts(t, dir, 3); c != [3]int{0, 1, 3} {
			t.Errorf("counts %v", c)
		}
	})
}

func partitionCounts(t *testing.T, dir string, n int) [3]int {
	t.Helper()
	var c [3]int
	for _, r := range readRecords(t, dir, "t") {
		c[r.partition]++
	}
	return c
}

// TestAppendTooLong: a line over --max-message-bytes fails with its line
// number; the lines before it stay appended.
func TestAppendTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	n := 0
	for _, tc := range []struct {
		name  string
		flags []string
		input string
		line  int
		kept  []string
	}{
		{"newline", []string{"--max-message-bytes", "4"}, "a\nbbbb\ncc\nddddd\nee\n", 4, []string{"a", "bbbb", "cc"}},
		{"first line", []string{"--max-message-bytes", "4"}, "aaaaa\nb\n", 1, nil},
		{"last line no newline", []string{"--max-message-bytes", "4"}, "a\nbbbbbbbbbbb", 2, []string{"a"}},
		{"crlf not counted", []string{"--max-message-bytes", "4"}, "aaaa\r\nbbbbb\r\n", 2, []string{"aaaa"}},
		{"delimiter", []string{"--max-message-bytes", "3", "--delimiter", "||"}, "abc||de||fghi||j", 3, []string{"abc", "de"}},
		{"key line", []string{"--max-message-bytes", "5", "-K", ":"}, "k:abc\nkk:abc\n", 2, []string{"abc"}},
		{"size unit", []string{"--max-message-bytes", "1k"}, "a\n" + strings.Repeat("x", 1024) + "\n" + strings.Repeat("y", 1025) + "\nz\n", 3, []string{"a", strings.Repeat("x", 1024)}},
		{"long line across reads", []string{"--max-message-bytes", "64KiB"}, "a\n" + strings.Repeat("x", 3<<20) + "\nb\n", 2, []string{"a"}},
	} {
		for _, chunk := range []int{0, 1, 3} {
			if chunk == 1 && len(tc.input) > 1<<16 {
				continue
			}
			n++
			topic := fmt.Sprintf("t%d", n)
			t.Run(fmt.Sprintf("%s/%d", tc.name, chunk), func(t *testing.T) {
				var in io.Reader = strings.NewReader(tc.input)
				if chunk > 0 {
					in = &chunkReader{data: []byte(tc.input), n: chunk}
				}
				r := runIn(t, dir, in, append([]string{"append", topic, "--create", "--sync", "never"}, tc.flags...)...)
				if r.code != exitError {
					t.Fatalf("exit %d, want 1; stderr %q", r.code, r.stderr)
				}
				wantLastErrorLine(t, r.stderr, fmt.Sprintf("line %d ", tc.line), "--max-message-bytes")
				var kept []string
				for _, rec := range readRecords(t, dir, topic) {
					kept = append(kept, string(rec.value))
				}
				if !equalStrings(kept, tc.kept) {
					t.Errorf("kept %q, want %q", kept, tc.kept)
				}
			})
		}
	}
}

// TestAppendBadJSON: a malformed --input json line fails with its line
// number; the lines before it stay appended.
func TestAppendBadJSON(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		line        int
		kept        int
	}{
		{"syntax", `{"value":"a"}` + "\n" + `{"value":"b"}` + "\n{bad\n" + `{"value":"c"}` + "\n", 3, 2},
		{"no value", `{"value":"a"}` + "\n" + `{"key":"k"}` + "\n", 2, 1},
		{"bad base64", `{"value_base64":"!!!"}` + "\n", 1, 0},
		{"both value forms", `{"value":"a"}` + "\n" + `{"value":"a","value_base64":"YQ=="}` + "\n", 2, 1},
		{"both key forms", `{"value":"a","key":"k","key_base64":"aw=="}` + "\n", 1, 0},
		{"not an object", `{"value":"a"}` + "\n" + `"just a string"` + "\n", 2, 1},
		{"empty line", `{"value":"a"}` + "\n\n" + `{"value":"b"}` + "\n", 2, 1},
		{"value not a string", `{"value":"a"}` + "\n" + `{"value":5}` + "\n", 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newTopic(t, 1)
			r := runIn(t, dir, strings.NewReader(tc.input), "append", "t", "--input", "json")
			if r.code != exitError {
				t.Fatalf("exit %d, want 1; stderr %q", r.code, r.stderr)
			}
			wantLastErrorLine(t, r.stderr, fmt.Sprintf("line %d ", tc.line))
			if got := readRecords(t, dir, "t"); len(got) != tc.kept {
				t.Errorf("%d records kept, want %d", len(got), tc.kept)
			}
		})
	}
	t.Run("keep-partition without partition", func(t *testing.T) {
		dir := newTopic(t, 2)
		r := runIn(t, dir, strings.NewReader(`{"value":"a","partition":1}`+"\n"+`{"value":"b"}`+"\n"), "append", "t", "--input", "json", "--keep-partition")
		if r.code != exitError {
			t.Fatalf("exit %d; %s", r.code, r.stderr)
		}
		wantLastErrorLine(t, r.stderr, "line 2 ", "partition")
		if got := readValues(t, dir, "t", 1); !equalStrings(got, []string{"a"}) {
			t.Errorf("partition 1: %q", got)
		}
	})
	t.Run("keep-partition out of range", func(t *testing.T) {
		dir := newTopic(t, 2)
		r := runIn(t, dir, strings.NewReader(`{"value":"a","partition":0}`+"\n"+`{"value":"b","partition":2}`+"\n"), "append", "t", "--input", "json", "--keep-partition")
		if r.code != exitError {
			t.Fatalf("exit %d; %s", r.code, r.stderr)
		}
		wantLastErrorLine(t, r.stderr, "line 2 ", "partition 2")
	})
}

// TestAppendCreate: --create makes a missing topic, with --partitions.
func TestAppendCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "a\nb\nc\nd\n", "append", "new", "--create", "--partitions", "2")
	if got := readValues(t, dir, "new", 0); len(got) != 2 {
		t.Errorf("partition 0: %q", got)
	}
	// On an existing topic, --create changes nothing.
	mustRun(t, dir, "e\n", "append", "new", "--create")
	if got := readValues(t, dir, "new", -1); len(got) != 5 {
		t.Errorf("all: %q", got)
	}
}

// TestAppendJSONSummary: --json prints the summary on stderr as JSON.
func TestAppendJSONSummary(t *testing.T) {
	dir := newTopic(t, 1)
	mustRun(t, dir, "a\n", "append", "t")
	r := mustRun(t, dir, "b\nc\n", "append", "t", "--json")
	want := `{"topic":"t","records":2,"partitions":[{"partition":0,"records":2,"first_offset":1,"last_offset":2}]}` + "\n"
	if r.stderr != want || r.stdout != "" {
		t.Errorf("stderr %q, want %q; stdout %q", r.stderr, want, r.stdout)
	}
	if r := mustRun(t, dir, "d\n", "-q", "append", "t"); r.stderr != "" {
		t.Errorf("-q: stderr %q", r.stderr)
	}
}

// TestFramer drives the framer directly with every chunking of each input.
func TestFramer(t *testing.T) {
	tests := []struct {
		delim   string
		stripCR bool
		input   string
		want    []string // nil: splitRef
	}{
		{"\n", true, "a\nb\r\nc", []string{"a", "b", "c"}},
		{"\n", true, "\r\n\r\n", []string{"", ""}},
		{"\n", true, "x\r", []string{"x"}},
		{"\n", false, "a\r\nb", []string{"a\r", "b"}},
		{"\x00", false, "a\x00\x00b\x00", nil},
		{"||", false, "a||b|||c||||d|", nil},
		{"||", false, "|||||", nil},
		{"\r\n--\r\n", false, "1\r\n--\r\n2\r\n-\r\n--\r\n3\r\n--\r\n\r\n--\r\n", nil},
		{"abcabd", false, "abcabcabdxabcababcabdabcab", nil},
		{"aaa", false, "aaaaaaaaaaxaa", nil},
	}
	for _, tt := range tests {
		want := tt.want
		if want == nil {
			want = splitRef(tt.input, tt.delim)
		}
		for size := 1; size <= len(tt.input); size++ {
			f := framer{delim: []byte(tt.delim), stripCR: tt.stripCR, max: 1 << 20}
			var got []string
			var lines []int64
			emit := func(msg []byte, line int64) error {
				got = append(got, string(msg))
				lines = append(lines, line)
				return nil
			}
			in := []byte(tt.input)
			for len(in) > 0 {
				n := min(size, len(in))
				chunk := bytes.Clone(in[:n]) // the framer must not keep chunk memory
				if err := f.feed(chunk, emit); err != nil {
					t.Fatalf("%q size %d: %v", tt.input, size, err)
				}
				clear(chunk)
				in = in[n:]
			}
			if err := f.finish(emit); err != nil {
				t.Fatal(err)
			}
			if !equalStrings(got, want) {
				t.Errorf("delim %q input %q chunks of %d:\n got %q\nwant %q", tt.delim, tt.input, size, got, want)
			}
			for i, l := range lines {
				if l != int64(i+1) {
					t.Errorf("message %d numbered %d", i, l)
				}
			}
		}
	}
}

// TestFramerMax: a message of exactly max bytes passes and one byte more
// fails with its number, however the input is chunked.
func TestFramerMax(t *testing.T) {
	for _, delim := range []string{"\n", "||", "\r\n--\r\n"} {
		input := "12345" + delim + "123" + delim + "123456" + delim + "1"
		for size := 1; size <= len(input); size++ {
			f := framer{delim: []byte(delim), stripCR: delim == "\n", max: 5}
			var got []string
			var err error
			for in := []byte(input); len(in) > 0 && err == nil; {
				n := min(size, len(in))
				err = f.feed(in[:n], func(m []byte, _ int64) error { got = append(got, string(m)); return nil })
				in = in[n:]
			}
			var tl *errMessageTooLong
			if !asErr(err, &tl) || tl.line != 3 {
				t.Errorf("delim %q size %d: err %v, want message 3 too long", delim, size, err)
			}
			if !equalStrings(got, []string{"12345", "123"}) {
				t.Errorf("delim %q size %d: passed %q", delim, size, got)
			}
		}
	}
}

func asErr(err error, target **errMessageTooLong) bool {
	e, ok := err.(*errMessageTooLong)
	if ok {
		*target = e
	}
	return ok
}

// TestAppendRunTimestamps: the records of one append run get strictly
// increasing timestamps across all the partitions it writes, even from
// one read of stdin, so tail -n shows them in the order they were
// appended.
func TestAppendRunTimestamps(t *testing.T) {
	dir := newTopic(t, 3)
	mustRun(t, dir, "e1\ne2\ne3\ne4\ne5\ne6\n", "append", "t")
	if got := mustRun(t, dir, "", "tail", "t", "-n", "3").stdout; got != "e4\ne5\ne6\n" {
		t.Errorf("tail -n 3 printed %q, want e4 e5 e6", got)
	}
	// A second run goes on above the first, keyed records too.
	mustRun(t, dir, "a:e7\nb:e8\nc:e9\nd:e10\n", "append", "t", "--key-delimiter", ":")
	lines := parseJSONLines(t, mustRun(t, dir, "", "read", "t", "--format", "json").stdout)
	byTime := map[int64]string{}
	var stamps []int64
	for _, l := range lines {
		if _, dup := byTime[l.TimestampNS]; dup {
			t.Errorf("timestamp %d given twice", l.TimestampNS)
		}
		byTime[l.TimestampNS] = *l.Value
		stamps = append(stamps, l.TimestampNS)
	}
	slices.Sort(stamps)
	var order []string
	for _, ts := range stamps {
		order = append(order, byTime[ts])
	}
	if want := "e1 e2 e3 e4 e5 e6 e7 e8 e9 e10"; strings.Join(order, " ") != want {
		t.Errorf("by timestamp the records are %q, want %q", order, want)
	}
}

// append refuses a partition whose active segment holds a corrupt record
// (exit 1, nothing written), and points at the recover that repairs it:
// with --salvage, as recover without it leaves corrupt records in place.
func TestAppendRefusesCorruptAdvisingSalvage(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "t")
	mustRun(t, dir, "v0\nv1\nv2\n", "append", "t")
	appendRaw(t, dir, 4, "v4")
	before := snapshot(t, dir)
	r := runIn(t, dir, strings.NewReader("v5\n"), "append", "t")
	if r.code != exitError {
		t.Errorf("append: exit %d, want %d", r.code, exitError)
	}
	wantLastErrorLine(t, r.stderr, "corrupt record at byte 90", "run 'seglog recover t --partition 0 --salvage' to repair it")
	sameSnapshot(t, before, snapshot(t, dir))
	if r := runIn(t, dir, nil, "recover", "t"); r.code != exitProblems {
		t.Errorf("recover: exit %d, want %d", r.code, exitProblems)
	}
	mustRun(t, dir, "", "recover", "t", "--partition", "0", "--salvage")
	mustRun(t, dir, "v5\n", "append", "t")
	if got := strings.Join(readValues(t, dir, "t", 0), ","); got != "v0,v1,v2,v4,v5" {
		t.Errorf("after salvage and append: %s", got)
	}
}
