package segfile

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/format/kafka"
)

// The resync rule of a Kafka .log: after the entry at p fails, valid
// data resumes at the first of these that exists, each a whole entry that
// checks out as Next checks one (framing, header, CRC) with a base offset
// above Prev, the last offset before the damage (with none read: at or
// above the segment's base offset), and a last offset no more than
// 2³¹−1 above the segment's base offset, as Kafka's offset index requires:
//
//  1. the entry where the failing one claims to end, when its length
//     field is an entry's (ByClaimedEnd): damage inside a batch, such as
//     a flipped bit in its records, leaves its length and the batch
//     after it intact, and the failing batch's records stay its own;
//  2. the first such entry after p, byte by byte (ByScan): the length
//     was damaged too, or bytes were inserted or lost.
//
// Nothing else is asked of a candidate: a whole batch's CRC-32C makes a
// chance match in junk negligible, and the offset bounds refuse batch
// shapes inside record values (a batch stored as a value carries offsets
// of its own), unless theirs happen to fit the segment too. Those the
// byte scan may take for batches, inside the failing batch's claimed
// extent when its claimed end shows no batch: the price of finding the
// batches after a length that lies.
//
// With nothing valid after it, the break is a torn tail (Incomplete)
// when its bytes are all zero, when the file ends inside the failing
// entry (kafka.ErrShort), or when the entry is whole but fails its CRC
// with nothing but zeros after it: what a crash leaves of an append, or
// Kafka of a preallocated file. Anything else is Corrupt.

// fail records the break at s.pos and classifies it.
func (s *KafkaScanner) fail(err error) {
	if isKafkaIOError(err) {
		s.err = err
		return
	}
	d := &KafkaDamage{
		Path: s.opts.Path, Pos: s.pos, Reason: err, Prev: -1, Floor: s.opts.Base,
		End: s.limit, Limit: s.limit, MaxBatch: s.opts.MaxBatch,
	}
	if s.taken {
		d.Prev, d.Floor = s.prevLast, s.prevBase
	}
	if err := s.describe(d); err != nil {
		s.err = err
		return
	}
	if err := s.resync(d); err != nil {
		s.err = err
		return
	}
	d.Class = Corrupt
	if !d.Resumed {
		torn, err := s.torn(d)
		if err != nil {
			s.err = err
			return
		}
		if torn {
			d.Class = Incomplete
		}
	}
	s.dmg = d
}

// describe fills in what the failing entry's first bytes say.
func (s *KafkaScanner) describe(d *KafkaDamage) error {
	left := s.limit - d.Pos
	if left <= kafka.MagicAt {
		return nil
	}
	hb, err := s.r.window(d.Pos, min(left, kafka.BatchHeaderLen))
	if err != nil {
		return ioOnly(err)
	}
	d.Framed = true
	d.Offset = int64(binary.BigEndian.Uint64(hb))
	d.Length = int32(binary.BigEndian.Uint32(hb[kafka.LogOverhead-4:]))
	d.Magic = int8(hb[kafka.MagicAt])
	if d.Magic == 2 && len(hb) == kafka.BatchHeaderLen {
		d.Header, _ = kafka.ParseBatchHeader(hb) // as stored, checked or not
		d.HeaderOK = true
	}
	return nil
}

// resync fills in where valid data resumes after d, if anywhere.
func (s *KafkaScanner) resync(d *KafkaDamage) error {
	resume := func(pos int64, by Rule) {
		d.Resumed, d.End, d.ResumeOffset, d.By = true, pos, s.probe.BaseOffset(), by
	}
	if d.Framed && d.Length >= kafkaMinEntry {
		end := d.Pos + kafka.LogOverhead + int64(d.Length)
		ok, _, err := s.candidate(end, d.Prev)
		if err != nil || ok {
			if ok {
				resume(end, ByClaimedEnd)
			}
			return err
		}
	}
	for q := d.Pos + 1; q+kafka.LogOverhead+kafkaMinEntry <= s.limit; q++ {
		ok, zeroLength, err := s.candidate(q, d.Prev)
		if err != nil {
			return err
		}
		if ok {
			resume(q, ByScan)
			return nil
		}
		if zeroLength {
			// An entry's length has a non-zero byte: skip to the first
			// position whose length field reaches the next one (a
			// preallocated file ends in up to a segment of zeros).
			z, err := s.nextNonZero(q + kafka.LogOverhead)
			if err != nil || z < 0 {
				return err
			}
			q = z - kafka.LogOverhead
		}
	}
	return nil
}

// candidate reports whether a valid entry starts at pos with a base
// offset above prev (-1: none) and offsets the segment can hold; it is
// then s.probe. Most positions fail on their first bytes, which are
// checked before anything is read beyond them; zeroLength reports a
// length field of zeros.
func (s *KafkaScanner) candidate(pos, prev int64) (ok, zeroLength bool, err error) {
	left := s.limit - pos
	if left < kafka.LogOverhead+kafkaMinEntry {
		return false, false, nil
	}
	hb, err := s.r.window(pos, min(left, kafka.BatchHeaderLen))
	if err != nil {
		return false, false, ioOnly(err)
	}
	base := int64(binary.BigEndian.Uint64(hb))
	length := int64(int32(binary.BigEndian.Uint32(hb[kafka.LogOverhead-4:])))
	magic := hb[kafka.MagicAt]
	lowest := max(s.opts.Base, prev+1)
	if magic > 2 || length < kafkaMinEntry || kafka.LogOverhead+length > min(left, s.opts.MaxBatch) ||
		base < lowest || !s.fitsSegment(base) {
		return false, length == 0, nil
	}
	if magic < 2 {
		if ok, err := s.legacyFits(pos, hb); !ok {
			return false, false, err
		}
	}
	if err := s.entry(pos, &s.probe); err != nil {
		if isKafkaIOError(err) {
			return false, false, err
		}
		return false, false, nil
	}
	return s.fitsSegment(s.probe.LastOffset()), false, nil
}

// legacyFits reports whether the legacy message at pos, whose first
// bytes hb holds, has fields that fit its size, read before its CRC: in
// damage, a batch header's zeros read as a legacy message's magic and
// its timestamps as a size of megabytes, and checking the CRC over that
// at every such place made the search quadratic in the damage's length.
func (s *KafkaScanner) legacyFits(pos int64, hb []byte) (bool, error) {
	valueAt, ok := kafka.LegacyValueLengthAt(hb)
	if !ok {
		return false, nil
	}
	field, err := s.r.window(pos+valueAt, 4)
	if err != nil {
		return false, ioOnly(err)
	}
	return kafka.LegacyValueFits(hb, valueAt, field), nil
}

// fitsSegment reports whether off is in the range of offsets Kafka's
// offset index can hold for the segment: at most 2³¹−1 above its base.
func (s *KafkaScanner) fitsSegment(off int64) bool {
	return off >= s.opts.Base && off-s.opts.Base <= math.MaxInt32
}

// torn reports whether d, with nothing valid after it, is what a crash
// leaves (see the rule above); it sets d.Zeros.
func (s *KafkaScanner) torn(d *KafkaDamage) (bool, error) {
	zero, err := s.zeros(d.Pos, d.End)
	if err != nil {
		return false, err
	}
	d.Zeros = zero && d.End > d.Pos
	switch {
	case d.Zeros, errors.Is(d.Reason, kafka.ErrShort):
		return true, nil
	case errors.Is(d.Reason, kafka.ErrCRC):
		return s.zeros(d.Pos+kafka.LogOverhead+int64(d.Length), d.End)
	}
	return false, nil
}

// zeros reports whether the file's bytes [from, to) are all zero.
func (s *KafkaScanner) zeros(from, to int64) (bool, error) {
	for pos := from; pos < to; {
		n := min(to-pos, int64(s.r.max))
		b, err := s.r.window(pos, n)
		if err != nil {
			return false, ioOnly(err)
		}
		if !format.IsZero(b) {
			return false, nil
		}
		pos += n
	}
	return true, nil
}

// nextNonZero is the position of the first non-zero byte at or after
// from; -1 when there is none before the end of the file.
func (s *KafkaScanner) nextNonZero(from int64) (int64, error) {
	const block = 512
	for pos := from; pos < s.limit; {
		n := min(s.limit-pos, int64(s.r.max))
		b, err := s.r.window(pos, n)
		if err != nil {
			return -1, ioOnly(err)
		}
		for i := 0; i < len(b); i += block {
			blk := b[i:min(i+block, len(b))]
			if format.IsZero(blk) {
				continue
			}
			for j, c := range blk {
				if c != 0 {
					return pos + int64(i+j), nil
				}
			}
		}
		pos += n
	}
	return -1, nil
}
