package fsx

import (
	"io"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ReadFile is a file open read-only by its descriptor alone, read with
// pread. Making an *os.File asks for the descriptor's flags and offers it
// to the network poller, system calls a regular file read this way never
// needs; a partition's floors open and close two files for every segment
// before the one read (see docs/performance.md), so those calls count.
// Close it once; it is not safe for concurrent Close.
type ReadFile struct {
	fd   int
	name string
}

// OpenReadFile opens path read-only.
func OpenReadFile(path string) (*ReadFile, error) {
	return openReadFileAt(unix.AT_FDCWD, path, path, unix.O_RDONLY|unix.O_CLOEXEC)
}

// openReadFileAt opens name in the directory open as dfd with flags; path
// names it in errors.
func openReadFileAt(dfd int, name, path string, flags int) (*ReadFile, error) {
	for {
		fd, err := unix.Openat(dfd, name, flags, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return &ReadFile{fd: fd, name: path}, nil
	}
}

// Name is the path the file was opened as.
func (f *ReadFile) Name() string { return f.name }

// ReadAt reads len(b) bytes at off, as os.File.ReadAt does: fewer only
// with an error, io.EOF at the end of the file.
func (f *ReadFile) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		m, err := unix.Pread(f.fd, b[n:], off+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, &os.PathError{Op: "read", Path: f.name, Err: err}
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

// Stat describes the open file.
func (f *ReadFile) Stat() (fs.FileInfo, error) {
	st, err := f.fstat()
	if err != nil {
		return nil, err
	}
	return statInfo{name: f.name, st: st}, nil
}

// Size is the open file's size, asked anew: Stat without the
// fs.FileInfo, for the scans that ask it of every segment they open.
func (f *ReadFile) Size() (int64, error) {
	st, err := f.fstat()
	return st.Size, err
}

func (f *ReadFile) fstat() (unix.Stat_t, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstat(f.fd, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return st, &os.PathError{Op: "stat", Path: f.name, Err: err}
		}
		return st, nil
	}
}

// AdviseSequential tells the kernel the file is read start to end (see
// OSFile's).
func (f *ReadFile) AdviseSequential() {
	_ = unix.Fadvise(f.fd, 0, 0, unix.FADV_SEQUENTIAL)
}

// Close closes the descriptor.
func (f *ReadFile) Close() error {
	if err := unix.Close(f.fd); err != nil {
		return &os.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// statInfo is an fs.FileInfo from fstat(2).
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s statInfo) Name() string       { return s.name }
func (s statInfo) Size() int64        { return s.st.Size }
func (s statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s statInfo) Sys() any           { return &s.st }

func (s statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if s.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if s.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if s.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// ListDir is the entries of directory dir in the order the file system
// keeps them: os.ReadDir without its sort by name, for listings whose
// callers order what they pick out of them (a partition's segments).
func ListDir(dir string) ([]os.DirEntry, error) {
	fd, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	// Made from a blocking descriptor, the *os.File does not offer it to
	// the network poller: os.Open's four fcntl calls and an epoll_ctl.
	d := os.NewFile(uintptr(fd), dir)
	defer d.Close()
	return d.ReadDir(-1)
}

func openDir(dir string) (int, error) {
	for {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: dir, Err: err}
		}
		return fd, nil
	}
}
