package logstore

// RecoverOne lets the package's external tests recover one partition the
// way its own tests do.
var RecoverOne = (*Store).recoverOne

// VerifyOne is verifyOne, for the external tests.
var VerifyOne = verifyOne

// SetKafkaReadAhead turns p's reading and checking ahead on a second
// goroutine on or off.
func SetKafkaReadAhead(p *KafkaPartition, on bool) { p.noReadAhead = !on }

// FirstDifference is where two event lists first differ.
var FirstDifference = firstDifference

// SplitKafkaVerify makes Kafka verify-crc cut segments into pieces of at
// least minPiece bytes and tells checked, for each segment it checks in
// pieces, how many and whether they were taken; the returned func undoes
// it.
func SplitKafkaVerify(minPiece int64, checked func(pieces int, taken bool)) func() {
	kafkaMinPiece, kafkaPiecesChecked = minPiece, checked
	return func() { kafkaMinPiece, kafkaPiecesChecked = verifyMinRange, nil }
}
