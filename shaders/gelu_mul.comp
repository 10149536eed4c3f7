#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// gelu_mul: out = gelu(g) * u with GELU's tanh form in float, rows a z
// layer each; out may alias g.
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer G { float g[]; };
layout(binding = 1) readonly buffer U { float u[]; };
layout(binding = 2) writeonly buffer O { float o[]; };

#include "tanh.glsl"

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], r = row_z();
	uint i = wg_id() * 128 + gl_LocalInvocationID.x;
	if (i >= n || r >= row_end())
		return;
	i += row_in(r) * n;
	float x = g[pc.o[0] + i];
	float t = tanh_f(0.79788456080286535588 * x * (1.0 + 0.044715 * x * x));
	o[pc.o[2] + i] = 0.5 * x * (1.0 + t) * u[pc.o[1] + i];
}
