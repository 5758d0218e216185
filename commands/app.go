package commands

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// env is what every command gets: its streams and the global flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	dataDir        string
	quiet          bool
	wide           bool // --wide, of the commands that print tables: tables whole, however wide
	noProgress     bool
	progressAfter  time.Duration   // how long a job runs before its bar shows
	kafka          *kafkaDirState  // what kafkaDir found, once it looked
	warned         map[string]bool // warnOnce's keys
}

// warn prints a warning on stderr unless --quiet.
func (e *env) warn(format string, args ...any) {
	if !e.quiet {
		fmt.Fprintf(e.stderr, "seglog: warning: "+format+"\n", args...)
	}
}

// warnOnce is warn, the first time it is called with key.
func (e *env) warnOnce(key, format string, args ...any) {
	if e.warned[key] {
		return
	}
	if e.warned == nil {
		e.warned = map[string]bool{}
	}
	e.warned[key] = true
	e.warn(format, args...)
}

// info prints a summary line on stderr unless --quiet.
func (e *env) info(format string, args ...any) {
	if !e.quiet {
		fmt.Fprintf(e.stderr, format+"\n", args...)
	}
}

func envFrom(c *cli.Context) *env {
	// The app's Before refused a --progress-after that does not parse.
	progressAfter, _ := progressAfterFlag(c)
	return &env{
		stdin:         c.App.Reader,
		stdout:        c.App.Writer,
		stderr:        c.App.ErrWriter,
		dataDir:       c.String("data-dir"),
		quiet:         c.Bool("quiet"),
		wide:          c.Bool("wide"),
		noProgress:    c.Bool("no-progress"),
		progressAfter: progressAfter,
	}
}

// tuning is the limits at which a command changes how it works, never
// what it prints: tests lower them to take every way with little data.
type tuning struct {
	tailHeapMax int64 // the largest tail -n whose cut is found in memory (tailCut)
}

// NewApp builds the seglog command line, reading stdin and writing to
// stdout and stderr.
func NewApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	return newApp(stdin, stdout, stderr, tuning{tailHeapMax: tailHeapMax})
}

func newApp(stdin io.Reader, stdout, stderr io.Writer, tn tuning) *cli.App {
	app := &cli.App{
		Name:  "seglog",
		Usage: "work directly on the data directory of a Kafka-style commit log",
		Description: "seglog reads, writes, checks and repairs a commit log's segment files\n" +
			"(data/<topic>/<partition>/<base-offset>.log|.index|.timeindex) with no daemon.\n" +
			"Locks are flock(2) on directories: use it on local filesystems only.\n" +
			"'seglog help COMMAND [SUBCOMMAND]' or 'seglog COMMAND --help' shows a command's help.\n\n" +
			"Examples:\n" +
			"  seglog append app-logs --create < app.log\n" +
			"  seglog tail -f orders --format json\n" +
			"  seglog verify-crc orders\n" +
			"  seglog retention-sweep --retention 7d   # from cron; topics' own retention wins\n" +
			"  seglog copy-partition orders 0 --to - | ssh host seglog import-partition orders 0",
		// --version and -v, at the top only: urfave/cli adds the flag.
		Version:   buildVersion(),
		Writer:    stdout,
		ErrWriter: stderr,
		Reader:    stdin,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data-dir", Aliases: []string{"d"}, Value: "./data", EnvVars: []string{"SEGLOG_DATA_DIR"}, Usage: "the data directory"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print no summaries, notes, warnings or progress, only what a script needs (errors still)"},
			&cli.BoolFlag{Name: "no-progress", Usage: "never draw progress bars"},
			&cli.StringFlag{Name: progressAfterName, Value: "1s", EnvVars: []string{"SEGLOG_PROGRESS_AFTER"}, Usage: "draw a job's progress bar once it has run `DURATION`"},
		},
		Before: func(c *cli.Context) error {
			_, err := progressAfterFlag(c)
			return err
		},
		Commands: []*cli.Command{
			createCommand(), deleteCommand(), alterCommand(), addPartitionsCommand(),
			appendCommand(),
			readCommand(),
			tailCommand(tn),
			describeCommand(),
			topicsCommand(),
			metricsCommand(),
			dumpIndexCommand(),
			verifyCRCCommand(),
			recoverCommand(),
			retentionSweepCommand(),
			quarantineCommand(),
			groupsCommand(),
			copyPartitionCommand(),
			reassignCommand(),
			importPartitionCommand(), importCommand(),
			kafkaCommand(),
			versionCommand(), completionCommand(), completeCommand(),
		},
		// Help is --help, -h and 'seglog help COMMAND' only (helpArgs):
		// urfave/cli's help command (alias h), and the one it gives every
		// command, would take a topic named h or help for a request.
		HideHelpCommand: true,
		// Only main exits: urfave/cli must never call os.Exit itself.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   onUsageError,
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("unknown command %q (see 'seglog --help')", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
	}
	for _, cmd := range app.Commands {
		cmd.OnUsageError = onUsageError
		setupHelp(cmd, cmd.Name)
		guardKafkaLogDir(cmd)
	}
	return app
}

// setupHelp keeps urfave/cli from giving cmd and its subcommands a help
// subcommand, which 'seglog append h' would run instead of appending to
// topic h, and ends a command's --help with its exit statuses. name is
// the command line after "seglog " up to cmd's name ("kafka export").
func setupHelp(cmd *cli.Command, name string) {
	cmd.HideHelpCommand = true
	if len(cmd.Subcommands) == 0 && cmd.CustomHelpTemplate == "" {
		// The template urfave/cli's help subcommand would have chosen.
		cmd.CustomHelpTemplate = cli.CommandHelpTemplate + exitHelp(name)
	}
	for _, sub := range cmd.Subcommands {
		sub.OnUsageError = onUsageError
		// Named before urfave/cli sets up the parent, for 'seglog help
		// kafka export', which does not run it.
		sub.HelpName = "seglog " + name + " " + sub.Name
		setupHelp(sub, name+" "+sub.Name)
	}
}

// onUsageError words what the flag package refused (a flag without its
// value, a bad bool) as seglog's usage errors are; unknown flags never
// get this far (checkFlags).
func onUsageError(c *cli.Context, err error, isSubcommand bool) error {
	msg := err.Error()
	where := "seglog"
	if isSubcommand && c.Command != nil {
		where = c.Command.HelpName // "seglog kafka export" for a subcommand
	}
	return usagef("%s (see '%s --help')", msg, where)
}

// Run runs seglog with args and returns its exit status. Errors are printed
// as one line on stderr starting with "seglog: ".
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runApp(NewApp(stdin, stdout, stderr), args, stderr)
}

// runApp is Run with the app given.
func runApp(app *cli.App, args []string, stderr io.Writer) int {
	// A write to a closed stdout pipe must be an EPIPE error we can end
	// quietly on, not a SIGPIPE that kills the process.
	signal.Ignore(syscall.SIGPIPE)
	args, err := helpArgs(app, normalizeArgs(app, args))
	var typed []typedFlag
	if err == nil {
		typed, err = checkFlags(app, args)
	}
	if err == nil {
		err = app.Run(args)
	}
	code := exitCode(err)
	if err != nil && code != exitOK && !errors.Is(err, errProblemsFound) {
		line := errorLine(err)
		if code == exitUsage {
			// About what was typed, so in its words; advice in runtime
			// errors ("name the right one with --data-dir") stays as it is.
			line = asTyped(line, typed)
		}
		fmt.Fprintf(stderr, "seglog: %s\n", line)
	}
	return code
}

// topicArg returns a command's single TOPIC argument.
func topicArg(c *cli.Context) (string, error) {
	name := strings.TrimPrefix(c.Command.HelpName, "seglog ") // "kafka export" for a subcommand
	switch c.NArg() {
	case 0:
		return "", usagef("%s: missing TOPIC (see 'seglog %s --help')", name, name)
	case 1:
		return c.Args().First(), checkTopicName(c.Args().First())
	}
	return "", usagef("%s: one TOPIC expected, got %d arguments: %s", name, c.NArg(), strings.Join(c.Args().Slice(), " "))
}

// checkTopicName rejects a bad topic name before any file is touched.
func checkTopicName(name string) error {
	if err := format.ValidateTopic(name); err != nil {
		return usagef("invalid topic name %s", strings.TrimPrefix(err.Error(), format.ErrTopicName.Error()+" "))
	}
	return nil
}

// missingTopic says what to do about a topic that was not found: name
// the right data directory when that does not exist at all, else run
// create (the command given).
func missingTopic(err error, dataDir, create string) error {
	if _, serr := os.Stat(dataDir); errors.Is(serr, fs.ErrNotExist) {
		return missingDataDir(err, dataDir)
	}
	return fmt.Errorf("%w (create it with '%s')", err, create)
}

// missingDataDir adds to err that the data directory dataDir, where it
// looked, does not exist.
func missingDataDir(err error, dataDir string) error {
	return fmt.Errorf("%w (the data directory %s does not exist: name the right one with --data-dir or SEGLOG_DATA_DIR)", err, dataDir)
}

// corruptAdvice adds what to do to a corrupt record that stopped a
// reader of target (a topic, or a directory named by path).
func corruptAdvice(err error, target string) error {
	var ce *logstore.CorruptionError
	if !errors.As(err, &ce) {
		return err
	}
	if strings.Contains(target, "/") {
		return fmt.Errorf("%w; --skip-corrupt reads past it", err)
	}
	return fmt.Errorf("%w; --skip-corrupt reads past it, 'seglog recover %s --salvage' repairs the partition", err, target)
}

// errorLine renders err as one line (docs/cli.md). The packages' errors
// are written to be read by users: they carry no package prefix.
func errorLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// checkTargetNames rejects bad topic names among the arguments of a
// read-only command; with pathsToo, an argument holding a '/' names a
// directory instead and is not checked.
func checkTargetNames(args []string, pathsToo bool) error {
	for _, a := range args {
		if pathsToo && strings.Contains(a, "/") {
			continue
		}
		if err := checkTopicName(a); err != nil {
			return err
		}
	}
	return nil
}
