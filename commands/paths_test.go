package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pathsFixture is a data directory with topic t (two partitions, records
// in both) beside directories that hold no log. It returns the base
// directory (the data directory is base/data).
func pathsFixture(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	faultTopic(t, base, 2, numbered("v", 6))
	for _, d := range []string{"notes", "empty", "parts/0", "parts/1", "lonely/0"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"notes/todo.txt", "notes/0.index", "parts/1/README"} {
		if err := os.WriteFile(filepath.Join(base, f), []byte("not a log\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// A path that holds no log is an error (exit 1) naming it and what was
// looked for, for every read-only command that takes a path: never an
// empty log read with exit 0, never a topic named "." or "/".
func TestPathHoldsNoLog(t *testing.T) {
	base := pathsFixture(t)
	dir := filepath.Join(base, "data")
	notALog := "is not a partition directory (no segment files), a topic directory (no partition directories holding them) " +
		"or a log in the simple store/index layout (no .store files)"
	paths := []struct {
		path string
		want string
	}{
		{filepath.Join(base, "notes"), notALog},           // files, none of a log
		{filepath.Join(base, "empty"), notALog},           // nothing at all
		{filepath.Join(base, "lonely", "0"), notALog},     // named like a partition, empty
		{filepath.Join(base, "parts"), notALog},           // partition directories without segments
		{filepath.Join(base, "nosuch"), "does not exist"}, // a typo
		{dir, "is a data directory, not a partition or topic directory (name it with --data-dir"},
	}
	commands := [][]string{
		{"read"}, {"read", "--format", "json"}, {"tail"}, {"tail", "-f", "--timeout", "2s"},
		{"describe"}, {"describe", "--json"}, {"describe", "--timeline"}, {"verify-crc"}, {"verify-crc", "--json"}, {"dump-index"},
	}
	for _, p := range paths {
		for _, cmd := range commands {
			args := append(append([]string{}, cmd...), p.path)
			r := runIn(t, dir, nil, args...)
			if r.code != exitError {
				t.Errorf("%q: exit %d, want %d; stdout %q", args, r.code, exitError, r.stdout)
			}
			wantOneErrorLine(t, r.stderr, p.path+" "+p.want)
			if cmd[0] != "verify-crc" && r.stdout != "" {
				t.Errorf("%q: stdout %q", args, r.stdout)
			}
			if strings.Contains(r.stdout, "no problems found") {
				t.Errorf("%q: %q", args, r.stdout)
			}
		}
	}
}

// A topic directory named by path covers every partition of the topic,
// as the topic's name does.
func TestPathTopicDirectory(t *testing.T) {
	dir := filepath.Join(pathsFixture(t), "data")
	topicDir := filepath.Join(dir, "t")
	for _, c := range []struct{ byName, byPath []string }{
		{[]string{"read", "t"}, []string{"read", topicDir}},
		{[]string{"read", "t", "--partition", "1", "--format", "json"}, []string{"read", topicDir, "--partition", "1", "--format", "json"}},
		{[]string{"read", "t", "--offset", "-1", "--template", "%t %p %o %s\\n"}, []string{"read", topicDir, "--offset", "-1", "--template", "%t %p %o %s\\n"}},
		{[]string{"tail", "t", "-n", "3"}, []string{"tail", topicDir, "-n", "3"}},
		{[]string{"tail", "t", "--partition", "0"}, []string{"tail", topicDir, "--partition", "0"}},
		{[]string{"dump-index", "t", "--partition", "1", "--verify"}, []string{"dump-index", topicDir, "--partition", "1", "--verify"}},
		{[]string{"describe", "t"}, []string{"describe", topicDir}},
	} {
		want := mustRun(t, dir, "", c.byName...)
		got := runIn(t, dir, nil, c.byPath...)
		if got.code != 0 || got.stderr != "" {
			t.Errorf("%q: exit %d, stderr %q", c.byPath, got.code, got.stderr)
		}
		if got.stdout != want.stdout && c.byName[0] != "describe" {
			t.Errorf("%q prints\n%s\nbut %q prints\n%s", c.byPath, got.stdout, c.byName, want.stdout)
		}
		if want.stdout == "" {
			t.Errorf("%q prints nothing", c.byName)
		}
	}
	r := mustRun(t, dir, "", "verify-crc", topicDir, "--wide")
	if !strings.Contains(r.stdout, topicDir+"/0 ") || !strings.Contains(r.stdout, topicDir+"/1 ") || !strings.HasSuffix(r.stdout, "no problems found\n") {
		t.Errorf("verify-crc %s:\n%s", topicDir, r.stdout)
	}

	// dump-index needs to know which partition, as with the topic's name.
	r = runIn(t, dir, nil, "dump-index", topicDir)
	if r.code != exitUsage {
		t.Errorf("dump-index %s: exit %d, want %d", topicDir, r.code, exitUsage)
	}
	wantOneErrorLine(t, r.stderr, "topic "+topicDir+" has 2 partitions: name one with --partition 0..1")
	r = runIn(t, dir, nil, "dump-index", topicDir, "--partition", "2")
	if r.code != exitError {
		t.Errorf("dump-index %s --partition 2: exit %d, want %d", topicDir, r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "has partitions 0..1, not 2")

	// A partition directory named by path is still one.
	want := mustRun(t, dir, "", "read", "t", "--partition", "1", "--format", "json")
	if got := mustRun(t, dir, "", "read", filepath.Join(topicDir, "1"), "--format", "json"); got.stdout != want.stdout {
		t.Errorf("read %s/1 prints\n%s\nwant\n%s", topicDir, got.stdout, want.stdout)
	}
}

// tail -F on a path waits for a log to appear there, as on a topic's
// name; -f fails at once.
func TestTailFollowPathAppears(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t")
	later := filepath.Join(dir, "later")
	r := runIn(t, dir, nil, "tail", "-f", later)
	if r.code != exitError {
		t.Errorf("tail -f %s: exit %d, want %d", later, r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, later+" does not exist")
	tail := startTail(t, dir, "-F", later, "-n", "0", "--count", "2")
	eventually(t, 10*time.Second, "tail -F to say it waits", func() bool {
		return strings.Contains(tail.stderr.String(), later+" does not exist (an argument holding '/' is a path: to a partition or topic directory, or a segment's .log); waiting for it to appear (-F)")
	})
	mustRun(t, dir, "x\ny\n", "append", "later", "--create")
	if code := tail.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("tail -F exited %d: %s", code, tail.stderr)
	}
	if got := strings.Join(tail.got(), ","); got != "x,y" {
		t.Errorf("tail -F %s printed %q", later, got)
	}
}

// A data directory without topics (an unmounted volume looks like that)
// is nothing checked: exit 1 for the commands that check or change, a
// warning for those that list. A missing one is an error for all.
func TestEmptyDataDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	for _, d := range []string{".quarantine", ".groups"} { // no topics, only seglog's own
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, dir)
	noTopics := "data directory " + dir + " holds no topics"
	for _, c := range []struct {
		args []string
		verb string
	}{
		{[]string{"verify-crc"}, "check"},
		{[]string{"verify-crc", "--json", "--partition", "0"}, "check"},
		{[]string{"recover"}, "check"},
		{[]string{"recover", "--dry-run", "--json"}, "check"},
		{[]string{"retention-sweep", "--retention", "1d"}, "sweep"},
		{[]string{"retention-sweep", "--dry-run"}, "sweep"},
	} {
		r := runIn(t, dir, nil, c.args...)
		if r.code != exitError || r.stdout != "" {
			t.Errorf("%q over an empty data directory: exit %d, stdout %q; want %d and nothing", c.args, r.code, r.stdout, exitError)
		}
		wantOneErrorLine(t, r.stderr, "nothing to "+c.verb+": "+noTopics+" (is it the right one? name another with --data-dir or SEGLOG_DATA_DIR)")
	}
	for _, args := range [][]string{{"topics"}, {"topics", "--json"}, {"describe"}, {"describe", "--json"}, {"describe", "--timeline"}} {
		r := runIn(t, dir, nil, args...)
		if r.code != 0 {
			t.Errorf("%q over an empty data directory: exit %d", args, r.code)
		}
		if want := "seglog: warning: " + noTopics + " (name another with --data-dir or SEGLOG_DATA_DIR)\n"; r.stderr != want {
			t.Errorf("%q: stderr %q, want %q", args, r.stderr, want)
		}
		if args[len(args)-1] == "--json" && !strings.Contains(r.stdout, `"topics": []`) {
			t.Errorf("%q: stdout %q", args, r.stdout)
		}
		if r := runIn(t, dir, nil, append([]string{"--quiet"}, args...)...); r.code != 0 || r.stderr != "" {
			t.Errorf("--quiet %q: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	sameSnapshot(t, before, snapshot(t, dir))

	gone := filepath.Join(t.TempDir(), "unmounted")
	for _, args := range [][]string{{"verify-crc"}, {"recover"}, {"retention-sweep", "--retention", "1d"}, {"topics"}, {"describe"}, {"quarantine"}, {"quarantine", "purge"}} {
		r := runIn(t, gone, nil, args...)
		if r.code != exitError {
			t.Errorf("%q with a missing data directory: exit %d, want %d", args, r.code, exitError)
		}
		wantOneErrorLine(t, r.stderr, "data directory "+gone+" does not exist (name the right one with --data-dir or SEGLOG_DATA_DIR)")
	}
	if _, err := os.Stat(gone); err == nil {
		t.Errorf("%s was created", gone)
	}
}

// Over every topic, recover and retention-sweep skip topics that are
// symbolic links; when that leaves nothing, they did nothing: exit 1.
func TestEveryTopicSkipped(t *testing.T) {
	base := t.TempDir()
	other := faultTopic(t, filepath.Join(base, "other"), 1, numbered("v", 3), "--retention", "1d")
	dir := filepath.Join(base, "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "t"), filepath.Join(dir, "t")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		verb string
	}{{[]string{"recover"}, "check"}, {[]string{"retention-sweep"}, "sweep"}} {
		r := runIn(t, dir, nil, c.args...)
		if r.code != exitError {
			t.Errorf("%q over links only: exit %d, want %d", c.args, r.code, exitError)
		}
		wantLastErrorLine(t, r.stderr, "nothing to "+c.verb+": every topic of "+dir+" was skipped (see the warnings)")
		if !strings.Contains(r.stderr, "seglog: warning: skipping topic t:") {
			t.Errorf("%q: no warning about the link:\n%s", c.args, r.stderr)
		}
	}
}

// --partition P over every topic, when no topic has P, did nothing: exit 1.
func TestEveryTopicLacksPartition(t *testing.T) {
	dir := faultTopic(t, t.TempDir(), 2, numbered("v", 4), "--retention", "1d")
	for _, c := range []struct {
		args []string
		verb string
	}{{[]string{"recover", "--partition", "7"}, "check"}, {[]string{"retention-sweep", "--partition", "7", "--dry-run"}, "sweep"}} {
		r := runIn(t, dir, nil, c.args...)
		if r.code != exitError || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q; want %d and nothing", c.args, r.code, r.stdout, exitError)
		}
		wantOneErrorLine(t, r.stderr, "nothing to "+c.verb+": no topic of "+dir+" has partition 7")
	}
	mustRun(t, dir, "", "create", "wide", "--partitions", "8", "--retention", "1d")
	for _, c := range []struct {
		args []string
		out  string
	}{{[]string{"recover", "--partition", "7"}, "1 partition checked"}, {[]string{"retention-sweep", "--partition", "7", "--dry-run"}, "partition wide/7 "}} {
		if r := mustRun(t, dir, "", c.args...); !strings.Contains(r.stdout, c.out) {
			t.Errorf("%q:\n%s", c.args, r.stdout)
		}
	}
}

// verify-crc says "no problems found" only when everything asked for was
// checked; otherwise it names what was not, and exits 1.
func TestVerifyCRCReportsWhatWasNotChecked(t *testing.T) {
	dir := filepath.Join(pathsFixture(t), "data")
	for _, c := range []struct {
		args []string
		last string // stdout's last line
		err  string
	}{
		{[]string{"verify-crc", "nosuch"}, "nothing was checked (not checked: nosuch)", "topic nosuch in " + dir + ": topic not found"},
		{[]string{"verify-crc", "t", "nosuch"}, "no problems in what was checked, but the check could not finish (not checked: nosuch)", "topic nosuch in"},
		{[]string{"verify-crc", "t", "--partition", "5"}, "nothing was checked (not checked: t)", "topic t has partitions 0..1, not 5"},
		{[]string{"verify-crc", "nosuch", "t", "--quiet"}, "no problems in what was checked, but the check could not finish (not checked: nosuch)", "topic nosuch in"},
	} {
		r := runIn(t, dir, nil, c.args...)
		if r.code != exitError {
			t.Errorf("%q: exit %d, want %d", c.args, r.code, exitError)
		}
		if strings.Contains(r.stdout, "no problems found") || !strings.HasSuffix(r.stdout, "\n"+c.last+"\n") && r.stdout != c.last+"\n" {
			t.Errorf("%q: stdout\n%s\nwant it to end with %q", c.args, r.stdout, c.last)
		}
		wantOneErrorLine(t, r.stderr, c.err)
	}

	r := runIn(t, dir, nil, "verify-crc", "--json", "t", "nosuch")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var sum struct {
		Complete   bool     `json:"complete"`
		NotChecked []string `json:"not_checked"`
		Partitions []struct {
			Partition string `json:"partition"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("verify-crc --json: %v\n%s", err, r.stdout)
	}
	if r.code != exitError || sum.Complete || len(sum.NotChecked) != 1 || sum.NotChecked[0] != "nosuch" || len(sum.Partitions) != 2 {
		t.Errorf("verify-crc --json t nosuch: exit %d, summary %+v", r.code, sum)
	}
	// Checked in part (an index that cannot be read): TestFaultUnreadableFile.
}

// quarantine list TOPIC: a topic with nothing saved says so, naming the
// topics that have pieces there; a topic that is not there and has no
// pieces is an error; one deleted since still lists its pieces.
func TestQuarantineListTopic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	for _, topic := range []string{"t", "gone"} {
		mustRun(t, dir, "", "create", topic)
		mustRun(t, dir, "a\nb\n", "append", topic)
		if err := os.Truncate(logPath(dir, topic, 0), 40); err != nil { // tear the second record
			t.Fatal(err)
		}
		mustRun(t, dir, "", "recover", topic)
	}
	if err := os.RemoveAll(filepath.Join(dir, "gone")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "", "create", "u")
	quarantine := filepath.Join(dir, ".quarantine")
	holds := "(" + quarantine + " holds pieces of gone, t)"

	r := mustRun(t, dir, "", "quarantine", "list", "u")
	if want := "topic u: nothing in quarantine " + holds + "\n"; r.stdout != want || r.stderr != "" {
		t.Errorf("quarantine list u: stdout %q, stderr %q; want %q", r.stdout, r.stderr, want)
	}
	r = mustRun(t, dir, "", "quarantine", "list", "t", "--partition", "3")
	if want := "topic t (partition 3): nothing in quarantine " + holds + "\n"; r.stdout != want {
		t.Errorf("quarantine list t --partition 3: %q, want %q", r.stdout, want)
	}
	r = mustRun(t, dir, "", "quarantine", "list", "gone")
	if !strings.Contains(r.stdout, "| gone  |") || strings.Contains(r.stdout, "| t ") {
		t.Errorf("quarantine list gone (deleted since):\n%s", r.stdout)
	}
	before := snapshot(t, dir)
	for _, args := range [][]string{{"quarantine", "list", "nosuch"}, {"quarantine", "nosuch", "--json"}, {"quarantine", "purge", "nosuch"}, {"quarantine", "list", "u", "nosuch"}} {
		r := runIn(t, dir, nil, args...)
		if r.code != exitError {
			t.Errorf("%q: exit %d, want %d", args, r.code, exitError)
		}
		wantOneErrorLine(t, r.stderr, "topic nosuch in "+dir+": topic not found, and nothing of it is in quarantine "+holds)
		if strings.Contains(r.stdout, "purged") || strings.Contains(r.stdout, "is empty") {
			t.Errorf("%q: stdout %q", args, r.stdout)
		}
	}
	sameSnapshot(t, before, snapshot(t, dir))
}

// missingRunFixture is topic t of six partitions, 1..4 of them missing.
func missingRunFixture(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	dir := faultTopic(t, base, 6, numbered("v", 12), "--retention", "1d")
	for p := 1; p <= 4; p++ {
		if err := os.RemoveAll(filepath.Join(dir, "t", strconv.Itoa(p))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Partitions missing in a run are named as one range by every command,
// never one line each.
func TestMissingPartitionRun(t *testing.T) {
	dir := missingRunFixture(t)
	before := snapshot(t, dir)
	run := "partitions 1..4 of 0..5 are missing (" + filepath.Join(dir, "t", "1") + " to " + filepath.Join(dir, "t", "4") + ")"
	for _, c := range []struct {
		args  []string
		stdin string
		code  int
		out   []string // in stdout
	}{
		{[]string{"describe", "t"}, "", exitError, []string{"|      1..4 | missing |"}},
		{[]string{"describe"}, "", exitError, []string{"|      1..4 | missing |"}},
		{[]string{"describe", "t", "--timeline"}, "", exitError, []string{"t/1..4 missing"}},
		{[]string{"topics"}, "", exitError, []string{"| 6 (4 missing) |"}},
		{[]string{"recover", "t", "--dry-run"}, "", exitError, []string{"2 partitions checked, nothing to do"}},
		{[]string{"recover"}, "", exitError, []string{"2 partitions checked, nothing to do"}},
		{[]string{"retention-sweep", "t", "--dry-run"}, "", exitError, []string{"partition t/0 ", "partition t/5 "}},
		{[]string{"read", "t"}, "", exitError, nil},
		{[]string{"tail", "t"}, "", exitError, nil},
		{[]string{"dump-index", "t", "--partition", "0"}, "", exitError, nil},
		{[]string{"append", "t"}, "x\n", exitError, nil},
	} {
		r := runIn(t, dir, strings.NewReader(c.stdin), c.args...)
		if r.code != c.code {
			t.Errorf("%q: exit %d, want %d", c.args, r.code, c.code)
		}
		wantLastErrorLine(t, r.stderr, "topic t: "+run)
		if strings.Contains(r.stderr+r.stdout, "partition 2") {
			t.Errorf("%q names a partition of the run alone:\n%s%s", c.args, r.stdout, r.stderr)
		}
		for _, w := range c.out {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%q: stdout does not show %q:\n%s", c.args, w, r.stdout)
			}
		}
	}

	for _, args := range [][]string{{"verify-crc", "t"}, {"verify-crc"}} {
		r := runIn(t, dir, nil, args...)
		if r.code != exitProblems || r.stderr != "" {
			t.Errorf("%q: exit %d, stderr %q; want %d", args, r.code, r.stderr, exitProblems)
		}
		problem := "problem " + filepath.Join(dir, "t") + ": partition directories 1..4 missing, though the topic has higher ones: key routing would change\n"
		if strings.Count("\n"+r.stdout, "\nproblem ") != 1 || !strings.HasPrefix(r.stdout, problem) ||
			!strings.Contains(r.stdout, "| t/1..4    |  missing |") || !strings.HasSuffix(r.stdout, "\n1 problem found\n") {
			t.Errorf("%q:\n%s", args, r.stdout)
		}
	}

	// JSON keeps one object per partition of describe, as scripts count.
	r := runIn(t, dir, nil, "describe", "t", "--json")
	var doc struct {
		Topics []struct {
			Partitions []struct {
				Partition int  `json:"partition"`
				Missing   bool `json:"missing"`
			} `json:"partitions"`
		} `json:"topics"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Topics) != 1 {
		t.Fatalf("describe --json: %v\n%s", err, r.stdout)
	}
	var got []string
	for _, p := range doc.Topics[0].Partitions {
		got = append(got, fmt.Sprintf("%d:%v", p.Partition, p.Missing))
	}
	if want := "0:false 1:true 2:true 3:true 4:true 5:false"; strings.Join(got, " ") != want {
		t.Errorf("describe --json partitions %v, want %s", got, want)
	}
	sameSnapshot(t, before, snapshot(t, dir))
}

// strayCommands are the commands over a topic with a stray directory in
// it, and whether each warns about it.
var strayCommands = []struct {
	args  []string
	stdin string
	warns bool
}{
	{[]string{"verify-crc", "t"}, "", true},
	{[]string{"verify-crc"}, "", true},
	{[]string{"describe", "t"}, "", true},
	{[]string{"describe", "--timeline"}, "", true},
	{[]string{"topics"}, "", true},
	{[]string{"recover"}, "", true},
	{[]string{"recover", "t", "--partition", "1"}, "", true},
	{[]string{"retention-sweep", "--dry-run"}, "", true},
	{[]string{"read", "t"}, "", false},
	{[]string{"tail", "t", "-n", "2"}, "", false},
	{[]string{"dump-index", "t", "--partition", "1"}, "", false},
	{[]string{"append", "t"}, "x\n", false},
}

// strayFixture is topic t of two partitions with a stray directory named
// stray beside them.
func strayFixture(t *testing.T, stray string) (dir, strayDir string) {
	t.Helper()
	dir = faultTopic(t, t.TempDir(), 2, numbered("v", 6), "--retention", "1d")
	strayDir = filepath.Join(dir, "t", stray)
	if err := os.Mkdir(strayDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, strayDir
}

// checkStray checks one command's run over strayFixture.
func checkStray(t *testing.T, args []string, warns bool, strayDir string, code int, stdout, stderr string) {
	t.Helper()
	if code != 0 {
		t.Errorf("%q with a stray %s: exit %d, stderr:\n%s", args, strayDir, code, stderr)
	}
	warning := "seglog: warning: topic t: ignoring " + strayDir + ": partitions are numbered 0..9999, so it is none of the topic's (move it out of " +
		filepath.Dir(strayDir) + ")\n"
	if warns && !strings.HasPrefix(stderr, warning) || strings.Count(stderr, "ignoring") != map[bool]int{true: 1, false: 0}[warns] {
		t.Errorf("%q: stderr %q, want the one warning %q", args, stderr, warning)
	}
	if strings.Contains(stdout, "missing") {
		t.Errorf("%q reports missing partitions:\n%s", args, stdout)
	}
}

// A stray directory numbered beyond MaxPartitions is no partition: every
// command works on the topic as if it was not there (those that list or
// maintain warn of it) and never touches it. The name is MaxPartitions,
// the first number that is not a partition: the code before took it for
// one, with 9998 missing.
func TestStrayPartitionDirectory(t *testing.T) {
	dir, strayDir := strayFixture(t, "10000")
	for _, c := range strayCommands {
		r := runIn(t, dir, strings.NewReader(c.stdin), c.args...)
		checkStray(t, c.args, c.warns, strayDir, r.code, r.stdout, r.stderr)
	}
	if entries, err := os.ReadDir(strayDir); err != nil || len(entries) != 0 {
		t.Errorf("the stray directory was touched: %v, %v", entries, err)
	}
}

// TestStrayPartitionDirectoryBounded runs every command over a topic
// holding data/t/999999999 in a subprocess killed as soon as its resident
// memory passes 256 MiB: work that grows with the number in a directory's
// name shows within seconds, long before it would exhaust the machine
// (the code before took 327 s and 11.7 GB for a name of seven digits).
func TestStrayPartitionDirectoryBounded(t *testing.T) {
	dir, strayDir := strayFixture(t, "999999999")
	for _, c := range strayCommands {
		r := runBounded(t, 256<<20, dir, c.stdin, c.args...)
		checkStray(t, c.args, c.warns, strayDir, r.code, r.stdout, r.stderr)
	}
}

// runBounded runs seglog in a subprocess, killing it (and failing the
// test) when its resident memory passes maxRSS.
func runBounded(t *testing.T, maxRSS int64, dir, stdin string, args ...string) procResult {
	t.Helper()
	cmd := exec.Command(seglogBin(t), append([]string{"-d", dir}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	hang := time.After(3 * time.Minute) // generous: the machine is shared; this only catches a hang
	for {
		select {
		case <-done:
			return procResult{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
		case <-tick.C:
			if rss := residentBytes(cmd.Process.Pid); rss > maxRSS {
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("seglog %q: resident memory passed %d MiB (%d MiB), killed", args, maxRSS>>20, rss>>20)
			}
		case <-hang:
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("seglog %q did not end in 3 minutes", args)
		}
	}
}

// residentBytes is a process's resident set size, 0 when unknown (it has
// just exited).
func residentBytes(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(fields[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
