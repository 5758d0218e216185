//go:build ignore

// Command kafka runs an in-process Kafka-protocol cluster (franz-go's
// kfake, one broker) on loopback for bench/run's kafka group, with some
// one-partition topics made up front:
//
//	kafka -topics s0,k0 > ADDR_FILE
//
// It prints the broker's HOST:PORT on a line of its own, then serves until
// its stdin reaches end of file or it gets SIGINT or SIGTERM.
//
// It is built with the ignore tag so that `go build ./...` and `go test ./...`
// of the module never see it; bench/run builds it by file name.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	topics := flag.String("topics", "", "comma-separated topics to create, one partition each")
	dir := flag.String("dir", "", "keep the cluster's logs in files under `DIR`, as a broker does, rather than in memory")
	flag.Parse()
	opts := []kfake.Opt{kfake.NumBrokers(1)}
	if *dir != "" {
		opts = append(opts, kfake.DataDir(*dir))
	}
	if *topics != "" {
		opts = append(opts, kfake.SeedTopics(1, strings.Split(*topics, ",")...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafka:", err)
		os.Exit(1)
	}
	defer c.Close()
	fmt.Println(strings.Join(c.ListenAddrs(), ","))
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	select {
	case <-done:
	case <-sigs:
	}
}
