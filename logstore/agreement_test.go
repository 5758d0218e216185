package logstore_test

// The agreement test: every command reaches the same verdict on the same
// bytes (docs/format.md §3, "Where valid data resumes"). Each fixture is
// a partition directory the spec writer made and damaged; each view is
// what one command makes of it, run in-process on a copy:
//
//	read --skip-corrupt    Iterator and SkipCorrupt, from the start and from every offset
//	verify-crc             Verify: its records, damage findings and index findings
//	describe               Stats and Bounds
//	append                 a Writer opened on a copy, and one record appended
//	recover --dry-run      with and without --salvage: the first problem or cut
//	recover --salvage      on a copy: what it leaves, its gaps and quarantine
//	dump-index --verify    every .index and .timeindex
//	copy-partition         CopyPartition, and the copy read back
//
// The fixtures' expectations are written by hand from the damage done
// (agreeCases); FuzzAgreement checks the views against each other on
// generated partitions. tail -n, a command of its own, is checked against
// read on the same partitions in commands/agreement_test.go.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// agreeDamage is a break in a segment's chain as one view reports it.
type agreeDamage struct {
	Seg    uint64 // base offset of the segment it is in
	Pos    int64  // byte position of the record that fails
	Offset uint64 // the offset expected there
	Class  segfile.Class
	// NoOffset: the view does not say the offset expected (verify-crc's
	// overlap finding names the overlapping record's own).
	NoOffset bool
}

func (d *agreeDamage) String() string {
	if d == nil {
		return "no damage"
	}
	return fmt.Sprintf("%s at byte %d of segment %d (expected offset %d)", d.Class, d.Pos, d.Seg, d.Offset)
}

func sameDamage(a, b *agreeDamage) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Seg == b.Seg && a.Pos == b.Pos && a.Class == b.Class && (a.NoOffset || b.NoOffset || a.Offset == b.Offset)
}

func corrupt(seg uint64, pos int64, offset uint64) *agreeDamage {
	return &agreeDamage{Seg: seg, Pos: pos, Offset: offset, Class: segfile.Corrupt}
}

func incomplete(seg uint64, pos int64, offset uint64) *agreeDamage {
	return &agreeDamage{Seg: seg, Pos: pos, Offset: offset, Class: segfile.Incomplete}
}

// agreeAppend is what opening a writer does.
type agreeAppend int

const (
	appendsAtNext          agreeAppend = iota // it appends at the partition's next offset
	refusesCorrupt                            // it refuses: a corrupt record, pointing at recover
	refusesFull                               // it refuses: the last offset there is was taken
	refusesEmptyBelowFloor                    // it refuses: an empty active segment is named below its floor
)

// agreeWant is a fixture's verdict, written by hand from the damage done.
type agreeWant struct {
	valid  []uint64     // offsets of the valid records, in order
	next   uint64       // the partition's next offset
	first  *agreeDamage // the first damage, nil when none
	append agreeAppend
}

// agreeCases holds the verdict on every golden partition.
var agreeCases = map[string]agreeWant{
	"clean":                    {valid: span(0, 9), next: 9},
	"spec-example":             {valid: span(0, 3), next: 3},
	"empty-active-segment":     {valid: span(0, 3), next: 3},
	"empty-active-below-floor": {valid: span(0, 5), next: 5, append: refusesEmptyBelowFloor},
	"gap-between-segments":     {valid: offsets(span(0, 3), span(10, 13), span(20, 22)), next: 22},
	"torn-tail":                {valid: span(0, 6), next: 6, first: incomplete(3, 96, 6)},
	"torn-tail-mid-header":     {valid: span(0, 6), next: 6, first: incomplete(3, 96, 6)},
	"zero-tail":                {valid: span(0, 6), next: 6, first: incomplete(3, 96, 6)},
	"crc-flip-closed":          {valid: offsets(span(0, 2), span(3, 8)), next: 8, first: corrupt(0, 64, 2)},
	// The damage is before the active segment's last index entry that the
	// chain confirms, where a writer does not look (docs/format.md §5): it
	// appends; without the index it walks from the first byte, and refuses.
	"crc-flip-active-with-valid-after":          {valid: offsets(span(0, 5), span(6, 8)), next: 8, first: corrupt(3, 64, 5)},
	"crc-flip-active-with-valid-after-no-index": {valid: offsets(span(0, 5), span(6, 8)), next: 8, first: corrupt(3, 64, 5), append: refusesCorrupt},
	"crc-flip-last-record-active":               {valid: span(0, 5), next: 5, first: incomplete(3, 64, 5)},
	"truncated-closed":                          {valid: offsets(span(0, 4), span(5, 7)), next: 7, first: corrupt(0, 128, 4)},
	"keylen-over-size-closed":                   {valid: offsets(span(0, 1), span(2, 4)), next: 4, first: corrupt(0, 32, 1)},
	"wrong-offset-closed":                       {valid: offsets(span(0, 2), span(3, 5)), next: 5, first: corrupt(0, 64, 2)},
	"wrong-offset-last-record-active":           {valid: span(0, 5), next: 5, first: corrupt(3, 64, 5), append: refusesCorrupt},
	"offset-flip-last-closed":                   {valid: offsets(span(0, 5), span(6, 8)), next: 8, first: corrupt(0, 160, 5)},
	"size-lie-run-then-garbage":                 {valid: offsets(span(1, 16), span(16, 26)), next: 26, first: corrupt(0, 0, 0)},
	"max-offset-indexed-last-active":            {valid: span(0, 5), next: 5, first: corrupt(3, 64, 5), append: refusesCorrupt},
	"index-past-eof":                            {valid: span(0, 9), next: 9},
	"sparse-index-7":                            {valid: span(0, 30), next: 30},
	"missing-index":                             {valid: span(0, 15), next: 15},
	"index-truncated-mid-entry":                 {valid: span(0, 15), next: 15},
	"lying-index":                               {valid: span(0, 15), next: 15},
	// Offsets 3 and 4 of the second segment duplicate the first's.
	"overlap":      {valid: span(0, 7), next: 7, first: corrupt(3, 0, 5)},
	"foreign-junk": {valid: span(0, 5), next: 5},

	"hole-active":          {valid: offsets(span(0, 3), span(4, 5)), next: 5, first: corrupt(0, 96, 3)},
	"hole-active-no-index": {valid: offsets(span(0, 3), span(4, 5)), next: 5, first: corrupt(0, 96, 3), append: refusesCorrupt},
	"hole-closed":          {valid: offsets(span(0, 3), span(10, 15)), next: 15, first: corrupt(0, 96, 3)},
	"hole-wide-active":     {valid: offsets(span(0, 3), span(10, 13)), next: 13, first: corrupt(0, 96, 3)},
	// The forged 15 and 16 in offset 14's value are its payload; the
	// real 15 is where offset 14 claims to end.
	"crc-flip-forged-15":        {valid: offsets(span(0, 14), span(15, 18)), next: 18, first: corrupt(10, 136, 14)},
	"crc-flip-forged-15-closed": {valid: offsets(span(0, 14), span(15, 20)), next: 20, first: corrupt(10, 136, 14)},
	// The index names 16; no byte scan below it finds a confirmed record
	// outside offset 14's payload.
	"crc-flip-forged-15-real-15-too":          {valid: offsets(span(0, 14), span(16, 18)), next: 18, first: corrupt(10, 136, 14)},
	"crc-flip-forged-15-real-15-too-no-index": {valid: offsets(span(0, 14), span(16, 18)), next: 18, first: corrupt(10, 136, 14), append: refusesCorrupt},
	"crc-flip-last-active-shaped":             {valid: span(0, 5), next: 5, first: incomplete(3, 64, 5)},
	"lying-last-index-active":                 {valid: span(0, 15), next: 15},
	"lying-index-chain":                       {valid: span(0, 12), next: 12},
	"duplicate-indexed":                       {valid: span(0, 9), next: 9, first: corrupt(0, 128, 4)},
	"torn-tail-shaped":                        {valid: span(0, 6), next: 6, first: incomplete(3, 96, 6)},
	// A misnamed segment's records are valid; its name is what is wrong.
	// Segment 10's index entries are below its name, so confirm nothing:
	// a writer walks it from its first byte.
	"misnamed-above":          {valid: span(0, 8), next: 8, first: corrupt(10, 0, 10), append: refusesCorrupt},
	"misnamed-below":          {valid: span(0, 8), next: 8, first: corrupt(3, 0, 3)},
	"misnamed-first":          {valid: span(5, 8), next: 8, first: corrupt(10, 0, 10), append: refusesCorrupt},
	"crc-flip-first-misnamed": {valid: span(3, 7), next: 7, first: corrupt(4, 0, 4)},
	// Segment 3's one record, offset 5, is confirmed by nothing: corrupt.
	"misnamed-below-one-record": {valid: span(0, 5), next: 5, first: corrupt(3, 0, 3), append: refusesCorrupt},
	"misnamed-closed":           {valid: span(0, 10), next: 10, first: corrupt(7, 0, 7)},
	// All the records of segment 1 (or 2) are below the end of segment 0.
	// Appending after them would use offset 4 again.
	"crc-flip-before-misnamed": {valid: offsets(span(0, 2), span(3, 9)), next: 9, first: corrupt(0, 64, 2)},
	// Offset 10 is segment 6's last record; segment 10's first overlaps it.
	"hole-before-overlap":    {valid: offsets(span(6, 9), span(10, 14)), next: 14, first: corrupt(6, 96, 9)},
	"overlap-entire-active":  {valid: span(0, 5), next: 5, first: corrupt(1, 0, 5), append: refusesCorrupt},
	"overlap-entire-closed":  {valid: span(0, 7), next: 7, first: corrupt(2, 0, 5)},
	"overlap-nested":         {valid: span(0, 10), next: 10, first: corrupt(2, 0, 10), append: refusesCorrupt},
	"missing-middle-segment": {valid: offsets(span(0, 3), span(6, 9)), next: 9},
	"index-backwards":        {valid: span(0, 15), next: 15},
	"index-short":            {valid: span(0, 15), next: 15},
	"size-huge-closed":       {valid: offsets(span(0, 2), span(3, 7)), next: 7, first: corrupt(0, 64, 2)},
	"size-huge-active":       {valid: offsets(span(0, 5), span(6, 8)), next: 8, first: corrupt(3, 64, 5)},
	// Two records carry on to the end of the data after the one claiming
	// 4 GiB: its length went wrong, not a write cut short.
	"size-huge-active-no-index": {valid: offsets(span(0, 5), span(6, 8)), next: 8, first: corrupt(3, 64, 5), append: refusesCorrupt},
	// One record after it cannot be told from its torn bytes (a limit
	// docs/format.md states): recover quarantines it.
	"size-huge-active-one-after-no-index": {valid: span(0, 5), next: 5, first: incomplete(3, 64, 5)},
	// The scan finds offset 3 right after the garbage: nothing is lost.
	"garbage-inserted-closed":      {valid: span(0, 8), next: 8, first: corrupt(0, 96, 3)},
	"garbage-inserted-active":      {valid: span(0, 9), next: 9, first: corrupt(3, 64, 5)},
	"keylen-over-size-active":      {valid: offsets(span(0, 4), span(5, 7)), next: 7, first: corrupt(3, 32, 4)},
	"keylen-over-size-active-last": {valid: span(0, 6), next: 6, first: incomplete(3, 96, 6)},
	// The second offset 4 is where offset 5 was expected; offset 5 after
	// it is valid, so nothing is lost.
	"dup-record-active":            {valid: span(0, 6), next: 6, first: corrupt(3, 64, 5)},
	"zero-record-active":           {valid: offsets(span(0, 5), span(6, 8)), next: 8, first: corrupt(3, 64, 5)},
	"crc-flip-first-record-closed": {valid: span(1, 6), next: 6, first: corrupt(0, 0, 0)},
	"empty-closed-segment":         {valid: offsets(span(0, 3), span(5, 7)), next: 7},
	"torn-only-record":             {valid: nil, next: 0, first: incomplete(0, 0, 0)},
	"max-offset":                   {valid: []uint64{math.MaxUint64 - 2, math.MaxUint64 - 1, math.MaxUint64}, next: math.MaxUint64, append: refusesFull},
	"max-offset-wrapped":           {valid: []uint64{math.MaxUint64 - 1, math.MaxUint64}, next: math.MaxUint64, first: corrupt(math.MaxUint64-1, 140, math.MaxUint64), append: refusesCorrupt},
}

// offsets concatenates runs of offsets.
func offsets(runs ...[]uint64) []uint64 { return slices.Concat(runs...) }

// agreement checks one fixture's views.
type agreement struct {
	tb      testing.TB
	corrupt bool // verify-crc finds corruption
}

// check reports a view's disagreement.
func (a *agreement) check(view string, ok bool, format string, args ...any) {
	a.tb.Helper()
	if ok {
		return
	}
	a.tb.Errorf("%s: %s", view, fmt.Sprintf(format, args...))
}

func TestAgreement(t *testing.T) {
	for _, fx := range goldenFixtures {
		t.Run(fx.name, func(t *testing.T) {
			want, ok := agreeCases[fx.name]
			if !ok {
				t.Fatalf("golden partition %s has no case in agreeCases", fx.name)
			}
			a := &agreement{tb: t}
			checkAgreement(a, filepath.Join(goldenDir, fx.name), &want)
		})
	}
}

// agreeTopic is the topic a fixture's copy is, as partition 0.
const agreeTopic = "t"

// agreeCopy copies the partition directory src into a new data directory
// as partition 0 of agreeTopic, and returns the data directory.
func agreeCopy(tb testing.TB, src string) string {
	tb.Helper()
	root := tb.TempDir()
	dst := filepath.Join(root, agreeTopic, "0")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		tb.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		swWriteFile(tb, filepath.Join(dst, e.Name()), b)
	}
	return root
}

func agreePartition(tb testing.TB, root string) *logstore.Partition {
	tb.Helper()
	p, err := logstore.Open(root).OpenPartition(agreeTopic, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

// segBase is the base offset a segment file's name gives.
func segBase(tb testing.TB, path string) uint64 {
	tb.Helper()
	base, _, err := format.ParseSegmentName(filepath.Base(path))
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return base
}

// agreeRead is what read --skip-corrupt makes of a partition.
type agreeRead struct {
	offsets []uint64
	recs    []string          // each record: offset, timestamp, key and value
	damages []*segfile.Damage // each corruption met, in order
}

// readSkipping reads p from `from` to the end, going on after each
// corruption as read --skip-corrupt does.
func readSkipping(tb testing.TB, p *logstore.Partition, from uint64) agreeRead {
	tb.Helper()
	it, err := p.Read(from)
	if err != nil {
		tb.Fatalf("Read(%d): %v", from, err)
	}
	defer it.Close()
	var r agreeRead
	for steps := 0; ; steps++ {
		if steps > 10000 {
			tb.Fatalf("Read(%d) does not end", from)
		}
		for it.Next() {
			rec := it.Record()
			r.offsets = append(r.offsets, rec.Offset)
			r.recs = append(r.recs, fmt.Sprintf("%d@%d %q=%q", rec.Offset, rec.Timestamp, rec.Key, rec.Value))
			if len(r.offsets) > 10000 {
				tb.Fatalf("Read(%d) does not end", from)
			}
		}
		var ce *logstore.CorruptionError
		if it.Err() == nil {
			return r
		}
		if !errors.As(it.Err(), &ce) || ce.Damage == nil {
			tb.Fatalf("Read(%d): %v", from, it.Err())
		}
		r.damages = append(r.damages, ce.Damage)
		if !it.SkipCorrupt() {
			if err := it.Err(); err != nil && !errors.As(err, &ce) {
				tb.Fatalf("Read(%d): SkipCorrupt: %v", from, err)
			}
			return r
		}
	}
}

func damageOf(tb testing.TB, d *segfile.Damage) *agreeDamage {
	return &agreeDamage{Seg: segBase(tb, d.Path), Pos: d.Pos, Offset: d.Offset, Class: d.Class}
}

func corruptionOf(tb testing.TB, err error) (*agreeDamage, bool) {
	var ce *logstore.CorruptionError
	if !errors.As(err, &ce) {
		return nil, false
	}
	if ce.Damage != nil {
		return damageOf(tb, ce.Damage), true
	}
	return &agreeDamage{Seg: segBase(tb, ce.Path), Pos: ce.Pos, Offset: uint64(ce.Offset), Class: segfile.Corrupt, NoOffset: ce.Offset < 0}, true
}

// agreeVerify is what verify-crc makes of a partition.
type agreeVerify struct {
	report   logstore.VerifyReport
	findings []logstore.Finding
	damages  []*agreeDamage // corrupt-record, incomplete-tail, overlap and misnamed findings
}

func verifyAll(tb testing.TB, p *logstore.Partition) agreeVerify {
	tb.Helper()
	var v agreeVerify
	var err error
	v.report, err = logstore.VerifyOne(p, logstore.VerifyOptions{Finding: func(f logstore.Finding) error {
		v.findings = append(v.findings, f)
		class := segfile.Corrupt
		switch f.Kind {
		case logstore.FindingIncompleteTail:
			class = segfile.Incomplete
		case logstore.FindingCorruptRecord, logstore.FindingOverlap, logstore.FindingMisnamed:
		default:
			return nil
		}
		v.damages = append(v.damages, &agreeDamage{Seg: segBase(tb, f.Path), Pos: f.Pos, Offset: uint64(f.Offset), Class: class,
			NoOffset: f.Kind == logstore.FindingOverlap})
		return nil
	}})
	if err != nil {
		tb.Fatalf("Verify: %v", err)
	}
	return v
}

// problems lists the findings that are problems, one line each.
func (v *agreeVerify) problems() []string {
	var out []string
	for _, f := range v.findings {
		if f.Severity == logstore.SeverityProblem {
			out = append(out, fmt.Sprintf("%s %s byte %d offset %d: %s", f.Kind, filepath.Base(f.Path), f.Pos, f.Offset, f.Reason))
		}
	}
	return out
}

// unexplainedGaps are the offsets gap findings say are lost data: from
// the finding's offset up to the segment it names, or the valid record
// before that.
func (v *agreeVerify) unexplainedGaps(tb testing.TB, valid []uint64) map[uint64]bool {
	lost := map[uint64]bool{}
	for _, f := range v.findings {
		if f.Kind != logstore.FindingGap || f.Severity != logstore.SeverityProblem {
			continue
		}
		from, to := uint64(f.Offset), segBase(tb, f.Path)
		if i, _ := slices.BinarySearch(valid, from); i < len(valid) {
			to = min(to, valid[i])
		}
		for o := from; o < to && len(lost) < 1<<16; o++ {
			lost[o] = true
		}
	}
	return lost
}

// firstDamage is the first of a view's damages, nil when none.
func firstDamage(ds []*agreeDamage) *agreeDamage {
	if len(ds) == 0 {
		return nil
	}
	return ds[0]
}

// checkAgreement runs every view of the partition directory src (left as
// it is: each view that writes works on a copy) and checks that they
// agree with each other and, when want is given, with it.
func checkAgreement(a *agreement, src string, want *agreeWant) {
	tb := a.tb
	tb.Helper()
	before := readTree(tb, src)
	root := agreeCopy(tb, src)
	p := agreePartition(tb, root)
	pdir := p.Dir()

	// read --skip-corrupt from the start is the reference for the valid
	// records; verify-crc's first damage for the first damage.
	start, _, err := p.Bounds()
	if err != nil {
		tb.Fatalf("Bounds: %v", err)
	}
	read := readSkipping(tb, p, start)
	ver := verifyAll(tb, p)
	first := firstDamage(ver.damages)
	valid := read.offsets
	if want != nil {
		a.check("read", slices.Equal(valid, want.valid), "read --skip-corrupt reads %v, want %v", valid, want.valid)
		a.check("verify-crc", sameDamage(first, want.first), "first damage %v, want %v", first, want.first)
		valid, first = want.valid, want.first
	}
	corruption := slices.ContainsFunc(ver.damages, func(d *agreeDamage) bool { return d.Class == segfile.Corrupt })
	a.corrupt = corruption
	segs := listSegs(tb, pdir)

	// The next offset: the last valid record's + 1 (the last there is,
	// after it), or the active segment's base when it holds none of them.
	// Which one, when the active segment's base is above them (misnamed,
	// or empty), only the verdict written by hand knows.
	active := segs[len(segs)-1]
	next := active
	if n := len(valid); n > 0 {
		next = valid[n-1] + 1
		if valid[n-1] == math.MaxUint64 {
			next = math.MaxUint64
		}
		if _, bnext, _ := p.Bounds(); bnext == active && active > next {
			next = active
		}
	}
	if want != nil {
		next = want.next
	}

	checkReads(a, p, read, valid, first, start, next)
	checkVerify(a, ver, valid, first)
	checkDescribe(a, p, valid, start, next, segs)
	checkOffsetChecks(a, root, start, next, valid, segs)
	checkAppend(a, src, want, read, next, corruption)
	checkDryRun(a, src, first)
	checkSalvage(a, src, read, next, ver)
	checkDumpIndex(a, pdir, read, ver)
	checkCopy(a, src, read, corruption, ver)
	checkSweep(a, src, next)

	if after := readTree(tb, src); len(after) != len(before) {
		tb.Errorf("the fixture's files changed")
	} else {
		for name, b := range before {
			if !bytes.Equal(after[name], b) {
				tb.Errorf("%s changed", name)
			}
		}
	}
}

// listSegs is the base offsets of the segments in dir.
func listSegs(tb testing.TB, dir string) []uint64 {
	tb.Helper()
	segs, err := logstore.IndexSegments(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var bases []uint64
	for _, s := range segs {
		bases = append(bases, s.Base)
	}
	if len(bases) == 0 {
		tb.Fatalf("%s holds no segment", dir)
	}
	return bases
}

// checkReads: read without --skip-corrupt stops at the first corruption
// with it as its error; from any offset, read --skip-corrupt reads the
// valid records from there on.
func checkReads(a *agreement, p *logstore.Partition, read agreeRead, valid []uint64, first *agreeDamage, start, next uint64) {
	tb := a.tb
	var readFirst *agreeDamage
	if len(read.damages) > 0 {
		readFirst = damageOf(tb, read.damages[0])
	}
	wantErr := first
	if first != nil && first.Class == segfile.Incomplete {
		wantErr = nil // readers stop at an incomplete tail without an error
	}
	a.check("read", sameDamage(readFirst, wantErr), "read's error is %v, verify-crc's first damage %v", readFirst, first)
	for _, d := range read.damages {
		a.check("read", d.Class == segfile.Corrupt, "read reports %v as an error", damageOf(tb, d))
	}
	probes := []uint64{start, next, next + 1}
	for _, o := range valid {
		probes = append(probes, o, o+1)
	}
	for _, o := range probes {
		if o < start || o > next || o == math.MaxUint64 && next == math.MaxUint64 && len(valid) == 0 {
			continue
		}
		got := readSkipping(tb, p, o)
		i, _ := slices.BinarySearch(valid, o)
		a.check("read --offset", slices.Equal(got.offsets, valid[i:]), "read --skip-corrupt --offset %d reads %v, want %v", o, got.offsets, valid[i:])
		if i <= len(read.recs) {
			a.check("read --offset", slices.Equal(got.recs, read.recs[i:]), "read --skip-corrupt --offset %d reads %v, from the start %v", o, got.recs, read.recs[i:])
		}
	}
}

func checkVerify(a *agreement, ver agreeVerify, valid []uint64, first *agreeDamage) {
	a.check("verify-crc", ver.report.Records == uint64(len(valid)), "counts %d valid records, read --skip-corrupt reads %d", ver.report.Records, len(valid))
	a.check("verify-crc", ver.report.Complete, "check incomplete")
	a.check("verify-crc", sameDamage(firstDamage(ver.damages), first), "first damage %v, want %v", firstDamage(ver.damages), first)
	for i, d := range ver.damages {
		a.check("verify-crc", d.Class == segfile.Corrupt || i == len(ver.damages)-1, "an incomplete tail before other damage: %v", d)
	}
}

// checkOffsetChecks: read --offset N's check (CheckOffset, which finds
// the ends of segments only up to N's) and read's start (Start, the first
// segment alone) agree with describe's bounds, each on a partition opened
// for it as a command opens it, with no floors known yet.
func checkOffsetChecks(a *agreement, root string, start, next uint64, valid, segs []uint64) {
	fresh := func() *logstore.Partition {
		p, err := logstore.Open(root).OpenPartition(agreeTopic, 0)
		if err != nil {
			a.tb.Fatal(err)
		}
		return p
	}
	p := fresh()
	got, err := p.Start()
	p.Close()
	a.check("read", err == nil && got == start, "Start %d, %v; describe's %d", got, err, start)
	ns := []uint64{0, start, next, math.MaxUint64}
	for _, o := range slices.Concat(valid, segs, []uint64{start, next}) {
		ns = append(ns, o-1, o, o+1) // wrapping at 0 and 2^64-1 is wanted
	}
	slices.Sort(ns)
	for _, n := range slices.Compact(ns) {
		p := fresh()
		err := p.CheckOffset(n)
		p.Close()
		var out *logstore.OffsetRangeError
		if in := n >= start && n <= next; in {
			a.check("read --offset", err == nil, "CheckOffset(%d): %v; describe's range is %d..%d", n, err, start, next)
		} else {
			a.check("read --offset", errors.As(err, &out) && out.Start == start && out.Next == next,
				"CheckOffset(%d): %v; want it out of the range %d..%d", n, err, start, next)
		}
	}
}

func checkDescribe(a *agreement, p *logstore.Partition, valid []uint64, start, next uint64, segs []uint64) {
	st, err := p.Stats()
	if err != nil {
		a.tb.Fatalf("Stats: %v", err)
	}
	// A count describe says is from the indexes is an upper bound: it
	// includes records lost to damage before a segment's last confirmed
	// entry, which only reading them (verify-crc) finds.
	if n := uint64(len(valid)); st.RecordsFromIndex {
		a.check("describe records", st.Records >= n && (st.Records == n || a.corrupt),
			"counts %d records from the indexes, read --skip-corrupt reads %d (verify-crc finds corruption: %v)", st.Records, n, a.corrupt)
	} else {
		a.check("describe records", st.Records == n, "counts %d records, read --skip-corrupt reads %d", st.Records, n)
	}
	a.check("describe", st.Next == next, "next offset %d, want %d", st.Next, next)
	// The first segment's base, or its first record's offset below it (a
	// misnamed segment).
	wantStart := segs[0]
	if len(valid) > 0 {
		wantStart = min(wantStart, valid[0])
	}
	a.check("describe", st.Start == wantStart, "start %d, want %d", st.Start, wantStart)
	a.check("bounds", start == wantStart, "Bounds start %d, want %d", start, wantStart)
	_, bnext, _ := p.Bounds()
	a.check("bounds", bnext == next, "Bounds next %d, want %d", bnext, next)
	// describe --timeline counts records from the time index as describe
	// does from the index: exact where nothing is corrupt, never more
	// records than offsets, and none of a segment's below its floor.
	counts, err := p.Timeline(math.MinInt64, math.MaxInt64, 1)
	if err != nil {
		a.tb.Fatalf("Timeline: %v", err)
	}
	n := uint64(len(valid))
	a.check("describe --timeline", counts[0] <= max(next-wantStart, n) && (counts[0] == n || a.corrupt),
		"counts %d records, read --skip-corrupt reads %d, offsets %d..%d", counts[0], n, wantStart, next)
}

// checkAppend opens a writer on a copy: it appends at the next offset, or
// refuses a corrupt or full partition; a record it appends is read after
// the others.
func checkAppend(a *agreement, src string, want *agreeWant, ref agreeRead, next uint64, corruption bool) {
	tb := a.tb
	valid := ref.offsets
	root := agreeCopy(tb, src)
	s := logstore.Open(root)
	w, err := s.OpenWriter(agreeTopic, 0, logstore.WriterOptions{Sync: logstore.SyncNever})
	var ce *logstore.CorruptionError
	switch {
	case want != nil && want.append == refusesCorrupt:
		a.check("append", errors.As(err, &ce), "opening a writer: %v; want it refused for corruption", err)
	case want != nil && want.append == refusesEmptyBelowFloor:
		a.check("append", err != nil && strings.Contains(err.Error(), "holds no record"), "opening a writer: %v; want it refused, the segment named below its floor", err)
	case want != nil && want.append == refusesFull:
		a.check("append", err != nil && strings.Contains(err.Error(), "full"), "opening a writer: %v; want it refused as full", err)
	case err != nil && errors.As(err, &ce):
		// Without a verdict written by hand: a writer refuses only
		// corruption in the active segment.
		d, _ := corruptionOf(tb, err)
		active := listSegs(tb, filepath.Join(root, agreeTopic, "0"))
		a.check("append", corruption && d.Seg == active[len(active)-1], "refused for %v, which verify-crc does not report in the active segment", d)
	case err != nil && len(valid) > 0 && valid[len(valid)-1] == math.MaxUint64:
		a.check("append", strings.Contains(err.Error(), "full"), "refused with %v; want it full", err)
	default:
		a.check("append", err == nil, "opening a writer: %v", err)
	}
	if err != nil {
		return
	}
	a.check("append", w.NextOffset() == next, "the writer's next offset is %d, describe's %d", w.NextOffset(), next)
	got, err := w.Append(0, nil, []byte("appended"))
	if err == nil {
		err = w.Close()
	} else {
		w.Close()
	}
	if err != nil {
		a.check("append", false, "append: %v", err)
		return
	}
	a.check("append", got == next, "appended at %d, want %d", got, next)
	after := readSkipping(tb, agreePartition(tb, root), 0)
	n := len(after.recs) - 1
	a.check("append", n == len(ref.recs) && slices.Equal(after.recs[:n], ref.recs) && after.offsets[n] == got && strings.HasSuffix(after.recs[n], `""="appended"`),
		"after appending, read --skip-corrupt reads %v, want %v and offset %d", after.recs, ref.recs, got)
}

// checkDryRun: recover --dry-run names the first damage, with and without
// --salvage: as a problem left in place, or as the bytes it would cut.
func checkDryRun(a *agreement, src string, first *agreeDamage) {
	tb := a.tb
	for _, salvage := range []bool{false, true} {
		view := "recover --dry-run"
		if salvage {
			view = "recover --dry-run --salvage"
		}
		root := agreeCopy(tb, src)
		before := readTree(tb, root)
		rep, err := logstore.RecoverOne(logstore.Open(root), agreeTopic, 0, logstore.RecoverOptions{DryRun: true, Salvage: salvage})
		if err != nil {
			a.check(view, false, "%v", err)
			continue
		}
		var got *agreeDamage
		for _, sr := range rep.Segments {
			if sr.SplitFrom != "" {
				continue
			}
			if sr.Problem != nil {
				var ok bool
				if got, ok = corruptionOf(tb, sr.Problem); !ok {
					a.check(view, false, "segment %s: %v", sr.Name, sr.Problem)
					got = &agreeDamage{Seg: sr.Base, Pos: -1}
				}
				break
			}
			if sr.RenamedTo != "" {
				// Misnamed: renaming it is the repair.
				got = &agreeDamage{Seg: sr.Base, Pos: 0, Offset: sr.Base, Class: segfile.Corrupt}
				break
			}
			if c := sr.Cut; c != nil {
				class := segfile.Incomplete
				if c.Whole {
					class = segfile.Corrupt
				}
				got = &agreeDamage{Seg: sr.Base, Pos: c.From, Offset: c.Offset, Class: class}
				break
			}
		}
		a.check(view, sameDamage(got, first), "first problem or cut %v, want %v", got, first)
		a.check(view, salvage || first == nil || first.Class == segfile.Incomplete || got != nil,
			"no problem reported for %v", first)
		after := readTree(tb, root)
		a.check(view, len(after) == len(before), "a dry run changed the set of files")
		for name, b := range before {
			a.check(view, bytes.Equal(after[name], b), "a dry run changed %s", name)
		}
	}
}

// checkSalvage runs recover --salvage on a copy: it leaves the valid
// records in the live log, and verify-crc finds no problem but the gaps
// it found before; .gaps.json holds exactly offsets missing; no .log is
// left empty or overlapping; every byte cut is in quarantine.
func checkSalvage(a *agreement, src string, ref agreeRead, next uint64, before agreeVerify) {
	const view = "recover --salvage"
	tb := a.tb
	valid := ref.offsets
	root := agreeCopy(tb, src)
	s := logstore.Open(root)
	pdir := s.PartitionDir(agreeTopic, 0)
	orig := readTree(tb, pdir)
	rep, err := logstore.RecoverOne(s, agreeTopic, 0, logstore.RecoverOptions{Salvage: true})
	if err != nil {
		a.check(view, false, "%v", err)
		return
	}
	a.check(view, len(rep.Problems) == 0, "problems left: %v", rep.Problems)
	a.check(view, rep.Next == next, "reports next offset %d, want %d", rep.Next, next)
	p := agreePartition(tb, root)
	read := readSkipping(tb, p, 0)
	a.check(view, slices.Equal(read.recs, ref.recs), "leaves %v in the live log, want %v", read.recs, ref.recs)
	a.check(view, len(read.damages) == 0, "read after it meets %v", read.damages)
	_, bnext, _ := p.Bounds()
	a.check(view, bnext == next, "next offset %d after it, want %d", bnext, next)

	// No problem but the unexplained gaps there were before (and a
	// .gaps.json that was not one, which recover leaves to the user).
	ver := verifyAll(tb, p)
	gapsBefore := before.unexplainedGaps(tb, valid)
	badGaps := slices.ContainsFunc(before.findings, func(f logstore.Finding) bool { return f.Kind == logstore.FindingGapsFile })
	for _, f := range ver.findings {
		if f.Severity != logstore.SeverityProblem {
			continue
		}
		ok := f.Kind == logstore.FindingGap && gapsBefore[uint64(f.Offset)] || f.Kind == logstore.FindingGapsFile && badGaps
		a.check(view, ok, "verify-crc after it: %s %s byte %d offset %d: %s", f.Kind, filepath.Base(f.Path), f.Pos, f.Offset, f.Reason)
	}

	// .gaps.json: offsets missing, and every one missing that was not
	// already an unexplained gap.
	gaps, err := logstore.ReadGaps(pdir)
	if _, junk := orig[logstore.GapsFile]; err != nil && !junk {
		a.check(view, false, "%v", err)
	}
	recorded := map[uint64]bool{}
	for _, g := range gaps {
		for o := g.From; o < g.To && len(recorded) < 1<<16; o++ {
			recorded[o] = true
		}
	}
	have := map[uint64]bool{}
	for _, o := range valid {
		have[o] = true
	}
	if _, junk := orig[logstore.GapsFile]; !junk {
		for o := range recorded {
			a.check(view, !have[o], "records offset %d as a gap, which the log holds", o)
		}
	}
	if len(valid) > 0 {
		for o := listSegs(tb, src)[0]; o < valid[len(valid)-1]; o++ {
			a.check(view, have[o] || recorded[o] || gapsBefore[o], "offset %d is missing and not recorded as a gap", o)
		}
	}

	// No .log made empty but the active segment's, which holds the next
	// offset when its only bytes were a tail cut; none overlapping or
	// misnamed (verify-crc says so).
	segs := listSegs(tb, pdir)
	for i, base := range segs {
		name := swName(base, ".log")
		fi, err := os.Stat(filepath.Join(pdir, name))
		if err != nil {
			tb.Fatal(err)
		}
		b, existed := orig[name]
		a.check(view, fi.Size() > 0 || existed && len(b) == 0 || i == len(segs)-1 && base == next, "leaves %s empty", name)
	}

	// Every byte cut from a .log is in quarantine.
	live := readTree(tb, pdir)
	entries, err := s.QuarantineEntries(agreeTopic, 0)
	if err != nil {
		tb.Fatal(err)
	}
	for name, b := range orig {
		if !strings.HasSuffix(name, ".log") || len(b) == 0 {
			continue
		}
		now, ok := live[name]
		if ok && bytes.Equal(now, b) || slices.ContainsFunc(mapsValues(live), func(l []byte) bool { return bytes.Equal(l, b) }) {
			continue // unchanged, or moved whole to another name
		}
		from := int64(0)
		if ok && bytes.HasPrefix(b, now) {
			from = int64(len(now))
		}
		a.check(view, quarantined(tb, entries, filepath.Join(pdir, name), b, from), "bytes %d..%d of %s cut and not in quarantine", from, len(b), name)
	}
}

func mapsValues(m map[string][]byte) [][]byte {
	var out [][]byte
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// quarantined reports whether the quarantine entries hold bytes
// [from, len(b)) of the file at path, whose bytes were b.
func quarantined(tb testing.TB, entries []logstore.QuarantineEntry, path string, b []byte, from int64) bool {
	tb.Helper()
	covered := make([]bool, len(b))
	for _, e := range entries {
		if e.Source != path || e.Pos < 0 || e.Pos+e.Length > int64(len(b)) {
			continue
		}
		data, err := os.ReadFile(e.Data)
		if err != nil || !bytes.Equal(data, b[e.Pos:e.Pos+e.Length]) {
			continue
		}
		for i := e.Pos; i < e.Pos+e.Length; i++ {
			covered[i] = true
		}
	}
	return !slices.Contains(covered[from:], false)
}

// verdictDamage reports whether an index entry's verdict is about damage,
// and its class: corrupt-record and unchecked for corruption, index-stale
// into the tail for an incomplete one.
func verdictDamage(e logstore.IndexEntryInfo) (segfile.Class, bool) {
	switch {
	case e.Verdict.Damaged():
		return segfile.Corrupt, true
	case e.Verdict == segfile.VerdictPastEnd && e.RecordPos >= 0:
		return segfile.Incomplete, true
	}
	return 0, false
}

// checkDumpIndex: dump-index --verify on each index file points at the
// damage verify-crc finds, judges entries in damaged bytes as damaged, and
// finds wrong the entries verify-crc finds wrong.
func checkDumpIndex(a *agreement, pdir string, read agreeRead, ver agreeVerify) {
	const view = "dump-index --verify"
	tb := a.tb
	segs, err := logstore.IndexSegments(pdir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, seg := range segs {
		// The damage in this segment, as verify-crc and read found it.
		var damages []*agreeDamage
		for _, d := range ver.damages {
			if d.Seg == seg.Base {
				damages = append(damages, d)
			}
		}
		logSize := fileLen(seg.Log)
		inDamage := func(pos int64) (segfile.Class, bool) {
			for _, d := range read.damages {
				if segBase(tb, d.Path) == seg.Base && pos >= d.Pos && pos < d.End {
					return segfile.Corrupt, true
				}
			}
			if n := len(damages); n > 0 && damages[n-1].Class == segfile.Incomplete && pos >= damages[n-1].Pos && pos < logSize {
				return segfile.Incomplete, true
			}
			return 0, false
		}
		for _, path := range []string{seg.Index, seg.TimeIndex} {
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			name := filepath.Base(path)
			wrong := map[int64]logstore.FindingKind{} // verify-crc's findings on entries, by entry
			for _, f := range ver.findings {
				if f.Path == path && f.Pos >= 0 && f.Kind != logstore.FindingIndexPartial && f.Kind != logstore.FindingIndexShort {
					wrong[f.Pos/format.IndexEntryLen] = f.Kind
				}
			}
			firstSeen := false
			_, err := dumpIndex(path, true, func(e logstore.IndexEntryInfo) error {
				if class, ok := verdictDamage(e); ok {
					at := &agreeDamage{Seg: seg.Base, Pos: e.RecordPos, Class: class, NoOffset: true}
					a.check(view, slices.ContainsFunc(damages, func(d *agreeDamage) bool { return sameDamage(d, at) }),
						"%s entry %d (%s): %s at byte %d, where verify-crc finds %v", name, e.Entry, logstore.VerdictKind(e.Verdict), class, e.RecordPos, damages)
					if !firstSeen && len(damages) > 0 {
						a.check(view, damages[0].Pos <= e.RecordPos, "%s entry %d: damage at byte %d before the first, %v", name, e.Entry, e.RecordPos, damages[0])
					}
					firstSeen = true
				}
				// An entry pointing into damaged bytes cannot be confirmed: it
				// is about the damage, unless it is out of order anyway.
				if path == seg.Index {
					if class, in := inDamage(e.Value); in && e.Value >= 0 && e.Verdict != segfile.VerdictOutOfOrder {
						got, ok := verdictDamage(e)
						a.check(view, ok && got == class, "%s entry %d points at byte %d, in %s bytes, and is %s", name, e.Entry, e.Value, class, logstore.VerdictKind(e.Verdict))
					}
				}
				kind, found := wrong[e.Entry]
				a.check(view, found == (e.Verdict.Wrong() || e.Verdict.Note()), "%s entry %d is %s, verify-crc finds %q", name, e.Entry, logstore.VerdictKind(e.Verdict), kind)
				a.check(view, !found || kind == logstore.VerdictKind(e.Verdict), "%s entry %d: dump-index calls it %s, verify-crc %s", name, e.Entry, logstore.VerdictKind(e.Verdict), kind)
				delete(wrong, e.Entry)
				return nil
			})
			if err != nil {
				a.check(view, false, "%s: %v", name, err)
			}
			for entry, kind := range wrong {
				a.check(view, false, "%s: verify-crc finds entry %d %s; dump-index has no such entry", name, entry, kind)
			}
		}
	}
}

func fileLen(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// checkCopy copies the fixture: refused exactly when it holds corruption;
// otherwise the copy holds the valid records and no
// problem the source did not have.
func checkCopy(a *agreement, src string, ref agreeRead, corruption bool, ver agreeVerify) {
	const view = "copy-partition"
	tb := a.tb
	root := agreeCopy(tb, src)
	dst := tb.TempDir()
	_, err := logstore.Open(root).CopyPartition(agreeTopic, 0, logstore.Open(dst), logstore.CopyOptions{})
	if slices.ContainsFunc(ver.findings, func(f logstore.Finding) bool { return f.Kind == logstore.FindingGapsFile }) {
		a.check(view, errors.Is(err, logstore.ErrInvalidGaps) || corruption, "copy of a partition whose .gaps.json is wrong: %v", err)
		return
	}
	if slices.ContainsFunc(ver.findings, func(f logstore.Finding) bool { return f.Kind == logstore.FindingEmptyBelowFloor }) {
		a.check(view, err != nil && strings.Contains(err.Error(), "holds no record"), "copy of a partition whose active segment is empty and named below its floor: %v", err)
		return
	}
	if corruption {
		// It names damage verify-crc finds (not always the first: the
		// active segment's is found when the copy is planned).
		d, ok := corruptionOf(tb, err)
		a.check(view, ok, "copy of a damaged partition: %v", err)
		if ok {
			a.check(view, slices.ContainsFunc(ver.damages, func(v *agreeDamage) bool { return v.Class == segfile.Corrupt && sameDamage(v, d) }),
				"refused for %v, which verify-crc does not find (%v)", d, ver.damages)
		}
		return
	}
	if err != nil {
		a.check(view, false, "%v", err)
		return
	}
	p := agreePartition(tb, dst)
	read := readSkipping(tb, p, 0)
	a.check(view, slices.Equal(read.recs, ref.recs) && len(read.damages) == 0, "the copy reads %v (damage %v), want %v", read.recs, read.damages, ref.recs)
	cv := verifyAll(tb, p)
	was := map[string]bool{}
	for _, pr := range ver.problems() {
		was[pr] = true
	}
	for _, pr := range cv.problems() {
		a.check(view, was[pr] || strings.HasPrefix(pr, string(logstore.FindingIncompleteTail)), "verify-crc of the copy: %s", pr)
	}
}

// checkSweep plans a retention sweep deleting everything: it takes the
// partition's next offset as readers do, the name an active segment it
// rolls gets.
func checkSweep(a *agreement, src string, next uint64) {
	root := agreeCopy(a.tb, src)
	ts, err := logstore.Open(root).RetentionSweep(agreeTopic, 0, logstore.RetentionOptions{
		Retention: time.Nanosecond, Override: true, Now: time.Unix(0, math.MaxInt64), DryRun: true, LockWait: time.Second})
	if err != nil || len(ts.Partitions) != 1 {
		a.tb.Fatalf("RetentionSweep: %v, %+v", err, ts.Failed)
	}
	got := ts.Partitions[0].Next
	a.check("retention-sweep", got == next, "next offset %d, want %d", got, next)
}

// agreeGenRec is a record the fuzz generator wrote: where it is, and
// whether its bytes are still as written.
type agreeGenRec struct {
	seg    int
	off    uint64
	pos, n int64
	intact bool
}

// agreeGenSeg is a segment the generator wrote: its base, its files'
// bytes and its index entries.
type agreeGenSeg struct {
	base    uint64
	log     []byte
	index   []int64 // each entry's position, entries for every record
	offsets []uint64
	noIndex bool
	// touched: damaged, renamed or after such a segment, where the
	// guarantee on intact records does not reach (it is a segment's).
	touched bool
}

// agreeGenerate builds a small partition from seed: one to three segments
// of random records (some of whose values hold records forged with
// offsets near their own), offsets sometimes jumping between segments,
// then damaged: bits flipped, offsets moved, garbage inserted, a tail cut,
// an index removed, a segment renamed.
func agreeGenerate(seed uint64) ([]agreeGenSeg, []agreeGenRec) {
	r := rand.New(rand.NewPCG(seed, seed^0x6a09e667f3bcc909))
	var segs []agreeGenSeg
	var recs []agreeGenRec
	next := uint64(r.IntN(3))
	for si := range 1 + r.IntN(3) {
		if si > 0 && r.IntN(4) == 0 {
			next += uint64(1 + r.IntN(4)) // a gap
		}
		seg := agreeGenSeg{base: next}
		for range 1 + r.IntN(8) {
			var value []byte
			if r.IntN(4) == 0 {
				fo := next + uint64(r.IntN(3))
				for range 1 + r.IntN(2) {
					value = swEncode(value, swRecord{Offset: fo, Timestamp: int64(fo), Value: []byte("forged")})
					fo++
				}
			} else {
				value = make([]byte, r.IntN(24))
				for j := range value {
					value[j] = byte(r.IntN(256))
				}
			}
			pos := int64(len(seg.log))
			seg.log = swEncode(seg.log, swRecord{Offset: next, Timestamp: goldenT0 + int64(next), Key: []byte{'k'}, Value: value})
			seg.index = append(seg.index, pos)
			seg.offsets = append(seg.offsets, next)
			recs = append(recs, agreeGenRec{seg: si, off: next, pos: pos, n: int64(len(seg.log)) - pos, intact: true})
			next++
		}
		segs = append(segs, seg)
	}
	damage := func(si int, at, n int64) {
		for i := range recs {
			if recs[i].seg == si && recs[i].pos < at+n && at < recs[i].pos+recs[i].n {
				recs[i].intact = false
			}
		}
	}
	for range r.IntN(4) {
		si := r.IntN(len(segs))
		seg := &segs[si]
		if len(seg.log) == 0 {
			continue
		}
		seg.touched = true
		switch r.IntN(7) {
		case 0, 1: // a flipped bit
			at := r.Int64N(int64(len(seg.log)))
			seg.log[at] ^= 1 << r.IntN(8)
			damage(si, at, 1)
		case 2: // a record's offset moved
			var mine []int
			for i := range recs {
				if recs[i].seg == si {
					mine = append(mine, i)
				}
			}
			k := mine[r.IntN(len(mine))]
			if recs[k].pos+8 <= int64(len(seg.log)) {
				binary.BigEndian.PutUint64(seg.log[recs[k].pos:], recs[k].off+uint64(r.IntN(7))-3)
				damage(si, recs[k].pos, 8)
			}
		case 3: // garbage inserted
			at := r.Int64N(int64(len(seg.log)) + 1)
			g := make([]byte, 1+r.IntN(30))
			for j := range g {
				g[j] = byte(r.IntN(256))
			}
			seg.log = append(seg.log[:at:at], append(g, seg.log[at:]...)...)
			for i := range recs {
				switch {
				case recs[i].seg != si:
				case recs[i].pos >= at:
					recs[i].pos += int64(len(g))
				case recs[i].pos+recs[i].n > at:
					recs[i].intact = false
				}
			}
			for i, p := range seg.index {
				if p >= at {
					seg.index[i] += int64(len(g))
				}
			}
		case 4: // the tail cut
			cut := r.Int64N(int64(len(seg.log)) + 1)
			damage(si, cut, int64(len(seg.log))-cut)
			seg.log = seg.log[:cut]
		case 5: // no index
			seg.noIndex = true
		case 6: // renamed, above or below its records
			if b := seg.base + uint64(r.IntN(5)) - 2; si == 0 || b > segs[si-1].base {
				if si == len(segs)-1 || b < segs[si+1].base {
					seg.base = b
				}
			}
		}
	}
	for i := range segs {
		if i > 0 && segs[i-1].touched {
			segs[i].touched = true
		}
	}
	return segs, recs
}

// agreeWrite writes the generated segments as partition directory dir.
func agreeWrite(tb testing.TB, dir string, segs []agreeGenSeg) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for _, seg := range segs {
		swWriteFile(tb, filepath.Join(dir, swName(seg.base, ".log")), seg.log)
		if seg.noIndex {
			continue
		}
		var index, timeindex []byte
		for i, pos := range seg.index {
			index = swEntry(index, seg.offsets[i], pos)
			timeindex = swEntry(timeindex, seg.offsets[i], goldenT0+int64(seg.offsets[i]))
		}
		swWriteFile(tb, filepath.Join(dir, swName(seg.base, ".index")), index)
		swWriteFile(tb, filepath.Join(dir, swName(seg.base, ".timeindex")), timeindex)
	}
}

// FuzzAgreement checks the agreement of every view on generated, damaged
// partitions (agreeGenerate), and the one rule's guarantee through
// recover --salvage: in a segment whose index is as the writer left it,
// and that nothing before it made its floor other than written, no record
// written intact and confirmed by an intact record right after it (or
// ending the data) is missing from the live log after salvage.
func FuzzAgreement(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		segs, recs := agreeGenerate(seed)
		src := filepath.Join(t.TempDir(), "p")
		agreeWrite(t, src, segs)
		a := &agreement{tb: t}
		checkAgreement(a, src, nil)

		root := agreeCopy(t, src)
		if _, err := logstore.RecoverOne(logstore.Open(root), agreeTopic, 0, logstore.RecoverOptions{Salvage: true}); err != nil {
			t.Fatalf("recover --salvage: %v", err)
		}
		after := map[uint64]bool{}
		for _, o := range readSkipping(t, agreePartition(t, root), 0).offsets {
			after[o] = true
		}
		for i, rec := range recs {
			seg := segs[rec.seg]
			if !rec.intact || seg.noIndex || rec.seg > 0 && segs[rec.seg-1].touched || segs[rec.seg].base != seg.offsets[0] {
				continue
			}
			confirmed := rec.pos+rec.n == int64(len(seg.log))
			if i+1 < len(recs) && recs[i+1].seg == rec.seg && recs[i+1].intact && recs[i+1].pos == rec.pos+rec.n {
				confirmed = true
			}
			if confirmed && !after[rec.off] {
				t.Errorf("offset %d, written intact at byte %d of segment %d, is not in the live log after salvage", rec.off, rec.pos, seg.base)
			}
		}
	})
}
