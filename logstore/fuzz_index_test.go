package logstore

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// The index files as logstore reads them: a partition of valid records
// (one or two segments) whose .index and .timeindex are arbitrary bytes.
// Indexes are hints (docs/format.md §4): whatever they hold, a read by offset starts
// at exactly that offset, a read by time at exactly the first record at or
// after the time (where timestamps never decrease), the end of the data
// is found where it is, and dump-index --verify calls an entry ok only
// when it is right.

// fiRec is a record of the fuzzed partition, and where it is.
type fiRec struct {
	off uint64
	ts  int64
	pos int64 // in its segment's .log
	seg int
}

// fiPartition writes n valid records from base into dir, the second
// segment starting at record split (0: one segment); the segment named by
// which (0 or 1, the last one when there is only one) gets index and
// timeindex as its index files, the other segment correct ones.
func fiPartition(t testing.TB, dir string, base uint64, n, split int, tsMode byte, which int, index, timeindex []byte) ([]segment, []fiRec) {
	t.Helper()
	var recs []fiRec
	var segs []segment
	var log, idx, tidx [][]byte
	for i := range n {
		if i == 0 || i == split {
			segs = append(segs, segment{dir: dir, base: base + uint64(i)})
			log, idx, tidx = append(log, nil), append(idx, nil), append(tidx, nil)
		}
		s := len(segs) - 1
		r := fiRec{off: base + uint64(i), ts: fiTimestamp(tsMode, i), pos: int64(len(log[s])), seg: s}
		recs = append(recs, r)
		idx[s] = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(idx[s], r.off), uint64(r.pos))
		tidx[s] = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(tidx[s], r.off), uint64(r.ts))
		var key []byte
		if i%3 != 0 {
			key = []byte{'k', byte('a' + i%26)}
		}
		log[s] = format.AppendRecord(log[s], &format.Record{Offset: r.off, Timestamp: r.ts, Key: key, Value: make([]byte, (i*37)%50)})
	}
	if n == 0 {
		segs = []segment{{dir: dir, base: base}}
		log, idx, tidx = [][]byte{nil}, [][]byte{nil}, [][]byte{nil}
	}
	which = min(which, len(segs)-1)
	idx[which], tidx[which] = index, timeindex
	for i, seg := range segs {
		for ext, b := range map[string][]byte{format.LogExt: log[i], format.IndexExt: idx[i], format.TimeIndexExt: tidx[i]} {
			if err := os.WriteFile(seg.path(ext), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return segs, recs
}

// fiTimestamp is record i's timestamp: rising (what seglog writes), in
// runs of equal ones, or stepping back now and then (a foreign writer's
// wall clock).
func fiTimestamp(mode byte, i int) int64 {
	const t0 = 1700000000000000000
	switch mode % 3 {
	case 0:
		return t0 + int64(i)*1000
	case 1:
		return t0 + int64(i/4)*1000
	}
	return t0 + int64((i*7919)%13)*1000
}

// fiSeeds are correct, shifted, truncated and lying index files.
func fiSeeds(f *testing.F) {
	dir := f.TempDir()
	_, recs := fiPartition(f, dir, 0, 20, 0, 0, 0, nil, nil)
	var idx, tidx []byte
	for _, r := range recs {
		idx = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(idx, r.off), uint64(r.pos))
		tidx = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(tidx, r.off), uint64(r.ts))
	}
	sparse := func(b []byte, every int) []byte {
		var out []byte
		for i := 0; i+16 <= len(b); i += 16 * every {
			out = append(out, b[i:i+16]...)
		}
		return out
	}
	lying := append([]byte(nil), idx...)
	binary.BigEndian.PutUint64(lying[5*16+8:], uint64(recs[7].pos))
	binary.BigEndian.PutUint64(lying[9*16:], 3)
	pastEnd := append([]byte(nil), idx...)
	binary.BigEndian.PutUint64(pastEnd[19*16+8:], 1<<40)
	tlying := append([]byte(nil), tidx...)
	binary.BigEndian.PutUint64(tlying[6*16+8:], uint64(math.MaxInt64))
	binary.BigEndian.PutUint64(tlying[8*16+8:], 0)
	for _, s := range []struct {
		idx, tidx []byte
	}{
		{idx, tidx},
		{sparse(idx, 4), sparse(tidx, 4)},
		{nil, nil},
		{idx[:len(idx)-5], tidx[:len(tidx)-9]},
		{lying, tlying},
		{pastEnd, tidx},
		{append(append([]byte(nil), idx...), idx...), append(append([]byte(nil), tidx...), tidx[:40]...)},
		{make([]byte, 64), make([]byte, 64)},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, nil},
	} {
		for _, mode := range []byte{0, 1, 2} {
			f.Add(uint64(0), uint8(20), uint8(0), mode, uint8(0), s.idx, s.tidx, uint64(7), int64(fiTimestamp(mode, 9)))
		}
		f.Add(uint64(0), uint8(20), uint8(8), byte(0), uint8(1), s.idx, s.tidx, uint64(12), int64(fiTimestamp(0, 3)))
	}
	f.Add(uint64(1000), uint8(5), uint8(2), byte(0), uint8(0), idx, tidx, uint64(1003), int64(0))
	f.Add(uint64(math.MaxUint64-30), uint8(20), uint8(10), byte(0), uint8(1), idx, tidx, uint64(math.MaxUint64), int64(math.MaxInt64))
}

func FuzzIndexFiles(f *testing.F) {
	fiSeeds(f)
	f.Fuzz(func(t *testing.T, base uint64, n8, split8, tsMode, which8 uint8, index, timeindex []byte, target uint64, tq int64) {
		if len(index) > 1<<14 || len(timeindex) > 1<<14 {
			return
		}
		n := int(n8 % 65)
		if base > math.MaxUint64-uint64(n)-1 {
			base = math.MaxUint64 - uint64(n) - 1
		}
		split := 0
		if n > 1 {
			split = int(split8) % n
		}
		dir := filepath.Join(t.TempDir(), "0")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		segs, recs := fiPartition(t, dir, base, n, split, tsMode, int(which8%2), index, timeindex)
		next := base + uint64(n)
		last := segs[len(segs)-1]

		// The in-segment lookup: a validated starting point at or before
		// the target, in the segment that holds it.
		for i, seg := range segs {
			fh, err := fsx.OpenRead(seg.path(format.LogExt))
			if err != nil {
				t.Fatal(err)
			}
			idx, closeIdx := openSegfileIndex(seg)
			sc, err := segfile.NewScanner(segfileSegment(seg, osFile{File: fh}, idx, seg.base, false), -1, segfile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := sc.SeekOffset(target); err != nil {
				t.Fatal(err)
			}
			pos, off := sc.Pos(), sc.NextOffset()
			sc.Close()
			closeIdx()
			fh.Close()
			if off == seg.base && pos == 0 {
				continue
			}
			ok := false
			for _, r := range recs {
				ok = ok || r.seg == i && r.off == off && r.pos == pos
			}
			if !ok || off > target {
				t.Fatalf("SeekOffset(segment %d, %d) = byte %d, offset %d: not a record of the segment at or before the target (records %+v)", seg.base, target, pos, off, recs)
			}
		}

		p, err := OpenPartitionDir(dir, "t/0")
		if err != nil {
			t.Fatal(err)
		}
		defer fiClose(p)
		// Reading by offset starts exactly there and goes on contiguously
		// to the end.
		from := min(max(target, base), next)
		it, err := p.Read(target)
		if err != nil {
			t.Fatal(err)
		}
		want := from
		for it.Next() {
			if o := it.Record().Offset; o != want {
				it.Close()
				t.Fatalf("Read(%d): offset %d where %d was due (base %d, next %d)", target, o, want, base, next)
			}
			want++
		}
		if err := it.Err(); err != nil || want != next {
			t.Fatalf("Read(%d) ended at %d (%v), want %d", target, want, err, next)
		}
		it.Close()

		// The end of the data, as a writer or describe finds it from the
		// last index entry that checks out.
		end, err := segmentEnd(last, 0, true, false)
		if err != nil || end.Next != next || end.Tail != nil {
			t.Fatalf("segmentEnd: next %d, tail %v (%v); want next %d, clean", end.Next, end.Tail, err, next)
		}

		// Reading by time, where timestamps never decrease, finds the
		// first record whose running maximum is at or after tq.
		if tsMode%3 != 2 {
			wantOff := next
			runMax := int64(math.MinInt64)
			for _, r := range recs {
				if runMax = max(runMax, r.ts); runMax >= tq {
					wantOff = r.off
					break
				}
			}
			got, err := p.OffsetAtTime(tq)
			if err != nil || got != wantOff {
				t.Fatalf("OffsetAtTime(%d) = %d (%v), want %d (timestamps %v)", tq, got, err, wantOff, fiTimestamps(recs))
			}
		} else if got, err := p.OffsetAtTime(tq); err != nil || got < base || got > next {
			t.Fatalf("OffsetAtTime(%d) = %d (%v), outside %d..%d", tq, got, err, base, next)
		}

		// dump-index --verify: ok only for an entry that is right.
		fiCheckDump(t, last, recs, segs, false)
		fiCheckDump(t, last, recs, segs, true)
		if len(segs) > 1 {
			fiCheckDump(t, segs[0], recs, segs, false)
			fiCheckDump(t, segs[0], recs, segs, true)
		}
	})
}

// fiClose closes p where a Partition keeps segment files open between
// reads: thousands of executions must not run out of descriptors waiting
// for the garbage collector.
func fiClose(p any) {
	if c, ok := p.(io.Closer); ok {
		c.Close()
	}
}

func fiTimestamps(recs []fiRec) []int64 {
	var ts []int64
	for _, r := range recs {
		ts = append(ts, r.ts)
	}
	return ts
}

// fiCheckDump dumps seg's .index (or .timeindex) with verify and checks
// each verdict against the truth.
func fiCheckDump(t *testing.T, seg segment, recs []fiRec, segs []segment, timeIndex bool) {
	t.Helper()
	si := 0
	for i := range segs {
		if segs[i].base == seg.base {
			si = i
		}
	}
	ext := format.IndexExt
	if timeIndex {
		ext = format.TimeIndexExt
	}
	path := seg.path(ext)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var entries int64
	d, err := OpenIndexDump(path, true)
	if err != nil {
		t.Fatalf("OpenIndexDump %s: %v", path, err)
	}
	defer d.Close()
	sum, err := d.Run(func(e IndexEntryInfo) error {
		entries++
		right := false
		for _, r := range recs {
			if r.seg == si && r.off == e.Offset {
				right = !timeIndex && r.pos == e.Value || timeIndex && r.ts == e.Value
			}
		}
		ok := e.Verdict == VerdictOK || e.Verdict == VerdictBackwards
		switch {
		case ok && !right:
			t.Fatalf("%s entry %d (offset %d, %d): verdict %v, but no record of the segment has that %s", path, e.Entry, e.Offset, e.Value, e.Verdict, map[bool]string{false: "position", true: "timestamp"}[timeIndex])
		case right && !ok && e.Verdict != VerdictOutOfOrder:
			t.Fatalf("%s entry %d (offset %d, %d) is right, verdict %v", path, e.Entry, e.Offset, e.Value, e.Verdict)
		case e.Verdict == VerdictUnverified:
			t.Fatalf("%s entry %d: not verified", path, e.Entry)
		}
		return nil
	})
	if err != nil {
		var ce *CorruptionError
		if !errors.As(err, &ce) {
			t.Fatalf("dump %s: %v", path, err)
		}
	}
	if sum.Entries != fi.Size()/format.IndexEntryLen || entries != sum.Entries || sum.PartialBytes != fi.Size()%format.IndexEntryLen {
		t.Fatalf("dump %s: %d entries (%d seen), %d partial bytes; the file is %d bytes", path, sum.Entries, entries, sum.PartialBytes, fi.Size())
	}
}
