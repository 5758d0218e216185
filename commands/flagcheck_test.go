package commands

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// shortFlags maps each one-letter flag of the visible commands to the
// long names it stands for and the commands having it ("kafka export").
func shortFlags(app *cli.App) map[string]map[string][]string {
	m := map[string]map[string][]string{}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			for _, f := range c.Flags {
				names := f.Names()
				for _, n := range names {
					if len(n) != 1 {
						continue
					}
					long := names[0]
					if m[n] == nil {
						m[n] = map[string][]string{}
					}
					m[n][long] = append(m[n][long], prefix+c.Name)
				}
			}
			walk(prefix+c.Name+" ", c.Subcommands)
		}
	}
	walk("", app.Commands)
	return m
}

// TestShortFlagsOneMeaning: a one-letter flag stands for the same long
// flag in every command that has it, and README's table of short flags
// lists exactly those, with the commands having them.
func TestShortFlagsOneMeaning(t *testing.T) {
	app := NewApp(nil, nil, nil)
	shorts := shortFlags(app)
	for short, longs := range shorts {
		if len(longs) > 1 {
			t.Errorf("-%s means %v", short, longs)
		}
	}
	for _, f := range app.Flags {
		for _, n := range f.Names()[1:] {
			if _, ok := shorts[n]; ok && len(n) == 1 {
				t.Errorf("-%s is a global flag and a command's", n)
			}
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^  \\| `-(\\w)[^`]*` \\| (`--([\\w-]+)`|[^|]+) \\| ([^|]+) \\|$")
	listed := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		short, long, in := m[1], m[3], strings.TrimSpace(m[4])
		listed[short] = true
		if in == "every command" || in == "`seglog` itself" {
			continue // the global ones, checked above
		}
		if long == "" {
			long = short // -F: a flag with no long name
		}
		got, ok := shorts[short][long]
		if !ok {
			t.Errorf("README: -%s is --%s in %s; the code says %v", short, long, in, shorts[short])
			continue
		}
		if want := strings.Split(in, ", "); !slices.Equal(got, want) {
			t.Errorf("README: -%s (--%s) is in %q; the code has it in %q", short, long, want, got)
		}
	}
	for short := range shorts {
		if !listed[short] {
			t.Errorf("README's table of short flags lacks -%s (%v)", short, shorts[short])
		}
	}
	for _, global := range []string{"d", "q", "h", "v"} {
		if !listed[global] {
			t.Errorf("README's table of short flags lacks -%s", global)
		}
	}
}

// TestAttachedShortValues: a one-letter flag takes its value attached,
// as tail and head do: -n1 is -n 1.
func TestAttachedShortValues(t *testing.T) {
	dir := newDataDir(t)
	for _, c := range []struct {
		attached, apart []string
	}{
		{[]string{"tail", "t", "-n1"}, []string{"tail", "t", "-n", "1"}},
		{[]string{"read", "t", "-c1"}, []string{"read", "t", "-c", "1"}},
		{[]string{"read", "t", "-p0", "-o-2"}, []string{"read", "t", "-p", "0", "-o", "-2"}},
		{[]string{"read", "-c1", "t"}, []string{"read", "-c", "1", "t"}},
		{[]string{"verify-crc", "t", "-j4", "-p0"}, []string{"verify-crc", "t", "-j", "4", "-p", "0"}},
	} {
		want := runIn(t, dir, nil, c.apart...)
		if want.stdout == "" && want.stderr == "" {
			t.Fatalf("seglog %q: exit %d and no output", c.apart, want.code)
		}
		if got := runIn(t, dir, nil, c.attached...); got != want {
			t.Errorf("seglog %q: exit %d, stdout %q, stderr %q; want what %q gives: %q", c.attached, got.code, got.stdout, got.stderr, c.apart, want.stdout)
		}
	}
	// Only a number is taken attached: -dash is no --data-dir ash, and
	// -tfoo no template; a topic named -dash goes after "--".
	for _, args := range [][]string{{"create", "-dash"}, {"read", "t", "-tfoo"}} {
		r := runIn(t, dir, nil, args...)
		if r.code != exitUsage {
			t.Errorf("seglog %q: exit %d, want 2", args, r.code)
		}
		wantOneErrorLine(t, r.stderr, "unknown flag "+args[len(args)-1])
	}
	// A bool letter takes nothing attached, and -0 is append's NUL flag.
	r := runIn(t, dir, strings.NewReader("x\x00"), "append", "t", "-p1", "-0")
	if r.code != 0 || strings.Join(readValues(t, dir, "t", 1), ",") != "x" {
		t.Errorf("append -p1 -0: exit %d, %s; partition 1 %q", r.code, r.stderr, readValues(t, dir, "t", 1))
	}
}

// TestFlagErrorsAsTyped: an error names a flag the way the user typed it,
// and an unknown letter says what it means where it exists.
func TestFlagErrorsAsTyped(t *testing.T) {
	dir := newDataDir(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"read", "t", "-c", "-5"}, []string{"-c must be 0 or more, not -5"}},
		{[]string{"read", "t", "--count", "-5"}, []string{"--count must be 0 or more, not -5"}},
		{[]string{"tail", "t", "-n", "-1"}, []string{"-n must be 0 or more, not -1"}},
		{[]string{"tail", "t", "--lines", "-1"}, []string{"--lines must be 0 or more, not -1"}},
		{[]string{"tail", "t", "--lines"}, []string{"flag needs an argument: --lines"}},
		{[]string{"read", "t", "-p", "-3"}, []string{"-p must be 0 or more, not -3"}},
		{[]string{"read", "t", "--partition=-3"}, []string{"--partition must be 0 or more, not -3"}},
		{[]string{"read", "t", "-o", "soon"}, []string{`-o must be N, -N`, `not "soon"`}},
		{[]string{"read", "t", "-zz"}, []string{"unknown flag -zz (see 'seglog read --help')"}},
		{[]string{"read", "t", "--zz=1"}, []string{"unknown flag --zz (see 'seglog read --help')"}},
		{[]string{"kafka", "export", "t", "--zz"}, []string{"unknown flag --zz (see 'seglog kafka export --help')"}},
		{[]string{"read", "t", "-f", "json"}, []string{"unknown flag -f", "-f is --follow in tail, kafka export, kafka import"}},
		{[]string{"recover", "-n"}, []string{"unknown flag -n", "-n is --lines in tail"}},
		{[]string{"create", "u", "-p", "3"}, []string{"unknown flag -p", "-p is --partition in append, read, tail and ", " more"}},
		{[]string{"copy-partition", "t", "0", "--to", filepath.Join(t.TempDir(), "x"), "-f"}, []string{"unknown flag -f"}},
		{[]string{"recover", "--json=maybe"}, []string{`invalid boolean value "maybe" for --json`}},
	} {
		r := runIn(t, dir, nil, c.args...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("seglog %q: exit %d, stdout %q; want 2 and nothing", c.args, r.code, r.stdout)
		}
		wantOneErrorLine(t, r.stderr, c.want...)
	}
	if _, err := os.Stat(filepath.Join(dir, "u")); err == nil {
		t.Errorf("create u -p 3 made topic u")
	}
}

// TestLeadingZeros: every integer a command line holds is plain decimal:
// a leading zero or 0x is a usage error naming the flag, whichever the
// flag, never octal, hex or a silent decimal.
func TestLeadingZeros(t *testing.T) {
	dir := newDataDir(t)
	app := NewApp(nil, nil, nil)
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			line := append(slices.Clone(path), c.Name)
			for _, f := range c.Flags {
				if !isIntFlag(f) {
					continue
				}
				for _, name := range f.Names() {
					dashes := "--"
					if len(name) == 1 {
						dashes = "-"
					}
					for _, v := range []string{"010", "07", "0x10", "00"} {
						args := append(slices.Clone(line), dashes+name, v)
						r := runIn(t, dir, nil, args...)
						if r.code != exitUsage {
							t.Errorf("seglog %q: exit %d, want 2", args, r.code)
						}
						wantOneErrorLine(t, r.stderr, `"`+v+`"`, dashes+name+":", "decimal")
					}
				}
			}
			walk(line, c.Subcommands)
		}
	}
	walk(nil, app.Commands)

	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"read", "t", "--offset", "010"}, []string{`--offset must be N, -N (decimal, no leading zeros)`, `"010"`}},
		{[]string{"read", "t", "-o", "-010"}, []string{`-o must be N, -N (decimal, no leading zeros)`, `"-010"`}},
		{[]string{"kafka", "export", "t", "--brokers", "127.0.0.1:1", "--offset", "01"}, []string{`--offset must be N`, `"01"`}},
		{[]string{"copy-partition", "t", "01", "--to", out}, []string{`copy-partition: invalid partition "01"`}},
		{[]string{"import-partition", "t", "01"}, []string{`import-partition: invalid partition "01"`}},
		{[]string{"dump-index", "t", "-p", "0", "--segment", "010"}, []string{`--segment must be a segment's base offset (decimal, no leading zeros)`, `"010"`}},
		{[]string{"create", "u", "--segment-bytes", "010"}, []string{`--segment-bytes: invalid size "010": write a decimal number without leading zeros`}},
		{[]string{"append", "t", "--max-message-bytes", "01k"}, []string{`--max-message-bytes: invalid size "01k"`}},
	} {
		r := runIn(t, dir, nil, c.args...)
		if r.code != exitUsage {
			t.Errorf("seglog %q: exit %d, want 2; stderr %s", c.args, r.code, r.stderr)
		}
		wantOneErrorLine(t, r.stderr, c.want...)
	}
	// Zero itself, and a segment named by its file name's digits, are fine.
	for _, args := range [][]string{
		{"read", "t", "--offset", "0", "--partition", "0"},
		{"read", "t", "-o", "-0"},
		{"dump-index", "t", "-p", "0", "--segment", "00000000000000000000"},
		{"dump-index", "t", "-p", "0", "--segment", "0"},
		{"create", "u", "--segment-bytes", "0.5k", "--partitions", "1"},
	} {
		if r := runIn(t, dir, nil, args...); r.code != 0 {
			t.Errorf("seglog %q: exit %d, %s", args, r.code, r.stderr)
		}
	}
}
