package crcfold

// foldAVX2 returns the CRC of p (len(p) >= Min) from crc, both inverted,
// as the carry-less multiply code takes and gives them, with k's
// polynomial. A wrong constant in k fails TestUpdateMatchesHashCRC32 at
// once.
//
//go:noescape
func foldAVX2(crc uint32, p []byte, k *keys) uint32

func cpuid(leaf, sub uint32) (a, b, c, d uint32)

func xgetbv() (eax uint32)

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
