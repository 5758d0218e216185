package commands

import (
	"bufio"
	"bytes"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite commands/testdata/golden/ from the code")

// goldenRecords is the fixed list of records the dump and template golden
// files print: positions as a segment holding them in order would have,
// timestamps 100 ms apart.
func goldenRecords() []logstore.Record {
	kvs := []struct{ key, value string }{
		{"user-1", "hello"},
		{"user-2", "world"},
		{"user-1", "foo"},
		{"", "no key"},
		{"k", ""},
		{"", ""},
		{"bin", "\x00\xff\x7f\x01\x1f\x20\x7e\x80"},
		{`"quoted" key`, `say "hi" \ and C:\dir\`},
		{"schlüssel", "ä grüße 日本"},
		{"tabs", "a\tb\r\nc\n"},
	}
	var recs []logstore.Record
	pos := int64(0)
	for i, kv := range kvs {
		var key []byte
		if kv.key != "" {
			key = []byte(kv.key)
		}
		r := logstore.Record{
			Record: format.Record{Offset: uint64(i), Timestamp: 1700000000000000000 + int64(i)*100000000, Key: key, Value: []byte(kv.value)},
			Pos:    pos,
		}
		r.CRC = format.Checksum(r.Timestamp, r.Key, r.Value)
		recs = append(recs, r)
		pos += format.RecordLen(r.Key, r.Value)
	}
	return recs
}

// checkGolden compares got with testdata/golden/name, or rewrites the file
// under -update-golden.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./commands -run Golden -update-golden to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (if the change is meant, rerun with -update-golden):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestDumpGolden(t *testing.T) {
	var times timeFormatter
	var got []byte
	for _, r := range goldenRecords() {
		got = appendDump(got, r, &times)
	}
	checkGolden(t, "dump.txt", got)
}

func dumpRecord(offset uint64, pos int64, ts int64, key, value string) logstore.Record {
	r := logstore.Record{Record: format.Record{Offset: offset, Timestamp: ts, Value: []byte(value)}, Pos: pos}
	if key != "" {
		r.Key = []byte(key)
	}
	r.CRC = format.Checksum(r.Timestamp, r.Key, r.Value)
	return r
}

func TestAppendDump(t *testing.T) {
	const ts = 1700000000200000000
	const tsText = "ts=2023-11-14T22:13:20.200000000Z"
	tests := []struct {
		name string
		r    logstore.Record
		want string
	}{
		{"plain", dumpRecord(2, 78, ts, "user-1", "foo"),
			`offset=2 pos=78 size=9 keylen=6 crc=0xe14ccc3d ok ` + tsText + ` key="user-1" value="foo"`},
		{"keyless", dumpRecord(0, 0, ts, "", "v"),
			`offset=0 pos=0 size=1 keylen=0 crc=` + string(appendHex32(nil, format.Checksum(ts, nil, []byte("v")))) + ` ok ` + tsText + ` key=- value="v"`},
		{"empty value", dumpRecord(1, 29, ts, "k", ""),
			`offset=1 pos=29 size=1 keylen=1 crc=` + string(appendHex32(nil, format.Checksum(ts, []byte("k"), nil))) + ` ok ` + tsText + ` key="k" value=""`},
		{"key is a dash", dumpRecord(1, 29, ts, "-", "x"),
			`key="-" value="x"`},
		{"binary", dumpRecord(7, 0, ts, "\x00", "\x00\xff\x7f\x01\x1f a~\x80"),
			`key="\x00" value="\x00\xff\x7f\x01\x1f a~\x80"`},
		{"quotes and backslashes", dumpRecord(7, 0, ts, `a"b`, `\"x\\`),
			`key="a\"b" value="\\\"x\\\\"`},
		{"UTF-8", dumpRecord(7, 0, ts, "ä", "grüße"),
			`key="\xc3\xa4" value="gr\xc3\xbc\xc3\x9fe"`},
		{"control characters", dumpRecord(7, 0, ts, "", "a\tb\r\nc\n"),
			`key=- value="a\x09b\x0d\x0ac\x0a"`},
		{"big numbers", dumpRecord(1<<63+5, 1<<40, ts, "", "v"),
			`offset=9223372036854775813 pos=1099511627776 size=1 keylen=0 `},
		{"before 1970", dumpRecord(0, 0, -1, "", "v"),
			`ts=1969-12-31T23:59:59.999999999Z key=- `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var times timeFormatter
			got := string(appendDump([]byte("prefix:"), tt.r, &times))
			if !strings.HasPrefix(got, "prefix:") || !strings.HasSuffix(got, "\n") {
				t.Fatalf("got %q: want dst kept and one newline at the end", got)
			}
			line := strings.TrimSuffix(strings.TrimPrefix(got, "prefix:"), "\n")
			if !strings.Contains(line, tt.want) {
				t.Errorf("got  %s\nwant it to contain %s", line, tt.want)
			}
			checkDumpLine(t, line)
		})
	}
}

// checkDumpLine checks that line is one line of printable ASCII.
func checkDumpLine(t *testing.T, line string) {
	t.Helper()
	for i := 0; i < len(line); i++ {
		if c := line[i]; c < 0x20 || c > 0x7e {
			t.Fatalf("byte %d of %q is %#x: a dump line must be printable ASCII", i, line, c)
		}
	}
}

// The 8-bytes-at-a-time skip escapes exactly what the byte-at-a-time rule
// says, wherever the bytes fall, and pieces escape to the same as the whole.
func TestAppendDumpEscapedMatchesRule(t *testing.T) {
	slow := func(s []byte) []byte {
		var b []byte
		for _, c := range s {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c >= 0x20 && c <= 0x7e:
				b = append(b, c)
			default:
				b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
			}
		}
		return b
	}
	r := rand.New(rand.NewPCG(7, 8))
	alphabet := []byte("ab \"\\\x00\x01\x1f\x20\x7e\x7f\x80\xc3\xa4\xfe\xff")
	for i := 0; i < 5000; i++ {
		s := make([]byte, r.IntN(40))
		for j := range s {
			if r.IntN(4) == 0 {
				s[j] = alphabet[r.IntN(len(alphabet))]
			} else {
				s[j] = byte(r.IntN(256))
			}
		}
		want := slow(s)
		if got := appendDumpEscaped(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q escaped as %q, want %q", s, got, want)
		}
		cut := r.IntN(len(s) + 1)
		if got := appendDumpEscaped(appendDumpEscaped(nil, s[:cut]), s[cut:]); !bytes.Equal(got, want) {
			t.Fatalf("%q escaped in two pieces at %d as %q, want %q", s, cut, got, want)
		}
	}
}

// writeDump, which escapes big values a piece at a time, prints what
// appendDump does.
func TestWriteDumpMatchesAppendDump(t *testing.T) {
	big := bytes.Repeat([]byte("ä\"\\\x00x"), outputPiece/2+3)
	recs := append(goldenRecords(), dumpRecord(99, 1234, 1700000000000000000, "big", string(big)))
	var times timeFormatter
	var want []byte
	for _, r := range recs {
		want = appendDump(want, r, &times)
	}
	var buf bytes.Buffer
	out := bufio.NewWriterSize(&buf, 4096)
	var times2 timeFormatter
	for _, r := range recs {
		if err := writeDump(out, r, &times2); err != nil {
			t.Fatal(err)
		}
	}
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("writeDump printed %d bytes, appendDump %d: they differ", buf.Len(), len(want))
	}
}

func benchRecord() logstore.Record {
	value := bytes.Repeat([]byte("0123456789"), 10)
	return dumpRecord(12345, 987654, 1700000000000000000, "user-12345", string(value))
}

func BenchmarkDump(b *testing.B) {
	r := benchRecord()
	var times timeFormatter
	var buf []byte
	b.SetBytes(int64(len(r.Value)))
	b.ReportAllocs()
	for b.Loop() {
		r.Timestamp += 1000
		buf = appendDump(buf[:0], r, &times)
	}
}

// appendDump is a dump line built whole: the reference writeDump, which
// escapes big values a piece at a time, must match.
func appendDump(dst []byte, r logstore.Record, times *timeFormatter) []byte {
	dst = appendDumpHead(dst, r, times)
	dst = appendDumpEscaped(dst, r.Value)
	return append(dst, '"', '\n')
}

// read --format dump --skip-corrupt shows each record it skipped as
// damaged, marked, with its stored and computed CRC, as kafka-dump-log
// shows invalid batches; the valid records around it as ever.
func TestReadDumpShowsDamage(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "aa\nbb\ncc\n", "append", "t", "--create")
	log := logPath(dir, "t", 0)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// Records of 28+2 bytes: "bb" is at 30, its value at 58.
	b[59] ^= 0x01
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, dir, "", "read", "t", "--format", "dump", "--skip-corrupt")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines (a record, the damaged one, a record):\n%s", r.stdout)
	}
	if !strings.HasPrefix(lines[0], "offset=0 pos=0 ") || !strings.HasSuffix(lines[0], `value="aa"`) ||
		!strings.HasPrefix(lines[2], "offset=2 pos=60 ") || !strings.HasSuffix(lines[2], `value="cc"`) {
		t.Errorf("valid records:\n%s", r.stdout)
	}
	for _, want := range []string{"offset=1 pos=30 size=2 keylen=0 crc=0x", " BAD (computed 0x", ` key=- value="bc" damage="corrupt record at byte 30 `, "crc mismatch", "valid records resume at byte 60 with offset 2"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("damaged line lacks %q:\n%s", want, lines[1])
		}
	}
	if !strings.Contains(r.stderr, "seglog: warning: skipping corrupt record at byte 30") {
		t.Errorf("no warning of the skip:\n%s", r.stderr)
	}
	// A torn tail is the end of the data, not damage to show.
	b[59] ^= 0x01
	if err := os.WriteFile(log, b[:len(b)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, dir, nil, "read", "t", "--format", "dump", "--skip-corrupt")
	if r.code != 0 || strings.Contains(r.stdout, "damage=") {
		t.Errorf("a torn tail is the end of the data, not damage to show: exit %d\n%s", r.code, r.stdout)
	}
}
