#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// argmax: ids[at_out(r)] = the index of the largest logit of row r (a z
// layer each), the lowest on ties: token_ids[pos + 1] in a one-row table,
// the row outputs' slot r in a batched one. Two stages in one dispatch:
// each workgroup reduces CHUNK logits and leaves (value, index) in the
// work buffer (a region per row); the last workgroup of the row to finish
// (a counter, reset by it) reduces those. With early exit on (meta
// stop_on), an end-of-generation token (p7 ids in p8..p15) sets the stop
// word, and the commands of the run's later tokens return at once.
//
// -DGUMBEL: the Vulkan backend's fusion of sample_gumbel and the argmax
// after it (plugins/backend-vulkan/backend.c): the noisy value of each
// logit is computed as it is read, the logits are left as they are.
// Binding 2 is the sampler's scratch (tau), params p0..p4 sample_gumbel's,
// its patch in bits 8..11 of the mode.
#define WG 256
#define PER 8
#define CHUNK (WG * PER) // ARGMAX_CHUNK in plugins/backend-vulkan/kernels.c
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer L { float l[]; };
layout(binding = 1) buffer I { int ids[]; };
#ifdef GUMBEL
#include "gumbel.glsl"
layout(binding = 2) readonly buffer S { float scratch[]; };
#endif

#include "wg_argmax.glsl"

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], r = row_z();
	uint tid = gl_LocalInvocationID.x;
	uint g = wg_id(), nwg = (n + CHUNK - 1) / CHUNK;
	if (g >= nwg || r >= row_end())
		return;
	uint lo = pc.o[0] + row_in(r) * n;
	float bv = 0.0;
	uint bi = 0xffffffffu;
#ifdef GUMBEL
	float tau = pc.p[4] != 0u ? scratch[pc.o[2]] : uintBitsToFloat(0xff800000u);
	uint pos = at_position(1u, r);
#endif
	// increasing i, so that a strict > keeps the lowest index
	[[unroll]] for (uint j = 0; j < PER; j++) {
		uint i = g * CHUNK + j * WG + tid;
		if (i < n) {
			float v = l[lo + i];
#ifdef GUMBEL
			v = v >= tau ? gumbel_perturb(v, pflt(1), i, pos, pc.p[2], pc.p[3])
				     : uintBitsToFloat(0xff800000u);
#endif
			if (better(v, i, bv, bi)) {
				bv = v;
				bi = i;
			}
		}
	}
	wg_argmax(bv, bi);
	uint wb = pc.aux[2] + r * (2u * nwg + 1u);
	if (tid == 0) {
		workf[wb + 2 * g] = bv;
		worku[wb + 2 * g + 1] = bi;
	}
	if (!last_workgroup(wb + 2 * nwg, nwg))
		return;
	bv = 0.0;
	bi = 0xffffffffu;
	for (uint k = tid; k < nwg; k += WG) {
		float v = workf[wb + 2 * k];
		uint i = worku[wb + 2 * k + 1];
		if (better(v, i, bv, bi)) {
			bv = v;
			bi = i;
		}
	}
	wg_argmax(bv, bi);
	if (tid == 0) {
		uint tok = bi;
		ids[pc.o[1] + at_out(r)] = int(tok);
		worku[wb + 2 * nwg] = 0u;
		stop_if_eog(tok);
	}
}
