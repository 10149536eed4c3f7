#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// moe_combine: out = sum over the n_used slots of weight[j] * y[j], rows
// a z layer each.
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer Y { float y[]; };
layout(binding = 1) readonly buffer W { float wt[]; };
layout(binding = 2) writeonly buffer O { float o[]; };

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], nu = pc.p[1], r = row_z();
	uint i = wg_id() * 128 + gl_LocalInvocationID.x;
	if (i >= n || r >= row_end())
		return;
	uint yo = pc.o[0] + row_in(r) * nu * n, wo = pc.o[1] + row_in(r) * nu;
	float s = 0.0;
	for (uint j = 0; j < nu; j++)
		s += wt[wo + j] * y[yo + j * n + i];
	o[pc.o[2] + row_in(r) * n + i] = s;
}
