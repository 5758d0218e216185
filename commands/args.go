package commands

import (
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// normalizeArgs rewrites a command line so urfave/cli, which stops parsing
// flags at the first positional argument, sees what docs/cli.md promises:
// flags anywhere (`read orders --offset 5` = `read --offset 5 orders`),
// global flags after the command name too, and "--" ending flags so that
// topics starting with '-' can be named. It returns
// [prog, global flags..., command, command flags..., "--", positionals...].
func normalizeArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	i := 1
	// Global flags before the command.
	for i < len(args) && isFlag(args[i]) {
		args = splitAttached(app.Flags, args, i)
		n := flagSpan(app.Flags, args, i)
		out = append(out, args[i:i+n]...)
		i += n
	}
	if i >= len(args) {
		return out
	}
	cmd := app.Command(args[i])
	// `kafka export`: the subcommand's arguments are handled as a
	// command's, global flags going before the command's name, also those
	// between the two names (`kafka -d DIR export`).
	var chain []string
	for cmd != nil && len(cmd.Subcommands) > 0 {
		j := i + 1
		for j < len(args) && isFlag(args[j]) {
			args = splitAttached(app.Flags, args, j)
			if !hasFlag(app.Flags, args[j]) {
				break
			}
			j += flagSpan(app.Flags, args, j)
		}
		if j >= len(args) || cmd.Command(args[j]) == nil {
			break
		}
		out = append(out, args[i+1:j]...)
		chain = append(chain, args[i])
		i = j
		cmd = cmd.Command(args[i])
	}
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return append(append(out, chain...), args[i:]...)
	}
	var cmdFlags, positional []string
	bare := false // pass the command's flags without the positionals
	for j := i + 1; j < len(args); {
		a := args[j]
		switch {
		case a == "--":
			positional = append(positional, args[j+1:]...)
			j = len(args)
		case isFlag(a):
			args = splitAttached(slices.Concat(app.Flags, cmd.Flags), args, j)
			if a = args[j]; hasFlag(app.Flags, a) {
				n := flagSpan(app.Flags, args, j)
				out = append(out, args[j:j+n]...)
				j += n
				continue
			}
			// Unknown flags stay with the command, which reports them.
			n := flagSpan(cmd.Flags, args, j)
			cmdFlags = append(cmdFlags, args[j:j+n]...)
			j += n
			// `read t --help` is read's help, not help on a topic "t"; and in
			// `append t --key` the value is missing: urfave/cli must say so
			// rather than take the "--" added below as the key.
			if hasFlag([]cli.Flag{cli.HelpFlag}, a) || j == len(args) && n == 1 && lacksValue(cmd.Flags, a) {
				bare = true
			}
		default:
			positional = append(positional, a)
			j++
		}
	}
	out = append(out, chain...)
	out = append(out, args[i])
	out = append(out, cmdFlags...)
	if len(positional) > 0 && !bare {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

// splitAttached splits args[i] when it is a one-letter flag among flags
// that takes a value with a number attached, as tail and head take them:
// "-n1" is "-n" "1", "-p0" "-p" "0", "-o-2" "-o" "-2". Only a number:
// "-dash" stays an unknown flag (a topic named so goes after "--"), not
// --data-dir ash. It returns args, a new slice when split.
func splitAttached(flags []cli.Flag, args []string, i int) []string {
	a := args[i]
	if len(a) < 3 || a[0] != '-' || a[1] == '-' {
		return args
	}
	if v := strings.TrimPrefix(a[2:], "-"); v == "" || v[0] < '0' || v[0] > '9' {
		return args
	}
	if f, ok := lookupFlag(flags, a[:2]).(cli.DocGenerationFlag); !ok || !f.TakesValue() {
		return args
	}
	return slices.Concat(args[:i], []string{a[:2], a[2:]}, args[i+1:])
}

// lacksValue: a, given last, is a flag that takes a value and has none.
func lacksValue(flags []cli.Flag, a string) bool {
	f, ok := lookupFlag(flags, a).(cli.DocGenerationFlag)
	_, inline := flagName(a)
	return ok && f.TakesValue() && !inline
}

// isFlag: "-x", "--xyz", but not "-" (stdin) or "--".
func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' && a != "--" }

func flagName(a string) (name string, inlineValue bool) {
	name = strings.TrimLeft(a, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		return name[:i], true
	}
	return name, false
}

func lookupFlag(flags []cli.Flag, a string) cli.Flag {
	name, _ := flagName(a)
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func hasFlag(flags []cli.Flag, a string) bool { return lookupFlag(flags, a) != nil }

// flagSpan is how many arguments the flag at args[i] takes up: 2 when it
// takes a value given as the next argument, else 1.
func flagSpan(flags []cli.Flag, args []string, i int) int {
	f := lookupFlag(flags, args[i])
	if _, inline := flagName(args[i]); inline || f == nil || i+1 >= len(args) {
		return 1
	}
	if v, ok := f.(cli.DocGenerationFlag); ok && v.TakesValue() {
		return 2
	}
	return 1
}

// helpArgs turns 'seglog help [COMMAND [SUBCOMMAND]]' into the --help
// request it stands for ('seglog help kafka export' is 'seglog kafka
// export --help'); a name that is no command is the usage error an
// unknown command is. Other command lines are returned as they are.
func helpArgs(app *cli.App, args []string) ([]string, error) {
	i := 1
	for i < len(args) && isFlag(args[i]) {
		i += flagSpan(app.Flags, args, i)
	}
	if i >= len(args) || args[i] != "help" {
		return args, nil
	}
	out := append([]string{}, args[:i]...)
	var names []string
	for j := i + 1; j < len(args); j++ {
		switch a := args[j]; {
		case a == "--":
		case hasFlag(app.Flags, a):
			n := flagSpan(app.Flags, args, j)
			out = append(out, args[j:j+n]...)
			j += n - 1
		case isFlag(a) && !hasFlag([]cli.Flag{cli.HelpFlag}, a):
			return nil, usagef("unknown flag %s (see 'seglog --help')", a)
		case !isFlag(a):
			names = append(names, a)
		}
	}
	cmds := app.Commands
	for n, name := range names {
		var cmd *cli.Command
		for _, c := range cmds {
			if !c.Hidden && c.HasName(name) {
				cmd = c
			}
		}
		if cmd == nil {
			return nil, usagef("help: unknown command %q (see '%s --help')", strings.Join(names[:n+1], " "),
				strings.Join(append([]string{app.Name}, names[:n]...), " "))
		}
		cmds = cmd.Subcommands
	}
	return append(append(out, names...), "--help"), nil
}

// topicPartitionArgs returns a command's TOPIC PARTITION arguments.
func topicPartitionArgs(c *cli.Context) (string, int, error) {
	name := c.Command.Name
	if c.NArg() != 2 {
		return "", 0, usagef("%s: TOPIC and PARTITION expected, got %d arguments (see 'seglog %s --help')", name, c.NArg(), name)
	}
	topic := c.Args().Get(0)
	if err := checkTopicName(topic); err != nil {
		return "", 0, err
	}
	arg := c.Args().Get(1)
	part, err := strconv.Atoi(arg)
	if err != nil || part < 0 || strings.TrimLeft(arg, "0123456789") != "" || !isDecimal(arg) {
		return "", 0, usagef("%s: invalid partition %q (a partition number in decimal: 0, 1, ...)", name, arg)
	}
	return topic, part, nil
}

// targetArg returns the single TOPIC or PARTITION-DIR argument of a
// command that only reads: one holding a '/' names a directory and is not
// checked as a topic name.
func targetArg(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return topicArg(c)
	}
	arg := c.Args().First()
	if strings.Contains(arg, "/") {
		return arg, nil
	}
	return arg, checkTopicName(arg)
}
