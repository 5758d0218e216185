package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A full disk or a failing sync in the middle of a copy fails it with that
// error and leaves nothing in the destination: no partition, no build.
func TestCopyPartitionFaults(t *testing.T) {
	src := Open(t.TempDir())
	if err := src.CreateTopic("t", 1, Settings{SegmentBytes: 400}); err != nil {
		t.Fatal(err)
	}
	w, err := src.OpenWriter("t", 0, WriterOptions{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if _, err := w.Append(1700000000000000000+int64(i), nil, []byte("a value of some length")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		arm   func(fs *faultFS)
		errno syscall.Errno
	}{
		{"log write ENOSPC", func(fs *faultFS) { fs.failWrite(".log", 100, syscall.ENOSPC) }, syscall.ENOSPC},
		{"index write EIO", func(fs *faultFS) { fs.failWrite(".timeindex", 0, syscall.EIO) }, syscall.EIO},
		{"sync EIO", func(fs *faultFS) { fs.failSync(".log", syscall.EIO) }, syscall.EIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fault := newFaultFS()
			tc.arm(fault)
			dst := &Store{dir: t.TempDir(), fs: fault}
			_, err := src.CopyPartition("t", 0, dst, CopyOptions{ToPartition: -1})
			if !errors.Is(err, tc.errno) {
				t.Fatalf("copy: %v, want %v", err, tc.errno)
			}
			entries, _ := os.ReadDir(filepath.Join(dst.dir, "t"))
			for _, e := range entries {
				if e.IsDir() {
					t.Errorf("left behind: %s", e.Name())
				}
			}
		})
	}
}
