package commands

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

func copyPartitionCommand() *cli.Command {
	return &cli.Command{
		Name:      "copy-partition",
		Usage:     "copy a partition, even one being appended to, to another data directory, topic or partition",
		ArgsUsage: "TOPIC PARTITION --to DATA_DIR|-",
		Description: "Changes files in the destination only (the source is read, never changed).\n" +
			"Copies the partition's closed segments whole and its active segment up to its last\n" +
			"valid record, so it can run beside a live append (the copy is then a valid prefix;\n" +
			"run it again with --force to catch up). The source topic's maintenance lock is held\n" +
			"shared for the copy: retention sweeps and recover wait, other copies do not.\n\n" +
			"The copy is built in a hidden temporary directory of the destination topic\n" +
			"(.copy-<partition>-<random>.tmp) or, for a topic the copy makes, of the data\n" +
			"directory (.copy-<topic>-<random>.tmp, the topic's settings beside the partition:\n" +
			"a new topic appears only with its partition in place), using copy_file_range (no\n" +
			"copy through user space; a reflink where the filesystem shares blocks), checked\n" +
			"record by record (CRC, offsets) with its indexes kept or rebuilt if the source's\n" +
			"are damaged, synced, and only then renamed into place: no half-copied partition\n" +
			"is ever visible. A damaged source is refused, naming the file and byte, and so is\n" +
			"one whose .gaps.json records a gap over offsets its segments hold. An existing\n" +
			"destination partition is refused unless --force, which swaps the new one in\n" +
			"atomically under the old one's writer lock (so never under a running append) and\n" +
			"removes the old one. A topic the copy creates gets the source topic's settings.\n" +
			"--force onto an earlier copy of the same partition copies only what changed: its\n" +
			"segments byte-identical to the source's (read and compared in full) are kept, the\n" +
			"one active at the earlier copy is extended, new ones are copied; the summary says\n" +
			"what was kept and copied. A destination that is no such copy, or differs, is\n" +
			"copied in full from there on, with a note on stderr saying why.\n" +
			"Leftovers of an interrupted copy are removed by the next copy into that topic, and\n" +
			"by recover. Ctrl-C or SIGTERM stops a copy as a failure does: what it built is\n" +
			"removed, nothing is placed, and the exit status is 1 (a second signal kills at\n" +
			"once; recover cleans up then).\n\n" +
			"--to - writes the partition to stdout as a tar stream that 'seglog import-partition'\n" +
			"reads; the stream ends with an entry that only a whole, checked copy gets, so a\n" +
			"stream cut short is an error on both ends. The summary then goes to stderr.\n" +
			"With --quiet a copy prints nothing (--json still prints its JSON on stdout).\n\n" +
			"Examples:\n" +
			"  seglog copy-partition orders 0 --to ./new/data\n" +
			"  seglog copy-partition orders 0 --to ./data --to-topic orders-v2 --to-partition 3\n" +
			"  seglog copy-partition orders 0 --to ./backup/data --force --throttle 50M\n" +
			"  seglog copy-partition orders 0 --to - | seglog -d ./restore import-partition orders 0",
		Flags: []cli.Flag{
			wideFlag(),
			&cli.StringFlag{Name: "to", Usage: "the destination data `DIR`, or - for a tar stream on stdout"},
			&cli.StringFlag{Name: "to-topic", Usage: "the destination `TOPIC`", DefaultText: "the source topic"},
			&cli.IntFlag{Name: "to-partition", Value: -1, Usage: "the destination partition `Q`", DefaultText: "the source partition"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing destination partition, keeping what an earlier copy there holds"},
			&cli.StringFlag{Name: "throttle", Usage: "copy at most `RATE` bytes a second (e.g. 50M, 1GB)"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON"},
			&cli.BoolFlag{Name: "wait", Usage: "wait for locks other processes hold, without limit"},
			&cli.StringFlag{Name: "wait-timeout", Usage: "wait at most `DURATION` for a lock another process holds", DefaultText: "2s"},
		},
		Action: func(c *cli.Context) error {
			topic, part, err := topicPartitionArgs(c)
			if err != nil {
				return err
			}
			opts := logstore.CopyOptions{ToTopic: c.String("to-topic"), ToPartition: c.Int("to-partition"), Force: c.Bool("force")}
			to := c.String("to")
			switch {
			case !c.IsSet("to") || to == "":
				return usagef("copy-partition: --to DATA_DIR or --to - is required (see 'seglog copy-partition --help')")
			case to == "-" && (c.IsSet("to-topic") || c.IsSet("to-partition")):
				return usagef("--to-topic and --to-partition name the destination in a data directory; with --to -, name it on import-partition")
			case c.IsSet("to-partition") && (opts.ToPartition < 0 || opts.ToPartition >= logstore.MaxPartitions):
				return usagef("--to-partition must be between 0 and %d, not %d", logstore.MaxPartitions-1, opts.ToPartition)
			}
			if to != "-" {
				if err := checkCopyDest(envFrom(c).dataDir, to, topic, part, opts); err != nil {
					return err
				}
			}
			if c.IsSet("to-topic") {
				if err := checkTopicName(opts.ToTopic); err != nil {
					return err
				}
			}
			if c.IsSet("throttle") {
				if opts.Throttle, err = parseRate(c.String("throttle")); err != nil {
					return usagef("--throttle: %v", err)
				}
			}
			if opts.LockWait, err = lockWaitFlags(c); err != nil {
				return err
			}
			return runCopyPartition(envFrom(c), topic, part, to, opts, c.Bool("json"))
		},
	}
}

// checkCopyDest refuses a destination that would put the copy inside the
// source's data directory (where its topic directory would show up as a
// topic of that one), replace the source partition itself, or replace a
// directory holding the data directory.
func checkCopyDest(dataDir, to, topic string, part int, opts logstore.CopyOptions) error {
	if strings.IndexByte(to, 0) >= 0 {
		return usagef("--to %q: a path cannot hold a NUL byte", to)
	}
	toTopic, toPart := cmp.Or(opts.ToTopic, topic), part
	if opts.ToPartition >= 0 {
		toPart = opts.ToPartition
	}
	data, dest := realPath(dataDir), realPath(to)
	final := filepath.Join(dest, toTopic, strconv.Itoa(toPart))
	switch {
	case dest == data && toTopic == topic && toPart == part:
		return usagef("copy-partition: --to %s is the data directory of %s/%d: the copy would be the partition itself (name another with --to-topic or --to-partition)", to, topic, part)
	case isBelow(dest, data):
		return usagef("copy-partition: --to %s is inside the data directory %s, where it would show up as a topic: name the data directory itself (with --to-topic or --to-partition) or a directory outside it", to, dataDir)
	case final == data || isBelow(data, final):
		return usagef("copy-partition: the destination partition %s would hold the data directory %s", final, dataDir)
	}
	return nil
}

// realPath is path made absolute with its symbolic links resolved, as far
// as it exists.
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	var rest []string
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		if filepath.Dir(dir) == dir {
			return abs
		}
		rest = append([]string{filepath.Base(dir)}, rest...)
	}
}

// isBelow: path lies strictly inside dir (both clean and absolute).
func isBelow(path, dir string) bool {
	return strings.HasPrefix(path, dir+string(filepath.Separator)) || dir == "/" && path != "/"
}

// parseRate parses a throttle: a size a second, "/s" optional.
func parseRate(s string) (int64, error) {
	n, err := parseSize(strings.TrimSuffix(s, "/s"))
	if err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, fmt.Errorf("invalid rate %q: must be more than 0", s)
	}
	return n, nil
}

func runCopyPartition(e *env, topic string, part int, to string, opts logstore.CopyOptions, asJSON bool) error {
	src := logstore.Open(e.dataDir)
	bar := newProgressBar(e, "copy-partition")
	opts.Progress = bar.update
	var cause func() error
	var release func()
	opts.Interrupt, cause, release = onInterrupt()
	defer release()
	var rep logstore.CopyReport
	var err error
	out := e.stdout
	if to == "-" {
		if isTerminal(e.stdout) {
			return usagef("copy-partition --to -: stdout is a terminal; redirect it or pipe it into 'seglog import-partition'")
		}
		rep, err = src.ExportPartition(topic, part, e.stdout, opts)
		if errors.Is(err, syscall.EPIPE) {
			// The stream must arrive whole: a reader gone early is a
			// failure here, not the quiet end a read gets (docs/cli.md, Output streams).
			err = fmt.Errorf("copy-partition %s/%d --to -: the reader of the stream went away before its end (broken pipe)", topic, part)
		}
		out = e.stderr
	} else {
		rep, err = src.CopyPartition(topic, part, logstore.Open(to), opts)
	}
	bar.finish()
	if errors.Is(err, logstore.ErrInterrupted) {
		what := "nothing was placed, and what it had built is removed"
		if to == "-" {
			what = "the stream ends without its end entry, so no import takes it"
		}
		return fmt.Errorf("copy-partition %s/%d stopped (%v): %s", topic, part, cause(), what)
	}
	if err != nil {
		return lockAdvice(err, opts.LockWait)
	}
	return writeCopySummary(e, out, rep, asJSON)
}
