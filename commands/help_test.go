package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTopicsNamedLikeHelp: h and help are topic names like any other for
// every command that takes TOPIC; only --help, -h and 'seglog help
// COMMAND' ask for help. Each run must do its job, never print help and
// exit 0 having done nothing.
func TestTopicsNamedLikeHelp(t *testing.T) {
	_, addr := newKafka(t)
	simple, _ := simpleFixture(t, "clean")
	for _, name := range []string{"h", "help"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			// want runs seglog with args and checks its exit status and
			// that it did not print help instead.
			want := func(code int, stdin string, args ...string) result {
				t.Helper()
				r := runIn(t, dir, strings.NewReader(stdin), args...)
				if r.code != code || strings.Contains(r.stdout, "USAGE:") {
					t.Fatalf("seglog %q: exit %d (want %d), stdout:\n%s\nstderr:\n%s", args, r.code, code, r.stdout, r.stderr)
				}
				return r
			}
			want(0, "1\n2\n3\n", "append", name, "--create", "--partitions", "2", "--partition", "0")
			if got := readValues(t, dir, name, 0); strings.Join(got, ",") != "1,2,3" {
				t.Fatalf("append %s --create stored %q", name, got)
			}
			want(0, "4\n", "append", "--partition", "1", name)
			if r := want(0, "", "read", name); r.stdout != "1\n2\n3\n4\n" {
				t.Errorf("read %s: %q", name, r.stdout)
			}
			if r := want(0, "", "read", "--", name); r.stdout != "1\n2\n3\n4\n" {
				t.Errorf("read -- %s: %q", name, r.stdout)
			}
			if r := want(0, "", "tail", name, "-n", "1", "--partition", "0"); r.stdout != "3\n" {
				t.Errorf("tail %s: %q", name, r.stdout)
			}
			if r := want(0, "", "describe", name); !strings.Contains(r.stdout, "topic "+name+" (") {
				t.Errorf("describe %s:\n%s", name, r.stdout)
			}
			if r := want(0, "", "dump-index", name, "--partition", "0"); !strings.Contains(r.stdout, "00000000000000000000.index") {
				t.Errorf("dump-index %s:\n%s", name, r.stdout)
			}
			if r := want(0, "", "verify-crc", name); !strings.Contains(r.stdout, name+"/0") {
				t.Errorf("verify-crc %s:\n%s", name, r.stdout)
			}
			if r := want(0, "", "--quiet", "verify-crc", name); r.stdout != "no problems found\n" {
				t.Errorf("verify-crc -q %s: %q", name, r.stdout)
			}
			want(0, "", "recover", name, "--json")
			if r := want(0, "", "retention-sweep", name, "--retention", "1000d"); !strings.Contains(r.stdout, "partition "+name+"/0") {
				t.Errorf("retention-sweep %s:\n%s", name, r.stdout)
			}
			for _, args := range [][]string{{"quarantine", name}, {"quarantine", "list", name}, {"quarantine", "purge", name, "--dry-run"}} {
				want(0, "", args...)
			}
			other := filepath.Join(t.TempDir(), "other")
			want(0, "", "copy-partition", name, "0", "--to", other)
			if _, err := os.Stat(filepath.Join(other, name, "0", "00000000000000000000.log")); err != nil {
				t.Errorf("copy-partition %s 0: %v", name, err)
			}
			var tarStream bytes.Buffer
			r := want(0, "", "copy-partition", name, "1", "--to", "-")
			tarStream.WriteString(r.stdout)
			if r := run(t, &tarStream, "-d", other, "import-partition", name, "1"); r.code != 0 {
				t.Errorf("import-partition %s 1: exit %d, %s", name, r.code, r.stderr)
			}
			if got := readValues(t, other, name, 1); strings.Join(got, ",") != "4" {
				t.Errorf("after import-partition %s 1: %q", name, got)
			}
			want(0, "", "import", "--partition", "0", simple, name)
			if got := readValues(t, dir, name, 0); len(got) <= 3 {
				t.Errorf("import into %s appended nothing: %q", name, got)
			}
			want(0, "", "kafka", "export", "--brokers", addr, "--create-topic", "--kafka-topic", "k."+name, name)
			want(0, "", "kafka", "import", "--brokers", addr, "--kafka-topic", "k."+name, name+"-back")
			if got := readValues(t, dir, name+"-back", 1); strings.Join(got, ",") != "4" {
				t.Errorf("kafka import into %s-back: %q", name, got)
			}
			// create last: the topic exists, so that is an error, not help.
			if r := want(1, "", "create", name); !strings.Contains(r.stderr, "already exists") {
				t.Errorf("create %s again: %s", name, r.stderr)
			}
			if r := want(0, "", "create", "--if-not-exists", name); r.stdout != "" {
				t.Errorf("create --if-not-exists %s: %q", name, r.stdout)
			}
		})
	}
	// A fresh topic named h, with create.
	dir := filepath.Join(t.TempDir(), "data")
	if r := runIn(t, dir, nil, "create", "h", "--partitions", "2"); r.code != 0 || strings.Contains(r.stdout, "USAGE:") {
		t.Fatalf("create h: exit %d, %s", r.code, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "h", "1")); err != nil {
		t.Errorf("create h made no partition 1: %v", err)
	}
}

// TestHelpRequests: --help, -h and 'seglog help ...' print the same help
// and exit 0; 'seglog h', 'seglog help nosuch' and a command's "help"
// argument that is no topic's are what they are, not requests for help.
func TestHelpRequests(t *testing.T) {
	app := NewApp(nil, nil, nil)
	var lines [][]string
	for _, c := range app.Commands {
		if c.Hidden {
			continue
		}
		lines = append(lines, []string{c.Name})
		for _, sub := range c.Subcommands {
			lines = append(lines, []string{c.Name, sub.Name})
		}
	}
	for _, line := range lines {
		want := run(t, nil, append(line, "--help")...)
		if want.code != 0 || !strings.Contains(want.stdout, "seglog "+strings.Join(line, " ")+" - ") || want.stderr != "" {
			t.Errorf("seglog %s --help: exit %d, stdout:\n%s\nstderr: %s", line, want.code, want.stdout, want.stderr)
		}
		for _, args := range [][]string{append(line, "-h"), append([]string{"help"}, line...), append([]string{"-q", "help"}, line...)} {
			if r := run(t, nil, args...); r != want {
				t.Errorf("seglog %q: exit %d, stdout:\n%s\nwant what seglog %s --help prints:\n%s", args, r.code, r.stdout, line, want.stdout)
			}
		}
	}
	if r := run(t, nil, "help"); r.code != 0 || r.stdout != run(t, nil, "--help").stdout {
		t.Errorf("seglog help: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"help", "nosuch"}, []string{`help: unknown command "nosuch"`, "seglog --help"}},
		{[]string{"help", "kafka", "nosuch"}, []string{`help: unknown command "kafka nosuch"`, "seglog kafka --help"}},
		{[]string{"help", "read", "orders"}, []string{`help: unknown command "read orders"`, "seglog read --help"}},
		{[]string{"help", "__complete"}, []string{`help: unknown command "__complete"`}},
		{[]string{"help", "--bogus"}, []string{"unknown flag --bogus"}},
		{[]string{"h"}, []string{`unknown command "h"`}},
		{[]string{"kafka", "h"}, []string{`kafka: unknown command "h"`}},
		{[]string{"kafka", "help"}, []string{`kafka: unknown command "help"`}},
	} {
		r := run(t, nil, c.args...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("seglog %q: exit %d, stdout %q; want 2 and nothing", c.args, r.code, r.stdout)
		}
		wantOneErrorLine(t, r.stderr, c.want...)
	}
}
