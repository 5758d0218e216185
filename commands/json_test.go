package commands

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// roundTripRecords are the awkward cases: no key, empty key (= no key),
// empty value, bytes that are not UTF-8, JSON's special characters.
var roundTripRecords = []struct {
	partition  int
	key, value string
	noKey      bool
}{
	{0, "user-1", "hello", false},
	{0, "", "no key", true},
	{0, "", "", true},
	{0, "k", "", false},
	{0, "quote\"back\\slash", "say \"hi\" \\ \\\\ /", false},
	{0, "ctl", "nul\x00 soh\x01 us\x1f del\x7f tab\t cr\r lf\n crlf\r\n end", false},
	{0, "", "\n", true},
	{1, "\xff\xfe", "\xff\xfe", false},
	{1, "bin", "a\xffb\xc3", false},
	{1, "\xc3\x28", "valid value", false},
	{1, "utf8-é€😀", "é€😀 \u2028 \u2029 <>&", false},
	{1, "", "\xfe", true},
	{1, "nl\nkey", `{"json":"inside"}`, false},
	{1, "space key", " ", false},
}

// jsonInputLine encodes a record as an --input json line, using the
// base64 fields for bytes that are not UTF-8.
func jsonInputLine(t *testing.T, partition int, key, value []byte, noKey bool) string {
	t.Helper()
	m := map[string]any{"partition": partition}
	put := func(name string, b []byte) {
		if utf8.Valid(b) {
			m[name] = string(b)
		} else {
			m[name+"_base64"] = base64.StdEncoding.EncodeToString(b)
		}
	}
	if noKey {
		if key != nil {
			m["key"] = "" // an empty key is no key
		}
	} else {
		put("key", key)
	}
	put("value", value)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

var tsField = regexp.MustCompile(`"timestamp":"([^"]*)","timestamp_ns":(-?[0-9]+)`)

// normalize drops what legitimately differs between two copies of the
// same records: the topic name and the timestamps.
func normalize(out, topic string) string {
	out = strings.ReplaceAll(out, `{"topic":"`+topic+`",`, `{"topic":"T",`)
	return tsField.ReplaceAllString(out, `"timestamp":"TS","timestamp_ns":0`)
}

func TestJSONRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "src", "--partitions", "2")
	var in strings.Builder
	for i, r := range roundTripRecords {
		key := []byte(r.key)
		if r.noKey && i%2 == 0 {
			key = nil // alternate between no "key" field and "key":""
		}
		in.WriteString(jsonInputLine(t, r.partition, key, []byte(r.value), r.noKey))
	}
	before := time.Now()
	mustRun(t, dir, in.String(), "append", "src", "--input", "json", "--keep-partition")
	after := time.Now()

	// Also write one record through --null framing with non-UTF-8 bytes.
	mustRun(t, dir, "k\xff\x01:v\xfe\n\x00", "append", "src", "--null", "--key-delimiter", ":", "--partition", "1")

	srcOut := mustRun(t, dir, "", "read", "src", "--format", "json").stdout
	lines := parseJSONLines(t, srcOut)
	if len(lines) != len(roundTripRecords)+1 {
		t.Fatalf("%d records read, want %d", len(lines), len(roundTripRecords)+1)
	}

	// What was written is what is read, field by field.
	byPart := map[int][]jsonLine{}
	for _, l := range lines {
		byPart[l.Partition] = append(byPart[l.Partition], l)
	}
	i := map[int]int{}
	tsRE := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$`)
	for _, want := range roundTripRecords {
		l := byPart[want.partition][i[want.partition]]
		i[want.partition]++
		got := l.record(t)
		if l.Topic != "src" || l.Offset != uint64(i[want.partition]-1) {
			t.Errorf("topic/offset: %s", l.raw)
		}
		if want.noKey {
			if got.key != nil || !strings.Contains(l.raw, `"key":null`) || strings.Contains(l.raw, "key_base64") {
				t.Errorf("want no key (\"key\":null): %s", l.raw)
			}
		} else if !bytes.Equal(got.key, []byte(want.key)) {
			t.Errorf("key %q, want %q: %s", got.key, want.key, l.raw)
		}
		if !bytes.Equal(got.value, []byte(want.value)) {
			t.Errorf("value %q, want %q: %s", got.value, want.value, l.raw)
		}
		// Invalid UTF-8 goes as base64, and only then.
		if !want.noKey && (l.KeyBase64 != nil) == utf8.ValidString(want.key) {
			t.Errorf("key %q: key_base64 used wrongly: %s", want.key, l.raw)
		}
		if (l.ValueBase64 != nil) == utf8.ValidString(want.value) {
			t.Errorf("value %q: value_base64 used wrongly: %s", want.value, l.raw)
		}
		if (l.Key != nil && l.KeyBase64 != nil) || (l.Value != nil && l.ValueBase64 != nil) {
			t.Errorf("both plain and base64 fields: %s", l.raw)
		}
		// Timestamps: RFC 3339, UTC, exactly 9 fraction digits, equal to
		// timestamp_ns, taken at append time.
		if !tsRE.MatchString(l.Timestamp) {
			t.Errorf("timestamp %q is not RFC 3339 UTC with 9 fraction digits", l.Timestamp)
		}
		ts, err := time.Parse(time.RFC3339Nano, l.Timestamp)
		if err != nil || ts.UnixNano() != l.TimestampNS {
			t.Errorf("timestamp %q does not match timestamp_ns %d", l.Timestamp, l.TimestampNS)
		}
		if ts.Before(before.Add(-time.Second)) || ts.After(after.Add(time.Second)) {
			t.Errorf("timestamp %v not at append time (%v..%v)", ts, before, after)
		}
		// Field order is fixed.
		keys := regexp.MustCompile(`"(topic|partition|offset|timestamp|timestamp_ns|key|key_base64|value|value_base64)":`).FindAllStringSubmatch(l.raw, -1)
		var order []string
		for _, k := range keys {
			order = append(order, k[1])
		}
		if o := strings.Join(order, ","); !regexp.MustCompile(`^topic,partition,offset,timestamp,timestamp_ns,key(_base64)?,value(_base64)?$`).MatchString(o) {
			t.Errorf("fields %s: %s", o, l.raw)
		}
	}
	last := lines[len(lines)-1].record(t)
	if string(last.key) != "k\xff\x01" || string(last.value) != "v\xfe\n" {
		t.Errorf("--null record: key %q value %q", last.key, last.value)
	}
	// Control characters never appear raw in the JSON.
	for _, l := range lines {
		for _, c := range []byte(l.raw) {
			if c < 0x20 {
				t.Errorf("raw control byte %#x in %q", c, l.raw)
			}
		}
	}

	// read --format json | append --input json --keep-partition reproduces
	// every record byte for byte, in the same partitions and offsets.
	mustRun(t, dir, "", "create", "dst", "--partitions", "2")
	mustRun(t, dir, srcOut, "append", "dst", "--input", "json", "--keep-partition")
	dstOut := mustRun(t, dir, "", "read", "dst", "--format", "json").stdout
	if a, b := normalize(srcOut, "src"), normalize(dstOut, "dst"); a != b {
		t.Errorf("copy differs:\n src %s\n dst %s", a, b)
	}
	for p := range 2 {
		a := mustRun(t, dir, "", "read", "src", "--format", "raw", "--partition", fmt.Sprint(p)).stdout
		b := mustRun(t, dir, "", "read", "dst", "--format", "raw", "--partition", fmt.Sprint(p)).stdout
		if a != b {
			t.Errorf("partition %d raw values differ: %q vs %q", p, a, b)
		}
	}
	// A second round trip changes nothing either.
	mustRun(t, dir, "", "create", "dst2", "--partitions", "2")
	mustRun(t, dir, dstOut, "append", "dst2", "--input", "json", "--keep-partition")
	if a, b := normalize(srcOut, "src"), normalize(mustRun(t, dir, "", "read", "dst2", "--format", "json").stdout, "dst2"); a != b {
		t.Errorf("second copy differs:\n src %s\n dst %s", a, b)
	}

	// Without --keep-partition the partition field is ignored: keyed
	// records are routed by key, so the same set of records arrives, keyed
	// ones in their key's partition.
	mustRun(t, dir, "", "create", "routed", "--partitions", "3")
	mustRun(t, dir, srcOut, "append", "routed", "--input", "json")
	routed := readRecords(t, dir, "routed")
	srcRecs := readRecords(t, dir, "src")
	set := func(rs []record) []string {
		var s []string
		for _, r := range rs {
			s = append(s, fmt.Sprintf("%v %q %q", r.key == nil, r.key, r.value))
		}
		sort.Strings(s)
		return s
	}
	if a, b := set(srcRecs), set(routed); !equalStrings(a, b) {
		t.Errorf("records differ:\n src %q\n routed %q", a, b)
	}
	for _, r := range routed {
		if r.key != nil && r.partition != fnvPartition(string(r.key), 3) {
			t.Errorf("key %q in partition %d", r.key, r.partition)
		}
	}
}

// TestJSONFromOtherTools: --input json accepts what other tools print
// of read's fields: any field order and spacing, fields left out. (A field
// read does not print is refused: TestAppendStrictJSON.)
func TestJSONFromOtherTools(t *testing.T) {
	dir := newTopic(t, 1)
	in := `{"value":"a","key":"k","topic":"elsewhere","offset":99}` + "\n" +
		`{"key":null,"value":"b"}` + "\n" +
		`{ "value" : "c\u00e9\ud83d\ude00" }` + "\r\n"
	mustRun(t, dir, in, "append", "t", "--input", "json")
	recs := readRecords(t, dir, "t")
	if len(recs) != 3 || string(recs[0].key) != "k" || string(recs[0].value) != "a" || recs[0].offset != 0 ||
		recs[1].key != nil || string(recs[1].value) != "b" || string(recs[2].value) != "cé😀" {
		t.Errorf("records: %+v", recs)
	}
}
