#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// qkv_rope: what a table does to q, k and v between their matvecs and
// attention, in one dispatch (fusion.c's vk_qkv_fuse): optionally
// bias_add of each (BIAS) or rmsnorm_heads of q and k (HNORM), then rope
// of q and k (NORM pairs (2i, 2i+1) or NEOX pairs (i, i + rope_dim/2)),
// then kv_store. Each step computes as its own shader does (bias_add,
// rmsnorm_heads with the same reduction, rope), so the result is theirs.
// With HNORM one workgroup per head (q's n_head, then k's and v's
// n_head_kv), whose norm is a reduction over it; else a thread per pair of
// values (a head's hd / 2, of q's heads, then k's and v's): the pair rope
// rotates, or two values past rope_dim, or two of v. In a batched table, a
// z layer per row (q, k, v rows of the pass).
// bindings: 0 q (rotated in place), 1 k, 2 v, 3..5 the biases of q, k, v
//           (BIAS) or the head-norm weights of q and k (HNORM), 6 k cache,
//           7 v cache (row at_slot; F32 or F16 as kv.glsl's KV_K, KV_V)
// params:   p0 n_head, p1 n_head_kv, p2 head_dim (at most HD_MAX), p3
//           rope_dim, p4 flags, p5 eps (float)
// aux0:     the rope's frequencies in meta; patch: the rope's
#define WG 64 // rmsnorm_heads.comp's, for the same sums
#define HD_MAX 256
#define F_BIAS 1u
#define F_HNORM 2u
#define F_NEOX 4u
layout(local_size_x = WG) in;
layout(binding = 0) buffer Q { float q[]; };
layout(binding = 1) readonly buffer K { float k[]; };
layout(binding = 2) readonly buffer V { float v[]; };
layout(binding = 3) readonly buffer AQ { float aq[]; };
layout(binding = 4) readonly buffer AK { float ak[]; };
layout(binding = 5) readonly buffer AV { float av[]; };
#define KV_K_BINDING 6
#define KV_V_BINDING 7
#define KV_WRITE
#include "kv.glsl"

#include "rope.glsl"

shared float h[HD_MAX];

// i of segment seg's row: q's from qo, k's and v's from ko (rows of the
// pass: n_head and n_head_kv heads)
float src(uint seg, uint qo, uint ko, uint i)
{
	return seg == 0u ? q[qo + i] : seg == 1u ? k[pc.o[1] + ko + i] : v[pc.o[2] + ko + i];
}

float add_of(uint seg, uint i)
{
	return seg == 0u ? aq[pc.o[3] + i] : seg == 1u ? ak[pc.o[4] + i] : av[pc.o[5] + i];
}

// The head of the q, k, v heads in a row (q's, then k's, then v's) as
// its segment and its head there; false past them.
bool head_of(uint g, uint nh, uint nkv, out uint seg, out uint head)
{
	seg = g < nh ? 0u : g < nh + nkv ? 1u : 2u;
	head = seg == 0u ? g : g - nh - (seg == 2u ? nkv : 0u);
	return g < nh + 2u * nkv;
}

// Pair j of a head, (x0, x1), rotated at position pos as rope.comp
// rotates it
vec2 rotate_pair(float x0, float x1, uint j, uint pos)
{
	precise float f = meta.freq[pc.aux[0] + j];
	precise float ang = float(pos) * f;
	vec2 sc = sincos_f(ang);
	return vec2(x0 * sc.y - x1 * sc.x, x0 * sc.x + x1 * sc.y);
}

// Without HNORM: the thread's pair j of its head, at row r (q from qo, k
// and v from ko).
void pair(uint r, uint qo, uint ko)
{
	uint nh = pc.p[0], nkv = pc.p[1], hd = pc.p[2], rd = pc.p[3], flags = pc.p[4];
	uint half_hd = hd / 2u, item = wg_id() * WG + gl_LocalInvocationID.x, seg, head;
	if (!head_of(item / half_hd, nh, nkv, seg, head))
		return;
	uint j = item % half_hd, base = head * hd, half_dim = rd / 2u;
	bool rot = seg < 2u && j < half_dim;
	bool neox = (flags & F_NEOX) != 0u;
	uint a = rot && neox ? j : 2u * j, b = rot && neox ? j + half_dim : 2u * j + 1u;
	float x0 = src(seg, qo, ko, base + a), x1 = src(seg, qo, ko, base + b);
	if ((flags & F_BIAS) != 0u) {
		x0 += add_of(seg, base + a);
		x1 += add_of(seg, base + b);
	}
	if (rot) {
		vec2 y = rotate_pair(x0, x1, j, at_position(0u, r));
		x0 = y.x;
		x1 = y.y;
	}
	uint row = at_slot(0u, r) * nkv * hd + base;
	if (seg == 0u) {
		q[qo + base + a] = x0;
		q[qo + base + b] = x1;
	} else if (seg == 1u) {
		k_store(pc.o[6], row + a, x0);
		k_store(pc.o[6], row + b, x1);
	} else {
		v_store(pc.o[7], row + a, x0);
		v_store(pc.o[7], row + b, x1);
	}
}

void main()
{
	STOP_CHECK();
	uint nh = pc.p[0], nkv = pc.p[1], hd = pc.p[2], rd = pc.p[3], flags = pc.p[4];
	uint r = row_z();
	if (r >= row_end())
		return;
	uint qo = pc.o[0] + row_in(r) * nh * hd, ko = row_in(r) * nkv * hd;
	if ((flags & F_HNORM) == 0u) {
		pair(r, qo, ko);
		return;
	}
	// HNORM: a workgroup per head, the whole of it through the barriers
	uint seg, head;
	if (!head_of(wg_id(), nh, nkv, seg, head))
		return;
	uint tid = gl_LocalInvocationID.x, base = head * hd;
	float ss = 0.0;
	for (uint i = tid; i < hd; i += WG) {
		float x = src(seg, qo, ko, base + i);
		h[i] = x;
		ss += x * x;
	}
	if (seg < 2u) {
		ss = wg_sum(ss);
		float scale = 1.0 / sqrt(ss / float(hd) + pflt(5));
		for (uint i = tid; i < hd; i += WG)
			h[i] = add_of(seg, i) * (scale * h[i]);
	}
	barrier();
	if (seg < 2u) {
		bool neox = (flags & F_NEOX) != 0u;
		uint half_dim = rd / 2u, pos = at_position(0u, r);
		for (uint i = tid; i < half_dim; i += WG) {
			uint a = neox ? i : 2u * i, b = a + (neox ? half_dim : 1u);
			vec2 y = rotate_pair(h[a], h[b], i, pos);
			h[a] = y.x;
			h[b] = y.y;
		}
	}
	barrier();
	uint row = at_slot(0u, r) * nkv * hd + base;
	for (uint i = tid; i < hd; i += WG) {
		if (seg == 0u)
			q[qo + base + i] = h[i];
		else if (seg == 1u)
			k_store(pc.o[6], row + i, h[i]);
		else
			v_store(pc.o[7], row + i, h[i]);
	}
}
