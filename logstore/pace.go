package logstore

import (
	"errors"
	"time"
)

// ErrInterrupted means a copy or import gave up when asked to
// (CopyOptions.Interrupt), leaving nothing behind.
var ErrInterrupted = errors.New("interrupted")

// interrupted reports whether stop is closed.
func interrupted(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// pacer keeps a copy at its throttle, reports its progress and tells
// when it is interrupted.
type pacer struct {
	rate     int64
	began    time.Time
	done     int64
	free     int64 // of done, what count counted: no throttle's due
	total    int64
	progress func(done, total int64)
	stop     <-chan struct{}
}

func newPacer(rate, total int64, progress func(done, total int64), stop <-chan struct{}) *pacer {
	return &pacer{rate: rate, began: time.Now(), total: total, progress: progress, stop: stop}
}

// piece is how much to move before the next pause: a tenth of a second's
// worth under a throttle, so that the rate holds smoothly.
func (p *pacer) piece() int64 {
	if p.rate > 0 {
		return max(min(copyPiece, p.rate/10), 4096)
	}
	return copyPiece
}

// add counts n bytes moved and sleeps as long as the throttle asks; once
// the copy is interrupted it returns ErrInterrupted.
func (p *pacer) add(n int64) error {
	p.done += n
	if p.progress != nil {
		p.progress(p.done, max(p.total, p.done))
	}
	if p.rate > 0 {
		due := time.Duration(float64(p.done-p.free) / float64(p.rate) * float64(time.Second))
		if wait := due - time.Since(p.began); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-p.stop:
			}
			t.Stop()
		}
	}
	if interrupted(p.stop) {
		return ErrInterrupted
	}
	return nil
}

// count counts n bytes done that cost no copy (compared with the
// destination, which has them): progress, not paced by the throttle.
func (p *pacer) count(n int64) {
	if p == nil {
		return
	}
	p.done += n
	p.free += n
	if p.progress != nil {
		p.progress(p.done, max(p.total, p.done))
	}
}

func (p *pacer) stopper() <-chan struct{} {
	if p == nil {
		return nil
	}
	return p.stop
}
