package logstore

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKafkaImportPosition(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	if _, ok, err := s.KafkaImportPosition("orders"); ok || err != nil {
		t.Fatalf("before any save: ok %v, err %v", ok, err)
	}
	long := strings.Repeat("t", 249) // the temporary's name must still fit
	for _, topic := range []string{"orders", long} {
		want := KafkaImportPosition{KafkaTopic: "prod.orders", Next: map[int32]int64{0: 12, 2: 0, 7: 1 << 40}}
		if err := s.SaveKafkaImportPosition(topic, want); err != nil {
			t.Fatal(err)
		}
		want.Next[0] = 13
		if err := s.SaveKafkaImportPosition(topic, want); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.KafkaImportPosition(topic)
		if err != nil || !ok || got.KafkaTopic != want.KafkaTopic || !maps.Equal(got.Next, want.Next) {
			t.Fatalf("%.10s: loaded %+v, %v, %v; want %+v", topic, got, ok, err, want)
		}
	}
	// Not a topic of the data directory, and nothing left over.
	if topics, err := s.Topics(); err != nil || len(topics) != 0 {
		t.Errorf("Topics() = %q, %v", topics, err)
	}
	if left, _ := filepath.Glob(filepath.Join(root, kafkaImportDir, "orders", "*.tmp")); len(left) > 0 {
		t.Errorf("temporaries left: %q", left)
	}
	if err := s.SaveKafkaImportPosition("../x", KafkaImportPosition{KafkaTopic: "k"}); err == nil {
		t.Error("saved under a bad topic name")
	}
}

func TestKafkaImportPositionCorrupt(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	path := filepath.Join(root, kafkaImportDir, "orders", kafkaImportFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{``, `{}`, `{"kafka_topic":"k","partitions":{"x":1}}`, `{"kafka_topic":"k","partitions":{"0":-1}}`,
		`{"kafka_topic":"k","partitions":{"-1":1}}`, `{"kafka_topic":"k","partitions":{"9999999999":1}}`, `[1]`} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.KafkaImportPosition("orders"); err == nil || ok || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: ok %v, err %v; want an error naming the file", bad, ok, err)
		}
	}
}

// Sync makes what was appended durable whatever the writer's SyncMode,
// except SyncNever.
func TestWriterSync(t *testing.T) {
	for _, mode := range []SyncMode{SyncExit, SyncBatch, SyncNever} {
		s := Open(t.TempDir())
		if err := s.CreateTopic("t", 1, Settings{}); err != nil {
			t.Fatal(err)
		}
		w, err := s.OpenWriter("t", 0, WriterOptions{Sync: mode})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := w.Append(1, nil, []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		want := uint64(3)
		if mode == SyncNever {
			want = 0
		}
		if w.Written() != 3 || w.Durable() != want {
			t.Errorf("mode %d: written %d, durable %d after Sync; want 3, %d", mode, w.Written(), w.Durable(), want)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func FuzzKafkaImportPosition(f *testing.F) {
	for _, s := range []string{`{"kafka_topic":"k","partitions":{"0":1,"3":99}}`, `{"kafka_topic":"k","partitions":{}}`,
		``, `null`, `{"kafka_topic":"","partitions":{"0":1}}`, `{"kafka_topic":"k","partitions":{"2147483648":1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		s := Open(root)
		path := filepath.Join(root, kafkaImportDir, "t", kafkaImportFile)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		pos, ok, err := s.KafkaImportPosition("t")
		if err != nil {
			if ok || !strings.Contains(err.Error(), path) {
				t.Fatalf("ok %v with error %v (must name the file)", ok, err)
			}
			return
		}
		// What parses is written back the same.
		if err := s.SaveKafkaImportPosition("t", pos); err != nil {
			t.Fatal(err)
		}
		again, ok, err := s.KafkaImportPosition("t")
		if err != nil || !ok || again.KafkaTopic != pos.KafkaTopic || !maps.Equal(again.Next, pos.Next) {
			t.Fatalf("round trip: %+v, %v, %v; want %+v", again, ok, err, pos)
		}
	})
}
