package logstore

import (
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// logstore's names for the file-system seam of package fsx: every change
// to disk goes through a fileSystem, which tests replace.
type (
	fileSystem = fsx.FS
	file       = fsx.File
	osFS       = fsx.OS
	osFile     = fsx.OSFile
)

// readFile is a file open only to be read: a segment's, or an index's.
type readFile interface {
	segfile.File
	Close() error
}

// NotRegularError is a segment file (a .log, .index or .timeindex where a
// segment's belong) that is not a regular file: readers refuse such a .log
// and go on without such an index; commands that change files refuse both.
type NotRegularError = fsx.NotRegularError
