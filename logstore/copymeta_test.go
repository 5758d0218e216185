package logstore_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seglog/seglog/logstore"
)

// Helpers of this file carry a cm prefix: other test files of the package
// are written at the same time and must not clash.

// cmBadSettings are settings files create never writes: each must be
// refused wherever a settings file is read.
var cmBadSettings = map[string]string{
	"not JSON":          `{"segment_bytes":`,
	"null":              `null`,
	"a list":            `[]`,
	"unknown field":     `{"segment_bytes":1024,"retention_ms":5}`,
	"two objects":       `{} {}`,
	"a string for size": `{"segment_bytes":"1GiB"}`,
	"negative size":     `{"retention_bytes":-1}`,
	"size out of range": `{"segment_bytes":4611686018427387904}`,
	"fraction":          `{"index_interval":1.5}`,
	"negative interval": `{"index_interval":-4}`,
	"days":              `{"retention":"7d"}`,
	"zero duration":     `{"roll_after":"0s"}`,
	"negative duration": `{"retention":"-1h"}`,
}

// A topic whose settings file holds something create never wrote is an
// error naming the file (ErrInvalidSettings) for every command that reads
// it, not a topic that behaves as some other settings would make it.
func TestTopicSettingsStrict(t *testing.T) {
	for name, content := range cmBadSettings {
		t.Run(name, func(t *testing.T) {
			s, _ := rtWrite(t, 3, logstore.WriterOptions{})
			path := filepath.Join(s.Dir(), rtTopic, ".seglog.json")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := s.Topic(rtTopic)
			cmWantSettingsError(t, "Topic", err, path)
			_, err = s.OpenWriter(rtTopic, 0, logstore.WriterOptions{})
			cmWantSettingsError(t, "OpenWriter", err, path)
			_, err = s.RetentionSweep(rtTopic, -1, logstore.RetentionOptions{Retention: 1, DryRun: true})
			cmWantSettingsError(t, "RetentionSweep", err, path)
			dst := logstore.Open(filepath.Join(t.TempDir(), "data"))
			_, err = s.CopyPartition(rtTopic, 0, dst, logstore.CopyOptions{ToPartition: -1})
			cmWantSettingsError(t, "CopyPartition", err, path)
			_, err = s.ExportPartition(rtTopic, 0, io.Discard, logstore.CopyOptions{ToPartition: -1})
			cmWantSettingsError(t, "ExportPartition", err, path)
			if _, err := os.Stat(dst.Dir()); !os.IsNotExist(err) {
				t.Errorf("a refused copy made %s", dst.Dir())
			}
		})
	}
	// What create writes, and what it would write for every setting.
	for _, content := range []string{`{}`, "{\n  \"retention\": \"1h0m0s\"\n}\n",
		`{"segment_bytes":1073741824,"index_interval":4,"roll_after":"168h0m0s","retention":"2160h0m0s","retention_bytes":1048576}`} {
		s, _ := rtWrite(t, 3, logstore.WriterOptions{})
		if err := os.WriteFile(filepath.Join(s.Dir(), rtTopic, ".seglog.json"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Topic(rtTopic); err != nil {
			t.Errorf("settings %s: %v", content, err)
		}
	}
}

func cmWantSettingsError(t *testing.T, what string, err error, path string) {
	t.Helper()
	if !errors.Is(err, logstore.ErrInvalidSettings) || !strings.Contains(err.Error(), path) {
		t.Errorf("%s: %v; want ErrInvalidSettings naming %s", what, err, path)
	}
}

// cmHoled is a partition with a hole where its second segment was: the
// bases, and the hole [from, to).
func cmHoled(t *testing.T) (s *logstore.Store, dir string, from, to uint64) {
	t.Helper()
	s, dir, bases := rtWrite40(t)
	rtRemoveSegment(t, dir, bases[1])
	return s, dir, bases[1], bases[2]
}

// cmGaps writes a gaps file recording one gap.
func cmGaps(t *testing.T, dir string, from, to uint64) []byte {
	t.Helper()
	b := fmt.Appendf(nil, `{"gaps":[{"from":%d,"to":%d,"time":"2024-05-01T12:00:00Z","reason":"salvaged"}]}`+"\n", from, to)
	if err := os.WriteFile(filepath.Join(dir, logstore.GapsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// A gaps file is taken only as recover --salvage writes it: each gap lies
// in a hole of the partition's offsets, between its segments or below the
// first (retention deleted what was around it), never over offsets a
// segment holds nor past the next offset. A copy or export of a partition
// whose gaps file says otherwise is refused, naming the file, and leaves
// nothing.
func TestCopyChecksRecordedGaps(t *testing.T) {
	s, dir, from, to := cmHoled(t)
	for _, tc := range []struct {
		name     string
		from, to uint64
		ok       bool
	}{
		{"the hole", from, to, true},
		{"part of the hole", from + 1, to, true},
		{"everything", 0, 99999999999, false},
		{"into the segment after the hole", from, to + 1, false},
		{"a segment's own offsets", 0, 1, false},
		{"past the next offset", 40, 45, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmCopyGaps(t, s, dir, cmGaps(t, dir, tc.from, tc.to), !tc.ok)
		})
	}
	t.Run("below the first segment", func(t *testing.T) {
		// As a sweep leaves it, having taken the segments around it.
		s, dir, bases := rtWrite40(t)
		rtRemoveSegment(t, dir, bases[0])
		cmCopyGaps(t, s, dir, cmGaps(t, dir, 0, bases[1]), false)
	})
	// A gaps file that does not parse strictly: refused the same way.
	for _, content := range []string{`{"gaps":[{"from":5,"to":5,"time":"2024-05-01T12:00:00Z"}]}`, `{"gaps":[{"from":5,"to":6}]}`,
		`{"gaps":[],"note":"x"}`, `[]`} {
		if err := os.WriteFile(filepath.Join(dir, logstore.GapsFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		cmCopyGaps(t, s, dir, []byte(content), true)
	}
}

// cmCopyGaps copies and exports partition 0 of rtTopic, whose gaps file is
// gaps: refused (ErrInvalidGaps, naming it, leaving nothing) when bad,
// else carried over byte for byte.
func cmCopyGaps(t *testing.T, s *logstore.Store, dir string, gaps []byte, bad bool) {
	t.Helper()
	path := filepath.Join(dir, logstore.GapsFile)
	dst := logstore.Open(filepath.Join(t.TempDir(), "data"))
	_, err := s.CopyPartition(rtTopic, 0, dst, logstore.CopyOptions{ToPartition: -1})
	var stream bytes.Buffer
	_, xerr := s.ExportPartition(rtTopic, 0, &stream, logstore.CopyOptions{ToPartition: -1})
	if !bad {
		if err != nil || xerr != nil {
			t.Fatalf("gaps %s: copy: %v, export: %v", gaps, err, xerr)
		}
		if b, err := os.ReadFile(filepath.Join(dst.PartitionDir(rtTopic, 0), logstore.GapsFile)); err != nil || !bytes.Equal(b, gaps) {
			t.Errorf("the copy's gaps file: %q (%v), want %q", b, err, gaps)
		}
		return
	}
	for what, err := range map[string]error{"copy": err, "export": xerr} {
		if !errors.Is(err, logstore.ErrInvalidGaps) || !strings.Contains(err.Error(), path) {
			t.Errorf("gaps %s: %s: %v; want ErrInvalidGaps naming %s", gaps, what, err, path)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dst.Dir(), "*", "*")); len(m) > 0 {
		t.Errorf("gaps %s: the refused copy left %v", gaps, m)
	}
	if bytes.Contains(stream.Bytes(), []byte("seglog-end.json")) {
		t.Errorf("gaps %s: the refused export wrote the end entry: an import would take the stream for whole", gaps)
	}
}

// cmReplaceEntry rewrites a stream with the body of entry name replaced.
func cmReplaceEntry(t *testing.T, stream []byte, name string, body []byte) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(stream))
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	found := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == name {
			b, found = body, true
		}
		h.Size = int64(len(b))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("the stream has no entry %s", name)
	}
	return out.Bytes()
}

// import-partition validates the stream's settings and gaps like every
// other input: a stream whose settings create would not write, or whose
// gaps cover offsets its segments hold or pass its next offset, is
// refused, and nothing is placed.
func TestImportChecksSettingsAndGaps(t *testing.T) {
	s, dir, from, to := cmHoled(t)
	if err := os.WriteFile(filepath.Join(s.Dir(), rtTopic, ".seglog.json"), []byte(`{"retention":"1h0m0s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmGaps(t, dir, from, to)
	var stream bytes.Buffer
	if _, err := s.ExportPartition(rtTopic, 0, &stream, logstore.CopyOptions{ToPartition: -1}); err != nil {
		t.Fatal(err)
	}
	good := stream.Bytes()
	dst := logstore.Open(filepath.Join(t.TempDir(), "data"))
	if _, err := dst.ImportPartition("whole", 0, bytes.NewReader(good), logstore.CopyOptions{}); err != nil {
		t.Fatalf("the stream as exported: %v", err)
	}
	type bad struct{ entry, body string }
	var cases []bad
	for _, content := range cmBadSettings {
		cases = append(cases, bad{".seglog.json", content})
	}
	for _, g := range [][2]uint64{{0, 99999999999}, {from, to + 1}, {from - 1, to}, {40, 41}, {to, to + 3}} {
		cases = append(cases, bad{logstore.GapsFile, fmt.Sprintf(`{"gaps":[{"from":%d,"to":%d,"time":"2024-05-01T12:00:00Z","reason":"x"}]}`, g[0], g[1])})
	}
	cases = append(cases, bad{logstore.GapsFile, `{"gaps":[{"from":9,"to":3,"time":"2024-05-01T12:00:00Z"}]}`}, bad{logstore.GapsFile, `{"gaps":{}}`})
	for _, c := range cases {
		in := cmReplaceEntry(t, good, c.entry, []byte(c.body))
		dst := logstore.Open(filepath.Join(t.TempDir(), "data"))
		_, err := dst.ImportPartition(rtTopic, 0, bytes.NewReader(in), logstore.CopyOptions{})
		if !errors.Is(err, logstore.ErrStream) && !errors.Is(err, logstore.ErrInvalidGaps) || !strings.Contains(err.Error(), c.entry) {
			t.Errorf("stream with %s %s: %v; want it refused, naming %s", c.entry, c.body, err, c.entry)
		}
		if m, _ := filepath.Glob(filepath.Join(dst.Dir(), "*", "*")); len(m) > 0 {
			t.Errorf("stream with %s %s: the refused import left %v", c.entry, c.body, m)
		}
		if topics, _ := dst.Topics(); len(topics) > 0 {
			t.Errorf("stream with %s %s: the refused import left topics %v", c.entry, c.body, topics)
		}
	}
}
