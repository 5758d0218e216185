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
	if n, ok := TryParseRecord(b, r); ok {
		return n, nil
	}
	return parseRecord(b, r)
}

// TryParseRecord is ParseRecord's fast path. It decodes a record whose
// lengths take one or two bytes (below 8 KiB), whose deltas take one to
// three and whose fields take exactly its length: it takes a record only
// when ParseRecord would take it too and read the same, and leaves
// everything else (false) to ParseRecord, which says what is wrong. It
// is the careful decoder without the messages, in a third of the time; a
// reader of millions of records calls it first and saves a call a record.
func TryParseRecord(b []byte, r *Record) (int, bool) {
	u, at := shortVarint(b, 0)
	length := int(zigzag(u)) // under 2^13: a short varint
	if at < 0 || length <= 0 || length > len(b)-at {
		return 0, false
	}
	end := at + length
	rec := b[:end]
	attributes := int8(rec[at])
	// The deltas grow with the batch: up to three bytes, a batch spanning
	// 17 minutes or 2^20 offsets; parseRecord takes longer ones. A field
	// that does not decode leaves at negative, and every field after it
	// fails.
	u, at = deltaVarint(rec, at+1)
	timestampDelta := zigzag(u)
	u, at = deltaVarint(rec, at)
	offsetDelta := int32(zigzag(u))
	// The key's and the value's lengths, with shortBytes inlined by hand.
	var key, value []byte
	u, at = shortVarint(rec, at)
	switch n := int(zigzag(u)); {
	case at < 0 || n < -1 || n > end-at:
		return 0, false
	case n >= 0:
		key = rec[at : at+n : at+n]
		at += n
	}
	u, at = shortVarint(rec, at)
	switch n := int(zigzag(u)); {
	case at < 0 || n < -1 || n > end-at:
		return 0, false
	case n >= 0:
		value = rec[at : at+n : at+n]
		at += n
	}
	u, at = shortVarint(rec, at)
	count := int(zigzag(u))
	if at < 0 || count < 0 || count > (end-at)/2 {
		return 0, false
	}
	hs := r.Headers[:0]
	if count > 0 {
		var ok bool
		if hs, at, ok = parseHeadersFast(rec, at, count, hs); !ok {
			return 0, false
		}
	}
	r.Attributes, r.TimestampDelta, r.OffsetDelta = attributes, timestampDelta, offsetDelta
	r.Key, r.Value, r.Headers = key, value, hs
	return end, at == end
}

// parseHeadersFast is TryParseRecord's headers, out of its line: most
// records have none, and without the allocation TryParseRecord keeps its
// fields in registers.
//
//go:noinline
func parseHeadersFast(rec []byte, at, count int, hs []Header) ([]Header, int, bool) {
	if cap(hs) < count {
		hs = make([]Header, 0, count)
	}
	for range count {
		var k, v []byte
		var ok bool
		if k, at, ok = shortBytes(rec, at); !ok || k == nil {
			return nil, at, false
		}
		if v, at, ok = shortBytes(rec, at); !ok {
			return nil, at, false
		}
		hs = append(hs, Header{Key: k, Value: v})
	}
	return hs, at, true
}

// shortVarint decodes the varint at b[at:] if it takes one or two bytes,
// and returns where it ends; -1 otherwise, or when at is. It is inlined.
func shortVarint(b []byte, at int) (uint64, int) {
	switch {
	case at < 0 || at >= len(b):
		return 0, -1
	case b[at] < 0x80:
		return uint64(b[at]), at + 1
	case at+1 < len(b) && b[at+1] < 0x80:
		return uint64(b[at]&0x7f) | uint64(b[at+1])<<7, at + 2
	}
	return 0, -1
}

// deltaVarint decodes the varint at b[at:] if it takes one to three
// bytes and two more bytes follow its first (a record holds at least
// three after each delta), and returns where it ends; -1 otherwise, or
// when at is. It is inlined, and calls nothing: TryParseRecord keeps its
// fields in registers.
func deltaVarint(b []byte, at int) (uint64, int) {
	if at < 0 || at+2 >= len(b) {
		return 0, -1
	}
	u := uint64(b[at])
	if u < 0x80 {
		return u, at + 1
	}
	u = u&0x7f | uint64(b[at+1])<<7
	if u < 1<<14 {
		return u, at + 2
	}
	u = u&(1<<14-1) | uint64(b[at+2])<<14
	if u < 1<<21 {
		return u, at + 3
	}
	return 0, -1
}

// zigzag is a varint's value, in 64 bits: a timestamp delta may need
// them where int has 32.
func zigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// shortBytes reads a short varint's length and that many bytes of b at
// at; -1 is null.
func shortBytes(b []byte, at int) ([]byte, int, bool) {
	u, at := shortVarint(b, at)
	n := int(zigzag(u))
	switch {
	case at < 0 || n < -1 || n > len(b)-at:
		return nil, at, false
	case n == -1:
		return nil, at, true
	}
	return b[at : at+n : at+n], at + n, true
}

// parseRecord is ParseRecord for every record, with a message for each
// way one can be wrong.
func parseRecord(b []byte, r *Record) (n int, err error) {
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
