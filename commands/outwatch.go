package commands

import (
	"encoding/binary"
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// outputWatch notices that the output, the write end of a pipe or FIFO,
// lost its reader (`seglog tail -f t | head -1` after head exits), without
// writing to it: a command waiting for records (tail -f) or passing over
// many it does not print (read --key) would otherwise learn it only at its
// next write, maybe never. GNU tail polls stdout the same way while it
// waits: POLLERR or POLLHUP on it mean nobody will read what comes.
type outputWatch struct {
	gone   chan struct{} // closed when the reader has gone; nil: not watched
	closed *atomic.Bool  // set then too, for a loop that looks between records
	wake   int           // an eventfd that ends the watch
	done   chan struct{} // closed when the watching goroutine has returned
}

// watchOutput starts watching w when it is a pipe or FIFO; closed, when
// not nil, is set once its reader has gone. One already without a reader
// is reported before watchOutput returns. Call stop when done.
func watchOutput(w io.Writer, closed *atomic.Bool) *outputWatch {
	ow := &outputWatch{closed: closed, wake: -1}
	f, ok := w.(*os.File)
	if !ok {
		return ow
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return ow
	}
	ow.gone = make(chan struct{})
	fd := int(f.Fd())
	if readerGone(fd, -1, 0) {
		ow.setGone()
		return ow
	}
	if ow.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return ow // the next write still tells
	}
	ow.done = make(chan struct{})
	go func() {
		defer close(ow.done)
		if readerGone(fd, ow.wake, -1) {
			ow.setGone()
		}
	}()
	return ow
}

// readerGone polls the pipe fd (and wake, when >= 0) for up to timeout
// milliseconds (-1: without limit) and reports whether the pipe's reader
// has gone; false also when wake was signalled or the time is up.
func readerGone(fd, wake, timeout int) bool {
	fds := []unix.PollFd{{Fd: int32(fd)}, {Fd: int32(wake), Events: unix.POLLIN}}
	if wake < 0 {
		fds = fds[:1]
	}
	for {
		n, err := unix.Poll(fds, timeout)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
	}
}

func (ow *outputWatch) setGone() {
	if ow.closed != nil {
		ow.closed.Store(true)
	}
	close(ow.gone)
}

// stop ends the watch.
func (ow *outputWatch) stop() {
	if ow.done == nil {
		return
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = unix.Write(ow.wake, one[:])
	<-ow.done
	unix.Close(ow.wake)
	ow.done = nil
}
