package logstore

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

// dirWatch tells a follower when its partition directory changes, through
// inotify. A watch on a directory also reports IN_MODIFY of the files in
// it, so one watch covers appends (and cuts), new segments, deleted ones,
// and the directory itself moved away or removed.
//
// The inotify descriptor is non-blocking and handed to the runtime's
// poller (os.NewFile), so waiting parks the goroutine instead of a thread,
// and a read deadline both bounds the wait and ends it when the context
// is done: no goroutine of our own, nothing to leak after close.
type dirWatch struct {
	f   *os.File
	fd  int // f's descriptor, for inotify_add_watch; not used after close
	wd  int // the current watch, -1 before the first
	buf []byte
}

// watchEvents sums up a batch of inotify events.
type watchEvents uint8

const (
	evData    watchEvents = 1 << iota // a .log file was written or cut
	evEntries                         // a .log file appeared, went, or was renamed
	evSelf                            // the directory was moved or removed, or events were lost
)

const watchMask = unix.IN_MODIFY | unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_MOVED_FROM |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// longAgo is a read deadline that has passed: it wakes a waiting read.
var longAgo = time.Unix(1, 0)

func newDirWatch(dir string) (*dirWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	// An event is at most 16 bytes and a NAME_MAX name; reads take as many
	// whole events as fit.
	w := &dirWatch{f: os.NewFile(uintptr(fd), "inotify"), fd: fd, wd: -1, buf: make([]byte, 16<<10)}
	// Without the poller a read could not be woken: that is no watch.
	if err := w.f.SetReadDeadline(time.Time{}); err != nil {
		w.close()
		return nil, fmt.Errorf("inotify: %w", err)
	}
	if err := w.add(dir); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// add watches dir (again: after the directory at that path was replaced,
// or moved away and back) and drops the watch before, if it was another.
func (w *dirWatch) add(dir string) error {
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchMask)
	if err != nil {
		return &os.PathError{Op: "inotify_add_watch", Path: dir, Err: err}
	}
	if w.wd >= 0 && w.wd != wd {
		// It may be gone already, with the directory it watched.
		_, _ = unix.InotifyRmWatch(w.fd, uint32(w.wd))
	}
	w.wd = wd
	return nil
}

// wait blocks until events that matter arrive, timeout passes or ctx is
// done; the last two return no events and no error.
func (w *dirWatch) wait(ctx context.Context, timeout time.Duration) (watchEvents, error) {
	// The deadline is set before the context can move it: a context done
	// already always wins.
	if err := w.f.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return 0, fmt.Errorf("inotify: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = w.f.SetReadDeadline(longAgo) })
	defer stop()
	for {
		n, err := w.f.Read(w.buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read inotify events: %w", err)
		}
		if ev := w.parse(w.buf[:n]); ev != 0 {
			return ev, nil
		}
	}
}

// parse sums up the events in b. Index files are written right after the
// .log on every flush: waking for them too would triple the wakeups.
func (w *dirWatch) parse(b []byte) watchEvents {
	var ev watchEvents
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:]))
		mask := binary.NativeEndian.Uint32(b[4:])
		n := int(binary.NativeEndian.Uint32(b[12:]))
		end := min(unix.SizeofInotifyEvent+n, len(b))
		name := bytes.TrimRight(b[unix.SizeofInotifyEvent:end], "\x00")
		b = b[end:]
		switch {
		case mask&unix.IN_Q_OVERFLOW != 0:
			ev |= evData | evEntries | evSelf
		case int(wd) != w.wd:
			// A watch dropped for a directory replaced.
		case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_UNMOUNT) != 0:
			ev |= evSelf
		case !bytes.HasSuffix(name, []byte(format.LogExt)):
		case mask&unix.IN_MODIFY != 0:
			ev |= evData
		default:
			ev |= evEntries
		}
	}
	return ev
}

func (w *dirWatch) close() error { return w.f.Close() }
