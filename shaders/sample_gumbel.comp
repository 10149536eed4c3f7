#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "gumbel.glsl"
// sample_gumbel (doc/samplers.md, step 4): l[i] = l[i] * inv_temp + g_i
// for the kept tokens, -INFINITY for the others; the table's argmax then
// draws the token. g_i = -log(-log(u_i)), u_i from the first word of
// Philox4x32-10 with counter (i, pos, 0, 0) and key (seed_lo, seed_hi),
// bit for bit as the CPU sampler (shaders/gumbel.glsl).
// params: n, inv_temp, seed_lo, seed_hi, use_threshold (tau: scratch[0]).
#define WG 256
layout(local_size_x = WG) in;
layout(binding = 0) buffer L { float l[]; };
layout(binding = 1) readonly buffer S { float scratch[]; };

void main()
{
	STOP_CHECK();
	uint n = pc.p[0];
	uint i = wg_id() * WG + gl_LocalInvocationID.x;
	if (i >= n)
		return;
	float v = l[pc.o[0] + i];
	if (pc.p[4] != 0u && !(v >= scratch[pc.o[1]])) {
		l[pc.o[0] + i] = uintBitsToFloat(0xff800000u); // -INFINITY
		return;
	}
	l[pc.o[0] + i] = gumbel_perturb(v, pflt(1), i, at_position(0u, 0u), pc.p[2], pc.p[3]);
}
