#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// rope (and, with FF, rope_ff): for each row r of the pass (a z layer
// each), rotate every head of x in place by angle at_position(r) *
// freq[i] (freqs from the host, as the CPU backend computes them, times
// freq_scale, at meta.freq[aux[0]]; rope_ff divides by factors[i]). NORM
// (neox 0) rotates the pairs (2i, 2i+1), NEOX the pairs (i, i +
// rope_dim/2). One thread per pair of a head.
#define WG 128
layout(local_size_x = WG) in;
layout(binding = 0) buffer X { float x[]; };
#ifdef FF
layout(binding = 1) readonly buffer F { float ff[]; };
#endif

#include "rope.glsl"

void main()
{
	STOP_CHECK();
	uint n_head = pc.p[0], head_dim = pc.p[1], rope_dim = pc.p[2];
	bool neox = pc.p[4] != 0u;
	uint r = row_z();
	if (r >= row_end())
		return;
	uint half_dim = rope_dim / 2u, g = gl_GlobalInvocationID.x;
	if (g >= n_head * half_dim)
		return;
	uint i = g % half_dim;
	uint e = pc.o[0] + row_in(r) * n_head * head_dim + (g / half_dim) * head_dim;
	uint a = e + (neox ? i : 2u * i), b = a + (neox ? half_dim : 1u);
	precise float f = meta.freq[pc.aux[0] + i];
#ifdef FF
	f = f / ff[pc.o[1] + i];
#endif
	precise float ang = float(at_position(0u, r)) * f;
	vec2 sc = sincos_f(ang);
	float x0 = x[a], x1 = x[b];
	x[a] = x0 * sc.y - x1 * sc.x;
	x[b] = x0 * sc.x + x1 * sc.y;
}
