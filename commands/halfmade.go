package commands

import (
	"path/filepath"

	"github.com/seglog/seglog/logstore"
)

// warnHalfMadeTopics warns, for a command over every topic, of each
// directory with a topic's name that an interrupted copy or import into a
// new topic left holding no partition. It is no topic, so the command
// passes over it rather than fail on every run, and says how to be rid
// of it.
func warnHalfMadeTopics(e *env, store *logstore.Store) {
	half, _ := store.HalfMadeTopics()
	for _, name := range half {
		e.warn("skipping %s: no topic, but what an interrupted copy or import into a new topic left (it holds no partition); 'seglog recover' removes it",
			filepath.Join(e.dataDir, name))
	}
}
