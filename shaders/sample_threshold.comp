#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// sample_threshold (doc/samplers.md, step 3): tau = max(tau_k, tau_p,
// tau_m) of the logits into scratch[0], -INFINITY when nothing truncates.
// params: n, top_k (0: off), top_p (1: off), min_p (0: off).
//
// -DARGMAX: the Vulkan backend's fusion of sample_threshold, sample_gumbel
// and argmax (plugins/backend-vulkan/backend.c): the last workgroup also
// draws the token from the values it kept. Binding 2 is token_ids; params
// p4..p6 are sample_gumbel's inv_temp, seed_lo, seed_hi; p7.. the
// end-of-generation ids, as argmax.
//
// Values are compared as keys: the float's bits mapped to a uint that
// orders as the floats do. A threshold is bracketed by passes over the
// values until at most SMALL values lie at or above the bracket's low end:
// for top-k, narrow_hist() counts them into 256 bins (evenly spaced in
// value, or in key once the bracket is a few floats wide) and keeps the
// bin where the count at or above crosses k; for top-p without top-k,
// narrow() sums exp(v - v1) over the values at or above 16 probe keys and
// keeps the bracket where that sum crosses the target.
// Those are gathered in shared memory, where each is ranked against all
// (after top-k by one subgroup alone, without workgroup barriers): tau_k is the smallest value with fewer than k values
// above it; tau_p the largest v whose sum over the values >= v reaches
// top_p of the total over those >= tau_k. (If ties keep more than SMALL
// values in a bracket a single key wide, that key is the answer.)
//
// Two stages in one dispatch. With more than one chunk and top_k on, each
// workgroup narrows its CHUNK logits to a few candidates that include all
// its values at or above its own k-th largest, which together hold every
// value at or above the global k-th largest (such a value has fewer than k
// values above it in its chunk too). The last workgroup to finish works on
// those candidates in shared memory, or, when top_k is off or they do not
// fit, on all n logits from the buffer.
#define WG 256
#define PER 16
#define CHUNK (WG * PER) // THRESH_CHUNK in plugins/backend-vulkan/kernels.c
#define SHCAP 4096	 // candidates the last workgroup takes into shared
#define CMAX 65536	 // candidates in all: THRESH_CAND in kernels.c
#define SMALL WG	 // values ranked one per thread
#define UN 8		 // values a thread loads at once in a pass
layout(local_size_x = WG) in;
layout(binding = 0) readonly buffer L { float l[]; };
layout(binding = 1) buffer S { float scratch[]; };
#ifdef ARGMAX
#include "gumbel.glsl"
#include "wg_argmax.glsl"
layout(binding = 2) buffer I { int ids[]; };
#endif

shared float cand[SHCAP];
shared float sm[SMALL], sw[SMALL]; // gathered values, their weights
shared uint cnt_sh;

#define NEG_INF uintBitsToFloat(0xff800000u)

uint key_of(float f)
{
	uint b = floatBitsToUint(f);
	return (b & 0x80000000u) != 0u ? ~b : b | 0x80000000u;
}

float val_of(uint k)
{
	return uintBitsToFloat((k & 0x80000000u) != 0u ? k & 0x7fffffffu : ~k);
}

// The values searched: cand[0 .. len) in shared, the candidate list in
// the work buffer, or the logits.
#define SRC_SHARED 0u
#define SRC_WORK 1u
#define SRC_LOGITS 2u
uint src_mode, src_off;

// vv[u] = value i0 + u * WG, -INFINITY past len; one branch on the
// source around the loads (a select per value would issue all three)
void load_un(uint i0, uint len, out float vv[UN])
{
	if (src_mode == SRC_SHARED) {
		[[unroll]] for (uint u = 0; u < UN; u++) {
			uint i = i0 + u * WG;
			vv[u] = cand[min(i, len - 1u)];
			vv[u] = i < len ? vv[u] : NEG_INF;
		}
	} else if (src_mode == SRC_WORK) {
		[[unroll]] for (uint u = 0; u < UN; u++) {
			uint i = i0 + u * WG;
			vv[u] = workf[src_off + 2u * min(i, len - 1u)];
			vv[u] = i < len ? vv[u] : NEG_INF;
		}
	} else {
		[[unroll]] for (uint u = 0; u < UN; u++) {
			uint i = i0 + u * WG;
			vv[u] = l[pc.o[0] + min(i, len - 1u)];
			vv[u] = i < len ? vv[u] : NEG_INF;
		}
	}
}

// The 16 probes and their totals are four vec4s each, indexed only by
// constants (a register array indexed in a loop may go to local memory).
shared vec4 red4[4][64]; // per quarter, per subgroup (>= 4 lanes)

// a0..a3 summed over the workgroup, the same in every thread.
void reduce4x4(inout vec4 a0, inout vec4 a1, inout vec4 a2, inout vec4 a3)
{
	a0 = subgroupAdd(a0);
	a1 = subgroupAdd(a1);
	a2 = subgroupAdd(a2);
	a3 = subgroupAdd(a3);
	if (subgroupElect()) {
		red4[0][gl_SubgroupID] = a0;
		red4[1][gl_SubgroupID] = a1;
		red4[2][gl_SubgroupID] = a2;
		red4[3][gl_SubgroupID] = a3;
	}
	barrier();
	a0 = a1 = a2 = a3 = vec4(0.0);
	for (uint q = 0; q < gl_NumSubgroups; q++) {
		a0 += red4[0][q];
		a1 += red4[1][q];
		a2 += red4[2][q];
		a3 += red4[3][q];
	}
	barrier();
}

// Element j of the 16 in four vec4s, by selects.
uint pick_u(uvec4 p0, uvec4 p1, uvec4 p2, uvec4 p3, uint j)
{
	uvec4 v = j < 4u ? p0 : j < 8u ? p1 : j < 12u ? p2 : p3;
	uint c = j & 3u;
	return c == 0u ? v.x : c == 1u ? v.y : c == 2u ? v.z : v.w;
}

float pick_f(vec4 p0, vec4 p1, vec4 p2, vec4 p3, uint j)
{
	vec4 v = j < 4u ? p0 : j < 8u ? p1 : j < 12u ? p2 : p3;
	uint c = j & 3u;
	return c == 0u ? v.x : c == 1u ? v.y : c == 2u ? v.z : v.w;
}

// 1.0 where key k is at or above the probe
#define GE4(k, p) vec4(greaterThanEqual(uvec4(k), p))

// Narrow [lo, hi] to a bracket of the largest key t with F(t) >= target,
// F(t) the sum of exp(v - v1) over the values 0 .. len of the source with
// key >= t; the caller knows F(lo) >= target, and n_lo >= the number of
// values at or above lo. Returns the final lo, the answer when
// the loop ran out of keys; n_lo is then that number, or at most `stop`.
uint n_lo;

uint narrow(uint lo, uint hi, float target, float v1, uint len,
	    uint stop)
{
	uint tid = gl_LocalInvocationID.x;
	while (lo < hi && n_lo > stop) {
		// 16 probe keys in (lo, hi], increasing: evenly spaced in value
		// while the bracket is wide in value, else in key
		float lv = val_of(lo), d = (val_of(hi) - lv) / 17.0;
		vec4 f = vec4(1.0, 2.0, 3.0, 4.0);
		uvec4 p0 = uvec4(key_of(lv + d * f.x), key_of(lv + d * f.y),
				 key_of(lv + d * f.z), key_of(lv + d * f.w));
		uvec4 p1 = uvec4(key_of(lv + d * (f.x + 4.0)), key_of(lv + d * (f.y + 4.0)),
				 key_of(lv + d * (f.z + 4.0)), key_of(lv + d * (f.w + 4.0)));
		uvec4 p2 = uvec4(key_of(lv + d * (f.x + 8.0)), key_of(lv + d * (f.y + 8.0)),
				 key_of(lv + d * (f.z + 8.0)), key_of(lv + d * (f.w + 8.0)));
		uvec4 p3 = uvec4(key_of(lv + d * (f.x + 12.0)), key_of(lv + d * (f.y + 12.0)),
				 key_of(lv + d * (f.z + 12.0)), key_of(lv + d * (f.w + 12.0)));
		bool by_value = !isinf(d) && !isnan(d) && p3.w <= hi &&
				all(greaterThan(p0, uvec4(lo, p0.xyz))) &&
				all(greaterThan(p1, uvec4(p0.w, p1.xyz))) &&
				all(greaterThan(p2, uvec4(p1.w, p2.xyz))) &&
				all(greaterThan(p3, uvec4(p2.w, p3.xyz)));
		uint nvalid = 16u;
		if (!by_value) {
			uint r = hi - lo;
			uint step = r / 17u + (r % 17u != 0u ? 1u : 0u);
			nvalid = min(16u, r / step); // no overflow: 16 * step < 2^32
			uvec4 m = uvec4(1u, 2u, 3u, 4u) * step;
			p0 = lo + m;
			p1 = lo + 4u * step + m;
			p2 = lo + 8u * step + m;
			p3 = lo + 12u * step + m;
		}
		vec4 a0 = vec4(0.0), a1 = a0, a2 = a0, a3 = a0;
		vec4 c0 = a0, c1 = a0, c2 = a0, c3 = a0;
		// from shared memory one value at a time; from memory UN
		// loads in flight per thread
#define ACC(v_)                                                        \
	{                                                              \
		float v = v_;                                          \
		uint k = key_of(v);                                    \
		if (k > lo) {                                          \
			vec4 g0 = GE4(k, p0), g1 = GE4(k, p1);         \
			vec4 g2 = GE4(k, p2), g3 = GE4(k, p3);         \
			float w = exp(v - v1);                         \
			a0 += g0 * w;                                  \
			a1 += g1 * w;                                  \
			a2 += g2 * w;                                  \
			a3 += g3 * w;                                  \
			c0 += g0;                                      \
			c1 += g1;                                      \
			c2 += g2;                                      \
			c3 += g3;                                      \
		}                                                      \
	}
		if (src_mode == SRC_SHARED) {
			for (uint i = tid; i < len; i += WG)
				ACC(cand[i])
		} else {
			for (uint i0 = tid; i0 < len; i0 += UN * WG) {
				float vv[UN];
				load_un(i0, len, vv);
				[[unroll]] for (uint u = 0; u < UN; u++)
					if (i0 + u * WG < len)
						ACC(vv[u])
			}
		}
#undef ACC
		reduce4x4(a0, a1, a2, a3);
		reduce4x4(c0, c1, c2, c3);
		// F is decreasing, so the probes that pass lead: count them
		vec4 t = vec4(target);
		uvec4 idx = uvec4(0u, 1u, 2u, 3u), nv = uvec4(nvalid);
		uvec4 ok = uvec4(greaterThanEqual(a0, t)) * uvec4(lessThan(idx, nv)) +
			   uvec4(greaterThanEqual(a1, t)) * uvec4(lessThan(idx + 4u, nv)) +
			   uvec4(greaterThanEqual(a2, t)) * uvec4(lessThan(idx + 8u, nv)) +
			   uvec4(greaterThanEqual(a3, t)) * uvec4(lessThan(idx + 12u, nv));
		uint pass = ok.x + ok.y + ok.z + ok.w;
		if (pass > 0u) {
			lo = pick_u(p0, p1, p2, p3, pass - 1u);
			n_lo = uint(pick_f(c0, c1, c2, c3, pass - 1u));
		}
		if (pass < nvalid)
			hi = pick_u(p0, p1, p2, p3, pass) - 1u;
	}
	return lo;
}

// The count-only narrowing (top-k) in fewer passes: a histogram of the
// bracket's values over NB bins, bin j holding keys [hp[j], hp[j + 1])
// (the last up to hi), its boundaries evenly spaced in value (in key once
// that stops narrowing), and a suffix sum over the bins picks the bin
// where the count of values at or above crosses the target. Same contract
// as narrow(): on return at most `stop` values (n_lo) lie at or above the
// returned key, or the bracket is a single key.
#define NB WG
shared uint hp[NB], hc[NB];
shared uint hsum[64], hres[3];

uint narrow_hist(uint lo, uint hi, uint target, uint len, uint stop)
{
	uint tid = gl_LocalInvocationID.x;
	uint n_hi = 0u; // values above hi: fewer than target
	bool by_key = false;
	while (lo < hi && n_lo > stop) {
		float lv = val_of(lo), d = (val_of(hi) - lv) / float(NB);
		bool bv = !by_key && d > 0.0 && !isinf(d) && hi - lo >= 4u * NB;
		uint step = (hi - lo) / NB + 1u; // NB bins of step keys cover the bracket
		hp[tid] = bv ? (tid == 0u ? lo : clamp(key_of(lv + d * float(tid)), lo, hi))
		    : tid * step <= hi - lo ? lo + tid * step : hi;
		hc[tid] = 0u;
		barrier();
		// each value at or above lo into its bin: the largest j with
		// hp[j] <= key (in value: estimated, then corrected)
#define BIN(v_)                                                               \
	{                                                                     \
		float v = v_;                                                 \
		uint k = key_of(v);                                           \
		if (k >= lo && k <= hi) {                                     \
			uint b;                                               \
			if (bv) {                                             \
				b = uint(clamp((v - lv) / d, 0.0, float(NB - 1u))); \
				while (b > 0u && k < hp[b])                   \
					b--;                                  \
				while (b < NB - 1u && k >= hp[b + 1u])        \
					b++;                                  \
			} else {                                              \
				b = (k - lo) / step;                          \
			}                                                     \
			atomicAdd(hc[b], 1u);                                 \
		}                                                             \
	}
		if (src_mode == SRC_SHARED) {
			for (uint i = tid; i < len; i += WG)
				BIN(cand[i])
		} else {
			for (uint i0 = tid; i0 < len; i0 += UN * WG) {
				float vv[UN];
				load_un(i0, len, vv);
				[[unroll]] for (uint u = 0; u < UN; u++)
					if (i0 + u * WG < len)
						BIN(vv[u])
			}
		}
#undef BIN
		barrier();
		// F_j = n_hi + the counts of bins j .. NB - 1, nonincreasing
		// in j; this thread's bin is j in the subgroups' order
		uint j = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
		uint c = hc[j], tot = subgroupAdd(c);
		uint sfx = tot - subgroupInclusiveAdd(c) + c;
		if (subgroupElect())
			hsum[gl_SubgroupID] = tot;
		barrier();
		for (uint q = gl_SubgroupID + 1u; q < gl_NumSubgroups; q++)
			sfx += hsum[q];
		uint f = n_hi + sfx;
		if (f >= target && f - c < target) {
			hres[0] = j;
			hres[1] = f;
			hres[2] = f - c;
		}
		barrier();
		// the bracket becomes bin j (nonempty, so hp[j + 1] > hp[j])
		j = hres[0];
		uint nlo = hp[j], nhi;
		if (bv)
			nhi = j + 1u < NB ? hp[j + 1u] - 1u : hi;
		else
			nhi = (j + 1u) * step <= hi - lo ? lo + (j + 1u) * step - 1u : hi;
		by_key = by_key || (nlo == lo && nhi == hi);
		lo = nlo;
		hi = nhi;
		n_lo = hres[1];
		n_hi = hres[2];
		barrier(); // hp, hc and hres are used up
	}
	return lo;
}

// Gather the values 0 .. len of the source with key >= lo into sm (at most SMALL,
// as the caller knows); returns their number.
#ifdef ARGMAX
// With the draw: their token ids into sid, and lo into lo_g. A value's id
// is its index in the source (all logits, or the single chunk), or is
// stored beside it in the candidate list (own_ids false, at wcand_g).
shared uint sid[SMALL];
uint lo_g = 0xffffffffu, wcand_g;
bool own_ids;
#endif

uint gather(uint lo, uint len)
{
	if (gl_LocalInvocationID.x == 0u)
		cnt_sh = 0u;
	barrier();
	for (uint i0 = gl_LocalInvocationID.x; i0 < len; i0 += UN * WG) {
		float vv[UN];
		load_un(i0, len, vv);
		[[unroll]] for (uint u = 0; u < UN; u++)
			if (i0 + u * WG < len && key_of(vv[u]) >= lo) {
				uint s = atomicAdd(cnt_sh, 1u);
				sm[s] = vv[u];
#ifdef ARGMAX
				uint i = i0 + u * WG;
				sid[s] = own_ids ? i : worku[wcand_g + 2u * i + 1u];
#endif
			}
	}
#ifdef ARGMAX
	lo_g = lo;
#endif
	barrier();
	uint m = cnt_sh;
	barrier();
	return m;
}

// (minimum of mn, maximum of mx) over the workgroup, one round of barriers
shared vec2 mm_sh[64];
vec2 wg_minmax(float mn, float mx)
{
	mn = subgroupMin(mn);
	mx = subgroupMax(mx);
	if (subgroupElect())
		mm_sh[gl_SubgroupID] = vec2(mn, mx);
	barrier();
	vec2 r = mm_sh[0];
	for (uint q = 1; q < gl_NumSubgroups; q++)
		r = vec2(min(r.x, mm_sh[q].x), max(r.y, mm_sh[q].y));
	barrier();
	return r;
}

// Over the m gathered values, those >= fl: the largest v whose
// sum of exp(u - v1) over u >= v reaches target; -INFINITY if none (then
// top-p cuts nothing above fl).
float rank_top_p(uint m, float fl, float target, float v1)
{
	uint i = gl_LocalInvocationID.x;
	if (i < m)
		sw[i] = exp(sm[i] - v1);
	barrier();
	float best = NEG_INF;
	if (i < m && sm[i] >= fl) {
		float v = sm[i], s = 0.0;
		for (uint j = 0u; j < m; j++)
			s += sm[j] >= v ? sw[j] : 0.0;
		if (s >= target)
			best = v;
	}
	return wg_max(best);
}

// After the top-k gather, by subgroup 0 alone (the other subgroups have
// returned; subgroup operations only, no workgroup barrier): tau_k, tau_m,
// tau_p over the m values in sm (tau_k: the smallest with fewer than k
// above it; tau_p as rank_top_p finds it), then (ARGMAX) the draw, and
// the outputs main() writes at its end.
void finish_k(uint m, uint k, bool m_on, float tm, bool p_on, float top_p,
	      float v1, uint wcnt, uint nwg)
{
	uint lane = gl_SubgroupInvocationID, ns = gl_SubgroupSize;
	// tau_k: the smallest value with fewer than k values above it
	float tau = uintBitsToFloat(0x7f800000u);
	for (uint i = lane; i < m; i += ns) {
		float v = sm[i];
		uint gt = 0u;
		for (uint j = 0u; j < m; j++)
			gt += sm[j] > v ? 1u : 0u;
		if (gt < k)
			tau = min(tau, v);
	}
	tau = subgroupMin(tau);
	float fl = tau; // top-p's floor: the values >= tau_k
	if (m_on)
		tau = max(tau, tm);
	if (p_on) {
		float z = 0.0;
		for (uint i = lane; i < m; i += ns) {
			float w = exp(sm[i] - v1);
			sw[i] = w;
			z += sm[i] >= fl ? w : 0.0;
		}
		z = subgroupAdd(z);
		subgroupMemoryBarrierShared();
		subgroupBarrier();
		float target = top_p * z, tp = NEG_INF;
		for (uint i = lane; i < m; i += ns) {
			float v = sm[i];
			if (!(v >= fl))
				continue;
			float sum = 0.0;
			for (uint j = 0u; j < m; j++)
				sum += sm[j] >= v ? sw[j] : 0.0;
			if (sum >= target)
				tp = max(tp, v);
		}
		tau = max(tau, subgroupMax(tp));
	}
#ifdef ARGMAX
	float bv = NEG_INF;
	uint bi = 0xffffffffu, pos = at_position(1u, 0u);
	for (uint i = lane; i < m; i += ns) {
		if (!(sm[i] >= tau))
			continue;
		uint id = sid[i];
		float sv = gumbel_perturb(sm[i], pflt(4), id, pos, pc.p[5], pc.p[6]);
		if (better(sv, id, bv, bi)) {
			bv = sv;
			bi = id;
		}
	}
	sg_argmax(bv, bi);
	if (lane == 0u) {
		ids[pc.o[2] + at_out(0u)] = int(bi);
		stop_if_eog(bi);
	}
#endif
	if (lane == 0u) {
		scratch[pc.o[1]] = tau;
		if (nwg > 1u) {
			worku[wcnt] = 0u;
			worku[wcnt + 1u] = 0u;
			worku[wcnt + 2u] = 0u;
		}
	}
}

void main()
{
	STOP_CHECK();
	uint n = pc.p[0];
	int top_k = pint(1);
	float top_p = pflt(2), min_p = pflt(3);
	uint tid = gl_LocalInvocationID.x;
	uint g = wg_id(), nwg = (n + CHUNK - 1) / CHUNK;
	if (g >= nwg)
		return;
	bool k_on = top_k > 0 && uint(top_k) < n, p_on = top_p < 1.0;
	bool m_on = min_p > 0.0;
	// what each chunk keeps for the last workgroup (with more than one):
	// its values >= its own k-th largest (a superset of the global top
	// k), or without top-k but with top-p and min-p, its values >= its
	// maximum + log(min_p) (a superset of those >= tau_m), and the sum of
	// exp(v - its maximum) for top-p's total
	bool keep_k = k_on && uint(top_k) <= CMAX / nwg;
	bool keep_m = !k_on && p_on && m_on;
	// work: maxima [nwg], sums [nwg]; the last-workgroup counter, the
	// candidates' count, an overflow flag; then up to CMAX candidates as
	// (value, token id) pairs
	uint wb = pc.aux[2], wcnt = wb + 2u * nwg;
	uint wcand = wb + (2u * nwg + 3u + 3u) / 4u * 4u;
	uint base = g * CHUNK, len = min(CHUNK, n - base);

	// this chunk into shared (all loads issued at once), its extremes
	float mx = NEG_INF, mn = uintBitsToFloat(0x7f800000u);
	[[unroll]] for (uint j = 0; j < PER; j++) {
		uint i = j * WG + tid;
		if (i < len) {
			float v = l[pc.o[0] + base + i];
			cand[i] = v;
			mx = max(mx, v);
			mn = min(mn, v);
		}
	}
	vec2 r = wg_minmax(mn, mx); // its barriers also publish cand
	mn = r.x;
	mx = r.y;
	src_mode = SRC_SHARED;
	float z_all = -1.0; // top-p's total from the chunks' sums, if kept
	if (nwg > 1u) {
		// stage 1, appending the kept values to the work buffer's list
		// at an offset taken atomically
		if (tid == 0u)
			workf[wb + g] = mx;
		if (keep_k || keep_m) {
			uint lo;
			if (keep_k) {
				uint kk = min(uint(top_k), len);
				n_lo = len;
				lo = narrow_hist(key_of(mn), key_of(mx), kk, len,
						 min(max(2u * kk, SHCAP / nwg), CMAX / nwg));
			} else {
				precise float lm = mx + log(min_p);
				lo = key_of(lm);
				float zc = 0.0, nc = 0.0;
				for (uint i = tid; i < len; i += WG) {
					zc += exp(cand[i] - mx);
					nc += key_of(cand[i]) >= lo ? 1.0 : 0.0;
				}
				zc = wg_sum(zc);
				n_lo = uint(wg_sum(nc));
				if (tid == 0u)
					workf[wb + nwg + g] = zc;
			}
			if (tid == 0u) {
				uint at = atomicAdd(worku[wcnt + 1u], n_lo);
				if (at + n_lo > CMAX)
					worku[wcnt + 2u] = 1u;
				cnt_sh = at + n_lo > CMAX ? CMAX : at;
			}
			barrier();
			for (uint i = tid; i < len; i += WG) {
				float v = cand[i];
				if (key_of(v) >= lo) {
					uint s = atomicAdd(cnt_sh, 1u);
					if (s < CMAX) {
						workf[wcand + 2u * s] = v;
						worku[wcand + 2u * s + 1u] = base + i;
					}
				}
			}
		}
		if (!last_workgroup(wcnt, nwg))
			return;
		// stage 2: v1 (the chunks' maxima) and the minimum of the
		// source: the list if none overflowed (into shared if it fits
		// there), or the logits; all loads of a round issued at once
		uint total = worku[wcnt + 1u];
		bool fit = (keep_k || keep_m) && worku[wcnt + 2u] == 0u;
		mx = NEG_INF;
		for (uint q = tid; q < nwg; q += WG)
			mx = max(mx, workf[wb + q]);
		mn = uintBitsToFloat(0x7f800000u);
		src_mode = fit ? SRC_WORK : SRC_LOGITS;
		src_off = wcand;
		len = fit ? total : n;
		bool to_sh = fit && total <= SHCAP;
		if (fit || k_on || p_on)
			for (uint i0 = tid; i0 < len; i0 += UN * WG) {
				float vv[UN];
				load_un(i0, len, vv);
				[[unroll]] for (uint u = 0; u < UN; u++) {
					uint i = i0 + u * WG;
					if (i < len) {
						mn = min(mn, vv[u]);
						if (to_sh)
							cand[i] = vv[u];
					}
				}
			}
		if (to_sh)
			src_mode = SRC_SHARED;
		r = wg_minmax(mn, mx);
		mn = r.x;
		mx = r.y;
		// top-p's total from the chunks' sums
		if (fit && keep_m) {
			float z = 0.0;
			for (uint q = tid; q < nwg; q += WG)
				z += workf[wb + nwg + q] * exp(workf[wb + q] - mx);
			z_all = wg_sum(z);
		}
	}
#ifdef ARGMAX
	own_ids = src_mode == SRC_LOGITS || nwg == 1u;
	wcand_g = wcand;
#endif
	float v1 = mx;

	float tau = NEG_INF;
	bool have_sm = false; // sm holds every value >= the floor below
	uint m = 0u, floor_k = key_of(mn);
	if (k_on) {
		n_lo = len;
		uint lo = narrow_hist(key_of(mn), key_of(v1), uint(top_k), len,
				      SMALL);
		if (n_lo <= SMALL) {
			m = gather(lo, len);
			// the rest is small: subgroup 0 alone, no barriers
			if (gl_SubgroupID != 0u)
				return;
			precise float tmk = v1 + log(min_p);
			finish_k(m, uint(top_k), m_on, tmk, p_on, top_p, v1,
				 wcnt, nwg);
			return;
		} else {
			tau = val_of(lo);
		}
		floor_k = key_of(tau);
	}
	precise float tm = v1 + log(min_p);
	if (m_on)
		tau = max(tau, tm);
	if (p_on) {
		// the total over the values >= tau_k; with the min-p list,
		// the chunks' sums, and only values >= tau_m matter
		float z = 0.0, fl = val_of(floor_k);
		if (z_all >= 0.0) {
			z = z_all;
			floor_k = key_of(tm);
			fl = tm;
		} else if (have_sm) {
			for (uint i = tid; i < m; i += WG)
				z += sm[i] >= fl ? exp(sm[i] - v1) : 0.0;
			z = wg_sum(z);
		} else {
			for (uint i0 = tid; i0 < len; i0 += UN * WG) {
				float vv[UN];
				load_un(i0, len, vv);
				[[unroll]] for (uint u = 0; u < UN; u++)
					z += key_of(vv[u]) >= floor_k ? exp(vv[u] - v1) : 0.0;
			}
			z = wg_sum(z);
		}
		float tp = NEG_INF;
		if (!have_sm) {
			n_lo = len;
			uint lo = narrow(floor_k, key_of(v1), top_p * z,
					 v1, len, SMALL);
			if (n_lo <= SMALL) {
				m = gather(lo, len);
				have_sm = true;
			} else {
				tp = val_of(lo);
			}
		}
		if (have_sm)
			tp = rank_top_p(m, fl, top_p * z, v1);
		tau = max(tau, tp);
	}
	// nothing cut: -INFINITY, as the CPU sampler
	if (!k_on && !p_on && !m_on)
		tau = NEG_INF;
#ifdef ARGMAX
	// the draw (sample_gumbel and argmax fused in): the argmax over the
	// values >= tau of v * inv_temp + g_i, lowest id on ties. The kept
	// set lies in the source, whose ids are its indices (all logits, or a
	// single chunk) or stored beside the values (the candidate list).
	float bv = NEG_INF;
	uint bi = 0xffffffffu, pos = at_position(1u, 0u);
	if (have_sm && key_of(tau) >= lo_g) {
		// the kept values are among the gathered: one per thread
		if (tid < m && sm[tid] >= tau) {
			bi = sid[tid];
			bv = gumbel_perturb(sm[tid], pflt(4), bi, pos, pc.p[5], pc.p[6]);
		}
	} else for (uint i0 = tid; i0 < len; i0 += UN * WG) {
		float vv[UN];
		load_un(i0, len, vv);
		[[unroll]] for (uint u = 0; u < UN; u++) {
			uint i = i0 + u * WG;
			if (i >= len || !(vv[u] >= tau))
				continue;
			uint id = own_ids ? i : worku[wcand + 2u * i + 1u];
			float sv = gumbel_perturb(vv[u], pflt(4), id, pos, pc.p[5], pc.p[6]);
			if (better(sv, id, bv, bi)) {
				bv = sv;
				bi = id;
			}
		}
	}
	wg_argmax(bv, bi);
	if (tid == 0u) {
		uint tok = bi;
		ids[pc.o[2] + at_out(0u)] = int(tok);
		stop_if_eog(tok);
	}
#endif
	if (tid == 0u) {
		scratch[pc.o[1]] = tau;
		if (nwg > 1u) {
			worku[wcnt] = 0u;
			worku[wcnt + 1u] = 0u;
			worku[wcnt + 2u] = 0u;
		}
	}
}
