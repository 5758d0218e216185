package kafka

// A record of a batch (KIP-98), once its batch is decompressed:
//
//	length          varint   bytes after this field
//	attributes      i8       unused
//	timestampDelta  varlong  from the batch's BaseTimestamp
//	offsetDelta     varint   from the batch's BaseOffset
//	keyLength       varint   -1: a null key
//	key
//	valueLength     varint   -1: a null value
//	value
//	headersCount    varint
//	headers         each: keyLength varint, key, valueLength varint (-1: null), value

// Record is one record of a batch, its offset and timestamp relative to
// the batch's. Key, Value and the headers alias the bytes it was decoded
// from.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key, Value     []byte // nil: null; non-nil and empty: empty
	Headers        []Header
}

// Header is one of a record's headers. Its key is never null; a nil
// Value is null.
type Header struct {
	Key, Value []byte
}

// ParseRecord decodes the record b starts with into r and returns the
// bytes it takes. It allocates only to grow r.Headers past its capacity,
// so a reader reusing r allocates for the most headers a record has. Every length
// is checked against the bytes left, and the record's length must be
// what its fields take (ErrFormat); ErrShort when b ends before the
// record its length announces.
func ParseRecord(b []byte, r *Record) (n int, err error) {
	length, n, err := varint(b)
	if err != nil {
		return 0, err
	}
	if length < 0 {
		return 0, errorf(ErrFormat, "record length %d is negative", length)
	}
	if int64(length) > int64(len(b)-n) {
		return 0, errorf(ErrShort, "a record of %d bytes runs past the %d bytes left", length, len(b)-n)
	}
	d := fields{b: b[n : n+int(length)]}
	if len(d.b) == 0 {
		return 0, errorf(ErrFormat, "record length 0 holds no attributes")
	}
	r.Attributes = int8(d.b[0])
	d.at = 1
	r.TimestampDelta = d.varlong("timestamp delta")
	r.OffsetDelta = d.varint("offset delta")
	r.Key = d.bytes("key", true)
	r.Value = d.bytes("value", true)
	count := d.varint("headers count")
	switch {
	case d.err != nil:
	case count < 0:
		d.err = errorf(ErrFormat, "headers count %d is negative", count)
	case int(count) > (len(d.b)-d.at)/2:
		d.err = errorf(ErrFormat, "%d headers cannot fit in the %d bytes left of the record", count, len(d.b)-d.at)
	}
	if d.err != nil {
		return 0, d.err
	}
	hs := r.Headers[:0]
	if cap(hs) < int(count) {
		hs = make([]Header, 0, count)
	}
	for range count {
		k := d.bytes("header key", false)
		v := d.bytes("header value", true)
		if d.err != nil {
			return 0, d.err
		}
		hs = append(hs, Header{Key: k, Value: v})
	}
	r.Headers = hs
	if d.at != len(d.b) {
		return 0, errorf(ErrFormat, "record length %d, but its fields take %d bytes", length, d.at)
	}
	return n + int(length), nil
}

// fields reads a record's fields in order; the first failure sticks and
// every later read returns a zero value.
type fields struct {
	b   []byte
	at  int
	err error
}

func (d *fields) varint(what string) int32 {
	if d.err != nil {
		return 0
	}
	v, n, err := varint(d.b[d.at:])
	if err != nil {
		d.fail(what, err)
		return 0
	}
	d.at += n
	return v
}

func (d *fields) varlong(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n, err := varlong(d.b[d.at:])
	if err != nil {
		d.fail(what, err)
		return 0
	}
	d.at += n
	return v
}

// bytes reads a length and that many bytes; -1 is null where nullable.
func (d *fields) bytes(what string, nullable bool) []byte {
	if d.err != nil {
		return nil
	}
	n, k, err := varint(d.b[d.at:])
	switch {
	case err != nil:
		d.fail(what+" length", err)
		return nil
	case n == -1 && nullable:
		d.at += k
		return nil
	case n < 0:
		d.err = errorf(ErrFormat, "%s length %d is negative", what, n)
		return nil
	case int(n) > len(d.b)-d.at-k:
		d.err = errorf(ErrFormat, "%s length %d is more than the %d bytes left of the record", what, n, len(d.b)-d.at-k)
		return nil
	}
	d.at += k
	v := d.b[d.at : d.at+int(n) : d.at+int(n)]
	d.at += int(n)
	return v
}

// fail records a varint that could not be read: one running past the
// record's end means the record's length is wrong.
func (d *fields) fail(what string, err error) {
	if err == ErrShort {
		d.err = errorf(ErrFormat, "the record's %s runs past its length of %d bytes", what, len(d.b))
		return
	}
	d.err = errorf(ErrFormat, "the record's %s: %v", what, err)
}
