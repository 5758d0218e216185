package logstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// What 'seglog kafka import' has imported into a topic is kept in
//
//	<data-dir>/.kafka-import/TOPIC/position.json  {"kafka_topic":"orders","partitions":{"0":1234}}
//
// each Kafka partition's number mapped to the Kafka offset of the next
// record to import. A directory per topic keeps the temporary file's name
// short whatever the topic's length, and apart from other topics'. The file
// is only ever replaced whole (temporary, fsync, rename, directory fsync),
// and only by an import holding the topic's writer locks.
//
// kafkabridge decides what the position means and when to save it; the
// file is here because it is one of the data directory's, written like
// them through the store's file system.
const (
	kafkaImportDir  = ".kafka-import"
	kafkaImportFile = "position.json"
)

// KafkaImportPosition is where an import from a Kafka topic into a seglog
// topic stopped.
type KafkaImportPosition struct {
	KafkaTopic string          // the Kafka topic imported from
	Next       map[int32]int64 // Kafka partition -> offset of the next record to import
}

type kafkaPositionJSON struct {
	KafkaTopic string           `json:"kafka_topic"`
	Partitions map[string]int64 `json:"partitions"`
}

// KafkaImportPosition loads the position of the imports into topic: ok is
// false when none was saved.
func (s *Store) KafkaImportPosition(topic string) (pos KafkaImportPosition, ok bool, err error) {
	if err := format.ValidateTopic(topic); err != nil {
		return pos, false, err
	}
	path := filepath.Join(s.dir, kafkaImportDir, topic, kafkaImportFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return pos, false, nil
	}
	if err != nil {
		return pos, false, err
	}
	var j kafkaPositionJSON
	if err := json.Unmarshal(data, &j); err != nil || j.KafkaTopic == "" {
		return pos, false, fmt.Errorf("%s: not a Kafka import position (delete it to start over)", path)
	}
	pos = KafkaImportPosition{KafkaTopic: j.KafkaTopic, Next: make(map[int32]int64, len(j.Partitions))}
	for k, n := range j.Partitions {
		p, err := strconv.ParseInt(k, 10, 32)
		if err != nil || p < 0 || n < 0 {
			return pos, false, fmt.Errorf("%s: bad partition %q: %d (delete it to start over)", path, k, n)
		}
		pos.Next[int32(p)] = n
	}
	return pos, true, nil
}

// SaveKafkaImportPosition durably replaces the position of the imports
// into topic. Call it only once the records before it are durable.
func (s *Store) SaveKafkaImportPosition(topic string, pos KafkaImportPosition) error {
	if err := format.ValidateTopic(topic); err != nil {
		return err
	}
	dir := filepath.Join(s.dir, kafkaImportDir, topic)
	if err := fsx.CheckNoSymlink(s.dir, dir, true); err != nil {
		return err
	}
	if err := s.mkdirAll(dir); err != nil {
		return fmt.Errorf("save Kafka import position of %s: %w", topic, err)
	}
	j := kafkaPositionJSON{KafkaTopic: pos.KafkaTopic, Partitions: make(map[string]int64, len(pos.Next))}
	for p, n := range pos.Next {
		j.Partitions[strconv.Itoa(int(p))] = n
	}
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := s.writeFileAtomic(filepath.Join(dir, kafkaImportFile), append(data, '\n')); err != nil {
		return fmt.Errorf("save Kafka import position of %s: %w", topic, err)
	}
	return nil
}
