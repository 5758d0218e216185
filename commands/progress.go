package commands

import (
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
)

// progressBar is a long job's progress bar (docs/cli.md, Output streams):
// on stderr, only when it is a terminal, the job has run for
// --progress-after, and neither --quiet nor --no-progress was given.
type progressBar struct {
	w       io.Writer
	name    string
	enabled bool
	start   time.Time
	after   time.Duration // drawn from start+after on
	bar     *progressbar.ProgressBar
	unit    string // counted in these ("segments"); "": bytes
}

func newProgressBar(e *env, name string) *progressBar {
	b := &progressBar{w: e.stderr, name: name, start: time.Now(), after: e.progressAfter}
	b.enabled = !e.quiet && !e.noProgress && isTerminal(e.stderr)
	return b
}

// newCountBar is a progress bar that counts units ("segments"), not bytes.
func newCountBar(e *env, name, unit string) *progressBar {
	b := newProgressBar(e, name)
	b.unit = unit
	return b
}

// on reports whether the bar may be drawn at all.
func (b *progressBar) on() bool { return b.enabled }

// update is a logstore Progress callback: bytes done out of total.
func (b *progressBar) update(done, total int64) {
	if !b.enabled || total <= 0 {
		return
	}
	if b.bar == nil {
		// Made at once, so that its rate counts from the start, and drawn
		// from the second second on.
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(lateWriter{w: b.w, from: b.start.Add(b.after)}),
			progressbar.OptionSetDescription(b.name),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100 * time.Millisecond)}
		if b.unit == "" {
			opts = append(opts, progressbar.OptionShowBytes(true), progressbar.OptionUseIECUnits(true))
		} else {
			opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(b.unit))
		}
		b.bar = progressbar.NewOptions64(total, opts...)
	}
	if total != b.bar.GetMax64() {
		b.bar.ChangeMax64(total)
	}
	_ = b.bar.Set64(min(done, total))
}

// progressCommands are the commands that draw progress bars.
var progressCommands = []string{"append", "verify-crc", "recover", "retention-sweep", "copy-partition", "import-partition", "kafka export", "kafka import"}

// progressAfterName is the global flag saying how long a job runs before
// its bar shows: a second, so that a quick job shows none; tests, whose
// jobs are all quick, make it 0.
const progressAfterName = "progress-after"

// progressAfterFlag parses --progress-after.
func progressAfterFlag(c *cli.Context) (time.Duration, error) {
	d, err := parseDuration(c.String(progressAfterName))
	if err != nil {
		return 0, usagef("--%s: %v", progressAfterName, err)
	}
	return d, nil
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

// spanBar spreads the progress of a run over many topics, each reported
// on its own (done, total) by logstore, over one bar whose total is
// estimated up front.
type spanBar struct {
	*progressBar
	total int64 // estimate for the whole run
	base  int64 // done by the topics before this one
	last  int64 // this topic's total, as last reported
}

// update is the current topic's Progress callback.
func (s *spanBar) update(done, total int64) {
	s.last = total
	s.progressBar.update(s.base+done, max(s.total, s.base+total))
}

// next moves on to the next topic.
func (s *spanBar) next() {
	s.base += s.last
	s.last = 0
}
