package logstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// GapsFile is the partition's record of offsets known to be missing.
const GapsFile = ".gaps.json"

// Gap is a range of offsets known to be missing from a partition: left by
// recover --salvage, which cut damaged records out. verify-crc lists such a
// gap as known, not as lost data, also after the quarantine is purged.
type Gap struct {
	From   uint64 `json:"from"`   // first missing offset
	To     uint64 `json:"to"`     // first offset after the gap
	Time   string `json:"time"`   // when it was recorded, RFC 3339 UTC
	Reason string `json:"reason"` // why, and where the bytes went
}

type gapsJSON struct {
	Gaps []Gap `json:"gaps"`
}

// ReadGaps returns the gaps recorded for the partition directory dir; none
// when it has no gaps file.
func ReadGaps(dir string) ([]Gap, error) {
	b, err := os.ReadFile(filepath.Join(dir, GapsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var g gapsJSON
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, GapsFile), err)
	}
	return g.Gaps, nil
}

// recordGap adds g to the partition directory's gaps file, replacing the
// file atomically.
func (s *Store) recordGap(dir string, g Gap) error {
	gaps, err := ReadGaps(dir)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(gapsJSON{Gaps: append(gaps, g)}, "", "  ")
	if err != nil {
		return err
	}
	return s.writeFileAtomic(filepath.Join(dir, GapsFile), append(b, '\n'))
}
