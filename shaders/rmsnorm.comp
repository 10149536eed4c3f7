#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// rmsnorm: out = w * x / sqrt(mean(x^2) + eps), one workgroup per row
// (a z layer each); out may
// alias x (each thread reads x[i] before it writes out[i], after the
// reduction's barrier).
#define WG 256
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer W { float w[]; };
layout(binding = 2) writeonly buffer O { float o[]; };

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], r = row_z();
	if (r >= row_end())
		return;
	uint tid = gl_LocalInvocationID.x;
	uint xo = pc.o[0] + row_in(r) * n, oo = pc.o[2] + row_in(r) * n;
	float ss = 0.0;
	for (uint i = tid; i < n; i += WG) {
		float v = x[xo + i];
		ss += v * v;
	}
	ss = wg_sum(ss);
	float scale = 1.0 / sqrt(ss / float(n) + pflt(1));
	for (uint i = tid; i < n; i += WG)
		o[oo + i] = w[pc.o[1] + i] * (scale * x[xo + i]);
}
