package logstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seglog/seglog/format"
	"github.com/seglog/seglog/logstore/internal/fsx"
)

// Consumer groups (read/tail --group NAME) live in
//
//	<data-dir>/.groups/NAME/            flock'ed by the group's reader (docs/format.md §5)
//	<data-dir>/.groups/NAME/TOPIC.json  {"topic":"orders","partitions":{"0":1234,"1":99},"updated":"..."}
//
// one file per topic, each partition's number mapped to its committed next
// offset: the offset of the next record to read. A file is only ever
// replaced whole (temporary, fsync, rename, directory fsync), so a reader
// without the lock (describe --groups) sees the old positions or the new
// ones, never a mix.
const (
	groupsDir = ".groups"
	groupExt  = ".json"
	// groupTmp is the temporary a commit writes before renaming it over
	// TOPIC.json. One name does for every topic: only the lock holder
	// commits. (TOPIC.json.tmp would pass NAME_MAX for a 249-byte topic.)
	groupTmp = ".commit.tmp"
)

// ErrGroupNotFound means a group's directory does not exist.
var ErrGroupNotFound = errors.New("group not found")

// Group is a consumer group's committed positions, held open under the
// group's lock (flock on <data-dir>/.groups/NAME/, docs/format.md §5).
type Group struct {
	s    *Store
	name string
	dir  string
	lock *fsx.DirLock
	pos  map[string]map[int]uint64 // topic -> partition -> next offset, as on disk
}

// GroupCommit is what a group has committed for one topic.
type GroupCommit struct {
	Topic      string
	Partitions map[int]uint64 // partition -> committed next offset
	Updated    time.Time      // when it was last committed (UTC)
}

// groupFileJSON is the stored form of a GroupCommit.
type groupFileJSON struct {
	Topic      *string           `json:"topic"`
	Partitions map[string]uint64 `json:"partitions"`
	Updated    string            `json:"updated"`
}

// GroupDir is the directory of a group. The name must have been validated.
func (s *Store) GroupDir(name string) string { return filepath.Join(s.dir, groupsDir, name) }

// OpenGroup takes the group's lock (creating its directory durably if
// need be), waiting up to wait (0: DefaultLockWait; WaitForever), and
// loads its committed positions. A second holder gets *LockedError.
func (s *Store) OpenGroup(name string, wait time.Duration) (*Group, error) {
	if err := format.ValidateTopic(name); err != nil {
		return nil, err
	}
	if wait == 0 {
		wait = DefaultLockWait
	}
	dir := s.GroupDir(name)
	// Commits are written there: refuse a link on the way now, not once
	// the records are printed.
	if err := fsx.CheckNoSymlink(s.dir, dir, true); err != nil {
		return nil, fmt.Errorf("group %s: %w", name, err)
	}
	if err := s.mkdirAll(dir); err != nil {
		return nil, fmt.Errorf("create group %s: %w", name, err)
	}
	lock, err := lockDir(dir, "group "+name, wait)
	if err != nil {
		return nil, err
	}
	commits, err := readGroupDir(dir, name)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	g := &Group{s: s, name: name, dir: dir, lock: lock, pos: map[string]map[int]uint64{}}
	for _, c := range commits {
		g.pos[c.Topic] = c.Partitions
	}
	return g, nil
}

// Position is the committed next offset of topic/partition, if any.
func (g *Group) Position(topic string, partition int) (uint64, bool) {
	n, ok := g.pos[topic][partition]
	return n, ok
}

// Commit durably records next offsets (offset of the next record to read) for some partitions of a topic:
// atomically (temp file + fsync + rename + dir fsync via the store's fs seam), merged with what is committed already.
// Committing the same positions again writes nothing.
//
// Positions may go down as well as up (a reader told to start earlier).
// When Commit fails, the group keeps the positions it had.
func (g *Group) Commit(topic string, next map[int]uint64) error {
	if g.lock == nil {
		return fmt.Errorf("commit to group %s: the group is closed", g.name)
	}
	if err := format.ValidateTopic(topic); err != nil {
		return err
	}
	old := g.pos[topic]
	merged := maps.Clone(old)
	if merged == nil {
		merged = map[int]uint64{}
	}
	for p, n := range next {
		if p < 0 {
			return fmt.Errorf("commit to group %s: partition %d of %s", g.name, p, topic)
		}
		merged[p] = n
	}
	if maps.Equal(merged, old) || len(merged) == 0 {
		return nil
	}
	data := appendGroupFile(nil, topic, merged, time.Now())
	if err := g.writeFile(filepath.Join(g.dir, topic+groupExt), data); err != nil {
		return fmt.Errorf("commit group %s positions of %s: %w", g.name, topic, err)
	}
	g.pos[topic] = merged
	return nil
}

// writeFile replaces path with data durably, by way of a temporary whose
// name fits beside any topic's file.
func (g *Group) writeFile(path string, data []byte) error {
	return fsx.WriteFile(g.s.fs, path, filepath.Join(g.dir, groupTmp), data)
}

// Close releases the group's lock. The group accepts no more commits.
func (g *Group) Close() error {
	err := g.lock.Unlock()
	g.lock = nil
	return err
}

// appendGroupFile renders a topic's positions as stored: one line of
// JSON, partitions in numeric order for the people who look.
func appendGroupFile(b []byte, topic string, parts map[int]uint64, now time.Time) []byte {
	b = append(b, `{"topic":`...)
	b = strconv.AppendQuote(b, topic) // topic names are plain ASCII
	b = append(b, `,"partitions":{`...)
	for i, p := range slices.Sorted(maps.Keys(parts)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(p), 10)
		b = append(b, `":`...)
		b = strconv.AppendUint(b, parts[p], 10)
	}
	b = append(b, `},"updated":"`...)
	b = now.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, "\"}\n"...)
}

// parseGroupFile reads one TOPIC.json. Anything that does not check out
// is an error naming the file: a group is never silently reset.
func parseGroupFile(path, topic string, data []byte) (GroupCommit, error) {
	bad := func(why string, args ...any) (GroupCommit, error) {
		return GroupCommit{}, fmt.Errorf("group positions %s: %s (fix or remove the file; removing it resets the group's positions for %s)",
			path, fmt.Sprintf(why, args...), topic)
	}
	var j groupFileJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return bad("%v", err)
	}
	if j.Topic == nil || *j.Topic != topic {
		got := "none"
		if j.Topic != nil {
			got = strconv.Quote(*j.Topic)
		}
		return bad("topic field is %s, want %q", got, topic)
	}
	if j.Partitions == nil {
		return bad("no partitions field")
	}
	c := GroupCommit{Topic: topic, Partitions: make(map[int]uint64, len(j.Partitions))}
	for k, n := range j.Partitions {
		p, err := format.ParsePartition(k)
		if err != nil {
			return bad("%q is not a partition number", k)
		}
		c.Partitions[p] = n
	}
	if j.Updated != "" {
		t, err := time.Parse(time.RFC3339Nano, j.Updated)
		if err != nil {
			return bad("updated: %v", err)
		}
		c.Updated = t.UTC()
	}
	return c, nil
}

// readGroupDir reads every TOPIC.json of a group directory, in topic
// order. Other entries (the commit temporary, editor files) are ignored.
func readGroupDir(dir, name string) ([]GroupCommit, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("group %s (%s): %w", name, dir, ErrGroupNotFound)
		}
		return nil, fmt.Errorf("read group %s: %w", name, err)
	}
	var commits []GroupCommit
	for _, e := range entries {
		topic, ok := strings.CutSuffix(e.Name(), groupExt)
		if ok && e.Type()&fs.ModeSymlink != 0 && format.ValidateTopic(topic) == nil {
			// Skipped, it would reset the group's positions silently;
			// followed, the next commit would replace the link.
			return nil, fmt.Errorf("group %s: %w", name, fsx.NewSymlinkError(filepath.Join(dir, e.Name())))
		}
		if !ok || !e.Type().IsRegular() || format.ValidateTopic(topic) != nil {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read group %s: %w", name, err)
		}
		c, err := parseGroupFile(path, topic, data)
		if err != nil {
			return nil, err
		}
		commits = append(commits, c)
	}
	return commits, nil // os.ReadDir sorts by name, so by topic
}

// Groups lists the data directory's groups; GroupCommits reads a
// group's committed positions without its lock (for describe --groups).
func (s *Store) Groups() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, groupsDir))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(s.dir); serr != nil {
			return nil, fmt.Errorf("data directory: %w", serr)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	return validDirNames(entries), nil
}

// GroupCommits reads a group's committed positions (topic -> partition
// -> next offset) and each topic's last commit time, in topic order,
// without taking its lock: each topic's file is replaced whole, so what it
// returns was committed at some moment, though a live reader may have
// moved on since.
func (s *Store) GroupCommits(name string) ([]GroupCommit, error) {
	if err := format.ValidateTopic(name); err != nil {
		return nil, err
	}
	return readGroupDir(s.GroupDir(name), name)
}
