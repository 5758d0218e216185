package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

// Flags shared by create and append: a topic's storage settings.
func segmentFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "segment-bytes", Usage: "roll to a new segment past this `SIZE`", DefaultText: "the topic's setting, else 1GiB"},
		&cli.IntFlag{Name: "index-interval", Usage: "index every `N`th record of a segment", DefaultText: "the topic's setting, else 1"},
		&cli.StringFlag{Name: "roll-after", Usage: "roll a segment whose first record is older than `DURATION`", DefaultText: "the topic's setting, else 7d"},
	}
}

// segmentSettings reads segmentFlags; unset flags stay zero.
func segmentSettings(c *cli.Context) (logstore.Settings, error) {
	var st logstore.Settings
	var err error
	if c.IsSet("segment-bytes") {
		if st.SegmentBytes, err = parseSize(c.String("segment-bytes")); err != nil {
			return st, usagef("--segment-bytes: %v", err)
		}
		if st.SegmentBytes < 1 {
			return st, usagef("--segment-bytes must be at least 1 byte")
		}
	}
	if c.IsSet("index-interval") {
		if st.IndexInterval = c.Int("index-interval"); st.IndexInterval < 1 {
			return st, usagef("--index-interval must be at least 1, not %d", st.IndexInterval)
		}
	}
	if c.IsSet("roll-after") {
		if st.RollAfter, err = parseDuration(c.String("roll-after")); err != nil {
			return st, usagef("--roll-after: %v", err)
		}
		if st.RollAfter == 0 {
			return st, usagef("--roll-after must be longer than 0")
		}
	}
	return st, nil
}
