package commands

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// A flag or argument that takes one of a closed set of values has one
// table of them, a choices: its parser looks a value up there, and its
// --help text, the man pages, the completion scripts and docs/cli.md's
// "Flag values" (which TestCLIDocFlagValues holds to it) are made from it.
//
// urfave/cli v2 has no enumerated flag. A cli.GenericFlag whose Value
// checks in Set refuses a bad value while parsing, but cli wraps that
// error as `invalid value "x" for flag -format: ...` and reports it before
// the command checks its arguments, which changes both the message and
// which of two mistakes is named; a flag's Action runs later but only
// validates, so the command would look the value up a second time. A
// choiceFlag is a plain StringFlag that carries its table's names, and the
// command's parser turns the string into its value with parseChoice.

// choice is one value of a closed set.
type choice[T any] struct {
	name    string // as typed
	value   T      // what the command makes of it
	meaning string // for --help; "" when the name says it all
}

// choices is a closed set of values, in the order help lists them.
type choices[T any] []choice[T]

func (cs choices[T]) names() []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.name
	}
	return names
}

// list is the names as a sentence lists them: "exit, batch or never".
func (cs choices[T]) list() string {
	return orList(cs.names())
}

// described is list with each name's meaning after it, for --help.
func (cs choices[T]) described() string {
	items := make([]string, len(cs))
	for i, c := range cs {
		items[i] = c.name
		if c.meaning != "" {
			items[i] += " (" + c.meaning + ")"
		}
	}
	return orList(items)
}

// lookup is the value named name.
func (cs choices[T]) lookup(name string) (T, bool) {
	for _, c := range cs {
		if c.name == name {
			return c.value, true
		}
	}
	var zero T
	return zero, false
}

// flag is the flag --name taking these values, def when not given; its
// usage is intro (which holds the `PLACEHOLDER`), a colon and the values
// described.
func (cs choices[T]) flag(name, def, intro string) *choiceFlag {
	return &choiceFlag{StringFlag: &cli.StringFlag{Name: name, Value: def, Usage: intro + ": " + cs.described()}, values: cs.names()}
}

// parseChoice is the value of the choice flag name of c, or a usage error
// listing the values.
func parseChoice[T any](c *cli.Context, name string, cs choices[T]) (T, error) {
	s := c.String(name)
	v, ok := cs.lookup(s)
	if !ok {
		return v, usagef("--%s must be %s, not %q", name, cs.list(), s)
	}
	return v, nil
}

// choiceFlag is a string flag whose values are a closed set; the man
// pages and completions read them through valueNames.
type choiceFlag struct {
	*cli.StringFlag
	values []string
}

func (f *choiceFlag) valueNames() []string { return f.values }

// orList joins items as a sentence does: "a", "a or b", "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
