package commands

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// The read-only commands on a log in the simple store/index layout
// (format/simple.go), named by a path. Such a log is one partition,
// numbered 0; its records have no key, timestamp or checksum.

// layoutNote is what verify-crc and dump-index say about checking a log
// in layout l, whose check has limits.
func layoutNote(l logstore.Layout) string { return l.String() + ": " + l.CheckLimits() }

// simpleLayoutNote is layoutNote of the simple layout.
var simpleLayoutNote = layoutNote(logstore.LayoutSimple)

// layoutName names a layout in JSON output.
func layoutName(l logstore.Layout) string {
	if l == logstore.LayoutSimple {
		return simpleLayout
	}
	return "seglog"
}

// openSimple opens the simple log in dir.
func openSimple(dir string) (*logstore.SimpleLog, error) {
	l, err := logstore.OpenSimpleLog(dir)
	if err != nil {
		return nil, fmt.Errorf("simple store/index log %s: %w", dir, err)
	}
	return l, nil
}

// simplePartition checks a --partition given for a simple log, which is
// one partition, 0.
func simplePartition(only int, dir string) error {
	if only > 0 {
		return usagef("--partition %d: %s is a log in the simple store/index layout, a single partition numbered 0", only, dir)
	}
	return nil
}

// checkLayoutRead refuses what read's flags ask that ref's layout cannot
// give: a log whose records carry only values has no timestamps or keys,
// and is one partition.
func checkLayoutRead(o readOptions, ref partitionRef) error {
	if err := refuseKafkaGroup(o.group, ref); err != nil {
		return err
	}
	if !ref.layout.ValuesOnly() {
		return nil
	}
	switch {
	case o.since != nil || o.until != nil:
		return usagef("--since/--until: %s is a log in the %s, whose records have no timestamps", ref.dir, ref.layout)
	case o.key != nil:
		return usagef("--key: %s is a log in the %s, whose records have no keys", ref.dir, ref.layout)
	}
	return simplePartition(o.partition, ref.dir)
}

// refuseKafkaGroup refuses --group on a log in Apache Kafka's layout:
// seglog only reads those, and a group's positions live in a seglog data
// directory.
func refuseKafkaGroup(g groupOptions, ref partitionRef) error {
	if ref.layout == logstore.LayoutKafka && g.name != "" {
		return usagef("--group: %s is in Apache Kafka's layout, which seglog only reads: a group keeps its positions in a seglog data directory", cmp.Or(ref.name, ref.topic))
	}
	return nil
}

// checkLayoutTail refuses what tail's flags ask that ref's layout cannot
// give. Following a simple log is refused: its writer maps its index, and
// seglog cannot tell a record being written from a torn one.
func checkLayoutTail(o tailOptions, ref partitionRef) error {
	if err := refuseKafkaGroup(o.group, ref); err != nil {
		return err
	}
	if !ref.layout.ValuesOnly() {
		return nil
	}
	if o.follow {
		return usagef("-f/-F: %s is a log in the %s, which seglog does not follow (its writer buffers the .store and maps the .index); run tail without -f", ref.dir, ref.layout)
	}
	return simplePartition(o.partition, ref.dir)
}

// tailValuesOnly is tail on a log whose records carry only values: with
// no timestamps their one order is their offsets, so the newest are the
// last, as read --offset -N prints them.
func tailValuesOnly(e *env, o tailOptions, refs []partitionRef) error {
	return readRefs(e, readOptions{topic: o.topic, partition: o.partition, offset: offsetSpec{kind: "last", n: uint64(o.lines)}, count: o.count,
		format: o.format, template: o.template, skipCorrupt: o.skipCorrupt}, refs)
}

// printValuesOnly makes w print records that carry only a value, as read
// prints a simple log's: json gives null for timestamp and key, dump '-'
// for crc and timestamp, and a template prints %T and %c as nothing.
func (w *recordWriter) printValuesOnly() {
	parts := make([]templatePart, len(w.template.parts))
	for i, p := range w.template.parts {
		if p.verb == 'T' || p.verb == 'c' {
			p = templatePart{} // an empty literal
		}
		parts[i] = p
	}
	w.template, w.valuesOnly = template{parts: parts}, true
}

// writeValueJSON is writeJSON for a record that carries only a value.
func (w *recordWriter) writeValueJSON(r *logstore.Record) error {
	if w.jsonHead == nil {
		w.initJSONHead()
	}
	b := append(w.out.AvailableBuffer(), w.jsonHead...)
	b = strconv.AppendUint(b, r.Offset, 10)
	b = append(b, `,"timestamp":null,"timestamp_ns":null,"key":null`...)
	b, err := w.jsonField(b, "value", r.Value, false)
	if err != nil {
		return err
	}
	_, err = w.out.Write(append(b, "}\n"...))
	return err
}

// writeValueDump is writeDump for a record that carries only a value.
func (w *recordWriter) writeValueDump(r *logstore.Record) error {
	b := append(w.out.AvailableBuffer(), "offset="...)
	b = strconv.AppendUint(b, r.Offset, 10)
	b = append(b, " pos="...)
	b = strconv.AppendInt(b, r.Pos, 10)
	b = append(b, " size="...)
	b = strconv.AppendInt(b, int64(len(r.Value)), 10)
	b = append(b, ` keylen=0 crc=- ts=- key=- value="`...)
	return writeDumpValue(w.out, b, r.Value)
}

// simpleIndexSegment is the segment of a simple log whose .index file
// path names: isSimple is false when path is no such file (no .store
// beside it, or a directory in another layout).
func simpleIndexSegment(path string) (seg logstore.SimpleSegment, isSimple bool, err error) {
	if !strings.HasSuffix(path, format.SimpleIndexExt) {
		return seg, false, nil
	}
	store := strings.TrimSuffix(path, format.SimpleIndexExt) + format.SimpleStoreExt
	if _, err := os.Stat(store); err != nil {
		return seg, false, nil
	}
	base, _, err := format.ParseSimpleName(filepath.Base(path))
	if err != nil {
		return seg, false, nil
	}
	layout, err := logstore.DetectLayout(filepath.Dir(path))
	if err != nil || layout != logstore.LayoutSimple {
		return seg, false, err
	}
	return logstore.SimpleSegment{Base: base, Store: store, Index: path}, true, nil
}

// simpleIndexSegments is the segments of the simple log in dir that
// dump-index's options ask for.
func simpleIndexSegments(o dumpIndexOptions, dir string) ([]logstore.SimpleSegment, error) {
	if err := simplePartition(o.partition, dir); err != nil {
		return nil, err
	}
	if len(o.kinds) == 1 && o.kinds[0] == logstore.TimeIndex {
		return nil, usagef("--kind timeindex: %s is a log in the simple store/index layout, which has no time index", dir)
	}
	l, err := openSimple(dir)
	if err != nil {
		return nil, err
	}
	var segs []logstore.SimpleSegment
	for _, s := range l.Segments() {
		if !o.onlySeg || s.Base == o.segment {
			segs = append(segs, s)
		}
	}
	if o.onlySeg && len(segs) == 0 {
		return nil, fmt.Errorf("no segment with base offset %d in %s", o.segment, dir)
	}
	return segs, nil
}

// dumpSimpleIndex is dump-index on segments of a simple log.
func dumpSimpleIndex(e *env, o dumpIndexOptions, segs []logstore.SimpleSegment) error {
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	var wrong int64
	for i, s := range segs {
		n, err := dumpSimpleSegment(out, o, s, i > 0)
		wrong += n
		if err != nil {
			out.Flush()
			return err
		}
	}
	if !o.json && o.verify {
		out.WriteByte('\n')
		if wrong == 0 {
			out.WriteString("all entries check out\n")
		} else {
			fmt.Fprintf(out, "%d wrong %s\n", wrong, dumpIndexPlural(wrong, "entry", "entries"))
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if o.verify && wrong > 0 {
		return errProblemsFound
	}
	return nil
}

// simpleIndexSummaryJSON is the summary line after a simple index's
// entries.
type simpleIndexSummaryJSON struct {
	Type         string `json:"type"` // "summary"
	Layout       string `json:"layout"`
	File         string `json:"file"`
	Store        string `json:"store"`
	Segment      uint64 `json:"segment"`
	Missing      bool   `json:"missing"`
	Entries      int64  `json:"entries"`
	PartialBytes int64  `json:"partial_bytes"`
	Records      uint64 `json:"records"`
	Real         int64  `json:"real"`
	Padding      int64  `json:"padding"`
	PastStoreEnd int64  `json:"past_store_end"`
	Wrong        int64  `json:"wrong"`
}

// dumpSimpleSegment prints one segment's index entries, each with its
// class, a run of zero padding as one line; it returns how many are wrong.
func dumpSimpleSegment(out *bufio.Writer, o dumpIndexOptions, s logstore.SimpleSegment, blank bool) (int64, error) {
	if !o.json && blank {
		out.WriteByte('\n')
	}
	if s.Index == "" {
		if o.json {
			return 0, writeJSONLine(out, simpleIndexSummaryJSON{Type: "summary", Layout: "simple", File: strings.TrimSuffix(s.Store, format.SimpleStoreExt) + format.SimpleIndexExt,
				Store: s.Store, Segment: s.Base, Missing: true})
		}
		_, err := fmt.Fprintf(out, "%s: no .index beside it (a note: the index is only a hint)\n", s.Store)
		return 0, err
	}
	file := appendJSONValue(nil, s.Index)
	if !o.json {
		fmt.Fprintf(out, "%s: %s\n%10s  %20s  %20s  %s\n", s.Index, simpleLayoutNote, "ENTRY", "OFFSET", "POSITION", "CLASS")
	}
	c, err := logstore.CheckSimpleSegment(s, func(en logstore.SimpleIndexEntryInfo) error {
		off := s.Base + uint64(en.RelOffset)
		if o.json {
			b := append(out.AvailableBuffer(), `{"type":"entry","file":`...)
			b = append(b, file...)
			b = append(b, `,"entry":`...)
			b = strconv.AppendInt(b, en.Entry, 10)
			if en.Class == logstore.SimpleEntryPadding {
				b = append(b, `,"count":`...)
				b = strconv.AppendInt(b, en.Count, 10)
			}
			b = append(b, `,"offset":`...)
			b = strconv.AppendUint(b, off, 10)
			b = append(b, `,"position":`...)
			b = strconv.AppendUint(b, en.Pos, 10)
			b = append(b, `,"class":"`...)
			b = append(b, en.Class.Kind()...)
			b = append(b, '"')
			if en.Why != "" {
				b = append(b, `,"detail":`...)
				b = appendJSONValue(b, en.Why)
			}
			_, err := out.Write(append(b, "}\n"...))
			return err
		}
		if en.Class == logstore.SimpleEntryPadding {
			_, err := fmt.Fprintf(out, "entries %d..%d: zero padding (%d %s)\n", en.Entry, en.Entry+en.Count-1, en.Count, dumpIndexPlural(en.Count, "entry", "entries"))
			return err
		}
		class := en.Class.String()
		if en.Why != "" {
			class += ": " + en.Why
		}
		_, err := fmt.Fprintf(out, "%10d  %20d  %20d  %s\n", en.Entry, off, en.Pos, class)
		return err
	})
	if err != nil {
		return c.Wrong, err
	}
	if o.json {
		return c.Wrong, writeJSONLine(out, simpleIndexSummaryJSON{Type: "summary", Layout: "simple", File: s.Index, Store: s.Store, Segment: s.Base,
			Entries: c.Entries, PartialBytes: c.PartialBytes, Records: c.Records, Real: c.Real, Padding: c.Padding, PastStoreEnd: c.PastEnd, Wrong: c.Wrong})
	}
	fmt.Fprintf(out, "checked against %s (%d whole %s): %d real, %d zero padding, %d past the store's end, %d wrong\n",
		filepath.Base(s.Store), c.Records, dumpIndexPlural(int64(c.Records), "record", "records"), c.Real, c.Padding, c.PastEnd, c.Wrong)
	if c.PartialBytes > 0 {
		fmt.Fprintf(out, "note: a partial last entry of %d %s, ignored\n", c.PartialBytes, dumpIndexPlural(c.PartialBytes, "byte", "bytes"))
	}
	if c.Padding > 0 || c.PastEnd > 0 {
		out.WriteString("note: zero padding and entries past the store's end are what a crash of its writer leaves, not damage\n")
	}
	return c.Wrong, nil
}
