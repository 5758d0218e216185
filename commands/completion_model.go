package commands

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// What the completion scripts (completion_scripts.go) know of the app:
// its commands as the scripts name them, and how each flag value and
// argument completes.

// complCommand is a command as the completion scripts know it: by its
// name, or "parent-sub" for a subcommand ("kafka-export"), which the
// scripts make of "kafka export" as they read the command line.
type complCommand struct {
	key    string
	parent string // "" for a command of its own
	cmd    *cli.Command
}

// complCommands are the visible commands followed, each, by its subcommands.
func complCommands(app *cli.App) []complCommand {
	var out []complCommand
	for _, c := range visible(app.Commands) {
		out = append(out, complCommand{key: c.Name, cmd: c})
		for _, sub := range visible(c.Subcommands) {
			out = append(out, complCommand{key: c.Name + "-" + sub.Name, parent: c.Name, cmd: sub})
		}
	}
	return out
}

// subcommandPairs are "parent:sub" for every subcommand, for the scripts
// to tell "kafka export" from the command kafka with an argument.
func subcommandPairs(app *cli.App) []string {
	var pairs []string
	for _, cc := range complCommands(app) {
		if cc.parent != "" {
			pairs = append(pairs, cc.parent+":"+cc.cmd.Name)
		}
	}
	return pairs
}

// valueKind says how a flag's value or an argument completes.
type valueKind string

const (
	kindNone       valueKind = "none"
	kindFiles      valueKind = "files"
	kindDirs       valueKind = "dirs"
	kindTopics     valueKind = "topics"
	kindPartitions valueKind = "partitions" // of the first argument, a topic
	kindGroups     valueKind = "groups"
	kindWords      valueKind = "words"
)

type complValue struct {
	kind  valueKind
	words []string
}

func flagValue(f docFlag) complValue {
	if f.values != nil {
		return complValue{kindWords, f.values}
	}
	switch f.long {
	case "data-dir", "to":
		return complValue{kind: kindDirs}
	case "tls-ca", "tls-cert", "tls-key":
		return complValue{kind: kindFiles}
	case "partition":
		return complValue{kind: kindPartitions}
	case "to-topic":
		return complValue{kind: kindTopics}
	case "group":
		return complValue{kind: kindGroups}
	}
	return complValue{kind: kindNone}
}

// argValue is how the n-th (0-based) positional argument of cmd completes.
func argValue(app *cli.App, cmd *cli.Command, n int) complValue {
	if len(cmd.Subcommands) > 0 {
		if n > 0 {
			return complValue{kind: kindNone}
		}
		var names []string
		for _, sub := range visible(cmd.Subcommands) {
			names = append(names, sub.Name)
		}
		return complValue{kindWords, names}
	}
	switch cmd.Name {
	case "completion":
		if n == 0 {
			return complValue{kindWords, completionShells.names()}
		}
		return complValue{kind: kindNone}
	case "create":
		return complValue{kind: kindNone} // a new name
	case "quarantine":
		if n == 0 {
			return complValue{kindWords, quarantineActions.names()}
		}
		return complValue{kind: kindTopics}
	}
	u := cmd.ArgsUsage
	if strings.HasPrefix(u, "TOPIC PARTITION") {
		switch n {
		case 0:
			return complValue{kind: kindTopics}
		case 1:
			return complValue{kind: kindPartitions}
		}
		return complValue{kind: kindNone}
	}
	if strings.Contains(u, "FILE") {
		return complValue{kind: kindFiles}
	}
	if strings.Contains(u, "TOPIC") {
		return complValue{kind: kindTopics}
	}
	return complValue{kind: kindNone}
}

// commandNames are the names (and aliases) a user can type, with help.
func commandNames(app *cli.App) []string {
	var n []string
	for _, c := range visible(app.Commands) {
		n = append(n, c.Names()...)
	}
	return append(n, "help")
}

// valueFlagNames are the spellings of the flags among fs that take a value.
func valueFlagNames(fs []docFlag) []string {
	var n []string
	for _, f := range fs {
		if f.takesValue() {
			n = append(n, f.names()...)
		}
	}
	return n
}

func allFlagNames(fs []docFlag) []string {
	var n []string
	for _, f := range fs {
		n = append(n, f.names()...)
	}
	return n
}

// shortUsage is a flag or command usage cut for a completion menu.
func shortUsage(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, " ("); i > 0 {
		s = s[:i]
	}
	if len(s) > 70 {
		s = s[:67] + "..."
	}
	return s
}

// shell is a shell seglog writes a completion script for.
type shell int

const (
	shellBash shell = iota
	shellZsh
	shellFish
)

// completionShells are the shells `seglog completion` knows, in file order.
var completionShells = choices[shell]{
	{"bash", shellBash, ""},
	{"zsh", shellZsh, ""},
	{"fish", shellFish, ""},
}

func completionScript(app *cli.App, sh shell) string {
	switch sh {
	case shellZsh:
		return zshScript(app)
	case shellFish:
		return fishScript(app)
	}
	return bashScript(app)
}
