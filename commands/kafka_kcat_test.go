package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// kcatMessage is a line of 'kcat -C -J'.
type kcatMessage struct {
	Partition int     `json:"partition"`
	Offset    int64   `json:"offset"`
	TSType    string  `json:"tstype"`
	TS        int64   `json:"ts"`
	Key       *string `json:"key"`
	Payload   *string `json:"payload"`
}

// kcat runs kcat with args and stdin, failing the test unless it exits 0.
func kcat(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("kcat", args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %q: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// kcatConsume reads a whole Kafka topic with kcat, by partition.
func kcatConsume(t *testing.T, addr, topic string) map[int][]kcatMessage {
	t.Helper()
	out := kcat(t, "", "-C", "-J", "-e", "-q", "-b", addr, "-t", topic, "-o", "beginning")
	m := map[int][]kcatMessage{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var msg kcatMessage
		if err := json.Unmarshal([]byte(l), &msg); err != nil {
			t.Fatalf("kcat -J line %q: %v", l, err)
		}
		m[msg.Partition] = append(m[msg.Partition], msg)
	}
	return m
}

// A client no one here wrote sees what seglog exported, and what it
// produces seglog imports exactly.
func TestKafkaKcat(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("kcat is not installed (apt-get install kcat; .ci/run installs it)")
	}
	_, addr := newKafka(t, kfake.SeedTopics(2, "from-kcat"))
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "orders", "--partitions", "2")
	mustRun(t, dir, "user-1:hello\nuser-2:wörld\n", "append", "orders", "--partition", "0", "--key-delimiter", ":")
	mustRun(t, dir, "no key\n\n", "append", "orders", "--partition", "1")
	want := linesByPartition(t, dir, "orders")
	mustRun(t, dir, "", "kafka", "export", "--brokers", addr, "--create-topic", "orders")
	got := kcatConsume(t, addr, "orders")
	for p, lines := range want {
		if len(got[p]) != len(lines) {
			t.Fatalf("kcat sees %d records in partition %d, want %d", len(got[p]), p, len(lines))
		}
		for i, l := range lines {
			m := got[p][i]
			keyOK := l.Key == nil && m.Key == nil || l.Key != nil && m.Key != nil && *l.Key == *m.Key
			if !keyOK || m.Payload == nil || *m.Payload != *l.Value || m.TS != l.TimestampNS/1e6 || m.TSType != "create" || m.Offset != int64(l.Offset) {
				t.Errorf("kcat sees %+v, want %s", m, l.raw)
			}
		}
	}

	kcat(t, "a:first\nb:second\n", "-P", "-K:", "-b", addr, "-t", "from-kcat", "-p", "0")
	kcat(t, "c:third\n", "-P", "-K:", "-b", addr, "-t", "from-kcat", "-p", "1")
	produced := kcatConsume(t, addr, "from-kcat")
	mustRun(t, dir, "", "kafka", "import", "--brokers", addr, "from-kcat")
	imported := linesByPartition(t, dir, "from-kcat")
	for p, msgs := range produced {
		if len(imported[p]) != len(msgs) {
			t.Fatalf("partition %d: imported %d records, kcat produced %d", p, len(imported[p]), len(msgs))
		}
		for i, m := range msgs {
			l := imported[p][i]
			if *l.Key != *m.Key || *l.Value != *m.Payload || l.TimestampNS != m.TS*1e6 || int64(l.Offset) != m.Offset {
				t.Errorf("imported %s, kcat produced %+v", l.raw, m)
			}
		}
	}
	if fmt.Sprint(len(produced[0]), len(produced[1])) != "2 1" {
		t.Errorf("kcat produced %v", produced)
	}
}
