package logstore_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/seglog/seglog/logstore"
)

// kfTreeHash hashes every entry under root: its path, mode, size,
// modification time and content.
func kfTreeHash(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d %d\n", path, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestKafkaReadOnly runs every operation of a KafkaPartition on every
// fixture and checks that none changed, created or removed anything.
func TestKafkaReadOnly(t *testing.T) {
	m := kmLoad(t)
	dirs := []string{}
	for _, p := range m.LogDir.Partitions {
		dirs = append(dirs, p.Dir)
	}
	for _, d := range m.Damaged {
		dirs = append(dirs, d.Dir)
	}
	before := kfTreeHash(t, kafkaFixtures)
	check := func(dir, op string) {
		if after := kfTreeHash(t, kafkaFixtures); after != before {
			t.Fatalf("%s of %s changed the fixtures", op, dir)
		}
	}
	for _, dir := range dirs {
		p := kmOpen(t, dir)
		check(dir, "OpenKafkaPartition")
		p.SetLogStart(1)
		ops := []struct {
			name string
			run  func() error
		}{
			{"Extent", func() error { _, err := p.Extent(); return err }},
			{"Stats", func() error { _, err := p.Stats(); return err }},
			{"Records", func() error {
				it, err := p.Records(0)
				if err == nil {
					kmRead(t, it)
				}
				return err
			}},
			{"ReadKafka", func() error {
				it, err := p.ReadKafka(0, logstore.KafkaReadOptions{ReadCommitted: true})
				if err == nil {
					kmRead(t, it)
				}
				return err
			}},
			{"OffsetAtTime", func() error { _, err := p.OffsetAtTime(1_700_000_000_000_000_000); return err }},
			{"Verify", func() error { _, err := p.Verify(0, 1, logstore.VerifyOptions{}); return err }},
			{"CheckKafkaIndex", func() error {
				for i := range p.KafkaSegments() {
					for _, kind := range []logstore.IndexKind{logstore.OffsetIndex, logstore.TimeIndex} {
						if _, err := p.CheckKafkaIndex(i, kind, true, func(logstore.KafkaIndexEntry) error { return nil }); err != nil {
							return err
						}
					}
				}
				return nil
			}},
			{"TxnIndex and ProducerSnapshot", func() error {
				for i := range p.KafkaSegments() {
					if err := p.TxnIndex(i, func(logstore.KafkaAbortedTxn) error { return nil }); err != nil {
						return err
					}
					if _, _, err := p.ProducerSnapshot(i); err != nil {
						return err
					}
				}
				return nil
			}},
			{"OpenKafkaSegmentFile", func() error {
				lone, err := logstore.OpenKafkaSegmentFile(p.KafkaSegments()[0].Log, "lone")
				if err == nil {
					_, err = lone.Verify(0, 1, logstore.VerifyOptions{})
				}
				return err
			}},
		}
		for _, op := range ops {
			if err := op.run(); err != nil {
				t.Fatalf("%s of %s: %v", op.name, dir, err)
			}
			check(dir, op.name)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
