#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// matmul: a batched table's matvec, y[r] = W x[r] for the pass's rows r
// (plugins/backend-vulkan/matmul.c), as a tiled matrix product. A
// workgroup of 64 threads computes BN rows of the pass (x of the grid) by
// BM weight rows (y): BK columns at a time it stages the tile's weights,
// dequantized to float, and its x in shared memory (k-major; a thread
// stages one weight row and one row of x), then each thread adds up 8
// weight rows by 8 pass rows; each step's global loads are issued before
// the previous step's products, so that they are in flight meanwhile.
// Each weight is read from memory once per BN rows of the pass. Rows of
// the pass past row_end() (the run's) are neither read nor written.
// Built once per weight type (-DTYPE_F32 ...); -DREPACK: Q8_0/Q4_0 in the
// GPU layout (repack.comp): block b's quants at b * 16 (or 8) 16-bit
// words, its scale at aux1 + b.
//
// bindings: 0 W, 1 x, 2 y; params: k, m
// The body (the products from shared memory) is plain FMAs on floats, so
// that a variant on matrix units can replace it and keep the staging.
#define BM 64 // MATMUL_BM in plugins/backend-vulkan/matmul.c
#define BN 64 // MATMUL_BN
#define BK 16 // half a Q8_0/Q4_0 block
#define WG 64
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer WF { float wf[]; };
layout(binding = 0) readonly buffer WF4 { vec4 wf4[]; };
layout(binding = 0) readonly buffer W16 { uint16_t w16[]; };
layout(binding = 0) readonly buffer W4 { uvec4 w4[]; };
layout(binding = 1) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer X4 { vec4 x4[]; };
layout(binding = 2) writeonly buffer Y { float y[]; };

// column kk of the tile: ws[kk][i] holds weight rows 4i .. 4i + 3, xs[kk][i]
// pass rows 4i .. 4i + 3 (a vec4 of padding: the stages of a column by
// the 32 threads of a subgroup fall on distinct banks)
shared vec4 ws[BK][BM / 4 + 1];
shared vec4 xs[BK][BN / 4 + 1];

#include "matmul_load.glsl"

void main()
{
	STOP_CHECK();
	uint k = pc.p[0], m = pc.p[1];
	uint rend = row_end();
	uint tb = row_first() + gl_WorkGroupID.x * BN, mb = gl_WorkGroupID.y * BM;
	if (tb >= rend)
		return;
	uint tid = gl_LocalInvocationID.x;
#if defined(KQ_IQ4_TABLE)
	if (tid < 16u)
		iq4_sh[tid] = float(iq4_value(tid));
	barrier();
#endif
	WS ws_;
	ws_.wo = pc.o[0];
	ws_.k = k;
	ws_.m = m;
#if defined(TYPE_F32)
	ws_.al = ((pc.o[0] | k) & 3u) == 0u;
#else
	ws_.al = ((pc.o[0] | k) & 7u) == 0u;
#endif
	XS xs_;
	xs_.xo = pc.o[1];
	xs_.k = k;
	xs_.rend = rend;
	xs_.al = ((pc.o[1] | k) & 3u) == 0u;
	// the outputs it adds up: weight rows 4 tm .. + 3 and 32 + 4 tm .. + 3
	// by pass rows 4 tn .. + 3 and 32 + 4 tn .. + 3; the 32 lanes of a
	// subgroup read 8 vec4s of weights and 4 of x per column
	uint tm = tid % 8u, tn = tid / 8u;

	WR wr = load_w(ws_, mb + tid, 0u);
	vec4 xv[4];
	load_x(xs_, tb + tid, 0u, xv);
	vec4 acc[16];
	[[unroll]] for (uint j = 0; j < 16u; j++)
		acc[j] = vec4(0.0);
	for (uint k0 = 0; k0 < k; k0 += BK) {
		barrier(); // the previous step's products are done
		float wv[BK];
		conv_w(wr, k0, wv);
		[[unroll]] for (uint e = 0; e < BK; e++)
			ws[e][tid >> 2][tid & 3u] = wv[e];
		[[unroll]] for (uint e = 0; e < BK; e++)
			xs[e][tid >> 2][tid & 3u] = xv[e / 4u][e % 4u];
		barrier();
		if (k0 + BK < k) { // the next step's loads, in flight meanwhile
			wr = load_w(ws_, mb + tid, k0 + BK);
			load_x(xs_, tb + tid, k0 + BK, xv);
		}
		[[unroll]] for (uint kk = 0; kk < BK; kk++) {
			vec4 a0 = ws[kk][tm], a1 = ws[kk][8u + tm];
			vec4 b0 = xs[kk][tn], b1 = xs[kk][8u + tn];
			[[unroll]] for (uint j = 0; j < 4u; j++) {
				acc[j] += a0 * b0[j];
				acc[4u + j] += a1 * b0[j];
				acc[8u + j] += a0 * b1[j];
				acc[12u + j] += a1 * b1[j];
			}
		}
	}
	uint yo = pc.o[2];
	[[unroll]] for (uint hn = 0; hn < 2u; hn++)
		[[unroll]] for (uint j = 0; j < 4u; j++) {
			uint r = tb + 32u * hn + 4u * tn + j;
			if (r >= rend)
				continue;
			[[unroll]] for (uint hm = 0; hm < 2u; hm++)
				[[unroll]] for (uint c = 0; c < 4u; c++) {
					uint i = mb + 32u * hm + 4u * tm + c;
					if (i < m)
						y[yo + row_in(r) * m + i] = acc[8u * hn + 4u * hm + j][c];
				}
		}
}
