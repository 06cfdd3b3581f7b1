#include "go_asm.h"
#include "textflag.h"

// BCAST defines a 32-byte constant: v in each of the four 64-bit lanes.
#define BCAST(name, v) \
	DATA name<>+0x00(SB)/8, v \
	DATA name<>+0x08(SB)/8, v \
	DATA name<>+0x10(SB)/8, v \
	DATA name<>+0x18(SB)/8, v \
	GLOBL name<>(SB), RODATA|NOPTR, $32

// SipHash's initial state, "somepseudorandomlygeneratedbytes", xored with
// k0, k1, k0, k1 into v0..v3.
BCAST(init0, $0x736f6d6570736575)
BCAST(init1, $0x646f72616e646f6d)
BCAST(init2, $0x6c7967656e657261)
BCAST(init3, $0x7465646279746573)

// The finalisation's 0xff.
BCAST(finalff, $0xff)

// The last word of each region: no tail bytes (every region length is a
// multiple of 8) and the length in the top byte.
BCAST(lenNone, $(const_regionNone<<56))
BCAST(lenIPv4, $(const_regionIPv4<<56))
BCAST(lenIPv6, $(const_regionIPv6<<56))

// The low 32 bits, and the sign bit that makes a signed compare an
// unsigned one.
BCAST(lo32, $0x00000000ffffffff)
BCAST(sign64, $0x8000000000000000)

// VPSHUFB controls, per 64-bit lane (result byte i is source byte c[i]):
// rotl16 rotates it left by 16 bits; swapPorts exchanges its bytes 4-5 and
// 6-7 (sport and dport in the ports word); bswap32 reverses the bytes of
// each 32-bit half, which turns the halves of two words that hold 8 bytes
// of an IPv6 address into its big-endian value.
DATA rotl16<>+0x00(SB)/8, $0x0504030201000706
DATA rotl16<>+0x08(SB)/8, $0x0d0c0b0a09080f0e
DATA rotl16<>+0x10(SB)/8, $0x0504030201000706
DATA rotl16<>+0x18(SB)/8, $0x0d0c0b0a09080f0e
GLOBL rotl16<>(SB), RODATA|NOPTR, $32

DATA swapPorts<>+0x00(SB)/8, $0x0504070603020100
DATA swapPorts<>+0x08(SB)/8, $0x0d0c0f0e0b0a0908
DATA swapPorts<>+0x10(SB)/8, $0x0504070603020100
DATA swapPorts<>+0x18(SB)/8, $0x0d0c0f0e0b0a0908
GLOBL swapPorts<>(SB), RODATA|NOPTR, $32

DATA bswap32<>+0x00(SB)/8, $0x0405060700010203
DATA bswap32<>+0x08(SB)/8, $0x0c0d0e0f08090a0b
DATA bswap32<>+0x10(SB)/8, $0x0405060700010203
DATA bswap32<>+0x18(SB)/8, $0x0c0d0e0f08090a0b
GLOBL bswap32<>(SB), RODATA|NOPTR, $32

// ROTL rotates each 64-bit lane of r left by n bits, using t.
#define ROTL(n, r, t) \
	VPSLLQ $n, r, t \
	VPSRLQ $(64-n), r, r \
	VPOR   t, r, r

// SIPROUND is one SipRound on four lanes: v0..v3 in Y0..Y3, Y4 scratch.
// Rotations by 32 swap the halves of each lane (VPSHUFD), by 16 shuffle
// bytes (VPSHUFB).
#define SIPROUND \
	VPADDQ  Y1, Y0, Y0 \
	ROTL(13, Y1, Y4) \
	VPXOR   Y0, Y1, Y1 \
	VPSHUFD $0xb1, Y0, Y0 \
	VPADDQ  Y3, Y2, Y2 \
	VPSHUFB rotl16<>(SB), Y3, Y3 \
	VPXOR   Y2, Y3, Y3 \
	VPADDQ  Y3, Y0, Y0 \
	ROTL(21, Y3, Y4) \
	VPXOR   Y0, Y3, Y3 \
	VPADDQ  Y1, Y2, Y2 \
	ROTL(17, Y1, Y4) \
	VPXOR   Y2, Y1, Y1 \
	VPSHUFD $0xb1, Y2, Y2

// WORD absorbs the message word m (a register or a memory operand) of the
// four lanes: SipHash-2-4's two compression rounds.
#define WORD(m) \
	VPXOR m, Y3, Y3 \
	SIPROUND \
	SIPROUND \
	VPXOR m, Y0, Y0

// TRANSPOSE4 transposes r0..r3 as a 4x4 matrix of 64-bit words: on entry
// rk holds four words of key k, on return ri holds word i of the four keys,
// key k's in lane k. t0..t3 scratch.
#define TRANSPOSE4(r0, r1, r2, r3, t0, t1, t2, t3) \
	VPUNPCKLQDQ r1, r0, t0 \
	VPUNPCKHQDQ r1, r0, t1 \
	VPUNPCKLQDQ r3, r2, t2 \
	VPUNPCKHQDQ r3, r2, t3 \
	VPERM2I128  $0x20, t2, t0, r0 \
	VPERM2I128  $0x20, t3, t1, r1 \
	VPERM2I128  $0x31, t2, t0, r2 \
	VPERM2I128  $0x31, t3, t1, r3

// LOAD4 loads 32 bytes at off of each of the four keys (byte offsets R8..R11
// from SI) and transposes them into r0..r3: the four words at off, one word
// of the four keys per register.
#define LOAD4(off, r0, r1, r2, r3, t0, t1, t2, t3) \
	VMOVDQU off(SI)(R8*1), r0 \
	VMOVDQU off(SI)(R9*1), r1 \
	VMOVDQU off(SI)(R10*1), r2 \
	VMOVDQU off(SI)(R11*1), r3 \
	TRANSPOSE4(r0, r1, r2, r3, t0, t1, t2, t3)

// func sip4AVX2(k0, k1 uint64, keys *dissect.FlowKeys, idx *[4]int, class int, hashes *uint32)
TEXT ·sip4AVX2(SB), NOSPLIT, $0-48
	MOVQ keys+16(FP), SI
	MOVQ idx+24(FP), DX
	MOVQ class+32(FP), CX
	MOVQ hashes+40(FP), DI

	// The keys' indexes (for the hashes) and byte offsets (for the keys).
	MOVQ   0(DX), AX
	MOVQ   8(DX), BX
	MOVQ   16(DX), R12
	MOVQ   24(DX), DX
	IMUL3Q $const_keysSize, AX, R8
	IMUL3Q $const_keysSize, BX, R9
	IMUL3Q $const_keysSize, R12, R10
	IMUL3Q $const_keysSize, DX, R11

	VPBROADCASTQ k0+0(FP), Y0
	VPBROADCASTQ k1+8(FP), Y1
	VPXOR        init2<>(SB), Y0, Y2
	VPXOR        init3<>(SB), Y1, Y3
	VPXOR        init0<>(SB), Y0, Y0
	VPXOR        init1<>(SB), Y1, Y1

	// Words 0..3 of the region (keys bytes 8..39): n_proto, ip_proto and
	// the flow label; the VLAN and customer VLAN; the key id and ports.
	LOAD4(const_regionStart, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13)
	WORD(Y6)
	WORD(Y7)
	WORD(Y8)
	CMPQ CX, $0
	JEQ  none

	// Both address families order the ports: exchange them where dport
	// (the word's top 16 bits) is below sport (the 16 bits under them),
	// as little-endian u16.
	VPSRLQ    $48, Y9, Y10
	VPSLLQ    $16, Y9, Y11
	VPSRLQ    $48, Y11, Y11
	VPCMPGTQ  Y10, Y11, Y11
	VPSHUFB   swapPorts<>(SB), Y9, Y12
	VPBLENDVB Y11, Y12, Y9, Y9
	WORD(Y9)
	CMPQ      CX, $1
	JEQ       ipv4

	// IPv6: words 4..8 (keys bytes 40..79) hold the ICMP word, then the
	// source and destination, 16 bytes each from byte 44, and the tail
	// padding.
	LOAD4(const_wordICMP, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13)
	VMOVQ       const_wordAddr4(SI)(R8*1), X10
	VPINSRQ     $1, const_wordAddr4(SI)(R9*1), X10, X10
	VMOVQ       const_wordAddr4(SI)(R10*1), X11
	VPINSRQ     $1, const_wordAddr4(SI)(R11*1), X11, X11
	VINSERTI128 $1, X11, Y10, Y10

	// The addresses' halves as big-endian values, sign-flipped for the
	// signed compare: each is the top half of one word and the bottom half
	// of the next.
	VPBLENDD $0xaa, Y6, Y7, Y11 // src[0:8]
	VPBLENDD $0xaa, Y7, Y8, Y12 // src[8:16]
	VPBLENDD $0xaa, Y8, Y9, Y13 // dst[0:8]
	VPBLENDD $0xaa, Y9, Y10, Y14 // dst[8:16]
	VPSHUFB  bswap32<>(SB), Y11, Y11
	VPSHUFB  bswap32<>(SB), Y12, Y12
	VPSHUFB  bswap32<>(SB), Y13, Y13
	VPSHUFB  bswap32<>(SB), Y14, Y14
	VPXOR    sign64<>(SB), Y11, Y11
	VPXOR    sign64<>(SB), Y12, Y12
	VPXOR    sign64<>(SB), Y13, Y13
	VPXOR    sign64<>(SB), Y14, Y14

	// Exchange the addresses where dst < src as memcmp orders them:
	// dst[0:8] < src[0:8], or equal and dst[8:16] < src[8:16]. Mask in Y11.
	VPCMPGTQ Y13, Y11, Y15
	VPCMPEQQ Y13, Y11, Y11
	VPCMPGTQ Y14, Y12, Y12
	VPAND    Y12, Y11, Y11
	VPOR     Y15, Y11, Y11

	// The 16-byte fields lie 16 bytes apart: words 5 and 7 change places,
	// and the 4-byte halves at either end move between words 4, 6 and 8.
	VPBLENDD  $0xaa, Y8, Y6, Y12  // icmp | dst[0:4]
	VPBLENDD  $0xaa, Y6, Y10, Y13 // dst[12:16] | src[0:4]
	VPBLENDD  $0xaa, Y10, Y8, Y14 // src[12:16] | padding
	VPBLENDVB Y11, Y9, Y7, Y15
	VPBLENDVB Y11, Y7, Y9, Y9
	VPBLENDVB Y11, Y12, Y6, Y6
	VPBLENDVB Y11, Y13, Y8, Y8
	VPBLENDVB Y11, Y14, Y10, Y10
	WORD(Y6)
	WORD(Y15)
	WORD(Y8)
	WORD(Y9)
	WORD(Y10)
	WORD(lenIPv6<>(SB))
	JMP  final

ipv4:
	// IPv4: words 4 and 5 (keys bytes 40..55) are the ICMP word and the
	// source, then the destination and 4 bytes of padding.
	VMOVDQU     const_wordICMP(SI)(R8*1), X10
	VINSERTI128 $1, const_wordICMP(SI)(R10*1), Y10, Y10
	VMOVDQU     const_wordICMP(SI)(R9*1), X11
	VINSERTI128 $1, const_wordICMP(SI)(R11*1), Y11, Y11
	VPUNPCKLQDQ Y11, Y10, Y6
	VPUNPCKHQDQ Y11, Y10, Y7

	// Exchange the addresses where dst < src as little-endian u32.
	VPSRLQ    $32, Y6, Y8                // src
	VPAND     lo32<>(SB), Y7, Y9         // dst
	VPCMPGTQ  Y9, Y8, Y9
	VPSLLQ    $32, Y7, Y10
	VPBLENDD  $0xaa, Y10, Y6, Y10        // icmp | dst
	VPBLENDD  $0xaa, Y7, Y8, Y8          // src | padding
	VPBLENDVB Y9, Y10, Y6, Y6
	VPBLENDVB Y9, Y8, Y7, Y7
	WORD(Y6)
	WORD(Y7)
	WORD(lenIPv4<>(SB))
	JMP  final

none:
	// Without addresses (and the ports as they are): words 3 and 4 (keys
	// bytes 32..47).
	WORD(Y9)
	VMOVQ   const_wordICMP(SI)(R8*1), X10
	VPINSRQ $1, const_wordICMP(SI)(R9*1), X10, X10
	VMOVQ   const_wordICMP(SI)(R10*1), X11
	VPINSRQ $1, const_wordICMP(SI)(R11*1), X11, X11
	VINSERTI128 $1, X11, Y10, Y10
	WORD(Y10)
	WORD(lenNone<>(SB))

final:
	VPXOR finalff<>(SB), Y2, Y2
	SIPROUND
	SIPROUND
	SIPROUND
	SIPROUND
	VPXOR Y1, Y0, Y0
	VPXOR Y3, Y2, Y2
	VPXOR Y2, Y0, Y0

	// The low 32 bits of each lane, 0 becoming 1, to hashes[idx[k]].
	VPSHUFD   $0x08, Y0, Y0
	VPERMQ    $0x08, Y0, Y0
	VPXOR     X4, X4, X4
	VPCMPEQD  X4, X0, X4
	VPSUBD    X4, X0, X0
	VMOVD     X0, (DI)(AX*4)
	VPEXTRD   $1, X0, (DI)(BX*4)
	VPEXTRD   $2, X0, (DI)(R12*4)
	VPEXTRD   $3, X0, (DI)(DX*4)
	VZEROUPPER
	RET
