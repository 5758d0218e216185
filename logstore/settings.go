package logstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
)

// ErrInvalidSettings means a topic's settings file holds something other
// than the settings create stores.
var ErrInvalidSettings = errors.New("invalid topic settings")

// MaxSizeSetting bounds the byte sizes a topic stores (segment_bytes,
// retention_bytes), as create's size flags do: under 2^62.
const MaxSizeSetting = 1<<62 - 1

// ReadTopicSettings reads the stored settings of the topic directory dir;
// none when it stores none.
func ReadTopicSettings(dir string) (Settings, error) {
	return readSettings(filepath.Join(dir, settingsFile))
}

// readSettings reads a topic's settings file; none when there is none.
// Anything else than what create stores is an error naming the file:
// taken loosely, a value out of range would make the topic misbehave
// later, far from the cause.
func readSettings(path string) (Settings, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("read topic settings: %w", err)
	}
	st, err := parseSettings(b)
	if err != nil {
		return Settings{}, settingsError(path, err)
	}
	return st, nil
}

func settingsError(path string, err error) error {
	return fmt.Errorf("%w in %s: %v (fix the file, or remove it for the built-in defaults and no retention)", ErrInvalidSettings, path, err)
}

// parseSettings parses a settings file strictly: one JSON object with
// only the known fields, each absent or in the range create takes.
func parseSettings(b []byte) (Settings, error) {
	var j settingsJSON
	if err := decodeStrict(b, &j); err != nil {
		return Settings{}, err
	}
	st := Settings{SegmentBytes: j.SegmentBytes, IndexInterval: j.IndexInterval, RetentionBytes: j.RetentionBytes}
	for _, c := range []struct {
		name string
		n    int64
	}{{"segment_bytes", j.SegmentBytes}, {"retention_bytes", j.RetentionBytes}} {
		if c.n < 0 || c.n > MaxSizeSetting {
			return Settings{}, fmt.Errorf("%s %d is out of range (1 to %d bytes)", c.name, c.n, int64(MaxSizeSetting))
		}
	}
	if j.IndexInterval < 0 {
		return Settings{}, fmt.Errorf("index_interval %d is out of range (at least 1)", j.IndexInterval)
	}
	for _, d := range []struct {
		name string
		text string
		to   *time.Duration
	}{{"roll_after", j.RollAfter, &st.RollAfter}, {"retention", j.Retention, &st.Retention}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil {
			return Settings{}, fmt.Errorf("%s %q is not a duration (Go syntax, as in \"168h0m0s\")", d.name, d.text)
		}
		if v <= 0 {
			return Settings{}, fmt.Errorf("%s %q must be longer than 0", d.name, d.text)
		}
		*d.to = v
	}
	return st, nil
}

// decodeStrict decodes one JSON object into v: unknown fields, a value
// of another type or anything after the object are errors.
func decodeStrict(b []byte, v any) error {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s holds a JSON %s, not a %s", te.Field, te.Value, jsonKind(te.Type.Kind()))
		}
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more after the JSON object")
	}
	return nil
}

// jsonKind names what a field of kind k holds, for errors.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Slice:
		return "list"
	case reflect.Struct:
		return "object"
	}
	return "whole number in range"
}
