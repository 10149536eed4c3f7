#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// attention_rows: a batched table's attention (both variants), for a block
// of BQ query rows of one head per workgroup (x: blocks of the pass's
// rows, y: heads; kv head h / (n_head / n_head_kv)). The cache positions
// are taken BKV at a time: their k into shared memory, the block's scores
// s = scale q . k_t, an online softmax (each row's running maximum and sum;
// its output rescaled when the maximum grows) by the TPQ threads that
// hold the row's outputs, then their v, added into
// the rows' outputs, which stay in registers. So no scores are kept: the
// att binding is not used.
//
// Which positions row r sees (shaders/common.glsl): causal, t <= pos + r
// (its patch's n_kv); under BELT_RUN_TREE (meta.tree) the positions before
// pos and pos + a for each ancestor a of r, itself included (the parents
// in meta); in a table of sequences (meta.seqs) a workgroup takes one row,
// which sees its own sequence's positions (at_kv_base, at_n_kv), and,
// where a kv head's query heads fit the block (the host then dispatches
// y: kv heads), those query heads as the block's rows, so that each key
// and value loaded serves them all. A patch that names no kv length gives
// no positions: zeros, as the CPU backend's.
//
// bindings: 0 q, 3 out (in vec4s), 1 k_cache, 2 v_cache (kv.glsl), 4 att
// params: n_head, n_head_kv, head_dim (a multiple of 4, <= HD), n_ctx,
// scale. Built for HD 128 and (-DHD=256) 256.
#ifndef HD
#define HD 128
#endif
#if HD <= 128
#define BQ 16 // query rows per workgroup: ATT_ROWS_BQ in kernels.c
#define BKV 32
#else
#define BQ 8 // ATT_ROWS_BQ_256
#define BKV 16
#endif
#define HD4 (HD / 4)
#define WG 128
#define TPQ (WG / BQ)		   // threads per query row for the outputs
#define NO ((HD4 + TPQ - 1) / TPQ) // vec4s of output each
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer Q4 { vec4 q4[]; };
#define KV_K_BINDING 1
#define KV_V_BINDING 2
#include "kv.glsl"
layout(binding = 3) writeonly buffer O4 { vec4 o4[]; };

shared vec4 qs[BQ][HD4];
shared vec4 kvs[BKV][HD4 + 1]; // k, then v, of the step's positions
shared float ps[BQ][BKV + 1];  // scores, then their weights
shared float m_sh[BQ], l_sh[BQ];
shared float red_m[BQ][TPQ], red_l[BQ][TPQ]; // the softmax's partials
shared uint tmask[BQ]; // tree: the step's positions each row sees

#define NEG_INF uintBitsToFloat(0xff800000u)

void main()
{
	STOP_CHECK();
	uint n_head = pc.p[0], n_head_kv = pc.p[1], hd4 = pc.p[2] / 4u;
	float scale = pflt(4);
	bool seqs = is_seqs();
	uint grp = n_head / n_head_kv;
	bool kvg = seqs && grp <= BQ; // y: kv heads, their query heads the rows
	uint h = gl_WorkGroupID.y, kh = kvg ? h : h / grp;
	uint rend = row_end(), r0 = row_first() + gl_WorkGroupID.x * (seqs ? 1u : BQ);
	if (r0 >= rend)
		return;
	uint nq = kvg ? grp : seqs ? 1u : min(uint(BQ), rend - r0), tid = gl_LocalInvocationID.x;
	uint q4row = n_head * hd4, kv_dim = n_head_kv * hd4 * 4u;
	uint pos = pass_pos(), pt = patch_of(0u);
	bool kv_on = pt == PATCH_KV_LEN || pt == PATCH_POS_AND_KV;
	bool tree = meta.tree != 0u;
	// positions the block needs: its last row sees up to pos + r (a
	// sequence's row: its own, from its first slot kb)
	uint n_kv = kv_on ? (seqs ? at_n_kv(r0) : pos + r0 + nq) : 0u;
	uint kb = seqs ? at_kv_base(r0) : 0u;
	uint kvo = kh * hd4 * 4u;
	uint hd8 = hd4 / 2u;
	bool k8 = KV_K == KV_F16 && (hd4 & 1u) == 0u && kv_f16x8_ok(pc.o[1]);
	bool v8 = KV_V == KV_F16 && (hd4 & 1u) == 0u && kv_f16x8_ok(pc.o[2]);

	// block row q: row r0 + q, head h; or (kvg) row r0, head kh * grp + q
	uint q_step = kvg ? hd4 : q4row, q_first = kvg ? kh * grp * hd4 : h * hd4;
	uint qo = pc.o[0] + row_in(r0) * q4row + q_first;
	for (uint i = tid; i < BQ * hd4; i += WG) {
		uint q = i / hd4, d = i % hd4;
		qs[q][d] = q < nq ? q4[qo + q * q_step + d] * scale : vec4(0.0);
	}
	if (tid < BQ) {
		m_sh[tid] = NEG_INF;
		l_sh[tid] = 0.0;
	}
	barrier();
	uint oq = tid / TPQ, ol = tid % TPQ;
	vec4 o[NO];
	[[unroll]] for (uint i = 0; i < NO; i++)
		o[i] = vec4(0.0);

	for (uint s0 = 0; s0 < n_kv; s0 += BKV) {
		uint ns = min(uint(BKV), n_kv - s0);
		// F16 rows (head_dim a multiple of 8, the cache 16-byte
		// aligned) eight values to a load, else four
		if (k8) {
			for (uint i = tid; i < BKV * hd8; i += WG) {
				uint t = i / hd8, d = (i % hd8) * 2u;
				vec4 lo = vec4(0.0), hi = vec4(0.0);
				if (t < ns)
					k_load8(pc.o[1], (kb + s0 + t) * kv_dim + kvo + 4u * d, lo, hi);
				kvs[t][d] = lo;
				kvs[t][d + 1u] = hi;
			}
		} else {
			for (uint i = tid; i < BKV * hd4; i += WG) {
				uint t = i / hd4, d = i % hd4;
				kvs[t][d] = t < ns ? k_load4(pc.o[1], (kb + s0 + t) * kv_dim + kvo + 4u * d)
						   : vec4(0.0);
			}
		}
		if (tree && tid < BQ && s0 + BKV > pos) {
			// ancestors from the row down, while in or above the step
			uint msk = 0u;
			int a = tid < nq ? int(r0 + tid) : -1;
			while (a >= 0 && pos + uint(a) >= s0) {
				if (pos + uint(a) < s0 + BKV)
					msk |= 1u << (pos + uint(a) - s0);
				a = row_parent(uint(a));
			}
			tmask[tid] = msk;
		}
		barrier();
		for (uint i = tid; i < BQ * BKV; i += WG) {
			uint q = i / BKV, t = i % BKV, s = s0 + t;
			bool vis = q < nq && t < ns &&
				   (tree ? s < pos || ((tmask[q] >> t) & 1u) != 0u
					 : seqs || s <= pos + r0 + q);
			float sc = NEG_INF;
			if (vis) {
				vec4 d4 = vec4(0.0);
				for (uint d = 0; d < hd4; d++)
					d4 += qs[q][d] * kvs[t][d];
				sc = (d4.x + d4.y) + (d4.z + d4.w);
			}
			ps[q][t] = sc;
		}
		barrier();
		// the online softmax, TPQ threads per row (each every TPQ-th
		// position of the step): partial maxima, then the weights
		// against the row's new maximum and their partial sums
		float mo = m_sh[oq], cm = NEG_INF;
		for (uint t = ol; t < ns; t += TPQ)
			cm = max(cm, ps[oq][t]);
		red_m[oq][ol] = cm;
		// the k are used up: the step's v in their place
		if (v8) {
			for (uint i = tid; i < BKV * hd8; i += WG) {
				uint t = i / hd8, d = (i % hd8) * 2u;
				vec4 lo = vec4(0.0), hi = vec4(0.0);
				if (t < ns)
					v_load8(pc.o[2], (kb + s0 + t) * kv_dim + kvo + 4u * d, lo, hi);
				kvs[t][d] = lo;
				kvs[t][d + 1u] = hi;
			}
		} else {
			for (uint i = tid; i < BKV * hd4; i += WG) {
				uint t = i / hd4, d = i % hd4;
				kvs[t][d] = t < ns ? v_load4(pc.o[2], (kb + s0 + t) * kv_dim + kvo + 4u * d)
						   : vec4(0.0);
			}
		}
		barrier();
		float mn = mo;
		[[unroll]] for (uint j = 0; j < TPQ; j++)
			mn = max(mn, red_m[oq][j]);
		bool none = mn == NEG_INF; // nothing seen yet
		float sum = 0.0;
		for (uint t = ol; t < ns; t += TPQ) {
			float p = none ? 0.0 : exp(ps[oq][t] - mn);
			ps[oq][t] = p;
			sum += p;
		}
		red_l[oq][ol] = sum;
		barrier();
		float a = none ? 1.0 : exp(mo - mn);
		if (ol == 0u) {
			float l = 0.0;
			[[unroll]] for (uint j = 0; j < TPQ; j++)
				l += red_l[oq][j];
			l_sh[oq] = l_sh[oq] * a + l;
			m_sh[oq] = mn;
		}
		[[unroll]] for (uint i = 0; i < NO; i++) {
			uint d = ol + i * TPQ;
			if (d >= hd4)
				continue;
			vec4 acc = o[i] * a;
			for (uint t = 0; t < ns; t++)
				acc += ps[oq][t] * kvs[t][d];
			o[i] = acc;
		}
		barrier(); // before the next step's k and scores
	}
	if (oq >= nq)
		return;
	float l = l_sh[oq];
	[[unroll]] for (uint i = 0; i < NO; i++) {
		uint d = ol + i * TPQ;
		if (d < hd4)
			o4[pc.o[3] + row_in(r0) * q4row + q_first + oq * q_step + d] =
				l > 0.0 ? o[i] / l : vec4(0.0);
	}
}
