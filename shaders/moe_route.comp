#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// moe_route: for row r (a z layer each), the softmax of the router's
// n_expert logits, the n_used largest probabilities (the lowest index
// first among equals) as ids (floats) and weights renormalized to sum 1
// (at least 2^-14, as llama.cpp). One thread per row: n_expert is small.
layout(local_size_x = 1) in;
layout(binding = 0) readonly buffer L { float l[]; };
layout(binding = 1) writeonly buffer I { float ids[]; };
layout(binding = 2) writeonly buffer W { float wt[]; };

void main()
{
	STOP_CHECK();
	uint ne = pc.p[0], nu = pc.p[1], r = row_z();
	if (r >= row_end())
		return;
	uint lo = pc.o[0] + row_in(r) * ne;
	uint io = pc.o[1] + row_in(r) * nu, wo = pc.o[2] + row_in(r) * nu;
	float mx = -1.0 / 0.0, sum = 0.0;
	for (uint e = 0; e < ne; e++)
		mx = max(mx, l[lo + e]);
	for (uint e = 0; e < ne; e++)
		sum += exp(l[lo + e] - mx);
	// chosen experts as bits (n_expert <= 256)
	uint taken[8] = uint[8](0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u);
	float p[32];
	float tot = 0.0;
	for (uint j = 0; j < nu; j++) {
		int best = -1;
		float bp = 0.0;
		for (uint e = 0; e < ne; e++) {
			if ((taken[e / 32u] & (1u << (e % 32u))) != 0u)
				continue;
			float pe = exp(l[lo + e] - mx) / sum;
			if (best < 0 || pe > bp) {
				best = int(e);
				bp = pe;
			}
		}
		taken[uint(best) / 32u] |= 1u << (uint(best) % 32u);
		ids[io + j] = float(best);
		p[j] = bp;
		tot += bp;
	}
	tot = max(tot, 6.103515625e-5);
	for (uint j = 0; j < nu; j++)
		wt[wo + j] = p[j] / tot;
}
