package commands

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

func reassignCommand() *cli.Command {
	return &cli.Command{
		Name:      "reassign",
		Usage:     "move partitions between data directories as a JSON plan says: check, copy, verify, remove the sources",
		ArgsUsage: "--plan FILE (--dry-run | --execute | --verify)",
		Description: "--dry-run and --verify only read; --execute changes the destinations, and with\n" +
			"--remove-source also removes the sources.\n\n" +
			"The plan is JSON, each move a partition (topic, partition) to copy from one data\n" +
			"directory to another, optionally under another topic or partition number:\n\n" +
			"  {\"version\": 1, \"moves\": [\n" +
			"    {\"topic\": \"orders\", \"partition\": 0, \"from\": \"/data1\", \"to\": \"/data2\"},\n" +
			"    {\"topic\": \"orders\", \"partition\": 1, \"from\": \"/data1\", \"to\": \"/data2\",\n" +
			"     \"new_topic\": \"orders-v2\", \"new_partition\": 3}]}\n\n" +
			"The whole plan is checked before anything is done: a field that is unknown,\n" +
			"missing or wrong, two moves of one partition or onto one destination, a move\n" +
			"onto its own source or whose source another move writes are usage errors (exit\n" +
			"2), named by the move (moves[1].partition); a source partition that is not there\n" +
			"(and was not moved already), a destination that holds another partition, or\n" +
			"--remove-source leaving a topic with a missing partition are refused (exit 1).\n\n" +
			"--dry-run prints each move and what --execute would do with it. --execute runs\n" +
			"the moves in order, each as 'seglog copy-partition --force' does (built aside,\n" +
			"checked record by record, synced, swapped in atomically), onto an earlier copy\n" +
			"only what changed: a re-run, after a kill or to catch up with a live writer,\n" +
			"keeps what is done (a move whose destination is byte-identical to its source is\n" +
			"'unchanged', nothing written), and the state is what the two ends show, never a\n" +
			"file beside the plan. --throttle caps each copy's rate. --verify compares each\n" +
			"move's source and destination record by record (offset, timestamp, key, value)\n" +
			"and exits 3 unless every destination holds exactly its source's records.\n\n" +
			"--remove-source (with --execute or --verify) then removes each source partition\n" +
			"whose destination matches it record by record, compared again under the\n" +
			"partition's writer lock (a writer holding it is refused, naming its pid): renamed\n" +
			"aside, synced, then deleted, so a crash leaves the partition or nothing, and\n" +
			"recover clears what is left. A topic's partition count is what its directories\n" +
			"say: partitions are removed from the highest down, one below a partition that\n" +
			"stays is refused, and the topic directory goes with its last partition. A move\n" +
			"whose source was removed counts as done.\n\n" +
			"Progress per move on a terminal; a summary table of the moves, or --json.\n" +
			"Ctrl-C or SIGTERM stops the move under way as copy-partition stops (nothing of it\n" +
			"placed) and exits 1; run the plan again to resume.\n\n" +
			"Examples:\n" +
			"  seglog reassign --plan moves.json --dry-run\n" +
			"  seglog reassign --plan moves.json --execute --throttle 50M   # again to catch up\n" +
			"  seglog reassign --plan moves.json --verify --json | jq -r '.moves[].result'\n" +
			"  seglog reassign --plan moves.json --verify --remove-source",
		Flags: []cli.Flag{
			wideFlag(),
			&cli.StringFlag{Name: "plan", Usage: "the plan, a JSON `FILE`"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print what --execute would do, change nothing"},
			&cli.BoolFlag{Name: "execute", Usage: "copy each move's partition to its destination"},
			&cli.BoolFlag{Name: "verify", Usage: "compare each move's source and destination record by record"},
			&cli.BoolFlag{Name: "remove-source", Usage: "remove each source partition once its destination matches it"},
			&cli.StringFlag{Name: "throttle", Usage: "copy at most `RATE` bytes a second (e.g. 50M, 1GB)"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON"},
			&cli.BoolFlag{Name: "wait", Usage: "wait for locks other processes hold, without limit"},
			&cli.StringFlag{Name: "wait-timeout", Usage: "wait at most `DURATION` for a lock another process holds", DefaultText: "2s"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("reassign takes no arguments, not %q: the moves are in --plan FILE", c.Args().First())
			}
			var r reassignRun
			var modes []string
			for _, m := range []string{"dry-run", "execute", "verify"} {
				if c.Bool(m) {
					r.mode, modes = m, append(modes, "--"+m)
				}
			}
			switch {
			case !c.IsSet("plan") || c.String("plan") == "":
				return usagef("reassign: --plan FILE is required (see 'seglog reassign --help')")
			case len(modes) != 1:
				return usagef("reassign: give one of --dry-run, --execute and --verify, not %s", cmp.Or(strings.Join(modes, " and "), "none"))
			case c.Bool("remove-source") && r.mode == "dry-run":
				return usagef("reassign: --remove-source goes with --execute or --verify, not --dry-run")
			case c.IsSet("throttle") && r.mode != "execute":
				return usagef("reassign: --throttle goes with --execute")
			}
			r.removeSource, r.asJSON = c.Bool("remove-source"), c.Bool("json")
			var err error
			if c.IsSet("throttle") {
				if r.throttle, err = parseRate(c.String("throttle")); err != nil {
					return usagef("--throttle: %v", err)
				}
			}
			if r.lockWait, err = lockWaitFlags(c); err != nil {
				return err
			}
			path := c.String("plan")
			b, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("reassign: cannot read the plan: %w", err)
			}
			if r.moves, err = parsePlan(b); err != nil {
				return usagef("plan %s: %v", path, err)
			}
			r.e = envFrom(c)
			return r.run()
		},
	}
}

// planMoveJSON is a move as the plan writes it.
type planMoveJSON struct {
	Topic        string  `json:"topic"`
	Partition    *int    `json:"partition"`
	From         string  `json:"from"`
	To           string  `json:"to"`
	NewTopic     *string `json:"new_topic"`
	NewPartition *int    `json:"new_partition"`
}

// move is one move of a plan, checked.
type move struct {
	index            int
	topic            string
	part             int
	from, to         string
	toTopic          string
	toPart           int
	fromReal, toReal string // from and to, absolute, links resolved
}

func (m move) name() string { return fmt.Sprintf("moves[%d]", m.index) }

func (m move) source() string { return fmt.Sprintf("%s %s/%d", m.from, m.topic, m.part) }

func (m move) dest() string { return fmt.Sprintf("%s %s/%d", m.to, m.toTopic, m.toPart) }

func (m move) sourceDir() string { return logstore.Open(m.from).PartitionDir(m.topic, m.part) }

func (m move) destDir() string { return logstore.Open(m.to).PartitionDir(m.toTopic, m.toPart) }

// parsePlan reads and checks a plan whole: every error names the move and
// the field (moves[2].partition), and nothing on disk is looked at.
func parsePlan(b []byte) ([]move, error) {
	var plan struct {
		Version *int              `json:"version"`
		Moves   []json.RawMessage `json:"moves"`
	}
	if err := strictJSON(b, &plan); err != nil {
		return nil, err
	}
	switch {
	case plan.Version == nil:
		return nil, errors.New(`"version" is missing: a plan begins {"version": 1, "moves": [...]}`)
	case *plan.Version != 1:
		return nil, fmt.Errorf(`"version" is %d: this seglog reads plans of version 1`, *plan.Version)
	case len(plan.Moves) == 0:
		return nil, errors.New(`"moves" is missing or empty: nothing to move`)
	}
	moves := make([]move, len(plan.Moves))
	for i, raw := range plan.Moves {
		var err error
		if moves[i], err = parseMove(i, raw); err != nil {
			return nil, err
		}
	}
	return moves, checkMoves(moves)
}

// strictJSON decodes one JSON value into v, refusing fields v does not
// have and anything after it. A value of the wrong type is named by its
// field: "partition: a string where an integer belongs".
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		want := map[string]string{"int": "an integer", "string": "a string", "slice": "an array", "struct": "an object"}[typeErr.Type.Kind().String()]
		if typeErr.Field == "" {
			return fmt.Errorf("a JSON %s where %s belongs", typeErr.Value, cmp.Or(want, typeErr.Type.Kind().String()))
		}
		return fmt.Errorf("%s: a JSON %s where %s belongs", typeErr.Field, typeErr.Value, cmp.Or(want, typeErr.Type.Kind().String()))
	case errors.As(err, &syntaxErr):
		return fmt.Errorf("not JSON: %v at byte %d", syntaxErr, syntaxErr.Offset)
	case err != nil:
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	case dec.More():
		return errors.New("more than one JSON value")
	}
	return nil
}

func parseMove(i int, raw json.RawMessage) (move, error) {
	m := move{index: i}
	var mj planMoveJSON
	if err := strictJSON(raw, &mj); err != nil {
		sep := "."
		if strings.HasPrefix(err.Error(), "unknown field") || strings.HasPrefix(err.Error(), "a JSON") {
			sep = ": "
		}
		return m, fmt.Errorf("%s%s%v", m.name(), sep, err)
	}
	field := func(f, format string, args ...any) error {
		return fmt.Errorf("%s.%s: %s", m.name(), f, fmt.Sprintf(format, args...))
	}
	partition := func(f string, p *int) (int, error) {
		if *p < 0 || *p >= logstore.MaxPartitions {
			return 0, field(f, "must be between 0 and %d, not %d", logstore.MaxPartitions-1, *p)
		}
		return *p, nil
	}
	for _, x := range []struct {
		name, value string
	}{{"topic", mj.Topic}, {"from", mj.From}, {"to", mj.To}} {
		if x.value == "" {
			return m, field(x.name, "missing; every move names topic, partition, from and to")
		}
		if strings.IndexByte(x.value, 0) >= 0 {
			return m, field(x.name, "holds a NUL byte")
		}
	}
	if mj.Partition == nil {
		return m, field("partition", "missing; every move names topic, partition, from and to")
	}
	var err error
	if m.part, err = partition("partition", mj.Partition); err != nil {
		return m, err
	}
	if err := format.ValidateTopic(mj.Topic); err != nil {
		return m, field("topic", "%v", err)
	}
	m.topic, m.from, m.to, m.toTopic, m.toPart = mj.Topic, mj.From, mj.To, mj.Topic, m.part
	if mj.NewTopic != nil {
		if err := format.ValidateTopic(*mj.NewTopic); err != nil {
			return m, field("new_topic", "%v", err)
		}
		m.toTopic = *mj.NewTopic
	}
	if mj.NewPartition != nil {
		if m.toPart, err = partition("new_partition", mj.NewPartition); err != nil {
			return m, err
		}
	}
	m.fromReal, m.toReal = realPath(m.from), realPath(m.to)
	switch {
	case m.fromReal == m.toReal && m.topic == m.toTopic && m.part == m.toPart:
		return m, field("to", "%s is the data directory of the source %s/%d: the move would copy the partition onto itself (name another data directory, or a new_topic or new_partition)", m.to, m.topic, m.part)
	case isBelow(m.toReal, m.fromReal) || isBelow(m.fromReal, m.toReal):
		return m, field("to", "%s and %s (from) lie one inside the other, where one's topics would show up in the other: name directories apart", m.to, m.from)
	}
	return m, nil
}

// checkMoves refuses moves that get in each other's way: two of one
// partition, two onto one destination, one whose source another writes.
func checkMoves(moves []move) error {
	type at struct {
		dir, topic string
		part       int
	}
	sources, dests := map[at]int{}, map[at]int{}
	for _, m := range moves {
		src, dst := at{m.fromReal, m.topic, m.part}, at{m.toReal, m.toTopic, m.toPart}
		if j, ok := sources[src]; ok {
			return fmt.Errorf("%s and %s both move %s: give each partition one move", moves[j].name(), m.name(), m.source())
		}
		if j, ok := dests[dst]; ok {
			return fmt.Errorf("%s and %s both copy to %s: give each destination one move", moves[j].name(), m.name(), m.dest())
		}
		sources[src], dests[dst] = m.index, m.index
	}
	for _, m := range moves {
		if j, ok := dests[at{m.fromReal, m.topic, m.part}]; ok {
			return fmt.Errorf("%s.from: %s is what %s copies to; a plan's moves must not depend on their order: make it two plans", m.name(), m.source(), moves[j].name())
		}
	}
	return nil
}

// reassignRun is one run of a plan.
type reassignRun struct {
	e            *env
	mode         string // dry-run, execute or verify
	moves        []move
	removeSource bool
	throttle     int64
	lockWait     time.Duration
	asJSON       bool
	states       []logstore.MoveState
	results      []moveResult
}

// moveResult is what became of a move, for the summary.
type moveResult struct {
	Move          int    `json:"move"`
	Topic         string `json:"topic"`
	Partition     int    `json:"partition"`
	From          string `json:"from"`
	To            string `json:"to"`
	ToTopic       string `json:"to_topic"`
	ToPartition   int    `json:"to_partition"`
	Result        string `json:"result"`
	Bytes         int64  `json:"bytes"`
	Records       uint64 `json:"records"`
	KeptSegments  int    `json:"kept_segments"`
	CopiedSegment int    `json:"copied_segments"`
	ReusedBytes   int64  `json:"reused_bytes"`
	CopiedBytes   int64  `json:"copied_bytes"`
	Differs       string `json:"differs,omitempty"`
	SourceAhead   uint64 `json:"source_ahead"`
	DestAhead     uint64 `json:"destination_ahead"`
	SourceRemoved bool   `json:"source_removed"`
	// Seconds is how long the move's copy or comparison took.
	Seconds float64 `json:"seconds"`
}

// The results of a move (docs/cli.md, reassign --json).
const (
	resultCopy      = "copy"      // --dry-run: the destination is to be made
	resultUpdate    = "update"    // --dry-run: an earlier copy is to be brought up to date
	resultCopied    = "copied"    // the destination was made
	resultUpdated   = "updated"   // an earlier copy was brought up to date
	resultUnchanged = "unchanged" // the destination was byte-identical already
	resultOK        = "ok"        // --verify: the same records at both ends
	resultDiffers   = "differs"   // --verify: a record differs
	resultBehind    = "behind"    // --verify: the source holds records past the destination's
	resultAhead     = "ahead"     // --verify: the destination holds records past the source's
	resultMissing   = "missing"   // --verify: no destination
	resultDone      = "done"      // the source was removed by an earlier run
)

func (r *reassignRun) run() error {
	if err := r.checkState(); err != nil {
		return err
	}
	r.results = make([]moveResult, len(r.moves))
	for i, m := range r.moves {
		r.results[i] = moveResult{Move: m.index, Topic: m.topic, Partition: m.part, From: m.from, To: m.to,
			ToTopic: m.toTopic, ToPartition: m.toPart, Bytes: r.states[i].Bytes}
	}
	var err error
	switch r.mode {
	case "dry-run":
		for i, st := range r.states {
			r.results[i].Result = map[bool]string{false: resultCopy, true: resultUpdate}[st.DestExists]
			if !st.SourceExists {
				r.results[i].Result = resultDone
			}
		}
	case "execute":
		err = r.execute()
	case "verify":
		err = r.verify()
	}
	if err == nil && r.removeSource {
		err = r.remove()
	}
	if err != nil {
		return err
	}
	if werr := r.summary(); werr != nil {
		return werr
	}
	if r.mode == "verify" && slices.ContainsFunc(r.results, func(m moveResult) bool { return m.Result != resultOK && m.Result != resultDone }) {
		return errProblemsFound
	}
	return nil
}

// checkState looks at both ends of every move before anything is done.
func (r *reassignRun) checkState() error {
	r.states = make([]logstore.MoveState, len(r.moves))
	for i, m := range r.moves {
		st, err := logstore.Open(m.from).MoveState(m.topic, m.part, logstore.Open(m.to), m.toTopic, m.toPart)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name(), err)
		}
		switch {
		case !st.SourceExists && !st.DestExists:
			return fmt.Errorf("%s: the source partition %s/%d is not in %s (from), nor its destination in %s: check the plan's topic, partition and from", m.name(), m.topic, m.part, m.from, m.to)
		case st.SourceExists && st.DestExists && !st.Reusable && r.mode != "verify":
			return fmt.Errorf("%s: the destination %s holds another partition (%s): remove it, or name another new_topic or new_partition", m.name(), m.destDir(), st.Other)
		}
		r.states[i] = st
	}
	if r.removeSource {
		return r.checkRemovals()
	}
	return nil
}

// checkRemovals refuses --remove-source where it would leave a source
// topic without a partition below its highest: every command refuses
// such a topic, since keys would route elsewhere.
func (r *reassignRun) checkRemovals() error {
	type topicAt struct{ dir, topic string }
	removed := map[topicAt][]int{}
	for i, m := range r.moves {
		if r.states[i].SourceExists {
			t := topicAt{m.fromReal, m.topic}
			removed[t] = append(removed[t], m.part)
		}
	}
	for _, m := range r.moves {
		parts := removed[topicAt{m.fromReal, m.topic}]
		if parts == nil {
			continue
		}
		t, err := logstore.Open(m.from).Topic(m.topic)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name(), err)
		}
		for q := m.part + 1; q < t.Partitions; q++ {
			if !slices.Contains(parts, q) {
				return fmt.Errorf("%s: --remove-source would leave topic %s in %s without partition %d while partition %d stays, which every command refuses (keys would route elsewhere): move its higher partitions too, or leave out --remove-source", m.name(), m.topic, m.from, m.part, q)
			}
		}
	}
	return nil
}

func (r *reassignRun) execute() error {
	stop, cause, release := onInterrupt()
	defer release()
	for i, m := range r.moves {
		if !r.states[i].SourceExists {
			r.results[i].Result, r.results[i].SourceRemoved = resultDone, true
			continue
		}
		bar := newProgressBar(r.e, fmt.Sprintf("%s %s", m.name(), m.source()))
		opts := logstore.CopyOptions{ToTopic: m.toTopic, ToPartition: m.toPart, Force: true, OnlyOntoCopy: true, Throttle: r.throttle,
			LockWait: r.lockWait, Progress: bar.update, Interrupt: stop}
		rep, err := logstore.Open(m.from).CopyPartition(m.topic, m.part, logstore.Open(m.to), opts)
		bar.finish()
		if errors.Is(err, logstore.ErrInterrupted) {
			return fmt.Errorf("reassign stopped (%v) in %s: nothing of its copy was placed, the moves before it are done; run the plan again to resume", cause(), m.name())
		}
		if err != nil {
			return fmt.Errorf("%s (%s to %s): %w; the moves before it are done, run the plan again to resume", m.name(), m.source(), m.dest(), lockAdvice(err, r.lockWait))
		}
		res := &r.results[i]
		res.Records, res.KeptSegments, res.CopiedSegment = rep.Records, rep.Kept, rep.Segments-rep.Kept
		res.ReusedBytes, res.CopiedBytes, res.Seconds = rep.ReusedBytes, rep.Bytes-rep.ReusedBytes, rep.Duration.Seconds()
		switch {
		case !r.states[i].DestExists:
			res.Result = resultCopied
		case rep.Kept == rep.Segments && rep.ReusedBytes == rep.Bytes:
			res.Result = resultUnchanged
		default:
			res.Result = resultUpdated
		}
	}
	return nil
}

func (r *reassignRun) verify() error {
	stop, cause, release := onInterrupt()
	defer release()
	for i, m := range r.moves {
		res := &r.results[i]
		switch {
		case !r.states[i].SourceExists:
			res.Result, res.SourceRemoved = resultDone, true
			continue
		case !r.states[i].DestExists:
			res.Result = resultMissing
			continue
		}
		began := time.Now()
		c, err := logstore.ComparePartitions(m.sourceDir(), m.destDir(), stop)
		if errors.Is(err, logstore.ErrInterrupted) {
			return fmt.Errorf("reassign --verify stopped (%v) in %s", cause(), m.name())
		}
		if err != nil {
			return fmt.Errorf("%s: %w", m.name(), err)
		}
		res.Seconds = time.Since(began).Seconds()
		res.Records, res.Differs, res.SourceAhead, res.DestAhead = c.Records, c.Differs, c.SourceAhead, c.DestAhead
		res.Result = comparisonResult(c)
	}
	return nil
}

// comparisonResult is the result --verify gives a comparison.
func comparisonResult(c logstore.Comparison) string {
	switch {
	case c.Differs != "":
		return resultDiffers
	case c.SourceAhead > 0:
		return resultBehind
	case c.DestAhead > 0:
		return resultAhead
	}
	return resultOK
}

// remove removes the source of each move whose destination matches it,
// compared again under the source's writer lock, the highest partitions
// of a topic first.
func (r *reassignRun) remove() error {
	order := make([]int, 0, len(r.moves))
	for i, res := range r.results {
		// --verify removes only what it found alike; what --execute
		// copied is compared under the lock below.
		if res.Result == resultOK || r.mode == "execute" && res.Result != resultDone {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ma, mb := r.moves[a], r.moves[b]
		return cmp.Or(cmp.Compare(ma.fromReal, mb.fromReal), strings.Compare(ma.topic, mb.topic), mb.part-ma.part)
	})
	for _, i := range order {
		m, res := r.moves[i], &r.results[i]
		check := func() error {
			c, err := logstore.ComparePartitions(m.sourceDir(), m.destDir(), nil)
			if err != nil {
				return err
			}
			if !c.Same() {
				res.Records, res.Differs, res.SourceAhead, res.DestAhead = c.Records, c.Differs, c.SourceAhead, c.DestAhead
				return fmt.Errorf("its destination %s does not match it (%s): run --execute again, then --verify", m.destDir(), describeComparison(c))
			}
			return nil
		}
		err := logstore.Open(m.from).RemovePartition(m.topic, m.part, logstore.RemoveOptions{LockWait: r.lockWait, Check: check})
		if err != nil {
			return fmt.Errorf("%s: source %s not removed: %w", m.name(), m.source(), lockAdvice(err, r.lockWait))
		}
		res.SourceRemoved = true
	}
	return nil
}

// describeComparison says how a comparison that is not Same differs.
func describeComparison(c logstore.Comparison) string {
	switch {
	case c.Differs != "":
		return c.Differs
	case c.SourceAhead > 0:
		return fmt.Sprintf("the source holds %d records more", c.SourceAhead)
	}
	return fmt.Sprintf("the destination holds %d records more", c.DestAhead)
}

// summary prints the table of moves, or their JSON.
func (r *reassignRun) summary() error {
	w := r.e.stdout
	if r.asJSON {
		b, err := json.MarshalIndent(struct {
			Mode  string       `json:"mode"`
			Moves []moveResult `json:"moves"`
		}{r.mode, r.results}, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	if r.e.quiet {
		return nil
	}
	rows := make([][]string, len(r.results))
	for i, res := range r.results {
		m := r.moves[i]
		size := "-"
		if r.states[i].SourceExists {
			size = humanSize(res.Bytes)
		}
		rows[i] = []string{strconv.Itoa(res.Move), m.source(), m.dest(), resultText(res), size}
		if r.mode != "dry-run" {
			rows[i] = append(rows[i], strconv.FormatUint(res.Records, 10))
		}
		if r.mode == "execute" {
			rows[i] = append(rows[i], fmt.Sprintf("%d (%s)", res.KeptSegments, humanSize(res.ReusedBytes)),
				fmt.Sprintf("%d (%s)", res.CopiedSegment, humanSize(res.CopiedBytes)))
		}
	}
	header := []string{"MOVE", "FROM", "TO", "RESULT", "SIZE"}
	if r.mode != "dry-run" {
		header = append(header, "RECORDS")
	}
	if r.mode == "execute" {
		header = append(header, "KEPT", "COPIED")
	}
	// In 80 columns, the record count and size go before the paths are cut.
	return tableLayout{header: header, numeric: "MOVE SIZE RECORDS KEPT COPIED", drop: []string{"RECORDS", "SIZE"}, dropFirst: true,
		shorten: []string{"FROM", "TO"}, wrap: []string{"RESULT"}}.render(w, rows, r.e.wide)
}

// resultText is a move's result in the table: with what differs, and
// whether its source was removed.
func resultText(res moveResult) string {
	s := res.Result
	switch res.Result {
	case resultDiffers:
		s += ": " + res.Differs
	case resultBehind:
		s += fmt.Sprintf(" (%d records)", res.SourceAhead)
	case resultAhead:
		s += fmt.Sprintf(" (%d records)", res.DestAhead)
	case resultDone:
		return "done (source removed)"
	}
	if res.SourceRemoved {
		s += ", source removed"
	}
	return s
}
