#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
// attention_rows_cm: attention_rows.comp's batched attention on the
// matrix units (GL_NV_cooperative_matrix, 16 x 16 x 16 float16 products
// into float32 on subgroups of 32), for F16 caches and head_dim HD of 64
// or 128 (plugins/backend-vulkan/kernels.c picks it). A workgroup takes a
// kv head and BR = 64 / R rows of the pass, so its 64 "query rows" are
// the R query heads of the group at each of those rows (query row p: head
// p / BR of the group, pass row p % BR): every key and value it loads
// serves all of them. Its 4 subgroups own 16 query rows each.
//
// The positions come BKV = 32 at a time through shared memory (k and v,
// 16-byte copies of the F16 rows). The scores S = Q K^T of a subgroup's
// 16 rows are products of float16 q (scaled, rounded once) and k into
// float32, written to shared memory, where the subgroup's lanes mask them
// (causal, or the tree of the pass). One sweep with an online softmax:
// each row keeps its maximum so far M (base 2), the step's weights are p
// = 2^(s log2(e) - M) (rounded to float16; each row's sum of them in
// float32), and when M grows the row's sums and outputs so far are
// scaled by 2^(M_old - M_new) before P V is added on the matrix units.
// The outputs' rows are addressed in the matrix fragments by their
// layout on the devices that offer these products (NVIDIA's, mma.sync's,
// as matmul_q8cm.comp relies on: lane l holds rows l / 4 and l / 4 + 8;
// check_backend_vulkan compares every case with a reference, so another
// layout fails there loudly). Which positions a row sees is as in
// attention_rows.comp; a row that sees none gets zeros.
//
// EXT 1: attention_ext's too (Gemma 2): each score soft-capped (softcap >
// 0: s = c tanh(s / c)), computed in base 2 as +-(c log2(e) - B / (E +
// 1)) by the sign of s, E = e^(2|s| / c), B = 2 c log2(e): one exp2 and
// a reciprocal (what that loses is absolute, a few units in the last
// place of c, far below the float16 rounding of the weights that P V
// multiplies), and only the keys within window positions of the row's
// query seen (window > 0); the steps below the window of the block's
// first row are left out.
//
// bindings: 0 q, 3 out (in vec4s), 1 k_cache, 2 v_cache (16-bit words,
// 16-byte aligned), 4 att (unused); params: n_head, n_head_kv, head_dim,
// n_ctx, scale (EXT: softcap, window). Specialization: 0, 1 the cache
// types (kv.glsl; F16 here), 2 HD, 3 R, 4 EXT.
layout(local_size_x = 128) in;
layout(constant_id = 0) const uint KV_K = 1u;
layout(constant_id = 1) const uint KV_V = 1u;
layout(constant_id = 2) const uint HD = 128u; // head_dim: 64 or 128
layout(constant_id = 3) const uint R = 4u;    // query heads per kv head
layout(constant_id = 4) const uint EXT = 0u;  // attention_ext's softcap, window
const uint BR = 64u / R;		      // pass rows per workgroup
#define BKV 32u
const uint LD = HD / 8u + 1u; // uvec4s per staged row: HD + 8 halves
#define LDS 9u		      // uvec4s per score row: 36 floats
#define LDP 5u		      // uvec4s per weight row: 40 halves

layout(binding = 0) readonly buffer Q4 { vec4 q4[]; };
layout(binding = 1) readonly buffer KC { uvec4 kc4[]; };
layout(binding = 2) readonly buffer VC { uvec4 vc4[]; };
layout(binding = 3) writeonly buffer O4 { vec4 o4[]; };

// q of the 64 rows (staging, before the loop), then k and v of a step
shared uvec4 kv4[2u * BKV * LD];
shared uvec4 ss4[64u * LDS]; // scores (floats), a subgroup's 16 rows each
shared uvec4 ps4[64u * LDP]; // weights (halves)
shared float l_sh[64];

#define F16M fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F32M fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define NEG_INF uintBitsToFloat(0xff800000u)

#define LOG2E 1.4426950408889634

float score(uint row, uint t)
{
	return uintBitsToFloat(ss4[row * LDS + t / 4u][t % 4u]);
}

void main()
{
	STOP_CHECK();
	uint n_head = pc.p[0], n_head_kv = pc.p[1], hd4 = HD / 4u;
	float scale = pflt(4);
	uint kh = gl_WorkGroupID.y;
	uint rend = row_end(), r0 = row_first() + gl_WorkGroupID.x * BR;
	if (r0 >= rend)
		return;
	uint nq = min(BR, rend - r0), tid = gl_LocalInvocationID.x;
	uint sg = tid / 32u, lane = tid % 32u;
	uint q4row = n_head * hd4, kv_dim8 = n_head_kv * HD / 8u;
	uint pos = pass_pos(), pt = patch_of(0u);
	bool kv_on = pt == PATCH_KV_LEN || pt == PATCH_POS_AND_KV;
	bool tree = meta.tree != 0u;
	uint n_kv = kv_on ? pos + r0 + nq : 0u; // positions the block needs
	// 16-byte units: the caches' base, the kv head's first in a row
	uint kb = pc.o[1] / 8u, vb = pc.o[2] / 8u, kvo = kh * HD / 8u;

	// q (scaled, as float16) of query row p = g BR + r: head kh R + g,
	// pass row r0 + r
	for (uint i = tid; i < 64u * HD / 8u; i += 128u) {
		uint p = i / (HD / 8u), c = i % (HD / 8u);
		uint g = p / BR, r = p % BR;
		vec4 a = vec4(0.0), b = vec4(0.0);
		if (r < nq) {
			uint at = pc.o[0] + row_in(r0 + r) * q4row + (kh * R + g) * hd4 + 2u * c;
			a = q4[at] * scale;
			b = q4[at + 1u] * scale;
		}
		kv4[p * LD + c] = uvec4(packHalf2x16(a.xy), packHalf2x16(a.zw),
				       packHalf2x16(b.xy), packHalf2x16(b.zw));
	}
	barrier();
	F16M qa[HD / 16u];
	[[unroll]] for (uint kk = 0; kk < HD / 16u; kk++)
		coopMatLoadNV(qa[kk], kv4, (16u * sg) * LD + 2u * kk, LD, false);
	barrier(); // the q staging is free for k and v

	// lane l of a subgroup: its query row 16 sg + l / 2, half hv = l % 2 of
	// the step's positions
	uint p = 16u * sg + lane / 2u, hv = lane % 2u;
	uint g = p / BR, r = p % BR;
	bool live = r < nq;
	uint last = pos + r0 + r; // causal: positions up to it
	float cap = EXT == 1u ? pflt(5) : 0.0;
	// the capped scores' constants: E = 2^(|s| kq), B = bq (EXT)
	float kq = cap > 0.0 ? 2.0 * LOG2E / cap : 0.0, bq = 2.0 * LOG2E * cap;
	uint window = EXT == 1u ? pc.p[6] : 0u;
	// the query's position, and the first step any row of the block sees
	uint qpos = tree && live ? pos + row_depth(r0 + r) : last, s_first = 0u;
	if (window > 0u && !tree && pos + r0 + 1u > window)
		s_first = (pos + r0 + 1u - window) / BKV * BKV;
	F32M o[HD / 16u];
	[[unroll]] for (uint n = 0; n < HD / 16u; n++)
		o[n] = F32M(0.0);
	// the capped score in base 2, c tanh(s / c) log2(e), is
	// +-(cl - bq / (E + 1)) by the sign of s (EXT)
	float cl = cap * LOG2E;
	// row p's maximum so far (base 2; both its lanes hold it) and the
	// sum of the lane's weights against it
	float mx = NEG_INF, sum = 0.0;
	// the lanes (2 row + hv above) of the rows this lane's elements of
	// an output tile lie in: rows lane / 4 and lane / 4 + 8 of the
	// subgroup's 16, the layout of matmul_q8cm.comp
	uint fl0 = 2u * (lane / 4u), fl1 = fl0 + 16u;

	for (uint s0 = s_first; s0 < n_kv; s0 += BKV) {
		uint ns = min(BKV, n_kv - s0);
		// k and v of the step, from their slots (which do not wrap: a
		// ring is whole steps)
		uint s0s = kv_ring(s0);
		for (uint i = tid; i < BKV * HD / 8u; i += 128u) {
			uint t = i / (HD / 8u), c = i % (HD / 8u);
			uint at = (s0s + t) * kv_dim8 + kvo + c;
			kv4[t * LD + c] = t < ns ? kc4[kb + at] : uvec4(0u);
			kv4[(BKV + t) * LD + c] = t < ns ? vc4[vb + at] : uvec4(0u);
		}
		barrier();
		// S = Q K^T for the subgroup's rows: b(k, t) = k_t[k]
		F32M s[2];
		s[0] = F32M(0.0);
		s[1] = F32M(0.0);
		[[unroll]] for (uint kk = 0; kk < HD / 16u; kk++)
			[[unroll]] for (uint j = 0; j < 2u; j++) {
				F16M b;
				coopMatLoadNV(b, kv4, (16u * j) * LD + 2u * kk, LD, true);
				s[j] = coopMatMulAddNV(qa[kk], b, s[j]);
			}
		[[unroll]] for (uint j = 0; j < 2u; j++)
			coopMatStoreNV(s[j], ss4, (16u * sg) * LDS + 4u * j, LDS, false);
		subgroupMemoryBarrierShared();
		subgroupBarrier();
		// the positions of the step row p sees
		uint msk = 0u;
		if (tree && live && s0 + BKV > pos) {
			int a = int(r0 + r);
			while (a >= 0 && pos + uint(a) >= s0) {
				if (pos + uint(a) < s0 + BKV)
					msk |= 1u << (pos + uint(a) - s0);
				a = row_parent(uint(a));
			}
		}
		// the window, where a key of the step may be past it (else
		// every key the causal mask leaves is within it: the per-score
		// test cost about as much as the cap, H200 gemma2 1B pp512)
		bool wtest = window > 0u && (tree || s0 + window <= qpos);
		float sl[16]; // the lane's 16 scores in base 2, -inf where unseen
		float smx = NEG_INF;
		[[unroll]] for (uint e = 0; e < 16u; e++) {
			uint t = 16u * hv + e, at = s0 + t;
			bool vis = live && t < ns &&
				   (tree ? at < pos || ((msk >> t) & 1u) != 0u : at <= last);
			if (wtest && vis) {
				uint kpos = tree && at >= pos ? pos + row_depth(at - pos) : at;
				vis = qpos - kpos < window;
			}
			float sc = score(p, t), v;
			if (cap > 0.0) {
				// e^(2|s| / c) up to e^30, as tanh_f's form
				float e2 = exp2(min(abs(sc) * kq, 30.0 * LOG2E));
				float c = cl - bq / (e2 + 1.0);
				v = sc >= 0.0 ? c : -c;
			} else {
				v = sc * LOG2E;
			}
			sl[e] = vis ? v : NEG_INF;
			smx = max(smx, sl[e]);
		}
		// the row's new maximum, the factor its outputs and sums so
		// far take for it
		smx = max(smx, subgroupShuffleXor(smx, 1u));
		float mn = max(mx, smx);
		float f = mn == NEG_INF ? 1.0 : exp2(mx - mn);
		mx = mn;
		sum *= f;
		uint w[8]; // the weights' halves of the lane's 16 positions
		[[unroll]] for (uint e = 0; e < 16u; e++) {
			float pe = sl[e] == NEG_INF ? 0.0 : exp2(sl[e] - mn);
			sum += pe;
			uint hb = packHalf2x16(vec2(pe, 0.0));
			w[e / 2u] = e % 2u == 0u ? hb : w[e / 2u] | hb << 16;
		}
		[[unroll]] for (uint e = 0; e < 2u; e++)
			ps4[p * LDP + 2u * hv + e] =
				uvec4(w[4u * e], w[4u * e + 1u], w[4u * e + 2u], w[4u * e + 3u]);
		// the outputs so far rescaled row by row: element e of a tile
		// lies in row lane / 4 (+ 8 for e >= 4)
		float f0 = subgroupShuffle(f, fl0), f1 = subgroupShuffle(f, fl1);
		[[unroll]] for (uint n = 0; n < HD / 16u; n++)
			[[unroll]] for (uint e = 0; e < 8u; e++)
				o[n][e] *= e < 4u ? f0 : f1;
		subgroupMemoryBarrierShared();
		subgroupBarrier(); // the subgroup's weights
		// O += P V: a(row, t) = p, b(t, d) = v_t[d]
		[[unroll]] for (uint kk = 0; kk < BKV / 16u; kk++) {
			F16M a;
			coopMatLoadNV(a, ps4, (16u * sg) * LDP + 2u * kk, LDP, false);
			[[unroll]] for (uint n = 0; n < HD / 16u; n++) {
				F16M b;
				coopMatLoadNV(b, kv4, (BKV + 16u * kk) * LD + 2u * n, LD, false);
				o[n] = coopMatMulAddNV(a, b, o[n]);
			}
		}
		barrier(); // before the next step's k and v
	}
	// the row's two lanes together
	sum += subgroupShuffleXor(sum, 1u);
	if (hv == 0u)
		l_sh[p] = sum;
	barrier();

	// out: each 16 x 16 tile through the subgroup's scores, then row by
	// row divided by the row's sum (zeros where it saw nothing)
	[[unroll]] for (uint n = 0; n < HD / 16u; n++) {
		coopMatStoreNV(o[n], ss4, (16u * sg) * LDS, LDS, false);
		subgroupMemoryBarrierShared();
		subgroupBarrier();
		// lane: row 16 sg + lane / 2, 8 of the tile's 16 columns
		float l = l_sh[p];
		if (live) {
			uint at = pc.o[3] + row_in(r0 + r) * q4row + (kh * R + g) * hd4 + 4u * n + 2u * hv;
			[[unroll]] for (uint e = 0; e < 2u; e++) {
				uint c = 8u * hv + 4u * e;
				vec4 v = vec4(score(p, c), score(p, c + 1u), score(p, c + 2u), score(p, c + 3u));
				o4[at + e] = l > 0.0 ? v / l : vec4(0.0);
			}
		}
		subgroupBarrier();
	}
}
