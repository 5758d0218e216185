package kafka

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
)

// A log directory's meta.properties names the broker and cluster it
// belongs to, as a Java properties file (java.util.Properties, which
// Kafka's MetaProperties reads and writes):
//
//	#
//	#Tue Nov 03 10:15:00 UTC 2026
//	node.id=1
//	directory.id=J8aAPcfLQt2bqs1JT_rMgQ
//	version=1
//	cluster.id=MkU3OEVBNTcwNTJENDM2Qg
//
// Version 1 (KRaft) needs node.id and cluster.id; version 0 (written by
// brokers that ran with ZooKeeper) has broker.id instead, and may lack
// both. directory.id, the directory's own UUID, came with Kafka 3.7.

// ErrMetaProperties means a meta.properties is damaged or says what
// Kafka would refuse.
var ErrMetaProperties = errors.New("meta.properties")

// MetaProperties is what a log directory's meta.properties says.
type MetaProperties struct {
	Version     int    // 0 or 1
	NodeID      int32  // node.id (version 1) or broker.id (version 0)
	HasNodeID   bool   // false only in version 0 without broker.id
	ClusterID   string // "" when absent, as version 0 allows
	DirectoryID UUID   // zero when absent
}

// ParseMetaProperties decodes a meta.properties. Properties Kafka does
// not read are passed over, as Kafka passes over them.
func ParseMetaProperties(b []byte) (MetaProperties, error) {
	props, err := parseProperties(b)
	if err != nil {
		return MetaProperties{}, err
	}
	byKey := make(map[string]property, len(props))
	for _, p := range props {
		if first, dup := byKey[p.key]; dup {
			return MetaProperties{}, fmt.Errorf("%w: line %d: %s again (first on line %d)", ErrMetaProperties, p.line, p.key, first.line)
		}
		byKey[p.key] = p
	}
	var m MetaProperties
	if p, ok := byKey["version"]; ok {
		v, err := strconv.Atoi(p.value)
		if err != nil || v != 0 && v != 1 {
			return m, fmt.Errorf("%w: line %d: version %q, Kafka knows only 0 and 1", ErrMetaProperties, p.line, p.value)
		}
		m.Version = v
	}
	idKey := "node.id"
	if m.Version == 0 {
		idKey = "broker.id"
	}
	if p, ok := byKey[idKey]; ok {
		id, err := strconv.ParseInt(p.value, 10, 32)
		if err != nil || id < 0 {
			return m, fmt.Errorf("%w: line %d: %s %q is not a node id", ErrMetaProperties, p.line, idKey, p.value)
		}
		m.NodeID, m.HasNodeID = int32(id), true
	}
	if p, ok := byKey["cluster.id"]; ok {
		m.ClusterID = p.value
	}
	if p, ok := byKey["directory.id"]; ok {
		if m.DirectoryID, err = ParseUUID(p.value); err != nil {
			return m, fmt.Errorf("%w: line %d: directory.id: %w", ErrMetaProperties, p.line, err)
		}
	}
	if m.Version == 1 {
		switch {
		case !m.HasNodeID:
			return m, fmt.Errorf("%w: version 1 without node.id", ErrMetaProperties)
		case m.ClusterID == "":
			return m, fmt.Errorf("%w: version 1 without cluster.id", ErrMetaProperties)
		}
	}
	return m, nil
}

// property is a key and value of a properties file, and the line it
// starts on.
type property struct {
	key, value string
	line       int
}

// parseProperties reads a properties file as java.util.Properties.load
// does from bytes: ISO 8859-1 text, '#' and '!' comment lines, a key ended
// by '=', ':' or whitespace, a line ending in an odd number of
// backslashes continued on the next, and the escapes \t \n \r \f \uXXXX
// (any other character after a backslash stands for itself).
func parseProperties(b []byte) ([]property, error) {
	var props []property
	var logical []byte
	start, cont := 0, false
	for num, natural := range textLines(b) {
		line := trimPropertySpace(natural)
		if !cont {
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
			start = num
		}
		backslashes := 0
		for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
			backslashes++
		}
		if cont = backslashes%2 == 1; cont {
			line = line[:len(line)-1]
		}
		logical = append(logical, line...)
		if cont {
			continue
		}
		p, err := splitProperty(logical, start)
		if err != nil {
			return nil, err
		}
		props = append(props, p)
		logical = logical[:0]
	}
	if cont { // the file ends in a continued line
		p, err := splitProperty(logical, start)
		if err != nil {
			return nil, err
		}
		props = append(props, p)
	}
	return props, nil
}

func isPropertySpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimPropertySpace(s string) string {
	for s != "" && isPropertySpace(s[0]) {
		s = s[1:]
	}
	return s
}

// splitProperty splits a logical line into its key and value.
func splitProperty(l []byte, line int) (property, error) {
	keyEnd, valueAt, sep, escaped := len(l), len(l), false, false
	for i, c := range l {
		if !escaped && (c == '=' || c == ':' || isPropertySpace(c)) {
			keyEnd, valueAt, sep = i, i+1, c == '=' || c == ':'
			break
		}
		escaped = c == '\\' && !escaped
	}
	for ; valueAt < len(l); valueAt++ { // whitespace, and one '=' or ':' if none ended the key
		if c := l[valueAt]; !isPropertySpace(c) {
			if sep || c != '=' && c != ':' {
				break
			}
			sep = true
		}
	}
	key, err := unescapeProperty(l[:keyEnd])
	if err == nil {
		var value string
		if value, err = unescapeProperty(l[valueAt:]); err == nil {
			return property{key: key, value: value, line: line}, nil
		}
	}
	return property{}, fmt.Errorf("%w: line %d: %w", ErrMetaProperties, line, err)
}

// unescapeProperty decodes a key's or value's escapes; its bytes are ISO
// 8859-1, each the character of that code.
func unescapeProperty(b []byte) (string, error) {
	units := make([]uint16, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			units = append(units, uint16(c))
			continue
		}
		if i++; i == len(b) {
			break // a lone backslash at the end stands for nothing
		}
		switch c = b[i]; c {
		case 't':
			units = append(units, '\t')
		case 'n':
			units = append(units, '\n')
		case 'r':
			units = append(units, '\r')
		case 'f':
			units = append(units, '\f')
		case 'u':
			hex := b[i+1 : min(i+5, len(b))]
			u, err := strconv.ParseUint(string(hex), 16, 16)
			if err != nil || len(hex) < 4 {
				return "", fmt.Errorf(`malformed \uxxxx escape \u%s`, hex)
			}
			units = append(units, uint16(u))
			i += 4
		default:
			units = append(units, uint16(c))
		}
	}
	return string(utf16.Decode(units)), nil
}
