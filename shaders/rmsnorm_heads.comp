#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// rmsnorm_heads: each head of row r (a z layer each) over its head_dim
// values, x = w * x / sqrt(mean(x^2) + eps), one workgroup per head, in
// place (each thread reads its values before the reduction's barrier).
#define WG 64
layout(local_size_x = WG) in;
layout(binding = 0) buffer X { float x[]; };
layout(binding = 1) readonly buffer W { float w[]; };

void main()
{
	STOP_CHECK();
	uint n_head = pc.p[0], hd = pc.p[1], r = row_z(), h = wg_id();
	if (r >= row_end() || h >= n_head)
		return;
	uint tid = gl_LocalInvocationID.x;
	uint xo = pc.o[0] + (row_in(r) * n_head + h) * hd;
	float ss = 0.0;
	for (uint i = tid; i < hd; i += WG) {
		float v = x[xo + i];
		ss += v * v;
	}
	ss = wg_sum(ss);
	float scale = 1.0 / sqrt(ss / float(hd) + pflt(2));
	for (uint i = tid; i < hd; i += WG)
		x[xo + i] = w[pc.o[1] + i] * (scale * x[xo + i]);
}
