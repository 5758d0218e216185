package commands

import (
	"strings"

	"github.com/urfave/cli/v2"
)

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

// outputFlags reads --format and --template, which read and tail share.
func outputFlags(c *cli.Context) (string, template, error) {
	format := c.String("format")
	switch format {
	case "value", "json", "dump", "raw":
	default:
		return "", template{}, usagef("--format must be value, json, dump or raw, not %q", format)
	}
	if !c.IsSet("template") {
		return format, template{}, nil
	}
	if c.IsSet("format") {
		return "", template{}, usagef("--template and --format exclude each other")
	}
	tmpl, err := parseTemplate(c.String("template"))
	if err != nil {
		return "", template{}, usagef("--template: %v", err)
	}
	return "template", tmpl, nil
}
