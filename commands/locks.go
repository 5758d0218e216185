package commands

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

// Waiting for a partition another writer holds: --wait, --wait-timeout and
// what to do when the lock is held.

// lockWaitFlags reads --wait and --wait-timeout.
func lockWaitFlags(c *cli.Context) (time.Duration, error) {
	switch {
	case c.Bool("wait") && c.IsSet("wait-timeout"):
		return 0, usagef("--wait and --wait-timeout exclude each other")
	case c.Bool("wait"):
		return logstore.WaitForever, nil
	case c.IsSet("wait-timeout"):
		d, err := parseDuration(c.String("wait-timeout"))
		if err != nil {
			return 0, usagef("--wait-timeout: %v", err)
		}
		return max(d, time.Nanosecond), nil // 0 would mean the default
	}
	return 0, nil
}

// lockAdvice adds how to wait to a lock error.
func lockAdvice(err error, wait time.Duration) error {
	var locked *logstore.LockedError
	if errors.As(err, &locked) && wait != logstore.WaitForever {
		return fmt.Errorf("%w; use --wait or --wait-timeout to wait for it", err)
	}
	return err
}
