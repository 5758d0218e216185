package commands

import (
	"maps"
	"slices"

	"github.com/seglog/seglog/logstore"
)

// readGroupPositions reads the committed positions of the groups names, of
// the topics in only (all when it is empty) and partition (all when -1),
// by topic, then partition; fill sets each one's bounds. A group whose
// positions cannot be read has its err set, and is a problem too.
func readGroupPositions(store *logstore.Store, names []string, only map[string]bool, partition int, fill func(*groupPartitionInfo), probs *problems) []*groupInfo {
	groups := make([]*groupInfo, 0, len(names))
	for _, name := range names {
		g := &groupInfo{name: name, dir: store.GroupDir(name)}
		commits, err := store.GroupCommits(name)
		if err != nil {
			g.err = err
			*probs = append(*probs, err)
		}
		for _, c := range commits {
			if len(only) > 0 && !only[c.Topic] {
				continue
			}
			for _, p := range slices.Sorted(maps.Keys(c.Partitions)) {
				if partition >= 0 && p != partition {
					continue
				}
				gp := groupPartitionInfo{topic: c.Topic, partition: p, committed: c.Partitions[p], updated: c.Updated}
				fill(&gp)
				g.parts = append(g.parts, gp)
			}
		}
		groups = append(groups, g)
	}
	return groups
}
