package segfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/seglog/seglog/format/kafka"
)

// DefaultKafkaMaxDecompressed is the most bytes a batch's records may
// decompress to unless told otherwise: as much as the largest batch
// taken, so a reader holds at most that twice.
const DefaultKafkaMaxDecompressed = 64 << 20

var (
	// ErrKafkaDecompress means a batch's records do not decompress with
	// the codec its attributes name.
	ErrKafkaDecompress = errors.New("records do not decompress")
	// ErrKafkaDecompressLimit means they decompress to more bytes than
	// the limit: a zip bomb, or a size that lies, caught in bounded memory.
	ErrKafkaDecompressLimit = errors.New("records decompress past the limit")
)

// xerialMagic starts the framing the Java client's snappy stream
// (xerial's SnappyOutputStream) writes: the magic, a version and a
// compatible version (i32 each), then chunks, each a length (u32) and a
// raw snappy block.
var xerialMagic = []byte("\x82SNAPPY\x00")

const xerialHeaderLen = 16

// decompressor decompresses batches' records sections into one buffer,
// reused, as are its decoders: a zstd decoder is costly to make.
type decompressor struct {
	limit int64
	out   []byte
	src   bytes.Reader
	gzip  *gzip.Reader
	lz4   *lz4.Reader
	zstd  *zstd.Decoder
}

// decompress returns src decompressed with codec, valid until the next
// call; never more than d.limit bytes, nor a buffer larger than that.
func (d *decompressor) decompress(codec kafka.Codec, src []byte) ([]byte, error) {
	var out []byte
	var err error
	switch codec {
	case kafka.CodecGzip:
		d.src.Reset(src)
		if d.gzip == nil {
			d.gzip, err = gzip.NewReader(&d.src)
		} else {
			err = d.gzip.Reset(&d.src)
		}
		if err == nil {
			out, err = d.readAll(d.gzip)
		}
	case kafka.CodecSnappy:
		out, err = d.snappy(src)
	case kafka.CodecLZ4:
		d.src.Reset(src)
		if d.lz4 == nil {
			d.lz4 = lz4.NewReader(&d.src)
		} else {
			d.lz4.Reset(&d.src)
		}
		out, err = d.readAll(d.lz4)
	case kafka.CodecZstd:
		out, err = d.unzstd(src)
	default:
		return nil, fmt.Errorf("%w: no codec %v", ErrKafkaDecompress, codec)
	}
	switch {
	case errors.Is(err, ErrKafkaDecompressLimit):
		return nil, fmt.Errorf("%w of %d bytes (%v)", ErrKafkaDecompressLimit, d.limit, codec)
	case err != nil:
		return nil, fmt.Errorf("%w with %v: %v", ErrKafkaDecompress, codec, err)
	}
	return out, nil
}

// readAll reads r to its end into d.out, growing it by doubling up to
// one byte past the limit, which tells a stream too long.
func (d *decompressor) readAll(r io.Reader) ([]byte, error) {
	out := d.out[:0]
	for {
		if len(out) == cap(out) {
			if int64(len(out)) > d.limit {
				return nil, ErrKafkaDecompressLimit
			}
			next := max(2*int64(cap(out)), 64<<10)
			if next >= d.limit {
				next = d.limit + 1
			}
			grown := make([]byte, len(out), next)
			copy(grown, out)
			out, d.out = grown, grown
		}
		n, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if err == io.EOF {
			if int64(len(out)) > d.limit {
				return nil, ErrKafkaDecompressLimit
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// room returns out with room for n more bytes, within the limit.
func (d *decompressor) room(out []byte, n int) ([]byte, error) {
	if int64(len(out))+int64(n) > d.limit {
		return nil, ErrKafkaDecompressLimit
	}
	if cap(out)-len(out) < n {
		grown := make([]byte, len(out), min(max(2*int64(cap(out)), int64(len(out)+n)), d.limit))
		copy(grown, out)
		out, d.out = grown, grown
	}
	return out, nil
}

// snappy decodes a raw snappy block, or xerial's framing of blocks.
func (d *decompressor) snappy(src []byte) ([]byte, error) {
	out := d.out[:0]
	if len(src) < xerialHeaderLen || !bytes.HasPrefix(src, xerialMagic) {
		return d.snappyBlock(out, src)
	}
	for rest := src[xerialHeaderLen:]; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, fmt.Errorf("a xerial chunk's length cut off after %d bytes", len(rest))
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if int64(n) > int64(len(rest)) {
			return nil, fmt.Errorf("a xerial chunk of %d bytes runs past the %d left", n, len(rest))
		}
		var err error
		if out, err = d.snappyBlock(out, rest[:n]); err != nil {
			return nil, err
		}
		rest = rest[n:]
	}
	return out, nil
}

// snappyBlock appends a raw snappy block's decoding to out, checking the
// length it declares against the limit before making room for it.
func (d *decompressor) snappyBlock(out, block []byte) ([]byte, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return nil, err
	}
	if out, err = d.room(out, n); err != nil {
		return nil, err
	}
	dec, err := snappy.Decode(out[len(out):len(out)+n], block)
	if err != nil {
		return nil, err
	}
	return out[:len(out)+len(dec)], nil
}

// unzstd decodes zstd frames as a stream: DecodeAll would grow its
// output by appending, several times the limit in all for frames that
// declare no size, as the Java client's stream writes them.
func (d *decompressor) unzstd(src []byte) ([]byte, error) {
	d.src.Reset(src)
	var err error
	if d.zstd == nil {
		d.zstd, err = zstd.NewReader(&d.src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(d.limit)))
	} else {
		err = d.zstd.Reset(&d.src)
	}
	if err != nil {
		return nil, err
	}
	out, err := d.readAll(d.zstd)
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		return nil, ErrKafkaDecompressLimit
	}
	return out, err
}

// close releases the zstd decoder's resources.
func (d *decompressor) close() {
	if d.zstd != nil {
		d.zstd.Close()
		d.zstd = nil
	}
}
