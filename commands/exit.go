package commands

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/seglog/seglog/format"
)

// Exit statuses, as docs/cli.md (Exit status) fixes them.
const (
	exitOK       = 0 // success; also a closed stdout pipe
	exitError    = 1 // runtime error
	exitUsage    = 2 // bad flags, arguments or names
	exitProblems = 3 // a check found problems
)

// usageError is a command line that does not make sense; exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// errProblemsFound ends a checker that reported problems on stdout; exit 3.
var errProblemsFound = errors.New("problems found")

// exitCode maps an error from a command to its exit status.
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, syscall.EPIPE):
		return exitOK
	case errors.As(err, &ue), errors.Is(err, format.ErrTopicName):
		return exitUsage
	case errors.Is(err, errProblemsFound):
		return exitProblems
	}
	return exitError
}

// exitDoc is one exit status of a command and when it happens.
type exitDoc struct {
	code int
	when string
}

// commandExits are the exit statuses of each command (by the name typed
// after seglog: "kafka export"), for its --help and man page. A usage
// error is exit 2 everywhere.
var commandExits = map[string][]exitDoc{
	"create": {
		{exitOK, "the topic was created, or with --if-not-exists already existed"},
		{exitError, "the topic already exists (without --if-not-exists), or an I/O error"},
	},
	"delete": {
		{exitOK, "every topic named was deleted, or on a terminal the ones not confirmed were left"},
		{exitError, "a topic that does not exist, or one whose maintenance lock or a partition's writer lock is held (nothing is deleted then), or an I/O error"},
	},
	"alter": {
		{exitOK, "the settings were changed, or with --dry-run printed"},
		{exitError, "the topic does not exist, its lock is held, or an I/O error"},
	},
	"add-partitions": {
		{exitOK, "the partitions were added, or the topic already had that many"},
		{exitError, "the topic does not exist, has more partitions than asked for, misses one, or its lock is held, or an I/O error"},
	},
	"append": {
		{exitOK, "all of stdin was appended; also when ended by Ctrl-C or SIGTERM, after what was read is written and synced"},
		{exitError, "the topic does not exist (without --create), a partition's writer lock is held (without --wait), a line over --max-message-bytes or a malformed --input json line (the lines before it stay appended), a corrupt record in a partition, or an I/O error"},
	},
	"read": {
		{exitOK, "the records were printed; also when stdout is a closed pipe, and with --group when ended by Ctrl-C or SIGTERM"},
		{exitError, "the topic or partition does not exist, an offset out of range, a corrupt record (after the records before it; not with --skip-corrupt), the group held by another reader, or an I/O error"},
	},
	"tail": {
		{exitOK, "the records were printed; also -f ended by Ctrl-C, SIGTERM, --count or --timeout, and a closed stdout pipe"},
		{exitError, "the topic does not exist (-F waits for it instead), a corrupt record (not with --skip-corrupt), the group held by another reader, or an I/O error"},
	},
	"describe": {
		{exitOK, "every topic and partition asked for was described"},
		{exitError, "a topic or partition could not be read or is missing below the highest (the others are still described), or an I/O error"},
	},
	"topics": {
		{exitOK, "every topic was listed"},
		{exitError, "a topic could not be read or misses a partition (the others are still listed), or an I/O error"},
	},
	"metrics": {
		{exitOK, "every topic, partition and group asked for was exported"},
		{exitError, "a topic, partition or group could not be read, a partition is missing below the highest or a topic is named twice (the rest is still exported, and --output FILE still written), a data directory without topics, --output that cannot be written, or an I/O error"},
	},
	"dump-index": {
		{exitOK, "the entries were printed; with --verify, every entry checks out (notes and warnings do not count)"},
		{exitError, "the file, topic, partition or segment does not exist, or an I/O error"},
		{exitProblems, "with --verify: an entry that lies (wrong position or timestamp), is out of order, or points inside the log where no record starts"},
	},
	"verify-crc": {
		{exitOK, "no problems found: notes only, known gaps, or an incomplete tail while a writer holds the partition"},
		{exitError, "a check that could not finish (an I/O error, a missing topic), even if it found problems too"},
		{exitProblems, "problems found: a corrupt record, overlapping segments, an unexplained offset gap, an incomplete tail with no live writer, or an index entry that lies"},
	},
	"recover": {
		{exitOK, "recovered, or nothing to do; without TOPIC also when partitions a writer holds were skipped"},
		{exitError, "a named topic's lock is held (without --wait), a topic that does not exist, or an I/O error"},
		{exitProblems, "a corrupt record followed by valid data was left in place (run again with --salvage)"},
	},
	"retention-sweep": {
		{exitOK, "swept; without TOPIC also when topics without a retention setting or with their lock held were skipped"},
		{exitError, "a named topic without a retention rule or with its lock held, a topic that does not exist, or an I/O error"},
	},
	"quarantine": {
		{exitOK, "listed, or purged"},
		{exitError, "a saved piece could not be read or purged, or an I/O error"},
	},
	"copy-partition": {
		{exitOK, "the partition was copied whole and checked"},
		{exitError, "a damaged source, an existing destination partition (without --force), a lock held, the reader of --to - gone before the end, or an I/O error"},
	},
	"reassign": {
		{exitOK, "every move was checked (--dry-run), copied (--execute) or found alike (--verify), and with --remove-source its source removed"},
		{exitError, "a plan file that cannot be read, a source partition that is not there, a destination holding another partition, a lock held, a copy that failed, Ctrl-C or SIGTERM, or an I/O error"},
		{exitProblems, "with --verify: a destination that is missing or does not hold exactly its source's records"},
	},
	"import-partition": {
		{exitOK, "the partition was imported whole and checked"},
		{exitError, "a stream cut short or that fails the checks, an existing partition (without --force), a lock held, or an I/O error"},
	},
	"import": {
		{exitOK, "every record was appended"},
		{exitError, "a corrupt record in the source (the records before it stay appended), the topic does not exist (without --create), a lock held, or an I/O error"},
	},
	"kafka export": {
		{exitOK, "every record was exported; also -f ended by Ctrl-C or SIGTERM"},
		{exitError, "an unreachable broker, a refused login, a missing Kafka topic (without --create-topic), a record over the topic's max.message.bytes, or an I/O error"},
	},
	"kafka import": {
		{exitOK, "every record was imported; also -f ended by Ctrl-C or SIGTERM"},
		{exitError, "an unreachable broker, a refused login, a missing Kafka topic, a record refused (with --no-drop-headers), a lock held, or an I/O error"},
	},
	"groups": {
		{exitOK, "the groups were listed (none is no error)"},
		{exitError, "a data directory that does not exist, a group whose positions cannot be read (the others are still listed), or an I/O error"},
	},
	"groups describe": {
		{exitOK, "the group's positions were shown"},
		{exitError, "the group does not exist, a partition that cannot be read, or an I/O error"},
	},
	"groups delete": {
		{exitOK, "every group named was deleted"},
		{exitError, "a group that does not exist or that a reader holds (the others are still deleted), or an I/O error"},
	},
	"groups reset": {
		{exitOK, "the plan was printed and, without --dry-run, committed"},
		{exitError, "the group (without --topic), topic or partition does not exist, the group held by a reader, --shift-by of a partition never committed, or an I/O error"},
	},
	"completion": {
		{exitOK, "the script was printed"},
	},
	"version": {
		{exitOK, "the version was printed"},
	},
}

// exitsOf is the exit statuses of a command (by the name typed after
// seglog), the usage error included, in order.
func exitsOf(name string) []exitDoc {
	exits := append([]exitDoc{{exitUsage, "a usage error: an unknown flag, a missing or extra argument, a bad name, a value that does not parse"}},
		commandExits[name]...)
	slices.SortStableFunc(exits, func(a, b exitDoc) int { return a.code - b.code })
	return exits
}

// exitHelp is the EXIT STATUS section --help prints after a command's
// options, the lines wrapped at 80 columns.
func exitHelp(name string) string {
	var b strings.Builder
	b.WriteString("\nEXIT STATUS:\n")
	for _, e := range exitsOf(name) {
		lead := "   " + strconv.Itoa(e.code) + "  "
		b.WriteString(lead)
		col, first := len(lead), true
		for w := range strings.FieldsSeq(e.when) {
			switch {
			case first:
			case col+1+len(w) > 80:
				b.WriteString("\n      ")
				col = 6
			default:
				b.WriteByte(' ')
				col++
			}
			b.WriteString(w)
			col += len(w)
			first = false
		}
		b.WriteByte('\n')
	}
	return b.String()
}
