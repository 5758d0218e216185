package format

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Segment file extensions.
const (
	LogExt       = ".log"
	IndexExt     = ".index"
	TimeIndexExt = ".timeindex"
)

// baseDigits is the width of a segment file's base offset: a u64 in decimal.
const baseDigits = 20

// MaxTopicLen is the longest topic (and group) name.
const MaxTopicLen = 249

var (
	// ErrSegmentName means a file name is not <20 digits>.log|.index|.timeindex.
	ErrSegmentName = errors.New("not a segment file name")
	// ErrTopicName means a topic or group name breaks the naming rules.
	ErrTopicName = errors.New("invalid name")
	// ErrPartitionName means a directory name is not a partition number.
	ErrPartitionName = errors.New("not a partition number")
)

// SegmentName is the file name of a segment's file with the given extension.
func SegmentName(base uint64, ext string) string {
	var b [baseDigits + len(TimeIndexExt)]byte
	return string(AppendSegmentName(b[:0], base, ext))
}

// AppendSegmentName appends SegmentName(base, ext) to b.
func AppendSegmentName(b []byte, base uint64, ext string) []byte {
	var digits [baseDigits]byte
	d := strconv.AppendUint(digits[:0], base, 10)
	for range baseDigits - len(d) {
		b = append(b, '0')
	}
	return append(append(b, d...), ext...)
}

// ParseSegmentName splits a segment file name into base offset and extension.
func ParseSegmentName(name string) (base uint64, ext string, err error) {
	if len(name) <= baseDigits {
		return 0, "", ErrSegmentName
	}
	digits, ext := name[:baseDigits], name[baseDigits:]
	if ext != LogExt && ext != IndexExt && ext != TimeIndexExt {
		return 0, "", ErrSegmentName
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, "", ErrSegmentName
		}
	}
	base, err = strconv.ParseUint(digits, 10, 64)
	if err != nil { // more than 20 digits' worth: past u64
		return 0, "", ErrSegmentName
	}
	return base, ext, nil
}

// ValidateTopic checks a topic or group name: 1–249 characters from
// [A-Za-z0-9._-], not starting with '.' (which also rules out "." and "..").
// Names are checked before any file is touched, which also keeps every path
// built from them inside the data directory.
func ValidateTopic(name string) error {
	bad := func(reason string) error {
		shown := name
		if len(shown) > 40 {
			cut := 37
			for cut > 0 && !utf8.RuneStart(shown[cut]) {
				cut--
			}
			shown = shown[:cut] + "..."
		}
		return fmt.Errorf("%w %q: %s", ErrTopicName, shown, reason)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > MaxTopicLen:
		return bad(fmt.Sprintf("%d characters long, at most %d allowed", len(name), MaxTopicLen))
	case name[0] == '.':
		return bad("must not start with '.'")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			r, _ := utf8.DecodeRuneInString(name[i:])
			return bad(fmt.Sprintf("character %q not allowed (use A-Z a-z 0-9 . _ -)", r))
		}
	}
	return nil
}

// ParsePartition parses a partition directory name: a decimal number without
// sign or leading zeros.
func ParsePartition(name string) (int, error) {
	if name == "" || len(name) > 9 || (len(name) > 1 && name[0] == '0') {
		return 0, ErrPartitionName
	}
	n := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < '0' || c > '9' {
			return 0, ErrPartitionName
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}
