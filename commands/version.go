package commands

import (
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print seglog's version and the revision it was built from",
		Description: "Only prints; changes no files. The same as 'seglog --version': the module\n" +
			"version, the VCS revision and its time, whether the tree had uncommitted changes,\n" +
			"and the Go release it was built with. A build from a source tree rather than\n" +
			"from a released module says (devel).\n\n" +
			"Examples:\n" +
			"  seglog version\n" +
			"  seglog --version",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("version: no arguments expected, got %s", strings.Join(c.Args().Slice(), " "))
			}
			cli.ShowVersion(c)
			return nil
		},
	}
}

// buildVersion is what --version prints after "seglog version ", from
// the build information the Go toolchain stamps into the binary.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel) (a development build: no build information recorded)"
	}
	return versionText(info)
}

// versionText: "v1.2.3 (revision 0123abc… of 2025-01-02T03:04:05Z,
// go1.26.8)", or for a build from a source tree "(devel) (a development
// build: revision …, with uncommitted changes, go1.26.8)".
func versionText(info *debug.BuildInfo) string {
	version := info.Main.Version
	var parts []string
	if version == "" || version == "(devel)" {
		version = "(devel)"
		parts = append(parts, "a development build:")
	}
	setting := func(key string) string {
		for _, s := range info.Settings {
			if s.Key == key {
				return s.Value
			}
		}
		return ""
	}
	rev := "no revision recorded"
	if r := setting("vcs.revision"); r != "" {
		rev = "revision " + r
		if t := setting("vcs.time"); t != "" {
			rev += " of " + t
		}
	}
	if setting("vcs.modified") == "true" {
		rev += ", with uncommitted changes"
	}
	parts = append(parts, rev+",")
	if info.GoVersion != "" {
		parts = append(parts, info.GoVersion)
	}
	return version + " (" + strings.TrimSuffix(strings.Join(parts, " "), ",") + ")"
}
