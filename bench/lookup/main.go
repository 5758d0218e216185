//go:build ignore

// Command lookup times reading one record of a partition: at a random
// offset, at a random time (what `read --since` does), and at offset 0 for
// comparison, interleaved so that all of them see the same conditions.
// bench/run builds and runs it; it only reads the partition.
//
//	lookup -data DIR [-topic t] [-n 2000] [-seed 1] [-round 0]             in-process
//	lookup -data DIR [-topic t] -seglog BIN [-n 200] [-seed 1] [-round 0]  end to end
//
// In-process, each lookup is what a command does to print one record:
// logstore.OpenPartitionDir, then Read(offset) or ReadAtTime(t), Next,
// Record and Close. The same lookups on a partition opened once are timed
// too (kept-open-*), to show the lookup apart from listing the segments.
//
// End to end (-seglog), each lookup is one process, timed from its start
// to its exit:
//
//	seglog -d DIR read TOPIC --offset N --count 1 --format value
//	seglog -d DIR read TOPIC --since RFC3339NANO --count 1 --format value
//
// The partition must hold the lines of a bench/gen file, one record each
// (line N starts with N): every record read is checked against the offset
// asked for, and every time lookup against Partition.OffsetAtTime.
//
// stdout, tab-separated:
//
//	partition  RECORDS  SEGMENTS  FIRST_TS_NS  LAST_TS_NS
//	KIND  COUNT  MEDIAN_NS  P99_NS  MAX_NS       one line per kind
//	children  CPU_S  MAX_RSS_KIB                 end to end only: of the seglog processes
//
// KIND is offset0, offset, time, kept-open-offset0, kept-open-offset,
// kept-open-time (in-process) or cli-offset0, cli-offset, cli-time.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seglog/seglog/logstore"
)

func main() {
	data := flag.String("data", "", "the data directory")
	topic := flag.String("topic", "t", "the topic (its partition 0 is read)")
	n := flag.Int("n", 0, "lookups of each kind (default 2000 in-process, 200 end to end)")
	seglog := flag.String("seglog", "", "the seglog binary: time whole processes instead of in-process calls")
	seed := flag.Uint64("seed", 1, "seed of the random offsets and times")
	round := flag.Int("round", 0, "rotates the order of the kinds in each step, so that none always goes first")
	flag.Parse()
	if *data == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: lookup -data DIR [-topic t] [-seglog BIN] [-n N] [-seed S] [-round R]")
		os.Exit(2)
	}
	if *n <= 0 {
		*n = 2000
		if *seglog != "" {
			*n = 200
		}
	}
	l := &lookups{dir: filepath.Join(*data, *topic, "0"), name: *topic + "/0"}
	var err error
	l.p, err = logstore.OpenPartitionDir(l.dir, l.name)
	check(err)
	start, next, err := l.p.Bounds()
	check(err)
	if next <= start {
		fail("partition %s is empty", l.name)
	}
	first, err := readOne(l.p, start)
	check(err)
	last, err := readOne(l.p, next-1)
	check(err)
	fmt.Printf("partition\t%d\t%d\t%d\t%d\n", next-start, countSegments(l.dir), first.ts, last.ts)

	l.start = start
	rng := rand.New(rand.NewPCG(*seed, *seed^0x9E3779B97F4A7C15))
	l.offsets = make([]uint64, *n)
	l.times = make([]int64, *n)
	l.want = make([]uint64, *n)
	for i := range *n {
		l.offsets[i] = start + rng.Uint64N(next-start)
		l.times[i] = first.ts + rng.Int64N(last.ts-first.ts+1)
		// Where each time lookup must land, found before timing.
		l.want[i], err = l.p.OffsetAtTime(l.times[i])
		check(err)
	}

	// Kinds are timed in phases, interleaved within each: lookups on a
	// partition kept open apart from those that list the directory (most
	// of a cold lookup's work) and from the time lookups (dozens of reads of the
	// time index), which would otherwise leave each of them a cold CPU
	// cache, unlike a program doing lookups on an open partition.
	var phases [][]kind
	if *seglog == "" {
		phases = l.inProcess()
	} else {
		phases = [][]kind{l.endToEnd(*seglog, *data, *topic)}
	}
	for _, kinds := range phases {
		lat := make([][]time.Duration, len(kinds))
		for i := range *n {
			for j := range kinds {
				k := (i + j + *round) % len(kinds)
				d, err := kinds[k].run(i)
				if err != nil {
					fail("%s lookup %d: %v", kinds[k].name, i, err)
				}
				lat[k] = append(lat[k], d)
			}
		}
		for k, ds := range lat {
			slices.Sort(ds)
			fmt.Printf("%s\t%d\t%d\t%d\t%d\n", kinds[k].name, len(ds), ds[(len(ds)+1)/2-1].Nanoseconds(),
				ds[(len(ds)*99+99)/100-1].Nanoseconds(), ds[len(ds)-1].Nanoseconds()) // nearest-rank p99
		}
	}
	if *seglog != "" {
		fmt.Printf("children\t%.3f\t%d\n", l.childCPU.Seconds(), l.childRSS)
	}
}

type lookups struct {
	dir, name string
	p         *logstore.Partition // opened once, for the kept-open kinds
	start     uint64
	offsets   []uint64
	times     []int64
	want      []uint64 // offset of the record at or after times[i]

	childCPU time.Duration
	childRSS int64
}

// kind is one sort of lookup; run does lookup i and returns its time.
type kind struct {
	name string
	run  func(i int) (time.Duration, error)
}

// got is what a lookup read, copied out before its iterator is closed.
type got struct {
	offset uint64
	ts     int64
	prefix [24]byte
	n      int
}

func readOne(p *logstore.Partition, offset uint64) (got, error) {
	it, err := p.Read(offset)
	if err != nil {
		return got{}, err
	}
	return first(it)
}

// first returns the iterator's first record and closes it.
func first(it *logstore.Iterator) (got, error) {
	var g got
	if !it.Next() {
		err := it.Err()
		it.Close()
		if err == nil {
			err = fmt.Errorf("no record")
		}
		return g, err
	}
	r := it.Record()
	g.offset, g.ts = r.Offset, r.Timestamp
	g.n = copy(g.prefix[:], r.Value)
	return g, it.Close()
}

// checkLine checks that value (a bench/gen line) is the line of offset o.
func checkLine(value []byte, o, start uint64) error {
	num := strconv.AppendUint(nil, o-start, 10)
	if !bytes.HasPrefix(value, append(num, ' ')) {
		return fmt.Errorf("offset %d: got %q, want a line starting %q", o, value, num)
	}
	return nil
}

func (g got) check(o, start uint64) error {
	if g.offset != o {
		return fmt.Errorf("asked for offset %d, got %d", o, g.offset)
	}
	return checkLine(g.prefix[:g.n], o, start)
}

// inProcess returns the in-process kinds in phases: a partition opened per
// lookup, then one kept open: by offset, and by time.
func (l *lookups) inProcess() [][]kind {
	open := func(o uint64) (got, error) {
		p, err := logstore.OpenPartitionDir(l.dir, l.name)
		if err != nil {
			return got{}, err
		}
		return readOne(p, o)
	}
	openAtTime := func(p *logstore.Partition, t int64) (got, error) {
		it, err := p.ReadAtTime(t)
		if err != nil {
			return got{}, err
		}
		return first(it)
	}
	byOffset := func(name string, pick func(i int) uint64, read func(o uint64) (got, error)) kind {
		return kind{name, func(i int) (time.Duration, error) {
			o := pick(i)
			t0 := time.Now()
			g, err := read(o)
			d := time.Since(t0)
			if err != nil {
				return 0, err
			}
			return d, g.check(o, l.start)
		}}
	}
	byTime := func(name string, read func(t int64) (got, error)) kind {
		return kind{name, func(i int) (time.Duration, error) {
			t0 := time.Now()
			g, err := read(l.times[i])
			d := time.Since(t0)
			if err != nil {
				return 0, err
			}
			if g.ts < l.times[i] {
				return 0, fmt.Errorf("time %d: got a record of %d", l.times[i], g.ts)
			}
			return d, g.check(l.want[i], l.start)
		}}
	}
	zero := func(int) uint64 { return l.start }
	random := func(i int) uint64 { return l.offsets[i] }
	kept := func(o uint64) (got, error) { return readOne(l.p, o) }
	return [][]kind{{
		byOffset("offset0", zero, open),
		byOffset("offset", random, open),
		byTime("time", func(t int64) (got, error) {
			p, err := logstore.OpenPartitionDir(l.dir, l.name)
			if err != nil {
				return got{}, err
			}
			return openAtTime(p, t)
		}),
	}, {
		byOffset("kept-open-offset0", zero, kept),
		byOffset("kept-open-offset", random, kept),
	}, {
		byTime("kept-open-time", func(t int64) (got, error) { return openAtTime(l.p, t) }),
	}}
}

func (l *lookups) endToEnd(seglog, data, topic string) []kind {
	var out, errb bytes.Buffer
	run := func(want uint64, args ...string) (time.Duration, error) {
		out.Reset()
		errb.Reset()
		cmd := exec.Command(seglog, append([]string{"-d", data, "read", topic}, args...)...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		t0 := time.Now()
		err := cmd.Run()
		d := time.Since(t0)
		if err != nil {
			return 0, fmt.Errorf("seglog read %s: %v: %s", strings.Join(args, " "), err, errb.Bytes())
		}
		if ps := cmd.ProcessState; ps != nil {
			l.childCPU += ps.UserTime() + ps.SystemTime()
			if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
				l.childRSS = max(l.childRSS, int64(ru.Maxrss))
			}
		}
		if bytes.Count(out.Bytes(), []byte{'\n'}) != 1 {
			return 0, fmt.Errorf("seglog read %s printed %d bytes, want one line", strings.Join(args, " "), out.Len())
		}
		return d, checkLine(out.Bytes(), want, l.start)
	}
	return []kind{
		{"cli-offset0", func(i int) (time.Duration, error) {
			return run(l.start, "--offset", strconv.FormatUint(l.start, 10), "--count", "1", "--format", "value")
		}},
		{"cli-offset", func(i int) (time.Duration, error) {
			return run(l.offsets[i], "--offset", strconv.FormatUint(l.offsets[i], 10), "--count", "1", "--format", "value")
		}},
		{"cli-time", func(i int) (time.Duration, error) {
			since := time.Unix(0, l.times[i]).UTC().Format(time.RFC3339Nano)
			return run(l.want[i], "--since", since, "--count", "1", "--format", "value")
		}},
	}
}

func countSegments(dir string) int {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	return len(logs)
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "lookup: "+format+"\n", args...)
	os.Exit(1)
}
