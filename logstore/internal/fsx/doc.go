// Package fsx is logstore's access to the file system: the FS seam every
// change to disk goes through (and its real implementation, OS), opens that
// never follow a symbolic link below the data directory, the ownership
// that files seglog creates as root take, flock(2) locks on directories and
// their holders in /proc/locks, inotify watches of directories, and
// durable writes (temporary file, fsync, rename, directory fsync).
//
// It knows nothing of topics, partitions or records: beside the standard
// library and golang.org/x/sys it imports only format (for file names).
// It is for logstore alone; neither segfile nor anything above logstore
// imports it.
package fsx
