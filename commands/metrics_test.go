package commands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/seglog/seglog/logstore"
)

// mxFamilies parses metrics output with the Prometheus text parser, and
// checks every family is a gauge with the HELP metricFamilies gives it.
func mxFamilies(t *testing.T, out string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(out))
	if err != nil {
		t.Fatalf("the text parser refuses the output: %v\n%s", err, out)
	}
	help := map[string]string{}
	for _, f := range metricFamilies {
		help[f.name] = f.help
	}
	for name, f := range fams {
		want, ok := help[name]
		switch {
		case !ok:
			t.Errorf("family %s is not among metricFamilies", name)
		case f.Help == nil || f.GetHelp() != want:
			t.Errorf("family %s: HELP %q, want %q", name, f.GetHelp(), want)
		}
		if f.GetType() != dto.MetricType_GAUGE {
			t.Errorf("family %s: TYPE %s, want gauge", name, f.GetType())
		}
	}
	if got := strings.Count(out, "# TYPE "); got != len(fams) {
		t.Errorf("%d TYPE lines for %d families", got, len(fams))
	}
	return fams
}

// mxValue is the value of the sample of family name with exactly labels
// (name, value pairs); ok is false when there is none.
func mxValue(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		if len(m.Label) != len(want) {
			continue
		}
		for _, l := range m.Label {
			if want[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

// mxWant checks one sample's value.
func mxWant(t *testing.T, fams map[string]*dto.MetricFamily, want float64, name string, labels ...string) {
	t.Helper()
	got, ok := mxValue(fams, name, labels...)
	switch {
	case !ok:
		t.Errorf("no sample %s%v", name, labels)
	case got != want:
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

// mxFixture is a data directory with topic t (3 partitions, records
// spread over segments), an empty topic e, and group g that read 4 of t's
// records.
func mxFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var in strings.Builder
	for i := range 20 {
		in.WriteString("record " + strconv.Itoa(i) + "\n")
	}
	mustRun(t, dir, in.String(), "append", "t", "--create", "--partitions", "3", "--segment-bytes", "100")
	mustRun(t, dir, "", "create", "e")
	mustRun(t, dir, "", "read", "t", "--group", "g", "--count", "4")
	return dir
}

func TestMetricsAgreeWithDescribe(t *testing.T) {
	dir := mxFixture(t)
	before := time.Now()
	r := mustRun(t, dir, "", "metrics")
	if r.stderr != "" {
		t.Errorf("stderr: %s", r.stderr)
	}
	fams := mxFamilies(t, r.stdout)
	for _, f := range metricFamilies {
		if fams[f.name] == nil {
			t.Errorf("family %s missing from the output", f.name)
		}
	}

	doc := dtParse(t, mustRun(t, dir, "", "describe", "--json").stdout)
	if len(doc.Topics) != 2 {
		t.Fatalf("describe --json: %d topics, want 2", len(doc.Topics))
	}
	for _, tp := range doc.Topics {
		mxWant(t, fams, 1, "seglog_topic_up", "topic", tp.Topic)
		mxWant(t, fams, float64(len(tp.Partitions)), "seglog_topic_partitions", "topic", tp.Topic)
		for _, p := range tp.Partitions {
			l := []string{"topic", tp.Topic, "partition", strconv.Itoa(p.Partition)}
			mxWant(t, fams, 1, "seglog_partition_up", l...)
			mxWant(t, fams, float64(p.Bytes), "seglog_partition_size_bytes", l...)
			mxWant(t, fams, float64(p.Segments), "seglog_partition_segments", l...)
			mxWant(t, fams, float64(p.Start), "seglog_partition_start_offset", l...)
			mxWant(t, fams, float64(p.Next), "seglog_partition_next_offset", l...)
			mxWant(t, fams, 0, "seglog_partition_writer_active", l...)
			if p.OldestNS == nil {
				if _, ok := mxValue(fams, "seglog_partition_oldest_timestamp_seconds", l...); ok {
					t.Errorf("%v: an oldest timestamp without records", l)
				}
				continue
			}
			mxWant(t, fams, float64(*p.OldestNS)/1e9, "seglog_partition_oldest_timestamp_seconds", l...)
			mxWant(t, fams, float64(*p.NewestNS)/1e9, "seglog_partition_newest_timestamp_seconds", l...)
		}
	}
	if doc.Topics[1].Partitions[0].Segments < 2 {
		t.Errorf("the fixture's partitions should span segments: %+v", doc.Topics[1].Partitions[0])
	}

	var groups struct {
		Groups []struct {
			Group      string `json:"group"`
			Partitions []struct {
				Topic     string  `json:"topic"`
				Partition int     `json:"partition"`
				Committed uint64  `json:"committed_offset"`
				Lag       *uint64 `json:"lag"`
				UpdatedNS *int64  `json:"updated_ns"`
			} `json:"partitions"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, dir, "", "describe", "--groups", "--json").stdout), &groups); err != nil {
		t.Fatal(err)
	}
	if len(groups.Groups) != 1 {
		t.Fatalf("describe --groups: %d groups, want 1", len(groups.Groups))
	}
	g := groups.Groups[0]
	var total, committed uint64
	for _, p := range g.Partitions {
		l := []string{"group", g.Group, "topic", p.Topic, "partition", strconv.Itoa(p.Partition)}
		mxWant(t, fams, float64(p.Committed), "seglog_group_committed_offset", l...)
		mxWant(t, fams, float64(*p.Lag), "seglog_group_lag", l...)
		mxWant(t, fams, float64(*p.UpdatedNS)/1e9, "seglog_group_last_commit_timestamp_seconds", "group", g.Group, "topic", p.Topic)
		total += *p.Lag
		committed += p.Committed
	}
	if committed != 4 || total == 0 {
		t.Errorf("group g: %d committed, lag %d; want 4 read, and some left", committed, total)
	}
	mxWant(t, fams, float64(total), "seglog_group_total_lag", "group", "g")
	mxWant(t, fams, 1, "seglog_group_up", "group", "g")

	taken, _ := mxValue(fams, "seglog_scrape_timestamp_seconds")
	if taken < float64(before.UnixNano())/1e9 || taken > float64(time.Now().UnixNano())/1e9 {
		t.Errorf("seglog_scrape_timestamp_seconds %v is not when metrics ran", taken)
	}
	if took, ok := mxValue(fams, "seglog_scrape_duration_seconds"); !ok || took < 0 {
		t.Errorf("seglog_scrape_duration_seconds %v", took)
	}
}

// mxSteady is metrics output without the lines that change from run to
// run.
func mxSteady(out string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(out, "\n") {
		if !strings.HasPrefix(line, "seglog_scrape_") {
			b.WriteString(line)
		}
	}
	return b.String()
}

func TestMetricsDescribePrometheusIsTheSame(t *testing.T) {
	dir := mxFixture(t)
	for _, args := range [][]string{{}, {"t"}, {"t", "--partition", "0"}} {
		m := mustRun(t, dir, "", append([]string{"metrics"}, args...)...)
		d := mustRun(t, dir, "", append([]string{"describe", "--prometheus"}, args...)...)
		if mxSteady(m.stdout) != mxSteady(d.stdout) {
			t.Errorf("%v: describe --prometheus differs from metrics:\n%s\nmetrics:\n%s", args, d.stdout, m.stdout)
		}
	}
	fams := mxFamilies(t, mustRun(t, dir, "", "metrics", "t", "--partition", "0").stdout)
	if n := len(fams["seglog_partition_up"].Metric); n != 1 {
		t.Errorf("--partition 0: %d partitions exported", n)
	}
	if _, ok := mxValue(fams, "seglog_topic_up", "topic", "e"); ok {
		t.Error("metrics t exported topic e")
	}
	if n := len(fams["seglog_group_committed_offset"].Metric); n != 1 {
		t.Errorf("--partition 0: %d group positions exported", n)
	}
}

func TestMetricsWriterActive(t *testing.T) {
	dir := mxFixture(t)
	w, err := logstore.Open(dir).OpenWriter("t", 1, logstore.WriterOptions{Sync: logstore.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if logstore.WriterPid(filepath.Join(dir, "t", "1")) == 0 {
		t.Skip("/proc/locks does not show our flock: the writer cannot be seen")
	}
	fams := mxFamilies(t, mustRun(t, dir, "", "metrics", "t").stdout)
	mxWant(t, fams, 0, "seglog_partition_writer_active", "topic", "t", "partition", "0")
	mxWant(t, fams, 1, "seglog_partition_writer_active", "topic", "t", "partition", "1")
}

func TestMetricsOutputReplacesTheFile(t *testing.T) {
	dir := mxFixture(t)
	textfiles := t.TempDir()
	out := filepath.Join(textfiles, "seglog.prom")
	if err := os.WriteFile(out, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, dir, "", "metrics", "--output", out)
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("--output: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if mxSteady(string(b)) != mxSteady(mustRun(t, dir, "", "metrics").stdout) {
		t.Errorf("the file is not what metrics prints:\n%s", b)
	}
	mxFamilies(t, string(b))
	entries, _ := os.ReadDir(textfiles)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want the file alone: %v", len(entries), entries)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm()&0o044 != 0o044 {
		t.Errorf("mode %v: node_exporter may not read it", fi.Mode())
	}

	// A directory that is not there: nothing is written, and the error
	// names the file.
	gone := filepath.Join(textfiles, "nodir", "seglog.prom")
	r = runIn(t, dir, nil, "metrics", "--output", gone)
	if r.code != exitError {
		t.Fatalf("--output in a missing directory: exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "--output "+gone, "nothing was replaced")
}

func TestMetricsMissingTopic(t *testing.T) {
	dir := mxFixture(t)
	out := filepath.Join(t.TempDir(), "seglog.prom")
	r := runIn(t, dir, nil, "metrics", "nosuch", "t", "--output", out)
	if r.code != exitError {
		t.Fatalf("exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "nosuch")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("--output not written despite what could be read: %v", err)
	}
	fams := mxFamilies(t, string(b))
	mxWant(t, fams, 0, "seglog_topic_up", "topic", "nosuch")
	mxWant(t, fams, 1, "seglog_topic_up", "topic", "t")
	mxWant(t, fams, 3, "seglog_topic_partitions", "topic", "t")
}

func TestMetricsUnreadablePartition(t *testing.T) {
	dir := mxFixture(t)
	// The group read from partition 0 only: its position there stays
	// known when the partition cannot be read.
	seg := filepath.Join(dir, "t", "0", "00000000000000000000.log")
	if err := os.Remove(seg); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(seg, 0o755); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "", "create", "gappy", "--partitions", "3")
	if err := os.RemoveAll(filepath.Join(dir, "gappy", "1")); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, dir, nil, "metrics")
	if r.code != exitError {
		t.Fatalf("exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "t/0", "not a regular file", "gappy")
	fams := mxFamilies(t, r.stdout)
	mxWant(t, fams, 0, "seglog_partition_up", "topic", "t", "partition", "0")
	mxWant(t, fams, 1, "seglog_partition_up", "topic", "t", "partition", "1")
	mxWant(t, fams, 0, "seglog_partition_up", "topic", "gappy", "partition", "1")
	mxWant(t, fams, 1, "seglog_partition_up", "topic", "gappy", "partition", "2")
	if _, ok := mxValue(fams, "seglog_partition_size_bytes", "topic", "t", "partition", "0"); ok {
		t.Error("a size for the partition that could not be read")
	}
	if _, ok := mxValue(fams, "seglog_partition_size_bytes", "topic", "t", "partition", "1"); !ok {
		t.Error("no size for a partition beside the one that could not be read")
	}
	if _, ok := mxValue(fams, "seglog_group_committed_offset", "group", "g", "topic", "t", "partition", "0"); !ok {
		t.Error("the group's position in the unreadable partition is missing")
	}
	if _, ok := mxValue(fams, "seglog_group_lag", "group", "g", "topic", "t", "partition", "0"); ok {
		t.Error("a lag for the partition that could not be read")
	}
}

func TestMetricsDataDirs(t *testing.T) {
	empty := t.TempDir()
	r := runIn(t, empty, nil, "metrics")
	if r.code != exitError {
		t.Fatalf("a data directory without topics: exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "holds no topics", "--data-dir")
	mxFamilies(t, r.stdout)

	gone := filepath.Join(empty, "nosuch")
	out := filepath.Join(empty, "seglog.prom")
	r = runIn(t, gone, nil, "metrics", "--output", out)
	if r.code != exitError {
		t.Fatalf("a data directory that does not exist: exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, gone, "does not exist")
	if _, err := os.Stat(out); err == nil {
		t.Error("--output written for a data directory that does not exist")
	}
	r = runIn(t, gone, nil, "metrics", "t", "--output", out)
	if r.code != exitError {
		t.Fatalf("a topic in a data directory that does not exist: exit %d, want %d", r.code, exitError)
	}
	wantOneErrorLine(t, r.stderr, "data directory "+gone+" does not exist", "--data-dir")
	if _, err := os.Stat(out); err == nil {
		t.Error("--output written for a data directory that does not exist")
	}
}

func TestMetricsUsage(t *testing.T) {
	dir := mxFixture(t)
	for _, args := range [][]string{
		{"metrics", "--partition", "-1"},
		{"metrics", "--output", ""},
		{"metrics", ".hidden"},
		{"describe", "--prometheus", "--json"},
		{"describe", "--prometheus", "--groups"},
		{"describe", "--prometheus", "--timeline"},
	} {
		r := runIn(t, dir, nil, args...)
		if r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, r.code, exitUsage)
			continue
		}
		wantOneErrorLine(t, r.stderr)
	}
}

// Label values and HELP text carry the format's escapes, so a name the
// format would misread (a directory named by path may hold anything)
// reads back whole, but for bytes that are not UTF-8.
func TestMetricsEscapes(t *testing.T) {
	odd := "a\"b\\c\nd\xffe"
	s := &metricsSnapshot{topics: []topicMetrics{{name: odd}}, groups: []*groupInfo{{name: odd, err: os.ErrNotExist}}}
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	if err := writeMetrics(bw, s); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	fams := mxFamilies(t, b.String())
	read := strings.ToValidUTF8(odd, "\uFFFD")
	mxWant(t, fams, 0, "seglog_topic_up", "topic", read)
	mxWant(t, fams, 0, "seglog_group_up", "group", read)
}

// docs/cli.md's table under ## Monitoring lists every family metrics
// exports, in order, with the labels its samples carry.
func TestMetricsDocumented(t *testing.T) {
	var table *cdocTable
	for _, tb := range cdocTables(t) {
		if tb.section == "Monitoring" && tb.header[0] == "metric" {
			table = &tb
		}
	}
	if table == nil {
		t.Fatalf("%s: no table of metrics under ## Monitoring", cdocFile)
	}
	fams := mxFamilies(t, mustRun(t, mxFixture(t), "", "metrics").stdout)
	var documented []string
	for _, row := range table.rows {
		names := cdocCodes(row[0])
		if len(names) != 1 {
			t.Errorf("%s:%d: row %q does not name one metric", cdocFile, table.line, row)
			continue
		}
		documented = append(documented, names[0])
		f := fams[names[0]]
		if f == nil {
			continue // not a family: the comparison below says so
		}
		labels := map[string]bool{}
		for _, m := range f.Metric {
			for _, l := range m.Label {
				labels[l.GetName()] = true
			}
		}
		if got, want := strings.Join(slices.Sorted(maps.Keys(labels)), " "), strings.Join(slices.Sorted(slices.Values(cdocCodes(row[1]))), " "); got != want {
			t.Errorf("%s: %s has labels %q, the table gives %q", cdocFile, names[0], got, want)
		}
	}
	var code []string
	for _, f := range metricFamilies {
		code = append(code, f.name)
	}
	if !slices.Equal(documented, code) {
		t.Errorf("%s, ## Monitoring lists\n%v\nmetricFamilies are\n%v", cdocFile, documented, code)
	}
}

// A topic named twice, or by name and by path, is exported once: the
// collector refuses a file with two series alike.
func TestMetricsTopicNamedTwice(t *testing.T) {
	dir := mxFixture(t)
	for _, args := range [][]string{{"t", "t"}, {"t", filepath.Join(dir, "t")}} {
		r := runIn(t, dir, nil, append([]string{"metrics"}, args...)...)
		if r.code != exitError {
			t.Errorf("metrics %v: exit %d, want %d", args, r.code, exitError)
		}
		wantOneErrorLine(t, r.stderr, args[1], "exported already", "name each topic once")
		fams := mxFamilies(t, r.stdout)
		if n := len(fams["seglog_partition_up"].Metric); n != 3 {
			t.Errorf("metrics %v: %d partitions exported, want t's 3", args, n)
		}
	}
}
