// Package logstore owns every byte seglog keeps on disk: the data directory,
// topics and their settings, partitions and their segments. It opens and
// locks partitions, appends with batching and rolls segments, reads by
// offset, classifies damage as an incomplete tail or corruption, and saves
// cut bytes to quarantine.
//
// It never prints and knows nothing of the command line. Every change it
// makes to disk (writes, syncs, renames, truncations, new files and
// directories) goes through the small fileSystem seam in fs.go, so tests can
// fail a write part-way or model a power cut.
//
// Locks are flock(2) on directories (docs/format.md §1 and §5), which is only reliable on
// local filesystems.
package logstore
