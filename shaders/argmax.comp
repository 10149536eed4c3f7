#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// argmax: token_ids[pos + 1] = the index of the largest logit, the lowest
// on ties; one workgroup.
#define WG 512
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer L { float l[]; };
layout(binding = 1) buffer I { int ids[]; };

shared float best_v[WG];
shared uint best_i[WG];

void main()
{
	uint n = pc.p[0];
	uint tid = gl_LocalInvocationID.x;
	float bv = 0.0;
	uint bi = 0xffffffffu;
	for (uint i = tid; i < n; i += WG) {
		float v = l[pc.o[0] + i];
		if (bi == 0xffffffffu || v > bv) {
			bv = v;
			bi = i;
		}
	}
	best_v[tid] = bv;
	best_i[tid] = bi;
	barrier();
	[[unroll]] for (uint s = WG / 2; s > 0; s >>= 1) {
		if (tid < s) {
			float ov = best_v[tid + s];
			uint oi = best_i[tid + s];
			float cv = best_v[tid];
			uint ci = best_i[tid];
			if (oi != 0xffffffffu &&
			    (ci == 0xffffffffu || ov > cv || (ov == cv && oi < ci))) {
				best_v[tid] = ov;
				best_i[tid] = oi;
			}
		}
		barrier();
	}
	if (tid == 0)
		ids[pc.o[1] + cur_pos() + 1] = int(best_i[0]);
}
