//go:build ignore

// latency measures how long a line takes from entering `seglog append`'s
// stdin to `seglog tail -f` printing it, over records trickled one at a
// time, and how much CPU `tail -f` uses on an idle topic.
//
//	go run bench/latency/main.go -seglog bench/work/seglog [-n 10000] [-gap 1ms] [-idle 10s]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	seglog := flag.String("seglog", "bench/work/seglog", "the seglog binary")
	n := flag.Int("n", 10000, "records to trickle")
	gap := flag.Duration("gap", time.Millisecond, "pause between records")
	idle := flag.Duration("idle", 10*time.Second, "how long to watch tail -f on an idle topic")
	flag.Parse()
	dir, err := os.MkdirTemp("", "seglog-latency-")
	check(err)
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "data")
	check(exec.Command(*seglog, "-d", data, "create", "t", "--partitions", "3").Run())

	tail := exec.Command(*seglog, "-d", data, "tail", "-f", "t", "-n", "0")
	tailOut, err := tail.StdoutPipe()
	check(err)
	tail.Stderr = os.Stderr
	check(tail.Start())

	app := exec.Command(*seglog, "-d", data, "append", "t")
	appIn, err := app.StdinPipe()
	check(err)
	app.Stderr = os.Stderr
	check(app.Start())
	time.Sleep(200 * time.Millisecond) // both running

	// Each line carries the time it was written, in ns since start.
	start := time.Now()
	delays := make([]time.Duration, 0, *n)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(tailOut)
		for len(delays) < *n && sc.Scan() {
			sent, err := strconv.ParseInt(strings.Fields(sc.Text())[0], 10, 64)
			check(err)
			delays = append(delays, time.Since(start)-time.Duration(sent))
		}
	}()
	for i := 0; i < *n; i++ {
		fmt.Fprintf(appIn, "%d record %d\n", time.Since(start).Nanoseconds(), i)
		time.Sleep(*gap)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		fmt.Fprintf(os.Stderr, "latency: only %d of %d records came out of tail -f\n", len(delays), *n)
		os.Exit(1)
	}
	appIn.Close()
	check(app.Wait())
	slices.Sort(delays)
	q := func(p float64) time.Duration { return delays[int(p*float64(len(delays)-1))] }
	fmt.Printf("append -> tail -f, %d records %v apart, 3 partitions: median %v, p90 %v, p99 %v, max %v\n",
		len(delays), *gap, q(0.5).Round(10*time.Microsecond), q(0.9).Round(10*time.Microsecond),
		q(0.99).Round(10*time.Microsecond), delays[len(delays)-1].Round(10*time.Microsecond))

	// Idle: CPU time tail -f uses over the idle period.
	before := cpuTime(tail.Process.Pid)
	time.Sleep(*idle)
	used := cpuTime(tail.Process.Pid) - before
	fmt.Printf("tail -f on an idle topic: %v of CPU in %v (%.3f%% of a core)\n",
		used, *idle, 100*used.Seconds()/idle.Seconds())
	tail.Process.Signal(os.Interrupt)
	tail.Wait()
}

// cpuTime is the user+system CPU time of process pid (from /proc).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	check(err)
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // clock ticks: 100 Hz
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "latency:", err)
		os.Exit(1)
	}
}
