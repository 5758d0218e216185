package segfile

import (
	"sync"
	"sync/atomic"

	"github.com/seglog/seglog/format"
)

// A scan of small records is bound by per-record CPU work, and the CRC is
// the largest part of it. readAhead moves the reading and the CRC checks
// to a second goroutine (on a second core): it reads the segment ahead of
// the scan in chunks that end where a record ends, and checks every whole
// record in them, so the scanning goroutine only parses headers and hands
// records on. When the scan is the faster (large records: the CRC and the
// kernel copy outweigh the rest) and has to wait for a chunk, the next
// chunk is handed over unchecked and the scan checks it itself: the work
// balances between the two. What the reader checked is only a shortcut: a
// record it did not check, or a position it did not see as a record
// start, is checked by the scan as before, so damage is found and
// reported the same way.
type readAhead struct {
	chunks chan aheadChunk // read (and mostly checked), in file order
	free   chan []byte     // buffers the scan has finished with
	quit   chan struct{}
	done   chan struct{}
	// The scan waited for a chunk: the reader leaves its next one's CRCs
	// to the scan.
	scanWaited atomic.Bool
}

// aheadChunk is file bytes [pos, pos+len(buf)), the records of which from
// pos up to checked (each record's end) passed every check Verify makes.
type aheadChunk struct {
	pos     int64
	buf     []byte
	checked int64
}

const (
	aheadBuffers = 3 // one the scan reads, two the reader fills ahead
	// Chunks larger than a scan's own: each hand-over between the
	// goroutines may cost a wake-up of the other, some microseconds.
	aheadChunkSize = 1 << 20
)

// aheadPool keeps chunk buffers from one segment's scan to the next.
var aheadPool = sync.Pool{New: func() any { return make([]byte, aheadChunkSize) }}

// startReadAhead starts reading f from pos, a record start, on.
func startReadAhead(f File, pos int64) *readAhead {
	a := &readAhead{
		chunks: make(chan aheadChunk, aheadBuffers),
		free:   make(chan []byte, aheadBuffers),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	for range aheadBuffers {
		a.free <- aheadPool.Get().([]byte)
	}
	go a.run(f, pos)
	return a
}

// run reads and checks chunks until the file ends, a record fails a check
// (the scan takes over from there), or stop. A record larger than a chunk
// is handed over as a chunk of its first bytes and skipped.
func (a *readAhead) run(f File, pos int64) {
	defer close(a.done)
	defer close(a.chunks)
	for {
		var buf []byte
		select {
		case <-a.quit:
			return
		default:
		}
		select {
		case buf = <-a.free:
		case <-a.quit:
			return
		}
		m, err := f.ReadAt(buf[:cap(buf)], pos)
		buf = buf[:m]
		check := !a.scanWaited.Swap(false)
		end := wholeRecords(buf, check)
		checked := pos
		if check {
			checked += int64(end)
		}
		a.chunks <- aheadChunk{pos: pos, buf: buf, checked: checked}
		if end == 0 && err == nil {
			// A record larger than a chunk: the scan reads that one
			// itself, and the reading goes on after it.
			if h, herr := format.ParseHeader(buf); herr == nil && h.RecordLen() > int64(cap(buf)) {
				pos += h.RecordLen()
				continue
			}
		}
		if err != nil || end == 0 || end < m && !wholeTail(buf[end:]) {
			return
		}
		pos += int64(end)
	}
}

// wholeRecords returns how many bytes at the start of b are whole records
// whose headers parse and, with check, that pass Verify.
func wholeRecords(b []byte, check bool) int {
	p := 0
	var h format.Header
	for {
		err := h.Decode(b[p:])
		switch {
		case err != nil:
		case check:
			err = h.Verify(b[p:])
		case h.RecordLen() > int64(len(b)-p):
			err = format.ErrShort
		}
		if err != nil {
			return p
		}
		p += int(h.RecordLen())
	}
}

// wholeTail reports whether the bytes after a chunk's checked records can
// be the start of a record the next chunk holds whole: a header that
// parses, or too few bytes to tell. Anything else is damage, for the scan.
func wholeTail(b []byte) bool {
	_, err := format.ParseHeader(b)
	return err == nil || err == format.ErrShort
}

// next returns the chunk that starts at pos if it holds n bytes from
// there; else the reading has gone astray and should be stopped. Chunks
// before pos, of a record too big for them that the scan read itself, are
// given back.
func (a *readAhead) next(pos, n int64) (aheadChunk, bool) {
	for {
		var c aheadChunk
		var ok bool
		select {
		case c, ok = <-a.chunks:
		default:
			a.scanWaited.Store(true)
			c, ok = <-a.chunks
		}
		if ok && c.pos < pos {
			a.release(c.buf)
			continue
		}
		if !ok || c.pos != pos || int64(len(c.buf)) < n {
			return aheadChunk{}, false
		}
		return c, true
	}
}

// release gives back a chunk's buffer the scan has finished with.
func (a *readAhead) release(buf []byte) { a.free <- buf[:cap(buf)] }

// stop ends the reading goroutine and waits for it: the file may be
// closed after. The buffers it holds go back to the pool.
func (a *readAhead) stop() {
	close(a.quit)
	for c := range a.chunks {
		aheadPool.Put(c.buf[:cap(c.buf)])
	}
	<-a.done
	for {
		select {
		case b := <-a.free:
			aheadPool.Put(b)
		default:
			return
		}
	}
}
