// Block-quantized weights read in GGUF's layout (ggml's blocks), from the
// 16-bit view w16 of binding 0 that the including shader declares before
// it includes this file (embed, matvec, matmul: every variant includes it;
// it defines nothing for the types it does not know).
//
// For a block type it defines:
//   KQ_BLOCK   weights per block (32 or 256), KQ_WORDS 16-bit words per
//              block (every block is a whole number of them);
//   kq_group16(base, g, v)  the g-th run of 16 consecutive weights of the
//              block at word base, as the floats ggml's dequantize_row_*
//              computes (tests/quant_ref.h's; embed is bit-exact with them);
//   kq_at(base, e)          weight e of the block;
// and, for the types whose matvec takes a thread per unit (all but Q4_K
// and Q6_K, which take a run of 16 each):
//   KQ_UNITS   units per block: 16 weights each, four runs of 4 consecutive
//              weights (each within one scale's sub-block) whose quant
//              bytes no other unit of the block holds, so a matvec reads
//              each quant byte once;
//   kq_span(u, s)           the block's element where run s of unit u
//              starts (a multiple of 4);
//   kq_dot(base, u, xv, xs) sum of unit u's weights times xv[s] (x at the
//              runs; xs[s] the sum of xv[s], the same for every row), each
//              sub-block's scale (and min) applied once to its sums of
//              q * x (and of x).
// A shader may define KQ_IQ4_TABLE, a shared float[16] it fills with
// float(iq4_value(i)) before any IQ4 weight is read; else codes are
// turned into values by selects.
#if defined(TYPE_Q4_1) || defined(TYPE_Q5_0) || defined(TYPE_Q5_1) || defined(TYPE_IQ4_NL) || \
	defined(TYPE_Q2_K) || defined(TYPE_Q3_K) || defined(TYPE_Q4_K) || defined(TYPE_Q5_K) || \
	defined(TYPE_Q6_K) || defined(TYPE_IQ4_XS)

// byte i of the block at 16-bit word base
uint kq_byte(uint base, uint i)
{
	uint u = uint(w16[base + i / 2u]);
	return (i & 1u) != 0u ? u >> 8 : u & 255u;
}

// the 4 bytes at 16-bit words w, w + 1 (little-endian)
uint kq_u32(uint w) { return uint(w16[w]) | (uint(w16[w + 1u]) << 16); }

// bytes 0..3 of b, each in a component
uvec4 kq_bytes(uint b) { return uvec4(b, b >> 8, b >> 16, b >> 24) & 255u; }

// IQ4_NL's and IQ4_XS's 16 values (ggml's kvalues_iq4nl: -127, -104, -83,
// -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113), four int8 a
// word, picked by selects rather than by indexing a table
int iq4_value(uint q)
{
	uint w = q < 8u ? (q < 4u ? 0xBFAD9881u : 0xF6EADDCFu)
			: (q < 12u ? 0x26190D01u : 0x71594535u);
	return int(w << (24u - 8u * (q & 3u))) >> 24;
}

// The 4 bytes of b as floats. kq_dot works on 4 weights in the bytes of
// a uint (masks and shifts of the whole word), then converts them here.
vec4 kq_f4(uint b) { return vec4(b & 255u, (b >> 8) & 255u, (b >> 16) & 255u, b >> 24); }

// bits 0..3 of x to bit 0 of bytes 0..3
uint kq_spread4(uint x) { return (x * 0x00204081u) & 0x01010101u; }

// the value of code q (< 16) as a float; from KQ_IQ4_TABLE (the 16 in
// shared memory, filled by the including shader) where there is one
float iq4_f(uint q)
{
#if defined(KQ_IQ4_TABLE)
	return KQ_IQ4_TABLE[q];
#else
	return float(iq4_value(q));
#endif
}

// the values of the 4 codes in the bytes of b
vec4 iq4_f4(uint b)
{
	return vec4(iq4_f(b & 15u), iq4_f((b >> 8) & 15u), iq4_f((b >> 16) & 15u),
		    iq4_f((b >> 24) & 15u));
}

#include "quants32.glsl"
#include "kquants.glsl"

// Weight e (< KQ_BLOCK) of the block at base.
float kq_at(uint base, uint e)
{
	float v[16];
	kq_group16(base, e / 16u, v);
	return v[e % 16u];
}
#endif
