#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// sample_penalty (doc/samplers.md, step 1) for the token at pos: each
// distinct id t in [0, n) of token_ids[max(0, pos + 1 - last_n) .. pos]
// (0 .. pos when last_n is -1), counted c times, once:
//   l[t] = l[t] > 0 ? l[t] / repeat : l[t] * repeat;
//   l[t] = l[t] - (c * frequency + presence);
// One workgroup. The counts live in the work buffer (a word per id, zero
// between runs): every window entry adds one to its id's word, then the
// entry that takes the count back to zero (atomicExchange) penalizes it,
// so each distinct id is penalized once whatever the window's length.
// params: n, last_n, repeat, presence, frequency.
#define WG 256
layout(local_size_x = WG) in;
layout(binding = 0) buffer L { float l[]; };
layout(binding = 1) readonly buffer I { int ids[]; };

void main()
{
	STOP_CHECK();
	uint n = pc.p[0];
	int last_n = pint(1);
	uint pos = at_position(0u, 0u);
	uint start = 0u;
	if (last_n >= 0)
		start = pos + 1u > uint(last_n) ? pos + 1u - uint(last_n) : 0u;
	if (last_n == 0)
		return;
	uint wb = pc.aux[2], tid = gl_LocalInvocationID.x;
	for (uint j = start + tid; j <= pos; j += WG) {
		int t = ids[pc.o[1] + j];
		if (t >= 0 && uint(t) < n)
			atomicAdd(worku[wb + uint(t)], 1u);
	}
	memoryBarrierBuffer();
	barrier();
	memoryBarrierBuffer();
	for (uint j = start + tid; j <= pos; j += WG) {
		int t = ids[pc.o[1] + j];
		if (t < 0 || uint(t) >= n)
			continue;
		uint c = atomicExchange(worku[wb + uint(t)], 0u);
		if (c == 0u)
			continue;
		precise float v = l[pc.o[0] + uint(t)];
		v = v > 0.0 ? v / pflt(2) : v * pflt(2);
		precise float s = float(c) * pflt(4);
		s = s + pflt(3);
		v = v - s;
		l[pc.o[0] + uint(t)] = v;
	}
}
