package format_test

import (
	"os/exec"
	"strings"
	"testing"
)

// format is pure bytes (STYLE.md, "Shape"): its own, non-test imports must
// not reach for files or the OS. Only direct imports are checked; the
// standard library packages it uses may of course import os themselves.
func TestImportsNoOS(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go binary not found:", err)
	}
	// The test runs in the package directory, so "." is format.
	out, err := exec.Command(goBin, "list", "-f", `{{join .Imports " "}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := strings.Fields(string(out))
	if len(imports) == 0 {
		t.Fatalf("go list reported no imports at all (%q); is it listing the right package?", out)
	}
	for _, imp := range imports {
		switch {
		case imp == "os", imp == "io/fs", imp == "syscall",
			imp == "golang.org/x/sys", strings.HasPrefix(imp, "golang.org/x/sys/"),
			strings.HasPrefix(imp, "os/"):
			t.Errorf("format imports %s; it must stay free of files and the OS", imp)
		}
	}
}
