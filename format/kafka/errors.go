package kafka

import (
	"errors"
	"fmt"
)

// The kinds of failure every decoder of the package reports, for
// errors.Is. Whether a short entry is a torn write or corruption depends
// on where it is in its file, which only the caller knows.
var (
	// ErrShort means the bytes end before the thing being decoded does:
	// at a file's end, what a torn write leaves rather than corruption.
	ErrShort = errors.New("not enough bytes")
	// ErrCRC means a stored checksum does not match the bytes it covers.
	ErrCRC = errors.New("crc mismatch")
	// ErrMagic means an entry's magic byte is not the format's: not 2
	// for a record batch, not 0 or 1 for a legacy message.
	ErrMagic = errors.New("unexpected magic byte")
	// ErrFormat means a field holds a value outside its range, or the
	// fields disagree with each other.
	ErrFormat = errors.New("field out of range")
	// ErrLegacyCompressed means a magic 0 or 1 message is a compressed
	// wrapper, whose inner messages a reader has not unwrapped.
	ErrLegacyCompressed = errors.New("compressed legacy message set")
)

// detailError says in words what is wrong; errors.Is finds its kind.
type detailError struct {
	kind error
	msg  string
}

func (e *detailError) Error() string { return e.msg }
func (e *detailError) Unwrap() error { return e.kind }

// errorf is an error of kind saying what is wrong in words.
func errorf(kind error, format string, args ...any) error {
	return &detailError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
