/* AVX-512 (F, BW, VL, VNNI) routines: the float rows take 16 lanes a step
 * with masked tails; quantized rows multiply two blocks a step with
 * vpdpbusd (unsigned weight bytes against x quantized as on the AVX2
 * path), plus, per block, the correction an offset needs (Q4_0's - 8,
 * Q5_0's - 16, the IQ4 values' + 128) or a min; the int8 matrix product of
 * batched passes (gemm_i8); attention as on the AVX2 path, 16 lanes wide.
 * What is missing here (argmax, silu) comes from AVX2. Picked at create()
 * when the CPU has all four extensions (Zen 4/5, Intel server parts). */
#include <math.h>
#include <string.h>

#include "belt/types.h"
#include "cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#define AVX512                                                        \
	__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,"  \
			      "avx2,fma,f16c")))

AVX512 static inline float hsum256(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v),
			      _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* The float types differ only in how 16 weights become 16 floats. */
AVX512 static inline __m512 load16_f32(const void *w, int j, __mmask16 m)
{
	return _mm512_maskz_loadu_ps(m, (const float *)w + j);
}

AVX512 static inline __m512 load16_f16(const void *w, int j, __mmask16 m)
{
	return _mm512_cvtph_ps(
		_mm256_maskz_loadu_epi16(m, (const uint16_t *)w + j));
}

AVX512 static inline __m512 load16_bf16(const void *w, int j, __mmask16 m)
{
	__m256i h = _mm256_maskz_loadu_epi16(m, (const uint16_t *)w + j);
	return _mm512_castsi512_ps(
		_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

#define FLOAT_ROWS(name, load16)                                             \
	AVX512 static void name(const void *w, size_t row_bytes,             \
				const void *xv, float *y, int64_t r0,         \
				int64_t r1, int k)                            \
	{                                                                    \
		const float *x = xv;                                         \
		const __mmask16 all = 0xffff;                                \
		for (int64_t r = r0; r < r1; r++) {                          \
			const char *row = (const char *)w + r * row_bytes;   \
			__m512 a0 = _mm512_setzero_ps();                     \
			__m512 a1 = _mm512_setzero_ps();                     \
			__m512 a2 = _mm512_setzero_ps();                     \
			__m512 a3 = _mm512_setzero_ps();                     \
			int j = 0;                                           \
			for (; j + 64 <= k; j += 64) {                       \
				a0 = _mm512_fmadd_ps(load16(row, j, all),    \
					_mm512_loadu_ps(x + j), a0);         \
				a1 = _mm512_fmadd_ps(load16(row, j + 16, all), \
					_mm512_loadu_ps(x + j + 16), a1);    \
				a2 = _mm512_fmadd_ps(load16(row, j + 32, all), \
					_mm512_loadu_ps(x + j + 32), a2);    \
				a3 = _mm512_fmadd_ps(load16(row, j + 48, all), \
					_mm512_loadu_ps(x + j + 48), a3);    \
			}                                                    \
			for (; j < k; j += 16) {                             \
				__mmask16 m = k - j >= 16                    \
					? all                                \
					: (__mmask16)((1u << (k - j)) - 1);  \
				a0 = _mm512_fmadd_ps(load16(row, j, m),      \
					_mm512_maskz_loadu_ps(m, x + j), a0); \
			}                                                    \
			y[r] = _mm512_reduce_add_ps(                         \
				_mm512_add_ps(_mm512_add_ps(a0, a1),         \
					      _mm512_add_ps(a2, a3)));       \
		}                                                            \
	}

FLOAT_ROWS(rows_f32, load16_f32)
FLOAT_ROWS(rows_f16, load16_f16)
FLOAT_ROWS(rows_bf16, load16_bf16)

/* x -> int8 blocks as the AVX2 path quantizes them (layout:
 * cpu_xq_bytes); the per-block {-8 * sum(q), 0, ...} is where a Q4_0
 * block's dot product starts, as it multiplies unsigned nibbles. */
AVX512 static void quantize_x(const float *x, void *xq, int k)
{
	int nb = k / CPU_QK;
	int8_t *q = xq;
	float *d = cpu_xq_d(xq, k);
	int32_t *sums = cpu_xq_sums(xq, k), *corr = cpu_xq_corr(xq, k);
	for (int b = 0; b < nb; b++, x += CPU_QK, q += CPU_QK) {
		__m512 v0 = _mm512_loadu_ps(x);
		__m512 v1 = _mm512_loadu_ps(x + 16);
		float amax = _mm512_reduce_max_ps(
			_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
		/* the scale rounded to fp16, as ggml stores it in block_q8_0 */
		d[b] = _cvtsh_ss(_cvtss_sh(amax / 127.0f, 0));
		__m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
		/* round to nearest even, as _mm256_cvtps_epi32 does */
		__m512i i0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, id));
		__m512i i1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, id));
		__m128i b0 = _mm512_cvtsepi32_epi8(i0);
		__m128i b1 = _mm512_cvtsepi32_epi8(i1);
		_mm_storeu_si128((__m128i *)q, b0);
		_mm_storeu_si128((__m128i *)(q + 16), b1);
		int32_t s0 = _mm512_reduce_add_epi32(i0);
		int32_t s1 = _mm512_reduce_add_epi32(i1);
		sums[2 * b] = s0;
		sums[2 * b + 1] = s1;
		__m256i c = _mm256_setr_epi32(-8 * (s0 + s1), 0, 0, 0, 0, 0, 0, 0);
		_mm256_storeu_si256((__m256i *)(corr + 8 * b), c);
	}
}

/* Scales of blocks b and b+1 (fp16 w scale times float x scale), each
 * over 8 lanes. */
AVX512 static inline __m512 scales2(uint16_t h0, uint16_t h1,
				    const float *xd)
{
	__m128 dw = _mm_cvtph_ps(_mm_cvtsi32_si128((int)(h0 | (uint32_t)h1 << 16)));
	__m128 s = _mm_mul_ps(
		dw, _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)xd)));
	const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1,
					      1, 1, 1, 1, 1);
	return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(s));
}

AVX512 static inline __m512 scale1(uint16_t h, float xd)
{
	return _mm512_set1_ps(_cvtsh_ss(h) * xd);
}

/* Signed w times signed x, 4 bytes into each of 16 int32 lanes. */
AVX512 static inline __m512i dot_s8(__m512i w, __m512i x)
{
	__m512i aw = _mm512_abs_epi8(w);
	__m512i sx = _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(w),
					  _mm512_setzero_si512(), x);
	return _mm512_dpbusd_epi32(_mm512_setzero_si512(), aw, sx);
}

AVX512 static void rows_q8_0(const void *w, size_t row_bytes, const void *xv,
			     float *y, int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	int nb = k / CPU_QK;
	for (int64_t r = r0; r < r1; r++) {
		const struct belt_block_q8_0 *blk =
			(const void *)((const char *)w + r * row_bytes);
		__m512 a0 = _mm512_setzero_ps();
		__m512 a1 = _mm512_setzero_ps();
		int b = 0;
		for (; b + 4 <= nb; b += 4) {
			__m512i w0 = _mm512_inserti64x4(
				_mm512_castsi256_si512(_mm256_loadu_si256(
					(const __m256i *)blk[b].qs)),
				_mm256_loadu_si256((const __m256i *)blk[b + 1].qs),
				1);
			__m512i w1 = _mm512_inserti64x4(
				_mm512_castsi256_si512(_mm256_loadu_si256(
					(const __m256i *)blk[b + 2].qs)),
				_mm256_loadu_si256((const __m256i *)blk[b + 3].qs),
				1);
			__m512i p0 = dot_s8(w0, _mm512_loadu_si512(xq + b * CPU_QK));
			__m512i p1 = dot_s8(
				w1, _mm512_loadu_si512(xq + (b + 2) * CPU_QK));
			a0 = _mm512_fmadd_ps(scales2(blk[b].d, blk[b + 1].d, xd + b),
					     _mm512_cvtepi32_ps(p0), a0);
			a1 = _mm512_fmadd_ps(
				scales2(blk[b + 2].d, blk[b + 3].d, xd + b + 2),
				_mm512_cvtepi32_ps(p1), a1);
		}
		for (; b < nb; b++) {
			__m512i w0 = _mm512_zextsi256_si512(
				_mm256_loadu_si256((const __m256i *)blk[b].qs));
			__m512i x0 = _mm512_zextsi256_si512(_mm256_loadu_si256(
				(const __m256i *)(xq + b * CPU_QK)));
			__m512i p0 = dot_s8(w0, x0);
			a0 = _mm512_fmadd_ps(scale1(blk[b].d, xd[b]),
					     _mm512_cvtepi32_ps(p0), a0);
		}
		y[r] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
	}
}

/* Blocks b and b+1 of Q4_0 as 64 unsigned bytes 0..15, in x's order. */
AVX512 static inline __m512i nibbles2(const struct belt_block_q4_0 *blk)
{
	__m256i q0 = _mm256_broadcastsi128_si256(
		_mm_loadu_si128((const __m128i *)blk[0].qs));
	__m256i q1 = _mm256_broadcastsi128_si256(
		_mm_loadu_si128((const __m128i *)blk[1].qs));
	__m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
	/* 128-bit lanes 1 and 3 take the high nibbles */
	v = _mm512_mask_blend_epi64(0xcc, v, _mm512_srli_epi16(v, 4));
	return _mm512_and_si512(v, _mm512_set1_epi8(15));
}

AVX512 static void rows_q4_0(const void *w, size_t row_bytes, const void *xv,
			     float *y, int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const int32_t *corr = cpu_xq_corr(xv, k);
	int nb = k / CPU_QK;
	for (int64_t r = r0; r < r1; r++) {
		const struct belt_block_q4_0 *blk =
			(const void *)((const char *)w + r * row_bytes);
		__m512 a0 = _mm512_setzero_ps();
		__m512 a1 = _mm512_setzero_ps();
		int b = 0;
		for (; b + 4 <= nb; b += 4) {
			__m512i p0 = _mm512_dpbusd_epi32(
				_mm512_loadu_si512(corr + 8 * b), nibbles2(blk + b),
				_mm512_loadu_si512(xq + b * CPU_QK));
			__m512i p1 = _mm512_dpbusd_epi32(
				_mm512_loadu_si512(corr + 8 * (b + 2)),
				nibbles2(blk + b + 2),
				_mm512_loadu_si512(xq + (b + 2) * CPU_QK));
			a0 = _mm512_fmadd_ps(scales2(blk[b].d, blk[b + 1].d, xd + b),
					     _mm512_cvtepi32_ps(p0), a0);
			a1 = _mm512_fmadd_ps(
				scales2(blk[b + 2].d, blk[b + 3].d, xd + b + 2),
				_mm512_cvtepi32_ps(p1), a1);
		}
		for (; b < nb; b++) {
			__m128i qs = _mm_loadu_si128((const __m128i *)blk[b].qs);
			__m256i v = _mm256_set_m128i(_mm_srli_epi16(qs, 4), qs);
			v = _mm256_and_si256(v, _mm256_set1_epi8(15));
			__m256i p = _mm256_dpbusd_epi32(
				_mm256_loadu_si256((const __m256i *)(corr + 8 * b)),
				v,
				_mm256_loadu_si256((const __m256i *)(xq + b * CPU_QK)));
			a0 = _mm512_fmadd_ps(
				scale1(blk[b].d, xd[b]),
				_mm512_cvtepi32_ps(_mm512_zextsi256_si512(p)), a0);
		}
		y[r] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
	}
}

/* Floats f[0..7] spread over 16 lanes, f[4i + j/4] in lane j: the
 * per-16-element scales of two blocks of 32. */
AVX512 static inline __m512 spread4(__m256 f, int i)
{
	const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
					      2, 3, 3, 3, 3);
	return _mm512_permutexvar_ps(
		_mm512_add_epi32(idx, _mm512_set1_epi32(4 * i)),
		_mm512_castps256_ps512(f));
}

/* Floats f[0..7] spread over 16 lanes, f[2i + j/8] in lane j: the scales
 * of two blocks of 32. */
AVX512 static inline __m512 spread8(__m256 f, int i)
{
	const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1,
					      1, 1, 1, 1, 1);
	return _mm512_permutexvar_ps(
		_mm512_add_epi32(idx, _mm512_set1_epi32(2 * i)),
		_mm512_castps256_ps512(f));
}

/* Q6_K, a half super-block (4 blocks of x) at a time: the 6-bit q of two
 * blocks per vector, vpdpbusd against x, then each 16-element group's
 * scale (sc * d * dx) applied in float; 32 * sc * sum(xq) subtracted at
 * the end. */
AVX512 static void rows_q6_k(const void *w, size_t row_bytes, const void *xv,
			     float *y, int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const int32_t *xs = cpu_xq_sums(xv, k);
	const __m512i m4 = _mm512_set1_epi8(15), m3 = _mm512_set1_epi8(3);
	/* the high bits of q for blocks 0|1 and 2|3 of a half */
	const __m512i sh01 = _mm512_setr_epi64(0, 0, 0, 0, 2, 2, 2, 2);
	const __m512i sh23 = _mm512_setr_epi64(4, 4, 4, 4, 6, 6, 6, 6);
	const __m256i dup = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
	int nsb = k / CPU_QK_K;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_q6_k *blk =
			(const void *)((const char *)w + r * row_bytes);
		__m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
		__m256 ac = _mm256_setzero_ps();
		for (int sb = 0; sb < nsb; sb++) {
			const struct cpu_block_q6_k *b = &blk[sb];
			__m256 d = _mm256_set1_ps(_cvtsh_ss(b->d));
			for (int h = 0; h < 2; h++) {
				int xb = sb * 8 + h * 4;
				__m512i l = _mm512_loadu_si512(b->ql + 64 * h);
				__m512i hh = _mm512_broadcast_i64x4(_mm256_loadu_si256(
					(const __m256i *)(b->qh + 32 * h)));
				__m512i q01 = _mm512_or_si512(
					_mm512_and_si512(l, m4),
					_mm512_slli_epi16(_mm512_and_si512(
						_mm512_srlv_epi64(hh, sh01), m3), 4));
				__m512i q23 = _mm512_or_si512(
					_mm512_and_si512(_mm512_srli_epi16(l, 4), m4),
					_mm512_slli_epi16(_mm512_and_si512(
						_mm512_srlv_epi64(hh, sh23), m3), 4));
				/* sc * d * dx for the 8 groups of 16 */
				__m256 dx = _mm256_permutevar8x32_ps(
					_mm256_castps128_ps256(_mm_loadu_ps(xd + xb)), dup);
				__m256 f = _mm256_mul_ps(
					_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
						_mm_loadl_epi64((const __m128i *)(b->scales + 8 * h)))),
						d),
					dx);
				__m512i p01 = _mm512_dpbusd_epi32(
					_mm512_setzero_si512(), q01,
					_mm512_loadu_si512(xq + xb * CPU_QK));
				__m512i p23 = _mm512_dpbusd_epi32(
					_mm512_setzero_si512(), q23,
					_mm512_loadu_si512(xq + (xb + 2) * CPU_QK));
				a0 = _mm512_fmadd_ps(spread4(f, 0), _mm512_cvtepi32_ps(p01), a0);
				a1 = _mm512_fmadd_ps(spread4(f, 1), _mm512_cvtepi32_ps(p23), a1);
				ac = _mm256_fmadd_ps(
					_mm256_cvtepi32_ps(_mm256_loadu_si256(
						(const __m256i *)(xs + 2 * xb))),
					f, ac);
			}
		}
		y[r] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) -
		       32.0f * hsum256(ac);
	}
}

/* Q4_K, two blocks of 32 per vector (low and high nibbles of 32 bytes). */
AVX512 static void rows_q4_k(const void *w, size_t row_bytes, const void *xv,
			     float *y, int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const int32_t *xs = cpu_xq_sums(xv, k);
	const __m512i m4 = _mm512_set1_epi8(15);
	int nsb = k / CPU_QK_K;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_q4_k *blk =
			(const void *)((const char *)w + r * row_bytes);
		__m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
		__m256 am = _mm256_setzero_ps();
		for (int sb = 0; sb < nsb; sb++) {
			const struct cpu_block_q4_k *b = &blk[sb];
			uint32_t u[4];
			cpu_k4_scales(b->scales, u);
			__m256 dx = _mm256_loadu_ps(xd + sb * 8);
			__m256 f = _mm256_mul_ps(
				_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
					_mm_cvtsi64_si128((long long)((uint64_t)u[1] << 32 | u[0])))), dx),
				_mm256_set1_ps(_cvtsh_ss(b->d)));
			const int8_t *x = xq + sb * CPU_QK_K;
			for (int g = 0; g < 4; g++) {
				__m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256(
					(const __m256i *)(b->qs + 32 * g)));
				v = _mm512_mask_blend_epi64(0xf0, v, _mm512_srli_epi16(v, 4));
				v = _mm512_and_si512(v, m4);
				__m512i p = _mm512_dpbusd_epi32(
					_mm512_setzero_si512(), v,
					_mm512_loadu_si512(x + 64 * g));
				if (g & 1)
					a1 = _mm512_fmadd_ps(spread8(f, g), _mm512_cvtepi32_ps(p), a1);
				else
					a0 = _mm512_fmadd_ps(spread8(f, g), _mm512_cvtepi32_ps(p), a0);
			}
			/* dmin * m * dx * sum(xq) per block */
			__m256i s = _mm256_hadd_epi32(
				_mm256_loadu_si256((const __m256i *)(xs + 16 * sb)),
				_mm256_loadu_si256((const __m256i *)(xs + 16 * sb + 8)));
			s = _mm256_permute4x64_epi64(s, 0xd8);
			__m256 mq = _mm256_cvtepi32_ps(_mm256_mullo_epi32(
				s, _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)((uint64_t)u[3] << 32 | u[2])))));
			am = _mm256_fmadd_ps(
				mq, _mm256_mul_ps(dx, _mm256_set1_ps(_cvtsh_ss(b->dmin))), am);
		}
		y[r] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) - hsum256(am);
	}
}

/* Two blocks' 16 bytes of nibbles -> 64 unsigned bytes 0..15 in x's
 * order: block 0 low nibbles, its high nibbles, then block 1's. */
AVX512 static inline __m512i nib2(const uint8_t *qs0, const uint8_t *qs1)
{
	__m512i v = _mm512_inserti64x4(
		_mm512_castsi256_si512(_mm256_broadcastsi128_si256(
			_mm_loadu_si128((const __m128i *)qs0))),
		_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)qs1)), 1);
	v = _mm512_mask_blend_epi64(0xcc, v, _mm512_srli_epi16(v, 4));
	return _mm512_and_si512(v, _mm512_set1_epi8(15));
}

/* Two blocks' 32-bit qh -> 64 bytes, 16 where the bit is set. */
AVX512 static inline __m512i fifth2(const uint8_t *qh0, const uint8_t *qh1)
{
	uint32_t h0, h1;
	memcpy(&h0, qh0, 4);
	memcpy(&h1, qh1, 4);
	return _mm512_maskz_mov_epi8((__mmask64)((uint64_t)h1 << 32 | h0), _mm512_set1_epi8(16));
}

/* IQ4_NL's values + 128 (unsigned, for vpdpbusd) in every 128-bit lane. */
AVX512 static inline __m512i iq4_table_u8(void)
{
	__m128i t = _mm_add_epi8(_mm_loadu_si128((const __m128i *)cpu_iq4_values),
				 _mm_set1_epi8((char)0x80));
	return _mm512_broadcast_i32x4(t);
}

/* The adjacent fp16 d, m of blocks b and b + 1 times their x scales:
 * {d0 dx0, m0 dx0, d1 dx1, m1 dx1}, one conversion for the four. */
AVX512 static inline __m128 dm2(const uint16_t *dm0, const uint16_t *dm1, const float *xd)
{
	uint32_t a, b;
	memcpy(&a, dm0, 4);
	memcpy(&b, dm1, 4);
	__m128 f = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)((uint64_t)b << 32 | a)));
	__m128 x = _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)xd));
	return _mm_mul_ps(f, _mm_unpacklo_ps(x, x));
}

/* Blocks of 32 two at a time, as Q4_0: q unsigned from QV2 (blocks b and
 * b + 1), the dot product started at START(x's {-8 * sum, 0...}) (Q5_0:
 * twice that for q - 16; IQ4_NL: 16 times for values + 128), scaled by d
 * * dx; with HAS_MIN (d and m adjacent), m * dx * sum(xq) too, in the odd
 * lanes of a 4-lane sum. */
#define ROWS_32(name, type, QV2, START, HAS_MIN)                                 \
	AVX512 static void name(const void *w, size_t row_bytes, const void *xv, float *y, \
				int64_t r0, int64_t r1, int k)                          \
	{                                                                             \
		const int8_t *xq = xv;                                                \
		const float *xd = cpu_xq_d(xv, k);                                    \
		const int32_t *xs = cpu_xq_sums(xv, k);                               \
		const int32_t *corr = cpu_xq_corr(xv, k);                             \
		const __m512i even = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0,       \
						       2, 2, 2, 2, 2, 2, 2, 2);       \
		int nb = k / CPU_QK;                                                  \
		(void)xs; /* read with a min */                                      \
		(void)corr; /* read where START uses it */                           \
		for (int64_t r = r0; r < r1; r++) {                                   \
			const type *blk = (const void *)((const char *)w + r * row_bytes); \
			__m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();     \
			__m128 am = _mm_setzero_ps();                                 \
			int b = 0;                                                    \
			for (; b + 2 <= nb; b += 2) {                                 \
				__m512i p = _mm512_dpbusd_epi32(                      \
					START(_mm512_loadu_si512(corr + 8 * b)),      \
					QV2(blk + b), _mm512_loadu_si512(xq + b * CPU_QK)); \
				__m512 sc;                                            \
				if (HAS_MIN) {                                        \
					__m128 f = dm2(&blk[b].d, &blk[b + 1].d, xd + b); \
					sc = _mm512_permutexvar_ps(even, _mm512_castps128_ps512(f)); \
					__m128i s4 = _mm_loadu_si128((const __m128i *)(xs + 2 * b)); \
					s4 = _mm_hadd_epi32(s4, s4);                  \
					am = _mm_fmadd_ps(f, _mm_cvtepi32_ps(         \
						_mm_shuffle_epi32(s4, 0x50)), am);    \
				} else {                                              \
					sc = scales2(blk[b].d, blk[b + 1].d, xd + b); \
				}                                                     \
				if (b & 2)                                            \
					a1 = _mm512_fmadd_ps(sc, _mm512_cvtepi32_ps(p), a1); \
				else                                                  \
					a0 = _mm512_fmadd_ps(sc, _mm512_cvtepi32_ps(p), a0); \
			}                                                             \
			float m4[4];                                                  \
			_mm_storeu_ps(m4, am);                                        \
			float s = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) +       \
				  (m4[1] + m4[3]);                                    \
			/* an odd last block: its weights times x as rounded here */  \
			if (b < nb) {                                                 \
				float t[CPU_QK];                                      \
				DEQUANT(&blk[b], t);                                  \
				const float dx = xd[b];                               \
				for (int j = 0; j < CPU_QK; j++)                      \
					s += t[j] * (dx * (float)xq[b * CPU_QK + j]); \
			}                                                             \
			y[r] = s;                                                     \
		}                                                                     \
	}

AVX512 static inline __m512i q2_q4_1(const struct cpu_block_q4_1 *b)
{
	return nib2(b[0].qs, b[1].qs);
}

AVX512 static inline __m512i q2_q5_0(const struct cpu_block_q5_0 *b)
{
	return _mm512_or_si512(nib2(b[0].qs, b[1].qs), fifth2(b[0].qh, b[1].qh));
}

AVX512 static inline __m512i q2_q5_1(const struct cpu_block_q5_1 *b)
{
	return _mm512_or_si512(nib2(b[0].qs, b[1].qs), fifth2(b[0].qh, b[1].qh));
}

AVX512 static inline __m512i q2_iq4_nl(const struct cpu_block_iq4_nl *b)
{
	return _mm512_shuffle_epi8(iq4_table_u8(), nib2(b[0].qs, b[1].qs));
}

#define ZERO(c) _mm512_setzero_si512()
#define TWICE(c) _mm512_slli_epi32(c, 1)
#define TIMES16(c) _mm512_slli_epi32(c, 4)
#define DEQUANT cpu_dequant_q4_1
ROWS_32(rows_q4_1, struct cpu_block_q4_1, q2_q4_1, ZERO, 1)
#undef DEQUANT
#define DEQUANT cpu_dequant_q5_1
ROWS_32(rows_q5_1, struct cpu_block_q5_1, q2_q5_1, ZERO, 1)
#undef DEQUANT
#define DEQUANT cpu_dequant_q5_0
ROWS_32(rows_q5_0, struct cpu_block_q5_0, q2_q5_0, TWICE, 0)
#undef DEQUANT
#define DEQUANT cpu_dequant_iq4_nl
ROWS_32(rows_iq4_nl, struct cpu_block_iq4_nl, q2_iq4_nl, TIMES16, 0)
#undef DEQUANT
#undef ZERO
#undef TWICE
#undef TIMES16

/* IQ4_XS: two sub-blocks of 32 per vector, values + 128 against x from
 * -128 * sum(xq); the 8 scales (ls - 32) * d * dx in float. */
AVX512 static void rows_iq4_xs(const void *w, size_t row_bytes, const void *xv, float *y,
			       int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const int32_t *corr = cpu_xq_corr(xv, k);
	const __m512i table = iq4_table_u8();
	const __m256i sh_l = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
	const __m256i sh_h = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
	int nsb = k / CPU_QK_K;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_iq4_xs *blk = (const void *)((const char *)w + r * row_bytes);
		__m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
		for (int sb = 0; sb < nsb; sb++) {
			const struct cpu_block_iq4_xs *b = &blk[sb];
			uint32_t sl;
			memcpy(&sl, b->scales_l, 4);
			__m256i ls = _mm256_or_si256(
				_mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32((int)sl), sh_l),
						 _mm256_set1_epi32(15)),
				_mm256_slli_epi32(_mm256_and_si256(_mm256_srlv_epi32(
					_mm256_set1_epi32(b->scales_h), sh_h), _mm256_set1_epi32(3)), 4));
			__m256 f = _mm256_mul_ps(
				_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(ls, _mm256_set1_epi32(32))),
					      _mm256_set1_ps(_cvtsh_ss(b->d))),
				_mm256_loadu_ps(xd + sb * 8));
			for (int i = 0; i < 4; i++) {
				int xb = sb * 8 + 2 * i;
				__m512i q = _mm512_shuffle_epi8(table, nib2(b->qs + 32 * i, b->qs + 32 * i + 16));
				__m512i p = _mm512_dpbusd_epi32(
					_mm512_slli_epi32(_mm512_loadu_si512(corr + 8 * xb), 4), q,
					_mm512_loadu_si512(xq + xb * CPU_QK));
				if (i & 1)
					a1 = _mm512_fmadd_ps(spread8(f, i), _mm512_cvtepi32_ps(p), a1);
				else
					a0 = _mm512_fmadd_ps(spread8(f, i), _mm512_cvtepi32_ps(p), a0);
			}
		}
		y[r] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
	}
}

/* Q2_K, as Q6_K: a half super-block (32 bytes of qs, 4 blocks of x) at a
 * time, two blocks per vector (shifts 0|2 and 4|6), each group of 16's
 * sc * d * dx in float; dmin * m * dx * sum(xq) per group apart. */
AVX512 static void rows_q2_k(const void *w, size_t row_bytes, const void *xv, float *y,
			     int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const int32_t *xs = cpu_xq_sums(xv, k);
	const __m512i m3 = _mm512_set1_epi8(3);
	const __m512i sh01 = _mm512_setr_epi64(0, 0, 0, 0, 2, 2, 2, 2);
	const __m512i sh23 = _mm512_setr_epi64(4, 4, 4, 4, 6, 6, 6, 6);
	const __m256i dup = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
	const __m128i m4 = _mm_set1_epi8(15);
	int nsb = k / CPU_QK_K;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_q2_k *blk = (const void *)((const char *)w + r * row_bytes);
		__m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
		__m256 am = _mm256_setzero_ps();
		for (int sb = 0; sb < nsb; sb++) {
			const struct cpu_block_q2_k *b = &blk[sb];
			__m256 d = _mm256_set1_ps(_cvtsh_ss(b->d));
			__m256 dmin = _mm256_set1_ps(_cvtsh_ss(b->dmin));
			for (int h = 0; h < 2; h++) {
				int xb = sb * 8 + h * 4;
				__m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256(
					(const __m256i *)(b->qs + 32 * h)));
				__m128i sc8 = _mm_loadl_epi64((const __m128i *)(b->scales + 8 * h));
				__m256 dx = _mm256_permutevar8x32_ps(
					_mm256_castps128_ps256(_mm_loadu_ps(xd + xb)), dup);
				__m256 f = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(
					_mm256_cvtepu8_epi32(_mm_and_si128(sc8, m4))), d), dx);
				__m256 fm = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(
					_mm256_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(sc8, 4), m4))),
					dmin), dx);
				__m512i p01 = _mm512_dpbusd_epi32(
					_mm512_setzero_si512(),
					_mm512_and_si512(_mm512_srlv_epi64(v, sh01), m3),
					_mm512_loadu_si512(xq + xb * CPU_QK));
				__m512i p23 = _mm512_dpbusd_epi32(
					_mm512_setzero_si512(),
					_mm512_and_si512(_mm512_srlv_epi64(v, sh23), m3),
					_mm512_loadu_si512(xq + (xb + 2) * CPU_QK));
				a0 = _mm512_fmadd_ps(spread4(f, 0), _mm512_cvtepi32_ps(p01), a0);
				a1 = _mm512_fmadd_ps(spread4(f, 1), _mm512_cvtepi32_ps(p23), a1);
				am = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_loadu_si256(
					(const __m256i *)(xs + 2 * xb))), fm, am);
			}
		}
		y[r] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) - hsum256(am);
	}
}

/* Q3_K's 16 scales s - 32 as int8 lanes, unpacked in registers
 * (cpu_q3_k_scales' arithmetic). */
AVX512 static inline __m128i q3_k_scales(const uint8_t *packed)
{
	uint32_t a[3];
	memcpy(a, packed, 12);
	__m128i lo = _mm_and_si128(_mm_srlv_epi32(_mm_setr_epi32((int)a[0], (int)a[1], (int)a[0], (int)a[1]),
						  _mm_setr_epi32(0, 0, 4, 4)),
				   _mm_set1_epi8(15));
	__m128i hi = _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32((int)a[2]), _mm_setr_epi32(0, 2, 4, 6)),
				   _mm_set1_epi8(3));
	return _mm_sub_epi8(_mm_or_si128(lo, _mm_slli_epi32(hi, 4)), _mm_set1_epi8(32));
}

/* Q3_K: Q2_K's walk with q + 4 (the hmask bit as bit 2: bit 4h + j for
 * block j of half h) and signed scales; 4 * sc * sum(xq) subtracted. */
AVX512 static void rows_q3_k(const void *w, size_t row_bytes, const void *xv, float *y,
			     int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const int32_t *xs = cpu_xq_sums(xv, k);
	const __m512i m3 = _mm512_set1_epi8(3), one = _mm512_set1_epi8(1);
	const __m512i sh01 = _mm512_setr_epi64(0, 0, 0, 0, 2, 2, 2, 2);
	const __m512i sh23 = _mm512_setr_epi64(4, 4, 4, 4, 6, 6, 6, 6);
	const __m512i hb01 = _mm512_setr_epi64(0, 0, 0, 0, 1, 1, 1, 1);
	const __m512i hb23 = _mm512_setr_epi64(2, 2, 2, 2, 3, 3, 3, 3);
	const __m256i dup = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
	int nsb = k / CPU_QK_K;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_q3_k *blk = (const void *)((const char *)w + r * row_bytes);
		__m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
		__m256 ac = _mm256_setzero_ps();
		for (int sb = 0; sb < nsb; sb++) {
			const struct cpu_block_q3_k *b = &blk[sb];
			__m256 d = _mm256_set1_ps(_cvtsh_ss(b->d));
			__m128i sc = q3_k_scales(b->scales);
			__m512i hm = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)b->hmask));
			for (int h = 0; h < 2; h++) {
				int xb = sb * 8 + h * 4;
				__m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256(
					(const __m256i *)(b->qs + 32 * h)));
				__m512i hh = _mm512_srli_epi64(hm, 4 * h);
				__m512i q01 = _mm512_or_si512(
					_mm512_and_si512(_mm512_srlv_epi64(v, sh01), m3),
					_mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi64(hh, hb01), one), 2));
				__m512i q23 = _mm512_or_si512(
					_mm512_and_si512(_mm512_srlv_epi64(v, sh23), m3),
					_mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi64(hh, hb23), one), 2));
				__m256 dx = _mm256_permutevar8x32_ps(
					_mm256_castps128_ps256(_mm_loadu_ps(xd + xb)), dup);
				__m256 f = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
					h ? _mm_unpackhi_epi64(sc, sc) : sc)), d), dx);
				__m512i p01 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q01,
					_mm512_loadu_si512(xq + xb * CPU_QK));
				__m512i p23 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q23,
					_mm512_loadu_si512(xq + (xb + 2) * CPU_QK));
				a0 = _mm512_fmadd_ps(spread4(f, 0), _mm512_cvtepi32_ps(p01), a0);
				a1 = _mm512_fmadd_ps(spread4(f, 1), _mm512_cvtepi32_ps(p23), a1);
				ac = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_loadu_si256(
					(const __m256i *)(xs + 2 * xb))), f, ac);
			}
		}
		y[r] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) - 4.0f * hsum256(ac);
	}
}

/* Q5_K: Q4_K with the 5th bit of each q from qh (bits 2g and 2g + 1 for
 * the two blocks of group g). */
AVX512 static void rows_q5_k(const void *w, size_t row_bytes, const void *xv, float *y,
			     int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const int32_t *xs = cpu_xq_sums(xv, k);
	const __m512i m4 = _mm512_set1_epi8(15), sixteen = _mm512_set1_epi8(16);
	/* the qh bit of blocks 2g (low half) and 2g + 1 (high half) */
	__m512i bit[4];
	for (int g = 0; g < 4; g++)
		bit[g] = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << 2 * g)),
					    _mm256_set1_epi8((char)(2 << 2 * g)), 1);
	int nsb = k / CPU_QK_K;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_q5_k *blk = (const void *)((const char *)w + r * row_bytes);
		__m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
		__m256 am = _mm256_setzero_ps();
		for (int sb = 0; sb < nsb; sb++) {
			const struct cpu_block_q5_k *b = &blk[sb];
			uint32_t u[4];
			cpu_k4_scales(b->scales, u);
			__m256 dx = _mm256_loadu_ps(xd + sb * 8);
			__m256 f = _mm256_mul_ps(
				_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
					_mm_cvtsi64_si128((long long)((uint64_t)u[1] << 32 | u[0])))), dx),
				_mm256_set1_ps(_cvtsh_ss(b->d)));
			const int8_t *x = xq + sb * CPU_QK_K;
			__m512i hb = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)b->qh));
			for (int g = 0; g < 4; g++) {
				__m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256(
					(const __m256i *)(b->qs + 32 * g)));
				v = _mm512_and_si512(_mm512_mask_blend_epi64(0xf0, v, _mm512_srli_epi16(v, 4)), m4);
				/* + 16 where the 5th bit is set */
				v = _mm512_mask_add_epi8(v, _mm512_test_epi8_mask(hb, bit[g]), v, sixteen);
				__m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), v,
								_mm512_loadu_si512(x + 64 * g));
				if (g & 1)
					a1 = _mm512_fmadd_ps(spread8(f, g), _mm512_cvtepi32_ps(p), a1);
				else
					a0 = _mm512_fmadd_ps(spread8(f, g), _mm512_cvtepi32_ps(p), a0);
			}
			__m256i s = _mm256_hadd_epi32(
				_mm256_loadu_si256((const __m256i *)(xs + 16 * sb)),
				_mm256_loadu_si256((const __m256i *)(xs + 16 * sb + 8)));
			s = _mm256_permute4x64_epi64(s, 0xd8);
			__m256 mq = _mm256_cvtepi32_ps(_mm256_mullo_epi32(
				s, _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)((uint64_t)u[3] << 32 | u[2])))));
			am = _mm256_fmadd_ps(
				mq, _mm256_mul_ps(dx, _mm256_set1_ps(_cvtsh_ss(b->dmin))), am);
		}
		y[r] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) - hsum256(am);
	}
}

/* e^x as exp256 in vec_avx2.c, 16 lanes. */
AVX512 static inline __m512 exp512(__m512 x)
{
	x = _mm512_min_ps(x, _mm512_set1_ps(88.3762626647949f));
	x = _mm512_max_ps(x, _mm512_set1_ps(-87.3365447505531f));
	__m512 n = _mm512_roundscale_ps(
		_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
		_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
	r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
	__m512 p = _mm512_set1_ps(1.9875691500e-4f);
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
	p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r),
			    _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
	__m512i e = _mm512_slli_epi32(
		_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)),
		23);
	return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

/* Lane r of the result: the sum of the lanes of a[r], r < 8. */
AVX512 static inline __m256 hsum8x16(const __m512 *a)
{
	__m256 h[8];
	for (int r = 0; r < 8; r++)
		h[r] = _mm256_add_ps(
			_mm512_castps512_ps256(a[r]),
			_mm256_castpd_ps(_mm512_extractf64x4_pd(
				_mm512_castps_pd(a[r]), 1)));
	__m256 t0 = _mm256_hadd_ps(h[0], h[1]);
	__m256 t1 = _mm256_hadd_ps(h[2], h[3]);
	__m256 t2 = _mm256_hadd_ps(h[4], h[5]);
	__m256 t3 = _mm256_hadd_ps(h[6], h[7]);
	__m256 u0 = _mm256_hadd_ps(t0, t1);
	__m256 u1 = _mm256_hadd_ps(t2, t3);
	return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
			     _mm256_permute2f128_ps(u0, u1, 0x31));
}

/* As the AVX2 attend: scores of 8 positions at a time, a vector softmax,
 * out accumulated in registers; 16 lanes, masked tails. */
AVX512 static void attend(const float *q, const float *kc, const float *vc,
			  size_t stride, int64_t n_kv, int head_dim,
			  float scale, float *att, float *out, int64_t base,
			  const uint32_t *tail)
{
	const __mmask16 all = 0xffff;
	int nq = (head_dim + 15) / 16;
	__mmask16 last = (__mmask16)(head_dim % 16 ? (1u << (head_dim % 16)) - 1
						   : all);
	int64_t t = 0;
	for (; t < n_kv; t += 8) {
		int rows = n_kv - t < 8 ? (int)(n_kv - t) : 8;
		__m512 a[8];
		const float *kr[8];
		for (int r = 0; r < 8; r++) {
			a[r] = _mm512_setzero_ps();
			kr[r] = r < rows ? kc + CPU_ATT_SLOT(t + r) * stride : kc;
		}
		/* rows are stride apart, beyond what the hardware prefetches */
		if (t + 16 <= n_kv)
			for (int r = 8; r < 16; r++)
				for (int i = 0; i < head_dim; i += 16)
					_mm_prefetch((const char *)(kc + CPU_ATT_SLOT(t + r) * stride + i),
						     _MM_HINT_T0);
		for (int i = 0; i < nq; i++) {
			__mmask16 m = i == nq - 1 ? last : all;
			__m512 qv = _mm512_maskz_loadu_ps(m, q + 16 * i);
			for (int r = 0; r < rows; r++)
				a[r] = _mm512_fmadd_ps(
					_mm512_maskz_loadu_ps(
						m, kr[r] + 16 * i),
					qv, a[r]);
		}
		__m256 s = _mm256_mul_ps(hsum8x16(a), _mm256_set1_ps(scale));
		_mm256_mask_storeu_ps(att + t, (__mmask8)((1u << rows) - 1), s);
	}

	/* softmax */
	__m512 vmax = _mm512_set1_ps(-INFINITY);
	for (t = 0; t < n_kv; t += 16) {
		__mmask16 m = n_kv - t >= 16 ? all
					     : (__mmask16)((1u << (n_kv - t)) - 1);
		vmax = _mm512_mask_max_ps(vmax, m, vmax,
					  _mm512_maskz_loadu_ps(m, att + t));
	}
	__m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
	__m512 vsum = _mm512_setzero_ps();
	for (t = 0; t < n_kv; t += 16) {
		__mmask16 m = n_kv - t >= 16 ? all
					     : (__mmask16)((1u << (n_kv - t)) - 1);
		__m512 e = exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, att + t), mx));
		_mm512_mask_storeu_ps(att + t, m, e);
		vsum = _mm512_mask_add_ps(vsum, m, vsum, e);
	}
	__m512 vs = _mm512_set1_ps(_mm512_reduce_add_ps(vsum));
	for (t = 0; t < n_kv; t += 16) {
		__mmask16 m = n_kv - t >= 16 ? all
					     : (__mmask16)((1u << (n_kv - t)) - 1);
		_mm512_mask_storeu_ps(att + t, m,
				      _mm512_div_ps(_mm512_maskz_loadu_ps(m, att + t), vs));
	}

	/* out = sum_t att[t] v_t, 128 floats at a time in registers */
	for (int i0 = 0; i0 < nq; i0 += 8) {
		int nv = nq - i0 < 8 ? nq - i0 : 8;
		__m512 o[8];
		for (int i = 0; i < 8; i++)
			o[i] = _mm512_setzero_ps();
		for (t = 0; t < n_kv; t++) {
			const float *v = vc + CPU_ATT_SLOT(t) * stride + 16 * i0;
			if (t + 4 < n_kv)
				for (int i = 0; i < nv; i++)
					_mm_prefetch((const char *)(vc + CPU_ATT_SLOT(t + 4) * stride + 16 * (i0 + i)),
						     _MM_HINT_T0);
			__m512 a = _mm512_set1_ps(att[t]);
			for (int i = 0; i < nv; i++) {
				__mmask16 m = i0 + i == nq - 1 ? last : all;
				o[i] = _mm512_fmadd_ps(
					a, _mm512_maskz_loadu_ps(m, v + 16 * i), o[i]);
			}
		}
		for (int i = 0; i < nv; i++)
			_mm512_mask_storeu_ps(out + 16 * (i0 + i),
					      i0 + i == nq - 1 ? last : all, o[i]);
	}
}

/* gemm_i8 for nt tokens and blocks of qk (16 or 32) values (constants once
 * inlined, as has_min): per block, 16-row int32 sums start at -128 *
 * sum(q_w) and gather (q_x + 128) * q_w four bytes a step, x broadcast; so
 * they end as decode's exact integer dot product, scaled by dw * dx into
 * float sums, plus mw * sx. */
AVX512 static inline __attribute__((always_inline)) void
gemm_i8_nt(const int8_t *wp, const float *ws, const float *wm, int nb, const uint8_t *xu,
	   size_t xs, const float *dx, const float *sx, size_t ds, const int nt, const int qk,
	   const bool has_min, float *y, size_t ys, int n_r)
{
	__m512 f0[CPU_GEMM_I8_NT], f1[CPU_GEMM_I8_NT];
	_Pragma("GCC unroll 4") for (int i = 0; i < nt; i++)
		f0[i] = f1[i] = _mm512_setzero_ps();
	const size_t wb = (size_t)16 * qk; /* bytes of a block of 16 rows */
	const int8_t *wp1 = wp + (size_t)nb * wb;
	const float *ws1 = ws + (size_t)nb * 32;
	const float *wm1 = has_min ? wm + (size_t)nb * 16 : NULL;
	for (int b = 0; b < nb; b++) {
		const int8_t *w0p = wp + (size_t)b * wb, *w1p = wp1 + (size_t)b * wb;
		__m512i s0 = _mm512_load_si512(ws + (size_t)b * 32 + 16);
		__m512i s1 = _mm512_load_si512(ws1 + (size_t)b * 32 + 16);
		__m512i a0[CPU_GEMM_I8_NT], a1[CPU_GEMM_I8_NT];
		_Pragma("GCC unroll 4") for (int i = 0; i < nt; i++) {
			a0[i] = s0;
			a1[i] = s1;
		}
		const uint8_t *xb = xu + (size_t)b * qk;
		_Pragma("GCC unroll 8") for (int st = 0; st < qk / 4; st++) {
			__m512i w0 = _mm512_load_si512(w0p + st * 64);
			__m512i w1 = _mm512_load_si512(w1p + st * 64);
			_Pragma("GCC unroll 4") for (int i = 0; i < nt; i++) {
				int32_t v;
				memcpy(&v, xb + (size_t)i * xs + st * 4, 4);
				__m512i xv = _mm512_set1_epi32(v);
				a0[i] = _mm512_dpbusd_epi32(a0[i], xv, w0);
				a1[i] = _mm512_dpbusd_epi32(a1[i], xv, w1);
			}
		}
		__m512 d0 = _mm512_load_ps(ws + (size_t)b * 32);
		__m512 d1 = _mm512_load_ps(ws1 + (size_t)b * 32);
		_Pragma("GCC unroll 4") for (int i = 0; i < nt; i++) {
			__m512 sxd = _mm512_set1_ps(dx[(size_t)i * ds + b]);
			f0[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a0[i]), _mm512_mul_ps(d0, sxd), f0[i]);
			f1[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a1[i]), _mm512_mul_ps(d1, sxd), f1[i]);
		}
		if (has_min) {
			__m512 m0 = _mm512_load_ps(wm + (size_t)b * 16);
			__m512 m1 = _mm512_load_ps(wm1 + (size_t)b * 16);
			_Pragma("GCC unroll 4") for (int i = 0; i < nt; i++) {
				__m512 v = _mm512_set1_ps(sx[(size_t)i * ds + b]);
				f0[i] = _mm512_fmadd_ps(m0, v, f0[i]);
				f1[i] = _mm512_fmadd_ps(m1, v, f1[i]);
			}
		}
	}
	__mmask16 m0 = n_r >= 16 ? 0xffff : (__mmask16)((1u << n_r) - 1);
	__mmask16 m1 = n_r >= 32 ? 0xffff : n_r <= 16 ? 0 : (__mmask16)((1u << (n_r - 16)) - 1);
	_Pragma("GCC unroll 4") for (int i = 0; i < nt; i++) {
		_mm512_mask_storeu_ps(y + (size_t)i * ys, m0, f0[i]);
		_mm512_mask_storeu_ps(y + (size_t)i * ys + 16, m1, f1[i]);
	}
}

#define GEMM_I8_NT(nt, qk, has_min) \
	gemm_i8_nt(wp, ws, wm, nb, xu, xs, dx, sx, ds, nt, qk, has_min, y, ys, n_r)
#define GEMM_I8_TOKENS(qk, has_min)                             \
	switch (n_t) {                                          \
	case 4: GEMM_I8_NT(4, qk, has_min); break;              \
	case 3: GEMM_I8_NT(3, qk, has_min); break;              \
	case 2: GEMM_I8_NT(2, qk, has_min); break;              \
	default: GEMM_I8_NT(1, qk, has_min); break;             \
	}

AVX512 static void gemm_i8(const int8_t *wp, const float *ws, const float *wm, int nb, int qk,
			   const uint8_t *xu, size_t xs, const float *dx, const float *sx,
			   size_t ds, int n_t, float *y, size_t ys, int n_r)
{
	if (qk == 16) {
		if (wm)
			GEMM_I8_TOKENS(16, true)
		else
			GEMM_I8_TOKENS(16, false)
	} else if (wm) {
		GEMM_I8_TOKENS(32, true)
	} else {
		GEMM_I8_TOKENS(32, false)
	}
}

#undef GEMM_I8_TOKENS
#undef GEMM_I8_NT

static const struct cpu_isa isa_avx512 = {
	.name = "avx512",
	.rows = {
		[CPU_W_F32] = rows_f32,
		[CPU_W_F16] = rows_f16,
		[CPU_W_BF16] = rows_bf16,
		[CPU_W_Q8_0] = rows_q8_0,
		[CPU_W_Q4_0] = rows_q4_0,
		[CPU_W_Q4_K] = rows_q4_k,
		[CPU_W_Q6_K] = rows_q6_k,
		[CPU_W_Q4_1] = rows_q4_1,
		[CPU_W_Q5_0] = rows_q5_0,
		[CPU_W_Q5_1] = rows_q5_1,
		[CPU_W_IQ4_NL] = rows_iq4_nl,
		[CPU_W_Q2_K] = rows_q2_k,
		[CPU_W_Q3_K] = rows_q3_k,
		[CPU_W_Q5_K] = rows_q5_k,
		[CPU_W_IQ4_XS] = rows_iq4_xs,
	},
	.quantize_x = quantize_x,
	.gemm_i8 = gemm_i8,
	.argmax = NULL, /* AVX2's: see pick_isa */
	.attend = attend,
};

const struct cpu_isa *const cpu_isa_avx512 = &isa_avx512;

#else

const struct cpu_isa *const cpu_isa_avx512 = NULL;

#endif
