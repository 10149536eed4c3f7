#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// moe_route: for row r (a z layer each), the softmax of the router's
// n_expert logits, the n_used largest probabilities (the lowest index
// first among equals) as ids (floats) and weights renormalized to sum 1
// (at least 2^-14, as llama.cpp). A workgroup per row.
//
// With aux[1] (a batched pass whose expert products run grouped by
// expert), the last workgroup to finish also groups the dispatch's
// entries by expert into the work area at aux[2], as moe_groups.glsl lays
// it out (each expert's entries in no particular order).
#include "moe_groups.glsl"
#define WG 64
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer L { float l[]; };
layout(binding = 1) coherent buffer I { float ids[]; };
layout(binding = 2) writeonly buffer W { float wt[]; };

shared uint cnt_sh[256], cur_sh[256];

shared float pe_sh[256], pj_sh[32], rv_sh[WG], mx_sh, sum_sh;
shared uint ri_sh[WG];

// Row r's route, by the whole workgroup: the probabilities in pe_sh (the
// sum in expert order, as one thread would), then n_used rounds of an
// argmax over the experts not taken, the lowest index first among equals
// (subgroup operations, then across the subgroups).
void route(uint ne, uint nu, uint r, uint tid)
{
	uint lo = pc.o[0] + row_in(r) * ne;
	uint io = pc.o[1] + row_in(r) * nu, wo = pc.o[2] + row_in(r) * nu;
	float m = -1.0 / 0.0;
	for (uint e = tid; e < ne; e += WG)
		m = max(m, l[lo + e]);
	m = subgroupMax(m);
	if (subgroupElect())
		rv_sh[gl_SubgroupID] = m;
	barrier();
	if (tid == 0u) {
		float mx = -1.0 / 0.0;
		for (uint i = 0u; i < gl_NumSubgroups; i++)
			mx = max(mx, rv_sh[i]);
		mx_sh = mx;
	}
	barrier();
	for (uint e = tid; e < ne; e += WG)
		pe_sh[e] = exp(l[lo + e] - mx_sh);
	barrier();
	if (tid == 0u) {
		float sum = 0.0;
		for (uint e = 0u; e < ne; e++)
			sum += pe_sh[e];
		sum_sh = sum;
	}
	barrier();
	for (uint e = tid; e < ne; e += WG)
		pe_sh[e] = pe_sh[e] / sum_sh;
	barrier();
	for (uint j = 0u; j < nu; j++) {
		// taken experts hold -1; probabilities are >= 0
		float bp = -2.0;
		uint bi = 0u;
		for (uint e = tid; e < ne; e += WG)
			if (pe_sh[e] > bp) {
				bp = pe_sh[e];
				bi = e;
			}
		// the subgroup's best (the lowest index among equals), then
		// thread 0 takes the best of the subgroups'
		float sm = subgroupMax(bp);
		uint si = subgroupMin(bp == sm ? bi : 0xffffffffu);
		if (subgroupElect()) {
			rv_sh[gl_SubgroupID] = sm;
			ri_sh[gl_SubgroupID] = si;
		}
		barrier();
		if (tid == 0u) {
			for (uint i = 1u; i < gl_NumSubgroups; i++)
				if (rv_sh[i] > rv_sh[0] || (rv_sh[i] == rv_sh[0] && ri_sh[i] < ri_sh[0])) {
					rv_sh[0] = rv_sh[i];
					ri_sh[0] = ri_sh[i];
				}
			uint b = ri_sh[0];
			ids[io + j] = float(b);
			pj_sh[j] = pe_sh[b];
			pe_sh[b] = -1.0;
		}
		barrier();
	}
	if (tid == 0u) {
		float tot = 0.0;
		for (uint j = 0u; j < nu; j++)
			tot += pj_sh[j];
		tot = max(tot, 6.103515625e-5);
		for (uint j = 0u; j < nu; j++)
			wt[wo + j] = pj_sh[j] / tot;
	}
}

void main()
{
	STOP_CHECK();
	uint ne = pc.p[0], nu = pc.p[1], r = row_z(), tid = gl_LocalInvocationID.x;
	if (r < row_end())
		route(ne, nu, r, tid);
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
			worku[moe_counts_at(g) + e] = cnt_sh[e];
			worku[moe_offsets_at(g, ne) + e] = s;
			cur_sh[e] = s;
			s += cnt_sh[e];
		}
		worku[g] = 0u; // the counter, for the next run
	}
	barrier();
	for (uint i = tid; i < n; i += WG) {
		uint e = uint(ids[io + i]);
		worku[moe_entries_at(g, ne) + atomicAdd(cur_sh[e], 1u)] = e0 + i;
	}
}
