package commands

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const regenHint = "the man pages and completion scripts are out of date with the command definitions: run `go generate ./...` and commit man/ and completions/"

// TestDocsUpToDate regenerates man/ and completions/ into a temporary
// directory and compares them with the committed files.
func TestDocsUpToDate(t *testing.T) {
	tmp := t.TempDir()
	man, compl := filepath.Join(tmp, "man"), filepath.Join(tmp, "completions")
	if err := GenerateDocs(man, compl); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"man", "completions"} {
		gen, _ := os.ReadDir(filepath.Join(tmp, dir))
		for _, e := range gen {
			want, _ := os.ReadFile(filepath.Join(tmp, dir, e.Name()))
			got, err := os.ReadFile(filepath.Join("..", dir, e.Name()))
			if err != nil {
				t.Errorf("%s/%s missing: %s", dir, e.Name(), regenHint)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s/%s differs from what the code generates (first difference at line %d): %s", dir, e.Name(), firstDiffLine(got, want), regenHint)
			}
		}
		committed, _ := os.ReadDir(filepath.Join("..", dir))
		for _, e := range committed {
			if _, err := os.Stat(filepath.Join(tmp, dir, e.Name())); err != nil {
				t.Errorf("%s/%s is no longer generated (a removed command?): delete it and run `go generate ./...`", dir, e.Name())
			}
		}
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

func TestCompletionCommand(t *testing.T) {
	for _, sh := range completionShells.names() {
		r := run(t, nil, "completion", sh)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("completion %s: exit %d, stderr %q", sh, r.code, r.stderr)
		}
		want, err := os.ReadFile(filepath.Join("..", "completions", "seglog."+sh))
		if err != nil {
			t.Fatal(err)
		}
		if r.stdout != string(want) {
			t.Errorf("completion %s differs from completions/seglog.%s: %s", sh, sh, regenHint)
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		r := run(t, nil, args...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("seglog %q: exit %d, stdout %q; want exit %d and no output", args, r.code, r.stdout, exitUsage)
		}
		wantOneErrorLine(t, r.stderr, "completion")
	}
}

func TestCompleteHelper(t *testing.T) {
	dir := newTopic(t, 3)
	mustRun(t, dir, "", "create", "other")
	check := func(args []string, want string) {
		t.Helper()
		r := run(t, nil, args...)
		if r.code != 0 || r.stderr != "" || r.stdout != want {
			t.Errorf("seglog %q: exit %d, stdout %q, stderr %q; want stdout %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	check([]string{"-d", dir, "__complete", "topics"}, "other\nt\n")
	check([]string{"__complete", "topics", "--data-dir", dir}, "other\nt\n")
	check([]string{"-d", dir, "__complete", "partitions", "t"}, "0\n1\n2\n")
	check([]string{"-d", dir, "__complete", "partitions", "other"}, "0\n")
	t.Setenv("SEGLOG_DATA_DIR", dir)
	check([]string{"__complete", "topics"}, "other\nt\n")
	// Nothing, and no error, whatever goes wrong.
	check([]string{"-d", dir, "__complete", "partitions", "nosuch"}, "")
	check([]string{"-d", dir, "__complete", "partitions", "../x"}, "")
	check([]string{"-d", dir, "__complete", "partitions"}, "")
	check([]string{"-d", dir, "__complete", "bogus"}, "")
	check([]string{"-d", dir, "__complete"}, "")
	check([]string{"-d", filepath.Join(dir, "nosuch"), "__complete", "topics"}, "")
	// Hidden: not in help, man page or completion.
	if r := run(t, nil, "--help"); strings.Contains(r.stdout, "__complete") {
		t.Errorf("__complete shows in --help")
	}
}

// TestCompletionSyntax checks each script with its shell, where installed.
func TestCompletionSyntax(t *testing.T) {
	for _, sh := range completionShells.names() {
		t.Run(sh, func(t *testing.T) {
			p, err := exec.LookPath(sh)
			if err != nil {
				t.Skipf("%s not installed", sh)
			}
			args := []string{"-n", filepath.Join("..", "completions", "seglog."+sh)}
			if sh == "fish" {
				args[0] = "--no-execute"
			}
			if out, err := exec.Command(p, args...).CombinedOutput(); err != nil {
				t.Errorf("%s %s: %v\n%s", sh, strings.Join(args, " "), err, out)
			}
		})
	}
}

// TestBashCompletion drives the bash script as bash would on TAB.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	dir := newTopic(t, 2)
	bin := seglogBin(t)
	tests := []struct {
		line string // words; the last is being completed
		want string
	}{
		{"seglog rec", "recover"},
		{"seglog read --for", "--format"},
		{"seglog read t --format ", "value json dump raw"},
		{"seglog append t --sync b", "batch"},
		{"seglog -d " + dir + " read ", "t"},
		{"seglog read -d " + dir + " t -p ", "0 1"},
		{"seglog completion ", "bash zsh fish"},
		{"seglog -d " + dir + " copy-partition t ", "0 1"},
		// kafka's subcommands, their flags, values and arguments
		{"seglog kafka ", "export import"},
		{"seglog kafka export --bro", "--brokers"},
		{"seglog kafka export --compression ", "none gzip snappy lz4 zstd"},
		{"seglog kafka import --from ", "beginning end"},
		{"seglog -d " + dir + " kafka export -b h:9092 ", "t"},
		{"seglog -d " + dir + " kafka export t -p ", "0 1"},
		{"seglog kafka export t ", ""},
	}
	for _, tt := range tests {
		words := strings.Fields(tt.line)
		if strings.HasSuffix(tt.line, " ") {
			words = append(words, "")
		}
		words[0] = bin
		var q []string
		for _, w := range words {
			q = append(q, sq(w))
		}
		script := "source " + sq(filepath.Join("..", "completions", "seglog.bash")) + "\n" +
			"COMP_WORDS=(" + strings.Join(q, " ") + ")\nCOMP_CWORD=" + itoa(len(words)-1) + "\n_seglog\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "-c", script).CombinedOutput()
		if err != nil {
			t.Errorf("%q: %v\n%s", tt.line, err, out)
			continue
		}
		if got := strings.TrimSpace(string(out)); got != tt.want {
			t.Errorf("complete %q: got %q, want %q", tt.line, got, tt.want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestFishCompletion drives the fish script with `complete -C`, for the
// nested kafka commands among others (skipped without fish).
func TestFishCompletion(t *testing.T) {
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("fish not installed")
	}
	dir := newTopic(t, 2)
	bin := t.TempDir()
	if err := os.Symlink(seglogBin(t), filepath.Join(bin, "seglog")); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("..", "completions", "seglog.fish"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ line, want string }{
		{"seglog rec", "recover"},
		{"seglog kafka ", "export import"},
		{"seglog kafka export --compression ", "gzip lz4 none snappy zstd"},
		{"seglog -d " + dir + " kafka export ", "t"},
		{"seglog -d " + dir + " kafka export t -p ", "0 1"},
		{"seglog -d " + dir + " read t -p ", "0 1"},
	} {
		cmd := exec.Command(fish, "--no-config", "-c", "source "+sq(script)+"; complete -C "+sq(tt.line))
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%q: %v\n%s", tt.line, err, out)
			continue
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("complete %q: got %q, want %q", tt.line, g, tt.want)
		}
	}
}

// TestManExitStatusAndEnvironment: every man page has an EXIT STATUS and
// an ENVIRONMENT section, from the same table as --help's EXIT STATUS;
// recover's and verify-crc's status 3 among them; and seglog(1) names
// every environment variable the code reads.
func TestManExitStatusAndEnvironment(t *testing.T) {
	files, err := docFiles()
	if err != nil {
		t.Fatal(err)
	}
	app := docsApp()
	for _, cmd := range manCommands(app) {
		page := string(files[manName(cmd)+".1"])
		exits, env := manSection(page, "EXIT STATUS"), manSection(page, "ENVIRONMENT")
		if exits == "" || !strings.Contains(env, `\fBSEGLOG_DATA_DIR\fR`) {
			t.Errorf("%s.1: EXIT STATUS %q, ENVIRONMENT %q", manName(cmd), exits, env)
		}
		help := run(t, nil, append(strings.Fields(cmd.Name), "--help")...).stdout
		for _, e := range exitsOf(cmd.Name) {
			if !strings.Contains(exits, ".TP\n\\fB"+strconv.Itoa(e.code)+"\\fR\n") {
				t.Errorf("%s.1: EXIT STATUS lacks %d:\n%s", manName(cmd), e.code, exits)
			}
			if !strings.Contains(help, "\n   "+strconv.Itoa(e.code)+"  ") {
				t.Errorf("seglog %s --help: no exit status %d:\n%s", cmd.Name, e.code, help)
			}
		}
	}
	for _, name := range []string{"recover", "verify-crc", "dump-index"} {
		if exits := manSection(string(files["seglog-"+name+".1"]), "EXIT STATUS"); !strings.Contains(exits, "\\fB3\\fR") {
			t.Errorf("seglog-%s.1: no exit status 3:\n%s", name, exits)
		}
	}
	if !strings.Contains(manSection(string(files["seglog-kafka-export.1"]), "ENVIRONMENT"), "SEGLOG_KAFKA_PASSWORD") {
		t.Errorf("seglog-kafka-export.1 does not name SEGLOG_KAFKA_PASSWORD")
	}
	env := manSection(string(files["seglog.1"]), "ENVIRONMENT")
	for _, name := range envNamesInSource(t) {
		if !strings.Contains(env, name) {
			t.Errorf("seglog.1: ENVIRONMENT does not name %s, which the code reads:\n%s", name, env)
		}
	}
}

// manSection is a man page's section title, up to the next one.
func manSection(page, title string) string {
	_, rest, ok := strings.Cut(page, "\n.SH "+title+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n.SH "); i >= 0 {
		rest = rest[:i+1]
	}
	return rest
}

// envNamesInSource are the environment variable names string literals of
// the non-test sources hold: SEGLOG_* and the locale's.
func envNamesInSource(t *testing.T) []string {
	t.Helper()
	re := regexp.MustCompile(`"(SEGLOG_[A-Z0-9_]+|LC_ALL|LC_CTYPE|LANG)"`)
	var names []string
	for _, pkg := range []string{".", "../logstore", "../format", ".."} {
		paths, err := filepath.Glob(filepath.Join(pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				if !slices.Contains(names, m[1]) {
					names = append(names, m[1])
				}
			}
		}
	}
	if len(names) < 4 {
		t.Fatalf("found only %q in the sources", names)
	}
	return names
}
