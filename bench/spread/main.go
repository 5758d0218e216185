//go:build ignore

// Command spread appends N records round-robin over every partition of an
// existing topic, as one append run without keys would (record i goes to
// partition i mod P, timestamps increasing by one nanosecond from record
// to record), but with one partition's writer open at a time: it sets up
// topics of thousands of partitions for the readers' benchmarks in
// docs/performance.md, whatever append itself can hold open.
//
// Usage: go run bench/spread/main.go DATA-DIR TOPIC N
//
// The values are "record I" (I from 0). It is built with the ignore tag so
// that `go build ./...` and `go test ./...` of the module never see it.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/seglog/seglog/logstore"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: spread DATA-DIR TOPIC N")
		os.Exit(2)
	}
	n, err := strconv.ParseInt(os.Args[3], 10, 64)
	if err != nil || n < 0 {
		fmt.Fprintln(os.Stderr, "spread: N must be a whole number >= 0")
		os.Exit(2)
	}
	if err := spread(logstore.Open(os.Args[1]), os.Args[2], n); err != nil {
		fmt.Fprintln(os.Stderr, "spread:", err)
		os.Exit(1)
	}
}

func spread(s *logstore.Store, topic string, n int64) error {
	t, err := s.Topic(topic)
	if err != nil {
		return err
	}
	parts := int64(t.Partitions)
	t0 := time.Now().UnixNano()
	for p := range parts {
		w, err := s.OpenWriter(topic, int(p), logstore.WriterOptions{Sync: logstore.SyncNever})
		if err != nil {
			return err
		}
		for i := p; i < n; i += parts {
			if _, err := w.Append(t0+i, nil, fmt.Appendf(nil, "record %d", i)); err != nil {
				w.Close()
				return err
			}
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
	return nil
}
