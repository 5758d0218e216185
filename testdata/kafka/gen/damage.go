package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A damageManifest says what one damaged copy holds and what a correct
// reader finds in it; ../README.md documents the fields.
type damageManifest struct {
	Name               string             `json:"name"`
	Kind               string             `json:"kind"`
	Dir                string             `json:"dir"`
	CopyOf             string             `json:"copy_of,omitempty"`
	Topic              string             `json:"topic"`
	Partition          int32              `json:"partition"`
	File               string             `json:"file"`
	Pos                int                `json:"pos"`
	BaseOffset         int64              `json:"base_offset"`
	ValidRecordsBefore int                `json:"valid_records_before"`
	ValidRecordsAfter  int                `json:"valid_records_after"`
	Expect             string             `json:"expect"`
	Flip               *flipManifest      `json:"flip,omitempty"`
	Length             *lengthManifest    `json:"length,omitempty"`
	Cut                *cutManifest       `json:"cut,omitempty"`
	IndexEntry         *indexLieManifest  `json:"index_entry,omitempty"`
	ZeroBytes          int                `json:"zero_bytes,omitempty"`
	Bomb               *bombManifest      `json:"bomb,omitempty"`
	Log                *partitionManifest `json:"log,omitempty"`
}

type flipManifest struct {
	Byte        int    `json:"byte"`
	Bit         int    `json:"bit"`
	Field       string `json:"field"`
	StoredCRC   uint32 `json:"stored_crc"`
	ComputedCRC uint32 `json:"computed_crc"`
}

type lengthManifest struct {
	Stored int32 `json:"stored"`
	True   int32 `json:"true"`
}

type cutManifest struct {
	BatchBytes int `json:"batch_bytes"`
	KeptBytes  int `json:"kept_bytes"`
}

type indexLieManifest struct {
	Entry         int   `json:"entry"`
	Offset        int64 `json:"offset"`
	Position      int   `json:"position,omitempty"`
	TruePosition  int   `json:"true_position,omitempty"`
	Timestamp     int64 `json:"timestamp,omitempty"`
	TrueTimestamp int64 `json:"true_timestamp,omitempty"`
}

type bombManifest struct {
	Codec             string `json:"codec"`
	CompressedBytes   int    `json:"compressed_bytes"`
	DecompressedBytes int    `json:"decompressed_bytes"`
}

// bombValue is the size of the one record's value in a zip bomb batch.
const bombValue = 64 << 20

// A place is one batch of a laid partition.
type place struct {
	seg    *segment
	i      int // the batch's index in seg
	before int // records in the batches before it
	after  int // records in the batches after it
}

func (p place) file() string { return segmentName(p.seg.base, ".log") }
func (p place) pos() int     { return p.seg.pos[p.i] }
func (p place) raw() []byte  { return p.seg.batches[p.i].raw }
func (p place) base() int64  { first, _, _ := span(p.raw()); return first }

// at finds the i-th batch of the s-th kept segment (negative counts
// from the end).
func (l *laid) at(s, i int) place {
	if s < 0 {
		s += len(l.segments)
	}
	seg := l.segments[s]
	if i < 0 {
		i += len(seg.batches)
	}
	p := place{seg: seg, i: i}
	for si, sg := range l.segments {
		for bi, b := range sg.batches {
			switch {
			case si < s || si == s && bi < i:
				p.before += b.count()
			case si > s || bi > i:
				p.after += b.count()
			}
		}
	}
	return p
}

// count is how many records a batch holds: a magic 1 message holds its
// inner messages, or itself.
func (b *batch) count() int {
	if magic(b.raw) != 2 {
		return len(b.recs)
	}
	return int(header(b.raw).NumRecords)
}

// total is how many records the partition's segments hold.
func (l *laid) total() int {
	n := 0
	for _, s := range l.segments {
		for _, b := range s.batches {
			n += b.count()
		}
	}
	return n
}

// writeDamaged writes every damaged copy under out/damaged and adds them
// to the manifest.
func writeDamaged(out string, d *logDir, m *manifest) error {
	root := filepath.Join(out, "damaged")
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	byName := map[string]*laid{}
	for _, l := range d.laid {
		byName[l.dirName()] = l
	}
	for _, c := range damageCases(byName) {
		dm, err := c.write(out)
		if err != nil {
			return fmt.Errorf("damaged/%s: %w", c.name, err)
		}
		m.Damaged = append(m.Damaged, dm)
	}
	dm, err := writeLegacy(out)
	if err != nil {
		return fmt.Errorf("damaged/legacy-v1: %w", err)
	}
	m.Damaged = append(m.Damaged, dm)
	return nil
}

// A damageCase copies a clean partition and damages one file of it.
type damageCase struct {
	name   string
	kind   string // the name, unless the case is a variant of another
	source *laid
	// damage changes the copy's files, held by name, and fills in what
	// it did.
	damage func(files map[string][]byte, dm *damageManifest) error
}

func (c damageCase) write(out string) (damageManifest, error) {
	l := c.source
	src := filepath.Join(out, "logdir", l.dirName())
	kind := c.kind
	if kind == "" {
		kind = c.name
	}
	dm := damageManifest{Name: c.name, Kind: kind, Dir: filepath.ToSlash(filepath.Join("damaged", c.name, l.dirName())), CopyOf: "logdir/" + l.dirName(), Topic: l.topic, Partition: l.partition}
	names, err := sortedNames(src)
	if err != nil {
		return dm, err
	}
	files := map[string][]byte{}
	for _, n := range names {
		if files[n], err = os.ReadFile(filepath.Join(src, n)); err != nil {
			return dm, err
		}
	}
	if err := c.damage(files, &dm); err != nil {
		return dm, err
	}
	dir := filepath.Join(out, filepath.FromSlash(dm.Dir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return dm, err
	}
	for n, b := range files {
		if err := writeFile(filepath.Join(dir, n), b); err != nil {
			return dm, err
		}
	}
	return dm, nil
}

// batchDamage fills in where a damaged batch is.
func batchDamage(dm *damageManifest, p place) {
	dm.File, dm.Pos, dm.BaseOffset = p.file(), p.pos(), p.base()
	dm.ValidRecordsBefore, dm.ValidRecordsAfter = p.before, p.after
}

// flip flips one bit of a batch and records the CRC it then fails.
func flip(files map[string][]byte, dm *damageManifest, p place, at, bit int, field string) {
	log := files[p.file()]
	log[p.pos()+at] ^= 1 << bit
	b := log[p.pos() : p.pos()+len(p.raw())]
	batchDamage(dm, p)
	dm.Flip = &flipManifest{Byte: p.pos() + at, Bit: bit, Field: field, StoredCRC: enc.Uint32(b[17:]), ComputedCRC: crcOf(b)}
}

func damageCases(ps map[string]*laid) []damageCase {
	o0, o1, o2, ev := ps["orders-0"], ps["orders-1"], ps["orders-2"], ps["events-0"]
	return []damageCase{
		{name: "torn-tail", source: o1, damage: func(files map[string][]byte, dm *damageManifest) error {
			p := o1.at(-1, -1)
			keep := len(p.raw()) / 2
			files[p.file()] = files[p.file()][:p.pos()+keep]
			batchDamage(dm, p)
			dm.Cut = &cutManifest{BatchBytes: len(p.raw()), KeptBytes: keep}
			dm.Expect = "the active segment ends inside its last batch: an incomplete tail after valid_records_before whole records"
			return nil
		}},
		{name: "flip-header", source: o0, damage: func(files map[string][]byte, dm *damageManifest) error {
			flip(files, dm, o0.at(0, 1), 26, 2, "lastOffsetDelta") // its low byte
			dm.Expect = "a closed segment's batch fails its CRC (lastOffsetDelta is under it): corrupt, with whole batches after it"
			return nil
		}},
		{name: "flip-length", source: o1, damage: func(files map[string][]byte, dm *damageManifest) error {
			p := o1.at(0, 1)
			log := files[p.file()]
			stored := int32(len(p.raw())-logOverhead) + 8
			enc.PutUint32(log[p.pos()+8:], uint32(stored))
			batchDamage(dm, p)
			dm.Length = &lengthManifest{Stored: stored, True: int32(len(p.raw()) - logOverhead)}
			dm.Expect = "a closed segment's batch claims 8 bytes more than it has: framing breaks there (the CRC fails over the wrong bytes), whole batches follow"
			return nil
		}},
		{name: "flip-records", source: o2, damage: func(files map[string][]byte, dm *damageManifest) error {
			p := o2.at(-1, 1)
			if codecOf(header(p.raw())) != kgo.CodecNone {
				return errors.New("the batch to flip is compressed")
			}
			flip(files, dm, p, batchHeaderLen+(len(p.raw())-batchHeaderLen)/2, 0, "records")
			dm.Expect = "an uncompressed batch in the middle of the active segment fails its CRC: corrupt, a whole batch follows"
			return nil
		}},
		{name: "flip-compressed", source: o1, damage: func(files map[string][]byte, dm *damageManifest) error {
			p := o1.at(1, 1)
			if codecOf(header(p.raw())) == kgo.CodecNone {
				return errors.New("the batch to flip is not compressed")
			}
			flip(files, dm, p, batchHeaderLen+(len(p.raw())-batchHeaderLen)/2, 4, "records")
			dm.Expect = "a compressed batch in a closed segment fails its CRC (its payload may not decompress either): corrupt, whole batches follow"
			return nil
		}},
		{name: "lying-index", source: o0, damage: func(files map[string][]byte, dm *damageManifest) error {
			s := o0.segments[0]
			if len(s.index) == 0 {
				return errors.New("the segment has no index entry to falsify")
			}
			e := s.index[0]
			name := segmentName(s.base, ".index")
			enc.PutUint32(files[name][4:], uint32(e.Position+5))
			dm.File, dm.Pos, dm.BaseOffset, dm.ValidRecordsBefore = name, 0, e.Offset, o0.total()
			dm.IndexEntry = &indexLieManifest{Entry: 0, Offset: e.Offset, Position: e.Position + 5, TruePosition: e.Position}
			dm.Expect = "the log is whole; the index's first entry points 5 bytes into the batch it names"
			return nil
		}},
		{name: "lying-timeindex", source: o1, damage: func(files map[string][]byte, dm *damageManifest) error {
			s := o1.segments[1]
			if len(s.times) == 0 {
				return errors.New("the segment has no time index entry to falsify")
			}
			i := len(s.times) - 1
			e := s.times[i]
			name := segmentName(s.base, ".timeindex")
			enc.PutUint64(files[name][i*timeEntryLen:], uint64(e.Timestamp+86_400_000))
			dm.File, dm.Pos, dm.BaseOffset, dm.ValidRecordsBefore = name, i*timeEntryLen, e.Offset, o1.total()
			dm.IndexEntry = &indexLieManifest{Entry: i, Offset: e.Offset, Timestamp: e.Timestamp + 86_400_000, TrueTimestamp: e.Timestamp}
			dm.Expect = "the log is whole; the closed segment's last time index entry (its largest timestamp) is a day later than any record in it"
			return nil
		}},
		{name: "zero-tail", source: o2, damage: func(files map[string][]byte, dm *damageManifest) error {
			s := o2.segments[len(o2.segments)-1]
			name := segmentName(s.base, ".log")
			dm.File, dm.Pos, dm.BaseOffset, dm.ValidRecordsBefore = name, len(files[name]), o2.logEnd, o2.total()
			dm.ZeroBytes = 1024
			files[name] = append(files[name], make([]byte, dm.ZeroBytes)...)
			dm.Expect = "every batch is valid; zero bytes follow the last, as a preallocated segment file (file.preallocate) leaves them"
			return nil
		}},
		{name: "huge-batch", source: ev, damage: func(files map[string][]byte, dm *damageManifest) error {
			p := ev.at(0, 1)
			stored := int32(0x7ffffff0)
			enc.PutUint32(files[p.file()][p.pos()+8:], uint32(stored))
			batchDamage(dm, p)
			dm.Length = &lengthManifest{Stored: stored, True: int32(len(p.raw()) - logOverhead)}
			dm.Expect = "a closed segment's batch header claims a batch of almost 2 GiB in a file of a few KB: corrupt; nothing may allocate what it claims"
			return nil
		}},
		bomb("zip-bomb", ev, kgo.CodecGzip, 9),
		bomb("zip-bomb-zstd", ev, kgo.CodecZstd, 0),
	}
}

// bomb appends to a copy of l's active segment a batch whose one
// record's value is 64 MiB of zeros, compressed with codec to a few KB;
// its CRC is right.
func bomb(name string, l *laid, codec kgo.CompressionCodecType, level int) damageCase {
	return damageCase{name: name, kind: "zip-bomb", source: l, damage: func(files map[string][]byte, dm *damageManifest) error {
		spec := plain(rec{key: []byte("bomb"), value: make([]byte, bombValue), ts: eventsEpochMs + 90_000_000})
		spec.codec, spec.level = codec, level
		raw, err := spec.build()
		if err != nil {
			return err
		}
		setBase(raw, l.logEnd)
		setEpoch(raw, l.epochs[len(l.epochs)-1].Epoch)
		s := l.segments[len(l.segments)-1]
		log := segmentName(s.base, ".log")
		dm.File, dm.Pos, dm.BaseOffset, dm.ValidRecordsBefore = log, len(files[log]), l.logEnd, l.total()
		files[log] = append(files[log], raw...)
		h := header(raw)
		body, err := decompressor.Decompress(h.Records, codecOf(h))
		if err != nil {
			return err
		}
		dm.Bomb = &bombManifest{Codec: codecs[codec], CompressedBytes: len(h.Records), DecompressedBytes: len(body)}
		dm.Expect = fmt.Sprintf("after the last batch, a %s batch with a valid CRC whose one record's value is %d MiB of zeros; reading it must stay within a bound", dm.Bomb.Codec, bombValue>>20)
		return nil
	}}
}
