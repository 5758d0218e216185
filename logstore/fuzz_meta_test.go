package logstore

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seglog/seglog/format"
)

// Fuzz targets for seglog's own bookkeeping files, each parsed from
// whatever bytes are there: a topic's .seglog.json, a partition's
// .gaps.json, a group's TOPIC.json, a quarantine note, the manifest and
// end entry of a partition stream; and group names. No input may panic;
// what parses must survive a round trip through the writer, and errors
// must name the file.

// settingsSeeds are topic settings files, good and bad.
var settingsSeeds = []string{
	`{"segment_bytes":1073741824,"index_interval":4,"roll_after":"168h0m0s","retention":"24h0m0s","retention_bytes":1048576}`,
	`{}`, ``, `null`, `[]`, `{"segment_bytes":-1,"retention":"-1h"}`, `{"retention":"7d"}`,
	`{"roll_after":"9999999999h"}`, `{"segment_bytes":1e99}`, `{"index_interval":-5}`,
	`{"retention_bytes":9223372036854775807,"retention":"2562047h47m16.854775807s"}`,
	`{"retention_bytes":4611686018427387903}`, `{"retention_bytes":4611686018427387904}`, `{"segment_bytes":0}`,
	`{"retention":"0s"}`, `{"retention":"1ns"}`, `{"retention_ms":604800000}`, `{} {}`, `{}x`, ` {"retention":"1h"} `,
	`{"index_interval":1.5}`, `{"segment_bytes":"1GiB"}`, `{"retention":null}`, `{"retention":7}`, "\xef\xbb\xbf{}",
}

// FuzzParseSettings: no input panics the parser, and what parses is in
// create's range and encodes to a file that parses the same.
func FuzzParseSettings(f *testing.F) {
	for _, s := range settingsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseSettings(b)
		if err != nil {
			return
		}
		if st.SegmentBytes < 0 || st.SegmentBytes > MaxSizeSetting || st.RetentionBytes < 0 || st.RetentionBytes > MaxSizeSetting ||
			st.IndexInterval < 0 || st.RollAfter < 0 || st.Retention < 0 {
			t.Fatalf("settings %q parsed as %+v, out of create's range", b, st)
		}
		enc, err := encodeSettings(st)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := parseSettings(enc); err != nil || again != st {
			t.Fatalf("settings %q parsed as %+v, encoded as %q and read back as %+v (%v)", b, st, enc, again, err)
		}
	})
}

func FuzzTopicSettings(f *testing.F) {
	for _, s := range settingsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		s := Open(root)
		if err := s.CreateTopic("t", 1, Settings{}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, "t", settingsFile)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := readSettings(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) || !errors.Is(err, ErrInvalidSettings) {
				t.Fatalf("settings error does not name the file: %v", err)
			}
			if _, terr := s.Topic("t"); terr == nil {
				t.Fatalf("readSettings fails (%v), Topic does not", err)
			}
			return
		}
		// What parses is written back the same.
		if err := s.writeSettings(filepath.Join(root, "t"), st); err != nil {
			t.Fatal(err)
		}
		again, err := readSettings(path)
		if err != nil || again != st {
			t.Fatalf("settings %+v written back read as %+v (%v)", st, again, err)
		}
		top, err := s.Topic("t")
		if err != nil {
			t.Fatal(err)
		}
		eff := top.EffectiveSettings()
		if eff.SegmentBytes <= 0 || eff.IndexInterval <= 0 || eff.RollAfter <= 0 {
			t.Fatalf("stored %+v gives writer settings %+v", st, eff)
		}
		// A sweep (dry run) takes them as they are.
		_, err = s.RetentionSweep("t", -1, RetentionOptions{DryRun: true})
		if err != nil && !errors.Is(err, ErrNoRetention) {
			t.Fatalf("dry-run sweep with settings %+v: %v", st, err)
		}
		if errors.Is(err, ErrNoRetention) != (st.Retention == 0 && st.RetentionBytes == 0) {
			t.Fatalf("settings %+v: sweep says %v", st, err)
		}
	})
}

// fgPartition is a partition of records 0..4 and 10..14: offsets 5..9
// are a gap between its two segments.
func fgPartition(t *testing.T, dir string) {
	t.Helper()
	for _, base := range []uint64{0, 10} {
		var log []byte
		for o := base; o < base+5; o++ {
			log = format.AppendRecord(log, &format.Record{Offset: o, Timestamp: 1700000000000000000 + int64(o), Value: []byte("v")})
		}
		seg := segment{dir: dir, base: base}
		if err := os.WriteFile(seg.path(format.LogExt), log, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gapsSeeds are gaps files, good and bad.
var gapsSeeds = []string{
	`{"gaps":[{"from":5,"to":10,"time":"2024-01-01T00:00:00Z","reason":"salvage"}]}`,
	`{"gaps":[{"from":5,"to":7},{"from":7,"to":10}]}`,
	`{"gaps":[{"from":5,"to":8}]}`,
	`{"gaps":[{"from":10,"to":5},{"from":5,"to":5}]}`,
	`{"gaps":[{"from":0,"to":18446744073709551615}]}`,
	`{"gaps":null}`, `{}`, ``, `[`, `{"gaps":[1,2]}`,
	`{"gaps":[{"from":5,"to":10,"time":"2024-01-01T00:00:00Z"}],"more":1}`,
	`{"gaps":[{"from":0,"to":3,"time":"2024-01-01T00:00:00Z"}]}`,
	`{"gaps":[{"from":5,"to":7,"time":"2024-01-01T00:00:00Z"},{"from":7,"to":10,"time":"2024-01-01T00:00:00.5Z"}]}`,
	`{"gaps":[{"from":4,"to":10,"time":"2024-01-01T00:00:00Z"}]}`,
	`{"gaps":[{"from":15,"to":16,"time":"2024-01-01T00:00:00Z"}]}`,
	`{"gaps":[{"from":5,"to":10,"time":"yesterday"}]}`,
}

// FuzzParseGaps: no input panics the parser, and what parses is a list of
// well-formed gaps that encodes to a file that parses the same.
func FuzzParseGaps(f *testing.F) {
	for _, s := range gapsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		gaps, err := parseGaps(b)
		if err != nil {
			return
		}
		for _, g := range gaps {
			if _, err := time.Parse(time.RFC3339Nano, g.Time); g.From >= g.To || err != nil {
				t.Fatalf("gaps file %q parsed to gap %+v", b, g)
			}
		}
		enc, err := encodeGaps(gaps)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := parseGaps(enc); err != nil || !slices.Equal(again, gaps) {
			t.Fatalf("gaps file %q parsed as %+v, encoded as %q and read back as %+v (%v)", b, gaps, enc, again, err)
		}
	})
}

func FuzzGapsFile(f *testing.F) {
	for _, s := range gapsSeeds {
		f.Add([]byte(s), uint64(5), uint64(10))
	}
	f.Fuzz(func(t *testing.T, b []byte, from, to uint64) {
		dir := filepath.Join(t.TempDir(), "0")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, GapsFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		gaps, gerr := ReadGaps(dir)
		if gerr != nil && !strings.Contains(gerr.Error(), filepath.Join(dir, GapsFile)) {
			t.Fatalf("gaps error does not name the file: %v", gerr)
		}
		// Whether recorded gaps lying in a hole cover it: as one would
		// check it by hand, offset by offset, on small ranges.
		if from < to && to-from <= 4096 {
			g, whole := verifyKnownGap(gaps, from, to)
			want := true
			for o := from; o < to && want; o++ {
				covered := false
				for _, gp := range gaps {
					covered = covered || gp.From >= from && gp.To <= to && gp.From <= o && o < gp.To
				}
				want = covered
			}
			if whole != want {
				t.Fatalf("gaps %+v cover %d..%d: %v, want %v", gaps, from, to, whole, want)
			}
			if whole && g == nil {
				t.Fatalf("gaps %+v cover %d..%d whole, and no gap is named", gaps, from, to)
			}
		}
		// verify-crc over a partition with a real gap (offsets 5..9):
		// known exactly when the file covers it, a problem otherwise, and
		// the file itself a problem when it does not parse or records a
		// gap over offsets 0..4 or 10..14, which the segments hold, or
		// past the next offset 15.
		fgPartition(t, dir)
		p, err := OpenPartitionDir(dir, "t/0")
		if err != nil {
			t.Fatal(err)
		}
		defer fiClose(p)
		var kinds []string
		known, problem, fileBad := false, false, false
		_, verr := verifyOne(p, VerifyOptions{Jobs: 1, Finding: func(fd Finding) error {
			kinds = append(kinds, string(fd.Kind))
			switch {
			case fd.Kind == FindingGap && fd.Severity == SeverityKnown:
				known = true
			case fd.Kind == FindingGap && fd.Severity == SeverityProblem:
				problem = true
			case fd.Kind == FindingGapsFile:
				fileBad = true
			}
			return nil
		}})
		if verr != nil {
			t.Fatal(verr)
		}
		_, covers := verifyKnownGap(gaps, 5, 10)
		wrong := false
		for _, g := range gaps {
			wrong = wrong || g.From < 5 && g.To > 0 || g.From < 15 && g.To > 10 || g.To > 15
		}
		if fileBad != (gerr != nil || wrong) || known != (gerr == nil && covers) || problem != !known {
			t.Fatalf("gaps file %q (parse error %v): findings %v; known %v, problem %v", b, gerr, kinds, known, problem)
		}
	})
}

func FuzzGroupFile(f *testing.F) {
	for _, s := range []string{
		`{"topic":"t","partitions":{"0":1234,"1":99},"updated":"2024-05-01T12:00:00.123456789Z"}`,
		`{"topic":"t","partitions":{}}`, `{"topic":"u","partitions":{"0":1}}`, `{"partitions":{"0":1}}`,
		`{"topic":"t"}`, `{"topic":"t","partitions":{"-1":5}}`, `{"topic":"t","partitions":{"01":5}}`,
		`{"topic":"t","partitions":{"0":18446744073709551615}}`, `{"topic":"t","partitions":{"0":-1}}`,
		`{"topic":"t","partitions":{"99999999999999999999":1}}`, `{"topic":"t","partitions":{"0":1},"updated":"yesterday"}`,
		``, `null`, `{"topic":null,"partitions":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		const path = "data/.groups/g/t.json"
		c, err := parseGroupFile(path, "t", b)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("group file error does not name the file: %v", err)
			}
			return
		}
		for p := range c.Partitions {
			if p < 0 {
				t.Fatalf("partition %d parsed from %q", p, b)
			}
		}
		updated := c.Updated
		if updated.IsZero() {
			updated = time.Unix(1700000000, 0)
		}
		again, err := parseGroupFile(path, "t", appendGroupFile(nil, "t", c.Partitions, updated))
		if err != nil || !maps.Equal(again.Partitions, c.Partitions) || !again.Updated.Equal(updated) {
			t.Fatalf("group file %q parsed as %+v, written back and read as %+v (%v)", b, c, again, err)
		}
	})
}

func FuzzGroupName(f *testing.F) {
	for _, s := range []string{"g", "billing-2", "..", ".", "../x", "a/b", "", ".g", strings.Repeat("g", 249), strings.Repeat("g", 250), "g\x00", "grüppe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		root := t.TempDir()
		data := filepath.Join(root, "data")
		s := Open(data)
		g, err := s.OpenGroup(name, time.Millisecond)
		valid := format.ValidateTopic(name) == nil
		if !valid {
			if err == nil {
				t.Fatalf("group %q opened, but it is not a valid name", name)
			}
			if entries, _ := os.ReadDir(root); len(entries) != 0 {
				t.Fatalf("group %q refused (%v), yet %d entries were made", name, err, len(entries))
			}
			return
		}
		if err != nil {
			t.Fatalf("group %q: %v", name, err)
		}
		defer g.Close()
		if dir := s.GroupDir(name); filepath.Dir(dir) != filepath.Join(data, groupsDir) || filepath.Base(dir) != name {
			t.Fatalf("group %q lives in %s, not directly in %s", name, dir, filepath.Join(data, groupsDir))
		}
		if entries, _ := os.ReadDir(root); len(entries) != 1 || entries[0].Name() != "data" {
			t.Fatalf("group %q made entries beside the data directory", name)
		}
	})
}

func FuzzQuarantineNote(f *testing.F) {
	for _, s := range []string{
		`{"source":"data/t/0/00000000000000000000.log","pos":10,"length":5,"expected_offset":3,"reason":"torn","time":"2024-05-01T12:00:00Z","data":"x.bin"}`,
		`{"data":"x.bin"}`, `{"data":""}`, `{"data":"../x.bin"}`, `{"data":".."}`, `{"data":"."}`, `{"data":"/etc/passwd"}`,
		`{"data":"n.json"}`, `{"data":"x.bin","time":"not a time","pos":-1,"length":-5}`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		data := filepath.Join(root, "data")
		qdir := filepath.Join(data, QuarantineDir, "t", "0")
		if err := os.MkdirAll(qdir, 0o755); err != nil {
			t.Fatal(err)
		}
		// Something a wrong data field could point at: beside the
		// partition's quarantine, and beside the data directory.
		for _, p := range []string{filepath.Join(root, "x.bin"), filepath.Join(data, QuarantineDir, "t", "x.bin"), filepath.Join(qdir, "x.bin")} {
			if err := os.WriteFile(p, []byte("bytes"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		note := filepath.Join(qdir, "n.json")
		if err := os.WriteFile(note, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s := Open(data)
		entries, err := s.QuarantineEntries("", -1)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Note != note || filepath.Dir(e.Data) != qdir || e.Data == qdir {
				t.Fatalf("note %q: entry %+v: its data is not a file beside the note in %s", b, e, qdir)
			}
			if err := s.PurgeQuarantine(e); err != nil {
				t.Fatalf("purge %+v: %v", e, err)
			}
		}
		for _, p := range []string{filepath.Join(root, "x.bin"), filepath.Join(data, QuarantineDir, "t", "x.bin")} {
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("note %q: purge removed %s, outside the note's directory", b, p)
			}
		}
	})
}

// fsEntries splits a partition stream into its entries.
func fsEntries(tb testing.TB, stream []byte) (names []string, bodies [][]byte) {
	tr := tar.NewReader(bytes.NewReader(stream))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, bodies
		}
		if err != nil {
			tb.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			tb.Fatal(err)
		}
		names, bodies = append(names, h.Name), append(bodies, b)
	}
}

// FuzzStreamManifest imports a whole, valid stream whose manifest and end
// entry are replaced by arbitrary bytes (byte mutation of a tar rarely
// gets past its header checksums to the JSON): the import must fail
// cleanly or make a partition that passes verify (see checkImport).
func FuzzStreamManifest(f *testing.F) {
	names, bodies := fsEntries(f, fuzzStream(f))
	manifest, end := bodies[0], bodies[len(bodies)-1]
	f.Add(manifest, end)
	var m streamManifestJSON
	if err := json.Unmarshal(manifest, &m); err != nil {
		f.Fatal(err)
	}
	for _, change := range []func(*streamManifestJSON){
		func(m *streamManifestJSON) { m.Segments[0].LogBytes = 1 << 62 },
		func(m *streamManifestJSON) { m.Segments[0].IndexBytes = -16 },
		func(m *streamManifestJSON) { m.Segments[1].Base = m.Segments[0].Base },
		func(m *streamManifestJSON) { m.Segments = m.Segments[:1] },
		func(m *streamManifestJSON) { m.Segments = append(m.Segments, m.Segments[0]) },
		func(m *streamManifestJSON) { m.Segments[0].IndexInterval = -1 },
		func(m *streamManifestJSON) { m.Version = 2 },
		func(m *streamManifestJSON) { m.Settings, m.Gaps = true, true },
		func(m *streamManifestJSON) { m.Topic, m.Partition = "../x", -1 },
	} {
		mm := m
		mm.Segments = append([]streamSegmentJSON(nil), m.Segments...)
		change(&mm)
		b, err := json.Marshal(mm)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, end)
	}
	f.Add(manifest, []byte(`{"segments":1,"records":1,"next":1}`))
	f.Add(manifest, []byte(`{}`))
	f.Add([]byte(`{}`), []byte(``))
	f.Fuzz(func(t *testing.T, manifest, end []byte) {
		if len(manifest)+len(end) > 1<<16 {
			return
		}
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for i, name := range names {
			b := bodies[i]
			switch i {
			case 0:
				b = manifest
			case len(names) - 1:
				b = end
			}
			if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		checkImport(t, buf.Bytes())
	})
}

// verifyOne checks p alone (no key-routing hint), as verify-crc does a
// partition.
func verifyOne(p *Partition, opts VerifyOptions) (VerifyReport, error) {
	reports, err := Verify([]VerifyTarget{{Log: p}}, opts)
	return reports[0], err
}
