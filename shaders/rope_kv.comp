#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// rope_kv: for each row r of the pass (a z layer each), rotate q and k in
// place, pairs (2i, 2i+1) for 2i < rope_dim, by angle at_position(r) *
// freq[i] (freqs from the host, as the CPU backend computes them, at
// meta.freq[aux[0]]); then copy k and v to cache slot at_slot(r). One
// thread per pair of a q or k head, over as many workgroups as needed.
#define WG 128
layout(local_size_x = WG) in;
layout(binding = 0) buffer Q { float q[]; };
layout(binding = 1) buffer K { float k[]; };
layout(binding = 2) readonly buffer V { float v[]; };
layout(binding = 3) writeonly buffer KC { float kc[]; };
layout(binding = 4) writeonly buffer VC { float vc[]; };

#include "rope.glsl"

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
	uint g = gl_GlobalInvocationID.x;
	bool is_q = g < n_head * hp;
	if (!is_q)
		g -= n_head * hp;
	if (g >= (is_q ? n_head : n_head_kv) * hp)
		return;
	uint i = (g % hp) * 2u;
	uint e = (g / hp) * head_dim + i;
	bool two = i + 1u < head_dim;
	vec2 sc = vec2(0.0, 1.0);
	if (i < rope_dim) {
		precise float ang = float(pos) * meta.freq[pc.aux[0] + i / 2u];
		sc = sincos_f(ang);
	}
	if (is_q) {
		if (i < rope_dim) {
			float x0 = q[qo + e], x1 = q[qo + e + 1u];
			q[qo + e] = x0 * sc.y - x1 * sc.x;
			q[qo + e + 1u] = x0 * sc.x + x1 * sc.y;
		}
		return;
	}
	uint row = at_slot(0u, r) * kv_dim;
	float x0 = k[ko + e], x1 = two ? k[ko + e + 1u] : 0.0;
	if (i < rope_dim) {
		float y0 = x0 * sc.y - x1 * sc.x;
		float y1 = x0 * sc.x + x1 * sc.y;
		x0 = y0;
		x1 = y1;
		k[ko + e] = x0;
		k[ko + e + 1u] = x1;
	}
	kc[pc.o[3] + row + e] = x0;
	vc[pc.o[4] + row + e] = v[vo + e];
	if (two) {
		kc[pc.o[3] + row + e + 1u] = x1;
		vc[pc.o[4] + row + e + 1u] = v[vo + e + 1u];
	}
}
