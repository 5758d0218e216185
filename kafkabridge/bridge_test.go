package kafkabridge

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/seglog/seglog/logstore"
)

// These tests run the bridge against kfake, franz-go's in-process
// Kafka-protocol cluster, on loopback.

// testConn starts a one-broker cluster and returns a Conn to it.
func testConn(t *testing.T, opts ...kfake.Opt) (Conn, *kfake.Cluster) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return Conn{Brokers: c.ListenAddrs(), ClientID: "seglog-test", DialTimeout: 5 * time.Second, RequestTimeout: 10 * time.Second}, c
}

// testClient is a client of the test's own, to produce and check.
func testClient(t *testing.T, conn Conn) (*kgo.Client, *kadm.Client) {
	t.Helper()
	cl, err := conn.connect(context.Background(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl, kadm.NewClient(cl)
}

// record is a record as both sides hold it; ts in nanoseconds.
type record struct {
	key, value []byte
	ts         int64
}

// appendRecords appends recs to partition p of topic.
func appendRecords(t *testing.T, s *logstore.Store, topic string, p int, recs ...record) {
	t.Helper()
	w, err := s.OpenWriter(topic, p, logstore.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if _, err := w.Append(r.ts, r.key, r.value); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// storedRecords reads partition p of topic whole.
func storedRecords(t *testing.T, s *logstore.Store, topic string, p int) []record {
	t.Helper()
	part, err := s.OpenPartition(topic, p)
	if err != nil {
		t.Fatal(err)
	}
	defer part.Close()
	it, err := part.Read(0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var recs []record
	for it.Next() {
		r := it.Record()
		recs = append(recs, record{key: bytes.Clone(r.Key), value: bytes.Clone(r.Value), ts: r.Timestamp})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// exportParts opens every partition of topic for an export from its start.
func exportParts(t *testing.T, s *logstore.Store, topic string) []ExportPartition {
	t.Helper()
	tp, err := s.Topic(topic)
	if err != nil {
		t.Fatal(err)
	}
	var parts []ExportPartition
	for n := range tp.Partitions {
		p, err := s.OpenPartition(topic, n)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		ext, err := p.Extent()
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, ExportPartition{Number: n, Partition: p, From: ext.Start, Next: ext.Next})
	}
	return parts
}

// runExport exports every partition of topic, returning the summary and
// the positions of the last tick.
func runExport(ctx context.Context, t *testing.T, conn Conn, s *logstore.Store, o ExportOptions) (Summary, []uint64, error) {
	t.Helper()
	parts := exportParts(t, s, o.Topic)
	o.Partitions, o.Highest = len(parts), len(parts)-1
	x, err := NewExporter(ctx, conn, o)
	if err != nil {
		return Summary{}, nil, err
	}
	defer x.Close()
	var positions []uint64
	sum, err := x.Run(ctx, parts, func(p ExportProgress) error {
		positions = slices.Clone(p.Positions)
		return nil
	})
	return sum, positions, err
}

// runImport imports o.KafkaTopic into o.Topic, creating it.
func runImport(t *testing.T, conn Conn, s *logstore.Store, o ImportOptions) (Summary, error) {
	t.Helper()
	ctx := context.Background()
	im, err := NewImporter(ctx, conn, s, o)
	if err != nil {
		return Summary{}, err
	}
	defer im.Close()
	if _, err := s.Topic(o.Topic); err != nil {
		if err := s.CreateTopic(o.Topic, im.Partitions(), logstore.Settings{}); err != nil {
			t.Fatal(err)
		}
	}
	var writers []*logstore.Writer
	for p := range im.Partitions() {
		w, err := s.OpenWriter(o.Topic, p, logstore.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		writers = append(writers, w)
	}
	return im.Run(ctx, writers, nil)
}

func records(sum Summary) (n int64) {
	for _, p := range sum.Partitions {
		n += p.Records
	}
	return n
}

// Records go to Kafka partition p from partition p, keys, values and
// timestamps (to the millisecond) as they were, and come back the same;
// an import's position makes a second one add only what is new.
func TestExportImportRoundTrip(t *testing.T) {
	conn, _ := testConn(t)
	src, dst := logstore.Open(t.TempDir()), logstore.Open(t.TempDir())
	if err := src.CreateTopic("orders", 3, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	want := map[int][]record{}
	for i := range 30 {
		r := record{value: fmt.Appendf(nil, "plain %d", i), ts: base + int64(i)*1_000_123}
		switch i % 4 {
		case 1:
			r.key, r.value = fmt.Appendf(nil, "user-%d", i%4), []byte{}
		case 2:
			r.key, r.value = []byte("\xff\x00k"), fmt.Appendf(nil, "\x00\xfe\xff bytes %d", i)
		case 3:
			r.key, r.value = []byte("k"), bytes.Repeat([]byte("long "), 2000)
		}
		want[i%3] = append(want[i%3], r)
	}
	for p, recs := range want {
		appendRecords(t, src, "orders", p, recs...)
	}
	sum, positions, err := runExport(context.Background(), t, conn, src,
		ExportOptions{Topic: "orders", KafkaTopic: "k.orders", CreateTopic: true, Replication: -1, Compression: "zstd"})
	if err != nil {
		t.Fatal(err)
	}
	if records(sum) != 30 || !slices.Equal(positions, []uint64{10, 10, 10}) {
		t.Fatalf("export summary %+v, last positions %v; want 30 records, every partition acknowledged to 10", sum, positions)
	}
	for i, p := range sum.Partitions {
		if p.Partition != i || p.Records != 10 || p.FirstOffset != 0 || p.LastOffset != 9 {
			t.Errorf("export of partition %d: %+v", i, p)
		}
	}

	sum, err = runImport(t, conn, dst, ImportOptions{Topic: "copy", KafkaTopic: "k.orders"})
	if err != nil || records(sum) != 30 || len(sum.Partitions) != 3 {
		t.Fatalf("import: %+v, %v", sum, err)
	}
	for p, recs := range want {
		got := storedRecords(t, dst, "copy", p)
		if len(got) != len(recs) {
			t.Fatalf("partition %d: imported %d records, want %d", p, len(got), len(recs))
		}
		for i, w := range recs {
			g := got[i]
			if !bytes.Equal(g.key, w.key) || !bytes.Equal(g.value, w.value) || g.ts != w.ts/1e6*1e6 {
				t.Errorf("partition %d record %d: key %q value %.20q ts %d, want key %q value %.20q ts %d", p, i, g.key, g.value, g.ts, w.key, w.value, w.ts/1e6*1e6)
			}
		}
	}
	if sum, err = runImport(t, conn, dst, ImportOptions{Topic: "copy", KafkaTopic: "k.orders"}); err != nil || records(sum) != 0 {
		t.Errorf("second import: %+v, %v; want nothing new", sum, err)
	}
	cl, adm := testClient(t, conn)
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "k.orders", Partition: 1, Value: []byte("late")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if sum, err = runImport(t, conn, dst, ImportOptions{Topic: "copy", KafkaTopic: "k.orders"}); err != nil || records(sum) != 1 || sum.Partitions[1].FirstOffset != 10 {
		t.Errorf("import after a new record: %+v, %v; want only it, offset 10 of partition 1", sum, err)
	}

	// Another Kafka topic is refused, unless the position is reset.
	if _, err := adm.CreateTopic(context.Background(), 3, -1, nil, "other"); err != nil {
		t.Fatal(err)
	}
	_, err = runImport(t, conn, dst, ImportOptions{Topic: "copy", KafkaTopic: "other"})
	if err == nil || !strings.Contains(err.Error(), "imported from Kafka topic k.orders, not other") {
		t.Errorf("import from another Kafka topic: %v", err)
	}
	if _, err := runImport(t, conn, dst, ImportOptions{Topic: "copy", KafkaTopic: "other", Reset: true}); err != nil {
		t.Fatal(err)
	}
	if pos, ok, err := dst.KafkaImportPosition("copy"); err != nil || !ok || pos.KafkaTopic != "other" {
		t.Errorf("position after Reset: %+v, %v, %v", pos, ok, err)
	}
}

// With Follow an export goes on with records appended after it started
// until its context is done, and then waits for their acknowledgements.
func TestExportFollow(t *testing.T) {
	conn, _ := testConn(t, kfake.SeedTopics(1, "live"))
	s := logstore.Open(t.TempDir())
	if err := s.CreateTopic("live", 1, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	appendRecords(t, s, "live", 0, record{value: []byte("a"), ts: 1}, record{value: []byte("b"), ts: 2})
	parts := exportParts(t, s, "live")
	// The deadline fails a follower that misses the record, rather than
	// hang the test.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	x, err := NewExporter(ctx, conn, ExportOptions{Topic: "live", KafkaTopic: "live", Partitions: 1, Compression: "none", Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	appended := false
	sum, err := x.Run(ctx, parts, func(p ExportProgress) error {
		switch {
		case p.Positions[0] == 2 && !appended:
			appended = true
			appendRecords(t, s, "live", 0, record{value: []byte("c"), ts: 3})
		case p.Positions[0] == 3:
			cancel()
		}
		return nil
	})
	if err != nil || records(sum) != 3 || sum.Partitions[0].LastOffset != 2 {
		t.Fatalf("follow: %+v, %v; want the 3 records", sum, err)
	}
}

// A record larger than the topic's max.message.bytes fails the export,
// naming it and the limit, and positions stay before it.
func TestExportTooLarge(t *testing.T) {
	conn, _ := testConn(t)
	_, adm := testClient(t, conn)
	limit := "2000"
	resp, err := adm.CreateTopic(context.Background(), 1, -1, map[string]*string{"max.message.bytes": &limit}, "big")
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	s := logstore.Open(t.TempDir())
	if err := s.CreateTopic("big", 1, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	appendRecords(t, s, "big", 0, record{value: []byte("small"), ts: 1}, record{value: bytes.Repeat([]byte("x"), 5000), ts: 2},
		record{value: []byte("after"), ts: 3})
	sum, positions, err := runExport(context.Background(), t, conn, s, ExportOptions{Topic: "big", KafkaTopic: "big", Compression: "none"})
	if err == nil || !strings.Contains(err.Error(), "record big/0 offset 1 (5000 bytes") || !strings.Contains(err.Error(), "max.message.bytes 2000") {
		t.Fatalf("export of a record too large: %v", err)
	}
	if !slices.Equal(positions, []uint64{1}) || records(sum) != 1 {
		t.Errorf("positions %v, summary %+v; want only the record before the refused one", positions, sum)
	}
}

// An export refuses a Kafka topic it cannot fill partition for partition,
// and a missing one unless it may create it.
func TestExportTopicChecks(t *testing.T) {
	conn, _ := testConn(t, kfake.SeedTopics(1, "small"))
	s := logstore.Open(t.TempDir())
	if err := s.CreateTopic("small", 3, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o    ExportOptions
		want string
	}{
		{ExportOptions{KafkaTopic: "small"}, "Kafka topic small has 1 partition, seglog topic small has 3: partition p is exported to partition p, so it needs 3"},
		{ExportOptions{KafkaTopic: "nope"}, "Kafka topic nope does not exist on " + conn.Brokers[0]},
		{ExportOptions{KafkaTopic: "small", Compression: "brotli"}, `kafka: unknown compression "brotli"`},
	} {
		tc.o.Topic, tc.o.Partitions, tc.o.Highest = "small", 3, 2
		if tc.o.Compression == "" {
			tc.o.Compression = "none"
		}
		_, err := NewExporter(context.Background(), conn, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	// Only the partitions exported need to exist.
	x, err := NewExporter(context.Background(), conn, ExportOptions{Topic: "small", KafkaTopic: "small", Partitions: 3, Highest: 0, Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
}

// Headers are dropped and counted, or with RefuseHeaders stop the import
// at the record that has them, keeping those before it.
func TestImportHeaders(t *testing.T) {
	conn, _ := testConn(t, kfake.SeedTopics(1, "hdr"))
	cl, _ := testClient(t, conn)
	if err := cl.ProduceSync(context.Background(),
		&kgo.Record{Topic: "hdr", Value: []byte("a")},
		&kgo.Record{Topic: "hdr", Value: []byte("b"), Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("1")}, {Key: "x"}}},
		&kgo.Record{Topic: "hdr", Value: []byte("c")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	s := logstore.Open(t.TempDir())
	values := func() (v []string) {
		for _, r := range storedRecords(t, s, "hdr", 0) {
			v = append(v, string(r.value))
		}
		return v
	}
	_, err := runImport(t, conn, s, ImportOptions{Topic: "hdr", KafkaTopic: "hdr", RefuseHeaders: true})
	if err == nil || !strings.Contains(err.Error(), "Kafka topic hdr partition 0 offset 1 has 2 headers") {
		t.Fatalf("RefuseHeaders: %v", err)
	}
	if v := values(); !slices.Equal(v, []string{"a"}) {
		t.Errorf("after the refusal the topic holds %q, want the record before it", v)
	}
	sum, err := runImport(t, conn, s, ImportOptions{Topic: "hdr", KafkaTopic: "hdr"})
	if err != nil || sum.HeadersDropped != 2 || sum.RecordsWithHeaders != 1 || records(sum) != 2 {
		t.Fatalf("dropping headers: %+v, %v; want 2 headers of 1 record dropped, 2 records imported", sum, err)
	}
	if v := values(); !slices.Equal(v, []string{"a", "b", "c"}) {
		t.Errorf("the topic holds %q, want a, b, c", v)
	}
}

// A Kafka record keeps its timestamp, raised to the partition's newest
// when older; one without (-1) is stamped as append stamps, strictly after
// the record before it in the run.
func TestImportTimestamps(t *testing.T) {
	conn, _ := testConn(t, kfake.SeedTopics(1, "ts"))
	cl, _ := testClient(t, conn)
	start := time.Now().UnixNano()
	if err := cl.ProduceSync(context.Background(),
		&kgo.Record{Topic: "ts", Value: []byte("kept"), Timestamp: time.UnixMilli(1700000000123)},
		&kgo.Record{Topic: "ts", Value: []byte("older"), Timestamp: time.UnixMilli(1600000000000)},
		&kgo.Record{Topic: "ts", Value: []byte("none-1"), Timestamp: time.UnixMilli(-1)},
		&kgo.Record{Topic: "ts", Value: []byte("none-2"), Timestamp: time.UnixMilli(-1)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	s := logstore.Open(t.TempDir())
	if _, err := runImport(t, conn, s, ImportOptions{Topic: "ts", KafkaTopic: "ts"}); err != nil {
		t.Fatal(err)
	}
	recs := storedRecords(t, s, "ts", 0)
	if len(recs) != 4 {
		t.Fatalf("imported %d records, want 4", len(recs))
	}
	if recs[0].ts != 1700000000123000000 || recs[1].ts != 1700000000123000000 {
		t.Errorf("timestamps %d, %d: want the first kept and the older one raised to it", recs[0].ts, recs[1].ts)
	}
	if a, b := recs[2].ts, recs[3].ts; a < start || b <= a {
		t.Errorf("records without a timestamp got %d, %d: want the time of import (from %d), strictly increasing", a, b, start)
	}
}

// A saved position the Kafka partition no longer has goes on at the
// nearest offset it has, with a warning: records deleted before they were
// imported, or a position past the end (a recreated topic).
func TestImportSavedPositionOutOfRange(t *testing.T) {
	conn, _ := testConn(t, kfake.SeedTopics(2, "feed"))
	cl, adm := testClient(t, conn)
	var recs []*kgo.Record
	for i := range 3 {
		recs = append(recs, &kgo.Record{Topic: "feed", Partition: 0, Value: fmt.Appendf(nil, "p0-%d", i)},
			&kgo.Record{Topic: "feed", Partition: 1, Value: fmt.Appendf(nil, "p1-%d", i)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "feed", Partition: 0, At: 2})
	if resp, err := adm.DeleteRecords(context.Background(), del); err != nil || resp.Error() != nil {
		t.Fatalf("delete records: %v, %v", err, resp.Error())
	}
	s := logstore.Open(t.TempDir())
	if err := s.SaveKafkaImportPosition("feed", logstore.KafkaImportPosition{KafkaTopic: "feed", Next: map[int32]int64{0: 0, 1: 7}}); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	sum, err := runImport(t, conn, s, ImportOptions{Topic: "feed", KafkaTopic: "feed", Warn: func(m string) { warnings = append(warnings, m) }})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Kafka topic feed partition 0: offsets 0..1 were deleted before they were imported; going on at 2",
		"Kafka topic feed partition 1: the saved position 7 is past its end 3 (was the topic recreated?); going on at 3",
	}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings:\n%q\nwant\n%q", warnings, want)
	}
	if sum.Partitions[0].Records != 1 || sum.Partitions[0].FirstOffset != 2 || sum.Partitions[1].Records != 0 {
		t.Errorf("imported %+v; want offset 2 of partition 0 only", sum.Partitions)
	}
	if pos, _, _ := s.KafkaImportPosition("feed"); pos.Next[0] != 3 || pos.Next[1] != 3 {
		t.Errorf("saved position %v, want both partitions at 3", pos.Next)
	}
}
