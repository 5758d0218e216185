package logstore_test

// Iterator.SkipCorrupt (`read --skip-corrupt`, docs/format.md §6): after a corrupt
// record, reading goes on at the next record whose header, size and CRC
// check out, or at the next segment. Fixtures come from the spec writer;
// expected offsets are written from the damage the test did.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// scEvent is what a reader saw: a record's offset, or (Corrupt) a
// corruption error at byte Pos of segment Seg, expected offset Offset.
type scEvent struct {
	Corrupt bool
	Offset  uint64
	Seg     uint64
	Pos     int64
	Reason  error
}

func (e scEvent) String() string {
	if e.Corrupt {
		return fmt.Sprintf("corrupt(seg %d byte %d offset %d: %v)", e.Seg, e.Pos, e.Offset, e.Reason)
	}
	return fmt.Sprint(e.Offset)
}

// scRead reads from `from` to the end, calling SkipCorrupt after each
// corruption error (at most 20), and returns what it saw and the error
// that ended the read, if any. Each record's value is checked against
// what tsRec wrote at its offset (valueOf may say otherwise).
func scRead(t *testing.T, dir string, from uint64, valueOf func(o uint64) string) ([]scEvent, error) {
	t.Helper()
	p := tsOpen(t, dir)
	it, err := p.Read(from)
	if err != nil {
		t.Fatalf("Read(%d): %v", from, err)
	}
	defer it.Close()
	var evs []scEvent
	for skips := 0; skips < 20; {
		for it.Next() {
			r := it.Record()
			want := string(tsRec(r.Offset, 0).Value)
			if valueOf != nil {
				want = valueOf(r.Offset)
			}
			if string(r.Value) != want {
				t.Errorf("offset %d has value %q, want %q", r.Offset, r.Value, want)
			}
			evs = append(evs, scEvent{Offset: r.Offset})
		}
		var ce *logstore.CorruptionError
		if !errors.As(it.Err(), &ce) {
			break
		}
		var base uint64
		if _, err := fmt.Sscanf(ce.Path[len(ce.Path)-len("00000000000000000000.log"):], "%020d.log", &base); err != nil {
			t.Fatalf("corruption error path %q: %v", ce.Path, err)
		}
		evs = append(evs, scEvent{Corrupt: true, Offset: uint64(ce.Offset), Seg: base, Pos: ce.Pos, Reason: ce.Reason})
		skips++
		if !it.SkipCorrupt() {
			break
		}
		if it.Err() != nil {
			t.Errorf("SkipCorrupt returned true, leaving Err() = %v", it.Err())
		}
	}
	return evs, it.Err()
}

// scOffs is a run of record events.
func scOffs(from, to uint64) []scEvent {
	var evs []scEvent
	for o := from; o < to; o++ {
		evs = append(evs, scEvent{Offset: o})
	}
	return evs
}

func scCorrupt(seg uint64, pos int64, offset uint64, reason error) scEvent {
	return scEvent{Corrupt: true, Seg: seg, Pos: pos, Offset: offset, Reason: reason}
}

// scJoin concatenates event lists.
func scJoin(parts ...[]scEvent) []scEvent {
	var all []scEvent
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

func scCheck(t *testing.T, what string, got []scEvent, gotErr error, want []scEvent) {
	t.Helper()
	if gotErr != nil {
		t.Errorf("%s: ended with %v", what, gotErr)
	}
	bad := len(got) != len(want)
	for i := 0; !bad && i < len(got); i++ {
		g, w := got[i], want[i]
		bad = g.Corrupt != w.Corrupt || g.Offset != w.Offset ||
			(w.Corrupt && (g.Seg != w.Seg || g.Pos != w.Pos || !errors.Is(g.Reason, w.Reason)))
	}
	if bad {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
	// Whatever the damage, offsets only increase: none is returned twice.
	var last uint64
	for i, e := range got {
		if e.Corrupt {
			continue
		}
		if i > 0 && e.Offset <= last {
			t.Errorf("%s: offset %d after %d", what, e.Offset, last)
		}
		last = e.Offset
	}
}

// scValuePos is the byte position of the first value byte of the k-th
// record of seg, as written at lay.
func scValuePos(seg swSegment, lay swLayout, k int) int64 {
	return lay.Pos[k] + swHeaderLen + int64(len(seg.Records[k].Key))
}

func scTS(o uint64) int64 { return tsT0 + int64(o)*1000 }

// scIndexVariants writes the same partition with index interval 1, 7, and
// without indexes: how the reader finds the next valid record must not
// change which one it finds.
var scIndexVariants = []struct {
	name     string
	interval int
	noIndex  bool
}{{"interval=1", 1, false}, {"interval=7", 7, false}, {"no-index", 1, true}}

// scWrite writes segs into a fresh directory, per the index variant, and
// returns the directory and the layouts.
func scWrite(t *testing.T, interval int, noIndex bool, segs ...swSegment) (string, []swLayout) {
	t.Helper()
	dir := t.TempDir()
	for i := range segs {
		segs[i].Interval = interval
	}
	lays := swWritePartition(t, dir, segs...)
	if noIndex {
		for _, s := range segs {
			removeFile(t, segPath(dir, s.Base, ".index"))
			removeFile(t, segPath(dir, s.Base, ".timeindex"))
		}
	}
	return dir, lays
}

func TestSkipCorrupt(t *testing.T) {
	seg := func(from, to uint64) swSegment { return tsSeg(from, to, 1, scTS) }
	for _, v := range scIndexVariants {
		t.Run(v.name, func(t *testing.T) {
			t.Run("flipped-value-byte-closed", func(t *testing.T) {
				for _, k := range []int{0, 1, 4, 8} {
					segs := []swSegment{seg(0, 10), seg(10, 15)}
					dir, lays := scWrite(t, v.interval, v.noIndex, segs...)
					swFlip(t, segPath(dir, 0, ".log"), scValuePos(segs[0], lays[0], k), 0x01)
					o := uint64(k)
					want := scJoin(scOffs(0, o), []scEvent{scCorrupt(0, lays[0].Pos[k], o, format.ErrCRC)}, scOffs(o+1, 15))
					got, err := scRead(t, dir, 0, nil)
					scCheck(t, fmt.Sprintf("damage at %d, Read(0)", k), got, err, want)
					if k > 0 {
						got, err = scRead(t, dir, o-1, nil)
						scCheck(t, fmt.Sprintf("damage at %d, Read(%d)", k, o-1), got, err, want[k-1:])
					}
					// Reading from past the damage: an index leads past it,
					// without one the scan meets it and skips it. Either
					// way the records are from.. and nothing before.
					for _, from := range []uint64{o + 1, o + 2} {
						got, err = scRead(t, dir, from, nil)
						var recs []scEvent
						for _, e := range got {
							if !e.Corrupt {
								recs = append(recs, e)
							}
						}
						scCheck(t, fmt.Sprintf("damage at %d, Read(%d)", k, from), recs, err, scOffs(from, 15))
					}
				}
			})
			t.Run("two-damaged-records", func(t *testing.T) {
				segs := []swSegment{seg(0, 12), seg(12, 15)}
				dir, lays := scWrite(t, v.interval, v.noIndex, segs...)
				swFlip(t, segPath(dir, 0, ".log"), scValuePos(segs[0], lays[0], 3), 0x40)
				swFlip(t, segPath(dir, 0, ".log"), scValuePos(segs[0], lays[0], 7), 0x40)
				got, err := scRead(t, dir, 0, nil)
				scCheck(t, "Read(0)", got, err, scJoin(
					scOffs(0, 3), []scEvent{scCorrupt(0, lays[0].Pos[3], 3, format.ErrCRC)},
					scOffs(4, 7), []scEvent{scCorrupt(0, lays[0].Pos[7], 7, format.ErrCRC)},
					scOffs(8, 15)))
			})
			t.Run("two-adjacent-damaged-records", func(t *testing.T) {
				segs := []swSegment{seg(0, 12), seg(12, 15)}
				dir, lays := scWrite(t, v.interval, v.noIndex, segs...)
				swFlip(t, segPath(dir, 0, ".log"), scValuePos(segs[0], lays[0], 5), 0x40)
				swFlip(t, segPath(dir, 0, ".log"), scValuePos(segs[0], lays[0], 6), 0x40)
				got, err := scRead(t, dir, 0, nil)
				scCheck(t, "Read(0)", got, err, scJoin(
					scOffs(0, 5), []scEvent{scCorrupt(0, lays[0].Pos[5], 5, format.ErrCRC)},
					scOffs(7, 15)))
			})
			t.Run("nothing-valid-after-in-closed-segment", func(t *testing.T) {
				// The damaged record is the closed segment's last: skipping
				// it leads to the next segment.
				segs := []swSegment{seg(0, 10), seg(10, 15), seg(15, 18)}
				dir, lays := scWrite(t, v.interval, v.noIndex, segs...)
				swFlip(t, segPath(dir, 10, ".log"), scValuePos(segs[1], lays[1], 4), 0x01)
				got, err := scRead(t, dir, 0, nil)
				scCheck(t, "Read(0)", got, err, scJoin(
					scOffs(0, 14), []scEvent{scCorrupt(10, lays[1].Pos[4], 14, format.ErrCRC)}, scOffs(15, 18)))
			})
			t.Run("closed-segment-truncated", func(t *testing.T) {
				segs := []swSegment{seg(0, 10), seg(10, 15)}
				dir, lays := scWrite(t, v.interval, v.noIndex, segs...)
				swTruncate(t, segPath(dir, 0, ".log"), lays[0].Pos[7]+20)
				got, err := scRead(t, dir, 0, nil)
				scCheck(t, "Read(0)", got, err, scJoin(
					scOffs(0, 7), []scEvent{scCorrupt(0, lays[0].Pos[7], 7, format.ErrShort)}, scOffs(10, 15)))
			})
			t.Run("first-record-of-closed-segment", func(t *testing.T) {
				segs := []swSegment{seg(0, 5), seg(5, 12), seg(12, 14)}
				dir, lays := scWrite(t, v.interval, v.noIndex, segs...)
				swFlip(t, segPath(dir, 5, ".log"), scValuePos(segs[1], lays[1], 0), 0x01)
				got, err := scRead(t, dir, 0, nil)
				scCheck(t, "Read(0)", got, err, scJoin(
					scOffs(0, 5), []scEvent{scCorrupt(5, 0, 5, format.ErrCRC)}, scOffs(6, 14)))
			})
			t.Run("active-segment-valid-after", func(t *testing.T) {
				segs := []swSegment{seg(0, 10), seg(10, 22)}
				dir, lays := scWrite(t, v.interval, v.noIndex, segs...)
				swFlip(t, segPath(dir, 10, ".log"), scValuePos(segs[1], lays[1], 3), 0x01)
				got, err := scRead(t, dir, 0, nil)
				scCheck(t, "Read(0)", got, err, scJoin(
					scOffs(0, 13), []scEvent{scCorrupt(10, lays[1].Pos[3], 13, format.ErrCRC)}, scOffs(14, 22)))
			})
			t.Run("active-segment-last-record", func(t *testing.T) {
				// docs/format.md §3: nothing valid after it in the active segment: an
				// incomplete tail, the end of the data, nothing to skip.
				segs := []swSegment{seg(0, 10), seg(10, 15)}
				dir, lays := scWrite(t, v.interval, v.noIndex, segs...)
				swFlip(t, segPath(dir, 10, ".log"), scValuePos(segs[1], lays[1], 4), 0x01)
				got, err := scRead(t, dir, 0, nil)
				scCheck(t, "Read(0)", got, err, scOffs(0, 14))
			})
			t.Run("wrong-offset", func(t *testing.T) {
				segs := []swSegment{seg(0, 10), seg(10, 15)}
				dir, lays := scWrite(t, v.interval, v.noIndex, segs...)
				swPut(t, segPath(dir, 0, ".log"), lays[0].Pos[4], binary.BigEndian.AppendUint64(nil, 40))
				got, err := scRead(t, dir, 0, nil)
				scCheck(t, "Read(0)", got, err, scJoin(
					scOffs(0, 4), []scEvent{scCorrupt(0, lays[0].Pos[4], 4, format.ErrOffset)}, scOffs(5, 15)))
			})
			for _, size := range []uint32{0x7fffff00, 0xffffffff, 1 << 20} {
				t.Run(fmt.Sprintf("huge-size-field-%#x", size), func(t *testing.T) {
					for _, active := range []bool{false, true} {
						segs := []swSegment{seg(0, 10), seg(10, 20)}
						dir, lays := scWrite(t, v.interval, v.noIndex, segs...)
						base, si := uint64(0), 0
						if active {
							base, si = 10, 1
						}
						swPut(t, segPath(dir, base, ".log"), lays[si].Pos[5]+swSizeField, binary.BigEndian.AppendUint32(nil, size))
						got, err := scRead(t, dir, 0, nil)
						o := base + 5
						// Every one of these sizes runs past the file's end.
						want := scJoin(scOffs(0, o), []scEvent{scCorrupt(base, lays[si].Pos[5], o, format.ErrShort)}, scOffs(o+1, 20))
						scCheck(t, fmt.Sprintf("active=%v, Read(0)", active), got, err, want)
					}
				})
			}
			t.Run("garbage-between-records", func(t *testing.T) {
				// 100 bytes of junk overwrite offsets 3..5 and part of 6,
				// including something that looks like a header.
				segs := []swSegment{seg(0, 12), seg(12, 14)}
				dir, lays := scWrite(t, v.interval, v.noIndex, segs...)
				junk := make([]byte, lays[0].Pos[7]-lays[0].Pos[3]-3)
				for i := range junk {
					junk[i] = byte(i*37 + 11)
				}
				fake := swEncode(nil, tsRec(5, scTS(5)))
				fake[swHeaderLen] ^= 0xff // a header that checks out, a body that does not
				copy(junk[10:], fake)
				swPut(t, segPath(dir, 0, ".log"), lays[0].Pos[3], junk)
				got, err := scRead(t, dir, 0, nil)
				if len(got) < 4 || !got[3].Corrupt {
					t.Fatalf("Read(0) = %v, want offsets 0..2 then corruption", got)
				}
				scCheck(t, "Read(0)", got, err, scJoin(
					scOffs(0, 3), []scEvent{scCorrupt(0, lays[0].Pos[3], 3, got[3].Reason)}, scOffs(7, 14)))
			})
		})
	}
}

// docs/format.md §1: segments cover non-overlapping ranges; when a foreign writer's
// segments overlap anyway, skipping the overlap must return no offset twice.
func TestSkipCorruptOverlap(t *testing.T) {
	w := func(o uint64) string { return "w" + fmt.Sprint(o) }
	second := func(from, to uint64) swSegment {
		s := tsSeg(from, to, 1, scTS)
		for i := range s.Records {
			s.Records[i].Value = []byte(w(s.Records[i].Offset))
		}
		return s
	}
	// Values: tsRec's for the first segment, "w<o>" for the overlapping one.
	valueOf := func(split uint64) func(o uint64) string {
		return func(o uint64) string {
			if o >= split {
				return w(o)
			}
			return string(tsRec(o, 0).Value)
		}
	}
	t.Run("second-starts-below-end-of-first", func(t *testing.T) {
		dir, _ := scWrite(t, 1, false, tsSeg(0, 5, 1, scTS), second(3, 7))
		got, err := scRead(t, dir, 0, valueOf(5))
		scCheck(t, "Read(0)", got, err, scJoin(scOffs(0, 5), []scEvent{scCorrupt(3, 0, 5, logstore.ErrOverlap)}, scOffs(5, 7)))
	})
	t.Run("second-inside-first", func(t *testing.T) {
		third := tsSeg(10, 13, 1, scTS)
		dir, _ := scWrite(t, 1, false, tsSeg(0, 10, 1, scTS), second(3, 6), third)
		got, err := scRead(t, dir, 0, nil)
		scCheck(t, "Read(0)", got, err, scJoin(scOffs(0, 10), []scEvent{scCorrupt(3, 0, 10, logstore.ErrOverlap)}, scOffs(10, 13)))
	})
	t.Run("overlap-then-damage", func(t *testing.T) {
		segs := []swSegment{tsSeg(0, 5, 1, scTS), second(3, 10)}
		dir, lays := scWrite(t, 1, false, segs...)
		swFlip(t, segPath(dir, 3, ".log"), scValuePos(segs[1], lays[1], 4), 0x01) // offset 7
		got, err := scRead(t, dir, 0, valueOf(5))
		scCheck(t, "Read(0)", got, err, scJoin(
			scOffs(0, 5), []scEvent{scCorrupt(3, 0, 5, logstore.ErrOverlap)},
			scOffs(5, 7), []scEvent{scCorrupt(3, lays[1].Pos[4], 7, format.ErrCRC)},
			scOffs(8, 10)))
	})
}

// SkipCorrupt only acts on a corruption error.
func TestSkipCorruptWithoutCorruption(t *testing.T) {
	dir, _ := scWrite(t, 1, false, tsSeg(0, 5, 1, scTS), tsSeg(5, 8, 1, scTS))
	p := tsOpen(t, dir)
	it, err := p.Read(0)
	if err != nil {
		t.Fatal(err)
	}
	if it.SkipCorrupt() {
		t.Error("SkipCorrupt before Next: true")
	}
	n := 0
	for it.Next() {
		n++
	}
	if n != 8 || it.Err() != nil {
		t.Errorf("read %d records, %v; want 8, nil", n, it.Err())
	}
	if it.SkipCorrupt() || it.Next() {
		t.Error("SkipCorrupt or Next true at the end of the data")
	}
	it.Close()
	if it.SkipCorrupt() {
		t.Error("SkipCorrupt true after Close")
	}
}
