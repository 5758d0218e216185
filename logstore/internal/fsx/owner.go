package fsx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Ownership of what seglog creates.
//
// A partition is usually appended to by a service account while
// retention-sweep, recover or a copy run from root's crontab. A file root
// creates there is root's: the service could no longer append to a segment
// root rolled, nor replace an index root rebuilt. So when seglog runs as
// root, every file and directory it creates takes the owner and group of
// the directory it is created in, whenever those differ from its own, with
// a mode derived from that directory's: directories get its permission
// bits and setgid bit, files the same permission bits without execute
// (a 0750 partition gets 0640 segments). The directory is looked up at
// each creation, not cached: a partition swapped by copy-partition --force
// or a chown during a days-long append is honoured, and one stat is noise
// beside the directory fsync every creation pays anyway. Existing files
// are never chowned: a file opened with O_CREATE that turns out to exist
// keeps its owner and mode. A non-root process cannot give files away and
// leaves ownership to the kernel (a setgid directory still passes its
// group on).

// euid and egid are the process's effective ids, read once.
var euid, egid = os.Geteuid(), os.Getegid()

// dirOwner is the owner, group and mode of a directory that new entries
// in it take.
type dirOwner struct {
	uid, gid int
	mode     uint32 // st_mode & 07777
}

// inheritedOwner returns the owner that new entries of dir must be given,
// and false when there is nothing to do: seglog is not root, dir belongs
// to seglog's own user and group, or dir cannot be looked up (the
// creation that follows fails with the reason).
func inheritedOwner(dir string) (dirOwner, bool) {
	if euid != 0 {
		return dirOwner{}, false
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return dirOwner{}, false
	}
	if int(st.Uid) == euid && int(st.Gid) == egid {
		return dirOwner{}, false
	}
	return dirOwner{uid: int(st.Uid), gid: int(st.Gid), mode: st.Mode & 0o7777}, true
}

// fileMode is the mode of a new file: the directory's permission bits
// without execute.
func (o dirOwner) fileMode() uint32 { return o.mode & 0o666 }

// dirMode is the mode of a new directory: the directory's permission bits
// and setgid bit (which keeps passing the group on).
func (o dirOwner) dirMode() uint32 { return o.mode & (0o777 | unix.S_ISGID) }

// give makes the newly created file or directory open as fd o's.
func (o dirOwner) give(fd int, mode uint32) error {
	err := unix.Fchown(fd, o.uid, o.gid)
	if err == nil {
		err = unix.Fchmod(fd, mode)
	}
	// In a user namespace root may not hand out ids that are not mapped
	// into it (EINVAL) or may lack CAP_CHOWN over the filesystem (EPERM):
	// the file stays root's, as it would without this, rather than failing
	// the write.
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EPERM) {
		return nil
	}
	return err
}

// openOwned is os.OpenFile, but a file it creates is given to the owner of
// its directory (see above). Such a file is created with O_EXCL, so
// seglog knows it made it; one that is already there is opened as it is.
func openOwned(name string, flag int, perm os.FileMode) (*os.File, error) {
	o, ok := dirOwner{}, false
	if flag&os.O_CREATE != 0 {
		o, ok = inheritedOwner(filepath.Dir(name))
	}
	if !ok {
		return os.OpenFile(name, flag, perm)
	}
	f, err := os.OpenFile(name, flag|os.O_EXCL, perm)
	if err == nil {
		if err := o.give(int(f.Fd()), o.fileMode()); err != nil {
			_ = f.Close()
			_ = os.Remove(name) // just made, empty, and nothing refers to it yet
			return nil, &os.PathError{Op: "chown", Path: name, Err: err}
		}
		return f, nil
	}
	if flag&os.O_EXCL != 0 || !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	f, err = os.OpenFile(name, flag&^os.O_CREATE, perm)
	if errors.Is(err, fs.ErrNotExist) {
		// Removed in between, or a dangling symlink: open as asked.
		return os.OpenFile(name, flag, perm)
	}
	return f, err
}

// mkdirOwned is os.Mkdir, but the directory is given to the owner of its
// parent (see above).
func mkdirOwned(name string, perm os.FileMode) error {
	o, ok := inheritedOwner(filepath.Dir(name))
	if err := os.Mkdir(name, perm); err != nil || !ok {
		return err
	}
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		err = o.give(fd, o.dirMode())
		_ = unix.Close(fd)
	}
	if err != nil {
		_ = os.Remove(name) // just made and empty
		return &os.PathError{Op: "chown", Path: name, Err: err}
	}
	return nil
}
