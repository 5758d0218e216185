package segfile

import (
	"cmp"
	"errors"
	"io"
	"io/fs"
	"math"
	"runtime"

	"github.com/seglog/seglog/format"
)

// File is a segment file open for reading. Another process may append to
// it or truncate it meanwhile: it is only ever read with positional reads.
type File interface {
	io.ReaderAt
	Name() string
	Stat() (fs.FileInfo, error)
}

// SequentialAdviser is a File that can tell the kernel it is being read
// from start to end, for a larger read-ahead on a cold cache.
type SequentialAdviser interface{ AdviseSequential() }

// reader reads records of one .log file through a buffer of file bytes.
type reader struct {
	f      File
	buf    []byte // file bytes [bufPos, bufPos+len(buf))
	bufPos int64
	chunk  int   // how much to read next time
	max    int   // how much a read may take at most
	size   int64 // the file's size when last asked, -1 before

	scratch [format.HeaderLen]byte // peek's, outside the window

	// A long scan may have a second goroutine read and check ahead.
	framing framing    // the entries it reads
	scan    bool       // a long scan may start one
	ahead   *readAhead // running
	pooled  bool       // buf is one of ahead's ...
	own     []byte     // ... and this the reader's own, kept for reads larger than a chunk
	checked int64      // entries of buf from bufPos up to here passed the framing's check ...
	vnext   int64      // ... and this is the next of them the scan will meet
}

const (
	scanChunk   = 128 << 10 // sequential scans: fits the CPU's L2 cache
	lookupChunk = 4 << 10   // a point lookup: most records fit in one page
)

func newReader(f File) *reader {
	return &reader{f: f, chunk: lookupChunk, max: scanChunk, size: -1, checked: -1, framing: seglogFraming{}}
}

// firstRead sets how much the next read takes when that is known to be a
// whole record of n bytes; reads grow from there.
func (r *reader) firstRead(n int64) {
	r.chunk = int(min(max(n, format.HeaderLen), lookupChunk))
}

// statSize asks the file's size (a writer may have appended since).
func (r *reader) statSize() (int64, error) {
	size, err := fileSize(r.f)
	if err != nil {
		return 0, err
	}
	r.size = size
	return r.size, nil
}

// sizer is a File that tells its size without an fs.FileInfo to allocate.
type sizer interface{ Size() (int64, error) }

// fileSize is f's size now.
func fileSize(f File) (int64, error) {
	if s, ok := f.(sizer); ok {
		return s.Size()
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// holds reports whether the file holds bytes up to end, asking its size
// only when what is known of it does not say so already.
func (r *reader) holds(end int64) (bool, error) {
	if end <= r.size {
		return true, nil
	}
	size, err := r.statSize()
	return end <= size, err
}

// peek is n bytes at pos (n at most a header's), from the window when it
// holds them, else read apart: a look far ahead must not move the
// window a scan goes on in.
func (r *reader) peek(pos, n int64) ([]byte, error) {
	if pos >= r.bufPos && pos+n <= r.bufPos+int64(len(r.buf)) {
		return r.buf[pos-r.bufPos : pos-r.bufPos+n], nil
	}
	b := r.scratch[:n]
	m, err := r.f.ReadAt(b, pos)
	if m < len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			err = format.ErrShort
		}
		return nil, err
	}
	return b, nil
}

// window returns file bytes [pos, pos+n), or format.ErrShort when the file
// ends before pos+n. It never allocates more than a page or the bytes the
// file holds.
func (r *reader) window(pos, n int64) ([]byte, error) {
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
	if r.size >= pos+n {
		// Not past the end last seen: a read past it finds nothing, and
		// a ReadAt that comes up short reads again to be sure.
		want = min(want, r.size-pos)
	}
	r.buf = r.buf[:want]
	// Reads grow from a page (point lookups) to the scan's chunk.
	if r.chunk < r.max && 2*r.chunk >= r.max {
		if a, ok := r.f.(SequentialAdviser); ok {
			a.AdviseSequential()
		}
	}
	r.chunk = min(2*r.chunk, r.max)
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

// buffered returns the bytes the buffer holds from pos on, without reading.
func (r *reader) buffered(pos int64) []byte {
	if i := pos - r.bufPos; i >= 0 && i <= int64(len(r.buf)) {
		return r.buf[i:]
	}
	return nil
}

// record checks the record at pos, decodes its header into h and returns
// its bytes (header included, valid until the next call). Errors are
// format's (ErrShort, ErrKeyLen, ErrCRC) or I/O errors; h holds what
// could be decoded. With whole false, a record larger than the reader's
// largest read is checked a piece at a time and returned without its
// bytes (nil): finding where valid data ends must not need a 64 MiB
// buffer because a record is that big.
func (r *reader) record(pos int64, h *format.Header, whole bool) ([]byte, error) {
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
	if !whole && h.RecordLen() > int64(r.max) && h.RecordLen() > int64(cap(r.buf)) {
		return nil, r.checkLarge(pos, h)
	}
	n := h.RecordLen()
	b, err := r.window(pos, n)
	if err != nil {
		return nil, err
	}
	// The header came from another read, maybe of other bytes (the file
	// rewritten in between): the record is judged as it is now.
	if err := h.Decode(b); err != nil {
		return nil, err
	}
	if h.RecordLen() != n {
		return nil, format.ErrCRC
	}
	return b, r.verify(pos, h, b)
}

// verify is h.Verify(b) for the record at pos, unless the read-ahead has
// checked that very record already.
func (r *reader) verify(pos int64, h *format.Header, b []byte) error {
	if r.checkedAhead(pos, pos+h.RecordLen()) {
		return nil
	}
	return h.Verify(b)
}

// checkedAhead reports whether the read-ahead checked the entry at
// [pos, end) already; the scan asks of every entry it takes, in order.
func (r *reader) checkedAhead(pos, end int64) bool {
	if pos == r.vnext && end <= r.checked {
		r.vnext = end
		return true
	}
	return false
}

// checkLarge checks a record too big for one read a piece at a time: the
// verdict on a 64 MiB record must not need a 64 MiB buffer.
func (r *reader) checkLarge(pos int64, h *format.Header) error {
	end := pos + h.RecordLen()
	if ok, err := r.holds(end); err != nil || !ok {
		return cmp.Or(err, format.ErrShort)
	}
	crc := format.ChecksumStart(h.Timestamp)
	for at := pos + format.HeaderLen; at < end; {
		b, err := r.window(at, min(int64(r.max), end-at))
		if err != nil {
			return err
		}
		crc = format.UpdateChecksum(crc, b)
		at += int64(len(b))
	}
	if crc != h.CRC {
		return format.ErrCRC
	}
	return nil
}

// computedCRC is the CRC of the record at pos as its bytes are, for a
// report on a record that failed; ok is false when its body is not all
// in the file.
func (r *reader) computedCRC(pos int64, h *format.Header) (uint32, bool, error) {
	end := pos + h.RecordLen()
	if ok, err := r.holds(end); err != nil || !ok {
		return 0, false, err
	}
	crc := format.ChecksumStart(h.Timestamp)
	for at := pos + format.HeaderLen; at < end; {
		b, err := r.window(at, min(int64(r.max), end-at))
		if err != nil {
			return 0, false, ignoreShort(err)
		}
		crc = format.UpdateChecksum(crc, b)
		at += int64(len(b))
	}
	return crc, true, nil
}

// header decodes only the header at pos.
func (r *reader) header(pos int64, h *format.Header) error {
	hb, err := r.window(pos, format.HeaderLen)
	if err != nil {
		*h = format.Header{}
		return err
	}
	return h.Decode(hb)
}

// fromAhead serves window(pos, n) from the read-ahead, starting one when a
// scan has got going. false: read here, as without one. A record bigger
// than the read-ahead's chunks is read here while the read-ahead goes on
// after it; one that went astray (a seek, damage) is stopped and not
// started again for this file.
func (r *reader) fromAhead(pos, n int64) ([]byte, bool) {
	if n > aheadChunkSize {
		if r.pooled {
			r.ahead.release(r.buf)
			r.buf, r.pooled = r.own[:0], false
		}
		return nil, false
	}
	if r.ahead == nil {
		if !r.scan || r.chunk < r.max || runtime.GOMAXPROCS(0) < 2 || !takeAheadSlot() {
			return nil, false
		}
		r.ahead = startReadAhead(r.f, pos, r.framing)
	}
	c, ok := r.ahead.next(pos, n)
	if !ok {
		r.stopAhead()
		return nil, false
	}
	if r.pooled {
		r.ahead.release(r.buf)
	} else {
		r.own = r.buf
	}
	r.buf, r.bufPos, r.pooled = c.buf, c.pos, true
	r.checked, r.vnext = c.checked, c.pos
	return r.buf[:n], true
}

// stopAhead stops the read-ahead, if any, for good: buf is the reader's
// own again.
func (r *reader) stopAhead() {
	if r.ahead != nil {
		r.ahead.stop()
		r.ahead = nil
		aheadSlots.Add(-1)
	}
	if r.pooled {
		r.buf = r.own[:0]
	}
	r.scan, r.pooled = false, false
}

// forget drops what the reader knows of the file's bytes and size: it
// was replaced, or cut.
func (r *reader) forget() {
	r.stopAhead()
	r.buf, r.bufPos, r.size, r.checked = r.buf[:0], 0, -1, -1
}

// IsIOError tells a failed read apart from a verdict on the bytes.
func IsIOError(err error) bool {
	return err != nil && !errors.Is(err, format.ErrShort) && !errors.Is(err, format.ErrKeyLen) &&
		!errors.Is(err, format.ErrCRC) && !errors.Is(err, format.ErrOffset) && !errors.Is(err, ErrOverlap)
}

// ioOnly keeps err only when it is an I/O error: a verdict on the bytes
// (too short, a bad header or CRC) just means "no" to the caller.
func ioOnly(err error) error {
	if IsIOError(err) {
		return err
	}
	return nil
}

func ignoreShort(err error) error {
	if errors.Is(err, format.ErrShort) {
		return nil
	}
	return err
}
