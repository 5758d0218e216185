package logstore

import (
	"cmp"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seglog/seglog/format"
)

// QuarantineEntry is a piece of saved data in the quarantine: the bytes
// and the note saying where they came from.
type QuarantineEntry struct {
	Topic          string
	Partition      int
	Note           string // path of the JSON note
	Data           string // path of the saved bytes
	DataBytes      int64  // their size on disk, -1 when the file is missing
	Source         string // file they were cut from
	Pos, Length    int64  // where in it, and how many
	ExpectedOffset uint64
	Reason         string
	Time           time.Time // when they were saved
}

// QuarantineEntries lists the quarantine of a topic's partitions (topic
// "": every topic; partition < 0: every partition), oldest first.
// Unreadable notes are skipped.
func (s *Store) QuarantineEntries(topic string, partition int) ([]QuarantineEntry, error) {
	root := filepath.Join(s.dir, QuarantineDir)
	var topics []string
	if topic != "" {
		if err := format.ValidateTopic(topic); err != nil {
			return nil, err
		}
		topics = []string{topic}
	} else {
		entries, err := os.ReadDir(root)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() && format.ValidateTopic(e.Name()) == nil {
				topics = append(topics, e.Name())
			}
		}
	}
	var out []QuarantineEntry
	for _, t := range topics {
		pentries, err := os.ReadDir(filepath.Join(root, t))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, pe := range pentries {
			p, err := format.ParsePartition(pe.Name())
			if err != nil || !pe.IsDir() || (partition >= 0 && p != partition) {
				continue
			}
			dir := filepath.Join(root, t, pe.Name())
			files, err := os.ReadDir(dir)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				if !strings.HasSuffix(f.Name(), ".json") || !f.Type().IsRegular() {
					continue
				}
				e, ok := readQuarantineNote(filepath.Join(dir, f.Name()))
				if !ok {
					continue
				}
				e.Topic, e.Partition = t, p
				out = append(out, e)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b QuarantineEntry) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Note, b.Note))
	})
	return out, nil
}

func readQuarantineNote(path string) (QuarantineEntry, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return QuarantineEntry{}, false
	}
	var n quarantineNote
	// The data file lies beside the note: "." or ".." would make purge
	// remove a directory of the quarantine instead.
	if err := json.Unmarshal(b, &n); err != nil || n.Data == "" || n.Data == "." || n.Data == ".." || strings.ContainsRune(n.Data, filepath.Separator) {
		return QuarantineEntry{}, false
	}
	e := QuarantineEntry{Note: path, Data: filepath.Join(filepath.Dir(path), n.Data), DataBytes: -1,
		Source: n.Source, Pos: n.Pos, Length: n.Length, ExpectedOffset: n.ExpectedOffset, Reason: n.Reason}
	e.Time, _ = time.Parse(time.RFC3339Nano, n.Time)
	if fi, err := os.Stat(e.Data); err == nil {
		e.DataBytes = fi.Size()
	}
	return e, true
}

// PurgeQuarantine deletes a quarantine entry for good: its note first,
// so that an interruption leaves saved bytes without a note (which
// recover removes) rather than a note without its bytes.
func (s *Store) PurgeQuarantine(e QuarantineEntry) error {
	if err := s.fs.Remove(e.Note); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := s.fs.Remove(e.Data); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return s.fs.SyncDir(filepath.Dir(e.Note))
}
