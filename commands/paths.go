package commands

import (
	"path/filepath"
	"strings"
)

// Paths as the output shows them.

// relPath shows a path under the data directory relative to it.
func relPath(dataDir, path string) string {
	if r, err := filepath.Rel(dataDir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}
