package commands

import "errors"

// topicReport runs a report of one section per target (describe, its
// timeline): gather makes a target's section; text sections go out as
// each is made (first tells the first), so a data directory of many
// topics shows its first at once, and JSON sections all at the end, also
// when there are none and nothing failed. A target that fails is a
// problem the report goes on past; a usage error ends it.
func topicReport[T any](targets []string, json bool, probs *problems, gather func(arg string) (T, error), text func(t T, first bool) error, writeJSON func([]T) error) error {
	var sections []T
	written := 0
	for _, arg := range targets {
		t, err := gather(arg)
		var ue *usageError
		if errors.As(err, &ue) {
			return err
		}
		if err != nil {
			*probs = append(*probs, err)
			continue
		}
		if json {
			sections = append(sections, t)
			continue
		}
		if err := text(t, written == 0); err != nil {
			return err
		}
		written++
	}
	if json && (len(sections) > 0 || len(*probs) == 0) {
		if err := writeJSON(sections); err != nil {
			return err
		}
	}
	return probs.err()
}
