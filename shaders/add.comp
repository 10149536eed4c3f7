#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// add: out = a + b, rows a z layer each; out may alias a.
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) readonly buffer B { float b[]; };
layout(binding = 2) writeonly buffer O { float o[]; };

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], r = row_z();
	uint i = wg_id() * 128 + gl_LocalInvocationID.x;
	if (i >= n || r >= row_end())
		return;
	i += row_in(r) * n;
	o[pc.o[2] + i] = a[pc.o[0] + i] + b[pc.o[1] + i];
}
