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
// The positions come BKV = 32 at a time through shared memory (k, then v,
// 16-byte copies of the F16 rows). The scores S = Q K^T of a subgroup's 16
// rows are products of float16 q (scaled, rounded once) and k into
// float32, written to shared memory, where the subgroup's lanes mask them
// (causal, or the tree of the pass) and take the rows' maxima. An online
// softmax would rescale the outputs row by row whenever a maximum grows,
// and the elements of a cooperative matrix have no rows one can address;
// so the scores are computed twice: a first sweep finds each row's
// maximum M, the second turns the scores into p = exp(s - M) (rounded to
// float16; each row's sum of them in float32) and adds P V into the
// outputs on the matrix units. Which positions a row sees is as in
// attention_rows.comp; a row that sees none gets zeros.
//
// EXT 1: attention_ext's too (Gemma 2): each score soft-capped (softcap >
// 0: s = softcap tanh(s / softcap); the first sweep caps the maximum
// alone, as the cap keeps the order; the second takes each weight
// exp(c tanh(s / c) - M) as 2^(A - B / (E + 1)), E = e^(2|s| / c), A and
// B of the row (c - M or -c - M by the sign of s, 2c, in base 2): one
// exp2 for the tanh, one for the weight, a reciprocal; what that loses
// is absolute, a few units in the last place of c, far below the
// float16 rounding of the weights that P V multiplies), and only the
// keys within window positions of the row's query seen (window > 0); the
// steps below the window of the block's first row are left out.
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
shared float m_sh[64], l_sh[64];

#include "tanh.glsl"

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
	if (tid < 64u) {
		m_sh[tid] = NEG_INF;
		l_sh[tid] = 0.0;
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
	// the capped weights' constants: E = 2^(|s| kq), B = bq (EXT)
	float kq = cap > 0.0 ? 2.0 * LOG2E / cap : 0.0, bq = 2.0 * LOG2E * cap;
	uint window = EXT == 1u ? pc.p[6] : 0u;
	// the query's position, and the first step any row of the block sees
	uint qpos = tree && live ? pos + row_depth(r0 + r) : last, s_first = 0u;
	if (window > 0u && !tree && pos + r0 + 1u > window)
		s_first = (pos + r0 + 1u - window) / BKV * BKV;
	F32M o[HD / 16u];
	[[unroll]] for (uint n = 0; n < HD / 16u; n++)
		o[n] = F32M(0.0);

	for (uint sweep = 0; sweep < 2u; sweep++) {
		float mx = m_sh[p], sum = 0.0;
		// the second sweep's A for s >= 0 and for s < 0 (EXT)
		float ap = (cap - mx) * LOG2E, an = (-cap - mx) * LOG2E;
		for (uint s0 = s_first; s0 < n_kv; s0 += BKV) {
			uint ns = min(BKV, n_kv - s0);
			// k (and in the second sweep v) of the step, from its
			// slots (which do not wrap: a ring is whole steps)
			uint s0s = kv_ring(s0);
			for (uint i = tid; i < BKV * HD / 8u; i += 128u) {
				uint t = i / (HD / 8u), c = i % (HD / 8u);
				uint at = (s0s + t) * kv_dim8 + kvo + c;
				kv4[t * LD + c] = t < ns ? kc4[kb + at] : uvec4(0u);
				if (sweep == 1u)
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
			uint w[8]; // the weights' halves of the lane's 16 positions
			// the window, where a key of the step may be past it (else
			// every key the causal mask leaves is within it: the
			// per-score test cost about as much as the cap, H200
			// gemma2 1B pp512)
			bool wtest = window > 0u && (tree || s0 + window <= qpos);
			[[unroll]] for (uint e = 0; e < 16u; e++) {
				uint t = 16u * hv + e, at = s0 + t;
				bool vis = live && t < ns &&
					   (tree ? at < pos || ((msk >> t) & 1u) != 0u : at <= last);
				if (wtest && vis) {
					uint kpos = tree && at >= pos ? pos + row_depth(at - pos) : at;
					vis = qpos - kpos < window;
				}
				float sc = vis ? score(p, t) : NEG_INF;
				if (sweep == 0u) {
					mx = max(mx, sc); // capped once found
				} else {
					float pe;
					if (cap > 0.0) {
						// e^(2|s| / c) up to e^30, as tanh_f's form
						float e = exp2(min(abs(sc) * kq, 30.0 * LOG2E));
						float d = bq / (e + 1.0);
						pe = vis ? exp2(sc >= 0.0 ? ap - d : an + d) : 0.0;
					} else {
						pe = vis ? exp(sc - mx) : 0.0;
					}
					sum += pe;
					uint hb = packHalf2x16(vec2(pe, 0.0));
					w[e / 2u] = e % 2u == 0u ? hb : w[e / 2u] | hb << 16;
				}
			}
			if (sweep == 1u) {
				[[unroll]] for (uint e = 0; e < 2u; e++)
					ps4[p * LDP + 2u * hv + e] =
						uvec4(w[4u * e], w[4u * e + 1u], w[4u * e + 2u], w[4u * e + 3u]);
				barrier(); // every thread's v, this subgroup's weights
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
			}
			barrier(); // before the next step's k and v
		}
		// the row's two lanes together
		if (sweep == 0u) {
			mx = max(mx, subgroupShuffleXor(mx, 1u));
			// the cap rises with the score: the capped maximum is
			// the maximum's
			if (cap > 0.0 && mx != NEG_INF)
				mx = tanh_f(mx / cap) * cap;
			if (hv == 0u)
				m_sh[p] = mx;
		} else {
			sum += subgroupShuffleXor(sum, 1u);
			if (hv == 0u)
				l_sh[p] = sum;
		}
		barrier();
	}

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
