package logstore

// KeyPartition is the partition a keyed record goes to: FNV-1a-32 of the
// key modulo the partition count (docs/format.md §5), the routing brokers of this
// format use.
func KeyPartition(key []byte, partitions int) int {
	const offset32, prime32 = 2166136261, 16777619
	h := uint32(offset32)
	for _, c := range key {
		h ^= uint32(c)
		h *= prime32
	}
	return int(h % uint32(partitions))
}
