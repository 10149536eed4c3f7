#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// rmsnorm: out = w * x / sqrt(mean(x^2) + eps), one workgroup per row
// (a z layer each); out may
// alias x (each thread reads x[i] before it writes out[i], after the
// reduction's barrier).
// -DADD (rmsnorm then add, fused; Gemma's post-norms): out = out +
// w * x / sqrt(...), the sum rounded as add.comp rounds it; out must not
// alias x.
// -DADD -DNORM2 (Gemma's last post-norm, its add and the output norm):
// as -DADD, then out2 = w2 * out / sqrt(mean(out^2) + eps2) as this
// shader would compute it from out, with out2 at binding 4, w2 at 3, eps2
// p2; the row held in registers (n <= WG * PER: the host checks). p3 1:
// out2 is out (in place): out2 only is written, through out's binding.
#define WG 256
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer W { float w[]; };
#if defined(ADD)
layout(binding = 2) buffer O { float o[]; };
#if defined(NORM2)
layout(binding = 3) readonly buffer W2 { float w2[]; };
layout(binding = 4) writeonly buffer O2 { float o2[]; };
#endif
#else
layout(binding = 2) writeonly buffer O { float o[]; };
#endif

// Each thread's values of a chunk of WG * PER are loaded before any is
// used, so that a row of a few thousand costs one load latency, not PER
// in a row; summed in the order a plain loop would (i = tid, tid + WG,
// ...), so the result does not depend on PER.
#define PER 16

void main()
{
	STOP_CHECK();
	uint n = pc.p[0], r = row_z();
	if (r >= row_end())
		return;
	uint tid = gl_LocalInvocationID.x;
	uint xo = pc.o[0] + row_in(r) * n, oo = pc.o[2] + row_in(r) * n;
	float v[PER], ss = 0.0;
	for (uint c0 = 0; c0 < n; c0 += WG * PER) {
		[[unroll]] for (uint j = 0; j < PER; j++) {
			uint i = c0 + tid + j * WG;
			v[j] = i < n ? x[xo + i] : 0.0;
		}
		[[unroll]] for (uint j = 0; j < PER; j++)
			ss += v[j] * v[j];
	}
	ss = wg_sum(ss);
	float scale = 1.0 / sqrt(ss / float(n) + pflt(1));
	bool held = n <= WG * PER; // v holds the row (x may alias out)
	for (uint c0 = 0; c0 < n; c0 += WG * PER) {
		float wv[PER], ov[PER];
		[[unroll]] for (uint j = 0; j < PER; j++) {
			uint i = c0 + tid + j * WG;
			if (i < n) {
				if (!held)
					v[j] = x[xo + i];
				wv[j] = w[pc.o[1] + i];
#if defined(ADD)
				ov[j] = o[oo + i];
#endif
			}
		}
		[[unroll]] for (uint j = 0; j < PER; j++) {
			uint i = c0 + tid + j * WG;
			if (i >= n)
				continue;
			precise float y = wv[j] * (scale * v[j]);
#if defined(ADD)
			precise float sum = ov[j] + y;
#if defined(NORM2)
			v[j] = sum;
			if (pc.p[3] == 0u)
				o[oo + i] = sum;
#else
			o[oo + i] = sum;
#endif
#else
			o[oo + i] = y;
#endif
		}
	}
#if defined(NORM2)
	// v holds out's row (n <= WG * PER), in rmsnorm's order of values
	uint o2o = pc.o[4] + row_in(r) * n;
	float wv2[PER], ss2 = 0.0;
	[[unroll]] for (uint j = 0; j < PER; j++) {
		uint i = tid + j * WG;
		if (i < n) {
			wv2[j] = w2[pc.o[3] + i];
			ss2 += v[j] * v[j];
		}
	}
	ss2 = wg_sum(ss2);
	float scale2 = 1.0 / sqrt(ss2 / float(n) + pflt(2));
	[[unroll]] for (uint j = 0; j < PER; j++) {
		uint i = tid + j * WG;
		if (i >= n)
			continue;
		precise float y = wv2[j] * (scale2 * v[j]);
		if (pc.p[3] != 0u)
			o[oo + i] = y;
		else
			o2[o2o + i] = y;
	}
#endif
}
