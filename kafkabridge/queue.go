package kafkabridge

import "github.com/twmb/franz-go/pkg/kgo"

// exportQueue holds one partition's records from the moment they are
// handed to the client until they are settled, oldest first. Its blocks of
// records, and the room for their keys and values, are used again once
// every record in them is acknowledged: an export allocates as much as it
// has in flight, not as much as it sends. Allocating per record made the
// garbage collector take a fifth of an export's CPU time.
type exportQueue struct {
	blocks []*exportBlock // oldest first; the last one is being filled
	head   int            // the oldest unsettled record in blocks[0]
	spare  []*exportBlock // acknowledged, to be filled again
}

// exportBlockLen records make a block.
const exportBlockLen = 128

// Keys and values go into chunks of exportChunkBytes; larger ones than
// exportOwnBytes get memory of their own, which is not kept for reuse.
const (
	exportChunkBytes = 32 << 10
	exportOwnBytes   = exportChunkBytes / 4
)

type exportBlock struct {
	sent   [exportBlockLen]exportSent
	n      int      // records put in
	chunks [][]byte // room for keys and values; the last one in use is chunks[used-1]
	used   int
}

// exportSent is a record handed to the client. Acknowledgements come in
// order, but a record the client refuses itself (too large) fails at
// once, before those produced ahead of it are acknowledged.
type exportSent struct {
	rec    kgo.Record
	offset uint64
	done   bool // acknowledged
	err    error
}

// put adds a record for offset with copies of key and value (a nil key
// stays nil, a value is never nil: a null value is a tombstone to Kafka)
// and returns it, to be handed to the client.
func (q *exportQueue) put(offset uint64, key, value []byte) *kgo.Record {
	if len(q.blocks) == 0 || q.blocks[len(q.blocks)-1].n == exportBlockLen {
		var b *exportBlock
		if n := len(q.spare); n > 0 {
			b, q.spare = q.spare[n-1], q.spare[:n-1]
		} else {
			b = new(exportBlock)
		}
		q.blocks = append(q.blocks, b)
	}
	b := q.blocks[len(q.blocks)-1]
	s := &b.sent[b.n]
	b.n++
	s.rec, s.offset = kgo.Record{Value: b.copy(value)}, offset
	if key != nil {
		s.rec.Key = b.copy(key)
	}
	return &s.rec
}

// copy returns a copy of p, never nil.
func (b *exportBlock) copy(p []byte) []byte {
	if len(p) > exportOwnBytes {
		return append(make([]byte, 0, len(p)), p...)
	}
	if b.used == 0 || cap(b.chunks[b.used-1])-len(b.chunks[b.used-1]) < len(p) {
		if b.used == len(b.chunks) {
			b.chunks = append(b.chunks, make([]byte, 0, exportChunkBytes))
		}
		b.used++
	}
	c := b.chunks[b.used-1]
	n := len(c)
	c = append(c, p...)
	b.chunks[b.used-1] = c
	return c[n:len(c):len(c)]
}

// find returns the unsettled record rec was handed out as, or nil.
// Usually it is the oldest, so it is looked for from there.
func (q *exportQueue) find(rec *kgo.Record) *exportSent {
	start := q.head
	for _, b := range q.blocks {
		for i := start; i < b.n; i++ {
			if &b.sent[i].rec == rec {
				return &b.sent[i]
			}
		}
		start = 0
	}
	return nil
}

// oldest returns the oldest unsettled record, or nil if there is none.
func (q *exportQueue) oldest() *exportSent {
	if len(q.blocks) == 0 || q.head == q.blocks[0].n {
		return nil
	}
	return &q.blocks[0].sent[q.head]
}

// drop removes the oldest record, which the client is done with, and
// keeps its block for reuse once all of the block's records are dropped.
func (q *exportQueue) drop() {
	q.head++
	b := q.blocks[0]
	if q.head < exportBlockLen {
		return
	}
	for i := range b.sent {
		b.sent[i] = exportSent{} // lets go of what the client set in them
	}
	for i := range b.chunks[:b.used] {
		b.chunks[i] = b.chunks[i][:0]
	}
	b.n, b.used, q.head = 0, 0, 0
	q.blocks[0] = nil
	q.blocks = q.blocks[1:]
	q.spare = append(q.spare, b)
}
