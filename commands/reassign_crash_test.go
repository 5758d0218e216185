package commands

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestCrashReassign kills reassign --execute (with --remove-source or
// not, throttled or not) at random moments, then runs the plan again:
// each destination partition is absent or a whole copy of its source,
// each source untouched or (with --remove-source, its destination whole)
// gone, never both missing; commands over every topic of either data
// directory exit 0; the re-run completes every move, --verify finds each
// done or alike, and recover has nothing left to do.
func TestCrashReassign(t *testing.T) {
	t.Parallel()
	s := newCrashSuite(t)
	source, _ := crashTopic(t, 20261202, 2, 120<<10, 2, "--segment-bytes", "10k")
	whole := make([][]jsonLine, 2)
	for p := range whole {
		whole[p] = crashRead(t, source, "t", "--partition", strconv.Itoa(p))
	}
	s.each(t, 4, 60, nil, func(t *testing.T, rng *rand.Rand) { s.reassignTrial(t, rng, source, whole) })
}

func (s *crashSuite) reassignTrial(t *testing.T, rng *rand.Rand, source string, whole [][]jsonLine) {
	removeSource, throttle := rng.IntN(2) == 0, rng.IntN(3) == 0
	t.Logf("--remove-source %v, --throttle %v", removeSource, throttle)
	setup := func() (src, dst, plan string) {
		src = copyTree(t, source)
		dst = filepath.Join(t.TempDir(), "data")
		plan = filepath.Join(t.TempDir(), "plan.json")
		writeFile(t, plan, `{"version": 1, "moves": [
			{"topic": "t", "partition": 0, "from": "`+src+`", "to": "`+dst+`"},
			{"topic": "t", "partition": 1, "from": "`+src+`", "to": "`+dst+`"}]}`)
		return src, dst, plan
	}
	args := func(plan string) []string {
		a := []string{"reassign", "--plan", plan, "--execute"}
		if removeSource {
			a = append(a, "--remove-source")
		}
		if throttle {
			a = append(a, "--throttle", "2M")
		}
		return a
	}
	_, _, refPlan := setup()
	calib := s.calibrate(t, nil, args(refPlan)...)

	src, dst, plan := setup()
	r := s.kill(t, rng, 0, calib.work, nil, args(plan)...)
	for p := range whole {
		part := strconv.Itoa(p)
		srcDir, dstDir := filepath.Join(src, "t", part), filepath.Join(dst, "t", part)
		_, srcErr := os.Stat(srcDir)
		_, dstErr := os.Stat(dstDir)
		switch {
		case srcErr != nil && dstErr != nil:
			t.Fatalf("after the kill neither %s nor %s is there", srcDir, dstDir)
		case srcErr != nil && !removeSource:
			t.Fatalf("after the kill %s is gone, without --remove-source", srcDir)
		}
		if srcErr == nil {
			s.sameLines(t, "the source of move "+part+" after the kill", crashRead(t, src, "t", "--partition", part), whole[p])
		}
		if dstErr == nil {
			s.sameLines(t, "the destination of move "+part+" after the kill", crashRead(t, dst, "t", "--partition", part), whole[p])
		}
		if r.killed {
			s.state(t, "move "+part+map[bool]string{true: ": copied", false: ": not copied"}[dstErr == nil]+
				map[bool]string{true: ", source removed", false: ""}[srcErr != nil])
		}
	}
	// A source topic whose partitions are all gone goes with the last;
	// a kill just before leaves its settings alone, which recover removes
	// (and then no topic is left to run commands over).
	for _, dir := range []string{src, dst} {
		if parts, _ := filepath.Glob(filepath.Join(dir, "t", "[0-9]*")); len(parts) > 0 {
			crashEveryTopicCommands(t, dir, "")
		}
	}
	if rng.IntN(2) == 0 {
		for _, dir := range []string{src, dst} {
			if rr := runIn(t, dir, nil, "recover"); rr.code != 0 && rr.code != 1 {
				t.Fatalf("recover after the kill: exit status %d; stderr:\n%s", rr.code, rr.stderr)
			}
		}
	}

	if rr := run(t, nil, args(plan)...); rr.code != 0 {
		t.Fatalf("reassign after the kill: exit status %d, want 0; stderr:\n%s", rr.code, rr.stderr)
	}
	if rr := run(t, nil, "reassign", "--plan", plan, "--verify"); rr.code != 0 {
		t.Fatalf("reassign --verify after the re-run: exit status %d, want 0; stdout:\n%s\nstderr:\n%s", rr.code, rr.stdout, rr.stderr)
	}
	for p := range whole {
		part := strconv.Itoa(p)
		s.sameLines(t, "the destination of move "+part+" after the re-run", crashRead(t, dst, "t", "--partition", part), whole[p])
		if _, err := os.Stat(filepath.Join(src, "t", part)); (err == nil) == removeSource {
			t.Fatalf("after the re-run the source of move %s is there: %v, want %v", part, err == nil, !removeSource)
		}
	}
	crashClean(t, dst, "of the destinations after the re-run")
	crashSettled(t, dst)
	if !removeSource {
		crashSettled(t, src)
	} else if _, err := os.Stat(filepath.Join(src, "t")); err == nil {
		// Only a kill between the last partition's removal and the
		// topic's leaves it, holding its settings alone.
		if rr := runIn(t, src, nil, "recover"); rr.code != 0 && rr.code != 1 {
			t.Fatalf("recover of the sources: exit status %d; stderr:\n%s", rr.code, rr.stderr)
		}
		if _, err := os.Stat(filepath.Join(src, "t")); err == nil {
			t.Fatalf("recover left the source topic whose partitions are gone")
		}
	}
}
