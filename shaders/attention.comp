#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// attention for one token (one-row tables; attention_rows.comp runs a
// batched table's): for query head h (kv head h / (n_head / n_head_kv)),
// s_t = scale * q_h . k_t for t < n_kv (the patch's: pos + 1), softmax
// with the max subtracted, out_h = sum_t p_t v_t.
//
// Default (one workgroup per head): a thread per position computes s_t
// with 16-byte loads of k_t (sixteen in flight), kept in shared memory up
// to ATT_SH positions (else in att); then groups of head_dim / 4 threads
// (a vec4 of the output each) split the positions for the weighted sum of
// v, eight positions per step with their loads first, and add up through
// shared memory. At short contexts the cost is the chain of dependent
// loads, so each step keeps as many in flight as it can.
//
// A run of at most WG positions (every short context, and each chunk of
// split_kv at the defaults) with head_dim <= 128 takes a shorter chain
// (SHORT, on unless the att_short setting is 0): a thread's position's k
// and its group's first 8 positions of v are all loaded at once, before
// q and the softmax, whose score stays in the thread's registers; the
// rest of v (more than 8 positions a group) in steps of 8 loads, the
// last step's loads past the run clamped to its first position and
// weighted 0. One trip to memory for the cache where the loop above
// waits on one for k, then one for each step of v, and up to 7 more for
// the positions after its last full step.
//
// -DSPLIT (variant split_kv): n_head * G workgroups (aux1: G chunks per
// head at most); the token's n_kv positions are cut into chunks of L =
// max(aux0, n_kv / G rounded up to 32) positions, so that a short context
// runs as one chunk per head and a long one spreads over G. Workgroup (h,
// c) does positions [c L, c L + L) as above; with one chunk it writes the
// output as the default variant does, else it leaves (max, sum,
// unnormalized out) in the work buffer and the last workgroup of a head
// to finish (a counter per head, reset by it) merges the chunks' results.
// Workgroups past the token's last position return.
//
// -DSEQS (variant attention_seq): a table of sequences' rows (belt_table.
// seqs), a workgroup per row (x) and head (y), each as the default
// variant does one token, over its own sequence's entries (at_n_kv,
// at_kv_base): a group's decode steps attend as each would alone. The
// host takes it only where a sequence has at most ATT_SH positions, so
// that the scores stay in shared memory (several rows of one sequence
// would share att).
//
// bindings: 0 q, 1 k_cache, 2 v_cache (kv.glsl), 3 out, 4 att (n_head * n_ctx)
// params: n_head, n_head_kv, head_dim (a multiple of 4, <= 512), n_ctx,
// scale; aux2: the command's words of the work buffer
// aux0 1 (default variant): the op is attention_ext, whose params go
// on with softcap (p5: s = cap * tanh(s / cap) where cap > 0) and window
// (p6: positions within window of the query, where window > 0); with a
// window the caches may be rings (kv_ring, common.glsl): -DRING (the
// build attention_ext runs) reads the row's positions as two runs of
// slots; the others' caches hold the whole context, one run from t0
#define WG 256
#define MAX_HD 512
#define ATT_SH 2048 // positions whose scores stay in shared memory
layout(local_size_x = WG) in;
// loads in flight: vec4s of a position's k per thread (KLOADS at a
// time while head_dim / 4 has them, then 16, 8, 1), and positions of v
// per step of a group (VLOADS, then 8, then 1); kernels.c's ATT_KLOADS,
// ATT_VLOADS unless the att_kloads and att_vloads settings say
layout(constant_id = 2) const uint KLOADS = 32u;
layout(constant_id = 3) const uint VLOADS = 32u;
// the short run's path (1; 0: the loops above for every run)
layout(constant_id = 4) const uint SHORT = 1u;
// head_dim / 4 at most for it (the host sets the command's, at most 32:
// its k, held in registers, then takes no more of them than it needs)
layout(constant_id = 5) const uint SHORT_HD4 = 32u;
#define SHORT_V 8u    // v positions a group loads at once
layout(binding = 0) readonly buffer Q4 { vec4 q4[]; };
#define KV_K_BINDING 1
#define KV_V_BINDING 2
#include "kv.glsl"
layout(binding = 3) writeonly buffer O4 { vec4 o4[]; };
layout(binding = 4) coherent buffer Att { float att[]; };

#include "tanh.glsl"

shared vec4 qs[MAX_HD / 4];
shared vec4 acc_sh[WG];
shared float att_sh[ATT_SH];

void main()
{
	STOP_CHECK();
	uint n_head = pc.p[0], n_head_kv = pc.p[1], head_dim = pc.p[2];
	uint n_ctx = pc.p[3];
	float scale = pflt(4);
	uint tid = gl_LocalInvocationID.x;
	uint hd4 = head_dim / 4;
#ifdef SEQS
	uint r = row_first() + gl_WorkGroupID.x;
	if (r >= row_end())
		return;
	uint n_kv = at_n_kv(r), slot0 = at_kv_base(r);
	uint h = gl_WorkGroupID.y, c = 0u;
	// q and out: the row's, in the dispatch's row bindings
	uint qo = pc.o[0] + row_in(r) * n_head * hd4, oo = pc.o[3] + row_in(r) * n_head * hd4;
#else
	uint n_kv = at_n_kv(0u);
	const uint slot0 = 0u;
	uint qo = pc.o[0], oo = pc.o[3];
#ifdef SPLIT
	uint h = wg_id() % n_head, c = wg_id() / n_head;
#else
	uint h = wg_id(), c = 0u;
#endif
#endif
	if (n_kv == 0u) { // no entries (patch none): zeros, as the CPU's
		for (uint i = tid; i < hd4 && c == 0u; i += WG)
			o4[oo + h * hd4 + i] = vec4(0.0);
		return;
	}
#ifdef SPLIT
	uint nch = pc.aux[1];
	uint len = max(pc.aux[0], (n_kv + nch - 1u) / nch + 31u & ~31u);
	uint nact = (n_kv + len - 1u) / len; // chunks with positions
	uint t0 = c * len, t1 = min(n_kv, t0 + len);
	if (t0 >= n_kv)
		return;
#else
	bool ext = pc.aux[0] == 1u;
	float cap = ext ? pflt(5) : 0.0;
	uint window = ext ? pc.p[6] : 0u;
	uint t0 = window > 0u && n_kv > window ? n_kv - window : 0u, t1 = n_kv;
#endif
	uint kv_dim = n_head_kv * head_dim;
	uint kh = h / (n_head / n_head_kv);
	// q and out are bound in vec4s, the caches in 16-bit words (the host
	// checks their offsets); ko: the head's first element in a cache row
	uint ko = kh * head_dim + slot0 * kv_dim, kb0 = pc.o[1], vb0 = pc.o[2];
#define KL(e) k_load4(kb0, e)
#define VL(e) v_load4(vb0, e)
	uint ao = pc.o[4] + h * n_ctx + slot0;

	// the positions [t0, t1) lie in at most two runs of slots (kv_ring):
	// [t0, tw) from slot t0 - lap on, [tw, t1) from slot 0, where a
	// ring's lap ends (a cache of the whole context: the first only)
#ifdef RING
	uint lap = t0 - kv_ring(t0);
	uint tw = KV_SLOTS == 0u ? t1 : min(t1, lap + KV_SLOTS);
#define RUNS 2u
#else
	const uint lap = 0u;
	uint tw = t1;
#define RUNS 1u
#endif
#define RUN_BOUNDS(RUN, A, B, OFF)            \
	uint A = RUN == 0u ? t0 : tw;         \
	uint B = RUN == 0u ? tw : t1;         \
	uint OFF = RUN == 0u ? lap : tw;
	float mx, sum;
	vec4 out4 = vec4(0.0);
	// the sum over v: hd4 threads per group, each a vec4 of the output
	uint groups = WG / hd4;
	uint g = tid / hd4, i = tid % hd4;
	if (SHORT != 0u && t1 - t0 <= WG && hd4 <= SHORT_HD4) {
		// this thread's position (past the run: the first, unused) and
		// its group's first SHORT_V of v, all loads before any wait
		uint t = t0 + tid;
		bool live = t < t1;
		uint ts = live ? t : t0;
		uint kb = ko + (ts - (ts < tw ? lap : tw)) * kv_dim;
		vec4 k[SHORT_HD4];
		[[unroll]] for (uint u = 0; u < SHORT_HD4; u++)
			if (u < hd4)
				k[u] = KL(kb + 4u * u);
		uint vo = ko + 4u * i;
		vec4 v[SHORT_V];
		[[unroll]] for (uint u = 0; u < SHORT_V; u++) {
			uint tv = t0 + g + u * groups;
			tv = tv < t1 ? tv : t0;
			v[u] = VL(vo + (tv - (tv < tw ? lap : tw)) * kv_dim);
		}
		for (uint j = tid; j < hd4; j += WG)
			qs[j] = q4[qo + h * hd4 + j] * scale;
		barrier();
		vec4 d4 = vec4(0.0), e4 = vec4(0.0);
		[[unroll]] for (uint u = 0; u < SHORT_HD4; u += 2) {
			if (u < hd4)
				d4 += qs[u] * k[u];
			if (u + 1u < hd4)
				e4 += qs[u + 1u] * k[u + 1u];
		}
		d4 += e4;
		float s = (d4.x + d4.y) + (d4.z + d4.w);
#ifndef SPLIT
		if (cap > 0.0)
			s = tanh_f(s / cap) * cap;
#endif
		s = live ? s : -1.0 / 0.0;
		mx = wg_max(s);
		float e = live ? exp(s - mx) : 0.0;
		att_sh[tid] = e;
		sum = wg_sum(e); // its barriers order att_sh for what follows
		vec4 a = vec4(0.0), b = vec4(0.0);
		if (g < groups) {
			[[unroll]] for (uint u = 0; u < SHORT_V; u += 2) {
				uint ta = g + u * groups, tb = ta + groups;
				a += (t0 + ta < t1 ? att_sh[min(ta, WG - 1u)] : 0.0) * v[u];
				b += (t0 + tb < t1 ? att_sh[min(tb, WG - 1u)] : 0.0) * v[u + 1u];
			}
			for (uint tr = g + SHORT_V * groups; t0 + tr < t1; tr += SHORT_V * groups) {
				[[unroll]] for (uint u = 0; u < SHORT_V; u++) {
					uint tv = t0 + tr + u * groups;
					tv = tv < t1 ? tv : t0;
					v[u] = VL(vo + (tv - (tv < tw ? lap : tw)) * kv_dim);
				}
				[[unroll]] for (uint u = 0; u < SHORT_V; u += 2) {
					uint ta = tr + u * groups, tb = ta + groups;
					a += (t0 + ta < t1 ? att_sh[min(ta, WG - 1u)] : 0.0) * v[u];
					b += (t0 + tb < t1 ? att_sh[min(tb, WG - 1u)] : 0.0) * v[u + 1u];
				}
			}
		}
		acc_sh[tid] = a + b;
	} else {
		for (uint j = tid; j < hd4; j += WG)
			qs[j] = q4[qo + h * hd4 + j] * scale;
		barrier();

		// the scores: in shared memory, or (a long context) in att
		bool sh = t1 - t0 <= ATT_SH;
#define ATT_W(t, v)                           \
		{                                     \
			if (sh)                       \
				att_sh[(t) - t0] = v; \
			else                          \
				att[ao + (t)] = v;    \
		}
#define ATT_R(t) (sh ? att_sh[(t) - t0] : att[ao + (t)])
		mx = -1.0 / 0.0;
		for (uint run = 0u; run < RUNS; run++) {
		RUN_BOUNDS(run, ta, tb, off)
		for (uint t = ta + tid; t < tb; t += WG) {
			uint kb = ko + (t - off) * kv_dim;
			// KLOADS loads in flight, then sixteen, then the rest eight or
			// one at a time
			vec4 d4 = vec4(0.0), e4 = vec4(0.0);
			uint j = 0;
			for (; j + KLOADS <= hd4 && KLOADS > 16u; j += KLOADS) {
				vec4 k[KLOADS];
				[[unroll]] for (uint u = 0; u < KLOADS; u++)
					k[u] = KL(kb + 4u * (j + u));
				[[unroll]] for (uint u = 0; u < KLOADS; u++)
					d4 += qs[j + u] * k[u];
			}
			for (; j + 16 <= hd4; j += 16) {
				vec4 k[16];
				[[unroll]] for (uint u = 0; u < 16; u++)
					k[u] = KL(kb + 4u * (j + u));
				[[unroll]] for (uint u = 0; u < 16; u += 2) {
					d4 += qs[j + u] * k[u];
					e4 += qs[j + u + 1] * k[u + 1];
				}
			}
			for (; j + 8 <= hd4; j += 8) {
				uint e = kb + 4u * j;
				vec4 k0 = KL(e), k1 = KL(e + 4u);
				vec4 k2 = KL(e + 8u), k3 = KL(e + 12u);
				vec4 k4 = KL(e + 16u), k5 = KL(e + 20u);
				vec4 k6 = KL(e + 24u), k7 = KL(e + 28u);
				d4 += qs[j] * k0 + qs[j + 1] * k1 + qs[j + 2] * k2 + qs[j + 3] * k3;
				e4 += qs[j + 4] * k4 + qs[j + 5] * k5 + qs[j + 6] * k6 + qs[j + 7] * k7;
			}
			for (; j < hd4; j++)
				d4 += qs[j] * KL(kb + 4u * j);
			d4 += e4;
			float s = (d4.x + d4.y) + (d4.z + d4.w);
#ifndef SPLIT
			if (cap > 0.0)
				s = tanh_f(s / cap) * cap;
#endif
			ATT_W(t, s)
			mx = max(mx, s);
		}
		}
		mx = wg_max(mx);
		sum = 0.0;
		for (uint t = t0 + tid; t < t1; t += WG) {
			float e = exp(ATT_R(t) - mx);
			ATT_W(t, e)
			sum += e;
		}
		sum = wg_sum(sum); // its barriers also order att for what follows
		memoryBarrierBuffer();
		barrier();

		// hd4 threads per group, each a vec4 of the output
		vec4 a = vec4(0.0), b = vec4(0.0);
		for (uint run = 0u; run < RUNS && g < groups; run++) {
			RUN_BOUNDS(run, ta, tb, off)
			// VLOADS positions per step, their loads first, then eight
			uint t = ta + g, vo = ko + 4u * i - off * kv_dim;
			for (; t + (VLOADS - 1u) * groups < tb && VLOADS > 8u; t += VLOADS * groups) {
				vec4 v[VLOADS];
				[[unroll]] for (uint u = 0; u < VLOADS; u++)
					v[u] = VL(vo + (t + u * groups) * kv_dim);
				[[unroll]] for (uint u = 0; u < VLOADS; u++)
					a += ATT_R(t + u * groups) * v[u];
			}
			for (; t + 7 * groups < tb; t += 8 * groups) {
				vec4 v[8];
				[[unroll]] for (uint u = 0; u < 8; u++)
					v[u] = VL(vo + (t + u * groups) * kv_dim);
				[[unroll]] for (uint u = 0; u < 8; u += 2) {
					a += ATT_R(t + u * groups) * v[u];
					b += ATT_R(t + (u + 1) * groups) * v[u + 1];
				}
			}
			for (; t < tb; t += groups)
				a += ATT_R(t) * VL(vo + t * kv_dim);
		}
		acc_sh[tid] = a + b;
	}
	barrier();
	if (tid < hd4)
		for (uint gg = 0; gg < groups; gg++)
			out4 += acc_sh[gg * hd4 + tid];
#ifdef SPLIT
	if (nact == 1u) {
#endif
		if (tid < hd4)
			o4[oo + h * hd4 + tid] = out4 / sum;
#ifdef SPLIT
		return;
	}
	// this chunk's result: [max, sum, out (head_dim)] per (head, chunk);
	// after them one counter per head
	uint rec = 4 + head_dim;
	uint wb = pc.aux[2] + (h * nch + c) * rec;
	if (tid < hd4)
		work4[wb / 4 + 1 + tid] = out4;
	if (tid == 0) {
		workf[wb] = mx;
		workf[wb + 1] = sum;
	}
	uint cnt = pc.aux[2] + n_head * nch * rec + h;
	if (!last_workgroup(cnt, nact))
		return;
	// the chunks' maxes and sums through shared memory, loaded by as
	// many threads (a loop of dependent loads per thread is what costs
	// here), each output vec4 then adding its chunks' eight at a time
	uint hb = pc.aux[2] + h * nch * rec;
	for (uint cc = tid; cc < nact; cc += WG) {
		att_sh[cc] = workf[hb + cc * rec];
		att_sh[ATT_SH / 2 + cc] = workf[hb + cc * rec + 1];
	}
	barrier();
	float m = -1.0 / 0.0;
	for (uint cc = 0; cc < nact; cc++)
		m = max(m, att_sh[cc]);
	if (tid < hd4) {
		float l = 0.0;
		vec4 o = vec4(0.0);
		uint cc = 0;
		for (; cc + 8u <= nact; cc += 8u) {
			vec4 v[8];
			[[unroll]] for (uint u = 0; u < 8u; u++)
				v[u] = work4[(hb + (cc + u) * rec) / 4 + 1 + tid];
			[[unroll]] for (uint u = 0; u < 8u; u++) {
				float w = exp(att_sh[cc + u] - m);
				l += w * att_sh[ATT_SH / 2 + cc + u];
				o += w * v[u];
			}
		}
		for (; cc < nact; cc++) {
			float w = exp(att_sh[cc] - m);
			l += w * att_sh[ATT_SH / 2 + cc];
			o += w * work4[(hb + cc * rec) / 4 + 1 + tid];
		}
		o4[oo + h * hd4 + tid] = o / l;
	}
	if (tid == 0)
		worku[cnt] = 0u;
#endif
}
