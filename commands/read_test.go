package commands

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fixture is a partition directory of logstore's golden set, written from
// the spec by an independent writer (see logstore/golden_test.go).
func fixture(name string) string {
	return filepath.Join("..", "testdata", "golden", name) + string(filepath.Separator)
}

// The clean fixture has keyed, keyless, empty and binary records in three
// segments; its read output in every format is pinned.
func TestReadGoldenOutputs(t *testing.T) {
	for _, tc := range []struct{ golden, args string }{
		{"read-clean-dump.txt", "--format dump"},
		{"read-clean-json.txt", "--format json"},
		{"read-clean-value.txt", "--format value"},
		{"read-clean-template-kcat.txt", `--template Topic\t%t\tPartition\t%p\tOffset\t%o\tKey\t%k\tValue\t%s\tTs\t%T\n`},
		{"read-clean-template-lengths.txt", `--template %o@%b:%K/%S/%c\n`},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			r := run(t, nil, append([]string{"read", fixture("clean")}, strings.Fields(tc.args)...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			checkGolden(t, tc.golden, []byte(r.stdout))
		})
	}
}

// clean's records have timestamps 1700000000000000000 + i µs, except that
// offsets 2 and 3 share one.
func cleanTime(us int) string {
	return time.Unix(0, 1700000000000000000+int64(us)*1000).UTC().Format(time.RFC3339Nano)
}

func TestReadSinceUntil(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		offsets string
	}{
		{"since before the first", []string{"--since", "2023-01-01T00:00:00Z"}, "0 1 2 3 4 5 6 7 8"},
		{"since equal to a timestamp", []string{"--since", cleanTime(4)}, "5 6 7 8"},
		{"since equal to a shared timestamp", []string{"--since", cleanTime(2)}, "2 3 4 5 6 7 8"},
		{"since between two", []string{"--since", cleanTime(3)[:len(cleanTime(3))-1] + "5Z"}, "5 6 7 8"},
		{"since a segment's first", []string{"--since", cleanTime(3)}, "4 5 6 7 8"},
		{"since after the last", []string{"--since", cleanTime(8)}, ""},
		{"until equal to a timestamp", []string{"--until", cleanTime(2)}, "0 1 2 3"},
		{"until before the first", []string{"--until", "2023-01-01T00:00:00Z"}, ""},
		{"until after the last", []string{"--until", cleanTime(100)}, "0 1 2 3 4 5 6 7 8"},
		{"since and until", []string{"--since", cleanTime(1), "--until", cleanTime(5)}, "1 2 3 4 5 6"},
		{"since and offset: the later", []string{"--since", cleanTime(1), "--offset", "4"}, "4 5 6 7 8"},
		{"since and count", []string{"--since", cleanTime(1), "--count", "2"}, "1 2"},
		{"key", []string{"--key", "user-1"}, "0 6"},
		{"key and since", []string{"--key", "user-1", "--since", cleanTime(1)}, "6"},
		{"since as epoch ms", []string{"--since", "@1700000000000"}, "0 1 2 3 4 5 6 7 8"},
		{"kcat's s@", []string{"--offset", "s@1700000000000"}, "0 1 2 3 4 5 6 7 8"},
		{"kcat's e@ before the first", []string{"--offset", "e@1699999999999"}, ""},
		{"kcat's s@ and --until", []string{"--offset", "s@1700000000000", "--until", cleanTime(1)}, "0 1"},
		{"until after since", []string{"--since", cleanTime(1), "--until", "+3us"}, "1 2 3 4 5"},
		{"since a date", []string{"--since", "2023-11-14"}, "0 1 2 3 4 5 6 7 8"},
		{"until a date", []string{"--until", "2023-11-14"}, ""},
		{"an instant's window", []string{"--since", cleanTime(2), "--until", cleanTime(2)}, "2 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"read", fixture("clean"), "--template", `%o\n`}, tc.args...)
			r := run(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := strings.Join(strings.Fields(r.stdout), " "); got != tc.offsets {
				t.Errorf("offsets %q, want %q", got, tc.offsets)
			}
		})
	}
}

// A duration means that long ago: records appended now are within 1h and
// none are within the future.
func TestReadSinceDurationAgo(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "a\nb\n", "append", "t", "--create")
	if r := mustRun(t, dir, "", "read", "t", "--since", "1h"); r.stdout != "a\nb\n" {
		t.Errorf("--since 1h: %q", r.stdout)
	}
	if r := mustRun(t, dir, "", "read", "t", "--until", "1h"); r.stdout != "" {
		t.Errorf("--until 1h: %q", r.stdout)
	}
}

// A window ending before it starts, and time forms that cannot be told
// apart, are usage errors naming what was typed.
func TestReadTimeWindowErrors(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"--since", "30m", "--until", "2h"}, []string{"--since 30m (", ") is after --until 2h (", "Z)"}},
		{[]string{"--since", "2025-12-02", "--until", "2025-12-01"}, []string{"--since 2025-12-02 (2025-12-02T00:00:00Z) is after --until 2025-12-01 (2025-12-01T00:00:00Z)"}},
		{[]string{"--offset", "s@1764633600000", "--until", "@1764547200000"}, []string{"--offset s@1764633600000 (2025-12-02T00:00:00Z) is after --until @1764547200000"}},
		{[]string{"--since", "1764547200000"}, []string{"--since", "ambiguous", "@1764547200000"}},
		{[]string{"--until", "+1h"}, []string{"--until +1h", "give --since too"}},
		{[]string{"--offset", "s@1", "--since", "1h"}, []string{"s@1", "--since", "exclude each other"}},
		{[]string{"--offset", "e@x"}, []string{`invalid time "@x"`, "milliseconds"}},
		{[]string{"--since", "1h", "--until", "+1x"}, []string{"--until", `"1x"`}},
	} {
		r := run(t, nil, append([]string{"read", fixture("clean")}, tc.args...)...)
		if r.code != 2 || r.stdout != "" {
			t.Errorf("read %q: exit %d, stdout %q; want 2 and nothing", tc.args, r.code, r.stdout)
		}
		wantOneErrorLine(t, r.stderr, tc.wants...)
	}
}

func TestReadCountIsTotalAcrossPartitions(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "t", "--partitions", "3")
	for p := 0; p < 3; p++ {
		mustRun(t, dir, fmt.Sprintf("p%d-a\np%d-b\n", p, p), "append", "t", "--partition", fmt.Sprint(p))
	}
	r := mustRun(t, dir, "", "read", "t", "--count", "3")
	if r.stdout != "p0-a\np0-b\np1-a\n" {
		t.Errorf("--count 3 over partitions: %q", r.stdout)
	}
	r = mustRun(t, dir, "", "read", "t", "--count", "3", "--offset", "-1")
	if r.stdout != "p0-b\np1-b\np2-b\n" {
		t.Errorf("--count 3 --offset -1: %q", r.stdout)
	}
}

func TestReadSkipCorrupt(t *testing.T) {
	dir := fixture("crc-flip-closed")
	plain := run(t, nil, "read", dir, "--template", `%o\n`)
	if plain.code != exitError {
		t.Fatalf("without --skip-corrupt: exit %d, want %d", plain.code, exitError)
	}
	wantLastErrorLine(t, plain.stderr, "corrupt record at byte 64", "00000000000000000000.log", "expected offset 2", "crc mismatch")
	skip := run(t, nil, "read", dir, "--template", `%o\n`, "--skip-corrupt")
	if skip.code != exitOK {
		t.Fatalf("--skip-corrupt: exit %d: %s", skip.code, skip.stderr)
	}
	if got := strings.Join(strings.Fields(skip.stdout), " "); !strings.HasPrefix(got, "0 1 3 ") {
		t.Errorf("--skip-corrupt printed offsets %q, want 0 1 then 3 on", got)
	}
	if !strings.Contains(skip.stderr, "seglog: warning: skipping corrupt record at byte 64") || !strings.Contains(skip.stderr, "expected offset 2") {
		t.Errorf("--skip-corrupt warning: %q", skip.stderr)
	}
	if q := run(t, nil, "read", dir, "--skip-corrupt", "-q"); q.stderr != "" {
		t.Errorf("--quiet still warns: %q", q.stderr)
	}
}

func TestReadBadTimeAndTemplate(t *testing.T) {
	for _, args := range [][]string{
		{"--since", "yesterday"},
		{"--until", "2024-13-01T00:00:00Z"},
		{"--template", "%x"},
		{"--template", "%o", "--format", "json"},
		{"--format", "xml"},
	} {
		r := run(t, nil, append([]string{"read", fixture("clean")}, args...)...)
		if r.code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, r.code, exitUsage)
		}
		wantOneErrorLine(t, r.stderr)
	}
}

// read --offset N over several partitions reads from N in those that hold
// it and says which it skipped, with their ranges; when none holds it,
// the error names every partition's range, partitions in a row with the
// same one as one. --offset -N, beginning and end are as ever, and a
// --since window some partitions have no records in leaves those empty.
func TestReadOffsetAcrossPartitions(t *testing.T) {
	dir := newTopic(t, 5)
	mustRun(t, dir, "a0\na1\na2\na3\na4\na5\na6\na7\na8\na9\n", "append", "t", "--partition", "0")
	for _, p := range []string{"1", "2", "3"} {
		mustRun(t, dir, "b0\nb1\nb2\n", "append", "t", "--partition", p)
	}
	r := runIn(t, dir, nil, "read", "t", "--offset", "5")
	if r.code != 0 || r.stdout != "a5\na6\na7\na8\na9\n" {
		t.Errorf("read --offset 5: exit %d, stdout %q", r.code, r.stdout)
	}
	if want := "seglog: warning: offset 5 is not in partitions 1-3 (0..2), 4 (no records, next offset 0) of t: reading the others from it\n"; r.stderr != want {
		t.Errorf("read --offset 5: stderr %q, want %q", r.stderr, want)
	}
	if r := runIn(t, dir, nil, "-q", "read", "t", "--offset", "5"); r.code != 0 || r.stderr != "" {
		t.Errorf("read -q --offset 5: exit %d, stderr %q; want the warning dropped", r.code, r.stderr)
	}
	r = runIn(t, dir, nil, "read", "t", "--offset", "2", "--template", "%p/%o %s\n")
	if r.code != 0 || r.stdout != "0/2 a2\n0/3 a3\n0/4 a4\n0/5 a5\n0/6 a6\n0/7 a7\n0/8 a8\n0/9 a9\n1/2 b2\n2/2 b2\n3/2 b2\n" ||
		!strings.Contains(r.stderr, "not in partition 4 (no records, next offset 0) of t") {
		t.Errorf("read --offset 2: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	r = runIn(t, dir, nil, "read", "t", "--offset", "50")
	if r.code != 1 || r.stdout != "" {
		t.Errorf("read --offset 50: exit %d, stdout %q; want 1 and nothing", r.code, r.stdout)
	}
	wantOneErrorLine(t, r.stderr, "offset 50 out of range for every partition of t: partitions 0 (0..9), 1-3 (0..2), 4 (no records, next offset 0)")

	// One partition, named or the only one: its own range, as before.
	r = runIn(t, dir, nil, "read", "t", "--partition", "1", "--offset", "5")
	if r.code != 1 {
		t.Errorf("read --partition 1 --offset 5: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, "offset 5 out of range for t/1: valid offsets are 0..2")

	if got := mustRun(t, dir, "", "read", "t", "--offset", "-1").stdout; got != "a9\nb2\nb2\nb2\n" {
		t.Errorf("read --offset -1: %q", got)
	}
	if r := mustRun(t, dir, "", "read", "t", "--offset", "end"); r.stdout != "" || r.stderr != "" {
		t.Errorf("read --offset end: %q, %q", r.stdout, r.stderr)
	}
	// A window no partition has records in: every partition empty.
	if r := mustRun(t, dir, "", "read", "t", "--since", "2100-01-01T00:00:00Z"); r.stdout != "" || r.stderr != "" {
		t.Errorf("read --since the future: %q, %q", r.stdout, r.stderr)
	}
	since := time.Now().UTC().Format(time.RFC3339Nano) // after every record so far
	mustRun(t, dir, "late\n", "append", "t", "--partition", "4")
	if r := mustRun(t, dir, "", "read", "t", "--since", since); r.stdout != "late\n" || r.stderr != "" {
		t.Errorf("read --since %s: %q, %q; want only partition 4's new record", since, r.stdout, r.stderr)
	}
}

// read -D '\0' gives back exactly what append --null took, values holding
// newlines included; a several-byte separator with \xNN escapes too.
func TestReadDelimiterReversesAppendNull(t *testing.T) {
	dir := t.TempDir()
	in := "line one\nline two\x00\x00\r\n\x00tab\there\x00"
	mustRun(t, dir, in, "append", "t", "--create", "--null")
	if r := mustRun(t, dir, "", "read", "t", "-D", `\0`); r.stdout != in {
		t.Errorf("read -D '\\0' = %q, want %q", r.stdout, in)
	}
	mustRun(t, dir, "a\x1e\x1fb\x1e\x1f", "append", "u", "--create", "--delimiter", `\x1e\x1f`)
	if r := mustRun(t, dir, "", "read", "u", "--delimiter", `\x1e\x1f`); r.stdout != "a\x1e\x1fb\x1e\x1f" {
		t.Errorf("read --delimiter '\\x1e\\x1f' = %q", r.stdout)
	}
	if r := mustRun(t, dir, "", "read", "u", "--delimiter", `\x1e\x1f`, "--format", "value"); r.stdout != "a\x1e\x1fb\x1e\x1f" {
		t.Errorf("read --delimiter with --format value = %q", r.stdout)
	}
}

func TestReadDelimiterErrors(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "a\n", "append", "t", "--create")
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"-D", `\0`, "--format", "json"}, []string{"-D", "--format value only"}},
		{[]string{"--delimiter", `\0`, "--format", "raw"}, []string{"--delimiter", "--format value only"}},
		{[]string{"-D", `\0`, "--template", `%s`}, []string{"-D", "--format value only"}},
		{[]string{"-D", `\q`}, []string{"-D", `unknown escape "\q"`}},
		{[]string{"-D", `\x4`}, []string{"-D", `incomplete \x escape`}},
		{[]string{"-D", ""}, []string{"-D", "must not be empty"}},
	} {
		r := runIn(t, dir, nil, append([]string{"read", "t"}, tc.args...)...)
		if r.code != 2 || r.stdout != "" {
			t.Errorf("read %q: exit %d, stdout %q; want 2 and nothing", tc.args, r.code, r.stdout)
		}
		wantOneErrorLine(t, r.stderr, tc.wants...)
	}
}

// read --merge prints every partition's records in timestamp order, ties
// by partition then offset, across more partitions than it keeps open at
// a time; with --since, --until, --key, --count and a group resuming
// where a merged read stopped.
func TestReadMerge(t *testing.T) {
	dir := t.TempDir()
	const partitions = mergeLive + 8
	mustRun(t, dir, "", "create", "t", "--partitions", strconv.Itoa(partitions))
	type rec struct {
		ts        int64
		partition int
		offset    int
		key       string
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var all []rec
	for p := range partitions {
		var in strings.Builder
		ts := int64(0)
		for o := range 1 + rng.IntN(12) {
			ts += int64(rng.IntN(4)) * 1e6 // whole ms for %T; ties within and across partitions
			key := fmt.Sprintf("k%d", rng.IntN(3))
			fmt.Fprintf(&in, `{"key":%q,"value":"v","timestamp_ns":%d}`+"\n", key, ts)
			all = append(all, rec{ts, p, o, key})
		}
		mustRun(t, dir, in.String(), "append", "t", "--input", "json", "--partition", strconv.Itoa(p))
	}
	slices.SortFunc(all, func(a, b rec) int {
		return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.partition, b.partition), cmp.Compare(a.offset, b.offset))
	})
	lines := func(rs []rec) string {
		var b strings.Builder
		for _, r := range rs {
			fmt.Fprintf(&b, "%d %d/%d %s\n", r.ts/1e6, r.partition, r.offset, r.key)
		}
		return b.String()
	}
	where := func(keep func(rec) bool) []rec {
		var rs []rec
		for _, r := range all {
			if keep(r) {
				rs = append(rs, r)
			}
		}
		return rs
	}
	const tmpl = `%T %p/%o %k\n`
	read := func(args ...string) string {
		r := mustRun(t, dir, "", append([]string{"read", "t", "--merge", "--template", tmpl}, args...)...)
		return r.stdout
	}
	if got, want := read(), lines(all); got != want {
		t.Errorf("read --merge:\n%s\nwant:\n%s", got, want)
	}
	if got, want := read("--count", "7"), lines(all[:7]); got != want {
		t.Errorf("read --merge --count 7:\n%s\nwant:\n%s", got, want)
	}
	if got, want := read("--key", "k1"), lines(where(func(r rec) bool { return r.key == "k1" })); got != want {
		t.Errorf("read --merge --key k1:\n%s\nwant:\n%s", got, want)
	}
	window := where(func(r rec) bool { return r.ts >= 3e6 && r.ts <= 6e6 })
	since, until := time.Unix(0, 3e6).UTC().Format(time.RFC3339Nano), time.Unix(0, 6e6).UTC().Format(time.RFC3339Nano)
	if got, want := read("--since", since, "--until", until), lines(window); got != want {
		t.Errorf("read --merge --since --until:\n%s\nwant:\n%s", got, want)
	}
	// A group stopped by --count in a merge resumes with the rest, in
	// order: each partition's position is after its last record printed.
	first := read("--group", "g", "--count", "10")
	rest := read("--group", "g")
	if got, want := first+rest, lines(all); got != want {
		t.Errorf("read --merge --group, in two runs:\n%s\nwant:\n%s", got, want)
	}
}

// A damaged record ends read --merge with exit status 1, after the records
// merged before it; --skip-corrupt goes on past it.
func TestReadMergeCorrupt(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "t", "--partitions", "2")
	mustRun(t, dir, `{"value":"a0","timestamp_ns":1000}`+"\n"+`{"value":"a1","timestamp_ns":4000}`+"\n", "append", "t", "--input", "json", "--partition", "0")
	mustRun(t, dir, `{"value":"b0","timestamp_ns":2000}`+"\n"+`{"value":"b1","timestamp_ns":3000}`+"\n"+`{"value":"b2","timestamp_ns":5000}`+"\n", "append", "t", "--input", "json", "--partition", "1")
	log := filepath.Join(dir, "t", "1", "00000000000000000000.log")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("b1"))
	b[i] ^= 0xff
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, dir, nil, "read", "t", "--merge")
	if r.code != 1 || r.stdout != "a0\nb0\n" {
		t.Errorf("read --merge over damage: exit %d, stdout %q; want 1 and a0 b0", r.code, r.stdout)
	}
	wantOneErrorLine(t, r.stderr, "t/1", "--skip-corrupt")
	r = runIn(t, dir, nil, "read", "t", "--merge", "--skip-corrupt")
	if r.code != 0 || r.stdout != "a0\nb0\na1\nb2\n" {
		t.Errorf("read --merge --skip-corrupt: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
