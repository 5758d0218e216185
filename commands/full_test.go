package commands

import (
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A partition whose last record has offset 2^64-1 holds it like any other
// record, and no command wraps past it: append refuses, so do the
// commands that need an offset after the last record; the rest count it
// and read it.
func TestFullPartition(t *testing.T) {
	const top = uint64(math.MaxUint64)
	dir := filepath.Join(t.TempDir(), "data")
	mxWrite(t, filepath.Join(dir, "t", "0"), mxSeg{top - 4, mxRange(top-4, top-1)})
	// mxRange stops before its end, which cannot be top+1.
	mxWrite(t, filepath.Join(dir, "t", "0"), mxSeg{top - 4, append(mxRange(top-4, top), mxStdRec(top))})
	before := snapshot(t, dir)

	var doc struct {
		Topics []struct {
			Partitions []struct {
				Next    uint64 `json:"next_offset"`
				Full    bool   `json:"full"`
				Records uint64 `json:"records"`
			} `json:"partitions"`
		} `json:"topics"`
	}
	out := mustRun(t, dir, "", "describe", "t", "--json").stdout
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if p := doc.Topics[0].Partitions[0]; !p.Full || p.Records != 5 || p.Next != top {
		t.Errorf("describe --json: %+v", p)
	}
	if out := mustRun(t, dir, "", "describe", "t").stdout; !strings.Contains(out, "none (full)") {
		t.Errorf("describe does not say the partition is full:\n%s", out)
	}
	vals := func(r result) []string { return strings.Fields(r.stdout) }
	for _, tc := range []struct {
		offset string
		want   []string
	}{
		{"-1", []string{"value-18446744073709551615"}},
		{"-2", []string{"value-18446744073709551614", "value-18446744073709551615"}},
		{"end", nil},
		{"18446744073709551615", []string{"value-18446744073709551615"}},
	} {
		if got := vals(mustRun(t, dir, "", "read", "t", "--offset", tc.offset)); !slices.Equal(got, tc.want) {
			t.Errorf("read --offset %s: %q, want %q", tc.offset, got, tc.want)
		}
	}
	if r := mustRun(t, dir, "", "verify-crc", "t"); !strings.Contains(r.stdout, "no problems found") || strings.Contains(r.stdout, "note") {
		t.Errorf("verify-crc:\n%s", r.stdout)
	}
	if r := mustRun(t, dir, "", "retention-sweep", "t", "--retention", "1s"); !strings.Contains(r.stdout, "cannot be rolled") {
		t.Errorf("retention-sweep:\n%s", r.stdout)
	}
	for _, args := range [][]string{{"append", "t"}, {"tail", "t", "-n", "2"}} {
		r := run(t, strings.NewReader("more\n"), append([]string{"-d", dir}, args...)...)
		if r.code != 1 {
			t.Errorf("%v: exit %d, want 1 (stdout %q)", args, r.code, r.stdout)
		}
		wantOneErrorLine(t, r.stderr, "is full", "18446744073709551615")
	}
	sameSnapshot(t, before, snapshot(t, dir))
}
