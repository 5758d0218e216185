package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seglog/seglog/logstore"
)

// vcFixture builds a data directory with topic "t": partition 0 holds
// a..j (10 records of 29 bytes) in segments of 3 records (bases 0, 3, 6,
// 9), partition 1 holds x, y; and topic "u" with one record.
func vcFixture(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--partitions", "2")
	mustRun(t, dir, "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n", "append", "t", "--partition", "0", "--segment-bytes", "100")
	mustRun(t, dir, "x\ny\n", "append", "t", "--partition", "1")
	mustRun(t, dir, "z\n", "append", "u", "--create")
	return dir
}

func vcSeg(dir, topic string, p int, base uint64, ext string) string {
	return filepath.Join(dir, topic, fmt.Sprint(p), fmt.Sprintf("%020d%s", base, ext))
}

func vcFlip(t *testing.T, path string, pos int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[pos] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// vcSnapshot records every file and directory under root: bytes, inode,
// mode, size, change and modification times.
func vcSnapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			return err
		}
		desc := fmt.Sprintf("ino %d mode %o size %d ctime %d.%09d mtime %d.%09d", st.Ino, st.Mode, st.Size,
			st.Ctim.Sec, st.Ctim.Nsec, st.Mtim.Sec, st.Mtim.Nsec)
		if d.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %x", b)
		}
		m[path] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestVerifyCRCClean(t *testing.T) {
	dir := vcFixture(t)
	before := vcSnapshot(t, dir)
	r := mustRun(t, dir, "", "verify-crc")
	sameSnapshot(t, before, vcSnapshot(t, dir))
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}
	want := "" +
		"+-----------+----------+---------+-------+----------+-------+-------+\n" +
		"| PARTITION | SEGMENTS | RECORDS | BYTES | PROBLEMS | NOTES | KNOWN |\n" +
		"+-----------+----------+---------+-------+----------+-------+-------+\n" +
		"| t/0       |        4 |      10 | 290 B |        0 |     0 |     0 |\n" +
		"| t/1       |        1 |       2 |  58 B |        0 |     0 |     0 |\n" +
		"| u/0       |        1 |       1 |  29 B |        0 |     0 |     0 |\n" +
		"+-----------+----------+---------+-------+----------+-------+-------+\n" +
		"no problems found\n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	// --quiet: the last line only.
	if r := mustRun(t, dir, "", "-q", "verify-crc", "t"); r.stdout != "no problems found\n" {
		t.Errorf("--quiet: stdout %q", r.stdout)
	}
}

// TestVerifyCRCExitCodes checks the exact exit status (docs/cli.md): 0 clean or
// notes only, 3 problems, 1 a check that could not finish (even with
// problems), 2 usage.
func TestVerifyCRCExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		args   []string
		code   int
		stdout []string // lines (or line prefixes, ending in "...") that must be there
		stderr string   // the one error line must contain it; "" means stderr stays empty
	}{
		{"clean", nil, []string{"verify-crc", "t"}, 0, []string{"no problems found"}, ""},
		{"flipped byte", func(t *testing.T, dir string) { vcFlip(t, vcSeg(dir, "t", 0, 3, ".log"), 29+28) }, []string{"verify-crc"}, 3,
			[]string{"problem " + vcSeg(dir0, "t", 0, 3, ".log") + " byte 29 offset 4: crc mismatch (stored 0x...", "1 problem found"}, ""},
		{"torn tail, no writer", func(t *testing.T, dir string) {
			os.Truncate(vcSeg(dir, "t", 0, 9, ".log"), 20)
		}, []string{"verify-crc", "t", "--partition", "0"}, 3,
			[]string{"problem " + vcSeg(dir0, "t", 0, 9, ".log") + " byte 0 offset 9: incomplete tail: 20 bytes after the last valid record...",
				"note    " + vcSeg(dir0, "t", 0, 9, ".index") + " byte 0 offset 9: index entry 0 (offset 9) points at byte 0, into the incomplete tail",
				"1 problem found (2 notes)"}, ""},
		{"stale index entries only", func(t *testing.T, dir string) {
			f, _ := os.OpenFile(vcSeg(dir, "u", 0, 0, ".index"), os.O_WRONLY|os.O_APPEND, 0)
			f.Write([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 29})
			f.Close()
		}, []string{"verify-crc", "u"}, 0,
			[]string{"note    " + vcSeg(dir0, "u", 0, 0, ".index") + " byte 16 offset 1: index entry 1 (offset 1) points at byte 29, past the end of the log (29 bytes)...",
				"no problems found (1 note)"}, ""},
		{"index that is a directory: a problem naming it", func(t *testing.T, dir string) {
			vcFlip(t, vcSeg(dir, "t", 0, 3, ".log"), 29+28)
			idx := vcSeg(dir, "t", 0, 6, ".index")
			os.Remove(idx)
			os.Mkdir(idx, 0o755)
		}, []string{"verify-crc", "t"}, 3,
			[]string{"problem " + vcSeg(dir0, "t", 0, 3, ".log") + " byte 29 offset 4: crc mismatch...",
				"problem " + vcSeg(dir0, "t", 0, 6, ".index") + ": not a regular file (a directory): readers go on without this index...",
				"| t/0       |        4 |       9 | 290 B |        2 |     0 |     0 |",
				"2 problems found"}, ""},
		{"index that is a symbolic link: a problem naming it", func(t *testing.T, dir string) {
			idx := vcSeg(dir, "t", 0, 6, ".index")
			os.Rename(idx, idx+".aside")
			os.Symlink(idx+".aside", idx)
		}, []string{"verify-crc", "t"}, 3,
			[]string{"problem " + vcSeg(dir0, "t", 0, 6, ".index") + ": not a regular file (a symbolic link to " + vcSeg(dir0, "t", 0, 6, ".index") + ".aside): readers go on...",
				"1 problem found"}, ""},
		{"missing partition in the middle", func(t *testing.T, dir string) {
			mustRun(t, dir, "", "create", "m", "--partitions", "3")
			os.RemoveAll(filepath.Join(dir, "m", "1"))
		}, []string{"verify-crc", "m"}, 3,
			[]string{"problem " + filepath.Join(dir0, "m", "1") + ": partition directory missing, though the topic has higher ones...",
				"| m/1       |  missing |       - |     - |        1 |     - |     - |",
				"| m/2       |        1 |       0 |   0 B |        0 |     0 |     0 |"}, ""},
		{"topic not found", nil, []string{"verify-crc", "nope"}, 1, nil, "topic nope in"},
		{"partition out of range", nil, []string{"verify-crc", "t", "--partition", "5"}, 1, nil, "topic t has partitions 0..1, not 5"},
		{"jobs 0", nil, []string{"verify-crc", "--jobs", "0"}, 2, nil, "--jobs must be 1 or more"},
		{"negative partition", nil, []string{"verify-crc", "--partition", "-1"}, 2, nil, "--partition must be 0 or more"},
		{"bad topic name", nil, []string{"verify-crc", ".x"}, 2, nil, "invalid topic name"},
		{"unknown flag", nil, []string{"verify-crc", "--bogus"}, 2, nil, "unknown flag --bogus"},
		{"partition directory of another number", nil, []string{"verify-crc", "DIR/t/0", "--partition", "1"}, 2, nil, "does not match the partition directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := vcFixture(t)
			if tc.damage != nil {
				tc.damage(t, dir)
			}
			before := vcSnapshot(t, filepath.Dir(dir))
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = strings.ReplaceAll(a, "DIR", dir)
			}
			r := runIn(t, dir, nil, args...)
			sameSnapshot(t, before, vcSnapshot(t, filepath.Dir(dir)))
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			if tc.stderr == "" {
				if r.stderr != "" {
					t.Errorf("stderr: %q", r.stderr)
				}
			} else {
				wantOneErrorLine(t, r.stderr, tc.stderr)
			}
			lines := strings.Split(r.stdout, "\n")
			for _, w := range tc.stdout {
				w = strings.ReplaceAll(w, dir0, dir)
				prefix, isPrefix := strings.CutSuffix(w, "...")
				found := false
				for _, l := range lines {
					if l == w || isPrefix && strings.HasPrefix(l, prefix) {
						found = true
					}
				}
				if !found {
					t.Errorf("no line %q in stdout:\n%s", w, r.stdout)
				}
			}
		})
	}
}

// dir0 stands for the fixture's data directory in expected lines.
const dir0 = "\x00DATA"

// TestVerifyCRCLiveWriter: an incomplete tail is a note while a writer
// holds the partition (exit 0), a problem once none does (exit 3).
func TestVerifyCRCLiveWriter(t *testing.T) {
	dir := vcFixture(t)
	w, err := logstore.Open(dir).OpenWriter("u", 0, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f, err := os.OpenFile(vcSeg(dir, "u", 0, 0, ".log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 9}) // a header being written
	f.Close()

	r := runIn(t, dir, nil, "verify-crc", "u")
	want := fmt.Sprintf("note    %s byte 29 offset 1: incomplete record at the end of the active segment (12 bytes: only 12 bytes, less than a record header): the writer (pid %d) holding the partition is writing it\n",
		vcSeg(dir, "u", 0, 0, ".log"), os.Getpid())
	if r.code != 0 || !strings.HasPrefix(r.stdout, want) || !strings.HasSuffix(r.stdout, "no problems found (1 note)\n") {
		t.Errorf("exit %d, stdout:\n%s\nwant it to start with:\n%s", r.code, r.stdout, want)
	}
	r = runIn(t, dir, nil, "verify-crc", "u", "--json")
	if !strings.Contains(r.stdout, fmt.Sprintf(`"writer_pid":%d`, os.Getpid())) {
		t.Errorf("--json does not give the writer's pid:\n%s", r.stdout)
	}

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, dir, nil, "verify-crc", "u")
	if r.code != 3 || !strings.Contains(r.stdout, "problem "+vcSeg(dir, "u", 0, 0, ".log")+" byte 29 offset 1: incomplete tail") {
		t.Errorf("without the writer: exit %d, stdout:\n%s", r.code, r.stdout)
	}
}

// vcJSON is one line of verify-crc --json.
type vcJSON struct {
	Type       string `json:"type"`
	Severity   string `json:"severity"`
	Kind       string `json:"kind"`
	Partition  string `json:"partition"`
	Path       string `json:"path"`
	Pos        *int64 `json:"pos"`
	Offset     *int64 `json:"offset"`
	Reason     string `json:"reason"`
	Problems   *int   `json:"problems"`
	Notes      *int   `json:"notes"`
	Known      *int   `json:"known"`
	Complete   *bool  `json:"complete"`
	Partitions []struct {
		Partition string `json:"partition"`
		Dir       string `json:"dir"`
		Segments  int    `json:"segments"`
		Records   uint64 `json:"records"`
		Bytes     int64  `json:"bytes"`
		Problems  int    `json:"problems"`
		Notes     int    `json:"notes"`
		Known     int    `json:"known"`
		WriterPid *int   `json:"writer_pid"`
		Complete  bool   `json:"complete"`
		Missing   bool   `json:"missing"`
	} `json:"partitions"`
}

func TestVerifyCRCJSON(t *testing.T) {
	dir := vcFixture(t)
	vcFlip(t, vcSeg(dir, "t", 0, 0, ".log"), 29+28)
	os.Remove(vcSeg(dir, "t", 1, 0, ".timeindex"))
	r := runIn(t, dir, nil, "verify-crc", "t", "--json")
	if r.code != 3 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var objs []vcJSON
	for _, l := range strings.SplitAfter(r.stdout, "\n") {
		if l == "" {
			continue
		}
		var o vcJSON
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil || !strings.HasSuffix(l, "}\n") {
			t.Fatalf("bad JSON line %q: %v", l, err)
		}
		objs = append(objs, o)
	}
	if len(objs) != 3 {
		t.Fatalf("want 2 findings and a summary:\n%s", r.stdout)
	}
	f := objs[0]
	if f.Type != "finding" || f.Severity != "problem" || f.Kind != "corrupt-record" || f.Partition != "t/0" ||
		f.Path != vcSeg(dir, "t", 0, 0, ".log") || f.Pos == nil || *f.Pos != 29 || f.Offset == nil || *f.Offset != 1 ||
		!strings.HasPrefix(f.Reason, "crc mismatch") {
		t.Errorf("first finding: %+v", f)
	}
	f = objs[1]
	if f.Type != "finding" || f.Severity != "note" || f.Kind != "index-missing" || f.Partition != "t/1" || f.Pos != nil || f.Offset != nil {
		t.Errorf("second finding: %+v", f)
	}
	s := objs[2]
	if s.Type != "summary" || *s.Problems != 1 || *s.Notes != 1 || *s.Known != 0 || !*s.Complete || len(s.Partitions) != 2 {
		t.Fatalf("summary: %+v", s)
	}
	p0, p1 := s.Partitions[0], s.Partitions[1]
	if p0.Partition != "t/0" || p0.Dir != filepath.Join(dir, "t", "0") || p0.Segments != 4 || p0.Records != 9 || p0.Bytes != 290 ||
		p0.Problems != 1 || p0.Notes != 0 || p0.WriterPid != nil || !p0.Complete || p0.Missing {
		t.Errorf("partition 0: %+v", p0)
	}
	if p1.Partition != "t/1" || p1.Records != 2 || p1.Notes != 1 || p1.Problems != 0 {
		t.Errorf("partition 1: %+v", p1)
	}
}

// The output does not depend on --jobs; no TOPIC means every topic; a
// partition directory can be named by path.
func TestVerifyCRCJobsAndTargets(t *testing.T) {
	dir := vcFixture(t)
	mustRun(t, dir, strings.Repeat("more\n", 50), "append", "t", "--partition", "1", "--segment-bytes", "200")
	vcFlip(t, vcSeg(dir, "t", 0, 3, ".log"), 40)
	vcFlip(t, vcSeg(dir, "t", 0, 6, ".log"), 5)
	vcFlip(t, vcSeg(dir, "u", 0, 0, ".timeindex"), 12)
	one := runIn(t, dir, nil, "verify-crc", "--jobs", "1")
	if one.code != 3 || strings.Count("\n"+one.stdout, "\nproblem ") != 3 {
		t.Fatalf("exit %d, stdout:\n%s", one.code, one.stdout)
	}
	for _, jobs := range []string{"2", "4", "32"} {
		if r := runIn(t, dir, nil, "verify-crc", "-j", jobs); r.stdout != one.stdout || r.code != one.code {
			t.Errorf("--jobs %s:\n%s\n--jobs 1:\n%s", jobs, r.stdout, one.stdout)
		}
	}
	all := runIn(t, dir, nil, "verify-crc", "t", "u")
	if all.stdout != one.stdout {
		t.Errorf("verify-crc t u:\n%s\nwith no TOPIC:\n%s", all.stdout, one.stdout)
	}
	for _, name := range []string{"t/0", "t/1", "u/0"} {
		if !strings.Contains(one.stdout, "| "+name+" ") {
			t.Errorf("no row for %s:\n%s", name, one.stdout)
		}
	}
	// By path: the same findings for that partition, named by its directory.
	pdir := filepath.Join(dir, "t", "0")
	r := run(t, nil, "verify-crc", pdir+"/", "--wide")
	if r.code != 3 || !strings.Contains(r.stdout, "| "+pdir+" ") {
		t.Errorf("verify-crc %s: exit %d\n%s", pdir, r.code, r.stdout)
	}
	for _, l := range strings.Split(one.stdout, "\n") {
		if strings.HasPrefix(l, "problem "+pdir) && !strings.Contains(r.stdout, l+"\n") {
			t.Errorf("by path, missing %q:\n%s", l, r.stdout)
		}
	}
	// A topic directory by path: its partitions.
	if r := run(t, nil, "verify-crc", filepath.Join(dir, "u")); r.code != 3 || !strings.Contains(r.stdout, "time index entry 0 says offset 0 has timestamp") {
		t.Errorf("topic directory by path: exit %d\n%s", r.code, r.stdout)
	}
}

// The progress bar: nothing on a stderr that is not a terminal (the other
// tests check stderr stays empty); on one, drawn after a second and
// cleared before the summary.
func TestVerifyCRCProgressBar(t *testing.T) {
	var buf bytes.Buffer
	b := &progressBar{w: &buf, name: "verify-crc", enabled: true, start: time.Now(), after: time.Second}
	b.update(10, 100)
	b.update(50, 100)
	b.clear()
	b.finish()
	if buf.Len() != 0 {
		t.Errorf("drawn before a second: %q", buf.String())
	}
	b = &progressBar{w: &buf, name: "verify-crc", enabled: true, start: time.Now().Add(-2 * time.Second), after: time.Second}
	b.update(50, 100)
	if !strings.Contains(buf.String(), "verify-crc") || !strings.Contains(buf.String(), "50%") {
		t.Errorf("bar after a second: %q", buf.String())
	}
	n := buf.Len()
	b.finish()
	if !strings.HasSuffix(buf.String(), "\r") || buf.Len() == n {
		t.Errorf("bar not cleared: %q", buf.String()[n:])
	}
	n = buf.Len()
	b.update(100, 100)
	if buf.Len() != n {
		t.Errorf("drawn after finish: %q", buf.String()[n:])
	}
	// Never for a stderr that is not a terminal, nor with --quiet or
	// --no-progress.
	for _, e := range []*env{{stderr: &buf}, {stderr: os.Stderr, quiet: true}, {stderr: os.Stderr, noProgress: true}} {
		if newProgressBar(e, "verify-crc").enabled {
			t.Errorf("bar enabled for %+v", e)
		}
	}
}
