package kafka

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"strconv"

	"github.com/seglog/seglog/format/internal/crcfold"
)

// A record batch (magic 2) is a 61-byte header, big-endian, then its
// records section:
//
//	0  baseOffset i64            27 baseTimestamp i64
//	8  batchLength i32           35 maxTimestamp i64
//	12 partitionLeaderEpoch i32  43 producerId i64
//	16 magic i8 (2)              51 producerEpoch i16
//	17 crc u32                   53 baseSequence i32
//	21 attributes i16            57 recordsCount i32
//	23 lastOffsetDelta i32       61 records
//
// batchLength counts the bytes after its own field; crc is CRC-32C
// (Castagnoli) over the attributes to the end of the batch, so it covers
// neither the base offset, the length, the leader epoch nor the magic.
const (
	// LogOverhead is what every entry of a .log starts with, whatever its
	// magic: its offset (i64) and the length of the rest (i32).
	LogOverhead = 12
	// MagicAt is where an entry keeps its magic byte, in every format.
	MagicAt = 16
	// BatchHeaderLen is a record batch's header, records count included.
	BatchHeaderLen = 61

	lengthAt        = 8
	leaderEpochAt   = 12
	crcAt           = 17
	attributesAt    = 21
	lastDeltaAt     = 23
	baseTimestampAt = 27
	maxTimestampAt  = 35
	producerIDAt    = 43
	producerEpochAt = 51
	baseSequenceAt  = 53
	recordsCountAt  = 57

	batchMagic = 2
)

// Attribute bits of a record batch.
const (
	codecMask         = 0x07
	logAppendTimeFlag = 0x08
	transactionalFlag = 0x10
	controlFlag       = 0x20
	deleteHorizonFlag = 0x40
)

// castagnoli is the CRC of batches and of producer-state snapshots.
var castagnoli = crcfold.MakeTable(crc32.Castagnoli)

// Codec is a batch's (or legacy message's) compression.
type Codec int8

// The codecs of Kafka's attributes.
const (
	CodecNone Codec = iota
	CodecGzip
	CodecSnappy
	CodecLZ4
	CodecZstd
)

func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return "codec(" + strconv.Itoa(int(c)) + ")"
}

// BatchHeader is a record batch's header as stored.
type BatchHeader struct {
	BaseOffset           int64
	BatchLength          int32 // bytes after this field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64 // milliseconds; -1 in a batch compaction emptied
	MaxTimestamp         int64 // milliseconds; the broker's time with LogAppendTime
	ProducerID           int64 // -1: none
	ProducerEpoch        int16
	BaseSequence         int32 // -1: none
	RecordsCount         int32
}

// Magic is the magic byte of the entry b starts with, where every
// format keeps it (byte 16); false when b is too short to hold it.
func Magic(b []byte) (int8, bool) {
	if len(b) <= MagicAt {
		return 0, false
	}
	return int8(b[MagicAt]), true
}

// ParseBatchHeader decodes the record batch header b starts with and
// checks what the header alone can: its magic (ErrMagic), and (ErrFormat)
// a length that holds the header, a known codec, offsets that neither go
// backwards nor overflow, and a records count that fits them. b needs
// only the header's bytes; ErrShort when it holds fewer.
func ParseBatchHeader(b []byte) (BatchHeader, error) {
	var h BatchHeader
	if len(b) <= MagicAt {
		return h, ErrShort
	}
	if m := int8(b[MagicAt]); m != batchMagic {
		return h, errorf(ErrMagic, "magic %d where a record batch has %d", m, batchMagic)
	}
	if len(b) < BatchHeaderLen {
		return h, ErrShort
	}
	h = BatchHeader{
		BaseOffset:           int64(binary.BigEndian.Uint64(b)),
		BatchLength:          int32(binary.BigEndian.Uint32(b[lengthAt:])),
		PartitionLeaderEpoch: int32(binary.BigEndian.Uint32(b[leaderEpochAt:])),
		Magic:                batchMagic,
		CRC:                  binary.BigEndian.Uint32(b[crcAt:]),
		Attributes:           int16(binary.BigEndian.Uint16(b[attributesAt:])),
		LastOffsetDelta:      int32(binary.BigEndian.Uint32(b[lastDeltaAt:])),
		BaseTimestamp:        int64(binary.BigEndian.Uint64(b[baseTimestampAt:])),
		MaxTimestamp:         int64(binary.BigEndian.Uint64(b[maxTimestampAt:])),
		ProducerID:           int64(binary.BigEndian.Uint64(b[producerIDAt:])),
		ProducerEpoch:        int16(binary.BigEndian.Uint16(b[producerEpochAt:])),
		BaseSequence:         int32(binary.BigEndian.Uint32(b[baseSequenceAt:])),
		RecordsCount:         int32(binary.BigEndian.Uint32(b[recordsCountAt:])),
	}
	switch {
	case h.BatchLength < BatchHeaderLen-LogOverhead:
		return h, errorf(ErrFormat, "batch length %d is less than the %d bytes of a batch header", h.BatchLength, BatchHeaderLen-LogOverhead)
	case h.Codec() > CodecZstd:
		return h, errorf(ErrFormat, "compression codec %d is none of Kafka's (0 to 4)", h.Codec())
	case h.BaseOffset < 0:
		return h, errorf(ErrFormat, "base offset %d is negative", h.BaseOffset)
	case h.LastOffsetDelta < 0:
		return h, errorf(ErrFormat, "last offset delta %d is negative", h.LastOffsetDelta)
	case h.BaseOffset > math.MaxInt64-int64(h.LastOffsetDelta):
		return h, errorf(ErrFormat, "base offset %d plus last offset delta %d overflows", h.BaseOffset, h.LastOffsetDelta)
	case h.RecordsCount < 0:
		return h, errorf(ErrFormat, "records count %d is negative", h.RecordsCount)
	case int64(h.RecordsCount) > int64(h.LastOffsetDelta)+1:
		return h, errorf(ErrFormat, "records count %d is more than the %d offsets the batch spans", h.RecordsCount, int64(h.LastOffsetDelta)+1)
	}
	return h, nil
}

// Size is the whole batch's length in its file, header included.
func (h *BatchHeader) Size() int64 { return LogOverhead + int64(h.BatchLength) }

// LastOffset is the offset of the batch's last record, as its header
// says: compaction may have removed that record, never the offset.
func (h *BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Codec is the compression of the batch's records section.
func (h *BatchHeader) Codec() Codec { return Codec(h.Attributes & codecMask) }

// LogAppendTime reports whether the broker set the timestamps: every
// record's is then MaxTimestamp, whatever its delta says.
func (h *BatchHeader) LogAppendTime() bool { return h.Attributes&logAppendTimeFlag != 0 }

// Transactional reports whether the batch is part of a transaction.
func (h *BatchHeader) Transactional() bool { return h.Attributes&transactionalFlag != 0 }

// Control reports whether the batch holds a control record (a
// transaction marker, or a KRaft control record), not user data.
func (h *BatchHeader) Control() bool { return h.Attributes&controlFlag != 0 }

// DeleteHorizon reports whether the cleaner set BaseTimestamp to the time
// after which the batch's tombstones and markers may be removed.
func (h *BatchHeader) DeleteHorizon() bool { return h.Attributes&deleteHorizonFlag != 0 }

// CheckCRC checks the stored CRC against batch, the whole batch this
// header was parsed from (ErrShort when it holds less).
func (h *BatchHeader) CheckCRC(batch []byte) error {
	if h.Size() < BatchHeaderLen {
		return errorf(ErrFormat, "batch length %d is less than the %d bytes of a batch header", h.BatchLength, BatchHeaderLen-LogOverhead)
	}
	if int64(len(batch)) < h.Size() {
		return ErrShort
	}
	if c := castagnoli.Checksum(batch[attributesAt:h.Size()]); c != h.CRC {
		return errorf(ErrCRC, "crc mismatch (stored 0x%08x, computed 0x%08x)", h.CRC, c)
	}
	return nil
}

// Records is the records section of batch, the whole batch this header
// was parsed from, compressed as Codec says; nil when batch holds less
// than the header's Size, or the header is not one ParseBatchHeader
// takes.
func (h *BatchHeader) Records(batch []byte) []byte {
	if h.Size() < BatchHeaderLen || int64(len(batch)) < h.Size() {
		return nil
	}
	return batch[BatchHeaderLen:h.Size()]
}
