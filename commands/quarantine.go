package commands

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/logstore"
)

type quarantineOptions struct {
	purge     bool     // the action: purge, not list
	topics    []string // none: every topic
	partition int      // -1: all
	olderThan time.Duration
	dryRun    bool
	json      bool
	wide      bool // the table whole, however wide
}

// quarantineActions are quarantine's actions, its first argument when it
// names one: whether it purges. The first is the default.
var quarantineActions = choices[bool]{
	{"list", false, ""},
	{"purge", true, ""},
}

// quarantineCommand takes its action as the first argument rather than as
// a subcommand: flags then go anywhere, as everywhere else (see
// normalizeArgs, which leaves commands with subcommands alone).
func quarantineCommand() *cli.Command {
	return &cli.Command{
		Name:      "quarantine",
		Usage:     "list or purge the bytes recover and append cut and saved",
		ArgsUsage: "[" + strings.Join(quarantineActions.names(), "|") + "] [TOPIC...]",
		Description: "Bytes seglog cuts from a segment (a torn tail, a segment split by\n" +
			"recover --salvage) are first saved to <data-dir>/.quarantine/<topic>/<partition>/,\n" +
			"each with a JSON note saying which file and bytes they came from, when and why.\n\n" +
			"  list (the default) only reads: one row per saved piece, oldest first.\n" +
			"  purge DELETES saved pieces for good (all of them, or those older than\n" +
			"        --older-than), after which they cannot be put back. Offset gaps left by\n" +
			"        recover --salvage stay recorded in the partitions' .gaps.json, so\n" +
			"        verify-crc still knows them.\n\n" +
			"A TOPIC deleted since its pieces were saved still lists them; a TOPIC with nothing\n" +
			"saved says so, naming the topics that have pieces; one that neither exists nor\n" +
			"has pieces is an error (exit status 1).\n\n" +
			"Examples:\n" +
			"  seglog quarantine\n" +
			"  seglog quarantine list orders --json\n" +
			"  seglog quarantine purge --older-than 30d\n" +
			"  seglog quarantine purge orders --partition 2 --dry-run",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "only partition `P`", DefaultText: "all"},
			&cli.StringFlag{Name: "older-than", Usage: "purge: only pieces saved more than `DURATION` ago"},
			&cli.BoolFlag{Name: "dry-run", Usage: "purge: print what would be deleted, delete nothing"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document instead of a table"},
			wideFlag(),
		},
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			o := quarantineOptions{partition: c.Int("partition"), dryRun: c.Bool("dry-run"), json: c.Bool("json"), wide: c.Bool("wide")}
			if len(args) > 0 {
				if purge, ok := quarantineActions.lookup(args[0]); ok {
					o.purge, args = purge, args[1:]
				}
			}
			o.topics = args
			if err := checkTargetNames(o.topics, false); err != nil {
				return err
			}
			if c.IsSet("partition") && o.partition < 0 {
				return usagef("--partition must be 0 or more, not %d", o.partition)
			}
			if !o.purge && (c.IsSet("older-than") || o.dryRun) {
				return usagef("--older-than and --dry-run are for 'seglog quarantine purge'")
			}
			if c.IsSet("older-than") {
				d, err := parseDuration(c.String("older-than"))
				if err != nil {
					return usagef("--older-than: %v", err)
				}
				o.olderThan = d
			}
			return runQuarantine(envFrom(c), o)
		},
	}
}

func runQuarantine(e *env, o quarantineOptions) error {
	if _, err := os.Stat(e.dataDir); errors.Is(err, fs.ErrNotExist) {
		return noDataDir(e)
	}
	store := logstore.Open(e.dataDir)
	var entries []logstore.QuarantineEntry
	var probs problems
	var empty []string // topics named that have nothing in quarantine
	topics := o.topics
	if len(topics) == 0 {
		topics = []string{""}
	}
	for _, t := range topics {
		es, err := store.QuarantineEntries(t, o.partition)
		if err != nil {
			return fmt.Errorf("quarantine of %s: %w", cmpOr(t, "the data directory"), err)
		}
		if t != "" && len(es) == 0 {
			// A topic deleted since its pieces were saved still lists
			// them; one that never was is a typo, not an empty list.
			if fi, err := os.Stat(filepath.Join(e.dataDir, t)); err != nil || !fi.IsDir() {
				probs = append(probs, fmt.Errorf("topic %s in %s: %w, and nothing of it is in quarantine%s", t, e.dataDir, logstore.ErrTopicNotFound, quarantinedTopics(store)))
				continue
			}
			empty = append(empty, t)
		}
		entries = append(entries, es...)
	}
	if !o.purge {
		var err error
		switch {
		case o.json:
			err = writeQuarantineJSON(e, entries, nil)
		case len(entries) == 0 && len(empty) > 0:
			err = writeNothingQuarantined(e, store, empty, o.partition)
		case len(entries) > 0 || len(probs) == 0:
			err = writeQuarantineTable(e, entries, o.wide)
		}
		if err != nil {
			return err
		}
		return probs.err()
	}
	if len(entries) == 0 && len(probs) > 0 {
		return probs.err() // only topics that are not there were named
	}
	cutoff := time.Now().Add(-o.olderThan)
	var purged []logstore.QuarantineEntry
	var bytesPurged int64
	for _, en := range entries {
		if o.olderThan > 0 && !en.Time.Before(cutoff) {
			continue
		}
		if !o.dryRun {
			if err := store.PurgeQuarantine(en); err != nil {
				probs = append(probs, fmt.Errorf("purge %s: %w", en.Note, err))
				continue
			}
		}
		purged = append(purged, en)
		bytesPurged += max(en.DataBytes, 0)
	}
	if o.json {
		if err := writeQuarantineJSON(e, purged, &o); err != nil {
			return err
		}
	} else if o.dryRun || !e.quiet {
		// What a dry run would purge is its product; what was purged, a
		// summary --quiet drops.
		verb := "purged"
		if o.dryRun {
			verb = "would purge"
		}
		fmt.Fprintf(e.stdout, "%s %d piece%s (%s) from %s\n", verb, len(purged), plural(len(purged)),
			humanSize(bytesPurged), filepath.Join(e.dataDir, logstore.QuarantineDir))
	}
	return probs.err()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// writeNothingQuarantined says that the topics named have nothing in
// quarantine, and which topics do.
func writeNothingQuarantined(e *env, store *logstore.Store, topics []string, partition int) error {
	what := "topic " + nameList(topics)
	if len(topics) > 1 {
		what = "topics " + nameList(topics)
	}
	if partition >= 0 {
		what += fmt.Sprintf(" (partition %d)", partition)
	}
	_, err := fmt.Fprintf(e.stdout, "%s: nothing in quarantine%s\n", what, quarantinedTopics(store))
	return err
}

// quarantinedTopics names the topics the quarantine holds pieces of, for
// a message saying a topic has none.
func quarantinedTopics(store *logstore.Store) string {
	all, err := store.QuarantineEntries("", -1)
	if err != nil {
		return ""
	}
	var names []string
	for _, en := range all {
		if !slices.Contains(names, en.Topic) {
			names = append(names, en.Topic)
		}
	}
	if len(names) == 0 {
		return fmt.Sprintf(" (the quarantine, %s, is empty)", filepath.Join(store.Dir(), logstore.QuarantineDir))
	}
	slices.Sort(names)
	return fmt.Sprintf(" (%s holds pieces of %s)", filepath.Join(store.Dir(), logstore.QuarantineDir), nameList(names))
}

// quarantineTable is quarantine's table: in 80 columns, the file, the
// position it came from and when go first, then the segment; reasons are
// wrapped and long names cut (--wide and --json have them whole).
var quarantineTable = tableLayout{
	header:  []string{"TOPIC", "PARTITION", "SAVED", "SOURCE", "FROM", "BYTES", "FILE", "REASON"},
	numeric: "PARTITION FROM BYTES",
	drop:    []string{"FILE", "FROM", "SAVED", "SOURCE"},
	shorten: []string{"TOPIC"},
	wrap:    []string{"REASON"},
}

func writeQuarantineTable(e *env, entries []logstore.QuarantineEntry, wide bool) error {
	var b bytes.Buffer
	if len(entries) == 0 {
		if e.quiet {
			return nil // an empty listing says it
		}
		fmt.Fprintf(&b, "the quarantine (%s) is empty\n", filepath.Join(e.dataDir, logstore.QuarantineDir))
		_, err := e.stdout.Write(b.Bytes())
		return err
	}
	var times timeFormatter
	rows := make([][]string, 0, len(entries))
	for _, en := range entries {
		size := strconv.FormatInt(en.Length, 10)
		if en.DataBytes != en.Length {
			size += fmt.Sprintf(" (%s)", dataState(en.DataBytes))
		}
		rows = append(rows, []string{en.Topic, strconv.Itoa(en.Partition), string(times.append(nil, en.Time.UnixNano())),
			filepath.Base(en.Source), strconv.FormatInt(en.Pos, 10), size, relPath(e.dataDir, en.Data),
			strings.ReplaceAll(en.Reason, "\n", " ")})
	}
	if err := quarantineTable.render(&b, rows, wide); err != nil {
		return err
	}
	_, err := e.stdout.Write(b.Bytes())
	return err
}

func dataState(n int64) string {
	if n < 0 {
		return "file missing"
	}
	return fmt.Sprintf("%d on disk", n)
}

type quarantineEntryJSON struct {
	Topic          string `json:"topic"`
	Partition      int    `json:"partition"`
	Time           string `json:"time"`
	Source         string `json:"source"`
	Pos            int64  `json:"pos"`
	Length         int64  `json:"length"`
	ExpectedOffset uint64 `json:"expected_offset"`
	Reason         string `json:"reason"`
	Data           string `json:"data"`
	DataBytes      *int64 `json:"data_bytes"` // null: the file is missing
	Note           string `json:"note"`
}

func writeQuarantineJSON(e *env, entries []logstore.QuarantineEntry, purge *quarantineOptions) error {
	list := []quarantineEntryJSON{}
	var times timeFormatter
	var total int64
	for _, en := range entries {
		j := quarantineEntryJSON{Topic: en.Topic, Partition: en.Partition, Time: string(times.append(nil, en.Time.UnixNano())),
			Source: en.Source, Pos: en.Pos, Length: en.Length, ExpectedOffset: en.ExpectedOffset, Reason: en.Reason,
			Data: en.Data, Note: en.Note}
		if en.DataBytes >= 0 {
			n := en.DataBytes
			j.DataBytes = &n
			total += n
		}
		list = append(list, j)
	}
	if purge == nil {
		return writeJSONDocument(e.stdout, struct {
			Entries []quarantineEntryJSON `json:"entries"`
		}{list})
	}
	return writeJSONDocument(e.stdout, struct {
		DryRun bool                  `json:"dry_run"`
		Purged []quarantineEntryJSON `json:"purged"`
		Bytes  int64                 `json:"bytes"`
	}{purge.dryRun, list, total})
}
