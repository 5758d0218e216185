package logstore

// RecoverOne lets the package's external tests recover one partition the
// way its own tests do.
var RecoverOne = (*Store).recoverOne

// VerifyOne is verifyOne, for the external tests.
var VerifyOne = verifyOne
