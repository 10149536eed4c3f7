#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// scale: x *= s, in place, rows a z layer each.
layout(local_size_x = 128) in;
layout(binding = 0) buffer X { float x[]; };

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], r = row_z();
	uint i = wg_id() * 128 + gl_LocalInvocationID.x;
	if (i >= n || r >= row_end())
		return;
	x[i + pc.o[0] + row_in(r) * n] *= pflt(1);
}
