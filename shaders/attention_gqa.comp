#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
// attention for one token, variant split_gqa: a workgroup per kv head and
// chunk of positions does the R = n_head / n_head_kv query heads that
// read that kv head together, so each key and value is loaded once for
// all of them, and its loads are coalesced: L lanes of a subgroup share a
// position's row, each reading NU pieces of 8 values (16 bytes of an F16
// cache, 32 of an F32), lane l piece l + L j, so that the L lanes read
// whole consecutive lines. A subgroup does RP = SGS / L positions at a
// time, U of those steps' loads first (the first U steps of v before the
// softmax, so that at short contexts their latency overlaps it); the
// workgroup is NSG = 4 subgroups.
//
// 1. scores s(r, t) = scale q_r . k_t for the chunk's positions, the
//    lanes' partial dots added across the L lanes by shuffles, into shared
//    memory (R x len floats, len <= SC / R);
// 2. per head r the chunk's max and sum of exp(s - max), the scores
//    replaced by exp(s - max);
// 3. out(r) = sum_t p(r, t) v_t: each lane its pieces of the R outputs,
//    added across the subgroup's positions by shuffles and across the
//    subgroups through shared memory (the scores' space, free by then).
// One chunk: out / sum is the output. Else (max, sum, out) per (query
// head, chunk) go to the work buffer and the last workgroup of the kv head
// to finish (a counter per kv head, reset by it) merges them, as split_kv
// does (attention.comp).
//
// Chunks: aux0 positions at least, aux1 chunks per kv head at most: len =
// max(aux0, n_kv / aux1 rounded up); the host makes aux1 large enough
// that R len <= SC.
//
// bindings: 0 q, 1 k_cache, 2 v_cache (kv.glsl: F32 or F16 here, base and
// rows 16-byte aligned), 3 out; params: n_head, n_head_kv, head_dim (8 L
// NU), n_ctx, scale; aux2: the command's words of the work buffer
layout(local_size_x_id = 5) in;
layout(constant_id = 2) const uint R = 4u;  // query heads per kv head
layout(constant_id = 3) const uint L = 16u; // lanes per position
layout(constant_id = 4) const uint NU = 1u; // pieces of 8 values per lane
layout(constant_id = 5) const uint WG = 128u; // NSG subgroups of SGS
#define NSG 4u
const uint SGS = WG / NSG;
const uint RP = SGS / L; // positions per subgroup step
layout(constant_id = 6) const uint U = 4u; // steps whose loads are in flight
#define SC 4096u	 // floats of shared scores
layout(binding = 0) readonly buffer Q4 { vec4 q4[]; };
#define KV_K_BINDING 1
#define KV_V_BINDING 2
#include "kv.glsl"
layout(binding = 3) writeonly buffer O4 { vec4 o4[]; };

shared float sc[SC];
shared float red[NSG * R];

// 8 values of a cache row from element e (a multiple of 8), as loaded
// (F16: a; F32: a, b) and as floats
#define RAW8(NAME, T, U4)                                                  \
	void NAME(uint base, uint e, out uvec4 a, out uvec4 b)             \
	{                                                                  \
		if (T == KV_F32) {                                         \
			a = U4[(base >> 3) + (e >> 2)];                    \
			b = U4[(base >> 3) + (e >> 2) + 1u];               \
		} else {                                                   \
			a = U4[(base >> 3) + (e >> 3)];                    \
			b = uvec4(0u);                                     \
		}                                                          \
	}
RAW8(k_raw8, KV_K, kcu4)
RAW8(v_raw8, KV_V, vcu4)

void floats8(uint T, uvec4 a, uvec4 b, out vec4 lo, out vec4 hi)
{
	if (T == KV_F32) {
		lo = uintBitsToFloat(a);
		hi = uintBitsToFloat(b);
	} else {
		lo = vec4(unpackHalf2x16(a.x), unpackHalf2x16(a.y));
		hi = vec4(unpackHalf2x16(a.z), unpackHalf2x16(a.w));
	}
}

// sum over the L lanes of a position (the lanes l ^ o, o < L)
float lanes_sum(float v)
{
	[[unroll]] for (uint o = L / 2u; o > 0u; o /= 2u)
		v += subgroupShuffleXor(v, o);
	return v;
}

void main()
{
	STOP_CHECK();
	uint n_head = pc.p[0], n_head_kv = pc.p[1], head_dim = pc.p[2];
	float scale = pflt(4);
	uint tid = gl_LocalInvocationID.x;
	uint n_kv = at_n_kv(0u);
	uint kh = wg_id() % n_head_kv, c = wg_id() / n_head_kv;
	uint h0 = kh * R; // the group's first query head
	uint hd4 = head_dim / 4u;
	if (n_kv == 0u) { // no entries (patch none): zeros, as the CPU's
		for (uint i = tid; i < R * hd4 && c == 0u; i += WG)
			o4[pc.o[3] + h0 * hd4 + i] = vec4(0.0);
		return;
	}
	uint nch = pc.aux[1];
	uint len = max(pc.aux[0], (n_kv + nch - 1u) / nch);
	uint nact = (n_kv + len - 1u) / len;
	uint t0 = c * len, t1 = min(n_kv, t0 + len);
	if (t0 >= n_kv)
		return;
	uint n = t1 - t0;

	uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
	uint li = lane % L, slot = sg * RP + lane / L; // position slot
	const uint SLOTS = NSG * RP;
	uint kv_dim = n_head_kv * head_dim, ko = kh * head_dim;
	uint kb0 = pc.o[1], vb0 = pc.o[2];

	// the lane's pieces of the R queries, scaled
	vec4 ql[R][NU], qh[R][NU];
	[[unroll]] for (uint r = 0; r < R; r++)
		[[unroll]] for (uint j = 0; j < NU; j++) {
			uint at = pc.o[0] + (h0 + r) * hd4 + 2u * (li + L * j);
			ql[r][j] = q4[at] * scale;
			qh[r][j] = q4[at + 1u] * scale;
		}

	// 1. scores; every lane of a position ends with its sums
	float mx[R];
	[[unroll]] for (uint r = 0; r < R; r++)
		mx[r] = -1.0 / 0.0;
	for (uint s0 = 0; s0 < n; s0 += U * SLOTS) {
		uvec4 ka[U][NU], kb[U][NU];
		[[unroll]] for (uint u = 0; u < U; u++) {
			uint i = s0 + u * SLOTS + slot;
			uint row = ko + (t0 + min(i, n - 1u)) * kv_dim;
			[[unroll]] for (uint j = 0; j < NU; j++)
				k_raw8(kb0, row + 8u * (li + L * j), ka[u][j], kb[u][j]);
		}
		[[unroll]] for (uint u = 0; u < U; u++) {
			uint i = s0 + u * SLOTS + slot;
			float d[R];
			[[unroll]] for (uint r = 0; r < R; r++)
				d[r] = 0.0;
			[[unroll]] for (uint j = 0; j < NU; j++) {
				vec4 lo, hi;
				floats8(KV_K, ka[u][j], kb[u][j], lo, hi);
				[[unroll]] for (uint r = 0; r < R; r++)
					d[r] += dot(ql[r][j], lo) + dot(qh[r][j], hi);
			}
			[[unroll]] for (uint r = 0; r < R; r++) {
				float s = lanes_sum(d[r]);
				if (i < n) {
					if (li == 0u)
						sc[r * len + i] = s;
					mx[r] = max(mx[r], s);
				}
			}
		}
	}
	// the first steps' values, loaded while the softmax is computed
	uvec4 va[U][NU], vb[U][NU];
#define V_LOADS(S0)                                                              \
	[[unroll]] for (uint u = 0; u < U; u++) {                                \
		uint i = (S0) + u * SLOTS + slot;                                \
		uint row = ko + (t0 + min(i, n - 1u)) * kv_dim;                  \
		[[unroll]] for (uint j = 0; j < NU; j++)                         \
			v_raw8(vb0, row + 8u * (li + L * j), va[u][j], vb[u][j]); \
	}
	V_LOADS(0u)
	// 2. the chunk's max and sum per head
	[[unroll]] for (uint r = 0; r < R; r++) {
		float m = subgroupMax(mx[r]);
		if (lane == 0u)
			red[sg * R + r] = m;
	}
	barrier();
	[[unroll]] for (uint r = 0; r < R; r++) {
		mx[r] = red[r];
		[[unroll]] for (uint g = 1; g < NSG; g++)
			mx[r] = max(mx[r], red[g * R + r]);
	}
	barrier();
	float sum[R];
	[[unroll]] for (uint r = 0; r < R; r++) {
		float s = 0.0;
		for (uint i = tid; i < n; i += WG) {
			float e = exp(sc[r * len + i] - mx[r]);
			sc[r * len + i] = e;
			s += e;
		}
		s = subgroupAdd(s);
		if (lane == 0u)
			red[sg * R + r] = s;
	}
	barrier();
	[[unroll]] for (uint r = 0; r < R; r++) {
		sum[r] = 0.0;
		[[unroll]] for (uint g = 0; g < NSG; g++)
			sum[r] += red[g * R + r];
	}

	// 3. the weighted sum of v: the lane's pieces of each head's output
	vec4 al[R][NU], ah[R][NU];
	[[unroll]] for (uint r = 0; r < R; r++)
		[[unroll]] for (uint j = 0; j < NU; j++) {
			al[r][j] = vec4(0.0);
			ah[r][j] = vec4(0.0);
		}
	for (uint s0 = 0; s0 < n; s0 += U * SLOTS) {
		[[unroll]] for (uint u = 0; u < U; u++) {
			uint i = s0 + u * SLOTS + slot;
			if (i >= n)
				continue;
			[[unroll]] for (uint j = 0; j < NU; j++) {
				vec4 lo, hi;
				floats8(KV_V, va[u][j], vb[u][j], lo, hi);
				[[unroll]] for (uint r = 0; r < R; r++) {
					float p = sc[r * len + i];
					al[r][j] += p * lo;
					ah[r][j] += p * hi;
				}
			}
		}
		if (s0 + U * SLOTS < n)
			V_LOADS(s0 + U * SLOTS)
	}
	// across the subgroup's positions (lanes l ^ o, L <= o < SGS)
	[[unroll]] for (uint o = L; o < SGS; o *= 2u)
		[[unroll]] for (uint r = 0; r < R; r++)
			[[unroll]] for (uint j = 0; j < NU; j++)
				[[unroll]] for (uint e = 0; e < 4u; e++) {
					al[r][j][e] += subgroupShuffleXor(al[r][j][e], o);
					ah[r][j][e] += subgroupShuffleXor(ah[r][j][e], o);
				}
	barrier(); // the scores are dead: their space takes the subgroups' sums
	if (lane < L)
		[[unroll]] for (uint r = 0; r < R; r++)
			[[unroll]] for (uint j = 0; j < NU; j++) {
				uint at = (sg * R + r) * head_dim + 8u * (li + L * j);
				[[unroll]] for (uint e = 0; e < 4u; e++) {
					sc[at + e] = al[r][j][e];
					sc[at + 4u + e] = ah[r][j][e];
				}
			}
	barrier();
	// thread i: vec4 i of the R outputs (head i / hd4)
	bool one = nact == 1u;
	uint rec = 4u + head_dim;
	for (uint i = tid; i < R * hd4; i += WG) {
		uint r = i / hd4, d = 4u * (i % hd4);
		vec4 o = vec4(0.0);
		[[unroll]] for (uint g = 0; g < NSG; g++) {
			uint at = (g * R + r) * head_dim + d;
			o += vec4(sc[at], sc[at + 1u], sc[at + 2u], sc[at + 3u]);
		}
		float s = 0.0;
		[[unroll]] for (uint rr = 0; rr < R; rr++)
			s = rr == r ? sum[rr] : s;
		if (one)
			o4[pc.o[3] + h0 * hd4 + i] = o / s;
		else
			work4[(pc.aux[2] + ((h0 + r) * nch + c) * rec) / 4u + 1u + i % hd4] = o;
	}
	if (one)
		return;
	if (tid < R) {
		float m = 0.0, s = 0.0;
		[[unroll]] for (uint rr = 0; rr < R; rr++)
			if (rr == tid) {
				m = mx[rr];
				s = sum[rr];
			}
		uint wb = pc.aux[2] + ((h0 + tid) * nch + c) * rec;
		workf[wb] = m;
		workf[wb + 1u] = s;
	}
	uint cnt = pc.aux[2] + n_head * nch * rec + kh;
	if (!last_workgroup(cnt, nact))
		return;
	// The merge, its loads spread over the threads (a chain of dependent
	// loads per output element would cost more than the chunks' work):
	// every chunk's max and sum per head into shared memory (the scores'
	// space; the host keeps 2 R nch <= SC), then per head the largest max
	// M, each chunk's weight exp(max - M) and its sum times it; each
	// output element then adds its chunks' outputs eight loads at a time.
	uint hb0 = pc.aux[2] + h0 * nch * rec; // (head h0 + r, chunk cc) at
					       // hb0 + (r nch + cc) rec
	uint ns = R * nact;
	for (uint i = tid; i < ns; i += WG) {
		uint at = hb0 + ((i / nact) * nch + i % nact) * rec;
		sc[i] = workf[at];
		sc[ns + i] = workf[at + 1u];
	}
	barrier();
	if (tid < R) {
		float m = -1.0 / 0.0;
		for (uint cc = 0; cc < nact; cc++)
			m = max(m, sc[tid * nact + cc]);
		red[tid] = m;
	}
	barrier();
	for (uint i = tid; i < ns; i += WG) {
		float w = exp(sc[i] - red[i / nact]);
		sc[i] = w;
		sc[ns + i] *= w;
	}
	barrier();
	for (uint i = tid; i < R * hd4; i += WG) {
		uint r = i / hd4, d4 = i % hd4;
		uint wb = r * nact, ob = (hb0 + r * nch * rec) / 4u + 1u + d4;
		float l = 0.0;
		vec4 o = vec4(0.0);
		uint cc = 0;
		for (; cc + 8u <= nact; cc += 8u) {
			vec4 v[8];
			[[unroll]] for (uint u = 0; u < 8u; u++)
				v[u] = work4[ob + (cc + u) * (rec / 4u)];
			[[unroll]] for (uint u = 0; u < 8u; u++) {
				o += sc[wb + cc + u] * v[u];
				l += sc[ns + wb + cc + u];
			}
		}
		for (; cc < nact; cc++) {
			o += sc[wb + cc] * work4[ob + cc * (rec / 4u)];
			l += sc[ns + wb + cc];
		}
		o4[pc.o[3] + (h0 + r) * hd4 + d4] = o / l;
	}
	if (tid == 0u)
		worku[cnt] = 0u;
}
