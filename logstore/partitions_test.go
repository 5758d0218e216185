package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func TestReadTopicPartitions(t *testing.T) {
	tests := []struct {
		name    string
		dirs    []string // directories in the topic directory
		files   []string // and files
		count   int
		present []int
		missing []PartitionRange
		foreign []string
	}{
		{"none", nil, nil, 0, nil, nil, nil},
		{"whole", []string{"2", "0", "1"}, nil, 3, []int{0, 1, 2}, nil, nil},
		{"a run missing", []string{"0", "5"}, nil, 6, []int{0, 5}, []PartitionRange{{1, 4}}, nil},
		{"runs missing, the first too", []string{"2", "4", "9"}, nil, 10, []int{2, 4, 9},
			[]PartitionRange{{0, 1}, {3, 3}, {5, 8}}, nil},
		{"strays beyond MaxPartitions", []string{"0", "999999999", strconv.Itoa(MaxPartitions), strconv.Itoa(MaxPartitions - 1)}, nil,
			MaxPartitions, []int{0, MaxPartitions - 1}, []PartitionRange{{1, MaxPartitions - 2}}, []string{"10000", "999999999"}},
		{"only a stray", []string{"999999999"}, nil, 0, nil, nil, []string{"999999999"}},
		{"not partitions", []string{"0", "007", "-1", "x", ".quarantine", "1234567890"}, []string{"3", "1.log"},
			1, []int{0}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, d := range tc.dirs {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tp, err := ReadTopicPartitions(dir)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(tp.Foreign)
			if tp.Count != tc.count || !slices.Equal(tp.Present, tc.present) || !slices.Equal(tp.Missing(), tc.missing) ||
				!slices.Equal(tp.Foreign, tc.foreign) {
				t.Errorf("count %d, present %v, missing %v, foreign %v; want %d, %v, %v, %v",
					tp.Count, tp.Present, tp.Missing(), tp.Foreign, tc.count, tc.present, tc.missing, tc.foreign)
			}
			// Every partition below Count is yielded once, in order,
			// present or in a missing run.
			next := 0
			for r, missing := range tp.Runs(-1) {
				if r.First != next || r.Last < r.First || missing == slices.Contains(tp.Present, r.First) {
					t.Errorf("run %v (missing %v) after partition %d", r, missing, next-1)
				}
				next = r.Last + 1
			}
			if next != tc.count {
				t.Errorf("the runs end at %d, want %d", next, tc.count)
			}
		})
	}
}

// Runs limited to one partition yields that one only, a missing one as a
// run of one.
func TestTopicPartitionsRunsOnly(t *testing.T) {
	tp := TopicPartitions{Count: 6, Present: []int{0, 5}}
	for only, want := range map[int]bool{0: false, 3: true, 5: false} {
		var got []PartitionRange
		for r, missing := range tp.Runs(only) {
			if missing != want {
				t.Errorf("Runs(%d): %v missing %v, want %v", only, r, missing, want)
			}
			got = append(got, r)
		}
		if !slices.Equal(got, []PartitionRange{{only, only}}) {
			t.Errorf("Runs(%d) = %v", only, got)
		}
	}
	for range tp.Runs(6) {
		t.Error("Runs(6) yielded a partition of a topic of 6")
	}
}

func TestMissingPartitionsError(t *testing.T) {
	tests := []struct {
		runs []PartitionRange
		want string
	}{
		{[]PartitionRange{{1, 1}}, "topic t: partition 1 of 0..5 is missing (D/1): partition not found"},
		{[]PartitionRange{{1, 4}}, "topic t: partitions 1..4 of 0..5 are missing (D/1 to D/4): partition not found"},
		{[]PartitionRange{{1, 1}, {3, 4}}, "topic t: partitions 1, 3..4 of 0..5 are missing (in D): partition not found"},
		{[]PartitionRange{{0, 0}, {2, 2}, {4, 4}, {6, 6}, {8, 8}},
			"topic t: partitions 0, 2, 4 and 2 more runs of 0..5 are missing (in D): partition not found"},
	}
	for _, tc := range tests {
		err := &MissingPartitionsError{Topic: "t", Dir: "D", Count: 6, Missing: tc.runs}
		if got := err.Error(); got != tc.want {
			t.Errorf("%v:\n got %q\nwant %q", tc.runs, got, tc.want)
		}
		if !errors.Is(err, ErrPartitionNotFound) {
			t.Errorf("%v: not ErrPartitionNotFound", tc.runs)
		}
	}
}
