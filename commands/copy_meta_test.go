package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Helpers of this file carry a cmeta prefix: other test files of the
// package are written at the same time and must not clash.

// cmetaSource is a data directory with topic t (stored settings, 12
// records in segments of 3) whose partition 0 lost segment 3: offsets
// 3..5 are a hole, recorded in .gaps.json as recover --salvage records it.
func cmetaSource(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	mustRun(t, dir, "", "create", "t", "--segment-bytes", "100", "--retention", "90d")
	mustRun(t, dir, "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n", "append", "t")
	pdir := filepath.Join(dir, "t", "0")
	for _, ext := range []string{".log", ".index", ".timeindex"} {
		if err := os.Remove(filepath.Join(pdir, "00000000000000000003"+ext)); err != nil {
			t.Fatal(err)
		}
	}
	cmetaGaps(t, dir, cmetaGoodGaps)
	return dir
}

// cmetaGoodGaps is the gaps file of cmetaSource, with room after it for
// the bad ones that take its place in a stream.
var cmetaGoodGaps = `{"gaps":[{"from":3,"to":6,"time":"2024-05-01T12:00:00Z","reason":"salvaged"}]}` + strings.Repeat(" ", 40)

func cmetaGaps(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "t", "0", ".gaps.json"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cmetaReplace returns the tar stream with the file content old, which
// it holds once, replaced by new padded with spaces to the same length:
// a tar header's checksum covers only the header.
func cmetaReplace(t *testing.T, stream []byte, old, new string) []byte {
	t.Helper()
	if bytes.Count(stream, []byte(old)) != 1 || len(new) > len(old) {
		t.Fatalf("cannot put %q in place of %q", new, old)
	}
	return bytes.Replace(stream, []byte(old), []byte(new+strings.Repeat(" ", len(old)-len(new))), 1)
}

// import-partition refuses a stream whose settings or gaps are not what
// seglog writes (exit status 1, one error line naming the entry), and
// places nothing: no topic, no partition, no temporary directory.
func TestImportPartitionChecksSettingsAndGaps(t *testing.T) {
	src := cmetaSource(t)
	stream := []byte(mustRun(t, src, "", "copy-partition", "t", "0", "--to", "-").stdout)
	dst := filepath.Join(t.TempDir(), "data")
	mustRun(t, dst, string(stream), "import-partition", "whole", "0")
	settings, err := os.ReadFile(filepath.Join(src, "t", ".seglog.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		entry, body string
		want        []string
	}{
		{".seglog.json", `{"segment_bytes":-1}`, []string{"not a whole partition stream: its .seglog.json is not the settings of a topic", "segment_bytes -1 is out of range"}},
		{".seglog.json", `{"retention":"90d"}`, []string{"its .seglog.json", `retention "90d" is not a duration`}},
		{".seglog.json", `{"retention_ms":1}`, []string{"its .seglog.json", `unknown field "retention_ms"`}},
		{".gaps.json", `{"gaps":[{"from":0,"to":99999999999,"time":"2024-05-01T12:00:00Z","reason":"x"}]}`,
			[]string{"invalid gaps file: gap 0..99999999998 in the stream's .gaps.json covers offsets 0..2, which 00000000000000000000.log holds", "the stream is refused"}},
		{".gaps.json", `{"gaps":[{"from":12,"to":20,"time":"2024-05-01T12:00:00Z","reason":"x"}]}`,
			[]string{"gap 12..19 in the stream's .gaps.json reaches past the partition's next offset 12"}},
		{".gaps.json", `{"gaps":[{"from":3,"to":6}]}`, []string{"its .gaps.json is not a record of gaps", "not an RFC 3339 time"}},
	} {
		t.Run(tc.entry+" "+tc.body, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "data")
			old := cmetaGoodGaps
			if tc.entry == ".seglog.json" {
				old = string(settings)
			}
			r := runIn(t, dst, bytes.NewReader(cmetaReplace(t, stream, old, tc.body)), "import-partition", "t", "0")
			if r.code != 1 || r.stdout != "" {
				t.Errorf("exit %d, stdout %q; want 1 and nothing", r.code, r.stdout)
			}
			wantOneErrorLine(t, r.stderr, tc.want...)
			if entries, _ := os.ReadDir(dst); len(entries) > 0 {
				t.Errorf("the refused import left %s holding %v", dst, entries)
			}
		})
	}
}

// copy-partition refuses a source whose gaps file records a gap over
// offsets its segments hold (exit status 1, naming the file), and
// verify-crc reports such a gap (exit status 3) instead of taking it as
// the explanation of a real hole. A bad settings file is named by every
// command that reads it.
func TestCopyPartitionChecksSourceSettingsAndGaps(t *testing.T) {
	src := cmetaSource(t)
	gaps := filepath.Join(src, "t", "0", ".gaps.json")
	r := runIn(t, src, nil, "verify-crc", "t")
	if r.code != 0 || !strings.Contains(r.stdout, "no problems found") {
		t.Fatalf("verify-crc with the hole recorded: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	cmetaGaps(t, src, `{"gaps":[{"from":0,"to":99999999999,"time":"2024-05-01T12:00:00Z","reason":"x"}]}`)
	dst := filepath.Join(t.TempDir(), "data")
	r = runIn(t, src, nil, "copy-partition", "t", "0", "--to", dst)
	if r.code != 1 || r.stdout != "" {
		t.Errorf("copy-partition: exit %d, stdout %q; want 1 and nothing", r.code, r.stdout)
	}
	wantOneErrorLine(t, r.stderr, "invalid gaps file", "gap 0..99999999998 in "+gaps, "covers offsets 0..2", "fix it or remove it")
	if entries, _ := os.ReadDir(dst); len(entries) > 0 {
		t.Errorf("the refused copy left %s holding %v", dst, entries)
	}
	r = runIn(t, src, nil, "verify-crc", "t")
	if r.code != 3 || !strings.Contains(r.stdout, "offsets 3..5 are missing") || !strings.Contains(r.stdout, "explains nothing") {
		t.Errorf("verify-crc with a gap over held offsets: exit %d; want 3, the hole reported as lost; stdout:\n%s", r.code, r.stdout)
	}

	settings := filepath.Join(src, "t", ".seglog.json")
	if err := os.WriteFile(settings, []byte(`{"retention_bytes":-1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"read", "t"}, {"append", "t"}, {"retention-sweep", "t"}, {"copy-partition", "t", "0", "--to", dst}} {
		r := runIn(t, src, strings.NewReader("x\n"), args...)
		if r.code != 1 {
			t.Errorf("%s with bad settings: exit %d, want 1", args, r.code)
		}
		wantOneErrorLine(t, r.stderr, "invalid topic settings in "+settings, "retention_bytes -1 is out of range", "fix the file")
	}
}
