package logstore

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seglog/seglog/format"
)

// LogBytes estimates what a run over the topics' partitions (partition
// only, when >= 0) will read: how many .log files they hold, and how many
// bytes. It is for progress bars, so what cannot be listed counts as
// nothing.
func (s *Store) LogBytes(topics []string, partition int) (files, bytes int64) {
	for _, t := range topics {
		tdir := filepath.Join(s.dir, t)
		parts := []int{partition}
		if partition < 0 {
			tp, err := ReadTopicPartitions(tdir)
			if err != nil {
				continue
			}
			parts = tp.Present
		}
		for _, p := range parts {
			entries, err := os.ReadDir(filepath.Join(tdir, strconv.Itoa(p)))
			if err != nil {
				continue
			}
			for _, en := range entries {
				if !en.Type().IsRegular() || !strings.HasSuffix(en.Name(), format.LogExt) {
					continue
				}
				if fi, err := en.Info(); err == nil {
					files++
					bytes += fi.Size()
				}
			}
		}
	}
	return files, bytes
}
