package logstore_test

import (
	"math/rand/v2"
	"testing"

	"github.com/seglog/seglog/logstore"
)

// BenchmarkTimeSeek compares a point read by offset with one by time
// (`read --since`) in a partition of 10 million 8-byte records, 1 ms apart,
// in 10 segments of a million, written once per run by the spec writer
// (index interval 1, like seglog's default). docs/format.md §6: both are binary
// searches; since (ReadAtTime: the search, then the record found) should
// cost at most twice offset.
//
//	go test ./logstore -run XXX -bench TimeSeek -benchtime 20000x
func BenchmarkTimeSeek(b *testing.B) {
	const (
		total  = 10_000_000
		perSeg = 1_000_000
		step   = int64(1e6) // 1 ms
	)
	dir := b.TempDir()
	value := []byte("01234567")
	for base := uint64(0); base < total; base += perSeg {
		seg := swSegment{Base: base, Interval: 1, Records: make([]swRecord, 0, perSeg)}
		for o := base; o < base+perSeg; o++ {
			seg.Records = append(seg.Records, swRecord{Offset: o, Timestamp: tsT0 + int64(o)*step, Value: value})
		}
		swWritePartition(b, dir, seg)
	}
	p, err := logstore.OpenPartitionDir(dir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 10))
	const n = 1 << 16
	offsets := make([]uint64, n)
	times := make([]int64, n)
	for i := range n {
		offsets[i] = rng.Uint64N(total)
		times[i] = tsT0 + rng.Int64N(int64(total-1)*step) // mostly between two records
	}
	read := func(b *testing.B, o uint64) {
		it, err := p.Read(o)
		if err != nil {
			b.Fatal(err)
		}
		if !it.Next() {
			b.Fatalf("Read(%d): no record: %v", o, it.Err())
		}
		if r := it.Record(); r.Offset != o {
			b.Fatalf("Read(%d) returned offset %d", o, r.Offset)
		}
		if err := it.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("offset", func(b *testing.B) {
		i := 0
		for b.Loop() {
			read(b, offsets[i%n])
			i++
		}
	})
	b.Run("since", func(b *testing.B) {
		i := 0
		for b.Loop() {
			T := times[i%n]
			i++
			it, err := p.ReadAtTime(T)
			if err != nil {
				b.Fatal(err)
			}
			if !it.Next() {
				b.Fatalf("ReadAtTime(%d): no record: %v", T, it.Err())
			}
			// The first record at or after T: ceil((T-tsT0)/step).
			if o, want := it.Record().Offset, uint64((T-tsT0+step-1)/step); o != want {
				b.Fatalf("ReadAtTime(%d) starts at %d, want %d", T, o, want)
			}
			if err := it.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
