package segfile

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// decoders are format's functions that decode records or index entries or
// check a record's CRC: only segfile (and format itself) may call them,
// so that every command reaches its verdict on damaged bytes through one
// scanner.
var decoders = map[string]bool{
	"ParseHeader": true, "ParseRecord": true, "ParseIndexEntry": true, "ParseTimeIndexEntry": true,
	"Checksum": true, "ChecksumStart": true, "UpdateChecksum": true,
}

// headerMethods are format.Header's decoding methods.
var headerMethods = map[string]bool{"Decode": true, "Verify": true}

// kafkaDecoders are format/kafka's functions that decode or check the
// bytes of a Kafka .log, index, .txnindex or .snapshot: only segfile (and
// format/kafka itself) may call them. Its parsers of names and of the
// text files (checkpoints, meta.properties) are not among them.
var kafkaDecoders = map[string]bool{
	"Magic": true, "ParseBatchHeader": true, "ParseRecord": true, "ParseLegacyMessage": true,
	"ParseControlKey": true, "ParseEndTransactionMarker": true,
	"ParseOffsetEntry": true, "ParseTimeEntry": true, "OffsetIndexEntries": true, "TimeIndexEntries": true,
	"CheckOffsetIndex": true, "CheckTimeIndex": true, "ParseAbortedTxn": true, "CheckTxnIndex": true, "ParseSnapshot": true,
}

// kafkaMethods are format/kafka's decoding methods of a batch header,
// flagged on any value in a file that imports format/kafka.
var kafkaMethods = map[string]bool{"CheckCRC": true}

// TestOnlySegfileDecodes fails on any non-test file outside format and
// segfile that calls a decoder of format or format/kafka, or decodes into
// a format.Header.
func TestOnlySegfileDecodes(t *testing.T) {
	root := moduleRoot(t)
	const formatPath = "github.com/seglog/seglog/format"
	const kafkaPath = "github.com/seglog/seglog/format/kafka"
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "format" || rel == filepath.Join("logstore", "internal", "segfile") || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		name, kname := "", ""
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case p == formatPath:
				name = "format"
			case p == kafkaPath:
				kname = "kafka"
			default:
				continue
			}
			if imp.Name != nil && p == formatPath {
				name = imp.Name.Name
			} else if imp.Name != nil {
				kname = imp.Name.Name
			}
		}
		if name == "" && kname == "" {
			return nil
		}
		headers := map[string]bool{} // variables declared as format.Header
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				if isFormatHeader(n.Type, name) {
					for _, id := range n.Names {
						headers[id.Name] = true
					}
				}
			case *ast.Field:
				if isFormatHeader(n.Type, name) {
					for _, id := range n.Names {
						headers[id.Name] = true
					}
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && name != "" && x.Name == name && decoders[n.Sel.Name] {
					t.Errorf("%s: calls format.%s: decoding belongs to segfile", fset.Position(n.Pos()), n.Sel.Name)
				}
				if x, ok := n.X.(*ast.Ident); ok && kname != "" && x.Name == kname && kafkaDecoders[n.Sel.Name] {
					t.Errorf("%s: calls kafka.%s: decoding belongs to segfile", fset.Position(n.Pos()), n.Sel.Name)
				}
				if kname != "" && kafkaMethods[n.Sel.Name] {
					t.Errorf("%s: calls %s, format/kafka's check of a batch: decoding belongs to segfile", fset.Position(n.Pos()), n.Sel.Name)
				}
				if x, ok := n.X.(*ast.Ident); ok && headers[x.Name] && headerMethods[n.Sel.Name] {
					t.Errorf("%s: %s.%s decodes a format.Header: decoding belongs to segfile", fset.Position(n.Pos()), x.Name, n.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d files checked under %s: the walk missed the tree", checked, root)
	}
}

// isFormatHeader reports whether a type expression is format.Header or a
// pointer to one.
func isFormatHeader(e ast.Expr, name string) bool {
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == name && sel.Sel.Name == "Header"
}

// moduleRoot is the directory holding go.mod, above the test's own.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}
