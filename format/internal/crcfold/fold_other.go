//go:build !amd64

package crcfold

// Only amd64 has foldAVX2 (fold_amd64.go): elsewhere haveFold is false
// and it is never called.
var haveFold = false

func foldAVX2(crc uint32, p []byte, k *keys) uint32 { panic("foldAVX2 without haveFold") }
