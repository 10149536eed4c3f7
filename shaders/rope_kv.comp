#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// rope_kv: for each row r of the pass (a z layer each), rotate q and k in
// place, pairs (2i, 2i+1) for 2i < rope_dim, by angle at_position(r) *
// freq[i] (freqs from the host, as the CPU backend computes them, at
// meta.freq[aux[0]]); then store k and v into cache slot at_slot(r) in
// the caches' types (kv.glsl). One thread per pair of a q or k head, over
// as many workgroups as needed; a Q8_0 block (head_dim a multiple of 32,
// so 16 pairs of one head, 16-aligned in the workgroup) finds its scale
// from its threads' values in shared memory.
#define WG 128
layout(local_size_x = WG) in;
layout(binding = 0) buffer Q { float q[]; };
layout(binding = 1) buffer K { float k[]; };
layout(binding = 2) readonly buffer V { float v[]; };
#define KV_K_BINDING 3
#define KV_V_BINDING 4
#define KV_WRITE
#include "kv.glsl"

#include "rope.glsl"

shared vec4 kv_sh[WG]; // Q8_0: each thread's k pair and v pair

// the block's scale of component c (0: k, 1: v) of kv_sh: the largest
// magnitude over the 16 pairs from l0
float block_scale(uint l0, uint c)
{
	float m = 0.0;
	for (uint j = 0; j < 16u; j++) {
		vec2 x = c == 0u ? kv_sh[l0 + j].xy : kv_sh[l0 + j].zw;
		m = max(m, max(abs(x.x), abs(x.y)));
	}
	return kv_q8_scale(m);
}

// Rotate (and for k, store) the pair starting at element i of a head;
// an odd head_dim leaves a last single element, which rope never touches.
void main()
{
	STOP_CHECK();
	uint n_head = pc.p[0], n_head_kv = pc.p[1], head_dim = pc.p[2];
	uint rope_dim = pc.p[3], r = row_z();
	if (r >= row_end())
		return;
	uint pos = at_position(0u, r);
	uint kv_dim = n_head_kv * head_dim;
	uint ri = row_in(r);
	uint qo = pc.o[0] + ri * n_head * head_dim, ko = pc.o[1] + ri * kv_dim;
	uint vo = pc.o[2] + ri * kv_dim;
	uint hp = (head_dim + 1u) / 2u; /* pairs per head */
	uint g = gl_GlobalInvocationID.x, l = gl_LocalInvocationID.x;
	bool is_q = g < n_head * hp;
	if (!is_q)
		g -= n_head * hp;
	// no return past here before the barrier: Q8_0 blocks share values
	bool live = g < (is_q ? n_head : n_head_kv) * hp;
	uint i = (g % hp) * 2u;
	uint e = (g / hp) * head_dim + i;
	bool two = i + 1u < head_dim;
	vec2 sc = vec2(0.0, 1.0);
	if (live && i < rope_dim) {
		precise float ang = float(pos) * meta.freq[pc.aux[0] + i / 2u];
		sc = sincos_f(ang);
	}
	if (live && is_q && i < rope_dim) {
		float x0 = q[qo + e], x1 = q[qo + e + 1u];
		q[qo + e] = x0 * sc.y - x1 * sc.x;
		q[qo + e + 1u] = x0 * sc.x + x1 * sc.y;
	}
	bool kv = live && !is_q;
	uint row = at_slot(0u, r) * kv_dim;
	float x0 = 0.0, x1 = 0.0, v0 = 0.0, v1 = 0.0;
	if (kv) {
		x0 = k[ko + e];
		x1 = two ? k[ko + e + 1u] : 0.0;
		v0 = v[vo + e];
		v1 = two ? v[vo + e + 1u] : 0.0;
		if (i < rope_dim) {
			float y0 = x0 * sc.y - x1 * sc.x;
			float y1 = x0 * sc.x + x1 * sc.y;
			x0 = y0;
			x1 = y1;
			k[ko + e] = x0;
			k[ko + e + 1u] = x1;
		}
		if (KV_K != KV_Q8_0) {
			k_store(pc.o[3], row + e, x0);
			if (two)
				k_store(pc.o[3], row + e + 1u, x1);
		}
		if (KV_V != KV_Q8_0) {
			v_store(pc.o[4], row + e, v0);
			if (two)
				v_store(pc.o[4], row + e + 1u, v1);
		}
	}
	if (KV_K != KV_Q8_0 && KV_V != KV_Q8_0)
		return;
	kv_sh[l] = vec4(x0, x1, v0, v1);
	barrier();
	if (!kv)
		return;
	uint l0 = l & ~15u;
	if (KV_K == KV_Q8_0)
		q8_store_k(pc.o[3], row + e, vec2(x0, x1), block_scale(l0, 0u));
	if (KV_V == KV_Q8_0)
		q8_store_v(pc.o[4], row + e, vec2(v0, v1), block_scale(l0, 1u));
}
