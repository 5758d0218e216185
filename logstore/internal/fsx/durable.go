package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile replaces path with data durably (see WriteFileDurably), by way
// of the temporary tmp beside it.
func WriteFile(fsys FS, path, tmp string, data []byte) error {
	_, err := WriteFileDurably(fsys, path, tmp, false, func(f File) error {
		_, err := f.Write(data)
		return err
	})
	return err
}

// WriteFileDurably makes path hold what write puts into the temporary tmp
// beside it: fsync, rename (with noReplace, never over an existing path),
// fsync of the directory. A failure before the rename leaves path as it
// was and removes the temporary; renamed tells whether the rename was made.
func WriteFileDurably(fsys FS, path, tmp string, noReplace bool, write func(File) error) (renamed bool, err error) {
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return false, err
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = RenameIntoPlace(fsys, tmp, path, noReplace)
	}
	if err != nil {
		_ = fsys.Remove(tmp)
		return false, err
	}
	return true, fsys.SyncDir(filepath.Dir(path))
}

// RenameIntoPlace renames tmp to path. A directory in the way is named as
// such: rename(2) says only "file exists".
func RenameIntoPlace(fsys FS, tmp, path string, noReplace bool) error {
	err := fsys.Rename(tmp, path, noReplace)
	if fi, serr := os.Lstat(path); err != nil && serr == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory where a file belongs (move it away and try again)", path)
	}
	return err
}

// MkdirAll makes dir and missing parents, fsyncing each parent that gained
// an entry so the new directories survive a power cut.
func MkdirAll(fsys FS, dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := MkdirAll(fsys, parent); err != nil {
			return err
		}
	}
	if err := fsys.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return fsys.SyncDir(parent)
}

// RemoveAll deletes a tree of seglog's own making (a failed create).
func RemoveAll(fsys FS, dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			RemoveAll(fsys, p)
		} else {
			_ = fsys.Remove(p)
		}
	}
	_ = fsys.Remove(dir)
}
