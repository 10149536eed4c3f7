#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_KHR_memory_scope_semantics : require
#include "common.glsl"
// matvec_few_cm: a batched table's Q4_0 or Q8_0 matvec over a pass of at
// most 16 rows (verification of drafts, the sessions of a group) on the
// matrix units in int8, for passes of at least few_mma rows where
// matvec_fused.comp's XG kernel runs the smaller ones
// (plugins/backend-vulkan/fusion.c, few_rows_cm; batch.c picks the pass):
// x is int8 in memory as quantize_rows.comp's XQ leaves it, and a
// workgroup takes 16 rows of W against the 16 rows of x there, so that
// each weight is loaded once for all the pass's rows and the products
// are 16 x 16 x 32 int8 tiles (GL_NV_integer_cooperative_matrix) rather
// than a lane's packed dot products per row of x, whose cost grows with
// the rows (H200, doc/vulkan.md: slower at 8 rows, faster at 15).
//
// The workgroup's NSG subgroups take every NSG-th step of SB blocks
// along k. A step's loads are issued a step ahead of its products: each
// lane loads U units (16 bytes) of quants of one row of W, x's int8s of
// the same blocks for one row of x, and both rows' block scales, and
// writes them (Q4_0's nibbles as int8 n - 8) into the subgroup's own
// tiles in shared memory (a subgroup barrier, no workgroup one): a
// matrix load of x from the storage buffer itself ran about as slow as
// the staged one with no loads of W. Each block's int32 tile is exact; a
// lane adds its elements times the W row's and the x row's scales, d_w
// d_x s as matvec_fused's wdot makes each block's term, into float sums
// in the result tiles' layout (mma.sync's, as matmul_q8cm.comp relies
// on: lane l holds rows l / 4 and l / 4 + 8, columns 2 (l % 4), + 1, + 8,
// + 9). The subgroups' sums meet in shared memory and are added in a
// fixed order: the one-row kernel's terms, added in another order (not
// bit for bit its sums).
//
// x's 16 rows are read from row 0 of binding 0 (the pass's first row,
// row_base()), so that no read passes the 16 rows the buffer holds; a
// column is stored only for a pass row the dispatch computes.
//
// ADD 1: y0 is the residual of the add after the matvec (y0 = y0 + W x,
// add.comp's sum), as matvec_fused's F_ADD with XG.
//
// bindings (matvec_fused's): 0 x as int8 (uvec4 o0 on, row R at R k / 16;
// the blocks' (d, -8 sum) uvec2 p14 on, row R at R k / 32), 2 W in the
// GPU layout (offset o2 in 16-bit words, scales at word p7), 5 y (o5);
// params: p0 k (a multiple of 32), p2 rows of W. Specialization: 0 the
// workgroup size (32 NSG), 1 ADD, 2 NSG, 3 U (at least 2: the sums reuse
// the tiles' memory).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ADD = 0u;
layout(constant_id = 2) const uint NSG = 4u;
layout(constant_id = 3) const uint U = 2u; // units of W a lane loads a step
#if defined(TYPE_Q8_0)
const uint SB = U; // blocks of a step
#elif defined(TYPE_Q4_0)
const uint SB = 2u * U;
#else
#error "matvec_few_cm.comp: define TYPE_Q4_0 or TYPE_Q8_0"
#endif
const uint LDA = 3u; // uvec4s per staged row of a block: 32 bytes + 16

layout(binding = 0) readonly buffer XG4 { uvec4 xg4[]; };
layout(binding = 0) readonly buffer XG2 { uvec2 xg2[]; };
layout(binding = 2) readonly buffer W4 { uvec4 w4[]; };
layout(binding = 2) readonly buffer W16 { uint16_t w16[]; };
layout(binding = 5) buffer Y0 { float y0[]; };

// each subgroup's tiles of a step, W's (after the loop, the subgroups'
// sums, column-major: 256 floats each) and x's, their rows' block scales
shared uvec4 aq[NSG * SB * 16u * LDA];
shared uvec4 bq[NSG * SB * 16u * LDA];
shared float dws[NSG * SB * 16u];
shared float dxs[NSG * SB * 16u];

#define I8A icoopmatNV<8, gl_ScopeSubgroup, 16, 32>
#define I8B icoopmatNV<8, gl_ScopeSubgroup, 32, 16>
#define I32M icoopmatNV<32, gl_ScopeSubgroup, 16, 16>

// Q4_0 nibbles 0..15 of four bytes to the int8s n - 8 (matmul_q8cm's)
uint nib8(uint q)
{
	return ((q & 0x0f0f0f0fu) + 0x78787878u) ^ 0x80808080u;
}

void main()
{
	STOP_CHECK();
	uint k = pc.p[0], m = pc.p[2], nb = k / 32u;
	uint p0 = row_first(), pe = row_end(), m0 = wg_id() * 16u;
	if (p0 >= pe || m0 >= m)
		return;
	uint tid = gl_LocalInvocationID.x, sg = tid / 32u, lane = tid % 32u;
	// the lane's staging: row m0 + ri of W (the last one past m), block
	// hi of the step (Q8_0: half hi of its block)
	uint ri = lane % 16u, hi = lane / 16u;
	uint wrow = min(m0 + ri, m - 1u);
	uint wo = pc.o[2] / 8u, so = pc.p[7];
	uint xo = pc.o[0], xs = pc.p[14];
	// the lane's elements of a result tile: rows g, g + 8; columns c2, +
	// 1, + 8, + 9
	uint g = lane / 4u, c2 = 2u * (lane % 4u);
	uint at = sg * SB * 16u * LDA, as = sg * SB * 16u;
	float acc[8];
	[[unroll]] for (uint e = 0; e < 8u; e++)
		acc[e] = 0.0;
	// a step's loads, issued a step ahead of its products: load u of the
	// lane, 16 bytes of quants of row wrow (Q4_0: block b0 + 2 u + hi;
	// Q8_0: half hi of block b0 + u), and its block's scales of that row
	// and of x's row ri
	uvec4 q[U];
	float dw[U], dx[U];
#if defined(TYPE_Q8_0)
	uvec4 xq[U];
#define BLK(B0, u) min((B0) + (u), nb - 1u)
#define LOADQ(b) w4[wo + wrow * (k / 16u) + 2u * (b) + hi]
#define LOADX(u, b) xq[u] = xg4[xo + ri * (k / 16u) + 2u * (b) + hi]
#define TILE_OF(u) (u)
#else
	uvec4 xq[U][2];
#define BLK(B0, u) min((B0) + 2u * (u) + hi, nb - 1u)
#define LOADQ(b) w4[wo + wrow * nb + (b)]
#define LOADX(u, b)                                                            \
	xq[u][0] = xg4[xo + ri * (k / 16u) + 2u * (b)];                       \
	xq[u][1] = xg4[xo + ri * (k / 16u) + 2u * (b) + 1u]
#define TILE_OF(u) (2u * (u) + hi)
#endif
#define LOAD_STEP(B0)                                                          \
	[[unroll]] for (uint u = 0; u < U; u++) {                              \
		uint b = BLK(B0, u);                                           \
		q[u] = LOADQ(b);                                               \
		LOADX(u, b);                                                   \
		dw[u] = half_f(uint(w16[so + wrow * nb + b]));                 \
		dx[u] = uintBitsToFloat(xg2[xs + ri * nb + b].x);              \
	}
	uint b0 = sg * SB;
	if (b0 < nb)
		LOAD_STEP(b0)
	for (; b0 < nb; b0 += NSG * SB) {
		[[unroll]] for (uint u = 0; u < U; u++) {
			uint t = TILE_OF(u), r = at + (t * 16u + ri) * LDA;
#if defined(TYPE_Q8_0)
			aq[r + hi] = q[u];
			bq[r + hi] = xq[u];
#else
			aq[r] = uvec4(nib8(q[u].x), nib8(q[u].y), nib8(q[u].z), nib8(q[u].w));
			aq[r + 1u] = uvec4(nib8(q[u].x >> 4), nib8(q[u].y >> 4),
					   nib8(q[u].z >> 4), nib8(q[u].w >> 4));
			bq[r] = xq[u][0];
			bq[r + 1u] = xq[u][1];
#endif
			dws[as + t * 16u + ri] = dw[u];
			dxs[as + t * 16u + ri] = dx[u];
		}
		subgroupMemoryBarrierShared();
		subgroupBarrier();
		if (b0 + NSG * SB < nb)
			LOAD_STEP(b0 + NSG * SB)
		[[unroll]] for (uint j = 0; j < SB; j++) {
			if (b0 + j >= nb)
				break;
			I8A a;
			I8B x;
			coopMatLoadNV(x, bq, at + j * 16u * LDA, LDA, true);
			coopMatLoadNV(a, aq, at + j * 16u * LDA, LDA, false);
			I32M c = coopMatMulAddNV(a, x, I32M(0));
			uint sj = as + j * 16u;
			float w0 = dws[sj + g], w1 = dws[sj + g + 8u];
			float x0 = dxs[sj + c2], x1 = dxs[sj + c2 + 1u];
			float x2 = dxs[sj + c2 + 8u], x3 = dxs[sj + c2 + 9u];
			acc[0] += w0 * x0 * float(c[0]);
			acc[1] += w0 * x1 * float(c[1]);
			acc[2] += w0 * x2 * float(c[2]);
			acc[3] += w0 * x3 * float(c[3]);
			acc[4] += w1 * x0 * float(c[4]);
			acc[5] += w1 * x1 * float(c[5]);
			acc[6] += w1 * x2 * float(c[6]);
			acc[7] += w1 * x3 * float(c[7]);
		}
		subgroupBarrier(); // the tiles are used up
	}
	barrier(); // every subgroup's tiles: aq takes the sums
	// the subgroups' sums: element e at row g (+ 8 for e >= 4), column c2
	// + e % 2 (+ 8 for e % 4 >= 2)
	[[unroll]] for (uint e = 0; e < 8u; e++) {
		uint row = g + 8u * (e / 4u), col = c2 + (e % 2u) + 8u * ((e / 2u) % 2u);
		uint o = sg * 256u + col * 16u + row;
		aq[o / 4u][o % 4u] = floatBitsToUint(acc[e]);
	}
	barrier();
	for (uint o = tid; o < 256u; o += NSG * 32u) {
		uint r = row_base() + o / 16u, wr = m0 + o % 16u;
		if (r < p0 || r >= pe || wr >= m)
			continue;
		float v = uintBitsToFloat(aq[o / 4u][o % 4u]);
		for (uint s = 1u; s < NSG; s++) {
			uint i = s * 256u + o;
			v += uintBitsToFloat(aq[i / 4u][i % 4u]);
		}
		uint y = pc.o[5] + row_in(r) * m + wr;
		y0[y] = ADD != 0u ? y0[y] + v : v;
	}
}
