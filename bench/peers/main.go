// Command peers runs the workloads of bench/run in-process against
// github.com/tidwall/wal, so that seglog's figures can be set beside those of
// an existing Go log library measured on the same machine and inputs.
//
// One workload per invocation, so that the process's peak RSS belongs to that
// workload alone:
//
//	peers -workload append      -in FILE -dir DIR [-keep]
//	peers -workload append-sync -in FILE -dir DIR [-keep]
//	peers -workload read        -dir DIR [-out FILE]
//	peers -workload lookup      -dir DIR [-lookups 1000] [-seed 1]
//
// FILE holds newline-terminated lines (bench/gen/main.go); each line, without
// its newline, becomes one entry. read and lookup open the wal that an
// earlier `append -keep` left in DIR and never change it.
//
// stdout gets one tab-separated line per workload:
//
//	workload  records  bytes  seconds  cpu_seconds  peak_rss_kib
//
// and lookup adds a second line:
//
//	lookup-ns  median_ns  p99_ns  first_ns
//
// A human summary goes to stderr. See README.md.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"

	"github.com/tidwall/wal"
)

type config struct {
	workload     string
	in           string
	dir          string
	out          string
	keep         bool
	batchRecords int
	batchBytes   int
	segmentSize  int
	copyReads    bool
	lookups      int
	seed         uint64
	cpuProfile   string
}

// result is what one workload reports on its stdout line.
type result struct {
	records int64
	bytes   int64
	elapsed time.Duration
	cpu     time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.workload, "workload", "", "append, append-sync, read or lookup")
	flag.StringVar(&c.in, "in", "", "input file of newline-terminated lines (append, append-sync)")
	flag.StringVar(&c.dir, "dir", "", "wal directory: created by append (must be absent or empty; default a new temporary directory), read by read and lookup")
	flag.StringVar(&c.out, "out", "", "read: write the entries, one a line, to this file instead of discarding them (e.g. /dev/null, or a file to cmp with the input)")
	flag.BoolVar(&c.keep, "keep", false, "append: keep the wal directory afterwards (for read and lookup)")
	flag.IntVar(&c.batchRecords, "batch-records", 4096, "append: entries per wal.Batch at most")
	flag.IntVar(&c.batchBytes, "batch-bytes", 1<<20, "append: bytes of entry data per wal.Batch at most")
	flag.IntVar(&c.segmentSize, "segment-size", 0, "wal segment size in bytes (0: the library's default, 20 MiB)")
	flag.BoolVar(&c.copyReads, "copy", false, "read, lookup: let wal.Read copy each entry (the library's default) instead of Options.NoCopy")
	flag.IntVar(&c.lookups, "lookups", 1000, "lookup: number of entries read at random indexes")
	flag.Uint64Var(&c.seed, "seed", 1, "lookup: seed of the random indexes")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: peers -workload append|append-sync|read|lookup [flags]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		usageError("unexpected argument %q", flag.Arg(0))
	}

	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "peers: %v\n", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "peers: %v\n", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}

	var err error
	switch c.workload {
	case "append", "append-sync":
		if c.in == "" {
			usageError("-workload %s needs -in FILE", c.workload)
		}
		if c.batchRecords < 1 || c.batchBytes < 1 {
			usageError("-batch-records and -batch-bytes must be positive")
		}
		err = runAppend(&c)
	case "read", "lookup":
		if c.dir == "" {
			usageError("-workload %s needs -dir DIR (a wal written by `-workload append -keep`)", c.workload)
		}
		if c.workload == "read" {
			err = runRead(&c)
		} else {
			if c.lookups < 1 {
				usageError("-lookups must be positive")
			}
			err = runLookup(&c)
		}
	case "":
		usageError("-workload is required")
	default:
		usageError("unknown workload %q", c.workload)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "peers: %s: %v\n", c.workload, err)
		pprof.StopCPUProfile() // a no-op unless -cpuprofile started one
		os.Exit(1)
	}
}

func usageError(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "peers: "+format+"\n", args...)
	flag.Usage()
	os.Exit(2)
}

func (c *config) options() *wal.Options {
	return &wal.Options{
		NoSync:      true,
		SegmentSize: c.segmentSize,
		NoCopy:      !c.copyReads,
	}
}

// cpuTime is the process's user plus system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's peak resident set size in KiB (ru_maxrss).
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss)
}

// report prints the machine-readable line on stdout.
func report(name string, r result) int64 {
	rss := peakRSS()
	fmt.Printf("%s\t%d\t%d\t%.6f\t%.3f\t%d\n", name, r.records, r.bytes, r.elapsed.Seconds(), r.cpu.Seconds(), rss)
	return rss
}

// summary prints the human line on stderr.
func summary(name string, r result, rss int64, extra string) {
	s := r.elapsed.Seconds()
	fmt.Fprintf(os.Stderr, "tidwall/wal %s: %d records, %.1f MB in %.3f s (%s rec/s, %.0f MB/s), cpu %.2f s, peak RSS %.1f MiB%s\n",
		name, r.records, float64(r.bytes)/1e6, s, rate(float64(r.records)/s), float64(r.bytes)/1e6/s,
		r.cpu.Seconds(), float64(rss)/1024, extra)
}

func rate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2f M", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1f k", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}

// ---------------------------------------------------------------- append

// prepareDir returns the wal directory for append, made fresh: the given
// one must be absent or empty; without one, a new temporary directory.
func prepareDir(dir string) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", "peers-wal-")
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return dir, os.MkdirAll(dir, 0o755)
	case err != nil:
		return "", err
	case len(entries) > 0:
		return "", fmt.Errorf("%s is not empty: append needs a fresh wal directory", dir)
	}
	return dir, nil
}

// lineReader hands out the lines of r without their newline, with no
// allocation per line: a line is valid until the next call.
type lineReader struct {
	r    *bufio.Reader
	long []byte // a line longer than r's buffer, put together here
}

func (lr *lineReader) next() ([]byte, error) {
	line, err := lr.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		lr.long = append(lr.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = lr.r.ReadSlice('\n')
			lr.long = append(lr.long, line...)
		}
		line = lr.long
	}
	switch {
	case err == nil:
		return line[:len(line)-1], nil
	case err == io.EOF && len(line) > 0:
		return line, nil // last line without a newline
	}
	return nil, err
}

func runAppend(c *config) error {
	dir, err := prepareDir(c.dir)
	if err != nil {
		return err
	}
	if !c.keep {
		defer os.RemoveAll(dir)
	}
	f, err := os.Open(c.in)
	if err != nil {
		return err
	}
	defer f.Close()

	var r result
	var closeTime time.Duration
	cpu0, t0 := cpuTime(), time.Now()
	log, err := wal.Open(dir, c.options())
	if err != nil {
		return err
	}
	lr := lineReader{r: bufio.NewReaderSize(f, 1<<20)}
	var b wal.Batch
	var index uint64 = 1
	n, nbytes := 0, 0
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", c.in, err)
		}
		b.Write(index, line) // copies line into the batch
		index++
		r.records++
		r.bytes += int64(len(line)) + 1
		n++
		nbytes += len(line)
		if n >= c.batchRecords || nbytes >= c.batchBytes {
			if err := log.WriteBatch(&b); err != nil { // clears b
				return err
			}
			n, nbytes = 0, 0
		}
	}
	if n > 0 {
		if err := log.WriteBatch(&b); err != nil {
			return err
		}
	}
	if c.workload == "append-sync" {
		// Like seglog's default --sync exit: one fsync of what is left at the end.
		if err := log.Sync(); err != nil {
			return err
		}
		if err := log.Close(); err != nil {
			return err
		}
		r.elapsed, r.cpu = time.Since(t0), cpuTime()-cpu0
	} else {
		// wal's Close fsyncs the tail segment whatever NoSync says: keep it
		// out of the no-sync figure, and show it apart.
		r.elapsed, r.cpu = time.Since(t0), cpuTime()-cpu0
		t1 := time.Now()
		if err := log.Close(); err != nil {
			return err
		}
		closeTime = time.Since(t1)
	}

	rss := report(c.workload, r)
	size, segs := dirSize(dir)
	extra := fmt.Sprintf("; wal %.1f MB in %d segment files", float64(size)/1e6, segs)
	if c.workload == "append" {
		extra += fmt.Sprintf("; Close (fsync of the tail segment, not counted) %.3f s", closeTime.Seconds())
	}
	if c.keep {
		extra += "; kept in " + dir
	}
	summary(c.workload, r, rss, extra)
	return nil
}

func dirSize(dir string) (size int64, files int) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
			files++
		}
	}
	return size, files
}

// ---------------------------------------------------------------- read

// openExisting opens the wal in c.dir, which must hold one.
func openExisting(c *config) (*wal.Log, error) {
	if _, err := os.Stat(filepath.Join(c.dir, fmt.Sprintf("%020d", 1))); err != nil {
		return nil, fmt.Errorf("%s holds no wal (run -workload append -keep -dir %s first): %w", c.dir, c.dir, err)
	}
	return wal.Open(c.dir, c.options())
}

func runRead(c *config) error {
	var out io.Writer = io.Discard
	if c.out != "" {
		f, err := os.Create(c.out)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}

	var r result
	cpu0, t0 := cpuTime(), time.Now()
	log, err := openExisting(c) // Open reads the whole tail segment: counted, as a command's start would be
	if err != nil {
		return err
	}
	first, err := log.FirstIndex()
	if err != nil {
		return err
	}
	last, err := log.LastIndex()
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 256<<10)
	for i := first; i <= last && last > 0; i++ {
		data, err := log.Read(i)
		if err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		w.Write(data)
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
		r.records++
		r.bytes += int64(len(data)) + 1
	}
	if err := w.Flush(); err != nil {
		return err
	}
	r.elapsed, r.cpu = time.Since(t0), cpuTime()-cpu0
	if err := log.Close(); err != nil {
		return err
	}
	if c.out != "" {
		if err := out.(*os.File).Close(); err != nil {
			return err
		}
	}

	rss := report("read", r)
	summary("read", r, rss, "")
	return nil
}

// ---------------------------------------------------------------- lookup

func runLookup(c *config) error {
	t0 := time.Now()
	log, err := openExisting(c)
	if err != nil {
		return err
	}
	defer log.Close()
	openTime := time.Since(t0)
	first, err := log.FirstIndex()
	if err != nil {
		return err
	}
	last, err := log.LastIndex()
	if err != nil {
		return err
	}
	if last == 0 {
		return errors.New("the wal is empty")
	}

	// Index 1 right after opening, as a fresh process reading from the start
	// would: wal.Open loaded only the last segment, so this loads the first.
	t1 := time.Now()
	if _, err := log.Read(first); err != nil {
		return fmt.Errorf("entry %d: %w", first, err)
	}
	firstTime := time.Since(t1)

	rng := rand.New(rand.NewPCG(c.seed, c.seed^0x9E3779B97F4A7C15))
	idx := make([]uint64, c.lookups)
	for i := range idx {
		idx[i] = first + rng.Uint64N(last-first+1)
	}
	lat := make([]time.Duration, c.lookups)
	var r result
	cpu1, t2 := cpuTime(), time.Now()
	for i, x := range idx {
		ts := time.Now()
		data, err := log.Read(x)
		lat[i] = time.Since(ts)
		if err != nil {
			return fmt.Errorf("entry %d: %w", x, err)
		}
		r.records++
		r.bytes += int64(len(data))
	}
	r.elapsed, r.cpu = time.Since(t2), cpuTime()-cpu1

	slices.Sort(lat)
	median := lat[(len(lat)+1)/2-1]
	p99 := lat[(len(lat)*99+99)/100-1] // nearest rank
	rss := report("lookup", r)
	fmt.Printf("lookup-ns\t%d\t%d\t%d\n", median.Nanoseconds(), p99.Nanoseconds(), firstTime.Nanoseconds())
	fmt.Fprintf(os.Stderr, "tidwall/wal lookup: %d reads at random indexes of %d..%d (seed %d): median %s, p99 %s, max %s; index %d after open %s; open %s; cpu %.2f s, peak RSS %.1f MiB\n",
		r.records, first, last, c.seed, median, p99, lat[len(lat)-1], first, firstTime, openTime, r.cpu.Seconds(), float64(rss)/1024)
	return nil
}
