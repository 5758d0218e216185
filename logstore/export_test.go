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
