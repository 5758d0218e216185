//go:build !amd64

package format

// Only amd64 has foldAVX2 (crc_amd64.go): elsewhere haveFold is false and
// it is never called.
const foldMin = 64

var haveFold = false

func foldAVX2(crc uint32, p []byte) uint32 { panic("foldAVX2 without haveFold") }
