package commands

//go:generate go run ./gendocs

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// The man pages and completion scripts shipped with the binary are
// generated from the command definitions by `go generate ./...`;
// TestDocsUpToDate fails when the committed ones are stale.

// shells are the shells `seglog completion` knows, in file order.
var shells = []string{"bash", "zsh", "fish"}

// fixedValues are the values a flag (by long name) can take, for
// completion. Free-text usages can't be parsed reliably, so they are here.
var fixedValues = map[string][]string{
	"format": {"value", "json", "dump", "raw"},
	"sync":   {"exit", "batch", "never"},
	"input":  {"lines", "json"},
	"kind":   {"index", "timeindex", "both"},
	// kafka export and import
	"compression":    {"none", "gzip", "snappy", "lz4", "zstd"},
	"from":           {"beginning", "end"},
	"sasl-mechanism": {"plain", "scram-sha-256", "scram-sha-512"},
}

// docsApp is the app the generators describe.
func docsApp() *cli.App { return NewApp(nil, io.Discard, io.Discard) }

// GenerateDocs writes the man pages into manDir and the completion
// scripts into complDir (run by commands/gendocs through go generate).
func GenerateDocs(manDir, complDir string) error {
	files, err := docFiles()
	if err != nil {
		return err
	}
	for _, dir := range []string{manDir, complDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	for name, b := range files {
		dir := complDir
		if strings.HasSuffix(name, ".1") {
			dir = manDir
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// docFiles is every generated file by base name: seglog.1,
// seglog-COMMAND.1 and seglog.SHELL.
func docFiles() (map[string][]byte, error) {
	app := docsApp()
	files := map[string][]byte{"seglog.1": manPage(app)}
	for _, cmd := range manCommands(app) {
		files[manName(cmd)+".1"] = commandManPage(app, cmd)
	}
	for _, sh := range shells {
		s, err := completionScript(app, sh)
		if err != nil {
			return nil, err
		}
		files["seglog."+sh] = []byte(s)
	}
	return files, nil
}

// visible are the commands among cmds a user can type: an app's commands
// or a command's subcommands.
func visible(cmds []*cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, c := range cmds {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	return out
}

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

// manCommands is the visible commands with each command that has subcommands
// (kafka) replaced by them, named "kafka export": a man page each.
func manCommands(app *cli.App) []*cli.Command {
	var cmds []*cli.Command
	for _, c := range visible(app.Commands) {
		if len(c.Subcommands) == 0 {
			cmds = append(cmds, c)
			continue
		}
		for _, sub := range visible(c.Subcommands) {
			leaf := *sub
			leaf.Name = c.Name + " " + sub.Name
			cmds = append(cmds, &leaf)
		}
	}
	return cmds
}

// manName is a command's man page name: seglog-kafka-export.
func manName(cmd *cli.Command) string {
	return "seglog-" + strings.ReplaceAll(cmd.Name, " ", "-")
}

// docFlag is a visible flag as the generators see it.
type docFlag struct {
	long        string   // the Name
	aliases     []string // one letter ones are short options
	placeholder string   // "" for a flag taking no value
	usage       string
	def         string // default, "" when none worth printing
	env         []string
}

func (f docFlag) takesValue() bool { return f.placeholder != "" }

// names is every spelling: --long, --alias, -s.
func (f docFlag) names() []string {
	var n []string
	for _, a := range append([]string{f.long}, f.aliases...) {
		if len(a) == 1 {
			n = append(n, "-"+a)
		} else {
			n = append(n, "--"+a)
		}
	}
	return n
}

func docFlags(fs []cli.Flag) []docFlag {
	var out []docFlag
	for _, f := range fs {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		names := f.Names()
		df := docFlag{long: names[0], aliases: names[1:]}
		if d, ok := f.(cli.DocGenerationFlag); ok {
			ph, usage := unquote(d.GetUsage())
			df.usage = usage
			df.env = d.GetEnvVars()
			if d.TakesValue() {
				if ph == "" {
					ph = "VALUE"
				}
				df.placeholder = ph
				df.def = strings.Trim(d.GetDefaultText(), `"`)
			}
		}
		out = append(out, df)
	}
	return out
}

// unquote is cli's rule: the first `word` in a usage is the placeholder.
func unquote(usage string) (placeholder, text string) {
	i := strings.IndexByte(usage, '`')
	if i < 0 {
		return "", usage
	}
	j := strings.IndexByte(usage[i+1:], '`')
	if j < 0 {
		return "", usage
	}
	ph := usage[i+1 : i+1+j]
	return ph, usage[:i] + ph + usage[i+1+j+1:]
}

// ---- man pages ----

// roff escapes s for the body of a roff line.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			b.WriteString(`\&`)
		}
		b.WriteString(line)
	}
	return b.String()
}

// roffText writes a Description: blank lines start paragraphs; indented
// lines are shown as they are.
func roffText(b *bytes.Buffer, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	inVerbatim := false
	for _, line := range strings.Split(text, "\n") {
		verb := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
		switch {
		case strings.TrimSpace(line) == "":
			if inVerbatim {
				b.WriteString(".fi\n.RE\n")
				inVerbatim = false
			}
			b.WriteString(".PP\n")
			continue
		case verb && !inVerbatim:
			b.WriteString(".RS 4\n.nf\n")
			inVerbatim = true
		case !verb && inVerbatim:
			b.WriteString(".fi\n.RE\n")
			inVerbatim = false
		}
		if verb {
			line = strings.TrimLeft(line, " \t")
		}
		b.WriteString(roff(line) + "\n")
	}
	if inVerbatim {
		b.WriteString(".fi\n.RE\n")
	}
}

func roffFlags(b *bytes.Buffer, flags []docFlag) {
	for _, f := range flags {
		var spell []string
		for _, n := range f.names() {
			s := `\fB` + roff(n) + `\fR`
			if f.takesValue() {
				s += ` \fI` + roff(f.placeholder) + `\fR`
			}
			spell = append(spell, s)
		}
		b.WriteString(".TP\n" + strings.Join(spell, ", ") + "\n")
		text := f.usage
		if f.def != "" {
			text += " (default: " + f.def + ")"
		}
		if len(f.env) > 0 {
			text += " [$" + strings.Join(f.env, ", $") + "]"
		}
		b.WriteString(roff(text) + "\n")
	}
}

func manHeader(b *bytes.Buffer, name, summary string) {
	// No date: the pages must come out the same on every run.
	fmt.Fprintf(b, ".\\\" Generated by `go generate ./...` from the command definitions; do not edit.\n")
	fmt.Fprintf(b, ".TH %s 1 \"\" \"seglog\" \"seglog manual\"\n", strings.ToUpper(name))
	fmt.Fprintf(b, ".SH NAME\n%s \\- %s\n", roff(name), roff(summary))
}

func commandSynopsis(cmd *cli.Command) string {
	s := `\fBseglog\fR [\fIglobal options\fR] \fB` + roff(cmd.Name) + `\fR`
	if len(docFlags(cmd.Flags)) > 0 {
		s += ` [\fIoptions\fR]`
	}
	if cmd.ArgsUsage != "" {
		s += " " + roff(cmd.ArgsUsage)
	}
	return s
}

func roffCommand(b *bytes.Buffer, cmd *cli.Command, head string) {
	b.WriteString(head)
	b.WriteString(commandSynopsis(cmd) + "\n")
	if len(cmd.Aliases) > 0 {
		b.WriteString(".PP\nAliases: " + roff(strings.Join(cmd.Aliases, ", ")) + "\n")
	}
	if cmd.Usage != "" {
		b.WriteString(".PP\n" + roff(cmd.Usage) + "\n")
	}
	if cmd.Description != "" {
		b.WriteString(".PP\n")
		roffText(b, cmd.Description)
	}
}

// envDoc is an environment variable seglog reads.
type envDoc struct {
	name     string
	what     string
	commands []string // the commands reading it ("kafka export"); nil: every one
}

// environment is every environment variable seglog reads: those of the
// flags (their EnvVars), then the others (the locale's three as one).
func environment(app *cli.App) []envDoc {
	var out []envDoc
	add := func(f docFlag, cmd string) {
		for _, name := range f.env {
			i := slices.IndexFunc(out, func(e envDoc) bool { return e.name == name })
			if i >= 0 { // a flag several commands share
				out[i].commands = append(out[i].commands, cmd)
				continue
			}
			what := "The value of --" + f.long + " when it is not given: " + f.usage
			if f.def != "" {
				what += " (default: " + f.def + ")"
			}
			e := envDoc{name: name, what: what + "."}
			if cmd != "" {
				e.commands = []string{cmd}
			}
			out = append(out, e)
		}
	}
	for _, f := range docFlags(app.Flags) {
		add(f, "")
	}
	for _, cmd := range manCommands(app) {
		for _, f := range docFlags(cmd.Flags) {
			add(f, cmd.Name)
		}
	}
	out = append(out, envDoc{name: progressAfterEnv, commands: progressCommands,
		what: "How long a job runs before its progress bar shows, a Go duration (default 1s); meant for tests."})
	return append(out, envDoc{name: strings.Join(localeEnv, ", "), commands: []string{"describe"},
		what: "The locale: the first of these that is set tells whether describe --timeline draws block characters (a UTF-8 locale) or ASCII."})
}

// roffEnvironment writes the ENVIRONMENT section: the variables cmd
// reads, or with cmd "" every one.
func roffEnvironment(b *bytes.Buffer, app *cli.App, cmd string) {
	b.WriteString(".SH ENVIRONMENT\n")
	for _, e := range environment(app) {
		if cmd == "" || e.commands == nil || slices.Contains(e.commands, cmd) {
			b.WriteString(".TP\n\\fB" + roff(e.name) + "\\fR\n" + roff(e.what) + "\n")
		}
	}
}

// roffExits writes a command's exit statuses (exitsOf) as tagged
// paragraphs.
func roffExits(b *bytes.Buffer, name string) {
	for _, e := range exitsOf(name) {
		fmt.Fprintf(b, ".TP\n\\fB%d\\fR\n%s\n", e.code, roff(upperFirst(e.when)+"."))
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func manTail(b *bytes.Buffer, app *cli.App) {
	var checkers []string
	for _, c := range manCommands(app) {
		if slices.ContainsFunc(exitsOf(c.Name), func(e exitDoc) bool { return e.code == exitProblems }) {
			checkers = append(checkers, `\fB`+roff(c.Name)+`\fR`)
		}
	}
	b.WriteString(`.SH EXIT STATUS
Each command's section above, its page and its \fB\-\-help\fR say when it ends with which status.
.TP
\fB0\fR
Success; also \fBtail \-f\fR ended by Ctrl\-C or SIGTERM, a closed stdout pipe, and \fBverify\-crc\fR finding only known gaps or an incomplete tail while a writer is live.
.TP
\fB1\fR
Runtime error: I/O error, topic or partition not found, lock held, offset out of range, corrupt data met by \fBread\fR or \fBtail\fR, a check that could not finish.
.TP
\fB2\fR
Usage error: unknown flag, missing or extra argument, bad topic, group or partition name, a value that does not parse.
.TP
\fB3\fR
Problems found by a check: ` + strings.Join(checkers, ", ") + `.
`)
	roffEnvironment(b, app, "")
	b.WriteString(`.SH FILES
.TP
\fIDATA_DIR/TOPIC/PARTITION/BASE.log\fR, \fI.index\fR, \fI.timeindex\fR
A segment: its records, its offset index and its time index; \fIBASE\fR is the segment's first offset, 20 digits.
.TP
\fIDATA_DIR/TOPIC/.seglog.json\fR
The topic's stored settings (see \fBcreate\fR).
.TP
\fIDATA_DIR/TOPIC/PARTITION/.gaps.json\fR
Offset gaps known to be harmless (listed by \fBverify\-crc\fR as known).
.TP
\fIDATA_DIR/.groups/NAME/\fR
The committed positions of the consumer group \fINAME\fR.
.TP
\fIDATA_DIR/.quarantine/\fR
Bytes cut by \fBrecover\fR, saved before they were cut.
`)
	b.WriteString(".SH SEE ALSO\n")
	var refs []string
	for _, c := range manCommands(app) {
		refs = append(refs, `\fB`+roff(manName(c))+`\fR(1)`)
	}
	b.WriteString(strings.Join(refs, ", ") + "\n")
}

// manPage is seglog(1): everything on one page.
func manPage(app *cli.App) []byte {
	var b bytes.Buffer
	manHeader(&b, app.Name, app.Usage)
	b.WriteString(".SH SYNOPSIS\n\\fBseglog\\fR [\\fIglobal options\\fR] \\fICOMMAND\\fR [\\fIoptions\\fR] [\\fIARGS\\fR...]\n")
	b.WriteString(".SH DESCRIPTION\n")
	roffText(&b, app.Description)
	b.WriteString(".PP\nFlags may come before or after positional arguments; after \\fB\\-\\-\\fR everything is positional.\n")
	b.WriteString(".SH GLOBAL OPTIONS\nAccepted before or after the command name.\n")
	roffFlags(&b, docFlags(app.Flags))
	b.WriteString(".TP\n\\fB\\-\\-help\\fR, \\fB\\-h\\fR\nshow help\n")
	b.WriteString(".TP\n\\fB\\-\\-version\\fR, \\fB\\-v\\fR\nprint the version (as \\fBseglog version\\fR)\n")
	b.WriteString(".SH COMMANDS\n")
	for _, cmd := range manCommands(app) {
		roffCommand(&b, cmd, ".SS "+roff(cmd.Name)+"\n")
		if fs := docFlags(cmd.Flags); len(fs) > 0 {
			b.WriteString(".PP\nOptions:\n.RS 4\n")
			roffFlags(&b, fs)
			b.WriteString(".RE\n")
		}
		b.WriteString(".PP\nExit status:\n.RS 4\n")
		roffExits(&b, cmd.Name)
		b.WriteString(".RE\n")
	}
	manTail(&b, app)
	return b.Bytes()
}

// commandManPage is seglog-COMMAND(1).
func commandManPage(app *cli.App, cmd *cli.Command) []byte {
	var b bytes.Buffer
	manHeader(&b, manName(cmd), cmd.Usage)
	roffCommand(&b, cmd, ".SH SYNOPSIS\n")
	if fs := docFlags(cmd.Flags); len(fs) > 0 {
		b.WriteString(".SH OPTIONS\n")
		roffFlags(&b, fs)
	}
	b.WriteString(".SH GLOBAL OPTIONS\n")
	roffFlags(&b, docFlags(app.Flags))
	b.WriteString(".SH EXIT STATUS\n")
	roffExits(&b, cmd.Name)
	roffEnvironment(&b, app, cmd.Name)
	b.WriteString(".SH SEE ALSO\n\\fBseglog\\fR(1)\n")
	return b.Bytes()
}

// ---- completion model ----

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
	if w, ok := fixedValues[f.long]; ok {
		return complValue{kindWords, w}
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
			return complValue{kindWords, shells}
		}
		return complValue{kind: kindNone}
	case "create":
		return complValue{kind: kindNone} // a new name
	case "quarantine":
		if n == 0 {
			return complValue{kindWords, []string{"list", "purge"}}
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

func completionScript(app *cli.App, shell string) (string, error) {
	switch shell {
	case "bash":
		return bashScript(app), nil
	case "zsh":
		return zshScript(app), nil
	case "fish":
		return fishScript(app), nil
	}
	return "", usagef("completion: unknown shell %q: want one of %s", shell, strings.Join(shells, ", "))
}

// sq quotes s for a POSIX or fish shell in single quotes.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fishq quotes s for fish, which escapes inside single quotes.
func fishq(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}

// shAction is the bash/zsh code completing one value kind.
func shAction(v complValue, zsh bool) string {
	list := func(sub string) string {
		if zsh {
			return "compadd -- ${(f)\"$(_seglog_call " + sub + ")\"}"
		}
		return "_seglog_reply \"$(_seglog_call " + sub + ")\""
	}
	switch v.kind {
	case kindWords:
		if zsh {
			return "compadd -- " + strings.Join(v.words, " ")
		}
		return "_seglog_reply " + sq(strings.Join(v.words, "\n"))
	case kindTopics:
		return list("topics")
	case kindGroups:
		return list("groups")
	case kindPartitions:
		return list(`partitions "${pos[` + map[bool]string{true: "1", false: "0"}[zsh] + `]}"`)
	case kindDirs:
		if zsh {
			return "_files -/"
		}
		return "COMPREPLY=($(compgen -d -- \"$cur\"))"
	case kindFiles:
		if zsh {
			return "_files"
		}
		return "COMPREPLY=($(compgen -f -- \"$cur\"))"
	}
	return ":"
}

// shCases writes the per-command parts both bash and zsh scripts share:
// value flags, flag values and arguments.
func shCases(b *bytes.Buffer, app *cli.App, zsh bool) {
	globals := docFlags(app.Flags)
	var globalValueFlags []string
	for _, f := range globals {
		if f.takesValue() {
			globalValueFlags = append(globalValueFlags, f.names()...)
		}
	}
	// _seglog_value_flags CMD: the flags of CMD that take a value.
	b.WriteString("_seglog_value_flags() {\n    case $1 in\n")
	for _, cc := range complCommands(app) {
		var names []string
		for _, f := range docFlags(cc.cmd.Flags) {
			if f.takesValue() {
				names = append(names, f.names()...)
			}
		}
		if len(names) > 0 {
			fmt.Fprintf(b, "    %s) echo %s ;;\n", cc.key, sq(" "+strings.Join(append(names, globalValueFlags...), " ")+" "))
		}
	}
	fmt.Fprintf(b, "    *) echo %s ;;\n    esac\n}\n\n", sq(" "+strings.Join(globalValueFlags, " ")+" "))

	// _seglog_flag_value CMD FLAG: complete FLAG's value; false if FLAG takes none.
	b.WriteString("_seglog_flag_value() {\n    case $1:$2 in\n")
	for _, cc := range complCommands(app) {
		for _, f := range docFlags(cc.cmd.Flags) {
			if !f.takesValue() {
				continue
			}
			var pats []string
			for _, n := range f.names() {
				pats = append(pats, cc.key+":"+n)
			}
			fmt.Fprintf(b, "    %s) %s ;;\n", strings.Join(pats, "|"), shAction(flagValue(f), zsh))
		}
	}
	for _, f := range globals {
		if !f.takesValue() {
			continue
		}
		var pats []string
		for _, n := range f.names() {
			pats = append(pats, "*:"+n)
		}
		fmt.Fprintf(b, "    %s) %s ;;\n", strings.Join(pats, "|"), shAction(flagValue(f), zsh))
	}
	b.WriteString("    *) return 1 ;;\n    esac\n}\n\n")

	// _seglog_flags CMD: every flag of CMD.
	b.WriteString("_seglog_flags() {\n    case $1 in\n")
	gl := append(allFlagNames(globals), "--help", "-h")
	for _, cc := range complCommands(app) {
		fmt.Fprintf(b, "    %s) echo %s ;;\n", cc.key, sq(strings.Join(append(allFlagNames(docFlags(cc.cmd.Flags)), gl...), " ")))
	}
	fmt.Fprintf(b, "    *) echo %s ;;\n    esac\n}\n\n", sq(strings.Join(append(gl, "--version", "-v"), " ")))

	// _seglog_arg CMD N: complete CMD's N-th (0-based) argument.
	b.WriteString("_seglog_arg() {\n    case $1 in\n")
	for _, cc := range complCommands(app) {
		first, second, rest := argValue(app, cc.cmd, 0), argValue(app, cc.cmd, 1), argValue(app, cc.cmd, 2)
		if slices.Equal(first.words, second.words) && first.kind == second.kind && second.kind == rest.kind {
			fmt.Fprintf(b, "    %s) %s ;;\n", cc.key, shAction(first, zsh))
			continue
		}
		fmt.Fprintf(b, "    %s)\n        case $2 in\n        0) %s ;;\n        1) %s ;;\n        *) %s ;;\n        esac ;;\n",
			cc.key, shAction(first, zsh), shAction(second, zsh), shAction(rest, zsh))
	}
	fmt.Fprintf(b, "    help) %s ;;\n", shAction(complValue{kindWords, commandNames(app)}, zsh))
	b.WriteString("    esac\n}\n\n")

	// _seglog_sub CMD WORD: whether WORD, CMD's first argument, names one
	// of its subcommands.
	b.WriteString("_seglog_sub() {\n    case $1:$2 in\n")
	if pairs := subcommandPairs(app); len(pairs) > 0 {
		fmt.Fprintf(b, "    %s) return 0 ;;\n", strings.Join(pairs, "|"))
	}
	b.WriteString("    esac\n    return 1\n}\n\n")
}

const shParse = `    # Find the command and its arguments so far, and a --data-dir to pass on.
    local cmd= i w skip=0 dashdash=0 vf
    local -a pos dd
    vf=$(_seglog_value_flags '')
    for ((i = FIRST; i < LAST; i++)); do
        w=${words[i]}
        if ((skip)); then
            [[ $w == = ]] && continue # bash splits --flag=value at '='
            skip=0
            continue
        fi
        if ((dashdash)); then
            pos+=("$w")
            continue
        fi
        case $w in
        --) dashdash=1 ;;
        -d | --data-dir) dd=(--data-dir "${words[i + 1]}") ; skip=1 ;;
        -d=* | --data-dir=*) dd=(--data-dir "${w#*=}") ;;
        -*=*) ;;
        -*) [[ $vf == *" $w "* ]] && skip=1 ;;
        *)
            if [[ -z $cmd ]]; then
                cmd=$w
                vf=$(_seglog_value_flags "$cmd")
            elif ((${#pos[@]} == 0)) && _seglog_sub "$cmd" "$w"; then
                cmd=$cmd-$w
                vf=$(_seglog_value_flags "$cmd")
            else
                pos+=("$w")
            fi
            ;;
        esac
    done
`

func bashScript(app *cli.App) string {
	var b bytes.Buffer
	b.WriteString(`# bash completion for seglog.
# Generated by ` + "`go generate ./...`" + ` from the command definitions; do not edit.
# Install: seglog completion bash > /etc/bash_completion.d/seglog
#      or: source <(seglog completion bash)

# _seglog_call ARGS: seglog's hidden completion helper, on the data
# directory given on the command line (or $SEGLOG_DATA_DIR); silent on error.
_seglog_call() {
    local -a d=("${dd[@]}")
    if ((${#d[@]} == 2)); then d[1]=${d[1]/#\~/$HOME}; fi
    "${words[0]}" "${d[@]}" __complete "$@" 2>/dev/null
}

# _seglog_reply LINES: the lines starting with $cur.
_seglog_reply() {
    local IFS=$'\n'
    COMPREPLY=($(compgen -W "$1" -- "$cur"))
}

`)
	shCases(&b, app, false)
	b.WriteString(`_seglog() {
    local -a words=("${COMP_WORDS[@]}")
    local cword=$COMP_CWORD
    local cur=${words[cword]} prev=${words[cword - 1]}
    if [[ $cur == = ]]; then
        cur= # --flag=<TAB>
        prev=${words[cword - 1]}
    elif [[ $prev == = ]] && ((cword >= 2)); then
        prev=${words[cword - 2]} # --flag=val<TAB>
    fi
    COMPREPLY=()
`)
	b.WriteString(strings.NewReplacer("FIRST", "1", "LAST", "cword").Replace(shParse))
	b.WriteString(`
    if ! ((dashdash)) && [[ $prev == -* && $(_seglog_value_flags "$cmd") == *" $prev "* ]]; then
        _seglog_flag_value "$cmd" "$prev"
        return 0
    fi
    if [[ $cur == -* ]] && ! ((dashdash)); then
        COMPREPLY=($(compgen -W "$(_seglog_flags "$cmd")" -- "$cur"))
        return 0
    fi
    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "` + strings.Join(commandNames(app), " ") + `" -- "$cur"))
        return 0
    fi
    _seglog_arg "$cmd" "${#pos[@]}"
    return 0
}

complete -F _seglog seglog
`)
	return b.String()
}

func zshScript(app *cli.App) string {
	var b bytes.Buffer
	b.WriteString(`#compdef seglog
# zsh completion for seglog.
# Generated by ` + "`go generate ./...`" + ` from the command definitions; do not edit.
# Install: seglog completion zsh > "${fpath[1]}/_seglog"
#      or: source <(seglog completion zsh)

# _seglog_call ARGS: seglog's hidden completion helper, on the data
# directory given on the command line (or $SEGLOG_DATA_DIR); silent on error.
_seglog_call() {
    local -a d
    d=("${dd[@]}")
    if ((${#d} == 2)); then d[2]=${~d[2]}; fi
    ${words[1]} "${d[@]}" __complete "$@" 2>/dev/null
}

`)
	shCases(&b, app, true)
	b.WriteString("_seglog_commands() {\n    local -a cmds\n    cmds=(\n")
	for _, c := range visible(app.Commands) {
		for _, n := range c.Names() {
			fmt.Fprintf(&b, "        %s\n", sq(n+":"+strings.ReplaceAll(shortUsage(c.Usage), ":", `\:`)))
		}
	}
	b.WriteString("        'help:show help for a command'\n    )\n    _describe -t commands 'seglog command' cmds\n}\n\n")
	b.WriteString(`_seglog() {
    setopt localoptions ksharrays
    local cur=${words[CURRENT - 1]} prev=${words[CURRENT - 2]}
`)
	// With ksharrays, words is 0-based like bash's.
	b.WriteString(strings.NewReplacer("FIRST", "1", "LAST", "CURRENT - 1").Replace(shParse))
	b.WriteString(`    unsetopt ksharrays
    if [[ $prev == -* ]] && ! ((dashdash)) && [[ $(_seglog_value_flags "$cmd") == *" $prev "* ]]; then
        _seglog_flag_value "$cmd" "$prev"
        return
    fi
    if [[ $cur == -* ]] && ! ((dashdash)); then
        compadd -- ${=$(_seglog_flags "$cmd")}
        return
    fi
    if [[ -z $cmd ]]; then
        _seglog_commands
        return
    fi
    _seglog_arg "$cmd" "${#pos}"
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _seglog "$@"
else
    compdef _seglog seglog
fi
`)
	return b.String()
}

func fishAction(v complValue) string {
	switch v.kind {
	case kindWords:
		return "-x -a " + fishq(strings.Join(v.words, " "))
	case kindTopics:
		return "-x -a '(__seglog_call topics)'"
	case kindGroups:
		return "-x -a '(__seglog_call groups)'"
	case kindPartitions:
		return "-x -a '(__seglog_call partitions (__seglog_arg 1))'"
	case kindDirs:
		return "-r -f -a '(__fish_complete_directories)'"
	case kindFiles:
		return "-r -F"
	}
	return "-x"
}

func fishFlag(b *bytes.Buffer, cond string, f docFlag) {
	fmt.Fprintf(b, "complete -c seglog -n %s -l %s", fishq(cond), f.long)
	for _, a := range f.aliases {
		if len(a) == 1 {
			fmt.Fprintf(b, " -s %s", a)
		} else {
			fmt.Fprintf(b, " -l %s", a)
		}
	}
	if f.takesValue() {
		b.WriteString(" " + fishAction(flagValue(f)))
	}
	fmt.Fprintf(b, " -d %s\n", fishq(shortUsage(f.usage)))
}

func fishScript(app *cli.App) string {
	var b bytes.Buffer
	globals := docFlags(app.Flags)
	var vf []string
	for _, f := range globals {
		if f.takesValue() {
			vf = append(vf, f.names()...)
		}
	}
	b.WriteString(strings.ReplaceAll(`# fish completion for seglog.
# Generated by `+"`go generate ./...`"+` from the command definitions; do not edit.
# Install: seglog completion fish > ~/.config/fish/completions/seglog.fish

# __seglog_words: the command line so far, without flags and their values;
# sets __seglog_dd to a --data-dir given on it.
function __seglog_words
    set -l tokens (commandline -opc)
    set -g __seglog_dd
    set -l skip 0
    set -l dashdash 0
    set -l cmd
    set -l out
    for w in $tokens[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        if test $dashdash = 1
            set -a out $w
            continue
        end
        switch $w
            case --
                set dashdash 1
            case -d --data-dir
                set -g __seglog_dd --data-dir
                set skip 1
            case '-d=*' '--data-dir=*'
                set -g __seglog_dd --data-dir (string replace -r '^[^=]*=' '' -- $w)
            case '-*=*'
            case '-*'
                if contains -- $w (__seglog_value_flags $cmd)
                    set skip 1
                end
            case '*'
                if test -z "$cmd"
                    set cmd $w
                    set -a out $w
                else if test (count $out) -eq 1; and contains -- "$cmd:$w" SUBCOMMANDS
                    # "kafka export" is the command kafka-export.
                    set cmd $cmd-$w
                    set out[1] $cmd
                else
                    set -a out $w
                end
        end
    end
    # The value of a trailing -d: look it up again.
    set -l i (contains -i -- --data-dir $tokens; or contains -i -- -d $tokens)
    if test -n "$i"; and test (count $tokens) -gt $i
        set -g __seglog_dd --data-dir $tokens[(math $i + 1)]
    end
    test (count $out) -gt 0; and printf '%s\n' $out
end

function __seglog_value_flags
    switch "$argv[1]"
`, "SUBCOMMANDS", strings.Join(subcommandPairs(app), " ")))
	for _, cc := range complCommands(app) {
		var names []string
		for _, f := range docFlags(cc.cmd.Flags) {
			if f.takesValue() {
				names = append(names, f.names()...)
			}
		}
		if len(names) > 0 {
			fmt.Fprintf(&b, "        case %s\n            printf '%%s\\n' %s\n", cc.key, strings.Join(append(names, vf...), " "))
		}
	}
	fmt.Fprintf(&b, "        case '*'\n            printf '%%s\\n' %s\n    end\nend\n\n", strings.Join(vf, " "))
	b.WriteString(`# __seglog_cmd: the command being completed, if any.
function __seglog_cmd
    set -l w (__seglog_words)
    test (count $w) -ge 1; and echo $w[1]
end

# __seglog_using CMD [N]: completing CMD, with N arguments given (if N).
function __seglog_using
    set -l w (__seglog_words)
    test (count $w) -ge 1; or return 1
    test "$w[1]" = "$argv[1]"; or return 1
    test (count $argv) -lt 2; and return 0
    test (math (count $w) - 1) -eq $argv[2]
end

# __seglog_arg N: CMD's N-th argument (1-based).
function __seglog_arg
    set -l w (__seglog_words)
    set -l i (math $argv[1] + 1)
    test (count $w) -ge $i; and echo $w[$i]
end

# __seglog_call ARGS: seglog's hidden completion helper, on the data
# directory given on the command line (or $SEGLOG_DATA_DIR); silent on error.
function __seglog_call
    __seglog_words >/dev/null
    set -l exe (commandline -opc)[1]
    $exe $__seglog_dd __complete $argv 2>/dev/null
end

complete -c seglog -f
complete -c seglog -n 'not __seglog_cmd >/dev/null' -a help -d 'show help for a command'
complete -c seglog -n '__seglog_using help 0' -a ` + fishq(strings.Join(commandNames(app), " ")) + `
complete -c seglog -l help -s h -d 'show help'
`)
	for _, f := range globals {
		fishFlag(&b, "true", f)
	}
	for _, cc := range complCommands(app) {
		cmd, key := cc.cmd, cc.key
		fmt.Fprintf(&b, "\n# %s\n", strings.ReplaceAll(key, "-", " "))
		if cc.parent == "" {
			for _, n := range cmd.Names() {
				fmt.Fprintf(&b, "complete -c seglog -n 'not __seglog_cmd >/dev/null' -a %s -d %s\n", n, fishq(shortUsage(cmd.Usage)))
			}
		}
		for _, f := range docFlags(cmd.Flags) {
			fishFlag(&b, "__seglog_using "+key, f)
		}
		for n := 0; n < 3; n++ {
			v := argValue(app, cmd, n)
			if v.kind == kindNone {
				continue
			}
			cond := fmt.Sprintf("__seglog_using %s %d", key, n)
			if n == 2 {
				cond = "__seglog_using " + key + "; and not __seglog_using " + key + " 0; and not __seglog_using " + key + " 1"
			}
			act := strings.TrimPrefix(strings.TrimPrefix(fishAction(v), "-x "), "-r ")
			fmt.Fprintf(&b, "complete -c seglog -n %s %s\n", fishq(cond), act)
		}
	}
	return b.String()
}
