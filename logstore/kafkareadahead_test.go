package logstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore"
)

// TestKafkaReadAheadMatchesPlainScan: with the read-ahead (another
// goroutine reading Kafka segments and checking batch CRCs ahead of the
// scan) read and verify give exactly what they give without one, record
// for record, error for error and finding for finding, over segments of
// batches of mixed sizes (some larger than the read-ahead's chunks, some
// compressed) with damage: a flipped byte in a batch, a lying length
// field, 40 zero bytes, a torn tail. Corruption is skipped past as read
// --skip-corrupt does.
func TestKafkaReadAheadMatchesPlainScan(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			l, positions := kpMixedLog(t, rng)
			p := l.write()
			damage := kpDamageMixed(t, rng, l, positions, int(seed%5))
			plain := kpReadEvents(t, p, false)
			ahead := kpReadEvents(t, p, true)
			if !slices.Equal(plain, ahead) {
				t.Fatalf("damage %s: %d events without read-ahead, %d with; first difference at %d", damage, len(plain), len(ahead), logstore.FirstDifference(plain, ahead))
			}
			t.Logf("damage %s: %d events, the same either way", damage, len(plain))
		})
	}
}

// kpMixedLog writes three segments of ~3 MiB: batches of a few to a few
// hundred records of up to 3 KiB, now and then one of a single 1.5 MiB
// record, and one batch in twenty gzip-compressed. It returns each
// segment's batch positions.
func kpMixedLog(t *testing.T, rng *rand.Rand) (*kpLog, [][]int64) {
	l := newKPLog(t)
	positions := make([][]int64, 3)
	for seg := range 3 {
		l.roll(4096)
		for size := 0; size < 3<<20; {
			var recs []kpRecord
			if rng.IntN(60) == 0 {
				recs = []kpRecord{{value: bytes.Repeat([]byte{byte(rng.Uint32())}, 3<<19)}}
			} else {
				recs = make([]kpRecord, 1+rng.IntN(300))
				for i := range recs {
					v := make([]byte, rng.IntN(3000))
					for j := range v {
						v[j] = byte(rng.Uint32())
					}
					recs[i] = kpRecord{key: fmt.Appendf(nil, "k%d", i), value: v}
				}
			}
			b := kpBatch{pid: -1, recs: recs}
			if rng.IntN(20) == 0 {
				b.codec = kafka.CodecGzip
			}
			pos, _ := l.add(b, false)
			positions[seg] = append(positions[seg], pos)
			for _, r := range recs {
				size += len(r.value) + 20
			}
		}
	}
	return l, positions
}

// kpDamageMixed damages one of the log's segments as kind says, and
// says what it did.
func kpDamageMixed(t *testing.T, rng *rand.Rand, l *kpLog, positions [][]int64, kind int) string {
	seg := rng.IntN(len(positions))
	path := l.path(seg, kafka.LogExt)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	batch := positions[seg][1+rng.IntN(len(positions[seg])-2)]
	var what string
	switch kind {
	case 0:
		return "none"
	case 1:
		at := batch + kafka.BatchHeaderLen + 1
		b[at] ^= 0x10
		what = fmt.Sprintf("a flipped byte at %d", at)
	case 2:
		b[batch+kafka.LogOverhead-2] ^= 0x04 // the length, 1 KiB off
		what = fmt.Sprintf("a lying length at %d", batch)
	case 3:
		clear(b[batch+30 : batch+70])
		what = fmt.Sprintf("40 zero bytes at %d", batch+30)
	default:
		path = l.path(len(positions)-1, kafka.LogExt)
		if b, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		last := positions[len(positions)-1]
		b = b[:last[len(last)-1]+100]
		what = "the last batch torn"
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return what
}

// kpReadEvents reads the whole partition, skipping past corruption, then
// verifies it, and lists what it met: each record (offset, position, CRC
// of key and value), each error and each finding.
func kpReadEvents(t *testing.T, p *logstore.KafkaPartition, on bool) []string {
	t.Helper()
	logstore.SetKafkaReadAhead(p, on)
	defer logstore.SetKafkaReadAhead(p, true)
	it, err := p.Records(0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var events []string
	for {
		for it.Next() {
			r := it.Record()
			events = append(events, fmt.Sprintf("record %d at %d: %08x %08x", r.Offset, r.Pos, crc32.ChecksumIEEE(r.Key), crc32.ChecksumIEEE(r.Value)))
		}
		err := it.Err()
		if err == nil {
			break
		}
		events = append(events, "error: "+err.Error())
		var ce *logstore.CorruptionError
		if !errors.As(err, &ce) || !it.SkipCorrupt() {
			break
		}
	}
	rep, err := p.Verify(0, 1, logstore.VerifyOptions{Finding: func(f logstore.Finding) error {
		events = append(events, fmt.Sprintf("finding %s %s at %d (offset %d): %s", f.Kind, f.Path, f.Pos, f.Offset, f.Reason))
		return nil
	}})
	return append(events, fmt.Sprintf("verify: %d records, %d problems, %v", rep.Records, rep.Problems, err))
}
