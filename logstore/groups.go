package logstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
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
	var lock *fsx.DirLock
	for tries := 0; ; tries++ {
		if err := s.mkdirAll(dir); err != nil {
			return nil, fmt.Errorf("create group %s: %w", name, err)
		}
		var err error
		lock, err = lockDir(dir, "group "+name, wait)
		if err == nil {
			break
		}
		// Deleted while this waited for its lock: it is a new group now.
		if !errors.Is(err, fs.ErrNotExist) || tries == maxOpenTries {
			return nil, err
		}
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

// deletedGroupPrefix names a group directory renamed aside to be removed:
// group names never start with '.', so nothing takes it for a group, and
// the prefix is short enough for a name of MaxTopicLen to fit NAME_MAX.
const deletedGroupPrefix = ".rm."

// DeleteGroup removes a group and all its positions, under the group's
// lock (waiting as OpenGroup does; a reader holding it is a
// *LockedError). The directory is renamed aside and the rename synced
// before anything is removed, so a crash leaves the group whole or no
// group; what a crash left aside is removed by the next DeleteGroup.
func (s *Store) DeleteGroup(name string, wait time.Duration) error {
	if err := format.ValidateTopic(name); err != nil {
		return err
	}
	if wait == 0 {
		wait = DefaultLockWait
	}
	dir := s.GroupDir(name)
	if err := fsx.CheckNoSymlink(s.dir, dir, true); err != nil {
		return fmt.Errorf("group %s: %w", name, err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("group %s (%s): %w", name, dir, ErrGroupNotFound)
		}
		return fmt.Errorf("delete group %s: %w", name, err)
	}
	lock, err := lockDir(dir, "group "+name, wait)
	if errors.Is(err, fs.ErrNotExist) { // deleted while we waited
		return fmt.Errorf("group %s (%s): %w", name, dir, ErrGroupNotFound)
	}
	if err != nil {
		return err
	}
	defer lock.Unlock()
	parent := filepath.Dir(dir)
	for _, l := range s.deletedGroupLeftovers() {
		if !l.Kept {
			s.removeAll(l.Path)
		}
	}
	aside := filepath.Join(parent, deletedGroupPrefix+name)
	if err := s.removeAside(dir, aside); err != nil {
		return fmt.Errorf("delete group %s: %w", name, err)
	}
	return nil
}

// ResetKind is where ResetGroup moves positions to.
type ResetKind int

const (
	ResetToEarliest ResetKind = iota // each partition's first offset
	ResetToLatest                    // each partition's next offset
	ResetToOffset                    // ResetTarget.Offset
	ResetToTime                      // the first record at or after ResetTarget.Time, as read --since finds it
	ResetShiftBy                     // the committed position moved by ResetTarget.Shift
)

// ResetTarget says where ResetGroup moves positions to.
type ResetTarget struct {
	Kind   ResetKind
	Offset uint64 // ResetToOffset
	Time   int64  // ResetToTime, Unix nanoseconds
	Shift  int64  // ResetShiftBy
}

// ResetScope is what ResetGroup moves: Topic "" is every topic the group
// has committed; Partition -1 is every partition of each topic.
type ResetScope struct {
	Topic     string
	Partition int
}

// Clamp tells a reset position that fell outside its partition and was
// moved into it, as kafka-consumer-groups --reset-offsets does.
type Clamp int

const (
	NotClamped     Clamp = iota
	ClampedToStart       // below the first offset: raised to it
	ClampedToEnd         // past the next offset: lowered to it
)

// ResetPosition is one partition of a reset plan.
type ResetPosition struct {
	Topic       string
	Partition   int
	Current     uint64 // the committed position, if HasCurrent
	HasCurrent  bool
	New         uint64
	Start, Next uint64 // the partition's bounds when planned
	Clamp       Clamp
}

// ResetGroup plans moving a group's positions in scope to target and,
// unless dryRun, commits the plan under the group's lock (waiting as
// OpenGroup does; a reader holding it is a *LockedError), each topic's
// positions at once. A dry run takes no lock and changes nothing.
//
// A partition the group never committed is given a position, except by
// ResetShiftBy, which has nothing to shift it from: those are left out
// (and a Partition naming one is an error). A group that does not
// exist is an error without a Topic; with one, the reset makes it, as
// Kafka's does.
func (s *Store) ResetGroup(name string, scope ResetScope, target ResetTarget, dryRun bool, wait time.Duration) ([]ResetPosition, error) {
	if err := format.ValidateTopic(name); err != nil {
		return nil, err
	}
	commits, err := s.GroupCommits(name)
	if err != nil && (scope.Topic == "" || !errors.Is(err, ErrGroupNotFound)) {
		return nil, err
	}
	current := map[string]map[int]uint64{}
	for _, c := range commits {
		current[c.Topic] = c.Partitions
	}
	// Planned without the lock first, so that a reset that cannot be done
	// fails before the group is made.
	plan, err := s.planReset(name, scope, current, target)
	if err != nil || dryRun {
		return plan, err
	}
	g, err := s.OpenGroup(name, wait)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	// Again under the lock: a reader may have moved on since.
	if plan, err = s.planReset(name, scope, g.pos, target); err != nil {
		return nil, err
	}
	for i := 0; i < len(plan); {
		topic, next := plan[i].Topic, map[int]uint64{}
		for ; i < len(plan) && plan[i].Topic == topic; i++ {
			next[plan[i].Partition] = plan[i].New
		}
		if err := g.Commit(topic, next); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// planReset plans ResetGroup from the group's positions, current.
func (s *Store) planReset(name string, scope ResetScope, current map[string]map[int]uint64, target ResetTarget) ([]ResetPosition, error) {
	topics := []string{scope.Topic}
	if scope.Topic == "" {
		topics = slices.Sorted(maps.Keys(current))
		if len(topics) == 0 {
			return nil, fmt.Errorf("group %s has no committed positions to reset (name a topic with --topic)", name)
		}
	}
	var plan []ResetPosition
	for _, topic := range topics {
		rows, err := s.planTopicReset(name, topic, scope.Partition, current[topic], target)
		if err != nil {
			return nil, err
		}
		plan = append(plan, rows...)
	}
	return plan, nil
}

// planTopicReset plans one topic of ResetGroup: partition, or every one
// (-1), from the group's positions in it.
func (s *Store) planTopicReset(group, topic string, partition int, current map[int]uint64, target ResetTarget) ([]ResetPosition, error) {
	t, err := s.Topic(topic)
	if err != nil {
		return nil, err
	}
	parts := []int{partition}
	if partition < 0 {
		parts = make([]int, t.Partitions)
		for p := range parts {
			parts[p] = p
		}
	} else if partition >= t.Partitions {
		return nil, fmt.Errorf("topic %s has partitions 0..%d, not %d: %w", topic, t.Partitions-1, partition, ErrPartitionNotFound)
	}
	var rows []ResetPosition
	for _, p := range parts {
		r := ResetPosition{Topic: topic, Partition: p}
		r.Current, r.HasCurrent = current[p]
		if target.Kind == ResetShiftBy && !r.HasCurrent {
			if partition >= 0 {
				return nil, fmt.Errorf("group %s has no committed position in %s/%d to shift (use --to-offset, --to-earliest or --to-latest)", group, topic, p)
			}
			continue
		}
		if err := s.planPartitionReset(&r, target); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// planPartitionReset fills r's bounds and new position.
func (s *Store) planPartitionReset(r *ResetPosition, target ResetTarget) error {
	part, err := s.OpenPartition(r.Topic, r.Partition)
	if err != nil {
		return err
	}
	defer part.Close()
	if r.Start, r.Next, err = part.Bounds(); err != nil {
		return err
	}
	want, below, err := resetWanted(part, r, target)
	if err != nil {
		return err
	}
	switch {
	case below || want < r.Start:
		r.New, r.Clamp = r.Start, ClampedToStart
	case want > r.Next:
		r.New, r.Clamp = r.Next, ClampedToEnd
	default:
		r.New = want
	}
	return nil
}

// resetWanted is where target puts a partition whose bounds and
// committed position r holds, before clamping; below says a shift went
// below offset 0.
func resetWanted(part *Partition, r *ResetPosition, target ResetTarget) (want uint64, below bool, err error) {
	switch target.Kind {
	case ResetToEarliest:
		return r.Start, false, nil
	case ResetToLatest:
		return r.Next, false, nil
	case ResetToOffset:
		return target.Offset, false, nil
	case ResetToTime:
		want, err = part.OffsetAtTime(target.Time)
		return want, false, err
	}
	if target.Shift < 0 {
		back := uint64(-(target.Shift + 1)) + 1 // -MinInt64 overflows int64
		if back > r.Current {
			return 0, true, nil
		}
		return r.Current - back, false, nil
	}
	if up := uint64(target.Shift); up <= math.MaxUint64-r.Current {
		return r.Current + up, false, nil
	}
	return math.MaxUint64, false, nil
}
