package kafkabridge

// PartitionStats is what went through one partition: the records moved,
// their keys' and values' bytes, and the first and last offset they had
// where they came from (meaningful only with Records > 0).
type PartitionStats struct {
	Partition   int
	Records     int64
	Bytes       int64
	FirstOffset int64
	LastOffset  int64
}

// add counts a record at offset whose key and value are n bytes.
func (s *PartitionStats) add(offset int64, n int) {
	if s.Records == 0 {
		s.FirstOffset = offset
	}
	s.LastOffset = offset
	s.Records++
	s.Bytes += int64(n)
}

// Summary is what an export or an import moved, partition by partition.
type Summary struct {
	Partitions []PartitionStats
	// An import's Kafka record headers, which seglog records cannot hold:
	// how many were dropped, and how many records had them.
	HeadersDropped     int64
	RecordsWithHeaders int64
}
