//go:build ignore

// Command maxrss runs a command and writes its user and system CPU seconds
// and its peak resident set size in KiB (getrusage ru_maxrss) to a file, as
// GNU time -f "%U %S %M" does. bench/run uses it only where /usr/bin/time
// is missing or is not GNU time.
//
// Usage: maxrss -o FILE COMMAND [ARGS...]
//
// stdin, stdout and stderr pass through; the exit status is the command's.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) < 4 || os.Args[1] != "-o" {
		fmt.Fprintln(os.Stderr, "usage: maxrss -o FILE COMMAND [ARGS...]")
		os.Exit(2)
	}
	out := os.Args[2]
	cmd := exec.Command(os.Args[3], os.Args[4:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "maxrss:", err)
		os.Exit(127)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru != nil {
		if werr := os.WriteFile(out, fmt.Appendf(nil, "%.2f %.2f %d\n",
			cmd.ProcessState.UserTime().Seconds(), cmd.ProcessState.SystemTime().Seconds(), ru.Maxrss), 0o644); werr != nil {
			fmt.Fprintln(os.Stderr, "maxrss:", werr)
			os.Exit(1)
		}
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
