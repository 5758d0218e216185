package commands

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// checkIntFlags refuses integer flag values that are not plain decimal
// numbers. The flag package under urfave/cli parses them in base 0, so
// "--partition 010" would read partition 8, "0x10" 16 and "1_0" 10: a
// value that does not parse as a number a person means is a usage error.
// args is what normalizeArgs returns.
func checkIntFlags(app *cli.App, args []string) error {
	flags := app.Flags
	var cmd *cli.Command
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if !isFlag(a) {
			// The command's name, or a subcommand's (quarantine purge):
			// their flags count from here on.
			var next *cli.Command
			if cmd == nil {
				next = app.Command(a)
			} else {
				next = cmd.Command(a)
			}
			if next != nil {
				cmd = next
				flags = append(append([]cli.Flag{}, app.Flags...), cmd.Flags...)
			}
			continue
		}
		n := flagSpan(flags, args, i)
		name, inline := flagName(a)
		if isIntFlag(lookupFlag(flags, a)) && (inline || n == 2) {
			v := args[i+n-1]
			if inline {
				v = a[strings.IndexByte(a, '=')+1:]
			}
			if !isDecimal(v) {
				dashes := "--"
				if len(name) == 1 {
					dashes = "-"
				}
				return usagef("invalid value %q for %s%s: write a decimal number (no leading zeros, no 0x)", v, dashes, name)
			}
		}
		i += n - 1
	}
	return nil
}

func isIntFlag(f cli.Flag) bool {
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return true
	}
	return false
}

// isDecimal: an optional sign, then "0" or digits not starting with 0.
func isDecimal(s string) bool {
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
