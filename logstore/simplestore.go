package logstore

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// The files of one segment of a simple log: reading a .store through a
// buffer, and finding record boundaries in it with the .index as a hint.

// simpleStore reads one .store file with positional reads through a
// buffer, up to its size when opened: the end of the log as it was when
// reading started.
type simpleStore struct {
	path   string
	f      file
	size   int64
	buf    []byte // file bytes [bufPos, bufPos+len(buf))
	bufPos int64
}

func openSimpleStore(path string) (*simpleStore, error) {
	f, size, err := fsx.OpenReadStat(path)
	if err != nil {
		return nil, err
	}
	return &simpleStore{path: path, f: f, size: size}, nil
}

// simpleChunk is how much of a .store is read at a time.
const simpleChunk = 128 << 10

// window returns the store's bytes [pos, pos+n), format.ErrShort when it
// ends before; a buffer is never larger than the bytes the store holds.
func (s *simpleStore) window(pos, n int64) ([]byte, error) {
	if pos >= s.bufPos && pos+n <= s.bufPos+int64(len(s.buf)) {
		return s.buf[pos-s.bufPos : pos-s.bufPos+n], nil
	}
	if pos < 0 || n < 0 || pos+n > s.size {
		return nil, format.ErrShort
	}
	want := min(max(n, simpleChunk), s.size-pos)
	if int64(cap(s.buf)) < want {
		s.buf = make([]byte, want)
	}
	m, err := s.f.ReadAt(s.buf[:want], pos)
	s.buf, s.bufPos = s.buf[:m], pos
	if int64(m) < n {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, format.ErrShort
		}
		return nil, err
	}
	return s.buf[:n], nil
}

func (s *simpleStore) Close() error { return s.f.Close() }

// frame reads the length field at pos. fits says whether the record's
// frame and value lie inside the store; a length that cannot fit is never
// allocated, only reported.
func (s *simpleStore) frame(pos int64) (n uint64, fits bool, err error) {
	if pos < 0 || pos > s.size-format.SimpleFrameLen {
		return 0, false, nil
	}
	b, err := s.window(pos, format.SimpleFrameLen)
	if err != nil {
		if errors.Is(err, format.ErrShort) {
			err = nil // the file shrank: the frame is gone
		}
		return 0, false, err
	}
	n, _ = format.ParseSimpleFrame(b)
	return n, n <= uint64(s.size-pos-format.SimpleFrameLen), nil
}

// value returns the n bytes of the value framed at pos (valid until the
// next read).
func (s *simpleStore) value(pos int64, n uint64) ([]byte, error) {
	b, err := s.window(pos+format.SimpleFrameLen, int64(n))
	if errors.Is(err, format.ErrShort) {
		err = fmt.Errorf("%s shrank while being read: %w", s.path, io.ErrUnexpectedEOF)
	}
	return b, err
}

// simpleEnd is how many whole records a .store holds, and its size.
type simpleEnd struct {
	Records uint64
	Size    int64
}

// scanFrom counts the whole records from (pos, the record number there) to
// the end of the store, reading only length fields.
func (s *simpleStore) scanFrom(pos int64, rel uint64) (simpleEnd, error) {
	for {
		n, fits, err := s.frame(pos)
		if err != nil {
			return simpleEnd{}, fmt.Errorf("scan %s: %w", s.path, err)
		}
		if !fits {
			return simpleEnd{Records: rel, Size: s.size}, nil
		}
		pos += format.SimpleFrameLen + int64(n)
		rel++
	}
}

// simpleIndex reads a simple .index with positional reads, a chunk of
// entries at a time: never a mapping that its writer could truncate under
// us (docs/format.md §10).
type simpleIndex struct {
	f       file
	n       int64 // whole entries
	partial int64 // bytes of a partial last entry
	buf     []byte
	bufAt   int64 // entry number of buf's first entry
}

const simpleIndexChunk = 4096 // entries read at once

func openSimpleIndex(path string) (*simpleIndex, error) {
	f, size, err := fsx.OpenReadStat(path)
	if err != nil {
		return nil, err
	}
	return &simpleIndex{f: f, n: size / format.SimpleIndexEntryLen, partial: size % format.SimpleIndexEntryLen}, nil
}

func (x *simpleIndex) Close() error { return x.f.Close() }

// entry returns entry i (0 <= i < n). Sequential reads hit the buffer; a
// lookup far from it reads a single entry.
func (x *simpleIndex) entry(i int64, sequential bool) (format.SimpleIndexEntry, error) {
	if k := i - x.bufAt; k < 0 || (k+1)*format.SimpleIndexEntryLen > int64(len(x.buf)) {
		n := int64(1)
		if sequential {
			n = min(simpleIndexChunk, x.n-i)
		}
		if int64(cap(x.buf)) < n*format.SimpleIndexEntryLen {
			x.buf = make([]byte, n*format.SimpleIndexEntryLen)
		}
		x.buf = x.buf[:n*format.SimpleIndexEntryLen]
		if _, err := x.f.ReadAt(x.buf, i*format.SimpleIndexEntryLen); err != nil {
			x.buf = x.buf[:0]
			if errors.Is(err, io.EOF) {
				err = format.ErrShort // truncated meanwhile
			}
			return format.SimpleIndexEntry{}, err
		}
		x.bufAt = i
	}
	return format.ParseSimpleIndexEntry(x.buf[(i-x.bufAt)*format.SimpleIndexEntryLen:])
}

// plausible: entry i, as read, could be record i's (its number, a
// position inside the store, and only entry 0 at position 0).
func (e simpleEntryAt) plausible(size int64) bool {
	return uint64(e.RelOffset) == uint64(e.i) && e.Pos < uint64(size) && (e.i == 0) == (e.Pos == 0)
}

type simpleEntryAt struct {
	format.SimpleIndexEntry
	i int64
}

// seek returns a validated starting point for reading record number rel
// of the segment: the position and number of a record at or before it.
// An index entry is used only if it checks out against the store's
// framing: the entry before it is plausible too and the frame there ends
// exactly where this one starts. Otherwise reading starts at byte 0: a
// lying index costs a longer scan. (Records carry no offset, so an index
// shifted by whole records would pass; verify-crc finds that.)
func (s *simpleStore) seek(indexPath string, rel uint64) (int64, uint64) {
	if rel == 0 || indexPath == "" {
		return 0, 0
	}
	x, err := openSimpleIndex(indexPath)
	if err != nil || x.n < 2 {
		if err == nil {
			x.Close()
		}
		return 0, 0
	}
	defer x.Close()
	at := func(i int64) simpleEntryAt {
		e, err := x.entry(i, false)
		if err != nil {
			return simpleEntryAt{i: -1}
		}
		return simpleEntryAt{e, i}
	}
	// The last plausible entry at or before rel, searching as if the
	// plausible ones were a prefix (they are in an index that is not
	// damaged: real entries, then padding or stale ones).
	hi := int64(min(rel, uint64(x.n-1)))
	k := hi
	if !at(hi).plausible(s.size) {
		k = int64(sort.Search(int(hi+1), func(i int) bool { return !at(int64(i)).plausible(s.size) })) - 1
	}
	if k < 1 {
		return 0, 0
	}
	e, prev := at(k), at(k-1)
	if !e.plausible(s.size) || !prev.plausible(s.size) {
		return 0, 0
	}
	n, fits, err := s.frame(int64(prev.Pos))
	if err != nil || !fits || prev.Pos+format.SimpleFrameLen+n != e.Pos {
		return 0, 0
	}
	if _, fits, err := s.frame(int64(e.Pos)); err != nil || !fits {
		return int64(prev.Pos), uint64(k - 1) // e points at a torn record: prev checked out
	}
	return int64(e.Pos), uint64(k)
}

// recordAfter looks in the index for a record after a frame at pos
// (record number k) that runs past the store's end: an entry for a later
// record, inside the store, whose frame fits. Then the frame at pos is
// damage in the middle of the data, not a record torn at the end, and
// reading can go on from there. A bounded number of entries is tried.
func (s *simpleStore) recordAfter(indexPath string, pos int64, k uint64) (at int64, rel uint64, ok bool) {
	if indexPath == "" {
		return 0, 0, false
	}
	x, err := openSimpleIndex(indexPath)
	if err != nil {
		return 0, 0, false
	}
	defer x.Close()
	const maxChecks = 64 // past this many, the index is no help
	for i := int64(k) + 1; i < x.n && i <= int64(k)+maxChecks; i++ {
		e, err := x.entry(i, true)
		if err != nil {
			return 0, 0, false
		}
		if uint64(e.RelOffset) != uint64(i) || e.Pos <= uint64(pos) || e.Pos >= uint64(s.size) {
			continue
		}
		if _, fits, err := s.frame(int64(e.Pos)); err == nil && fits {
			return int64(e.Pos), uint64(i), true
		}
	}
	return 0, 0, false
}

// end scans the store from its last index entry that checks out.
func (s *simpleStore) end(indexPath string) (simpleEnd, error) {
	pos, rel := s.seek(indexPath, math.MaxUint64)
	return s.scanFrom(pos, rel)
}
