package format

// hash/crc32 folds 16-byte lanes with PCLMULQDQ on XMM registers, and the
// CRC is a large part of verify-crc's CPU time. With VPCLMULQDQ on YMM
// registers, foldAVX2 folds eight lanes at once; called directly, it also
// saves hash/crc32's dispatch on short bodies. The tail of under 16 bytes,
// too, it folds in. Figures: docs/performance.md, "The CRC".
//
// The constants (crc_amd64.s) are x^n mod P(x) for the CRC's polynomial,
// bit-reflected and shifted left by one, as hash/crc32's own for its 512-
// and 128-bit folds; a wrong one fails TestCRCUpdateMatchesHashCRC32 and
// FuzzCRC at once.

// foldAVX2 returns the CRC of p (len(p) >= foldMin) from crc, both
// inverted, as the carry-less multiply code takes and gives them.
//
//go:noescape
func foldAVX2(crc uint32, p []byte) uint32

func cpuid(leaf, sub uint32) (a, b, c, d uint32)

func xgetbv() (eax uint32)

// foldMin is the shortest input foldAVX2 takes.
const foldMin = 64

// haveFold reports whether the CPU has AVX2 and VPCLMULQDQ and the OS
// saves YMM registers (a variable: tests check both paths).
var haveFold = func() bool {
	if max, _, _, _ := cpuid(0, 0); max < 7 {
		return false
	}
	_, _, c1, _ := cpuid(1, 0)
	const osxsave, avx, pclmulqdq = 1 << 27, 1 << 28, 1 << 1
	if c1&osxsave == 0 || c1&avx == 0 || c1&pclmulqdq == 0 || xgetbv()&6 != 6 {
		return false
	}
	_, b7, c7, _ := cpuid(7, 0)
	const avx2, vpclmulqdq = 1 << 5, 1 << 10
	return b7&avx2 != 0 && c7&vpclmulqdq != 0
}()
