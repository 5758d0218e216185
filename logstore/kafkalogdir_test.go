package logstore_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore"
)

// Kafka's files for these tests come from franz-go's kmsg (batches and
// legacy messages, their checksums computed here) and from the text
// formats as Kafka's CheckpointFile, PartitionMetadataFile and
// java.util.Properties write them.

// kdBatch is a record batch (magic 2) at base holding values, as a broker
// stores it.
func kdBatch(base int64, attrs int16, values ...string) []byte {
	var records []byte
	for i, v := range values {
		r := kmsg.Record{TimestampDelta64: int64(i), OffsetDelta: int32(i), Value: []byte(v)}
		r.Length = int32(len(r.AppendTo(nil)) - 1) // what follows a length of 0, one byte long
		records = r.AppendTo(records)
	}
	b := kmsg.RecordBatch{
		FirstOffset:          base,
		Length:               int32(49 + len(records)),
		PartitionLeaderEpoch: 3,
		Magic:                2,
		Attributes:           attrs,
		LastOffsetDelta:      int32(max(len(values)-1, 0)), // an emptied batch keeps a delta of 0 at least
		FirstTimestamp:       1700000000000,
		MaxTimestamp:         1700000000000 + int64(len(values)-1),
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(len(values)),
		Records:              records,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// kdMessage is a legacy message of magic 0 or 1, as brokers before 0.11
// stored them.
func kdMessage(magic int8, offset int64, attrs int8, key, value []byte) []byte {
	var out []byte
	if magic == 0 {
		m := kmsg.MessageV0{Offset: offset, Magic: 0, Attributes: attrs, Key: key, Value: value}
		m.MessageSize = int32(len(m.AppendTo(nil)) - 12)
		out = m.AppendTo(nil)
	} else {
		m := kmsg.MessageV1{Offset: offset, Magic: 1, Attributes: attrs, Timestamp: 1700000000000, Key: key, Value: value}
		m.MessageSize = int32(len(m.AppendTo(nil)) - 12)
		out = m.AppendTo(nil)
	}
	binary.BigEndian.PutUint32(out[12:], crc32.ChecksumIEEE(out[16:]))
	return out
}

func kdWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

const (
	kdTopicID = "AAECAwQFBgcICQoLDA0ODw"
	kdMeta    = "#\n#Tue Nov 03 10:15:00 UTC 2026\nnode.id=1\ndirectory.id=J8aAPcfLQt2bqs1JT_rMgQ\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n"
)

// kdLogDir builds a Kafka log directory: topic orders with partitions 0,
// 1, 2 and 10, my-topic with partition 0, a partition of each leftover
// kind, and the broker's own files, cleaner-offset-checkpoint missing and
// log-start-offset-checkpoint damaged.
func kdLogDir(t *testing.T) string {
	dir := t.TempDir()
	kdWrite(t, filepath.Join(dir, kafka.MetaPropertiesFile), []byte(kdMeta))
	kdWrite(t, filepath.Join(dir, kafka.RecoveryPointCheckpoint), []byte("0\n3\norders 0 3\norders 10 0\nmy-topic 0 0\n"))
	kdWrite(t, filepath.Join(dir, kafka.ReplicationCheckpoint), []byte("0\n4\norders 0 3\norders 1 0\norders 2 0\norders 10 0\n"))
	kdWrite(t, filepath.Join(dir, kafka.LogStartOffsetCheckpoint), []byte("0\n2\norders 0 0\n"))
	for _, name := range []string{".lock", ".kafka_cleanshutdown", "bootstrap.checkpoint"} {
		kdWrite(t, filepath.Join(dir, name), nil)
	}

	p0 := filepath.Join(dir, "orders-0")
	kdWrite(t, filepath.Join(p0, "00000000000000000000.log"), append(kdBatch(0, 0, "a", "b"), kdBatch(2, 0, "c")...))
	kdWrite(t, filepath.Join(p0, "00000000000000000000.index"), make([]byte, 8<<10)) // preallocated
	kdWrite(t, filepath.Join(p0, "00000000000000000000.timeindex"), make([]byte, 12<<10))
	kdWrite(t, filepath.Join(p0, "00000000000000000003.snapshot"), nil)
	kdWrite(t, filepath.Join(p0, kafka.LeaderEpochCheckpoint), []byte("0\n2\n0 0\n3 2\n"))
	kdWrite(t, filepath.Join(p0, kafka.PartitionMetadataFile), []byte("version: 0\ntopic_id: "+kdTopicID+"\n"))
	for _, p := range []string{"orders-1", "orders-2", "orders-10"} {
		kdWrite(t, filepath.Join(dir, p, "00000000000000000000.log"), nil)
		kdWrite(t, filepath.Join(dir, p, kafka.LeaderEpochCheckpoint), []byte("0\n0\n"))
	}
	kdWrite(t, filepath.Join(dir, "orders-2", kafka.LeaderEpochCheckpoint), []byte("0\n2\n5 0\n4 9\n"))
	kdWrite(t, filepath.Join(dir, "my-topic-0", "00000000000000000000.log"), kdBatch(0, 0, "x"))
	for _, l := range []string{"orders-3.6c1bb7a2d5f84d5b9a3c0e1f2a3b4c5d-delete", "orders-0.0123456789abcdef0123456789abcdef-future", "gone-5.fedcba9876543210fedcba9876543210-stray"} {
		kdWrite(t, filepath.Join(dir, l, "00000000000000000000.log"), nil)
	}
	if err := os.Mkdir(filepath.Join(dir, "not_a_partition"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestIsKafkaSegment(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 100<<10)
	for i := range big {
		big[i] = byte(rnd.Uint32())
	}
	for name, b := range map[string][]byte{
		"batch":                 kdBatch(0, 0, "hello", "world"),
		"batch at a base":       kdBatch(4711, 0, "x"),
		"batch, then more":      append(kdBatch(0, 0, "a"), kdBatch(1, 0, "b")...),
		"big batch":             kdBatch(0, 0, string(big)),
		"gzip batch":            kdBatch(0, 1, "not really gzip, the checksum covers it anyway"),
		"zstd batch":            kdBatch(0, 4, "z"),
		"transactional batch":   kdBatch(0, 0x10, "t"),
		"control batch":         kdBatch(0, 0x30, ""),
		"log-append-time batch": kdBatch(0, 0x08, "l"),
		"empty batch":           kdBatch(7, 0),
		"magic 0":               kdMessage(0, 0, 0, []byte("k"), []byte("v")),
		"magic 0, no key":       kdMessage(0, 5, 0, nil, []byte("v")),
		"magic 0, null value":   kdMessage(0, 5, 0, []byte("k"), nil),
		"magic 1":               kdMessage(1, 0, 0, nil, []byte("v")),
		"magic 1, gzip wrapper": kdMessage(1, 1, 1, nil, append(kdMessage(1, 0, 0, nil, []byte("a")), kdMessage(1, 1, 0, nil, []byte("b"))...)),
		"magic 1, log-append":   kdMessage(1, 0, 8, nil, []byte("v")),
	} {
		if !logstore.IsKafkaSegment(b) {
			t.Errorf("%s: not taken for Kafka's", name)
		}
	}

	batch, msg := kdBatch(0, 0, "hello", "world"), kdMessage(1, 0, 0, []byte("k"), []byte("v"))
	flip := func(b []byte, i int) []byte { b = bytes.Clone(b); b[i] ^= 0x04; return b }
	set := func(b []byte, i int, v byte) []byte { b = bytes.Clone(b); b[i] = v; return b }
	for name, b := range map[string][]byte{
		"nothing":                 nil,
		"batch header only":       batch[:61],
		"batch cut short":         batch[:len(batch)-1],
		"batch, a bit flipped":    flip(batch, len(batch)-2),
		"batch, crc flipped":      flip(batch, 18),
		"batch, magic 3":          set(batch, 16, 3),
		"batch, unknown codec":    set(batch, 22, 0x05),
		"batch, negative offset":  set(batch, 0, 0x80),
		"message, a bit flipped":  flip(msg, len(msg)-1),
		"message, cut short":      msg[:len(msg)-1],
		"magic 0, timestamp type": kdMessage(0, 0, 8, nil, []byte("v")),
		"message, unknown codec":  kdMessage(1, 0, 5, nil, []byte("v")),
		"message, bytes after":    kdMessage(1, 0, 0, nil, []byte("v"))[:30],
		"zeros":                   make([]byte, 4096),
		"message, key past its end": func() []byte {
			b := kdMessage(0, 0, 0, []byte("k"), []byte("v"))
			binary.BigEndian.PutUint32(b[18:], 100)
			binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
			return b
		}(),
	} {
		if logstore.IsKafkaSegment(b) {
			t.Errorf("%s: taken for Kafka's", name)
		}
	}
}

// kdSeglogLogs lists every seglog segment under the repository's
// fixtures.
func kdSeglogLogs(t *testing.T) []string {
	var logs []string
	for _, root := range []string{"../testdata/golden", "../format/testdata"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(path, ".log") {
				logs = append(logs, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(logs) < 100 {
		t.Fatalf("only %d seglog fixtures found", len(logs))
	}
	return logs
}

// kdSeglogDataDir writes a seglog data directory with seglog's writer:
// topics named like Kafka partition directories among others, and
// partitions whose records start at timestamps that put 0, 1 and 2 (Kafka's
// magics) at byte 16, where Kafka's magic is.
func kdSeglogDataDir(t *testing.T) string {
	dir := t.TempDir()
	s := logstore.Open(dir)
	starts := []int64{0, 1, 1 << 56, 1<<56 + 12345, 1 << 57, 1<<57 + 1<<40, -1 << 62, 1700000000000000000}
	for _, topic := range []string{"orders", "orders-0", "logs-2024", "x-1"} {
		if err := s.CreateTopic(topic, len(starts), logstore.Settings{}); err != nil {
			t.Fatal(err)
		}
		for p, ts := range starts {
			w, err := s.OpenWriter(topic, p, logstore.WriterOptions{Sync: logstore.SyncNever, SegmentBytes: 300})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 40 {
				if _, err := w.Append(ts+int64(i), []byte{byte(i)}, bytes.Repeat([]byte{2, 0, 0, 0}, i%9)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func TestIsKafkaSegmentRefusesSeglog(t *testing.T) {
	logs := kdSeglogLogs(t)
	written, err := filepath.Glob(filepath.Join(kdSeglogDataDir(t), "*", "*", "*.log"))
	if err != nil || len(written) < 100 {
		t.Fatalf("%d segments written: %v", len(written), err)
	}
	for _, path := range append(logs, written...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if logstore.IsKafkaSegment(b) {
			t.Errorf("%s: a seglog segment taken for Kafka's", path)
		}
		// Damaged, so that its first record is no sound seglog record.
		for i := 0; i < min(len(b), 64); i++ {
			d := bytes.Clone(b)
			d[i] ^= 0x01
			if logstore.IsKafkaSegment(d) {
				t.Errorf("%s with byte %d flipped: taken for Kafka's", path, i)
			}
		}
	}
}

func TestIsKafkaLogDir(t *testing.T) {
	kafkaDir := kdLogDir(t)
	if ok, err := logstore.IsKafkaLogDir(kafkaDir); !ok || err != nil {
		t.Errorf("Kafka log directory: %v, %v", ok, err)
	}

	// Without meta.properties, a partition directory tells: by a file only
	// Kafka writes, or by its first non-empty .log.
	for name, files := range map[string]map[string][]byte{
		"leader-epoch-checkpoint": {kafka.LeaderEpochCheckpoint: []byte("0\n0\n"), "00000000000000000000.log": nil},
		"partition.metadata":      {kafka.PartitionMetadataFile: []byte("version: 0\ntopic_id: " + kdTopicID + "\n")},
		"a snapshot":              {"00000000000000000000.log": nil, "00000000000000000000.snapshot": nil},
		"a transaction index":     {"00000000000000000000.log": nil, "00000000000000000000.txnindex": nil},
		"its first batch":         {"00000000000000000000.log": nil, "00000000000000000005.log": kdBatch(5, 0, "x"), "00000000000000000005.index": nil},
		"a legacy message":        {"00000000000000000000.log": kdMessage(0, 0, 0, nil, []byte("v"))},
	} {
		dir := t.TempDir()
		for file, b := range files {
			kdWrite(t, filepath.Join(dir, "orders-3", file), b)
		}
		if ok, err := logstore.IsKafkaLogDir(dir); !ok || err != nil {
			t.Errorf("told by %s: %v, %v", name, ok, err)
		}
	}

	for name, build := range map[string]func(dir string){
		"empty": func(string) {},
		"meta.properties a directory": func(dir string) {
			kdWrite(t, filepath.Join(dir, kafka.MetaPropertiesFile, "x"), nil)
		},
		"only empty segments": func(dir string) {
			kdWrite(t, filepath.Join(dir, "orders-0", "00000000000000000000.log"), nil)
		},
		"checkpoint names that are directories": func(dir string) {
			kdWrite(t, filepath.Join(dir, "orders-0", kafka.LeaderEpochCheckpoint, "x"), nil)
			kdWrite(t, filepath.Join(dir, "orders-0", "00000000000000000000.snapshot", "x"), nil)
		},
		"a Kafka batch in a directory named otherwise": func(dir string) {
			kdWrite(t, filepath.Join(dir, "orders", "00000000000000000000.log"), kdBatch(0, 0, "x"))
		},
	} {
		dir := t.TempDir()
		build(dir)
		if ok, err := logstore.IsKafkaLogDir(dir); ok || err != nil {
			t.Errorf("%s: %v, %v", name, ok, err)
		}
	}
	if _, err := logstore.IsKafkaLogDir(filepath.Join(t.TempDir(), "nowhere")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}

// TestSeglogFixturesNoKafkaLogDir: each seglog fixture partition, moved
// into a directory as a Kafka partition directory would be, leaves it no
// Kafka log directory: the content of its segments says so.
func TestSeglogFixturesNoKafkaLogDir(t *testing.T) {
	fixtures, err := filepath.Glob("../testdata/golden/*")
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("%d fixtures: %v", len(fixtures), err)
	}
	for _, fixture := range fixtures {
		dir := t.TempDir()
		files, err := os.ReadDir(fixture)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(fixture, f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			kdWrite(t, filepath.Join(dir, "orders-0", f.Name()), b)
		}
		if ok, err := logstore.IsKafkaLogDir(dir); ok || err != nil {
			t.Errorf("%s as orders-0: %v, %v", filepath.Base(fixture), ok, err)
		}
	}
}

// TestKafkaAndSeglogSideBySide: a seglog data directory and a Kafka log
// directory, each taken for what it is and never for the other.
func TestKafkaAndSeglogSideBySide(t *testing.T) {
	seglogDir, kafkaDir := kdSeglogDataDir(t), kdLogDir(t)

	for _, dir := range []string{seglogDir, filepath.Join(seglogDir, "orders-0"), filepath.Join(seglogDir, "orders-0", "0")} {
		if ok, err := logstore.IsKafkaLogDir(dir); ok || err != nil {
			t.Errorf("seglog's %s: %v, %v", dir, ok, err)
		}
		if _, err := logstore.OpenKafkaLogDir(dir); !errors.Is(err, logstore.ErrNotKafkaLogDir) {
			t.Errorf("open seglog's %s: %v", dir, err)
		}
	}
	if ok, err := logstore.IsKafkaLogDir(kafkaDir); !ok || err != nil {
		t.Errorf("Kafka's: %v, %v", ok, err)
	}

	// seglog reads its own directory and finds nothing of its own in
	// Kafka's: its partition directories are no seglog topic's partitions.
	s := logstore.Open(seglogDir)
	topics, err := s.Topics()
	if err != nil || !reflect.DeepEqual(topics, []string{"logs-2024", "orders", "orders-0", "x-1"}) {
		t.Errorf("seglog topics %v, %v", topics, err)
	}
	k := logstore.Open(kafkaDir)
	kTopics, err := k.Topics()
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range kTopics {
		tp, err := logstore.ReadTopicPartitions(filepath.Join(kafkaDir, topic))
		if err != nil || len(tp.Present) > 0 {
			t.Errorf("seglog finds partitions %v in Kafka's %s: %v", tp.Present, topic, err)
		}
	}
}

// kdTree is every file under dir with its size, mode and time.
func kdTree(t *testing.T, dir string) map[string]string {
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		tree[path] = fi.Mode().String() + " " + fi.ModTime().String() + " " + string(rune(fi.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func TestOpenKafkaLogDir(t *testing.T) {
	dir := kdLogDir(t)
	before := kdTree(t, dir)
	d, err := logstore.OpenKafkaLogDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Dir() != dir {
		t.Errorf("Dir %s", d.Dir())
	}
	if got := d.Topics(); !reflect.DeepEqual(got, []string{"my-topic", "orders"}) {
		t.Errorf("topics %v", got)
	}
	var nums []int32
	for _, p := range d.Partitions("orders") {
		if p.Topic != "orders" || p.Dir != filepath.Join(dir, "orders-"+strings.TrimPrefix(filepath.Base(p.Dir), "orders-")) {
			t.Errorf("partition %+v", p)
		}
		nums = append(nums, p.Partition)
	}
	if !reflect.DeepEqual(nums, []int32{0, 1, 2, 10}) || len(d.Partitions("nope")) != 0 {
		t.Errorf("orders partitions %v", nums)
	}
	var leftovers []string
	for _, l := range d.Leftovers() {
		leftovers = append(leftovers, l.PartitionDir.String()+" "+string(l.Kind)+" "+filepath.Base(l.Dir))
	}
	if want := []string{
		"gone-5 stray gone-5.fedcba9876543210fedcba9876543210-stray",
		"orders-0 future orders-0.0123456789abcdef0123456789abcdef-future",
		"orders-3 delete orders-3.6c1bb7a2d5f84d5b9a3c0e1f2a3b4c5d-delete",
	}; !reflect.DeepEqual(leftovers, want) {
		t.Errorf("leftovers %q", leftovers)
	}

	meta, ok := d.Meta()
	if !ok || meta.Version != 1 || meta.NodeID != 1 || meta.ClusterID != "MkU3OEVBNTcwNTJENDM2Qg" || meta.DirectoryID.String() != "J8aAPcfLQt2bqs1JT_rMgQ" {
		t.Errorf("meta %+v, %v", meta, ok)
	}
	files := d.Files()
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
		if f.Path != filepath.Join(dir, f.Name) {
			t.Errorf("%s at %s", f.Name, f.Path)
		}
	}
	if want := []string{kafka.MetaPropertiesFile, kafka.RecoveryPointCheckpoint, kafka.LogStartOffsetCheckpoint, kafka.ReplicationCheckpoint, kafka.CleanerOffsetCheckpoint}; !reflect.DeepEqual(names, want) {
		t.Errorf("files %v", names)
	}
	if files[0].Err != nil || files[1].Err != nil || files[3].Err != nil {
		t.Errorf("errors %v, %v, %v", files[0].Err, files[1].Err, files[3].Err)
	}
	if err := files[2].Err; err == nil || err.Error() != filepath.Join(dir, kafka.LogStartOffsetCheckpoint)+": offset checkpoint: line 2 counts 2 entries, 1 follow" {
		t.Errorf("damaged log-start-offset-checkpoint: %v", err)
	}
	if err := files[4].Err; !errors.Is(err, fs.ErrNotExist) || err.Error() != filepath.Join(dir, kafka.CleanerOffsetCheckpoint)+" is missing" {
		t.Errorf("missing cleaner-offset-checkpoint: %v", err)
	}

	known := func(n int64) logstore.KafkaOffset { return logstore.KafkaOffset{Offset: n, Known: true} }
	for _, tc := range []struct {
		topic     string
		partition int32
		want      logstore.KafkaCheckpoints
	}{
		{"orders", 0, logstore.KafkaCheckpoints{RecoveryPoint: known(3), HighWatermark: known(3)}},
		{"orders", 1, logstore.KafkaCheckpoints{HighWatermark: known(0)}},
		{"orders", 10, logstore.KafkaCheckpoints{RecoveryPoint: known(0), HighWatermark: known(0)}},
		{"my-topic", 0, logstore.KafkaCheckpoints{RecoveryPoint: known(0)}},
		{"nope", 0, logstore.KafkaCheckpoints{}},
	} {
		if got := d.Checkpoints(tc.topic, tc.partition); got != tc.want {
			t.Errorf("%s-%d: %+v, want %+v", tc.topic, tc.partition, got, tc.want)
		}
	}

	p := d.Partitions("orders")
	if epochs, err := p[0].LeaderEpochs(); err != nil || !reflect.DeepEqual(epochs, []kafka.EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 3, StartOffset: 2}}) {
		t.Errorf("orders-0 epochs %v, %v", epochs, err)
	}
	if id, err := p[0].TopicID(); err != nil || id.String() != kdTopicID {
		t.Errorf("orders-0 topic id %v, %v", id, err)
	}
	if epochs, err := p[1].LeaderEpochs(); err != nil || len(epochs) != 0 {
		t.Errorf("orders-1 epochs %v, %v", epochs, err)
	}
	if _, err := p[1].TopicID(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("orders-1 topic id: %v", err)
	}
	if _, err := p[2].LeaderEpochs(); err == nil || err.Error() != filepath.Join(dir, "orders-2", kafka.LeaderEpochCheckpoint)+": leader-epoch checkpoint: line 4: epoch 4 is not above the line before's 5" {
		t.Errorf("orders-2 epochs: %v", err)
	}
	if _, err := d.Partitions("my-topic")[0].LeaderEpochs(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("my-topic-0 epochs: %v", err)
	}

	if after := kdTree(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("the log directory changed")
	}
}

// TestOpenKafkaLogDirDamagedFiles: a meta.properties and checkpoints that
// cannot be read are each reported, and the listing stands.
func TestOpenKafkaLogDirDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	kdWrite(t, filepath.Join(dir, kafka.MetaPropertiesFile), []byte("version=1\nnode.id=1\n"))
	kdWrite(t, filepath.Join(dir, kafka.RecoveryPointCheckpoint, "x"), nil) // a directory
	if err := os.Symlink("elsewhere", filepath.Join(dir, kafka.ReplicationCheckpoint)); err != nil {
		t.Fatal(err)
	}
	kdWrite(t, filepath.Join(dir, kafka.CleanerOffsetCheckpoint), nil) // empty: no entries
	kdWrite(t, filepath.Join(dir, "orders-0", "00000000000000000000.log"), kdBatch(0, 0, "x"))
	d, err := logstore.OpenKafkaLogDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Meta(); ok {
		t.Error("damaged meta.properties taken")
	}
	errs := map[string]string{}
	for _, f := range d.Files() {
		if f.Err != nil {
			errs[f.Name] = strings.ReplaceAll(f.Err.Error(), dir+"/", "")
		}
	}
	if want := map[string]string{
		kafka.MetaPropertiesFile:       "meta.properties: meta.properties: version 1 without cluster.id",
		kafka.RecoveryPointCheckpoint:  "recovery-point-offset-checkpoint is not a regular file (a directory)",
		kafka.LogStartOffsetCheckpoint: "log-start-offset-checkpoint is missing",
		kafka.ReplicationCheckpoint:    "replication-offset-checkpoint is not a regular file (a symbolic link to elsewhere)",
	}; !reflect.DeepEqual(errs, want) {
		t.Errorf("errors\n%q\nwant\n%q", errs, want)
	}
	if got := d.Topics(); !reflect.DeepEqual(got, []string{"orders"}) {
		t.Errorf("topics %v", got)
	}
	if c := d.Checkpoints("orders", 0); c != (logstore.KafkaCheckpoints{}) {
		t.Errorf("checkpoints %+v", c)
	}
}

func FuzzIsKafkaSegment(f *testing.F) {
	for _, b := range [][]byte{
		nil,
		kdBatch(0, 0, "hello", "world"),
		kdBatch(0, 0x30, ""),
		kdMessage(0, 0, 0, []byte("k"), []byte("v")),
		kdMessage(1, 1, 1, nil, kdMessage(1, 0, 0, nil, []byte("a"))),
		kdBatch(0, 0, "x")[:61],
		make([]byte, 64),
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !logstore.IsKafkaSegment(b) {
			return
		}
		if _, _, err := format.ParseRecord(b); err == nil {
			t.Fatal("a sound seglog record taken for Kafka's")
		}
		if b[16] > 2 {
			t.Fatalf("magic %d taken for Kafka's", b[16])
		}
	})
}

// Telling the layout of a live partition whose oldest segments retention
// deletes (and whose writer rolls) meanwhile: a segment listed and gone
// before it is read is passed over, never an error or the wrong layout.
func TestDetectLayoutUnderRetention(t *testing.T) {
	seglogSeg, err := os.ReadFile(kdSeglogLogs(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		want    logstore.Layout
		segment func(base int64) []byte
	}{
		{logstore.LayoutSeglog, func(int64) []byte { return seglogSeg }},
		{logstore.LayoutKafka, func(base int64) []byte { return kdBatch(base, 0, "v") }},
	} {
		t.Run(tc.want.String(), func(t *testing.T) {
			dir := t.TempDir()
			path := func(base int64) string { return filepath.Join(dir, format.SegmentName(uint64(base), format.LogExt)) }
			const kept = 2
			for base := range int64(kept) {
				kdWrite(t, path(base), tc.segment(base))
			}
			stop, done := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				for base := int64(kept); ; base++ {
					select {
					case <-stop:
						return
					default:
					}
					// Rolled first, then the oldest deleted: never none left.
					if err := os.WriteFile(path(base), tc.segment(base), 0o644); err != nil {
						t.Error(err)
						return
					}
					if err := os.Remove(path(base - kept)); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			defer func() { close(stop); <-done }()
			for range 3000 {
				if got, err := logstore.DetectLayout(dir); err != nil || got != tc.want {
					t.Fatalf("DetectLayout: %v, %v; want %v", got, err, tc.want)
				}
			}
		})
	}
}

// A partition whose first entry is a legacy compressed message set starts
// at its first inner message, which the wrapper's header does not give
// (it carries the last one's offset): magic 1's inner offsets are
// relative to the first, magic 0's are the offsets themselves.
func TestKafkaLegacyWrapperFirst(t *testing.T) {
	for _, magic := range []int8{0, 1} {
		// Inner offsets 0, 1, 2: relative (magic 1) or absolute (magic 0),
		// the same from 0.
		p := kdOneSegment(t, append(kdWrapper(magic, 2, 0, "a", "b", "c"), kdMessage(magic, 3, 0, nil, []byte("d"))...))
		if e, err := p.Extent(); err != nil || e.Start != 0 || e.Next != 4 {
			t.Errorf("magic %d: Extent %+v, %v; want 0..3", magic, e, err)
		}
		if got, err := kdValues(p); !slices.Equal(got, []string{"0:a", "1:b", "2:c", "3:d"}) || err != nil {
			t.Errorf("magic %d: read %v, %v; want 0:a 1:b 2:c 3:d", magic, got, err)
		}
	}
}

// describe counts a Kafka partition's records from batch headers: an
// upper bound (RecordsFromIndex), and never more than the offsets a batch
// holds in the partition's range, whatever its count field says.
func TestKafkaStatsCountFromHeaders(t *testing.T) {
	lying := kdBatch(0, 0, "a")
	binary.BigEndian.PutUint32(lying[23:], 0x7ffffffe) // last offset delta
	binary.BigEndian.PutUint32(lying[57:], 0x7fffffff) // records count
	p := kdOneSegment(t, append(kdRecrc(lying), kdBatch(100, 0, "b")...))
	st, err := p.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if !st.RecordsFromIndex || st.Records > st.Next-st.Start+1 || st.Records < 2 {
		t.Errorf("Stats %+v: want at most %d records, marked as counted from headers", st, st.Next-st.Start+1)
	}
}

// A Kafka partition's .log that is not a regular file is an error: left
// out, its offsets would pass for ones retention removed. An index file
// that is not one is read without, and named.
func TestKafkaNotRegular(t *testing.T) {
	build := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "t-0")
		kdWrite(t, filepath.Join(dir, "00000000000000000000.log"), kdBatch(0, 0, "a", "b"))
		kdWrite(t, filepath.Join(dir, "00000000000000000002.log"), kdBatch(2, 0, "c"))
		return dir
	}
	for _, kind := range []string{"symlink", "fifo", "dir"} {
		t.Run(kind, func(t *testing.T) {
			dir := build(t)
			log := filepath.Join(dir, "00000000000000000002.log")
			aside := filepath.Join(t.TempDir(), "seg.log")
			if err := os.Rename(log, aside); err != nil {
				t.Fatal(err)
			}
			var err error
			switch kind {
			case "symlink":
				err = os.Symlink(aside, log)
			case "fifo":
				err = unix.Mkfifo(log, 0o644)
			case "dir":
				err = os.Mkdir(log, 0o755)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = logstore.OpenKafkaPartition(dir, "t-0")
			var nr *logstore.NotRegularError
			if !errors.As(err, &nr) || nr.Path != log {
				t.Errorf("OpenKafkaPartition: %v, want the refusal of %s", err, log)
			}
		})
	}
	t.Run("index", func(t *testing.T) {
		dir := build(t)
		idx := filepath.Join(dir, "00000000000000000000.index")
		if err := os.Mkdir(idx, 0o755); err != nil {
			t.Fatal(err)
		}
		p, err := logstore.OpenKafkaPartition(dir, "t-0")
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if odd := p.IgnoredIndexes(); len(odd) != 1 || odd[0].Path != idx {
			t.Errorf("IgnoredIndexes: %v, want %s", odd, idx)
		}
		if e, err := p.Extent(); err != nil || e.Start != 0 || e.Next != 3 {
			t.Errorf("Extent %+v, %v; want 0..2", e, err)
		}
	})
}

// The records of a batch whose CRC matches, before one that does not
// check out, are read (as Kafka's consumer reads them) and counted by
// verify-crc: the two agree.
func TestKafkaRecordsBeforeBadRecordAgree(t *testing.T) {
	var records []byte
	for _, v := range []string{"a", "b"} {
		r := kmsg.Record{Value: []byte(v)} // both at offset delta 0: the second does not follow
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		records = r.AppendTo(records)
	}
	b := kmsg.RecordBatch{FirstOffset: 0, Length: int32(49 + len(records)), Magic: 2, LastOffsetDelta: 1,
		FirstTimestamp: 1700000000000, MaxTimestamp: 1700000000000, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: 2, Records: records}
	p := kdOneSegment(t, append(kdRecrc(b.AppendTo(nil)), kdBatch(100, 0, "g")...))
	it, err := p.Records(0)
	if err != nil {
		t.Fatal(err)
	}
	got, damage := kmRead(t, it)
	offsets := kmOffsets(got)
	if !slices.Equal(offsets, []uint64{0, 100}) || len(damage) != 1 {
		t.Errorf("read --skip-corrupt: offsets %v, damage %v; want 0 and 100, one damage", offsets, damage)
	}
	rep, err := p.Verify(0, 0, logstore.VerifyOptions{})
	if err != nil || rep.Records != uint64(len(got)) || rep.Problems != 1 {
		t.Errorf("Verify: %d records, %d problems, %v; want %d records, one problem", rep.Records, rep.Problems, err, len(got))
	}
}

// verify-crc reports a record later than its batch's max timestamp, which
// a time lookup goes by.
func TestKafkaMaxTimestampBelowRecords(t *testing.T) {
	b := kdBatch(0, 0, "a", "b", "c") // timestamps 1700000000000 + 0, 1, 2
	binary.BigEndian.PutUint64(b[35:], 1700000000000)
	p := kdOneSegment(t, kdRecrc(b))
	var fs []logstore.Finding
	rep, err := p.Verify(0, 0, logstore.VerifyOptions{Finding: func(f logstore.Finding) error { fs = append(fs, f); return nil }})
	if err != nil || rep.Problems != 1 || rep.Records != 3 ||
		!slices.ContainsFunc(fs, func(f logstore.Finding) bool {
			return f.Offset == 1 && strings.Contains(f.Reason, "after its batch's max timestamp")
		}) {
		t.Errorf("Verify: %+v, %v, findings %v; want the record at offset 1 reported, three records", rep, err, fs)
	}
}

// kdWrapper is a legacy gzip message set with offset offset holding
// values, their inner offsets from first on.
func kdWrapper(magic int8, offset, first int64, values ...string) []byte {
	var inner []byte
	for i, v := range values {
		inner = append(inner, kdMessage(magic, first+int64(i), 0, nil, []byte(v))...)
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(inner)
	zw.Close()
	return kdMessage(magic, offset, 1, nil, zipped.Bytes())
}

// A legacy message set whose inner offsets go below the record before it
// (its header gives only its last offset): readers pass those over, as
// Kafka's consumer does, and verify-crc reports them and counts what is
// read.
func TestKafkaLegacyWrapperOverlap(t *testing.T) {
	// The second set's inner relative offsets 0..3 are 1..4.
	p := kdOneSegment(t, append(kdWrapper(1, 2, 0, "a", "b", "c"), kdWrapper(1, 4, 0, "x", "y", "z", "w")...))
	got, err := kdValues(p)
	if want := []string{"0:a", "1:b", "2:c", "3:z", "4:w"}; !slices.Equal(got, want) || err != nil {
		t.Errorf("read %v, %v; want %v", got, err, want)
	}
	var fs []logstore.Finding
	rep, err := p.Verify(0, 0, logstore.VerifyOptions{Finding: func(f logstore.Finding) error { fs = append(fs, f); return nil }})
	if err != nil || rep.Records != uint64(len(got)) || rep.Problems != 1 ||
		!slices.ContainsFunc(fs, func(f logstore.Finding) bool { return f.Kind == logstore.FindingOverlap && f.Offset == 1 }) {
		t.Errorf("Verify: %+v, %v, findings %v; want %d records and the overlap at offset 1", rep, err, fs, len(got))
	}
}

// kdRecrc sets record batch b's CRC-32C to what its bytes give.
func kdRecrc(b []byte) []byte {
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// kdOneSegment opens a Kafka partition whose one segment holds log.
func kdOneSegment(t *testing.T, log []byte) *logstore.KafkaPartition {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t-0")
	kdWrite(t, filepath.Join(dir, "00000000000000000000.log"), log)
	p, err := logstore.OpenKafkaPartition(dir, "t-0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// kdValues reads p from its start: each record's offset and value.
func kdValues(p *logstore.KafkaPartition) ([]string, error) {
	it, err := p.Records(0)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var got []string
	for it.Next() {
		got = append(got, fmt.Sprintf("%d:%s", it.Record().Offset, it.Record().Value))
	}
	return got, it.Err()
}

// describe counts a record once, however many batches claim its offset.
func TestKafkaStatsOverlapCountedOnce(t *testing.T) {
	p := kdOneSegment(t, slices.Concat(kdBatch(0, 0, "a", "b", "c"), kdBatch(0, 0, "a", "b", "c"), kdBatch(3, 0, "d")))
	st, err := p.Stats()
	if err != nil || st.Records > st.Next-st.Start {
		t.Errorf("Stats %+v, %v: more records than the offsets %d..%d", st, err, st.Start, st.Next-1)
	}
}
