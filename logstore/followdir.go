package logstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// fileID tells directories apart (device and inode): a directory swapped
// in at the path is another one.
type fileID struct{ dev, ino uint64 }

// errReplaced unwinds what the follower was doing in a directory that
// turned out to have been replaced (it has switched to the new one).
var errReplaced = errors.New("partition directory replaced")

// list lists the segments of the directory being read, after checking that
// it is still the one at the path (errReplaced when it was not: the
// follower has switched to the new one).
func (f *Follower) list() (segs []segment, err error) {
	if err := f.openDir(); err != nil {
		return nil, err
	}
	if f.d == nil {
		return nil, nil // gone, and let go of: it holds nothing any more
	}
	f.dirty = false
	defer func() {
		f.empty = len(segs) == 0
		f.updatePolling()
	}()
	segs, _, err = stableSegments(f.dir, func() ([]os.DirEntry, error) {
		if _, err := f.d.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("list %s: %w", f.dir, err)
		}
		entries, err := f.d.ReadDir(-1)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("list %s: %w", f.dir, err)
		}
		return entries, err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // removed: it holds nothing any more
	}
	return segs, err
}

// openDir makes sure the follower reads through the directory now at its
// path: the one it had, opened again if it let go of it, or the one that
// replaced it (errReplaced, after switching). Gone, it keeps what it has
// open, or has none (f.d nil).
func (f *Follower) openDir() error {
	if f.d != nil {
		replaced, err := f.checkDir(false)
		if err == nil && replaced {
			err = errReplaced
		}
		return err
	}
	dfd, id, err := openDirFD(f.dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
		f.setGone()
		return nil
	}
	if err != nil {
		return err
	}
	if id != f.dirID {
		unix.Close(dfd)
		if _, err := f.replace(); err != nil {
			return err
		}
		return errReplaced
	}
	f.d, f.dfd = os.NewFile(uintptr(dfd), f.dir), dfd
	if f.gone {
		f.gone = false
		delete(f.set.topicsGone, filepath.Dir(f.dir))
		f.addWatch()
		f.updatePolling()
	}
	return nil
}

// setGone notes that nothing is at the directory's path, warning once.
func (f *Follower) setGone() {
	if !f.gone {
		f.gone = true
		topicDir := filepath.Dir(f.dir)
		if _, err := os.Lstat(topicDir); errors.Is(err, fs.ErrNotExist) {
			// Its topic directory went with it: a delete, said once for
			// all the topic's partitions.
			if !f.set.topicsGone[topicDir] {
				f.set.topicsGone[topicDir] = true
				f.warnf("topic %s was deleted (%s is gone); waiting for it to come back", filepath.Dir(f.name), topicDir)
			}
		} else {
			f.warnf("the partition directory of %s (%s) is gone; waiting for it to come back", f.name, f.dir)
		}
		f.updatePolling()
	}
}

// checkDir compares the directory at the path with the one being read.
// Gone, it warns once and keeps reading what it has; replaced, it switches
// to the new one (true). rewatch renews the inotify watch even when the
// directory is the same (it was moved away and back).
func (f *Follower) checkDir(rewatch bool) (bool, error) {
	var st unix.Stat_t
	err := unix.Stat(f.dir, &st)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		f.setGone()
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "stat", Path: f.dir, Err: err}
	}
	wasGone := f.gone
	if wasGone {
		delete(f.set.topicsGone, filepath.Dir(f.dir))
	}
	if (fileID{dev: uint64(st.Dev), ino: st.Ino}) == f.dirID {
		if wasGone {
			f.gone = false
			f.updatePolling()
		}
		if rewatch || wasGone {
			f.addWatch()
		}
		return false, nil
	}
	return f.replace()
}

// replace switches to the directory now at the path: to read on from the
// same offset there when it holds the same log (the record read last is
// there, the same), else to read it from its start.
func (f *Follower) replace() (bool, error) {
	dfd, id, err := openDirFD(f.dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
		f.setGone() // gone again already: look later
		return false, nil
	}
	if err != nil {
		return false, err
	}
	f.closeFiles()
	f.d, f.dfd, f.dirID = os.NewFile(uintptr(dfd), f.dir), dfd, id
	f.gone = false
	f.addWatch()
	f.updatePolling()
	f.dirty, f.later = true, false
	if why := f.sameLog(); why != "" {
		f.anew(why)
		return true, nil
	}
	f.from = f.Position()
	f.jump = jumpReplaced
	f.warnf("the partition directory of %s (%s) was replaced; reading on from offset %d in the new one", f.name, f.dir, f.from)
	return true, nil
}

// sameLog tells whether the directory now open holds the log read so far:
// "" when it holds the record read last, the same (a copy such as
// copy-partition --force swaps in), else why not.
func (f *Follower) sameLog() string {
	if !f.prev.ok {
		if f.Position() == 0 {
			return "" // nothing read, nothing to miss
		}
		return "nothing read from it tells"
	}
	p, err := OpenPartitionDir(f.dir, f.name)
	if err != nil {
		return err.Error()
	}
	defer p.Close()
	it, err := p.Read(f.prev.offset)
	if err != nil {
		return err.Error()
	}
	defer it.Close()
	if !it.Next() || it.Record().Offset != f.prev.offset {
		return fmt.Sprintf("it has no offset %d", f.prev.offset)
	}
	if r := it.Record(); r.Timestamp != f.prev.ts || r.CRC != f.prev.crc {
		return fmt.Sprintf("its offset %d is another record", f.prev.offset)
	}
	return ""
}

// anew reads the partition from its start, as a log new to the follower,
// saying why.
func (f *Follower) anew(why string) {
	f.closeSeg()
	f.from, f.next, f.prev.ok = 0, 0, false
	f.dirty, f.later, f.jump = true, false, jumpAnew
	f.warnf("the partition directory of %s (%s) holds another log now (%s); reading it from its start", f.name, f.dir, why)
}

// openDirFD opens a directory and says which one it is.
func openDirFD(dir string) (int, fileID, error) {
	for {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, fileID{}, &os.PathError{Op: "open", Path: dir, Err: err}
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, fileID{}, &os.PathError{Op: "fstat", Path: dir, Err: err}
		}
		return fd, fileID{dev: uint64(st.Dev), ino: st.Ino}, nil
	}
}

// openIn opens a file of the directory dfd read-only.
func openIn(dfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
