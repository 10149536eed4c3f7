#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// attention_ext: attention whose scores are soft-capped (softcap > 0:
// s = cap * tanh(s / cap)) and whose keys lie within window positions of
// the query (window > 0), for any rows of a chain or a tree. One
// workgroup per head (x) and row (z): keys a tile of WG at a time, one per
// thread, softmax kept online (running maximum and sum), each thread
// accumulating head_dim / WG output values.
#define WG 64
#define HDMAX 256
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer Q { float q[]; };
#define KV_K_BINDING 1 // the caches: kv.glsl
#define KV_V_BINDING 2
#include "kv.glsl"
layout(binding = 3) writeonly buffer O { float o[]; };

#include "tanh.glsl"

shared float q_sh[HDMAX];
shared float p_sh[WG];

// Whether row a of the block is row r or one of its ancestors.
bool ancestor(uint a, uint r)
{
	int b = int(r);
	while (b > int(a))
		b = row_parent(uint(b));
	return b == int(a);
}

void main()
{
	STOP_CHECK();
	uint n_head = pc.p[0], n_head_kv = pc.p[1], hd = pc.p[2];
	float scale = pflt(4), cap = pflt(5);
	uint window = pc.p[6];
	uint r = row_z(), h = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
	if (r >= row_end() || h >= n_head)
		return;
	uint kv_dim = n_head_kv * hd, kvo = (h / (n_head / n_head_kv)) * hd;
	uint qo = pc.o[0] + row_in(r) * n_head * hd + h * hd;
	for (uint d = tid; d < hd; d += WG)
		q_sh[d] = q[qo + d];
	barrier();
	bool tree = is_batched() && meta.tree != 0u;
	// a row of a table of sequences: its position, its entries from kb on
	uint pos = pass_pos(), n = at_n_kv(r), kb = at_kv_base(r);
	uint qpos = is_seqs() ? seq_pos(r) : pos + row_depth(r);
	float m = -1.0 / 0.0, sum = 0.0;
	float acc[HDMAX / WG];
	for (uint i = 0; i < HDMAX / WG; i++)
		acc[i] = 0.0;
	// keys before the window need no look (in a tree, the rows before
	// its start are no nearer than their slots); each entry's slot is
	// kv_ring's: the caches may be rings of the window and a pass's rows
	uint first = window > 0u && qpos >= window ? qpos - window + 1u : 0u;
	for (uint t0 = first; t0 < n; t0 += WG) {
		uint t = t0 + tid;
		bool seen = t < n;
		uint kpos = t;
		if (seen && tree && t >= pos) {
			seen = ancestor(t - pos, r);
			kpos = pos + row_depth(t - pos);
		}
		if (seen && window > 0u && qpos - kpos >= window)
			seen = false;
		float s = -1.0 / 0.0;
		if (seen) {
			uint ko = (kb + kv_ring(t)) * kv_dim + kvo;
			float dot = 0.0;
			for (uint d = 0; d < hd; d++)
				dot += q_sh[d] * k_at(pc.o[1], ko + d);
			s = dot * scale;
			if (cap > 0.0)
				s = tanh_f(s / cap) * cap;
		}
		float mt = wg_max(s);
		float mn = max(m, mt);
		float p = seen ? exp(s - mn) : 0.0;
		float st = wg_sum(p);
		if (mn == -1.0 / 0.0)
			continue; /* nothing seen yet: every thread alike */
		float resc = m == -1.0 / 0.0 ? 0.0 : exp(m - mn);
		sum = sum * resc + st;
		m = mn;
		p_sh[tid] = p;
		barrier();
		uint nt = min(uint(WG), n - t0);
		for (uint i = 0; i * WG + tid < hd; i++) {
			uint d = i * WG + tid;
			float a = acc[i] * resc;
			for (uint j = 0; j < nt; j++)
				if (p_sh[j] != 0.0)
					a += p_sh[j] * v_at(pc.o[2], (kb + kv_ring(t0 + j)) * kv_dim + kvo + d);
			acc[i] = a;
		}
		barrier();
	}
	uint oo = pc.o[3] + row_in(r) * n_head * hd + h * hd;
	for (uint i = 0; i * WG + tid < hd; i++)
		o[oo + i * WG + tid] = acc[i] / sum;
}
