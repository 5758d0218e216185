package commands

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

type dumpIndexOptions struct {
	target    string // an index file, a partition directory, or a topic
	partition int    // -1: not given
	segment   uint64
	onlySeg   bool // --segment given
	kinds     []logstore.IndexKind
	verify    bool
	json      bool
}

func dumpIndexCommand() *cli.Command {
	return &cli.Command{
		Name:      "dump-index",
		Usage:     "print the entries of .index and .timeindex files, and check them against the .log",
		ArgsUsage: "FILE.index|FILE.timeindex|FILE.log|TOPIC|PARTITION-DIR",
		Description: "Only reads: prints each entry of an index file (entry number, offset, and the byte\n" +
			"position or timestamp), or of every segment of a topic's partition, each file under\n" +
			"a heading. An argument ending in .index or .timeindex, or containing '/', is a file\n" +
			"(or a partition or topic directory); anything else is a TOPIC, whose partition\n" +
			"--partition names (it may be left out when the topic has one partition), as for a\n" +
			"topic directory. A lone segment file (a .log named with a '/') means the index\n" +
			"files beside it under its name, judged as the active segment's. An index file of a\n" +
			"partition that is not a regular file (a symbolic link, a directory) is not read:\n" +
			"the others are dumped, then dump-index fails (exit status 1) naming it. An .index\n" +
			"with a .store beside it, or a directory in that simple store/index layout, gets\n" +
			"each entry's class: real, wrong, past the store's end, or zero padding (one line\n" +
			"per run).\n\n" +
			"Up to 1000 entries a file are printed as a table, more as plain aligned columns,\n" +
			"in constant memory whatever the file's size; --json prints one object per entry\n" +
			"and then one summary object per file (and a total for a partition).\n\n" +
			"--verify checks each entry against the .log: the record with that offset really\n" +
			"starts at that position, or really has that timestamp; entries are in offset\n" +
			"order. Each entry gets a verdict, and dump-index exits 3 if any entry is wrong\n" +
			"(or points at damaged data in the .log). Entries past the log's end (stale after\n" +
			"a power loss) and a partial last entry are notes, timestamps going backwards a\n" +
			"warning: none of them changes the exit status. In --json, a verdict (and a\n" +
			"class, in the simple layout) is the finding kind verify-crc gives the same entry:\n" +
			"ok, index-mismatch, index-no-record, index-order, index-stale, corrupt-record...\n\n" +
			"Apache Kafka's own log directories are read the same way, never written: a broker's\n" +
			"log directory given with -d (topics by name), or a TOPIC-N partition directory or a\n" +
			"segment .log of Kafka's by path (told from seglog's by their contents).\n\n" +
			"Examples:\n" +
			"  seglog dump-index orders --partition 2 --verify\n" +
			"  seglog dump-index orders -p 0 --segment 0 --kind timeindex\n" +
			"  seglog dump-index data/orders/0/00000000000000000000.index --verify --json\n" +
			"  seglog dump-index ./rescue/00000000000000000000.log --verify",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "partition", Aliases: []string{"p"}, Value: -1, Usage: "the topic's partition `P`", DefaultText: "0 when the topic has one partition"},
			&cli.StringFlag{Name: "segment", Aliases: []string{"s"}, Usage: "only the segment with base offset `BASE`", DefaultText: "every segment"},
			indexKinds.flag("kind", "both", "which index files of a segment, `KIND`"),
			&cli.BoolFlag{Name: "verify", Usage: "check each entry against the .log; exit 3 on a wrong entry"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object a line: each entry, then a summary"},
		},
		Action: func(c *cli.Context) error {
			o, err := parseDumpIndexOptions(c)
			if err != nil {
				return err
			}
			return runDumpIndex(envFrom(c), o)
		},
	}
}

// indexKinds are the values of --kind: which index files of a segment.
var indexKinds = choices[[]logstore.IndexKind]{
	{"index", []logstore.IndexKind{logstore.OffsetIndex}, ""},
	{"timeindex", []logstore.IndexKind{logstore.TimeIndex}, ""},
	{"both", []logstore.IndexKind{logstore.OffsetIndex, logstore.TimeIndex}, ""},
}

func parseDumpIndexOptions(c *cli.Context) (dumpIndexOptions, error) {
	o := dumpIndexOptions{partition: c.Int("partition"), verify: c.Bool("verify"), json: c.Bool("json")}
	switch c.NArg() {
	case 0:
		return o, usagef("dump-index: missing FILE, TOPIC or PARTITION-DIR (see 'seglog dump-index --help')")
	case 1:
		o.target = c.Args().First()
	default:
		return o, usagef("dump-index: one FILE, TOPIC or PARTITION-DIR expected, got %d arguments: %s", c.NArg(), strings.Join(c.Args().Slice(), " "))
	}
	if c.IsSet("partition") && o.partition < 0 {
		return o, usagef("--partition must be 0 or more, not %d", o.partition)
	}
	if c.IsSet("segment") {
		s := c.String("segment")
		// A file name, or its 20 digits, is as good as the base offset.
		if base, _, err := format.ParseSegmentName(s); err == nil {
			o.segment = base
		} else if base, _, err := format.ParseSegmentName(s + format.LogExt); err == nil {
			o.segment = base
		} else if o.segment, err = strconv.ParseUint(s, 10, 64); err != nil || !isDecimal(s) {
			return o, usagef("--segment must be a segment's base offset (decimal, no leading zeros) or file name, not %q", s)
		}
		o.onlySeg = true
	}
	var err error
	if o.kinds, err = parseChoice(c, "kind", indexKinds); err != nil {
		return o, err
	}
	if dumpIndexIsPath(o.target) {
		if _, isFile := logstore.IndexKindOf(o.target); isFile {
			for _, f := range []string{"partition", "segment", "kind"} {
				if c.IsSet(f) {
					return o, usagef("--%s does not apply to an index file (%s)", f, o.target)
				}
			}
		}
		if strings.HasSuffix(o.target, format.LogExt) {
			for _, f := range []string{"partition", "segment"} {
				if c.IsSet(f) {
					return o, usagef("--%s does not apply to a segment file (%s)", f, o.target)
				}
			}
		}
		return o, nil
	}
	return o, checkTopicName(o.target)
}

// dumpIndexIsPath tells a file or directory argument from a topic name.
func dumpIndexIsPath(arg string) bool {
	_, isIndex := logstore.IndexKindOf(arg)
	return isIndex || strings.Contains(arg, "/")
}

// dumpIndexFile is one index file to dump: named, or of seg.
type dumpIndexFile struct {
	path    string
	kind    logstore.IndexKind
	missing bool
	seg     *logstore.IndexSegment // nil for a file named as the argument
}

// dumpIndexTarget is what dump-index's argument names: index files of
// the seglog layout, or segments of a log in the simple layout.
type dumpIndexTarget struct {
	files     []dumpIndexFile
	partition bool // a partition was named: several files, a total
	simple    []logstore.SimpleSegment
	kafka     *kafkaDumpTarget // a partition or file of Apache Kafka's layout
}

// dumpIndexFiles resolves the argument to what to dump.
func dumpIndexFiles(e *env, o dumpIndexOptions) (dumpIndexTarget, error) {
	if kt, ok, err := dumpIndexKafka(e, o); ok || err != nil {
		return dumpIndexTarget{kafka: &kt}, err
	}
	files, partition, simple, err := dumpIndexResolve(e, o)
	return dumpIndexTarget{files: files, partition: partition, simple: simple}, err
}

// dumpIndexKafka is the Kafka partition or file the argument names, if
// it names one: a topic of a Kafka log directory given with -d, a
// partition directory or lone .log of Kafka's, or one of its files.
func dumpIndexKafka(e *env, o dumpIndexOptions) (kafkaDumpTarget, bool, error) {
	if !dumpIndexIsPath(o.target) {
		d, err := e.kafkaDir()
		if d == nil || err != nil {
			return kafkaDumpTarget{}, err != nil, err
		}
		parts, err := kafkaTopic(d, o.target, o.partition)
		switch {
		case err != nil:
			return kafkaDumpTarget{}, true, err
		case len(parts) > 1:
			return kafkaDumpTarget{}, true, usagef("topic %s has %d partitions here: name one with --partition", o.target, len(parts))
		}
		return kafkaDumpTarget{dir: parts[0].Dir, name: o.target + "/" + strconv.Itoa(int(parts[0].Partition))}, true, nil
	}
	if fi, err := os.Stat(o.target); err == nil && !fi.IsDir() && !strings.HasSuffix(o.target, format.LogExt) {
		return kafkaDumpFile(o.target)
	}
	dir, kind, err := classifyPath(o.target)
	if err != nil || !kafkaKind(kind) {
		return kafkaDumpTarget{}, false, nil // left to dumpIndexResolve, which names what is wrong
	}
	return kafkaDumpTarget{dir: dir, name: dir, file: kind == kafkaFilePath}, true, nil
}

// dumpIndexResolve is dumpIndexFiles' work: the files to dump and whether
// a partition was named, or a simple log's segments.
func dumpIndexResolve(e *env, o dumpIndexOptions) (files []dumpIndexFile, partition bool, simple []logstore.SimpleSegment, err error) {
	dir := ""
	switch {
	case dumpIndexIsPath(o.target):
		// What is neither a file nor an index file's name is left to
		// classifyPath, which names it.
		fi, err := os.Stat(o.target)
		if _, isIndex := logstore.IndexKindOf(o.target); err != nil && isIndex {
			return nil, false, nil, err
		}
		if kind, ok := logstore.IndexKindOf(o.target); err == nil && !fi.IsDir() && ok {
			seg, isSimple, err := simpleIndexSegment(o.target)
			if isSimple || err != nil {
				return nil, false, []logstore.SimpleSegment{seg}, err
			}
			return []dumpIndexFile{{path: o.target, kind: kind}}, false, nil, nil
		}
		var kind pathKind
		if dir, kind, err = classifyPath(o.target); err != nil {
			return nil, false, nil, err
		}
		if kind == simplePath {
			segs, err := simpleIndexSegments(o, dir)
			return nil, false, segs, err
		}
		if kind == segmentFilePath {
			p, err := logstore.OpenSegmentFile(dir, dir)
			if err != nil {
				return nil, false, nil, err
			}
			defer p.Close()
			return segmentIndexFiles(o, p.IndexSegments()), true, nil, nil
		}
		if kind == topicPath {
			t, err := logstore.OpenTopicDir(dir)
			if err != nil {
				return nil, false, nil, err
			}
			if dir, err = dumpIndexPartition(t, dir, o.partition); err != nil {
				return nil, false, nil, err
			}
			break
		}
		if o.partition >= 0 {
			if n, err := format.ParsePartition(filepath.Base(dir)); err != nil || n != o.partition {
				return nil, false, nil, usagef("--partition %d does not match the partition directory %s", o.partition, dir)
			}
		}
	default:
		store := logstore.Open(e.dataDir)
		t, err := store.Topic(o.target)
		if errors.Is(err, logstore.ErrTopicNotFound) {
			return nil, false, nil, missingTopic(err, e.dataDir, "seglog create "+o.target)
		}
		if err != nil {
			return nil, false, nil, err
		}
		if dir, err = dumpIndexPartition(t, o.target, o.partition); err != nil {
			return nil, false, nil, err
		}
	}
	segs, err := logstore.IndexSegments(dir)
	if err != nil {
		return nil, false, nil, err
	}
	if o.onlySeg {
		i := slices.IndexFunc(segs, func(s logstore.IndexSegment) bool { return s.Base == o.segment })
		if i < 0 {
			return nil, false, nil, fmt.Errorf("no segment with base offset %d in %s (%s)", o.segment, dir, segmentChoices(segs))
		}
		segs = segs[i : i+1]
	}
	return segmentIndexFiles(o, segs), true, nil, nil
}

// segmentIndexFiles lists the index files of segs that o asks for.
func segmentIndexFiles(o dumpIndexOptions, segs []logstore.IndexSegment) []dumpIndexFile {
	var files []dumpIndexFile
	for i := range segs {
		s := &segs[i]
		for _, k := range o.kinds {
			path := s.Index
			if k == logstore.TimeIndex {
				path = s.TimeIndex
			}
			_, err := os.Lstat(path)
			files = append(files, dumpIndexFile{path: path, kind: k, missing: errors.Is(err, os.ErrNotExist), seg: s})
		}
	}
	return files
}

// dumpIndexPartition is the directory of the partition of t (called
// label) to dump: p, or the only one when p is -1.
func dumpIndexPartition(t *logstore.Topic, label string, p int) (string, error) {
	switch {
	case p < 0 && t.Partitions > 1:
		return "", usagef("topic %s has %d partitions: name one with --partition 0..%d", label, t.Partitions, t.Partitions-1)
	case p < 0:
		p = 0
	case p >= t.Partitions:
		return "", fmt.Errorf("topic %s has partitions 0..%d, not %d: %w", label, t.Partitions-1, p, logstore.ErrPartitionNotFound)
	}
	return t.PartitionDir(p), nil
}

// segmentChoices names a partition's segments for an error message.
func segmentChoices(segs []logstore.IndexSegment) string {
	if len(segs) == 0 {
		return "it has no segments"
	}
	const shown = 8
	var b strings.Builder
	b.WriteString("its segments: ")
	for i, s := range segs[:min(len(segs), shown)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatUint(s.Base, 10))
	}
	if len(segs) > shown {
		fmt.Fprintf(&b, " and %d more", len(segs)-shown)
	}
	return b.String()
}

// dumpIndexTableMax is the most entries printed as a table: tables need
// every row before printing, beyond that plain columns stream.
const dumpIndexTableMax = 1000

// dumpIndexTotals adds up the files' summaries.
type dumpIndexTotals struct {
	files, missing, partial int
	entries                 int64
	counts                  map[logstore.IndexVerdict]int64
	wrong, damaged          int64
	odd                     []*logstore.NotRegularError // files of a listing not read: not regular files
}

func (t *dumpIndexTotals) add(s *logstore.IndexSummary) {
	t.files++
	t.entries += s.Entries
	if s.PartialBytes > 0 {
		t.partial++
	}
	if t.counts == nil {
		t.counts = map[logstore.IndexVerdict]int64{}
	}
	for _, v := range s.Verdicts() {
		t.counts[v] += s.Count(v)
	}
	t.wrong += s.Wrong()
	t.damaged += s.Damaged()
}

func runDumpIndex(e *env, o dumpIndexOptions) error {
	target, err := dumpIndexFiles(e, o)
	if err != nil {
		return err
	}
	if target.kafka != nil {
		return dumpKafka(e, o, *target.kafka)
	}
	if target.simple != nil {
		return dumpSimpleIndex(e, o, target.simple)
	}
	files, partition := target.files, target.partition
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	var totals dumpIndexTotals
	for i, f := range files {
		var odd *logstore.NotRegularError
		if f.missing {
			totals.files++
			totals.missing++
			err = dumpIndexMissing(out, o, f, i > 0)
		} else {
			var sum logstore.IndexSummary
			sum, err = dumpIndexOne(out, o, f, i > 0)
			totals.add(&sum)
		}
		if f.seg != nil && errors.As(err, &odd) {
			// The others are dumped still; the command fails at the end.
			totals.odd = append(totals.odd, odd)
			err = dumpIndexNotRegular(out, o, f, odd, i > 0)
		}
		if err != nil {
			out.Flush() // what was printed before the error stays useful
			return err
		}
	}
	switch {
	case o.json && partition:
		err = writeDumpIndexTotalJSON(out, &totals)
	case !o.json:
		err = writeDumpIndexReport(out, o, &totals, partition)
	}
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		return err
	}
	if n := totals.counts[logstore.VerdictBackwards]; n > 0 {
		e.warn("%d time index %s back in time (foreign writers stamp the wall clock: not an error)", n, dumpIndexPlural(n, "entry goes", "entries go"))
	}
	if len(totals.odd) > 0 {
		return fmt.Errorf("%s, not dumped: %s", dumpIndexNotRegularText(len(totals.odd)), nameList(oddPaths(totals.odd)))
	}
	if o.verify && totals.wrong+totals.damaged > 0 {
		return errProblemsFound
	}
	return nil
}

func dumpIndexNotRegularText(n int) string {
	return fmt.Sprintf("%d index %s not a regular file", n, dumpIndexPlural(int64(n), "file is", "files are"))
}

func oddPaths(odd []*logstore.NotRegularError) []string {
	paths := make([]string, len(odd))
	for i, e := range odd {
		paths[i] = e.Path + " (" + e.Kind() + ")"
	}
	return paths
}

// dumpIndexNotRegular reports a segment's index file that is not a
// regular file, which is not read (verify-crc calls it a problem).
func dumpIndexNotRegular(out *bufio.Writer, o dumpIndexOptions, f dumpIndexFile, odd *logstore.NotRegularError, blank bool) error {
	if o.json {
		b := append(out.AvailableBuffer(), `{"type":"summary","file":`...)
		b = appendJSONValue(b, f.path)
		b = append(b, `,"kind":"`...)
		b = append(b, f.kind.String()...)
		b = append(b, `","not_regular":`...)
		b = appendJSONValue(b, odd.Kind())
		b = append(b, "}\n"...)
		_, err := out.Write(b)
		return err
	}
	if blank {
		out.WriteByte('\n')
	}
	_, err := fmt.Fprintf(out, "%s: not a regular file (%s), not read; %s\n", f.path, odd.Kind(), odd.Advice())
	return err
}

func dumpIndexPlural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// dumpIndexMissing reports a segment without that index file: a note,
// recover rebuilds it.
func dumpIndexMissing(out *bufio.Writer, o dumpIndexOptions, f dumpIndexFile, blank bool) error {
	if o.json {
		b := append(out.AvailableBuffer(), `{"type":"summary","file":`...)
		b = appendJSONValue(b, f.path)
		b = append(b, `,"kind":"`...)
		b = append(b, f.kind.String()...)
		b = append(b, `","missing":true}`+"\n"...)
		_, err := out.Write(b)
		return err
	}
	if blank {
		out.WriteByte('\n')
	}
	_, err := fmt.Fprintf(out, "%s: missing (a note: 'seglog recover' rebuilds it)\n", f.path)
	return err
}

// appendJSONValue appends v encoded by encoding/json (paths may hold
// bytes that are not UTF-8, which it replaces).
func appendJSONValue(b []byte, v any) []byte {
	j, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, j...)
}

// dumpIndexOne dumps one index file.
func dumpIndexOne(out *bufio.Writer, o dumpIndexOptions, f dumpIndexFile, blank bool) (logstore.IndexSummary, error) {
	var d *logstore.IndexDump
	var err error
	if f.seg != nil {
		d, err = f.seg.OpenDump(f.kind, o.verify)
	} else {
		d, err = logstore.OpenIndexDump(f.path, o.verify)
	}
	if err != nil {
		return logstore.IndexSummary{}, err
	}
	defer d.Close()
	info := d.Summary()
	w := &indexEntryWriter{out: out, kind: f.kind, verify: o.verify}
	switch {
	case o.json:
		w.jsonFile = appendJSONValue(nil, f.path)
	case info.Entries <= dumpIndexTableMax:
		w.table = true
	default:
		w.entryWidth = max(len("ENTRY"), len(strconv.FormatInt(info.Entries-1, 10)))
	}
	if !o.json {
		if blank {
			out.WriteByte('\n')
		}
		if err := writeDumpIndexHeading(out, &info); err != nil {
			return info, err
		}
		if info.Entries > 0 && !w.table {
			if err := w.writeColumnsHeader(); err != nil {
				return info, err
			}
		}
	}
	sum, err := d.Run(w.write)
	if err != nil {
		return sum, err
	}
	if w.table && len(w.rows) > 0 {
		if err := renderTable(out, w.header(), "ENTRY OFFSET POSITION", w.rows); err != nil {
			return sum, err
		}
	}
	if o.json {
		return sum, writeDumpIndexSummaryJSON(out, &sum)
	}
	if o.verify && sum.Entries > 0 {
		_, err = fmt.Fprintf(out, "checked against %s: %s\n", filepath.Base(sum.LogPath), verdictCounts(func(v logstore.IndexVerdict) int64 { return sum.Count(v) }))
	}
	return sum, err
}

func writeDumpIndexHeading(out *bufio.Writer, s *logstore.IndexSummary) error {
	b := append(out.AvailableBuffer(), s.Path...)
	b = append(b, ": "...)
	switch s.Entries {
	case 0:
		b = append(b, "no entries"...)
	default:
		b = strconv.AppendInt(b, s.Entries, 10)
		b = append(b, ' ')
		b = append(b, dumpIndexPlural(s.Entries, "entry", "entries")...)
	}
	if s.Kind == logstore.TimeIndex {
		b = append(b, " (offset -> timestamp)"...)
	} else {
		b = append(b, " (offset -> byte position in the .log)"...)
	}
	if s.PartialBytes > 0 {
		b = append(b, ", and a partial last entry of "...)
		b = strconv.AppendInt(b, s.PartialBytes, 10)
		b = append(b, ' ')
		b = append(b, dumpIndexPlural(s.PartialBytes, "byte", "bytes")...)
		b = append(b, " (ignored)"...)
	}
	_, err := out.Write(append(b, '\n'))
	return err
}

// verdictCounts is "9 ok, 1 wrong position": the verdicts given, in
// verdict order.
func verdictCounts(count func(logstore.IndexVerdict) int64) string {
	var parts []string
	for _, v := range logstore.IndexVerdicts() {
		if n := count(v); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	if len(parts) == 0 {
		return "no entries"
	}
	return strings.Join(parts, ", ")
}

// writeDumpIndexReport ends the text output: with --verify, the totals,
// the notes and the verdict line.
func writeDumpIndexReport(out *bufio.Writer, o dumpIndexOptions, t *dumpIndexTotals, partition bool) error {
	if !o.verify {
		return nil
	}
	out.WriteByte('\n')
	if partition {
		fmt.Fprintf(out, "%d %s in %d %s: %s\n", t.entries, dumpIndexPlural(t.entries, "entry", "entries"), t.files, dumpIndexPlural(int64(t.files), "file", "files"),
			verdictCounts(func(v logstore.IndexVerdict) int64 { return t.counts[v] }))
	}
	if n := t.counts[logstore.VerdictPastEnd]; n > 0 {
		fmt.Fprintf(out, "note: %d %s past the log's end (stale after a crash; 'seglog recover' rebuilds the index)\n", n, dumpIndexPlural(n, "entry points", "entries point"))
	}
	if t.partial > 0 {
		fmt.Fprintf(out, "note: %d %s in a partial entry, ignored\n", t.partial, dumpIndexPlural(int64(t.partial), "file ends", "files end"))
	}
	if t.missing > 0 {
		fmt.Fprintf(out, "note: %d index %s missing ('seglog recover' rebuilds them)\n", t.missing, dumpIndexPlural(int64(t.missing), "file is", "files are"))
	}
	if len(t.odd) > 0 {
		fmt.Fprintf(out, "%s, not read\n", dumpIndexNotRegularText(len(t.odd)))
	}
	if t.damaged > 0 {
		fmt.Fprintf(out, "%d %s could not be confirmed: the .log is damaged there (run 'seglog verify-crc')\n", t.damaged, dumpIndexPlural(t.damaged, "entry", "entries"))
	}
	var err error
	if t.wrong+t.damaged == 0 {
		_, err = out.WriteString("all entries check out\n")
	} else {
		_, err = fmt.Fprintf(out, "%d wrong %s\n", t.wrong, dumpIndexPlural(t.wrong, "entry", "entries"))
	}
	return err
}

// dumpIndexSummaryJSON is the summary line after a file's entries.
type dumpIndexSummaryJSON struct {
	Type         string           `json:"type"`
	File         string           `json:"file"`
	Kind         string           `json:"kind"`
	Log          string           `json:"log"`
	Segment      uint64           `json:"segment"`
	Entries      int64            `json:"entries"`
	PartialBytes int64            `json:"partial_bytes"`
	Missing      bool             `json:"missing"`
	Verified     bool             `json:"verified"`
	Verdicts     map[string]int64 `json:"verdicts,omitempty"`
	Wrong        *int64           `json:"wrong,omitempty"`
	Damaged      *int64           `json:"damaged,omitempty"`
}

func writeDumpIndexSummaryJSON(out io.Writer, s *logstore.IndexSummary) error {
	j := dumpIndexSummaryJSON{Type: "summary", File: s.Path, Kind: s.Kind.String(), Log: s.LogPath, Segment: s.Base,
		Entries: s.Entries, PartialBytes: s.PartialBytes, Verified: s.Verified}
	if s.Verified {
		j.Verdicts = map[string]int64{}
		for _, v := range s.Verdicts() {
			j.Verdicts[string(logstore.VerdictKind(v))] += s.Count(v)
		}
		wrong, damaged := s.Wrong(), s.Damaged()
		j.Wrong, j.Damaged = &wrong, &damaged
	}
	return writeJSONLine(out, j)
}

// dumpIndexTotalJSON is the last line for a partition.
type dumpIndexTotalJSON struct {
	Type         string           `json:"type"`
	Files        int              `json:"files"`
	MissingFiles int              `json:"missing_files"`
	PartialFiles int              `json:"partial_files"`
	Entries      int64            `json:"entries"`
	Verdicts     map[string]int64 `json:"verdicts"`
	Wrong        int64            `json:"wrong"`
	Damaged      int64            `json:"damaged"`
}

func writeDumpIndexTotalJSON(out io.Writer, t *dumpIndexTotals) error {
	j := dumpIndexTotalJSON{Type: "total", Files: t.files, MissingFiles: t.missing, PartialFiles: t.partial,
		Entries: t.entries, Verdicts: map[string]int64{}, Wrong: t.wrong, Damaged: t.damaged}
	for v, n := range t.counts {
		j.Verdicts[string(logstore.VerdictKind(v))] += n
	}
	return writeJSONLine(out, j)
}

// writeJSONLine prints v as one line of JSON.
func writeJSONLine(out io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
