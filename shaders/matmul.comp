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

// A thread's weight row of a step as loaded (converted when staged): its
// BK values, or (Q8_0, Q4_0) the block's quants that hold them and the
// block's scale.
#if defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS)
// the IQ4 codebook as floats: a shared load per weight, not selects
shared float iq4_sh[16];
#define KQ_IQ4_TABLE iq4_sh
#endif
#include "quants.glsl"
#if defined(TYPE_F32) || defined(KQ_BLOCK)
struct WR { vec4 v[4]; };
#elif defined(TYPE_F16) || defined(TYPE_BF16)
struct WR { uvec4 q[2]; };
#elif defined(TYPE_Q8_0)
struct WR { uvec4 q; uint d; };
#define BW 17u // 16-bit words per GGUF block
#elif defined(TYPE_Q4_0)
struct WR { uvec4 q; uint d; };
#define BW 9u
#else
#error "matmul.comp: define TYPE_F32, TYPE_F16, TYPE_BF16, TYPE_Q8_0, TYPE_Q4_0 or a type of quants.glsl"
#endif

// how W is read; passed by value (private globals are slow on lavapipe)
struct WS {
	uint wo, k, m;
	bool al; // 16-byte loads of whole steps (F32, F16, BF16)
};

WR load_w(WS s, uint row, uint k0)
{
	WR w;
#if defined(TYPE_F32)
	[[unroll]] for (uint i = 0; i < 4u; i++)
		w.v[i] = vec4(0.0);
	if (row >= s.m)
		return w;
	uint i = s.wo + row * s.k + k0;
	if (s.al && k0 + BK <= s.k) {
		[[unroll]] for (uint u = 0; u < 4u; u++)
			w.v[u] = wf4[i / 4u + u];
	} else {
		[[unroll]] for (uint e = 0; e < BK; e++)
			w.v[e / 4u][e % 4u] = k0 + e < s.k ? wf[i + e] : 0.0;
	}
#elif defined(KQ_BLOCK)
	// dequantized here: a step (BK = 16) is one run of a block
	[[unroll]] for (uint i = 0; i < 4u; i++)
		w.v[i] = vec4(0.0);
	if (row >= s.m)
		return w;
	float v[16];
	kq_group16(s.wo + (row * (s.k / KQ_BLOCK) + k0 / KQ_BLOCK) * KQ_WORDS, (k0 % KQ_BLOCK) / 16u, v);
	[[unroll]] for (uint e = 0; e < BK; e++)
		w.v[e / 4u][e % 4u] = v[e];
#elif defined(TYPE_F16) || defined(TYPE_BF16)
	w.q[0] = uvec4(0u);
	w.q[1] = uvec4(0u);
	if (row >= s.m)
		return w;
	uint i = s.wo + row * s.k + k0;
	if (s.al && k0 + BK <= s.k) {
		w.q[0] = w4[i / 8u];
		w.q[1] = w4[i / 8u + 1u];
	} else {
		[[unroll]] for (uint e = 0; e < BK; e += 2u) {
			uint lo = k0 + e < s.k ? uint(w16[i + e]) : 0u;
			uint hi = k0 + e + 1u < s.k ? uint(w16[i + e + 1u]) : 0u;
			w.q[e / 8u][(e / 2u) % 4u] = lo | hi << 16;
		}
	}
#else
	w.q = uvec4(0u);
	w.d = 0u;
	if (row >= s.m)
		return w;
	uint blk = row * (s.k / 32u) + k0 / 32u, h = (k0 / 16u) % 2u;
#if defined(REPACK) && defined(TYPE_Q8_0)
	w.q = w4[s.wo / 8u + blk * 2u + h]; // quants 16 h .. 16 h + 15
	w.d = uint(w16[s.wo + pc.aux[1] + blk]);
#elif defined(REPACK)
	w.q = w4[s.wo / 8u + blk]; // all 32 (h picks the nibbles)
	w.d = uint(w16[s.wo + pc.aux[1] + blk]);
#else
	uint b = s.wo + blk * BW, q = b + 1u;
#if defined(TYPE_Q8_0)
	q += 8u * h;
#endif
	uint u[8];
	[[unroll]] for (uint e = 0; e < 8u; e++)
		u[e] = uint(w16[q + e]);
	w.q = uvec4(u[0] | u[1] << 16, u[2] | u[3] << 16, u[4] | u[5] << 16,
		    u[6] | u[7] << 16);
	w.d = uint(w16[b]);
#endif
#endif
	return w;
}

// Convert and stage a thread's weights (row lr of the tile) of step k0.
void store_w(WR w, uint lr, uint k0)
{
	uint r4 = lr >> 2, rc = lr & 3u;
#if defined(TYPE_F32) || defined(KQ_BLOCK)
	[[unroll]] for (uint e = 0; e < BK; e++)
		ws[e][r4][rc] = w.v[e / 4u][e % 4u];
#elif defined(TYPE_F16)
	[[unroll]] for (uint e = 0; e < BK; e += 2u) {
		vec2 f = unpackHalf2x16(w.q[e / 8u][(e / 2u) % 4u]);
		ws[e][r4][rc] = f.x;
		ws[e + 1u][r4][rc] = f.y;
	}
#elif defined(TYPE_BF16)
	[[unroll]] for (uint e = 0; e < BK; e += 2u) {
		uint u = w.q[e / 8u][(e / 2u) % 4u];
		ws[e][r4][rc] = uintBitsToFloat(u << 16);
		ws[e + 1u][r4][rc] = uintBitsToFloat(u & 0xffff0000u);
	}
#elif defined(TYPE_Q8_0)
	float d = half_f(w.d);
	[[unroll]] for (uint e = 0; e < BK; e++) {
		int q = int(w.q[e / 4u] << (24u - 8u * (e % 4u))) >> 24;
		ws[e][r4][rc] = d * float(q);
	}
#else
	// byte i holds element i (low nibble) and 16 + i (high): the step's
	// half of the block is one or the other
	float d = half_f(w.d);
	uint sh = 4u * ((k0 / 16u) % 2u);
	[[unroll]] for (uint e = 0; e < BK; e++) {
		uint n = (w.q[e / 4u] >> (8u * (e % 4u) + sh)) & 15u;
		ws[e][r4][rc] = d * float(int(n) - 8);
	}
#endif
}

// A thread's row of x in a step: BK values, zeros past the run's rows and k.
struct XS {
	uint xo, k, rend;
	bool al;
};

void load_x(XS s, uint row, uint k0, out vec4 v[4])
{
	[[unroll]] for (uint u = 0; u < 4u; u++)
		v[u] = vec4(0.0);
	if (row >= s.rend)
		return;
	uint i = s.xo + row_in(row) * s.k + k0;
	if (s.al && k0 + BK <= s.k) {
		[[unroll]] for (uint u = 0; u < 4u; u++)
			v[u] = x4[i / 4u + u];
	} else {
		[[unroll]] for (uint e = 0; e < BK; e++)
			v[e / 4u][e % 4u] = k0 + e < s.k ? x[i + e] : 0.0;
	}
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
		store_w(wr, tid, k0);
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
