package logstore_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/seglog/seglog/logstore"
)

// BenchmarkLookup measures a point lookup at a random offset (Read, Next,
// Record, Close) in partitions holding the same 200 000 records in 1, 100
// or 10 000 segments. docs/format.md §6: the cost must not grow with the number of
// segments or records beyond O(log n), so like must be close to like: the
// three cold rows (files opened per lookup), and the kept-open rows while
// the segments fit the Partition's open files (1 and 100; 10 000 do not,
// so most of its lookups open files, like a cold one). The new rows open
// the partition for each lookup, as a command does: listing it, and
// finding the ends of the segments before the one read (its floor).
//
//	go test ./logstore -run XXX -bench Lookup -benchtime 20000x
func BenchmarkLookup(b *testing.B) {
	const total = 200_000
	value := bytes.Repeat([]byte("0123456789"), 10)
	const kept, cold, opened = "", "/cold", "/new"
	for _, c := range []struct {
		nseg int
		mode string
	}{{1, kept}, {100, kept}, {10_000, kept}, {1, cold}, {100, cold}, {10_000, cold}, {1, opened}, {100, opened}} {
		nseg := c.nseg
		// cold: a closed Partition keeps no file open, so every lookup
		// opens the segment's .log and .index, as the first lookup in a
		// segment does, and as most do in a partition of more segments
		// than it keeps open (10 000 here).
		name := fmt.Sprintf("segments=%d%s", nseg, c.mode)
		b.Run(name, func(b *testing.B) {
			// Written by the spec writer, index interval 1: setting up 30 000
			// files through logstore's Writer would take longer than the
			// benchmark.
			dir := b.TempDir()
			per := uint64(total / nseg)
			for base := uint64(0); base < total; base += per {
				seg := swSegment{Base: base, Interval: 1}
				for o := base; o < base+per; o++ {
					seg.Records = append(seg.Records, swRecord{Offset: o, Timestamp: int64(o), Key: []byte("key"), Value: value})
				}
				swWritePartition(b, dir, seg)
			}
			p, err := logstore.OpenPartitionDir(dir, "bench")
			if err != nil {
				b.Fatal(err)
			}
			if c.mode != kept {
				p.Close()
			}
			rng := rand.New(rand.NewPCG(1, uint64(nseg)))
			offsets := make([]uint64, 1<<16)
			for i := range offsets {
				offsets[i] = rng.Uint64N(total)
			}
			i := 0
			for b.Loop() {
				o := offsets[i&(len(offsets)-1)]
				i++
				if c.mode == opened {
					if p, err = logstore.OpenPartitionDir(dir, "bench"); err != nil {
						b.Fatal(err)
					}
				}
				it, err := p.Read(o)
				if err != nil {
					b.Fatal(err)
				}
				if !it.Next() {
					b.Fatalf("Read(%d): no record: %v", o, it.Err())
				}
				if r := it.Record(); r.Offset != o || len(r.Value) != len(value) {
					b.Fatalf("Read(%d) returned offset %d", o, r.Offset)
				}
				if err := it.Close(); err != nil {
					b.Fatal(err)
				}
				if c.mode == opened {
					p.Close()
				}
			}
		})
	}
}
