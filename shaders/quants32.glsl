// Blocks of 32 weights (included by quants.glsl, which says what each type
// defines). Byte i of a block's 16 quant bytes holds weight i in its low
// nibble and weight 16 + i in its high one. ggml's layouts:
// Q4_1, 20 bytes: d, m (fp16), 16 quant bytes; w = q * d + m.
// Q5_0, 22 bytes: d, 4 bytes qh (bit i: the 5th bit of weight i), 16
//   quant bytes; w = (q - 16) * d.
// Q5_1, 24 bytes: d, m, qh, 16 quant bytes; w = q * d + m.
// IQ4_NL, 18 bytes: d, 16 quant bytes; w = d * iq4_value(q).
// 22 and 18 bytes are not 4-byte multiples: blocks are read as 16-bit
// words (kq_u32 puts two together), where they lie.
// Unit u (0, 1) of a block is quant bytes 8u .. 8u + 7: weights 8u .. 8u +
// 7 and 16 + 8u .. 16 + 8u + 7, runs of 4 s = 0, 1 (low nibbles), 2, 3
// (high).
#if defined(TYPE_Q4_1) || defined(TYPE_Q5_0) || defined(TYPE_Q5_1) || defined(TYPE_IQ4_NL)
#define KQ_BLOCK 32u
#define KQ_UNITS 2u
#if defined(TYPE_Q4_1)
#define KQ_WORDS 10u
#define KQ_QS 2u // word of the first quant byte
#elif defined(TYPE_Q5_0)
#define KQ_WORDS 11u
#define KQ_QS 3u
#define KQ_QH 1u // word of qh
#elif defined(TYPE_Q5_1)
#define KQ_WORDS 12u
#define KQ_QS 4u
#define KQ_QH 2u
#else
#define KQ_WORDS 9u
#define KQ_QS 1u
#endif

uint kq_span(uint u, uint s) { return 16u * (s / 2u) + 8u * u + 4u * (s % 2u); }

void kq_group16(uint base, uint g, out float v[16])
{
	float d = half_f(uint(w16[base]));
#if defined(TYPE_Q4_1) || defined(TYPE_Q5_1)
	float m = half_f(uint(w16[base + 1u]));
#endif
#if defined(KQ_QH)
	uint qh = kq_u32(base + KQ_QH) >> (16u * g);
#endif
	[[unroll]] for (uint t = 0; t < 16u; t += 4u) {
		uvec4 q = (kq_bytes(kq_u32(base + KQ_QS + t / 2u)) >> (4u * g)) & 15u;
#if defined(KQ_QH)
		q |= ((uvec4(qh) >> (uvec4(0u, 1u, 2u, 3u) + t)) & 1u) << 4;
#endif
		[[unroll]] for (uint i = 0; i < 4u; i++) {
#if defined(TYPE_Q4_1) || defined(TYPE_Q5_1)
			precise float w = float(q[i]) * d + m;
#elif defined(TYPE_Q5_0)
			float w = float(int(q[i]) - 16) * d;
#else
			float w = d * iq4_f(q[i]);
#endif
			v[t + i] = w;
		}
	}
}

float kq_dot(uint base, uint u, vec4 xv[4], vec4 xs)
{
	uint b[2];
	b[0] = kq_u32(base + KQ_QS + 4u * u);
	b[1] = kq_u32(base + KQ_QS + 4u * u + 2u);
#if defined(KQ_QH)
	uint qh = kq_u32(base + KQ_QH);
#endif
	float s = 0.0;
	[[unroll]] for (uint r = 0; r < 4u; r++) {
		uint q = (b[r % 2u] >> (4u * (r / 2u))) & 0x0F0F0F0Fu;
#if defined(KQ_QH)
		q |= kq_spread4((qh >> kq_span(u, r)) & 15u) << 4;
#endif
#if defined(TYPE_Q5_0)
		s += dot(kq_f4(q) - 16.0, xv[r]);
#elif defined(TYPE_IQ4_NL)
		s += dot(iq4_f4(q), xv[r]);
#else
		s += dot(kq_f4(q), xv[r]);
#endif
	}
	float d = half_f(uint(w16[base]));
#if defined(TYPE_Q4_1) || defined(TYPE_Q5_1)
	return d * s + half_f(uint(w16[base + 1u])) * (xs.x + xs.y + xs.z + xs.w);
#else
	return d * s;
#endif
}
#endif
