package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seglog/seglog/logstore"
)

// rsPlan writes a plan of the given moves (JSON objects) and returns
// its path.
func rsPlan(t *testing.T, moves ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.json")
	writeFile(t, path, `{"version": 1, "moves": [`+strings.Join(moves, ",")+`]}`)
	return path
}

// rsMove is a plan's move of partition p of t from one data directory to
// another, with extra fields (`,"new_partition":3`).
func rsMove(from, to, p, extra string) string {
	return `{"topic":"t","partition":` + p + `,"from":"` + from + `","to":"` + to + `"` + extra + `}`
}

// rsResults runs reassign with --json and returns its moves' results.
func rsResults(t *testing.T, want int, args ...string) []moveResult {
	t.Helper()
	r := run(t, nil, append([]string{"reassign", "--json"}, args...)...)
	if r.code != want {
		t.Fatalf("reassign %q: exit %d, want %d; stderr:\n%s", args, r.code, want, r.stderr)
	}
	var doc struct{ Moves []moveResult }
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	return doc.Moves
}

func TestReassignPlanErrorsAreUsageErrors(t *testing.T) {
	from := newTopic(t, 1)
	mustRun(t, from, "a\n", "append", "t")
	to := filepath.Join(t.TempDir(), "data")
	for _, tc := range []struct {
		name, plan string
		want       []string
	}{
		{"unknown field", `{"version":1,"moves":[` + rsMove(from, to, "0", `,"to_partition":1`) + `]}`, []string{`moves[0]: unknown field "to_partition"`}},
		{"no from", `{"version":1,"moves":[{"topic":"t","partition":0,"to":"` + to + `"}]}`, []string{"moves[0].from: missing"}},
		{"bad topic", `{"version":1,"moves":[{"topic":".x","partition":0,"from":"a","to":"b"}]}`, []string{"moves[0].topic: "}},
		{"bad new topic", `{"version":1,"moves":[` + rsMove(from, to, "0", `,"new_topic":""`) + `]}`, []string{"moves[0].new_topic: "}},
		{"partition out of range", `{"version":1,"moves":[` + rsMove(from, to, "10000", "") + `]}`, []string{"moves[0].partition: must be between 0 and 9999, not 10000"}},
		{"onto itself", `{"version":1,"moves":[` + rsMove(from, from, "0", "") + `]}`, []string{"moves[0].to: ", "onto itself"}},
		{"inside", `{"version":1,"moves":[` + rsMove(from, filepath.Join(from, "sub"), "0", "") + `]}`, []string{"moves[0].to: ", "one inside the other"}},
		{"twice", `{"version":1,"moves":[` + rsMove(from, to, "0", "") + `,` + rsMove(from, to+"2", "0", "") + `]}`, []string{"moves[0] and moves[1] both move "}},
		{"chained", `{"version":1,"moves":[` + rsMove(from, to, "0", "") + `,` + rsMove(to, to+"2", "0", "") + `]}`, []string{"moves[1].from: ", "is what moves[0] copies to"}},
		{"no moves", `{"version":1,"moves":[]}`, []string{`"moves" is missing or empty`}},
		{"trailing", `{"version":1,"moves":[` + rsMove(from, to, "0", "") + `]} []`, []string{"more than one JSON value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "plan.json")
			writeFile(t, path, tc.plan)
			r := runIn(t, from, nil, "reassign", "--plan", path, "--execute")
			if r.code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitUsage, r.stderr)
			}
			wantOneErrorLine(t, r.stderr, append([]string{"seglog: plan " + path + ": "}, tc.want...)...)
			if _, err := os.Stat(to); err == nil {
				t.Errorf("a refused plan made %s", to)
			}
		})
	}
}

func TestReassignExitStatuses(t *testing.T) {
	from := newTopic(t, 2)
	mustRun(t, from, "a\nb\n", "append", "t", "--partition", "0")
	mustRun(t, from, "c\n", "append", "t", "--partition", "1")
	to := filepath.Join(t.TempDir(), "data")
	plan := rsPlan(t, rsMove(from, to, "0", ""), rsMove(from, to, "1", `,"new_topic":"u","new_partition":0`))

	// Nothing there yet: --verify finds both missing.
	if res := rsResults(t, exitProblems, "--plan", plan, "--verify"); res[0].Result != resultMissing || res[1].Result != resultMissing {
		t.Errorf("verify before the copy: %+v", res)
	}
	res := rsResults(t, exitOK, "--plan", plan, "--dry-run")
	if res[0].Result != resultCopy || res[1].Result != resultCopy || res[0].Bytes == 0 {
		t.Errorf("dry run: %+v", res)
	}
	if _, err := os.Stat(to); err == nil {
		t.Fatalf("--dry-run made %s", to)
	}
	res = rsResults(t, exitOK, "--plan", plan, "--execute")
	if res[0].Result != resultCopied || res[0].Records != 2 || res[1].Result != resultCopied || res[1].ToTopic != "u" {
		t.Errorf("execute: %+v", res)
	}
	if got := readValues(t, to, "u", 0); !slices.Equal(got, []string{"c"}) {
		t.Errorf("u/0 holds %q", got)
	}
	// The source grows: behind (exit 3), then updated, then alike.
	mustRun(t, from, "d\n", "append", "t", "--partition", "0")
	if res := rsResults(t, exitProblems, "--plan", plan, "--verify"); res[0].Result != resultBehind || res[0].SourceAhead != 1 || res[1].Result != resultOK {
		t.Errorf("verify of a grown source: %+v", res)
	}
	if res := rsResults(t, exitOK, "--plan", plan, "--execute"); res[0].Result != resultUpdated || res[1].Result != resultUnchanged || res[1].CopiedBytes != 0 {
		t.Errorf("re-run: %+v", res)
	}
	if res := rsResults(t, exitOK, "--plan", plan, "--verify"); res[0].Result != resultOK || res[0].Records != 3 {
		t.Errorf("verify: %+v", res)
	}

	// A destination changed behind reassign's back: differs, exit 3,
	// and --remove-source then removes only what is alike: none of t,
	// whose partition 1 stays (so partition 0 is refused first).
	mustRun(t, to, "x\n", "append", "u")
	if res := rsResults(t, exitProblems, "--plan", plan, "--verify"); res[1].Result != resultAhead || res[1].DestAhead != 1 {
		t.Errorf("verify of a grown destination: %+v", res)
	}
	r := run(t, nil, "reassign", "--plan", plan, "--execute")
	if r.code != exitError {
		t.Fatalf("execute onto a destination that went its own way: exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "seglog: moves[1]: the destination ", "holds another partition (its segment 00000000000000000000.log is not the size of the source's)")
	if got := readValues(t, to, "u", 0); !slices.Equal(got, []string{"c", "x"}) {
		t.Errorf("a refused move changed u/0: %q", got)
	}

	// A source partition missing with no destination: exit 1.
	missing := rsPlan(t, rsMove(from, to, "5", ""))
	r = run(t, nil, "reassign", "--plan", missing, "--dry-run")
	if r.code != exitError {
		t.Fatalf("missing source: exit %d, want 1", r.code)
	}
	wantOneErrorLine(t, r.stderr, "seglog: moves[0]: the source partition t/5 is not in ")
}

func TestReassignRemoveSource(t *testing.T) {
	from := newTopic(t, 2)
	mustRun(t, from, "a\nb\n", "append", "t", "--partition", "0")
	mustRun(t, from, "c\n", "append", "t", "--partition", "1")
	to := filepath.Join(t.TempDir(), "data")
	both := rsPlan(t, rsMove(from, to, "0", ""), rsMove(from, to, "1", ""))
	lower := rsPlan(t, rsMove(from, to, "0", ""))

	// Partition 0 alone would leave the topic without it: refused, before
	// anything is copied.
	r := run(t, nil, "reassign", "--plan", lower, "--execute", "--remove-source")
	if r.code != exitError {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "seglog: moves[0]: --remove-source would leave topic t in ", "without partition 0 while partition 1 stays")
	if _, err := os.Stat(to); err == nil {
		t.Fatalf("a refused plan made %s", to)
	}

	// A writer on partition 1: its removal is refused, naming the pid;
	// nothing is removed (the highest partition goes first).
	mustRun(t, from, "", "reassign", "--plan", both, "--execute")
	app := startAppend(t, from, "t", "--partition", "1")
	eventually(t, 10*time.Second, "the writer's lock", func() bool {
		return logstore.WriterPid(logstore.Open(from).PartitionDir("t", 1)) != 0
	})
	r = run(t, nil, "reassign", "--plan", both, "--verify", "--remove-source", "--wait-timeout", "10ms")
	if r.code != exitError {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "seglog: moves[1]: source ", "not removed: partition t/1 is locked by another process (pid "+strconv.Itoa(app.cmd.Process.Pid)+")")
	for _, p := range []string{"0", "1"} {
		if _, err := os.Stat(filepath.Join(from, "t", p)); err != nil {
			t.Fatalf("refused removal: %v", err)
		}
	}
	if err := app.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if code := app.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("append: exit %d", code)
	}

	res := rsResults(t, exitOK, "--plan", both, "--verify", "--remove-source")
	for i, m := range res {
		if m.Result != resultOK || !m.SourceRemoved {
			t.Errorf("move %d: %+v", i, m)
		}
		if _, err := os.Stat(filepath.Join(from, "t", strconv.Itoa(i))); err == nil {
			t.Errorf("source partition %d is still there", i)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(from, "t", ".*.tmp")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	// Every move is done now, in every mode.
	for _, mode := range []string{"--dry-run", "--execute", "--verify"} {
		for i, m := range rsResults(t, exitOK, "--plan", both, mode) {
			if m.Result != resultDone {
				t.Errorf("%s, move %d: %+v", mode, i, m)
			}
		}
	}
	if got := readValues(t, to, "t", 0); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("t/0 holds %q", got)
	}
}
