package logstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/seglog/seglog/format"
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
// when it has no gaps file. A file that does not parse strictly (see
// parseGaps) is an error naming it.
func ReadGaps(dir string) ([]Gap, error) {
	path := filepath.Join(dir, GapsFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	gaps, err := parseGaps(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return gaps, nil
}

// parseGaps parses a gaps file strictly: an object holding only the list
// of gaps, each a range of at least one offset with the time it was
// recorded, as recover --salvage writes them.
func parseGaps(b []byte) ([]Gap, error) {
	var g gapsJSON
	if err := decodeStrict(b, &g); err != nil {
		return nil, err
	}
	for i, gap := range g.Gaps {
		if gap.From >= gap.To {
			return nil, fmt.Errorf("gap %d (from %d to %d) holds no offset: from must be below to", i+1, gap.From, gap.To)
		}
		if _, err := time.Parse(time.RFC3339Nano, gap.Time); err != nil {
			return nil, fmt.Errorf("gap %d..%d: time %q is not an RFC 3339 time", gap.From, gap.To-1, gap.Time)
		}
	}
	return g.Gaps, nil
}

// The offsets a recorded gap may cover. recover --salvage records a gap
// only for offsets it cut out between two segments: from the end of the
// records one keeps to the base of the next (planSplit), never after the
// partition's last record. Retention may later delete the segments around
// it, so a gap may also lie below the partition's first segment. A gap
// that covers offsets a segment holds, or reaches past the partition's
// next offset, is no gap at all, and taking it for one would hide real
// data loss: verify-crc reports such an entry, and copies and imports
// refuse it.

// gapCheck holds a partition's recorded gaps up against its segments,
// shown to it in order, without keeping them: memory stays that of the
// gaps file whatever the number of segments.
type gapCheck struct {
	path    string // the gaps file, for messages
	gaps    []Gap
	wrong   []bool
	reasons []string // why each wrong gap is, in the order found
}

func newGapCheck(path string, gaps []Gap) *gapCheck {
	return &gapCheck{path: path, gaps: gaps, wrong: make([]bool, len(gaps))}
}

// segment checks the gaps against a segment's offsets [base, next).
func (c *gapCheck) segment(seg segment, next uint64) {
	for i, g := range c.gaps {
		if !c.wrong[i] && g.From < next && g.To > seg.base {
			c.fail(i, fmt.Sprintf("gap %d..%d in %s covers offsets %d..%d, which %s holds", g.From, g.To-1, c.path,
				max(g.From, seg.base), min(g.To, next)-1, format.SegmentName(seg.base, format.LogExt)))
		}
	}
}

// end checks the gaps against the partition's next offset.
func (c *gapCheck) end(next uint64) {
	for i, g := range c.gaps {
		if !c.wrong[i] && g.To > next {
			c.fail(i, fmt.Sprintf("gap %d..%d in %s reaches past the partition's next offset %d", g.From, g.To-1, c.path, next))
		}
	}
}

func (c *gapCheck) fail(i int, why string) {
	c.wrong[i] = true
	c.reasons = append(c.reasons, why)
}

// err is the first wrong gap found, if any, and advice.
func (c *gapCheck) err(advice string) error {
	if len(c.reasons) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: no gap recover --salvage could have recorded; %s", ErrInvalidGaps, c.reasons[0], advice)
}

// ErrInvalidGaps means a gaps file does not parse, or records a gap that
// cannot be one.
var ErrInvalidGaps = errors.New("invalid gaps file")

// recordGap adds g to the partition directory's gaps file, replacing the
// file atomically.
func (s *Store) recordGap(dir string, g Gap) error {
	gaps, err := ReadGaps(dir)
	if err != nil {
		return err
	}
	b, err := encodeGaps(append(gaps, g))
	if err != nil {
		return err
	}
	return s.writeFileAtomic(filepath.Join(dir, GapsFile), b)
}

// encodeGaps is the gaps file recording gaps, which parseGaps reads back.
func encodeGaps(gaps []Gap) ([]byte, error) {
	b, err := json.MarshalIndent(gapsJSON{Gaps: gaps}, "", "  ")
	return append(b, '\n'), err
}
