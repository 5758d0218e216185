//go:build ignore

// Command gen writes benchmark input for bench/run: N lines of exactly
// WIDTH bytes each (WIDTH-1 printable ASCII characters and '\n'). Every line
// starts with its line number and continues with pseudo-random text, so no
// two lines are alike and nothing compresses trivially.
//
// Usage: go run bench/gen/main.go N WIDTH > FILE
//
// It is built with the ignore tag so that `go build ./...` and `go test ./...`
// of the module never see it; bench/run builds it by file name.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen N WIDTH")
		os.Exit(2)
	}
	n, err1 := strconv.ParseInt(os.Args[1], 10, 64)
	width, err2 := strconv.Atoi(os.Args[2])
	if err1 != nil || err2 != nil || n < 0 || width < 2 {
		fmt.Fprintln(os.Stderr, "gen: N must be >= 0 and WIDTH >= 2")
		os.Exit(2)
	}

	// A pool of pseudo-random printable characters (xorshift64*), longer than
	// any line we copy from it in one piece.
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;-_/=+"
	pool := make([]byte, 1<<20)
	s := uint64(0x9E3779B97F4A7C15)
	next := func() uint64 {
		s ^= s >> 12
		s ^= s << 25
		s ^= s >> 27
		return s * 2685821657736338717
	}
	for i := range pool {
		pool[i] = alphabet[next()%uint64(len(alphabet))]
	}

	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	line := make([]byte, width)
	line[width-1] = '\n'
	body := line[:width-1]
	for i := int64(0); i < n; i++ {
		num := strconv.AppendInt(line[:0], i, 10)
		k := len(num)
		if k < len(body) {
			body[k] = ' '
			k++
		}
		for k < len(body) {
			off := int(next() % uint64(len(pool)-4096))
			k += copy(body[k:], pool[off:off+min(len(body)-k, 4096)])
		}
		if _, err := w.Write(line); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
