package commands

import (
	"bytes"
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
	mustRun(t, dir, "", "recover", "t")
	for _, args := range [][]string{
		{"describe"},
		{"describe", long, "--partition", "11"},
		{"topics"},
		{"verify-crc"},
		{"verify-crc", dir + "/" + long},
		{"quarantine", "list"},
		{"dump-index", long, "--partition", "3"},
	} {
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
	for _, args := range [][]string{{"describe", long}, {"topics"}, {"verify-crc", long}, {"quarantine", "list"}} {
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
