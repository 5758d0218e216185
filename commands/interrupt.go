package commands

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// onInterrupt makes the first SIGINT or SIGTERM close stop instead of
// killing the process, so that a copy can remove what it built; it puts
// the default action back at once, so a second signal kills as usual.
// cause says which signal came; release undoes it all.
func onInterrupt() (stop <-chan struct{}, cause func() error, release func()) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, cancel)
	return ctx.Done(), func() error { return context.Cause(ctx) }, cancel
}

// interruptibleReader reads r in a goroutine of its own, so that a Read
// waiting on a pipe that stays silent ends when stop is closed.
type interruptibleReader struct {
	r       io.Reader
	stop    <-chan struct{}
	results chan readResult
	buf     []byte
	reading bool // a read of buf is under way
}

// errReadInterrupted ends a Read that stop cut short.
var errReadInterrupted = errors.New("read interrupted")

// readAtOnce bounds what one Read of an interruptibleReader asks for.
const readAtOnce = 1 << 20

// interruptible wraps stdin so that stop ends a Read waiting on it; a
// regular file, which never keeps a read waiting, is read as it is.
func interruptible(stdin io.Reader, stop <-chan struct{}) io.Reader {
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return stdin
		}
	}
	return &interruptibleReader{r: stdin, stop: stop, results: make(chan readResult, 1)}
}

func (ir *interruptibleReader) Read(p []byte) (int, error) {
	if !ir.reading {
		n := min(len(p), readAtOnce)
		if len(ir.buf) < n {
			ir.buf = make([]byte, n)
		}
		buf := ir.buf[:n]
		ir.reading = true
		go func() {
			m, err := ir.r.Read(buf)
			ir.results <- readResult{buf: buf[:m], err: err}
		}()
	}
	select {
	case r := <-ir.results:
		ir.reading = false
		return copy(p, r.buf), r.err
	case <-ir.stop:
		return 0, errReadInterrupted
	}
}

// readResult is one read(2) of stdin.
type readResult struct {
	buf []byte
	err error
}
