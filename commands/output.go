package commands

import (
	"bytes"
	"encoding/json"
	"io"
)

// Output pieces several commands share: JSON documents and times, blocks
// of tables, and the targets a run skipped.

// timesJSON is a time range as the JSON outputs give it: RFC 3339 with
// nanoseconds, and the Unix nanoseconds, each null with no records.
type timesJSON struct {
	Oldest   *string `json:"oldest_timestamp"`
	OldestNS *int64  `json:"oldest_timestamp_ns"`
	Newest   *string `json:"newest_timestamp"`
	NewestNS *int64  `json:"newest_timestamp_ns"`
}

func newTimesJSON(f *timeFormatter, records uint64, oldest, newest int64) timesJSON {
	if records == 0 {
		return timesJSON{}
	}
	o, n := string(f.append(nil, oldest)), string(f.append(nil, newest))
	return timesJSON{Oldest: &o, OldestNS: &oldest, Newest: &n, NewestNS: &newest}
}

// writeJSONDocument prints v as indented JSON and a newline.
func writeJSONDocument(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// blockWriter writes blocks of output (a topic's tables) as they are
// done, separated by blank lines; nothing when the output is one JSON
// document at the end.
type blockWriter struct {
	w      io.Writer
	json   bool
	blocks int // written so far
}

func (bw *blockWriter) emit(b *bytes.Buffer) error {
	if bw.json || b.Len() == 0 {
		return nil
	}
	if bw.blocks > 0 {
		if _, err := io.WriteString(bw.w, "\n"); err != nil {
			return err
		}
	}
	bw.blocks++
	_, err := bw.w.Write(b.Bytes())
	return err
}

type skippedTarget struct {
	topic     string
	partition int // -1: the whole topic
	err       error
}

type skippedTargetJSON struct {
	Topic     string `json:"topic"`
	Partition *int   `json:"partition"` // null: the whole topic
	Reason    string `json:"reason"`
}
