package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkAppendInput is append's own path, in process, from stdin to the
// files with --sync never: framing, --input json decoding, routing and the
// writer. The JSON input is what 'read --format json' prints.
func BenchmarkAppendInput(b *testing.B) {
	const size = 8 << 20
	var plain, escaped, keyed strings.Builder
	for i := 0; plain.Len() < size; i++ {
		fmt.Fprintf(&plain, "%08d %s\n", i, strings.Repeat("v", 90))
		fmt.Fprintf(&escaped, "%08d \"quoted\"\ttab é ü %s\n", i, strings.Repeat("w", 70))
		fmt.Fprintf(&keyed, "user-%d:%08d %s\n", i%97, i, strings.Repeat("k", 80))
	}
	src := filepath.Join(b.TempDir(), "src")
	asJSON := func(in string) string {
		os.RemoveAll(src)
		mustRun(b, src, in, "append", "j", "--create", "--sync", "never")
		return mustRun(b, src, "", "read", "j", "--format", "json").stdout
	}
	for _, tc := range []struct {
		name, input string
		flags       []string
	}{
		{"lines", plain.String(), nil},
		{"lines-keyed-3", keyed.String(), []string{"--key-delimiter", ":"}},
		{"json", asJSON(plain.String()), []string{"--input", "json"}},
		{"json-escaped", asJSON(escaped.String()), []string{"--input", "json"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "data")
			args := append([]string{"append", "t", "--sync", "never", "-q"}, tc.flags...)
			b.SetBytes(int64(len(tc.input)))
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				os.RemoveAll(dir)
				mustRun(b, dir, "", "create", "t", "--partitions", "3")
				b.StartTimer()
				mustRun(b, dir, tc.input, args...)
			}
		})
	}
}
