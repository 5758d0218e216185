package logstore

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
	"github.com/seglog/seglog/logstore/internal/segfile"
)

// FuzzSegmentCheck feeds arbitrary bytes, in pieces of arbitrary sizes, to
// the streaming check copies use, and compares its verdict with the
// scanner readers use over the same bytes as a closed segment: the same
// records pass, and the first break is reported at the same byte with
// the same expected offset.
func FuzzSegmentCheck(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, log, pieces []byte) {
		if len(log) > 1<<20 {
			return
		}
		dir := t.TempDir()
		seg := segment{dir: dir, base: 0}
		if err := os.WriteFile(seg.path(format.LogExt), log, 0o644); err != nil {
			t.Fatal(err)
		}
		fh, err := fsx.OpenRead(seg.path(format.LogExt))
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		sc, err := segfile.NewScanner(segfileSegment(seg, osFile{File: fh}, nil, 0, false), -1, segfile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for sc.Next() {
		}
		if sc.Err() != nil {
			t.Fatal(sc.Err())
		}
		want := sc.Damage()
		sc.Close()

		check := newSegmentCheck("test", 0, 1)
		rest := log
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if len(pieces) > 0 {
				n = min(n, 1+int(pieces[i%len(pieces)]))
			}
			if _, err := check.Write(rest[:n]); err != nil {
				break
			}
			rest = rest[n:]
		}
		err = check.finish()
		if check.Next() != sc.NextOffset() {
			t.Fatalf("check passed records up to %d, the scanner %d", check.Next(), sc.NextOffset())
		}
		if want == nil {
			if err != nil {
				t.Fatalf("the scanner took the whole segment, the check failed: %v", err)
			}
			return
		}
		var ce *CorruptionError
		if !errors.As(err, &ce) || ce.Pos != want.Pos || ce.Offset != int64(want.Offset) {
			t.Fatalf("check: %v; scanner: %v", err, want)
		}
	})
}

// FuzzImportPartition feeds arbitrary bytes to import-partition (see
// checkImport).
func FuzzImportPartition(f *testing.F) {
	full := fuzzStream(f)
	f.Add(full)
	f.Add(full[:len(full)/2])
	f.Add([]byte{})
	flipped := bytes.Clone(full)
	flipped[len(flipped)/3] ^= 0x10
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) <= 1<<20 {
			checkImport(t, in)
		}
	})
}

// fuzzStream is the stream of a small partition of a few segments.
func fuzzStream(tb testing.TB) []byte {
	src := Open(tb.TempDir())
	if err := src.CreateTopic("t", 1, Settings{SegmentBytes: 300}); err != nil {
		tb.Fatal(err)
	}
	w, err := src.OpenWriter("t", 0, WriterOptions{Sync: SyncNever})
	if err != nil {
		tb.Fatal(err)
	}
	for i := range 12 {
		if _, err := w.Append(1700000000000000000+int64(i), []byte{'k', byte('a' + i)}, bytes.Repeat([]byte{'v'}, i*7)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	var stream bytes.Buffer
	if _, err := src.ExportPartition("t", 0, &stream, CopyOptions{ToPartition: -1}); err != nil {
		tb.Fatal(err)
	}
	return stream.Bytes()
}

// TestImportRandomDamage is FuzzImportPartition's check over streams with
// a few random bytes changed: header fields, sizes, names, JSON, records.
func TestImportRandomDamage(t *testing.T) {
	full := fuzzStream(t)
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		in := bytes.Clone(full)
		for range 1 + r.IntN(4) {
			in[r.IntN(len(in))] = byte(r.IntN(256))
		}
		checkImport(t, in)
	}
}

// checkImport imports in: it must fail cleanly (leaving nothing) or make
// a partition that passes Verify.
func checkImport(t *testing.T, in []byte) {
	t.Helper()
	dst := Open(t.TempDir())
	rep, err := dst.ImportPartition("t", 0, bytes.NewReader(in), CopyOptions{})
	pdir := dst.PartitionDir("t", 0)
	if err != nil {
		if _, serr := os.Stat(pdir); !os.IsNotExist(serr) {
			t.Fatalf("a failed import (%v) left %s", err, pdir)
		}
		if m, _ := filepath.Glob(filepath.Join(dst.Dir(), "t", ".copy-*")); len(m) > 0 {
			t.Fatalf("a failed import (%v) left %v", err, m)
		}
		return
	}
	p, err := OpenPartitionDir(pdir, "t/0")
	if err != nil {
		t.Fatal(err)
	}
	// Gaps between segments are the source's business; nothing else
	// may be wrong.
	var problems []Finding
	vr, err := verifyOne(p, VerifyOptions{Jobs: 1, Finding: func(fd Finding) error {
		if fd.Severity == SeverityProblem && fd.Kind != FindingGap {
			problems = append(problems, fd)
		}
		return nil
	}})
	if err != nil || len(problems) > 0 || vr.Records != rep.Records {
		t.Fatalf("imported partition: %+v, %v, %v (import said %d records)", vr, problems, err, rep.Records)
	}
}
