// Super-blocks of 256 weights (included by quants.glsl, which says what
// each type defines): ggml's K-quants and IQ4_XS.
//
// Q4_K, 144 bytes: d, dmin (fp16), 12 bytes of 6-bit scales and mins for 8
// sub-blocks of 32, 128 bytes of nibbles (64 weights per 32 bytes: low
// nibbles the first 32, high nibbles the next). w = d * sc * q - dmin * m.
// Q5_K, 176 bytes: Q4_K's d, dmin and scales, then 32 bytes qh (bit 2i of
// byte l: the 5th bit of weight 64i + l, bit 2i + 1 that of 64i + 32 + l),
// then Q4_K's 128 bytes of nibbles. w = d * sc * q - dmin * m.
// Q6_K, 210 bytes: 128 bytes of low nibbles, 64 of high 2-bit pairs, 16
// int8 scales, d (fp16). w = d * sc * (q - 32).
// Q2_K, 84 bytes: 16 scale bytes (low nibble scale, high nibble min, per
// 16 weights), 64 bytes of 2-bit quants (byte 32n + l: weights 128n + 32j
// + l at bits 2j), d, dmin. w = d * sc * q - dmin * m.
// Q3_K, 110 bytes: 32 bytes hmask (bit 4n + j of byte l: weight 128n + 32j
// + l has no -4), 64 bytes of 2-bit quants as Q2_K's, 12 bytes of 16
// 6-bit scales (low 4 bits: byte s % 8, nibble s / 8; high 2: byte 8 +
// s % 4, bits 2 (s / 4)), d. w = d * (s - 32) * (q - 4 [hmask bit clear]).
// IQ4_XS, 136 bytes: d, scales_h (16 bits: 2 per sub-block of 32),
// scales_l (4 bytes: a nibble per sub-block), 128 quant bytes (16 per
// sub-block, IQ4_NL's order). w = d * (ls - 32) * iq4_value(q).
// Units (matvec): Q2_K, Q3_K: quant bytes 32n + 4p .. + 3 (u = 8n + p), run
// j at bits 2j; Q5_K: bytes 32g + 8p .. + 7 of the nibbles (u = 4g + p),
// runs low, low, high, high; IQ4_XS: bytes 8p .. 8p + 7 of sub-block ib
// (u = 2 ib + p), runs as Q5_K's.
#if defined(TYPE_Q4_K)
#define KQ_WORDS 72u // 16-bit words per super-block
#elif defined(TYPE_Q5_K)
#define KQ_WORDS 88u
#elif defined(TYPE_Q6_K)
#define KQ_WORDS 105u
#elif defined(TYPE_Q2_K)
#define KQ_WORDS 42u
#elif defined(TYPE_Q3_K)
#define KQ_WORDS 55u
#elif defined(TYPE_IQ4_XS)
#define KQ_WORDS 68u
#endif
#if defined(TYPE_Q2_K) || defined(TYPE_Q3_K) || defined(TYPE_Q4_K) || defined(TYPE_Q5_K) || \
	defined(TYPE_Q6_K) || defined(TYPE_IQ4_XS)
#define KQ_BLOCK 256u
#endif
#if defined(TYPE_Q2_K) || defined(TYPE_Q3_K) || defined(TYPE_Q4_K) || defined(TYPE_Q5_K) || \
	defined(TYPE_IQ4_XS)
#define KQ_UNITS 16u
#endif

#if defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// sub-block j's 6-bit scale and min (ggml's get_scale_min_k4)
void q4k_scale_min(uint base, uint j, out uint sc, out uint mn)
{
	if (j < 4u) {
		sc = kq_byte(base, 4u + j) & 63u;
		mn = kq_byte(base, 8u + j) & 63u;
	} else {
		uint b = kq_byte(base, 8u + j);
		sc = (b & 15u) | ((kq_byte(base, j) >> 6) << 4);
		mn = (b >> 4) | ((kq_byte(base, 4u + j) >> 6) << 4);
	}
}
#endif

#if defined(TYPE_Q4_K)
void kq_group16(uint base, uint g, out float v[16])
{
	uint grp = g / 4u, in0 = 16u * (g % 4u);
	bool high = in0 >= 32u;
	uint sc, mn;
	q4k_scale_min(base, 2u * grp + (high ? 1u : 0u), sc, mn);
	float d1 = half_f(uint(w16[base])) * float(sc);
	float m1 = half_f(uint(w16[base + 1u])) * float(mn);
	uint q0 = 16u + 32u * grp + in0 % 32u; // byte of the first weight
	[[unroll]] for (uint t = 0; t < 16u; t += 2u) {
		uint u = uint(w16[base + (q0 + t) / 2u]); // q0 is even
		uint b0 = u & 255u, b1 = u >> 8;
		uint n0 = high ? b0 >> 4 : b0 & 15u, n1 = high ? b1 >> 4 : b1 & 15u;
		v[t] = d1 * float(n0) - m1;
		v[t + 1u] = d1 * float(n1) - m1;
	}
}
#elif defined(TYPE_Q6_K)
// Where the block at word base keeps its quants (ql then qh, 96 words),
// its 8 words of scales and its d. In GGUF's layout they follow one
// another. REPACK, the backend's GPU layout (repack.comp): the range (from
// word pc.o[0]) holds every block's quants, then from pc.aux[1] (blocks *
// 96 words) every block's scales, then every block's d; base is still
// pc.o[0] + block * KQ_WORDS.
uvec3 q6_at(uint base)
{
#if defined(REPACK)
	uint r0 = pc.o[0], sc = pc.aux[1], bi = (base - r0) / KQ_WORDS;
	return uvec3(r0 + bi * 96u, r0 + sc + bi * 8u, r0 + sc + sc / 12u + bi);
#else
	return uvec3(base, base + 96u, base + 104u);
#endif
}

void kq_group16(uint base, uint g, out float v[16])
{
	uvec3 at = q6_at(base);
	uint n = g / 8u, r0 = 16u * (g % 8u);
	uint quarter = r0 / 32u, l0 = r0 % 32u;
	uint sb = 8u * n + l0 / 16u + 2u * quarter; // its scale byte
	uint sw = uint(w16[at.y + sb / 2u]);
	int sc = int(((sb & 1u) != 0u ? sw >> 8 : sw) << 24) >> 24;
	float d = half_f(uint(w16[at.z])) * float(sc);
	uint ql0 = 64u * n + l0 + (quarter & 1u) * 32u, qh0 = 128u + 32u * n + l0;
	bool high = quarter >= 2u;
	uint sh = 2u * quarter;
	[[unroll]] for (uint t = 0; t < 16u; t += 2u) {
		uint ul = uint(w16[at.x + (ql0 + t) / 2u]); // ql0, qh0 even
		uint uh = uint(w16[at.x + (qh0 + t) / 2u]);
		uint l0b = ul & 255u, l1b = ul >> 8;
		uint n0 = high ? l0b >> 4 : l0b & 15u, n1 = high ? l1b >> 4 : l1b & 15u;
		uint h0 = ((uh & 255u) >> sh) & 3u, h1 = ((uh >> 8) >> sh) & 3u;
		v[t] = d * float(int(n0 | (h0 << 4)) - 32);
		v[t + 1u] = d * float(int(n1 | (h1 << 4)) - 32);
	}
}
#elif defined(TYPE_Q5_K)
void kq_group16(uint base, uint g, out float v[16])
{
	uint grp = g / 4u, hi = (g % 4u) / 2u, l0 = 16u * (g % 2u);
	uint sc, mn;
	q4k_scale_min(base, 2u * grp + hi, sc, mn);
	float d1 = half_f(uint(w16[base])) * float(sc);
	float m1 = half_f(uint(w16[base + 1u])) * float(mn);
	[[unroll]] for (uint t = 0; t < 16u; t += 4u) {
		uvec4 q = (kq_bytes(kq_u32(base + 24u + 16u * grp + (l0 + t) / 2u)) >> (4u * hi)) & 15u;
		q |= ((kq_bytes(kq_u32(base + 8u + (l0 + t) / 2u)) >> (2u * grp + hi)) & 1u) << 4;
		[[unroll]] for (uint i = 0; i < 4u; i++) {
			precise float w = d1 * float(q[i]) - m1;
			v[t + i] = w;
		}
	}
}

#endif

#if defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// units: bytes 32g + 8p .. + 7 of the nibbles (u = 4g + p), runs low, low,
// high, high; Q5_K adds the 5th bit from qh, and its nibbles start after it
uint kq_span(uint u, uint s)
{
	return 64u * (u / 4u) + 32u * (s / 2u) + 8u * (u % 4u) + 4u * (s % 2u);
}

float kq_dot(uint base, uint u, vec4 xv[4], vec4 xs)
{
	uint g = u / 4u, p = u % 4u;
	uint b[2], h[2];
#if defined(TYPE_Q5_K)
	const uint qs = 24u;
#else
	const uint qs = 8u;
#endif
	[[unroll]] for (uint w = 0; w < 2u; w++) {
		b[w] = kq_u32(base + qs + 16u * g + 4u * p + 2u * w);
#if defined(TYPE_Q5_K)
		h[w] = kq_u32(base + 8u + 4u * p + 2u * w);
#else
		h[w] = 0u;
#endif
	}
	float sd = 0.0, sm = 0.0;
	[[unroll]] for (uint hi = 0; hi < 2u; hi++) {
		uint sc, mn;
		q4k_scale_min(base, 2u * g + hi, sc, mn);
		float sq = 0.0;
		[[unroll]] for (uint w = 0; w < 2u; w++) {
			uint q = ((b[w] >> (4u * hi)) & 0x0F0F0F0Fu) |
				 (((h[w] >> (2u * g + hi)) & 0x01010101u) << 4);
			sq += dot(kq_f4(q), xv[2u * hi + w]);
		}
		sd += float(sc) * sq;
		sm += float(mn) * (xs[2u * hi] + xs[2u * hi + 1u]);
	}
	return half_f(uint(w16[base])) * sd - half_f(uint(w16[base + 1u])) * sm;
}
#endif

#if defined(TYPE_Q2_K) || defined(TYPE_Q3_K)
uint kq_span(uint u, uint s) { return 128u * (u / 8u) + 32u * s + 4u * (u % 8u); }

#if defined(TYPE_Q2_K)
void kq_group16(uint base, uint g, out float v[16])
{
	uint sc = kq_byte(base, g), sh = 2u * ((g % 8u) / 2u);
	float dl = half_f(uint(w16[base + 40u])) * float(sc & 15u);
	float ml = half_f(uint(w16[base + 41u])) * float(sc >> 4);
	uint q0 = 8u + 16u * (g / 8u) + 8u * (g % 2u); // word of the first quant
	[[unroll]] for (uint t = 0; t < 16u; t += 4u) {
		uvec4 q = (kq_bytes(kq_u32(base + q0 + t / 2u)) >> sh) & 3u;
		[[unroll]] for (uint i = 0; i < 4u; i++) {
			precise float w = dl * float(q[i]) - ml;
			v[t + i] = w;
		}
	}
}

float kq_dot(uint base, uint u, vec4 xv[4], vec4 xs)
{
	uint n = u / 8u, p = u % 8u;
	uint b = kq_u32(base + 8u + 16u * n + 2u * p);
	float sd = 0.0, sm = 0.0;
	[[unroll]] for (uint j = 0; j < 4u; j++) {
		uint sc = kq_byte(base, 8u * n + 2u * j + p / 4u);
		sd += float(sc & 15u) * dot(kq_f4((b >> (2u * j)) & 0x03030303u), xv[j]);
		sm += float(sc >> 4) * xs[j];
	}
	return half_f(uint(w16[base + 40u])) * sd - half_f(uint(w16[base + 41u])) * sm;
}
#else
// scale s (of 16) as a signed value, s - 32 of the 6 bits
int q3k_scale(uint base, uint s)
{
	uint lo = (kq_byte(base, 96u + s % 8u) >> (4u * (s / 8u))) & 15u;
	uint hi = (kq_byte(base, 104u + s % 4u) >> (2u * (s / 4u))) & 3u;
	return int(lo | (hi << 4)) - 32;
}

void kq_group16(uint base, uint g, out float v[16])
{
	uint n = g / 8u, j = (g % 8u) / 2u, l0 = 16u * (g % 2u);
	float dl = half_f(uint(w16[base + 54u])) * float(q3k_scale(base, g));
	[[unroll]] for (uint t = 0; t < 16u; t += 4u) {
		uvec4 q = (kq_bytes(kq_u32(base + 16u + 16u * n + (l0 + t) / 2u)) >> (2u * j)) & 3u;
		uvec4 h = (kq_bytes(kq_u32(base + (l0 + t) / 2u)) >> (4u * n + j)) & 1u;
		ivec4 qs = ivec4(q) - 4 * ivec4(1u - h);
		[[unroll]] for (uint i = 0; i < 4u; i++)
			v[t + i] = dl * float(qs[i]);
	}
}

float kq_dot(uint base, uint u, vec4 xv[4], vec4 xs)
{
	uint n = u / 8u, p = u % 8u;
	uint b = kq_u32(base + 16u + 16u * n + 2u * p);
	uint h = kq_u32(base + 2u * p) >> (4u * n);
	float s = 0.0;
	[[unroll]] for (uint j = 0; j < 4u; j++) {
		// q + 4 in each byte: 4 where the hmask bit is set, so - 4 after
		uint q = ((b >> (2u * j)) & 0x03030303u) | (((h >> j) & 0x01010101u) << 2);
		s += float(q3k_scale(base, 8u * n + 2u * j + p / 4u)) * dot(kq_f4(q) - 4.0, xv[j]);
	}
	return half_f(uint(w16[base + 54u])) * s;
}
#endif
#elif defined(TYPE_IQ4_XS)
// sub-block ib's scale: d * (ls - 32), ls its 6 bits
float iq4xs_scale(uint base, uint ib)
{
	uint ls = ((kq_byte(base, 4u + ib / 2u) >> (4u * (ib % 2u))) & 15u) |
		  (((uint(w16[base + 1u]) >> (2u * ib)) & 3u) << 4);
	return half_f(uint(w16[base])) * float(int(ls) - 32);
}

void kq_group16(uint base, uint g, out float v[16])
{
	uint ib = g / 2u;
	float dl = iq4xs_scale(base, ib);
	[[unroll]] for (uint t = 0; t < 16u; t += 4u) {
		vec4 kv = iq4_f4((kq_u32(base + 4u + 8u * ib + t / 2u) >> (4u * (g % 2u))) & 0x0F0F0F0Fu);
		[[unroll]] for (uint i = 0; i < 4u; i++)
			v[t + i] = dl * kv[i];
	}
}

uint kq_span(uint u, uint s)
{
	return 32u * (u / 2u) + 16u * (s / 2u) + 8u * (u % 2u) + 4u * (s % 2u);
}

float kq_dot(uint base, uint u, vec4 xv[4], vec4 xs)
{
	uint ib = u / 2u, p = u % 2u;
	uint b[2];
	b[0] = kq_u32(base + 4u + 8u * ib + 4u * p);
	b[1] = kq_u32(base + 4u + 8u * ib + 4u * p + 2u);
	float s = 0.0;
	[[unroll]] for (uint r = 0; r < 4u; r++)
		s += dot(iq4_f4((b[r % 2u] >> (4u * (r / 2u))) & 0x0F0F0F0Fu), xv[r]);
	return iq4xs_scale(base, ib) * s;
}
#endif
