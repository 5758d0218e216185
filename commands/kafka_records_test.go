package commands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// Records of Apache Kafka's layout: null and empty keys and values kept
// apart, headers in JSON and dump, a batch line before each batch's first
// record in a dump.
func TestKafkaRecordOutput(t *testing.T) {
	batch := &logstore.Batch{Magic: 2, BaseOffset: 10, LastOffset: 12, Pos: 0, Size: 140, Records: 3, Codec: "gzip", CRC: 0xdeadbeef,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: 1700000000000, MaxTimestamp: 1700000000002}
	ts := int64(1700000000000) * 1e6
	recs := []logstore.Record{
		{Record: format.Record{Offset: 10, Timestamp: ts, Key: []byte{}, Value: []byte("v")}, Batch: batch,
			Headers: []logstore.Header{{Key: "trace", Value: []byte("abc")}, {Key: "nil", Value: nil}, {Key: "bin", Value: []byte{0xff}}}},
		{Record: format.Record{Offset: 11, Timestamp: ts + 1e6, Key: nil, Value: nil}, Batch: batch},
		{Record: format.Record{Offset: 12, Timestamp: ts + 2e6, Key: []byte("k"), Value: []byte{}}, Batch: batch},
	}
	print := func(f outputFormat) string {
		var b bytes.Buffer
		w := &recordWriter{out: bufio.NewWriter(&b), format: f, topic: "orders", partition: 0}
		for i := range recs {
			if err := w.write(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		w.out.Flush()
		return b.String()
	}
	lines := strings.Split(strings.TrimSpace(print(formatJSON)), "\n")
	want := []string{
		`{"topic":"orders","partition":0,"offset":10,"timestamp":"2023-11-14T22:13:20.000000000Z","timestamp_ns":1700000000000000000,"key":"","value":"v","headers":[{"key":"trace","value":"abc"},{"key":"nil","value":null},{"key":"bin","value_base64":"/w=="}]}`,
		`{"topic":"orders","partition":0,"offset":11,"timestamp":"2023-11-14T22:13:20.001000000Z","timestamp_ns":1700000000001000000,"key":null,"value":null,"headers":[]}`,
		`{"topic":"orders","partition":0,"offset":12,"timestamp":"2023-11-14T22:13:20.002000000Z","timestamp_ns":1700000000002000000,"key":"k","value":"","headers":[]}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("json:\n%s", strings.Join(lines, "\n"))
	}
	for i := range want {
		if lines[i] != want[i] || !json.Valid([]byte(lines[i])) {
			t.Errorf("json line %d:\n got %s\nwant %s", i, lines[i], want[i])
		}
	}

	dump := print(formatDump)
	if strings.Count(dump, "batch base_offset=10 last_offset=12 count=3 pos=0 size=140 magic=2 codec=gzip crc=0xdeadbeef timestamp_type=create ") != 1 {
		t.Errorf("dump: one batch line expected:\n%s", dump)
	}
	for _, w := range []string{
		` key="" header="trace":"abc" header="nil":null header="bin":"\xff" value="v"` + "\n",
		" key=- value=null\n",
		` key="k" value=""` + "\n",
	} {
		if !strings.Contains(dump, w) {
			t.Errorf("dump lacks %q:\n%s", w, dump)
		}
	}
}
