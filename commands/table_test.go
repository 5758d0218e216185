package commands

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fitting steps, in order: times to the second, columns dropped by
// priority while narrowing the others cannot make room, then cells of the
// shortenable columns cut in the middle; a table that fits is left whole.
func TestTableLayoutFit(t *testing.T) {
	l := tableLayout{header: []string{"NAME", "A", "B", "WHEN"}, drop: []string{"B", "A"}, shorten: []string{"NAME"}}
	const when = "2026-12-01T10:04:05.123456789Z"
	render := func(rows [][]string, wide bool) string {
		var b bytes.Buffer
		if err := l.render(&b, rows, wide); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	checkWidth := func(table string) {
		for _, line := range strings.Split(strings.TrimSuffix(table, "\n"), "\n") {
			if n := utf8.RuneCountInString(line); n != tableWidth {
				t.Errorf("line of %d columns, want %d: %q", n, tableWidth, line)
			}
		}
	}
	narrow := render([][]string{{"n", "1", "2", when}}, false)
	if !strings.Contains(narrow, "| n    | 1 | 2 | "+when+" |") {
		t.Errorf("a table that fits was changed:\n%s", narrow)
	}
	// A long name: the time to the second, then the name cut; A and B stay.
	name := strings.Repeat("y", 100) + "-end"
	got := render([][]string{{name, "1", "2", when}, {"short", "1", "2", "-"}}, false)
	checkWidth(got)
	if !strings.Contains(got, "| 1 | 2 | 2026-12-01 10:04:05 |") || !strings.Contains(got, "yy..yy") || !strings.Contains(got, "-end |") || !strings.Contains(got, "| short ") {
		t.Errorf("104-character name:\n%s", got)
	}
	// A wide B, which cannot be narrowed: it goes, A stays.
	b := strings.Repeat("b", 60)
	got = render([][]string{{"n", "1", b, when}}, false)
	if strings.Contains(got, b) || !strings.Contains(got, "| n    | 1 | 2026-12-01 10:04:05 |") {
		t.Errorf("a wide B:\n%s", got)
	}
	// Wider still with a long name: B goes, then the name is cut.
	got = render([][]string{{name, "1", b, when}}, false)
	checkWidth(got)
	if strings.Contains(got, b) || !strings.Contains(got, "| 1 | 2026-12-01 10:04:05 |") {
		t.Errorf("a wide B and a long name:\n%s", got)
	}
	if whole := render([][]string{{name, "1", b, when}}, true); !strings.Contains(whole, "| "+name+" | 1 | "+b+" | "+when+" |") {
		t.Errorf("--wide:\n%s", whole)
	}
}

// Free text leaves a table too wide and is printed under it, whole, one
// line per row that has any; dropFirst drops before cutting; two long
// columns are cut to the same width.
func TestTableLayoutBelow(t *testing.T) {
	render := func(l tableLayout, rows [][]string) string {
		var b bytes.Buffer
		if err := l.render(&b, rows, false); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	notes := tableLayout{header: []string{"TOPIC", "P", "N", "NOTE", "PATH"}, below: []string{"NOTE", "PATH"}, keyCols: 2}
	if got := render(notes, [][]string{{"t", "0", "1", "short", "-"}}); !strings.Contains(got, "| t     | 0 | 1 | short | -    |\n") || strings.Contains(got, "t/0:") {
		t.Errorf("a table that fits was changed:\n%s", got)
	}
	note := strings.Repeat("a long note ", 8)
	got := render(notes, [][]string{{"t", "0", "1", note, "/a/path"}, {"t", "1", "2", "-", "-"}, {"t", "2", "3", "-", "/b"}})
	want := "| TOPIC | P | N |\n+-------+---+---+\n| t     | 0 | 1 |\n| t     | 1 | 2 |\n| t     | 2 | 3 |\n+-------+---+---+\n" +
		"t/0: " + note + "; path: /a/path\nt/2: path: /b\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("got:\n%s\nwant it to end in:\n%s", got, want)
	}

	long := strings.Repeat("n", 70)
	drop := tableLayout{header: []string{"NAME", "B"}, drop: []string{"B"}, dropFirst: true, shorten: []string{"NAME"}}
	if got := render(drop, [][]string{{long, "bbbbbbbbbb"}}); !strings.Contains(got, "| "+long+" |\n") {
		t.Errorf("dropFirst: B not dropped before the name was cut:\n%s", got)
	}
	drop.dropFirst = false
	if got := render(drop, [][]string{{long, "bbbbbbbbbb"}}); !strings.Contains(got, "bbbbbbbbbb") || strings.Contains(got, long) {
		t.Errorf("without dropFirst: the name is cut first:\n%s", got)
	}

	two := tableLayout{header: []string{"FROM", "TO"}, shorten: []string{"FROM", "TO"}}
	got = render(two, [][]string{{strings.Repeat("f", 200), strings.Repeat("t", 90)}})
	if line := strings.Split(got, "\n")[3]; utf8.RuneCountInString(line) != tableWidth || max(strings.Count(line, "f")-strings.Count(line, "t"), strings.Count(line, "t")-strings.Count(line, "f")) > 1 {
		t.Errorf("two long columns not cut alike:\n%s", got)
	}
}

func TestShortenCell(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abcdefghij", 10, "abcdefghij"},
		{"abcdefghij", 8, "abc..hij"},
		{"abcdefghij", 7, "abc..ij"},
		{"äöüäöüäöüä", 6, "äö..üä"}, // characters, not bytes
	} {
		if got := shortenCell(tc.in, tc.n); got != tc.want {
			t.Errorf("shortenCell(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// Every line of every table the commands print by default fits in 80
// columns, on a data directory with long names, a long reason and long
// paths; --wide prints them whole.
func TestTablesFit80Columns(t *testing.T) {
	dir := t.TempDir()
	long := "orders-" + strings.Repeat("europe-west-", 12) + "eu"
	mustRun(t, dir, "", "create", long, "--partitions", "12")
	mustRun(t, dir, "", "create", "t")
	for p := range 12 {
		mustRun(t, dir, strings.Repeat("a record\n", 3), "append", long, "--partition", itoa(p))
	}
	mustRun(t, dir, "a\nb\nc\n", "append", "t")
	rcTear(t, dir, "t", 0, 3)
	group := "billing-" + strings.Repeat("reports-", 8) + "eu"
	mustRun(t, dir, "", "read", long, "--group", group, "--count", "5")
	plan := filepath.Join(t.TempDir(), "moves.json")
	other := filepath.Join(t.TempDir(), "another-data-directory")
	if err := os.WriteFile(plan, fmt.Appendf(nil, `{"version": 1, "moves": [{"topic": %q, "partition": 11, "from": %q, "to": %q}]}`, long, dir, other), 0o644); err != nil {
		t.Fatal(err)
	}
	fits := func(args ...string) {
		t.Helper()
		r := runIn(t, dir, nil, args...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d: %s", args, r.code, r.stderr)
		}
		tableLines := 0
		for _, line := range strings.Split(r.stdout, "\n") {
			if !strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "+") {
				continue // a title or a footnote, not the table
			}
			tableLines++
			if n := utf8.RuneCountInString(line); n > tableWidth {
				t.Errorf("%q: a line of %d columns:\n%s", args, n, line)
			}
		}
		if tableLines == 0 {
			t.Errorf("%q: no table:\n%s", args, r.stdout)
		}
	}
	// Before recover repairs it: the plan, with a note and a path.
	fits("recover", "t", "--dry-run")
	mustRun(t, dir, "", "recover", "t")
	for _, args := range [][]string{
		{"describe"},
		{"describe", long, "--partition", "11"},
		{"topics"},
		{"verify-crc"},
		{"verify-crc", dir + "/" + long},
		{"quarantine", "list"},
		{"dump-index", long, "--partition", "3"},
		{"retention-sweep", long, "--retention-bytes", "1", "--dry-run"},
		{"groups"},
		{"groups", "describe", group},
		{"groups", "reset", group, "--to-earliest", "--dry-run"},
		{"describe", "--groups"},
		{"reassign", "--plan", plan, "--dry-run"},
		{"reassign", "--plan", plan, "--execute"},
		{"copy-partition", long, "3", "--to", filepath.Join(other, strings.Repeat("deeper/", 6))},
	} {
		fits(args...)
	}

	for _, args := range [][]string{{"describe", long}, {"topics"}, {"verify-crc", long}, {"quarantine", "list"}, {"groups"}, {"reassign", "--plan", plan, "--verify"}} {
		r := runIn(t, dir, nil, append(args, "--wide")...)
		if r.code != 0 {
			t.Errorf("%q --wide: exit %d\n%s", args, r.code, r.stdout)
		}
		widest := 0
		for _, line := range strings.Split(r.stdout, "\n") {
			widest = max(widest, utf8.RuneCountInString(line))
		}
		if widest <= tableWidth {
			t.Errorf("%q --wide: nothing wider than %d columns:\n%s", args, tableWidth, r.stdout)
		}
	}
}

func TestWrapCell(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 12, "short"},
		{"incomplete record at the end of the active segment", 20, "incomplete record at\nthe end of the\nactive segment"},
		{"a verylongwordindeed b", 8, "a\nverylong\nwordinde\ned b"},
		{"", 5, ""},
	} {
		if got := wrapCell(tc.in, tc.n); got != tc.want {
			t.Errorf("wrapCell(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
