// Package commands is seglog's command line: one file per subcommand
// (append.go for append, kafka_export.go for kafka export), each holding
// its flags, parsing them, calling logstore or kafkabridge and writing its
// output, plus the shared pieces in files named for them: app.go (the app
// and its global flags), args.go and flagcheck.go (the command line
// before urfave/cli sees it), choices.go (the closed sets of flag values),
// units.go, table.go, output.go, exit.go (exit statuses), and docs.go,
// manpages.go and completion_*.go, which generate the man pages and shell
// completions from the command definitions.
//
// It owns flags, output and exit statuses. The contents of the data
// directory are logstore's to read and write: this package only looks at
// paths (stat, and a directory's names to say what it is in targets.go)
// to tell what an argument names. Of the module it imports format,
// logstore and kafkabridge; nothing imports it but main and gendocs.
package commands
