package logstore

import (
	"strings"

	"github.com/seglog/seglog/format"
)

// IndexKind tells the two index files apart.
type IndexKind int

const (
	OffsetIndex IndexKind = iota // .index: offset -> byte position in the .log
	TimeIndex                    // .timeindex: offset -> that record's timestamp
)

// Ext is the file extension of the kind, ".index" or ".timeindex".
func (k IndexKind) Ext() string {
	if k == TimeIndex {
		return format.TimeIndexExt
	}
	return format.IndexExt
}

func (k IndexKind) String() string { return strings.TrimPrefix(k.Ext(), ".") }

// IndexKindOf tells the kind of an index file from its name.
func IndexKindOf(path string) (IndexKind, bool) {
	switch {
	case strings.HasSuffix(path, format.TimeIndexExt):
		return TimeIndex, true
	case strings.HasSuffix(path, format.IndexExt):
		return OffsetIndex, true
	}
	return 0, false
}
