package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/seglog/seglog/format"
	"golang.org/x/sys/unix"
)

// segment names one segment of a partition directory.
type segment struct {
	dir  string
	base uint64
}

func (s segment) path(ext string) string {
	return filepath.Join(s.dir, format.SegmentName(s.base, ext))
}

// listSegments returns the segments of a partition directory (those with a
// .log file) sorted by base offset. Anything else in it is ignored.
func listSegments(dir string) ([]segment, error) {
	return stableSegments(dir, func() ([]os.DirEntry, error) { return os.ReadDir(dir) })
}

// stableSegments lists a partition directory's segments with read, again
// and again until two listings in a row agree. One listing is no snapshot:
// readdir goes in hash order, so of the segments a writer creates while
// the directory is read, one may be left out and a later one be in, and
// the missing one would pass for a gap whose records readers skip. Every
// segment the first listing could have missed was created before the
// second began, so the second has it: one below the first's last segment
// that the first lacks means the first was torn.
func stableSegments(dir string, read func() ([]os.DirEntry, error)) ([]segment, error) {
	entries, err := read()
	if err != nil {
		return nil, err
	}
	segs, err := segmentsIn(dir, entries)
	for tries := 0; err == nil && len(segs) > 0 && tries < maxOpenTries; tries++ {
		if entries, err = read(); err != nil {
			return nil, err
		}
		again, err := segmentsIn(dir, entries)
		if err != nil || !tornListing(segs, again) {
			return segs, err
		}
		segs = again
	}
	return segs, err
}

// tornListing reports whether later holds a segment below first's last
// one that first lacks.
func tornListing(first, later []segment) bool {
	last, i := first[len(first)-1].base, 0
	for _, s := range later {
		if s.base >= last {
			return false
		}
		for i < len(first) && first[i].base < s.base {
			i++
		}
		if first[i].base != s.base {
			return true
		}
	}
	return false
}

// segmentsIn picks the segments of partition directory dir out of its
// entries, sorted by base offset. A segment's .log that is a directory (or
// a pipe, socket or device) is an error: skipped, its offsets would pass
// for a gap, and readers, copies and recover would go on without it.
// Symbolic links are left to nofollow.go's rules.
func segmentsIn(dir string, entries []os.DirEntry) ([]segment, error) {
	var segs []segment
	for _, e := range entries {
		base, ext, err := format.ParseSegmentName(e.Name())
		if err != nil || ext != format.LogExt || e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("segment %s is not a regular file (%s)", filepath.Join(dir, e.Name()), fileKind(e.Type()))
		}
		segs = append(segs, segment{dir: dir, base: base})
	}
	// ReadDir sorts by name, and 20-digit names sort as their numbers do.
	slices.SortFunc(segs, func(a, b segment) int {
		switch {
		case a.base < b.base:
			return -1
		case a.base > b.base:
			return 1
		}
		return 0
	})
	return segs, nil
}

// fileKind names a file type for messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}

// logReader reads records of one .log file through a buffer of file bytes,
// with positional reads only (another process may be appending to the
// file, or truncating it).
type logReader struct {
	f      file
	buf    []byte // file bytes [bufPos, bufPos+len(buf))
	bufPos int64
	chunk  int   // how much to read next time
	size   int64 // the file's size when last asked, -1 before

	// A scan may have a second goroutine read and check ahead of it.
	scan    bool       // a long scan may start one
	ahead   *readAhead // running
	pooled  bool       // buf is one of ahead's
	checked int64      // records of buf from bufPos up to here passed Verify ...
	vnext   int64      // ... and this is the next of them the scan will meet
}

const (
	scanChunk   = 128 << 10 // sequential scans: fits the CPU's L2 cache
	lookupChunk = 4 << 10   // a point lookup: most records fit in one page
)

func newLogReader(f file) *logReader {
	return &logReader{f: f, chunk: lookupChunk, size: -1, checked: -1}
}

// firstRead sets how much the reader's next read from the file takes, when
// that is known to be a whole record of n bytes; reads grow from there.
func (r *logReader) firstRead(n int64) {
	r.chunk = int(min(max(n, format.HeaderLen), lookupChunk))
}

// sequentialAdviser is a file that can tell the kernel it is being read
// start to end: a scan then gets a larger read-ahead on a cold cache.
type sequentialAdviser interface{ adviseSequential() }

func (f osFile) adviseSequential() {
	// Only a hint: an error changes nothing a reader sees.
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL)
}

// statSize asks the file's size (a writer may have appended since last time).
func (r *logReader) statSize() (int64, error) {
	fi, err := r.f.Stat()
	if err != nil {
		return 0, err
	}
	r.size = fi.Size()
	return r.size, nil
}

// holds reports whether the file holds bytes up to end, asking its size
// only when what is known of it does not say so already.
func (r *logReader) holds(end int64) (bool, error) {
	if end <= r.size {
		return true, nil
	}
	size, err := r.statSize()
	return end <= size, err
}

// window returns file bytes [pos, pos+n), or format.ErrShort when the file
// ends before pos+n. It never allocates more than a page or the bytes the
// file holds.
func (r *logReader) window(pos, n int64) ([]byte, error) {
	if pos < 0 || n < 0 || pos > math.MaxInt64-n {
		return nil, format.ErrShort // a position from a lying index, past any file
	}
	if pos >= r.bufPos && pos+n <= r.bufPos+int64(len(r.buf)) {
		return r.buf[pos-r.bufPos : pos-r.bufPos+n], nil
	}
	if b, ok := r.fromAhead(pos, n); ok {
		return b, nil
	}
	r.checked = -1
	want := max(n, int64(r.chunk))
	if int64(cap(r.buf)) < want {
		// Size a bigger buffer by what the file really holds: a corrupt
		// size field must not make us allocate more than that. A page is
		// allocated without asking, so a point lookup needs no fstat.
		if want > lookupChunk {
			if ok, err := r.holds(pos + n); err != nil || !ok {
				return nil, cmp.Or(err, format.ErrShort)
			}
			want = max(n, min(want, r.size-pos))
		}
		if int64(cap(r.buf)) < want {
			r.buf = make([]byte, want)
		}
	}
	want = min(want, int64(cap(r.buf)))
	r.buf = r.buf[:want]
	// Reads grow from a page (point lookups) to scanChunk (long scans).
	if r.chunk < scanChunk && 2*r.chunk >= scanChunk {
		if a, ok := r.f.(sequentialAdviser); ok {
			a.adviseSequential()
		}
	}
	r.chunk = min(2*r.chunk, scanChunk)
	m, err := r.f.ReadAt(r.buf, pos)
	r.buf, r.bufPos = r.buf[:m], pos
	if int64(m) < n {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, format.ErrShort
		}
		return nil, err
	}
	return r.buf[:n], nil
}

// record checks the record at pos, decodes its header into h and returns
// its bytes (header included, valid until the next call). Errors are
// format's (ErrShort, ErrKeyLen, ErrCRC) or I/O errors. It returns no
// format.Record, nor a Header by value: building and copying one per
// record was a measurable share of a scan.
func (r *logReader) record(pos int64, h *format.Header) ([]byte, error) {
	if i := pos - r.bufPos; i >= 0 && i < int64(len(r.buf)) {
		// Fast path: the whole record is already buffered.
		b := r.buf[i:]
		err := h.Decode(b)
		if err == nil {
			err = r.verify(pos, h, b)
		}
		if err != format.ErrShort {
			return b, err
		}
	}
	hb, err := r.window(pos, format.HeaderLen)
	if err != nil {
		*h = format.Header{}
		return nil, err
	}
	if err := h.Decode(hb); err != nil {
		return nil, err
	}
	b, err := r.window(pos, h.RecordLen())
	if err != nil {
		return nil, err
	}
	return b, r.verify(pos, h, b)
}

// verify is h.Verify(b) for the record at pos, unless the read-ahead has
// checked that very record already.
func (r *logReader) verify(pos int64, h *format.Header, b []byte) error {
	if end := pos + h.RecordLen(); pos == r.vnext && end <= r.checked {
		r.vnext = end
		return nil
	}
	return h.Verify(b)
}

// fromAhead serves window(pos, n) from the read-ahead, starting one when a
// scan has got going. false: read here, as without one. A record bigger
// than the read-ahead's chunks is read here while the read-ahead goes on
// after it; one that went astray (a seek, damage) is stopped and not
// started again for this file.
func (r *logReader) fromAhead(pos, n int64) ([]byte, bool) {
	if n > aheadChunkSize {
		if r.pooled {
			r.ahead.release(r.buf)
			r.buf, r.pooled = nil, false
		}
		return nil, false
	}
	if r.ahead == nil {
		if !r.scan || r.chunk < scanChunk || runtime.GOMAXPROCS(0) < 2 {
			return nil, false
		}
		r.ahead = startReadAhead(r.f, pos)
	}
	c, ok := r.ahead.next(pos, n)
	if !ok {
		r.stopAhead()
		return nil, false
	}
	if r.pooled {
		r.ahead.release(r.buf)
	}
	r.buf, r.bufPos, r.pooled = c.buf, c.pos, true
	r.checked, r.vnext = c.checked, c.pos
	return r.buf[:n], true
}

// stopAhead stops the read-ahead, if any, for good: buf is the reader's
// own again.
func (r *logReader) stopAhead() {
	if r.ahead != nil {
		r.ahead.stop()
		r.ahead = nil
	}
	r.scan, r.pooled = false, false
}

// header decodes only the header at pos.
func (r *logReader) header(pos int64) (format.Header, error) {
	hb, err := r.window(pos, format.HeaderLen)
	if err != nil {
		return format.Header{}, err
	}
	return format.ParseHeader(hb)
}

// check validates the record at pos as record does and returns its
// header, but never holds more than scanChunk of it: a bigger record's CRC
// is computed a piece at a time. Finding where valid data ends must not
// need a 64 MiB buffer because the last record is that big.
func (r *logReader) check(pos int64) (format.Header, error) {
	h, err := r.header(pos)
	if err != nil || h.RecordLen() <= scanChunk {
		if err == nil {
			_, err = r.record(pos, &h)
		}
		return h, err
	}
	end := pos + h.RecordLen()
	if ok, err := r.holds(end); err != nil || !ok {
		return h, cmp.Or(err, format.ErrShort)
	}
	crc := format.ChecksumStart(h.Timestamp)
	for at := pos + format.HeaderLen; at < end; {
		b, err := r.window(at, min(scanChunk, end-at))
		if err != nil {
			return h, err
		}
		crc = format.UpdateChecksum(crc, b)
		at += int64(len(b))
	}
	if crc != h.CRC {
		return h, format.ErrCRC
	}
	return h, nil
}

// isIOError tells a failed read apart from a verdict on the bytes.
func isIOError(err error) bool {
	return err != nil && !errors.Is(err, format.ErrShort) && !errors.Is(err, format.ErrKeyLen) && !errors.Is(err, format.ErrCRC) &&
		!errors.Is(err, format.ErrOffset)
}

// indexReader looks up a segment's .index with positional reads of single
// entries: a handful per lookup, never a mapping another process could
// truncate under us.
type indexReader struct {
	f file
	n int64 // whole entries; a partial last entry is ignored
	// The entries the last read returned, so that a search's answer is
	// not read twice.
	seen    [2]format.IndexEntry
	seenAt  int64 // entry number of seen[0]; -1 for none
	seenLen int64
	// The first and last entries, which every search starts from, for an
	// index kept open between searches; endsN is the n they were read at.
	ends  [2]format.IndexEntry
	endsN int64
}

func openIndex(path string) (*indexReader, error) {
	f, size, err := openReadStat(path)
	if err != nil {
		return nil, err
	}
	return &indexReader{f: f, n: size / format.IndexEntryLen, seenAt: -1}, nil
}

// pair reads entry i: an offset and the position (.index) or timestamp
// (.timeindex) beside it.
func (x *indexReader) pair(i int64) (uint64, int64, error) {
	e, _, err := x.read(i, 1)
	return e.Offset, e.Pos, err
}

// read returns entry i and, when n is 2, entry i+1, with one pread.
func (x *indexReader) read(i, n int64) (format.IndexEntry, format.IndexEntry, error) {
	if x.seenAt >= 0 && i >= x.seenAt && i+n <= x.seenAt+x.seenLen {
		return x.seen[i-x.seenAt], x.seen[min(i+1-x.seenAt, 1)], nil
	}
	var b [2 * format.IndexEntryLen]byte
	if _, err := x.f.ReadAt(b[:n*format.IndexEntryLen], i*format.IndexEntryLen); err != nil {
		if errors.Is(err, io.EOF) {
			err = format.ErrShort
		}
		return format.IndexEntry{}, format.IndexEntry{}, err
	}
	x.seenAt = -1
	for k := range n {
		e, err := format.ParseIndexEntry(b[k*format.IndexEntryLen:])
		if err != nil {
			return format.IndexEntry{}, format.IndexEntry{}, err
		}
		x.seen[k] = e
	}
	x.seenAt, x.seenLen = i, n
	return x.seen[0], x.seen[n-1], nil
}

// firstAndLast returns the first and last entries, read once per size.
func (x *indexReader) firstAndLast() (first, last format.IndexEntry, err error) {
	if x.endsN != x.n {
		if x.ends[0], _, err = x.read(0, 1); err == nil {
			x.ends[1], _, err = x.read(x.n-1, 1)
		}
		if err != nil {
			return first, last, err
		}
		x.endsN = x.n
	}
	return x.ends[0], x.ends[1], nil
}

// refresh takes in entries appended since the index was opened, and
// reports whether there are any.
func (x *indexReader) refresh() bool {
	fi, err := x.f.Stat()
	if err != nil || fi.Size()/format.IndexEntryLen <= x.n {
		return false
	}
	x.n = fi.Size() / format.IndexEntryLen
	return true
}

// known returns entry i if the last read brought it in.
func (x *indexReader) known(i int64) (format.IndexEntry, bool) {
	if x.seenAt < 0 || i < x.seenAt || i >= x.seenAt+x.seenLen {
		return format.IndexEntry{}, false
	}
	return x.seen[i-x.seenAt], true
}

func (x *indexReader) entry(i int64) (format.IndexEntry, error) {
	o, p, err := x.pair(i)
	return format.IndexEntry{Offset: o, Pos: p}, err
}

func (x *indexReader) Close() error { return x.f.Close() }

// errUnsorted means an index's entries were seen out of order.
var errUnsorted = errors.New("index entries out of order")

// floorBy finds the last entry whose key is <= target, keys (computed from
// each entry's pair) ascending. Interpolation steps, exact on the evenly
// spaced entries seglog writes, alternate with halving steps, so even odd
// spacing costs O(log n) reads. ok is false when no entry qualifies;
// errUnsorted when the entries read show the keys are not ascending.
func (x *indexReader) floorBy(target uint64, key func(offset uint64, v int64) uint64) (i int64, ok bool, err error) {
	if x.n == 0 {
		return 0, false, nil
	}
	readTwo := func(i int64) (uint64, uint64, error) {
		a, b, err := x.read(i, 2)
		return key(a.Offset, a.Pos), key(b.Offset, b.Pos), err
	}
	first, last, err := x.firstAndLast()
	if err != nil {
		return 0, false, err
	}
	lo, hi := key(first.Offset, first.Pos), key(last.Offset, last.Pos)
	if lo > target {
		return 0, false, nil
	}
	if hi < lo {
		return 0, false, errUnsorted
	}
	if hi <= target {
		return x.n - 1, true, nil
	}
	// Invariant: entry loI's key <= target < entry hiI's key.
	loI, hiI := int64(0), x.n-1
	for step := 0; hiI-loI > 1; step++ {
		var mid int64
		if step%2 == 0 {
			frac := float64(target-lo) / float64(hi-lo)
			mid = loI + int64(frac*float64(hiI-loI))
		} else {
			mid = loI + (hiI-loI)/2
		}
		mid = min(max(mid, loI+1), hiI-1)
		// Entries mid and mid+1 in one read: when they straddle target
		// (an exact interpolation step does that) the search is over.
		m, next, err := readTwo(mid)
		switch {
		case err != nil:
			return 0, false, err
		case m < lo || m > hi || next < m || next > hi:
			return 0, false, errUnsorted
		case m <= target && target < next:
			return mid, true, nil
		case m <= target:
			loI, lo = mid+1, next
		default:
			hiI, hi = mid, m
		}
	}
	return loI, true, nil
}

// floor finds an entry with the largest offset <= target (see floorBy). A
// lying index only costs the caller a longer scan, as every entry is
// checked against the .log before use.
func (x *indexReader) floor(target uint64) (e format.IndexEntry, i int64, ok bool, err error) {
	i, ok, err = x.floorBy(target, func(offset uint64, _ int64) uint64 { return offset })
	if err != nil || !ok {
		return e, 0, false, err
	}
	e, err = x.entry(i)
	return e, i, err == nil, err
}

// seekInSegment returns a validated starting point for reading offset
// target in seg: the position and offset of a record at or before target,
// from the index when an entry checks out against the log, else the
// segment's start.
func seekInSegment(seg segment, lr *logReader, target uint64) (int64, uint64) {
	if target <= seg.base {
		return 0, seg.base
	}
	x, err := openIndex(seg.path(format.IndexExt))
	if err != nil {
		return 0, seg.base
	}
	defer x.Close()
	return seekWithIndex(seg, lr, x, target)
}

// seekWithIndex is seekInSegment with seg's .index open as x.
func seekWithIndex(seg segment, lr *logReader, x *indexReader, target uint64) (int64, uint64) {
	e, i, ok, err := x.floor(target)
	if err != nil || !ok || e.Offset < seg.base || e.Pos < 0 {
		return 0, seg.base
	}
	// When the search read the entry after the target's too (an exact
	// interpolation does), its position says how long the record is: a
	// point lookup reads that record rather than a page (a third of a
	// lookup's time went to copying the page).
	if next, ok := x.known(i + 1); ok && e.Offset == target && next.Pos > e.Pos {
		lr.firstRead(next.Pos - e.Pos)
	}
	if h, err := lr.check(e.Pos); err != nil || h.Offset != e.Offset {
		return 0, seg.base
	}
	return e.Pos, e.Offset
}

// tailState is what follows the last valid record of a segment.
type tailState int

const (
	tailClean      tailState = iota // the segment ends exactly after a valid record
	tailIncomplete                  // a record still being written, or torn by a crash
	tailCorrupt                     // a record that does not check out where a valid one must be
)

// segmentEnd is the result of scanning a segment to its end.
type segmentEnd struct {
	Pos    int64  // end of the last valid record
	Next   uint64 // offset after the last valid record
	LastTS int64  // timestamp of the last valid record, if Next > start
	Tail   tailState
	Err    *CorruptionError // when Tail != tailClean: what was found at Pos
	Size   int64            // the file's size the scan ended at
	// When Tail is tailCorrupt in the active segment: a valid record after
	// the damage, where a scan for the true end can resume.
	ResumePos    int64
	ResumeOffset uint64
}

// scanToEnd validates records of seg from (pos, offset) to the end of the
// file and classifies what follows the last valid one (SPEC §2): in a closed
// segment anything is corrupt; in the active one a failing record is an
// incomplete tail unless a valid record starts after it.
func scanToEnd(seg segment, lr *logReader, pos int64, offset uint64, active bool) (segmentEnd, error) {
	end := segmentEnd{Pos: pos, Next: offset}
	for {
		h, err := lr.check(end.Pos)
		if err == nil && h.Offset != end.Next {
			err = format.ErrOffset
		}
		if err != nil {
			if isIOError(err) {
				return end, err
			}
			if end.Pos != lr.size {
				if _, err := lr.statSize(); err != nil {
					return end, err
				}
			}
			end.Size = lr.size
			if end.Pos == end.Size {
				return end, nil
			}
			end.Err = &CorruptionError{Path: seg.path(format.LogExt), Pos: end.Pos, Offset: int64(end.Next), Reason: err}
			end.Tail = tailCorrupt
			if active {
				var later bool
				end.ResumePos, end.ResumeOffset, later, err = validRecordAfter(seg, lr, end.Pos, end.Next, end.Size)
				if err != nil {
					return end, err
				}
				if !later {
					end.Tail = tailIncomplete
				}
			}
			return end, nil
		}
		end.Pos += h.RecordLen()
		end.Next++
		end.LastTS = h.Timestamp
	}
}

// validRecordAfter finds the first valid record with an offset >= next
// starting after pos (and before size), if there is one: then the failing
// record at pos is not a torn tail but damage in the middle of the data,
// and reading can go on from there. The index narrows the search: bytes
// are tried one position at a time only up to the first entry after pos
// that checks out.
func validRecordAfter(seg segment, lr *logReader, pos int64, next uint64, size int64) (at int64, offset uint64, ok bool, err error) {
	limit := size
	at, offset, ok = indexedRecordAfter(seg, lr, pos, next, size)
	if ok {
		limit = at
	}
	for p := pos + 1; p+format.HeaderLen <= limit; p++ {
		hb, err := lr.window(p, format.HeaderLen)
		if err != nil {
			return 0, 0, false, ignoreShort(err)
		}
		h, err := format.ParseHeader(hb)
		// Cheap plausibility first: an offset in reach, a body that fits.
		if err != nil || h.Offset < next || h.Offset-next > uint64(size-pos)/format.HeaderLen || p+h.RecordLen() > size {
			continue
		}
		if _, err := lr.check(p); err == nil {
			return p, h.Offset, true, nil
		} else if isIOError(err) {
			return 0, 0, false, err
		}
	}
	return at, offset, ok, nil
}

// indexedRecordAfter finds the first .index entry positioned after pos
// whose record checks out with an offset >= next, trying a bounded number.
func indexedRecordAfter(seg segment, lr *logReader, pos int64, next uint64, size int64) (at int64, offset uint64, ok bool) {
	x, err := openIndex(seg.path(format.IndexExt))
	if err != nil {
		return 0, 0, false
	}
	defer x.Close()
	i, found, err := x.floorBy(uint64(pos), func(_ uint64, p int64) uint64 { return uint64(max(p, 0)) })
	if err != nil {
		return 0, 0, false
	}
	if found {
		i++
	}
	const maxChecks = 64 // past this many bad entries, the byte scan is as good
	for end := min(x.n, i+maxChecks); i < end; i++ {
		e, err := x.entry(i)
		if err != nil || e.Pos >= size {
			return 0, 0, false
		}
		if e.Pos > pos && e.Offset >= next {
			if h, err := lr.check(e.Pos); err == nil && h.Offset == e.Offset {
				return e.Pos, e.Offset, true
			}
		}
	}
	return 0, 0, false
}

func ignoreShort(err error) error {
	if errors.Is(err, format.ErrShort) {
		return nil
	}
	return err
}

// lastValidEntry finds the last .index entry of seg that checks out against
// the log (its record is whole, valid, and has that offset), searching back
// from the last entry whose position lies inside the log. Entries past the
// log's end are stale after a power loss and skipped without a read.
func lastValidEntry(seg segment, lr *logReader, logSize int64) (pos int64, offset uint64, ok bool) {
	x, err := openIndex(seg.path(format.IndexExt))
	if err != nil {
		return 0, 0, false
	}
	defer x.Close()
	const maxChecks = 64 // beyond this many bad entries, a scan is cheaper
	checks := 0
	for i := x.n - 1; i >= 0 && checks < maxChecks; i-- {
		e, err := x.entry(i)
		if err != nil {
			return 0, 0, false
		}
		if e.Pos < 0 || e.Pos >= logSize || e.Offset < seg.base {
			continue
		}
		checks++
		if h, err := lr.check(e.Pos); err == nil && h.Offset == e.Offset {
			return e.Pos, e.Offset, true
		}
	}
	return 0, 0, false
}

// findEnd scans seg from its last trustworthy index entry to its end.
func findEnd(seg segment, f file, active bool) (segmentEnd, error) {
	lr := newLogReader(f)
	size, err := lr.statSize()
	if err != nil {
		return segmentEnd{}, err
	}
	pos, off, ok := lastValidEntry(seg, lr, size)
	if !ok {
		pos, off = 0, seg.base
	}
	end, err := scanToEnd(seg, lr, pos, off, active)
	if err != nil {
		return end, fmt.Errorf("scan %s: %w", seg.path(format.LogExt), err)
	}
	return end, nil
}
