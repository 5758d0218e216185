package commands

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/format"
)

// helpExample is one command line shown in a command's --help.
type helpExample struct {
	command string // "quarantine", "copy-partition", ...
	line    string // as shown, without the leading indentation
}

// isExampleLine: an indented line that runs seglog, directly or as part of
// a pipe or process substitution.
var isExampleLine = regexp.MustCompile(`(^|[|(]\s*)seglog\s`)

// helpExamples returns every example line in the Descriptions of the
// visible commands (and their subcommands) of NewApp.
func helpExamples(t *testing.T) []helpExample {
	t.Helper()
	var out []helpExample
	// examples adds the example lines of one help text.
	examples := func(name, description string) {
		n := 0
		for _, l := range strings.Split(description, "\n") {
			if !strings.HasPrefix(l, "  ") {
				continue
			}
			l = strings.TrimSpace(l)
			if isExampleLine.MatchString(l) {
				out = append(out, helpExample{command: name, line: l})
				n++
			}
		}
		if n == 0 && description != "" {
			t.Errorf("seglog %s --help shows no example", name)
		}
	}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			name := strings.TrimSpace(prefix + " " + c.Name)
			examples(name, c.Description)
			walk(name, c.Subcommands)
		}
	}
	app := NewApp(nil, nil, nil)
	examples("", app.Description)
	walk("", app.Commands)
	return out
}

// exampleSpec says how to run one help example and what to check.
type exampleSpec struct {
	skip      string        // why it is not run
	empty     bool          // run in an empty directory, not the fixture
	code      int           // expected exit status
	stdout    []string      // each must occur in stdout
	feed      string        // appended (a line) to orders and app-logs while it runs
	interrupt time.Duration // SIGINT once stdout is out, but not before this long (it runs until Ctrl-C)
}

// exampleSpecs, by example line. Lines not listed must exit 0.
var exampleSpecs = map[string]exampleSpec{
	// Not runnable here: they follow a system log or install into system
	// directories and other shells.
	"tail -F /var/log/app.log | seglog append app-logs --create":                        {skip: "follows a system log file until Ctrl-C"},
	"seglog copy-partition orders 0 --to - | ssh host seglog import-partition orders 0": {skip: "needs another host; copy-partition's help runs the same pipe into a local data directory"},
	"seglog completion bash > /etc/bash_completion.d/seglog":                            {skip: "installs into /etc"},
	"seglog delete users":                                             {skip: "asks on a terminal: TestDeleteAsksOnTerminal answers it on a pseudo-terminal"},
	"source <(seglog completion zsh)":                                 {skip: "zsh syntax, for a zsh session"},
	"seglog completion fish > ~/.config/fish/completions/seglog.fish": {skip: "installs into $HOME"},
	// A Kafka cluster: commands/kafka_test.go runs them against kfake.
	"seglog kafka export --brokers kafka1:9092 --create-topic orders":                                          {skip: "needs a Kafka cluster"},
	"seglog kafka import --brokers kafka1:9092 --follow orders":                                                {skip: "needs a Kafka cluster"},
	"seglog kafka export --brokers kafka1:9092,kafka2:9092 --create-topic orders":                              {skip: "needs a Kafka cluster"},
	"seglog kafka export --brokers kafka1:9092 --follow --group to-kafka orders":                               {skip: "needs a Kafka cluster"},
	"seglog kafka export --brokers kafka1:9092 --tls --sasl-mechanism scram-sha-512 --sasl-user seglog orders": {skip: "needs a Kafka cluster"},
	"seglog kafka import --brokers kafka1:9092 orders":                                                         {skip: "needs a Kafka cluster"},
	"seglog kafka import --brokers kafka1:9092 --kafka-topic prod.orders --follow --from end orders":           {skip: "needs a Kafka cluster"},
	"seglog import /var/lib/kafka/data/orders-0 orders --create":                                               {skip: "needs a broker's log directory; TestKafkaImport imports the committed one"},

	"seglog create orders --partitions 3":                          {empty: true, stdout: nil},
	"seglog create app-logs --segment-bytes 256MiB --retention 7d": {empty: true},
	"seglog create orders --if-not-exists":                         {},

	"seglog append users --key-delimiter : <<< 'user-1:hello'": {},

	"seglog read orders": {stdout: []string{"order 7\n", "order 1\n"}},
	"seglog read orders --partition 2 --offset -10 --format json":                          {stdout: []string{`"topic":"orders","partition":2`, `"key":"user-`}},
	"seglog read orders --format dump --skip-corrupt":                                      {stdout: []string{"order 7"}},
	"seglog read orders --group billing --count 1000":                                      {stdout: []string{"order 16\n"}},
	"seglog read orders --template '%p/%o %k=%s\\n'":                                       {stdout: []string{"0/0 user-7=order 7\n"}},
	"seglog read ./backup/data/orders/0 --format json | seglog append orders --input json": {},

	"seglog tail orders":                                                         {stdout: []string{"order 20\n"}},
	"seglog tail -f orders --format json":                                        {stdout: []string{`"value":"order 20"`, `"value":"fed"`}, feed: "fed", interrupt: 300 * time.Millisecond},
	"seglog tail -F app-logs -n 0 --template '%p/%o %s\\n'":                      {stdout: []string{"0/12 fed\n"}, feed: "fed", interrupt: 300 * time.Millisecond},
	"seglog tail -f orders -n 0 --count 1 --timeout 30s   # wait for one record": {stdout: []string{"fed\n"}, feed: "fed"},

	"seglog describe":                               {stdout: []string{"orders", "app-logs"}},
	"seglog describe orders --partition 2":          {stdout: []string{"PARTITION", "NEXT"}},
	"seglog describe ./backup/data/orders/0 --json": {stdout: []string{`"records": 4`}},
	"seglog describe --groups orders":               {stdout: []string{"group billing"}},

	"seglog metrics":                      {stdout: []string{`seglog_partition_next_offset{topic="orders",partition="0"}`, `seglog_topic_up{topic="app-logs"} 1`}},
	"seglog metrics orders --partition 0": {stdout: []string{`seglog_partition_up{topic="orders",partition="0"} 1`}},
	"seglog metrics --output /var/lib/node_exporter/textfile/seglog.prom   # from cron": {skip: "writes into /var/lib; TestMetricsOutputReplacesTheFile writes the same into a temporary directory"},

	"seglog topics":                                  {stdout: []string{"orders", "app-logs", "users"}},
	"seglog -d ./backup/data topics":                 {stdout: []string{"orders"}},
	"seglog topics --json | jq -r '.topics[].topic'": {stdout: []string{"app-logs\norders\nusers\n"}},

	"seglog verify-crc": {stdout: []string{"no problems found"}},
	"seglog verify-crc orders --partition 2 --jobs 1":                            {stdout: []string{"no problems found"}},
	"seglog verify-crc ./backup/data/orders/0":                                   {stdout: []string{"no problems found"}},
	"seglog verify-crc orders --json | jq -c 'select(.severity == \"problem\")'": {},

	"seglog copy-partition orders 0 --to ./new/data":                                        {stdout: []string{"new/data/orders/0"}},
	"seglog copy-partition orders 0 --to ./data --to-topic orders-v2 --to-partition 3":      {stdout: []string{"orders-v2/3"}},
	"seglog copy-partition orders 0 --to ./backup/data --force --throttle 50M":              {stdout: []string{"backup/data/orders/0"}},
	"seglog copy-partition orders 0 --to - | seglog -d ./restore import-partition orders 0": {stdout: []string{"restore/orders/0"}},
	"seglog import-partition orders 3 --force < orders-0.tar":                               {stdout: []string{"orders/3"}},

	"seglog reassign --plan moves.json --dry-run":                                      {stdout: []string{"| update "}},
	"seglog reassign --plan moves.json --execute --throttle 50M   # again to catch up": {stdout: []string{"| unchanged "}},
	"seglog reassign --plan moves.json --verify --json | jq -r '.moves[].result'":      {stdout: []string{"ok\nok\n"}},
	"seglog reassign --plan moves.json --verify --remove-source":                       {stdout: []string{"ok, source removed"}},
}

// exampleFixture builds, once per test, the directory the help examples
// run in: ./data with the topics they name (orders: 3 partitions of keyed
// records and a group; app-logs; users), ./backup/data holding a copy of
// orders/0, ./rescue holding orders/0's segment files, ./app.log and
// ./orders-0.tar (a copy-partition stream).
func exampleFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	var orders strings.Builder
	for i := 1; i <= 20; i++ {
		orders.WriteString("user-" + strconv.Itoa(i) + ":order " + strconv.Itoa(i) + "\n")
	}
	mustRun(t, data, "", "create", "orders", "--partitions", "3")
	mustRun(t, data, orders.String(), "append", "orders", "--key-delimiter", ":")
	var logs strings.Builder
	for i := 1; i <= 12; i++ {
		logs.WriteString("log line " + strconv.Itoa(i) + "\n")
	}
	mustRun(t, data, logs.String(), "append", "app-logs", "--create")
	mustRun(t, data, "user-0:hi\n", "append", "users", "--create", "--key-delimiter", ":")
	mustRun(t, data, "", "read", "orders", "--group", "billing", "--count", "2")
	mustRun(t, data, "", "copy-partition", "orders", "0", "--to", filepath.Join(dir, "backup", "data"))
	tar := mustRun(t, data, "", "copy-partition", "orders", "0", "--to", "-")
	writeFile(t, filepath.Join(dir, "orders-0.tar"), tar.stdout)
	writeFile(t, filepath.Join(dir, "app.log"), "started\nlistening on :8080\n")
	// A plan moving orders' partitions 1 and 2 to ./moved, carried out
	// (its paths are relative to where the examples run).
	writeFile(t, filepath.Join(dir, "moves.json"), `{"version": 1, "moves": [
		{"topic": "orders", "partition": 1, "from": "data", "to": "moved"},
		{"topic": "orders", "partition": 2, "from": "data", "to": "moved"}]}`)
	for _, p := range []string{"1", "2"} {
		mustRun(t, data, "", "copy-partition", "orders", p, "--to", filepath.Join(dir, "moved"))
	}
	// A segment copied off alone, with its index files.
	if out, err := exec.Command("cp", "-a", filepath.Join(data, "orders", "0"), filepath.Join(dir, "rescue")).CombinedOutput(); err != nil {
		t.Fatalf("copying a segment: %v\n%s", err, out)
	}
	// A log in the simple store/index layout, for import.
	if out, err := exec.Command("cp", "-a", filepath.Join("..", "testdata", "simplelog", "clean"), filepath.Join(dir, "old-log")).CombinedOutput(); err != nil {
		t.Fatalf("copying the simple log fixture: %v\n%s", err, out)
	}
	return dir
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the fixture into a fresh directory for one example.
func copyTree(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	if out, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", from, to, err, out)
	}
	return to
}

// shellEnv is the environment example lines run in: seglog (this test
// binary under that name) first in $PATH, no $SEGLOG_DATA_DIR.
func shellEnv(t *testing.T) []string {
	binDir := filepath.Dir(seglogBin(t))
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SEGLOG_DATA_DIR=") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// runShellLine runs line with bash -c (and pipefail) in dir and returns its exit status,
// stdout and stderr. With spec.interrupt, line is one seglog command run
// with exec, so that the SIGINT sent after that long reaches seglog itself.
func runShellLine(t *testing.T, dir, line string, spec exampleSpec) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	script := "set -o pipefail; " + line // a failing seglog before a pipe fails the line
	if spec.interrupt > 0 {
		script = "exec " + line
	}
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = shellEnv(t)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var feeder sync.WaitGroup
	if spec.feed != "" {
		// A follower sees records appended after it started: feed until
		// what it should print shows up (or it ends).
		bin := seglogBin(t)
		feeder.Add(1)
		go func() {
			defer feeder.Done()
			want := spec.stdout[len(spec.stdout)-1]
			for i := 0; i < 50 && !strings.Contains(stdout.String(), want); i++ {
				select {
				case <-done:
					return
				case <-time.After(200 * time.Millisecond):
				}
				for _, topic := range []string{"orders", "app-logs"} {
					feed := exec.Command(bin, "-q", "-d", filepath.Join(dir, "data"), "append", topic, "--partition", "0")
					feed.Stdin = strings.NewReader(spec.feed + "\n")
					if out, err := feed.CombinedOutput(); err != nil {
						t.Errorf("feeding %s: %v\n%s", topic, err, out)
						return
					}
				}
			}
		}()
	}
	if spec.interrupt > 0 {
		// Ctrl-C once what it should print is out (a loaded machine may
		// take longer than spec.interrupt), or after 30 s at the latest.
		go func() {
			deadline := time.After(30 * time.Second)
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			start := time.Now()
			for {
				select {
				case <-done:
					return
				case <-deadline:
				case <-tick.C:
					if time.Since(start) < spec.interrupt || !containsAll(stdout.String(), spec.stdout) {
						continue
					}
				}
				cmd.Process.Signal(syscall.SIGINT)
				return
			}
		}()
	}
	err := cmd.Wait()
	close(done)
	feeder.Wait()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", line, err)
		}
		code = ee.ExitCode()
	}
	return code, stdout.String(), stderr.String()
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestHelpExamples runs every example shown in `seglog COMMAND --help`, as
// written, in a copy of a fixture directory, and checks its exit status
// and, where the help says or the spec knows, its output.
func TestHelpExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary once per example")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	examples := helpExamples(t)
	if len(examples) < 30 {
		t.Fatalf("found only %d help examples", len(examples))
	}
	fixture := exampleFixture(t)
	used := map[string]bool{}
	for _, ex := range examples {
		spec := exampleSpecs[ex.line]
		used[ex.line] = true
		t.Run(ex.command+"/"+ex.line, func(t *testing.T) {
			if spec.skip != "" {
				t.Skip(spec.skip)
			}
			if strings.Contains(ex.line, "| jq ") {
				if _, err := exec.LookPath("jq"); err != nil {
					t.Skip("needs jq")
				}
			}
			dir := t.TempDir()
			if !spec.empty {
				dir = copyTree(t, fixture)
			}
			code, stdout, stderr := runShellLine(t, dir, ex.line, spec)
			if code != spec.code {
				t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, spec.code, stdout, stderr)
			}
			for _, want := range spec.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout does not contain %q:\n%s\nstderr:\n%s", want, stdout, stderr)
				}
			}
		})
	}
	for line := range exampleSpecs {
		if !used[line] {
			t.Errorf("exampleSpecs has %q, which no --help shows any more", line)
		}
	}
}

// tourStep is one command of the README's tour with what its comments
// promise.
type tourStep struct {
	line           string
	code           int
	stdout, stderr []string
}

var (
	backquoted = regexp.MustCompile("`([^`]*)`")
	exitNote   = regexp.MustCompile(`#\s*exit (\d+)`)
)

// readmeTour extracts the ```sh block of README.md's "## A 5-minute tour".
// Comment lines after a command describe it: "# prints ..." (each
// `quoted` part must be in stdout), "# reports ..." (the same for stderr)
// and "# exit N" (its exit status; also after "# prints ...,").
func readmeTour(t *testing.T) []tourStep {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## A 5-minute tour\n")
	if !ok {
		t.Fatal(`README.md has no "## A 5-minute tour" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, block, ok := strings.Cut(sec, "\n```sh\n")
	if !ok {
		t.Fatal("the tour has no ```sh block")
	}
	block, _, ok = strings.Cut(block, "\n```\n")
	if !ok {
		t.Fatal("the tour's ```sh block does not end")
	}
	var steps []tourStep
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if !strings.HasPrefix(l, "#") {
			steps = append(steps, tourStep{line: l})
			if m := exitNote.FindStringSubmatch(l); m != nil {
				steps[len(steps)-1].code, _ = strconv.Atoi(m[1])
			}
			continue
		}
		if len(steps) == 0 {
			t.Fatalf("tour comment before any command: %s", l)
		}
		s := &steps[len(steps)-1]
		if m := exitNote.FindStringSubmatch(l); m != nil {
			s.code, _ = strconv.Atoi(m[1])
		}
		var quoted []string
		for _, m := range backquoted.FindAllStringSubmatch(l, -1) {
			quoted = append(quoted, m[1])
		}
		switch {
		case strings.Contains(l, "prints"):
			if len(quoted) == 0 {
				t.Errorf("tour: %q says what it prints without `quoting` it", l)
			}
			s.stdout = append(s.stdout, quoted...)
		case strings.Contains(l, "reports"):
			s.stderr = append(s.stderr, quoted...)
		}
	}
	return steps
}

// TestReadmeTour runs the README's 5-minute tour line by line, in order,
// in an empty directory holding the binary as ./seglog, and checks what
// its comments say each line prints and its exit status.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary once per line")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	steps := readmeTour(t)
	if len(steps) < 15 {
		t.Fatalf("the tour has only %d commands", len(steps))
	}
	dir := t.TempDir()
	if err := os.Symlink(seglogBin(t), filepath.Join(dir, "seglog")); err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		code, stdout, stderr := runShellLine(t, dir, s.line, exampleSpec{})
		if code != s.code {
			t.Fatalf("tour line %d %q: exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", i+1, s.line, code, s.code, stdout, stderr)
		}
		for _, want := range s.stdout {
			if !strings.Contains(stdout, want) {
				t.Errorf("tour line %d %q: stdout does not contain %q:\n%s", i+1, s.line, want, stdout)
			}
		}
		for _, want := range s.stderr {
			if !strings.Contains(stderr, want) {
				t.Errorf("tour line %d %q: stderr does not contain %q:\n%s", i+1, s.line, want, stderr)
			}
		}
	}
}

// README's read section says what a time search reads where timestamps go
// back in the words of verify-crc's timestamp-backwards note.
func TestReadmeSaysWhatTimeSearchReads(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "t")
	log := logPath(dir, "t", 0)
	var b []byte
	for o, ts := range []int64{50, 20} {
		b = format.AppendRecord(b, &format.Record{Offset: uint64(o), Timestamp: ts, Value: []byte("v")})
	}
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, dir, "", "verify-crc", "t")
	_, note, ok := strings.Cut(r.stdout, "older than the record before it (1970-01-01T00:00:00.000000050Z); ")
	note, _, _ = strings.Cut(note, "\n")
	if !ok || note == "" {
		t.Fatalf("verify-crc notes no timestamp going back:\n%s", r.stdout)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, read, _ := strings.Cut(string(readme), "\n### read ")
	read, _, _ = strings.Cut(read, "\n### ")
	read = strings.Join(strings.Fields(strings.ReplaceAll(read, "`", "")), " ")
	if !strings.Contains(read, note) {
		t.Errorf("README's read section does not say what verify-crc's note says:\n%s", note)
	}
}
