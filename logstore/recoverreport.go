package logstore

// IndexAction says what recover did, or would do, to an index file.
type IndexAction string

const (
	// IndexKept: the file already holds exactly what a writer would have
	// written for the records the segment keeps.
	IndexKept IndexAction = "kept"
	// IndexTrimmed: it held that and more (entries past the valid data,
	// a partial last entry); the rest was cut off its end.
	IndexTrimmed IndexAction = "trimmed"
	// IndexRebuilt: it was missing, short or wrong and was written anew
	// from the .log.
	IndexRebuilt IndexAction = "rebuilt"
	// IndexCreated: written for a segment salvage made.
	IndexCreated IndexAction = "created"
	// IndexLeft: not looked at, as the segment holds damage left in place.
	IndexLeft IndexAction = "left"
	// IndexRemoved: removed with its segment.
	IndexRemoved IndexAction = "removed"
)

// RecoverReport is what recover did (or, in a dry run, would do) to one
// partition.
type RecoverReport struct {
	Topic     string
	Partition int
	Dir       string
	DryRun    bool
	// Next is the partition's next offset, the same before and after:
	// recover never lowers it.
	Next      uint64
	Segments  []SegmentRecovery
	Leftovers []RecoverLeftover
	// Gaps are the offset ranges this run recorded (or would record) in
	// the partition's .gaps.json.
	Gaps []Gap
	// Problems are damage left in place: a *CorruptionError for a corrupt
	// record that only Salvage may cut, or an overlap recover cannot undo.
	Problems []error
}

// Changed reports whether the run changed anything (in a dry run: would).
func (r *RecoverReport) Changed() bool {
	for _, l := range r.Leftovers {
		if !l.Kept {
			return true
		}
	}
	for _, sr := range r.Segments {
		if sr.Changed() {
			return true
		}
	}
	return len(r.Gaps) > 0
}

// SegmentRecovery is one segment's part of a RecoverReport.
type SegmentRecovery struct {
	Name       string // the .log file's name
	Base       uint64
	Size       int64       // the .log's size before recovery; 0 for a segment salvage made
	Records    uint64      // valid records it holds after recovery
	ValidBytes int64       // their bytes: the .log's size after recovery
	Cut        *RecoverCut // bytes cut from the .log, nil when none
	Index      IndexAction
	TimeIndex  IndexAction
	Interval   int // index interval of the indexes it keeps or gets
	// SplitFrom names, for a segment made by salvage, the segment its
	// records were rescued from.
	SplitFrom string
	// SplitInto names, for a segment salvage split, the segments made of
	// its rescued records.
	SplitInto []string
	// Finished: the split was begun by an interrupted recover and is
	// finished by this one.
	Finished bool
	// RenamedTo names the .log a misnamed segment was renamed to: its
	// records are all valid and lose no offset under their own name.
	RenamedTo string
	// Removed: nothing valid stays at the segment's name (its records
	// were rescued into segments of their own, or are another segment's),
	// so salvage removes its files rather than leave an empty segment.
	Removed bool
	// Problem is damage left in place in this segment, if any.
	Problem error
}

// Changed reports whether anything is (or would be) done to the segment.
func (sr *SegmentRecovery) Changed() bool {
	return sr.Cut != nil || sr.SplitFrom != "" || sr.Removed || sr.RenamedTo != "" ||
		(sr.Index != IndexKept && sr.Index != IndexLeft) || (sr.TimeIndex != IndexKept && sr.TimeIndex != IndexLeft)
}

// RecoverCut is a byte range recover cut from a .log, and where it saved it.
type RecoverCut struct {
	From, To int64  // the bytes cut
	Offset   uint64 // the offset a record at From would have had
	Reason   string
	// Saved is the quarantine copy ("" in a dry run). For a salvage split
	// it holds the whole segment as it was, not only the cut bytes.
	Saved string
	Whole bool // Saved holds the whole original segment
	// Linked: the disk was too full to copy, so the original file was
	// hard-linked into quarantine and the segment replaced by a copy of
	// the bytes it keeps.
	Linked bool
}

// RecoverLeftover is a file or directory left by an interrupted operation.
type RecoverLeftover struct {
	Path string
	What string // what it is left over from
	// Kept: left in place, as it may belong to an operation still running.
	Kept bool
}

// RecoverFailure is a partition RecoverTopic could not recover.
type RecoverFailure struct {
	Partition int   // the first of a run of missing partitions (Err names them all)
	Err       error // a *LockedError when another process holds it
	// Report is what was planned and done before the error, when the
	// partition was locked and scanned.
	Report *RecoverReport
}

// TopicRecovery is what RecoverTopic did.
type TopicRecovery struct {
	Topic      string
	Dir        string
	Leftovers  []RecoverLeftover // of the topic directory, and the topic's in the data directory
	Partitions []RecoverReport
	Failed     []RecoverFailure
	Foreign    []string // directories numbered beyond MaxPartitions, left alone (see TopicPartitions)
}
