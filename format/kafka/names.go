package kafka

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The names in a Kafka log directory (one of a broker's log.dirs):
//
//	meta.properties                      the broker and cluster it belongs to
//	recovery-point-offset-checkpoint     per partition: flushed up to here
//	replication-offset-checkpoint        per partition: the high watermark
//	log-start-offset-checkpoint          per partition: the first offset kept
//	cleaner-offset-checkpoint            per partition: compacted up to here
//	orders-0/                            partition 0 of topic orders
//	  00000000000000000000.log             a segment's batches, and its
//	  00000000000000000000.index           offset index,
//	  00000000000000000000.timeindex       time index,
//	  00000000000000000000.txnindex        aborted transactions (if any)
//	  00000000000000004711.snapshot        producer state at offset 4711
//	  leader-epoch-checkpoint
//	  partition.metadata
//	orders-1.6c1bb7a2d5f84d5b9a3c0e1f2a3b4c5d-delete/   being deleted
//
// A partition directory is named TOPIC-PARTITION, split at the last '-'
// (topics may hold dashes, partitions cannot). Kafka moves a directory
// aside as TOPIC-PARTITION.ID-delete (deleted, removed later),
// TOPIC-PARTITION.ID-future (a replica being moved here from another log
// directory) or TOPIC-PARTITION.ID-stray (a partition the broker found it
// does not host), ID being 32 hex digits; those are no partitions.

// The files of a log directory and of a partition directory.
const (
	MetaPropertiesFile       = "meta.properties"
	RecoveryPointCheckpoint  = "recovery-point-offset-checkpoint"
	ReplicationCheckpoint    = "replication-offset-checkpoint"
	LogStartOffsetCheckpoint = "log-start-offset-checkpoint"
	CleanerOffsetCheckpoint  = "cleaner-offset-checkpoint"
	LeaderEpochCheckpoint    = "leader-epoch-checkpoint"
	PartitionMetadataFile    = "partition.metadata"
)

// The extensions of a segment's files, and of a producer snapshot.
const (
	LogExt       = ".log"
	IndexExt     = ".index"
	TimeIndexExt = ".timeindex"
	TxnIndexExt  = ".txnindex"
	SnapshotExt  = ".snapshot"
)

// The suffixes Kafka adds to a segment file's name while it replaces or
// deletes it: .deleted (deleted, removed later), .cleaned (being written
// by the log cleaner) and .swap (about to replace the segment).
const (
	DeletedSuffix = ".deleted"
	CleanedSuffix = ".cleaned"
	SwapSuffix    = ".swap"
)

// MaxTopicLen is the longest topic name Kafka allows.
const MaxTopicLen = 249

var (
	// ErrTopicName means a name is no topic name Kafka allows.
	ErrTopicName = errors.New("not a Kafka topic name")
	// ErrDirName means a directory name is no Kafka partition directory's
	// (or no leftover's).
	ErrDirName = errors.New("not a Kafka partition directory name")
	// ErrFileName means a file name is no Kafka segment file's.
	ErrFileName = errors.New("not a Kafka segment file name")
)

// ValidateTopic checks a topic name as Kafka does: 1 to 249 characters
// from [a-zA-Z0-9._-], neither "." nor "..".
func ValidateTopic(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrTopicName)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %q", ErrTopicName, name)
	case len(name) > MaxTopicLen:
		return fmt.Errorf("%w: %d characters long, at most %d allowed", ErrTopicName, len(name), MaxTopicLen)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			r, _ := utf8.DecodeRuneInString(name[i:])
			return fmt.Errorf("%w: %q holds %q (allowed: a-z A-Z 0-9 . _ -)", ErrTopicName, name, r)
		}
	}
	return nil
}

// PartitionDir is a topic partition, as its directory is named.
type PartitionDir struct {
	Topic     string
	Partition int32
}

// String is the directory's name: TOPIC-PARTITION.
func (p PartitionDir) String() string { return p.Topic + "-" + strconv.Itoa(int(p.Partition)) }

// ParsePartitionDir splits a partition directory's name at its last '-'
// into a topic Kafka allows and a partition in decimal, as Kafka writes
// it (no sign, no leading zeros). The leftovers' names are none.
func ParsePartitionDir(name string) (PartitionDir, error) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return PartitionDir{}, fmt.Errorf("%w: %q has no '-' before a partition number", ErrDirName, name)
	}
	topic, num := name[:i], name[i+1:]
	if err := ValidateTopic(topic); err != nil {
		return PartitionDir{}, fmt.Errorf("%w: %q: %w", ErrDirName, name, err)
	}
	p, ok := parsePartition(num)
	if !ok {
		return PartitionDir{}, fmt.Errorf("%w: %q: partition %q is not a decimal number", ErrDirName, name, num)
	}
	return PartitionDir{Topic: topic, Partition: p}, nil
}

// parsePartition parses a partition number as Kafka writes one.
func parsePartition(s string) (int32, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	p, err := strconv.ParseInt(s, 10, 32)
	return int32(p), err == nil
}

// LeftoverKind is why Kafka moved a partition directory aside.
type LeftoverKind string

// The leftovers' kinds, as their names end.
const (
	LeftoverDelete LeftoverKind = "delete"
	LeftoverFuture LeftoverKind = "future"
	LeftoverStray  LeftoverKind = "stray"
)

// LeftoverDir is a partition directory Kafka moved aside:
// TOPIC-PARTITION.ID-KIND.
type LeftoverDir struct {
	PartitionDir // its topic, cut short when the whole name would pass 255 characters
	ID           string
	Kind         LeftoverKind
}

// ParseLeftoverDir parses a name Kafka gives a partition directory it
// moves aside, with the rule Kafka reads them by (an ID of anything but
// whitespace and '.').
func ParseLeftoverDir(name string) (LeftoverDir, error) {
	for _, kind := range []LeftoverKind{LeftoverDelete, LeftoverFuture, LeftoverStray} {
		rest, ok := strings.CutSuffix(name, "-"+string(kind))
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '.')
		if i < 0 || i == len(rest)-1 || strings.ContainsFunc(rest[i+1:], func(r rune) bool { return r < 0x80 && isJavaSpace(byte(r)) }) {
			return LeftoverDir{}, fmt.Errorf("%w: %q has no .ID before -%s", ErrDirName, name, kind)
		}
		p, err := ParsePartitionDir(rest[:i])
		if err != nil {
			return LeftoverDir{}, fmt.Errorf("%w: %q: %q is no TOPIC-PARTITION", ErrDirName, name, rest[:i])
		}
		return LeftoverDir{PartitionDir: p, ID: rest[i+1:], Kind: kind}, nil
	}
	return LeftoverDir{}, fmt.Errorf("%w: %q ends in none of -delete, -future, -stray", ErrDirName, name)
}

// FileName is a segment file's (or producer snapshot's) name split:
// BASE EXT SUFFIX, BASE the segment's base offset in 20 digits.
type FileName struct {
	Base   int64
	Ext    string // LogExt, IndexExt, TimeIndexExt, TxnIndexExt or SnapshotExt
	Suffix string // "", DeletedSuffix, CleanedSuffix or SwapSuffix
}

// ParseFileName splits the name of a segment file or producer snapshot.
func ParseFileName(name string) (FileName, error) {
	const digits = 20
	if len(name) <= digits || strings.TrimLeft(name[:digits], "0123456789") != "" {
		return FileName{}, fmt.Errorf("%w: %q does not start with 20 digits", ErrFileName, name)
	}
	base, err := strconv.ParseInt(name[:digits], 10, 64)
	if err != nil {
		return FileName{}, fmt.Errorf("%w: %q: base offset past 2^63-1", ErrFileName, name)
	}
	if name[digits] != '.' {
		return FileName{}, fmt.Errorf("%w: %q: no '.' after the base offset", ErrFileName, name)
	}
	e, s, dotted := strings.Cut(name[digits+1:], ".")
	ext, suffix := "."+e, ""
	if dotted {
		suffix = "." + s
	}
	switch {
	case ext != LogExt && ext != IndexExt && ext != TimeIndexExt && ext != TxnIndexExt && ext != SnapshotExt:
		return FileName{}, fmt.Errorf("%w: %q: extension %q", ErrFileName, name, ext)
	case suffix != "" && suffix != DeletedSuffix && suffix != CleanedSuffix && suffix != SwapSuffix:
		return FileName{}, fmt.Errorf("%w: %q: suffix %q", ErrFileName, name, suffix)
	}
	return FileName{Base: base, Ext: ext, Suffix: suffix}, nil
}
