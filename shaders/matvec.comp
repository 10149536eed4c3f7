#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// matvec: y[r] = W[r] . x. A workgroup does NR rows; its threads stride
// over the row (16-byte loads where the row and offsets allow), then a
// subgroup add and one shared-memory pass across subgroups. Built once per
// weight type (-DTYPE_F32 ...).
#define WG 128
#ifdef GROUPED
#include "moe_groups.glsl"
#endif
#ifdef MOE
// rows per workgroup: the setting moe_rows (VK_MOE_ROWS)
layout(constant_id = 0) const uint NR = 4u;
#else
#define NR 2 // rows per workgroup: VK_MATVEC_ROWS in plugins/backend-vulkan/vk.h
#endif
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer WF { float wf[]; };
layout(binding = 0) readonly buffer WF4 { vec4 wf4[]; };
layout(binding = 0) readonly buffer W16 { uint16_t w16[]; };
layout(binding = 0) readonly buffer W4 { uvec4 w4[]; };
layout(binding = 1) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer X4 { vec4 x4[]; };
#ifdef MOE
// moe_matvec: binding 2 the rows' chosen experts (ids as floats), y
// holds n_used results of m per row; a z layer per row, the x-y grid
// n_used slots of the m rows
layout(binding = 2) readonly buffer IDS { float ids[]; };
layout(binding = 3) writeonly buffer Y { float y[]; };
#else
layout(binding = 2) writeonly buffer Y { float y[]; };
#endif

shared float part[NR * 256];

#if defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS)
// the IQ4 codebook as floats: a shared load per weight, not selects
shared float iq4_sh[16];
#define KQ_IQ4_TABLE iq4_sh
#endif
#include "quants.glsl"

#if defined(TYPE_F16)
vec4 lo4(uvec2 u) { return vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y)); }
float w1(uint i) { return half_f(uint(w16[i])); }
#elif defined(TYPE_BF16)
vec4 lo4(uvec2 u)
{
	return vec4(uintBitsToFloat(u.x << 16), uintBitsToFloat(u.x & 0xffff0000u),
		    uintBitsToFloat(u.y << 16), uintBitsToFloat(u.y & 0xffff0000u));
}
float w1(uint i) { return bf16_f(uint(w16[i])); }
#endif

// y[yo + r0 .. yo + r0 + nr) = rows wr0 .. wr0 + nr of W . x from xo;
// every thread of the workgroup calls it
void dot_rows(uint k, uint wr0, uint xo, uint yo, uint r0, uint nr)
{
	uint tid = gl_LocalInvocationID.x;
	uint wo = pc.o[0];
	float acc[NR];
	[[unroll]] for (uint r = 0; r < NR; r++)
		acc[r] = 0.0;

#if defined(TYPE_F32)
	if (((k | wo | xo) & 3u) == 0) {
		uint k4 = k / 4;
		for (uint i = tid; i < k4; i += WG) {
			vec4 xv = x4[xo / 4 + i];
			[[unroll]] for (uint r = 0; r < NR; r++)
				if (r < nr)
					acc[r] += dot(wf4[(wo + (wr0 + r) * k) / 4 + i], xv);
		}
	} else {
		for (uint i = tid; i < k; i += WG) {
			float xv = x[xo + i];
			[[unroll]] for (uint r = 0; r < NR; r++)
				if (r < nr)
					acc[r] += wf[wo + (wr0 + r) * k + i] * xv;
		}
	}
#elif defined(TYPE_F16) || defined(TYPE_BF16)
	if (((k | wo) & 7u) == 0 && (xo & 3u) == 0) {
		uint k8 = k / 8;
		for (uint i = tid; i < k8; i += WG) {
			vec4 xa = x4[xo / 4 + 2 * i], xb = x4[xo / 4 + 2 * i + 1];
			[[unroll]] for (uint r = 0; r < NR; r++)
				if (r < nr) {
					uvec4 u = w4[(wo + (wr0 + r) * k) / 8 + i];
					acc[r] += dot(lo4(u.xy), xa) + dot(lo4(u.zw), xb);
				}
		}
	} else {
		for (uint i = tid; i < k; i += WG) {
			float xv = x[xo + i];
			[[unroll]] for (uint r = 0; r < NR; r++)
				if (r < nr)
					acc[r] += w1(wo + (wr0 + r) * k + i) * xv;
		}
	}
#elif defined(TYPE_Q8_0) || defined(TYPE_Q4_0)
	// four threads per block of 32, eight weights each, so that a warp
	// reads x and W in contiguous runs
	uint nb = k / 32;
	bool xal = (xo & 3u) == 0;
	for (uint i = tid; i < nb * 4; i += WG) {
		uint b = i / 4, part = i % 4;
#if defined(TYPE_Q8_0)
		uint xi = xo + b * 32 + part * 8;
		vec4 xa = xal ? x4[xi / 4] : vec4(x[xi], x[xi + 1], x[xi + 2], x[xi + 3]);
		vec4 xb = xal ? x4[xi / 4 + 1] : vec4(x[xi + 4], x[xi + 5], x[xi + 6], x[xi + 7]);
		[[unroll]] for (uint r = 0; r < NR; r++)
			if (r < nr) {
				uint base = wo + ((wr0 + r) * nb + b) * 17;
				uint q = base + 1 + part * 4;
				uint u0 = uint(w16[q]), u1 = uint(w16[q + 1]);
				uint u2 = uint(w16[q + 2]), u3 = uint(w16[q + 3]);
				vec4 wa = vec4(int(u0 << 24) >> 24, int(u0 << 16) >> 24,
					       int(u1 << 24) >> 24, int(u1 << 16) >> 24);
				vec4 wb = vec4(int(u2 << 24) >> 24, int(u2 << 16) >> 24,
					       int(u3 << 24) >> 24, int(u3 << 16) >> 24);
				acc[r] += half_f(uint(w16[base])) * (dot(wa, xa) + dot(wb, xb));
			}
#else
		uint xi = xo + b * 32 + part * 4;
		vec4 xa = xal ? x4[xi / 4] : vec4(x[xi], x[xi + 1], x[xi + 2], x[xi + 3]);
		vec4 xb = xal ? x4[xi / 4 + 4] : vec4(x[xi + 16], x[xi + 17], x[xi + 18], x[xi + 19]);
		[[unroll]] for (uint r = 0; r < NR; r++)
			if (r < nr) {
				uint base = wo + ((wr0 + r) * nb + b) * 9;
				uint q = base + 1 + part * 2;
				uint u0 = uint(w16[q]), u1 = uint(w16[q + 1]);
				// bytes 4part .. 4part+3: low nibbles are elements
				// 4part.., high nibbles 4part+16..
				vec4 wa = vec4(int(u0 & 15u), int((u0 >> 8) & 15u),
					       int(u1 & 15u), int((u1 >> 8) & 15u)) - 8.0;
				vec4 wb = vec4(int((u0 >> 4) & 15u), int((u0 >> 12) & 15u),
					       int((u1 >> 4) & 15u), int((u1 >> 12) & 15u)) - 8.0;
				acc[r] += half_f(uint(w16[base])) * (dot(wa, xa) + dot(wb, xb));
			}
#endif
	}
#elif defined(KQ_UNITS)
	// a thread per unit of 16 weights (quants.glsl): four runs of 4, so
	// each quant byte is read by one thread; consecutive threads take
	// consecutive units, so a subgroup reads the row's bytes in runs
	uint nb = k / KQ_BLOCK;
	bool xal = (xo & 3u) == 0;
	for (uint i = tid; i < nb * KQ_UNITS; i += WG) {
		uint b = i / KQ_UNITS, u = i % KQ_UNITS;
		vec4 xv[4];
		[[unroll]] for (uint s = 0; s < 4u; s++) {
			uint xi = xo + b * KQ_BLOCK + kq_span(u, s);
			xv[s] = xal ? x4[xi / 4u] : vec4(x[xi], x[xi + 1u], x[xi + 2u], x[xi + 3u]);
		}
		// sums of x for the types with a min (unused, and dropped, else)
		vec4 xs = vec4(dot(xv[0], vec4(1.0)), dot(xv[1], vec4(1.0)),
			       dot(xv[2], vec4(1.0)), dot(xv[3], vec4(1.0)));
		[[unroll]] for (uint r = 0; r < NR; r++)
			if (r < nr)
				acc[r] += kq_dot(wo + ((wr0 + r) * nb + b) * KQ_WORDS, u, xv, xs);
	}
#elif defined(KQ_BLOCK)
	// Q4_K, Q6_K: a thread per run of 16 weights, which one scale covers
	uint nb = k / 256u;
	bool xal = (xo & 3u) == 0;
	for (uint i = tid; i < nb * 16u; i += WG) {
		uint b = i / 16u, g = i % 16u, xi = xo + i * 16u;
		vec4 xv[4];
		[[unroll]] for (uint u = 0; u < 4u; u++)
			xv[u] = xal ? x4[xi / 4u + u]
				    : vec4(x[xi + 4u * u], x[xi + 4u * u + 1u],
					   x[xi + 4u * u + 2u], x[xi + 4u * u + 3u]);
		[[unroll]] for (uint r = 0; r < NR; r++)
			if (r < nr) {
				float v[16];
				kq_group16(wo + ((wr0 + r) * nb + b) * KQ_WORDS, g, v);
				float s = 0.0;
				[[unroll]] for (uint u = 0; u < 4u; u++)
					s += dot(vec4(v[4u * u], v[4u * u + 1u], v[4u * u + 2u],
						      v[4u * u + 3u]),
						 xv[u]);
				acc[r] += s;
			}
	}
#else
#error "matvec.comp: define TYPE_F32, TYPE_F16, TYPE_BF16, TYPE_Q8_0, TYPE_Q4_0 or a type of quants.glsl"
#endif

	[[unroll]] for (uint r = 0; r < NR; r++)
		acc[r] = subgroupAdd(acc[r]);
	if (subgroupElect())
		[[unroll]] for (uint r = 0; r < NR; r++)
			part[gl_SubgroupID * NR + r] = acc[r];
	barrier();
	if (tid < nr) {
		float s = 0.0;
		for (uint i = 0; i < gl_NumSubgroups; i++)
			s += part[i * NR + tid];
		y[yo + r0 + tid] = s;
	}
}

void main()
{
	STOP_CHECK();
	uint k = pc.p[0], m = pc.p[1];
#ifdef GROUPED
	// a batched pass's rows grouped by expert (moe_route's work area at
	// aux[0]: counts, offsets, then the entries row * n_used + j of each
	// expert in turn): the workgroup does rows r0.. of expert e for every
	// entry that chose it, so the pass reads e's rows once
	uint ne = pc.p[2], nu = pc.p[3], gps = (m + NR - 1u) / NR, g = pc.aux[0];
	uint e = wg_id() / gps, r0 = (wg_id() % gps) * NR;
	if (e >= ne)
		return;
	uint cnt = worku[moe_counts_at(g) + e], off = worku[moe_offsets_at(g, ne) + e];
	uint list = moe_entries_at(g, ne);
#elif defined(MOE)
	// slot j of row r: expert ids[r][j]'s rows (from e * m on), the
	// row's x (or, with aux[1], its slot j of n_used x's)
	uint nu = pc.p[3], gps = (m + NR - 1u) / NR, r = row_z();
	if (r >= row_end() || wg_id() >= gps * nu)
		return;
	uint j = wg_id() / gps, r0 = (wg_id() % gps) * NR;
	uint e = uint(ids[pc.o[2] + row_in(r) * nu + j]);
	uint wr0 = e * m + r0;
	uint xo = pc.o[1] + (pc.aux[1] != 0u ? row_in(r) * nu + j : row_in(r)) * k;
	uint yo = pc.o[3] + (row_in(r) * nu + j) * m;
#else
	uint r0 = wg_id() * NR, wr0 = r0;
	uint xo = pc.o[1], yo = pc.o[2];
#endif
	if (r0 >= m)
		return;
	uint nr = min(NR, m - r0);
	uint tid = gl_LocalInvocationID.x;
#if defined(KQ_IQ4_TABLE)
	if (tid < 16u)
		iq4_sh[tid] = float(iq4_value(tid));
	barrier();
#endif
#ifdef GROUPED
	for (uint q = 0u; q < cnt; q++) {
		// entry: the row within the dispatch's bindings times n_used,
		// plus the slot
		uint ent = worku[list + off + q];
		uint xo = pc.o[1] + (pc.aux[1] != 0u ? ent : ent / nu) * k;
		dot_rows(k, e * m + r0, xo, pc.o[3] + ent * m, r0, nr);
		barrier(); // part[] is read before the next entry writes it
	}
#else
	dot_rows(k, wr0, xo, yo, r0, nr);
#endif
}
