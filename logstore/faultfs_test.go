package logstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/seglog/seglog/logstore/internal/fsx"
)

// faultFS wraps osFS for tests: it records every change it passes on (in
// order), counts syncs, and can be told to fail a write part-way, a sync,
// or an open, mkdir or rename. Build a Store with it as
// &Store{dir: d, fs: fault}.
type faultFS struct {
	osFS

	mu     sync.Mutex
	events []string // "write PATH N", "sync PATH", "syncdir DIR", "create PATH", ...

	syncs    map[string]int // per file path
	dirSyncs map[string]int // per directory

	// writeFaults are armed once each: the first Write to a file they
	// match writes only n bytes, then fails with err.
	writeFaults []*writeFault
	// syncErr, when it returns non-nil for a path, fails Sync on it.
	syncErr func(path string) error
	// openErr, mkdirErr and renameHook run before the real operation and
	// fail it when they return non-nil.
	openErr    func(path string, flag int) error
	mkdirErr   func(path string) error
	renameHook func(oldpath, newpath string) error
}

type writeFault struct {
	match func(path string) bool
	n     int
	err   syscall.Errno
	fired bool
}

func newFaultFS() *faultFS {
	return &faultFS{syncs: map[string]int{}, dirSyncs: map[string]int{}}
}

// failWrite arms a one-shot fault: the next Write to a file whose path
// ends with suffix writes only n bytes, then fails with errno.
func (fs *faultFS) failWrite(suffix string, n int, errno syscall.Errno) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.writeFaults = append(fs.writeFaults, &writeFault{
		match: func(p string) bool { return strings.HasSuffix(p, suffix) },
		n:     n, err: errno,
	})
}

// failSync makes every Sync of a file whose path ends with suffix fail.
func (fs *faultFS) failSync(suffix string, errno syscall.Errno) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.syncErr = func(p string) error {
		if strings.HasSuffix(p, suffix) {
			return errno
		}
		return nil
	}
}

func (fs *faultFS) record(format string, args ...any) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.events = append(fs.events, fmt.Sprintf(format, args...))
}

// Events returns a copy of what happened so far.
func (fs *faultFS) Events() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]string(nil), fs.events...)
}

// reset forgets events and counts.
func (fs *faultFS) reset() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.events = nil
	fs.syncs = map[string]int{}
	fs.dirSyncs = map[string]int{}
}

func (fs *faultFS) syncCount(path string) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.syncs[filepath.Clean(path)]
}

func (fs *faultFS) dirSyncCount(dir string) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.dirSyncs[filepath.Clean(dir)]
}

// totalSyncs counts file syncs and directory syncs of everything.
func (fs *faultFS) totalSyncs() (files, dirs int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, n := range fs.syncs {
		files += n
	}
	for _, n := range fs.dirSyncs {
		dirs += n
	}
	return files, dirs
}

func (fs *faultFS) OpenFile(name string, flag int, perm os.FileMode) (file, error) {
	fs.mu.Lock()
	hook := fs.openErr
	fs.mu.Unlock()
	if hook != nil {
		if err := hook(name, flag); err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
	f, err := fs.osFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if flag&os.O_CREATE != 0 {
		fs.record("create %s", filepath.Clean(name))
	} else {
		fs.record("open %s", filepath.Clean(name))
	}
	return &faultFile{file: f, fs: fs, path: filepath.Clean(name)}, nil
}

func (fs *faultFS) Rename(oldpath, newpath string, noReplace bool) error {
	fs.mu.Lock()
	hook := fs.renameHook
	fs.mu.Unlock()
	if hook != nil {
		if err := hook(oldpath, newpath); err != nil {
			return err
		}
	}
	fs.record("rename %s %s", filepath.Clean(oldpath), filepath.Clean(newpath))
	return fs.osFS.Rename(oldpath, newpath, noReplace)
}

func (fs *faultFS) Exchange(a, b string) error {
	fs.mu.Lock()
	hook := fs.renameHook
	fs.mu.Unlock()
	if hook != nil {
		if err := hook(a, b); err != nil {
			return err
		}
	}
	fs.record("exchange %s %s", filepath.Clean(a), filepath.Clean(b))
	return fs.osFS.Exchange(a, b)
}

func (fs *faultFS) Remove(name string) error {
	fs.record("remove %s", filepath.Clean(name))
	return fs.osFS.Remove(name)
}

func (fs *faultFS) Mkdir(name string, perm os.FileMode) error {
	fs.mu.Lock()
	hook := fs.mkdirErr
	fs.mu.Unlock()
	if hook != nil {
		if err := hook(name); err != nil {
			return &os.PathError{Op: "mkdir", Path: name, Err: err}
		}
	}
	fs.record("mkdir %s", filepath.Clean(name))
	return fs.osFS.Mkdir(name, perm)
}

func (fs *faultFS) SyncDir(name string) error {
	name = filepath.Clean(name)
	fs.mu.Lock()
	fs.dirSyncs[name]++
	fs.mu.Unlock()
	fs.record("syncdir %s", name)
	return fs.osFS.SyncDir(name)
}

type faultFile struct {
	file
	fs   *faultFS
	path string
}

func (f *faultFile) Write(b []byte) (int, error) {
	f.fs.mu.Lock()
	var fault *writeFault
	for _, wf := range f.fs.writeFaults {
		if !wf.fired && wf.match(f.path) {
			wf.fired, fault = true, wf
			break
		}
	}
	f.fs.mu.Unlock()
	if fault != nil {
		n, err := f.file.Write(b[:min(fault.n, len(b))])
		f.fs.record("write %s %d (failed: %v)", f.path, n, fault.err)
		if err != nil {
			return n, err
		}
		return n, &os.PathError{Op: "write", Path: f.path, Err: fault.err}
	}
	n, err := f.file.Write(b)
	f.fs.record("write %s %d", f.path, n)
	return n, err
}

// CopyFrom goes through Write, so that write faults hit copies too.
func (f *faultFile) CopyFrom(src *os.File, off, n int64) error {
	return fsx.CopyThroughBuffer(f, src, off, n)
}

func (f *faultFile) StartWriteback(off, n int64) error {
	f.fs.record("writeback %s %d %d", f.path, off, n)
	return f.file.StartWriteback(off, n)
}

func (f *faultFile) Truncate(size int64) error {
	f.fs.record("truncate %s %d", f.path, size)
	return f.file.Truncate(size)
}

func (f *faultFile) Sync() error {
	f.fs.mu.Lock()
	hook := f.fs.syncErr
	f.fs.syncs[f.path]++
	f.fs.mu.Unlock()
	f.fs.record("sync %s", f.path)
	if hook != nil {
		if err := hook(f.path); err != nil {
			return &os.PathError{Op: "fdatasync", Path: f.path, Err: err}
		}
	}
	return f.file.Sync()
}
