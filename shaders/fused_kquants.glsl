// The K-quants' units for matvec_fused.comp (included there after the
// weight bindings, w4_S, w2_S and w16_S, and before the unit loop): for
// Q4_K, Q5_K, Q6_K and IQ4_XS, WT/LOADW a unit's quant bytes, DT/LOADD its
// super-block's scales as loaded, and wdot(q, d, x, ub) the unit's dot
// product with x (float, or int8 halves with XQ8), the scales decoded
// there, where ub (the unit's place in its super-block) picks them.
#define NXA (NX + 1) // KMIN: xv[NX].xy the sums of the unit's two halves
#if defined(XQ8)
#define XARG XU
#else
#define XARG vec4[NXA]
#endif
// four bytes as floats minus off, exactly (as s8)
vec4 u8f(uint v, float off)
{
	return uintBitsToFloat(uvec4(v & 255u, (v >> 8) & 255u, (v >> 16) & 255u,
				     v >> 24) | 0x4b000000u) - (8388608.0 + off);
}
#if defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// GGUF's layout, 16-byte aligned: a super-block is 9 (Q4_K) or 11 (Q5_K)
// uvec4s, the first d, dmin and the 12 scale bytes (Q5_K: then 2 of qh),
// then the 8 of nibbles; unit u of a row is nibble uvec4 u % 8 of super-
// block u / 8, its low nibbles sub-block 2j's, high 2j + 1's (j = u % 8 / 2)
#if defined(TYPE_Q4_K)
#define KBV 9u
#define KQS 1u
#else
#define KBV 11u
#define KQS 3u
#endif
#define KBLK(wo, row, k, u) ((wo) / 8u + ((row) * ((k) / 256u) + (u) / 8u) * KBV)
// (d * sc, dmin * m) of sub-blocks 2j and 2j + 1 (j = ub / 2) from the
// super-block's first uvec4 h (ggml's get_scale_min_k4: bytes q[0..11]
// in h.y, h.z, h.w). Without branches: both forms, then a select, so that
// the compiler keeps the step's loads together.
vec4 k4_scales(uvec4 h, uint ub)
{
	uint j = ub / 2u, t = 16u * (j & 1u);
	uint a = h.y >> t, b = h.z >> t, c = h.w >> t;
	uvec4 ab = uvec4(a, b, a >> 8, b >> 8);
	uvec4 lo = ab & 63u;
	uvec4 hi = (uvec4(c, c >> 4, c >> 8, c >> 12) & 15u) | (((ab >> 6) & 3u) << 4);
	vec4 v = vec4(mix(hi, lo, bvec4(j < 2u)));
	vec2 dm = unpackHalf2x16(h.x);
	return v * dm.xyxy;
}
#define DT uvec4 // the super-block's first uvec4, decoded where it is used
#define LOADD(S, wo, so, row, k, u) w4_##S[KBLK(wo, row, k, u)]
#if defined(TYPE_Q4_K)
#define WT uvec4
#define LOADW(S, wo, row, k, u) w4_##S[KBLK(wo, row, k, u) + KQS + (u) % 8u]
float wdot(WT q, DT h, XARG xv, uint ub)
{
	uvec4 lo = q & 0x0f0f0f0fu, hi = (q >> 4) & 0x0f0f0f0fu;
#else
// the unit's nibbles and the qh uvec4 of its 16 positions (bit 2j of each
// byte: the low nibbles' 5th bit, bit 2j + 1 the high nibbles')
struct K5 {
	uvec4 q, h;
};
#define WT K5
#define LOADW(S, wo, row, k, u) \
	K5(w4_##S[KBLK(wo, row, k, u) + KQS + (u) % 8u], w4_##S[KBLK(wo, row, k, u) + 1u + (u) % 2u])
float wdot(WT w, DT h, XARG xv, uint ub)
{
	uvec4 qh = w.h >> (2u * (ub / 2u));
	uvec4 lo = (w.q & 0x0f0f0f0fu) | ((qh & 0x01010101u) << 4);
	uvec4 hi = ((w.q >> 4) & 0x0f0f0f0fu) | ((qh & 0x02020202u) << 3);
#endif
	vec4 s = k4_scales(h, ub);
#if defined(XQ8)
	// the nibbles (5 bits: Q5_K) are valid int8 as they are
	int ia = sdot4x8(lo.x, xv.lo.x, 0) + sdot4x8(lo.y, xv.lo.y, 0) +
		 sdot4x8(lo.z, xv.lo.z, 0) + sdot4x8(lo.w, xv.lo.w, 0);
	int ib = sdot4x8(hi.x, xv.hi.x, 0) + sdot4x8(hi.y, xv.hi.y, 0) +
		 sdot4x8(hi.z, xv.hi.z, 0) + sdot4x8(hi.w, xv.hi.w, 0);
	vec4 xd = uintBitsToFloat(xv.d);
	return s.x * xd.x * float(ia) - s.y * xd.z + s.z * xd.y * float(ib) - s.w * xd.w;
#else
	float a = dot(u8f(lo.x, 0.0), xv[0]) + dot(u8f(lo.y, 0.0), xv[1]) +
		  dot(u8f(lo.z, 0.0), xv[2]) + dot(u8f(lo.w, 0.0), xv[3]);
	float b = dot(u8f(hi.x, 0.0), xv[4]) + dot(u8f(hi.y, 0.0), xv[5]) +
		  dot(u8f(hi.z, 0.0), xv[6]) + dot(u8f(hi.w, 0.0), xv[7]);
	return s.x * a - s.y * xv[NX].x + s.z * b - s.w * xv[NX].y;
#endif
}
#elif defined(TYPE_IQ4_XS)
// GGUF's layout, 8-byte aligned: a super-block is 17 uvec2s, the first d,
// scales_h and scales_l, then 2 per sub-block of 32 (IQ4_NL's order: byte
// i's low nibble weight i, high nibble weight 16 + i), which is unit u % 8
// of block u / 8. A code's value is ggml's kvalues_iq4nl[code]: iq4_f,
// filled by main. Float x only (the host builds no XQ8 variant: measured
// slower, doc/vulkan.md).
#define KB4(wo, row, k, u) ((wo) / 4u + ((row) * ((k) / 256u) + (u) / 8u) * 17u)
#define WT uvec4
#define DT uvec2
#define LOADW(S, wo, row, k, u) \
	uvec4(w2_##S[KB4(wo, row, k, u) + 1u + 2u * ((u) % 8u)], \
	      w2_##S[KB4(wo, row, k, u) + 2u + 2u * ((u) % 8u)])
#define LOADD(S, wo, so, row, k, u) w2_##S[KB4(wo, row, k, u)]
const int IQ4_KV[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13,
			       25, 38, 53, 69, 89, 113);
shared float iq4_f[16];
void iq4_fill(uint tid)
{
	if (tid < 16u)
		iq4_f[tid] = float(IQ4_KV[tid]);
}
float wdot(WT q, DT h, XARG xv, uint ub)
{
	// d * (ls - 32), ls: 4 bits of scales_l and 2 of scales_h
	uint ls = ((h.y >> (4u * ub)) & 15u) | (((h.x >> (16u + 2u * ub)) & 3u) << 4);
	float sc = unpackHalf2x16(h.x).x * float(int(ls) - 32);
	float a = 0.0;
	[[unroll]] for (uint c = 0; c < 4u; c++) {
		uint v = q[c];
		a += dot(vec4(iq4_f[v & 15u], iq4_f[(v >> 8) & 15u], iq4_f[(v >> 16) & 15u],
			      iq4_f[(v >> 24) & 15u]), xv[c]);
		a += dot(vec4(iq4_f[(v >> 4) & 15u], iq4_f[(v >> 12) & 15u],
			      iq4_f[(v >> 20) & 15u], iq4_f[v >> 28]), xv[4u + c]);
	}
	return sc * a;
}
#else
// Q6_K in the backend's GPU layout (repack.comp): every super-block's 128
// bytes of low nibbles and 64 of high pairs (12 uvec4s each, in block
// order), then every block's 16 scale bytes, then every block's d. Unit u
// of a row: nibble uvec4 ub = u % 8 (n = ub / 4, a = ub % 4) of block
// u / 8, its low nibbles weights 128n + 16a + i, high 64 further on; its
// pairs are in qh uvec4 8 + 2n + a % 2 at bits 2 (a / 2) and 4 + 2 (a / 2)
struct K6 {
	uvec4 l, h;
};
// the block's 16 scale bytes and its d
struct K6S {
	uvec4 sc;
	uint d;
};
#define WT K6
#define DT K6S
#define KB6(row, k, u) ((row) * ((k) / 256u) + (u) / 8u)
#define LOADW(S, wo, row, k, u) \
	K6(w4_##S[(wo) / 8u + KB6(row, k, u) * 12u + (u) % 8u], \
	   w4_##S[(wo) / 8u + KB6(row, k, u) * 12u + 8u + 2u * ((u) % 8u / 4u) + (u) % 2u])
// the scales at so (16-bit words), the d's after all of the segment's
// m * k / 256 blocks' scales
#define LOADD(S, wo, so, row, k, u) \
	K6S(w4_##S[(so) / 8u + KB6(row, k, u)], \
	    uint(w16_##S[(so) + pc.p[2u + S] * ((k) / 256u) * 8u + KB6(row, k, u)]))
float wdot(WT w, DT s, XARG xv, uint ub)
{
	uint n = ub / 4u, a = ub % 4u, i = 8u * n + a % 2u + 2u * (a / 2u);
	uint sh = 24u - 8u * (i % 4u);
	float d = half_f(s.d);
	float slo = d * float(int(s.sc[i / 4u] << sh) >> 24);
	float shi = d * float(int(s.sc[i / 4u + 1u] << sh) >> 24);
	uvec4 h = w.h >> (2u * (a / 2u));
	uvec4 lo = (w.l & 0x0f0f0f0fu) | ((h & 0x03030303u) << 4);
	uvec4 hi = ((w.l >> 4) & 0x0f0f0f0fu) | (h & 0x30303030u);
#if defined(XQ8)
	// q - 32 as int8, per byte: (q | 0x80) - 32 borrows from no neighbour,
	// and ^ 0x80 takes the 128 back off
	lo = ((lo | 0x80808080u) - 0x20202020u) ^ 0x80808080u;
	hi = ((hi | 0x80808080u) - 0x20202020u) ^ 0x80808080u;
	int ia = sdot4x8(lo.x, xv.lo.x, 0) + sdot4x8(lo.y, xv.lo.y, 0) +
		 sdot4x8(lo.z, xv.lo.z, 0) + sdot4x8(lo.w, xv.lo.w, 0);
	int ib = sdot4x8(hi.x, xv.hi.x, 0) + sdot4x8(hi.y, xv.hi.y, 0) +
		 sdot4x8(hi.z, xv.hi.z, 0) + sdot4x8(hi.w, xv.hi.w, 0);
	vec4 xd = uintBitsToFloat(xv.d);
	return slo * xd.x * float(ia) + shi * xd.y * float(ib);
#else
	float x0 = dot(u8f(lo.x, 32.0), xv[0]) + dot(u8f(lo.y, 32.0), xv[1]) +
		   dot(u8f(lo.z, 32.0), xv[2]) + dot(u8f(lo.w, 32.0), xv[3]);
	float x1 = dot(u8f(hi.x, 32.0), xv[4]) + dot(u8f(hi.y, 32.0), xv[5]) +
		   dot(u8f(hi.z, 32.0), xv[6]) + dot(u8f(hi.w, 32.0), xv[7]);
	return slo * x0 + shi * x1;
#endif
}
#endif
