package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"os"

	"github.com/seglog/seglog/format"
)

// Which layout a directory holds, told by its file names.

// Layout is the kind of files a directory holds.
type Layout int

const (
	// LayoutNone: neither kind of segment file.
	LayoutNone Layout = iota
	// LayoutSeglog: seglog segments (<20 digits>.log, .index, .timeindex).
	LayoutSeglog
	// LayoutSimple: <digits>.store and .index pairs.
	LayoutSimple
	// LayoutKafka: Apache Kafka's own segments (<20 digits>.log of record
	// batches, .index, .timeindex, .txnindex), read-only.
	LayoutKafka
)

// String names the layout in messages.
func (l Layout) String() string {
	switch l {
	case LayoutSeglog:
		return "seglog layout"
	case LayoutSimple:
		return "simple store/index layout"
	case LayoutKafka:
		return "Apache Kafka layout"
	}
	return "no layout"
}

// ValuesOnly reports whether the layout's records carry a value and
// nothing else: no key, timestamp or checksum, so nothing to look up by
// time or to check a payload with.
func (l Layout) ValuesOnly() bool { return l == LayoutSimple }

// CheckLimits says what a check of the layout cannot cover, for a line
// before its findings; "" when it covers everything.
func (l Layout) CheckLimits() string {
	if l == LayoutSimple {
		return "no checksums, payload integrity cannot be checked; framing and index checked"
	}
	return ""
}

// ErrMixedLayout means a directory holds both seglog segments and simple
// store files, so it is not safe to guess which to read.
var ErrMixedLayout = errors.New("directory holds both seglog segments and simple store/index files")

// MixedLayoutError is ErrMixedLayout with one file of each kind.
type MixedLayoutError struct {
	Dir        string
	SeglogFile string
	SimpleFile string
}

func (e *MixedLayoutError) Error() string {
	return fmt.Sprintf("%s holds both seglog segment files (%s) and simple store/index files (%s): seglog reads only one layout per directory; move one kind elsewhere",
		e.Dir, e.SeglogFile, e.SimpleFile)
}

func (e *MixedLayoutError) Unwrap() error { return ErrMixedLayout }

// DetectLayout tells by file names which layout dir holds (a .index file
// alone says nothing: every layout uses that extension), and where Apache
// Kafka's and seglog's names agree, by what else Kafka writes or by the
// first batch (IsKafkaSegment).
func DetectLayout(dir string) (Layout, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return LayoutNone, err
	}
	var seglogFile, simpleFile string
	for _, e := range entries {
		name := e.Name()
		if _, ext, err := format.ParseSegmentName(name); err == nil && ext != format.IndexExt {
			seglogFile = cmp.Or(seglogFile, name)
		} else if _, ext, err := format.ParseSimpleName(name); err == nil && ext == format.SimpleStoreExt {
			simpleFile = cmp.Or(simpleFile, name)
		}
	}
	switch {
	case seglogFile != "" && simpleFile != "":
		return LayoutNone, &MixedLayoutError{Dir: dir, SeglogFile: seglogFile, SimpleFile: simpleFile}
	case simpleFile != "":
		return LayoutSimple, nil
	case seglogFile != "":
		// Apache Kafka names its segments as seglog does: what only Kafka
		// writes beside them, or the first batch, tells them apart.
		kafka, err := isKafkaPartitionDir(dir)
		switch {
		case err != nil:
			return LayoutNone, err
		case kafka:
			return LayoutKafka, nil
		}
		return LayoutSeglog, nil
	}
	return LayoutNone, nil
}
