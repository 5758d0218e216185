// Command gen writes the fixtures under testdata/simplelog: logs in the
// simple store/index layout of seeds/003 (see ../README.md), each with an
// expect.json manifest saying what a correct reader must find.
//
//	go run ./testdata/simplelog/gen -out testdata/simplelog
//
// It imports no seglog package on purpose: the bytes come from an emulation
// of the code that defines the format (a store written through a 4096-byte
// bufio.Writer, an index grown to MaxIndexBytes and written in place as
// through its memory map, truncated back only by Close), so the reader's
// tests check seglog against the format rather than against itself. After
// writing each fixture it re-reads the files with plain encoding/binary and
// fails unless the bytes agree with the manifest.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Wire format.
const (
	lenWidth = 8                   // store: big-endian uint64 value length, then the value
	offWidth = 4                   // index entry at i*entWidth: big-endian uint32 offset relative to the base
	posWidth = 8                   // then big-endian uint64 position of the record in the store
	entWidth = offWidth + posWidth // 12
)

var enc = binary.BigEndian

type config struct {
	maxStoreBytes uint64
	maxIndexBytes uint64 // a multiple of entWidth, so a full index is exactly IsMaxed
	padded        bool   // the blog's "%08d" names instead of the book's "%d"
	// closeOnRoll closes a segment as the next one starts. The book's Log
	// instead keeps every segment open until Log.Close, so a crash also
	// loses the bufio tail of earlier segments (see crashed-first-run).
	closeOnRoll bool
}

func (c config) name(base uint64, ext string) string {
	if c.padded {
		return fmt.Sprintf("%08d%s", base, ext)
	}
	return fmt.Sprintf("%d%s", base, ext)
}

type store struct {
	f    *os.File
	buf  *bufio.Writer
	size uint64
}

func openStore(path string) (*store, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &store{f: f, buf: bufio.NewWriter(f), size: uint64(fi.Size())}, nil
}

func (s *store) append(p []byte) (pos uint64, err error) {
	pos = s.size
	if err := binary.Write(s.buf, enc, uint64(len(p))); err != nil {
		return 0, err
	}
	if _, err := s.buf.Write(p); err != nil {
		return 0, err
	}
	s.size += lenWidth + uint64(len(p))
	return pos, nil
}

type index struct {
	f    *os.File
	size uint64 // bytes of real entries
	max  uint64
}

func openIndex(path string, max uint64) (*index, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		// The original grows the file before mapping it: a mapping can't.
		err = f.Truncate(int64(max))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &index{f: f, size: uint64(fi.Size()), max: max}, nil
}

// write stands in for the store into the memory map: the bytes reach the
// file at once, whatever happens to the process afterwards.
func (x *index) write(e entry) error {
	if x.max < x.size+entWidth {
		return io.EOF
	}
	var b [entWidth]byte
	enc.PutUint32(b[:offWidth], e.off)
	enc.PutUint64(b[offWidth:], e.pos)
	if _, err := x.f.WriteAt(b[:], int64(x.size)); err != nil {
		return err
	}
	x.size += entWidth
	return nil
}

type entry struct {
	off uint32
	pos uint64
}

type rec struct {
	pos    uint64
	value  []byte
	length uint64 // the length field on disk; differs from len(value) only when damaged
}

type segment struct {
	base, next           uint64
	storeName, indexName string
	store                *store // nil when not open
	index                *index

	// What is on disk once the segment is no longer open.
	closed                 bool // Close ran last (rather than a crash)
	storeBytes, indexBytes uint64
	entries                []entry // real index entries, as on disk
	recs                   []rec   // every record appended, whole on disk or not
}

func (s *segment) open(dir string, cfg config) error {
	st, err := openStore(filepath.Join(dir, s.storeName))
	if err != nil {
		return err
	}
	ix, err := openIndex(filepath.Join(dir, s.indexName), cfg.maxIndexBytes)
	if err != nil {
		st.f.Close()
		return err
	}
	s.store, s.index = st, ix
	// The original takes the last entry's offset + 1; after a clean Close
	// that is the entry count.
	s.next = s.base + ix.size/entWidth
	return nil
}

func (s *segment) append(v []byte) error {
	pos, err := s.store.append(v)
	if err != nil {
		return err
	}
	e := entry{off: uint32(s.next - s.base), pos: pos}
	if err := s.index.write(e); err != nil {
		return err
	}
	s.entries = append(s.entries, e)
	s.recs = append(s.recs, rec{pos: pos, value: v, length: uint64(len(v))})
	s.next++
	return nil
}

// isMaxed is the book's rule for starting a new segment, checked after
// each append.
func (s *segment) isMaxed(cfg config) bool {
	return s.store.size >= cfg.maxStoreBytes || s.index.size >= cfg.maxIndexBytes
}

func (s *segment) close() error {
	if err := s.store.buf.Flush(); err != nil {
		return err
	}
	if err := s.store.f.Close(); err != nil {
		return err
	}
	if err := s.index.f.Truncate(int64(s.index.size)); err != nil {
		return err
	}
	if err := s.index.f.Close(); err != nil {
		return err
	}
	s.closed, s.storeBytes, s.indexBytes = true, s.store.size, s.index.size
	s.store, s.index = nil, nil
	return nil
}

// crash leaves what a killed process leaves: bytes already handed to the
// file (flushed store chunks, index entries) stay, the bufio buffer is
// lost, and the index keeps its full pre-sized length.
func (s *segment) crash() error {
	s.closed = false
	s.storeBytes = s.store.size - uint64(s.store.buf.Buffered())
	s.indexBytes = s.index.max
	err := errors.Join(s.store.f.Close(), s.index.f.Close())
	s.store, s.index = nil, nil
	return err
}

// commitLog drives segments like the book's Log. Its error is sticky, so a
// fixture is a plain script of steps whose error manifest reports.
type commitLog struct {
	dir  string
	cfg  config
	segs []*segment
	err  error
}

func newLog(dir string, cfg config) *commitLog {
	l := &commitLog{dir: dir, cfg: cfg}
	if cfg.maxIndexBytes%entWidth != 0 {
		l.err = fmt.Errorf("max index bytes %d is not a multiple of %d", cfg.maxIndexBytes, entWidth)
		return l
	}
	l.newSegment(0)
	return l
}

func (l *commitLog) newSegment(base uint64) {
	if l.err != nil {
		return
	}
	s := &segment{base: base, storeName: l.cfg.name(base, ".store"), indexName: l.cfg.name(base, ".index")}
	if l.err = s.open(l.dir, l.cfg); l.err == nil {
		l.segs = append(l.segs, s)
	}
}

func (l *commitLog) active() *segment { return l.segs[len(l.segs)-1] }

func (l *commitLog) append(values ...[]byte) {
	for _, v := range values {
		if l.err != nil {
			return
		}
		s := l.active()
		if l.err = s.append(v); l.err != nil {
			return
		}
		if s.isMaxed(l.cfg) {
			if l.cfg.closeOnRoll {
				if l.err = s.close(); l.err != nil {
					return
				}
			}
			l.newSegment(s.next)
		}
	}
}

// each runs f on every open segment.
func (l *commitLog) each(f func(*segment) error) {
	for _, s := range l.segs {
		if l.err == nil && s.store != nil {
			l.err = f(s)
		}
	}
}

func (l *commitLog) close() { l.each((*segment).close) }
func (l *commitLog) crash() { l.each((*segment).crash) }

// reopen is the book's setup after a restart: every segment is opened
// again, so every index is grown back to MaxIndexBytes.
func (l *commitLog) reopen() {
	for _, s := range l.segs {
		if l.err == nil {
			l.err = s.open(l.dir, l.cfg)
		}
	}
}

func (l *commitLog) patch(name string, at uint64, b []byte) {
	if l.err != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(l.dir, name), os.O_WRONLY, 0)
	if err != nil {
		l.err = err
		return
	}
	_, err = f.WriteAt(b, int64(at))
	l.err = errors.Join(err, f.Close())
}

// Damage done after the log is no longer open.

func (l *commitLog) truncateStore(s *segment, size uint64) {
	if l.err == nil {
		l.err = os.Truncate(filepath.Join(l.dir, s.storeName), int64(size))
		s.storeBytes = size
	}
}

func (l *commitLog) overwriteLength(s *segment, i int, length uint64) {
	l.patch(s.storeName, s.recs[i].pos, enc.AppendUint64(nil, length))
	s.recs[i].length = length
}

func (l *commitLog) overwriteEntry(s *segment, i int, e entry) {
	l.patch(s.indexName, uint64(i)*entWidth, enc.AppendUint64(enc.AppendUint32(nil, e.off), e.pos))
	s.entries[i] = e
}

// manifest is expect.json.
type manifest struct {
	Description   string         `json:"description"`
	MaxStoreBytes uint64         `json:"max_store_bytes"`
	MaxIndexBytes uint64         `json:"max_index_bytes"`
	Segments      []segmentFacts `json:"segments"`
	Records       []recordFacts  `json:"records"`
	Torn          []tornFacts    `json:"torn,omitempty"`
	FramingBreak  *breakFacts    `json:"framing_break,omitempty"`
	IndexLies     []lieFacts     `json:"index_lies,omitempty"`
}

type segmentFacts struct {
	Base             uint64 `json:"base"`
	Store            string `json:"store"`
	Index            string `json:"index"`
	StoreBytes       uint64 `json:"store_bytes"`
	IndexBytes       uint64 `json:"index_bytes"`
	RealIndexEntries int    `json:"real_index_entries"`
	PaddingEntries   int    `json:"padding_entries"`
	EntriesPastStore int    `json:"entries_past_store"`
	Closed           bool   `json:"closed"`
	WholeRecords     int    `json:"whole_records"`
	FramedBytes      uint64 `json:"framed_bytes"`
}

type recordFacts struct {
	Offset      uint64 `json:"offset"`
	Position    uint64 `json:"position"`
	ValueBase64 string `json:"value_base64"`
}

type tornFacts struct {
	Store       string `json:"store"`
	Offset      uint64 `json:"offset"`
	Position    uint64 `json:"position"`
	RecordBytes uint64 `json:"record_bytes"`
	TornBytes   uint64 `json:"torn_bytes"`
}

type breakFacts struct {
	Store          string        `json:"store"`
	Position       uint64        `json:"position"`
	Offset         uint64        `json:"offset"`
	Length         uint64        `json:"length"`
	ReadableBefore []uint64      `json:"readable_before"`
	IntactAfter    []recordFacts `json:"intact_after"`
}

type lieFacts struct {
	Index        string `json:"index"`
	Entry        int    `json:"entry"`
	Field        string `json:"field"` // "offset" or "position"
	TrueValue    uint64 `json:"true_value"`
	WrittenValue uint64 `json:"written_value"`
}

func recordOf(s *segment, i int) recordFacts {
	r := s.recs[i]
	return recordFacts{Offset: s.base + uint64(i), Position: r.pos, ValueBase64: base64.StdEncoding.EncodeToString(r.value)}
}

// manifest describes what the emulation left on disk, or returns the
// log's error. Records are those a
// reader reaches by framing each store from its start; the first record
// that is not whole ends that segment's list.
func (l *commitLog) manifest(description string) (manifest, error) {
	m := manifest{
		Description:   description,
		MaxStoreBytes: l.cfg.maxStoreBytes,
		MaxIndexBytes: l.cfg.maxIndexBytes,
		Records:       []recordFacts{},
	}
	for _, s := range l.segs {
		sf := segmentFacts{
			Base: s.base, Store: s.storeName, Index: s.indexName,
			StoreBytes: s.storeBytes, IndexBytes: s.indexBytes,
			RealIndexEntries: len(s.entries),
			PaddingEntries:   int(s.indexBytes/entWidth) - len(s.entries),
			Closed:           s.closed,
		}
		for _, e := range s.entries {
			if e.pos >= s.storeBytes {
				sf.EntriesPastStore++
			}
		}
		for i, r := range s.recs {
			end := r.pos + lenWidth + uint64(len(r.value))
			honest := r.length == uint64(len(r.value))
			if honest && end <= s.storeBytes {
				m.Records = append(m.Records, recordOf(s, i))
				sf.WholeRecords++
				sf.FramedBytes = end
				continue
			}
			if honest && r.pos < s.storeBytes {
				m.Torn = append(m.Torn, tornFacts{
					Store: s.storeName, Offset: s.base + uint64(i), Position: r.pos,
					RecordBytes: end - r.pos, TornBytes: s.storeBytes - r.pos,
				})
			}
			break
		}
		m.Segments = append(m.Segments, sf)
	}
	return m, l.err
}

// verify re-reads dir with nothing but encoding/binary and compares the
// bytes with m.
func verify(dir string, m manifest) error {
	var framed []recordFacts
	for _, sf := range m.Segments {
		st, err := os.ReadFile(filepath.Join(dir, sf.Store))
		if err != nil {
			return err
		}
		ix, err := os.ReadFile(filepath.Join(dir, sf.Index))
		if err != nil {
			return err
		}
		if uint64(len(st)) != sf.StoreBytes || uint64(len(ix)) != sf.IndexBytes {
			return fmt.Errorf("%s/%s: %d/%d bytes, manifest says %d/%d", sf.Store, sf.Index, len(st), len(ix), sf.StoreBytes, sf.IndexBytes)
		}
		if len(ix)%entWidth != 0 || len(ix)/entWidth != sf.RealIndexEntries+sf.PaddingEntries {
			return fmt.Errorf("%s: %d bytes is not %d+%d entries", sf.Index, len(ix), sf.RealIndexEntries, sf.PaddingEntries)
		}

		// Frame the store as the blog's Read does: length, then value.
		var p uint64
		var positions []uint64
		for uint64(len(st))-p >= lenWidth {
			n := enc.Uint64(st[p:])
			if n > uint64(len(st))-p-lenWidth {
				break
			}
			framed = append(framed, recordFacts{
				Offset: sf.Base + uint64(len(positions)), Position: p,
				ValueBase64: base64.StdEncoding.EncodeToString(st[p+lenWidth : p+lenWidth+n]),
			})
			positions = append(positions, p)
			p += lenWidth + n
		}
		if len(positions) != sf.WholeRecords || p != sf.FramedBytes {
			return fmt.Errorf("%s: framed %d records in %d bytes, manifest says %d in %d", sf.Store, len(positions), p, sf.WholeRecords, sf.FramedBytes)
		}

		past := 0
		for i := range len(ix) / entWidth {
			e := ix[i*entWidth : (i+1)*entWidth]
			if i >= sf.RealIndexEntries {
				if !bytes.Equal(e, make([]byte, entWidth)) {
					return fmt.Errorf("%s: padding entry %d is not zero", sf.Index, i)
				}
				continue
			}
			off, pos := uint64(enc.Uint32(e)), enc.Uint64(e[offWidth:])
			if pos >= sf.StoreBytes {
				past++
			}
			wantOff, wantPos, knownPos := uint64(i), uint64(0), i < len(positions)
			if knownPos {
				wantPos = positions[i]
			}
			for _, lie := range m.IndexLies {
				if lie.Index != sf.Index || lie.Entry != i {
					continue
				}
				switch lie.Field {
				case "offset":
					wantOff = lie.WrittenValue
				case "position":
					wantPos, knownPos = lie.WrittenValue, true
				}
			}
			if off != wantOff || knownPos && pos != wantPos {
				return fmt.Errorf("%s: entry %d is (%d, %d), want (%d, %d)", sf.Index, i, off, pos, wantOff, wantPos)
			}
		}
		if past != sf.EntriesPastStore {
			return fmt.Errorf("%s: %d entries past the store, manifest says %d", sf.Index, past, sf.EntriesPastStore)
		}

		for _, t := range m.Torn {
			if t.Store != sf.Store {
				continue
			}
			if t.Position != sf.FramedBytes || sf.StoreBytes-t.Position != t.TornBytes || t.TornBytes >= t.RecordBytes {
				return fmt.Errorf("%s: torn record facts %+v disagree with the store", sf.Store, t)
			}
			if t.TornBytes >= lenWidth && enc.Uint64(st[t.Position:])+lenWidth != t.RecordBytes {
				return fmt.Errorf("%s: torn record's length field disagrees with %+v", sf.Store, t)
			}
		}
		if b := m.FramingBreak; b != nil && b.Store == sf.Store {
			if b.Position != sf.FramedBytes || sf.StoreBytes-b.Position < lenWidth || enc.Uint64(st[b.Position:]) != b.Length {
				return fmt.Errorf("%s: framing does not break at %d with length %d", sf.Store, b.Position, b.Length)
			}
			for _, r := range b.IntactAfter {
				n := enc.Uint64(st[r.Position:])
				v := base64.StdEncoding.EncodeToString(st[r.Position+lenWidth : r.Position+lenWidth+n])
				if v != r.ValueBase64 {
					return fmt.Errorf("%s: record %d at %d is not intact", sf.Store, r.Offset, r.Position)
				}
			}
		}
	}
	if len(framed) != len(m.Records) {
		return fmt.Errorf("framed %d records, manifest lists %d", len(framed), len(m.Records))
	}
	for i := range framed {
		if framed[i] != m.Records[i] {
			return fmt.Errorf("framed record %+v, manifest lists %+v", framed[i], m.Records[i])
		}
	}
	return nil
}

// rng is xorshift64*: fixed seeds give the same fixtures on every run.
type rng struct{ s uint64 }

func newRNG(seed uint64) *rng { return &rng{s: seed*0x9E3779B97F4A7C15 | 1} }

func (r *rng) next() uint64 {
	r.s ^= r.s >> 12
	r.s ^= r.s << 25
	r.s ^= r.s >> 27
	return r.s * 2685821657736338717
}

func (r *rng) between(lo, hi int) int { return lo + int(r.next()%uint64(hi-lo+1)) }

// texts returns n printable values of lo to hi bytes each.
func (r *rng) texts(n, lo, hi int) [][]byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;-_/=+"
	vs := make([][]byte, n)
	for i := range vs {
		vs[i] = make([]byte, r.between(lo, hi))
		for j := range vs[i] {
			vs[i][j] = alphabet[r.next()%uint64(len(alphabet))]
		}
	}
	return vs
}

func (r *rng) binary(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.next() >> 56)
	}
	return b
}

// numbered returns "message <i>" for i in [from, to).
func numbered(from, to int) [][]byte {
	var vs [][]byte
	for i := from; i < to; i++ {
		vs = append(vs, fmt.Appendf(nil, "message %d", i))
	}
	return vs
}

// small is the config of the small fixtures: a store rolls past 1 KiB,
// an index holds 100 entries.
var small = config{maxStoreBytes: 1024, maxIndexBytes: 100 * entWidth}

// twoSegments writes 24 short values, which roll once under small, and
// Closes the log, ready to be damaged.
func twoSegments(dir string, seed uint64) (*commitLog, error) {
	l := newLog(dir, small)
	l.append(newRNG(seed).texts(24, 30, 60)...)
	l.close()
	if l.err != nil {
		return nil, l.err
	}
	return l, want(len(l.segs) == 2, "%d segments", len(l.segs))
}

// want fails a fixture whose bytes did not come out as its description
// promises.
func want(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf("fixture does not show what it should: "+format, args...)
}

var fixtures = []struct {
	name  string
	build func(dir string) (manifest, error)
}{
	{"clean", func(dir string) (manifest, error) {
		all := make([]byte, 256)
		for i := range all {
			all[i] = byte(i)
		}
		l := newLog(dir, config{maxStoreBytes: 1024, maxIndexBytes: 20 * entWidth})
		l.append(numbered(0, 20)...) // fills the 20-entry index: roll
		l.append(
			[]byte("Sushant"), // the blog's example
			[]byte{},
			all,
			[]byte("caf\xe9 \xff\xfe\xc3\x28 not UTF-8"),
			[]byte("line one\nline two\r\nline three\n"),
			newRNG(1).binary(5000), // more than the 4096-byte bufio buffer; the store passes 1 KiB: roll
		)
		l.append(numbered(26, 30)...)
		l.close()
		m, err := l.manifest("Three segments, every one Closed cleanly, unpadded names. " +
			"Segment 0 rolled on a full index (20 entries), segment 20 on store size after a 5000-byte binary value; " +
			"values include the blog's \"Sushant\", an empty value, bytes 0x00..0xff, non-UTF-8 bytes and newlines.")
		if err != nil {
			return m, err
		}
		return m, want(len(m.Segments) == 3, "%d segments", len(m.Segments))
	}},
	{"padded-names", func(dir string) (manifest, error) {
		cfg := small
		cfg.padded = true
		l := newLog(dir, cfg)
		l.append(newRNG(2).texts(24, 30, 60)...)
		l.close()
		m, err := l.manifest("Two segments Closed cleanly, with the blog's zero-padded 8-digit names (00000000.store).")
		if err != nil {
			return m, err
		}
		return m, want(len(m.Segments) == 2, "%d segments", len(m.Segments))
	}},
	{"crashed", func(dir string) (manifest, error) {
		r := newRNG(3)
		l := newLog(dir, config{maxStoreBytes: 6000, maxIndexBytes: 50 * entWidth, closeOnRoll: true})
		l.append(numbered(0, 50)...) // full index: roll, and segment 0 is Closed
		l.append(r.texts(40, 100, 140)...)
		l.crash()
		m, err := l.manifest("The process died while writing segment 50; segment 0 had been Closed cleanly. " +
			"Segment 50's index still has its full 600 bytes (real entries, then zero entries), " +
			"its store holds only the 4096 bytes the bufio.Writer flushed: the flush cut a record (torn) " +
			"and the index has entries for records that never reached the store.")
		if err != nil {
			return m, err
		}
		last := m.Segments[len(m.Segments)-1]
		return m, want(len(m.Segments) == 2 && len(m.Torn) == 1 && last.EntriesPastStore > 0 &&
			last.PaddingEntries > 0 && last.StoreBytes == 4096, "%+v, torn %+v", m.Segments, m.Torn)
	}},
	{"crashed-reopened", func(dir string) (manifest, error) {
		r := newRNG(4)
		l := newLog(dir, config{maxStoreBytes: 6000, maxIndexBytes: 100 * entWidth})
		for l.err == nil && (len(l.segs) < 2 || l.active().next-l.active().base < 3) {
			l.append(r.texts(1, 130, 170)...)
		}
		l.close()
		l.reopen()
		l.append(r.texts(34, 120, 140)...) // at least 4352 bytes: the buffer flushes once
		l.crash()
		m, err := l.manifest("The book's Log: a first run rolled once and Closed cleanly; a second run reopened it " +
			"(which grows every index back to 1200 bytes) and died while appending to the last segment. " +
			"Every index ends in zero entries, including the earlier segment's, whose store is whole; " +
			"the last store lacks the second run's unflushed bufio tail.")
		if err != nil {
			return m, err
		}
		first, last := m.Segments[0], m.Segments[len(m.Segments)-1]
		return m, want(len(m.Segments) == 2 && first.PaddingEntries > 0 && first.EntriesPastStore == 0 &&
			len(m.Torn) == 1 && last.EntriesPastStore > 0, "%+v, torn %+v", m.Segments, m.Torn)
	}},
	{"crashed-first-run", func(dir string) (manifest, error) {
		r := newRNG(12) // a seed whose last flush cuts a length field
		l := newLog(dir, config{maxStoreBytes: 6000, maxIndexBytes: 100 * entWidth})
		for l.err == nil && (len(l.segs) < 2 || l.active().next-l.active().base < 30) {
			l.append(r.texts(1, 130, 170)...)
		}
		l.crash()
		m, err := l.manifest("The book's Log in one run that died: it keeps every segment open until Log.Close, " +
			"so both segments lost their unflushed bufio tail and both indexes are 1200 bytes. " +
			"Offsets between the last whole record of segment 0 and the base of segment 1 are lost (a gap in records); " +
			"segment 1's store ends partway through a record's 8-byte length field.")
		if err != nil {
			return m, err
		}
		ok := len(m.Segments) == 2 && len(m.Torn) > 0 && m.Torn[len(m.Torn)-1].TornBytes < lenWidth
		for _, s := range m.Segments {
			ok = ok && s.EntriesPastStore > 0 && s.PaddingEntries > 0
		}
		return m, want(ok, "%+v, torn %+v", m.Segments, m.Torn)
	}},
	{"torn", func(dir string) (manifest, error) {
		l, err := twoSegments(dir, 6)
		if err != nil {
			return manifest{}, err
		}
		s := l.active()
		last := s.recs[len(s.recs)-1]
		l.truncateStore(s, last.pos+lenWidth+uint64(len(last.value))/2)
		m, err := l.manifest("Two segments Closed cleanly, then the store of the last one cut in the middle of " +
			"its last record's value; the index still has that record's entry.")
		if err != nil {
			return m, err
		}
		return m, want(len(m.Torn) == 1, "torn %+v", m.Torn)
	}},
	{"empty", func(dir string) (manifest, error) {
		l := newLog(dir, small)
		l.close()
		return l.manifest("One segment Closed with no records: a 0-byte store and a 0-byte index.")
	}},
	{"empty-crashed", func(dir string) (manifest, error) {
		l := newLog(dir, small)
		l.crash()
		return l.manifest("One fresh segment, never written and never Closed: a 0-byte store " +
			"and an index of 1200 zero bytes (100 zero entries).")
	}},
	{"corrupt-length", func(dir string) (manifest, error) {
		l, err := twoSegments(dir, 7)
		if err != nil {
			return manifest{}, err
		}
		s, broken := l.segs[0], 7
		l.overwriteLength(s, broken, 0x7fffffffffffffff)
		m, err := l.manifest("Two segments Closed cleanly, then the length field of offset 7, in the middle of " +
			"segment 0, overwritten with 0x7fffffffffffffff: framing breaks there. Offsets 0-6 frame; " +
			"the records after it are intact but reachable only through the index; segment 1 is untouched.")
		if err != nil {
			return m, err
		}
		b := &breakFacts{Store: s.storeName, Position: s.recs[broken].pos, Offset: s.base + uint64(broken), Length: s.recs[broken].length}
		for i := range s.recs {
			switch {
			case i < broken:
				b.ReadableBefore = append(b.ReadableBefore, s.base+uint64(i))
			case i > broken:
				b.IntactAfter = append(b.IntactAfter, recordOf(s, i))
			}
		}
		m.FramingBreak = b
		return m, want(len(b.IntactAfter) > 0, "nothing after the break")
	}},
	{"lying-index", func(dir string) (manifest, error) {
		l, err := twoSegments(dir, 8)
		if err != nil {
			return manifest{}, err
		}
		s0, s1 := l.segs[0], l.segs[1]
		inside := s0.recs[5].pos + lenWidth + 2 // in the middle of offset 5's value
		lies := []lieFacts{
			{Index: s0.indexName, Entry: 3, Field: "position", TrueValue: s0.entries[3].pos, WrittenValue: inside},
			{Index: s1.indexName, Entry: 2, Field: "offset", TrueValue: 2, WrittenValue: 3},
		}
		l.overwriteEntry(s0, 3, entry{off: 3, pos: inside})
		l.overwriteEntry(s1, 2, entry{off: 3, pos: s1.entries[2].pos})
		m, err := l.manifest("Two segments Closed cleanly with whole stores, then two index entries rewritten: " +
			"segment 0's entry 3 points inside offset 5's value, and segment 1's entry 2 claims relative offset 3.")
		if err != nil {
			return m, err
		}
		m.IndexLies = lies
		return m, nil
	}},
}

func main() {
	out := flag.String("out", "testdata/simplelog", "directory to write the fixture directories into")
	flag.Parse()
	for _, f := range fixtures {
		if err := write(filepath.Join(*out, f.name), f.build); err != nil {
			fmt.Fprintf(os.Stderr, "gen: %s: %v\n", f.name, err)
			os.Exit(1)
		}
	}
}

func write(dir string, build func(string) (manifest, error)) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	m, err := build(dir)
	if err != nil {
		return err
	}
	if err := verify(dir, m); err != nil {
		return fmt.Errorf("bytes disagree with the manifest: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "expect.json"), append(b, '\n'), 0o644)
}
