package commands

import (
	"fmt"
	"strconv"
	"strings"
	"time"

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

// Flags of create and alter: a topic's own retention.
func retentionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "retention", Usage: "the topic's retention, over retention-sweep's flags: delete segments older than `DURATION`"},
		&cli.StringFlag{Name: "retention-bytes", Usage: "the topic's retention, over retention-sweep's flags: keep at most `SIZE` of .log bytes per partition"},
	}
}

// topicSettingFlags reads retentionFlags and segmentFlags; unset flags
// stay zero.
func topicSettingFlags(c *cli.Context) (logstore.Settings, error) {
	st, err := segmentSettings(c)
	if err != nil {
		return st, err
	}
	if c.IsSet("retention") {
		if st.Retention, err = parseDuration(c.String("retention")); err != nil {
			return st, usagef("--retention: %v", err)
		}
	}
	if c.IsSet("retention-bytes") {
		if st.RetentionBytes, err = parseSize(c.String("retention-bytes")); err != nil {
			return st, usagef("--retention-bytes: %v", err)
		}
	}
	return st, nil
}

// topicMismatch is the error for an existing topic that differs from what
// the command line asks of it: the partition count (when partitions > 0)
// and each setting st gives, a setting the topic leaves unset counting as
// its built-in default. Nil when nothing differs.
func topicMismatch(t *logstore.Topic, partitions int, st logstore.Settings) error {
	have := t.EffectiveSettings()
	var diffs []string
	differ := func(flag, want, has string, stored bool) {
		if !stored && has != "none" {
			has += ", the default"
		}
		diffs = append(diffs, fmt.Sprintf("--%s %s (it has %s)", flag, want, has))
	}
	if partitions > 0 && partitions != t.Partitions {
		differ("partitions", strconv.Itoa(partitions), strconv.Itoa(t.Partitions), true)
	}
	if st.SegmentBytes > 0 && st.SegmentBytes != have.SegmentBytes {
		differ("segment-bytes", exactSize(st.SegmentBytes), exactSize(have.SegmentBytes), t.Settings.SegmentBytes > 0)
	}
	if st.IndexInterval > 0 && st.IndexInterval != have.IndexInterval {
		differ("index-interval", strconv.Itoa(st.IndexInterval), strconv.Itoa(have.IndexInterval), t.Settings.IndexInterval > 0)
	}
	if st.RollAfter > 0 && st.RollAfter != have.RollAfter {
		differ("roll-after", exactDuration(st.RollAfter), exactDuration(have.RollAfter), t.Settings.RollAfter > 0)
	}
	if st.Retention > 0 && st.Retention != have.Retention {
		differ("retention", exactDuration(st.Retention), orNone(have.Retention > 0, exactDuration(have.Retention)), true)
	}
	if st.RetentionBytes > 0 && st.RetentionBytes != have.RetentionBytes {
		differ("retention-bytes", exactSize(st.RetentionBytes), orNone(have.RetentionBytes > 0, exactSize(have.RetentionBytes)), true)
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("topic %s already exists, but not as asked: %s; it was left as it is (a topic's partition count and settings do not change)",
		t.Name, strings.Join(diffs, ", "))
}

func orNone(set bool, s string) string {
	if !set {
		return "none"
	}
	return s
}

// exactSize writes n bytes in the largest binary unit that divides it.
func exactSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// exactDuration writes d in whole days when it is some, as parseDuration
// reads them.
func exactDuration(d time.Duration) string {
	const day = 24 * time.Hour
	if d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	return d.String()
}
