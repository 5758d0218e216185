//go:build ignore

// Command kafkagen writes benchmark input for bench/run: an Apache Kafka log
// directory whose one partition, TOPIC-0, holds the lines of a file as
// records (no key, the line without its newline as the value), so that
// `seglog read DIR/TOPIC-0 --format value` gives the file back.
//
// The batches are built with franz-go's kmsg and compressed with kgo's
// compressors, as a producer with Kafka's defaults sends them: batches of
// up to batch.size (16 KiB) of records before compression, CreateTime,
// not idempotent. The files are laid out as a broker leaves them after a
// clean shutdown: segments of at most segment.bytes (1 GiB), an .index
// entry at a batch's last offset and position once more than
// index.interval.bytes (4096) went in since the last one, a .timeindex
// entry with each when the segment's greatest timestamp grew, and one more
// for it when the segment is closed; the indexes trimmed to their entries;
// meta.properties, partition.metadata, leader-epoch-checkpoint and the
// offset checkpoints beside them.
//
// Usage: go run bench/kafkagen/main.go -in FILE -out DIR [-topic T] [-codec C] [-count N]
//
// DIR must not exist. Memory is bounded by one batch whatever the input's size.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	batchSize          = 16 << 10 // the producer's batch.size
	segmentBytes       = 1 << 30  // the broker's segment.bytes
	indexIntervalBytes = 4096     // the broker's index.interval.bytes
	batchHeaderLen     = 61       // a magic 2 batch's fields before its records
	// The records' CreateTime: the first's, then one millisecond more every
	// hundred records.
	baseTimestamp = 1772355600000 // 2026-03-01T09:00:00Z
)

var codecs = map[string]kgo.CompressionCodec{
	"none":   kgo.NoCompression(),
	"gzip":   kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(),
	"lz4":    kgo.Lz4Compression(),
	"zstd":   kgo.ZstdCompression(),
}

func main() {
	in := flag.String("in", "", "the input `file`, one record per line")
	out := flag.String("out", "", "the log `directory` to create")
	topic := flag.String("topic", "t", "the topic's `name`")
	codec := flag.String("codec", "none", "none, gzip, snappy, lz4 or zstd")
	count := flag.Int64("count", 0, "only the first `N` lines (0: all)")
	flag.Parse()
	cc, ok := codecs[*codec]
	if *in == "" || *out == "" || !ok || *count < 0 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: kafkagen -in FILE -out DIR [-topic T] [-codec none|gzip|snappy|lz4|zstd] [-count N]")
		os.Exit(2)
	}
	if err := run(*in, *out, *topic, cc, *count); err != nil {
		fmt.Fprintln(os.Stderr, "kafkagen:", err)
		os.Exit(1)
	}
}

func run(in, out, topic string, cc kgo.CompressionCodec, count int64) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	compressor, err := kgo.DefaultCompressor(cc)
	if err != nil {
		return err
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		return err
	}
	p := &partition{dir: filepath.Join(out, topic+"-0"), compressor: compressor}
	if err := os.Mkdir(p.dir, 0o755); err != nil {
		return err
	}
	if err := p.fill(bufio.NewReaderSize(src, 1<<20), count); err != nil {
		return err
	}
	return writeMeta(out, topic, p)
}

// A partition writes batches into its segments as a broker appends them.
type partition struct {
	dir        string
	compressor kgo.Compressor
	next       int64 // the next record's offset
	seg        *segment
	zbuf       bytes.Buffer
}

// fill reads lines into batches of up to batchSize bytes before
// compression, each written as soon as it is full.
func (p *partition) fill(r *bufio.Reader, count int64) error {
	var body []byte
	var n int32
	flush := func() error {
		if n == 0 {
			return nil
		}
		err := p.append(body, n)
		body, n = body[:0], 0
		return err
	}
	for read := int64(0); count == 0 || read < count; read++ {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, io.EOF) && len(line) == 0 {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("line %d: %v", read+1, err) // bufio.ErrBufferFull: a line over 1 MiB
		}
		value := bytes.TrimSuffix(line, []byte("\n"))
		enc := p.record(n, value)
		if n > 0 && batchHeaderLen+len(body)+len(enc) > batchSize {
			if err := flush(); err != nil {
				return err
			}
			enc = p.record(0, value)
		}
		body = append(body, enc...)
		n++
	}
	if err := flush(); err != nil {
		return err
	}
	if p.seg == nil { // no lines: one empty segment
		if err := p.roll(); err != nil {
			return err
		}
	}
	return p.seg.close()
}

// record encodes value as the record at delta in the batch starting at p.next.
func (p *partition) record(delta int32, value []byte) []byte {
	r := kmsg.Record{
		TimestampDelta64: timestampOf(p.next+int64(delta)) - timestampOf(p.next),
		OffsetDelta:      delta,
		Value:            value,
	}
	r.Length = int32(len(r.AppendTo(nil)) - 1) // with Length 0, its varint takes one byte
	return r.AppendTo(nil)
}

func timestampOf(offset int64) int64 { return baseTimestamp + offset/100 }

// append encodes n records' body as one batch at the next offset and
// writes it, rolling the segment first if the batch would not fit.
func (p *partition) append(body []byte, n int32) error {
	payload, used := body, kgo.CodecNone
	if p.compressor != nil {
		p.zbuf.Reset()
		payload, used = p.compressor.Compress(&p.zbuf, body)
	}
	last := p.next + int64(n) - 1
	b := kmsg.RecordBatch{
		FirstOffset:     p.next,
		Magic:           2,
		Attributes:      int16(used),
		LastOffsetDelta: n - 1,
		FirstTimestamp:  timestampOf(p.next),
		MaxTimestamp:    timestampOf(last),
		ProducerID:      -1,
		ProducerEpoch:   -1,
		FirstSequence:   -1,
		NumRecords:      n,
		Records:         payload,
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	if p.seg == nil || p.seg.size+int64(len(raw)) > segmentBytes {
		if err := p.roll(); err != nil {
			return err
		}
	}
	p.next = last + 1
	return p.seg.append(raw, last, b.MaxTimestamp)
}

// roll closes the active segment and opens one at the next offset.
func (p *partition) roll() error {
	if p.seg != nil {
		if err := p.seg.close(); err != nil {
			return err
		}
	}
	s, err := openSegment(p.dir, p.next)
	if err != nil {
		return err
	}
	p.seg = s
	return nil
}

// A segment is a .log and its two indexes, written as LogSegment does.
type segment struct {
	base               int64
	files              [3]*os.File
	log, index, time   *bufio.Writer
	size               int64
	sinceIndexed       int64
	maxTime, maxTimeAt int64 // the greatest batch max timestamp, and that batch's last offset
	lastIndexedTime    int64 // the .timeindex's last timestamp; -1 before its first entry
	hasBatch           bool
}

func openSegment(dir string, base int64) (*segment, error) {
	s := &segment{base: base, lastIndexedTime: -1}
	for i, ext := range []string{".log", ".index", ".timeindex"} {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%020d%s", base, ext)))
		if err != nil {
			return nil, err
		}
		s.files[i] = f
	}
	s.log = bufio.NewWriterSize(s.files[0], 1<<20)
	s.index = bufio.NewWriter(s.files[1])
	s.time = bufio.NewWriter(s.files[2])
	return s, nil
}

func (s *segment) append(raw []byte, last, maxTimestamp int64) error {
	if !s.hasBatch || maxTimestamp > s.maxTime {
		s.maxTime, s.maxTimeAt, s.hasBatch = maxTimestamp, last, true
	}
	if s.sinceIndexed > indexIntervalBytes {
		var e [12]byte
		binary.BigEndian.PutUint32(e[:], uint32(last-s.base))
		binary.BigEndian.PutUint32(e[4:], uint32(s.size))
		if _, err := s.index.Write(e[:8]); err != nil {
			return err
		}
		if err := s.appendTime(); err != nil {
			return err
		}
		s.sinceIndexed = 0
	}
	if _, err := s.log.Write(raw); err != nil {
		return err
	}
	s.size += int64(len(raw))
	s.sinceIndexed += int64(len(raw))
	return nil
}

// appendTime adds the segment's greatest timestamp so far to the
// .timeindex, if it grew since the last entry.
func (s *segment) appendTime() error {
	if !s.hasBatch || s.maxTime <= s.lastIndexedTime {
		return nil
	}
	var e [12]byte
	binary.BigEndian.PutUint64(e[:], uint64(s.maxTime))
	binary.BigEndian.PutUint32(e[8:], uint32(s.maxTimeAt-s.base))
	s.lastIndexedTime = s.maxTime
	_, err := s.time.Write(e[:])
	return err
}

// close adds the closing .timeindex entry and flushes the files.
func (s *segment) close() error {
	err := s.appendTime()
	for i, w := range []*bufio.Writer{s.log, s.index, s.time} {
		err = errors.Join(err, w.Flush(), s.files[i].Close())
	}
	return err
}

// uuid prints 16 bytes as Kafka prints a Uuid: URL-safe base64, no padding.
func uuid(sixteen string) string { return base64.RawURLEncoding.EncodeToString([]byte(sixteen)) }

// writeMeta writes the files a broker keeps beside its partitions: this
// one's leader epoch (0 from offset 0) and topic id, the broker's identity,
// and the checkpoints of a clean shutdown (everything flushed and
// replicated, nothing deleted or cleaned).
func writeMeta(out, topic string, p *partition) error {
	files := map[string]string{
		filepath.Join(p.dir, "leader-epoch-checkpoint"): "0\n1\n0 0\n",
		filepath.Join(p.dir, "partition.metadata"):      "version: 0\ntopic_id: " + uuid("seglog bench tpc") + "\n",
		filepath.Join(out, "meta.properties"): "#\n#Sun Mar 01 09:00:00 UTC 2026\nnode.id=1\n" +
			"directory.id=" + uuid("seglog bench dir") + "\nversion=1\ncluster.id=" + uuid("seglog bench cls") + "\n",
		filepath.Join(out, "recovery-point-offset-checkpoint"): fmt.Sprintf("0\n1\n%s 0 %d\n", topic, p.next),
		filepath.Join(out, "replication-offset-checkpoint"):    fmt.Sprintf("0\n1\n%s 0 %d\n", topic, p.next),
		filepath.Join(out, "log-start-offset-checkpoint"):      "0\n0\n",
		filepath.Join(out, "cleaner-offset-checkpoint"):        "0\n0\n",
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}
