#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// bias_add: x += b on every row (a z layer each); b is one weight vector.
layout(local_size_x = 128) in;
layout(binding = 0) buffer X { float x[]; };
layout(binding = 1) readonly buffer B { float b[]; };

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], r = row_z();
	uint i = wg_id() * 128 + gl_LocalInvocationID.x;
	if (i >= n || r >= row_end())
		return;
	x[pc.o[0] + row_in(r) * n + i] += b[pc.o[1] + i];
}
