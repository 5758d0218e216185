package logstore

import (
	"strconv"
	"time"
)

// The one vocabulary of what the checks find: verify-crc's findings,
// dump-index's verdict on each index entry and the simple layout's class
// of each index entry name the same fact the same way. docs/cli.md's
// table of finding kinds lists every value, and a test holds it to the
// constants here.

// Severity says how much a finding matters (docs/cli.md's exit-code
// table decides which findings are problems).
type Severity int

const (
	// SeverityProblem is data that is wrong: verify-crc exits 3.
	SeverityProblem Severity = iota
	// SeverityNote is worth knowing and not wrong: an index recover would
	// rebuild, a record a live writer is still writing, timestamps going
	// backwards.
	SeverityNote
	// SeverityKnown is an offset gap recorded in the partition's .gaps.json.
	SeverityKnown
)

func (s Severity) String() string {
	switch s {
	case SeverityProblem:
		return "problem"
	case SeverityNote:
		return "note"
	case SeverityKnown:
		return "known"
	}
	return "severity(" + strconv.Itoa(int(s)) + ")"
}

// FindingKind names what a finding, or an index entry's verdict, is
// about. The names are part of the command-line contract: verify-crc
// --json prints them as "kind", dump-index --json as "verdict" and, in
// the simple layout, as "class".
type FindingKind string

// Kinds of findings, and their severity.
const (
	// FindingOK: an index entry that checks out (dump-index).
	FindingOK FindingKind = "ok"
	// FindingUnverified: an index entry not checked, without --verify
	// (dump-index).
	FindingUnverified FindingKind = "unverified"
	// FindingCorruptRecord: a record that does not check out where a valid
	// one must be (docs/format.md §3), or an index entry naming it. Problem.
	FindingCorruptRecord FindingKind = "corrupt-record"
	// FindingIncompleteTail: the active segment ends in a record that is
	// incomplete (or zero bytes). A note while a writer holds the
	// partition, else a problem.
	FindingIncompleteTail FindingKind = "incomplete-tail"
	// FindingOverlap: records of a segment whose offsets are below the
	// end of the one before. Problem.
	FindingOverlap FindingKind = "overlap"
	// FindingMisnamed: a segment whose records are valid but whose first
	// offset is not the one its name gives. Problem ('recover --salvage'
	// renames it).
	FindingMisnamed FindingKind = "misnamed-segment"
	// FindingEmptyBelowFloor: a segment holding no record whose name is
	// below where the segments before end: appends to it would take their
	// offsets. Problem (recover removes it).
	FindingEmptyBelowFloor FindingKind = "empty-segment-below-floor"
	// FindingGap: offsets missing between two segments. Known when
	// .gaps.json records them, else a problem.
	FindingGap FindingKind = "gap"
	// FindingIndexMismatch: an index entry that lies: the record at its
	// position has another offset, or (time index) another timestamp, or
	// no record of the segment has its offset; in the simple layout, an
	// entry pointing elsewhere or holding another offset than its number.
	// Problem.
	FindingIndexMismatch FindingKind = "index-mismatch"
	// FindingIndexNoRecord: an index entry pointing inside the log where
	// no record starts. Problem.
	FindingIndexNoRecord FindingKind = "index-no-record"
	// FindingIndexOrder: index entries out of order. Problem.
	FindingIndexOrder FindingKind = "index-order"
	// FindingIndexStale: an entry past the end of the log or its valid
	// records (left by a power loss), or past a simple store's end. Note.
	FindingIndexStale FindingKind = "index-stale"
	// FindingUnchecked: an index entry pointing into damaged bytes, which
	// could not be confirmed (dump-index; verify-crc reports the damage).
	// Problem.
	FindingUnchecked FindingKind = "unchecked"
	// FindingIndexMissing: no index file. Note.
	FindingIndexMissing FindingKind = "index-missing"
	// FindingIndexShort: an index with fewer entries than the records
	// need. Note.
	FindingIndexShort FindingKind = "index-short"
	// FindingIndexPartial: an index whose length is not a multiple of its
	// entry size; the partial last entry is ignored. Note.
	FindingIndexPartial FindingKind = "index-partial-entry"
	// FindingIndexPadding: a simple .index ending in zero entries, or a
	// closed Kafka segment's index ending in the zeros Kafka preallocates:
	// its writer did not close it cleanly. Note.
	FindingIndexPadding FindingKind = "index-padding"
	// FindingLegacyFormat: a Kafka segment holding legacy messages
	// (magic 0 or 1, Kafka's format before 0.11). Note.
	FindingLegacyFormat FindingKind = "legacy-format"
	// FindingTimeBackwards: a record older than the one before it, or a
	// time index entry for one (foreign writers stamp the wall clock).
	// Note.
	FindingTimeBackwards FindingKind = "timestamp-backwards"
	// FindingKeyRouting: keyed records in a partition other than the one
	// FNV-1a routing gives them: a hint at a flipped keylen, or data
	// written with a fixed partition. Note.
	FindingKeyRouting FindingKind = "key-routing"
	// FindingNotRegular: an index file that is a symbolic link, a
	// directory or another file that is not a regular one. Problem.
	FindingNotRegular FindingKind = "not-regular-file"
	// FindingOrphanIndex: a simple .index without its .store. Problem.
	FindingOrphanIndex FindingKind = "orphan-index"
	// FindingSegmentGone: a segment deleted while it was being checked (a
	// retention sweep), or after, with offsets missing after it that are
	// then not a gap. Note.
	FindingSegmentGone FindingKind = "segment-gone"
	// FindingNoSegments: a partition directory holding no segment. Note.
	FindingNoSegments FindingKind = "no-segments"
	// FindingMissingPartition: a partition directory missing below the
	// topic's highest. Problem. (Found by whoever lists the topic.)
	FindingMissingPartition FindingKind = "missing-partition"
	// FindingGapsFile: the partition's .gaps.json cannot be parsed.
	// Problem.
	FindingGapsFile FindingKind = "gaps-file"
)

// VerdictKind is the finding kind naming verdict v: what dump-index
// --json prints, and what verify-crc calls the same entry. The verdicts
// tell apart what an entry was checked against (a position, a timestamp,
// the segment's base); the kind says only what is wrong with it.
func VerdictKind(v IndexVerdict) FindingKind {
	switch v {
	case VerdictUnverified:
		return FindingUnverified
	case VerdictOK:
		return FindingOK
	case VerdictBackwards:
		return FindingTimeBackwards
	case VerdictPastEnd:
		return FindingIndexStale
	case VerdictWrongPosition, VerdictWrongTimestamp, VerdictNoSuchOffset:
		return FindingIndexMismatch
	case VerdictOutOfOrder:
		return FindingIndexOrder
	case VerdictNoRecord:
		return FindingIndexNoRecord
	case VerdictCorruptRecord:
		return FindingCorruptRecord
	case VerdictUnchecked:
		return FindingUnchecked
	}
	return FindingKind(v.String())
}

// reasonTime is a timestamp as a finding's reason gives it: RFC 3339 in
// UTC with nanoseconds, as every command prints a time.
func reasonTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
}

// reasonRawTime is a stored timestamp that may be wrong, with its raw
// value in Unix nanoseconds: garbage bits make no sense as a date.
func reasonRawTime(ns int64) string {
	return reasonTime(ns) + " (" + strconv.FormatInt(ns, 10) + ")"
}
