package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Symbolic links below the data directory are never followed by a change:
// a link (to another disk, or planted) could lead a sweep, a recover or a
// copy to delete, truncate or write files outside the data directory.
// Reading through one is fine. The data directory itself may be a link.
//
// The checks are against links that are there, with O_NOFOLLOW on the
// last component of every file opened for writing; a process swapping a
// directory for a link at the very moment of a change is not defended
// against.

// ErrSymlink means a change would have gone through a symbolic link below
// the data directory.
var ErrSymlink = errors.New("symbolic link in the data directory")

// SymlinkError is a change refused because Path, below the data
// directory, is a symbolic link.
type SymlinkError struct {
	Path   string // the link
	Target string // what it points at, as stored in the link
}

func (e *SymlinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link (to %s): seglog changes no files through a symbolic link inside the data directory; replace the link with the directory or file it points at",
		e.Path, e.Target)
}

func (e *SymlinkError) Unwrap() error { return ErrSymlink }

// CheckNoSymlink returns a *SymlinkError when a directory on path's way
// below root (and, with last, path itself) is a symbolic link. Paths not
// below root, and components that do not exist yet, pass. root "" checks
// nothing.
func CheckNoSymlink(root, path string, last bool) error {
	if root == "" {
		return nil
	}
	rel, ok := relBelow(root, path)
	if !ok {
		return nil
	}
	parts := strings.Split(rel, string(filepath.Separator))
	if !last {
		parts = parts[:len(parts)-1]
	}
	at := filepath.Clean(root)
	for _, p := range parts {
		at = filepath.Join(at, p)
		fi, err := os.Lstat(at)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // nothing below a missing entry can be a link
			}
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return NewSymlinkError(at)
		}
	}
	return nil
}

// relBelow returns path relative to root when it lies below root.
func relBelow(root, path string) (string, bool) {
	root, path = filepath.Clean(root), filepath.Clean(path)
	if filepath.IsAbs(root) != filepath.IsAbs(path) {
		var err error
		if root, err = filepath.Abs(root); err != nil {
			return "", false
		}
		if path, err = filepath.Abs(path); err != nil {
			return "", false
		}
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// symlinkOpenError turns the ELOOP of an O_NOFOLLOW open of a link into a
// *SymlinkError.
func symlinkOpenError(name string, err error) error {
	if fi, lerr := os.Lstat(name); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return NewSymlinkError(name)
	}
	return err
}

// NewSymlinkError describes the link at path.
func NewSymlinkError(path string) *SymlinkError {
	to, _ := os.Readlink(path)
	return &SymlinkError{Path: path, Target: to}
}
