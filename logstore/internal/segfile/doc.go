// Package segfile is the only code that reads a segment's records and
// index entries and says what they are: valid, an incomplete tail, or
// corrupt, and where valid data resumes after damage. Every reader and
// writer of seglog's data goes through its Scanner, so that all commands
// reach the same verdict on the same bytes (docs/format.md, "Damage and
// where valid data resumes"). Apache Kafka's segments have theirs
// (KafkaScanner, KafkaRecords with bounded decompression, the Kafka index
// readers: docs/format.md §8).
//
// It works on open files it is given and never opens, writes, renames or
// locks anything; it imports packages format and format/kafka, the
// standard library and, for Kafka's codecs, klauspost/compress and
// pierrec/lz4.
package segfile
