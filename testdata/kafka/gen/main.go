// Command gen writes the Apache Kafka fixtures under testdata/kafka: a
// broker's log directory (logdir/), damaged copies of its partitions
// (damaged/) and manifest.json, which says what each holds (see
// ../README.md).
//
//	go run ./testdata/kafka/gen
//
// The batches come from writers seglog did not write: kcat (librdkafka)
// and a franz-go transactional producer, both producing into franz-go's
// in-process kfake broker, and franz-go's kmsg encoders for batches
// built here. The rest of the directory (indexes, checkpoints, producer
// snapshots) is written from Kafka's documented formats, following its
// broker's rules for when it writes what. After writing, gen reads every
// file back with kmsg and plain encoding/binary and fails unless it agrees
// with the manifest; the package's test runs that check on the committed
// files.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
)

func main() {
	out := flag.String("out", "testdata/kafka", "write the fixtures under `DIR`")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	if _, err := exec.LookPath("kcat"); err != nil {
		return errors.New("kcat is not installed; it writes the orders partitions (apt-get install kcat)")
	}
	if _, err := os.Stat(filepath.Join(out, "gen")); err != nil {
		return fmt.Errorf("%s is not the fixtures' directory (run from the repository root, or give -out)", out)
	}
	got, err := capture()
	if err != nil {
		return err
	}
	dir, err := newLogDir(got)
	if err != nil {
		return err
	}
	m, err := dir.write(out)
	if err != nil {
		return err
	}
	m.Writers = writers(got.kcatVersion)
	if err := writeDamaged(out, dir, m); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(out, manifestName), m); err != nil {
		return err
	}
	return check(out)
}

// writers names the programs that wrote the batches, by the names the
// manifest's batches give, with their versions.
func writers(kcat string) map[string]string {
	version := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			version[d.Path] = d.Path + " " + d.Version
		}
	}
	return map[string]string{
		"kcat":     kcat + ", producing into kfake",
		"franz-go": "kgo transactional producers, " + version["github.com/twmb/franz-go"],
		"kfake":    "franz-go's in-process broker, which writes the transaction markers, " + version["github.com/twmb/franz-go/pkg/kfake"],
		"kmsg":     "built here with kmsg.RecordBatch and kgo's compressors, " + version["github.com/twmb/franz-go/pkg/kmsg"],
		"hand":     "magic 1 messages encoded here from Kafka's message format v1",
	}
}
