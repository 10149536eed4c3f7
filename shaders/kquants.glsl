// K-quant weights as GGUF stores them (ggml's block layouts), read from
// the 16-bit view w16 of binding 0 that the including shader declares.
// A super-block holds 256 weights; kq_group16(base, g, v) dequantizes its
// g-th run of 16 (g < 16), which one scale covers in both types, exactly
// as the CPU backend does (float products of the fp16 scales and the
// integer quants).
//
// Q4_K, 144 bytes: d, dmin (fp16), 12 bytes of 6-bit scales and mins for 8
// sub-blocks of 32, 128 bytes of nibbles (64 weights per 32 bytes: low
// nibbles the first 32, high nibbles the next). w = d * sc * q - dmin * m.
// Q6_K, 210 bytes: 128 bytes of low nibbles, 64 of high 2-bit pairs, 16
// int8 scales, d (fp16). w = d * sc * (q - 32).
#if defined(TYPE_Q4_K)
#define KQ_WORDS 72u // 16-bit words per super-block
#elif defined(TYPE_Q6_K)
#define KQ_WORDS 105u
#endif

// byte i of the super-block at 16-bit word base
uint kq_byte(uint base, uint i)
{
	uint u = uint(w16[base + i / 2u]);
	return (i & 1u) != 0u ? u >> 8 : u & 255u;
}

#if defined(TYPE_Q4_K)
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
void kq_group16(uint base, uint g, out float v[16])
{
	uint n = g / 8u, r0 = 16u * (g % 8u);
	uint quarter = r0 / 32u, l0 = r0 % 32u;
	int sc = int(kq_byte(base, 192u + 8u * n + l0 / 16u + 2u * quarter) << 24) >> 24;
	float d = half_f(uint(w16[base + 104u])) * float(sc);
	uint ql0 = 64u * n + l0 + (quarter & 1u) * 32u, qh0 = 128u + 32u * n + l0;
	bool high = quarter >= 2u;
	uint sh = 2u * quarter;
	[[unroll]] for (uint t = 0; t < 16u; t += 2u) {
		uint ul = uint(w16[base + (ql0 + t) / 2u]); // ql0, qh0 even
		uint uh = uint(w16[base + (qh0 + t) / 2u]);
		uint l0b = ul & 255u, l1b = ul >> 8;
		uint n0 = high ? l0b >> 4 : l0b & 15u, n1 = high ? l1b >> 4 : l1b & 15u;
		uint h0 = ((uh & 255u) >> sh) & 3u, h1 = ((uh >> 8) >> sh) & 3u;
		v[t] = d * float(int(n0 | (h0 << 4)) - 32);
		v[t + 1u] = d * float(int(n1 | (h1 << 4)) - 32);
	}
}
#endif

// Weight e (< 256) of the super-block at base.
float kq_at(uint base, uint e)
{
	float v[16];
	kq_group16(base, e / 16u, v);
	return v[e % 16u];
}
