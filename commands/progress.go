package commands

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressBar is a long job's progress bar (CLI.md): on stderr, only when
// it is a terminal, the job has run for a second, and neither --quiet nor
// --no-progress was given.
type progressBar struct {
	w       io.Writer
	name    string
	enabled bool
	start   time.Time
	bar     *progressbar.ProgressBar
}

func newProgressBar(e *env, name string) *progressBar {
	b := &progressBar{w: e.stderr, name: name, start: time.Now()}
	if f, ok := e.stderr.(*os.File); ok && !e.quiet && !e.noProgress {
		b.enabled = term.IsTerminal(int(f.Fd()))
	}
	return b
}

// update is a logstore Progress callback: bytes done out of total.
func (b *progressBar) update(done, total int64) {
	if !b.enabled || total <= 0 {
		return
	}
	if b.bar == nil {
		// Made at once, so that its rate counts from the start, and drawn
		// from the second second on.
		b.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(lateWriter{w: b.w, from: b.start.Add(time.Second)}),
			progressbar.OptionSetDescription(b.name),
			progressbar.OptionShowBytes(true),
			progressbar.OptionUseIECUnits(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond))
	}
	if total != b.bar.GetMax64() {
		b.bar.ChangeMax64(total)
	}
	_ = b.bar.Set64(min(done, total))
}

// lateWriter drops what is written to it before from: a short run
// shows no bar at all.
type lateWriter struct {
	w    io.Writer
	from time.Time
}

func (l lateWriter) Write(p []byte) (int, error) {
	if time.Now().Before(l.from) {
		return len(p), nil
	}
	return l.w.Write(p)
}

// clear takes the bar off the line, before a finding is printed.
func (b *progressBar) clear() {
	if b.bar != nil {
		_ = b.bar.Clear()
	}
}

// finish takes the bar away for good, before the summary.
func (b *progressBar) finish() {
	if b.bar != nil {
		_ = b.bar.Clear()
		_ = b.bar.Exit()
		b.bar = nil
	}
	b.enabled = false
}
