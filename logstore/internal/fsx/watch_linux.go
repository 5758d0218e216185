package fsx

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/format"
)

// Watch tells a follower when partition directories change, through one
// inotify instance with a watch per directory. A watch on a
// directory also reports IN_MODIFY of the files in it, so one watch covers
// appends (and cuts), new segments, deleted ones, and the directory itself
// moved away or removed.
//
// The inotify descriptor is non-blocking and handed to the runtime's
// poller (os.NewFile), so waiting parks the goroutine instead of a thread,
// and a read deadline both bounds the wait and ends it when the context
// is done: no goroutine of our own, nothing to leak after close.
type Watch struct {
	f   *os.File
	fd  int // f's descriptor, for inotify_add_watch; not used after close
	buf []byte
}

// WatchEvents sums up a batch of inotify events for one watch.
type WatchEvents uint8

const (
	EvData    WatchEvents = 1 << iota // a .log file was written or cut
	EvEntries                         // a .log file appeared, went, or was renamed
	EvSelf                            // the directory was moved or removed, or events were lost
	EvIgnored                         // the kernel dropped the watch (its directory is gone)
)

const watchMask = unix.IN_MODIFY | unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_MOVED_FROM |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// longAgo is a read deadline that has passed: it wakes a waiting read.
var longAgo = time.Unix(1, 0)

func NewWatch() (*Watch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	// An event is at most 16 bytes and a NAME_MAX name; reads take as many
	// whole events as fit.
	w := &Watch{f: os.NewFile(uintptr(fd), "inotify"), fd: fd, buf: make([]byte, 16<<10)}
	// Without the poller a read could not be woken: that is no watch.
	if err := w.f.SetReadDeadline(time.Time{}); err != nil {
		w.Close()
		return nil, fmt.Errorf("inotify: %w", err)
	}
	return w, nil
}

// Add watches the directory at path and returns the watch's descriptor:
// the same one again for a directory watched already.
func (w *Watch) Add(path string) (int, error) {
	wd, err := unix.InotifyAddWatch(w.fd, path, watchMask)
	if err != nil {
		return -1, &os.PathError{Op: "inotify_add_watch", Path: path, Err: err}
	}
	return wd, nil
}

// Remove drops a watch. It may be gone already, with the directory it
// watched.
func (w *Watch) Remove(wd int) {
	_, _ = unix.InotifyRmWatch(w.fd, uint32(wd))
}

// Wait blocks until events arrive, timeout passes or ctx is done, and
// hands what each watch saw to fn (wd -1 when events were lost: every
// watch may have seen anything). Timeout and ctx return no error.
func (w *Watch) Wait(ctx context.Context, timeout time.Duration, fn func(wd int, ev WatchEvents)) error {
	// The deadline is set before the context can move it: a context done
	// already always wins.
	if err := w.f.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return fmt.Errorf("inotify: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = w.f.SetReadDeadline(longAgo) })
	defer stop()
	for {
		n, err := w.f.Read(w.buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read inotify events: %w", err)
		}
		if w.parse(w.buf[:n], fn) {
			return nil
		}
	}
}

// parse hands the events in b to fn, a watch's events summed up, and
// reports whether any mattered. Index files are written right after the
// .log on every flush: waking for them too would triple the wakeups.
func (w *Watch) parse(b []byte, fn func(wd int, ev WatchEvents)) bool {
	var wd int32 = -2
	var ev WatchEvents
	mattered := false
	flush := func() {
		if ev != 0 {
			fn(int(wd), ev)
			mattered = true
		}
		ev = 0
	}
	for len(b) >= unix.SizeofInotifyEvent {
		this := int32(binary.NativeEndian.Uint32(b[0:]))
		mask := binary.NativeEndian.Uint32(b[4:])
		n := int(binary.NativeEndian.Uint32(b[12:]))
		end := min(unix.SizeofInotifyEvent+n, len(b))
		name := bytes.TrimRight(b[unix.SizeofInotifyEvent:end], "\x00")
		b = b[end:]
		if mask&unix.IN_Q_OVERFLOW != 0 {
			this = -1
		}
		if this != wd {
			flush()
			wd = this
		}
		switch {
		case mask&unix.IN_Q_OVERFLOW != 0:
			ev |= EvData | EvEntries | EvSelf
		case mask&unix.IN_IGNORED != 0:
			ev |= EvSelf | EvIgnored
		case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0:
			ev |= EvSelf
		case !bytes.HasSuffix(name, []byte(format.LogExt)):
		case mask&unix.IN_MODIFY != 0:
			ev |= EvData
		default:
			ev |= EvEntries
		}
	}
	flush()
	return mattered
}

func (w *Watch) Close() error { return w.f.Close() }
