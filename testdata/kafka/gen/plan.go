package main

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Clocks of the writers whose timestamps are fixed (kcat's and kfake's
// are the machine's at the time of the run).
const (
	eventsEpochMs   = 1704067200000 // 2024-01-01T00:00:00Z
	paymentsEpochMs = 1735689600000 // 2025-01-01T00:00:00Z
	legacyEpochMs   = 1500000000000 // 2017-07-14T02:40:00Z
)

// The topics' index.interval.bytes (Kafka's default is 4096), small so
// that small segments get several entries.
var indexInterval = map[string]int{ordersTopic: 512, eventsTopic: 512, paymentsTopic: 256, legacyTopic: 128}

const (
	eventsTopic = "events"
	legacyTopic = "legacy"
	nodeID      = 1
)

// fixtureUUID is a version 4 UUID drawn from a name, so that rebuilds
// keep it.
func fixtureUUID(name string) [16]byte {
	sum := sha256.Sum256([]byte("seglog kafka fixture " + name))
	var u [16]byte
	copy(u[:], sum[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// uuidString is Kafka's Uuid.toString: URL-safe base64, no padding.
func uuidString(u [16]byte) string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// kcatRuns is what kcat produces into orders, in order. Partition 0
// mixes none and gzip, 1 snappy and lz4, 2 zstd and none from
// idempotent producers; the leader changes once in 0 and 1.
func kcatRuns() []kcatRun {
	var runs []kcatRun
	n := 0
	add := func(p int32, codec string, lines int, opts ...func(*kcatRun)) {
		r := kcatRun{partition: p, codec: codec, headers: []string{"source=kcat", fmt.Sprintf("run=%d", len(runs))}}
		if len(runs) > 0 && runs[len(runs)-1].partition == p {
			r.epoch = runs[len(runs)-1].epoch
		}
		for i := range lines {
			n++
			if i%4 == 3 {
				r.lines = append(r.lines, orderValue(n)) // no key
			} else {
				r.lines = append(r.lines, fmt.Sprintf("customer-%03d\t%s", n%23, orderValue(n)))
			}
		}
		for _, o := range opts {
			o(&r)
		}
		runs = append(runs, r)
	}
	roll := func(r *kcatRun) { r.roll = true }
	epoch := func(e int32) func(*kcatRun) { return func(r *kcatRun) { r.epoch = e } }
	idempotent := func(r *kcatRun) { r.idempotent = true }
	// A header without '=' has a null value; "empty=" an empty one.
	traced := func(r *kcatRun) { r.headers = append(r.headers, "trace", "empty=", "source=replay") }
	// -Z makes the empty key and values null: deletes of keys.
	tombstones := func(r *kcatRun) {
		r.nullEmpty = true
		r.lines = append(r.lines, "customer-005\t", "customer-011\t", "\t"+orderValue(0))
	}

	add(0, "none", 6) // segment 0, deleted by retention
	add(0, "none", 6)
	add(0, "gzip", 8, roll)
	add(0, "none", 5)
	add(0, "gzip", 8, epoch(2), traced)
	add(0, "none", 6, roll)
	add(0, "gzip", 8)
	add(0, "gzip", 5, tombstones)

	add(1, "snappy", 7)
	add(1, "snappy", 7, traced)
	add(1, "snappy", 7)
	add(1, "lz4", 7, roll, epoch(1))
	add(1, "lz4", 7)
	add(1, "lz4", 7)
	add(1, "snappy", 7, roll)
	add(1, "lz4", 7)

	for i, codec := range []string{"zstd", "zstd", "zstd", "zstd", "none", "zstd"} {
		opts := []func(*kcatRun){idempotent}
		if i == 3 {
			opts = append(opts, roll)
		}
		add(2, codec, 8, opts...)
	}
	return runs
}

func orderValue(n int) string {
	notes := []string{"", "gift wrap", "leave at the door", "fragile, this side up"}
	return fmt.Sprintf(`{"order":%d,"sku":"SKU-%04d","qty":%d,"price_cents":%d,"note":%q}`, 1000+n, (n*37)%10000, 1+n%5, 199+(n*113)%9000, notes[n%len(notes)])
}

// eventsBatches are the batches of events-0, built with kmsg.
func eventsBatches() ([]*batch, error) {
	ts := int64(eventsEpochMs)
	at := func(step int64) int64 { ts += step; return ts }
	ev := func(key, value string, hs ...kmsg.Header) rec {
		return rec{key: []byte(key), value: []byte(value), headers: hs, ts: at(1000)}
	}
	hdr := func(k, v string) kmsg.Header { return kmsg.Header{Key: k, Value: []byte(v)} }
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	many := func(n int, f func(i int) rec) []rec {
		out := make([]rec, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	with := func(s batchSpec, f func(*batchSpec)) batchSpec { f(&s); return s }

	type planned struct {
		spec  batchSpec
		epoch int32
		roll  bool
	}
	plan := []planned{
		// Headers: repeated keys, a null value, an empty value, a
		// non-ASCII key.
		{spec: plain(
			ev("user-1", `{"event":"signup"}`, hdr("trace-id", "a1"), hdr("trace-id", "a2"), kmsg.Header{Key: "null-value"}, hdr("empty", ""), hdr("clé", "värde")),
			ev("user-2", `{"event":"signup"}`, hdr("trace-id", "b1")),
			ev("user-1", `{"event":"login"}`),
		), epoch: 3},
		// A null key, a null value, an empty (not null) key and value,
		// every byte value.
		{spec: plain(
			rec{value: []byte(`{"event":"anonymous visit"}`), ts: at(1000)},
			rec{key: []byte("user-2"), ts: at(1000)},
			rec{key: []byte{}, value: []byte{}, ts: at(1000)},
			rec{key: []byte("binary"), value: binary, ts: at(1000)},
		), epoch: 3},
		{spec: with(plain(many(20, func(i int) rec {
			return ev(fmt.Sprintf("user-%d", i%7), fmt.Sprintf(`{"event":"page view","page":"/products/%d"}`, i))
		})...), func(s *batchSpec) { s.codec = kgo.CodecGzip }), epoch: 3},
		{spec: with(plain(many(5, func(i int) rec { return ev("sensor-9", fmt.Sprintf(`{"reading":%d}`, 20+i)) })...),
			func(s *batchSpec) { s.codec = kgo.CodecLz4 }).idempotent(4242, 0, 0), epoch: 3},

		// The topic switched to LogAppendTime: the broker's clock
		// replaces the batch's max timestamp, and reads as every
		// record's timestamp.
		{spec: with(plain(many(4, func(i int) rec { return ev("user-3", fmt.Sprintf(`{"event":"click","n":%d}`, i)) })...),
			func(s *batchSpec) { s.logAppendTime = eventsEpochMs + 86_400_000 }), epoch: 5, roll: true},
		// snappy as the Java client writes it: two xerial chunks.
		{spec: with(plain(many(12, func(i int) rec {
			return ev(fmt.Sprintf("report-%d", i), strings.Repeat(fmt.Sprintf("line %d of a long report; ", i), 110))
		})...), func(s *batchSpec) { s.codec, s.xerial = kgo.CodecSnappy, true }), epoch: 5},
		// snappy as librdkafka and franz-go write it: one raw block.
		{spec: with(plain(many(10, func(i int) rec { return ev("user-4", fmt.Sprintf(`{"event":"scroll","depth":%d}`, i*10)) })...),
			func(s *batchSpec) { s.codec = kgo.CodecSnappy }), epoch: 5},
		// A record older than the batch's first: a negative delta.
		{spec: with(plain(
			ev("sensor-9", `{"reading":25}`), rec{key: []byte("sensor-9"), value: []byte(`{"reading":19,"late":true}`), ts: ts - 30_000}, ev("sensor-9", `{"reading":26}`),
			ev("sensor-9", `{"reading":27}`), ev("sensor-9", `{"reading":28}`),
		), func(s *batchSpec) { s.codec = kgo.CodecZstd }).idempotent(4242, 0, 5), epoch: 5},

		{spec: plain(many(1000, func(i int) rec {
			return rec{key: fmt.Appendf(nil, "k%d", i%10), value: fmt.Appendf(nil, "v%04d", i), ts: at(1)}
		})...), epoch: 5, roll: true},
		// The producer's epoch was bumped: its sequence starts over.
		{spec: plain(ev("sensor-9", `{"reading":30}`), ev("sensor-9", `{"reading":31}`), ev("sensor-9", `{"reading":32}`)).idempotent(4242, 1, 0), epoch: 5},
		{spec: with(plain(many(6, func(i int) rec {
			return ev("user-5", fmt.Sprintf(`{"event":"purchase","n":%d}`, i), hdr("currency", "EUR"))
		})...),
			func(s *batchSpec) { s.codec = kgo.CodecGzip }), epoch: 5},
	}
	var out []*batch
	for _, p := range plan {
		raw, err := p.spec.build()
		if err != nil {
			return nil, err
		}
		out = append(out, &batch{raw: raw, writer: "kmsg", recs: p.spec.recs, epoch: p.epoch, roll: p.roll})
	}
	return out, nil
}
