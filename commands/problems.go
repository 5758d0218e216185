package commands

import (
	"fmt"
	"strings"
)

// Errors met on some of a command's targets while it goes on with the others.

// problems collects what went wrong with some of the topics or partitions
// while the rest are still described. It ends the command with exit
// status 1 and a single error line naming each problem.
type problems []error

func (ps problems) Error() string {
	const shown = 5
	var b strings.Builder
	for i, err := range ps[:min(len(ps), shown)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	if len(ps) > shown {
		fmt.Fprintf(&b, "; and %d more", len(ps)-shown)
	}
	return b.String()
}

func (ps problems) Unwrap() []error { return ps }

// err returns nil when nothing went wrong, else the problems.
func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}
