package commands

import (
	"path/filepath"
	"testing"
)

// A topic that is not there: the error says to create it, or, when the
// data directory itself is missing, to name the right one.
func TestMissingTopicAdvice(t *testing.T) {
	dir := newTopic(t, 1)
	gone := filepath.Join(t.TempDir(), "no-such-dir")
	for _, args := range [][]string{{"read", "nope"}, {"tail", "nope"}, {"describe", "nope"}, {"dump-index", "nope", "--partition", "0"}, {"append", "nope"}} {
		r := run(t, nil, append([]string{"-d", dir}, args...)...)
		if r.code != 1 {
			t.Errorf("%v: exit %d", args, r.code)
		}
		wantOneErrorLine(t, r.stderr, "topic nope in "+dir+": topic not found (create it with 'seglog create nope")
		r = run(t, nil, append([]string{"-d", gone}, args...)...)
		wantOneErrorLine(t, r.stderr, "the data directory "+gone+" does not exist: name the right one with --data-dir or SEGLOG_DATA_DIR")
	}
}
