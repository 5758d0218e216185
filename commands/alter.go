package commands

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

// topicSetting is one of a topic's stored settings, by its flag's name.
type topicSetting struct {
	name string
	// show is the stored value as the flag takes it; "" when unset.
	show func(logstore.Settings) string
	// set copies the value from one Settings to another (from unset:
	// unsets it).
	set func(to *logstore.Settings, from logstore.Settings)
}

// topicSettings are the settings create stores and alter changes, in the
// order describe and alter show them.
var topicSettings = []topicSetting{
	{"retention", func(st logstore.Settings) string { return durationOrUnset(st.Retention) },
		func(to *logstore.Settings, from logstore.Settings) { to.Retention = from.Retention }},
	{"retention-bytes", func(st logstore.Settings) string { return sizeOrUnset(st.RetentionBytes) },
		func(to *logstore.Settings, from logstore.Settings) { to.RetentionBytes = from.RetentionBytes }},
	{"segment-bytes", func(st logstore.Settings) string { return sizeOrUnset(st.SegmentBytes) },
		func(to *logstore.Settings, from logstore.Settings) { to.SegmentBytes = from.SegmentBytes }},
	{"roll-after", func(st logstore.Settings) string { return durationOrUnset(st.RollAfter) },
		func(to *logstore.Settings, from logstore.Settings) { to.RollAfter = from.RollAfter }},
	{"index-interval", func(st logstore.Settings) string {
		if st.IndexInterval == 0 {
			return ""
		}
		return strconv.Itoa(st.IndexInterval)
	}, func(to *logstore.Settings, from logstore.Settings) { to.IndexInterval = from.IndexInterval }},
}

func durationOrUnset(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return exactDuration(d)
}

func sizeOrUnset(n int64) string {
	if n == 0 {
		return ""
	}
	return exactSize(n)
}

// topicSettingNames is what --unset takes.
var topicSettingNames = func() choices[topicSetting] {
	cs := make(choices[topicSetting], len(topicSettings))
	for i, s := range topicSettings {
		cs[i] = choice[topicSetting]{name: s.name, value: s}
	}
	return cs
}()

// unsetFlag is --unset: a setting's name, as often as there are settings.
type unsetFlag struct{ *cli.StringSliceFlag }

func (unsetFlag) valueNames() []string { return topicSettingNames.names() }

type alterOptions struct {
	topic  string
	given  logstore.Settings // the values given
	change []topicSetting    // the settings to change: given, or unset
	dryRun bool
	json   bool
}

func alterCommand() *cli.Command {
	flags := append(retentionFlags(), segmentFlags()...)
	for _, f := range flags {
		// The defaults the shared flags name are create's and append's:
		// here an absent flag leaves the setting as it is.
		switch f := f.(type) {
		case *cli.StringFlag:
			f.DefaultText = "unchanged"
		case *cli.IntFlag:
			f.DefaultText = "unchanged"
		}
	}
	flags = append(flags,
		unsetFlag{&cli.StringSliceFlag{Name: "unset", Usage: "remove the topic's `SETTING`, for the built-in default (or no retention); repeatable: " + topicSettingNames.list()}},
		&cli.BoolFlag{Name: "dry-run", Usage: "print the changes without making them"},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON document instead of a line per change"},
	)
	return &cli.Command{
		Name:      "alter",
		Usage:     "change a topic's stored settings",
		ArgsUsage: "TOPIC",
		Description: "Changes files: replaces the topic's settings (.seglog.json) durably, under its\n" +
			"maintenance lock, with each value given (checked as create checks it) and\n" +
			"without each --unset one, and prints a line per setting changed, old -> new\n" +
			"(\"(default)\": unset). A writer running now (append, import, kafka import) keeps\n" +
			"the settings it opened the topic with until it ends; the next one, and every\n" +
			"retention-sweep from now on, uses the new ones. Segments already written are left\n" +
			"as they are. 'seglog describe TOPIC' shows the settings.\n\n" +
			"Examples:\n" +
			"  seglog alter orders --retention 30d\n" +
			"  seglog alter app-logs --segment-bytes 256MiB --unset roll-after\n" +
			"  seglog alter orders --retention-bytes 10GiB --dry-run",
		Flags: flags,
		Action: func(c *cli.Context) error {
			topic, err := topicArg(c)
			if err != nil {
				return err
			}
			o := alterOptions{topic: topic, dryRun: c.Bool("dry-run"), json: c.Bool("json")}
			if o.given, err = topicSettingFlags(c); err != nil {
				return err
			}
			for _, s := range topicSettings {
				if !c.IsSet(s.name) {
					continue
				}
				if s.show(o.given) == "" {
					return usagef("--%s must be more than 0 (--unset %s removes the setting)", s.name, s.name)
				}
				o.change = append(o.change, s)
			}
			for _, name := range c.StringSlice("unset") {
				s, ok := topicSettingNames.lookup(name)
				switch {
				case !ok:
					return usagef("--unset must be %s, not %q", topicSettingNames.list(), name)
				case c.IsSet(name):
					return usagef("--%s and --unset %s exclude each other", name, name)
				}
				o.change = append(o.change, s)
			}
			if len(o.change) == 0 {
				return usagef("alter: nothing to change: give a setting's flag or --unset (see 'seglog alter --help')")
			}
			return runAlter(envFrom(c), o)
		},
	}
}

type alterJSON struct {
	Topic   string              `json:"topic"`
	DryRun  bool                `json:"dry_run"`
	Changes []settingChangeJSON `json:"changes"`
}

// settingChangeJSON is one setting changed; a value is null when unset.
type settingChangeJSON struct {
	Setting string  `json:"setting"`
	Old     *string `json:"old"`
	New     *string `json:"new"`
}

func runAlter(e *env, o alterOptions) error {
	old, now, err := logstore.Open(e.dataDir).AlterTopic(o.topic, func(st logstore.Settings) logstore.Settings {
		for _, s := range o.change {
			s.set(&st, o.given)
		}
		return st
	}, o.dryRun, logstore.DefaultLockWait)
	if err != nil {
		return topicLockAdvice(err)
	}
	doc := alterJSON{Topic: o.topic, DryRun: o.dryRun, Changes: []settingChangeJSON{}}
	var b strings.Builder
	for _, s := range topicSettings {
		was, is := s.show(old), s.show(now)
		if was == is {
			continue
		}
		doc.Changes = append(doc.Changes, settingChangeJSON{Setting: s.name, Old: nullIfEmpty(was), New: nullIfEmpty(is)})
		fmt.Fprintf(&b, "%s: %s -> %s\n", s.name, orDefault(was), orDefault(is))
	}
	if o.json {
		err = writeJSONDocument(e.stdout, doc)
	} else {
		_, err = fmt.Fprint(e.stdout, b.String())
	}
	switch {
	case len(doc.Changes) == 0:
		e.info("topic %s already has these settings: nothing changed", o.topic)
	case o.dryRun:
		e.info("dry run: topic %s was left as it is", o.topic)
	}
	return err
}

func orDefault(v string) string {
	if v == "" {
		return "(default)"
	}
	return v
}

func nullIfEmpty(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}
