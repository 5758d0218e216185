package commands

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion: --version, -v and the version command print the same one
// line from the binary's build information and exit 0; only at the top.
func TestVersion(t *testing.T) {
	want := "seglog version " + buildVersion() + "\n"
	if !strings.Contains(want, "go1.") {
		t.Errorf("the version line does not name the Go release: %q", want)
	}
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}, {"-q", "version"}} {
		if r := run(t, nil, args...); r.code != 0 || r.stdout != want || r.stderr != "" {
			t.Errorf("seglog %q: exit %d, stdout %q, stderr %q; want 0 and %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"version", "extra"}, "version: no arguments expected, got extra"},
		{[]string{"read", "t", "--version"}, "unknown flag --version (see 'seglog read --help')"},
		{[]string{"read", "t", "-v"}, "unknown flag -v"},
	} {
		r := run(t, nil, c.args...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("seglog %q: exit %d, stdout %q; want 2 and nothing", c.args, r.code, r.stdout)
		}
		wantOneErrorLine(t, r.stderr, c.want)
	}
}

func TestVersionText(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, c := range []struct {
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"v1.2.3", vcs("vcs.revision", rev, "vcs.time", "2025-01-02T03:04:05Z", "vcs.modified", "false"),
			"v1.2.3 (revision " + rev + " of 2025-01-02T03:04:05Z, go1.26.8)"},
		{"(devel)", vcs("vcs.revision", rev, "vcs.time", "2025-01-02T03:04:05Z", "vcs.modified", "true"),
			"(devel) (a development build: revision " + rev + " of 2025-01-02T03:04:05Z, with uncommitted changes, go1.26.8)"},
		{"v0.0.0-20250102030405-0123456789ab+dirty", vcs("vcs.revision", rev, "vcs.modified", "true"),
			"v0.0.0-20250102030405-0123456789ab+dirty (revision " + rev + ", with uncommitted changes, go1.26.8)"},
		{"(devel)", nil, "(devel) (a development build: no revision recorded, go1.26.8)"},
		{"", nil, "(devel) (a development build: no revision recorded, go1.26.8)"},
	} {
		info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/seglog/seglog", Version: c.version}, Settings: c.settings}
		if got := versionText(info); got != c.want {
			t.Errorf("version %q, settings %v:\n got %q\nwant %q", c.version, c.settings, got, c.want)
		}
	}
}
