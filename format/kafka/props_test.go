package kafka_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/seglog/seglog/format/kafka"
)

// meta.properties as java.util.Properties.store writes it for a KRaft
// broker (a comment, the date, then the properties in hash order) and
// for one that ran with ZooKeeper.
const (
	ppKRaft = "#\n#Tue Nov 03 10:15:00 UTC 2026\nnode.id=1\ndirectory.id=J8aAPcfLQt2bqs1JT_rMgQ\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n"
	ppZK    = "#\n#Tue Nov 03 10:15:00 UTC 2026\nversion=0\nbroker.id=1001\ncluster.id=Ok3qZ9XlRLWbT0AqBr-rYw\n"
)

func TestParseMetaProperties(t *testing.T) {
	dirID, err := kafka.ParseUUID("J8aAPcfLQt2bqs1JT_rMgQ")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, text string
		want       kafka.MetaProperties
	}{
		{"KRaft", ppKRaft, kafka.MetaProperties{Version: 1, NodeID: 1, HasNodeID: true, ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", DirectoryID: dirID}},
		{"ZooKeeper", ppZK, kafka.MetaProperties{Version: 0, NodeID: 1001, HasNodeID: true, ClusterID: "Ok3qZ9XlRLWbT0AqBr-rYw"}},
		{"version 0 alone", "version=0\n", kafka.MetaProperties{}},
		{"no version: 0", "broker.id=3\n", kafka.MetaProperties{NodeID: 3, HasNodeID: true}},
		{"version 0 passes node.id over", "version=0\nnode.id=7\n", kafka.MetaProperties{}},
		{"empty", "", kafka.MetaProperties{}},
		{"other separators", "version : 1\nnode.id 5\ncluster.id:abc\n", kafka.MetaProperties{Version: 1, NodeID: 5, HasNodeID: true, ClusterID: "abc"}},
		{"leading whitespace, ! comments, blank lines", "  ! a comment\n\n\t version=1\n node.id=2\ncluster.id=c\n", kafka.MetaProperties{Version: 1, NodeID: 2, HasNodeID: true, ClusterID: "c"}},
		{"continued line", "version=1\nnode.id=2\ncluster.id=ab\\\n    cd\\\n", kafka.MetaProperties{Version: 1, NodeID: 2, HasNodeID: true, ClusterID: "abcd"}},
		{"escapes", "version=1\nnode.id=2\ncluster\\.id=a\\=b\\:c\\u00e9\\t\\\\\n", kafka.MetaProperties{Version: 1, NodeID: 2, HasNodeID: true, ClusterID: "a=b:c\u00e9\t\\"}},
		{"escaped separator in the key", "version=1\nnode.id=2\ncluster.id=x\nnot\\=a\\ key=1\n", kafka.MetaProperties{Version: 1, NodeID: 2, HasNodeID: true, ClusterID: "x"}},
		{"ISO 8859-1 bytes", "version=1\nnode.id=2\ncluster.id=caf\xe9\n", kafka.MetaProperties{Version: 1, NodeID: 2, HasNodeID: true, ClusterID: "caf\u00e9"}},
		{"a surrogate pair", "version=1\nnode.id=2\ncluster.id=\\ud83d\\ude00\n", kafka.MetaProperties{Version: 1, NodeID: 2, HasNodeID: true, ClusterID: "\U0001F600"}},
		{"CRLF", strings.ReplaceAll(ppZK, "\n", "\r\n"), kafka.MetaProperties{Version: 0, NodeID: 1001, HasNodeID: true, ClusterID: "Ok3qZ9XlRLWbT0AqBr-rYw"}},
		{"a comment line ending in a backslash", "# ends \\\nversion=1\nnode.id=2\ncluster.id=c\n", kafka.MetaProperties{Version: 1, NodeID: 2, HasNodeID: true, ClusterID: "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := kafka.ParseMetaProperties([]byte(tc.text))
			if err != nil || got != tc.want {
				t.Errorf("%+v, %v; want %+v", got, err, tc.want)
			}
		})
	}

	for _, tc := range []struct{ name, text, want string }{
		{"version 2", "version=2\n", `meta.properties: line 1: version "2", Kafka knows only 0 and 1`},
		{"version 1 without node.id", "version=1\ncluster.id=c\n", "meta.properties: version 1 without node.id"},
		{"version 1 without cluster.id", "version=1\nnode.id=1\n", "meta.properties: version 1 without cluster.id"},
		{"node.id not a number", "version=1\nnode.id=one\ncluster.id=c\n", `meta.properties: line 2: node.id "one" is not a node id`},
		{"negative broker.id", "version=0\nbroker.id=-1\n", `meta.properties: line 2: broker.id "-1" is not a node id`},
		{"a key twice", "version=1\nnode.id=1\ncluster.id=c\nnode.id=2\n", "meta.properties: line 4: node.id again (first on line 2)"},
		{"bad directory.id", "version=1\nnode.id=1\ncluster.id=c\ndirectory.id=xyz\n", `meta.properties: line 4: directory.id: UUID "xyz" is not 22 characters of base64`},
		{"bad \\u escape", "version=1\nnode.id=1\ncluster.id=\\u12g4\n", `meta.properties: line 3: malformed \uxxxx escape \u12g4`},
		{"short \\u escape", "version=1\nnode.id=1\ncluster.id=\\u12\n", `meta.properties: line 3: malformed \uxxxx escape \u12`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kafka.ParseMetaProperties([]byte(tc.text))
			ixWantErr(t, err, kafka.ErrMetaProperties, tc.want)
		})
	}
}

func FuzzParseMetaProperties(f *testing.F) {
	for _, s := range []string{ppKRaft, ppZK, "", "version=1\nnode.id=1\ncluster.id=a\\\n b\\", "a\\u00e9=\\u12", "=\n:\n \\\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := kafka.ParseMetaProperties(b)
		switch {
		case err != nil && !errors.Is(err, kafka.ErrMetaProperties):
			t.Fatalf("error %v is no ErrMetaProperties", err)
		case err == nil && (m.Version != 0 && m.Version != 1 || m.Version == 1 && (!m.HasNodeID || m.ClusterID == "") || m.NodeID < 0):
			t.Fatalf("%+v", m)
		}
	})
}
