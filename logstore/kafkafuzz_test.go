package logstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore"
)

// FuzzKafkaPartition reads any bytes as a partition's one segment, with
// any .index and .timeindex beside it: every operation ends, without a
// panic, and reading yields offsets in order.
func FuzzKafkaPartition(f *testing.F) {
	l := newKPLog(f)
	l.roll(100)
	for i := range 4 {
		l.add(kpBatch{codec: kafka.Codec(i), pid: -1, recs: kpRecords(3, "f")}, false)
	}
	s := l.segs[0]
	s.timeEntry()
	f.Add(s.log, s.index, s.tindex)
	f.Add(s.log[:len(s.log)-7], append(s.index, 0, 0, 0, 0, 0, 0, 0, 0), []byte{})
	flipped := append([]byte{}, s.log...)
	flipped[100] ^= 4
	f.Add(flipped, []byte{0, 0, 0, 9, 0, 0, 0, 5}, append(s.tindex, 1))
	f.Fuzz(func(t *testing.T, log, index, tindex []byte) {
		dir := t.TempDir()
		for ext, b := range map[string][]byte{".log": log, ".index": index, ".timeindex": tindex} {
			if err := os.WriteFile(filepath.Join(dir, "00000000000000000000"+ext), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p, err := logstore.OpenKafkaPartition(dir, "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		e, err := p.Extent()
		if err != nil {
			t.Fatal(err)
		}
		for _, committed := range []bool{false, true} {
			it, err := p.ReadKafka(0, logstore.KafkaReadOptions{ReadCommitted: committed})
			if err != nil {
				t.Fatal(err)
			}
			next := uint64(0)
			for rounds := 0; rounds <= len(log); rounds++ {
				for it.Next() {
					if off := it.Record().Offset; off < next || off >= e.Next {
						t.Fatalf("offset %d after %d, extent %+v", off, next, e)
					}
					next = it.Record().Offset + 1
				}
				var ce *logstore.CorruptionError
				if !errors.As(it.Err(), &ce) || !it.SkipCorrupt() {
					break
				}
			}
			it.Close()
		}
		if _, err := p.Stats(); err != nil {
			t.Fatal(err)
		}
		if _, err := p.OffsetAtTime(0); err != nil {
			t.Fatal(err)
		}
		if rep, err := p.Verify(0, 1, logstore.VerifyOptions{}); err != nil || !rep.Complete {
			t.Fatalf("Verify: %v", err)
		}
	})
}
