//go:build ignore

// Command kafkacodec is bench/run's measure of a codec library's own
// speed: it reads the record batches of an Apache Kafka partition
// directory's .log files in order and decompresses each batch's records
// section with the codec library alone (klauspost/compress for gzip,
// snappy and zstd, pierrec/lz4 for lz4; the libraries seglog uses), into
// one reused buffer, decoding nothing else. It prints the records the
// batches declare and the bytes they decompressed to.
//
// Usage: go run bench/kafkacodec/main.go DIR
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

const (
	logOverhead    = 12 // base offset and batch length, before what the length counts
	batchHeaderLen = 61
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kafkacodec DIR")
		os.Exit(2)
	}
	logs, err := filepath.Glob(filepath.Join(os.Args[1], "*.log"))
	if err == nil && len(logs) == 0 {
		err = fmt.Errorf("no .log files in %s", os.Args[1])
	}
	var d decoder
	for _, name := range logs { // Glob sorts: the 20-digit names in offset order
		if err != nil {
			break
		}
		err = d.file(name)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafkacodec:", err)
		os.Exit(1)
	}
	fmt.Printf("records %d decompressed %d\n", d.records, d.bytes)
}

// A decoder keeps its codecs' readers and its buffers across batches, as
// a program decompressing a stream of them would.
type decoder struct {
	batch   []byte
	out     bytes.Buffer
	block   []byte
	src     bytes.Reader
	gzip    *gzip.Reader
	lz4     *lz4.Reader
	zstd    *zstd.Decoder
	records int64
	bytes   int64
}

func (d *decoder) file(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for pos := int64(0); ; {
		head, err := r.Peek(logOverhead)
		if err == io.EOF && len(head) == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s at byte %d: a cut batch header", name, pos)
		}
		n := logOverhead + int(binary.BigEndian.Uint32(head[8:]))
		if n < batchHeaderLen || n > 1<<30 {
			return fmt.Errorf("%s at byte %d: a batch of %d bytes", name, pos, n)
		}
		if cap(d.batch) < n {
			d.batch = make([]byte, n)
		}
		b := d.batch[:n]
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("%s at byte %d: a cut batch", name, pos)
		}
		if err := d.decompress(binary.BigEndian.Uint16(b[21:])&7, b[batchHeaderLen:]); err != nil {
			return fmt.Errorf("%s at byte %d: %v", name, pos, err)
		}
		d.records += int64(binary.BigEndian.Uint32(b[57:]))
		pos += int64(n)
	}
}

func (d *decoder) decompress(codec uint16, src []byte) error {
	var err error
	var n int
	d.src.Reset(src)
	switch codec {
	case 0:
		n = len(src)
	case 1:
		if d.gzip == nil {
			d.gzip, err = gzip.NewReader(&d.src)
		} else {
			err = d.gzip.Reset(&d.src)
		}
		if err == nil {
			n, err = d.readAll(d.gzip)
		}
	case 2:
		d.block, err = snappy.Decode(d.block[:cap(d.block)], src)
		n = len(d.block)
	case 3:
		if d.lz4 == nil {
			d.lz4 = lz4.NewReader(&d.src)
		} else {
			d.lz4.Reset(&d.src)
		}
		n, err = d.readAll(d.lz4)
	case 4:
		if d.zstd == nil {
			d.zstd, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		}
		if err == nil {
			d.block, err = d.zstd.DecodeAll(src, d.block[:0])
			n = len(d.block)
		}
	default:
		err = fmt.Errorf("no codec %d", codec)
	}
	d.bytes += int64(n)
	return err
}

func (d *decoder) readAll(r io.Reader) (int, error) {
	d.out.Reset()
	n, err := d.out.ReadFrom(r)
	return int(n), err
}
