package commands

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/seglog/seglog/format"
)

// Exit statuses, as CLI.md fixes them.
const (
	exitOK       = 0 // success; also a closed stdout pipe
	exitError    = 1 // runtime error
	exitUsage    = 2 // bad flags, arguments or names
	exitProblems = 3 // a check found problems
)

// usageError is a command line that does not make sense; exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// errProblemsFound ends a checker that reported problems on stdout; exit 3.
var errProblemsFound = errors.New("problems found")

// exitCode maps an error from a command to its exit status.
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, syscall.EPIPE):
		return exitOK
	case errors.As(err, &ue), errors.Is(err, format.ErrTopicName):
		return exitUsage
	case errors.Is(err, errProblemsFound):
		return exitProblems
	}
	return exitError
}
