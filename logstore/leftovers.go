package logstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// RecoverDataDir removes the data directory's leftovers of interrupted
// operations: the temporary directories of a create that did not finish
// (.create-<topic>-<random>.tmp), of a copy or import into a new topic
// that did not (.copy-<topic>-<random>.tmp), the topic directories of
// deletes that did not finish (.delete-<topic>-<random>.tmp), the group
// directories of group deletes that did not (.groups/.rm.<group>), and the half-made topic
// directories such copies by older versions left (see halfMadeTopic).
// Nothing locks a create, so one whose topic does not exist is left alone
// while younger than a minute: it may still be running. Copies lock what
// they build, and what is locked stays.
func (s *Store) RecoverDataDir(opts RecoverOptions) ([]RecoverLeftover, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	left := s.dataDirLeftovers("*")
	for _, e := range entries {
		if format.ValidateTopic(e.Name()) != nil || !e.IsDir() {
			continue
		}
		l, ok, err := s.halfMadeLeftoverLocked(filepath.Join(s.dir, e.Name()), opts.DryRun)
		if err != nil {
			return left, err
		}
		if ok {
			left = append(left, l)
		}
	}
	if opts.DryRun {
		return left, nil
	}
	return left, s.removeLeftovers(left)
}

// dataDirLeftovers lists the temporary directories in the data
// directory of creates, of copies into a new topic and of deletes, of
// topic ("*": all). Those of copies and deletes still running are kept,
// and so are those of a
// create whose topic does not exist while younger than createGrace.
func (s *Store) dataDirLeftovers(topic string) []RecoverLeftover {
	entries, _ := os.ReadDir(s.dir)
	var left []RecoverLeftover
	for _, e := range entries {
		name, ok := tempDirTopic(e.Name(), ".create-")
		if !ok || !e.IsDir() || topic != "*" && name != topic[:min(len(topic), 200)] {
			continue
		}
		l := RecoverLeftover{Path: filepath.Join(s.dir, e.Name()), What: "temporary directory of an interrupted create"}
		if fi, err := os.Stat(filepath.Join(s.dir, name)); err != nil || !fi.IsDir() {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) < createGrace {
				l.What, l.Kept = "temporary directory of a create that may still be running", true
			}
		}
		left = append(left, l)
	}
	for _, e := range entries {
		name, ok := tempDirTopic(e.Name(), deletePrefix)
		if !ok || !e.IsDir() || topic != "*" && name != topic[:min(len(topic), 200)] {
			continue
		}
		l := RecoverLeftover{Path: filepath.Join(s.dir, e.Name()), What: "topic directory of an interrupted delete"}
		if deletingInUse(l.Path) {
			l.What, l.Kept = "topic directory of a delete still running", true
		}
		left = append(left, l)
	}
	if topic == "*" {
		left = append(left, s.deletedGroupLeftovers()...)
	}
	for _, path := range buildRoots(s.dir, topic) {
		l := RecoverLeftover{Path: path, What: "temporary directory of an interrupted copy or import into a new topic"}
		if buildInUse(path) {
			l.What, l.Kept = "temporary directory of a copy or import into a new topic still running", true
		}
		left = append(left, l)
	}
	return left
}

// halfMadeLeftoverLocked is halfMadeLeftover under the topic's
// maintenance lock, which it takes if it is free; a held one keeps the
// directory.
func (s *Store) halfMadeLeftoverLocked(dir string, dryRun bool) (RecoverLeftover, bool, error) {
	// Through a link it changes nothing, and the link is no leftover.
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || !halfMadeTopic(dir) {
		return RecoverLeftover{}, false, nil
	}
	lock, err := fsx.TryLock(dir)
	if err != nil {
		return RecoverLeftover{Path: dir, What: halfMadeWhat + "; kept, as another process holds its lock", Kept: true}, true, nil
	}
	defer lock.Unlock()
	return s.halfMadeLeftover(dir, dryRun)
}

const halfMadeWhat = "topic directory an interrupted copy or import into a new topic left, holding no partition"

// halfMadeLeftover reports the topic directory dir when it is half-made
// (see halfMadeTopic) and, unless dryRun or a build in it is still
// running, removes it. The caller holds its maintenance lock.
func (s *Store) halfMadeLeftover(dir string, dryRun bool) (RecoverLeftover, bool, error) {
	if !halfMadeTopic(dir) {
		return RecoverLeftover{}, false, nil
	}
	l := RecoverLeftover{Path: dir, What: halfMadeWhat}
	for _, path := range buildRoots(dir, "") {
		if buildInUse(path) {
			l.What, l.Kept = halfMadeWhat+"; kept, as a copy into it is still running", true
			return l, true, nil
		}
	}
	if dryRun {
		return l, true, nil
	}
	s.removeAll(dir)
	if _, err := os.Lstat(dir); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return l, true, fmt.Errorf("remove leftover %s: it could not be emptied", dir)
	}
	return l, true, s.fs.SyncDir(s.dir)
}

// createGrace is how old a create's temporary directory must be before
// recover takes it for a leftover, when its topic does not exist.
const createGrace = time.Minute

// tempName is a hidden temporary name in dir for what an operation is
// building or removing: prefix, name (cut to 200 bytes, so that a 249-byte
// topic name does not push it past NAME_MAX; the name only helps a person
// place a leftover), "-", 12 random hex digits, ".tmp". tempDirTopic
// parses it.
func tempName(dir, prefix, name string) string {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	return filepath.Join(dir, prefix+name[:min(len(name), 200)]+"-"+hex.EncodeToString(rnd[:])+".tmp")
}

// tempDirTopic parses the name of a temporary directory in the data
// directory of a create (prefix ".create-", see CreateTopic) or a copy
// into a new topic (buildPrefix, see beginBuild): prefix, topic[:200],
// "-", 12 hex digits, ".tmp". It returns the topic name in it.
func tempDirTopic(name, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return "", false
	}
	rest, ok = strings.CutSuffix(rest, ".tmp")
	const rnd = 12
	if !ok || len(rest) < rnd+2 || rest[len(rest)-rnd-1] != '-' {
		return "", false
	}
	for _, c := range rest[len(rest)-rnd:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false
		}
	}
	return rest[:len(rest)-rnd-1], true
}

// topicLeftovers finds (and unless dryRun removes) the leftovers of a
// topic: hidden temporary files and directories in its directory
// (<topic>/.*.tmp: settings being replaced, a copy or import or a new
// partition being built,
// all under the maintenance lock we hold), and its temporary directories
// in the data directory (see dataDirLeftovers).
func (s *Store) topicLeftovers(topic, dir string, entries []os.DirEntry, dryRun bool) ([]RecoverLeftover, error) {
	var left []RecoverLeftover
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), ".tmp") {
			l := RecoverLeftover{Path: filepath.Join(dir, e.Name()), What: "temporary file of an interrupted operation"}
			if e.IsDir() && strings.HasPrefix(e.Name(), addPrefix) {
				l.What = "partition an interrupted add-partitions was building"
			} else if e.IsDir() {
				l.What = "temporary directory of an interrupted copy or import"
				if buildInUse(l.Path) {
					// Copies build without the topic's lock until they
					// place the result: this one is still running.
					l.What, l.Kept = "temporary directory of a copy or import still running", true
				}
			}
			left = append(left, l)
		}
	}
	left = append(left, s.dataDirLeftovers(topic)...)
	if dryRun {
		return left, nil
	}
	return left, s.removeLeftovers(left)
}

// removeLeftovers deletes the leftovers not kept, then makes their removal
// durable.
func (s *Store) removeLeftovers(left []RecoverLeftover) error {
	dirs := map[string]bool{}
	for _, l := range left {
		if l.Kept {
			continue
		}
		fi, err := os.Lstat(l.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil && fi.IsDir() {
			s.removeAll(l.Path)
			_, err = os.Lstat(l.Path)
			if err == nil {
				err = fmt.Errorf("remove %s: directory not empty after removing its contents", l.Path)
			} else if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		} else if err == nil {
			err = s.fs.Remove(l.Path)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove leftover: %w", err)
		}
		dirs[filepath.Dir(l.Path)] = true
	}
	for _, d := range slices.Sorted(func(yield func(string) bool) {
		for d := range dirs {
			if !yield(d) {
				return
			}
		}
	}) {
		if err := s.fs.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// partitionLeftovers finds the leftovers of a partition directory and
// of its quarantine directory.
func (s *Store) partitionLeftovers(dir, qdir string) ([]RecoverLeftover, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	logs := map[uint64]bool{}
	for _, e := range entries {
		// A .log that is not a regular file still keeps its index files:
		// listing the segments fails on it, naming it, and what to do with
		// it is for a person to decide.
		if base, ext, err := format.ParseSegmentName(e.Name()); err == nil && ext == format.LogExt {
			logs[base] = true
		}
	}
	var left []RecoverLeftover
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		var what string
		switch base, ext, err := format.ParseSegmentName(name); {
		case strings.HasSuffix(name, ".deleted"):
			what = "file of an interrupted retention delete"
		case strings.HasSuffix(name, ".tmp"):
			what = "temporary file of an interrupted operation"
		case err == nil && ext != format.LogExt && !logs[base]:
			what = "index file without its .log"
		default:
			continue
		}
		left = append(left, RecoverLeftover{Path: filepath.Join(dir, name), What: what})
	}
	qentries, err := os.ReadDir(qdir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	notes := map[string]bool{}
	for _, e := range qentries {
		if b, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			notes[b] = true
		}
	}
	for _, e := range qentries {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		var what string
		if strings.HasSuffix(name, ".tmp") {
			what = "temporary file of an interrupted quarantine"
		} else if b, ok := strings.CutSuffix(name, ".bin"); ok && !notes[b] {
			// The note is written last, and nothing is cut before it is
			// there: these bytes are still where they were copied from.
			what = "quarantine copy without its note (its bytes were never cut)"
		} else if ok && linkedToLog(filepath.Join(qdir, name), dir) {
			// A hard link made for lack of space by a recover that did not
			// get to replace the segment: it is the live segment itself.
			what = "hard link to a live segment, left by an interrupted recover"
			left = append(left, RecoverLeftover{Path: filepath.Join(qdir, b+".json"), What: what})
		} else {
			continue
		}
		left = append(left, RecoverLeftover{Path: filepath.Join(qdir, name), What: what})
	}
	return left, nil
}

// linkedToLog reports whether path is the same file as a .log of the
// partition directory dir.
func linkedToLog(path, dir string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink < 2 {
		return false
	}
	segs, err := listSegments(dir)
	if err != nil {
		return false
	}
	for _, seg := range segs {
		if li, err := os.Stat(seg.path(format.LogExt)); err == nil && os.SameFile(fi, li) {
			return true
		}
	}
	return false
}

// deletedGroupLeftovers lists the group directories that deletes a crash
// interrupted left aside; one a delete still holds is kept.
func (s *Store) deletedGroupLeftovers() []RecoverLeftover {
	dir := filepath.Join(s.dir, groupsDir)
	entries, _ := os.ReadDir(dir)
	var left []RecoverLeftover
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), deletedGroupPrefix) {
			continue
		}
		l := RecoverLeftover{Path: filepath.Join(dir, e.Name()), What: "group directory of an interrupted group delete"}
		if lk, err := fsx.TryLock(l.Path); err != nil {
			l.What, l.Kept = "group directory of a group delete still running", true
		} else {
			lk.Unlock()
		}
		left = append(left, l)
	}
	return left
}
