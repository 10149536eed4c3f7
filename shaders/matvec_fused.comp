#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// matvec_fused: the backend's internal fusion of a run of matvecs that read
// the same x (plugins/backend-vulkan/backend.c, fuse_*), never in the public
// kernel table. Built once per weight type (-DTYPE_F32 ...).
//
// bindings: 0 x, 1 rmsnorm weight (flag NORM), 2..4 W of segments 0..2,
//           5..7 y of segments 0..2
// params:   p0 k, p2..p4 rows of each segment, p5 eps (float)
// specialization constants (one pipeline each, so that the compiler drops
// what a dispatch does not do): 0 flags, 1 segments
// flags:    1 NORM    x is the rmsnorm's input: every workgroup computes
//                     sum(x^2) itself and loads w[j] * (scale * x[j])
//           2 ADD     y0[r] = y0[r] + W0[r] . x (matvec then add)
//           4 SWIGLU  y0[r] = silu(W0[r] . x) * (W1[r] . x) (gate, up,
//                     silu_mul)
// Otherwise segment s's rows go to y_s, the workgroups of segment 0 first.
// The host only fuses when k is a multiple of 8 and the W offsets allow
// 16-byte loads (F32, F16, BF16).
#define WG 128
#define NR 2 // rows per workgroup: VK_MATVEC_ROWS in plugins/backend-vulkan/vk.h
#define F_NORM 1u
#define F_ADD 2u
#define F_SWIGLU 4u
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint FLAGS = 0;
layout(constant_id = 1) const uint NSEG = 1;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 0) readonly buffer X4 { vec4 x4[]; };
layout(binding = 1) readonly buffer NW { float nw[]; };
layout(binding = 1) readonly buffer NW4 { vec4 nw4[]; };
layout(binding = 5) buffer Y0 { float y0[]; };
layout(binding = 6) writeonly buffer Y1 { float y1[]; };
layout(binding = 7) writeonly buffer Y2 { float y2[]; };

#define DECL_W(S, B)                                                          \
	layout(binding = B) readonly buffer WF4_##S { vec4 wf4_##S[]; };      \
	layout(binding = B) readonly buffer W16_##S { uint16_t w16_##S[]; }; \
	layout(binding = B) readonly buffer W4_##S { uvec4 w4_##S[]; };
DECL_W(0, 2)
DECL_W(1, 3)
DECL_W(2, 4)

#define PS (2 * NR + 1)
shared float part[PS * 256];

#if defined(TYPE_F16)
vec4 lo4(uvec2 u) { return vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y)); }
#elif defined(TYPE_BF16)
vec4 lo4(uvec2 u)
{
	return vec4(uintBitsToFloat(u.x << 16), uintBitsToFloat(u.x & 0xffff0000u),
		    uintBitsToFloat(u.y << 16), uintBitsToFloat(u.y & 0xffff0000u));
}
#endif

// how x is loaded; passed by value (private globals are slow on lavapipe).
// With NORM, ld4 returns w[j] * x[j] and adds x[j]^2 to ss: the scale
// 1/sqrt(mean(x^2) + eps) is one number per workgroup, applied to the
// reduced dot products, so that no extra pass or barrier is needed.
struct XS {
	uint xo, no;
	bool xal, nal;
};

vec4 ld4(XS s, uint j, inout float ss)
{
	uint xi = s.xo + j;
	vec4 v = s.xal ? x4[xi / 4] : vec4(x[xi], x[xi + 1], x[xi + 2], x[xi + 3]);
	if ((FLAGS & F_NORM) != 0) {
		ss += dot(v, v);
		uint ni = s.no + j;
		vec4 w = s.nal ? nw4[ni / 4]
			       : vec4(nw[ni], nw[ni + 1], nw[ni + 2], nw[ni + 3]);
		v = w * v;
	}
	return v;
}

// Units of work along a row: the x elements of unit i are xa (4) and xb (4).
#if defined(TYPE_Q8_0) || defined(TYPE_Q4_0)
uint n_units(uint k) { return k / 8; } // four threads per block of 32
void load_x(XS s, uint i, out vec4 xa, out vec4 xb, inout float ss)
{
	uint b = i / 4, part = i % 4;
#if defined(TYPE_Q8_0)
	xa = ld4(s, b * 32 + part * 8, ss);
	xb = ld4(s, b * 32 + part * 8 + 4, ss);
#else
	xa = ld4(s, b * 32 + part * 4, ss);
	xb = ld4(s, b * 32 + part * 4 + 16, ss);
#endif
}
#else
uint n_units(uint k) { return k / 8; }
void load_x(XS s, uint i, out vec4 xa, out vec4 xb, inout float ss)
{
	xa = ld4(s, 8 * i, ss);
	xb = ld4(s, 8 * i + 4, ss);
}
#endif

// W[row] . x over unit i of segment S (wo: its offset in elements of the
// binding's word size: floats for F32, 16-bit words otherwise).
#if defined(TYPE_F32)
#define WDOT(S, wo, row, k, i, xa, xb)                                      \
	(dot(wf4_##S[(wo + (row) * k) / 4 + 2 * (i)], xa) +                 \
	 dot(wf4_##S[(wo + (row) * k) / 4 + 2 * (i) + 1], xb))
#elif defined(TYPE_F16) || defined(TYPE_BF16)
#define WDOT(S, wo, row, k, i, xa, xb) wdot16_##S(wo, row, k, i, xa, xb)
#define DEF_WDOT(S)                                                         \
	float wdot16_##S(uint wo, uint row, uint k, uint i, vec4 xa, vec4 xb) \
	{                                                                   \
		uvec4 u = w4_##S[(wo + row * k) / 8 + i];                   \
		return dot(lo4(u.xy), xa) + dot(lo4(u.zw), xb);             \
	}
DEF_WDOT(0)
DEF_WDOT(1)
DEF_WDOT(2)
#elif defined(TYPE_Q8_0)
#define WDOT(S, wo, row, k, i, xa, xb) wdotq_##S(wo, row, k, i, xa, xb)
#define DEF_WDOT(S)                                                         \
	float wdotq_##S(uint wo, uint row, uint k, uint i, vec4 xa, vec4 xb)  \
	{                                                                   \
		uint nb = k / 32, b = i / 4, part = i % 4;                  \
		uint base = wo + (row * nb + b) * 17;                       \
		uint q = base + 1 + part * 4;                               \
		uint u0 = uint(w16_##S[q]), u1 = uint(w16_##S[q + 1]);      \
		uint u2 = uint(w16_##S[q + 2]), u3 = uint(w16_##S[q + 3]);  \
		vec4 wa = vec4(int(u0 << 24) >> 24, int(u0 << 16) >> 24,     \
			       int(u1 << 24) >> 24, int(u1 << 16) >> 24);    \
		vec4 wb = vec4(int(u2 << 24) >> 24, int(u2 << 16) >> 24,     \
			       int(u3 << 24) >> 24, int(u3 << 16) >> 24);    \
		return half_f(uint(w16_##S[base])) * (dot(wa, xa) + dot(wb, xb)); \
	}
DEF_WDOT(0)
DEF_WDOT(1)
DEF_WDOT(2)
#elif defined(TYPE_Q4_0)
#define WDOT(S, wo, row, k, i, xa, xb) wdotq_##S(wo, row, k, i, xa, xb)
#define DEF_WDOT(S)                                                         \
	float wdotq_##S(uint wo, uint row, uint k, uint i, vec4 xa, vec4 xb)  \
	{                                                                   \
		uint nb = k / 32, b = i / 4, part = i % 4;                  \
		uint base = wo + (row * nb + b) * 9;                        \
		uint q = base + 1 + part * 2;                               \
		uint u0 = uint(w16_##S[q]), u1 = uint(w16_##S[q + 1]);      \
		vec4 wa = vec4(int(u0 & 15u), int((u0 >> 8) & 15u),         \
			       int(u1 & 15u), int((u1 >> 8) & 15u)) - 8.0;   \
		vec4 wb = vec4(int((u0 >> 4) & 15u), int((u0 >> 12) & 15u), \
			       int((u1 >> 4) & 15u), int((u1 >> 12) & 15u)) - 8.0; \
		return half_f(uint(w16_##S[base])) * (dot(wa, xa) + dot(wb, xb)); \
	}
DEF_WDOT(0)
DEF_WDOT(1)
DEF_WDOT(2)
#else
#error "matvec_fused.comp: define TYPE_F32, TYPE_F16, TYPE_BF16, TYPE_Q8_0 or TYPE_Q4_0"
#endif

// acc[r] += W_S[r0 + r] . x for the rows this workgroup owns
#define LOOP(S, ACC)                                                        \
	for (uint i = tid; i < nu; i += WG) {                               \
		vec4 xa, xb;                                                \
		load_x(xs, i, xa, xb, ss);                                          \
		[[unroll]] for (uint r = 0; r < NR; r++)                    \
			if (r < nr)                                         \
				ACC[r] += WDOT(S, pc.o[2 + S], r0 + r, k, i, xa, xb); \
	}

void main()
{
	uint k = pc.p[0], nseg = NSEG, flags = FLAGS;
	uint tid = gl_LocalInvocationID.x;
	XS xs;
	xs.xo = pc.o[0];
	xs.no = pc.o[1];
	xs.xal = (xs.xo & 3u) == 0;
	xs.nal = (xs.no & 3u) == 0;
	float ss = 0.0;

	// which segment and rows
	uint g = wg_id(), seg = 0, m = pc.p[2];
	uint g0 = (pc.p[2] + NR - 1) / NR, g1 = (pc.p[3] + NR - 1) / NR;
	if ((flags & F_SWIGLU) == 0 && nseg > 1 && g >= g0) {
		g -= g0;
		seg = 1;
		m = pc.p[3];
		if (nseg > 2 && g >= g1) {
			g -= g1;
			seg = 2;
			m = pc.p[4];
		}
	}
	uint r0 = g * NR;
	if (r0 >= m)
		return;
	uint nr = min(NR, m - r0);
	uint nu = n_units(k);
	float acc[NR], acc2[NR];
	[[unroll]] for (uint r = 0; r < NR; r++) {
		acc[r] = 0.0;
		acc2[r] = 0.0;
	}
	if ((flags & F_SWIGLU) != 0) {
		for (uint i = tid; i < nu; i += WG) {
			vec4 xa, xb;
			load_x(xs, i, xa, xb, ss);
			[[unroll]] for (uint r = 0; r < NR; r++)
				if (r < nr) {
					acc[r] += WDOT(0, pc.o[2], r0 + r, k, i, xa, xb);
					acc2[r] += WDOT(1, pc.o[3], r0 + r, k, i, xa, xb);
				}
		}
	} else if (seg == 0) {
		LOOP(0, acc)
	} else if (seg == 1) {
		LOOP(1, acc)
	} else {
		LOOP(2, acc)
	}

	[[unroll]] for (uint r = 0; r < NR; r++) {
		acc[r] = subgroupAdd(acc[r]);
		if ((flags & F_SWIGLU) != 0)
			acc2[r] = subgroupAdd(acc2[r]);
	}
	if ((flags & F_NORM) != 0)
		ss = subgroupAdd(ss);
	if (subgroupElect()) {
		[[unroll]] for (uint r = 0; r < NR; r++) {
			part[gl_SubgroupID * PS + r] = acc[r];
			part[gl_SubgroupID * PS + NR + r] = acc2[r];
		}
		part[gl_SubgroupID * PS + 2 * NR] = ss;
	}
	barrier();
	if (tid < nr) {
		float s = 0.0, s2 = 0.0, sq = 0.0;
		for (uint i = 0; i < gl_NumSubgroups; i++) {
			s += part[i * PS + tid];
			s2 += part[i * PS + NR + tid];
			sq += part[i * PS + 2 * NR];
		}
		if ((flags & F_NORM) != 0) {
			float scale = 1.0 / sqrt(sq / float(k) + pflt(5));
			s *= scale;
			s2 *= scale;
		}
		uint row = r0 + tid;
		if ((flags & F_SWIGLU) != 0) {
			y0[pc.o[5] + row] = s / (1.0 + exp(-s)) * s2;
		} else if ((flags & F_ADD) != 0) {
			y0[pc.o[5] + row] = y0[pc.o[5] + row] + s;
		} else if (seg == 0) {
			y0[pc.o[5] + row] = s;
		} else if (seg == 1) {
			y1[pc.o[6] + row] = s;
		} else {
			y2[pc.o[7] + row] = s;
		}
	}
}
