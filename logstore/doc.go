// Package logstore owns every byte seglog keeps on disk: the data directory,
// topics and their settings, partitions and their segments. It opens and
// locks partitions, appends with batching and rolls segments, reads by
// offset, classifies damage as an incomplete tail or corruption, and saves
// cut bytes to quarantine.
//
// It never prints and knows nothing of the command line. Under it are two
// internal packages it alone uses: segfile decodes segments and indexes,
// and fsx reaches the file system. Every change logstore makes to disk
// (writes, syncs, renames, truncations, new files and directories) goes
// through fsx's FS seam (fileSystem here), so tests can fail a write
// part-way or model a power cut. logstore imports format and its internal
// packages only; commands and the Kafka bridge import logstore.
//
// Log is what a reader or checker of any layout seglog reads needs
// (log.go: extent, records, stats, verify): a seglog partition, a log in
// the simple store/index layout and an Apache Kafka partition
// (KafkaPartition, in a broker's log directory: KafkaLogDir), the last
// two only read, all satisfy it, and Verify checks any mix of them.
//
// Locks are flock(2) on directories (docs/format.md §1 and §5), which is
// only reliable on local filesystems.
package logstore
