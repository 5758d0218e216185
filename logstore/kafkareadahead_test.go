package logstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore"
	"github.com/seglog/seglog/logstore/internal/segfile"
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

// rewrittenLog is a .log being rewritten from pos on while it is read, as
// a follower's truncation and re-append does: a read that starts before
// pos sees the old bytes, one that starts at or after it the new.
type rewrittenLog struct {
	old, new []byte
	pos      int64
	once     sync.Once
	readNew  chan struct{} // closed at the first read of the new bytes
}

func (f *rewrittenLog) ReadAt(p []byte, off int64) (int, error) {
	src := f.old
	if off == 0 {
		// The scan finds no chunk ready and asks that the next be left
		// unchecked: this one.
		time.Sleep(50 * time.Millisecond)
	}
	if off >= f.pos {
		src = f.new
		f.once.Do(func() { close(f.readNew) })
	}
	if off >= int64(len(src)) {
		return 0, fmt.Errorf("EOF")
	}
	n := copy(p, src[off:])
	if n < len(p) {
		return n, fmt.Errorf("EOF")
	}
	return n, nil
}

// kbBatch is a batch at base of one record of n bytes of fill.
func kbBatch(t *testing.T, base int64, n int, fill byte) []byte {
	return kpBatch{pid: -1, recs: []kpRecord{{key: []byte("k"), value: bytes.Repeat([]byte{fill}, n)}}}.encode(t, base)
}

// kbSized is a batch at base of exactly size bytes.
func kbSized(t *testing.T, base int64, size int, fill byte) []byte {
	n := size - (len(kbBatch(t, base, size, fill)) - size)
	b := kbBatch(t, base, n, fill)
	if len(b) != size {
		t.Fatalf("batch of %d bytes, want %d", len(b), size)
	}
	return b
}

// TestKafkaReadAheadHeaderOfOtherBytes: a batch whose first bytes the
// scan takes from one read-ahead chunk (its header, in the bytes after the
// chunk's whole batches) and the rest from the next chunk is taken as
// checked without its CRC being compared to its header. When the file
// changed between the two reads (the batch at 1 MiB-1000 rewritten with
// other values but the same length, as a follower's truncation and
// re-append does), the scan yields a batch whose header (CRC, offsets)
// is the old one's and whose bytes are the new one's: the plain scan
// reads the same bytes and finds the CRC mismatch.
func TestKafkaReadAheadHeaderOfOtherBytes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	const mib = 1 << 20
	first := kbSized(t, 0, mib-1000, 'x')
	oldB, newB := kbSized(t, 1, 4000, 'a'), kbSized(t, 1, 4000, 'b')
	last := kbBatch(t, 2, 100, 'z')
	old := slices.Concat(first, oldB, last)
	rewritten := slices.Concat(first, newB, last)
	scan := func(ahead bool) (events []string) {
		f := &rewrittenLog{old: old, new: rewritten, pos: int64(len(first)), readNew: make(chan struct{})}
		sc := segfile.NewKafkaScanner(f, int64(len(old)), segfile.KafkaOptions{ReadAhead: ahead})
		defer sc.Close()
		for i := 0; ; i++ {
			if !sc.Next() {
				break
			}
			b := sc.Batch()
			crc := crc32.Checksum(b.Bytes[21:], crc32.MakeTable(crc32.Castagnoli))
			events = append(events, fmt.Sprintf("batch %d at %d: header CRC %08x, its bytes' CRC %08x", b.BaseOffset(), b.Pos, b.Header.CRC, crc))
			if i == 0 && ahead {
				// The read-ahead reads and checks the next chunk, the
				// rewritten bytes, while the scan is busy.
				<-f.readNew
				time.Sleep(100 * time.Millisecond)
			}
		}
		if d := sc.Damage(); d != nil {
			events = append(events, fmt.Sprintf("damage at %d: %v", d.Pos, d.Reason))
		}
		return events
	}
	plain, ahead := scan(false), scan(true)
	if !slices.Equal(plain, ahead) {
		t.Fatalf("without the read-ahead:\n\t%s\nwith it:\n\t%s", strings.Join(plain, "\n\t"), strings.Join(ahead, "\n\t"))
	}
}

// TestKafkaReadAheadManyPartitionsMemory: read --merge holds an iterator
// open on every partition of a topic, and what they hold must not grow
// with the number of partitions. A read-ahead holds three 1 MiB chunk
// buffers: a segment one chunk holds starts none, and at most 8 run at
// once (the other scans read for themselves, 128 KiB at a time). Before,
// 64 partitions of 2 KiB each held 192 MiB.
func TestKafkaReadAheadManyPartitionsMemory(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	for _, c := range []struct {
		name         string
		parts, value int // partitions, and bytes of each of their 16 records
		limit        uint64
	}{
		{"2 KiB segments", 64, 100, 4 << 20},
		{"1.2 MiB segments", 24, 75 << 10, 8*3<<20 + 8<<20},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps := make([]*logstore.KafkaPartition, c.parts)
			for i := range ps {
				l := newKPLog(t)
				l.roll(4096)
				for range 4 {
					l.add(kpBatch{pid: -1, recs: []kpRecord{{value: bytes.Repeat([]byte("v"), c.value)}, {value: bytes.Repeat([]byte("w"), c.value)},
						{value: bytes.Repeat([]byte("x"), c.value)}, {value: bytes.Repeat([]byte("y"), c.value)}}}, false)
				}
				ps[i] = l.write()
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var its []logstore.RecordIterator
			for _, p := range ps {
				it, err := p.Records(0)
				if err != nil {
					t.Fatal(err)
				}
				if !it.Next() {
					t.Fatalf("no record: %v", it.Err())
				}
				its = append(its, it)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			for _, it := range its {
				it.Close()
			}
			held := after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
			t.Logf("%d open iterators hold %d KiB", c.parts, held>>10)
			if held > c.limit {
				t.Fatalf("%d open iterators hold %d MiB, more than %d MiB", c.parts, held>>20, c.limit>>20)
			}
		})
	}
}

// TestKafkaReadAheadLargeBatchesAllocate: a batch larger than a
// read-ahead chunk (over 1 MiB: message.max.bytes raised) is read by the
// scan itself, into a buffer it allocates for that batch alone, since
// the chunk it held went back to the read-ahead: a .log of 40 batches of
// 1.5 MiB allocates 60 MiB with the read-ahead and 2 MiB without, and
// what it allocates grows with the segment.
func TestKafkaReadAheadLargeBatchesAllocate(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	var b []byte
	for i := range 40 {
		b = append(b, kbBatch(t, int64(i), 3<<19, 'x')...)
	}
	allocated := func(ahead bool) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		sc := segfile.NewKafkaScanner(bytes.NewReader(b), int64(len(b)), segfile.KafkaOptions{ReadAhead: ahead})
		defer sc.Close()
		n := 0
		for sc.Next() {
			n++
		}
		runtime.ReadMemStats(&after)
		if n != 40 {
			t.Fatalf("%d batches, want 40 (damage %v, err %v)", n, sc.Damage(), sc.Err())
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	plain, ahead := allocated(false), allocated(true)
	if ahead > plain+16<<20 {
		t.Fatalf("a scan of 40 batches of 1.5 MiB allocates %d MiB with the read-ahead, %d MiB without", ahead>>20, plain>>20)
	}
}
