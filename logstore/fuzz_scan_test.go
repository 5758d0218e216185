package logstore

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/seglog/seglog/format"
)

// fuzzSegment is a valid segment (base 0) of n records, and its .index.
func fuzzSegment(n int, keyed bool) (log, index []byte) {
	for i := range n {
		var key []byte
		if keyed {
			key = []byte{'k', byte('0' + i%10)}
		}
		index = binary.BigEndian.AppendUint64(index, uint64(i))
		index = binary.BigEndian.AppendUint64(index, uint64(len(log)))
		log = format.AppendRecord(log, &format.Record{Offset: uint64(i), Timestamp: 1700000000000000000 + int64(i),
			Key: key, Value: []byte("value-" + string(rune('a'+i%26)))})
	}
	return log, index
}

func fuzzSeeds(f *testing.F) {
	log, index := fuzzSegment(6, true)
	rec := int64(len(log) / 6)
	mut := func(fn func(b []byte) []byte) []byte { return fn(append([]byte(nil), log...)) }
	f.Add(log, index)
	f.Add([]byte{}, []byte{})
	f.Add(log, []byte{})
	f.Add(log[:len(log)-5], index)                                                               // torn body
	f.Add(log[:len(log)-int(rec)+10], index)                                                     // torn header
	f.Add(append(append([]byte(nil), log...), make([]byte, 100)...), index)                      // zero tail
	f.Add(mut(func(b []byte) []byte { b[2*rec+30] ^= 1; return b }), index)                      // value flip
	f.Add(mut(func(b []byte) []byte { b[2*rec+7] ^= 0x40; return b }), index)                    // offset flip
	f.Add(mut(func(b []byte) []byte { b[2*rec+11] ^= 0x08; return b }), index)                   // size flip
	f.Add(mut(func(b []byte) []byte { b[2*rec+24] = 0xff; return b }), index)                    // keylen > size
	f.Add(mut(func(b []byte) []byte { b[2*rec+27] ^= 0x01; return b }), index)                   // keylen flip
	f.Add(mut(func(b []byte) []byte { copy(b[2*rec+8:], "\xff\xff\xff\xff"); return b }), index) // 4 GiB-1
	f.Add(mut(func(b []byte) []byte { copy(b[5*rec+8:], "\xff\xff\xff\xff"); return b }), index)
	f.Add(mut(func(b []byte) []byte { copy(b[3*rec+8:], "\x00\x00\x10\x00"); return b }), index) // past EOF, records after
	lying := append([]byte(nil), index...)
	binary.BigEndian.PutUint64(lying[2*16+8:], uint64(3*rec))
	f.Add(log, lying)
	f.Add(log, append(append([]byte(nil), index...), 1, 2, 3))
	dup := append(append([]byte(nil), log[:3*rec]...), log[2*rec:]...) // duplicate offset 2
	f.Add(dup, index)
	gap := append(append([]byte(nil), log[:2*rec]...), log[3*rec:]...) // offset 2 missing
	f.Add(gap, index)
	plain, pidx := fuzzSegment(3, false)
	f.Add(plain, pidx)
}

// FuzzScanSegment feeds arbitrary bytes as the only segment of a partition
// (its .log, and its .index) to the reader with SkipCorrupt, to Verify, and
// to recover --salvage. None may panic, loop, or allocate much more than
// the input; after salvage, Verify finds no problem left.
func FuzzScanSegment(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, log, index []byte) {
		if len(log) > 1<<20 || len(index) > 1<<16 {
			return
		}
		root := t.TempDir()
		pdir := filepath.Join(root, "t", "0")
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			t.Fatal(err)
		}
		seg := segment{dir: pdir, base: 0}
		for ext, b := range map[string][]byte{format.LogExt: log, format.IndexExt: index} {
			if err := os.WriteFile(seg.path(ext), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		budget := uint64(16<<20 + 8*(len(log)+len(index)))
		allocs := func(what string, fn func()) {
			t.Helper()
			var a, b runtime.MemStats
			runtime.ReadMemStats(&a)
			fn()
			runtime.ReadMemStats(&b)
			if d := b.TotalAlloc - a.TotalAlloc; d > budget {
				t.Fatalf("%s allocated %d bytes for %d bytes of input", what, d, len(log)+len(index))
			}
		}

		// Read with SkipCorrupt to the end.
		var read []uint64
		allocs("read", func() {
			p, err := OpenPartitionDir(pdir, "t/0")
			if err != nil {
				t.Fatal(err)
			}
			it, err := p.Read(0)
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			steps := 0
			limit := 2*len(log) + 16
			for {
				for it.Next() {
					if steps++; steps > limit {
						t.Fatalf("reader did not terminate after %d steps", steps)
					}
					r := it.Record()
					if len(read) > 0 && r.Offset <= read[len(read)-1] {
						t.Fatalf("offset %d after %d", r.Offset, read[len(read)-1])
					}
					read = append(read, r.Offset)
				}
				var ce *CorruptionError
				if err := it.Err(); err != nil && !errors.As(err, &ce) {
					t.Fatalf("read: %v", err)
				}
				if !it.SkipCorrupt() {
					break
				}
				if steps++; steps > limit {
					t.Fatalf("SkipCorrupt did not terminate after %d steps", steps)
				}
			}
		})

		// Verify.
		verify := func(what string) (problems int, findings []Finding) {
			allocs(what, func() {
				p, err := OpenPartitionDir(pdir, "t/0")
				if err != nil {
					t.Fatal(err)
				}
				reps, err := Verify([]VerifyTarget{{Log: p}}, VerifyOptions{Jobs: 2, Finding: func(f Finding) error {
					findings = append(findings, f)
					return nil
				}})
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if len(reps) != 1 || !reps[0].Complete {
					t.Fatalf("%s: reports %+v", what, reps)
				}
				problems = reps[0].Problems
			})
			return problems, findings
		}
		verify("verify")

		// Salvage (for real: the directory is this iteration's own).
		s := Open(root)
		var rep RecoverReport
		allocs("recover --salvage", func() {
			var err error
			rep, err = s.recoverOne("t", 0, RecoverOptions{Salvage: true})
			if err != nil {
				t.Fatalf("recover --salvage: %v", err)
			}
		})
		if len(rep.Problems) > 0 {
			t.Fatalf("recover --salvage left problems: %v", rep.Problems)
		}
		if n, fs := verify("verify after salvage"); n > 0 {
			t.Fatalf("verify after salvage: %d problems: %+v", n, fs)
		}
		// Salvage keeps every record the reader could reach with
		// SkipCorrupt.
		p, err := OpenPartitionDir(pdir, "t/0")
		if err != nil {
			t.Fatal(err)
		}
		it, err := p.Read(0)
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		var after []uint64
		for it.Next() {
			after = append(after, it.Record().Offset)
			if len(after) > len(log) {
				t.Fatal("read after salvage did not terminate")
			}
		}
		if err := it.Err(); err != nil {
			t.Fatalf("read after salvage: %v", err)
		}
		have := map[uint64]bool{}
		for _, o := range after {
			have[o] = true
		}
		for _, o := range read {
			if !have[o] {
				t.Fatalf("offset %d readable with SkipCorrupt before salvage, gone after (before %v, after %v)", o, read, after)
			}
		}
	})
}
