package testcheckout

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	before := []string{" M README.md", "!! seglog"}
	after := []string{" M README.md", "?? commands/-1/t/0/00000000000000000000.log", "!! data/x"}
	want := []string{"?? commands/-1/t/0/00000000000000000000.log", "!! data/x", "gone: !! seglog"}
	if got := diff(before, after); !slices.Equal(got, want) {
		t.Errorf("diff = %q, want %q", got, want)
	}
	if got := diff(before, before); len(got) != 0 {
		t.Errorf("diff of the same status = %q", got)
	}
}

// fakeM is a test binary's m.Run that leaves a file behind in the
// checkout or not.
type fakeM struct {
	run  func()
	code int
}

func (m fakeM) Run() int { m.run(); return m.code }

// TestRun runs Run in a checkout of its own, under t.TempDir().
func TestRun(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Skipf("no git: %v %s", err, out)
	}
	t.Chdir(dir)
	var stderr bytes.Buffer
	if code := run(fakeM{run: func() {}, code: 0}, false, &stderr); code != 0 {
		t.Errorf("nothing changed: status %d, want 0", code)
	}
	if code := run(fakeM{run: func() {}, code: 3}, false, &stderr); code != 3 {
		t.Errorf("nothing changed: status %d, want the run's own 3", code)
	}
	leave := func(name string) func() {
		return func() {
			if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name, "00000000000000000000.log"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if code := run(fakeM{run: leave("-1"), code: 0}, false, &stderr); code != 1 {
		t.Errorf("a file left behind: status %d, want 1", code)
	}
	if want := "\t?? -1/00000000000000000000.log\n"; !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("stderr %q does not end naming the file: %q", stderr.String(), want)
	}
	if code := run(fakeM{run: leave("-2"), code: 0}, true, &stderr); code != 0 {
		t.Errorf("a file left behind with skip: status %d, want 0", code)
	}
}
