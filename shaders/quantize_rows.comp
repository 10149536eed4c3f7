#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
// quantize_rows: a batched pass's rows of x as int8 for matmul_q8cm.comp
// (plugins/backend-vulkan/backend.c runs it before the products that read
// them): per block of 32 values d = max |x| / 127 and q = round(x / d)
// (x * (127 / max |x|), in float), the four lanes of a block sharing its
// maximum. Row r's int8s are bytes r k .. r k + k - 1 of q, its blocks'
// d the floats at word p[1] + r k / 32 ... (rows a z layer each; k a
// multiple of 32).
// GLU 1: x is silu_mul's out = g sigmoid(g) u, computed here as
// silu_mul.comp computes it, from g (binding 0) and u (binding 2, at
// o[2]); GLU 2: gelu_mul's, as gelu_mul.comp computes it. The table then
// leaves that op out of the passes that run this (backend.c,
// glu_source).
//
// XQ 1: as matvec_fused.comp stages x for its int8 products, for that
// shader's passes of few rows (its XG): q = roundEven(x * (127 / max |x|))
// without clamping, and per block a uvec2 (the bits of d rounded to fp16,
// -8 times the sum of its q) at uvec2 p[1] + (row k + c) / 32.
//
// NORM 1 (with XQ, GLU 0): x is rmsnorm's out w * x / sqrt(mean(x^2) +
// eps), computed here as rmsnorm.comp computes it (the row's sum of
// squares in its order, by every workgroup of the row), from x (binding
// 0) and w (binding 2, at o[2]), eps p[2]. The table then leaves the
// rmsnorm out of the passes that run this.
//
// bindings: 0 x (or g), 1 q, 2 u (GLU; NORM: w; else x again); params:
// k, the scales' word (XQ: uvec2), eps (NORM)
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint GLU = 0u;
layout(constant_id = 1) const uint XQ = 0u;
layout(constant_id = 2) const uint NORM = 0u;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 0) readonly buffer X4 { vec4 x4[]; };
layout(binding = 2) readonly buffer U { float u[]; };
layout(binding = 2) readonly buffer U4 { vec4 u4[]; };

#include "tanh.glsl"

// g's activation times u, as silu_mul.comp (GLU 1) or gelu_mul.comp (2)
vec4 glu4(vec4 g, vec4 u)
{
	if (GLU == 1u)
		return g / (1.0 + exp(-g)) * u;
	vec4 r;
	[[unroll]] for (uint e = 0; e < 4u; e++) {
		float x = g[e];
		float t = tanh_f(0.79788456080286535588 * x * (1.0 + 0.044715 * x * x));
		r[e] = 0.5 * x * (1.0 + t) * u[e];
	}
	return r;
}
layout(binding = 1) writeonly buffer Q { uvec2 q2[]; };
layout(binding = 1) writeonly buffer QS { float qs[]; };

uint pack8(vec4 v, float inv)
{
	ivec4 q = ivec4(round(clamp(v * inv, -127.0, 127.0)));
	return uint(q.x & 255) | uint(q.y & 255) << 8 | uint(q.z & 255) << 16 |
	       uint(q.w & 255) << 24;
}

// NORM: 1 / sqrt(mean(x^2) + eps) of the row at xo, as rmsnorm.comp
// makes it (its WG and PER, its loop, wg_sum)
float norm_scale(uint xo, uint n)
{
	uint tid = gl_LocalInvocationID.x;
	float v[16], ss = 0.0;
	for (uint c0 = 0; c0 < n; c0 += 256u * 16u) {
		[[unroll]] for (uint j = 0; j < 16u; j++) {
			uint i = c0 + tid + j * 256u;
			v[j] = i < n ? x[xo + i] : 0.0;
		}
		[[unroll]] for (uint j = 0; j < 16u; j++)
			ss += v[j] * v[j];
	}
	ss = wg_sum(ss);
	return 1.0 / sqrt(ss / float(n) + pflt(2));
}

void main()
{
	STOP_CHECK();
	uint k = pc.p[0], r = row_z();
	uint c = 8u * (wg_id() * 256u + gl_LocalInvocationID.x); // first column
	bool in_row = c < k && r < row_end();
	uint row = row_in(r);
	float scale = 1.0;
	if (NORM != 0u) {
		if (r >= row_end())
			return; // the whole workgroup
		scale = norm_scale(pc.o[0] + row * k, k);
	}
	vec4 a = vec4(0.0), b = vec4(0.0);
	uint i = pc.o[0] + row * k + c;
	if (in_row && i % 4u == 0u) {
		a = x4[i / 4u];
		b = x4[i / 4u + 1u];
	} else if (in_row) {
		a = vec4(x[i], x[i + 1u], x[i + 2u], x[i + 3u]);
		b = vec4(x[i + 4u], x[i + 5u], x[i + 6u], x[i + 7u]);
	}
	if (GLU != 0u && in_row) {
		uint j = pc.o[2] + row * k + c;
		vec4 ua, ub;
		if (j % 4u == 0u) {
			ua = u4[j / 4u];
			ub = u4[j / 4u + 1u];
		} else {
			ua = vec4(u[j], u[j + 1u], u[j + 2u], u[j + 3u]);
			ub = vec4(u[j + 4u], u[j + 5u], u[j + 6u], u[j + 7u]);
		}
		a = glu4(a, ua);
		b = glu4(b, ub);
	}
	if (NORM != 0u && in_row) {
		vec4 wa = vec4(u[pc.o[2] + c], u[pc.o[2] + c + 1u], u[pc.o[2] + c + 2u],
			       u[pc.o[2] + c + 3u]);
		vec4 wb = vec4(u[pc.o[2] + c + 4u], u[pc.o[2] + c + 5u], u[pc.o[2] + c + 6u],
			       u[pc.o[2] + c + 7u]);
		precise vec4 ya = wa * (scale * a), yb = wb * (scale * b);
		a = ya;
		b = yb;
	}
	vec4 m4 = max(abs(a), abs(b));
	float amax = max(max(m4.x, m4.y), max(m4.z, m4.w));
	amax = max(amax, subgroupShuffleXor(amax, 1u));
	amax = max(amax, subgroupShuffleXor(amax, 2u));
	float inv = amax > 0.0 ? 127.0 / amax : 0.0;
	if (XQ != 0u) {
		ivec4 qa = ivec4(roundEven(a * inv)), qb = ivec4(roundEven(b * inv));
		ivec4 q4 = qa + qb;
		int sum = q4.x + q4.y + q4.z + q4.w;
		sum += subgroupShuffleXor(sum, 1u);
		sum += subgroupShuffleXor(sum, 2u);
		if (!in_row)
			return;
		q2[(row * k + c) / 8u] = uvec2(pack_s8(qa), pack_s8(qb));
		if (c % 32u == 0u)
			q2[pc.p[1] + (row * k + c) / 32u] =
				uvec2(floatBitsToUint(half_rte(amax / 127.0)), uint(-8 * sum));
		return;
	}
	if (!in_row)
		return;
	q2[(row * k + c) / 8u] = uvec2(pack8(a, inv), pack8(b, inv));
	if (c % 32u == 0u)
		qs[pc.p[1] + (row * k + c) / 32u] = amax / 127.0;
}
