#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// attention: one workgroup per head h (kv head h / (n_head / n_head_kv)):
// s_t = scale * q_h . k_t for t <= pos into att, softmax with the max
// subtracted, out_h = sum_t p_t v_t. Threads split t for the scores; for
// the weighted sum, groups of head_dim threads split t and add up after.
#define WG 128
#define MAX_HD 512
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer Q { float q[]; };
layout(binding = 1) readonly buffer KC { float kc[]; };
layout(binding = 2) readonly buffer VC { float vc[]; };
layout(binding = 3) writeonly buffer O { float o[]; };
layout(binding = 4) coherent buffer Att { float att[]; };

shared float qs[MAX_HD];
shared float acc_sh[WG];

void main()
{
	uint n_head = pc.p[0], n_head_kv = pc.p[1], head_dim = pc.p[2];
	uint n_ctx = pc.p[3];
	float scale = pflt(4);
	uint h = wg_id();
	uint tid = gl_LocalInvocationID.x;
	uint kv_dim = n_head_kv * head_dim;
	uint kh = h / (n_head / n_head_kv);
	uint n_kv = cur_pos() + 1;
	uint ko = pc.o[1] + kh * head_dim, vo = pc.o[2] + kh * head_dim;
	uint ao = pc.o[4] + h * n_ctx;

	for (uint i = tid; i < head_dim; i += WG)
		qs[i] = q[pc.o[0] + h * head_dim + i];
	barrier();

	float mx = -1.0 / 0.0;
	for (uint t = tid; t < n_kv; t += WG) {
		float d = 0.0;
		uint kb = ko + t * kv_dim;
		for (uint i = 0; i < head_dim; i++)
			d += qs[i] * kc[kb + i];
		float s = scale * d;
		att[ao + t] = s;
		mx = max(mx, s);
	}
	mx = wg_max(mx);
	float sum = 0.0;
	for (uint t = tid; t < n_kv; t += WG) {
		float e = exp(att[ao + t] - mx);
		att[ao + t] = e;
		sum += e;
	}
	sum = wg_sum(sum); // its barriers also order att for what follows
	memoryBarrierBuffer();
	barrier();

	if (head_dim <= WG) {
		uint groups = WG / head_dim;
		uint g = tid / head_dim, i = tid % head_dim;
		float a = 0.0;
		if (g < groups)
			for (uint t = g; t < n_kv; t += groups)
				a += att[ao + t] * vc[vo + t * kv_dim + i];
		acc_sh[tid] = a;
		barrier();
		if (tid < head_dim) {
			float s = 0.0;
			for (uint gg = 0; gg < groups; gg++)
				s += acc_sh[gg * head_dim + tid];
			o[pc.o[3] + h * head_dim + tid] = s / sum;
		}
	} else {
		for (uint i = tid; i < head_dim; i += WG) {
			float a = 0.0;
			for (uint t = 0; t < n_kv; t++)
				a += att[ao + t] * vc[vo + t * kv_dim + i];
			o[pc.o[3] + h * head_dim + i] = a / sum;
		}
	}
}
