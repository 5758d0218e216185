package logstore

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"
)

// QuarantineDir is the data directory's folder for bytes seglog cut.
const QuarantineDir = ".quarantine"

// quarantineNote is the JSON saved beside quarantined bytes: where they
// came from, so they can be inspected or put back by hand.
type quarantineNote struct {
	Source         string `json:"source"`          // file the bytes were cut from
	Pos            int64  `json:"pos"`             // their position in it
	Length         int64  `json:"length"`          // how many
	ExpectedOffset uint64 `json:"expected_offset"` // offset a record at Pos would have had
	Reason         string `json:"reason"`          // why they were cut
	Time           string `json:"time"`            // when, RFC 3339 UTC
	Data           string `json:"data"`            // file holding the bytes, beside the note
}

// quarantine durably copies bytes [from, to) of src to
// <data-dir>/.quarantine/<topic>/<partition>/ with a JSON note, before the
// caller cuts them, and returns the copy's path. If the copy cannot be made
// (a full disk), the caller must not cut.
func (s *Store) quarantine(topic string, partition int, src file, from, to int64, expected uint64, reason string) (string, error) {
	dir := filepath.Join(s.dir, QuarantineDir, topic, strconv.Itoa(partition))
	if err := s.mkdirAll(dir); err != nil {
		return "", fmt.Errorf("quarantine: %w", err)
	}
	now := time.Now().UTC()
	base := fmt.Sprintf("%s.%d-%d.%d", filepath.Base(src.Name()), from, to, now.UnixNano())
	data := filepath.Join(dir, base+".bin")
	if err := s.copyOut(data, io.NewSectionReader(src, from, to-from)); err != nil {
		return "", fmt.Errorf("quarantine %d bytes of %s: %w", to-from, src.Name(), err)
	}
	note, err := json.MarshalIndent(quarantineNote{
		Source: src.Name(), Pos: from, Length: to - from, ExpectedOffset: expected,
		Reason: reason, Time: now.Format(time.RFC3339Nano), Data: base + ".bin",
	}, "", "  ")
	if err == nil {
		err = s.writeFileAtomic(filepath.Join(dir, base+".json"), append(note, '\n'))
	}
	if err != nil {
		return "", fmt.Errorf("quarantine note: %w", err)
	}
	return data, nil
}

// copyOut writes r to a new file at path durably (see writeFileDurably).
func (s *Store) copyOut(path string, r io.Reader) error {
	_, err := s.writeFileDurably(path, true, func(f file) error {
		_, err := io.Copy(f, r)
		return err
	})
	return err
}
