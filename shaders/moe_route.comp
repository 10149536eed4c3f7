#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// moe_route: for row r (a z layer each), the softmax of the router's
// n_expert logits, the n_used largest probabilities (the lowest index
// first among equals) as ids (floats) and weights renormalized to sum 1
// (at least 2^-14, as llama.cpp). One thread per row: n_expert is small.
//
// With aux[1] (a batched pass whose expert products run grouped by
// expert, matvec.comp GROUPED), the last workgroup to finish also groups
// the dispatch's entries (row within the bindings times n_used, plus the
// slot) by expert into the work area at aux[2]: word 0 its counter, then
// n_expert counts, n_expert offsets, n_expert spare, then the entries,
// each expert's together (in no particular order).
#define WG 64
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer L { float l[]; };
layout(binding = 1) coherent buffer I { float ids[]; };
layout(binding = 2) writeonly buffer W { float wt[]; };

shared uint cnt_sh[256], cur_sh[256];

void route(uint ne, uint nu, uint r)
{
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

void main()
{
	STOP_CHECK();
	uint ne = pc.p[0], nu = pc.p[1], r = row_z(), tid = gl_LocalInvocationID.x;
	if (tid == 0u && r < row_end())
		route(ne, nu, r);
	if (pc.aux[1] == 0u)
		return;
	uint g = pc.aux[2];
	if (!last_workgroup(g, gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z))
		return;
	uint e0 = row_in(row_first()) * nu;
	uint n = row_end() > row_first() ? (row_end() - row_first()) * nu : 0u;
	uint io = pc.o[1] + e0;
	for (uint e = tid; e < ne; e += WG)
		cnt_sh[e] = 0u;
	barrier();
	for (uint i = tid; i < n; i += WG)
		atomicAdd(cnt_sh[uint(ids[io + i])], 1u);
	barrier();
	if (tid == 0u) {
		uint s = 0u;
		for (uint e = 0u; e < ne; e++) {
			worku[g + 1u + e] = cnt_sh[e];
			worku[g + 1u + ne + e] = s;
			cur_sh[e] = s;
			s += cnt_sh[e];
		}
		worku[g] = 0u; // the counter, for the next run
	}
	barrier();
	for (uint i = tid; i < n; i += WG) {
		uint e = uint(ids[io + i]);
		worku[g + 1u + 3u * ne + atomicAdd(cur_sh[e], 1u)] = e0 + i;
	}
}
