package commands

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore"
)

// goldenTemplates are printed over goldenRecords into
// testdata/golden/template-NAME.txt.
var goldenTemplates = []struct{ name, fmt string }{
	{"all", `%t/%p@%o pos=%b crc=%c ts=%T keylen=%K valuelen=%S key=%k value=%s\n`},
	{"kcat", `Topic %t [%p] at offset %o: key %k: %s\n`},
	{"tsv", `%o\t%T\t%K\t%S\t%k\t%s\n`},
	{"raw", `%s`},
	{"literals", `100%% \\ %o\n`},
}

func TestTemplateGolden(t *testing.T) {
	for _, gt := range goldenTemplates {
		t.Run(gt.name, func(t *testing.T) {
			tmpl, err := parseTemplate(gt.fmt)
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			for _, r := range goldenRecords() {
				got = tmpl.append(got, r, "orders", 3)
			}
			checkGolden(t, "template-"+gt.name+".txt", got)
		})
	}
}

func TestTemplate(t *testing.T) {
	const ts = 1700000000234567891 // ms 1700000000234
	rec := func(key, value string) logstore.Record {
		r := logstore.Record{Record: format.Record{Offset: 42, Timestamp: ts, Value: []byte(value)}, Pos: 1234, CRC: 0x0badf00d}
		if key != "" {
			r.Key = []byte(key)
		}
		return r
	}
	tests := []struct {
		name, fmt string
		r         logstore.Record
		want      string
	}{
		{"topic", "%t", rec("k", "v"), "orders"},
		{"partition", "%p", rec("k", "v"), "7"},
		{"offset", "%o", rec("k", "v"), "42"},
		{"key", "%k", rec("user-1", "v"), "user-1"},
		{"value", "%s", rec("k", "hello"), "hello"},
		{"timestamp ms", "%T", rec("k", "v"), "1700000000234"},
		{"key length", "%K", rec("user-1", "v"), "6"},
		{"value length", "%S", rec("k", "hello"), "5"},
		{"delimiter escapes", `%s\r\n\0\t\\\x1e\xFF`, rec("k", "v"), "v\r\n\x00\t\\\x1e\xff"},
		{"byte position", "%b", rec("k", "v"), "1234"},
		{"crc", "%c", rec("k", "v"), "0x0badf00d"},
		{"percent", "%%", rec("k", "v"), "%"},
		{"newline", `\n`, rec("k", "v"), "\n"},
		{"tab", `\t`, rec("k", "v"), "\t"},
		{"backslash", `\\`, rec("k", "v"), `\`},
		{"no newline added", "%s", rec("k", "v"), "v"},
		{"empty template", "", rec("k", "v"), ""},
		{"literal text only", "x y z", rec("k", "v"), "x y z"},
		{"keyless key", "[%k]", rec("", "v"), "[]"},
		{"keyless key length", "%K", rec("", "v"), "-1"},
		{"empty value", "[%s] %S", rec("k", ""), "[] 0"},
		{"binary bytes raw", "%k|%s", rec("\x00", "\x00\xff\x7f"), "\x00|\x00\xff\x7f"},
		{"quotes and backslashes raw", "%s", rec("k", `"\`), `"\`},
		{"UTF-8 raw", "%k=%s", rec("ä", "grüße"), "ä=grüße"},
		{"UTF-8 in the template", "ä%o€", rec("k", "v"), "ä42€"},
		{"escapes next to verbs", `%%s\\n%s\n`, rec("k", "v"), `%s\nv` + "\n"},
		{"every token", `%t %p %o %k %s %T %K %S %b %c %% \n\t\\`, rec("key", "value"),
			"orders 7 42 key value 1700000000234 3 5 1234 0x0badf00d % \n\t\\"},
		{"kcat style", `Topic %t [%p] at offset %o: key %k: %s\n`, rec("k", "v"), "Topic orders [7] at offset 42: key k: v\n"},
		{"before 1970 rounds down", "%T", logstore.Record{Record: format.Record{Timestamp: -1}}, "-1"},
		{"whole ms before 1970", "%T", logstore.Record{Record: format.Record{Timestamp: -2000000}}, "-2"},
		{"zero crc", "%c", logstore.Record{}, "0x00000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := parseTemplate(tt.fmt)
			if err != nil {
				t.Fatalf("parseTemplate(%q): %v", tt.fmt, err)
			}
			got := string(tmpl.append([]byte("dst:"), tt.r, "orders", 7))
			if want := "dst:" + tt.want; got != want {
				t.Errorf("template %q printed %q, want %q", tt.fmt, got, want)
			}
		})
	}
}

func TestParseTemplateErrors(t *testing.T) {
	tests := []struct {
		fmt  string
		want []string // in the message
	}{
		{"%x", []string{`unknown "%x"`, "position 1"}},
		{"abc%q", []string{`unknown "%q"`, "position 4"}},
		{"%", []string{`lone "%"`, "position 1", "end of the template", "%%"}},
		{"%s\\n%", []string{`lone "%"`, "position 5"}},
		{`\q`, []string{`unknown escape "\q"`, "position 1", `\xNN`}},
		{`%s\x4`, []string{`incomplete \x escape`, "position 3"}},
		{`%s\xzz`, []string{`bad \x escape "\xzz"`, "position 3"}},
		{`ä\ö`, []string{`unknown escape "\ö"`, "position 2"}},
		{`\`, []string{`lone "\"`, "position 1", `\\`}},
		{`%s\n\`, []string{`lone "\"`, "position 5"}},
		{"%h", []string{`unknown "%h"`}},                // kcat's headers: seglog has none
		{"ä%ö", []string{`unknown "%ö"`, "position 2"}}, // characters, not bytes
		{"%\x01", []string{`unknown "%\x01"`}},
		{"%\xff", []string{`unknown "%\xff"`}},
		{"%%%", []string{`lone "%"`, "position 3"}},
		{`\\\`, []string{`lone "\"`, "position 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.fmt, func(t *testing.T) {
			_, err := parseTemplate(tt.fmt)
			if err == nil {
				t.Fatalf("parseTemplate(%q) succeeded, want an error", tt.fmt)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("parseTemplate(%q) error %q does not contain %q", tt.fmt, err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
		})
	}
}

// write, which passes big keys and values to the writer directly, prints
// what append does.
func TestTemplateWriteMatchesAppend(t *testing.T) {
	big := bytes.Repeat([]byte("big\x00"), outputPiece/2)
	recs := append(goldenRecords(), logstore.Record{Record: format.Record{Offset: 99, Key: big, Value: big}})
	for _, gt := range goldenTemplates {
		tmpl, err := parseTemplate(gt.fmt)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		for _, r := range recs {
			want = tmpl.append(want, r, "orders", 3)
		}
		var buf bytes.Buffer
		out := bufio.NewWriterSize(&buf, 4096)
		for _, r := range recs {
			if err := tmpl.write(out, r, "orders", 3); err != nil {
				t.Fatal(err)
			}
		}
		if err := out.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("template %s: write printed %d bytes, append %d: they differ", gt.name, buf.Len(), len(want))
		}
	}
}

func BenchmarkTemplate(b *testing.B) {
	tmpl, err := parseTemplate(goldenTemplates[0].fmt)
	if err != nil {
		b.Fatal(err)
	}
	r := benchRecord()
	var buf []byte
	b.SetBytes(int64(len(r.Value)))
	b.ReportAllocs()
	for b.Loop() {
		buf = tmpl.append(buf[:0], r, "orders", 3)
	}
}

// append is a template line built whole: the reference write, which passes
// big keys and values on directly, must match.
func (t template) append(dst []byte, r logstore.Record, topic string, partition int) []byte {
	for _, p := range t.parts {
		dst = p.append(dst, r, topic, partition)
	}
	return dst
}
