package commands

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/seglog/seglog/logstore"
)

// grHold takes group name's lock in this process until the test ends, as
// a live reader would.
func grHold(t *testing.T, dir, name string) {
	t.Helper()
	g, err := logstore.Open(dir).OpenGroup(name, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
}

// grCommit commits positions of topic t for group name.
func grCommit(t *testing.T, dir, name string, pos map[int]uint64) {
	t.Helper()
	g, err := logstore.Open(dir).OpenGroup(name, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Commit("t", pos); err != nil {
		t.Fatal(err)
	}
}

// cmdHoldGroup is the script command holdgroup NAME: takes the group's
// lock in the script's data directory (data) until the script ends.
func cmdHoldGroup(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: holdgroup NAME")
	}
	g, err := logstore.Open(ts.MkAbs("data")).OpenGroup(args[0], 0)
	ts.Check(err)
	ts.Defer(func() { g.Close() })
}

// The list: each group's topics and total lag over the partitions it
// committed (those it never committed count none); nothing there is no
// error, with a note and an empty JSON list.
func TestGroupsList(t *testing.T) {
	dir := gpTopic(t, []int{10, 4, 6}, 0)
	r := mustRun(t, dir, "", "groups")
	if r.stdout != "" || !strings.Contains(r.stderr, "no consumer groups") {
		t.Errorf("no groups: stdout %q stderr %q", r.stdout, r.stderr)
	}
	r = mustRun(t, dir, "", "groups", "--json")
	var empty struct{ Groups []any }
	if err := json.Unmarshal([]byte(r.stdout), &empty); err != nil || empty.Groups == nil || len(empty.Groups) != 0 || r.stderr != "" {
		t.Errorf("no groups --json: %q (%v), stderr %q", r.stdout, err, r.stderr)
	}

	grCommit(t, dir, "a", map[int]uint64{0: 3, 1: 4}) // lag 7 + 0; partition 2 never committed
	grCommit(t, dir, "b", map[int]uint64{2: 1})
	r = mustRun(t, dir, "", "groups", "--json")
	var doc struct {
		Groups []struct {
			Group      string
			Topics     []string
			Lag        *uint64
			LastCommit *string `json:"last_commit"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Groups) != 2 {
		t.Fatalf("groups %s", r.stdout)
	}
	for i, want := range []struct {
		name string
		lag  uint64
	}{{"a", 7}, {"b", 5}} {
		g := doc.Groups[i]
		if g.Group != want.name || g.Lag == nil || *g.Lag != want.lag || len(g.Topics) != 1 || g.Topics[0] != "t" || g.LastCommit == nil {
			t.Errorf("group %d: %+v, want %s with lag %d", i, g, want.name, want.lag)
		}
	}
	r = mustRun(t, dir, "", "groups")
	if !strings.Contains(r.stdout, "LAG") || !strings.Contains(r.stdout, "| a ") || !strings.Contains(r.stdout, "|   7 |") {
		t.Errorf("table:\n%s", r.stdout)
	}

	r = runIn(t, filepath.Join(dir, "nosuch"), nil, "groups")
	if r.code != exitError {
		t.Errorf("missing data directory: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, "data directory", "does not exist", "--data-dir")
	if r = runIn(t, dir, nil, "groups", "extra"); r.code != exitUsage {
		t.Errorf("groups extra: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, `unknown command "extra"`)
}

// describe shows every partition of the group's topics, '-' where it
// never committed, as kafka-consumer-groups --describe does.
func TestGroupsDescribe(t *testing.T) {
	dir := gpTopic(t, []int{10, 4}, 0)
	grCommit(t, dir, "g", map[int]uint64{0: 6})
	r := mustRun(t, dir, "", "groups", "describe", "g", "--json")
	var doc struct {
		Partitions []struct {
			Partition int
			Current   *uint64 `json:"current_offset"`
			LogStart  *uint64 `json:"log_start"`
			LogEnd    *uint64 `json:"log_end"`
			Lag       *uint64
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Partitions) != 2 {
		t.Fatalf("partitions: %s", r.stdout)
	}
	p0, p1 := doc.Partitions[0], doc.Partitions[1]
	if p0.Current == nil || *p0.Current != 6 || *p0.LogEnd != 10 || *p0.LogStart != 0 || p0.Lag == nil || *p0.Lag != 4 {
		t.Errorf("partition 0: %s", r.stdout)
	}
	if p1.Current != nil || p1.Lag != nil || p1.LogEnd == nil || *p1.LogEnd != 4 {
		t.Errorf("partition 1 (never committed): %s", r.stdout)
	}
	r = mustRun(t, dir, "", "groups", "describe", "g")
	if !strings.Contains(r.stdout, "CURRENT-OFFSET") || !strings.Contains(r.stdout, "| t     |         1 |              - |") {
		t.Errorf("table:\n%s", r.stdout)
	}

	r = runIn(t, dir, nil, "groups", "describe", "nosuch")
	if r.code != exitError {
		t.Errorf("missing group: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, "group nosuch", "not found", "seglog groups")
	r = runIn(t, filepath.Join(dir, "nosuch"), nil, "groups", "describe", "g")
	if r.code != exitError {
		t.Errorf("missing data directory: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, "data directory", "does not exist", "--data-dir")
	for _, args := range [][]string{{"groups", "describe"}, {"groups", "describe", "a", "b"}, {"groups", "describe", "bad/name"}} {
		if r := runIn(t, dir, nil, args...); r.code != exitUsage {
			t.Errorf("%q: exit %d, want 2", args, r.code)
		}
	}
}

// delete removes a group for good, refuses one a reader holds (naming
// its pid, the positions intact), and a missing one is an error that
// does not stop the others.
func TestGroupsDelete(t *testing.T) {
	dir := gpTopic(t, []int{5}, 0)
	grCommit(t, dir, "held", map[int]uint64{0: 2})
	grCommit(t, dir, "free", map[int]uint64{0: 3})
	grHold(t, dir, "held")
	r := runIn(t, dir, nil, "groups", "delete", "held", "--wait-timeout", "10ms")
	if r.code != exitError {
		t.Fatalf("held: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, "group held is locked by another process", fmt.Sprintf("pid %d", os.Getpid()), "--wait")
	if pos := gpPositions(t, dir, "held"); pos[0] != 2 {
		t.Errorf("held group's position %v after a refused delete", pos)
	}

	r = runIn(t, dir, nil, "groups", "delete", "nosuch", "free", "--json")
	if r.code != exitError {
		t.Errorf("nosuch free: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, "group nosuch", "not found")
	var doc struct {
		Groups []struct {
			Group   string
			Deleted bool
			Error   string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Groups) != 2 || doc.Groups[0].Deleted || doc.Groups[0].Error == "" || !doc.Groups[1].Deleted || doc.Groups[1].Group != "free" {
		t.Errorf("--json: %s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, ".groups", "free")); !os.IsNotExist(err) {
		t.Errorf("free still there: %v", err)
	}
	names, err := logstore.Open(dir).Groups()
	if err != nil || len(names) != 1 || names[0] != "held" {
		t.Errorf("groups left %q, %v", names, err)
	}
	// Deleted, a group starts afresh.
	grCommit(t, dir, "again", map[int]uint64{0: 4})
	if r := mustRun(t, dir, "", "groups", "delete", "again"); r.stdout != "deleted group again\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	if r := mustRun(t, dir, "", "read", "t", "--group", "again", "--count", "1"); r.stdout != "p0-0\n" {
		t.Errorf("after delete, read --group printed %q, want the first record", r.stdout)
	}
	for _, args := range [][]string{{"groups", "delete"}, {"groups", "delete", "ok", ".bad"}, {"groups", "delete", "g", "--wait", "--wait-timeout", "1s"}} {
		if r := runIn(t, dir, nil, args...); r.code != exitUsage {
			t.Errorf("%q: exit %d, want 2", args, r.code)
		}
	}
}

// A bad command line is a usage error before anything is read.
func TestGroupsResetUsage(t *testing.T) {
	dir := gpTopic(t, []int{5}, 0)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"g"}, []string{"one of --to-earliest"}},
		{[]string{"g", "--to-earliest", "--to-latest"}, []string{"--to-earliest and --to-latest exclude each other"}},
		{[]string{"g", "--to-offset", "3", "--shift-by", "1"}, []string{"--to-offset and --shift-by exclude each other"}},
		{[]string{"g", "--partition", "0", "--to-latest"}, []string{"--partition needs --topic"}},
		{[]string{"g", "--topic", "t", "--partition", "-1", "--to-latest"}, []string{"--partition must be 0 or more"}},
		{[]string{"g", "--to-latest", "--dry-run", "--execute"}, []string{"--dry-run and --execute exclude each other"}},
		{[]string{"g", "--to-offset", "-3"}, []string{"--to-offset"}},
		{[]string{"g", "--shift-by", "x"}, []string{"--shift-by"}},
		{[]string{"g", "--to-datetime", "yesterday"}, []string{"--to-datetime", "invalid time"}},
		{[]string{"--to-latest"}, []string{"missing group NAME"}},
		{[]string{"bad/name", "--to-latest"}, []string{"invalid group name"}},
		{[]string{"g", "--topic", "bad/t", "--to-latest"}, []string{"invalid topic name"}},
	} {
		r := runIn(t, dir, nil, append([]string{"groups", "reset"}, c.args...)...)
		if r.code != exitUsage {
			t.Errorf("%q: exit %d, want 2", c.args, r.code)
		}
		wantOneErrorLine(t, r.stderr, c.want...)
	}
	if _, err := os.Stat(filepath.Join(dir, ".groups")); !os.IsNotExist(err) {
		t.Errorf("a refused reset made .groups: %v", err)
	}
}

// grPlan is a reset's plan as --json gives it.
type grPlan struct {
	DryRun     bool `json:"dry_run"`
	Partitions []struct {
		Topic     string
		Partition int
		Current   *uint64 `json:"current_offset"`
		New       uint64  `json:"new_offset"`
		LogStart  uint64  `json:"log_start"`
		LogEnd    uint64  `json:"log_end"`
		Clamped   *string
	}
}

func grReset(t *testing.T, dir string, args ...string) grPlan {
	t.Helper()
	r := mustRun(t, dir, "", append([]string{"groups", "reset", "--json"}, args...)...)
	var p grPlan
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("%q: %v\n%s", args, err, r.stdout)
	}
	return p
}

// grNews is a plan's new offsets by partition.
func grNews(p grPlan) map[int]uint64 {
	m := map[int]uint64{}
	for _, r := range p.Partitions {
		m[r.Partition] = r.New
	}
	return m
}

// Each way to say where, clamped to the partitions as Kafka does; a dry
// run changes nothing; the commit is what the plan said.
func TestGroupsResetTargets(t *testing.T) {
	dir := gpTopic(t, []int{10, 4, 0}, 0)
	grCommit(t, dir, "g", map[int]uint64{0: 6, 1: 1})

	p := grReset(t, dir, "g", "--to-earliest", "--dry-run")
	if !p.DryRun || !maps.Equal(grNews(p), map[int]uint64{0: 0, 1: 0, 2: 0}) {
		t.Errorf("--to-earliest --dry-run: %+v", p)
	}
	if pos := gpPositions(t, dir, "g"); !maps.Equal(pos, map[int]uint64{0: 6, 1: 1}) {
		t.Errorf("a dry run changed the positions: %v", pos)
	}
	if p.Partitions[2].Current != nil || *p.Partitions[0].Current != 6 {
		t.Errorf("current offsets: %+v", p)
	}

	p = grReset(t, dir, "g", "--to-latest", "--execute")
	if p.DryRun || !maps.Equal(grNews(p), map[int]uint64{0: 10, 1: 4, 2: 0}) {
		t.Errorf("--to-latest: %+v", p)
	}
	if pos := gpPositions(t, dir, "g"); !maps.Equal(pos, map[int]uint64{0: 10, 1: 4, 2: 0}) {
		t.Errorf("positions after --to-latest: %v", pos)
	}

	p = grReset(t, dir, "g", "--to-offset", "7")
	if !maps.Equal(grNews(p), map[int]uint64{0: 7, 1: 4, 2: 0}) {
		t.Errorf("--to-offset 7: %+v", p)
	}
	for i, want := range []string{"", "end", "end"} {
		got := ""
		if c := p.Partitions[i].Clamped; c != nil {
			got = *c
		}
		if got != want {
			t.Errorf("--to-offset 7, partition %d clamped %q, want %q", i, got, want)
		}
	}

	p = grReset(t, dir, "g", "--shift-by", "-5")
	if !maps.Equal(grNews(p), map[int]uint64{0: 2, 1: 0, 2: 0}) || p.Partitions[1].Clamped == nil || *p.Partitions[1].Clamped != "start" {
		t.Errorf("--shift-by -5: %+v", p)
	}
	p = grReset(t, dir, "g", "--topic", "t", "--partition", "0", "--shift-by", "3")
	if !maps.Equal(grNews(p), map[int]uint64{0: 5}) || p.Partitions[0].Clamped != nil {
		t.Errorf("--shift-by 3 of partition 0: %+v", p)
	}
	if pos := gpPositions(t, dir, "g"); !maps.Equal(pos, map[int]uint64{0: 5, 1: 0, 2: 0}) {
		t.Errorf("positions: %v", pos)
	}

	r := mustRun(t, dir, "", "groups", "reset", "g", "--to-offset", "100", "--topic", "t", "--partition", "1", "--dry-run")
	if !strings.Contains(r.stdout, "clamped to log end") || !strings.Contains(r.stdout, "NEW-OFFSET") || !strings.Contains(r.stderr, "dry run") {
		t.Errorf("table: %s\nstderr %s", r.stdout, r.stderr)
	}
}

// A reset then read --group goes on exactly from the new positions.
func TestGroupsResetThenReadResumes(t *testing.T) {
	dir := gpTopic(t, []int{10, 6}, 0)
	mustRun(t, dir, "", "read", "t", "--group", "g")
	grReset(t, dir, "g", "--topic", "t", "--partition", "0", "--to-offset", "7")
	grReset(t, dir, "g", "--topic", "t", "--partition", "1", "--shift-by", "-2")
	r := mustRun(t, dir, "", "read", "t", "--group", "g", "--format", "json")
	got := gpKeys(gpDecode(t, r.stdout))
	want := []string{"0/7", "0/8", "0/9", "1/4", "1/5"}
	if !equalStrings(got, want) {
		t.Errorf("read after reset: %q, want %q", got, want)
	}
}

// --to-datetime puts each partition where read --since starts.
func TestGroupsResetToDatetimeMatchesSince(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--partitions", "3")
	base := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	// Partition p's record i is at base + (3i+p) minutes; partition 2's
	// all before the time asked for.
	for p, n := range []int{8, 5, 2} {
		var in strings.Builder
		for i := range n {
			fmt.Fprintf(&in, `{"value":"v%d","timestamp_ns":%d}`+"\n", i, base.Add(time.Duration(3*i+p)*time.Minute).UnixNano())
		}
		mustRun(t, dir, in.String(), "append", "t", "--partition", strconv.Itoa(p), "--input", "json")
	}
	at := base.Add(10 * time.Minute).Format(time.RFC3339Nano)
	since := map[int]uint64{}
	for _, rec := range gpDecode(t, mustRun(t, dir, "", "read", "t", "--since", at, "--format", "json").stdout) {
		if _, ok := since[rec.partition]; !ok {
			since[rec.partition] = rec.offset
		}
	}
	if len(since) != 2 {
		t.Fatalf("read --since %s starts in partitions %v", at, since)
	}
	p := grReset(t, dir, "g", "--topic", "t", "--to-datetime", at)
	news := grNews(p)
	for part, off := range since {
		if news[part] != off {
			t.Errorf("partition %d: --to-datetime %d, read --since %d", part, news[part], off)
		}
	}
	if news[2] != 2 { // nothing at or after: the end, where --since prints nothing
		t.Errorf("partition 2: --to-datetime %d, want its end 2", news[2])
	}
	grouped := map[int]uint64{}
	for _, rec := range gpDecode(t, mustRun(t, dir, "", "read", "t", "--group", "g", "--format", "json").stdout) {
		if _, ok := grouped[rec.partition]; !ok {
			grouped[rec.partition] = rec.offset
		}
	}
	if !maps.Equal(grouped, since) {
		t.Errorf("read --group after --to-datetime starts at %v, read --since at %v", grouped, since)
	}
}

// Refusals at run time: a held group (a dry run still plans), a missing
// group, topic or partition, a shift with nothing to shift from; a reset
// naming a topic makes a group that does not exist, a dry run does not.
func TestGroupsResetRefusals(t *testing.T) {
	dir := gpTopic(t, []int{5, 5}, 0)
	grCommit(t, dir, "g", map[int]uint64{0: 2})
	grHold(t, dir, "g")
	r := runIn(t, dir, nil, "groups", "reset", "g", "--to-earliest", "--wait-timeout", "10ms")
	if r.code != exitError {
		t.Errorf("held: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, "group g is locked by another process", fmt.Sprintf("pid %d", os.Getpid()))
	if p := grReset(t, dir, "g", "--to-earliest", "--dry-run"); !maps.Equal(grNews(p), map[int]uint64{0: 0, 1: 0}) {
		t.Errorf("dry run while held: %+v", p)
	}
	if pos := gpPositions(t, dir, "g"); !maps.Equal(pos, map[int]uint64{0: 2}) {
		t.Errorf("positions %v", pos)
	}

	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"nosuch", "--to-earliest"}, []string{"group nosuch", "not found"}},
		{[]string{"nosuch", "--topic", "nope", "--to-earliest"}, []string{"nope", "not found"}},
		{[]string{"nosuch", "--topic", "t", "--partition", "2", "--to-earliest"}, []string{"partitions 0..1, not 2"}},
		{[]string{"g", "--topic", "t", "--partition", "1", "--shift-by", "1", "--dry-run"}, []string{"no committed position in t/1 to shift", "--to-offset"}},
	} {
		r := runIn(t, dir, nil, append([]string{"groups", "reset"}, c.args...)...)
		if r.code != exitError {
			t.Errorf("%q: exit %d, want 1", c.args, r.code)
		}
		wantOneErrorLine(t, r.stderr, c.want...)
	}
	grReset(t, dir, "fresh", "--topic", "t", "--to-latest", "--dry-run")
	if _, err := os.Stat(filepath.Join(dir, ".groups", "fresh")); !os.IsNotExist(err) {
		t.Errorf("a dry run made the group: %v", err)
	}
	grReset(t, dir, "fresh", "--topic", "t", "--to-latest")
	if pos := gpPositions(t, dir, "fresh"); !maps.Equal(pos, map[int]uint64{0: 5, 1: 5}) {
		t.Errorf("new group's positions %v", pos)
	}
	names, _ := logstore.Open(dir).Groups()
	if !equalStrings(names, []string{"fresh", "g"}) {
		t.Errorf("groups %q: a refused reset must make none", names)
	}
	// A topic gone from under the group: named, with what to do.
	gone := gpTopic(t, []int{3}, 0)
	grCommit(t, gone, "g", map[int]uint64{0: 1})
	if err := os.RemoveAll(filepath.Join(gone, "t")); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, gone, nil, "groups", "reset", "g", "--to-earliest")
	if r.code != exitError {
		t.Errorf("topic gone: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, "topic t", "not found", "group g has positions in it", "--topic")
}
