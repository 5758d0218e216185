package logstore

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seglog/seglog/logstore/internal/fsx"
)

// ReplaceFile makes path hold what write puts out, atomically: a reader
// of path (node_exporter's textfile collector) sees the old file or the
// new one whole, never a part. The temporary beside it carries the pid,
// so two runs at once do not write into each other's, and does not end
// in the file's own extension, so a collector matching *.prom skips it.
// A failure leaves path as it was.
func ReplaceFile(path string, write func(w *bufio.Writer) error) error {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.%d.tmp", filepath.Base(path), os.Getpid()))
	_, err := fsx.WriteFileDurably(osFS{}, path, tmp, false, func(f file) error {
		bw := bufio.NewWriterSize(f, 64<<10)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
	return err
}
