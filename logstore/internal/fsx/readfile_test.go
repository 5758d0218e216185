package fsx

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// ReadFile must read as os.File does: the bytes asked for, or fewer with
// io.EOF at the end; and describe the file as os.Stat does.
func TestReadFileReadsAndDescribesAsOSFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o640); err != nil {
		t.Fatal(err)
	}
	f, err := OpenReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct {
		off     int64
		n       int
		want    string
		wantEOF bool
	}{
		{0, 4, "0123", false},
		{6, 4, "6789", false},
		{8, 4, "89", true},
		{10, 1, "", true},
		{20, 1, "", true},
	} {
		b := make([]byte, c.n)
		m, err := f.ReadAt(b, c.off)
		if string(b[:m]) != c.want || errors.Is(err, io.EOF) != c.wantEOF || (err != nil && !errors.Is(err, io.EOF)) {
			t.Errorf("ReadAt(%d bytes at %d) = %q, %v; want %q, EOF %v", c.n, c.off, b[:m], err, c.want, c.wantEOF)
		}
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != want.Size() || fi.Mode() != want.Mode() || !fi.ModTime().Equal(want.ModTime()) || fi.IsDir() {
		t.Errorf("Stat = size %d mode %v time %v; os.Stat: %d %v %v", fi.Size(), fi.Mode(), fi.ModTime(), want.Size(), want.Mode(), want.ModTime())
	}
	if size, err := f.Size(); size != want.Size() || err != nil {
		t.Errorf("Size = %d, %v; os.Stat: %d", size, err, want.Size())
	}
	if f.Name() != path {
		t.Errorf("Name = %q, want %q", f.Name(), path)
	}
}

// OpenIndex opens only a regular file: a symbolic link, a pipe (which
// must not block the open) and a directory are each a *NotRegularError
// naming the path, with os.Stat's mode for what is there.
func TestOpenIndexRefusesOthers(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	if err := os.WriteFile(reg, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, size, err := OpenIndex(reg)
	if err != nil || size != 3 {
		t.Fatalf("OpenIndex(regular) = %d, %v", size, err)
	}
	f.Close()

	link := filepath.Join(dir, "link")
	fifo := filepath.Join(dir, "fifo")
	sub := filepath.Join(dir, "sub")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		mode fs.FileMode
	}{{link, fs.ModeSymlink}, {fifo, fs.ModeNamedPipe}, {sub, fs.ModeDir}} {
		_, _, err := OpenIndex(c.path)
		var nr *NotRegularError
		if !errors.As(err, &nr) || nr.Path != c.path || nr.Mode.Type() != c.mode {
			t.Errorf("OpenIndex(%s) = %v; want a NotRegularError of type %v", c.path, err, c.mode)
		}
	}
	if _, _, err := OpenIndex(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenIndex(missing) = %v, want ErrNotExist", err)
	}
}

func TestListDir(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for _, name := range []string{"b.log", "a.index", "c", "00000000000000000007.log"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	want = append(want, "sub")
	entries, err := ListDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		if isDir := e.Name() == "sub"; e.IsDir() != isDir {
			t.Errorf("%s: IsDir %v", e.Name(), e.IsDir())
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("ListDir: %v, want %v", got, want)
	}

	missing := filepath.Join(dir, "missing")
	if _, err := ListDir(missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("ListDir of a missing directory: %v", err)
	}
	file := filepath.Join(dir, "c")
	if _, err := ListDir(file); !errors.Is(err, unix.ENOTDIR) || !strings.Contains(err.Error(), file) {
		t.Errorf("ListDir of a file: %v", err)
	}
}
