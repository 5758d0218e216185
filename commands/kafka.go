package commands

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/urfave/cli/v2"
)

// This file holds what 'seglog kafka export' and 'seglog kafka import'
// share: the parent command, the connection flags, the client and its
// errors, and the summary. The Kafka protocol is franz-go's.

func kafkaCommand() *cli.Command {
	return &cli.Command{
		Name:      "kafka",
		Usage:     "export a topic to a Kafka cluster, or import one from it",
		ArgsUsage: "export|import TOPIC",
		Description: "Moves records between seglog and a Kafka-protocol cluster (Apache Kafka,\n" +
			"Redpanda, ...): 'seglog kafka export' produces a topic's records to Kafka and\n" +
			"'seglog kafka import' consumes a Kafka topic into seglog, partition p to partition\n" +
			"p, order kept, keys and values byte for byte, timestamps as the record's CreateTime\n" +
			"(Kafka keeps milliseconds). Both can follow (-f) as a live bridge and remember how\n" +
			"far they got, so a restart goes on where the last run stopped (at least once).\n" +
			"See 'seglog kafka export --help' and 'seglog kafka import --help'.\n\n" +
			"Examples:\n" +
			"  seglog kafka export --brokers kafka1:9092 --create-topic orders\n" +
			"  seglog kafka import --brokers kafka1:9092 --follow orders",
		Subcommands: []*cli.Command{kafkaExportCommand(), kafkaImportCommand()},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("kafka: unknown command %q (see 'seglog kafka --help')", c.Args().First())
			}
			return usagef("kafka: missing command export or import (see 'seglog kafka --help')")
		},
	}
}

// kafkaConnFlags are the flags that say how to reach and log in to the
// cluster.
func kafkaConnFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "brokers", Aliases: []string{"b"}, EnvVars: []string{"SEGLOG_KAFKA_BROKERS"}, Usage: "the cluster's seed brokers, `HOST:PORT[,...]` (required)"},
		&cli.BoolFlag{Name: "tls", Usage: "connect with TLS (implied by the other --tls flags)"},
		&cli.StringFlag{Name: "tls-ca", Usage: "trust the certificate authorities in PEM `FILE` (default: the system's)"},
		&cli.StringFlag{Name: "tls-cert", Usage: "present the client certificate in PEM `FILE` (with --tls-key)"},
		&cli.StringFlag{Name: "tls-key", Usage: "the client certificate's private key, PEM `FILE`"},
		&cli.BoolFlag{Name: "tls-insecure-skip-verify", Usage: "do not verify the brokers' certificates (testing only)"},
		&cli.StringFlag{Name: "sasl-mechanism", Usage: "log in with SASL `MECHANISM`: plain, scram-sha-256 or scram-sha-512"},
		&cli.StringFlag{Name: "sasl-user", Usage: "the SASL user `NAME`"},
		&cli.StringFlag{Name: "sasl-password", EnvVars: []string{"SEGLOG_KAFKA_PASSWORD"}, Usage: "the SASL `PASSWORD` (better given through the environment)"},
		&cli.StringFlag{Name: "client-id", Value: "seglog", Usage: "the client `ID` the brokers log and set quotas by"},
		&cli.StringFlag{Name: "dial-timeout", Value: "10s", Usage: "give up connecting to a broker after `DURATION`"},
		&cli.StringFlag{Name: "request-timeout", Value: "30s", Usage: "give up a request (metadata, produce, fetch) the cluster does not answer after `DURATION`"},
	}
}

// kafkaConn is how to reach the cluster.
type kafkaConn struct {
	brokers        []string
	tls            *tls.Config // nil: plaintext
	mechanism      string      // "": no SASL
	user, password string
	clientID       string
	dialTimeout    time.Duration
	requestTimeout time.Duration
}

// parseKafkaConn reads kafkaConnFlags. Certificate files are read later,
// by clientOptions: a missing file is a runtime error, not a usage one.
func parseKafkaConn(c *cli.Context) (kafkaConn, error) {
	k := kafkaConn{clientID: c.String("client-id"), mechanism: c.String("sasl-mechanism"),
		user: c.String("sasl-user"), password: c.String("sasl-password")}
	for _, b := range strings.Split(c.String("brokers"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			if _, _, err := net.SplitHostPort(b); err != nil {
				return k, usagef("--brokers: %q is not HOST:PORT", b)
			}
			k.brokers = append(k.brokers, b)
		}
	}
	if len(k.brokers) == 0 {
		return k, usagef("%s: --brokers HOST:PORT is required (or SEGLOG_KAFKA_BROKERS)", strings.TrimPrefix(c.Command.HelpName, "seglog "))
	}
	if k.clientID == "" {
		return k, usagef("--client-id must not be empty")
	}
	switch k.mechanism {
	case "":
		if c.IsSet("sasl-user") || c.IsSet("sasl-password") {
			return k, usagef("--sasl-user and --sasl-password need --sasl-mechanism")
		}
	case "plain", "scram-sha-256", "scram-sha-512":
		if k.user == "" {
			return k, usagef("--sasl-mechanism %s needs --sasl-user", k.mechanism)
		}
	default:
		return k, usagef("--sasl-mechanism must be plain, scram-sha-256 or scram-sha-512, not %q", k.mechanism)
	}
	if c.IsSet("tls-cert") != c.IsSet("tls-key") {
		return k, usagef("--tls-cert and --tls-key go together")
	}
	for _, f := range []struct {
		name string
		dst  *time.Duration
	}{{"dial-timeout", &k.dialTimeout}, {"request-timeout", &k.requestTimeout}} {
		d, err := parseDuration(c.String(f.name))
		if err != nil || d <= 0 {
			return k, usagef("--%s must be a duration above 0, not %q", f.name, c.String(f.name))
		}
		*f.dst = d
	}
	if c.Bool("tls") || c.IsSet("tls-ca") || c.IsSet("tls-cert") || c.Bool("tls-insecure-skip-verify") {
		var err error
		if k.tls, err = tlsConfig(c.String("tls-ca"), c.String("tls-cert"), c.String("tls-key"), c.Bool("tls-insecure-skip-verify")); err != nil {
			return k, err
		}
	}
	return k, nil
}

// tlsConfig builds the client's TLS configuration from PEM files ("": none).
func tlsConfig(caFile, certFile, keyFile string, insecure bool) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca: %s holds no PEM certificate", caFile)
		}
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// clientOptions are the franz-go options for the connection.
func (k kafkaConn) clientOptions() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(k.brokers...),
		kgo.ClientID(k.clientID),
		kgo.DialTimeout(k.dialTimeout),
		kgo.RetryTimeout(k.requestTimeout),
		// Not RecordDeliveryTimeout: franz-go counts it from a record's
		// timestamp, which for an export is when seglog stored it. A stall
		// is caught by the exporter instead.
		kgo.ProduceRequestTimeout(k.requestTimeout),
	}
	if k.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(k.tls))
	}
	if m := k.saslMechanism(); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts
}

func (k kafkaConn) saslMechanism() sasl.Mechanism {
	switch k.mechanism {
	case "plain":
		return plain.Auth{User: k.user, Pass: k.password}.AsMechanism()
	case "scram-sha-256":
		return scram.Auth{User: k.user, Pass: k.password}.AsSha256Mechanism()
	case "scram-sha-512":
		return scram.Auth{User: k.user, Pass: k.password}.AsSha512Mechanism()
	}
	return nil
}

// connect makes a client with extra options and checks that a broker
// answers, so that an unreachable cluster or a refused login fails at
// once, within the timeouts, with an error that says which.
func (k kafkaConn) connect(ctx context.Context, extra ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(append(k.clientOptions(), extra...)...)
	if err != nil {
		return nil, usagef("kafka: %v", err)
	}
	pctx, cancel := context.WithTimeout(ctx, k.dialTimeout+k.requestTimeout)
	defer cancel()
	// A ping connects, logs in and asks for the broker's API versions.
	if err := cl.Ping(pctx); err != nil {
		cl.Close()
		return nil, k.explain(err)
	}
	return cl, nil
}

// explain turns a client error into one line naming the brokers and what
// went wrong.
func (k kafkaConn) explain(err error) error {
	brokers := strings.Join(k.brokers, ",")
	var netErr net.Error
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.IllegalSaslState),
		errors.Is(err, kerr.UnsupportedSaslMechanism), errors.Is(err, kerr.ClusterAuthorizationFailed):
		who := "without SASL"
		if k.mechanism != "" {
			who = fmt.Sprintf("as %s with SASL %s", k.user, k.mechanism)
		}
		return fmt.Errorf("Kafka brokers %s: the login %s failed: %w", brokers, who, err)
	case k.mechanism != "" && errors.Is(err, io.EOF):
		// Some brokers hang up on a failed login rather than answer it.
		return fmt.Errorf("Kafka brokers %s: the login as %s with SASL %s failed (the broker closed the connection: wrong user or password?): %w",
			brokers, k.user, k.mechanism, err)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr):
		return fmt.Errorf("cannot reach Kafka brokers %s (dial timeout %v, request timeout %v): %w", brokers, k.dialTimeout, k.requestTimeout, err)
	}
	return fmt.Errorf("Kafka brokers %s: %w", brokers, err)
}

// kafkaTopic is what the cluster says about a topic.
type kafkaTopic struct {
	partitions int
	maxMessage int64 // max.message.bytes, 0 when the cluster did not say
}

// describeKafkaTopic looks a topic up; exists is false when the cluster
// does not have it.
func (k kafkaConn) describeKafkaTopic(ctx context.Context, adm *kadm.Client, name string) (kafkaTopic, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, k.requestTimeout)
	defer cancel()
	details, err := adm.ListTopics(ctx, name)
	if err != nil {
		return kafkaTopic{}, false, k.explain(err)
	}
	d, ok := details[name]
	if !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
		return kafkaTopic{}, false, nil
	}
	if d.Err != nil {
		return kafkaTopic{}, false, k.explain(fmt.Errorf("topic %s: %w", name, d.Err))
	}
	return kafkaTopic{partitions: len(d.Partitions), maxMessage: maxMessageBytes(ctx, adm, name)}, true, nil
}

// maxMessageBytes is a topic's max.message.bytes, 0 if the cluster does
// not say: the limit only makes an error message clearer.
func maxMessageBytes(ctx context.Context, adm *kadm.Client, name string) int64 {
	rc, err := adm.DescribeTopicConfigs(ctx, name)
	if err != nil {
		return 0
	}
	c, err := rc.On(name, nil)
	if err != nil {
		return 0
	}
	for _, kv := range c.Configs {
		if kv.Key == "max.message.bytes" && kv.Value != nil {
			n, _ := strconv.ParseInt(*kv.Value, 10, 64)
			return n
		}
	}
	return 0
}

// kafkaPartStats is what went through one partition.
type kafkaPartStats struct {
	Partition   int    `json:"partition"`
	Records     int64  `json:"records"`
	Bytes       int64  `json:"bytes"` // keys and values
	FirstOffset *int64 `json:"first_offset"`
	LastOffset  *int64 `json:"last_offset"`
}

// add counts a record at offset whose key and value are n bytes.
func (s *kafkaPartStats) add(offset int64, n int) {
	if s.FirstOffset == nil {
		s.FirstOffset = new(int64)
		*s.FirstOffset = offset
	}
	if s.LastOffset == nil {
		s.LastOffset = new(int64)
	}
	*s.LastOffset = offset
	s.Records++
	s.Bytes += int64(n)
}

// kafkaSummary is what an export or import prints on stdout at the end:
// per partition, the records moved and their offsets where they came from.
type kafkaSummary struct {
	Direction  string            `json:"direction"` // "export" or "import"
	Topic      string            `json:"topic"`
	KafkaTopic string            `json:"kafka_topic"`
	Records    int64             `json:"records"`
	Bytes      int64             `json:"bytes"`
	Seconds    float64           `json:"seconds"`
	PerSecond  float64           `json:"records_per_second"`
	Partitions []*kafkaPartStats `json:"partitions"`
}

func (s *kafkaSummary) print(e *env, asJSON bool, took time.Duration) error {
	s.Records, s.Bytes = 0, 0
	for _, p := range s.Partitions {
		s.Records += p.Records
		s.Bytes += p.Bytes
	}
	s.Seconds = took.Seconds()
	if s.Seconds > 0 {
		s.PerSecond = float64(s.Records) / s.Seconds
	}
	if asJSON {
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	if e.quiet {
		return nil
	}
	from, to := "seglog "+s.Topic, "Kafka "+s.KafkaTopic
	if s.Direction == "import" {
		from, to = to, from
	}
	offsets := func(o *int64) string {
		if o == nil {
			return "-"
		}
		return strconv.FormatInt(*o, 10)
	}
	var rows [][]string
	for _, p := range s.Partitions {
		rows = append(rows, []string{strconv.Itoa(p.Partition), strconv.FormatInt(p.Records, 10), humanSize(p.Bytes), offsets(p.FirstOffset), offsets(p.LastOffset)})
	}
	if err := renderTable(e.stdout, []string{"PARTITION", "RECORDS", "BYTES", "FIRST", "LAST"}, "PARTITION RECORDS BYTES FIRST LAST", rows); err != nil {
		return err
	}
	_, err := fmt.Fprintf(e.stdout, "%sed %d record%s (%s) from %s to %s in %.1fs: %.0f records/s, %s/s\n",
		s.Direction, s.Records, plural(int(s.Records)), humanSize(s.Bytes), from, to, s.Seconds, s.PerSecond,
		humanSize(int64(float64(s.Bytes)/max(s.Seconds, 1e-9))))
	return err
}
