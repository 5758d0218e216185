package commands

import (
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether v, one of the env's stdin, stdout or stderr,
// is a terminal (tests give them as buffers, which are not).
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
