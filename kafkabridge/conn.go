package kafkabridge

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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
)

// Conn is how to reach and log in to the cluster.
type Conn struct {
	Brokers        []string    // seed brokers, HOST:PORT
	TLS            *tls.Config // nil: plaintext (see TLSConfig)
	SASLMechanism  string      // "plain", "scram-sha-256", "scram-sha-512"; "": no SASL
	User, Password string      // the SASL login
	ClientID       string
	DialTimeout    time.Duration
	RequestTimeout time.Duration // also how long an export waits for an acknowledgement
}

// SettingsError is a client setting franz-go refuses: the caller's to fix,
// not the cluster's.
type SettingsError struct{ Err error }

func (e *SettingsError) Error() string { return "kafka: " + e.Err.Error() }
func (e *SettingsError) Unwrap() error { return e.Err }

// TLSConfig builds a client's TLS configuration from PEM files ("": none):
// the certificate authorities to trust (the system's without caFile), and
// a client certificate with its key.
func TLSConfig(caFile, certFile, keyFile string, insecureSkipVerify bool) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecureSkipVerify}
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
func (k Conn) clientOptions() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(k.Brokers...),
		kgo.ClientID(k.ClientID),
		kgo.DialTimeout(k.DialTimeout),
		kgo.RetryTimeout(k.RequestTimeout),
		// Not RecordDeliveryTimeout: franz-go counts it from a record's
		// timestamp, which for an export is when seglog stored it. A stall
		// is caught by the exporter instead.
		kgo.ProduceRequestTimeout(k.RequestTimeout),
	}
	if k.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(k.TLS))
	}
	if m := k.saslMechanism(); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts
}

func (k Conn) saslMechanism() sasl.Mechanism {
	switch k.SASLMechanism {
	case "plain":
		return plain.Auth{User: k.User, Pass: k.Password}.AsMechanism()
	case "scram-sha-256":
		return scram.Auth{User: k.User, Pass: k.Password}.AsSha256Mechanism()
	case "scram-sha-512":
		return scram.Auth{User: k.User, Pass: k.Password}.AsSha512Mechanism()
	}
	return nil
}

// connect makes a client with extra options and checks that a broker
// answers, so that an unreachable cluster or a refused login fails at
// once, within the timeouts, with an error that says which.
func (k Conn) connect(ctx context.Context, extra ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(append(k.clientOptions(), extra...)...)
	if err != nil {
		return nil, &SettingsError{Err: err}
	}
	pctx, cancel := context.WithTimeout(ctx, k.DialTimeout+k.RequestTimeout)
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
func (k Conn) explain(err error) error {
	brokers := strings.Join(k.Brokers, ",")
	var netErr net.Error
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.IllegalSaslState),
		errors.Is(err, kerr.UnsupportedSaslMechanism), errors.Is(err, kerr.ClusterAuthorizationFailed):
		who := "without SASL"
		if k.SASLMechanism != "" {
			who = fmt.Sprintf("as %s with SASL %s", k.User, k.SASLMechanism)
		}
		return fmt.Errorf("Kafka brokers %s: the login %s failed: %w", brokers, who, err)
	case k.SASLMechanism != "" && errors.Is(err, io.EOF):
		// Some brokers hang up on a failed login rather than answer it.
		return fmt.Errorf("Kafka brokers %s: the login as %s with SASL %s failed (the broker closed the connection: wrong user or password?): %w",
			brokers, k.User, k.SASLMechanism, err)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr):
		return fmt.Errorf("cannot reach Kafka brokers %s (dial timeout %v, request timeout %v): %w", brokers, k.DialTimeout, k.RequestTimeout, err)
	}
	return fmt.Errorf("Kafka brokers %s: %w", brokers, err)
}

// topicInfo is what the cluster says about a topic.
type topicInfo struct {
	partitions int
	maxMessage int64 // max.message.bytes, 0 when the cluster did not say
}

// describeTopic looks a topic up; exists is false when the cluster does
// not have it.
func (k Conn) describeTopic(ctx context.Context, adm *kadm.Client, name string) (topicInfo, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, k.RequestTimeout)
	defer cancel()
	details, err := adm.ListTopics(ctx, name)
	if err != nil {
		return topicInfo{}, false, k.explain(err)
	}
	d, ok := details[name]
	if !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
		return topicInfo{}, false, nil
	}
	if d.Err != nil {
		return topicInfo{}, false, k.explain(fmt.Errorf("topic %s: %w", name, d.Err))
	}
	return topicInfo{partitions: len(d.Partitions), maxMessage: maxMessageBytes(ctx, adm, name)}, true, nil
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

// errTopicMissing is the error for a Kafka topic the cluster does not have.
func (k Conn) errTopicMissing(topic string) error {
	return fmt.Errorf("Kafka topic %s does not exist on %s", topic, strings.Join(k.Brokers, ","))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
