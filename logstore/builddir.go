package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/logstore/internal/fsx"
)

// A copy builds a partition (or a new topic) in a temporary directory
// named buildPrefix...".tmp" beside where it goes, locked while the copy
// runs: recover and the store tell a dead copy's leftovers by these names
// and the lock.

// buildPrefix begins the names of copies' build directories.
const buildPrefix = ".copy-"

// removeDeadBuilds removes the build roots in dir of copies that died:
// those whose lock nobody holds; in the data directory, only those of
// topic.
func (s *Store) removeDeadBuilds(dir, topic string) {
	for _, path := range buildRoots(dir, topic) {
		if l, err := fsx.TryLock(path); err == nil {
			s.removeAll(path)
			l.Unlock()
		}
	}
}

// buildRoots lists the build roots in dir: of partitions, in a topic
// directory (topic ""); of new topics, in the data directory, those of
// topic only unless it is "*".
func buildRoots(dir, topic string) []string {
	entries, _ := os.ReadDir(dir)
	var roots []string
	for _, e := range entries {
		if !e.IsDir() || !isBuildDir(e.Name()) {
			continue
		}
		if topic != "" && topic != "*" {
			if t, ok := tempDirTopic(e.Name(), buildPrefix); !ok || t != topic[:min(len(topic), 200)] {
				continue
			}
		}
		roots = append(roots, filepath.Join(dir, e.Name()))
	}
	return roots
}

// isBuildDir reports whether name is a build directory's.
func isBuildDir(name string) bool {
	return strings.HasPrefix(name, buildPrefix) && strings.HasSuffix(name, ".tmp")
}

// buildInUse reports whether path is the temporary directory of a copy
// that is still running.
func buildInUse(path string) bool {
	if !isBuildDir(filepath.Base(path)) {
		return false
	}
	l, err := fsx.TryLock(path)
	if err != nil {
		return errors.Is(err, unix.EWOULDBLOCK)
	}
	l.Unlock()
	return false
}

// halfMadeTopic reports whether the topic directory dir holds what a copy
// or import into a new topic by an older seglog left when interrupted,
// and nothing else: no partition directory, only the topic's settings
// (or their temporary file) and build directories; or nothing at all.
// Such a directory is no topic: commands over every topic pass it over,
// and recover removes it.
func halfMadeTopic(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case (name == settingsFile || name == settingsFile+".tmp") && e.Type().IsRegular():
		case isBuildDir(name) && e.IsDir():
		default:
			return false
		}
	}
	return true
}
