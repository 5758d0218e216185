package logstore

import "github.com/seglog/seglog/format"

// Log is a log in any layout seglog reads, open for reading: a seglog
// partition (*Partition, a lone segment file too) or a directory in the
// simple store/index layout (*SimpleLog). It holds what read, tail and
// describe and verify-crc ask of every layout. What only seglog's records
// allow (time lookup, following, groups) is not part of it: callers reach
// it through *Partition, and Layout().ValuesOnly() says when the records
// carry nothing but a value.
type Log interface {
	// Name names the log in messages.
	Name() string
	// Layout is the layout of the log's files.
	Layout() Layout
	// Extent is the offsets the log holds: where it starts and the offset
	// after its last whole record.
	Extent() (Extent, error)
	// Stats describes the log, as describe prints it.
	Stats() (PartitionStats, error)
	// Records returns an iterator over the records with offsets >= from.
	Records(from uint64) (RecordIterator, error)
	// Verify checks every record, segment and index of the log, as far as
	// its layout allows (Layout().CheckLimits), reporting each finding
	// through opts.Finding in file order. number and count place the log
	// in its topic, for checks that depend on it (count <= 1: none). The
	// error is an I/O error that cut the check short (the report is then
	// not Complete) or the one opts.Finding returned. The package's Verify
	// checks many logs at once.
	Verify(number, count int, opts VerifyOptions) (VerifyReport, error)
	// Close releases what the log holds open.
	Close() error
}

// RecordIterator reads a Log's records in offset order, in constant
// memory, to the end of the log as it was when reading reached it.
type RecordIterator interface {
	// Next moves to the next record and reports whether there is one.
	Next() bool
	// Record is the current record, valid until the next call of Next.
	Record() *Record
	// Err is what ended the iteration early, if anything: damage is a
	// *CorruptionError.
	Err() error
	// SkipCorrupt goes on after a *CorruptionError and reports whether
	// there is anything to go on with.
	SkipCorrupt() bool
	// Close releases the open file.
	Close() error
}

// TornTails is a RecordIterator of a layout whose every segment may end
// in a record cut off by a crash (the simple layout's writer keeps all its
// segments open): such records are passed over, not reported as damage,
// and Tails lists those met so far, for a warning.
type TornTails interface {
	Tails() []SimpleTail
}

var (
	_ Log            = (*Partition)(nil)
	_ Log            = (*SimpleLog)(nil)
	_ Log            = (*KafkaPartition)(nil)
	_ RecordIterator = (*Iterator)(nil)
	_ RecordIterator = (*simpleRecords)(nil)
	_ TornTails      = (*simpleRecords)(nil)
)

// Layout is LayoutSeglog.
func (p *Partition) Layout() Layout { return LayoutSeglog }

// Verify is the package's Verify of this partition alone.
func (p *Partition) Verify(number, count int, opts VerifyOptions) (VerifyReport, error) {
	reports, err := Verify([]VerifyTarget{{Log: p, Number: number, Count: count}}, opts)
	return reports[0], err
}

// Records is Read, as a RecordIterator.
func (p *Partition) Records(from uint64) (RecordIterator, error) {
	it, err := p.Read(from)
	if err != nil {
		return nil, err
	}
	return it, nil
}

// Name is the log's directory.
func (l *SimpleLog) Name() string { return l.dir }

// Layout is LayoutSimple.
func (l *SimpleLog) Layout() Layout { return LayoutSimple }

// Records is Read, with each record as a Record that has no key,
// timestamp or checksum.
func (l *SimpleLog) Records(from uint64) (RecordIterator, error) {
	return &simpleRecords{SimpleIterator: l.Read(from)}, nil
}

// Close does nothing: a SimpleLog holds no file open, its iterators do.
func (l *SimpleLog) Close() error { return nil }

// simpleRecords is a SimpleIterator that gives Records.
type simpleRecords struct {
	*SimpleIterator
	rec Record
}

func (r *simpleRecords) Record() *Record {
	sr := r.SimpleIterator.Record()
	r.rec = Record{Record: format.Record{Offset: sr.Offset, Value: sr.Value}, Pos: sr.Pos}
	return &r.rec
}
