package commands

// The corruption matrix: one table row per kind of damage. Each row builds
// a partition with its own encoder (docs/format.md §2 and §4, encoding/binary and
// hash/crc32 only: data "written by another program"), damages it, and
// then pins, through commands.Run, what verify-crc --json finds, what
// recover (and recover --salvage) does, that verify-crc is content
// afterwards, and exactly which records read returns.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// mxRec is one record as docs/format.md §2 lays it out.
type mxRec struct {
	off uint64
	ts  int64
	key string // "" = no key
	val string
}

// mxEncode appends r's encoding: offset u64, size u32, crc u32,
// timestamp i64, keylen u32, key, value; CRC-32 IEEE over ts ‖ key ‖ value.
func mxEncode(dst []byte, r mxRec) []byte {
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(r.ts))
	c := crc32.NewIEEE()
	c.Write(ts[:])
	c.Write([]byte(r.key))
	c.Write([]byte(r.val))
	dst = binary.BigEndian.AppendUint64(dst, r.off)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(r.key)+len(r.val)))
	dst = binary.BigEndian.AppendUint32(dst, c.Sum32())
	dst = append(dst, ts[:]...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(r.key)))
	dst = append(dst, r.key...)
	return append(dst, r.val...)
}

// mxEntry is one 16-byte .index/.timeindex entry.
func mxEntry(dst []byte, off uint64, v int64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, off)
	return binary.BigEndian.AppendUint64(dst, uint64(v))
}

const (
	mxHdr    = 28
	mxTS0    = int64(1700000000000000000)
	mxOffAt  = 0
	mxSizeAt = 8
	mxCRCAt  = 12
	mxTSAt   = 16
	mxKLenAt = 24
)

// mxStdRec is the standard record at offset o: key "k<o>", value
// "value-<o>", timestamps a millisecond apart. With o < 10 it encodes to
// 28+2+7 = 37 bytes.
func mxStdRec(o uint64) mxRec {
	return mxRec{off: o, ts: mxTS0 + int64(o)*1e6, key: fmt.Sprintf("k%d", o), val: fmt.Sprintf("value-%d", o)}
}

func mxRange(from, to uint64) []mxRec {
	var rs []mxRec
	for o := from; o < to; o++ {
		rs = append(rs, mxStdRec(o))
	}
	return rs
}

// mxSeg is a segment to write: its base and its records (which carry their
// own offsets, so rows can break the rules).
type mxSeg struct {
	base uint64
	recs []mxRec
}

// mx is one row's partition: data dir, topic "t", partition directory,
// and where each record was written.
type mx struct {
	t    *testing.T
	dir  string // data dir
	pdir string // data/t/0
	pos  map[uint64]int64
}

func (m *mx) name(base uint64, ext string) string { return fmt.Sprintf("%020d%s", base, ext) }
func (m *mx) path(base uint64, ext string) string { return filepath.Join(m.pdir, m.name(base, ext)) }

// write writes segments into partition directory pdir (index interval 1).
func mxWrite(t *testing.T, pdir string, segs ...mxSeg) map[uint64]int64 {
	t.Helper()
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	pos := map[uint64]int64{}
	for _, s := range segs {
		var log, idx, tidx []byte
		for _, r := range s.recs {
			if _, dup := pos[r.off]; !dup {
				pos[r.off] = int64(len(log))
			}
			idx = mxEntry(idx, r.off, int64(len(log)))
			tidx = mxEntry(tidx, r.off, r.ts)
			log = mxEncode(log, r)
		}
		for ext, b := range map[string][]byte{".log": log, ".index": idx, ".timeindex": tidx} {
			if err := os.WriteFile(filepath.Join(pdir, fmt.Sprintf("%020d%s", s.base, ext)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return pos
}

func (m *mx) write(segs ...mxSeg) {
	m.t.Helper()
	m.pos = mxWrite(m.t, m.pdir, segs...)
}

// std writes the standard partition: segment 0 with offsets 0..4 (closed),
// segment 5 with 5..9 (active).
func (m *mx) std() { m.write(mxSeg{0, mxRange(0, 5)}, mxSeg{5, mxRange(5, 10)}) }

func (m *mx) read(path string) []byte {
	m.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		m.t.Fatal(err)
	}
	return b
}

func (m *mx) put(path string, at int64, p []byte) {
	m.t.Helper()
	b := m.read(path)
	copy(b[at:], p)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		m.t.Fatal(err)
	}
}

func (m *mx) flip(path string, at int64, mask byte) {
	m.t.Helper()
	b := m.read(path)
	b[at] ^= mask
	if err := os.WriteFile(path, b, 0o644); err != nil {
		m.t.Fatal(err)
	}
}

func (m *mx) appendTo(path string, p []byte) {
	m.t.Helper()
	if err := os.WriteFile(path, append(m.read(path), p...), 0o644); err != nil {
		m.t.Fatal(err)
	}
}

func (m *mx) u32(path string, at int64, v uint32) {
	m.put(path, at, binary.BigEndian.AppendUint32(nil, v))
}

func (m *mx) file(path string, b string) {
	m.t.Helper()
	if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
		m.t.Fatal(err)
	}
}

func (m *mx) remove(path string) {
	m.t.Helper()
	if err := os.Remove(path); err != nil {
		m.t.Fatal(err)
	}
}

// mxFind is an expected verify-crc finding: severity, kind, file (base
// name, "" = the partition directory or don't care), byte position and
// offset (-1: null).
type mxFind struct {
	sev, kind, file string
	pos, off        int64
}

func (f mxFind) String() string {
	return fmt.Sprintf("%s %s %s pos %d off %d", f.sev, f.kind, f.file, f.pos, f.off)
}

// mxRow is one damage.
type mxRow struct {
	name   string
	build  func(m *mx)
	verify int      // verify-crc exit code before recover
	finds  []mxFind // exactly the findings verify-crc --json reports
	// anyFinds: kinds whose findings are only checked to be present (as
	// listed in finds), further findings of the same kind allowed.
	recoverCode int      // plain recover's exit code
	after       int      // verify-crc's exit code after plain recover
	afterFinds  []mxFind // nil: don't check
	readCode    int      // read's exit code after plain recover
	readOffs    []uint64 // offsets read returns after plain recover
	// salvage: then run recover --salvage; it must exit 0, verify-crc 0,
	// and read (exit 0) returns salvOffs.
	salvage  bool
	salvOffs []uint64
	// check runs extra checks at the end.
	check func(m *mx)
	// content: the records read returns (by offset) must equal mxStdRec,
	// unless false.
	noContent bool
	skip      string
}

func offs(rs ...[]uint64) []uint64 {
	var o []uint64
	for _, r := range rs {
		o = append(o, r...)
	}
	return o
}

func span(from, to uint64) []uint64 {
	var o []uint64
	for i := from; i < to; i++ {
		o = append(o, i)
	}
	return o
}

// mxVerify runs verify-crc t --json and returns its exit code and findings.
func mxVerify(t *testing.T, dir string) (int, []mxFind, string) {
	t.Helper()
	r := runIn(t, dir, nil, "verify-crc", "t", "--json", "--jobs", "2")
	var fs []mxFind
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if l == "" {
			continue
		}
		var j verifyFindingJSON
		if err := json.Unmarshal([]byte(l), &j); err != nil {
			t.Fatalf("verify-crc --json: bad line %q: %v", l, err)
		}
		if j.Type != "finding" {
			continue
		}
		f := mxFind{sev: j.Severity, kind: j.Kind, file: filepath.Base(j.Path), pos: -1, off: -1}
		if fi, err := os.Stat(j.Path); err == nil && fi.IsDir() {
			f.file = ""
		}
		if j.Pos != nil {
			f.pos = *j.Pos
		}
		if j.Offset != nil {
			f.off = *j.Offset
		}
		fs = append(fs, f)
	}
	return r.code, fs, r.stdout + r.stderr
}

func sameFinds(got, want []mxFind) bool {
	key := func(f mxFind) string { return f.String() }
	g, w := make([]string, len(got)), make([]string, len(want))
	for i := range got {
		g[i] = key(got[i])
	}
	for i := range want {
		w[i] = key(want[i])
	}
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}

// mxRead runs read t --format json and returns its exit code and records.
func mxRead(t *testing.T, dir string) (int, []record, string) {
	t.Helper()
	r := runIn(t, dir, nil, "read", "t", "--format", "json")
	var recs []record
	for _, l := range parseJSONLines(t, r.stdout) {
		recs = append(recs, l.record(t))
	}
	return r.code, recs, r.stderr
}

func (row mxRow) checkRead(t *testing.T, dir, when string, code int, want []uint64) {
	t.Helper()
	got, recs, stderr := mxRead(t, dir)
	if got != code {
		t.Errorf("%s: read exit %d, want %d; stderr: %s", when, got, code, stderr)
	}
	var o []uint64
	for _, r := range recs {
		o = append(o, r.offset)
		if !row.noContent {
			w := mxStdRec(r.offset)
			if string(r.key) != w.key || string(r.value) != w.val {
				t.Errorf("%s: offset %d read as key %q value %q, written as %q %q", when, r.offset, r.key, r.value, w.key, w.val)
			}
		}
	}
	if !slices.Equal(o, want) {
		t.Errorf("%s: read returned offsets %v, want %v; stderr: %s", when, o, want, stderr)
	}
}

func TestCorruptionMatrix(t *testing.T) {
	const seg0, seg5 = "00000000000000000000.log", "00000000000000000005.log"
	const idx0 = "00000000000000000000.index"
	all := span(0, 10)
	rows := []mxRow{
		{
			name:   "torn header",
			build:  func(m *mx) { m.std(); m.appendTo(m.path(5, ".log"), mxEncode(nil, mxStdRec(10))[:10]) },
			verify: 3, finds: []mxFind{{"problem", "incomplete-tail", seg5, 185, 10}},
			readOffs: all,
		},
		{
			name:   "torn body",
			build:  func(m *mx) { m.std(); m.appendTo(m.path(5, ".log"), mxEncode(nil, mxStdRec(10))[:33]) },
			verify: 3, finds: []mxFind{{"problem", "incomplete-tail", seg5, 185, 10}},
			readOffs: all,
		},
		{
			name:   "zero-filled tail",
			build:  func(m *mx) { m.std(); m.appendTo(m.path(5, ".log"), make([]byte, 4096)) },
			verify: 3, finds: []mxFind{{"problem", "incomplete-tail", seg5, 185, 10}},
			readOffs: all,
		},
		{
			name:   "value bit flip, closed segment",
			build:  func(m *mx) { m.std(); m.flip(m.path(0, ".log"), m.pos[2]+mxHdr+3, 0x01) },
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg0, 74, 2}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 2),
			salvage: true, salvOffs: offs(span(0, 2), span(3, 10)),
		},
		{
			name:   "key bit flip, closed segment",
			build:  func(m *mx) { m.std(); m.flip(m.path(0, ".log"), m.pos[3]+mxHdr, 0x20) },
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg0, 111, 3}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 3),
			salvage: true, salvOffs: offs(span(0, 3), span(4, 10)),
		},
		{
			name:   "value bit flip, active segment (valid records after it)",
			build:  func(m *mx) { m.std(); m.flip(m.path(5, ".log"), m.pos[7]+mxHdr+5, 0x80) },
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg5, 74, 7}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 7),
			salvage: true, salvOffs: offs(span(0, 7), span(8, 10)),
		},
		{
			name:   "timestamp bit flip",
			build:  func(m *mx) { m.std(); m.flip(m.path(0, ".log"), m.pos[1]+mxTSAt+7, 0x01) },
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg0, 37, 1}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 1),
			salvage: true, salvOffs: offs(span(0, 1), span(2, 10)),
		},
		{
			name:   "crc bit flip",
			build:  func(m *mx) { m.std(); m.flip(m.path(0, ".log"), m.pos[0]+mxCRCAt, 0x10) },
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg0, 0, 0}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: nil,
			salvage: true, salvOffs: span(1, 10),
		},
		{
			name:   "offset bit flip",
			build:  func(m *mx) { m.std(); m.flip(m.path(0, ".log"), m.pos[2]+mxOffAt+7, 0x40) },
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg0, 74, 2}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 2),
			salvage: true, salvOffs: offs(span(0, 2), span(3, 10)),
		},
		{
			name:   "size bit flip (larger)",
			build:  func(m *mx) { m.std(); m.flip(m.path(0, ".log"), m.pos[2]+mxSizeAt+3, 0x04) },
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg0, 74, 2}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 2),
			salvage: true, salvOffs: offs(span(0, 2), span(3, 10)),
		},
		{
			name:   "size bit flip (smaller)",
			build:  func(m *mx) { m.std(); m.flip(m.path(5, ".log"), m.pos[6]+mxSizeAt+3, 0x08) },
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg5, 37, 6}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 6),
			salvage: true, salvOffs: offs(span(0, 6), span(7, 10)),
		},
		{
			name:   "keylen > size",
			build:  func(m *mx) { m.std(); m.u32(m.path(0, ".log"), m.pos[2]+mxKLenAt, 100) },
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg0, 74, 2}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 2),
			salvage: true, salvOffs: offs(span(0, 2), span(3, 10)),
		},
		{
			name: "size past EOF, last record of a closed segment",
			build: func(m *mx) {
				m.std()
				m.u32(m.path(0, ".log"), m.pos[4]+mxSizeAt, 1000)
			},
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg0, 148, 4}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 4),
			salvage: true, salvOffs: offs(span(0, 4), span(5, 10)),
		},
		{
			name: "size past EOF in the active segment, index entries beyond it",
			build: func(m *mx) {
				m.std()
				m.u32(m.path(5, ".log"), m.pos[7]+mxSizeAt, 1000)
			},
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg5, 74, 7}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 7),
			salvage: true, salvOffs: offs(span(0, 7), span(8, 10)),
			check: func(m *mx) {
				// Not cut as a torn tail: 8 and 9 must have survived plain recover.
			},
		},
		{
			name: "size 4 GiB-1, closed segment",
			build: func(m *mx) {
				m.std()
				m.u32(m.path(0, ".log"), m.pos[2]+mxSizeAt, 0xFFFFFFFF)
			},
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg0, 74, 2}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 2),
			salvage: true, salvOffs: offs(span(0, 2), span(3, 10)),
		},
		{
			name: "size 4 GiB-1, last record of the active segment (torn)",
			build: func(m *mx) {
				m.std()
				m.u32(m.path(5, ".log"), m.pos[9]+mxSizeAt, 0xFFFFFFFF)
			},
			verify: 3, finds: []mxFind{
				{"problem", "incomplete-tail", seg5, 148, 9},
				{"note", "index-stale", "00000000000000000005.index", 64, 9},
				{"note", "index-stale", "00000000000000000005.timeindex", 64, 9},
			},
			readOffs: span(0, 9),
		},
		{
			name: "garbage before the first record of a closed segment",
			build: func(m *mx) {
				m.std()
				b := m.read(m.path(0, ".log"))
				m.file(m.path(0, ".log"), "\x00garbage"+string(b))
				m.write(mxSeg{5, mxRange(5, 10)}) // (re)write: keep pos of 5..9
				m.pos = nil
			},
			// The index, written for the log before 8 bytes were put in
			// front of it, now points inside records.
			verify: 3, finds: []mxFind{
				{"problem", "corrupt-record", seg0, 0, 0},
				{"problem", "index-no-record", idx0, 16, 1},
				{"problem", "index-no-record", idx0, 32, 2},
				{"problem", "index-no-record", idx0, 48, 3},
				{"problem", "index-no-record", idx0, 64, 4},
			},
			recoverCode: 3, after: 3, readCode: 1, readOffs: nil,
			salvage: true, salvOffs: span(0, 10),
		},
		{
			name: "offset gap inside a segment",
			build: func(m *mx) {
				m.write(mxSeg{0, []mxRec{mxStdRec(0), mxStdRec(1), mxStdRec(2), mxStdRec(4), mxStdRec(5)}}, mxSeg{6, mxRange(6, 10)})
			},
			verify: 3, finds: []mxFind{{"problem", "corrupt-record", seg0, 111, 3}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 3),
			// No valid record may be lost: 4 checks out (offset, size, CRC).
			salvage: true, salvOffs: offs(span(0, 3), span(4, 10)),
		},
		{
			name: "duplicate offsets",
			build: func(m *mx) {
				m.write(mxSeg{0, []mxRec{mxStdRec(0), mxStdRec(1), mxStdRec(2), mxStdRec(2), mxStdRec(3), mxStdRec(4)}}, mxSeg{5, mxRange(5, 10)})
			},
			// The index faithfully lists offset 2 twice: its second entry
			// for it is out of order.
			verify: 3, finds: []mxFind{
				{"problem", "corrupt-record", seg0, 111, 3},
				{"problem", "index-order", idx0, 48, 2},
				{"problem", "index-order", "00000000000000000000.timeindex", 48, 2},
			},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 3),
			salvage: true, salvOffs: span(0, 10),
		},
		{
			name: "overlapping segments",
			build: func(m *mx) {
				m.write(mxSeg{0, mxRange(0, 5)}, mxSeg{3, mxRange(3, 8)})
			},
			verify: 3, finds: []mxFind{{"problem", "overlap", "00000000000000000003.log", 0, 3}},
			recoverCode: 3, after: 3, readCode: 1, readOffs: span(0, 5),
		},
		{
			name: "missing middle segment",
			build: func(m *mx) {
				m.write(mxSeg{0, mxRange(0, 5)}, mxSeg{5, mxRange(5, 10)}, mxSeg{10, mxRange(10, 15)})
				for _, ext := range []string{".log", ".index", ".timeindex"} {
					m.remove(m.path(5, ext))
				}
			},
			verify: 3, finds: []mxFind{{"problem", "gap", "00000000000000000010.log", 0, 5}},
			after: 3, readOffs: offs(span(0, 5), span(10, 15)),
		},
		{
			name: "missing middle segment recorded in .gaps.json",
			build: func(m *mx) {
				m.write(mxSeg{0, mxRange(0, 5)}, mxSeg{5, mxRange(5, 10)}, mxSeg{10, mxRange(10, 15)})
				for _, ext := range []string{".log", ".index", ".timeindex"} {
					m.remove(m.path(5, ext))
				}
				m.file(filepath.Join(m.pdir, ".gaps.json"), `{"gaps":[{"from":5,"to":10,"time":"2024-01-01T00:00:00Z","reason":"test"}]}`)
			},
			verify: 0, finds: []mxFind{{"known", "gap", "00000000000000000010.log", 0, 5}},
			readOffs: offs(span(0, 5), span(10, 15)),
		},
		{
			name: "empty active segment after a roll",
			build: func(m *mx) {
				m.write(mxSeg{0, mxRange(0, 5)}, mxSeg{5, nil})
			},
			readOffs: span(0, 5),
		},
		{
			name: "empty .log with a stale index (index reached the disk, log did not)",
			build: func(m *mx) {
				m.write(mxSeg{0, mxRange(0, 5)}, mxSeg{5, mxRange(5, 10)})
				if err := os.Truncate(m.path(5, ".log"), 0); err != nil {
					m.t.Fatal(err)
				}
			},
			finds:    mxStale(5, 5, 10),
			readOffs: span(0, 5),
		},
		{
			name:     "missing .index",
			build:    func(m *mx) { m.std(); m.remove(m.path(0, ".index")) },
			finds:    []mxFind{{"note", "index-missing", idx0, -1, -1}},
			readOffs: all,
			check: func(m *mx) {
				if _, err := os.Stat(m.path(0, ".index")); err != nil {
					m.t.Errorf("recover did not rebuild the .index: %v", err)
				}
			},
		},
		{
			name:     "missing .timeindex",
			build:    func(m *mx) { m.std(); m.remove(m.path(0, ".timeindex")) },
			finds:    []mxFind{{"note", "index-missing", "00000000000000000000.timeindex", -1, -1}},
			readOffs: all,
		},
		{
			name: "index longer than the log",
			build: func(m *mx) {
				m.std()
				m.appendTo(m.path(5, ".index"), mxEntry(mxEntry(nil, 10, 185), 11, 222))
			},
			finds: []mxFind{
				{"note", "index-stale", "00000000000000000005.index", 80, 10},
				{"note", "index-stale", "00000000000000000005.index", 96, 11},
			},
			readOffs: all,
		},
		{
			name:     "index with a partial entry",
			build:    func(m *mx) { m.std(); m.appendTo(m.path(0, ".index"), []byte{0, 0, 0, 0, 0, 0, 0}) },
			finds:    []mxFind{{"note", "index-partial-entry", idx0, 80, -1}},
			readOffs: all,
		},
		{
			name: "lying index entry (another record's position)",
			build: func(m *mx) {
				m.std()
				m.put(m.path(0, ".index"), 2*16, mxEntry(nil, 2, 111))
			},
			// Entry 2 claims offset 2 at record 3's position: the record
			// there says it has another offset.
			verify: 3, finds: []mxFind{{"problem", "index-mismatch", idx0, 32, 2}},
			readOffs: all,
		},
		{
			name: "lying time index entry (wrong timestamp)",
			build: func(m *mx) {
				m.std()
				m.put(m.path(0, ".timeindex"), 2*16, mxEntry(nil, 2, mxStdRec(2).ts+500))
			},
			verify: 3, finds: []mxFind{{"problem", "index-mismatch", "00000000000000000000.timeindex", 32, 2}},
			readOffs: all,
		},
		{
			name: "lying index entry (no record starts there)",
			build: func(m *mx) {
				m.std()
				m.put(m.path(0, ".index"), 2*16, mxEntry(nil, 2, 80))
			},
			verify: 3, finds: []mxFind{{"problem", "index-no-record", idx0, 32, 2}},
			readOffs: all,
		},
		{
			name: "timestamps going backwards",
			build: func(m *mx) {
				rs := mxRange(0, 5)
				rs[3].ts = rs[1].ts - 1
				m.write(mxSeg{0, rs}, mxSeg{5, mxRange(5, 10)})
			},
			finds:      []mxFind{{"note", "timestamp-backwards", seg0, 111, 3}},
			afterFinds: []mxFind{{"note", "timestamp-backwards", seg0, 111, 3}},
			readOffs:   all,
		},
		{
			name: "foreign files in the partition directory",
			build: func(m *mx) {
				m.std()
				m.file(filepath.Join(m.pdir, "README.txt"), "hello")
				m.file(filepath.Join(m.pdir, "123.log"), "not a segment")
				m.file(filepath.Join(m.pdir, "00000000000000000000.log~"), "editor backup")
				m.file(filepath.Join(m.pdir, ".nfs0001"), "")
				if err := os.Mkdir(filepath.Join(m.pdir, "sub"), 0o755); err != nil {
					m.t.Fatal(err)
				}
			},
			readOffs: all,
			check: func(m *mx) {
				for _, n := range []string{"README.txt", "123.log", "00000000000000000000.log~", ".nfs0001", "sub"} {
					if _, err := os.Stat(filepath.Join(m.pdir, n)); err != nil {
						m.t.Errorf("recover removed a foreign file: %v", err)
					}
				}
			},
		},
		{
			name: "leftover .deleted/.tmp files and an orphan index",
			build: func(m *mx) {
				m.write(mxSeg{0, mxRange(0, 5)}, mxSeg{5, mxRange(5, 10)})
				for _, ext := range []string{".log", ".index", ".timeindex"} {
					m.file(m.path(100, ext)+".deleted", "old")
				}
				m.file(m.path(5, ".index")+".tmp", "partial")
				m.file(m.path(200, ".timeindex"), "")
			},
			readOffs: all,
			check: func(m *mx) {
				for _, p := range []string{m.path(100, ".log.deleted"), m.path(100, ".index.deleted"), m.path(100, ".timeindex.deleted"),
					m.path(5, ".index.tmp"), m.path(200, ".timeindex")} {
					if _, err := os.Stat(p); err == nil {
						m.t.Errorf("recover left %s", p)
					}
				}
			},
		},
	}

	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			if row.skip != "" {
				t.Skip(row.skip)
			}
			root := t.TempDir()
			m := &mx{t: t, dir: filepath.Join(root, "data"), pdir: filepath.Join(root, "data", "t", "0")}
			row.build(m)
			mxRun(t, m, row)
		})
	}
}

// mxRun runs a row's checks on its built partition.
func mxRun(t *testing.T, m *mx, row mxRow) {
	t.Helper()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	code, finds, out := mxVerify(t, m.dir)
	runtime.ReadMemStats(&ms1)
	if d := ms1.TotalAlloc - ms0.TotalAlloc; d > 64<<20 {
		t.Errorf("verify-crc allocated %d MiB", d>>20)
	}
	if code != row.verify {
		t.Errorf("verify-crc: exit %d, want %d\n%s", code, row.verify, out)
	}
	if !sameFinds(finds, row.finds) {
		t.Errorf("verify-crc findings:\n got %v\nwant %v\n%s", finds, row.finds, out)
	}

	logBytes := func() map[string]int64 {
		sizes := map[string]int64{}
		ms, _ := filepath.Glob(filepath.Join(m.pdir, "*.log"))
		for _, p := range ms {
			if fi, err := os.Stat(p); err == nil {
				sizes[filepath.Base(p)] = fi.Size()
			}
		}
		return sizes
	}
	before := logBytes()
	rr := runIn(t, m.dir, nil, "recover", "t", "--json")
	if row.recoverCode == 3 {
		// Damage left in place: without --salvage nothing of it is cut.
		if after := logBytes(); !maps.Equal(before, after) {
			t.Errorf("recover without --salvage changed .log sizes: %v -> %v", before, after)
		}
	}
	if rr.code != row.recoverCode {
		t.Errorf("recover: exit %d, want %d\n%s%s", rr.code, row.recoverCode, rr.stdout, rr.stderr)
	}
	var rj recoverJSON
	if err := json.Unmarshal([]byte(rr.stdout), &rj); err != nil {
		t.Errorf("recover --json: %v: %q", err, rr.stdout)
	}
	code, finds, out = mxVerify(t, m.dir)
	if code != row.after {
		t.Errorf("verify-crc after recover: exit %d, want %d\n%s", code, row.after, out)
	}
	if row.after == 0 {
		for _, f := range finds {
			if f.sev == "note" && !slices.Contains(row.afterFinds, f) {
				t.Errorf("verify-crc after recover: note left: %v", f)
			}
		}
	}
	if row.afterFinds != nil && !sameFinds(finds, row.afterFinds) {
		t.Errorf("verify-crc after recover: findings\n got %v\nwant %v", finds, row.afterFinds)
	}
	row.checkRead(t, m.dir, "after recover", row.readCode, row.readOffs)
	if row.salvage {
		rs := runIn(t, m.dir, nil, "recover", "t", "--salvage")
		if rs.code != 0 {
			t.Errorf("recover --salvage: exit %d\n%s%s", rs.code, rs.stdout, rs.stderr)
		}
		code, finds, out = mxVerify(t, m.dir)
		if code != 0 {
			t.Errorf("verify-crc after salvage: exit %d\n%s", code, out)
		}
		for _, f := range finds {
			if f.sev == "problem" {
				t.Errorf("verify-crc after salvage: %v", f)
			}
		}
		row.checkRead(t, m.dir, "after salvage", 0, row.salvOffs)
	}
	if row.check != nil {
		row.check(m)
	}
	if t.Failed() {
		t.Logf("recover --json: %s", rr.stdout)
	}
}

// mxStale is the index-stale notes of segment base's two indexes for
// offsets from..to-1 (entries 0..).
func mxStale(base, from, to uint64) []mxFind {
	var fs []mxFind
	for _, ext := range []string{".index", ".timeindex"} {
		for o := from; o < to; o++ {
			fs = append(fs, mxFind{"note", "index-stale", fmt.Sprintf("%020d%s", base, ext), int64(o-from) * 16, int64(o)})
		}
	}
	return fs
}

// keyPartition is FNV-1a-32(key) % n, computed here with hash/fnv.
func mxKeyPartition(key string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

// A keylen flip that stays <= size moves bytes between key and value, and
// the CRC (over key ‖ value) cannot see it: a limit of the format
// (docs/format.md §2). In a 3-partition topic whose keys were FNV-routed, verify-crc gives
// the key-routing hint (a note: exit 0), recover has nothing to do, and
// read shows the shifted key and value.
func TestCorruptionMatrixKeyLenFlip(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "data")
	const n = 3
	parts := make([][]mxRec, n)
	for i := 0; i < 30; i++ {
		k := fmt.Sprintf("user-%d", i)
		p := mxKeyPartition(k, n)
		parts[p] = append(parts[p], mxRec{off: uint64(len(parts[p])), ts: mxTS0 + int64(i), key: k, val: fmt.Sprintf("payload-%d", i)})
	}
	// Pick a record whose key, one byte longer, routes elsewhere.
	victimP, victimI := -1, -1
	for p := range n {
		for i, r := range parts[p] {
			if victimP < 0 && mxKeyPartition(r.key+r.val[:1], n) != p {
				victimP, victimI = p, i
			}
		}
	}
	if victimP < 0 {
		t.Fatal("no record whose shifted key routes elsewhere")
	}
	var pos []map[uint64]int64
	for p := range n {
		pos = append(pos, mxWrite(t, filepath.Join(dir, "t", fmt.Sprint(p)), mxSeg{0, parts[p]}))
	}
	victim := parts[victimP][victimI]
	m := &mx{t: t, dir: dir, pdir: filepath.Join(dir, "t", fmt.Sprint(victimP))}
	at := pos[victimP][victim.off]
	m.u32(m.path(0, ".log"), at+mxKLenAt, uint32(len(victim.key)+1))

	code, finds, out := mxVerify(t, dir)
	want := []mxFind{{"note", "key-routing", m.name(0, ".log"), at, int64(victim.off)}}
	if code != 0 || !sameFinds(finds, want) {
		t.Errorf("verify-crc: exit %d, findings %v; want exit 0, %v\n%s", code, finds, want, out)
	}
	if r := runIn(t, dir, nil, "recover", "t"); r.code != 0 {
		t.Errorf("recover: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if code, _, out := mxVerify(t, dir); code != 0 {
		t.Errorf("verify-crc after recover: exit %d\n%s", code, out)
	}
	recs := readRecords(t, dir, "t", "--partition", fmt.Sprint(victimP))
	if len(recs) != len(parts[victimP]) {
		t.Fatalf("read %d records, want %d", len(recs), len(parts[victimP]))
	}
	for i, r := range recs {
		w := parts[victimP][i]
		wk, wv := w.key, w.val
		if i == victimI {
			wk, wv = w.key+w.val[:1], w.val[1:]
		}
		if r.offset != w.off || string(r.key) != wk || string(r.value) != wv {
			t.Errorf("record %d: offset %d key %q value %q, want %d %q %q", i, r.offset, r.key, r.value, w.off, wk, wv)
		}
	}
}
