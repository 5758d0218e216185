package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/seglog/seglog"

// layers is the import graph the tree is built to: for each package of
// the module, the module's packages it may import. Dependencies flow one
// way: format (and its CRCs, format/internal/crcfold) <- fsx, segfile <-
// logstore <- kafkabridge <- commands <- main (commands uses logstore
// directly too). logstore's internal packages do not import each other. A package missing here fails
// the test, so a new one is placed on purpose.
var layers = map[string][]string{
	"format":                    {"format/internal/crcfold"},
	"format/kafka":              {"format/internal/crcfold"},
	"format/internal/crcfold":   {},
	"logstore/internal/fsx":     {"format"},
	"logstore/internal/segfile": {"format", "format/kafka"},
	"logstore":                  {"format", "format/kafka", "logstore/internal/fsx", "logstore/internal/segfile"},
	"kafkabridge":               {"logstore"},
	"commands":                  {"format", "format/kafka", "logstore", "kafkabridge"},
	".":                         {"commands"},
	// Tools beside the product.
	"commands/gendocs":       {"commands"},
	"internal/testcheckout":  {},
	"bench/gen":              {"format", "logstore"},
	"bench/kafka":            {},
	"bench/kafkacodec":       {},
	"bench/kafkagen":         {},
	"bench/latency":          {},
	"bench/lookup":           {"logstore"},
	"bench/maxrss":           {},
	"bench/peers":            {},
	"bench/spread":           {"logstore"},
	"testdata/simplelog/gen": {"format"},
	"testdata/kafka/gen":     {},
}

// testOnly may be imported by any package's tests.
var testOnly = []string{"internal/testcheckout"}

// forbiddenStd are standard packages a layer may not use: format is a
// pure byte codec, with no file system, process or network access.
var forbiddenStd = map[string][]string{
	"format":                  {"os", "os/exec", "os/signal", "os/user", "syscall", "io/fs", "path/filepath", "net", "time"},
	"format/internal/crcfold": {"os", "os/exec", "os/signal", "os/user", "syscall", "io/fs", "path/filepath", "net", "time"},
	"format/kafka":            {"os", "os/exec", "os/signal", "os/user", "syscall", "io/fs", "path/filepath", "net", "time"},
}

// forbiddenExternal are modules a layer may not use: the engine and the
// Kafka bridge neither print nor parse command lines. The codecs' tests
// may use other modules (format/kafka's build their fixtures with
// franz-go's encoder).
var forbiddenExternal = map[string][]string{
	"format":                    {"github.com/", "golang.org/x/"},
	"format/internal/crcfold":   {"github.com/", "golang.org/x/"},
	"format/kafka":              {"github.com/", "golang.org/x/"},
	"logstore/internal/fsx":     {"github.com/urfave/", "github.com/olekukonko/", "github.com/schollz/"},
	"logstore/internal/segfile": {"github.com/urfave/", "github.com/olekukonko/", "github.com/schollz/"},
	"logstore":                  {"github.com/urfave/", "github.com/olekukonko/", "github.com/schollz/"},
	"kafkabridge":               {"github.com/urfave/", "github.com/olekukonko/", "github.com/schollz/"},
}

// testOnlyExternal are modules only tests may use: metrics writes the
// Prometheus text format itself, and its tests read it back with the
// official parser.
var testOnlyExternal = []string{"github.com/prometheus/"}

// kafkaClient is the Kafka protocol's module: outside tests only the
// bridge speaks it, and the tools beside the product: the benchmark's
// stand-in cluster and the generator of the Apache Kafka fixtures.
const kafkaClient = "github.com/twmb/franz-go/"

var kafkaSpeakers = []string{"kafkabridge", "bench/kafka", "bench/kafkagen", "testdata/kafka/gen"}

func TestLayers(t *testing.T) {
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" && path != "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		allowed, ok := layers[pkg]
		if !ok {
			t.Errorf("%s: package %s has no place in the layers: add it to layers_test.go", path, pkg)
			return nil
		}
		seen[pkg] = true
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		isTest := strings.HasSuffix(path, "_test.go")
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case p == module || strings.HasPrefix(p, module+"/"):
				dep := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
				if dep == "" {
					dep = "."
				}
				if dep == pkg || slices.Contains(allowed, dep) || isTest && slices.Contains(testOnly, dep) {
					continue
				}
				t.Errorf("%s imports %s: %s may import only %v of the module", path, dep, pkg, allowed)
			case !strings.Contains(strings.Split(p, "/")[0], "."):
				if !isTest && slices.Contains(forbiddenStd[pkg], p) {
					t.Errorf("%s imports %s, which %s may not use", path, p, pkg)
				}
			default:
				if strings.HasPrefix(p, kafkaClient) && !isTest && !slices.Contains(kafkaSpeakers, pkg) {
					t.Errorf("%s imports %s: only %v may speak Kafka", path, p, kafkaSpeakers)
				}
				for _, prefix := range testOnlyExternal {
					if strings.HasPrefix(p, prefix) && !isTest {
						t.Errorf("%s imports %s, which only tests may use", path, p)
					}
				}
				for _, prefix := range forbiddenExternal[pkg] {
					if strings.HasPrefix(p, prefix) && !(isTest && (pkg == "format" || pkg == "format/kafka")) {
						t.Errorf("%s imports %s, which %s may not use", path, p, pkg)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range layers {
		if !seen[pkg] {
			t.Errorf("layers_test.go names package %s, which has no Go files", pkg)
		}
	}
}
