package logstore_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/seglog/seglog/format/kafka"
	"github.com/seglog/seglog/logstore"
)

// TestKafkaVerifyPiecesMatchWhole: verify-crc checking Kafka segments in
// pieces side by side (--jobs 2 and 4) finds exactly what one check of
// each segment from its first byte finds (--jobs 1), finding for finding
// and count for count, on healthy segments and under each kind of damage
// and oddity that a piece judges otherwise than the whole check would:
// damage (the whole check resyncs on its own), overlapping batches and
// lying .index entries where pieces meet, timestamps going backwards
// across pieces (few, and more than a piece keeps track of), a
// .timeindex below an earlier batch's max timestamp, legacy messages in
// several pieces, gaps between segments, a torn tail. Where a case's
// pieces add up (taken), they must be taken, so that the split itself is
// what is compared; across the damaged cases some must be refused.
func TestKafkaVerifyPiecesMatchWhole(t *testing.T) {
	var mu sync.Mutex
	var split, taken, refused int
	defer logstore.SplitKafkaVerify(16<<10, func(pieces int, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		if pieces > 1 {
			split++
		}
		if ok {
			taken++
		} else {
			refused++
		}
	})()
	cases := []struct {
		name  string
		build kvpBuild
		harm  func(t *testing.T, rng *rand.Rand, l *kvpLog)
		taken bool // every segment's pieces must be taken
	}{
		{name: "healthy", taken: true},
		{name: "timestamps jitter", build: kvpBuild{jitter: 5000}, taken: true},
		{name: "a late run longer than a piece's steps", build: kvpBuild{lateRun: true}},
		{name: "a batch from the future", build: kvpBuild{future: true}},
		{name: "transactions and control batches", build: kvpBuild{txn: true}, taken: true},
		{name: "legacy messages in every piece", build: kvpBuild{legacy: true}, taken: true},
		{name: "a gap between segments", build: kvpBuild{gap: true}, taken: true},
		{name: "overlapping batches where the index points", build: kvpBuild{overlap: true}},
		{name: "an overlapping batch where pieces meet", build: kvpBuild{overlapMid: true}},
		{name: "a late batch where pieces meet", build: kvpBuild{lateMid: true}, taken: true},
		{name: "flipped byte", harm: kvpFlip},
		{name: "40 zero bytes", harm: kvpZeros},
		{name: "lying length", harm: kvpLyingLength},
		{name: "a lying length running past where pieces meet", harm: kvpLyingLengthAtCut},
		{name: "torn tail", harm: kvpTorn, taken: true},
		{name: "index entries out of order", harm: kvpIndexDisorder},
		{name: "index entries naming other offsets", harm: kvpIndexOffsets},
		{name: "timeindex below an earlier max timestamp", build: kvpBuild{future: true}, harm: kvpTimeIndexOwnMax},
		{name: "timeindex entries off by one", harm: kvpTimeIndexOff},
		{name: "timeindex entries of the piece before, after a broken order", harm: kvpTimeIndexStray},
		{name: "damage in the last piece", harm: kvpFlipLast, taken: true},
		{name: "no .timeindex", harm: kvpNoTimeIndex, taken: true},
		{name: "indexes ending in a partial entry", harm: kvpPartialEntries, taken: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for seed := range uint64(4) {
				rng := rand.New(rand.NewPCG(seed, 23))
				l := kvpWrite(t, seed, c.build)
				if c.harm != nil {
					c.harm(t, rng, l)
				}
				p, err := logstore.OpenKafkaPartition(l.dir, "orders-0")
				if err != nil {
					t.Fatal(err)
				}
				whole := kvpVerify(t, p, 1)
				for _, jobs := range []int{2, 4} {
					mu.Lock()
					split0, taken0 := split, taken
					mu.Unlock()
					got := kvpVerify(t, p, jobs)
					if !slices.Equal(whole, got) {
						i := logstore.FirstDifference(whole, got)
						t.Fatalf("seed %d, --jobs %d: %d events whole, %d in pieces; first difference at %d:\nwhole:  %s\npieces: %s",
							seed, jobs, len(whole), len(got), i, kvpAt(whole, i), kvpAt(got, i))
					}
					mu.Lock()
					splits, takes := split-split0, taken-taken0
					mu.Unlock()
					if splits != len(l.segs) {
						t.Fatalf("seed %d, --jobs %d: %d of %d segments split", seed, jobs, splits, len(l.segs))
					}
					if c.taken && takes != splits {
						t.Fatalf("seed %d, --jobs %d: the pieces of %d of %d segments were not taken", seed, jobs, splits-takes, splits)
					}
				}
				if seed == 0 {
					t.Logf("%d findings; last: %s", len(whole)-1, whole[len(whole)-1])
				}
			}
		})
	}
	if refused == 0 || taken == 0 {
		t.Fatalf("pieces taken %d times, refused %d: both must happen", taken, refused)
	}
}

func kvpAt(events []string, i int) string {
	if i < len(events) {
		return events[i]
	}
	return "(none)"
}

// kvpVerify verifies p with jobs and lists its findings and report.
func kvpVerify(t *testing.T, p *logstore.KafkaPartition, jobs int) []string {
	t.Helper()
	var events []string
	rep, err := p.Verify(0, 1, logstore.VerifyOptions{Jobs: jobs, Finding: func(f logstore.Finding) error {
		events = append(events, fmt.Sprintf("%s %s %s at %d (offset %d): %s", f.Severity, f.Kind, f.Path, f.Pos, f.Offset, f.Reason))
		return nil
	}})
	return append(events, fmt.Sprintf("report: %d records, %d bytes, %d problems, %d notes, complete %v; %v",
		rep.Records, rep.Bytes, rep.Problems, rep.Notes, rep.Complete, err))
}

// kvpBuild says what goes into a kvpLog besides plain batches.
type kvpBuild struct {
	jitter     int  // record timestamps up to this many ms behind the clock
	lateRun    bool // the second half of segment 1 an hour behind the first, in small records
	future     bool // one batch of segment 0 ten hours ahead of the rest
	txn        bool // transactional batches and their markers
	legacy     bool // magic 1 and 0 messages between the batches
	gap        bool // segment 2 named 10 offsets above segment 1's end
	overlap    bool // every batch an .index entry points at overlaps the one before
	overlapMid bool // the batch where segment 1's middle pieces meet overlaps the one before
	lateMid    bool // ... is a second behind the one before
	mid        int  // that batch's number, when one of those is set
}

// kvpLog is a three-segment partition of ~320 KiB segments and where its
// batches are.
type kvpLog struct {
	*kpLog
	spans [][]kvpSpan // per segment, each entry's
}

// kvpSpan is an entry of a .log: a batch, or a legacy message.
type kvpSpan struct {
	pos, first, last, maxTS int64
}

// kvpWrite writes the log seed and b say.
func kvpWrite(t *testing.T, seed uint64, b kvpBuild) *kvpLog {
	if (b.overlapMid || b.lateMid) && b.mid == 0 {
		// Where verifyPlan cuts segment 1 at its middle for --jobs 2 and
		// 4 alike: the same log with nothing odd in it says. Neither
		// oddity moves a batch.
		probe := kvpWrite(t, seed, kvpBuild{})
		_, b.mid = kvpCut(probe, 1, 2, 4)
		if _, n := kvpCut(probe, 1, 4, 8); n != b.mid {
			t.Fatalf("the middle cuts differ: batch %d, %d", b.mid, n)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 23))
	l := &kvpLog{kpLog: newKPLog(t), spans: make([][]kvpSpan, 3)}
	for seg := range 3 {
		s := l.roll(4096)
		if seg == 2 && b.gap {
			s.base += 10
			s.next += 10
		}
		for n := 0; len(s.log) < 320<<10; n++ {
			if b.overlap && s.sinceEntry > s.interval && n > 0 || b.overlapMid && seg == 1 && n == b.mid {
				s.next -= 2
			}
			if b.legacy && n%40 == 7 {
				l.spans[seg] = append(l.spans[seg], kvpLegacy(s, int8(n/40%2), rng))
				continue
			}
			recs := make([]kpRecord, 3+rng.IntN(20))
			late := b.lateRun && seg == 1 && len(s.log) > 160<<10
			for i := range recs {
				recs[i] = kpRecord{key: fmt.Appendf(nil, "k%d", i), value: fmt.Appendf(nil, "%d-%d-%0*d", seg, n, 100+rng.IntN(300), i)}
				if b.jitter > 0 {
					recs[i].tsDelta = -int64(rng.IntN(b.jitter))
				}
				if late {
					recs[i].value, recs[i].tsDelta = recs[i].value[:8], -3_600_000
				}
			}
			if b.future && seg == 0 && n == 30 {
				recs[0].tsDelta += 36_000_000
			}
			batch := kpBatch{pid: -1, recs: recs}
			if b.lateMid && seg == 1 && n == b.mid {
				// Stamped by the broker a second behind: its records'
				// deltas, and so its size, stay.
				batch.logAppendTime = kpTS + l.clock - 1000
			}
			if b.txn && n%5 == 1 {
				batch.pid, batch.transactional = 7, true
			}
			l.spans[seg] = append(l.spans[seg], kvpAdd(l, batch))
			if batch.transactional {
				typ := kafka.ControlCommit
				if n%10 == 1 {
					typ = kafka.ControlAbort
				}
				l.spans[seg] = append(l.spans[seg], kvpAdd(l, kpBatch{pid: 7, transactional: true, controlBatch: true, control: typ}))
			}
		}
	}
	l.write()
	return l
}

// kvpAdd adds b to l's active segment.
func kvpAdd(l *kvpLog, b kpBatch) kvpSpan {
	pos, base := l.add(b, false)
	s := l.segs[len(l.segs)-1]
	enc := s.log[pos:]
	return kvpSpan{pos: pos, first: base, last: s.next - 1, maxTS: int64(binary.BigEndian.Uint64(enc[35:]))}
}

// kvpLegacy appends a legacy message of magic to s, its .index entry
// made as Kafka's LogSegment makes them.
func kvpLegacy(s *kpSegment, magic int8, rng *rand.Rand) kvpSpan {
	enc := kdMessage(magic, s.next, 0, []byte("legacy"), fmt.Appendf(nil, "%0*d", 100+rng.IntN(300), s.next))
	pos := int64(len(s.log))
	if s.sinceEntry > s.interval {
		s.index = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(s.index, uint32(s.next-s.base)), uint32(pos))
		s.sinceEntry = 0
	}
	s.sinceEntry += len(enc)
	s.log = append(s.log, enc...)
	s.next++
	return kvpSpan{pos: pos, first: s.next - 1, last: s.next - 1, maxTS: -1}
}

// kvpCut is where verifyPlan cuts segment seg for --jobs jobs before its
// piece k: the .index entry at or below its share of the bytes, and the
// number of the entry of the .log it points at.
func kvpCut(l *kvpLog, seg, jobs, k int) (entry, n int) {
	s := l.segs[seg]
	parts := min(4*jobs, len(s.log)/(16<<10))
	target := int64(len(s.log) / parts * k)
	entry = -1
	for i := 0; i+8 <= len(s.index); i += 8 {
		if int64(binary.BigEndian.Uint32(s.index[i+4:])) <= target {
			entry = i / 8
		}
	}
	pos := int64(binary.BigEndian.Uint32(s.index[entry*8+4:]))
	return entry, slices.IndexFunc(l.spans[seg], func(sp kvpSpan) bool { return sp.pos == pos })
}

// kvpEdit rewrites file ext of segment seg with edit.
func kvpEdit(t *testing.T, l *kvpLog, seg int, ext string, edit func(b []byte) []byte) {
	t.Helper()
	path := l.path(seg, ext)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// kvpBatchIn is a batch's position in segment seg, away from its ends.
func kvpBatchIn(rng *rand.Rand, l *kvpLog, seg int) int64 {
	sp := l.spans[seg]
	return sp[1+rng.IntN(len(sp)-2)].pos
}

func kvpFlip(t *testing.T, rng *rand.Rand, l *kvpLog) {
	seg := rng.IntN(3)
	at := kvpBatchIn(rng, l, seg) + kafka.BatchHeaderLen + 2
	kvpEdit(t, l, seg, kafka.LogExt, func(b []byte) []byte { b[at] ^= 0x20; return b })
}

func kvpFlipLast(t *testing.T, rng *rand.Rand, l *kvpLog) {
	sp := l.spans[2]
	at := sp[len(sp)-2].pos + kafka.BatchHeaderLen + 2
	kvpEdit(t, l, 2, kafka.LogExt, func(b []byte) []byte { b[at] ^= 0x20; return b })
}

func kvpZeros(t *testing.T, rng *rand.Rand, l *kvpLog) {
	seg := rng.IntN(3)
	at := kvpBatchIn(rng, l, seg) + 30
	kvpEdit(t, l, seg, kafka.LogExt, func(b []byte) []byte { clear(b[at : at+40]); return b })
}

func kvpLyingLength(t *testing.T, rng *rand.Rand, l *kvpLog) {
	seg := rng.IntN(3)
	at := kvpBatchIn(rng, l, seg) + kafka.LogOverhead - 2
	kvpEdit(t, l, seg, kafka.LogExt, func(b []byte) []byte { b[at] ^= 0x04; return b })
}

// kvpLyingLengthAtCut makes the length of the batch before segment 1's
// middle cut 4 KiB too long: the whole check finds its CRC wrong, the
// piece it ends finds it torn.
func kvpLyingLengthAtCut(t *testing.T, _ *rand.Rand, l *kvpLog) {
	_, n := kvpCut(l, 1, 2, 4)
	at := l.spans[1][n-1].pos + kafka.LogOverhead - 2
	kvpEdit(t, l, 1, kafka.LogExt, func(b []byte) []byte { b[at] += 0x10; return b })
}

func kvpTorn(t *testing.T, _ *rand.Rand, l *kvpLog) {
	sp := l.spans[2]
	kvpEdit(t, l, 2, kafka.LogExt, func(b []byte) []byte { return b[:sp[len(sp)-1].pos+100] })
}

// kvpIndexDisorder swaps every seventh pair of .index entries.
func kvpIndexDisorder(t *testing.T, rng *rand.Rand, l *kvpLog) {
	seg := rng.IntN(3)
	kvpEdit(t, l, seg, kafka.IndexExt, func(b []byte) []byte {
		for i := 8 * (1 + rng.IntN(7)); i+16 <= len(l.segs[seg].index); i += 7 * 8 {
			var e [8]byte
			copy(e[:], b[i:i+8])
			copy(b[i:i+8], b[i+8:i+16])
			copy(b[i+8:i+16], e[:])
		}
		return b
	})
}

// kvpIndexOffsets makes every fifth .index entry name the offset after
// its batch's last.
func kvpIndexOffsets(t *testing.T, rng *rand.Rand, l *kvpLog) {
	kvpEveryEntry(t, rng, l, kafka.IndexExt, 5, func(e []byte) { binary.BigEndian.PutUint32(e, binary.BigEndian.Uint32(e)+1) })
}

// kvpEveryEntry edits every nth entry of file ext of a random segment,
// from a random one of the first n on.
func kvpEveryEntry(t *testing.T, rng *rand.Rand, l *kvpLog, ext string, n int, edit func(entry []byte)) {
	seg := rng.IntN(3)
	size, entries := 8, len(l.segs[seg].index)
	if ext == kafka.TimeIndexExt {
		size, entries = 12, len(l.segs[seg].tindex)
	}
	kvpEdit(t, l, seg, ext, func(b []byte) []byte {
		for i := size * rng.IntN(n); i+size <= entries; i += n * size {
			edit(b[i : i+size])
		}
		return b
	})
}

// kvpTimeIndexOwnMax rewrites segment 0's .timeindex as each indexed
// batch's own max timestamp, not the running maximum: after the batch
// from the future they are all below it.
func kvpTimeIndexOwnMax(t *testing.T, _ *rand.Rand, l *kvpLog) {
	s := l.segs[0]
	var tindex []byte
	for _, b := range l.batches {
		if b.first >= uint64(l.segs[1].base) {
			break
		}
		if b.first%9 == 0 && b.maxTS < kpTS+36_000_000 {
			tindex = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(tindex, uint64(b.maxTS)), uint32(int64(b.last)-s.base))
		}
	}
	kvpEdit(t, l, 0, kafka.TimeIndexExt, func([]byte) []byte { return tindex })
}

// kvpTimeIndexOff makes every fourth .timeindex entry's timestamp one
// ms late.
func kvpTimeIndexOff(t *testing.T, rng *rand.Rand, l *kvpLog) {
	kvpEveryEntry(t, rng, l, kafka.TimeIndexExt, 4, func(e []byte) { binary.BigEndian.PutUint64(e, binary.BigEndian.Uint64(e)+1) })
}

// kvpTimeIndexStray breaks the order of the .timeindex where the last
// piece of segment 2 for --jobs 2 starts, so that the first entry the
// piece judges against its batches is one of the piece before's: its
// first entry's timestamp below the entry before's, the next entry that
// of the batch the entry before names (an offset below its own), the
// next that of the batch right before the piece, which checks out.
func kvpTimeIndexStray(t *testing.T, _ *rand.Rand, l *kvpLog) {
	entry, n := kvpCut(l, 2, 2, 7)
	s, sp := l.segs[2], l.spans[2]
	// Each .index entry has a .timeindex entry of the same batch.
	if len(s.tindex) != len(s.index)/8*12 {
		t.Fatalf("%d time entries for %d index entries", len(s.tindex)/12, len(s.index)/8)
	}
	if (entry+3)*12 > len(s.tindex) {
		t.Fatalf("entry %d is too near the end", entry)
	}
	put := func(i int, ts, off int64) {
		binary.BigEndian.PutUint64(s.tindex[i*12:], uint64(ts))
		binary.BigEndian.PutUint32(s.tindex[i*12+8:], uint32(off-s.base))
	}
	before := slices.IndexFunc(sp, func(x kvpSpan) bool {
		return x.last == s.base+int64(binary.BigEndian.Uint32(s.tindex[(entry-1)*12+8:]))
	})
	put(entry, sp[before].maxTS-1, sp[n].last)
	put(entry+1, sp[before].maxTS, sp[before].last)
	put(entry+2, sp[n-1].maxTS, sp[n-1].last)
	kvpEdit(t, l, 2, kafka.TimeIndexExt, func(b []byte) []byte { return append(slices.Clone(s.tindex), b[len(s.tindex):]...) })
}

func kvpNoTimeIndex(t *testing.T, rng *rand.Rand, l *kvpLog) {
	if err := os.Remove(l.path(rng.IntN(3), kafka.TimeIndexExt)); err != nil {
		t.Fatal(err)
	}
}

// kvpPartialEntries ends a closed segment's .index and .timeindex in 5
// bytes of an entry.
func kvpPartialEntries(t *testing.T, rng *rand.Rand, l *kvpLog) {
	seg := rng.IntN(2)
	for _, ext := range []string{kafka.IndexExt, kafka.TimeIndexExt} {
		kvpEdit(t, l, seg, ext, func(b []byte) []byte { return append(b, 1, 2, 3, 4, 5) })
	}
}
