package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// captured holds every batch the writers produced into kfake, in offset
// order per partition.
type captured struct {
	orders      [3][]*batch
	payments    []*batch
	kcatVersion string
}

const (
	ordersTopic   = "orders"
	paymentsTopic = "payments"
)

// broker is kfake with a hook that keeps the bytes of every produced
// batch as the client sent them.
type broker struct {
	c    *kfake.Cluster
	addr string
	cl   *kgo.Client // for metadata and raw fetches

	mu       sync.Mutex
	ids      map[[16]byte]string
	produced map[string][][]byte // "topic/partition" -> batches in arrival order
}

func newBroker() (*broker, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, ordersTopic), kfake.SeedTopics(1, paymentsTopic))
	if err != nil {
		return nil, err
	}
	b := &broker{c: c, addr: c.ListenAddrs()[0], produced: map[string][][]byte{}}
	if b.cl, err = kgo.NewClient(kgo.SeedBrokers(b.addr)); err != nil {
		c.Close()
		return nil, err
	}
	if err := b.hook(); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *broker) close() {
	b.cl.Close()
	b.c.Close()
}

func (b *broker) hook() error {
	ctx := context.Background()
	versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, b.cl)
	if err != nil {
		return err
	}
	meta := kmsg.NewPtrMetadataRequest()
	meta.Topics = []kmsg.MetadataRequestTopic{}
	for _, t := range []string{ordersTopic, paymentsTopic} {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(t)
		meta.Topics = append(meta.Topics, mt)
	}
	mresp, err := meta.RequestWith(ctx, b.cl)
	if err != nil {
		return err
	}
	b.ids = map[[16]byte]string{}
	for _, t := range mresp.Topics {
		b.ids[t.TopicID] = *t.Topic
	}

	// kfake serves Produce from v3 and Fetch from v4, as Kafka 4 does.
	// librdkafka 2.0 infers that a broker takes gzip, snappy and lz4
	// from the older versions a broker lists, and sends such batches
	// uncompressed otherwise; listing them from v0 lets it compress. It
	// still produces at a version kfake serves.
	b.c.ControlKey(int16(kmsg.ApiVersions), func(r kmsg.Request) (kmsg.Response, error, bool) {
		b.c.KeepControl()
		req := r.(*kmsg.ApiVersionsRequest)
		resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
		resp.Version = min(req.Version, versions.Version)
		for _, k := range versions.ApiKeys {
			if k.ApiKey == int16(kmsg.Produce) || k.ApiKey == int16(kmsg.Fetch) {
				k.MinVersion = 0
			}
			resp.ApiKeys = append(resp.ApiKeys, k)
		}
		return resp, nil, true
	})
	b.c.ControlKey(int16(kmsg.Produce), func(r kmsg.Request) (kmsg.Response, error, bool) {
		b.c.KeepControl()
		req := r.(*kmsg.ProduceRequest)
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, t := range req.Topics {
			topic := t.Topic
			if req.Version >= 13 {
				topic = b.ids[t.TopicID]
			}
			for _, p := range t.Partitions {
				k := fmt.Sprintf("%s/%d", topic, p.Partition)
				b.produced[k] = append(b.produced[k], bytes.Clone(p.Records))
			}
		}
		return nil, nil, false // kfake appends it as usual
	})
	return nil
}

// take returns the batches produced to a partition since the last take.
func (b *broker) take(topic string, p int32) [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := fmt.Sprintf("%s/%d", topic, p)
	got := b.produced[k]
	delete(b.produced, k)
	return got
}

// fetch reads a partition back whole, raw, as the broker stored it.
func (b *broker) fetch(topic string, p int32) ([][]byte, error) {
	var id [16]byte
	for k, v := range b.ids {
		if v == topic {
			id = k
		}
	}
	var out [][]byte
	for offset := int64(0); ; {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxBytes = 1 << 24
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, offset, 1<<24
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(context.Background(), b.cl)
		if err != nil {
			return nil, err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return nil, fmt.Errorf("fetch %s-%d: unexpected response shape", topic, p)
		}
		part := resp.Topics[0].Partitions[0]
		if part.ErrorCode != 0 {
			return nil, fmt.Errorf("fetch %s-%d at %d: error code %d", topic, p, offset, part.ErrorCode)
		}
		if offset >= part.HighWatermark {
			return out, nil
		}
		raws, err := splitBatches(part.RecordBatches)
		if err != nil {
			return nil, fmt.Errorf("fetch %s-%d: %w", topic, p, err)
		}
		if len(raws) == 0 {
			return nil, fmt.Errorf("fetch %s-%d at %d: no batch below the high watermark %d", topic, p, offset, part.HighWatermark)
		}
		for _, raw := range raws {
			h := header(raw)
			offset = h.FirstOffset + int64(h.LastOffsetDelta) + 1
		}
		out = append(out, raws...)
	}
}

// sameBatch says whether the broker stored what the client sent: every
// byte but the base offset and the partition leader epoch, which the
// broker sets and which lie outside the CRC.
func sameBatch(stored, sent []byte) bool {
	return len(stored) == len(sent) && bytes.Equal(stored[8:12], sent[8:12]) && bytes.Equal(stored[16:], sent[16:])
}

func capture() (*captured, error) {
	out, err := exec.Command("kcat", "-V").Output()
	if err != nil {
		return nil, fmt.Errorf("kcat -V: %w", err)
	}
	got := &captured{kcatVersion: kcatVersion(string(out))}
	b, err := newBroker()
	if err != nil {
		return nil, err
	}
	defer b.close()

	for i, run := range kcatRuns() {
		recs, err := run.produce(b.addr)
		if err != nil {
			return nil, fmt.Errorf("kcat run %d: %w", i, err)
		}
		sent := b.take(ordersTopic, run.partition)
		batches, err := spread(sent, recs, "kcat", run.epoch)
		if err != nil {
			return nil, fmt.Errorf("kcat run %d: %w", i, err)
		}
		batches[0].roll = run.roll
		got.orders[run.partition] = append(got.orders[run.partition], batches...)
	}
	for p := range got.orders {
		if got.orders[p], err = b.stored(ordersTopic, int32(p), got.orders[p], false); err != nil {
			return nil, err
		}
	}
	sent, err := producePayments(b)
	if err != nil {
		return nil, fmt.Errorf("transactions: %w", err)
	}
	if got.payments, err = b.stored(paymentsTopic, 0, sent, true); err != nil {
		return nil, err
	}
	return got, nil
}

// kcatVersion reads kcat's and librdkafka's versions from kcat -V.
func kcatVersion(v string) string {
	for _, l := range strings.Split(v, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "Version" {
			continue
		}
		for i, w := range f[:len(f)-1] {
			if w == "librdkafka" {
				return fmt.Sprintf("kcat %s (librdkafka %s)", f[1], f[i+1])
			}
		}
	}
	return strings.TrimSpace(v)
}

// spread deals the records a client was asked to send over the batches
// it sent, in order, and takes each record's timestamp from its batch.
func spread(sent [][]byte, recs []rec, writer string, epoch int32) ([]*batch, error) {
	if len(sent) == 0 {
		return nil, errors.New("no batch reached the broker")
	}
	var out []*batch
	for _, raw := range sent {
		h := header(raw)
		n := int(h.NumRecords)
		if n > len(recs) {
			return nil, fmt.Errorf("the broker got %d records more than were sent", n-len(recs))
		}
		stored, err := records(raw)
		if err != nil {
			return nil, err
		}
		bt := &batch{raw: raw, writer: writer, recs: recs[:n:n], epoch: epoch}
		for i := range bt.recs {
			bt.recs[i].ts = stored[i].ts
		}
		out = append(out, bt)
		recs = recs[n:]
	}
	if len(recs) > 0 {
		return nil, fmt.Errorf("%d records never reached the broker", len(recs))
	}
	return out, nil
}

// stored checks that the broker stored exactly the batches sent, and
// returns them with its offsets, in its order, with the transaction
// markers it wrote itself when markers is set.
func (b *broker) stored(topic string, p int32, sent []*batch, markers bool) ([]*batch, error) {
	raws, err := b.fetch(topic, p)
	if err != nil {
		return nil, err
	}
	var out []*batch
	for _, raw := range raws {
		if len(sent) > 0 && sameBatch(raw, sent[0].raw) {
			sent[0].raw = raw
			out, sent = append(out, sent[0]), sent[1:]
			continue
		}
		if !markers || header(raw).Attributes&attrControl == 0 {
			return nil, fmt.Errorf("%s-%d: the broker holds a batch at offset %d that no client sent", topic, p, header(raw).FirstOffset)
		}
		epoch := int32(0)
		if len(out) > 0 {
			epoch = out[len(out)-1].epoch
		}
		out = append(out, &batch{raw: raw, writer: "kfake", epoch: epoch})
	}
	if len(sent) > 0 {
		return nil, fmt.Errorf("%s-%d: %d batches sent never reached the log", topic, p, len(sent))
	}
	return out, nil
}

// A kcatRun is one kcat invocation producing its lines into one
// partition of orders as one batch (kcat -P -K '\t' -H ... -z codec).
type kcatRun struct {
	partition  int32
	codec      string
	idempotent bool
	nullEmpty  bool // -Z: an empty key or value is null
	headers    []string
	lines      []string
	epoch      int32
	roll       bool
}

func (r kcatRun) produce(addr string) ([]rec, error) {
	args := []string{"-P", "-q", "-b", addr, "-t", ordersTopic, "-p", fmt.Sprint(r.partition), "-z", r.codec, "-K", "\t",
		"-X", "linger.ms=200", "-X", fmt.Sprintf("enable.idempotence=%t", r.idempotent)}
	if r.nullEmpty {
		args = append(args, "-Z")
	}
	for _, h := range r.headers {
		args = append(args, "-H", h)
	}
	cmd := exec.Command("kcat", args...)
	cmd.Stdin = strings.NewReader(strings.Join(r.lines, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return r.records(), nil
}

// records is what kcat makes of the lines: the key before the first
// tab (none without a tab), a header value after the first '=' (null
// without one); empty lines are skipped.
func (r kcatRun) records() []rec {
	var hs []kmsg.Header
	for _, h := range r.headers {
		k, v, ok := strings.Cut(h, "=")
		hdr := kmsg.Header{Key: k}
		if ok {
			hdr.Value = []byte(v)
		}
		hs = append(hs, hdr)
	}
	field := func(s string) []byte {
		if s == "" && r.nullEmpty {
			return nil
		}
		return []byte(s)
	}
	var out []rec
	for _, l := range r.lines {
		if l == "" {
			continue
		}
		rc := rec{headers: hs}
		if k, v, ok := strings.Cut(l, "\t"); ok {
			rc.key, rc.value = field(k), field(v)
		} else {
			rc.value = field(l)
		}
		out = append(out, rc)
	}
	return out
}

// A txnClient is a franz-go transactional producer to payments-0.
type txnClient struct {
	b    *broker
	cl   *kgo.Client
	open []*batch  // batches of its open transaction
	sent *[]*batch // every batch either producer sent, in order
	ts   *int64    // the next record's timestamp, shared by the producers
}

// producePayments runs two transactional producers into payments-0 and
// returns the batches they sent.
func producePayments(b *broker) ([]*batch, error) {
	var sent []*batch
	ts := int64(paymentsEpochMs)
	newClient := func(id string, codec kgo.CompressionCodec) (*txnClient, error) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.TransactionalID(id), kgo.DefaultProduceTopic(paymentsTopic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(time.Minute), kgo.ProducerBatchCompression(codec))
		if err != nil {
			return nil, err
		}
		return &txnClient{b: b, cl: cl, sent: &sent, ts: &ts}, nil
	}
	a, err := newClient("payments-ledger", kgo.NoCompression())
	if err != nil {
		return nil, err
	}
	defer a.cl.Close()
	c, err := newClient("payments-refunds", kgo.ZstdCompression())
	if err != nil {
		return nil, err
	}
	defer c.cl.Close()

	// Segment 0: a committed transaction of two batches.
	steps := []func() error{
		a.begin,
		func() error {
			return a.send(false, payment(1, "acct-17", 1250), payment(2, "acct-4", 990), payment(3, "acct-17", 40))
		},
		func() error { return a.send(false, payment(4, "acct-9", 15000), payment(5, "acct-4", 310)) },
		func() error { return a.end(true) },
		// Segment 1: the ledger opens a transaction, the refunds
		// producer writes and aborts one inside it, the ledger commits.
		a.begin,
		func() error { return a.send(true, payment(6, "acct-2", 700), payment(7, "acct-17", 85)) },
		c.begin,
		func() error {
			return c.send(false, refund(1, "acct-4", 990), refund(2, "acct-9", 15000), refund(3, "acct-2", 700))
		},
		func() error { return c.send(false, refund(4, "acct-17", 40)) },
		func() error { return c.end(false) },
		func() error { return a.send(false, payment(8, "acct-9", 120)) },
		func() error { return a.end(true) },
		// Segment 2, the active one: another committed transaction.
		a.begin,
		func() error { return a.send(true, payment(9, "acct-4", 2200), payment(10, "acct-2", 55)) },
		func() error { return a.end(true) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return nil, fmt.Errorf("step %d: %w", i, err)
		}
	}
	return sent, nil
}

func (t *txnClient) begin() error { return t.cl.BeginTransaction() }

// send produces the records and flushes them, which sends them as one
// batch; roll makes the broker start a new segment with it.
func (t *txnClient) send(roll bool, recs ...rec) error {
	ctx := context.Background()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for i := range recs {
		recs[i].ts = *t.ts
		*t.ts += 250
		r := &kgo.Record{Partition: 0, Key: recs[i].key, Value: recs[i].value, Timestamp: time.UnixMilli(recs[i].ts)}
		for _, h := range recs[i].headers {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		wg.Add(1)
		t.cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			wg.Done()
		})
	}
	if err := t.cl.Flush(ctx); err != nil {
		return err
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	batches, err := spread(t.b.take(paymentsTopic, 0), recs, "franz-go", 0)
	if err != nil {
		return err
	}
	batches[0].roll = roll
	t.open = append(t.open, batches...)
	*t.sent = append(*t.sent, batches...)
	return nil
}

func (t *txnClient) end(commit bool) error {
	try := kgo.TryAbort
	if commit {
		try = kgo.TryCommit
	}
	if err := t.cl.EndTransaction(context.Background(), try); err != nil {
		return err
	}
	for _, b := range t.open {
		b.aborted = !commit
	}
	t.open = nil
	return nil
}

func payment(n int, account string, cents int) rec {
	return rec{
		key:     []byte(account),
		value:   fmt.Appendf(nil, `{"payment":%d,"account":%q,"cents":%d,"currency":"EUR"}`, n, account, cents),
		headers: []kmsg.Header{{Key: "source", Value: []byte("ledger")}, {Key: "payment-id", Value: fmt.Appendf(nil, "p-%04d", n)}},
	}
}

func refund(n int, account string, cents int) rec {
	return rec{
		key:     []byte(account),
		value:   fmt.Appendf(nil, `{"refund":%d,"account":%q,"cents":%d}`, n, account, cents),
		headers: []kmsg.Header{{Key: "source", Value: []byte("refunds")}},
	}
}
