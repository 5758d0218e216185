package segfile

import (
	"sync"
	"sync/atomic"

	"github.com/seglog/seglog/format"
)

// A scan of small records is bound by per-record CPU work, and the CRC is
// the largest part of it. readAhead moves the reading and the CRC checks
// to a second goroutine (on a second core): it reads the segment ahead of
// the scan in chunks that end where an entry ends (a seglog record, or a
// Kafka batch), and checks every whole entry in them, so the scanning
// goroutine only parses headers and hands entries on. When the scan is the
// faster (large records: the CRC and the kernel copy outweigh the rest)
// and has to wait for a chunk, the next chunk is handed over unchecked and
// the scan checks it itself: the work balances between the two. What the
// reader checked is only a shortcut: an entry it did not check, or a
// position it did not see as an entry start, is checked by the scan as
// before, so damage is found and reported the same way.
type readAhead struct {
	framing framing
	chunks  chan aheadChunk // read (and mostly checked), in file order
	free    chan []byte     // buffers the scan has finished with
	quit    chan struct{}
	done    chan struct{}
	// The scan waited for a chunk: the reader leaves its next one's CRCs
	// to the scan.
	scanWaited atomic.Bool
}

// aheadChunk is file bytes [pos, pos+len(buf)), the entries of which from
// pos up to checked (each entry's end) passed the framing's check.
type aheadChunk struct {
	pos     int64
	buf     []byte
	checked int64
}

const (
	aheadBuffers = 3 // one the scan reads, two the reader fills ahead
	// Chunks larger than a scan's own: each hand-over between the
	// goroutines may cost a wake-up of the other, some microseconds. But
	// all three buffers fit in a core's L2 cache (2 MiB on current server
	// cores), where the kernel's copy into them and the CRC checks after
	// it find them: with three of 1 MiB, reads took a quarter more CPU.
	aheadChunkSize = 512 << 10
)

// maxReadAheads bounds the read-aheads running at once, and so their
// buffers: a read of many partitions side by side (read --merge) reads
// the rest itself. There are not more cores to use than that anyway.
const maxReadAheads = 8

// aheadSlots counts the read-aheads running.
var aheadSlots atomic.Int32

// takeAheadSlot reports whether another read-ahead may start, and counts
// it if so; stopAhead gives the slot back.
func takeAheadSlot() bool {
	if aheadSlots.Add(1) > maxReadAheads {
		aheadSlots.Add(-1)
		return false
	}
	return true
}

// aheadPool keeps chunk buffers from one segment's scan to the next.
var aheadPool = sync.Pool{New: func() any { return make([]byte, aheadChunkSize) }}

// framing is what a read-ahead knows of a .log's entries.
type framing interface {
	// whole returns how many bytes at the start of b are whole entries
	// whose headers parse and, with check, that pass the check the scan
	// would otherwise make itself.
	whole(b []byte, check bool) int
	// mayStart reports whether b, what follows a chunk's whole entries,
	// can be the start of an entry the next chunk holds whole: a header
	// that parses, or too few bytes to tell. Anything else is damage, for
	// the scan.
	mayStart(b []byte) bool
	// size is the length of the entry whose header b starts with, if it
	// parses.
	size(b []byte) (int64, bool)
}

// startReadAhead starts reading f from pos, an entry's start, on.
func startReadAhead(f File, pos int64, fr framing) *readAhead {
	a := &readAhead{
		framing: fr,
		chunks:  make(chan aheadChunk, aheadBuffers),
		free:    make(chan []byte, aheadBuffers),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	for range aheadBuffers {
		a.free <- aheadPool.Get().([]byte)
	}
	go a.run(f, pos)
	return a
}

// run reads and checks chunks until the file ends, an entry fails a check
// (the scan takes over from there), or stop. An entry larger than a chunk
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
		end := a.framing.whole(buf, check)
		checked := pos
		if check {
			checked += int64(end)
		}
		a.chunks <- aheadChunk{pos: pos, buf: buf, checked: checked}
		if end == 0 && err == nil {
			// An entry larger than a chunk: the scan reads that one
			// itself, and the reading goes on after it.
			if n, ok := a.framing.size(buf); ok && n > int64(cap(buf)) {
				pos += n
				continue
			}
		}
		if err != nil || end == 0 || end < m && !a.framing.mayStart(buf[end:]) {
			return
		}
		pos += int64(end)
	}
}

// seglogFraming is seglog's own records: each passes Verify.
type seglogFraming struct{}

func (seglogFraming) whole(b []byte, check bool) int {
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

func (seglogFraming) mayStart(b []byte) bool {
	_, err := format.ParseHeader(b)
	return err == nil || err == format.ErrShort
}

func (seglogFraming) size(b []byte) (int64, bool) {
	h, err := format.ParseHeader(b)
	return h.RecordLen(), err == nil
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
