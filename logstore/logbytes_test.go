package logstore

import (
	"os"
	"path/filepath"
	"testing"
)

// LogBytes counts the .log files of the partitions asked for, and their
// sizes, and nothing else a partition directory holds.
func TestLogBytesCountsSegmentFiles(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "data"))
	if err := s.CreateTopic("a", 2, Settings{}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTopic("b", 1, Settings{}); err != nil {
		t.Fatal(err)
	}
	write := func(topic string, p int, name string, n int) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(s.PartitionDir(topic, p), name), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", 0, "00000000000000000000.log", 100)
	write("a", 0, "00000000000000000009.log", 50)
	write("a", 0, "00000000000000000009.index", 1000)
	write("a", 1, "00000000000000000000.log", 7)
	write("b", 0, "00000000000000000000.log", 1)
	for _, c := range []struct {
		topics        []string
		partition     int
		files, nbytes int64
	}{
		{[]string{"a"}, -1, 3, 157},
		{[]string{"a"}, 0, 2, 150},
		{[]string{"a", "b"}, -1, 4, 158},
		{[]string{"a", "nosuch"}, 1, 1, 7},
	} {
		files, nbytes := s.LogBytes(c.topics, c.partition)
		if files != c.files || nbytes != c.nbytes {
			t.Errorf("LogBytes(%v, %d) = %d files, %d bytes; want %d, %d", c.topics, c.partition, files, nbytes, c.files, c.nbytes)
		}
	}
}
