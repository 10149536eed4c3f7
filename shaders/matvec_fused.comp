#version 450
#extension GL_GOOGLE_include_directive : require
#if defined(XQ8)
#extension GL_EXT_spirv_intrinsics : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#include "common.glsl"
#include "rope.glsl"
#include "tanh.glsl"
// matvec_fused: every matvec whose weights allow 16-byte loads, alone or as
// the backend's fusion of a run of matvecs that read the same x
// (plugins/backend-vulkan/backend.c, fuse_*), never in the public kernel
// table. Built once per weight type (-DTYPE_F32 ...). Q8_0, Q4_0 and
// Q6_K weights are in the backend's GPU layout (doc/vulkan.md): a tensor's
// block quants first, 16 or 32 bytes per block (Q6_K: 192), then its block
// scales; Q4_K and Q5_K in GGUF's, whose super-blocks are whole uvec4s.
// XQ8 (Q4_0, Q8_0, Q4_K, Q5_K and Q6_K; the host builds it for devices
// with shaderIntegerDotProduct and subgroup shuffles): x is staged as int8,
// a scale per block of 32, as the CPU backend's quantize_x makes it (the
// K-quants: per 16, stage_xq), and a unit's dot product is 8 (Q4_0, the
// K-quants) or 4 (Q8_0) packed 4x8 integer dot products (wdot below).
//
// bindings: 0 x, 1 rmsnorm weight (flag NORM), 2..4 W of segments 0..2,
//           5..7 y of segments 0..2
// params:   p0 k, p2..p4 rows of each segment, p5 eps (float), p7..p9
//           Q8_0/Q4_0/Q6_K: where segment s's scales start, in 16-bit
//           words (Q6_K: its d's follow p2+s * k / 256 blocks' scales)
// aux0:     rows per workgroup (NR times the subgroups the host expects)
// specialization constants (one pipeline each, so that the compiler drops
// what a dispatch does not do): 0 flags, 1 segments, 2 NR, 3 SWZ, 4 the
// workgroup size, 5 TILE (values of x staged at a time), 6 UNR (units a
// lane loads before it uses them: 2 or 4), 7 KS (subgroups per row group:
// with KS > 1 each of them takes every KS-th stretch of a subgroup's
// units, and their sums meet in shared memory, in a fixed order, so that
// short matrices with long rows (down) keep more loads in flight)
// flags:    1 NORM    x is the rmsnorm's input: every subgroup computes
//                     sum(x^2) itself and loads w[j] * x[j]; the scale
//                     1/sqrt(mean(x^2) + eps) multiplies the reduced dots
//           2 ADD     y0[r] = y0[r] + W0[r] . x (matvec then add)
//           4 SWIGLU  y0[r] = silu(W0[r] . x) * (W1[r] . x) (gate, up,
//                     silu_mul)
//          16 GELU    with SWIGLU: gelu(W0[r] . x) * (W1[r] . x) instead
//                     (gate, up, gelu_mul: GELU's tanh form, as
//                     gelu_mul.comp computes it)
//          32 NEOX    with ROPE: NEOX pairs (i, i + rope_dim/2) of each head,
//                     as rope.comp's neox 1: the q and k rows are computed
//                     in the order that puts each pair side by side (wrow)
//           8 ROPE    segments q, k, v then rope_kv: q and k rotated as
//                     rope_kv rotates them (pairs of rows, at the token's
//                     position), q into y0, k and v into row pos of the
//                     caches y1 and y2 (p10 head_dim, p11 rope_dim, p12
//                     kv_dim, p13 the freqs' offset in meta; the caches'
//                     offsets in 16-bit words, as kv.glsl's)
//          64 KVH     with ROPE: the caches are F16 (else F32)
//         128 TAIL    one segment; then the last workgroup to finish
//                     computes r = r + w * y0 / sqrt(mean(y0^2) + eps)
//                     (rmsnorm of y0 then add, as rmsnorm.comp -DADD:
//                     Gemma's post-norms) with w in binding 3 (offset
//                     o3), r in binding 6 (o6), eps p5 and its arrival
//                     counter in word aux2 of binding 7 (the work
//                     buffer: this shader never writes binding 9, which
//                     every dispatch reads); y0 keeps the matvec's output
//         256 PEND    with NORM: x (binding 0) is a residual r that a post-
//                     norm and add have yet to update (Gemma's, after the
//                     matvec before this one): r' = r + w * y /
//                     sqrt(mean(y^2) + eps) (rmsnorm of y then add, as
//                     TAIL computes it) is what the norm reads, with y
//                     in binding 10 (offset p14), w in binding 11 (aux1),
//                     eps p5. k must fit one tile (the host checks): x
//                     is staged once, before the loop. r' also goes to
//                     binding 12 (the plan's spare copy of r, offset 0),
//                     each workgroup writing its share of what it staged,
//                     since r itself may not be written while others read
//                     it; the next matvec_fused dispatch copies it back
//        2048 PEND2   with PEND: y in a pass of its own, as where a thread
//                     stages more than PV vec4s of x (pend_fast)
//        1024 BIAS    with ROPE: each segment's output plus its bias
//                     before the rope (Qwen2's bias_adds, the same float
//                     sum), the biases of q, k, v in bindings 10, 11, 13
//                     (offsets p14, aux1, aux2; no PEND or COPY then:
//                     bindings every variant reads, as a binding only
//                     some read would be a read of every dispatch's to
//                     the validation layer)
//         512 COPY    last, each workgroup copies its share of p10 values
//                     from binding 13 (offset 0) into binding 12 (offset
//                     p14): the copy a PEND dispatch before left, back
//                     into the residual, which nothing reads before (a
//                     TAIL's last workgroup reads it after every copy)
// Otherwise segment s's rows go to y_s, the workgroups of segment 0 first.
//
// Work split: each subgroup owns NR rows and strides over them in units of
// 16 weight bytes (one 128-bit load per row per unit), so that no
// workgroup-wide reduction or barrier is needed and a short row (k = 2048)
// still keeps every lane busy.
#define WG gl_WorkGroupSize.x // spec constant 4: 128 unless the host says
#define F_NORM 1u
#define F_ADD 2u
#define F_SWIGLU 4u
#define F_ROPE 8u
#define F_GELU 16u
#define F_NEOX 32u
#define F_KVH 64u
#define F_TAIL 128u
#define F_PEND 256u
#define F_COPY 512u
#define F_BIAS 1024u
#define F_PEND2 2048u
layout(local_size_x_id = 4) in;
layout(constant_id = 0) const uint FLAGS = 0;
layout(constant_id = 1) const uint NSEG = 1;
layout(constant_id = 2) const uint NR = 1;
layout(constant_id = 3) const uint SWZ = 1;
layout(constant_id = 5) const uint TILE = 2048;
layout(constant_id = 6) const uint UNR = 2;
layout(constant_id = 7) const uint KS = 1;
// PR > 1 (FLAGS 0, NSEG 1, a batched table's pass of few rows): a
// workgroup computes its rows of W for PR rows of the pass at once, each
// weight loaded once for all of them (main_pr below)
layout(constant_id = 8) const uint PR = 1;
// XG 1 (with PR > 1; Q4_0 and Q8_0 with XQ8): x is in binding 0 as int8
// already, as quantize_rows.comp's XQ 1 leaves it (the host ran it once
// for every matvec reading that x): no staging, no barriers; row R's
// int8s are uvec4s o0 + R k / 16 on (a block's 32 values two of them),
// its blocks' (d, -8 sum) the uvec2s p14 + R k / 32 on. TILE then only
// sizes the unused shared arrays.
layout(constant_id = 9) const uint XG = 0;
// BAT 1: a batched table's pass of few rows (main reads which rows from
// the table; the host sets it for every PR); 0, the one-token table's,
// leaves that code out (with it decode ran 3% slower: H200, 1B and 8B
// Q4_0 tg128, 1,311 and 413.3 -> 1,269 and 398.3 tokens/s)
layout(constant_id = 10) const uint BAT = 0;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 0) readonly buffer X4 { vec4 x4[]; };
layout(binding = 1) readonly buffer NW { float nw[]; };
layout(binding = 1) readonly buffer NW4 { vec4 nw4[]; };
layout(binding = 0) readonly buffer XG4 { uvec4 xg4[]; };
layout(binding = 0) readonly buffer XG2 { uvec2 xg2[]; };
layout(binding = 5) buffer Y0 { float y0[]; };
layout(binding = 6) writeonly buffer Y1 { float y1[]; };
layout(binding = 7) writeonly buffer Y2 { float y2[]; };
layout(binding = 6) writeonly buffer Y1H { float16_t y1h[]; };
layout(binding = 7) writeonly buffer Y2H { float16_t y2h[]; };
// TAIL: y0 written and read back coherently, the norm's weight, the
// residual, the counter
layout(binding = 5) coherent buffer Y0C { float y0c[]; };
layout(binding = 3) readonly buffer TW { float tw[]; };
layout(binding = 6) coherent buffer TR { float tr[]; }; // COPY: written by others
layout(binding = 7) coherent buffer TC { uint tc[]; };
DEFINE_LAST_WORKGROUP(tail_last, tc)
// PEND: the post-norm's input and weight, the copy of r' (COPY: the
// residual); COPY: the copy (bindings the host binds elsewhere to ranges
// the dispatch reads or writes anyway, so that no other dispatch seems to
// touch anything more)
layout(binding = 10) readonly buffer PY { float py[]; };
layout(binding = 10) readonly buffer PY4 { vec4 py4[]; };
layout(binding = 11) readonly buffer PW { float pw[]; };
layout(binding = 11) readonly buffer PW4 { vec4 pw4[]; };
layout(binding = 12) coherent writeonly buffer PRS { float prs[]; };
layout(binding = 12) coherent writeonly buffer PRS4 { vec4 prs4[]; };
layout(binding = 13) readonly buffer PSRC { float psrc[]; };

#define DECL_W(S, B)                                                          \
	layout(binding = B) readonly buffer WF4_##S { vec4 wf4_##S[]; };      \
	layout(binding = B) readonly buffer W16_##S { uint16_t w16_##S[]; }; \
	layout(binding = B) readonly buffer W4_##S { uvec4 w4_##S[]; };      \
	layout(binding = B) readonly buffer W2_##S { uvec2 w2_##S[]; };
DECL_W(0, 2)
DECL_W(1, 3)
DECL_W(2, 4)

// elements per unit of 16 weight bytes
#if defined(TYPE_F32)
#define UE 4
#elif defined(TYPE_F16) || defined(TYPE_BF16)
#define UE 8
#elif defined(TYPE_Q8_0)
#define UE 16
#elif defined(TYPE_Q4_0)
#define UE 32
#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K) || defined(TYPE_Q6_K) || defined(TYPE_IQ4_XS)
#define UE 32
// K-quants: a unit is 16 bytes of a super-block's 4-bit quants, whose low
// nibbles are 16 consecutive weights and high nibbles 16 others (Q4_K,
// Q5_K: 32 further on; Q6_K: 64; IQ4_XS: the next 16, as Q4_0). x is
// staged in the units' order (kx_pos) so that a unit's 32 values are
// consecutive, as Q4_0's are.
#define KQ 1
#if defined(TYPE_Q6_K)
#define KCH 128u // weights per chunk of units (x order, kx_pos)
#elif defined(TYPE_IQ4_XS)
#define KCH 32u
#else
#define KCH 64u
#define KMIN 1 // w = d * sc * q - dmin * m: x's sums are staged too
#endif
#else
#error "matvec_fused.comp: define TYPE_F32, TYPE_F16, TYPE_BF16, TYPE_Q8_0, TYPE_Q4_0, TYPE_Q4_K, TYPE_Q5_K, TYPE_Q6_K or TYPE_IQ4_XS"
#endif
#define NX (UE / 4)
#if defined(KQ)
// unit ub (of 8) of its super-block picks the scales
#define WDOT(q, d, xv, ub) wdot(q, d, xv, ub)
#else
#define NXA NX
#define DT float
#define WDOT(q, d, xv, ub) wdot(q, d, xv)
#endif
#if defined(XQ8) && !defined(TYPE_Q4_0) && !defined(TYPE_Q8_0) && !defined(KQ) || \
	defined(XQ8) && defined(TYPE_IQ4_XS)
#error "matvec_fused.comp: XQ8 is for TYPE_Q4_0, TYPE_Q8_0, TYPE_Q4_K, TYPE_Q5_K and TYPE_Q6_K"
#endif

#if defined(XQ8)
// OpSDot of two uints as four packed int8 each (SPV_KHR_integer_dot_product;
// fmt 0: PackedVectorFormat4x8Bit); glslc has no GL_EXT_integer_dot_product
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"],
		  capabilities = [6019, 6018], id = 4450)
int sdot4x8(uint a, uint b, spirv_literal int fmt);
// a unit's x: the block's quants 0..15 and 16..31 (Q8_0: the unit's 16 in
// lo), 4 to a uint, and (its scale's bits, -8 * the sum of its quants);
// K-quants: a unit's two halves of 16 (its order, kx_pos), each with the
// scale of the block of 32 it is in, and (the bits of) d_lo, d_hi and the
// halves' sums d * sum(q)
#if defined(KQ)
#define XD uvec4
#else
#define XD uvec2
#endif
struct XU {
	uvec4 lo, hi;
	XD d;
};
#endif

#if defined(TYPE_F16)
vec4 lo4(uvec2 u) { return vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y)); }
#elif defined(TYPE_BF16)
vec4 lo4(uvec2 u)
{
	return vec4(uintBitsToFloat(u.x << 16), uintBitsToFloat(u.x & 0xffff0000u),
		    uintBitsToFloat(u.y << 16), uintBitsToFloat(u.y & 0xffff0000u));
}
#elif defined(TYPE_Q8_0)
// four int8 to float, exactly: 2^23 + (b ^ 0x80) is a float whose low
// mantissa bits are the byte, so one OR and one subtraction per value
vec4 s8(uint v)
{
	uint b = v ^ 0x80808080u;
	return uintBitsToFloat(uvec4(b & 0xffu, (b >> 8) & 0xffu,
				     (b >> 16) & 0xffu, b >> 24) |
			       0x4b000000u) -
	       8388736.0;
}
#elif defined(TYPE_Q4_0)
// the low nibbles of four bytes, minus 8, exactly (as s8)
vec4 n4(uint v)
{
	return uintBitsToFloat(uvec4(v & 15u, (v >> 8) & 15u, (v >> 16) & 15u,
				     (v >> 24) & 15u) |
			       0x4b000000u) -
	       8388616.0;
}
#endif

// how x is loaded; passed by value (private globals are slow on lavapipe)
struct XS {
	uint xo, no;
	bool xal, nal;
};

// PEND: the post-norm's scale, in shared memory rather than a register
// live through the main loop (a register more can halve the workgroups
// an SM holds); y's offset in p14, w's in aux1, read where used
shared float pend_sc;
bool pend_al() { return ((pc.p[14] | pc.aux[1]) & 3u) == 0u; }

// Four floats of buffer B from element I: one vec4 load of its vec4 view
// B4 where AL (I a multiple of 4), else four
#define LD4(B4, B, AL, I) ((AL) ? B4[(I) / 4] : vec4(B[I], B[(I) + 1], B[(I) + 2], B[(I) + 3]))

// PEND: r' = r + w * (scale * y), as TAIL's sum
vec4 pend_sum(vec4 r, vec4 y, vec4 w, float scale)
{
	precise vec4 t = w * (scale * y);
	precise vec4 sum = r + t;
	return sum;
}

// PEND: r' at x[j .. j + 3]
vec4 pend4(uint j, vec4 r)
{
	uint yi = pc.p[14] + j, wi = pc.aux[1] + j;
	bool al = pend_al();
	return pend_sum(r, LD4(py4, py, al, yi), LD4(pw4, pw, al, wi), pend_sc);
}

// PEND: the post-norm's 1 / sqrt(mean(y^2) + eps) over y's k values
// into pend_sc
void pend_scale(uint k)
{
	uint tid = gl_LocalInvocationID.x, yo = pc.p[14];
	bool al = pend_al();
	float acc = 0.0;
	for (uint j = 4u * tid; j < k; j += 4u * WG) {
		vec4 v = LD4(py4, py, al, yo + j);
		acc += dot(v, v);
	}
	float s = wg_sum(acc);
	if (tid == 0u)
		pend_sc = 1.0 / sqrt(s / float(k) + pflt(5));
	barrier();
}

// PEND, COPY: the share of n values of this workgroup: [*lo, *hi)
void share(uint n, out uint lo, out uint hi)
{
	uint g = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
	uint per = (n / 4u + g - 1u) / g * 4u; // whole vec4s
	lo = min(wg_id() * per, n);
	hi = min(lo + per, n);
}

vec4 ld4(XS s, uint j, inout float ss)
{
	vec4 v = LD4(x4, x, s.xal, s.xo + j);
	if ((FLAGS & F_PEND) != 0) {
		v = pend4(j, v);
		uint lo, hi;
		share(pc.p[0], lo, hi);
		if (j >= lo && j < hi)
			prs4[j / 4] = v;
	}
	if ((FLAGS & F_NORM) != 0) {
		ss += dot(v, v);
		v = LD4(nw4, nw, s.nal, s.no + j) * v;
	}
	return v;
}

// One unit of row `row` of segment S: its raw 16 bytes (LOADW) and its
// scale (LOADD); wo is W's offset in 16-bit words (floats for F32), so its
// scales' offset. wdot: the unit's dot product with its x values xv.
#if defined(TYPE_F32)
#define WT vec4
#define LOADW(S, wo, row, k, u) wf4_##S[(wo + (row) * k) / 4 + (u)]
#define LOADD(S, wo, so, row, k, u) 1.0
float wdot(WT q, float d, vec4 xv[NX]) { return dot(q, xv[0]); }
#elif defined(TYPE_F16) || defined(TYPE_BF16)
#define WT uvec4
#define LOADW(S, wo, row, k, u) w4_##S[(wo + (row) * k) / 8 + (u)]
#define LOADD(S, wo, so, row, k, u) 1.0
float wdot(WT q, float d, vec4 xv[NX])
{
	return dot(lo4(q.xy), xv[0]) + dot(lo4(q.zw), xv[1]);
}
#elif defined(TYPE_Q8_0)
#define WT uvec4
#define LOADW(S, wo, row, k, u) w4_##S[(wo) / 8 + (row) * (k / 16) + (u)]
#define LOADD(S, wo, so, row, k, u) half_f(uint(w16_##S[(so) + (row) * (k / 32) + (u) / 2]))
#if defined(XQ8)
// 16 signed weights against the unit's 16 quants of x
float wdot(WT q, float d, XU x)
{
	int s = sdot4x8(q.x, x.lo.x, 0) + sdot4x8(q.y, x.lo.y, 0) +
		sdot4x8(q.z, x.lo.z, 0) + sdot4x8(q.w, x.lo.w, 0);
	return d * uintBitsToFloat(x.d.x) * float(s);
}
#else
float wdot(WT q, float d, vec4 xv[NX])
{
	return d * (dot(s8(q.x), xv[0]) + dot(s8(q.y), xv[1]) +
		    dot(s8(q.z), xv[2]) + dot(s8(q.w), xv[3]));
}
#endif
#elif defined(KQ)
#include "fused_kquants.glsl"
#else
#define WT uvec4
#define LOADW(S, wo, row, k, u) w4_##S[(wo) / 8 + (row) * (k / 32) + (u)]
#define LOADD(S, wo, so, row, k, u) half_f(uint(w16_##S[(so) + (row) * (k / 32) + (u)]))
#if defined(XQ8)
// byte i of q holds element i in its low nibble and element 16 + i in its
// high nibble, unsigned (n - 8 is the weight): sum (n_i - 8) x_i =
// dot(n, x) - 8 sum(x), the nibbles being valid signed int8 too
float wdot(WT q, float d, XU x)
{
	uvec4 lo = q & 0x0f0f0f0fu, hi = (q >> 4) & 0x0f0f0f0fu;
	int s = int(x.d.y);
	s += sdot4x8(lo.x, x.lo.x, 0) + sdot4x8(lo.y, x.lo.y, 0) +
	     sdot4x8(lo.z, x.lo.z, 0) + sdot4x8(lo.w, x.lo.w, 0);
	s += sdot4x8(hi.x, x.hi.x, 0) + sdot4x8(hi.y, x.hi.y, 0) +
	     sdot4x8(hi.z, x.hi.z, 0) + sdot4x8(hi.w, x.hi.w, 0);
	return d * uintBitsToFloat(x.d.x) * float(s);
}
#else
float wdot(WT q, float d, vec4 xv[NX])
{
	return d * (dot(n4(q.x), xv[0]) + dot(n4(q.y), xv[1]) +
		    dot(n4(q.z), xv[2]) + dot(n4(q.w), xv[3]) +
		    dot(n4(q.x >> 4), xv[4]) + dot(n4(q.y >> 4), xv[5]) +
		    dot(n4(q.z >> 4), xv[6]) + dot(n4(q.w >> 4), xv[7]));
}
#endif
#endif

// x (times the norm weight, with NORM) is staged in shared memory a tile at
// a time, so that the weights streaming through L1 cannot evict it. Lane
// i of a subgroup reads unit u + i, NX vec4s from vec4 NX * (u + i): with
// NX 8 (Q4_0), the eight lanes that share a cycle of 16-byte shared loads
// would all hit the same four banks. Vec4 v is therefore kept in slot
// v ^ ((v / 8) % 8) (SWZ), which gives those lanes eight distinct bank
// groups for every NX.
#if defined(XQ8)
// XQ8: TILE values of x as int8 in blocks of 32; block b's quants 0..15 in
// xqq[XLO(b)], 16..31 in xqq[XHI(b)] (Q4_0: lane i reads block u + i,
// consecutive 16-byte slots, no bank conflict, no swizzle; Q8_0: lane i
// reads unit u + i, alternately a low and a high half, which the 4 slots
// between the halves put on other banks), its scale and -8 * its quants'
// sum in xqd[b]. 1.25 bytes per value (the host checks the total).
// With PR > 1, pass row p's tile follows the others (XQR and TILE / 32
// slots a row; float x: TILE / 4 and TILE / 32).
#define XQR (2u * (TILE / 32u) + 4u)
#define XLO(b) (b)
#define XHI(b) (TILE / 32 + 4 + (b))
shared uvec4 xqq[PR * XQR];
shared XD xqd[PR * (TILE / 32)];
#else
shared vec4 xs[PR * (TILE / 4)];
#if defined(KMIN)
shared vec2 xsm[PR * (TILE / 32)]; // per unit: the sums of its halves' x
#endif
#endif
// ROPE: the workgroup's rows (at most 512: the host checks), for pairs
#define YS_MAX 512
shared float ys[(FLAGS & F_ROPE) != 0 ? YS_MAX : 1];
// KS > 1: the partial sums, KS per row (at most 256 rows * KS: the host
// checks)
#define KP_MAX 256
shared float kps[KS > 1 ? KP_MAX : 1];
shared float kps2[KS > 1 ? KP_MAX : 1];

uint swz(uint v)
{
	return SWZ != 0 ? v ^ ((v >> 3) & 7u) : v;
}

#if defined(KQ)
// the element of the tile (from t0, a multiple of KCH) whose x goes to
// place e of the units' order: unit e / 32 of its chunk, low or high half
uint kx_pos(uint e)
{
	uint un = e / 32u, w = e % 32u, upc = KCH / 32u;
	return (un / upc) * KCH + (w / 16u) * (KCH / 2u) + (un % upc) * 16u + w % 16u;
}
#else
uint kx_pos(uint e) { return e; }
#endif

#if defined(XQ8)
#define XDECL(U) XU xv[U]
// unit u of the tile at t0, of pass row p's tile (PR > 1; else 0)
void load_x(uint u, uint t0, out XU xv, uint p)
{
	uint qo = p * XQR, dof = p * (TILE / 32u);
#if defined(TYPE_Q8_0)
	uint e = u * UE - t0, b = e / 32; // unit u: values 16u .. 16u + 15
	xv.lo = xqq[qo + ((e & 16u) != 0u ? XHI(b) : XLO(b))];
	xv.hi = uvec4(0);
#else
	uint b = u - t0 / 32;
	xv.lo = xqq[qo + XLO(b)];
	xv.hi = xqq[qo + XHI(b)];
#endif
	xv.d = xqd[dof + b];
}

#if !defined(KQ)
#define XG_OK
// unit u of a pass row from binding 0 (XG): its int8s at uvec4 qb on, its
// blocks' scales at uvec2 sb on
void load_xg(uint u, out XU xv, uint qb, uint sb)
{
#if defined(TYPE_Q8_0)
	uint e = u * UE, b = e / 32u;
	xv.lo = xg4[qb + 2u * b + ((e & 16u) != 0u ? 1u : 0u)];
	xv.hi = uvec4(0);
#else
	uint b = u;
	xv.lo = xg4[qb + 2u * b];
	xv.hi = xg4[qb + 2u * b + 1u];
#endif
	xv.d = xg2[sb + b];
}
#endif

// stage_item: item j of the staging loops (stage_x), its IH vec4s of x
// (as ld4 left them) into pass row p's tile. XQ8: as int8 (the tile a
// multiple of 32) as the CPU backend's quantize_x: d = amax / 127 rounded
// to fp16, q = v * (127 / amax) rounded to nearest even (0 where amax is
// 0). Four lanes per block, 8 values each: lanes 4i..4i+3 of a subgroup
// take one block, so that its maximum and sum are two xor shuffles each.
#if defined(KQ)
// K-quants: x in the units' order (kx_pos), a scale per half-unit of 16
// values, d = amax / 127 in float, four lanes per half, 4 values each;
// xqd[unit] = (d_lo, d_hi, d_lo * sum(q_lo), d_hi * sum(q_hi)).
#define IH 1u // vec4s of x a staged item takes
uint item_pos(uint j, uint h) { return kx_pos(4u * j); }
void stage_item(uint j, vec4 av[IH], uint p)
{
	uint qo = p * XQR, dof = p * (TILE / 32u);
	vec4 a = av[0];
	vec4 m4 = abs(a);
	float amax = max(max(m4.x, m4.y), max(m4.z, m4.w));
	amax = max(amax, subgroupShuffleXor(amax, 1));
	amax = max(amax, subgroupShuffleXor(amax, 2));
	float id = amax > 0.0 ? 127.0 / amax : 0.0, d = amax / 127.0;
	ivec4 q = ivec4(roundEven(a * id));
	int sum = q.x + q.y + q.z + q.w;
	sum += subgroupShuffleXor(sum, 1);
	sum += subgroupShuffleXor(sum, 2);
	uint hf = j / 4u, b = hf / 2u, h = hf % 2u, c = j % 4u;
	xqq[qo + (h != 0u ? XHI(b) : XLO(b))][c] = pack_s8(q);
	if (c == 0u) {
		xqd[dof + b][h] = floatBitsToUint(d);
		xqd[dof + b][2u + h] = floatBitsToUint(d * float(sum));
	}
}
#else
#define IH 2u
uint item_pos(uint j, uint h) { return 8u * j + 4u * h; }
void stage_item(uint j, vec4 av[IH], uint p)
{
	uint qo = p * XQR, dof = p * (TILE / 32u);
	vec4 a = av[0], b = av[1];
	vec4 m4 = max(abs(a), abs(b));
	float amax = max(max(m4.x, m4.y), max(m4.z, m4.w));
	amax = max(amax, subgroupShuffleXor(amax, 1));
	amax = max(amax, subgroupShuffleXor(amax, 2));
	float id = amax > 0.0 ? 127.0 / amax : 0.0;
	ivec4 qa = ivec4(roundEven(a * id)), qb = ivec4(roundEven(b * id));
	ivec4 q4 = qa + qb;
	int sum = q4.x + q4.y + q4.z + q4.w;
	sum += subgroupShuffleXor(sum, 1);
	sum += subgroupShuffleXor(sum, 2);
	// one component each: a store of .xy would rewrite all four
	uint blk = j / 4, c = j % 4;
	if (c < 2) {
		xqq[qo + XLO(blk)][2 * c] = pack_s8(qa);
		xqq[qo + XLO(blk)][2 * c + 1] = pack_s8(qb);
	} else {
		xqq[qo + XHI(blk)][2 * c - 4] = pack_s8(qa);
		xqq[qo + XHI(blk)][2 * c - 3] = pack_s8(qb);
	}
	if (c == 0)
		xqd[dof + blk] = uvec2(floatBitsToUint(half_rte(amax / 127.0)),
				 uint(-8 * sum));
}
#endif
#else
#define IH 1u
uint item_pos(uint j, uint h) { return kx_pos(4u * j); }
void stage_item(uint j, vec4 av[IH], uint p)
{
	xs[p * (TILE / 4u) + swz(j)] = av[0];
}
#define XDECL(U) vec4 xv[U][NXA]
void load_x(uint u, uint t0, out vec4 xv[NXA], uint p)
{
	[[unroll]] for (uint j = 0; j < NX; j++)
		xv[j] = xs[p * (TILE / 4u) + swz((u * UE - t0) / 4 + j)];
#if defined(KMIN)
	xv[NX] = vec4(xsm[p * (TILE / 32u) + u - t0 / UE], 0.0, 0.0);
#endif
}
#endif

// BIAS: segment seg's bias at row br
float bias_of(uint seg, uint br)
{
	return seg == 0u ? py[pc.p[14] + br] : seg == 1u ? pw[pc.aux[1] + br] : psrc[pc.aux[2] + br];
}

// A thread's first item of the staging loops (then every WG-th): with
// XQ8, four lanes of a subgroup per block of x
uint item_first()
{
#if defined(XQ8)
	return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
#else
	return gl_LocalInvocationID.x;
#endif
}

// PEND in one pass where a thread stages at most PV vec4s of x
// (pend_fast): it loads everything those need (r, y, w and the norm's
// weight) before the one reduction, sum(y^2), so that the loads wait
// once, not twice (pend_scale, then ld4)
#define PV 2u
#define PI (PV / IH)
bool pend_fast(uint k) { return (FLAGS & F_PEND2) == 0 && k / (4u * IH) <= PI * WG; }

// stage_pend's sum(y^2) over the workgroup: wg_sum's, in its order, but
// in shared memory of its own, which nothing writes again, so that the
// one barrier after the writes serves (wg_sum's second guards red_sh's
// next use. H200, gemma2 1B tg128, three runs each: 1,196, 1,204 and
// 1,202 tokens/s against 1,193, 1,186 and 1,190 with wg_sum; a timing
// build with no barrier at all, each subgroup's own sum scaled, 1.3%
// faster than wg_sum)
shared float pend_sh[256];
float pend_ysum(float v)
{
	v = subgroupAdd(v);
	if (subgroupElect())
		pend_sh[gl_SubgroupID] = v;
	barrier();
	float s = 0.0;
	for (uint i = 0; i < gl_NumSubgroups; i++)
		s += pend_sh[i];
	return s;
}

void stage_pend(XS s, uint tn, inout float ss, uint p)
{
	uint first = item_first(), items = tn / (4u * IH);
	bool al = pend_al();
	vec4 xr[PI][IH], xy[PI][IH], xw[PI][IH], xn[PI][IH];
	float yss = 0.0;
	[[unroll]] for (uint it = 0; it < PI; it++)
		[[unroll]] for (uint h = 0; h < IH; h++) {
			uint j = first + it * WG, e = item_pos(j, h);
			xr[it][h] = xy[it][h] = xw[it][h] = xn[it][h] = vec4(0.0);
			if (j >= items)
				continue;
			xr[it][h] = LD4(x4, x, s.xal, s.xo + e);
			xy[it][h] = LD4(py4, py, al, pc.p[14] + e);
			xw[it][h] = LD4(pw4, pw, al, pc.aux[1] + e);
			xn[it][h] = LD4(nw4, nw, s.nal, s.no + e);
			yss += dot(xy[it][h], xy[it][h]);
		}
	float sc = 1.0 / sqrt(pend_ysum(yss) / float(pc.p[0]) + pflt(5));
	uint lo, hi;
	share(pc.p[0], lo, hi);
	[[unroll]] for (uint it = 0; it < PI; it++) {
		uint j = first + it * WG;
		if (j >= items)
			continue;
		vec4 v[IH];
		[[unroll]] for (uint h = 0; h < IH; h++) {
			uint e = item_pos(j, h);
			vec4 sum = pend_sum(xr[it][h], xy[it][h], xw[it][h], sc);
			if (e >= lo && e < hi)
				prs4[e / 4] = sum;
			ss += dot(sum, sum);
			v[h] = xn[it][h] * sum;
		}
		stage_item(j, v, p);
	}
}

// Stage x[t0, t0 + tn) of s into pass row p's tile (p 0 but for PR > 1):
// int8 (XQ8) or floats, with the units' sums (KMIN); ends at a barrier.
void stage_x(XS s, uint t0, uint tn, inout float ss, uint p)
{
	if ((FLAGS & F_PEND) != 0 && pend_fast(tn)) {
		stage_pend(s, tn, ss, p);
	} else {
		for (uint j = item_first(); j < tn / (4u * IH); j += WG) {
			vec4 v[IH];
			[[unroll]] for (uint h = 0; h < IH; h++)
				v[h] = ld4(s, t0 + item_pos(j, h), ss);
			stage_item(j, v, p);
		}
	}
#if !defined(XQ8) && defined(KMIN)
	barrier();
	uint xo = p * (TILE / 4u);
	for (uint j = gl_LocalInvocationID.x; j < tn / 32; j += WG) {
		vec4 a = xs[xo + swz(8 * j)] + xs[xo + swz(8 * j + 1)] +
			 xs[xo + swz(8 * j + 2)] + xs[xo + swz(8 * j + 3)];
		vec4 b = xs[xo + swz(8 * j + 4)] + xs[xo + swz(8 * j + 5)] +
			 xs[xo + swz(8 * j + 6)] + xs[xo + swz(8 * j + 7)];
		xsm[p * (TILE / 32u) + j] = vec2(dot(a, vec4(1.0)), dot(b, vec4(1.0)));
	}
#endif
	barrier();
}

// The row of segment s that computed row c holds: c itself, but under
// NEOX, for q and k, rows 2i and 2i + 1 of a head's rotated part are its
// rows i and i + rope_dim/2, the pair rope rotates together.
uint wrow(uint s, uint c)
{
	if ((FLAGS & F_NEOX) == 0u || s > 1u)
		return c;
	uint hd = pc.p[10], rd = pc.p[11], e = c % hd;
	return e < rd ? c - e + (e >> 1) + (e & 1u) * (rd >> 1) : c;
}

#define STEP(S, U)                                                          \
	{                                                                   \
		WT q[U][NR], q2[U][NR];                                     \
		DT d[U][NR], d2[U][NR];                                     \
		[[unroll]] for (uint uu = 0; uu < U; uu++)                  \
			[[unroll]] for (uint r = 0; r < NR; r++) {          \
				uint row = wrow(S, min(r0 + r, m - 1)), un = u + uu * st; \
				q[uu][r] = LOADW(S, pc.o[2 + S], row, k, un); \
				d[uu][r] = LOADD(S, pc.o[2 + S], pc.p[7 + S], row, k, un); \
				if ((FLAGS & F_SWIGLU) != 0) {              \
					q2[uu][r] = LOADW(1, pc.o[3], row, k, un); \
					d2[uu][r] = LOADD(1, pc.o[3], pc.p[8], row, k, un); \
				}                                           \
			}                                                   \
		XDECL(U);                                                   \
		[[unroll]] for (uint uu = 0; uu < U; uu++)                  \
			load_x(u + uu * st, t0, xv[uu], 0u);                \
		[[unroll]] for (uint uu = 0; uu < U; uu++)                  \
			[[unroll]] for (uint r = 0; r < NR; r++) {          \
				acc[r] += WDOT(q[uu][r], d[uu][r], xv[uu], (u + uu * st) % 8u); \
				if ((FLAGS & F_SWIGLU) != 0)                \
					acc2[r] += WDOT(q2[uu][r], d2[uu][r], xv[uu], (u + uu * st) % 8u); \
			}                                                   \
	}
#define LOOP(S)                                                             \
	{                                                                   \
		uint u = t0 / UE + kp * ns + lane;                          \
		if (UNR >= 4)                                               \
			for (; u + 3 * st < u1; u += 4 * st)                \
				STEP(S, 4)                                  \
		for (; u + st < u1; u += 2 * st)                            \
			STEP(S, 2)                                          \
		if (u < u1)                                                 \
			STEP(S, 1)                                          \
	}

// PR > 1: the workgroup's rows of W (segment 0; FLAGS 0, or ADD with
// XG: y0 the residual an add after the matvec updates) for pass rows
// p0 .. p0 + PR - 1 (those of the run), each unit of weights loaded once
// and dotted with every row's x. A row's sum is made exactly as PR 1 makes
// it (the same units to the same lanes in the same order, the same
// reductions), so that a pass of few rows equals the one-row table's
// matvec bit for bit; the host keeps TILE / UE a multiple of the lanes'
// stride for that. Rows of W: g * rpw + rg * NR + r, taken by the
// subgroups in rounds where they are fewer than the host expected.
#if defined(XG_OK)
#define LOADX(u, t0, xv, p, qb, sb)            \
	if (XG != 0u)                          \
		load_xg(u, xv, qb, sb);        \
	else                                   \
		load_x(u, t0, xv, p)
#else
#define LOADX(u, t0, xv, p, qb, sb) load_x(u, t0, xv, p)
#endif
#define STEP_PR(U)                                                          \
	{                                                                   \
		WT q[U][NR];                                                \
		DT d[U][NR];                                                \
		[[unroll]] for (uint uu = 0; uu < U; uu++)                  \
			[[unroll]] for (uint r = 0; r < NR; r++) {          \
				uint row = min(r0 + r, m - 1), un = u + uu * st; \
				q[uu][r] = LOADW(0, pc.o[2], row, k, un);   \
				d[uu][r] = LOADD(0, pc.o[2], pc.p[7], row, k, un); \
			}                                                   \
		[[unroll]] for (uint p = 0; p < PR; p++) {                  \
			if (p < npr) {                                      \
				XDECL(U);                                   \
				[[unroll]] for (uint uu = 0; uu < U; uu++)  \
					LOADX(u + uu * st, t0, xv[uu], p, xqb[p], xsb[p]); \
				[[unroll]] for (uint uu = 0; uu < U; uu++)  \
					[[unroll]] for (uint r = 0; r < NR; r++) \
						accp[p][r] += WDOT(q[uu][r], d[uu][r], xv[uu], (u + uu * st) % 8u); \
			}                                                   \
		}                                                           \
	}

void main_pr()
{
	uint k = pc.p[0], rpw = pc.aux[0], m = pc.p[2];
	uint lane = gl_SubgroupInvocationID, ns = gl_SubgroupSize;
	uint g = wg_id(), cols = pc.aux[2];
	uint p0 = row_first() + (g % cols) * PR;
	g /= cols;
	if (p0 >= row_end())
		return;
	uint npr = min(PR, row_end() - p0);
	float ss = 0.0;
	uint nsg = gl_NumSubgroups, tid = gl_LocalInvocationID.x;
	uint kse = KS > 1 && nsg % KS == 0 ? KS : 1;
	uint sg = gl_SubgroupID / kse, kp = gl_SubgroupID % kse, st = ns * kse;
	nsg /= kse;
#if defined(TYPE_IQ4_XS)
	iq4_fill(tid); // used after the tile loop's barriers
#endif
	uint rounds = (rpw + nsg * NR - 1) / (nsg * NR);
	uint xqb[PR], xsb[PR]; // XG: where each pass row's x is
	[[unroll]] for (uint p = 0; p < PR; p++) {
		uint br = row_in(p0 + min(p, npr - 1u));
		xqb[p] = pc.o[0] + br * (k / 16u);
		xsb[p] = pc.p[14] + br * (k / 32u);
	}
	uint tstep = XG != 0u ? k : TILE;
	for (uint j = 0; j < rounds; j++) {
		uint rg = sg + j * nsg, r0 = g * rpw + rg * NR;
		bool mine = rg * NR < rpw && r0 < m;
		float accp[PR][NR];
		[[unroll]] for (uint p = 0; p < PR; p++)
			[[unroll]] for (uint r = 0; r < NR; r++)
				accp[p][r] = 0.0;
		for (uint t0 = 0; t0 < k; t0 += tstep) {
			uint tn = min(tstep, k - t0), u1 = (t0 + tn) / UE;
			if (XG == 0u)
				barrier(); // the previous tile is used up
			[[unroll]] for (uint p = 0; p < PR; p++) {
				if (p < npr && XG == 0u) {
					XS s;
					s.xo = pc.o[0] + row_in(p0 + p) * k;
					s.no = 0u;
					s.xal = (s.xo & 3u) == 0;
					s.nal = false;
					stage_x(s, t0, tn, ss, p);
				}
			}
			if (!mine)
				continue;
			uint u = t0 / UE + kp * ns + lane;
			if (UNR >= 4)
				for (; u + 3 * st < u1; u += 4 * st)
					STEP_PR(4)
			for (; u + st < u1; u += 2 * st)
				STEP_PR(2)
			if (u < u1)
				STEP_PR(1)
		}
		// each row's sum as main() makes it, one pass row at a time
		[[unroll]] for (uint p = 0; p < PR; p++) {
			if (p >= npr)
				continue;
			uint yo = pc.o[5] + row_in(p0 + p) * m;
			float sr[NR];
			[[unroll]] for (uint r = 0; r < NR; r++) {
				sr[r] = subgroupAdd(accp[p][r]);
				if (kse > 1 && mine && lane == r)
					kps[(rg * NR + r) * kse + kp] = sr[r];
			}
			if (kse > 1)
				barrier();
			if (mine && kp == 0u) {
				uint nr = min(NR, m - r0);
				[[unroll]] for (uint r = 0; r < NR; r++) {
					if (lane != r || r >= nr)
						continue;
					float v = sr[r];
					if (kse > 1) {
						uint b = (rg * NR + r) * kse;
						v = kps[b];
						for (uint q = 1; q < kse; q++)
							v += kps[b + q];
					}
					// ADD: y0 is the residual the add after
					// this matvec updates (add.comp's sum)
					if ((FLAGS & F_ADD) != 0)
						v = y0[yo + r0 + r] + v;
					y0[yo + r0 + r] = v;
				}
			}
			if (kse > 1)
				barrier(); // kps is used up
		}
	}
}

void main()
{
	STOP_CHECK();
	if (PR > 1u) {
		main_pr();
		return;
	}
	uint k = pc.p[0], rpw = pc.aux[0];
	uint lane = gl_SubgroupInvocationID, ns = gl_SubgroupSize;
	XS xs_;
	xs_.xo = pc.o[0];
	xs_.no = pc.o[1];
	xs_.xal = (xs_.xo & 3u) == 0;
	xs_.nal = (xs_.no & 3u) == 0;

	// which segment and rows
	uint g = wg_id(), seg = 0, m = pc.p[2];
	// a batched table's pass of few rows (backend: few_rows): pc.aux[2]
	// rows of the pass per row group, side by side, so that the
	// workgroups reading the same weights run together; one segment
	uint prow = 0u;
	if (BAT != 0u && is_batched()) {
		prow = row_first() + g % pc.aux[2];
		g /= pc.aux[2];
		if (prow >= row_end())
			return;
		xs_.xo += row_in(prow) * k;
		xs_.xal = (xs_.xo & 3u) == 0;
	}
	uint yo0 = pc.o[5] + (BAT != 0u ? row_in(prow) * m : 0u);
	uint g0 = (pc.p[2] + rpw - 1) / rpw, g1 = (pc.p[3] + rpw - 1) / rpw;
	if ((FLAGS & F_SWIGLU) == 0 && NSEG > 1 && g >= g0) {
		g -= g0;
		seg = 1;
		m = pc.p[3];
		if (NSEG > 2 && g >= g1) {
			g -= g1;
			seg = 2;
			m = pc.p[4];
		}
	}
	// a subgroup's rows: r0 of row group rg (normally one per subgroup;
	// up to MAXRG where the subgroups are fewer than the host expected)
#define MAXRG 4
	float acc[MAXRG][NR], acc2[MAXRG][NR], ss = 0.0;
	[[unroll]] for (uint j = 0; j < MAXRG; j++)
		[[unroll]] for (uint r = 0; r < NR; r++) {
			acc[j][r] = 0.0;
			acc2[j][r] = 0.0;
		}
	uint nsg = gl_NumSubgroups, tid = gl_LocalInvocationID.x;
	// row groups of kse subgroups (kse 1 if the subgroups do not divide
	// by KS); subgroup kp of a group strides over the units from kp * ns
	uint kse = KS > 1 && nsg % KS == 0 ? KS : 1;
	uint sg = gl_SubgroupID / kse, kp = gl_SubgroupID % kse, st = ns * kse;
	nsg /= kse;
#if defined(TYPE_IQ4_XS)
	iq4_fill(tid); // used after the tile loop's barriers
#endif
	// PEND: x staged before the loop (k within one tile: the host
	// checks), while no accumulator is live, so that PEND's registers add
	// nothing to the loop's (a register more than 64 halves the
	// workgroups of 512 threads an SM holds)
	if ((FLAGS & F_PEND) != 0) {
		if (!pend_fast(k))
			pend_scale(k);
		stage_x(xs_, 0u, k, ss, 0u);
	}
	for (uint t0 = 0; t0 < k; t0 += TILE) {
		uint tn = min(TILE, k - t0), u1 = (t0 + tn) / UE;
		if ((FLAGS & F_PEND) == 0) {
			barrier(); // the previous tile is used up
			stage_x(xs_, t0, tn, ss, 0u);
		}
		[[unroll]] for (uint j = 0; j < MAXRG; j++) {
			uint rg = sg + j * nsg, r0 = g * rpw + rg * NR;
			if (rg * NR >= rpw || r0 >= m)
				continue;
			float a_[NR], a2_[NR];
			[[unroll]] for (uint r = 0; r < NR; r++) {
				a_[r] = acc[j][r];
				a2_[r] = acc2[j][r];
			}
#define acc a_
#define acc2 a2_
			if (seg == 0)
				LOOP(0)
			else if (seg == 1)
				LOOP(1)
			else
				LOOP(2)
#undef acc
#undef acc2
			[[unroll]] for (uint r = 0; r < NR; r++) {
				acc[j][r] = a_[r];
				acc2[j][r] = a2_[r];
			}
		}
	}

	float scale = 1.0;
	if ((FLAGS & F_NORM) != 0)
		scale = 1.0 / sqrt(wg_sum(ss) / float(k) + pflt(5));
	// each row's sum: reduced over the subgroup, then (KS) over the
	// group's subgroups in order, by the first of them
	[[unroll]] for (uint j = 0; j < MAXRG; j++) {
		uint rg = sg + j * nsg, r0 = g * rpw + rg * NR;
		if (rg * NR >= rpw || r0 >= m)
			continue;
		[[unroll]] for (uint r = 0; r < NR; r++) {
			float s = subgroupAdd(acc[j][r]) * scale;
			float s2 = 0.0;
			if ((FLAGS & F_SWIGLU) != 0)
				s2 = subgroupAdd(acc2[j][r]) * scale;
			if (kse > 1 && lane == r) {
				kps[(rg * NR + r) * kse + kp] = s;
				if ((FLAGS & F_SWIGLU) != 0)
					kps2[(rg * NR + r) * kse + kp] = s2;
			}
			acc[j][r] = s;
			acc2[j][r] = s2;
		}
	}
	if (kse > 1)
		barrier();
	[[unroll]] for (uint j = 0; j < MAXRG; j++) {
		uint rg = sg + j * nsg, r0 = g * rpw + rg * NR;
		if (rg * NR >= rpw || r0 >= m || kp != 0)
			continue;
		uint nr = min(NR, m - r0);
		[[unroll]] for (uint r = 0; r < NR; r++) {
			if (lane != r || r >= nr)
				continue;
			float s = acc[j][r], s2 = acc2[j][r];
			if (kse > 1) {
				uint b = (rg * NR + r) * kse;
				s = kps[b];
				if ((FLAGS & F_SWIGLU) != 0)
					s2 = kps2[b];
				for (uint q = 1; q < kse; q++) {
					s += kps[b + q];
					if ((FLAGS & F_SWIGLU) != 0)
						s2 += kps2[b + q];
				}
			}
			uint row = r0 + r;
			if ((FLAGS & F_ROPE) != 0)
				ys[rg * NR + r] = s;
			else if ((FLAGS & F_GELU) != 0)
				y0[pc.o[5] + row] = 0.5 * s * (1.0 + tanh_f(0.79788456080286535588 * s *
					(1.0 + 0.044715 * s * s))) * s2;
			else if ((FLAGS & F_SWIGLU) != 0)
				y0[pc.o[5] + row] = s / (1.0 + exp(-s)) * s2;
			else if ((FLAGS & F_ADD) != 0)
				y0[pc.o[5] + row] = y0[pc.o[5] + row] + s;
			else if ((FLAGS & F_TAIL) != 0)
				y0c[yo0 + row] = s;
			else if (seg == 0)
				y0[yo0 + row] = s;
			else if (seg == 1)
				y1[pc.o[6] + row] = s;
			else
				y2[pc.o[7] + row] = s;
		}
	}
	// COPY: at the end, where its load's wait delays no weight loads
	// (at the start, H200 8B gemma2's o and down took 864 us a token,
	// here 825); before TAIL's counter, which orders it before the last
	// workgroup's reads of the residual
	if ((FLAGS & F_COPY) != 0) {
		uint lo, hi;
		share(pc.p[10], lo, hi);
		for (uint i = lo + tid; i < hi; i += WG)
			prs[pc.p[14] + i] = psrc[i];
	}
	if ((FLAGS & F_TAIL) != 0 &&
	    tail_last(pc.aux[2], gl_NumWorkGroups.x * gl_NumWorkGroups.y)) {
		// every row of y0 is written: its rmsnorm, added into the
		// residual; the counter reset for the next dispatch. Each
		// thread loads TP values before it uses them (as rmsnorm.comp),
		// so that a row of a few thousand costs a few load latencies
		if (tid == 0u)
			tc[pc.aux[2]] = 0u;
#define TP 16u
		float v[TP], s2 = 0.0;
		for (uint c0 = 0; c0 < m; c0 += WG * TP) {
			[[unroll]] for (uint j = 0; j < TP; j++) {
				uint i = c0 + tid + j * WG;
				v[j] = i < m ? y0c[yo0 + i] : 0.0;
			}
			[[unroll]] for (uint j = 0; j < TP; j++)
				s2 += v[j] * v[j];
		}
		float sc = 1.0 / sqrt(wg_sum(s2) / float(m) + pflt(5));
		bool held = m <= WG * TP; // v holds all of y0's rows
		for (uint c0 = 0; c0 < m; c0 += WG * TP) {
			float wv[TP], rv[TP];
			[[unroll]] for (uint j = 0; j < TP; j++) {
				uint i = c0 + tid + j * WG;
				if (i < m) {
					if (!held)
						v[j] = y0c[yo0 + i];
					wv[j] = tw[pc.o[3] + i];
					rv[j] = tr[pc.o[6] + i];
				}
			}
			[[unroll]] for (uint j = 0; j < TP; j++) {
				uint i = c0 + tid + j * WG;
				if (i >= m)
					continue;
				precise float yv = wv[j] * (sc * v[j]);
				precise float sum = rv[j] + yv;
				tr[pc.o[6] + i] = sum;
			}
		}
#undef TP
	}
	if ((FLAGS & F_ROPE) != 0) {
		// rows 2i and 2i + 1 of a q or k head rotate together; a
		// workgroup starts at an even row and holds an even number
		barrier();
		uint hd = pc.p[10], rd = pc.p[11], kvd = pc.p[12];
		uint pos = at_position(1u, 0u), slot = at_slot(1u, 0u);
		for (uint lr = tid; lr < rpw; lr += WG) {
			uint row = g * rpw + lr;
			if (row >= m)
				continue;
			// BIAS: the biases' loads issued with the freqs' (added
			// before the barrier, each its own wait: H200, qwen2
			// 1B tg128 1,234 against 1,252 tokens/s)
			float v = ys[lr];
			if ((FLAGS & F_BIAS) != 0)
				v = v + bias_of(seg, wrow(seg, row));
			uint pe = (row % hd) & ~1u;
			if (seg < 2u && pe < rd) {
				precise float ang = float(pos) * meta.freq[pc.p[13] + pe / 2u];
				vec2 sc = sincos_f(ang);
				float o = ys[lr ^ 1u];
				if ((FLAGS & F_BIAS) != 0)
					o = o + bias_of(seg, wrow(seg, row ^ 1u));
				v = (lr & 1u) == 0u ? v * sc.y - o * sc.x : o * sc.x + v * sc.y;
			}
			uint e = slot * kvd + (seg == 1u ? wrow(1u, row) : row);
			if (seg == 0u)
				y0[pc.o[5] + wrow(0u, row)] = v;
			else if ((FLAGS & F_KVH) != 0u && seg == 1u)
				y1h[pc.o[6] + e] = float16_t(v);
			else if ((FLAGS & F_KVH) != 0u)
				y2h[pc.o[7] + e] = float16_t(v);
			else if (seg == 1u)
				y1[(pc.o[6] >> 1) + e] = v;
			else
				y2[(pc.o[7] >> 1) + e] = v;
		}
	}
}
