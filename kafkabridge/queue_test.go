package kafkabridge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestExportQueueReuse drives the queue the way an export does, with
// acknowledgements in a random order a few records behind the producer,
// and checks that every record keeps its own key and value until it is
// dropped, however its block's memory is reused after that.
func TestExportQueueReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q exportQueue
	value := func(off uint64) []byte {
		n := int(off % 97)
		if off%50 == 0 {
			n = exportOwnBytes + 1 + int(off%7) // memory of its own
		}
		return bytes.Repeat([]byte{byte(off)}, n)
	}
	key := func(off uint64) []byte {
		if off%3 == 0 {
			return nil
		}
		return []byte(fmt.Sprint("k", off))
	}
	type handed struct {
		rec *kgo.Record
		off uint64
	}
	var live []handed
	check := func(h handed) {
		t.Helper()
		if !bytes.Equal(h.rec.Value, value(h.off)) || !bytes.Equal(h.rec.Key, key(h.off)) || (h.rec.Key == nil) != (key(h.off) == nil) {
			t.Fatalf("record %d: key %q value %d bytes, want key %q value %d bytes", h.off, h.rec.Key, len(h.rec.Value), key(h.off), len(value(h.off)))
		}
		if h.rec.Value == nil {
			t.Fatalf("record %d: nil value, a tombstone to Kafka", h.off)
		}
	}
	var next, dropped uint64
	const total = 20 * exportBlockLen
	for dropped < total {
		for next < total && len(live) < 3*exportBlockLen/2 && rng.IntN(4) > 0 {
			live = append(live, handed{q.put(next, key(next), value(next)), next})
			next++
		}
		if len(live) == 0 {
			continue
		}
		// Acknowledge one record in flight, usually among the oldest.
		i := min(rng.IntN(8), len(live)-1)
		h := live[i]
		check(h)
		s := q.find(h.rec)
		if s == nil || s.offset != h.off || s.done {
			t.Fatalf("find(record %d) = %+v", h.off, s)
		}
		s.done = true
		live = append(live[:i], live[i+1:]...)
		for o := q.oldest(); o != nil && o.done; o = q.oldest() {
			if o.offset != dropped {
				t.Fatalf("oldest is %d, want %d", o.offset, dropped)
			}
			q.drop()
			dropped++
		}
		for _, h := range live {
			check(h)
		}
	}
	if q.oldest() != nil || len(q.blocks) > 1 {
		t.Fatalf("after every record was dropped: oldest %v, %d blocks", q.oldest(), len(q.blocks))
	}
	// Blocks are reused: at most what was in flight at once was allocated.
	if n := len(q.spare) + len(q.blocks); n > 3 {
		t.Errorf("%d blocks allocated for at most %d records in flight", n, 3*exportBlockLen/2)
	}
}
