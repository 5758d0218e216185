package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/internal/testcheckout"
)

// TestMain makes this test binary double as the seglog binary: run under
// the name "seglog" (testscript puts such a copy first in $PATH), it is
// seglog. The scripts and the subprocess tests run it that way. Run as
// the tests, it fails them if they changed the checkout.
func TestMain(m *testing.M) {
	// Under -race every process sleeps 1 s at exit (to catch late race
	// reports); the subprocesses here are many and short.
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
	}
	testscript.Main(checkedRun{m}, map[string]func(){
		"seglog": func() { os.Exit(Run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// checkedRun runs the tests, then fails them if they changed the checkout
// (unless told to rewrite the golden files).
type checkedRun struct{ m *testing.M }

func (c checkedRun) Run() int { return testcheckout.Run(c.m, *updateGolden) }

// TestScript runs testdata/script/*.txtar end to end against the binary.
// Exact exit codes are checked by the Go tests; `! exec` only tells zero
// from non-zero.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		// $KAFKA is the committed Apache Kafka fixtures, read in place:
		// seglog only reads them, and the checkout check would see a change.
		Setup: func(env *testscript.Env) error {
			abs, err := filepath.Abs(filepath.Join("..", "testdata", "kafka"))
			env.Setenv("KAFKA", abs)
			return err
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"truncate":    cmdTruncate,
			"flipbyte":    cmdFlipbyte,
			"filesize":    cmdFilesize,
			"exitcode":    cmdExitcode,
			"writerecord": cmdWriteRecord,
			"writeentry":  cmdWriteEntry,
			"holdlock":    cmdHoldLock,
			"holdgroup":   cmdHoldGroup,
		},
	})
}

// truncate FILE N: cut (or extend) FILE to N bytes; N may be negative to
// cut that many bytes off the end.
func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: truncate FILE N")
	}
	path := ts.MkAbs(args[0])
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	if n < 0 {
		fi, err := os.Stat(path)
		ts.Check(err)
		n += fi.Size()
	}
	ts.Check(os.Truncate(path, n))
}

// flipbyte FILE POS: invert every bit of the byte at POS.
func cmdFlipbyte(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: flipbyte FILE POS")
	}
	path := ts.MkAbs(args[0])
	pos, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	ts.Check(err)
	defer f.Close()
	var b [1]byte
	_, err = f.ReadAt(b[:], pos)
	ts.Check(err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b[:], pos)
	ts.Check(err)
}

// writerecord FILE POS OFFSET TIMESTAMP VALUE: write a record with that
// offset, timestamp (Unix ns) and value, and no key, at byte POS of FILE
// (a number, or end to append), making FILE if it is missing. A VALUE of
// @NAME is the bytes of file NAME: a record written there makes a value
// shaped like a record.
func cmdWriteRecord(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 5 {
		ts.Fatalf("usage: writerecord FILE POS OFFSET TIMESTAMP VALUE")
	}
	off, err := strconv.ParseUint(args[2], 10, 64)
	ts.Check(err)
	stamp, err := strconv.ParseInt(args[3], 10, 64)
	ts.Check(err)
	value := []byte(args[4])
	if name, ok := strings.CutPrefix(args[4], "@"); ok {
		value, err = os.ReadFile(ts.MkAbs(name))
		ts.Check(err)
	}
	writeAt(ts, args[0], args[1], format.AppendRecord(nil, &format.Record{Offset: off, Timestamp: stamp, Value: value}))
}

// writeentry FILE ENTRY OFFSET VALUE: write an index entry (offset and
// byte position, or timestamp for a .timeindex) as entry number ENTRY of
// FILE (a number, or end to append).
func cmdWriteEntry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: writeentry FILE ENTRY OFFSET VALUE")
	}
	off, err := strconv.ParseUint(args[2], 10, 64)
	ts.Check(err)
	v, err := strconv.ParseInt(args[3], 10, 64)
	ts.Check(err)
	at := args[1]
	if at != "end" {
		n, err := strconv.ParseInt(at, 10, 64)
		ts.Check(err)
		at = strconv.FormatInt(n*format.IndexEntryLen, 10)
	}
	writeAt(ts, args[0], at, format.AppendIndexEntry(nil, format.IndexEntry{Offset: off, Pos: v}))
}

// writeAt writes b at byte pos (a number, or end) of file name.
func writeAt(ts *testscript.TestScript, name, pos string, b []byte) {
	f, err := os.OpenFile(ts.MkAbs(name), os.O_RDWR|os.O_CREATE, 0o644)
	ts.Check(err)
	defer f.Close()
	var at int64
	if pos == "end" {
		fi, err := f.Stat()
		ts.Check(err)
		at = fi.Size()
	} else {
		at, err = strconv.ParseInt(pos, 10, 64)
		ts.Check(err)
	}
	_, err = f.WriteAt(b, at)
	ts.Check(err)
}

// filesize FILE N: FILE is N bytes long (with !: it is not).
func cmdFilesize(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: filesize FILE N")
	}
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	if got := fmt.Sprint(fi.Size()); (got == args[1]) == neg {
		ts.Fatalf("%s is %s bytes long", args[0], got)
	}
}

// exitcode N ARGS...: runs seglog ARGS (stdin from $stdin-file if set, none
// otherwise) and checks its exact exit status, which `! exec` cannot.
// Its stdout and stderr become the script's.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec("seglog", args[1:]...)
	got := 0
	if err != nil {
		ee, ok := err.(interface{ ExitCode() int })
		if !ok {
			ts.Fatalf("seglog: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("seglog %q: exit status %d, want %d", args[1:], got, want)
	}
}

// holdlock DIR: flock DIR exclusively until the script ends, as a writer
// holds a partition's lock and a sweep a topic's, so commands meet a lock
// held by another process (this one).
func cmdHoldLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: holdlock DIR")
	}
	f, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB))
	ts.Defer(func() { f.Close() })
}
