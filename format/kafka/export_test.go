package kafka

// ParseRecordCareful is the decoder every record could take, for tests
// that hold ParseRecord's fast path to it.
var ParseRecordCareful = parseRecord
