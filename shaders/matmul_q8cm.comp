#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_KHR_memory_scope_semantics : require
#include "common.glsl"
// matmul_q8cm: the batched product y[r] = W x[r] of Q4_0 and Q8_0 weights
// on the matrix units in int8 (16 x 16 x 32 products of int8 into int32,
// GL_NV_integer_cooperative_matrix), as llama.cpp's MMQ kernels do it on
// CUDA: x comes as int8 with a scale per block of 32 values
// (quantize_rows.comp, max |x| / 127, rounded to nearest), the weights'
// quants are staged as int8 (Q4_0's nibbles minus 8) with their blocks'
// scales, so that each block's product of a 16 x 16 tile is exact in
// int32 and is added into float32 sums times the two scales. A step is
// NB blocks.
// (plugins/backend-vulkan/matmul.c picks it where the device has those
// products, matmul_cm.comp otherwise.)
// Tiles as matmul_cm.comp: BM weight rows by BN rows of the pass, a grid
// of subgroups of 16 FM by 16 FN. Two buffers in shared memory; a step's
// loads are issued before the products of the step before: one step
// ahead, as a step's products take longer than its loads. Two steps
// ahead needs a second set of registers, and registers are the scarce
// thing here (128 a thread in a workgroup of 512): 8,555 against 9,266
// tokens/s one step ahead, 8B pp512 on the H200.
// The sums stay in registers in the layout of the int32 result tiles,
// which on the devices that offer these products (NVIDIA's) is the
// mma.sync one: lane l holds rows l / 4 and l / 4 + 8, columns 2 (l % 4),
// + 1, + 8 and + 9 (check_backend_vulkan compares every product with
// the reference, so another layout fails there loudly).
//
// ADD 1: the add just after the product (r += y, llama's residual) is
// done here: each sum goes to r at binding 3 (offset o[3]), plus what r
// held, y is not written (nothing reads it), and the pass leaves the add
// out (plugins/backend-vulkan/backend.c, add_sink).
//
// bindings: 0 W, 1 x as quantize_rows.comp left it, 2 y, 3 r (ADD; else
// y again); params: k, m, the word of x's scales (k a multiple of 32)
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint FM = 4;
layout(constant_id = 4) const uint FN = 1;
layout(constant_id = 5) const uint ADD = 0u;
const uint NB = 2u; // blocks of 32 columns a step
const uint SK = 32u * NB;
#define BK 16 // matmul_load.glsl's step (a half block)
const uint WG = BM * BN / (256u * FM * FN);
const uint WGT = WG * 32u;		 // threads
const uint SGM = BM / (16u * FM);	 // subgroups along the weight rows
#if defined(TYPE_Q8_0)
const uint NU = 2u * NB * BM; // weight units a step: halves of blocks
#else
const uint NU = NB * BM; // blocks
#endif
const uint NWU = (NU + WGT - 1u) / WGT; // weight units a thread stages
const uint NXU = BN * 2u * NB;		 // x's units a step: 16 int8s
const uint NXV = (NXU + WGT - 1u) / WGT; // those a thread stages
const uint LD = 2u * NB + 1u; // uvec4s per staged row: SK bytes + 16
layout(binding = 0) readonly buffer WF { float wf[]; };
layout(binding = 0) readonly buffer WF4 { vec4 wf4[]; };
layout(binding = 0) readonly buffer W16 { uint16_t w16[]; };
layout(binding = 0) readonly buffer W4 { uvec4 w4[]; };
layout(binding = 1) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer X4 { vec4 x4[]; };
layout(binding = 1) readonly buffer XQ { uvec4 xq[]; };
layout(binding = 2) writeonly buffer Y { float y[]; };
layout(binding = 3) buffer R { float rr[]; };

shared uvec4 aq[2u * BM * LD]; // two buffers of int8 weights: row i at i * LD
shared uvec4 bq[2u * BN * LD]; // and of x: pass row j at j * LD
shared float as_[2u * BM * NB]; // the weights' block scales
shared float bs_[2u * BN * NB]; // x's

#include "matmul_load.glsl"

#define I8A icoopmatNV<8, gl_ScopeSubgroup, 16, 32>
#define I8B icoopmatNV<8, gl_ScopeSubgroup, 32, 16>
#define I32M icoopmatNV<32, gl_ScopeSubgroup, 16, 16>

// Q4_0 nibbles 0..15 of four bytes to the int8s n - 8: (n + 120) ^ 128
// byte by byte (no carries: n + 120 < 256).
uint nib8(uint q)
{
	return ((q & 0x0f0f0f0fu) + 0x78787878u) ^ 0x80808080u;
}

// Unit u of the weights in a step: row u_row(u) of the tile, its block
// u_blk(u) of the step, (Q8_0) its half u % 2.
#if defined(TYPE_Q8_0)
#define U_ROW(u) ((u) / (2u * NB))
#define U_BLK(u) (((u) / 2u) % NB)
#define U_K(u) (32u * U_BLK(u) + 16u * ((u) % 2u))
#else
#define U_ROW(u) ((u) / NB)
#define U_BLK(u) ((u) % NB)
#define U_K(u) (32u * U_BLK(u))
#endif

// Stage unit u of the weights as loaded in w into buffer buf.
void stage_w(WR w, uint u, uint buf)
{
	uint row = buf * BM + U_ROW(u), blk = U_BLK(u);
	uint at = row * LD + 2u * blk;
#if defined(TYPE_Q8_0)
	aq[at + u % 2u] = w.q;
	if (u % 2u == 0u)
		as_[row * NB + blk] = half_f(w.d);
#else
	aq[at] = uvec4(nib8(w.q.x), nib8(w.q.y), nib8(w.q.z), nib8(w.q.w));
	aq[at + 1u] = uvec4(nib8(w.q.x >> 4), nib8(w.q.y >> 4), nib8(w.q.z >> 4),
			    nib8(w.q.w >> 4));
	as_[row * NB + blk] = half_f(w.d);
#endif
}

// x's unit v of the step at k0: int8s 16 p .. 16 p + 15 of the step
// (p = v % (2 NB)) of pass row tb + v / (2 NB), and for even p the scale
// of their block; zeros past the tile, the run's rows and k.
void load_xq(XS s, uint tb, uint k0, uint v, uint sw, out uvec4 q, out float d)
{
	q = uvec4(0u);
	d = 0.0;
	uint row = tb + v / (2u * NB), c = k0 + 16u * (v % (2u * NB));
	if (v >= NXU || row >= s.rend || c >= s.k)
		return;
	uint i = row_in(row) * s.k + c;
	q = xq[i / 16u];
	if (c % 32u == 0u)
		d = x[sw + i / 32u];
}

// Stage x's unit v (as loaded in q, d) into buffer buf.
void stage_x(uvec4 q, float d, uint v, uint buf)
{
	if (v >= NXU)
		return;
	uint row = buf * BN + v / (2u * NB), p = v % (2u * NB);
	bq[row * LD + p] = q;
	if (p % 2u == 0u)
		bs_[row * NB + p / 2u] = d;
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
	WS ws_;
	ws_.wo = pc.o[0];
	ws_.k = k;
	ws_.m = m;
	ws_.al = false;
	XS xs_;
	xs_.k = k;
	xs_.rend = rend;

	// a thread's units per step: weights u = tid + WGT i (u < NU), x's
	// v = tid + WGT i (v < NXU), loaded into registers a step ahead
	WR wp[NWU];
	uvec4 xpa[NXV];
	float xpb[NXV];
	uint sw = pc.p[2];
#define W_ROW(u) (mb + U_ROW(u))
#define W_K(K0, u) ((K0) + U_K(u))
#define LOADS(W, XA, XB, K0)                                                   \
	[[unroll]] for (uint i = 0; i < NWU; i++) {                            \
		uint u = tid + WGT * i;                                        \
		if (u < NU)                                                    \
			W[i] = load_w(ws_, W_ROW(u), W_K(K0, u));              \
	}                                                                      \
	[[unroll]] for (uint i = 0; i < NXV; i++)                              \
		load_xq(xs_, tb, K0, tid + WGT * i, sw, XA[i], XB[i]);
#define STAGE(W, XA, XB, BUF)                                                  \
	[[unroll]] for (uint i = 0; i < NWU; i++) {                            \
		uint u = tid + WGT * i;                                        \
		if (u < NU)                                                    \
			stage_w(W[i], u, BUF);                                 \
	}                                                                      \
	[[unroll]] for (uint i = 0; i < NXV; i++)                              \
		stage_x(XA[i], XB[i], tid + WGT * i, BUF);

	uint sg = tid / 32u, lane = tid % 32u;
	uint sm = (sg % SGM) * (16u * FM), sn = (sg / SGM) * (16u * FN);
	uint g = lane / 4u, c2 = 2u * (lane % 4u);
	float acc[FM][FN][8];
	[[unroll]] for (uint i = 0; i < FM; i++)
		[[unroll]] for (uint j = 0; j < FN; j++)
			[[unroll]] for (uint e = 0; e < 8u; e++)
				acc[i][j][e] = 0.0;
	// the products of the step in buffer BUF: each tile's int32 sums
	// times the row's and the column's scales
#define PRODUCTS(BUF)                                                          \
	[[unroll]] for (uint blk = 0; blk < NB; blk++) {                       \
		I8A a[FM];                                                     \
		I8B b[FN];                                                     \
		float dw[FM][2];                                               \
		float dx[FN][4];                                               \
		[[unroll]] for (uint i = 0; i < FM; i++) {                     \
			uint ra = (BUF) * BM + sm + 16u * i;                   \
			coopMatLoadNV(a[i], aq, ra * LD + 2u * blk, LD, false); \
			dw[i][0] = as_[(ra + g) * NB + blk];                   \
			dw[i][1] = as_[(ra + g + 8u) * NB + blk];              \
		}                                                              \
		[[unroll]] for (uint j = 0; j < FN; j++) {                     \
			uint rb = (BUF) * BN + sn + 16u * j;                   \
			coopMatLoadNV(b[j], bq, rb * LD + 2u * blk, LD, true); \
			dx[j][0] = bs_[(rb + c2) * NB + blk];                  \
			dx[j][1] = bs_[(rb + c2 + 1u) * NB + blk];             \
			dx[j][2] = bs_[(rb + c2 + 8u) * NB + blk];             \
			dx[j][3] = bs_[(rb + c2 + 9u) * NB + blk];             \
		}                                                              \
		[[unroll]] for (uint i = 0; i < FM; i++)                       \
			[[unroll]] for (uint j = 0; j < FN; j++) {             \
				I32M t = coopMatMulAddNV(a[i], b[j], I32M(0)); \
				[[unroll]] for (uint e = 0; e < 8u; e++)       \
					acc[i][j][e] += float(t[e]) *          \
						(dw[i][e / 4u] * dx[j][(e % 2u) + 2u * ((e / 2u) % 2u)]); \
			}                                                      \
	}

	// two buffers: step s's products read buffer s % 2 while step s + 1,
	// loaded before them, is staged into the other after them
	LOADS(wp, xpa, xpb, 0u)
	STAGE(wp, xpa, xpb, 0u)
	barrier();
	for (uint k0 = 0; k0 < k; k0 += 2u * SK) {
		if (k0 + SK < k) {
			LOADS(wp, xpa, xpb, k0 + SK)
		}
		PRODUCTS(0u)
		if (k0 + SK >= k)
			break;
		STAGE(wp, xpa, xpb, 1u)
		barrier();
		if (k0 + 2u * SK < k) {
			LOADS(wp, xpa, xpb, k0 + 2u * SK)
		}
		PRODUCTS(1u)
		if (k0 + 2u * SK >= k)
			break;
		STAGE(wp, xpa, xpb, 0u)
		barrier();
	}
	// lane's element e of tile (i, j): weight row mb + sm + 16 i + g (+ 8
	// for e >= 4), pass row tb + sn + 16 j + c2 + e % 2 (+ 8 for e % 4 >= 2)
	uint yo = pc.o[2];
	[[unroll]] for (uint i = 0; i < FM; i++)
		[[unroll]] for (uint j = 0; j < FN; j++)
			[[unroll]] for (uint e = 0; e < 8u; e++) {
				uint wr = mb + sm + 16u * i + g + 8u * (e / 4u);
				uint r = tb + sn + 16u * j + c2 + (e % 2u) + 8u * ((e / 2u) % 2u);
				if (r >= rend || wr >= m)
					continue;
				uint at = row_in(r) * m + wr;
				if (ADD != 0u)
					rr[pc.o[3] + at] = rr[pc.o[3] + at] + acc[i][j][e];
				else
					y[yo + at] = acc[i][j][e];
			}
}
