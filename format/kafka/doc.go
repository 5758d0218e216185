// Package kafka is a pure byte codec of Apache Kafka's on-disk formats,
// as Kafka's documentation and KIP-98 define them: record batches
// (magic 2) and their varint records, headers and control records, the
// older magic 0 and 1 message sets (recognised and framed), the .index,
// .timeindex and .txnindex entries, the producer-state .snapshot, and
// the text files of a log directory (checkpoints, leader-epoch
// checkpoints, partition.metadata, meta.properties).
//
// Like package format it does no I/O and imports nothing outside the
// standard library: decompression and reading files are
// logstore/internal/segfile's and logstore's. Every decoder takes bytes
// and either decodes them or says in one line why it cannot; none
// panics, whatever the input.
package kafka
