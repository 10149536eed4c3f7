// The K and V caches in their element type, the specialization constants
// KV_K and KV_V (ids KV_K_ID and KV_V_ID, 0 and 1 unless the including
// shader says): 0 F32, 1 F16, 2 Q8_0 (llama.cpp's blocks: an f16 scale and
// 32 int8, 17 16-bit words, a position's row of values one block after
// another). The including shader defines KV_K_BINDING and KV_V_BINDING and,
// for a shader that stores into them, KV_WRITE; the host binds both with
// 16-bit elements, so a cache's base (pc.o) counts 16-bit words, and
// element e of a cache is its e-th value from that base.
//
// Readers: k_load4 / v_load4 (e a multiple of 4; the base 16-byte aligned
// for F32, 8 for F16), k_at / v_at, and for F16 k_load8 / v_load8. Writers: k_store / v_store of F32
// and F16 caches; q8_store_k / q8_store_v, the word of two quants at
// element e (even) and, with the block's scale, its first word.
#ifndef KV_K_ID
#define KV_K_ID 0
#define KV_V_ID 1
#endif
#define KV_F32 0u
#define KV_F16 1u
#define KV_Q8_0 2u
layout(constant_id = KV_K_ID) const uint KV_K = 0u;
layout(constant_id = KV_V_ID) const uint KV_V = 0u;

#ifdef KV_WRITE
#define KV_ACCESS writeonly
#else
#define KV_ACCESS readonly
#endif

layout(binding = KV_K_BINDING) KV_ACCESS buffer KCF { float kcf[]; };
layout(binding = KV_K_BINDING) KV_ACCESS buffer KCF4 { vec4 kcf4[]; };
layout(binding = KV_K_BINDING) KV_ACCESS buffer KCH { float16_t kch[]; };
layout(binding = KV_K_BINDING) KV_ACCESS buffer KCH4 { f16vec4 kch4[]; };
layout(binding = KV_K_BINDING) KV_ACCESS buffer KCW { uint16_t kcw[]; };
layout(binding = KV_V_BINDING) KV_ACCESS buffer VCF { float vcf[]; };
layout(binding = KV_V_BINDING) KV_ACCESS buffer VCF4 { vec4 vcf4[]; };
layout(binding = KV_V_BINDING) KV_ACCESS buffer VCH { float16_t vch[]; };
layout(binding = KV_V_BINDING) KV_ACCESS buffer VCH4 { f16vec4 vch4[]; };
layout(binding = KV_V_BINDING) KV_ACCESS buffer VCW { uint16_t vcw[]; };
layout(binding = KV_K_BINDING) KV_ACCESS buffer KCU4 { uvec4 kcu4[]; };
layout(binding = KV_V_BINDING) KV_ACCESS buffer VCU4 { uvec4 vcu4[]; };

// 16-bit words of a Q8_0 block, and the first word of the block of e
#define KV_Q8_WORDS 17u
#define KV_Q8_BLOCK(base, e) ((base) + ((e) >> 5) * KV_Q8_WORDS)

// four int8 (bytes of b, lowest first) as floats
vec4 kv_i8x4(uint b)
{
	return vec4(ivec4(int(b << 24), int(b << 16), int(b << 8), int(b)) >> 24);
}

#ifndef KV_WRITE
#define KV_READERS(LOAD4, AT, T, F, F4, H, H4, W)                                  \
	vec4 LOAD4(uint base, uint e)                                               \
	{                                                                           \
		if (T == KV_F32)                                                    \
			return F4[(base >> 3) + (e >> 2)];                          \
		if (T == KV_F16)                                                    \
			return vec4(H4[(base >> 2) + (e >> 2)]);                    \
		uint w = KV_Q8_BLOCK(base, e), j = w + 1u + ((e & 31u) >> 1);       \
		float d = unpackHalf2x16(uint(W[w])).x;                             \
		return d * kv_i8x4(uint(W[j]) | (uint(W[j + 1u]) << 16));           \
	}                                                                           \
	float AT(uint base, uint e)                                                 \
	{                                                                           \
		if (T == KV_F32)                                                    \
			return F[(base >> 1) + e];                                  \
		if (T == KV_F16)                                                    \
			return float(H[base + e]);                                  \
		uint w = KV_Q8_BLOCK(base, e), j = w + 1u + ((e & 31u) >> 1);       \
		uint q = (uint(W[j]) >> ((e & 1u) * 8u)) & 255u;                    \
		return unpackHalf2x16(uint(W[w])).x * float(int(q << 24) >> 24);    \
	}
KV_READERS(k_load4, k_at, KV_K, kcf, kcf4, kch, kch4, kcw)
KV_READERS(v_load4, v_at, KV_V, vcf, vcf4, vch, vch4, vcw)

// Eight values of an F16 cache from element e in one 16-byte load: e a
// multiple of 8, the base of 8 words (kv_f16x8_ok says whether it is).
bool kv_f16x8_ok(uint base) { return (base & 7u) == 0u; }
#define KV_LOAD8(NAME, U4)                                                  \
	void NAME(uint base, uint e, out vec4 lo, out vec4 hi)              \
	{                                                                   \
		uvec4 u = U4[(base >> 3) + (e >> 3)];                       \
		lo = vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y));        \
		hi = vec4(unpackHalf2x16(u.z), unpackHalf2x16(u.w));        \
	}
KV_LOAD8(k_load8, kcu4)
KV_LOAD8(v_load8, vcu4)
#else
void k_store(uint base, uint e, float x)
{
	if (KV_K == KV_F32)
		kcf[(base >> 1) + e] = x;
	else
		kch[base + e] = float16_t(x);
}
void v_store(uint base, uint e, float x)
{
	if (KV_V == KV_F32)
		vcf[(base >> 1) + e] = x;
	else
		vch[base + e] = float16_t(x);
}

// Q8_0 as llama.cpp quantizes: d = amax / 127, q = round(x / d) (halves
// away from zero), d stored as f16
float kv_q8_scale(float amax) { return amax / 127.0; }
uint kv_q8(float x, float d)
{
	float id = d != 0.0 ? 1.0 / d : 0.0;
	float v = x * id;
	return uint(int(sign(v) * floor(abs(v) + 0.5))) & 255u;
}
#define KV_Q8_STORE(NAME, W)                                                        \
	void NAME(uint base, uint e, vec2 x, float d)                               \
	{                                                                           \
		uint w = KV_Q8_BLOCK(base, e);                                      \
		if ((e & 31u) == 0u)                                                \
			W[w] = uint16_t(packHalf2x16(vec2(d, 0.0)));                \
		W[w + 1u + ((e & 31u) >> 1)] = uint16_t(kv_q8(x.x, d) | (kv_q8(x.y, d) << 8)); \
	}
KV_Q8_STORE(q8_store_k, kcw)
KV_Q8_STORE(q8_store_v, vcw)
#endif
