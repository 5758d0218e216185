package kafka_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/seglog/seglog/format/kafka"
)

func TestValidateTopic(t *testing.T) {
	for _, name := range []string{"orders", "my-topic", "__consumer_offsets", "__cluster_metadata", ".hidden", "a.b_c-D9", "..a", strings.Repeat("x", 249)} {
		if err := kafka.ValidateTopic(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	for name, want := range map[string]string{
		"":                       "not a Kafka topic name: empty",
		".":                      `not a Kafka topic name: "."`,
		"..":                     `not a Kafka topic name: ".."`,
		strings.Repeat("x", 250): "not a Kafka topic name: 250 characters long, at most 249 allowed",
		"a b":                    `not a Kafka topic name: "a b" holds ' ' (allowed: a-z A-Z 0-9 . _ -)`,
		"caf\u00e9":              `not a Kafka topic name: "café" holds 'é' (allowed: a-z A-Z 0-9 . _ -)`,
	} {
		ixWantErr(t, kafka.ValidateTopic(name), kafka.ErrTopicName, want)
	}
}

func TestParsePartitionDir(t *testing.T) {
	for name, want := range map[string]kafka.PartitionDir{
		"orders-0":              {"orders", 0},
		"my-topic-12":           {"my-topic", 12},
		"__consumer_offsets-49": {"__consumer_offsets", 49},
		"__cluster_metadata-0":  {"__cluster_metadata", 0},
		"t--1":                  {"t-", 1},
		"x-2147483647":          {"x", 2147483647},
	} {
		got, err := kafka.ParsePartitionDir(name)
		if err != nil || got != want || got.String() != name {
			t.Errorf("%q: %+v (%s), %v", name, got, got, err)
		}
	}
	for _, name := range []string{
		"orders", "orders-", "-0", "orders-01", "orders-+1", "orders-1a", "orders-2147483648", "ord ers-0", "0", "..-0",
		"orders-0.6c1bb7a2d5f84d5b9a3c0e1f2a3b4c5d-delete", "orders-0.6c1bb7a2d5f84d5b9a3c0e1f2a3b4c5d-future", "orders-0.x-stray",
	} {
		if got, err := kafka.ParsePartitionDir(name); !errors.Is(err, kafka.ErrDirName) {
			t.Errorf("%q: %+v, %v", name, got, err)
		}
	}
}

func TestParseLeftoverDir(t *testing.T) {
	for name, want := range map[string]kafka.LeftoverDir{
		"orders-0.6c1bb7a2d5f84d5b9a3c0e1f2a3b4c5d-delete":   {kafka.PartitionDir{Topic: "orders", Partition: 0}, "6c1bb7a2d5f84d5b9a3c0e1f2a3b4c5d", kafka.LeftoverDelete},
		"my-topic-3.0123456789abcdef0123456789abcdef-future": {kafka.PartitionDir{Topic: "my-topic", Partition: 3}, "0123456789abcdef0123456789abcdef", kafka.LeftoverFuture},
		"a.b-7.x-stray": {kafka.PartitionDir{Topic: "a.b", Partition: 7}, "x", kafka.LeftoverStray},
	} {
		got, err := kafka.ParseLeftoverDir(name)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v", name, got, err)
		}
	}
	for _, name := range []string{
		"orders-0", "orders-0-delete", "orders-0.-delete", "orders.abc-delete", "orders-x.abc-delete", "orders-0.a b-delete", "orders-0.abc-deleted", "orders-0.abc-Delete",
	} {
		if got, err := kafka.ParseLeftoverDir(name); !errors.Is(err, kafka.ErrDirName) {
			t.Errorf("%q: %+v, %v", name, got, err)
		}
	}
}

func TestParseFileName(t *testing.T) {
	for name, want := range map[string]kafka.FileName{
		"00000000000000000000.log":               {0, kafka.LogExt, ""},
		"00000000000000004711.index":             {4711, kafka.IndexExt, ""},
		"00000000000000004711.timeindex":         {4711, kafka.TimeIndexExt, ""},
		"00000000000000004711.txnindex":          {4711, kafka.TxnIndexExt, ""},
		"00000000000000004711.snapshot":          {4711, kafka.SnapshotExt, ""},
		"00000000000000004711.log.deleted":       {4711, kafka.LogExt, kafka.DeletedSuffix},
		"00000000000000004711.index.swap":        {4711, kafka.IndexExt, kafka.SwapSuffix},
		"00000000000000004711.timeindex.cleaned": {4711, kafka.TimeIndexExt, kafka.CleanedSuffix},
		"09223372036854775807.log":               {1<<63 - 1, kafka.LogExt, ""},
	} {
		if got, err := kafka.ParseFileName(name); err != nil || got != want {
			t.Errorf("%q: %+v, %v", name, got, err)
		}
	}
	for _, name := range []string{
		"", "0.log", "0000000000000000000.log", "00000000000000000000", "00000000000000000000log", "000000000000000000000.log",
		"09223372036854775808.log", "00000000000000000000.store", "00000000000000000000.log.tmp", "00000000000000000000.log.",
		"00000000000000000000-0000000001.checkpoint", "leader-epoch-checkpoint", "0000000000000000000x.log",
	} {
		if got, err := kafka.ParseFileName(name); !errors.Is(err, kafka.ErrFileName) {
			t.Errorf("%q: %+v, %v", name, got, err)
		}
	}
}

func FuzzDirAndFileNames(f *testing.F) {
	for _, s := range []string{
		"orders-0", "my-topic-12", "orders-01", "orders-0.6c1bb7a2d5f84d5b9a3c0e1f2a3b4c5d-delete", "a.b-7.x-stray",
		"00000000000000004711.log.deleted", "09223372036854775808.log", "", "-", ".",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if err := kafka.ValidateTopic(name); err != nil && !errors.Is(err, kafka.ErrTopicName) {
			t.Fatalf("topic: %v", err)
		}
		if p, err := kafka.ParsePartitionDir(name); err == nil && p.String() != name {
			t.Fatalf("partition directory %q is %s", name, p)
		} else if err != nil && !errors.Is(err, kafka.ErrDirName) {
			t.Fatalf("partition directory: %v", err)
		}
		if l, err := kafka.ParseLeftoverDir(name); err == nil {
			if got := l.PartitionDir.String() + "." + l.ID + "-" + string(l.Kind); got != name {
				t.Fatalf("leftover %q is %s", name, got)
			}
			if _, err := kafka.ParsePartitionDir(name); err == nil {
				t.Fatalf("%q is both a leftover and a partition", name)
			}
		} else if !errors.Is(err, kafka.ErrDirName) {
			t.Fatalf("leftover: %v", err)
		}
		if fn, err := kafka.ParseFileName(name); err == nil && (fn.Base < 0 || !strings.HasSuffix(name, fn.Ext+fn.Suffix)) {
			t.Fatalf("file %q: %+v", name, fn)
		} else if err != nil && !errors.Is(err, kafka.ErrFileName) {
			t.Fatalf("file: %v", err)
		}
	})
}
