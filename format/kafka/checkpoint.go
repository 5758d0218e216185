package kafka

import (
	"encoding/base64"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
)

// Kafka's checkpoint files are text that its CheckpointFile writes whole
// (to a temporary file, then renamed over the old one):
//
//	0                  the version
//	2                  how many entries follow
//	orders 0 4711      one entry a line, fields separated by a space
//	orders 1 42
//
// The offset checkpoints of a log directory (recovery-point-offset-,
// replication-offset-, log-start-offset- and cleaner-offset-checkpoint)
// hold "topic partition offset" entries; a partition directory's
// leader-epoch-checkpoint holds "epoch startOffset" ones. Kafka creates a
// checkpoint file empty before it first writes it, so an empty file is
// one without entries. Its partition.metadata is two lines of its own:
//
//	version: 0
//	topic_id: <the topic's UUID in URL-safe base64, unpadded>
//
// The parsers accept what Kafka's readers accept (lines ended by "\n",
// "\r\n" or "\r", runs of whitespace between an entry's fields and
// after them) and refuse, naming the line, anything they would refuse
// and anything Kafka never writes: a negative number, a topic Kafka
// would not allow, a partition listed twice, epochs or their offsets
// that do not increase, and lines after the last.

var (
	// ErrOffsetCheckpoint means an offset checkpoint file is damaged.
	ErrOffsetCheckpoint = errors.New("offset checkpoint")
	// ErrEpochCheckpoint means a leader-epoch-checkpoint is damaged.
	ErrEpochCheckpoint = errors.New("leader-epoch checkpoint")
	// ErrPartitionMetadata means a partition.metadata is damaged.
	ErrPartitionMetadata = errors.New("partition.metadata")
)

// OffsetCheckpointEntry is a line of an offset checkpoint.
type OffsetCheckpointEntry struct {
	Topic     string
	Partition int32
	Offset    int64
}

// EpochEntry is a line of a leader-epoch-checkpoint: the first offset
// written by a leader of that epoch.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// ParseOffsetCheckpoint decodes an offset checkpoint file.
func ParseOffsetCheckpoint(b []byte) ([]OffsetCheckpointEntry, error) {
	var entries []OffsetCheckpointEntry
	seen := map[PartitionDir]int{} // the line of each partition
	err := checkpointEntries(b, ErrOffsetCheckpoint, 3, func(line int, f []string) error {
		if err := ValidateTopic(f[0]); err != nil {
			return fmt.Errorf("%w: line %d: %w", ErrOffsetCheckpoint, line, err)
		}
		p, err := checkpointInt(f[1], 32, "partition")
		if err != nil {
			return fmt.Errorf("%w: line %d: %w", ErrOffsetCheckpoint, line, err)
		}
		off, err := checkpointInt(f[2], 64, "offset")
		if err != nil {
			return fmt.Errorf("%w: line %d: %w", ErrOffsetCheckpoint, line, err)
		}
		tp := PartitionDir{Topic: f[0], Partition: int32(p)}
		if first, dup := seen[tp]; dup {
			return fmt.Errorf("%w: line %d: partition %s again (first on line %d)", ErrOffsetCheckpoint, line, tp, first)
		}
		seen[tp] = line
		entries = append(entries, OffsetCheckpointEntry{Topic: tp.Topic, Partition: tp.Partition, Offset: off})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// ParseLeaderEpochCheckpoint decodes a leader-epoch-checkpoint. Kafka
// drops the entries a new epoch makes non-monotonic before it writes the
// file, so epochs and start offsets strictly increase.
func ParseLeaderEpochCheckpoint(b []byte) ([]EpochEntry, error) {
	var entries []EpochEntry
	err := checkpointEntries(b, ErrEpochCheckpoint, 2, func(line int, f []string) error {
		epoch, err := checkpointInt(f[0], 32, "epoch")
		if err != nil {
			return fmt.Errorf("%w: line %d: %w", ErrEpochCheckpoint, line, err)
		}
		start, err := checkpointInt(f[1], 64, "start offset")
		if err != nil {
			return fmt.Errorf("%w: line %d: %w", ErrEpochCheckpoint, line, err)
		}
		e := EpochEntry{Epoch: int32(epoch), StartOffset: start}
		if n := len(entries); n > 0 {
			switch prev := entries[n-1]; {
			case e.Epoch <= prev.Epoch:
				return fmt.Errorf("%w: line %d: epoch %d is not above the line before's %d", ErrEpochCheckpoint, line, e.Epoch, prev.Epoch)
			case e.StartOffset <= prev.StartOffset:
				return fmt.Errorf("%w: line %d: start offset %d is not above the line before's %d", ErrEpochCheckpoint, line, e.StartOffset, prev.StartOffset)
			}
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// checkpointEntries parses the frame of a checkpoint file, handing each
// entry line to entry as its width fields.
func checkpointEntries(b []byte, kind error, width int, entry func(line int, f []string) error) error {
	count, n, last := int64(-1), int64(0), 0
	for num, line := range textLines(b) {
		last = num
		switch num {
		case 1:
			v, err := strconv.ParseInt(line, 10, 32)
			if err != nil {
				return fmt.Errorf("%w: line 1: version %q is not a number", kind, line)
			}
			if v != 0 {
				return fmt.Errorf("%w: line 1: version %d, Kafka writes only 0", kind, v)
			}
		case 2:
			c, err := strconv.ParseInt(line, 10, 32)
			if err != nil || c < 0 {
				return fmt.Errorf("%w: line 2: entry count %q is not a count", kind, line)
			}
			count = c
		default:
			if n == count {
				return fmt.Errorf("%w: line %d: more entries than the %d line 2 counts", kind, num, count)
			}
			f, err := javaFields(line, width)
			if err != nil {
				return fmt.Errorf("%w: line %d: %w", kind, num, err)
			}
			if err := entry(num, f); err != nil {
				return err
			}
			n++
		}
	}
	switch {
	case last == 1:
		return fmt.Errorf("%w: no entry count after the version", kind)
	case n < count:
		return fmt.Errorf("%w: line 2 counts %d entries, %d follow", kind, count, n)
	}
	return nil
}

// checkpointInt parses a checkpoint's non-negative decimal field.
func checkpointInt(s string, bits int, what string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, bits)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s %q is not a %d-bit number", what, s, bits)
	case v < 0:
		return 0, fmt.Errorf("%s %d is negative", what, v)
	}
	return v, nil
}

// javaFields splits a line at runs of whitespace as Kafka's readers do
// (Java's \s+), into exactly width fields: Java keeps a leading empty
// field, which no entry can have, and drops trailing ones.
func javaFields(line string, width int) ([]string, error) {
	if line != "" && isJavaSpace(line[0]) {
		return nil, errors.New("starts with whitespace")
	}
	f := strings.FieldsFunc(line, func(r rune) bool { return r < 0x80 && isJavaSpace(byte(r)) })
	if len(f) != width {
		return nil, fmt.Errorf("%d fields, want %d", len(f), width)
	}
	return f, nil
}

// isJavaSpace is Java's regular-expression \s.
func isJavaSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// textLines yields a text file's lines as Java's BufferedReader.readLine
// reads them, numbered from 1: each ended by "\n", "\r\n" or "\r", the
// last one with or without its end.
func textLines(b []byte) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for num := 1; len(b) > 0; num++ {
			i := 0
			for i < len(b) && b[i] != '\n' && b[i] != '\r' {
				i++
			}
			line := string(b[:i])
			switch {
			case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
				b = b[i+2:]
			case i < len(b):
				b = b[i+1:]
			default:
				b = nil
			}
			if !yield(num, line) {
				return
			}
		}
	}
}

// PartitionMetadata is a partition directory's partition.metadata.
type PartitionMetadata struct {
	Version int32
	TopicID UUID
}

// ParsePartitionMetadata decodes a partition.metadata. Versions above 0
// are taken, as Kafka takes them (a broker downgraded below the one that
// wrote the file), with their lines after the topic id passed over.
func ParsePartitionMetadata(b []byte) (PartitionMetadata, error) {
	var m PartitionMetadata
	lines := 0
	for num, line := range textLines(b) {
		lines = num
		var err error
		switch {
		case num == 1:
			var v string
			if v, err = metadataField(line, "version"); err == nil {
				var n int64
				n, err = checkpointInt(v, 32, "version")
				m.Version = int32(n)
			}
		case num == 2:
			var v string
			if v, err = metadataField(line, "topic_id"); err == nil {
				m.TopicID, err = ParseUUID(v)
			}
			if err == nil && m.TopicID.IsZero() {
				err = errors.New("topic id is the zero UUID")
			}
		case m.Version == 0:
			err = errors.New("nothing follows the topic id in version 0")
		}
		if err != nil {
			return m, fmt.Errorf("%w: line %d: %w", ErrPartitionMetadata, num, err)
		}
	}
	switch lines {
	case 0:
		return m, fmt.Errorf("%w: empty", ErrPartitionMetadata)
	case 1:
		return m, fmt.Errorf("%w: no topic_id line after the version", ErrPartitionMetadata)
	}
	return m, nil
}

// metadataField is the value of a partition.metadata line "key: value"
// (Kafka splits at the first colon followed by whitespace).
func metadataField(line, key string) (string, error) {
	for i := 0; i+1 < len(line); i++ {
		if line[i] == ':' && isJavaSpace(line[i+1]) {
			if line[:i] != key {
				return "", fmt.Errorf("key %q, want %q", line[:i], key)
			}
			return strings.TrimLeftFunc(line[i+1:], func(r rune) bool { return r < 0x80 && isJavaSpace(byte(r)) }), nil
		}
	}
	return "", fmt.Errorf("%q is not \"%s: value\"", line, key)
}

// UUID is a Kafka UUID (a topic id, a directory id): 16 bytes, written as
// 22 characters of URL-safe base64 without padding.
type UUID [16]byte

// ParseUUID decodes a UUID as Kafka's Uuid.fromString does: URL-safe
// base64 of 16 bytes, padded or not.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	raw, _ := strings.CutSuffix(s, "==")
	if len(raw) != 22 || len(s) != 22 && len(s) != 24 {
		return u, fmt.Errorf("UUID %q is not 22 characters of base64", s)
	}
	if _, err := base64.RawURLEncoding.Decode(u[:], []byte(raw)); err != nil {
		return u, fmt.Errorf("UUID %q is not URL-safe base64", s)
	}
	return u, nil
}

// String is the UUID as Kafka writes it.
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// IsZero reports whether u is the zero UUID, which Kafka takes for none.
func (u UUID) IsZero() bool { return u == UUID{} }
