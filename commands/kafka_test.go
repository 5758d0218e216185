package commands

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// These tests run seglog against kfake, franz-go's in-process
// Kafka-protocol cluster.

// newKafka starts a one-broker cluster on loopback and returns it and its
// address.
func newKafka(t *testing.T, opts ...kfake.Opt) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, strings.Join(c.ListenAddrs(), ",")
}

// kafkaClient is a client of the test's own, to produce and check.
func kafkaClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// kafkaRecords consumes a Kafka topic from its start to the end offsets it
// has now, by partition.
func kafkaRecords(t *testing.T, addr, topic string) map[int32][]*kgo.Record {
	t.Helper()
	cl := kafkaClient(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	want, offsets := map[int32]int64{}, map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition], offsets[o.Partition] = o.Offset, kgo.NewOffset().AtStart()
		}
	})
	got := map[int32][]*kgo.Record{}
	if len(offsets) == 0 {
		return got
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets})
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consuming %s: timed out with %d partitions short", topic, len(want))
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], r)
			if r.Offset+1 >= want[r.Partition] {
				delete(want, r.Partition)
			}
		})
	}
	return got
}

// produce sends records to a Kafka topic and waits for their acks.
func produce(t *testing.T, addr string, recs ...*kgo.Record) {
	t.Helper()
	cl := kafkaClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// kafkaSource makes a topic with 3 partitions holding records with and
// without keys, empty and non-UTF-8 values, and returns its read --format
// json lines by partition.
func kafkaSource(t *testing.T, dir, topic string) map[int][]jsonLine {
	t.Helper()
	mustRun(t, dir, "", "create", topic, "--partitions", "3")
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	var in strings.Builder
	for i := range 30 {
		line := map[string]any{"partition": i % 3}
		switch i % 5 {
		case 0:
			line["value"] = fmt.Sprintf("plain %d", i)
		case 1:
			line["key"], line["value"] = fmt.Sprintf("user-%d", i%4), ""
		case 2:
			line["key_base64"], line["value_base64"] = b64("\xff\x00k"), b64(fmt.Sprintf("\x00\xfe\xff bytes %d", i))
		case 3:
			line["key"], line["value"] = fmt.Sprintf("user-%d", i%4), strings.Repeat("long ", 200)
		case 4:
			line["value"] = fmt.Sprintf("ünïcode %d\n", i)
		}
		b, _ := json.Marshal(line)
		in.Write(append(b, '\n'))
	}
	mustRun(t, dir, in.String(), "append", topic, "--input", "json", "--keep-partition")
	return linesByPartition(t, dir, topic)
}

func linesByPartition(t *testing.T, dir, topic string) map[int][]jsonLine {
	t.Helper()
	m := map[int][]jsonLine{}
	for _, l := range parseJSONLines(t, mustRun(t, dir, "", "read", topic, "--format", "json").stdout) {
		m[l.Partition] = append(m[l.Partition], l)
	}
	return m
}

// sameRecord compares two read --format json lines: key, value, offset,
// and the timestamp to the millisecond Kafka keeps.
func sameRecord(t *testing.T, want, got jsonLine) {
	t.Helper()
	w, g := want.record(t), got.record(t)
	if w.offset != g.offset || !bytes.Equal(w.key, g.key) || !bytes.Equal(w.value, g.value) ||
		want.TimestampNS/1e6*1e6 != got.TimestampNS {
		t.Errorf("record differs:\nwant %s\ngot  %s", want.raw, got.raw)
	}
}

func TestKafkaRoundTrip(t *testing.T) {
	_, addr := newKafka(t)
	src, dst := t.TempDir(), t.TempDir()
	want := kafkaSource(t, src, "orders")
	r := mustRun(t, src, "", "kafka", "export", "--brokers", addr, "--create-topic", "--kafka-topic", "k.orders", "orders")
	for _, s := range []string{"PARTITION", "exported 30 records", "to Kafka k.orders"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("export summary lacks %q:\n%s", s, r.stdout)
		}
	}
	// Kafka holds what seglog had, partition p in partition p, as CreateTime.
	recs := kafkaRecords(t, addr, "k.orders")
	for p, lines := range want {
		got := recs[int32(p)]
		if len(got) != len(lines) {
			t.Fatalf("Kafka partition %d holds %d records, want %d", p, len(got), len(lines))
		}
		for i, l := range lines {
			w := l.record(t)
			if !bytes.Equal(got[i].Key, w.key) || (len(w.key) == 0) != (got[i].Key == nil) || !bytes.Equal(got[i].Value, w.value) ||
				got[i].Timestamp.UnixMilli() != l.TimestampNS/1e6 || got[i].Attrs.TimestampType() != 0 {
				t.Errorf("Kafka partition %d record %d = key %q value %q ts %v, want %s", p, i, got[i].Key, got[i].Value, got[i].Timestamp, l.raw)
			}
		}
	}
	r = mustRun(t, dst, "", "kafka", "import", "--brokers", addr, "--kafka-topic", "k.orders", "--json", "copy")
	var sum kafkaSummary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || sum.Records != 30 || len(sum.Partitions) != 3 {
		t.Fatalf("import --json summary %q: %v", r.stdout, err)
	}
	got := linesByPartition(t, dst, "copy")
	for p, lines := range want {
		if len(got[p]) != len(lines) {
			t.Fatalf("partition %d: imported %d records, want %d", p, len(got[p]), len(lines))
		}
		for i := range lines {
			sameRecord(t, lines[i], got[p][i])
		}
	}
	// The position is saved: importing again adds nothing.
	r = mustRun(t, dst, "", "kafka", "import", "--brokers", addr, "--kafka-topic", "k.orders", "--json", "copy")
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || sum.Records != 0 {
		t.Errorf("second import: %s", r.stdout)
	}
	// Only newer records are, and --reset starts over.
	produce(t, addr, &kgo.Record{Topic: "k.orders", Partition: 1, Value: []byte("late")})
	mustRun(t, dst, "", "kafka", "import", "--brokers", addr, "--kafka-topic", "k.orders", "copy")
	if v := readValues(t, dst, "copy", 1); len(v) != len(want[1])+1 || v[len(v)-1] != "late" {
		t.Errorf("after a new Kafka record, partition 1 = %q", v)
	}
	if _, err := kadm.NewClient(kafkaClient(t, addr)).CreateTopic(context.Background(), 3, -1, nil, "other"); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, dst, nil, "kafka", "import", "--brokers", addr, "--kafka-topic", "other", "copy")
	wantOneErrorLine(t, r.stderr, "imported from Kafka topic k.orders, not other", "--reset")
	if r.code != 1 {
		t.Errorf("import from another Kafka topic: exit %d", r.code)
	}
	mustRun(t, dst, "", "kafka", "import", "--brokers", addr, "--kafka-topic", "other", "--reset", "copy")
	if b, err := os.ReadFile(filepath.Join(dst, ".kafka-import", "copy", "position.json")); err != nil || !strings.Contains(string(b), `"kafka_topic":"other"`) {
		t.Errorf("position after --reset: %s %v", b, err)
	}
}

// groupPosition is a group's committed position of topic/partition, -1
// when none.
func groupPosition(t *testing.T, dir, group, topic string, p int) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".groups", group, topic+".json"))
	if os.IsNotExist(err) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Partitions map[string]int64 }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("group file %s: %v", b, err)
	}
	if n, ok := f.Partitions[fmt.Sprint(p)]; ok {
		return n
	}
	return -1
}

// appendValues appends values to partition p of topic.
func appendValues(t *testing.T, dir, topic string, p int, from, to int) {
	t.Helper()
	var in strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&in, "v%d\n", i)
	}
	mustRun(t, dir, in.String(), "append", topic, "--partition", fmt.Sprint(p))
}

// startSeglog starts seglog as a process with its output collected.
func startSeglog(t *testing.T, dir string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(seglogBin(t), append([]string{"-d", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, &stdout, &stderr
}

// kafkaCount is the end offset of a Kafka partition.
func kafkaCount(adm *kadm.Client, topic string, p int32) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0
	}
	o, _ := ends.Lookup(topic, p)
	return o.Offset
}

// A killed export with --group loses nothing on restart and produces again
// only records after the last commit.
func TestKafkaExportGroupRestart(t *testing.T) {
	_, addr := newKafka(t, kfake.SeedTopics(1, "events"))
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "events")
	appendValues(t, dir, "events", 0, 0, 2000)
	cmd, _, stderr := startSeglog(t, dir, "kafka", "export", "--brokers", addr, "--group", "bridge", "--follow", "events")
	eventually(t, 20*time.Second, "a commit", func() bool { return groupPosition(t, dir, "bridge", "events", 0) > 0 })
	appendValues(t, dir, "events", 0, 2000, 2500)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	committed := groupPosition(t, dir, "bridge", "events", 0)
	appendValues(t, dir, "events", 0, 2500, 3000)
	r := mustRun(t, dir, "", "kafka", "export", "--brokers", addr, "--group", "bridge", "events")
	if !strings.Contains(r.stdout, "exported") {
		t.Errorf("export summary: %s (first run's stderr %s)", r.stdout, stderr)
	}
	if n := groupPosition(t, dir, "bridge", "events", 0); n != 3000 {
		t.Errorf("committed %d after the restart, want 3000", n)
	}
	var got []string
	for _, r := range kafkaRecords(t, addr, "events")[0] {
		got = append(got, string(r.Value))
	}
	// Kafka holds a prefix from the first run, then everything from the
	// commit on.
	tail := int(3000 - committed)
	first := len(got) - tail
	if first < int(committed) {
		t.Fatalf("Kafka holds %d records; with %d committed it needs at least %d", len(got), committed, 3000)
	}
	for i, v := range got {
		want := i
		if i >= first {
			want = int(committed) + i - first
		}
		if v != fmt.Sprintf("v%d", want) {
			t.Fatalf("Kafka record %d = %q, want v%d (first run produced %d, committed %d)", i, v, want, first, committed)
		}
	}
}

func TestKafkaExportFollow(t *testing.T) {
	_, addr := newKafka(t, kfake.SeedTopics(2, "live"))
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "live", "--partitions", "2")
	appendValues(t, dir, "live", 0, 0, 5)
	adm := kadm.NewClient(kafkaClient(t, addr))
	cmd, stdout, stderr := startSeglog(t, dir, "kafka", "export", "--brokers", addr, "-f", "live")
	eventually(t, 20*time.Second, "the first records in Kafka", func() bool { return kafkaCount(adm, "live", 0) == 5 })
	appendValues(t, dir, "live", 1, 5, 9)
	appendValues(t, dir, "live", 0, 9, 10)
	eventually(t, 20*time.Second, "the appended records in Kafka", func() bool {
		return kafkaCount(adm, "live", 0) == 6 && kafkaCount(adm, "live", 1) == 4
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("export -f after SIGTERM: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout.String(), "exported 10 records") {
		t.Errorf("summary: %s", stdout)
	}
	recs := kafkaRecords(t, addr, "live")
	if len(recs[1]) != 4 || string(recs[1][3].Value) != "v8" || string(recs[0][5].Value) != "v9" {
		t.Errorf("Kafka holds %v", recs)
	}
}

func TestKafkaImportFollow(t *testing.T) {
	_, addr := newKafka(t, kfake.SeedTopics(2, "feed"))
	dir := t.TempDir()
	produce(t, addr, &kgo.Record{Topic: "feed", Partition: 1, Value: []byte("old")})
	cmd, _, stderr := startSeglog(t, dir, "kafka", "import", "--brokers", addr, "--from", "end", "--follow", "feed")
	eventually(t, 20*time.Second, "the topic", func() bool {
		_, err := os.Stat(filepath.Join(dir, ".kafka-import", "feed", "position.json"))
		return err == nil
	})
	produce(t, addr, &kgo.Record{Topic: "feed", Partition: 1, Key: []byte("k"), Value: []byte("new"), Timestamp: time.UnixMilli(1700000000123)})
	eventually(t, 20*time.Second, "the new record in seglog", func() bool {
		return len(readValues(t, dir, "feed", 1)) == 1
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("import -f after SIGTERM: %v\n%s", err, stderr)
	}
	lines := linesByPartition(t, dir, "feed")[1]
	if len(lines) != 1 || lines[0].TimestampNS != 1700000000123000000 || *lines[0].Key != "k" || *lines[0].Value != "new" {
		t.Errorf("imported %v, want only the record produced after the start (--from end)", lines)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".kafka-import", "feed", "position.json"))
	if err != nil || !strings.Contains(string(b), `"1":2`) {
		t.Errorf("saved position %s (%v), want partition 1 at 2", b, err)
	}
}

func TestKafkaImportHeaders(t *testing.T) {
	_, addr := newKafka(t, kfake.SeedTopics(1, "hdr"))
	dir := t.TempDir()
	produce(t, addr,
		&kgo.Record{Topic: "hdr", Value: []byte("a")},
		&kgo.Record{Topic: "hdr", Value: []byte("b"), Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("1")}, {Key: "x"}}},
		&kgo.Record{Topic: "hdr", Value: []byte("c")})
	r := runIn(t, dir, nil, "kafka", "import", "--brokers", addr, "--no-drop-headers", "hdr")
	if r.code != 1 {
		t.Fatalf("--no-drop-headers: exit %d, stderr %s", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "partition 0 offset 1 has 2 headers")
	if v := readValues(t, dir, "hdr", 0); strings.Join(v, ",") != "a" {
		t.Errorf("after the refusal seglog holds %q, want the record before it", v)
	}
	r = mustRun(t, dir, "", "kafka", "import", "--brokers", addr, "hdr")
	if !strings.Contains(r.stderr, "dropped 2 headers of 1 record") {
		t.Errorf("no warning about the dropped headers: %s", r.stderr)
	}
	if v := readValues(t, dir, "hdr", 0); strings.Join(v, ",") != "a,b,c" {
		t.Errorf("seglog holds %q, want a,b,c", v)
	}
}

func TestKafkaErrors(t *testing.T) {
	_, addr := newKafka(t, kfake.SeedTopics(1, "small"))
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "small", "--partitions", "3")
	mustRun(t, dir, "x\n", "append", "small", "--partition", "2")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"unreachable", []string{"export", "--brokers", closed, "--dial-timeout", "1s", "--request-timeout", "2s", "small"}, 1,
			[]string{"cannot reach Kafka brokers " + closed}},
		{"fewer partitions", []string{"export", "--brokers", addr, "small"}, 1,
			[]string{"Kafka topic small has 1 partition, seglog topic small has 3", "needs 3", "--create-topic"}},
		{"missing for export", []string{"export", "--brokers", addr, "--kafka-topic", "nope", "small"}, 1,
			[]string{"Kafka topic nope does not exist", "--create-topic"}},
		{"missing for import", []string{"import", "--brokers", addr, "--kafka-topic", "nope", "small"}, 1,
			[]string{"Kafka topic nope does not exist"}},
		{"no brokers", []string{"export", "small"}, 2, []string{"--brokers HOST:PORT is required"}},
		{"bad broker", []string{"export", "--brokers", "localhost", "small"}, 2, []string{`"localhost" is not HOST:PORT`}},
		{"user without mechanism", []string{"export", "--brokers", addr, "--sasl-user", "u", "small"}, 2, []string{"need --sasl-mechanism"}},
		{"bad mechanism", []string{"export", "--brokers", addr, "--sasl-mechanism", "gssapi", "--sasl-user", "u", "small"}, 2, []string{"must be plain, scram-sha-256 or scram-sha-512"}},
		{"mechanism without user", []string{"import", "--brokers", addr, "--sasl-mechanism", "plain", "small"}, 2, []string{"needs --sasl-user"}},
		{"cert without key", []string{"export", "--brokers", addr, "--tls-cert", "c.pem", "small"}, 2, []string{"--tls-cert and --tls-key go together"}},
		{"missing CA", []string{"export", "--brokers", addr, "--tls-ca", "nope.pem", "small"}, 1, []string{"--tls-ca", "no such file"}},
		{"replication without create", []string{"export", "--brokers", addr, "--replication-factor", "3", "small"}, 2, []string{"only goes with --create-topic"}},
		{"bad from", []string{"import", "--brokers", addr, "--from", "middle", "small"}, 2, []string{"--from must be beginning or end"}},
		{"bad timeout", []string{"export", "--brokers", addr, "--dial-timeout", "0s", "small"}, 2, []string{"--dial-timeout must be a duration above 0"}},
		{"no command", nil, 2, []string{"missing command export or import"}},
		{"unknown command", []string{"frob"}, 2, []string{`unknown command "frob"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := runIn(t, dir, nil, append([]string{"kafka"}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			if tc.code != 0 {
				wantOneErrorLine(t, r.stderr, tc.want...)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	// A seglog topic with fewer partitions than the Kafka one is refused.
	mustRun(t, dir, "", "create", "one")
	_, addr3 := newKafka(t, kfake.SeedTopics(3, "three"))
	r := runIn(t, dir, nil, "kafka", "import", "--brokers", addr3, "--kafka-topic", "three", "one")
	if r.code != 1 {
		t.Fatalf("import into fewer partitions: exit %d", r.code)
	}
	wantOneErrorLine(t, r.stderr, "topic one has 1 partition, Kafka topic three has 3")
}

func TestKafkaExportTooLarge(t *testing.T) {
	_, addr := newKafka(t)
	cl := kafkaClient(t, addr)
	limit := "2000"
	resp, err := kadm.NewClient(cl).CreateTopic(context.Background(), 1, -1, map[string]*string{"max.message.bytes": &limit}, "big")
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "big")
	mustRun(t, dir, "small\n"+strings.Repeat("x", 5000)+"\nafter\n", "append", "big")
	r := runIn(t, dir, nil, "kafka", "export", "--brokers", addr, "--group", "g", "big")
	if r.code != 1 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "record big/0 offset 1 (5000 bytes", "max.message.bytes 2000")
	if n := groupPosition(t, dir, "g", "big", 0); n != 1 {
		t.Errorf("committed %d, want 1: only the record before the refused one", n)
	}
}

func TestKafkaSASL(t *testing.T) {
	_, addr := newKafka(t, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "admin", "s3cret"), kfake.SeedTopics(1, "auth"))
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "auth")
	mustRun(t, dir, "a\n", "append", "auth")
	t.Setenv("SEGLOG_KAFKA_PASSWORD", "n0t-the-passw0rd")
	r := runIn(t, dir, nil, "kafka", "export", "--brokers", addr, "--sasl-mechanism", "scram-sha-256", "--sasl-user", "admin", "auth")
	if r.code != 1 || strings.Contains(r.stderr, "n0t-the-passw0rd") {
		t.Fatalf("wrong password: exit %d, stderr %s", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "the login as admin with SASL scram-sha-256 failed")
	t.Setenv("SEGLOG_KAFKA_PASSWORD", "s3cret")
	mustRun(t, dir, "", "kafka", "export", "--brokers", addr, "--sasl-mechanism", "scram-sha-256", "--sasl-user", "admin", "auth")
}

// writeTLSFiles makes a certificate authority and, signed by it, a server
// certificate for 127.0.0.1 and a client certificate. The client's files
// and the authority's certificate are written as PEM into dir.
func writeTLSFiles(t *testing.T, dir string) (server tls.Certificate, pool *x509.CertPool) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	pool = x509.NewCertPool()
	pool.AddCert(ca)
	issue := func(serial int64, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: now.Add(-time.Hour),
			NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	}
	certPEM, keyPEM := issue(2, x509.ExtKeyUsageServerAuth)
	if server, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM = issue(3, x509.ExtKeyUsageClientAuth)
	for name, b := range map[string][]byte{
		"ca.pem":         pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		"client.pem":     certPEM,
		"client-key.pem": keyPEM,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return server, pool
}

func TestKafkaTLS(t *testing.T) {
	dir := t.TempDir()
	server, pool := writeTLSFiles(t, dir)
	_, addr := newKafka(t, kfake.SeedTopics(1, "secure"), kfake.TLS(&tls.Config{Certificates: []tls.Certificate{server},
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}))
	mustRun(t, dir, "", "create", "secure")
	mustRun(t, dir, "over TLS\n", "append", "secure")
	ca, cert, key := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	short := []string{"--dial-timeout", "2s", "--request-timeout", "3s"}
	for _, tc := range []struct {
		name string
		args []string
		want string // in the error; "" for success
	}{
		{"no TLS", nil, "is TLS missing?"},
		{"unknown authority", []string{"--tls", "--tls-cert", cert, "--tls-key", key}, "certificate"},
		{"no client certificate", []string{"--tls-ca", ca}, "cannot reach Kafka brokers"},
		{"mutual TLS", []string{"--tls-ca", ca, "--tls-cert", cert, "--tls-key", key}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"kafka", "export", "--brokers", addr}, short...), tc.args...)
			r := runIn(t, dir, nil, append(args, "secure")...)
			if tc.want == "" {
				if r.code != 0 || !strings.Contains(r.stdout, "exported 1 record") {
					t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
				}
				return
			}
			if r.code != 1 {
				t.Fatalf("exit %d, want 1: %s", r.code, r.stderr)
			}
			wantOneErrorLine(t, r.stderr, tc.want)
		})
	}
}

// A cluster that goes away mid-export fails it within the request timeout,
// committing only what was acknowledged: never a hang.
func TestKafkaExportBrokerGone(t *testing.T) {
	c, addr := newKafka(t, kfake.SeedTopics(1, "gone"))
	dir := t.TempDir()
	mustRun(t, dir, "", "create", "gone")
	appendValues(t, dir, "gone", 0, 0, 10)
	cmd, _, stderr := startSeglog(t, dir, "kafka", "export", "--brokers", addr, "--dial-timeout", "1s", "--request-timeout", "2s",
		"-f", "--group", "g", "gone")
	eventually(t, 20*time.Second, "the commit", func() bool { return groupPosition(t, dir, "g", "gone", 0) == 10 })
	c.Close()
	appendValues(t, dir, "gone", 0, 10, 20)
	start := time.Now()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("export after the cluster went away: %v, stderr %s", err, stderr)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %v to notice", d)
	}
	wantOneErrorLine(t, stderr.String(), "Kafka brokers "+addr, "no record acknowledged for 2s")
	if n := groupPosition(t, dir, "g", "gone", 0); n != 10 {
		t.Errorf("committed %d, want 10", n)
	}
}

// --partition, --offset and --since choose what is exported, as in read.
func TestKafkaExportSelection(t *testing.T) {
	_, addr := newKafka(t, kfake.SeedTopics(3, "sel"))
	dir := t.TempDir()
	want := kafkaSource(t, dir, "sel")
	mustRun(t, dir, "", "kafka", "export", "--brokers", addr, "--partition", "1", "--offset", "-2", "sel")
	mustRun(t, dir, "", "kafka", "export", "--brokers", addr, "--partition", "2", "--since", "1h", "sel")
	recs := kafkaRecords(t, addr, "sel")
	if len(recs[0]) != 0 || len(recs[1]) != 2 || len(recs[2]) != len(want[2]) {
		t.Fatalf("Kafka holds %d, %d, %d records; want 0, 2, %d", len(recs[0]), len(recs[1]), len(recs[2]), len(want[2]))
	}
	if got, w := recs[1][1].Value, want[1][len(want[1])-1].record(t).value; !bytes.Equal(got, w) {
		t.Errorf("last record of partition 1: %q, want %q", got, w)
	}
	r := runIn(t, dir, nil, "kafka", "export", "--brokers", addr, "--offset", "99", "sel")
	if r.code != 1 || !strings.Contains(r.stderr, "99") {
		t.Errorf("--offset past the end: exit %d, %s", r.code, r.stderr)
	}
}

// TestKafkaImportChecksFirst: kafka import learns everything that could
// make it fail (the saved position, the Kafka offsets) before it creates
// the topic, so a refusal leaves nothing behind.
func TestKafkaImportChecksFirst(t *testing.T) {
	_, addr := newKafka(t, kfake.SeedTopics(1, "a", "b"))
	produce(t, addr, &kgo.Record{Topic: "a", Value: []byte("x")}, &kgo.Record{Topic: "b", Value: []byte("y")})
	dir := t.TempDir()
	mustRun(t, dir, "", "kafka", "import", "--brokers", addr, "--kafka-topic", "a", "feed")
	if err := os.RemoveAll(filepath.Join(dir, "feed")); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, dir, nil, "kafka", "import", "--brokers", addr, "--kafka-topic", "b", "feed")
	if r.code != exitError {
		t.Fatalf("import from another Kafka topic than the saved position's: exit %d, want 1; stderr %q", r.code, r.stderr)
	}
	wantOneErrorLine(t, r.stderr, "feed", "Kafka topic a, not b", "--reset")
	if _, err := os.Stat(filepath.Join(dir, "feed")); err == nil {
		t.Error("kafka import refused the position but created the topic")
	}
}
