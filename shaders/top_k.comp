#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// top_k: for row r (a z layer each) of n logits, the k largest, largest
// first and the lowest index first among equals, as ids (floats) in
// out[0, k), then their probabilities under the softmax of all n
// (max-subtracted) in out[k, 2k). -inf logits (masked tokens) come after
// every finite one: a row with fewer than k finite fills its slots with
// the lowest of those, at probability 0.
//
// A workgroup per row, over the vocabulary in parallel: each thread
// keeps the best of its logits (every WG-th) not yet taken; a round takes
// the workgroup's best of those (the first round's is the maximum), and
// the whole workgroup then finds that thread's next best, the best of its
// logits after the one taken. One read of the row for the candidates, one
// for the sum, and n / WG logits a round.
#define WG 256
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer L { float l[]; };
layout(binding = 1) writeonly buffer O { float o[]; };

#include "wg_argmax.glsl"

#define NONE 0xffffffffu
#define NEG_INF uintBitsToFloat(0xff800000u)

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], k = pc.p[1], r = row_z(), tid = gl_LocalInvocationID.x;
	if (r >= row_end())
		return;
	uint lo = pc.o[0] + row_in(r) * n, oo = pc.o[1] + row_in(r) * 2u * k;
	// this thread's best, in increasing i: a strict > keeps the lowest
	float bv = 0.0;
	uint bi = NONE;
	for (uint i = tid; i < n; i += WG) {
		float v = l[lo + i];
		if (better(v, i, bv, bi)) {
			bv = v;
			bi = i;
		}
	}
	float gv = bv;
	uint gi = bi;
	wg_argmax(gv, gi);
	float mx = gv, s = 0.0;
	if (mx != NEG_INF)
		for (uint i = tid; i < n; i += WG) {
			float v = l[lo + i];
			s += v == NEG_INF ? 0.0 : exp(v - mx);
		}
	float sum = wg_sum(s);
	for (uint j = 0u; j < k; j++) {
		if (j > 0u) {
			barrier(); // every thread has read the last round's best
			gv = bv;
			gi = bi;
			wg_argmax(gv, gi);
		}
		if (tid == 0u) {
			o[oo + j] = float(gi);
			o[oo + k + j] = gv == NEG_INF ? 0.0 : exp(gv - mx) / sum;
		}
		if (j + 1u == k)
			break;
		// the next best of thread t's logits (t + m WG), thread tid
		// looking at m = tid, tid + WG, ...: the best after (gv, gi)
		uint t = gi % WG;
		float nv = 0.0;
		uint ni = NONE;
		for (uint i = t + tid * WG; i < n; i += WG * WG) {
			float v = l[lo + i];
			if ((v < gv || (v == gv && i > gi)) && better(v, i, nv, ni)) {
				nv = v;
				ni = i;
			}
		}
		barrier();
		wg_argmax(nv, ni);
		if (tid == t) {
			bv = nv;
			bi = ni;
		}
	}
}
