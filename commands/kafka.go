package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/seglog/seglog/kafkabridge"
)

// This file holds what 'seglog kafka export' and 'seglog kafka import'
// share: the parent command, the connection flags and the summary. The
// bridge itself is kafkabridge's.

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

// saslMechanisms are the values of --sasl-mechanism, by the names
// kafkabridge.Conn takes; without the flag there is no SASL.
var saslMechanisms = choices[string]{
	{"plain", "plain", ""},
	{"scram-sha-256", "scram-sha-256", ""},
	{"scram-sha-512", "scram-sha-512", ""},
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
		saslMechanisms.flag("sasl-mechanism", "", "log in with SASL `MECHANISM`"),
		&cli.StringFlag{Name: "sasl-user", Usage: "the SASL user `NAME`"},
		&cli.StringFlag{Name: "sasl-password", EnvVars: []string{"SEGLOG_KAFKA_PASSWORD"}, Usage: "the SASL `PASSWORD` (better given through the environment)"},
		&cli.StringFlag{Name: "client-id", Value: "seglog", Usage: "the client `ID` the brokers log and set quotas by"},
		&cli.StringFlag{Name: "dial-timeout", Value: "10s", Usage: "give up connecting to a broker after `DURATION`"},
		&cli.StringFlag{Name: "request-timeout", Value: "30s", Usage: "give up a request (metadata, produce, fetch) the cluster does not answer after `DURATION`"},
	}
}

// parseKafkaConn reads kafkaConnFlags. Certificate files are read here,
// so a missing one fails before anything connects, but as a runtime
// error, not a usage one.
func parseKafkaConn(c *cli.Context) (kafkabridge.Conn, error) {
	k := kafkabridge.Conn{ClientID: c.String("client-id"), SASLMechanism: c.String("sasl-mechanism"),
		User: c.String("sasl-user"), Password: c.String("sasl-password")}
	for _, b := range strings.Split(c.String("brokers"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			if _, _, err := net.SplitHostPort(b); err != nil {
				return k, usagef("--brokers: %q is not HOST:PORT", b)
			}
			k.Brokers = append(k.Brokers, b)
		}
	}
	if len(k.Brokers) == 0 {
		return k, usagef("%s: --brokers HOST:PORT is required (or SEGLOG_KAFKA_BROKERS)", strings.TrimPrefix(c.Command.HelpName, "seglog "))
	}
	if k.ClientID == "" {
		return k, usagef("--client-id must not be empty")
	}
	if k.SASLMechanism == "" {
		if c.IsSet("sasl-user") || c.IsSet("sasl-password") {
			return k, usagef("--sasl-user and --sasl-password need --sasl-mechanism")
		}
	} else {
		var err error
		if k.SASLMechanism, err = parseChoice(c, "sasl-mechanism", saslMechanisms); err != nil {
			return k, err
		}
		if k.User == "" {
			return k, usagef("--sasl-mechanism %s needs --sasl-user", k.SASLMechanism)
		}
	}
	if c.IsSet("tls-cert") != c.IsSet("tls-key") {
		return k, usagef("--tls-cert and --tls-key go together")
	}
	for _, f := range []struct {
		name string
		dst  *time.Duration
	}{{"dial-timeout", &k.DialTimeout}, {"request-timeout", &k.RequestTimeout}} {
		d, err := parseDuration(c.String(f.name))
		if err != nil || d <= 0 {
			return k, usagef("--%s must be a duration above 0, not %q", f.name, c.String(f.name))
		}
		*f.dst = d
	}
	if c.Bool("tls") || c.IsSet("tls-ca") || c.IsSet("tls-cert") || c.Bool("tls-insecure-skip-verify") {
		var err error
		if k.TLS, err = kafkabridge.TLSConfig(c.String("tls-ca"), c.String("tls-cert"), c.String("tls-key"), c.Bool("tls-insecure-skip-verify")); err != nil {
			return k, err
		}
	}
	return k, nil
}

// kafkaError is err from the bridge as the command returns it: settings
// the client refuses are a usage error.
func kafkaError(err error) error {
	var se *kafkabridge.SettingsError
	if errors.As(err, &se) {
		return usagef("%v", se)
	}
	return err
}

// kafkaPartStats is what went through one partition, as the JSON
// summary has it.
type kafkaPartStats struct {
	Partition   int    `json:"partition"`
	Records     int64  `json:"records"`
	Bytes       int64  `json:"bytes"` // keys and values
	FirstOffset *int64 `json:"first_offset"`
	LastOffset  *int64 `json:"last_offset"`
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

// newKafkaSummary is the summary of what the bridge moved.
func newKafkaSummary(direction, topic, kafkaTopic string, moved kafkabridge.Summary) kafkaSummary {
	s := kafkaSummary{Direction: direction, Topic: topic, KafkaTopic: kafkaTopic}
	for _, p := range moved.Partitions {
		ps := &kafkaPartStats{Partition: p.Partition, Records: p.Records, Bytes: p.Bytes}
		if p.Records > 0 {
			ps.FirstOffset, ps.LastOffset = &p.FirstOffset, &p.LastOffset
		}
		s.Partitions = append(s.Partitions, ps)
	}
	return s
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
