package fsx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// FS is the seam every change to disk goes through: logstore's tests put
// fault-injecting and power-cut models behind it.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// Rename renames oldpath to newpath; with noReplace it fails with
	// os.ErrExist instead of replacing an existing newpath.
	Rename(oldpath, newpath string, noReplace bool) error
	// Exchange swaps two existing paths atomically; it fails with
	// errNoExchange where the filesystem cannot.
	Exchange(a, b string) error
	Remove(name string) error
	// Link makes newname a second name (hard link) of oldname.
	Link(oldname, newname string) error
	Mkdir(name string, perm os.FileMode) error
	// SyncDir makes the entries of directory name durable.
	SyncDir(name string) error
}

// File is an open file as logstore uses it.
type File interface {
	io.ReaderAt
	io.Writer
	Name() string
	Stat() (os.FileInfo, error)
	Truncate(size int64) error
	// Sync makes the file's data durable (fdatasync).
	Sync() error
	// StartWriteback asks the kernel to start writing [off, off+n) to disk
	// without waiting: a hint that makes a later Sync shorter.
	StartWriteback(off, n int64) error
	// CopyFrom appends n bytes of src, from byte off on, to the file: in
	// the kernel (copy_file_range: no copy through user space, a reflink
	// where the filesystem shares blocks) where it can, else through a
	// buffer. Fewer than n bytes in src is io.ErrUnexpectedEOF.
	CopyFrom(src *os.File, off, n int64) error
	Close() error
}

// OS is the real filesystem. Below Root (the data directory; "" for
// none) it changes nothing through a symbolic link: see nofollow.go.
type OS struct{ Root string }

// OSFile is an open file of the real filesystem.
type OSFile struct{ *os.File }

func (o OS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		if err := CheckNoSymlink(o.Root, name, false); err != nil {
			return nil, err
		}
		flag |= unix.O_NOFOLLOW
	}
	f, err := openOwned(name, flag, perm) // os.OpenFile; see owner.go for who owns new files
	if errors.Is(err, unix.ELOOP) {
		err = symlinkOpenError(name, err)
	}
	if err != nil {
		return nil, err
	}
	return OSFile{f}, nil
}

// filesMoved counts the renames and removals this process made through
// OS. A partition checks the segments it keeps open again when it changed:
// deletions this process made (a sweep or recover in-process) are seen by
// the very next read.
var filesMoved atomic.Uint64

// FilesMoved is how many renames and removals this process has made
// through OS so far.
func FilesMoved() uint64 { return filesMoved.Load() }

func (o OS) Rename(oldpath, newpath string, noReplace bool) error {
	defer filesMoved.Add(1)
	if err := o.checkDirs(oldpath, newpath); err != nil {
		return err
	}
	if !noReplace {
		return os.Rename(oldpath, newpath)
	}
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// The filesystem lacks RENAME_NOREPLACE: check, then rename. Only
		// a racing creator of the same name can slip in between.
		if _, serr := os.Lstat(newpath); serr == nil {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: os.ErrExist}
		}
		return os.Rename(oldpath, newpath)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// errNoExchange means the filesystem cannot swap two directories
// atomically.
var errNoExchange = errors.New("the filesystem cannot swap directories atomically (renameat2 RENAME_EXCHANGE)")

func (o OS) Exchange(a, b string) error {
	defer filesMoved.Add(1)
	// Swapped out, a link would be emptied by the removal of what was
	// swapped: its target's files, outside the data directory.
	for _, p := range []string{a, b} {
		if err := CheckNoSymlink(o.Root, p, true); err != nil {
			return err
		}
	}
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		err = errNoExchange
	}
	if err != nil {
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}

// Remove, Link and Mkdir never follow a link in their last component:
// only the directories on the way are checked.
func (o OS) Remove(name string) error {
	defer filesMoved.Add(1)
	if err := o.checkDirs(name); err != nil {
		return err
	}
	return os.Remove(name)
}

func (o OS) Link(oldname, newname string) error {
	if err := o.checkDirs(oldname, newname); err != nil {
		return err
	}
	return os.Link(oldname, newname)
}

func (o OS) Mkdir(name string, perm os.FileMode) error {
	if err := o.checkDirs(name); err != nil {
		return err
	}
	return mkdirOwned(name, perm)
}

// checkDirs refuses paths whose way below the data directory passes a
// symbolic link.
func (o OS) checkDirs(paths ...string) error {
	for _, p := range paths {
		if err := CheckNoSymlink(o.Root, p, false); err != nil {
			return err
		}
	}
	return nil
}

func (OS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "fsync", Path: name, Err: errors.Unwrap(err)}
	}
	return nil
}

func (f OSFile) Sync() error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
		}
		return nil
	}
}

func (f OSFile) StartWriteback(off, n int64) error {
	return unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

func (f OSFile) CopyFrom(src *os.File, off, n int64) error {
	end := off + n
	for off < end {
		// Pieces of at most 1 GiB: the kernel copies no more at once anyway.
		m, err := unix.CopyFileRange(int(src.Fd()), &off, int(f.Fd()), nil, int(min(end-off, 1<<30)), 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) ||
				errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EBADF) || errors.Is(err, unix.EPERM) {
				return CopyThroughBuffer(f, src, off, end-off)
			}
			return &os.PathError{Op: "copy_file_range", Path: f.Name(), Err: err}
		}
		if m == 0 {
			return fmt.Errorf("copy %s to %s: %w", src.Name(), f.Name(), io.ErrUnexpectedEOF)
		}
	}
	return nil
}

// CopyThroughBuffer is CopyFrom the plain way: pread into a buffer, write.
func CopyThroughBuffer(w io.Writer, src *os.File, off, n int64) error {
	buf := make([]byte, min(n, 1<<20))
	for n > 0 {
		m, err := src.ReadAt(buf[:min(n, int64(len(buf)))], off)
		if m > 0 {
			if _, werr := w.Write(buf[:m]); werr != nil {
				return werr
			}
			off, n = off+int64(m), n-int64(m)
		}
		if n > 0 && err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("copy %s: %w", src.Name(), err)
		}
	}
	return nil
}

// OpenReadStat is OpenRead and the file's size.
func OpenReadStat(name string) (OSFile, int64, error) {
	f, err := OpenRead(name)
	if err != nil {
		return OSFile{}, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return OSFile{}, 0, err
	}
	return OSFile{f}, fi.Size(), nil
}

// OpenRead opens a file read-only in as few system calls as it takes.
// os.Open also asks whether the file can join the network poller, which a
// regular file never can (docs/performance.md: describing many segments).
func OpenRead(name string) (*os.File, error) {
	for {
		fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

// OpenIndex opens a segment's index file to read it, and its size.
// It never reads one through a symbolic link and only reads a regular
// file (a pipe would block the open, a directory holds no entries): else
// a *NotRegularError, and the reader goes on without the hint.
func OpenIndex(name string) (*ReadFile, int64, error) {
	return OpenIndexAt(unix.AT_FDCWD, name, name)
}

// OpenIndexAt is OpenIndex of name in the directory open as dfd; path
// names the file in errors.
func OpenIndexAt(dfd int, name, path string) (*ReadFile, int64, error) {
	f, err := openReadFileAt(dfd, name, path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			err = NewNotRegularError(path, fs.ModeSymlink)
		}
		return nil, 0, err
	}
	st, err := f.fstat()
	if info := (statInfo{st: st}); err == nil && !info.Mode().IsRegular() {
		err = NewNotRegularError(path, info.Mode())
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size, nil
}

// AsRegular returns f, open as path, and its size when it is a regular
// file; else it closes f and returns a *NotRegularError.
func AsRegular(f *os.File, path string) (OSFile, int64, error) {
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = NewNotRegularError(path, fi.Mode())
	}
	if err != nil {
		f.Close()
		return OSFile{}, 0, err
	}
	return OSFile{f}, fi.Size(), nil
}

// AdviseSequential tells the kernel the file is read start to end, for a
// larger read-ahead on a cold cache: segfile's scans ask for it. Only a
// hint: an error changes nothing a reader sees.
func (f OSFile) AdviseSequential() {
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL)
}

// PathErrCause is what went wrong in err, without the operation and path
// of an *os.PathError on path: the messages that use it name path
// themselves, and saying it twice reads badly.
func PathErrCause(err error, path string) error {
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return pe.Err
	}
	return err
}
