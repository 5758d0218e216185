#include "textflag.h"

// For a tail of t bytes: 16 bytes from tailShuffle+t move a register's
// bytes up by 16-t (zeros below), from tailShuffle+16+t down by t (zeros
// above); 16 bytes from tailKeep+t keep the top t bytes.
DATA tailShuffle<>+0(SB)/8, $0x8080808080808080
DATA tailShuffle<>+8(SB)/8, $0x8080808080808080
DATA tailShuffle<>+16(SB)/8, $0x0706050403020100
DATA tailShuffle<>+24(SB)/8, $0x0f0e0d0c0b0a0908
DATA tailShuffle<>+32(SB)/8, $0x8080808080808080
DATA tailShuffle<>+40(SB)/8, $0x8080808080808080
GLOBL tailShuffle<>(SB), RODATA, $48
DATA tailKeep<>+0(SB)/8, $0
DATA tailKeep<>+8(SB)/8, $0
DATA tailKeep<>+16(SB)/8, $0xffffffffffffffff
DATA tailKeep<>+24(SB)/8, $0xffffffffffffffff
GLOBL tailKeep<>(SB), RODATA, $32

// func foldAVX2(crc uint32, p []byte, k *keys) uint32
//
// k holds the polynomial's constants (see keys): 16 bytes each for the
// folds over 1024, 512, 256 and 128 bits, then 64 bits and the Barrett
// reduction. Eight 16-byte lanes in four YMM registers fold 128 bytes a round, are
// folded into one lane, which then takes the remaining 16-byte blocks and
// the tail, and is reduced to the CRC. len(p) >= 64: under 128 bytes, the
// first 64 start as the last two YMM registers of the merge.
TEXT ·foldAVX2(SB), NOSPLIT, $0-44
	MOVL crc+0(FP), AX
	MOVQ k+32(FP), R8
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	VMOVD   AX, X0
	VMOVDQU 0(SI), Y1
	VMOVDQU 32(SI), Y2
	VPXOR   Y0, Y1, Y1
	CMPQ    CX, $128
	JGE     long
	// 64 to 127 bytes: the two halves of the first 64 go to the last merges.
	ADDQ    $64, SI
	SUBQ    $64, CX
	JMP     half

long:
	VMOVDQU 64(SI), Y3
	VMOVDQU 96(SI), Y4
	ADDQ    $128, SI
	SUBQ    $128, CX
	VBROADCASTI128 0(R8), Y0

rounds:
	CMPQ CX, $128
	JL   merge
	VPCLMULQDQ $0x00, Y0, Y1, Y5
	VPCLMULQDQ $0x11, Y0, Y1, Y1
	VPCLMULQDQ $0x00, Y0, Y2, Y6
	VPCLMULQDQ $0x11, Y0, Y2, Y2
	VPCLMULQDQ $0x00, Y0, Y3, Y7
	VPCLMULQDQ $0x11, Y0, Y3, Y3
	VPCLMULQDQ $0x00, Y0, Y4, Y8
	VPCLMULQDQ $0x11, Y0, Y4, Y4
	VPXOR      Y5, Y1, Y1
	VPXOR      Y6, Y2, Y2
	VPXOR      Y7, Y3, Y3
	VPXOR      Y8, Y4, Y4
	VPXOR      0(SI), Y1, Y1
	VPXOR      32(SI), Y2, Y2
	VPXOR      64(SI), Y3, Y3
	VPXOR      96(SI), Y4, Y4
	ADDQ       $128, SI
	SUBQ       $128, CX
	JMP        rounds

merge:
	// Y1 onto Y3 and Y2 onto Y4, 64 bytes on.
	VBROADCASTI128 16(R8), Y0
	VPCLMULQDQ $0x00, Y0, Y1, Y5
	VPCLMULQDQ $0x11, Y0, Y1, Y1
	VPCLMULQDQ $0x00, Y0, Y2, Y6
	VPCLMULQDQ $0x11, Y0, Y2, Y2
	VPXOR      Y5, Y1, Y1
	VPXOR      Y6, Y2, Y2
	VPXOR      Y3, Y1, Y1
	VPXOR      Y4, Y2, Y2

half:
	// Y1 onto Y2, 32 bytes on.
	VBROADCASTI128 32(R8), Y0
	VPCLMULQDQ $0x00, Y0, Y1, Y5
	VPCLMULQDQ $0x11, Y0, Y1, Y1
	VPXOR      Y5, Y1, Y1
	VPXOR      Y2, Y1, Y1
	// Its low lane onto its high one, 16 bytes on.
	VEXTRACTI128 $1, Y1, X2
	VMOVDQU    48(R8), X0
	VPCLMULQDQ $0x00, X0, X1, X5
	VPCLMULQDQ $0x11, X0, X1, X1
	VPXOR      X5, X1, X1
	VPXOR      X2, X1, X1

blocks:
	CMPQ CX, $16
	JL   tail
	VPCLMULQDQ $0x00, X0, X1, X5
	VPCLMULQDQ $0x11, X0, X1, X1
	VPXOR      X5, X1, X1
	VPXOR      0(SI), X1, X1
	ADDQ       $16, SI
	SUBQ       $16, CX
	JMP        blocks

tail:
	// t = CX bytes (0 to 15) are left. The lane and they make 16+t bytes:
	// its first t, as a block 16 bytes before the last 16, fold onto
	// those, which are its other 16-t and the t (the top of the input's
	// last 16 bytes: n >= 64, so those are in p).
	TESTQ      CX, CX
	JZ         done
	LEAQ       tailShuffle<>(SB), AX
	LEAQ       tailKeep<>(SB), DX
	VMOVDQU    -16(SI)(CX*1), X2
	VPAND      0(DX)(CX*1), X2, X2
	VMOVDQU    16(AX)(CX*1), X3
	VPSHUFB    X3, X1, X4
	VPXOR      X4, X2, X2
	VMOVDQU    0(AX)(CX*1), X3
	VPSHUFB    X3, X1, X1
	VPCLMULQDQ $0x00, X0, X1, X5
	VPCLMULQDQ $0x11, X0, X1, X1
	VPXOR      X5, X1, X1
	VPXOR      X2, X1, X1

done:
	// Fold the high 64 bits onto the low ones (X0 still holds fold128),
	// then the high 32 of what is left onto the low 32.
	VPCMPEQB   X3, X3, X3
	VPCLMULQDQ $0x01, X1, X0, X0
	VPSRLDQ    $8, X1, X1
	VPXOR      X0, X1, X1
	VPSRLQ     $32, X3, X3 // a mask of the low 32 bits of each half
	VPSRLDQ    $4, X1, X2
	VPAND      X3, X1, X1
	VMOVDQU    64(R8), X0
	VPCLMULQDQ $0x00, X0, X1, X1
	VPXOR      X2, X1, X1
	// Barrett reduction: the quotient by P from floor(x^64 / P), then
	// the remainder; the CRC is the second 32 bits.
	VMOVDQU    80(R8), X0
	VPAND      X3, X1, X2
	VPCLMULQDQ $0x10, X0, X2, X2
	VPAND      X3, X2, X2
	VPCLMULQDQ $0x00, X0, X2, X2
	VPXOR      X1, X2, X2
	VPEXTRD    $1, X2, AX
	MOVL       AX, ret+40(FP)
	VZEROUPPER
	RET

// func cpuid(leaf, sub uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET

// func xgetbv() (eax uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-4
	MOVL   $0, CX
	XGETBV
	MOVL   AX, eax+0(FP)
	RET
