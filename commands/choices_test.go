package commands

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seglog/seglog/kafkabridge"
)

// choiceCases are the flags taking a closed set of values: a command line
// the value is appended to, the flag, and every value it takes.
var choiceCases = []struct {
	command string   // as the completion scripts name it
	args    []string // up to the flag's value
	flag    string
	values  []string
}{
	{"read", []string{"read", "t", "--format"}, "format", []string{"value", "json", "dump", "raw"}},
	{"tail", []string{"tail", "t", "--format"}, "format", []string{"value", "json", "dump", "raw"}},
	{"read", []string{"read", "t", "--isolation"}, "isolation", []string{"read_uncommitted", "read_committed"}},
	{"import", []string{"import", "src", "t", "--isolation"}, "isolation", []string{"read_uncommitted", "read_committed"}},
	{"append", []string{"append", "t", "--sync"}, "sync", []string{"exit", "batch", "never"}},
	{"import", []string{"import", "src", "t", "--sync"}, "sync", []string{"exit", "batch", "never"}},
	{"kafka-import", []string{"kafka", "import", "--brokers", "b:9092", "t", "--sync"}, "sync", []string{"exit", "batch", "never"}},
	{"append", []string{"append", "t", "--input"}, "input", []string{"lines", "json"}},
	{"append", []string{"append", "t", "--input", "json", "--timestamps"}, "timestamps", []string{"input", "now"}},
	{"import", []string{"import", "src", "t", "--timestamps"}, "timestamps", []string{"now", "mtime"}},
	{"alter", []string{"alter", "t", "--unset"}, "unset", []string{"retention", "retention-bytes", "segment-bytes", "roll-after", "index-interval"}},
	{"dump-index", []string{"dump-index", "t", "--kind"}, "kind", []string{"index", "timeindex", "both"}},
	{"kafka-export", []string{"kafka", "export", "--brokers", "b:9092", "t", "--compression"}, "compression", []string{"none", "gzip", "snappy", "lz4", "zstd"}},
	{"kafka-import", []string{"kafka", "import", "--brokers", "b:9092", "t", "--from"}, "from", []string{"beginning", "end"}},
	{"kafka-export", []string{"kafka", "export", "--brokers", "b:9092", "--sasl-user", "u", "t", "--sasl-mechanism"}, "sasl-mechanism", []string{"plain", "scram-sha-256", "scram-sha-512"}},
	{"kafka-import", []string{"kafka", "import", "--brokers", "b:9092", "--sasl-user", "u", "t", "--sasl-mechanism"}, "sasl-mechanism", []string{"plain", "scram-sha-256", "scram-sha-512"}},
}

// Each flag of a closed set refuses any other value with a usage error
// listing them all, lists them in its --help, and the completion scripts
// offer exactly them.
func TestChoiceFlags(t *testing.T) {
	bash, err := os.ReadFile(filepath.Join("..", "completions", "seglog.bash"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cc := range choiceCases {
		t.Run(strings.Join(cc.args, " "), func(t *testing.T) {
			r := run(t, nil, append(cc.args, "bogus")...)
			if r.code != exitUsage || r.stdout != "" {
				t.Errorf("--%s bogus: exit %d, stdout %q; want exit %d and no output", cc.flag, r.code, r.stdout, exitUsage)
			}
			wantOneErrorLine(t, r.stderr, append([]string{"--" + cc.flag + " must be", `not "bogus"`}, cc.values...)...)

			name := cc.args[:1]
			if name[0] == "kafka" {
				name = cc.args[:2]
			}
			help := run(t, nil, append(name, "--help")...)
			line := regexp.MustCompile(`(?m)^ *--` + cc.flag + ` [A-Z]+ .*$`).FindString(help.stdout)
			for _, v := range cc.values {
				if !regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\b`).MatchString(line) {
					t.Errorf("%s --help does not list %q for --%s: %q", cc.command, v, cc.flag, line)
				}
			}

			// bash: `    CMD:--flag) _seglog_reply 'a\nb' ;;`
			m := regexp.MustCompile(`(?m)^ *` + regexp.QuoteMeta(cc.command+":--"+cc.flag) + `[|)][^']*'([^']*)' ;;`).FindSubmatch(bash)
			if m == nil || string(m[1]) != strings.Join(cc.values, "\n") {
				t.Errorf("completions/seglog.bash does not offer %q for %s --%s", cc.values, cc.command, cc.flag)
			}
		})
	}
}

// Every choice flag of every command has a case in choiceCases.
func TestChoiceFlagsCovered(t *testing.T) {
	for _, cc := range complCommands(docsApp()) {
		for _, f := range docFlags(cc.cmd.Flags) {
			if f.values == nil {
				continue
			}
			found := false
			for _, c := range choiceCases {
				found = found || (c.command == cc.key && c.flag == f.long && strings.Join(c.values, " ") == strings.Join(f.values, " "))
			}
			if !found {
				t.Errorf("%s --%s takes %q: no case in choiceCases", cc.key, f.long, f.values)
			}
		}
	}
}

// --compression names only codecs the Kafka bridge has.
func TestKafkaCompressionsKnown(t *testing.T) {
	for _, name := range kafkaCompressions.names() {
		if !kafkabridge.KnownCompression(name) {
			t.Errorf("--compression %s: kafkabridge has no such codec", name)
		}
	}
}

func TestOrList(t *testing.T) {
	for items, want := range map[string]string{"": "", "a": "a", "a b": "a or b", "a b c": "a, b or c"} {
		if got := orList(strings.Fields(items)); got != want {
			t.Errorf("orList(%q) = %q, want %q", items, got, want)
		}
	}
}
