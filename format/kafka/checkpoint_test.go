package kafka_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/seglog/seglog/format/kafka"
)

// Files as Kafka's CheckpointFile and PartitionMetadataFile write them.
const (
	cpRecovery    = "0\n3\norders 0 4711\norders 1 42\n__consumer_offsets 17 0\n"
	cpEpochs      = "0\n3\n0 0\n2 1200\n5 4711\n"
	cpTopicID     = "AAECAwQFBgcICQoLDA0ODw" // the bytes 0x00..0x0f
	cpPartitionMD = "version: 0\ntopic_id: " + cpTopicID + "\n"
)

func TestParseOffsetCheckpoint(t *testing.T) {
	want := []kafka.OffsetCheckpointEntry{{"orders", 0, 4711}, {"orders", 1, 42}, {"__consumer_offsets", 17, 0}}
	for _, tc := range []struct{ name, text string }{
		{"as Kafka writes it", cpRecovery},
		{"without the last newline", strings.TrimSuffix(cpRecovery, "\n")},
		{"CRLF", strings.ReplaceAll(cpRecovery, "\n", "\r\n")},
		{"CR", strings.ReplaceAll(cpRecovery, "\n", "\r")},
		{"tabs and runs of spaces, trailing whitespace", "0\n3\norders\t0  4711 \norders 1\t\t42\t\n__consumer_offsets 17 0\n"},
	} {
		got, err := kafka.ParseOffsetCheckpoint([]byte(tc.text))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, %v", tc.name, got, err)
		}
	}
	for _, text := range []string{"", "0\n0\n"} {
		if got, err := kafka.ParseOffsetCheckpoint([]byte(text)); err != nil || len(got) != 0 {
			t.Errorf("%q: %+v, %v", text, got, err)
		}
	}

	for _, tc := range []struct{ name, text, want string }{
		{"version 1", "1\n0\n", "offset checkpoint: line 1: version 1, Kafka writes only 0"},
		{"version not a number", "zero\n0\n", `offset checkpoint: line 1: version "zero" is not a number`},
		{"version with a space", "0 \n0\n", `offset checkpoint: line 1: version "0 " is not a number`},
		{"no count", "0\n", "offset checkpoint: no entry count after the version"},
		{"negative count", "0\n-1\n", `offset checkpoint: line 2: entry count "-1" is not a count`},
		{"fewer entries", "0\n3\norders 0 4711\n", "offset checkpoint: line 2 counts 3 entries, 1 follow"},
		{"more entries", "0\n1\norders 0 4711\norders 1 42\n", "offset checkpoint: line 4: more entries than the 1 line 2 counts"},
		{"a blank line", "0\n2\norders 0 4711\n\norders 1 42\n", "offset checkpoint: line 4: 0 fields, want 3"},
		{"two fields", "0\n1\norders 0\n", "offset checkpoint: line 3: 2 fields, want 3"},
		{"leading space", "0\n1\n orders 0 1\n", "offset checkpoint: line 3: starts with whitespace"},
		{"bad topic", "0\n1\nord/ers 0 1\n", `offset checkpoint: line 3: not a Kafka topic name: "ord/ers" holds '/' (allowed: a-z A-Z 0-9 . _ -)`},
		{"negative partition", "0\n1\norders -1 1\n", "offset checkpoint: line 3: partition -1 is negative"},
		{"partition past int32", "0\n1\norders 2147483648 1\n", `offset checkpoint: line 3: partition "2147483648" is not a 32-bit number`},
		{"negative offset", "0\n1\norders 0 -5\n", "offset checkpoint: line 3: offset -5 is negative"},
		{"offset not a number", "0\n1\norders 0 4k\n", `offset checkpoint: line 3: offset "4k" is not a 64-bit number`},
		{"a partition twice", "0\n2\norders 0 1\norders 0 2\n", "offset checkpoint: line 4: partition orders-0 again (first on line 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kafka.ParseOffsetCheckpoint([]byte(tc.text))
			ixWantErr(t, err, kafka.ErrOffsetCheckpoint, tc.want)
		})
	}
}

func TestParseLeaderEpochCheckpoint(t *testing.T) {
	got, err := kafka.ParseLeaderEpochCheckpoint([]byte(cpEpochs))
	want := []kafka.EpochEntry{{0, 0}, {2, 1200}, {5, 4711}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, %v", got, err)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"version 1", "1\n0\n", "leader-epoch checkpoint: line 1: version 1, Kafka writes only 0"},
		{"three fields", "0\n1\n0 0 0\n", "leader-epoch checkpoint: line 3: 3 fields, want 2"},
		{"epoch back", "0\n2\n3 0\n2 10\n", "leader-epoch checkpoint: line 4: epoch 2 is not above the line before's 3"},
		{"epoch repeated", "0\n2\n3 0\n3 10\n", "leader-epoch checkpoint: line 4: epoch 3 is not above the line before's 3"},
		{"start offset back", "0\n2\n3 10\n4 9\n", "leader-epoch checkpoint: line 4: start offset 9 is not above the line before's 10"},
		{"negative epoch", "0\n1\n-1 0\n", "leader-epoch checkpoint: line 3: epoch -1 is negative"},
		{"count short", "0\n2\n0 0\n", "leader-epoch checkpoint: line 2 counts 2 entries, 1 follow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kafka.ParseLeaderEpochCheckpoint([]byte(tc.text))
			ixWantErr(t, err, kafka.ErrEpochCheckpoint, tc.want)
		})
	}
}

func TestParseUUID(t *testing.T) {
	var seq kafka.UUID
	for i := range seq {
		seq[i] = byte(i)
	}
	for _, s := range []string{cpTopicID, cpTopicID + "=="} {
		if u, err := kafka.ParseUUID(s); err != nil || u != seq {
			t.Errorf("%s: %x, %v", s, u, err)
		}
	}
	if seq.String() != cpTopicID || seq.IsZero() || !(kafka.UUID{}).IsZero() {
		t.Errorf("String %s, IsZero %v", seq, seq.IsZero())
	}
	if (kafka.UUID{}).String() != "AAAAAAAAAAAAAAAAAAAAAA" {
		t.Errorf("zero UUID is %s", kafka.UUID{})
	}
	for _, s := range []string{"", cpTopicID[:21], cpTopicID + "A", cpTopicID + "=", cpTopicID + "AA", "AAECAwQFBgcICQoLDA0OD+", "AAECAwQFBgcICQoLDA0OD/", "AAECAwQFBgcICQoLDA0OD\n"} {
		if u, err := kafka.ParseUUID(s); err == nil {
			t.Errorf("%q: %x, no error", s, u)
		}
	}
}

func TestParsePartitionMetadata(t *testing.T) {
	want := kafka.PartitionMetadata{TopicID: kafka.UUID{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}
	for _, text := range []string{cpPartitionMD, strings.TrimSuffix(cpPartitionMD, "\n"), "version:\t0\r\ntopic_id:   " + cpTopicID + "\r\n"} {
		if got, err := kafka.ParsePartitionMetadata([]byte(text)); err != nil || got != want {
			t.Errorf("%q: %+v, %v", text, got, err)
		}
	}
	// A later version, as Kafka reads one after a downgrade: lines after
	// the topic id are a newer broker's.
	got, err := kafka.ParsePartitionMetadata([]byte("version: 1\ntopic_id: " + cpTopicID + "\ndirectory_id: x\n"))
	if err != nil || got.Version != 1 || got.TopicID != want.TopicID {
		t.Errorf("version 1: %+v, %v", got, err)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "partition.metadata: empty"},
		{"no topic id", "version: 0\n", "partition.metadata: no topic_id line after the version"},
		{"no space after the colon", "version:0\ntopic_id: " + cpTopicID + "\n", `partition.metadata: line 1: "version:0" is not "version: value"`},
		{"wrong key", "versions: 0\ntopic_id: " + cpTopicID + "\n", `partition.metadata: line 1: key "versions", want "version"`},
		{"negative version", "version: -1\ntopic_id: " + cpTopicID + "\n", "partition.metadata: line 1: version -1 is negative"},
		{"keys swapped", "topic_id: " + cpTopicID + "\nversion: 0\n", `partition.metadata: line 1: key "topic_id", want "version"`},
		{"bad topic id", "version: 0\ntopic_id: nope\n", `partition.metadata: line 2: UUID "nope" is not 22 characters of base64`},
		{"zero topic id", "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n", "partition.metadata: line 2: topic id is the zero UUID"},
		{"a line after", cpPartitionMD + "\n", "partition.metadata: line 3: nothing follows the topic id in version 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kafka.ParsePartitionMetadata([]byte(tc.text))
			ixWantErr(t, err, kafka.ErrPartitionMetadata, tc.want)
		})
	}
}

func FuzzCheckpoints(f *testing.F) {
	for _, s := range []string{
		"", cpRecovery, cpEpochs, cpPartitionMD, "0\n", "0\n1\norders 0 4711\norders 1 42\n", "0\r\n1\r\n 3 4\r\n",
		"version: 1\ntopic_id: " + cpTopicID + "\nmore\n", cpTopicID,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if entries, err := kafka.ParseOffsetCheckpoint(b); err == nil {
			for _, e := range entries {
				if kafka.ValidateTopic(e.Topic) != nil || e.Partition < 0 || e.Offset < 0 {
					t.Fatalf("entry %+v", e)
				}
			}
		} else if !errors.Is(err, kafka.ErrOffsetCheckpoint) {
			t.Fatalf("offset checkpoint: %v", err)
		}
		if entries, err := kafka.ParseLeaderEpochCheckpoint(b); err == nil {
			for i := 1; i < len(entries); i++ {
				if entries[i].Epoch <= entries[i-1].Epoch || entries[i].StartOffset <= entries[i-1].StartOffset {
					t.Fatalf("entries %+v", entries)
				}
			}
		} else if !errors.Is(err, kafka.ErrEpochCheckpoint) {
			t.Fatalf("leader-epoch checkpoint: %v", err)
		}
		if m, err := kafka.ParsePartitionMetadata(b); err == nil && m.TopicID.IsZero() || err != nil && !errors.Is(err, kafka.ErrPartitionMetadata) {
			t.Fatalf("partition.metadata: %+v, %v", m, err)
		}
		if u, err := kafka.ParseUUID(string(b)); err == nil {
			if v, err := kafka.ParseUUID(u.String()); v != u || err != nil {
				t.Fatalf("UUID %q: %s does not decode to itself: %v", b, u, err)
			}
		}
	})
}
