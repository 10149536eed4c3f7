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
// computes BN rows of the pass (x of the grid) by BM weight rows (y), its
// subgroups a grid of BM / (16 FM) by BN / (16 FN), each FM x FN tiles of
// 16 x 16. SK = 32 columns at a time its threads stage the weights
// (dequantized as matmul.comp does, or Q4_0/Q8_0 in float16 pairs, then
// rounded to float16) and x (rounded to float16) in shared memory, rows of
// SK halves and 8 of padding, 8 halves to a 16-byte store; each subgroup
// then multiplies its tiles, adding up in float32. Two buffers: a step's
// loads are issued before the products of the step two before, staged
// after the products of the step before into the buffer those did not
// read, one barrier per step. Each result tile goes through a subgroup's
// own 16 x 16 floats of shared memory (the weight buffers, free by then)
// to y, so that rows past row_end() and weight rows past m are never
// written.
// Rounding to float16: x and BF16 weights beyond its range (65504) are
// clamped; x after a norm lies far inside it.
// The tile is specialized (matmul.c): BM, BN, FM, FN; the workgroup has
// BM BN / (8 FM FN) threads.
//
// bindings: 0 W, 1 x, 2 y; params: k, m
//
// GROUPED: a batched pass's expert products grouped by expert
// (plugins/backend-vulkan/moe.c): moe_matvec's bindings (0 W [k x m x
// n_expert], 1 x, 2 ids, 3 y) and params (k, m, n_expert, n_used); the z
// of the grid is the expert e, its pass rows are e's entries as moe_route
// listed them in its work area at aux[0] (row within the bindings times
// n_used, plus the slot), x being the entry's row (or, with aux[1], its
// slot of n_used x's) and y its slot.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint FM = 4; // a subgroup's 16 x 16 tiles
layout(constant_id = 4) const uint FN = 2;
layout(constant_id = 5) const uint SK = 32; // columns per step
#define BK 16 // what matmul_load.glsl reads at a time
const uint WG = BM * BN / (8u * FM * FN); // local_size_x: constant 0
const uint SGM = BM / (16u * FM); // subgroups along the weight rows
const uint NR = SK / 16u;	      // runs of 16 per staged row
const uint NWU = (BM * NR + WG - 1u) / WG; // weight runs a thread stages
const uint NXV = (BN * SK / 4u + WG - 1u) / WG; // vec4s of x
const uint LD4 = SK / 8u + 1u; // uvec4s per staged row: SK + 8 halves
layout(binding = 0) readonly buffer WF { float wf[]; };
layout(binding = 0) readonly buffer WF4 { vec4 wf4[]; };
layout(binding = 0) readonly buffer W16 { uint16_t w16[]; };
layout(binding = 0) readonly buffer W4 { uvec4 w4[]; };
layout(binding = 1) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer X4 { vec4 x4[]; };
#ifdef GROUPED
layout(binding = 3) writeonly buffer Y { float y[]; };
#else
layout(binding = 2) writeonly buffer Y { float y[]; };
#endif

shared uvec4 as4[2u * BM * LD4]; // two buffers: weight row i at i * LD4
shared uvec4 bs4[2u * BN * LD4]; // pass row j at j * LD4

#include "matmul_load.glsl"

#define F16M fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F32M fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

uint pack2(float a, float b)
{
	return packHalf2x16(clamp(vec2(a, b), -65504.0, 65504.0));
}

// Stage a thread's run of 16 weights (step column k0) at as4[at], as4[at + 1].
// Within each group of 4 columns the halves are stored in the order 0, 2,
// 1, 3 (x likewise, so the products are the same): the pairs a 32-bit
// word of 4 bytes or 8 nibbles gives with one mask. Q4_0 and Q8_0 are
// dequantized in float16 pairs, exactly as in float and rounded once:
// 0x6400 | n is the float16 1024 + n.
void stage_w(WR w, uint at, uint k0)
{
	uint o[8];
#if defined(TYPE_Q4_0) || defined(TYPE_Q8_0)
	f16vec2 d2 = f16vec2(unpackFloat2x16(w.d).x);
#if defined(TYPE_Q4_0)
	const uint mask = 0x000f000fu, flip = 0u;
	const f16vec2 bias = f16vec2(1032.0); // 1024 + 8
	uint sh = 4u * ((k0 / 16u) % 2u); // the step's nibbles of each byte
#else
	const uint mask = 0x00ff00ffu, flip = 0x00800080u; // int8 + 128
	const f16vec2 bias = f16vec2(1152.0);		   // 1024 + 128
	const uint sh = 0u;
#endif
	[[unroll]] for (uint i = 0; i < 4u; i++) {
		uint q = w.q[i] >> sh;
		uint p0 = ((q & mask) ^ flip) | 0x64006400u;
		uint p1 = (((q >> 8) & mask) ^ flip) | 0x64006400u;
		o[2u * i] = packFloat2x16((unpackFloat2x16(p0) - bias) * d2);
		o[2u * i + 1u] = packFloat2x16((unpackFloat2x16(p1) - bias) * d2);
	}
#elif defined(TYPE_F16)
	[[unroll]] for (uint j = 0; j < 4u; j++) { // words 2j, 2j + 1: a group
		uint a = w.q[j / 2u][2u * (j % 2u)], b = w.q[j / 2u][2u * (j % 2u) + 1u];
		o[2u * j] = (a & 0xffffu) | (b << 16);
		o[2u * j + 1u] = (a >> 16) | (b & 0xffff0000u);
	}
#else
	float v[BK];
	conv_w(w, k0, v);
	[[unroll]] for (uint j = 0; j < 4u; j++) {
#if defined(TYPE_BF16)
		o[2u * j] = pack2(v[4u * j], v[4u * j + 2u]);
		o[2u * j + 1u] = pack2(v[4u * j + 1u], v[4u * j + 3u]);
#else
		o[2u * j] = packHalf2x16(vec2(v[4u * j], v[4u * j + 2u]));
		o[2u * j + 1u] = packHalf2x16(vec2(v[4u * j + 1u], v[4u * j + 3u]));
#endif
	}
#endif
	as4[at] = uvec4(o[0], o[1], o[2], o[3]);
	as4[at + 1u] = uvec4(o[4], o[5], o[6], o[7]);
}

// The first column of weight run u (row u / NR) in the step at k0.
uint k0_of(uint k0, uint u)
{
	return k0 + BK * (u % NR);
}

#ifdef GROUPED
#include "moe_groups.glsl"
// the expert's entries: its list in the work area (from word ent0)
uint ent0, nu_g;
#endif

// Where pass row `row` of the tile sits in x's and y's rows.
uint x_row(uint row)
{
#ifdef GROUPED
	uint ent = worku[ent0 + row];
	return pc.aux[1] != 0u ? ent : ent / nu_g;
#else
	return row_in(row);
#endif
}

uint y_row(uint row)
{
#ifdef GROUPED
	return worku[ent0 + row];
#else
	return row_in(row);
#endif
}

// vec4 v of the step at k0 of the tile's x rows from tb: row v / (SK / 4),
// columns 4 (v % (SK / 4)) ..; zeros past the tile, the run's rows and k.
vec4 load_x4(XS s, uint tb, uint k0, uint v)
{
	uint row = tb + v / (SK / 4u), c = k0 + 4u * (v % (SK / 4u));
	if (v >= BN * SK / 4u || row >= s.rend || c >= s.k)
		return vec4(0.0);
	uint i = s.xo + x_row(row) * s.k + c;
	if (s.al && c + 4u <= s.k)
		return x4[i / 4u];
	vec4 r = vec4(0.0);
	[[unroll]] for (uint e = 0; e < 4u; e++)
		if (c + e < s.k)
			r[e] = x[i + e];
	return r;
}

// Stage a thread's runs of the step at k0 (as loaded into wv, xv) into
// buffer buf.
void stage(WR wv[NWU], vec4 xv[NXV], uint tid, uint k0, uint buf)
{
	[[unroll]] for (uint i = 0; i < NWU; i++) {
		uint u = tid + WG * i;
		if (u < NR * BM)
			stage_w(wv[i], buf * BM * LD4 + (u / NR) * LD4 + 2u * (u % NR),
				k0_of(k0, u));
	}
	[[unroll]] for (uint i = 0; i < NXV; i++) {
		uint v = tid + WG * i;
		if (v < BN * SK / 4u) {
			// vec4 c of the row: halves 4c .. 4c + 3 (in the order
			// 0, 2, 1, 3), in uvec4 c / 2 of the row, components 2 (c
			// % 2) and + 1
			uint c = v % (SK / 4u);
			uint at = buf * BN * LD4 + (v / (SK / 4u)) * LD4 + c / 2u;
			uint h = 2u * (c % 2u);
			bs4[at][h] = pack2(xv[i].x, xv[i].z);
			bs4[at][h + 1u] = pack2(xv[i].y, xv[i].w);
		}
	}
}

void main()
{
	STOP_CHECK();
	uint k = pc.p[0], m = pc.p[1];
#ifdef GROUPED
	uint ne = pc.p[2], e = gl_WorkGroupID.z, g = pc.aux[0];
	nu_g = pc.p[3];
	ent0 = moe_entries_at(g, ne) + worku[moe_offsets_at(g, ne) + e];
	uint rend = worku[moe_counts_at(g) + e], wr0 = e * m;
	uint tb = gl_WorkGroupID.x * BN, mb = gl_WorkGroupID.y * BM;
#else
	uint rend = row_end(), wr0 = 0u;
	uint tb = row_first() + gl_WorkGroupID.x * BN, mb = gl_WorkGroupID.y * BM;
#endif
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
	ws_.m = wr0 + m; // rows of the expert's matrix (GROUPED), else of W
	ws_.al = ((pc.o[0] | k) & 7u) == 0u;
	XS xs_;
	xs_.xo = pc.o[1];
	xs_.k = k;
	xs_.rend = rend;
	xs_.al = ((pc.o[1] | k) & 3u) == 0u;

	// what a thread stages per step: run u = tid + WG i of the weights
	// (row u / NR, its run u % NR: the lanes of a subgroup read a few
	// rows' consecutive runs) for u < NR BM, and vec4 v = tid + WG i of
	// x (row v / (SK / 4), its vec4 v % (SK / 4): whole 128-byte lines)
	// for v < BN SK / 4. Two sets of them in registers (p, q), so that a
	// step's loads are issued two steps before its products.
	WR wp[NWU], wq[NWU];
	vec4 xp[NXV], xq[NXV];
#define LOADS(W, X, K0)                                                        \
	[[unroll]] for (uint i = 0; i < NWU; i++) {                            \
		uint u = tid + WG * i;                                         \
		if (u < NR * BM)                                               \
			W[i] = load_w(ws_, wr0 + mb + u / NR, k0_of(K0, u));   \
	}                                                                      \
	[[unroll]] for (uint i = 0; i < NXV; i++)                              \
		X[i] = load_x4(xs_, tb, K0, tid + WG * i);
	// the products of the step in buffer BUF
#define PRODUCTS(BUF)                                                          \
	[[unroll]] for (uint kk = 0; kk < SK / 8u; kk += 2u) {                 \
		F16M a[FM];                                                    \
		F16M b[FN];                                                    \
		[[unroll]] for (uint i = 0; i < FM; i++)                       \
			coopMatLoadNV(a[i], as4, (BUF) * BM * LD4 + (sm + 16u * i) * LD4 + kk, \
				      LD4, false);                             \
		/* b(k, j) = x(j, k): column-major */                          \
		[[unroll]] for (uint j = 0; j < FN; j++)                       \
			coopMatLoadNV(b[j], bs4, (BUF) * BN * LD4 + (sn + 16u * j) * LD4 + kk, \
				      LD4, true);                              \
		[[unroll]] for (uint i = 0; i < FM; i++)                       \
			[[unroll]] for (uint j = 0; j < FN; j++)               \
				acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]); \
	}

	uint sg = tid / 32u, lane = tid % 32u;
	uint sm = (sg % SGM) * (16u * FM), sn = (sg / SGM) * (16u * FN);
	F32M acc[FM][FN];
	[[unroll]] for (uint i = 0; i < FM; i++)
		[[unroll]] for (uint j = 0; j < FN; j++)
			acc[i][j] = F32M(0.0);
	// two buffers: step s's products read buffer s % 2 while step s + 1,
	// loaded before step s - 1's products, is staged into the other
	LOADS(wp, xp, 0u)
	stage(wp, xp, tid, 0u, 0u);
	if (SK < k) {
		LOADS(wp, xp, SK)
	}
	barrier();
	for (uint k0 = 0; k0 < k; k0 += 2u * SK) {
		// buffer 0: step k0; p: step k0 + SK
		if (k0 + 2u * SK < k) {
			LOADS(wq, xq, k0 + 2u * SK)
		}
		PRODUCTS(0u)
		if (k0 + SK >= k)
			break;
		stage(wp, xp, tid, k0 + SK, 1u);
		barrier();
		// buffer 1: step k0 + SK; q: step k0 + 2 SK
		if (k0 + 3u * SK < k) {
			LOADS(wp, xp, k0 + 3u * SK)
		}
		PRODUCTS(1u)
		if (k0 + 2u * SK < k)
			stage(wq, xq, tid, k0 + 2u * SK, 0u);
		barrier();
	}
	barrier(); // (after a break) every subgroup's products are done
	// tile (i, j): weight rows mb + sm + 16 i .., pass rows tb + sn + 16 j ..;
	// stored column-major, so that a lane's consecutive elements are
	// consecutive weight rows of one pass row, as in y
	// (the loop's last barrier: the weight buffers are free; a subgroup's
	// 16 x 16 floats are 64 uvec4s of them)
#ifdef GROUPED
	uint yo = pc.o[3], cs = sg * 64u;
#else
	uint yo = pc.o[2], cs = sg * 64u;
#endif
	[[unroll]] for (uint i = 0; i < FM; i++)
		[[unroll]] for (uint j = 0; j < FN; j++) {
			coopMatStoreNV(acc[i][j], as4, cs, 4u, true);
			subgroupMemoryBarrierShared();
			subgroupBarrier();
			[[unroll]] for (uint e = 0; e < 8u; e++) {
				uint idx = lane + 32u * e;
				uint r = tb + sn + 16u * j + idx / 16u;
				uint c = mb + sm + 16u * i + idx % 16u;
				if (r < rend && c < m)
					y[yo + y_row(r) * m + c] = uintBitsToFloat(as4[cs + idx / 4u][idx % 4u]);
			}
			subgroupBarrier();
		}
}
