package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ptTopic makes topic t in a new data directory with partitions 0..n-1,
// then removes those in gone and adds empty directories named extra
// (strays, as another program or a slip of the hand leaves them).
func ptTopic(t *testing.T, n int, gone []int, extra ...string) *Store {
	t.Helper()
	s := Open(filepath.Join(t.TempDir(), "data"))
	if err := s.CreateTopic("t", n, Settings{Retention: time.Hour}); err != nil {
		t.Fatal(err)
	}
	for _, p := range gone {
		if err := os.RemoveAll(s.PartitionDir("t", p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range extra {
		if err := os.Mkdir(filepath.Join(s.Dir(), "t", name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// A stray directory numbered beyond MaxPartitions is not a partition: the
// topic keeps its count, and opening it costs what one entry costs.
func TestTopicStrayPartitionDirectory(t *testing.T) {
	s := ptTopic(t, 2, nil, "999999999", strconv.Itoa(MaxPartitions))
	top, err := s.Topic("t")
	if err != nil {
		t.Fatalf("Topic with strays: %v", err)
	}
	if top.Partitions != 2 {
		t.Errorf("Topic with strays: %d partitions, want 2", top.Partitions)
	}
	if _, err := s.OpenPartition("t", 1); err != nil {
		t.Errorf("OpenPartition 1 with strays: %v", err)
	}
}

// Partitions missing in a run are one error naming the run, from Topic,
// RecoverTopic and RetentionSweep alike; the partitions there are still
// recovered and swept.
func TestTopicMissingRun(t *testing.T) {
	s := ptTopic(t, 6, []int{1, 2, 3, 4})
	dir := filepath.Join(s.Dir(), "t")
	want := "topic t: partitions 1..4 of 0..5 are missing (" + filepath.Join(dir, "1") + " to " + filepath.Join(dir, "4") + ")"
	if _, err := s.Topic("t"); err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrPartitionNotFound) {
		t.Errorf("Topic: %v, want %q", err, want)
	}

	tr, err := s.RecoverTopic("t", -1, RecoverOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Failed) != 1 || tr.Failed[0].Partition != 1 || !strings.Contains(tr.Failed[0].Err.Error(), want) {
		t.Errorf("RecoverTopic: failed %+v, want one failure: %s", tr.Failed, want)
	}
	if len(tr.Partitions) != 2 || tr.Partitions[0].Partition != 0 || tr.Partitions[1].Partition != 5 {
		t.Errorf("RecoverTopic recovered %+v, want partitions 0 and 5", tr.Partitions)
	}

	ts, err := s.RetentionSweep("t", -1, RetentionOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Failed) != 1 || ts.Failed[0].Partition != 1 || !strings.Contains(ts.Failed[0].Err.Error(), want) {
		t.Errorf("RetentionSweep: failed %+v, want one failure: %s", ts.Failed, want)
	}
	if len(ts.Partitions) != 2 {
		t.Errorf("RetentionSweep swept %d partitions, want 2", len(ts.Partitions))
	}

	// One partition of the run asked for: that one alone.
	tr, err = s.RecoverTopic("t", 3, RecoverOptions{DryRun: true})
	if err != nil || len(tr.Failed) != 1 || !strings.Contains(tr.Failed[0].Err.Error(), "partition 3 of 0..5 is missing") {
		t.Errorf("RecoverTopic --partition 3: %v, failed %+v", err, tr.Failed)
	}
}

// Recover and sweep leave strays alone and report them, never as missing
// partitions. The stray's name is MaxPartitions: the code before counted
// it, and failed here with MaxPartitions-1 missing partitions (a name of
// nine digits would have made it run out of memory instead).
func TestMaintenanceStrayPartitionDirectory(t *testing.T) {
	stray := strconv.Itoa(MaxPartitions)
	s := ptTopic(t, 2, nil, stray)
	tr, err := s.RecoverTopic("t", -1, RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Failed) != 0 || len(tr.Partitions) != 2 {
		t.Errorf("RecoverTopic: %d failed (%v), %d recovered; want 0 and 2", len(tr.Failed), firstFailure(tr.Failed), len(tr.Partitions))
	}
	ts, err := s.RetentionSweep("t", -1, RetentionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Failed) != 0 || len(ts.Partitions) != 2 {
		t.Errorf("RetentionSweep: %d failed, %d swept; want 0 and 2", len(ts.Failed), len(ts.Partitions))
	}
	if entries, err := os.ReadDir(filepath.Join(s.Dir(), "t", stray)); err != nil || len(entries) != 0 {
		t.Errorf("the stray directory was touched: %v, %v", entries, err)
	}
}

func firstFailure(fs []RecoverFailure) error {
	if len(fs) == 0 {
		return nil
	}
	return fs[0].Err
}
