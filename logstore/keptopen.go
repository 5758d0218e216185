package logstore

import (
	"container/list"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// maxKeptOpen bounds how many segments' files the process keeps open
// between reads, across all its Partitions, least recently used closed
// first: random lookups over up to that many segments then cost two
// preads and no open (docs/performance.md, "Lookup"), while a command
// reading thousands of segments, or every
// partition of a topic of thousands, keeps at most twice that many
// descriptors. A low RLIMIT_NOFILE lowers it (keptOpenLimit).
const maxKeptOpen = 128

// keptOpen is the segments kept open between reads: one list for the
// whole process, as the limit on descriptors is the process's.
var keptOpen segmentCache

// segmentCache lists the segments Partitions keep open, most recently
// used first.
type segmentCache struct {
	mu    sync.Mutex
	limit int       // set on first use
	lru   list.List // of *segmentFiles
}

// keptOpenLimit is maxKeptOpen, or a sixteenth of the soft RLIMIT_NOFILE
// when that is less (Go raises the soft limit to the hard one at start):
// 64 segments under `ulimit -n 1024`, leaving most descriptors to what
// the command holds besides.
func keptOpenLimit() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return maxKeptOpen
	}
	return int(min(max(rl.Cur/16, 8), maxKeptOpen))
}

// keptOpenRecheck is how often a segment kept open is checked for having
// been deleted by another process (an fstat: a fifth of a lookup's time
// when done on every one); deletions this process made are seen at once
// (fsx.FilesMoved). A read served from a segment deleted less than this
// long ago gets the records it had, which were valid when deleted: a broker,
// too, lets readers finish on a deleted segment (Kafka waits a minute).
const keptOpenRecheck = 10 * time.Millisecond

// segmentFiles are one segment's .log and .index, open for reading, shared
// by a Partition's iterators.
type segmentFiles struct {
	seg     segment
	log     file
	owner   *Partition
	refs    int       // iterators reading log
	cached  bool      // in its owner's open map and keptOpen's list; else closed at refs 0
	checked time.Time // when log was last seen still linked ...
	seenGen uint64    // ... and filesMoved then

	elem *list.Element // in keptOpen's list, while cached

	idxMu    sync.Mutex
	idx      *segfile.Index // opened on first use; nil when there is none
	idxFile  *fsx.ReadFile
	idxTried bool
}

// acquire returns seg's files, opening the .log when the partition does
// not hold it open already, and the .log's FileInfo when it asked for it.
// Every acquire is paired with a release. A segment found deleted since it
// was opened (a retention sweep) is not served from the open file: new
// reads must see it gone, as docs/format.md §6 says; they see it at once after a
// deletion by this process, within keptOpenRecheck after another's.
func (p *Partition) acquire(seg segment) (*segmentFiles, os.FileInfo, error) {
	c := &keptOpen
	c.mu.Lock()
	now, gen := time.Now(), fsx.FilesMoved()
	if sf := p.open[seg.base]; sf != nil {
		if gen == sf.seenGen && now.Sub(sf.checked) < keptOpenRecheck {
			sf.refs++
			c.touch(sf)
			c.mu.Unlock()
			return sf, nil, nil
		}
		fi, err := sf.log.Stat()
		if err != nil {
			c.mu.Unlock()
			return nil, nil, err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink > 0 {
			sf.refs++
			sf.checked, sf.seenGen = now, gen
			c.touch(sf)
			c.mu.Unlock()
			return sf, fi, nil
		}
		c.forget(sf)
	}
	c.mu.Unlock()
	// Opened without the lock: readers of other partitions go on meanwhile.
	f, err := fsx.OpenRead(seg.path(format.LogExt))
	if err != nil {
		return nil, nil, err
	}
	sf := &segmentFiles{seg: seg, log: osFile{File: f}, owner: p, refs: 1, checked: now, seenGen: gen}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.closed || p.open[seg.base] != nil {
		return sf, nil, nil // not kept: closed at its release
	}
	if p.open == nil {
		p.open = make(map[uint64]*segmentFiles)
	}
	p.open[seg.base] = sf
	c.push(sf)
	if c.limit == 0 {
		c.limit = keptOpenLimit()
	}
	for c.lru.Len() > c.limit {
		c.forget(c.lru.Back().Value.(*segmentFiles))
	}
	return sf, nil, nil
}

// push lists sf as the most recently used. c.mu is held.
func (c *segmentCache) push(sf *segmentFiles) {
	sf.cached, sf.elem = true, c.lru.PushFront(sf)
}

// touch moves sf, kept open, to the front. c.mu is held.
func (c *segmentCache) touch(sf *segmentFiles) { c.lru.MoveToFront(sf.elem) }

// forget stops keeping sf open; its last user closes it. c.mu is held.
func (c *segmentCache) forget(sf *segmentFiles) error {
	delete(sf.owner.open, sf.seg.base)
	c.lru.Remove(sf.elem)
	sf.cached, sf.elem = false, nil
	if sf.refs == 0 {
		return sf.close()
	}
	return nil
}

// release ends one use of sf's files.
func (p *Partition) release(sf *segmentFiles) error {
	keptOpen.mu.Lock()
	defer keptOpen.mu.Unlock()
	sf.refs--
	if sf.refs == 0 && !sf.cached {
		return sf.close()
	}
	return nil
}

func (sf *segmentFiles) close() error {
	if sf.idxFile != nil {
		sf.idxFile.Close()
	}
	return sf.log.Close()
}

// index returns the segment's .index, opened on first use and kept with
// the segment's files; nil when it has none.
func (sf *segmentFiles) index() *segfile.Index {
	sf.idxMu.Lock()
	defer sf.idxMu.Unlock()
	if !sf.idxTried {
		sf.idxTried = true
		if f, size, err := fsx.OpenIndex(sf.seg.path(format.IndexExt)); err == nil {
			sf.idx, sf.idxFile = segfile.NewIndex(f, size), f
		}
	}
	return sf.idx
}
