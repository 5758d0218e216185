package commands

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// holdDirLock flocks dir as another writer or maintenance job would, until
// the test ends.
func holdDirLock(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}

func TestDeleteExitCodes(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "a", "--partitions", "2")
	mustRun(t, dir, "x\ny\n", "append", "a")
	mustRun(t, dir, "", "create", "b")

	r := runIn(t, dir, nil, "delete", "a")
	if r.code != exitUsage || r.stdout != "" {
		t.Fatalf("without --yes off a terminal: exit %d, stdout %q; want %d and nothing", r.code, r.stdout, exitUsage)
	}
	wantOneErrorLine(t, r.stderr, "pass --yes", "a")

	r = runIn(t, dir, nil, "delete", "a", "nosuch", "--yes")
	if r.code != exitError || r.stdout != "" {
		t.Fatalf("a missing topic: exit %d, stdout %q; want %d", r.code, r.stdout, exitError)
	}
	wantOneErrorLine(t, r.stderr, "topic nosuch", "nothing was deleted")

	r = runIn(t, dir, nil, "delete", "a", "--bogus")
	if r.code != exitUsage {
		t.Fatalf("an unknown flag: exit %d, want %d", r.code, exitUsage)
	}
	r = runIn(t, dir, nil, "delete", "--yes")
	if r.code != exitUsage {
		t.Fatalf("no topic: exit %d, want %d", r.code, exitUsage)
	}
	wantOneErrorLine(t, r.stderr, "missing TOPIC")

	// A writer on b's partition refuses the whole command: a stays too.
	holdDirLock(t, filepath.Join(dir, "b", "0"))
	r = runIn(t, dir, nil, "delete", "a", "b", "--yes")
	if r.code != exitError {
		t.Fatalf("a writer's lock held: exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "partition b/0 is locked by another process (pid ", "a writer", "nothing was deleted")
	for _, p := range []string{"a/0", "a/1", "b/0"} {
		if _, err := os.Stat(filepath.Join(dir, p, "00000000000000000000.log")); err != nil {
			t.Errorf("after a refused delete: %v", err)
		}
	}

	r = runIn(t, dir, nil, "delete", "a", "--yes")
	if r.code != exitOK || r.stdout != "deleted topic a (2 partitions, 58 B)\n" {
		t.Fatalf("delete a: exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Fatalf("topic a still there after delete: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".delete-") {
			t.Errorf("delete left %s behind", e.Name())
		}
	}
}

// On a terminal delete asks for each topic, and deletes only those the
// answer is yes to.
func TestDeleteAsksOnTerminal(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "a")
	mustRun(t, dir, "", "create", "b", "--partitions", "3")
	m, s := openPty(t)
	defer m.Close()
	defer s.Close()
	if _, err := m.WriteString("n\ny\n"); err != nil {
		t.Fatal(err)
	}
	r := run(t, s, "-d", dir, "delete", "a", "b")
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"delete topic a (1 partition, 0 B)? [y/N] ", "left topic a as it is", "delete topic b (3 partitions, 0 B)? [y/N] "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if r.stdout != "deleted topic b (3 partitions, 0 B)\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "0")); err != nil {
		t.Errorf("topic a, answered no, is gone: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "b")); !os.IsNotExist(err) {
		t.Errorf("topic b, answered yes, is still there: %v", err)
	}
}

func TestAlterExitCodes(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "t", "--retention", "7d")
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"alter", "t"}, exitUsage, []string{"nothing to change"}},
		{[]string{"alter", "t", "--segment-bytes", "0"}, exitUsage, []string{"--segment-bytes must be at least 1 byte"}},
		{[]string{"alter", "t", "--unset", "nope"}, exitUsage, []string{`--unset must be`, `not "nope"`}},
		{[]string{"alter", "t", "--retention", "1d", "--unset", "retention"}, exitUsage, []string{"exclude each other"}},
		{[]string{"alter", "nosuch", "--retention", "1d"}, exitError, []string{"topic nosuch", "not found"}},
		{[]string{"alter", "t", "x", "--retention", "1d"}, exitUsage, []string{"one TOPIC expected"}},
	} {
		r := runIn(t, dir, nil, c.args...)
		if r.code != c.code || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q; want %d and nothing", c.args, r.code, r.stdout, c.code)
		}
		wantOneErrorLine(t, r.stderr, c.want...)
	}
	settings := func() string {
		b, err := os.ReadFile(filepath.Join(dir, "t", ".seglog.json"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	before := settings()
	if r := mustRun(t, dir, "", "alter", "t", "--unset", "retention", "--roll-after", "2h", "--dry-run"); r.stdout != "retention: 7d -> (default)\nroll-after: (default) -> 2h0m0s\n" {
		t.Errorf("dry run: stdout %q", r.stdout)
	}
	if settings() != before {
		t.Errorf("a dry run changed the settings file: %s", settings())
	}
	mustRun(t, dir, "", "alter", "t", "--unset", "retention", "--roll-after", "2h")
	// What alter stored, create's checks read: the same topic asked for
	// with the new settings exists, with the old ones it differs.
	mustRun(t, dir, "", "create", "t", "--if-not-exists", "--roll-after", "2h")
	if r := runIn(t, dir, nil, "create", "t", "--if-not-exists", "--retention", "7d"); r.code != exitError {
		t.Errorf("create --if-not-exists with the old retention: exit %d, want %d", r.code, exitError)
	}

	holdDirLock(t, filepath.Join(dir, "t"))
	r := runIn(t, dir, nil, "alter", "t", "--retention", "1d")
	if r.code != exitError {
		t.Fatalf("maintenance lock held: exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "topic t is locked by another process (pid ", "try again")
}

func TestAddPartitionsExitCodes(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "t", "--partitions", "2")
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"add-partitions", "t"}, exitUsage, []string{"missing --partitions"}},
		{[]string{"add-partitions", "t", "--partitions", "10001"}, exitUsage, []string{"between 1 and 10000"}},
		{[]string{"add-partitions", "t", "--partitions", "1"}, exitError, []string{"topic t has 2 partitions, more than the 1 asked for", "never removed"}},
		{[]string{"add-partitions", "nosuch", "--partitions", "3"}, exitError, []string{"topic nosuch", "not found"}},
	} {
		r := runIn(t, dir, nil, c.args...)
		if r.code != c.code || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q; want %d and nothing", c.args, r.code, r.stdout, c.code)
		}
		wantOneErrorLine(t, r.stderr, c.want...)
	}
	r := mustRun(t, dir, "", "add-partitions", "t", "--partitions", "3")
	if r.stdout != "topic t: 2 -> 3 partitions\n" || !strings.Contains(r.stderr, "seglog: warning: records with a key") {
		t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
	}
	// The new partition takes appends and reads as the others do.
	mustRun(t, dir, "x\n", "append", "t", "--partition", "2")
	if r := mustRun(t, dir, "", "read", "t", "--partition", "2"); r.stdout != "x\n" {
		t.Errorf("read the new partition: %q", r.stdout)
	}
	if r := mustRun(t, dir, "", "-q", "add-partitions", "t", "--partitions", "4"); r.stderr != "" {
		t.Errorf("-q still warned: %q", r.stderr)
	}
}

// describe shows the stored settings, "default" where unset, and null in
// --json.
func TestDescribeShowsSettings(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "t", "--retention-bytes", "1GiB", "--index-interval", "8")
	r := mustRun(t, dir, "", "describe", "t")
	if want := "settings: retention default, retention-bytes 1GiB, segment-bytes default, roll-after default, index-interval 8\n"; !strings.Contains(r.stdout, "\n"+want) {
		t.Errorf("describe lacks %q:\n%s", want, r.stdout)
	}
	r = mustRun(t, dir, "", "describe", "t", "--json")
	for _, want := range []string{`"retention_bytes": "1GiB"`, `"index_interval": "8"`, `"retention": null`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe --json lacks %s:\n%s", want, r.stdout)
		}
	}
	// A partition directory named by path has no settings of its own.
	if r := mustRun(t, dir, "", "describe", filepath.Join(dir, "t", "0"), "--json"); strings.Contains(r.stdout, `"settings"`) {
		t.Errorf("a partition directory shows settings:\n%s", r.stdout)
	}
}

// A real delete killed at random moments, then recover: the topic is
// either whole (every record read back, nothing damaged) or gone, and at
// no moment half there.
func TestCrashDelete(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary many times")
	}
	s := newCrashSuite(t)
	s.each(t, 6, 40, nil, func(t *testing.T, rng *rand.Rand) {
		dir, _ := crashTopic(t, rng.Uint64(), 4, 64<<10, 2, "--segment-bytes", "4KiB")
		// Another topic, which must not notice.
		mustRun(t, dir, "a\nb\n", "append", "other", "--create")
		want := crashRead(t, dir, "t")
		calib := copyTree(t, dir)
		c := s.calibrate(t, nil, "-d", calib, "delete", "--yes", "t")
		s.kill(t, rng, 0, c.work, nil, "-d", dir, "delete", "--yes", "t")
		present := func(when string) bool {
			if _, err := os.Lstat(filepath.Join(dir, "t")); os.IsNotExist(err) {
				if r := runIn(t, dir, nil, "read", "t"); r.code != exitError {
					t.Fatalf("%s: the topic's directory is gone, yet read exits %d", when, r.code)
				}
				return false
			}
			s.sameLines(t, when, crashRead(t, dir, "t"), want)
			crashClean(t, dir, when)
			return true
		}
		before := present("after the kill")
		mustRun(t, dir, "", "recover")
		if after := present("after recover"); after != before {
			t.Fatalf("recover made the topic present %v, before it %v", after, before)
		}
		crashNoLeftovers(t, dir)
		if r := mustRun(t, dir, "", "read", "other"); r.stdout != "a\nb\n" {
			t.Fatalf("the other topic reads %q after the delete", r.stdout)
		}
		s.state(t, map[bool]string{true: "topic whole", false: "topic gone"}[before])
	})
}

// A tail -F of a topic deleted and made again says once that it was
// deleted, waits, and prints the new topic's records.
func TestTailFollowsDeletedTopic(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "t", "--partitions", "2")
	mustRun(t, dir, "a\nb\n", "append", "t")
	tail := startTail(t, dir, "-F", "t", "--count", "3")
	eventually(t, 10*time.Second, "tail -F to print the records there", func() bool { return len(tail.got()) == 2 })
	mustRun(t, dir, "", "delete", "t", "--yes")
	eventually(t, 10*time.Second, "tail -F to say the topic was deleted", func() bool {
		return strings.Contains(tail.stderr.String(), "topic t was deleted")
	})
	mustRun(t, dir, "", "create", "t")
	mustRun(t, dir, "new\n", "append", "t")
	if code := tail.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("tail -F exited %d: %s", code, tail.stderr)
	}
	if got := tail.got(); len(got) != 3 || got[2] != "new" {
		t.Errorf("tail -F printed %q", got)
	}
	if n := strings.Count(tail.stderr.String(), "was deleted"); n != 1 {
		t.Errorf("said %d times that the topic was deleted; stderr:\n%s", n, tail.stderr)
	}
}
