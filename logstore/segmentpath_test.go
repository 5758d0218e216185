package logstore

import (
	"path/filepath"
	"testing"

	"github.com/seglog/seglog/format"
)

// segment.path builds what filepath.Join gives, whatever the directory.
func TestSegmentPathIsJoin(t *testing.T) {
	for _, dir := range []string{"", ".", "/", "..", "a", "a/b", "/tmp/d/t/0", "a/", "a//b", "./a", "a/./b", "a/../b", "../a", "/a/b/."} {
		for _, ext := range []string{format.LogExt, format.IndexExt, format.TimeIndexExt} {
			seg := segment{dir: dir, base: 1234}
			if got, want := seg.path(ext), filepath.Join(dir, format.SegmentName(1234, ext)); got != want {
				t.Errorf("segment{dir: %q}.path(%q) = %q, want %q", dir, ext, got, want)
			}
		}
	}
}
