package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kafkaDamaged is what testdata/kafka/manifest.json says of a damaged
// copy.
type kafkaDamaged struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Dir    string `json:"dir"`
	File   string `json:"file"`
	Pos    int64  `json:"pos"`
	Before int    `json:"valid_records_before"`
	After  int    `json:"valid_records_after"`
	// Log is a case that is a partition of its own (legacy-v1): all it
	// holds.
	Log *struct {
		Records []json.RawMessage `json:"records"`
	} `json:"log"`
}

// Every view of a damaged Kafka partition agrees on the same bytes, and
// with what the fixture's writer says it did: read stops where
// verify-crc's one problem is, read --skip-corrupt gives every valid
// record on both sides of it, and a torn tail is the end of the data,
// not an error.
func TestKafkaAgreement(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(kafkaFixtures, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Damaged []kafkaDamaged `json:"damaged"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Damaged) < 10 {
		t.Fatalf("%d damaged cases in the manifest", len(m.Damaged))
	}
	count := func(out string) int { return strings.Count(out, `"offset":`) }
	for _, d := range m.Damaged {
		t.Run(d.Name, func(t *testing.T) {
			dir := filepath.Join(kafkaFixtures, d.Dir)
			torn := d.Kind == "torn-tail" || d.Kind == "zero-tail"
			index := strings.HasPrefix(d.Kind, "lying-")

			// verify-crc: one problem, in the damaged file, at its byte.
			v := run(t, nil, "verify-crc", dir, "--json")
			var problems []verifyFindingJSON
			for _, line := range strings.Split(strings.TrimSpace(v.stdout), "\n") {
				var f verifyFindingJSON
				if json.Unmarshal([]byte(line), &f) == nil && f.Type == "finding" && f.Severity == "problem" {
					problems = append(problems, f)
				}
			}
			switch {
			case d.Kind == "legacy-v1":
				if v.code != 0 || len(problems) != 0 {
					t.Fatalf("verify-crc: exit %d, problems %v", v.code, problems)
				}
			case v.code != exitProblems || len(problems) != 1:
				t.Fatalf("verify-crc: exit %d, %d problems, want one:\n%s", v.code, len(problems), v.stdout)
			case filepath.Base(problems[0].Path) != d.File || problems[0].Pos == nil || *problems[0].Pos != d.Pos && !index:
				t.Errorf("verify-crc's problem %+v is not at %s byte %d", problems[0], d.File, d.Pos)
			}

			// read: the valid records before the damage, then exit 1 (a torn
			// tail ends the data: exit 0); past it with --skip-corrupt.
			if d.Log != nil { // nothing damaged: every record, in every magic
				d.Before, d.After = len(d.Log.Records), 0
			}
			r := run(t, nil, "read", dir, "--format", "json")
			wantCode := 1
			if torn || index || d.Kind == "legacy-v1" {
				wantCode = 0
			}
			if r.code != wantCode || count(r.stdout) != d.Before+map[bool]int{true: d.After}[wantCode == 0] {
				t.Errorf("read: exit %d with %d records, want %d with %d\n%s", r.code, count(r.stdout), wantCode, d.Before, r.stderr)
			}
			s := run(t, nil, "read", dir, "--format", "json", "--skip-corrupt")
			if s.code != 0 || count(s.stdout) != d.Before+d.After {
				t.Errorf("read --skip-corrupt: exit %d with %d records, want %d\n%s", s.code, count(s.stdout), d.Before+d.After, s.stderr)
			}
		})
	}
}
