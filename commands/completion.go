package commands

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

// completionCommand prints a shell's completion script: the same bytes as
// completions/seglog.SHELL, from the same generator.
func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for " + completionShells.list(),
		ArgsUsage: strings.Join(completionShells.names(), "|"),
		Description: "Only prints; changes no files. Install with, for example:\n\n" +
			"  seglog completion bash > /etc/bash_completion.d/seglog\n" +
			"  source <(seglog completion zsh)\n" +
			"  seglog completion fish > ~/.config/fish/completions/seglog.fish\n\n" +
			"The scripts complete commands, flags, fixed flag values, and topic, partition\n" +
			"and group names read from the data directory (--data-dir or $SEGLOG_DATA_DIR).",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("completion: one SHELL expected (%s), got %d arguments (see 'seglog completion --help')", completionShells.list(), c.NArg())
			}
			sh, ok := completionShells.lookup(c.Args().First())
			if !ok {
				return usagef("completion: unknown shell %q: want one of %s", c.Args().First(), strings.Join(completionShells.names(), ", "))
			}
			// A fresh app: c.App has been set up (help command added) by now.
			_, err := fmt.Fprint(c.App.Writer, completionScript(docsApp(), sh))
			return err
		},
	}
}

// completeCommand is the hidden helper the completion scripts call:
//
//	seglog [-d DIR] __complete topics|groups|partitions TOPIC
//
// It prints names one a line and, being run on every TAB, never prints an
// error nor fails: anything wrong prints nothing.
func completeCommand() *cli.Command {
	return &cli.Command{
		Name:            "__complete",
		Hidden:          true,
		HideHelp:        true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) > 0 && args[0] == "--" {
				args = args[1:]
			}
			if len(args) == 0 {
				return nil
			}
			st := logstore.Open(c.String("data-dir"))
			var names []string
			switch args[0] {
			case "topics":
				names, _ = st.Topics()
			case "groups":
				names, _ = st.Groups()
			case "partitions":
				if len(args) < 2 {
					return nil
				}
				t, err := st.Topic(args[1])
				if err != nil {
					return nil
				}
				for p := 0; p < t.Partitions; p++ {
					names = append(names, strconv.Itoa(p))
				}
			}
			for _, n := range names {
				fmt.Fprintln(c.App.Writer, n)
			}
			return nil
		},
	}
}
