package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/seglog/seglog/logstore"
)

// The summary copy-partition and import-partition print.

// copySummaryJSON is the --json summary of copy-partition and
// import-partition.
type copySummaryJSON struct {
	From           string  `json:"from"`
	To             string  `json:"to"`
	Dir            string  `json:"dir,omitempty"`
	Segments       int     `json:"segments"`
	Records        uint64  `json:"records"`
	Bytes          int64   `json:"bytes"`
	IndexBytes     int64   `json:"index_bytes"`
	IndexesRebuilt int     `json:"indexes_rebuilt"`
	StartOffset    uint64  `json:"start_offset"`
	NextOffset     uint64  `json:"next_offset"`
	Replaced       bool    `json:"replaced"`
	KeptSegments   int     `json:"kept_segments"`
	CopiedSegments int     `json:"copied_segments"`
	ReusedBytes    int64   `json:"reused_bytes"`
	CopiedBytes    int64   `json:"copied_bytes"`
	ReuseStopped   string  `json:"reuse_stopped,omitempty"`
	Seconds        float64 `json:"seconds"`
	BytesPerSecond int64   `json:"bytes_per_second"`
}

// writeCopySummary prints what a copy or import did: a table, or JSON.
// --quiet drops the table, and a summary on stderr (beside --to -);
// JSON asked for on stdout stays, for scripts.
func writeCopySummary(e *env, w io.Writer, rep logstore.CopyReport, asJSON bool) error {
	if rep.Rebuilt != "" {
		e.info("seglog: note: %s: reusing the earlier copy at %s stopped, %s: the rest was copied from the source", rep.From, rep.Dir, rep.Rebuilt)
	}
	if e.quiet && (!asJSON || w == e.stderr) {
		return nil
	}
	total := rep.Bytes + rep.IndexBytes
	rate := int64(0)
	if s := rep.Duration.Seconds(); s > 0 {
		rate = int64(float64(total) / s)
	}
	if asJSON {
		b, err := json.Marshal(copySummaryJSON{From: rep.From, To: rep.To, Dir: rep.Dir, Segments: rep.Segments,
			Records: rep.Records, Bytes: rep.Bytes, IndexBytes: rep.IndexBytes, IndexesRebuilt: rep.IndexesRebuilt,
			StartOffset: rep.Start, NextOffset: rep.Next, Replaced: rep.Replaced,
			KeptSegments: rep.Kept, CopiedSegments: rep.Segments - rep.Kept,
			ReusedBytes: rep.ReusedBytes, CopiedBytes: rep.Bytes - rep.ReusedBytes, ReuseStopped: rep.Rebuilt,
			Seconds: rep.Duration.Seconds(), BytesPerSecond: rate})
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	to := rep.To
	if rep.Dir != "" {
		to = rep.Dir
	}
	if rep.Replaced {
		to += " (replaced)"
	}
	offsets := "-"
	if rep.Next > rep.Start {
		offsets = fmt.Sprintf("%d..%d", rep.Start, rep.Next-1)
	}
	if err := copySummaryTable.render(w,
		[][]string{{rep.From, to, strconv.Itoa(rep.Segments), strconv.FormatUint(rep.Records, 10), offsets,
			humanSize(total), strconv.Itoa(rep.IndexesRebuilt), rep.Duration.Round(time.Millisecond).String(),
			humanSize(rate) + "/s"}}, e.wide); err != nil || !rep.Replaced {
		return err
	}
	_, err := fmt.Fprintln(w, keptCopied(rep))
	return err
}

// copySummaryTable is a copy's summary: in 80 columns, the count of
// indexes rebuilt, the time, the segments and the offsets go before the
// paths are cut in the middle.
var copySummaryTable = tableLayout{
	header:    []string{"FROM", "TO", "SEGMENTS", "RECORDS", "OFFSETS", "BYTES", "INDEXES REBUILT", "TIME", "THROUGHPUT"},
	numeric:   "SEGMENTS RECORDS BYTES INDEXES REBUILT TIME THROUGHPUT",
	drop:      []string{"INDEXES REBUILT", "TIME", "SEGMENTS", "OFFSETS"},
	dropFirst: true,
	shorten:   []string{"FROM", "TO"},
}

// keptCopied says what a forced copy kept of the partition it replaced
// and what it took from the source.
func keptCopied(rep logstore.CopyReport) string {
	copied := rep.Segments - rep.Kept
	return fmt.Sprintf("kept %d %s (%s), copied %d (%s)", rep.Kept, "segment"+plural(rep.Kept),
		humanSize(rep.ReusedBytes), copied, humanSize(rep.Bytes-rep.ReusedBytes))
}
