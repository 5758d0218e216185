package logstore

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/seglog/seglog/format"
)

// TestReadAheadMatchesPlainScan: with the read-ahead (another goroutine
// reading and checking CRCs ahead of the scan) an iterator returns exactly
// what it returns without one, record for record and error for error, over
// partitions of mixed record sizes (some larger than the read-ahead's
// chunks) with damage: a flipped byte, a lying size field, a torn tail,
// a record overwritten with zeros. Corruption is skipped past with
// SkipCorrupt, as read --skip-corrupt does.
func TestReadAheadMatchesPlainScan(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			dir, positions := writeMixedPartition(t, rng, true)
			damage := damageMixedPartition(t, rng, dir, positions, int(seed%5))
			p, err := OpenPartitionDir(dir, "p")
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			plain := scanWithReadAhead(t, p, false)
			ahead := scanWithReadAhead(t, p, true)
			if !slices.Equal(plain, ahead) {
				t.Fatalf("damage %s: %d events without read-ahead, %d with; first difference at %d", damage, len(plain), len(ahead), firstDifference(plain, ahead))
			}
			t.Logf("damage %s: %d events, the same either way", damage, len(plain))
		})
	}
}

// writeMixedPartition writes ~12 MiB in segments of 4 MiB: mostly small
// records, some of a few KiB, and with big now and then one of 1.5 MiB,
// more than a read-ahead chunk. It returns each segment's record positions.
func writeMixedPartition(t *testing.T, rng *rand.Rand, big bool) (string, map[string][]int64) {
	t.Helper()
	s := Open(t.TempDir())
	if err := s.CreateTopic("t", 1, Settings{SegmentBytes: 4 << 20}); err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenWriter("t", 0, WriterOptions{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	for total := 0; total < 12<<20; {
		var n int
		switch r := rng.IntN(1000); {
		case r == 0 && big:
			n = 3 << 19
		case r < 50:
			n = 1024 + rng.IntN(4096)
		default:
			n = rng.IntN(200)
		}
		value := make([]byte, n)
		for i := range value {
			value[i] = byte(rng.Uint32())
		}
		var key []byte
		if rng.IntN(4) == 0 {
			key = []byte(fmt.Sprint(rng.IntN(100)))
		}
		if _, err := w.Append(int64(total), key, value); err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dir := s.PartitionDir("t", 0)
	p, err := OpenPartitionDir(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	positions := map[string][]int64{}
	p.noReadAhead = true
	it, err := p.Read(0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for it.Next() {
		path := it.segs[it.i].path(".log")
		positions[path] = append(positions[path], it.Record().Pos)
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	return dir, positions
}

// damageMixedPartition damages one segment of the partition in way kind
// and says how.
func damageMixedPartition(t *testing.T, rng *rand.Rand, dir string, positions map[string][]int64, kind int) string {
	t.Helper()
	paths := make([]string, 0, len(positions))
	for path, pos := range positions {
		if len(pos) >= 100 {
			paths = append(paths, path)
		}
	}
	slices.Sort(paths)
	path := paths[rng.IntN(len(paths))]
	pos := positions[path]
	at := pos[len(pos)/4+rng.IntN(len(pos)/2)] // well inside: after the read-ahead has started
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(b []byte, off int64) {
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	name := filepath.Base(path)
	switch kind {
	case 0:
		return "none"
	case 1:
		write([]byte{0xff}, at+28)
		return fmt.Sprintf("a flipped value byte of the record at byte %d of %s", at, name)
	case 2:
		write([]byte{0x7f, 0xff, 0xff, 0xff}, at+8)
		return fmt.Sprintf("a huge size field at byte %d of %s", at, name)
	case 3:
		write(make([]byte, 40), at)
		return fmt.Sprintf("40 zero bytes at byte %d of %s", at, name)
	default:
		last := filepath.Join(dir, format.SegmentName(slices.Max(bases(positions)), format.LogExt))
		lp := positions[last]
		cut := lp[len(lp)-1] + 20
		if err := os.Truncate(last, cut); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s cut at byte %d, inside its last record", filepath.Base(last), cut)
	}
}

// scanWithReadAhead reads the whole partition, skipping past corruption,
// and lists what it met: each record (offset, position, CRC of key and
// value) and each error.
func scanWithReadAhead(t *testing.T, p *Partition, on bool) []string {
	t.Helper()
	p.noReadAhead = !on
	defer func() { p.noReadAhead = false }()
	it, err := p.Read(0)
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
			return events
		}
		events = append(events, "error: "+err.Error())
		var ce *CorruptionError
		if !errors.As(err, &ce) || !it.SkipCorrupt() {
			return events
		}
	}
}

func bases(positions map[string][]int64) []uint64 {
	var bs []uint64
	for path := range positions {
		base, _, err := format.ParseSegmentName(filepath.Base(path))
		if err != nil {
			panic(err)
		}
		bs = append(bs, base)
	}
	return bs
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
