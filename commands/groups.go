package commands

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// This file holds 'seglog groups' and its subcommands: the consumer
// groups of read/tail --group, listed, described, deleted and reset, in
// the manner of kafka-consumer-groups.

func groupsCommand() *cli.Command {
	return &cli.Command{
		Name:      "groups",
		Usage:     "list the consumer groups; describe, delete or reset one",
		ArgsUsage: "[describe NAME | delete NAME... | reset NAME]",
		Description: "Without a subcommand, lists the consumer groups (read/tail --group) with the\n" +
			"topics each has positions in, its last commit and its total lag: the sum, over\n" +
			"the partitions it committed, of the partition's next offset minus the committed\n" +
			"one. As in kafka-consumer-groups, a partition the group never committed counts\n" +
			"no lag; 'groups describe' shows it with '-'. It takes no group lock: a live\n" +
			"reader may have moved on since.\n\n" +
			"Examples:\n" +
			"  seglog groups\n" +
			"  seglog groups describe billing\n" +
			"  seglog groups reset billing --to-datetime 2h --dry-run\n" +
			"  seglog groups delete billing",
		Flags: []cli.Flag{jsonFlag("print the list as JSON"), wideFlag()},
		// Its own exit statuses, which setupHelp gives only commands
		// without subcommands.
		CustomHelpTemplate: cli.SubcommandHelpTemplate + exitHelp("groups"),
		Subcommands:        []*cli.Command{groupsDescribeCommand(), groupsDeleteCommand(), groupsResetCommand()},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("groups: unknown command %q (see 'seglog groups --help')", c.Args().First())
			}
			return runGroupsList(envFrom(c), c.Bool("json"))
		},
	}
}

// jsonFlag is --json, told what it prints.
func jsonFlag(usage string) cli.Flag { return &cli.BoolFlag{Name: "json", Usage: usage} }

// groupWaitFlags are the waits for a group's lock of the subcommands
// that change a group (read by lockWaitFlags).
func groupWaitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "wait", Usage: "wait without limit while a reader holds the group"},
		&cli.StringFlag{Name: "wait-timeout", Usage: "wait at most `DURATION` while a reader holds the group", DefaultText: "2s"},
	}
}

// groupNameArgs returns a subcommand's group NAME arguments, checked: at
// least one, at most one unless many.
func groupNameArgs(c *cli.Context, many bool) ([]string, error) {
	names := c.Args().Slice()
	switch {
	case len(names) == 0:
		return nil, usagef("missing group NAME (see '%s --help')", c.Command.HelpName)
	case len(names) > 1 && !many:
		return nil, usagef("one group NAME only, not %q too (see '%s --help')", names[1], c.Command.HelpName)
	}
	for _, n := range names {
		if err := format.ValidateTopic(n); err != nil {
			return nil, usagef("invalid group name %s", strings.TrimPrefix(err.Error(), format.ErrTopicName.Error()+" "))
		}
	}
	return names, nil
}

// groupMissing words a group that is not there, with what to do: name
// the right data directory when that does not exist at all.
func groupMissing(e *env, err error) error {
	if !errors.Is(err, logstore.ErrGroupNotFound) {
		return err
	}
	if _, serr := os.Stat(e.dataDir); errors.Is(serr, fs.ErrNotExist) {
		return noDataDir(e)
	}
	return fmt.Errorf("%w (see 'seglog groups' for the groups there are)", err)
}

// groupPartitionRow is a partition of a group's topics beside its bounds,
// as groups describe shows it; committedKnown is false for a partition
// the group never committed.
type groupPartitionRow struct {
	groupPartitionInfo
	committedKnown bool
}

// groupRows reads a group's positions and the bounds of every partition
// of its topics.
func groupRows(store *logstore.Store, pb *partitionBounds, commits []logstore.GroupCommit, probs *problems) []groupPartitionRow {
	var rows []groupPartitionRow
	for _, c := range commits {
		parts := slices.Collect(maps.Keys(c.Partitions))
		if t, err := store.Topic(c.Topic); err == nil {
			for p := range t.Partitions {
				if _, ok := c.Partitions[p]; !ok {
					parts = append(parts, p)
				}
			}
		}
		slices.Sort(parts)
		for _, p := range parts {
			r := groupPartitionRow{groupPartitionInfo: groupPartitionInfo{topic: c.Topic, partition: p, updated: c.Updated}}
			r.committed, r.committedKnown = c.Partitions[p]
			pb.fill(&r.groupPartitionInfo, probs)
			rows = append(rows, r)
		}
	}
	return rows
}

// groupSummary is one line of 'seglog groups'.
type groupSummary struct {
	name     string
	topics   []string
	last     time.Time // the latest commit; zero if unknown
	lag      uint64
	lagKnown bool // some committed partition could be read
	err      error
}

func runGroupsList(e *env, asJSON bool) error {
	store := logstore.Open(e.dataDir)
	names, err := store.Groups()
	if errors.Is(err, fs.ErrNotExist) {
		return noDataDir(e)
	}
	if err != nil {
		return err
	}
	pb := newPartitionBounds(store)
	var probs problems
	list := make([]groupSummary, 0, len(names))
	for _, name := range names {
		g := groupSummary{name: name}
		commits, err := store.GroupCommits(name)
		if err != nil {
			g.err = err
			probs = append(probs, err)
		}
		for _, c := range commits {
			g.topics = append(g.topics, c.Topic)
			if c.Updated.After(g.last) {
				g.last = c.Updated
			}
			for p, committed := range c.Partitions {
				gp := groupPartitionInfo{topic: c.Topic, partition: p, committed: committed}
				if pb.fill(&gp, &probs); gp.known {
					g.lag += gp.lag()
					g.lagKnown = true
				}
			}
		}
		list = append(list, g)
	}
	if asJSON {
		if err := writeGroupListJSON(e.stdout, list); err != nil {
			return err
		}
		return probs.err()
	}
	if len(list) == 0 {
		e.info("no consumer groups in %s (read or tail --group NAME makes one)", e.dataDir)
		return nil
	}
	var times timeFormatter
	rows := make([][]string, 0, len(list))
	for _, g := range list {
		row := []string{g.name, strings.Join(g.topics, ","), "-", "-"}
		if !g.last.IsZero() {
			row[2] = string(times.append(nil, g.last.UnixNano()))
		}
		if g.lagKnown {
			row[3] = strconv.FormatUint(g.lag, 10)
		}
		if g.err != nil {
			row[1] = "error: " + errorLine(g.err)
		}
		rows = append(rows, row)
	}
	if err := groupsListTable.render(e.stdout, rows, e.wide); err != nil {
		return err
	}
	return probs.err()
}

// groupListJSON is the document of 'groups --json'.
type groupListJSON struct {
	Groups []groupListEntryJSON `json:"groups"`
}

type groupListEntryJSON struct {
	Group        string   `json:"group"`
	Topics       []string `json:"topics"`
	LastCommit   *string  `json:"last_commit"`
	LastCommitNS *int64   `json:"last_commit_ns"`
	Lag          *uint64  `json:"lag"`
	Error        string   `json:"error,omitempty"`
}

func writeGroupListJSON(w io.Writer, list []groupSummary) error {
	doc := groupListJSON{Groups: make([]groupListEntryJSON, 0, len(list))}
	var times timeFormatter
	for _, g := range list {
		gj := groupListEntryJSON{Group: g.name, Topics: append([]string{}, g.topics...)}
		gj.LastCommit, gj.LastCommitNS = jsonTime(&times, g.last)
		if g.lagKnown {
			gj.Lag = &g.lag
		}
		if g.err != nil {
			gj.Error = errorLine(g.err)
		}
		doc.Groups = append(doc.Groups, gj)
	}
	return writeJSONDocument(w, doc)
}

// jsonTime is a time's two JSON fields (docs/cli.md, JSON output): both
// nil for the zero time, which stands for none.
func jsonTime(times *timeFormatter, t time.Time) (*string, *int64) {
	if t.IsZero() {
		return nil, nil
	}
	s, ns := string(times.append(nil, t.UnixNano())), t.UnixNano()
	return &s, &ns
}

func groupsDescribeCommand() *cli.Command {
	return &cli.Command{
		Name:      "describe",
		Usage:     "show a group's committed offset, log start, log end and lag per partition",
		ArgsUsage: "NAME",
		Description: "Shows, for every partition of each topic the group has committed (as\n" +
			"kafka-consumer-groups --describe does), the committed offset (the next record the\n" +
			"group reads), the partition's first offset (LOG-START) and next offset (LOG-END),\n" +
			"and the lag between them. A partition the group never committed shows '-' for\n" +
			"both. A committed offset retention removed, or past the end, is noted. It takes\n" +
			"no group lock.\n\n" +
			"Examples:\n" +
			"  seglog groups describe billing\n" +
			"  seglog groups describe billing --json",
		Flags: []cli.Flag{jsonFlag("print the positions as JSON"), wideFlag()},
		Action: func(c *cli.Context) error {
			names, err := groupNameArgs(c, false)
			if err != nil {
				return err
			}
			return runGroupsDescribe(envFrom(c), names[0], c.Bool("json"))
		},
	}
}

func runGroupsDescribe(e *env, name string, asJSON bool) error {
	store := logstore.Open(e.dataDir)
	commits, err := store.GroupCommits(name)
	if err != nil {
		return groupMissing(e, err)
	}
	var probs problems
	rows := groupRows(store, newPartitionBounds(store), commits, &probs)
	if asJSON {
		if err := writeGroupDescribeJSON(e.stdout, name, store.GroupDir(name), rows); err != nil {
			return err
		}
		return probs.err()
	}
	if len(rows) == 0 {
		e.info("group %s has no committed positions", name)
		return nil
	}
	table := make([][]string, 0, len(rows))
	for _, r := range rows {
		row := []string{r.topic, strconv.Itoa(r.partition), "-", "-", "-", "-", r.note}
		if r.committedKnown {
			row[2] = strconv.FormatUint(r.committed, 10)
		}
		if r.known {
			row[3], row[4] = strconv.FormatUint(r.start, 10), strconv.FormatUint(r.next, 10)
			if r.committedKnown {
				row[5] = strconv.FormatUint(r.lag(), 10)
			}
			switch {
			case !r.committedKnown:
			case r.belowStart():
				row[6] = "below the log start: removed by retention unread"
			case r.pastEnd():
				row[6] = "past the log end (partition replaced?)"
			}
		}
		table = append(table, row)
	}
	if err := groupDescribeTable.render(e.stdout, table, e.wide); err != nil {
		return err
	}
	return probs.err()
}

// groupDescribeJSON is the document of 'groups describe --json'.
type groupDescribeJSON struct {
	Group      string                       `json:"group"`
	Dir        string                       `json:"dir"`
	Partitions []groupDescribePartitionJSON `json:"partitions"`
}

type groupDescribePartitionJSON struct {
	Topic     string  `json:"topic"`
	Partition int     `json:"partition"`
	Current   *uint64 `json:"current_offset"`
	LogStart  *uint64 `json:"log_start"`
	LogEnd    *uint64 `json:"log_end"`
	Lag       *uint64 `json:"lag"`
	Updated   *string `json:"updated"`
	UpdatedNS *int64  `json:"updated_ns"`
	Note      string  `json:"note,omitempty"`
}

func writeGroupDescribeJSON(w io.Writer, name, dir string, rows []groupPartitionRow) error {
	doc := groupDescribeJSON{Group: name, Dir: dir, Partitions: []groupDescribePartitionJSON{}}
	var times timeFormatter
	for _, r := range rows {
		pj := groupDescribePartitionJSON{Topic: r.topic, Partition: r.partition, Note: r.note}
		if r.committedKnown {
			pj.Current = &r.committed
			pj.Updated, pj.UpdatedNS = jsonTime(&times, r.updated)
		}
		if r.known {
			start, next, lag := r.start, r.next, r.lag()
			pj.LogStart, pj.LogEnd = &start, &next
			if r.committedKnown {
				pj.Lag = &lag
			}
		}
		doc.Partitions = append(doc.Partitions, pj)
	}
	return writeJSONDocument(w, doc)
}

func groupsDeleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Usage:     "delete consumer groups and their positions",
		ArgsUsage: "NAME...",
		Description: "Deletes each group named, with all its committed positions: a later read\n" +
			"--group NAME starts afresh. A group a reader holds is refused, naming its pid\n" +
			"(after 2 s, unless --wait or --wait-timeout). The group's directory is renamed\n" +
			"aside and the rename synced before anything is removed, so a crash leaves the\n" +
			"group whole or gone. Unlike kafka-consumer-groups --delete, several groups go in\n" +
			"one run; each one that cannot be deleted is an error, the others are still\n" +
			"deleted.\n\n" +
			"Examples:\n" +
			"  seglog groups delete billing\n" +
			"  seglog groups delete billing --json",
		Flags: append([]cli.Flag{jsonFlag("print what was deleted as JSON")}, groupWaitFlags()...),
		Action: func(c *cli.Context) error {
			names, err := groupNameArgs(c, true)
			if err != nil {
				return err
			}
			wait, err := lockWaitFlags(c)
			if err != nil {
				return err
			}
			return runGroupsDelete(envFrom(c), names, wait, c.Bool("json"))
		},
	}
}

// groupsDeletedJSON is the document of 'groups delete --json'.
type groupsDeletedJSON struct {
	Groups []groupDeletedJSON `json:"groups"`
}

type groupDeletedJSON struct {
	Group   string `json:"group"`
	Deleted bool   `json:"deleted"`
	Error   string `json:"error,omitempty"`
}

func runGroupsDelete(e *env, names []string, wait time.Duration, asJSON bool) error {
	store := logstore.Open(e.dataDir)
	var probs problems
	doc := groupsDeletedJSON{Groups: make([]groupDeletedJSON, 0, len(names))}
	for _, name := range slices.Compact(slices.Clone(names)) {
		err := store.DeleteGroup(name, wait)
		doc.Groups = append(doc.Groups, groupDeletedJSON{Group: name, Deleted: err == nil})
		if err != nil {
			err = groupMissing(e, lockAdvice(err, wait))
			doc.Groups[len(doc.Groups)-1].Error = errorLine(err)
			probs = append(probs, err)
			continue
		}
		if !asJSON && !e.quiet {
			if _, err := fmt.Fprintf(e.stdout, "deleted group %s\n", name); err != nil {
				return err
			}
		}
	}
	if asJSON {
		if err := writeJSONDocument(e.stdout, doc); err != nil {
			return err
		}
	}
	return probs.err()
}

func groupsResetCommand() *cli.Command {
	return &cli.Command{
		Name:      "reset",
		Usage:     "move a group's committed positions",
		ArgsUsage: "NAME (--to-earliest | --to-latest | --to-offset N | --to-datetime TIME | --shift-by N)",
		Description: "Moves the group's positions (as kafka-consumer-groups --reset-offsets does) in\n" +
			"--topic T, or in every topic it has committed; in every partition of each, or\n" +
			"--partition P only. Say where with exactly one of --to-earliest (each partition's\n" +
			"first offset), --to-latest (its next offset: skip everything there is),\n" +
			"--to-offset N, --to-datetime TIME (the first record at or after TIME, by the rule\n" +
			"of read --since) or --shift-by N (from the committed position, N may be negative;\n" +
			"partitions never committed have nothing to shift and are left out). A position\n" +
			"outside a partition is clamped to its LOG-START or LOG-END, and the plan says so.\n" +
			"A group that does not exist is made when --topic is given, as in Kafka.\n\n" +
			"It prints the plan: TOPIC PARTITION CURRENT-OFFSET NEW-OFFSET LOG-START LOG-END.\n" +
			"Unlike Kafka, whose reset only previews unless told --execute, this commits the\n" +
			"new positions durably, under the group's lock (a reader holding it is refused,\n" +
			"naming its pid), unless --dry-run; --execute is accepted and changes nothing.\n\n" +
			"Examples:\n" +
			"  seglog groups reset billing --to-earliest --dry-run\n" +
			"  seglog groups reset billing --topic orders --to-datetime 2026-01-02T15:00:00Z\n" +
			"  seglog groups reset billing --topic orders --shift-by -100",
		Flags: append([]cli.Flag{
			wideFlag(),
			&cli.StringFlag{Name: "topic", Usage: "reset in topic `T` only", DefaultText: "every topic the group committed"},
			&cli.IntFlag{Name: "partition", Value: -1, Usage: "with --topic: reset partition `P` only", DefaultText: "all"},
			&cli.BoolFlag{Name: "to-earliest", Usage: "to each partition's first offset"},
			&cli.BoolFlag{Name: "to-latest", Usage: "to each partition's next offset"},
			&cli.StringFlag{Name: "to-offset", Usage: "to offset `N`"},
			&cli.StringFlag{Name: "to-datetime", Usage: "to the first record at or after `TIME`, as read --since"},
			&cli.StringFlag{Name: "shift-by", Usage: "move each committed position by `N` (negative: back)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan and change nothing"},
			&cli.BoolFlag{Name: "execute", Usage: "accepted for kafka-consumer-groups' habit: committing is the default"},
			jsonFlag("print the plan as JSON"),
		}, groupWaitFlags()...),
		Action: func(c *cli.Context) error {
			o, err := parseGroupsReset(c, time.Now())
			if err != nil {
				return err
			}
			return runGroupsReset(envFrom(c), o)
		},
	}
}

// groupsResetOptions are the parsed flags of 'groups reset'.
type groupsResetOptions struct {
	name   string
	scope  logstore.ResetScope
	target logstore.ResetTarget
	dryRun bool
	wait   time.Duration
	json   bool
}

// resetTargetFlags are the flags that say where 'groups reset' moves
// positions; exactly one is given.
var resetTargetFlags = []string{"to-earliest", "to-latest", "to-offset", "to-datetime", "shift-by"}

func parseGroupsReset(c *cli.Context, now time.Time) (groupsResetOptions, error) {
	names, err := groupNameArgs(c, false)
	if err != nil {
		return groupsResetOptions{}, err
	}
	o := groupsResetOptions{name: names[0], dryRun: c.Bool("dry-run"), json: c.Bool("json"),
		scope: logstore.ResetScope{Topic: c.String("topic"), Partition: c.Int("partition")}}
	if c.IsSet("topic") {
		if err := checkTopicName(o.scope.Topic); err != nil {
			return o, err
		}
	}
	switch {
	case c.IsSet("partition") && !c.IsSet("topic"):
		return o, usagef("--partition needs --topic (partition numbers are a topic's)")
	case c.IsSet("partition") && o.scope.Partition < 0:
		return o, usagef("--partition must be 0 or more, not %d", o.scope.Partition)
	case o.dryRun && c.Bool("execute"):
		return o, usagef("--dry-run and --execute exclude each other")
	}
	var given []string
	for _, f := range resetTargetFlags {
		if c.IsSet(f) {
			given = append(given, "--"+f)
		}
	}
	switch len(given) {
	case 0:
		return o, usagef("say where to reset to: one of --to-earliest, --to-latest, --to-offset N, --to-datetime TIME or --shift-by N")
	case 1:
	default:
		return o, usagef("%s and %s exclude each other: give one", given[0], given[1])
	}
	switch given[0] {
	case "--to-earliest":
		o.target.Kind = logstore.ResetToEarliest
	case "--to-latest":
		o.target.Kind = logstore.ResetToLatest
	case "--to-offset":
		o.target.Kind = logstore.ResetToOffset
		if o.target.Offset, err = strconv.ParseUint(c.String("to-offset"), 10, 64); err != nil {
			return o, usagef("--to-offset: %q is not an offset (0 or more)", c.String("to-offset"))
		}
	case "--to-datetime":
		o.target.Kind = logstore.ResetToTime
		t, err := parseTime(c.String("to-datetime"), now)
		if err != nil {
			return o, usagef("--to-datetime: %v", err)
		}
		o.target.Time = unixNanoClamped(t)
	case "--shift-by":
		o.target.Kind = logstore.ResetShiftBy
		if o.target.Shift, err = strconv.ParseInt(c.String("shift-by"), 10, 64); err != nil {
			return o, usagef("--shift-by: %q is not a whole number of offsets (e.g. 100 or -100)", c.String("shift-by"))
		}
	}
	o.wait, err = lockWaitFlags(c)
	return o, err
}

// The tables of groups, groups describe and groups reset's plan: in 80
// columns, names are cut and notes go under them.
var (
	groupsListTable = tableLayout{
		header:  []string{"GROUP", "TOPICS", "LAST-COMMIT", "LAG"},
		numeric: "LAG",
		shorten: []string{"GROUP", "TOPICS"},
	}
	groupDescribeTable = tableLayout{
		header:  []string{"TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-START", "LOG-END", "LAG", "NOTE"},
		numeric: "PARTITION CURRENT-OFFSET LOG-START LOG-END LAG",
		below:   []string{"NOTE"},
		keyCols: 2,
		shorten: []string{"TOPIC"},
	}
	resetTable = tableLayout{
		header:  []string{"TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET", "LOG-START", "LOG-END", "NOTE"},
		numeric: "PARTITION CURRENT-OFFSET NEW-OFFSET LOG-START LOG-END",
		below:   []string{"NOTE"},
		keyCols: 2,
		shorten: []string{"TOPIC"},
	}
)

func runGroupsReset(e *env, o groupsResetOptions) error {
	store := logstore.Open(e.dataDir)
	plan, err := store.ResetGroup(o.name, o.scope, o.target, o.dryRun, o.wait)
	if err != nil {
		switch {
		case errors.Is(err, logstore.ErrTopicNotFound) && o.scope.Topic != "":
			return missingTopic(err, e.dataDir, "seglog create "+o.scope.Topic)
		case errors.Is(err, logstore.ErrTopicNotFound):
			return fmt.Errorf("%w, though group %s has positions in it (reset its other topics with --topic, or delete the group)", err, o.name)
		}
		return groupMissing(e, lockAdvice(err, o.wait))
	}
	if o.json {
		if err := writeResetJSON(e.stdout, o, plan); err != nil {
			return err
		}
	} else {
		rows := make([][]string, 0, len(plan))
		for _, r := range plan {
			row := []string{r.Topic, strconv.Itoa(r.Partition), "-", strconv.FormatUint(r.New, 10),
				strconv.FormatUint(r.Start, 10), strconv.FormatUint(r.Next, 10), clampWords[r.Clamp].note}
			if r.HasCurrent {
				row[2] = strconv.FormatUint(r.Current, 10)
			}
			rows = append(rows, row)
		}
		if err := resetTable.render(e.stdout, rows, e.wide); err != nil {
			return err
		}
	}
	switch {
	case len(plan) == 0:
		e.info("group %s: no committed position to shift, nothing to do", o.name)
	case o.dryRun:
		e.info("dry run: group %s was not changed (run again without --dry-run to commit)", o.name)
	default:
		e.info("group %s: committed %d new position%s", o.name, len(plan), plural(len(plan)))
	}
	return nil
}

// clampWords tell a reset position that is not the one asked for: in
// the plan's NOTE, and as --json's "clamped".
var clampWords = map[logstore.Clamp]struct{ note, json string }{
	logstore.ClampedToStart: {"clamped to log start", "start"},
	logstore.ClampedToEnd:   {"clamped to log end", "end"},
}

// resetJSON is the document of 'groups reset --json'.
type resetJSON struct {
	Group      string               `json:"group"`
	DryRun     bool                 `json:"dry_run"`
	Partitions []resetPartitionJSON `json:"partitions"`
}

type resetPartitionJSON struct {
	Topic     string  `json:"topic"`
	Partition int     `json:"partition"`
	Current   *uint64 `json:"current_offset"`
	New       uint64  `json:"new_offset"`
	LogStart  uint64  `json:"log_start"`
	LogEnd    uint64  `json:"log_end"`
	Clamped   *string `json:"clamped"`
}

func writeResetJSON(w io.Writer, o groupsResetOptions, plan []logstore.ResetPosition) error {
	doc := resetJSON{Group: o.name, DryRun: o.dryRun, Partitions: []resetPartitionJSON{}}
	for _, r := range plan {
		pj := resetPartitionJSON{Topic: r.Topic, Partition: r.Partition, New: r.New, LogStart: r.Start, LogEnd: r.Next}
		if r.HasCurrent {
			pj.Current = &r.Current
		}
		if w, ok := clampWords[r.Clamp]; ok {
			pj.Clamped = &w.json
		}
		doc.Partitions = append(doc.Partitions, pj)
	}
	return writeJSONDocument(w, doc)
}
