package main

import (
	"fmt"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kgo"
)

// legacyLog is a partition written by a Kafka 0.10 broker (message
// format v1) and then, after an upgrade, in format v2: its first
// segment holds magic 1 messages, one of them a gzip message set, its
// active segment magic 2 batches.
func legacyLog() (*partitionLog, error) {
	ts := int64(legacyEpochMs)
	next := int64(0)
	at := func() int64 { ts += 1500; return ts }
	var bs []*batch
	single := func(attrs int8, key, value []byte, t int64) {
		m := message{offset: next, attrs: attrs, ts: t, key: key, value: value}
		bs = append(bs, &batch{raw: m.encode(), writer: "hand", recs: []rec{{key: key, value: value, ts: t}}, epoch: -1})
		next++
	}
	single(0, []byte("sensor-1"), []byte("21.5"), at())
	single(0, []byte("sensor-2"), []byte("19.0"), at())
	single(0, nil, []byte("no key"), at())
	single(0, []byte("sensor-1"), nil, at())

	// A gzip message set: inner offsets count from 0; the wrapper takes
	// the last one's absolute offset and the greatest timestamp.
	var set []byte
	var inner []rec
	for i := range 3 {
		r := rec{key: []byte("sensor-3"), value: fmt.Appendf(nil, "%d.25", 17+i), ts: at()}
		set = append(set, message{offset: int64(i), ts: r.ts, key: r.key, value: r.value}.encode()...)
		inner = append(inner, r)
	}
	gz, err := compress(kgo.CodecGzip, set)
	if err != nil {
		return nil, err
	}
	next += 3
	wrapper := message{offset: next - 1, attrs: int8(kgo.CodecGzip), ts: ts, value: gz}
	bs = append(bs, &batch{raw: wrapper.encode(), writer: "hand", recs: inner, epoch: -1})

	// LogAppendTime: the broker's clock in the message itself.
	single(attrLogAppend, []byte("sensor-2"), []byte("18.5"), at()+60_000)

	for i, spec := range []batchSpec{
		plain(rec{key: []byte("sensor-1"), value: []byte("22.0"), ts: at()}, rec{key: []byte("sensor-2"), value: []byte("18.0"), ts: at()}),
		func() batchSpec {
			s := plain(rec{key: []byte("sensor-3"), value: []byte("20.0"), ts: at()}, rec{key: []byte("sensor-1"), value: []byte("22.5"), ts: at()})
			s.codec = kgo.CodecGzip
			return s
		}(),
	} {
		raw, err := spec.build()
		if err != nil {
			return nil, err
		}
		bs = append(bs, &batch{raw: raw, writer: "kmsg", recs: spec.recs, epoch: 0, roll: i == 0})
	}
	return &partitionLog{topic: legacyTopic, partition: 0, writer: "hand (magic 1), kmsg (magic 2)", indexInterval: indexInterval[legacyTopic], batches: bs}, nil
}

// writeLegacy writes damaged/legacy-v1, a partition in no clean copy.
func writeLegacy(out string) (damageManifest, error) {
	p, err := legacyLog()
	if err != nil {
		return damageManifest{}, err
	}
	l, err := p.lay()
	if err != nil {
		return damageManifest{}, err
	}
	dm := damageManifest{Name: "legacy-v1", Kind: "legacy-v1", Dir: "damaged/legacy-v1/" + p.dirName(), Topic: p.topic, Partition: p.partition}
	if err := l.writeTo(filepath.Join(out, filepath.FromSlash(dm.Dir))); err != nil {
		return dm, err
	}
	pm, err := l.describe(dm.Dir)
	if err != nil {
		return dm, err
	}
	batchDamage(&dm, l.at(0, 0))
	dm.ValidRecordsAfter = l.total() - l.at(1, 0).before // the magic 2 segment's
	dm.Log = &pm
	dm.Expect = "the first segment holds magic 1 messages (one a gzip message set), the active one magic 2 batches: a reader reads every record listed in log, or refuses the magic 1 segment by name"
	return dm, nil
}
