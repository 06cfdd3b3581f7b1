#include "textflag.h"

// VPSHUFB control that rotates each 64-bit lane left by 16 bits: result
// byte i is source byte i-2 (mod 8) of the same lane.
DATA rotl16<>+0x00(SB)/8, $0x0504030201000706
DATA rotl16<>+0x08(SB)/8, $0x0d0c0b0a09080f0e
DATA rotl16<>+0x10(SB)/8, $0x0504030201000706
DATA rotl16<>+0x18(SB)/8, $0x0d0c0b0a09080f0e
GLOBL rotl16<>(SB), RODATA|NOPTR, $32

// The finalisation's 0xff, in every lane.
DATA finalff<>+0x00(SB)/8, $0xff
DATA finalff<>+0x08(SB)/8, $0xff
DATA finalff<>+0x10(SB)/8, $0xff
DATA finalff<>+0x18(SB)/8, $0xff
GLOBL finalff<>(SB), RODATA|NOPTR, $32

// ROTL rotates each 64-bit lane of r left by n bits, using t.
#define ROTL(n, r, t) \
	VPSLLQ $n, r, t \
	VPSRLQ $(64-n), r, r \
	VPOR   t, r, r

// SIPROUND is one SipRound on four lanes: v0..v3 in Y0..Y3, the rotl16
// control in Y5, Y4 scratch. Rotations by 32 swap the halves of each lane
// (VPSHUFD), by 16 shuffle bytes (VPSHUFB).
#define SIPROUND \
	VPADDQ  Y1, Y0, Y0 \
	ROTL(13, Y1, Y4) \
	VPXOR   Y0, Y1, Y1 \
	VPSHUFD $0xb1, Y0, Y0 \
	VPADDQ  Y3, Y2, Y2 \
	VPSHUFB Y5, Y3, Y3 \
	VPXOR   Y2, Y3, Y3 \
	VPADDQ  Y3, Y0, Y0 \
	ROTL(21, Y3, Y4) \
	VPXOR   Y0, Y3, Y3 \
	VPADDQ  Y1, Y2, Y2 \
	ROTL(17, Y1, Y4) \
	VPXOR   Y2, Y1, Y1 \
	VPSHUFD $0xb1, Y2, Y2

// func sip4AVX2(k0, k1 uint64, w *[wordsIPv6][4]uint64, n int, out *[4]uint64)
TEXT ·sip4AVX2(SB), NOSPLIT, $0-40
	MOVQ k0+0(FP), AX
	MOVQ k1+8(FP), BX
	MOVQ w+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), DI

	// v0 = k0 ^ "somepseu", v1 = k1 ^ "dorandom", v2 = k0 ^ "lygenera",
	// v3 = k1 ^ "tedbytes", broadcast to the four lanes. VMOVQ, not MOVQ:
	// a legacy SSE instruction among VEX ones costs a state transition on
	// CPUs that track the upper halves, and made this function slower than
	// four scalar hashes.
	MOVQ $0x736f6d6570736575, DX
	XORQ AX, DX
	VMOVQ DX, X0
	VPBROADCASTQ X0, Y0
	MOVQ $0x646f72616e646f6d, DX
	XORQ BX, DX
	VMOVQ DX, X1
	VPBROADCASTQ X1, Y1
	MOVQ $0x6c7967656e657261, DX
	XORQ AX, DX
	VMOVQ DX, X2
	VPBROADCASTQ X2, Y2
	MOVQ $0x7465646279746573, DX
	XORQ BX, DX
	VMOVQ DX, X3
	VPBROADCASTQ X3, Y3
	VMOVDQU rotl16<>(SB), Y5

words:
	VMOVDQU (SI), Y6
	VPXOR   Y6, Y3, Y3
	SIPROUND
	SIPROUND
	VPXOR   Y6, Y0, Y0
	ADDQ    $32, SI
	DECQ    CX
	JNZ     words

	VPXOR finalff<>(SB), Y2, Y2
	SIPROUND
	SIPROUND
	SIPROUND
	SIPROUND
	VPXOR   Y1, Y0, Y0
	VPXOR   Y3, Y2, Y2
	VPXOR   Y2, Y0, Y0
	VMOVDQU Y0, (DI)
	VZEROUPPER
	RET
