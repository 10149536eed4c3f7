#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// softcap: x = cap * tanh(x / cap), in place; n values a row, a
// workgroup per 128 of them, rows a z layer each (belt/arch.h's shader
// interface).
layout(local_size_x = 128) in;
layout(binding = 0) buffer X { float x[]; };

#include "tanh.glsl"

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], r = row_z();
	uint i = wg_id() * 128 + gl_LocalInvocationID.x;
	if (i >= n || r >= row_end())
		return;
	i += pc.o[0] + row_in(r) * n;
	float cap = pflt(1);
	x[i] = tanh_f(x[i] / cap) * cap;
}
