package commands

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seglog/seglog/logstore"
)

// kafkaFixtures is the committed Apache Kafka fixtures, read in place.
var kafkaFixtures = filepath.Join("..", "testdata", "kafka")

// hashTree is every entry under dir: its name, mode, size, mtime and, for
// a file, its bytes' SHA-256.
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		sum := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		sums[path] = sum
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// Every command, on Apache Kafka's layout, leaves every file as it was:
// what only reads, and what is refused because it would write. Their
// exit statuses are the contract's.
func TestKafkaReadOnly(t *testing.T) {
	logdir := filepath.Join(kafkaFixtures, "logdir")
	damaged := filepath.Join(kafkaFixtures, "damaged")
	dest := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-d", logdir, "topics"}, 0},
		{[]string{"-d", logdir, "describe"}, 0},
		{[]string{"-d", logdir, "describe", "--json"}, 0},
		{[]string{"-d", logdir, "metrics"}, 0},
		{[]string{"-d", logdir, "read", "orders", "--format", "json"}, 0},
		{[]string{"-d", logdir, "read", "events", "--format", "dump"}, 0},
		{[]string{"-d", logdir, "read", "payments", "--isolation", "read_committed", "--merge"}, 0},
		{[]string{"-d", logdir, "read", "events", "--since", "2024-01-01T00:00:30Z", "--until", "2024-01-01T00:01:00Z"}, 0},
		{[]string{"-d", logdir, "tail", "orders", "-n", "3"}, 0},
		{[]string{"-d", logdir, "verify-crc"}, 0},
		{[]string{"-d", logdir, "verify-crc", "--json", "--jobs", "1"}, 0},
		{[]string{"-d", logdir, "dump-index", "events", "--verify"}, 0},
		{[]string{"dump-index", filepath.Join(logdir, "payments-0"), "--json", "--verify"}, 0},
		{[]string{"read", filepath.Join(logdir, "orders-2")}, 0},
		{[]string{"verify-crc", filepath.Join(damaged, "flip-records", "orders-2")}, exitProblems},
		{[]string{"read", filepath.Join(damaged, "flip-records", "orders-2")}, 1},
		{[]string{"read", filepath.Join(damaged, "flip-records", "orders-2"), "--skip-corrupt"}, 0},
		{[]string{"read", filepath.Join(damaged, "zip-bomb", "events-0")}, 1},
		{[]string{"dump-index", filepath.Join(damaged, "lying-index", "orders-0"), "--verify"}, exitProblems},
		{[]string{"-d", dest, "import", filepath.Join(logdir, "events-0"), "events", "--create"}, 0},
		// Refused: they would write.
		{[]string{"-d", logdir, "append", "orders"}, exitUsage},
		{[]string{"-d", logdir, "create", "new"}, exitUsage},
		{[]string{"-d", logdir, "recover"}, exitUsage},
		{[]string{"-d", logdir, "retention-sweep", "--retention", "1s"}, exitUsage},
		{[]string{"-d", logdir, "delete", "orders", "--yes"}, exitUsage},
		{[]string{"-d", logdir, "groups", "reset", "g", "--to-earliest"}, exitUsage},
		{[]string{"-d", logdir, "quarantine", "purge"}, exitUsage},
		{[]string{"-d", logdir, "copy-partition", "orders", "0", "--to", dest}, exitUsage},
		{[]string{"-d", logdir, "read", "orders", "--group", "g"}, exitUsage},
		{[]string{"-d", logdir, "tail", "orders", "--group", "g"}, exitUsage},
	} {
		before := hashTree(t, kafkaFixtures)
		r := run(t, nil, tc.args...)
		if r.code != tc.code {
			t.Errorf("%q: exit %d, want %d\n%s", tc.args, r.code, tc.code, r.stderr)
		}
		after := hashTree(t, kafkaFixtures)
		for path, sum := range before {
			if after[path] != sum {
				t.Errorf("%q changed %s", tc.args, path)
			}
		}
		for path := range after {
			if _, ok := before[path]; !ok {
				t.Errorf("%q created %s", tc.args, path)
			}
		}
	}
}

// copyFile copies src to dst, its bytes only.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tail -f follows a Kafka partition across a roll (a new segment appears)
// and a retention delete (the oldest goes), printing every record once.
func TestKafkaTailFollow(t *testing.T) {
	src := filepath.Join(kafkaFixtures, "logdir", "orders-1")
	dir := filepath.Join(t.TempDir(), "orders-1")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	segs := []string{"00000000000000000000", "00000000000000000021", "00000000000000000042"}
	place := func(base string) {
		for _, ext := range []string{".log", ".index", ".timeindex"} {
			copyFile(t, filepath.Join(src, base+ext), filepath.Join(dir, base+ext))
		}
	}
	copyFile(t, filepath.Join(src, "leader-epoch-checkpoint"), filepath.Join(dir, "leader-epoch-checkpoint"))
	place(segs[0])
	place(segs[1])
	done := make(chan result)
	go func() {
		done <- run(t, nil, "tail", "-f", dir, "-n", "1000", "--count", "56", "--timeout", "10s", "--format", "json")
	}()
	time.Sleep(3 * kafkaPoll)
	place(segs[2]) // the roll
	time.Sleep(3 * kafkaPoll)
	for _, ext := range []string{".log", ".index", ".timeindex"} { // retention
		os.Remove(filepath.Join(dir, segs[0]+ext))
	}
	r := <-done
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	offsets := regexp.MustCompile(`"offset":(\d+),`).FindAllStringSubmatch(r.stdout, -1)
	if len(offsets) != 56 {
		t.Fatalf("%d records, want 56:\n%s", len(offsets), r.stdout)
	}
	for i, m := range offsets {
		if m[1] != strconv.Itoa(i) {
			t.Fatalf("record %d has offset %s", i, m[1])
		}
	}
}

// tail -f on a Kafka partition whose directory is replaced: by a copy of
// the same log it reads on; by another log (the topic deleted and created
// again) it reads that from its start, with a warning.
func TestKafkaTailFollowReplaced(t *testing.T) {
	fill := func(t *testing.T, dir, src string, bases ...string) {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, base := range bases {
			for _, ext := range []string{".log", ".index", ".timeindex"} {
				copyFile(t, filepath.Join(kafkaFixtures, "logdir", src, base+ext), filepath.Join(dir, base+ext))
			}
		}
	}
	for _, tc := range []struct {
		name, src string
		bases     []string
		lines     string // tail -n
		count     int    // records tail prints: orders-1's last -n, then what the new directory adds
		warning   string // "" for none
	}{
		{"same log", "orders-1", []string{"00000000000000000000", "00000000000000000021", "00000000000000000042"}, "1000", 56, ""},
		{"same log, nothing printed", "orders-1", []string{"00000000000000000000", "00000000000000000021", "00000000000000000042"}, "0", 0, ""},
		{"another log", "orders-2", []string{"00000000000000000000", "00000000000000000024"}, "1000", 56 + 48, "holds another log now (it has no offset 55); reading it from its start"},
		{"another log, nothing printed", "orders-2", []string{"00000000000000000000", "00000000000000000024"}, "0", 48, "holds another log now (it has no offset 55); reading it from its start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "orders-1")
			fill(t, dir, "orders-1", "00000000000000000000", "00000000000000000021", "00000000000000000042")
			done := make(chan result)
			go func() {
				done <- run(t, nil, "tail", "-f", dir, "-n", tc.lines, "--timeout", "2s", "--format", "json")
			}()
			time.Sleep(5 * kafkaPoll) // tail (in-process) started, well before its idle --timeout
			next := filepath.Join(root, "next")
			fill(t, next, tc.src, tc.bases...)
			if err := os.Rename(dir, filepath.Join(root, "old")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(next, dir); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if n := strings.Count(r.stdout, `"offset":`); n != tc.count {
				t.Errorf("%d records, want %d", n, tc.count)
			}
			if tc.warning == "" && r.stderr != "" || tc.warning != "" && !strings.Contains(r.stderr, tc.warning) {
				t.Errorf("stderr %q, want %q", r.stderr, tc.warning)
			}
		})
	}
}

// kafkaManifest is what testdata/kafka/manifest.json says of the log
// directory's records.
type kafkaManifest struct {
	Logdir struct {
		Partitions []struct {
			Topic     string `json:"topic"`
			Partition int    `json:"partition"`
			Records   []struct {
				Offset      uint64  `json:"offset"`
				Timestamp   int64   `json:"timestamp"`
				KeyBase64   *string `json:"key_base64"`
				ValueBase64 *string `json:"value_base64"`
				Control     bool    `json:"control"`
				Aborted     bool    `json:"aborted"`
				Headers     []struct {
					Key string `json:"key"`
				} `json:"headers"`
			} `json:"records"`
		} `json:"partitions"`
	} `json:"logdir"`
}

// import of a Kafka partition gives a seglog topic the partition's data
// records, with their keys, values and timestamps, and says what it left
// out.
func TestKafkaImport(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(kafkaFixtures, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m kafkaManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Logdir.Partitions {
		if p.Topic != "events" && p.Topic != "payments" {
			continue
		}
		t.Run(p.Topic, func(t *testing.T) {
			data := t.TempDir()
			src := filepath.Join(kafkaFixtures, "logdir", p.Topic+"-"+strconv.Itoa(p.Partition))
			r := mustRun(t, data, "", "import", src, "copy", "--create")
			got := readRecords(t, data, "copy")
			i, headers, controls := 0, 0, 0
			for _, want := range p.Records {
				if want.Control {
					controls++
					continue
				}
				headers += len(want.Headers)
				if i >= len(got) {
					t.Fatalf("%d records imported, more in the source", len(got))
				}
				dec := func(s *string) []byte {
					if s == nil {
						return nil
					}
					v, err := base64.StdEncoding.DecodeString(*s)
					if err != nil {
						t.Fatal(err)
					}
					return v
				}
				if g := got[i]; !bytes.Equal(g.key, dec(want.KeyBase64)) || !bytes.Equal(g.value, dec(want.ValueBase64)) {
					t.Fatalf("record %d (offset %d): key %q value %q, want %q %q", i, want.Offset, g.key, g.value, dec(want.KeyBase64), dec(want.ValueBase64))
				}
				i++
			}
			if i != len(got) {
				t.Fatalf("%d records imported, want %d", len(got), i)
			}
			if headers > 0 && !strings.Contains(r.stderr, fmt.Sprintf("%d headers of", headers)) {
				t.Errorf("stderr does not count the %d headers dropped: %s", headers, r.stderr)
			}
			if controls > 0 && !strings.Contains(r.stderr, fmt.Sprintf("%d control records", controls)) {
				t.Errorf("stderr does not count the %d control records left out: %s", controls, r.stderr)
			}
		})
	}
}

// tail -f waits for the next poll past a segment the broker deleted while
// it was read (that poll warns of the offsets it took), or the partition
// gone; anything else, or the same without -f, is an error.
func TestKafkaTailPollAgain(t *testing.T) {
	gone := fmt.Errorf("orders-0: %w", &logstore.NoLongerAvailableError{Partition: "orders-0", Offset: 4, Start: 8})
	removed := fmt.Errorf("orders-0: open 00000000000000000004.log: %w", fs.ErrNotExist)
	dirGone := fmt.Errorf("orders-0: %w", logstore.ErrPartitionNotFound)
	other := errors.New("orders-0: input/output error")
	var tp kafkaTailPart
	for _, tc := range []struct {
		err    error
		follow bool
		want   error
	}{
		{gone, true, nil},
		{removed, true, nil},
		{dirGone, true, nil},
		{dirGone, false, dirGone},
		{other, true, other},
		{gone, false, gone},
		{removed, false, removed},
	} {
		if got := tp.pollAgain(tailOptions{follow: tc.follow}, tc.err); got != tc.want {
			t.Errorf("pollAgain(follow %v, %v) = %v, want %v", tc.follow, tc.err, got, tc.want)
		}
	}
}
