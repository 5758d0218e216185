package commands

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seglog/seglog/logstore"
)

// tlT0 is the start of the timeline tests' topic: 2023-11-14T22:13:20Z.
const tlT0 = 1700000000000000000

// tlTopic writes topic "orders" with two partitions: partition 0 a burst
// over the first 20 s of a minute then silence until one record at its
// end, partition 1 steady traffic that stops half way.
func tlTopic(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s := logstore.Open(dir)
	if err := s.CreateTopic("orders", 2, logstore.Settings{}); err != nil {
		t.Fatal(err)
	}
	var stamps [2][]int64
	for i := range 40 {
		stamps[0] = append(stamps[0], tlT0+int64(i)*int64(500*time.Millisecond))
	}
	stamps[0] = append(stamps[0], tlT0+int64(time.Minute)-1)
	for i := range 15 {
		stamps[1] = append(stamps[1], tlT0+int64(i)*int64(2*time.Second))
	}
	for p, ts := range stamps {
		w, err := s.OpenWriter("orders", p, logstore.WriterOptions{Sync: logstore.SyncNever})
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range ts {
			if _, err := w.Append(at, nil, []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tlRun runs describe --timeline on tlTopic's data and returns stdout,
// the topic's directory replaced by DIR.
func tlRun(t *testing.T, args ...string) string {
	t.Helper()
	dir := tlTopic(t)
	r := mustRun(t, dir, "", append([]string{"describe", "orders", "--timeline"}, args...)...)
	return strings.ReplaceAll(r.stdout, filepath.Join(dir, "orders"), "DIR")
}

// With --width 29, 20 columns of 3 s each: partition 0's 6 records per
// bucket for 20 s, then one at the very end; partition 1's 2 and 1
// alternating until 30 s.
func TestDescribeTimelineASCII(t *testing.T) {
	t.Setenv("LC_ALL", "en_US.UTF-8") // --ascii wins over the locale
	got := tlRun(t, "--width", "29", "--ascii")
	want := "topic orders (DIR)\n" +
		"orders/0 @@@@@@*            :\n" +
		"orders/1 -:-:-:-:-:          \n" +
		"         2023-11-14T22:13:20.000000000Z to 2023-11-14T22:14:19.999999999Z\n" +
		"         each column 3s, @ = 6 records\n"
	if got != want {
		t.Errorf("describe --timeline --ascii:\n%s\nwant:\n%s", got, want)
	}
}

func TestDescribeTimelineUnicode(t *testing.T) {
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_CTYPE", "en_US.utf8")
	got := tlRun(t, "--width", "29")
	want := "topic orders (DIR)\n" +
		"orders/0 ██████▆            ▂\n" +
		"orders/1 ▃▂▃▂▃▂▃▂▃▂          \n" +
		"         2023-11-14T22:13:20.000000000Z to 2023-11-14T22:14:19.999999999Z\n" +
		"         each column 3s, █ = 6 records\n"
	if got != want {
		t.Errorf("describe --timeline:\n%s\nwant:\n%s", got, want)
	}
}

// TestDescribeTimelineLocale: without a UTF-8 locale, ASCII.
func TestDescribeTimelineLocale(t *testing.T) {
	t.Setenv("LC_ALL", "C")
	if got := tlRun(t, "--width", "29"); !strings.Contains(got, "orders/0 @@@@@@*") {
		t.Errorf("describe --timeline in the C locale is not ASCII:\n%s", got)
	}
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"LANG": "en_US.UTF-8"}, true},
		{map[string]string{"LANG": "de_DE.utf8"}, true},
		{map[string]string{"LC_CTYPE": "C.UTF-8", "LANG": "C"}, true},
		{map[string]string{"LC_ALL": "C", "LANG": "en_US.UTF-8"}, false},
		{map[string]string{"LANG": "en_US.ISO-8859-1"}, false},
		{map[string]string{}, false},
	} {
		if got := utf8Locale(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("utf8Locale(%v) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

// TestDescribeTimelineAxis: when the chart is wide enough, the start and
// end times sit under its two ends.
func TestDescribeTimelineAxis(t *testing.T) {
	lines := strings.Split(tlRun(t, "--width", "80", "--ascii"), "\n")
	axis := lines[3]
	if len(axis) != 80 || !strings.HasPrefix(axis, "         2023-11-14T22:13:20.000000000Z ") ||
		!strings.HasSuffix(axis, " 2023-11-14T22:14:19.999999999Z") {
		t.Errorf("axis line %q: want both times at the chart's ends, 80 wide", axis)
	}
	if len(lines[1]) != 80 {
		t.Errorf("row %q is %d wide, want 80", lines[1], len(lines[1]))
	}
}

func TestDescribeTimelineJSON(t *testing.T) {
	var doc timelineJSON
	out := tlRun(t, "--width", "20", "--json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(doc.Topics) != 1 {
		t.Fatalf("%d topics, want 1:\n%s", len(doc.Topics), out)
	}
	tj := doc.Topics[0]
	if tj.Width != 20 || len(tj.Buckets) != 20 || *tj.FromNS != tlT0 || *tj.ToNS != tlT0+int64(time.Minute)-1 {
		t.Errorf("width %d, %d buckets, from %d to %d:\n%s", tj.Width, len(tj.Buckets), *tj.FromNS, *tj.ToNS, out)
	}
	for i, b := range tj.Buckets {
		ns := tlT0 + int64(i)*int64(3*time.Second)
		if b.StartNS != ns || b.Start != time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000000Z") {
			t.Errorf("bucket %d: %+v, want start %d", i, b, ns)
		}
	}
	want := [][]uint64{
		{6, 6, 6, 6, 6, 6, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
		{2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	for i, p := range tj.Partitions {
		if p.Partition != i || !slices.Equal(p.Counts, want[i]) {
			t.Errorf("partition %d: %+v, want counts %v", i, p, want[i])
		}
		// Every record is indexed: the records are counted from the index,
		// as describe --json says.
		if p.RecordsExact {
			t.Errorf("partition %d: records_exact true for a count from the index", i)
		}
	}
}

func TestDescribeTimelineFlags(t *testing.T) {
	dir := tlTopic(t)
	for _, args := range [][]string{
		{"describe", "--width", "40"},
		{"describe", "--ascii"},
		{"describe", "--timeline", "--groups"},
		{"describe", "--timeline", "--width", "0"},
	} {
		r := runIn(t, dir, nil, args...)
		if r.code != exitUsage {
			t.Errorf("seglog %q: exit %d, want %d (usage); stderr %q", args, r.code, exitUsage, r.stderr)
		}
	}
}
