package commands

//go:generate go run ./gendocs

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// The man pages (manpages.go) and completion scripts (completion_model.go,
// completion_scripts.go) shipped with the binary are generated from the
// command definitions by `go generate ./...`; TestDocsUpToDate fails when
// the committed ones are stale. This file is what both read of the app:
// its commands, their flags and the environment variables.

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
	for _, sh := range completionShells {
		files["seglog."+sh.name] = []byte(completionScript(app, sh.value))
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
	values      []string // the values of a choiceFlag, nil for others
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
		if cf, ok := f.(interface{ valueNames() []string }); ok {
			df.values = cf.valueNames()
		}
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
		if f.long == progressAfterName { // heeded only where there are bars
			for _, cmd := range progressCommands {
				add(f, cmd)
			}
			continue
		}
		add(f, "")
	}
	for _, cmd := range manCommands(app) {
		for _, f := range docFlags(cmd.Flags) {
			add(f, cmd.Name)
		}
	}
	return append(out, envDoc{name: strings.Join(localeEnv, ", "), commands: []string{"describe"},
		what: "The locale: the first of these that is set tells whether describe --timeline draws block characters (a UTF-8 locale) or ASCII."})
}
