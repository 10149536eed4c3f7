#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#include "common.glsl"
// matmul_cm: matmul.comp's product on the matrix units (tensor cores),
// through GL_NV_cooperative_matrix: y[r] = W x[r] for the pass's rows r
// (plugins/backend-vulkan/matmul.c picks it where the device has 16 x 16
// x 16 products of float16 into float32 on a subgroup of 32). A workgroup
// computes BN rows of the pass (x of the grid) by BM = 128 weight rows
// (y) with BN / 16 subgroups: SK = 32 columns at a time its threads stage
// the weights (dequantized as matmul.comp does, then rounded to float16)
// and x (rounded to float16) in shared memory, rows of SK halves and 8 of
// padding, packed 8 halves to a 16-byte store; each subgroup then
// multiplies its 64 weight rows by 32 pass rows as 4 x 2 tiles of 16 x 16,
// adding up in float32. The next step's global loads are issued before
// the current step's products. Each result tile goes through a subgroup's
// own 16 x 16 floats of shared memory to y, so that rows past row_end()
// and weight rows past m are never written.
// Rounding to float16: x and BF16 weights beyond its range (65504) are
// clamped; x after a norm lies far inside it.
// -DBN=64 (128 threads, the default) or 128 (256 threads).
//
// bindings: 0 W, 1 x, 2 y; params: k, m
#define BM 128 // MATMUL_CM_BM in plugins/backend-vulkan/matmul.c
#ifndef BN
#define BN 64 // MATMUL_CM_BN; 128: MATMUL_CM_BN_WIDE
#endif
#define WG (2 * BN)
#define BK 16 // what matmul_load.glsl reads at a time
#define SK 32 // columns per step
#define LD4 5 // uvec4s per staged row: SK + 8 halves
#define FM 4  // 16-row tiles of a subgroup's 64 weight rows
#define FN 2  // of its 32 pass rows
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer WF { float wf[]; };
layout(binding = 0) readonly buffer WF4 { vec4 wf4[]; };
layout(binding = 0) readonly buffer W16 { uint16_t w16[]; };
layout(binding = 0) readonly buffer W4 { uvec4 w4[]; };
layout(binding = 1) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer X4 { vec4 x4[]; };
layout(binding = 2) writeonly buffer Y { float y[]; };

shared uvec4 as4[BM * LD4];	 // weight row i at i * LD4, 8 halves each
shared uvec4 bs4[BN * LD4];	 // pass row j at j * LD4
shared float cs_[WG / 32 * 256]; // a result tile per subgroup

#include "matmul_load.glsl"

#define F16M fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F32M fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

uint pack2(float a, float b)
{
	return packHalf2x16(clamp(vec2(a, b), -65504.0, 65504.0));
}

// Stage a thread's run of 16 weights (step column k0) at as4[at], as4[at + 1].
void stage_w(WR w, uint at, uint k0)
{
#if defined(TYPE_F16)
	as4[at] = w.q[0]; // already float16 pairs
	as4[at + 1u] = w.q[1];
#else
	float v[BK];
	conv_w(w, k0, v);
	uvec4 lo, hi;
	[[unroll]] for (uint i = 0; i < 4u; i++) {
#if defined(TYPE_BF16)
		lo[i] = pack2(v[2u * i], v[2u * i + 1u]);
		hi[i] = pack2(v[8u + 2u * i], v[9u + 2u * i]);
#else
		lo[i] = packHalf2x16(vec2(v[2u * i], v[2u * i + 1u]));
		hi[i] = packHalf2x16(vec2(v[8u + 2u * i], v[9u + 2u * i]));
#endif
	}
	as4[at] = lo;
	as4[at + 1u] = hi;
#endif
}

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
	ws_.al = ((pc.o[0] | k) & 7u) == 0u;
	XS xs_;
	xs_.xo = pc.o[1];
	xs_.k = k;
	xs_.rend = rend;
	xs_.al = ((pc.o[1] | k) & 3u) == 0u;

	// what a thread stages per step: runs of 16 of a weight row (BM rows
	// by 2 halves: 2 per thread for BN 64, 1 for 128) and one of x (row
	// tid % BN, half tid / BN)
#if BN == 64
	uint wr0 = tid, wh0 = 0u;
#else
	uint wr0 = tid % BM, wh0 = tid / BM;
#endif
	uint xr = tid % BN, xh = tid / BN;
	WR w0 = load_w(ws_, mb + wr0, BK * wh0);
#if BN == 64
	WR w1 = load_w(ws_, mb + wr0, BK);
#endif
	vec4 xv[4];
	load_x(xs_, tb + xr, BK * xh, xv);

	uint sg = tid / 32u, lane = tid % 32u;
	uint sm = (sg % 2u) * 64u, sn = (sg / 2u) * 32u;
	F32M acc[FM][FN];
	[[unroll]] for (uint i = 0; i < FM; i++)
		[[unroll]] for (uint j = 0; j < FN; j++)
			acc[i][j] = F32M(0.0);
	for (uint k0 = 0; k0 < k; k0 += SK) {
		barrier(); // the previous step's products are done
		stage_w(w0, wr0 * LD4 + 2u * wh0, k0 + BK * wh0);
#if BN == 64
		stage_w(w1, wr0 * LD4 + 2u, k0 + BK);
#endif
		bs4[xr * LD4 + 2u * xh] = uvec4(pack2(xv[0].x, xv[0].y), pack2(xv[0].z, xv[0].w),
						pack2(xv[1].x, xv[1].y), pack2(xv[1].z, xv[1].w));
		bs4[xr * LD4 + 2u * xh + 1u] = uvec4(pack2(xv[2].x, xv[2].y), pack2(xv[2].z, xv[2].w),
						     pack2(xv[3].x, xv[3].y), pack2(xv[3].z, xv[3].w));
		barrier();
		if (k0 + SK < k) { // the next step's loads, in flight meanwhile
			w0 = load_w(ws_, mb + wr0, k0 + SK + BK * wh0);
#if BN == 64
			w1 = load_w(ws_, mb + wr0, k0 + SK + BK);
#endif
			load_x(xs_, tb + xr, k0 + SK + BK * xh, xv);
		}
		[[unroll]] for (uint kk = 0; kk < SK / 8u; kk += 2u) {
			F16M a[FM];
			F16M b[FN];
			[[unroll]] for (uint i = 0; i < FM; i++)
				coopMatLoadNV(a[i], as4, (sm + 16u * i) * LD4 + kk, LD4, false);
			// b(k, j) = x(j, k): column-major
			[[unroll]] for (uint j = 0; j < FN; j++)
				coopMatLoadNV(b[j], bs4, (sn + 16u * j) * LD4 + kk, LD4, true);
			[[unroll]] for (uint i = 0; i < FM; i++)
				[[unroll]] for (uint j = 0; j < FN; j++)
					acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
		}
	}
	// tile (i, j): weight rows mb + sm + 16 i .., pass rows tb + sn + 16 j ..;
	// stored column-major, so that a lane's consecutive elements are
	// consecutive weight rows of one pass row, as in y
	uint yo = pc.o[2];
	[[unroll]] for (uint i = 0; i < FM; i++)
		[[unroll]] for (uint j = 0; j < FN; j++) {
			coopMatStoreNV(acc[i][j], cs_, sg * 256u, 16u, true);
			subgroupMemoryBarrierShared();
			subgroupBarrier();
			[[unroll]] for (uint e = 0; e < 8u; e++) {
				uint idx = lane + 32u * e;
				uint r = tb + sn + 16u * j + idx / 16u;
				uint c = mb + sm + 16u * i + idx % 16u;
				if (r < rend && c < m)
					y[yo + row_in(r) * m + c] = cs_[sg * 256u + idx];
			}
			subgroupBarrier();
		}
}
