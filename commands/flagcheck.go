package commands

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// typedFlag is a flag of the command line and how the user spelt it
// ("-n" for --lines), so that errors name it that way.
type typedFlag struct {
	flag cli.Flag
	as   string
}

// checkFlags goes over a command line as normalizeArgs returns it before
// urfave/cli parses it. It refuses a flag the command does not have,
// naming it as typed ("-p0", not "--p0") and where the letter means
// something else; and an integer value that is not a plain decimal
// number: the flag package under urfave/cli parses them in base 0, so
// "--partition 010" would read partition 8, "0x10" 16 and "1_0" 10, while
// a person means ten or made a typo. It returns the flags given, as
// typed.
func checkFlags(app *cli.App, args []string) ([]typedFlag, error) {
	flags := slices.Concat(app.Flags, []cli.Flag{cli.HelpFlag, cli.VersionFlag})
	var typed []typedFlag
	var cmd *cli.Command
	path := []string{app.Name}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !isFlag(a) {
			// The command's name, or a subcommand's (kafka export): their
			// flags count from here on.
			var next *cli.Command
			if cmd == nil {
				next = app.Command(a)
			} else {
				next = cmd.Command(a)
			}
			if next == nil {
				continue
			}
			if next.SkipFlagParsing {
				break
			}
			cmd, path = next, append(path, next.Name)
			flags = slices.Concat(app.Flags, cmd.Flags, []cli.Flag{cli.HelpFlag})
			continue
		}
		name, inline := flagName(a)
		dashes := a[:len(a)-len(strings.TrimLeft(a, "-"))]
		f := lookupFlag(flags, a)
		if f == nil {
			return typed, usagef("unknown flag %s%s (see '%s --help')%s", dashes, name, strings.Join(path, " "), elsewhere(app, name))
		}
		typed = append(typed, typedFlag{flag: f, as: dashes + name})
		n := flagSpan(flags, args, i)
		if isIntFlag(f) && (inline || n == 2) {
			v := args[i+n-1]
			if inline {
				v = a[strings.IndexByte(a, '=')+1:]
			}
			if !isDecimal(v) {
				return typed, usagef("invalid value %q for %s%s: write a decimal number (no leading zeros, no 0x)", v, dashes, name)
			}
		}
		i += n - 1
	}
	return typed, nil
}

// elsewhere says what a one-letter flag a command lacks means in the
// commands that have it: "-f" is --follow in tail and kafka.
func elsewhere(app *cli.App, name string) string {
	if len(name) != 1 {
		return ""
	}
	var where []string
	long := ""
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if f := lookupFlag(c.Flags, "-"+name); f != nil && !c.Hidden {
				long = f.Names()[0]
				where = append(where, prefix+c.Name)
			}
			walk(prefix+c.Name+" ", c.Subcommands)
		}
	}
	walk("", app.Commands)
	if len(where) == 0 || len(long) == 1 {
		return ""
	}
	const shown = 3
	more := ""
	if len(where) > shown {
		more = fmt.Sprintf(" and %d more", len(where)-shown)
		where = where[:shown]
	}
	return fmt.Sprintf("; -%s is --%s in %s%s", name, long, strings.Join(where, ", "), more)
}

// asTyped rewrites an error line to name each flag the user gave the way
// they spelt it: "--count must be 0 or more" after "-c -5", "--lines"
// for the "-n" of a message after "--lines -1", and the "-lines" of the
// flag package's own messages as typed too.
func asTyped(line string, typed []typedFlag) string {
	for _, t := range typed {
		for _, n := range t.flag.Names() {
			spellings := []string{"-" + n}
			if len(n) > 1 {
				spellings = []string{"--" + n, "-" + n}
			}
			for _, s := range spellings {
				if s != t.as {
					line = replaceFlag(line, s, t.as)
				}
			}
		}
	}
	return line
}

// replaceFlag replaces the flag spelling old in line, where it stands as
// a word of its own, with new.
func replaceFlag(line, old, new string) string {
	var b strings.Builder
	for {
		i := strings.Index(line, old)
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		end := i + len(old)
		before := i == 0 || strings.IndexByte(" ('\"", line[i-1]) >= 0
		after := end == len(line) || !isNameByte(line[end])
		b.WriteString(line[:i])
		if before && after {
			b.WriteString(new)
		} else {
			b.WriteString(old)
		}
		line = line[end:]
	}
}

func isNameByte(c byte) bool {
	return c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIntFlag(f cli.Flag) bool {
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return true
	}
	return false
}

// isDecimal: an optional sign, then "0" or digits not starting with 0.
func isDecimal(s string) bool {
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
