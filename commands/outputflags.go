package commands

import (
	"github.com/urfave/cli/v2"
)

// outputFormat is how read and tail print a record.
type outputFormat int

const (
	formatValue outputFormat = iota
	formatJSON
	formatDump
	formatRaw
	formatTemplate // --template, not a --format value
)

// outputFormats are the values of --format.
var outputFormats = choices[outputFormat]{
	{"value", formatValue, "the value and a newline"},
	{"json", formatJSON, "one object a line"},
	{"dump", formatDump, "forensic: position, size, crc, escaped key and value"},
	{"raw", formatRaw, "values, nothing added"},
}

// formatFlag is the --format flag read and tail share.
func formatFlag() cli.Flag {
	return outputFormats.flag("format", "value", "`FORMAT`")
}

// outputFlags reads --format and --template, which read and tail share.
func outputFlags(c *cli.Context) (outputFormat, template, error) {
	format, err := parseChoice(c, "format", outputFormats)
	if err != nil {
		return 0, template{}, err
	}
	if !c.IsSet("template") {
		return format, template{}, nil
	}
	if c.IsSet("format") {
		return 0, template{}, usagef("--template and --format exclude each other")
	}
	tmpl, err := parseTemplate(c.String("template"))
	if err != nil {
		return 0, template{}, usagef("--template: %v", err)
	}
	return formatTemplate, tmpl, nil
}
