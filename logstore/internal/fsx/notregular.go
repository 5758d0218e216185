package fsx

import (
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/seglog/seglog/format"
)

// NotRegularError is a segment file (a .log, .index or .timeindex where a
// segment's belong) that is not a regular file: a symbolic link, a
// directory, a pipe, a socket or a device (docs/format.md §1). Readers
// refuse such a .log and go on without such an index; commands that
// change files refuse both.
type NotRegularError struct {
	Path   string
	Mode   fs.FileMode // its type
	Target string      // a symbolic link's, as stored in it
}

// NewNotRegularError describes the file at path, of type mode.
func NewNotRegularError(path string, mode fs.FileMode) *NotRegularError {
	e := &NotRegularError{Path: path, Mode: mode.Type()}
	if mode&fs.ModeSymlink != 0 {
		e.Target, _ = os.Readlink(path)
	}
	return e
}

func (e *NotRegularError) Error() string {
	what := "segment"
	if e.index() {
		what = "index file"
	}
	return fmt.Sprintf("%s %s is not a regular file (%s); %s", what, e.Path, e.Kind(), e.Advice())
}

func (e *NotRegularError) index() bool { return !strings.HasSuffix(e.Path, format.LogExt) }

// Kind says what the file is instead: "a directory", "a symbolic link to
// ...".
func (e *NotRegularError) Kind() string {
	if e.Mode&fs.ModeSymlink != 0 {
		return "a symbolic link to " + e.Target
	}
	return FileKind(e.Mode)
}

// Advice says what to do about it.
func (e *NotRegularError) Advice() string {
	if e.Mode&fs.ModeSymlink != 0 {
		return "seglog uses segment files only as regular files: replace the link with the file it points at"
	}
	if e.index() {
		return "move it out of the partition directory ('seglog recover' then rebuilds the index)"
	}
	return "move it out of the partition directory"
}

// Unwrap makes a link an ErrSymlink.
func (e *NotRegularError) Unwrap() error {
	if e.Mode&fs.ModeSymlink != 0 {
		return ErrSymlink
	}
	return nil
}

// FileKind names a file type for messages.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a file"
}
