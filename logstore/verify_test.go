package logstore_test

// Verify (verify-crc, docs/format.md §2-§5, docs/cli.md's exit-code table): every kind
// of finding, with its exact file, byte position, offset and severity, on
// fixtures the spec writer made and the test then damaged. Expectations
// come from the damage done, never from logstore.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

const vfT0 = 1700000000000000000

// vfRecLen is the length of every vfRec record: 28 + a 10-byte value.
const vfRecLen = swHeaderLen + 10

// vfRec is record o: no key, value "value-NNNN", timestamp vfT0 + o µs.
func vfRec(o uint64) swRecord {
	return swRecord{Offset: o, Timestamp: vfT0 + int64(o)*1000, Value: fmt.Appendf(nil, "value-%04d", o)}
}

// vfSeg is the segment holding offsets [from, to), index interval every.
func vfSeg(from, to uint64, every int) swSegment {
	seg := swSegment{Base: from, Interval: every}
	for o := from; o < to; o++ {
		seg.Records = append(seg.Records, vfRec(o))
	}
	return seg
}

// vfPos is the byte position of the k-th record of a vfSeg.
func vfPos(k int) int64 { return int64(k) * vfRecLen }

// vfPath is a segment file of dir.
func vfPath(dir string, base uint64, ext string) string { return filepath.Join(dir, swName(base, ext)) }

// vfResult is a Verify run: its findings, one line each
// ("problem corrupt-record 00000000000000000000.log 76 2"), the findings
// themselves, and the report.
type vfResult struct {
	lines    []string
	findings []logstore.Finding
	report   logstore.VerifyReport
}

func vfLine(f logstore.Finding) string {
	return fmt.Sprintf("%s %s %s %d %d", f.Severity, f.Kind, filepath.Base(f.Path), f.Pos, f.Offset)
}

// vfVerify verifies the partition directory dir with jobs workers.
func vfVerify(t *testing.T, dir string, jobs int) vfResult {
	t.Helper()
	p, err := logstore.OpenPartitionDir(dir, "t/0")
	if err != nil {
		t.Fatal(err)
	}
	var r vfResult
	r.report, err = logstore.VerifyOne(p, logstore.VerifyOptions{Jobs: jobs, Finding: func(f logstore.Finding) error {
		if f.Partition != "t/0" {
			t.Errorf("finding for partition %q: %+v", f.Partition, f)
		}
		r.findings = append(r.findings, f)
		r.lines = append(r.lines, vfLine(f))
		return nil
	}})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !r.report.Complete {
		t.Errorf("report not complete without an error")
	}
	var counts [3]int
	for _, f := range r.findings {
		counts[f.Severity]++
		if strings.HasPrefix(f.Reason, "and ") {
			return r // findings not listed: counted in the report only
		}
	}
	if got := [3]int{r.report.Problems, r.report.Notes, r.report.Known}; got != counts {
		t.Errorf("report counts problems, notes, known %v; findings say %v", got, counts)
	}
	return r
}

// vfCheck compares findings with want (lines as vfLine makes them) and,
// for each want line with a reason fragment after " | ", the reason.
func vfCheck(t *testing.T, r vfResult, want ...string) {
	t.Helper()
	var lines, frags []string
	for _, w := range want {
		line, frag, _ := strings.Cut(w, " | ")
		lines, frags = append(lines, line), append(frags, frag)
	}
	if !slices.Equal(r.lines, lines) {
		var reasons []string
		for _, f := range r.findings {
			reasons = append(reasons, vfLine(f)+" | "+f.Reason)
		}
		t.Fatalf("findings:\n  %s\nwant:\n  %s", strings.Join(reasons, "\n  "), strings.Join(lines, "\n  "))
	}
	for i, frag := range frags {
		if frag != "" && !strings.Contains(r.findings[i].Reason, frag) {
			t.Errorf("finding %s: reason %q does not mention %q", lines[i], r.findings[i].Reason, frag)
		}
	}
}

// vfTwoSegments writes the usual fixture: offsets 0..9 in a closed
// segment, 10..19 in the active one, indexes with every record.
func vfTwoSegments(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t", "0")
	swWritePartition(t, dir, vfSeg(0, 10, 1), vfSeg(10, 20, 1))
	return dir
}

const (
	seg0 = "00000000000000000000"
	seg1 = "00000000000000000010"
)

func TestVerifyClean(t *testing.T) {
	dir := vfTwoSegments(t)
	r := vfVerify(t, dir, 2)
	vfCheck(t, r)
	want := logstore.VerifyReport{Name: "t/0", Dir: dir, Segments: 2, Records: 20, Bytes: 20 * vfRecLen, Complete: true}
	if r.report != want {
		t.Errorf("report %+v, want %+v", r.report, want)
	}
}

// TestVerifyFindings damages the two-segment fixture one way per case.
func TestVerifyFindings(t *testing.T) {
	log0, log1 := seg0+".log", seg1+".log"
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   []string
	}{
		{"crc flip in a closed segment", func(t *testing.T, dir string) {
			swFlip(t, vfPath(dir, 0, ".log"), vfPos(2)+30, 0x01)
		}, []string{"problem corrupt-record " + log0 + " 76 2 | crc mismatch (stored 0x"}},

		{"crc flip in the active segment, valid records after", func(t *testing.T, dir string) {
			swFlip(t, vfPath(dir, 10, ".log"), vfPos(5)+30, 0x01)
		}, []string{"problem corrupt-record " + log1 + " 190 15 | valid records resume at byte 228 with offset 16"}},

		{"size field changed: the record runs into the next", func(t *testing.T, dir string) {
			swPut(t, vfPath(dir, 0, ".log"), vfPos(3)+swSizeField, binary.BigEndian.AppendUint32(nil, 20))
		}, []string{"problem corrupt-record " + log0 + " 114 3 | resume at byte 152 with offset 4"}},

		{"keylen larger than size", func(t *testing.T, dir string) {
			swPut(t, vfPath(dir, 0, ".log"), vfPos(4)+24, binary.BigEndian.AppendUint32(nil, 11))
		}, []string{"problem corrupt-record " + log0 + " 152 4 | keylen 11 larger than size 10"}},

		{"offset field changed to a lower one", func(t *testing.T, dir string) {
			swPut(t, vfPath(dir, 0, ".log"), vfPos(6), binary.BigEndian.AppendUint64(nil, 2))
		}, []string{
			"problem corrupt-record " + log0 + " 228 6 | offset 2 where 6 was expected; valid records resume at byte 266 with offset 7 (offsets 6..6 lost)",
			// The index entry for offset 6 still points there: the log is
			// what is wrong, and that is reported once.
		}},

		{"torn tail of the active segment, no writer", func(t *testing.T, dir string) {
			swTruncate(t, vfPath(dir, 10, ".log"), 10*vfRecLen-5)
		}, []string{
			"problem incomplete-tail " + log1 + " 342 19 | 33 bytes after the last valid record (a record of 38 bytes runs past the end of the file (33 bytes left)) and no writer holds the partition",
			"note index-stale " + seg1 + ".index 144 19 | points at byte 342, into the incomplete tail",
			"note index-stale " + seg1 + ".timeindex 144 19 | is for offset 19, past the segment's last valid record (next offset 19): stale after a power loss or in the incomplete tail",
		}},

		{"torn header at the end of the active segment", func(t *testing.T, dir string) {
			swAppend(t, vfPath(dir, 10, ".log"), []byte{0, 0, 0, 0, 0, 0, 0, 20, 1})
		}, []string{"problem incomplete-tail " + log1 + " 380 20 | 9 bytes after the last valid record (only 9 bytes, less than a record header)"}},

		{"zero tail of the active segment", func(t *testing.T, dir string) {
			swAppend(t, vfPath(dir, 10, ".log"), make([]byte, 100))
		}, []string{"problem incomplete-tail " + log1 + " 380 20 | 100 bytes after the last valid record (100 zero bytes)"}},

		{"zero bytes after a closed segment", func(t *testing.T, dir string) {
			swAppend(t, vfPath(dir, 0, ".log"), make([]byte, 100))
		}, []string{"problem corrupt-record " + log0 + " 380 10 | 100 zero bytes; no valid record follows: the last 100 bytes of this closed segment are unreadable"}},

		{"truncated closed segment", func(t *testing.T, dir string) {
			swTruncate(t, vfPath(dir, 0, ".log"), 10*vfRecLen-5)
		}, []string{
			// No gap is reported after it: the offsets after the damage
			// are unknown. Its index entries point into the damage.
			"problem corrupt-record " + log0 + " 342 9 | runs past the end of the file (33 bytes left); no valid record follows",
		}},

		{"index entry with another offset", func(t *testing.T, dir string) {
			swSetEntry(t, vfPath(dir, 0, ".index"), 3, 4, vfPos(3))
		}, []string{
			"problem index-mismatch " + seg0 + ".index 48 4 | index entry 3 says offset 4 is at byte 114, but the record there has offset 3",
		}},

		{"index entry pointing inside a record", func(t *testing.T, dir string) {
			swSetEntry(t, vfPath(dir, 10, ".index"), 2, 12, vfPos(2)+5)
		}, []string{
			"problem index-no-record " + seg1 + ".index 32 12 | index entry 2 (offset 12) points at byte 81, inside the record at byte 76 (offset 12): no record starts there",
		}},

		{"time index entry with another timestamp", func(t *testing.T, dir string) {
			swSetEntry(t, vfPath(dir, 10, ".timeindex"), 4, 14, vfT0+1)
		}, []string{
			"problem index-mismatch " + seg1 + ".timeindex 64 14 | time index entry 4 says offset 14 has timestamp 2023-11-14T22:13:20.000000001Z (1700000000000000001), but the record's is 2023-11-14T22:13:20.000014000Z",
		}},

		{"time index entries out of order", func(t *testing.T, dir string) {
			swSetEntry(t, vfPath(dir, 0, ".timeindex"), 5, 3, vfRec(3).Timestamp)
		}, []string{
			"problem index-order " + seg0 + ".timeindex 80 3 | time index entry 5 (offset 3 with timestamp 2023-11-14T22:13:20.000003000Z (1700000000000003000)) is out of order",
		}},

		{"time index entry below the base offset", func(t *testing.T, dir string) {
			swSetEntry(t, vfPath(dir, 10, ".timeindex"), 0, 3, vfRec(3).Timestamp)
		}, []string{
			"problem index-mismatch " + seg1 + ".timeindex 0 3 | time index entry 0 is for offset 3, below the segment's base offset 10",
		}},

		{"index entries past the end of the log", func(t *testing.T, dir string) {
			swAppend(t, vfPath(dir, 10, ".index"), swEntry(swEntry(nil, 20, 380), 21, 418))
			swAppend(t, vfPath(dir, 10, ".timeindex"), swEntry(nil, 20, vfRec(20).Timestamp))
		}, []string{
			"note index-stale " + seg1 + ".index 160 20 | index entry 10 (offset 20) points at byte 380, past the end of the log (380 bytes)",
			"note index-stale " + seg1 + ".index 176 21 | points at byte 418",
			"note index-stale " + seg1 + ".timeindex 160 20 | time index entry 10 is for offset 20, past the segment's last valid record (next offset 20)",
		}},

		{"missing index files", func(t *testing.T, dir string) {
			os.Remove(vfPath(dir, 0, ".index"))
			os.Remove(vfPath(dir, 10, ".timeindex"))
		}, []string{
			"note index-missing " + seg0 + ".index -1 -1 | no .index file",
			"note index-missing " + seg1 + ".timeindex -1 -1 | no .timeindex file",
		}},

		{"short and empty indexes", func(t *testing.T, dir string) {
			swTruncate(t, vfPath(dir, 0, ".index"), 5*swEntryLen)
			swTruncate(t, vfPath(dir, 10, ".timeindex"), 0)
		}, []string{
			"note index-short " + seg0 + ".index 80 5 | the index ends at offset 4, though records go on to offset 9 (an entry every 1 records): about 5 entries missing",
			"note index-short " + seg1 + ".timeindex 0 10 | the time index file is empty, though the segment holds 10 records",
		}},

		{"partial last index entry", func(t *testing.T, dir string) {
			swAppend(t, vfPath(dir, 0, ".index"), []byte{0, 0, 0, 0, 0})
		}, []string{"note index-partial-entry " + seg0 + ".index 160 -1 | partial entry (5 of 16 bytes)"}},

		{"overlapping segments", func(t *testing.T, dir string) {
			for _, ext := range []string{".log", ".index", ".timeindex"} {
				os.Remove(vfPath(dir, 10, ext))
			}
			swWriteSegment(t, dir, vfSeg(8, 20, 1))
		}, []string{
			"problem overlap 00000000000000000008.log 0 8 | the segment's records start at offset 8, but the segment before goes on to offset 9: offsets 8..9 are in both; valid records resume at byte 76 with offset 10",
		}},

		{"gap between segments", func(t *testing.T, dir string) {
			for _, ext := range []string{".log", ".index", ".timeindex"} {
				os.Remove(vfPath(dir, 10, ext))
			}
			swWriteSegment(t, dir, vfSeg(15, 20, 1))
		}, []string{
			"problem gap 00000000000000000015.log 0 10 | offsets 10..14 are missing between this segment and the one before (00000000000000000000.log): lost data, not recorded in .gaps.json",
		}},

		{"gap recorded in .gaps.json", func(t *testing.T, dir string) {
			for _, ext := range []string{".log", ".index", ".timeindex"} {
				os.Remove(vfPath(dir, 10, ext))
			}
			swWriteSegment(t, dir, vfSeg(15, 20, 1))
			vfWriteGaps(t, dir, logstore.Gap{From: 10, To: 15, Time: "2026-01-02T03:04:05Z", Reason: "salvaged"})
		}, []string{
			"known gap 00000000000000000015.log 0 10 | offsets 10..14 are missing between this segment and the one before (00000000000000000000.log): a known gap, recorded in .gaps.json (2026-01-02T03:04:05Z: salvaged)",
		}},

		{"gap recorded only in part", func(t *testing.T, dir string) {
			for _, ext := range []string{".log", ".index", ".timeindex"} {
				os.Remove(vfPath(dir, 10, ext))
			}
			swWriteSegment(t, dir, vfSeg(15, 20, 1))
			vfWriteGaps(t, dir, logstore.Gap{From: 10, To: 12, Time: "2026-01-02T03:04:05Z", Reason: "salvaged"})
		}, []string{
			"problem gap 00000000000000000015.log 0 10 | .gaps.json records only part of it (10..11)",
		}},

		{"gap recorded over offsets segments hold", func(t *testing.T, dir string) {
			for _, ext := range []string{".log", ".index", ".timeindex"} {
				os.Remove(vfPath(dir, 10, ext))
			}
			swWriteSegment(t, dir, vfSeg(15, 20, 1))
			vfWriteGaps(t, dir, logstore.Gap{From: 0, To: 99999999999, Time: "2026-01-02T03:04:05Z", Reason: "made up"})
		}, []string{
			"problem gap 00000000000000000015.log 0 10 | offsets 10..14 are missing between this segment and the one before (00000000000000000000.log): lost data; .gaps.json records 0..99999999998, which reaches beyond it, so explains nothing",
			"problem gaps-file .gaps.json -1 -1 | gap 0..99999999998 in .gaps.json covers offsets 0..9, which 00000000000000000000.log holds: not a gap recover --salvage could have recorded, so it explains nothing (fix the entry, or remove it)",
		}},

		{"gap recorded past the next offset", func(t *testing.T, dir string) {
			vfWriteGaps(t, dir, logstore.Gap{From: 25, To: 30, Time: "2026-01-02T03:04:05Z", Reason: "made up"})
		}, []string{
			"problem gaps-file .gaps.json -1 -1 | gap 25..29 in .gaps.json reaches past the partition's next offset 20: not a gap recover --salvage could have recorded, so it explains nothing (fix the entry, or remove it)",
		}},

		{"gap recorded below the first segment, as retention leaves it", func(t *testing.T, dir string) {
			for _, ext := range []string{".log", ".index", ".timeindex"} {
				os.Remove(vfPath(dir, 0, ext))
			}
			vfWriteGaps(t, dir, logstore.Gap{From: 3, To: 5, Time: "2026-01-02T03:04:05Z", Reason: "salvaged"})
		}, nil},

		{"gap without the time it was recorded", func(t *testing.T, dir string) {
			swWriteFile(t, filepath.Join(dir, logstore.GapsFile), []byte(`{"gaps":[{"from":10,"to":15}]}`))
		}, []string{"problem gaps-file .gaps.json -1 -1 | cannot read the record of known gaps"}},

		{"unreadable .gaps.json", func(t *testing.T, dir string) {
			swWriteFile(t, filepath.Join(dir, logstore.GapsFile), []byte("{"))
		}, []string{"problem gaps-file .gaps.json -1 -1 | cannot read the record of known gaps"}},

		{"first record's offset is not the base", func(t *testing.T, dir string) {
			swPut(t, vfPath(dir, 10, ".log"), 0, binary.BigEndian.AppendUint64(nil, 11))
		}, []string{
			"problem corrupt-record " + log1 + " 0 10 | the first record has offset 11, but the segment's base offset is 10; valid records resume at byte 38 with offset 11 (offsets 10..10 lost)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := vfTwoSegments(t)
			tc.damage(t, dir)
			before := vfSnapshot(t, filepath.Dir(dir))
			r := vfVerify(t, dir, 2)
			vfCheck(t, r, tc.want...)
			vfSameSnapshot(t, before, vfSnapshot(t, filepath.Dir(dir)))
			for _, f := range r.findings {
				if f.Kind == logstore.FindingCorruptRecord || f.Kind == logstore.FindingIncompleteTail {
					if !errors.Is(f.Cause, format.ErrCRC) && !errors.Is(f.Cause, format.ErrShort) && !errors.Is(f.Cause, format.ErrKeyLen) && !errors.Is(f.Cause, format.ErrOffset) {
						t.Errorf("finding %s: cause %v is not a format sentinel", vfLine(f), f.Cause)
					}
				}
			}
		})
	}
}

func vfWriteGaps(t *testing.T, dir string, gaps ...logstore.Gap) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"gaps": gaps})
	if err != nil {
		t.Fatal(err)
	}
	swWriteFile(t, filepath.Join(dir, logstore.GapsFile), b)
}

// Offsets skipped inside a segment: the record after them is sound and
// the scan goes on from it.
func TestVerifyOffsetsSkippedInsideSegment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t", "0")
	seg := vfSeg(0, 10, 1)
	seg.Records = slices.Delete(seg.Records, 4, 5) // offsets 0..3, 5..9
	swWritePartition(t, dir, seg)
	r := vfVerify(t, dir, 1)
	vfCheck(t, r, "problem corrupt-record "+seg0+".log 152 4 | offset 5 where 4 was expected: offsets 4..4 are missing inside the segment")
	if r.report.Records != 9 {
		t.Errorf("%d records, want 9", r.report.Records)
	}
}

// A sparse index (docs/format.md §4: every Nth record) is checked entry by entry
// against the records it names.
func TestVerifySparseIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t", "0")
	swWritePartition(t, dir, vfSeg(0, 20, 3)) // entries for 0, 3, ..., 18
	vfCheck(t, vfVerify(t, dir, 1))

	// In order, and lying: entry 2 says offset 7 at record 6's position.
	swSetEntry(t, vfPath(dir, 0, ".index"), 2, 7, vfPos(6))
	vfCheck(t, vfVerify(t, dir, 1),
		"problem index-mismatch "+seg0+".index 32 7 | index entry 2 says offset 7 is at byte 228, but the record there has offset 6")

	// Short: entries end at 12, records go on to 19.
	swWritePartition(t, dir, vfSeg(0, 20, 3))
	swTruncate(t, vfPath(dir, 0, ".index"), 5*swEntryLen)
	vfCheck(t, vfVerify(t, dir, 1),
		"note index-short "+seg0+".index 80 15 | the index ends at offset 12, though records go on to offset 19 (an entry every 3 records): about 2 entries missing")
}

// An entry in order with its neighbours but behind an earlier one.
func TestVerifyIndexEntryBehind(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t", "0")
	swWritePartition(t, dir, vfSeg(0, 10, 1))
	// Entries: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 -> 0, 1, 5, 6, 2, 3, 6, 7, 8, 9
	x := vfPath(dir, 0, ".index")
	for i, o := range []uint64{5, 6, 2, 3} {
		swSetEntry(t, x, 2+i, o, vfPos(int(o)))
	}
	vfCheck(t, vfVerify(t, dir, 1),
		"problem index-order "+seg0+".index 64 2 | index entry 4 (offset 2 at byte 76) is out of order: not after the entry before it in order (offset 6)",
		"problem index-order "+seg0+".index 80 3 | index entry 5 (offset 3 at byte 114) is out of order",
		"problem index-order "+seg0+".index 96 6 | index entry 6 (offset 6 at byte 228) is out of order")
}

// Timestamps going backwards, within a segment and from one to the next,
// are notes: foreign writers stamp the wall clock.
func TestVerifyTimestampsBackwards(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t", "0")
	a, b := vfSeg(0, 10, 1), vfSeg(10, 20, 1)
	a.Records[5].Timestamp = vfT0 - 1
	a.Records[7].Timestamp = vfT0 - 2
	b.Records[0].Timestamp = vfT0
	swWritePartition(t, dir, a, b)
	vfCheck(t, vfVerify(t, dir, 1),
		"note timestamp-backwards "+seg0+".log 190 5 | timestamps go backwards 2 times in this segment; first: offset 5 has 2023-11-14T22:13:19.999999999Z, older than the record before it (2023-11-14T22:13:20.000004000Z); --since searches by time reading only the segments' first records, a few time-index entries and the records from where it lands, and scans the partition from its start only when those go back: it may start after records whose time is already recent enough",
		"note timestamp-backwards "+seg1+".log 0 10 | the segment's first record (offset 10) has timestamp 2023-11-14T22:13:20.000000000Z, older than the last record of the segment before (2023-11-14T22:13:20.000009000Z)")
}

// The key-routing hint: keyed records in a partition FNV-1a routing does
// not give their key. Only for topics of more than one partition.
func TestVerifyKeyRouting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t", "0")
	seg := vfSeg(0, 10, 1)
	// FNV-1a-32 % 2: computed here from docs/format.md §5, not by logstore.
	fnv := func(k string) int {
		h := uint32(2166136261)
		for i := 0; i < len(k); i++ {
			h ^= uint32(k[i])
			h *= 16777619
		}
		return int(h % 2)
	}
	var wrong []uint64
	for i := range seg.Records {
		k := fmt.Sprintf("key-%d", i)
		seg.Records[i].Key = []byte(k)
		if fnv(k) != 0 {
			wrong = append(wrong, uint64(i))
		}
	}
	if len(wrong) == 0 || len(wrong) == 10 {
		t.Fatalf("fixture needs keys of both partitions, wrong: %v", wrong)
	}
	lay := swWritePartition(t, dir, seg)
	p, err := logstore.OpenPartitionDir(dir, "t/0")
	if err != nil {
		t.Fatal(err)
	}
	for _, count := range []int{1, 2} {
		var got []logstore.Finding
		_, err := logstore.Verify([]logstore.VerifyTarget{{Log: p, Number: 0, Count: count}}, logstore.VerifyOptions{
			Finding: func(f logstore.Finding) error { got = append(got, f); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		if count == 1 {
			if len(got) != 0 {
				t.Errorf("one partition: findings %v, want none", got)
			}
			continue
		}
		first := wrong[0]
		want := fmt.Sprintf("note key-routing %s.log %d %d", seg0, lay[0].Pos[first], first)
		if len(got) != 1 || vfLine(got[0]) != want {
			t.Fatalf("findings %v, want one: %s", got, want)
		}
		frag := fmt.Sprintf("%d of 10 keyed records are not in the partition FNV-1a routing gives their key", len(wrong))
		if !strings.Contains(got[0].Reason, frag) || !strings.Contains(got[0].Reason, fmt.Sprintf(`key "key-%d", which FNV-1a routing puts in partition 1 of 2`, first)) {
			t.Errorf("reason %q", got[0].Reason)
		}
	}
}

// An incomplete tail is a note while a writer holds the partition lock
// (it is being written), and a problem once nobody does (torn by a
// crash). The writer is a real logstore Writer; the torn bytes are the
// test's.
func TestVerifyIncompleteTailLiveWriter(t *testing.T) {
	s := logstore.Open(t.TempDir())
	if err := s.CreateTopic("t", 1, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenWriter("t", 0, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for o := range uint64(5) {
		if _, err := w.Append(vfRec(o).Timestamp, nil, vfRec(o).Value); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	dir := s.PartitionDir("t", 0)
	log := vfPath(dir, 0, ".log")
	torn := swEncode(nil, vfRec(5))[:20]
	swAppend(t, log, torn)

	r := vfVerify(t, dir, 1)
	vfCheck(t, r, fmt.Sprintf("note incomplete-tail %s.log %d 5 | the writer (pid %d) holding the partition is writing it", seg0, vfPos(5), os.Getpid()))
	if r.report.WriterPid != os.Getpid() || r.report.Problems != 0 {
		t.Errorf("report %+v: want writer pid %d and no problems", r.report, os.Getpid())
	}

	// A whole record that does not check out is no record being written,
	// writer or not.
	rest := swEncode(nil, vfRec(5))[20:]
	rest[len(rest)-1] ^= 1
	swAppend(t, log, rest)
	vfCheck(t, vfVerify(t, dir, 1), fmt.Sprintf("problem incomplete-tail %s.log %d 5 | damaged tail: 38 bytes after the last valid record (crc mismatch (stored 0x", seg0, vfPos(5)))
	swTruncate(t, log, vfPos(5)+20)

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r = vfVerify(t, dir, 1)
	vfCheck(t, r, fmt.Sprintf("problem incomplete-tail %s.log %d 5 | 20 bytes after the last valid record (only 20 bytes, less than a record header) and no writer holds the partition", seg0, vfPos(5)))
	if r.report.WriterPid != 0 || r.report.Problems != 1 {
		t.Errorf("report %+v: want no writer and one problem", r.report)
	}
}

// Records larger than the scan's buffer are checked in pieces.
func TestVerifyLargeRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t", "0")
	seg := vfSeg(0, 6, 1)
	big := make([]byte, 700<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	seg.Records[1].Value = big
	seg.Records[3].Value = big[:300<<10]
	lay := swWritePartition(t, dir, seg)
	vfCheck(t, vfVerify(t, dir, 1))

	swFlip(t, vfPath(dir, 0, ".log"), lay[0].Pos[1]+500<<10, 0x10)
	swFlip(t, vfPath(dir, 0, ".log"), lay[0].Pos[3]+100<<10, 0x10)
	vfCheck(t, vfVerify(t, dir, 1),
		fmt.Sprintf("problem corrupt-record %s.log %d 1 | crc mismatch", seg0, lay[0].Pos[1]),
		fmt.Sprintf("problem corrupt-record %s.log %d 3 | crc mismatch", seg0, lay[0].Pos[3]))
}

// A file's findings of one kind are listed up to a limit, then counted.
func TestVerifyFindingsLimit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t", "0")
	swWritePartition(t, dir, vfSeg(0, 1000, 1))
	// Swap 250 pairs of entries: 250 out-of-order pairs.
	x := vfPath(dir, 0, ".index")
	for i := 0; i < 500; i += 2 {
		swSetEntry(t, x, i, uint64(i+1), vfPos(i+1))
		swSetEntry(t, x, i+1, uint64(i), vfPos(i))
	}
	r := vfVerify(t, dir, 1)
	if len(r.findings) != 101 {
		t.Fatalf("%d findings listed, want 100 and a summary", len(r.findings))
	}
	if last := r.findings[100]; last.Kind != logstore.FindingIndexOrder || last.Reason != "and 150 more index-order findings in this file, not listed" {
		t.Errorf("last finding %+v", last)
	}
	if r.report.Problems != 250 {
		t.Errorf("report counts %d problems, want 250", r.report.Problems)
	}
}

// The report and the findings' order do not depend on --jobs.
func TestVerifyJobsSameResult(t *testing.T) {
	root := t.TempDir()
	var targets []logstore.VerifyTarget
	for n := range 3 {
		dir := filepath.Join(root, "t", fmt.Sprint(n))
		var segs []swSegment
		for b := uint64(0); b < 80; b += 10 {
			segs = append(segs, vfSeg(b, b+10, 1))
		}
		segs[2] = vfSeg(25, 30, 1) // a gap, 20..24
		swWritePartition(t, dir, segs...)
		swFlip(t, vfPath(dir, 40, ".log"), vfPos(n+1)+30, 1)
		swSetEntry(t, vfPath(dir, 60, ".index"), n, 60, 7)
		p, err := logstore.OpenPartitionDir(dir, fmt.Sprintf("t/%d", n))
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, logstore.VerifyTarget{Log: p, Number: n, Count: 3})
	}
	run := func(jobs int) string {
		var b strings.Builder
		reports, err := logstore.Verify(targets, logstore.VerifyOptions{Jobs: jobs, Finding: func(f logstore.Finding) error {
			fmt.Fprintf(&b, "%s %s | %s\n", f.Partition, vfLine(f), f.Reason)
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%+v\n", reports)
		return b.String()
	}
	one := run(1)
	if strings.Count(one, "problem corrupt-record") != 3 || strings.Count(one, "problem gap") != 3 {
		t.Errorf("jobs 1:\n%s", one)
	}
	for _, jobs := range []int{2, 4, 16} {
		if got := run(jobs); got != one {
			t.Errorf("jobs %d:\n%s\njobs 1:\n%s", jobs, got, one)
		}
	}
}

// An error from the Finding callback stops the check and is returned;
// progress goes up to the total.
func TestVerifyStopAndProgress(t *testing.T) {
	dir := vfTwoSegments(t)
	swFlip(t, vfPath(dir, 0, ".log"), 30, 1)
	swFlip(t, vfPath(dir, 10, ".log"), 30, 1)
	p, err := logstore.OpenPartitionDir(dir, "t/0")
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	_, err = logstore.VerifyOne(p, logstore.VerifyOptions{Jobs: 2, Finding: func(logstore.Finding) error { n++; return stop }})
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("Verify: %v after %d findings, want the callback's error after 1", err, n)
	}

	var done, total int64
	_, err = logstore.VerifyOne(p, logstore.VerifyOptions{Progress: func(d, tot int64) {
		if d < done {
			t.Errorf("progress went back from %d to %d", done, d)
		}
		done, total = d, tot
	}})
	if err != nil {
		t.Fatal(err)
	}
	if done != 20*vfRecLen || total != 20*vfRecLen {
		t.Errorf("progress ended at %d of %d, want %d of %d", done, total, 20*vfRecLen, 20*vfRecLen)
	}
}

// A partition directory with no segments is a note.
func TestVerifyNoSegments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t", "0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	vfCheck(t, vfVerify(t, dir, 1), "note no-segments 0 -1 -1 | holds no segment")
}

// An unreadable segment: the check goes on with the others and says it
// could not finish.
func TestVerifyIOError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	dir := vfTwoSegments(t)
	if err := os.Chmod(vfPath(dir, 0, ".log"), 0); err != nil {
		t.Fatal(err)
	}
	p, err := logstore.OpenPartitionDir(dir, "t/0")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := logstore.VerifyOne(p, logstore.VerifyOptions{})
	if !errors.Is(err, fs.ErrPermission) || rep.Complete || rep.Records != 10 {
		t.Errorf("Verify: %v, report %+v; want a permission error, 10 records checked, incomplete", err, rep)
	}
}

// vfSnapshot records every file under root: its bytes, inode, mode and
// change time (which any write, truncate, chmod or rename would move).
func vfSnapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			return err
		}
		desc := fmt.Sprintf("ino %d mode %o size %d ctime %d.%09d mtime %d.%09d", st.Ino, st.Mode, st.Size,
			st.Ctim.Sec, st.Ctim.Nsec, st.Mtim.Sec, st.Mtim.Nsec)
		if d.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" bytes %x", b)
		}
		m[path] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func vfSameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, d := range before {
		if after[p] != d {
			t.Errorf("%s changed:\n  %.200s\n->%.200s", p, d, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared", p)
		}
	}
}

// TestVerifyChangesNothing checks that verify leaves every file as it
// was, on clean and damaged data, and also with a live writer.
func TestVerifyChangesNothing(t *testing.T) {
	dir := vfTwoSegments(t)
	swFlip(t, vfPath(dir, 0, ".log"), 100, 0x40)
	swTruncate(t, vfPath(dir, 10, ".log"), 10*vfRecLen-3)
	swAppend(t, vfPath(dir, 0, ".index"), []byte{1, 2, 3})
	// ctime has a clock tick of resolution: a change right after the
	// snapshot must be able to show.
	time.Sleep(20 * time.Millisecond)
	before := vfSnapshot(t, filepath.Dir(dir))
	time.Sleep(20 * time.Millisecond)
	for _, jobs := range []int{1, 4} {
		vfVerify(t, dir, jobs)
	}
	vfSameSnapshot(t, before, vfSnapshot(t, filepath.Dir(dir)))
}

// TestVerifyPiecesSameResult: segments large enough to be checked in
// pieces by several workers (from records their index points at) give the
// same findings and reports as one worker, whatever the damage and
// wherever it falls, pieces that do not meet being checked again whole.
func TestVerifyPiecesSameResult(t *testing.T) {
	value := strings.Repeat("v", 400)
	rec := func(o uint64) swRecord {
		return swRecord{Offset: o, Timestamp: vfT0 + int64(o), Key: fmt.Appendf(nil, "k%d", o%7), Value: []byte(value)}
	}
	seg := func(from, to uint64) swSegment {
		s := swSegment{Base: from}
		for o := from; o < to; o++ {
			s.Records = append(s.Records, rec(o))
		}
		return s
	}
	const n0, n1 = 20000, 30000 // ~8.7 MB and ~4.3 MB
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string, lay []swLayout)
	}{
		{"clean", nil},
		{"crc flips here and there", func(t *testing.T, dir string, lay []swLayout) {
			for _, k := range []int{3000, 9001, 15002, 19999} {
				swFlip(t, vfPath(dir, 0, ".log"), lay[0].Pos[k]+40, 1)
			}
			swFlip(t, vfPath(dir, n0, ".log"), lay[1].Pos[5000]+40, 1)
		}},
		{"an offset field", func(t *testing.T, dir string, lay []swLayout) {
			swPut(t, vfPath(dir, 0, ".log"), lay[0].Pos[10000], binary.BigEndian.AppendUint64(nil, 3))
		}},
		{"an offset skipped", nil}, // see below
		{"lying index entries", func(t *testing.T, dir string, lay []swLayout) {
			for _, k := range []int{2500, 5000, 10000, 12345} {
				swSetEntry(t, vfPath(dir, 0, ".index"), k, uint64(k), lay[0].Pos[k+1])
			}
			swSetEntry(t, vfPath(dir, 0, ".timeindex"), 7500, 7500, 5)
		}},
		{"index entries out of order", func(t *testing.T, dir string, lay []swLayout) {
			swSetEntry(t, vfPath(dir, 0, ".index"), 10000, 10001, lay[0].Pos[10001])
			swSetEntry(t, vfPath(dir, 0, ".index"), 10001, 10000, lay[0].Pos[10000])
		}},
		{"short index", func(t *testing.T, dir string, lay []swLayout) {
			swTruncate(t, vfPath(dir, 0, ".index"), 12000*swEntryLen)
		}},
		{"sparse time index", func(t *testing.T, dir string, lay []swLayout) {
			swTruncate(t, vfPath(dir, 0, ".timeindex"), 0)
		}},
		{"timestamps going back", nil}, // see below
		{"torn tail", func(t *testing.T, dir string, lay []swLayout) {
			swTruncate(t, vfPath(dir, n0, ".log"), lay[1].End-10)
		}},
		{"closed segment cut short", func(t *testing.T, dir string, lay []swLayout) {
			swTruncate(t, vfPath(dir, 0, ".log"), lay[0].Pos[15000]+3)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "t", "0")
			a, b := seg(0, n0), seg(n0, n1)
			switch tc.name {
			case "timestamps going back":
				for _, k := range []int{2500, 5000, 7500, 10000, 15000} {
					a.Records[k].Timestamp = vfT0
				}
			case "an offset skipped":
				for k := 10000; k < n0; k++ {
					a.Records[k].Offset++
				}
			}
			lay := swWritePartition(t, dir, a, b)
			if tc.damage != nil {
				tc.damage(t, dir, lay)
			}
			p, err := logstore.OpenPartitionDir(dir, "t/0")
			if err != nil {
				t.Fatal(err)
			}
			run := func(jobs int) string {
				var sb strings.Builder
				reports, err := logstore.Verify([]logstore.VerifyTarget{{Log: p, Number: 0, Count: 2}},
					logstore.VerifyOptions{Jobs: jobs, Finding: func(f logstore.Finding) error {
						fmt.Fprintf(&sb, "%s | %s\n", vfLine(f), f.Reason)
						return nil
					}})
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&sb, "%+v\n", reports)
				return sb.String()
			}
			one := run(1)
			if tc.name == "clean" && strings.Count(one, "\n") != 2 { // the key-routing hint and the report
				t.Errorf("clean:\n%s", one)
			}
			for _, jobs := range []int{2, 3, 8} {
				if got := run(jobs); got != one {
					t.Errorf("jobs %d:\n%s\njobs 1:\n%s", jobs, got, one)
				}
			}
		})
	}
}

// Verify beside a live writer that appends and rolls segments meanwhile
// finds nothing wrong: what it reads of the active segment is either
// whole records or a record being written (a note).
func TestVerifyBesideLiveWriter(t *testing.T) {
	s := logstore.Open(t.TempDir())
	if err := s.CreateTopic("t", 1, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenWriter("t", 0, logstore.WriterOptions{Sync: logstore.SyncNever, SegmentBytes: 3 << 20})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		value := []byte(strings.Repeat("x", 300))
		for o := uint64(0); ; o++ {
			select {
			case <-stop:
				done <- w.Close()
				return
			default:
			}
			if _, err := w.Append(vfT0+int64(o), nil, value); err != nil {
				done <- err
				return
			}
			if o%97 == 0 {
				if err := w.Flush(); err != nil {
					done <- err
					return
				}
			}
		}
	}()
	dir := s.PartitionDir("t", 0)
	deadline := time.Now().Add(time.Second)
	runs := 0
	for time.Now().Before(deadline) || runs < 4 {
		p, err := logstore.OpenPartitionDir(dir, "t/0")
		if err != nil {
			t.Fatal(err)
		}
		var problems []string
		rep, err := logstore.VerifyOne(p, logstore.VerifyOptions{Jobs: 1 + runs%3, Finding: func(f logstore.Finding) error {
			if f.Severity == logstore.SeverityProblem {
				problems = append(problems, vfLine(f)+" | "+f.Reason)
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) > 0 || rep.WriterPid != os.Getpid() {
			t.Fatalf("run %d beside a live writer: report %+v, problems:\n%s", runs, rep, strings.Join(problems, "\n"))
		}
		runs++
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// An index file that is a directory is a problem naming it (a segment
// file that is not a regular file, docs/format.md §1); the log is still
// checked, and the check finishes.
func TestVerifyIndexIsDirectory(t *testing.T) {
	dir := vfTwoSegments(t)
	swFlip(t, vfPath(dir, 10, ".log"), vfPos(3)+30, 1)
	idx := vfPath(dir, 0, ".index")
	if err := os.Remove(idx); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(idx, 0o755); err != nil { // reads fail with EISDIR, even for root
		t.Fatal(err)
	}
	p, err := logstore.OpenPartitionDir(dir, "t/0")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	rep, err := logstore.VerifyOne(p, logstore.VerifyOptions{Finding: func(f logstore.Finding) error { lines = append(lines, vfLine(f)); return nil }})
	if err != nil || !rep.Complete || rep.Records != 19 || rep.Problems != 2 {
		t.Errorf("Verify: %v, report %+v; want 19 records checked, 2 problems, complete", err, rep)
	}
	if want := []string{"problem not-regular-file " + seg0 + ".index -1 -1", "problem corrupt-record " + seg1 + ".log 114 13"}; !slices.Equal(lines, want) {
		t.Errorf("findings %q, want %q", lines, want)
	}
}
