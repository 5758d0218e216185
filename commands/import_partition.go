package commands

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

func importPartitionCommand() *cli.Command {
	return &cli.Command{
		Name:      "import-partition",
		Usage:     "make a partition of the tar stream 'copy-partition --to -' writes, read from stdin",
		ArgsUsage: "TOPIC PARTITION",
		Description: "Changes files: makes partition PARTITION of TOPIC (with --force, replaces it).\n" +
			"Reads the stream from stdin into a hidden temporary directory (of TOPIC, or of the\n" +
			"data directory for a new TOPIC, which appears only with its partition), checks\n" +
			"every record as it arrives (CRC, offsets), keeps or rebuilds the indexes, syncs,\n" +
			"and renames the result into place as partition PARTITION of TOPIC, the way\n" +
			"copy-partition places a copy: a stream that is cut short, damaged or not one at\n" +
			"all leaves nothing behind (exit status 1); so does one whose topic settings are\n" +
			"not what 'seglog create' stores, or whose recorded gaps (.gaps.json) cover offsets\n" +
			"its segments hold or reach past its next offset. TOPIC is created if need be, with\n" +
			"the source topic's settings when the stream carries them. An existing partition is\n" +
			"refused unless --force, which swaps the new one in atomically under the old one's\n" +
			"writer lock and removes the old one. Ctrl-C or SIGTERM, even while it waits for\n" +
			"input, stops it as a failure does (exit status 1, nothing placed).\n\n" +
			"Examples:\n" +
			"  seglog copy-partition orders 0 --to - | seglog -d ./restore import-partition orders 0\n" +
			"  seglog import-partition orders 3 --force < orders-0.tar",
		Flags: []cli.Flag{
			wideFlag(),
			&cli.BoolFlag{Name: "force", Usage: "replace an existing partition"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON"},
			&cli.BoolFlag{Name: "wait", Usage: "wait for locks other processes hold, without limit"},
			&cli.StringFlag{Name: "wait-timeout", Usage: "wait at most `DURATION` for a lock another process holds", DefaultText: "2s"},
		},
		Action: func(c *cli.Context) error {
			topic, part, err := topicPartitionArgs(c)
			if err != nil {
				return err
			}
			if part >= logstore.MaxPartitions {
				return usagef("import-partition: PARTITION must be between 0 and %d, not %d", logstore.MaxPartitions-1, part)
			}
			opts := logstore.CopyOptions{Force: c.Bool("force")}
			if opts.LockWait, err = lockWaitFlags(c); err != nil {
				return err
			}
			e := envFrom(c)
			if isTerminal(e.stdin) {
				return usagef("import-partition reads the stream 'seglog copy-partition --to -' writes from stdin: pipe or redirect it in")
			}
			bar := newProgressBar(e, "import-partition")
			opts.Progress = bar.update
			var cause func() error
			var release func()
			opts.Interrupt, cause, release = onInterrupt()
			defer release()
			rep, err := logstore.Open(e.dataDir).ImportPartition(topic, part, interruptible(e.stdin, opts.Interrupt), opts)
			bar.finish()
			if errors.Is(err, logstore.ErrInterrupted) {
				return fmt.Errorf("import-partition %s/%d stopped (%v): nothing was placed, and what it had built is removed", topic, part, cause())
			}
			if err != nil {
				return lockAdvice(err, opts.LockWait)
			}
			return writeCopySummary(e, e.stdout, rep, c.Bool("json"))
		},
	}
}
