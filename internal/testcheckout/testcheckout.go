// Package testcheckout fails a package's test run when the run changed
// the source checkout: tests write under t.TempDir() only, so that a test
// run leaves `git status` as it found it.
package testcheckout

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Run runs m and returns its exit status, turned into 1 (with the paths
// named on stderr) when `git status` of the checkout differs afterwards.
// Outside a git checkout, without git, with skip (a run told to rewrite
// committed files, such as -update) or when a flag asked the test binary
// to write files (-cpuprofile, -coverprofile, ...), it only runs m.
func Run(m interface{ Run() int }, skip bool) int { return run(m, skip, os.Stderr) }

func run(m interface{ Run() int }, skip bool, stderr io.Writer) int {
	before, ok := status()
	code := m.Run()
	if !ok || skip || writesFiles() {
		return code
	}
	after, ok := status()
	if !ok {
		return code
	}
	if changed := diff(before, after); len(changed) > 0 {
		fmt.Fprintf(stderr, "testcheckout: the tests changed the checkout (write under t.TempDir() instead):\n\t%s\n",
			strings.Join(changed, "\n\t"))
		return 1
	}
	return code
}

// status is `git status` of the checkout holding the working directory,
// one entry per file (untracked and ignored ones too); false when that
// cannot be told.
func status() ([]string, bool) {
	out, err := exec.Command("git", "status", "--porcelain=v1", "-z", "--ignored", "--untracked-files=all").Output()
	if err != nil {
		return nil, false
	}
	var entries []string
	for e := range bytes.SplitSeq(out, []byte{0}) {
		if len(e) > 0 {
			entries = append(entries, string(e))
		}
	}
	return entries, true
}

// diff lists the entries that are new in after, then those gone from it.
func diff(before, after []string) []string {
	in := func(entries []string) map[string]bool {
		set := make(map[string]bool, len(entries))
		for _, e := range entries {
			set[e] = true
		}
		return set
	}
	was, is := in(before), in(after)
	var changed []string
	for _, e := range after {
		if !was[e] {
			changed = append(changed, e)
		}
	}
	for _, e := range before {
		if !is[e] {
			changed = append(changed, "gone: "+e)
		}
	}
	return changed
}

// writesFiles: a testing flag told the test binary to write a file, which
// may land in the package directory.
func writesFiles() bool {
	for _, name := range []string{"cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "coverprofile", "outputdir"} {
		if f := flag.Lookup("test." + name); f != nil && f.Value.String() != "" {
			return true
		}
	}
	return false
}
