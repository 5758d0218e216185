package commands

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// indexEntryWriter prints entries: into table rows (a small file), as
// aligned columns streamed line by line, or as JSON lines.
type indexEntryWriter struct {
	out        *bufio.Writer
	kind       logstore.IndexKind
	verify     bool
	table      bool
	rows       [][]string
	entryWidth int    // columns: width of the ENTRY column
	jsonFile   []byte // JSON: the file's path, encoded
	times      timeFormatter
	scratch    []byte
}

// Widths of the plain columns: a u64 offset or position has up to 20
// digits, an RFC 3339 time with nanoseconds 30 characters.
const (
	dumpIndexOffsetWidth = 20
	dumpIndexTimeWidth   = 30
)

func (w *indexEntryWriter) header() []string {
	h := []string{"ENTRY", "OFFSET", "POSITION"}
	if w.kind == logstore.TimeIndex {
		h[2] = "TIMESTAMP"
	}
	if w.verify {
		h = append(h, "VERDICT")
	}
	return h
}

func (w *indexEntryWriter) write(e logstore.IndexEntryInfo) error {
	switch {
	case w.jsonFile != nil:
		return w.writeJSON(e)
	case w.table:
		row := []string{strconv.FormatInt(e.Entry, 10), strconv.FormatUint(e.Offset, 10), string(w.appendValue(nil, e.Value))}
		if w.verify {
			row = append(row, w.verdictText(e))
		}
		w.rows = append(w.rows, row)
		return nil
	}
	var verdict string
	if w.verify {
		verdict = w.verdictText(e)
	}
	w.scratch = strconv.AppendInt(w.scratch[:0], e.Entry, 10)
	n := len(w.scratch)
	w.scratch = strconv.AppendUint(w.scratch, e.Offset, 10)
	m := len(w.scratch)
	w.scratch = w.appendValue(w.scratch, e.Value)
	return w.writeColumns(w.scratch[:n], w.scratch[n:m], w.scratch[m:], verdict)
}

func (w *indexEntryWriter) writeColumnsHeader() error {
	h := w.header()
	verdict := ""
	if w.verify {
		verdict = h[3]
	}
	return w.writeColumns([]byte(h[0]), []byte(h[1]), []byte(h[2]), verdict)
}

// writeColumns prints a line of plain columns: fixed widths, two blanks
// between, numbers right-aligned, no trailing blanks.
func (w *indexEntryWriter) writeColumns(entry, offset, value []byte, verdict string) error {
	b := w.out.AvailableBuffer()
	b = appendRightAligned(b, entry, w.entryWidth)
	b = append(b, "  "...)
	b = appendRightAligned(b, offset, dumpIndexOffsetWidth)
	b = append(b, "  "...)
	if w.kind == logstore.TimeIndex {
		b = append(b, value...)
		if verdict != "" {
			for range dumpIndexTimeWidth - len(value) {
				b = append(b, ' ')
			}
		}
	} else {
		b = appendRightAligned(b, value, dumpIndexOffsetWidth)
	}
	if verdict != "" {
		b = append(b, "  "...)
		b = append(b, verdict...)
	}
	_, err := w.out.Write(append(b, '\n'))
	return err
}

// appendRightAligned appends s right-aligned in a column of width (wider
// values push the line).
func appendRightAligned(b, s []byte, width int) []byte {
	for range width - len(s) {
		b = append(b, ' ')
	}
	return append(b, s...)
}

// appendValue appends an entry's position (as the u64 stored) or
// timestamp.
func (w *indexEntryWriter) appendValue(b []byte, v int64) []byte {
	if w.kind == logstore.TimeIndex {
		return w.times.append(b, v)
	}
	return strconv.AppendUint(b, uint64(v), 10)
}

// verdictText is the VERDICT cell: the verdict and what the .log holds.
func (w *indexEntryWriter) verdictText(e logstore.IndexEntryInfo) string {
	reason := func() string {
		switch {
		case e.Reason == nil:
			return ""
		case errors.Is(e.Reason, format.ErrShort):
			return "its size runs past the log's end"
		}
		return errorLine(e.Reason)
	}
	switch e.Verdict {
	case logstore.VerdictBackwards:
		return "ok, but goes back in time: the entry before has " + string(w.times.append(nil, e.FoundTimestamp)) + " (warning)"
	case logstore.VerdictPastEnd:
		if e.Reason != nil && e.RecordPos >= 0 {
			return fmt.Sprintf("past the log's end: the record at byte %d is cut off (note)", e.RecordPos)
		}
		return "past the log's end (note)"
	case logstore.VerdictWrongPosition:
		return fmt.Sprintf("wrong position: offset %d starts there", e.FoundOffset)
	case logstore.VerdictWrongTimestamp:
		return fmt.Sprintf("wrong timestamp: the record (at byte %d) has %s", e.RecordPos, w.times.append(nil, e.FoundTimestamp))
	case logstore.VerdictOutOfOrder:
		return fmt.Sprintf("out of order: not after offset %d", e.Prev)
	case logstore.VerdictNoRecord:
		return fmt.Sprintf("no record starts here: it is inside the record at byte %d (offset %d)", e.RecordPos, e.FoundOffset)
	case logstore.VerdictNoSuchOffset:
		return fmt.Sprintf("no such offset: the segment starts at %d", e.Prev)
	case logstore.VerdictCorruptRecord:
		return fmt.Sprintf("corrupt record at byte %d (%s)", e.RecordPos, reason())
	case logstore.VerdictUnchecked:
		return fmt.Sprintf("not checked: the log is damaged from byte %d, offset %d (%s)", e.RecordPos, e.FoundOffset, reason())
	}
	return e.Verdict.String()
}

// writeJSON prints one entry as a JSON line.
func (w *indexEntryWriter) writeJSON(e logstore.IndexEntryInfo) error {
	b := append(w.out.AvailableBuffer(), `{"type":"entry","file":`...)
	b = append(b, w.jsonFile...)
	b = append(b, `,"entry":`...)
	b = strconv.AppendInt(b, e.Entry, 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendUint(b, e.Offset, 10)
	if w.kind == logstore.TimeIndex {
		b = w.times.appendJSON(append(b, ','), "timestamp", e.Value)
	} else {
		b = append(b, `,"position":`...)
		b = strconv.AppendUint(b, uint64(e.Value), 10)
	}
	if w.verify {
		b = append(b, `,"verdict":"`...)
		b = append(b, logstore.VerdictKind(e.Verdict)...)
		b = append(b, '"')
		if e.Verdict != logstore.VerdictOK {
			b = append(b, `,"detail":`...)
			b = appendJSONValue(b, w.verdictText(e))
		}
		if e.RecordPos >= 0 {
			b = append(b, `,"record_position":`...)
			b = strconv.AppendInt(b, e.RecordPos, 10)
		}
		switch e.Verdict {
		case logstore.VerdictWrongPosition, logstore.VerdictUnchecked, logstore.VerdictCorruptRecord, logstore.VerdictNoRecord:
			b = append(b, `,"found_offset":`...)
			b = strconv.AppendUint(b, e.FoundOffset, 10)
		case logstore.VerdictWrongTimestamp, logstore.VerdictBackwards:
			b = w.times.appendJSON(append(b, ','), "found_timestamp", e.FoundTimestamp)
		case logstore.VerdictOutOfOrder, logstore.VerdictNoSuchOffset:
			b = append(b, `,"prev_offset":`...)
			b = strconv.AppendUint(b, e.Prev, 10)
		}
		if e.Reason != nil {
			b = append(b, `,"reason":`...)
			b = appendJSONValue(b, errorLine(e.Reason))
		}
	}
	_, err := w.out.Write(append(b, "}\n"...))
	return err
}
