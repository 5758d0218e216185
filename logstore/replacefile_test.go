package logstore

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seglog.prom")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Past the buffer, so some bytes reach the temporary before the
	// failure: still nothing of them shows at path.
	big := strings.Repeat("x", 200<<10)
	failed := errors.New("failed midway")
	err := ReplaceFile(path, func(w *bufio.Writer) error {
		if _, err := w.WriteString(big); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("ReplaceFile: %v, want %v", err, failed)
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("after a failed write the file holds %d bytes, want the old ones", len(b))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left %v", entries)
	}

	if err := ReplaceFile(path, func(w *bufio.Writer) error { _, err := w.WriteString(big); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != big {
		t.Errorf("the file holds %d bytes, want %d", len(b), len(big))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a write left %v beside the file", entries)
	}
}
