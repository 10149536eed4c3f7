/* AVX2/FMA/F16C routines. Compiled for the baseline target with per-function
 * target attributes; backend.c picks them at create() with
 * __builtin_cpu_supports. Quantized weights are multiplied with x quantized
 * to int8 per block of 32 (as ggml does), in integer arithmetic. */
#include <math.h>
#include <string.h>

#include "belt/types.h"
#include "cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma,f16c")))

AVX2 static inline float hsum(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v),
			      _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* The float types differ only in how 8 weights become 8 floats. */
AVX2 static inline __m256 load8_f32(const void *w, int j)
{
	return _mm256_loadu_ps((const float *)w + j);
}

AVX2 static inline __m256 load8_f16(const void *w, int j)
{
	return _mm256_cvtph_ps(
		_mm_loadu_si128((const __m128i *)((const uint16_t *)w + j)));
}

AVX2 static inline __m256 load8_bf16(const void *w, int j)
{
	__m128i h =
		_mm_loadu_si128((const __m128i *)((const uint16_t *)w + j));
	return _mm256_castsi256_ps(
		_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

static inline float scalar_f32(const void *w, int j)
{
	return ((const float *)w)[j];
}

static inline float scalar_f16(const void *w, int j)
{
	return cpu_fp16(((const uint16_t *)w)[j]);
}

static inline float scalar_bf16(const void *w, int j)
{
	return cpu_bf16(((const uint16_t *)w)[j]);
}

#define FLOAT_ROWS(name, load8, scalar)                                      \
	AVX2 static void name(const void *w, size_t row_bytes,               \
			      const void *xv, float *y, int64_t r0,           \
			      int64_t r1, int k)                              \
	{                                                                    \
		const float *x = xv;                                         \
		for (int64_t r = r0; r < r1; r++) {                          \
			const char *row = (const char *)w + r * row_bytes;   \
			__m256 a0 = _mm256_setzero_ps();                     \
			__m256 a1 = _mm256_setzero_ps();                     \
			__m256 a2 = _mm256_setzero_ps();                     \
			__m256 a3 = _mm256_setzero_ps();                     \
			int j = 0;                                           \
			for (; j + 32 <= k; j += 32) {                       \
				a0 = _mm256_fmadd_ps(load8(row, j),          \
					_mm256_loadu_ps(x + j), a0);         \
				a1 = _mm256_fmadd_ps(load8(row, j + 8),      \
					_mm256_loadu_ps(x + j + 8), a1);     \
				a2 = _mm256_fmadd_ps(load8(row, j + 16),     \
					_mm256_loadu_ps(x + j + 16), a2);    \
				a3 = _mm256_fmadd_ps(load8(row, j + 24),     \
					_mm256_loadu_ps(x + j + 24), a3);    \
			}                                                    \
			for (; j + 8 <= k; j += 8)                           \
				a0 = _mm256_fmadd_ps(load8(row, j),          \
					_mm256_loadu_ps(x + j), a0);         \
			float s = hsum(_mm256_add_ps(_mm256_add_ps(a0, a1),  \
						     _mm256_add_ps(a2, a3))); \
			for (; j < k; j++)                                   \
				s += scalar(row, j) * x[j];                  \
			y[r] = s;                                            \
		}                                                            \
	}

FLOAT_ROWS(rows_f32, load8_f32, scalar_f32)
FLOAT_ROWS(rows_f16, load8_f16, scalar_f16)
FLOAT_ROWS(rows_bf16, load8_bf16, scalar_bf16)

AVX2 static inline int32_t hsum_i32(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v),
				  _mm256_extracti128_si256(v, 1));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
	return _mm_cvtsi128_si32(s);
}

/* x -> int8 blocks with d = amax/127 (layout: cpu_xq_bytes). */
AVX2 static void quantize_x(const float *x, void *xq, int k)
{
	int8_t *q = xq;
	float *d = cpu_xq_d(xq, k);
	int32_t *sums = cpu_xq_sums(xq, k), *corr = cpu_xq_corr(xq, k);
	const __m256 sign = _mm256_set1_ps(-0.0f);
	const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	for (int b = 0; b < k / CPU_QK; b++, x += CPU_QK, q += CPU_QK) {
		__m256 v0 = _mm256_loadu_ps(x);
		__m256 v1 = _mm256_loadu_ps(x + 8);
		__m256 v2 = _mm256_loadu_ps(x + 16);
		__m256 v3 = _mm256_loadu_ps(x + 24);
		__m256 m = _mm256_max_ps(
			_mm256_max_ps(_mm256_andnot_ps(sign, v0),
				      _mm256_andnot_ps(sign, v1)),
			_mm256_max_ps(_mm256_andnot_ps(sign, v2),
				      _mm256_andnot_ps(sign, v3)));
		__m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m),
				       _mm256_extractf128_ps(m, 1));
		m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
		m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
		float amax = _mm_cvtss_f32(m4);
		/* the scale rounded to fp16, as ggml stores it in block_q8_0 */
		d[b] = _cvtsh_ss(_cvtss_sh(amax / 127.0f, 0));
		__m256 id = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
		__m256i i0 = _mm256_cvtps_epi32(_mm256_mul_ps(v0, id));
		__m256i i1 = _mm256_cvtps_epi32(_mm256_mul_ps(v1, id));
		__m256i i2 = _mm256_cvtps_epi32(_mm256_mul_ps(v2, id));
		__m256i i3 = _mm256_cvtps_epi32(_mm256_mul_ps(v3, id));
		int32_t s0 = hsum_i32(_mm256_add_epi32(i0, i1));
		int32_t s1 = hsum_i32(_mm256_add_epi32(i2, i3));
		sums[2 * b] = s0;
		sums[2 * b + 1] = s1;
		_mm256_storeu_si256((__m256i *)(corr + 8 * b),
				    _mm256_setr_epi32(-8 * (s0 + s1), 0, 0, 0,
						      0, 0, 0, 0));
		i0 = _mm256_packs_epi32(i0, i1);
		i2 = _mm256_packs_epi32(i2, i3);
		i0 = _mm256_packs_epi16(i0, i2);
		i0 = _mm256_permutevar8x32_epi32(i0, perm);
		_mm256_storeu_si256((__m256i *)q, i0);
	}
}

/* Sum of w[i] * x[i] over 32 signed bytes each, as 8 int32 lanes. */
AVX2 static inline __m256i dot_i8(__m256i w, __m256i x)
{
	__m256i aw = _mm256_sign_epi8(w, w);
	__m256i sx = _mm256_sign_epi8(x, w);
	return _mm256_madd_epi16(_mm256_maddubs_epi16(aw, sx),
				 _mm256_set1_epi16(1));
}

AVX2 static inline float fp16_scalar(uint16_t h)
{
	return _cvtsh_ss(h);
}

AVX2 static void rows_q8_0(const void *w, size_t row_bytes, const void *xv,
			   float *y, int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	int nb = k / CPU_QK;
	for (int64_t r = r0; r < r1; r++) {
		const struct belt_block_q8_0 *blk =
			(const void *)((const char *)w + r * row_bytes);
		__m256 a0 = _mm256_setzero_ps();
		__m256 a1 = _mm256_setzero_ps();
		int b = 0;
		for (; b + 2 <= nb; b += 2) {
			__m256i p0 = dot_i8(
				_mm256_loadu_si256((const __m256i *)blk[b].qs),
				_mm256_loadu_si256(
					(const __m256i *)(xq + b * CPU_QK)));
			__m256i p1 = dot_i8(
				_mm256_loadu_si256(
					(const __m256i *)blk[b + 1].qs),
				_mm256_loadu_si256(
					(const __m256i *)(xq + (b + 1) * CPU_QK)));
			a0 = _mm256_fmadd_ps(
				_mm256_set1_ps(fp16_scalar(blk[b].d) * xd[b]),
				_mm256_cvtepi32_ps(p0), a0);
			a1 = _mm256_fmadd_ps(
				_mm256_set1_ps(fp16_scalar(blk[b + 1].d) *
					       xd[b + 1]),
				_mm256_cvtepi32_ps(p1), a1);
		}
		for (; b < nb; b++) {
			__m256i p0 = dot_i8(
				_mm256_loadu_si256((const __m256i *)blk[b].qs),
				_mm256_loadu_si256(
					(const __m256i *)(xq + b * CPU_QK)));
			a0 = _mm256_fmadd_ps(
				_mm256_set1_ps(fp16_scalar(blk[b].d) * xd[b]),
				_mm256_cvtepi32_ps(p0), a0);
		}
		y[r] = hsum(_mm256_add_ps(a0, a1));
	}
}

/* 16 bytes of nibbles -> 32 signed bytes (low nibbles first) minus 8. */
AVX2 static inline __m256i unpack_q4(const uint8_t *qs)
{
	__m128i b = _mm_loadu_si128((const __m128i *)qs);
	__m256i v = _mm256_set_m128i(_mm_srli_epi16(b, 4), b);
	v = _mm256_and_si256(v, _mm256_set1_epi8(15));
	return _mm256_sub_epi8(v, _mm256_set1_epi8(8));
}

AVX2 static void rows_q4_0(const void *w, size_t row_bytes, const void *xv,
			   float *y, int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	int nb = k / CPU_QK;
	for (int64_t r = r0; r < r1; r++) {
		const struct belt_block_q4_0 *blk =
			(const void *)((const char *)w + r * row_bytes);
		__m256 a0 = _mm256_setzero_ps();
		__m256 a1 = _mm256_setzero_ps();
		int b = 0;
		for (; b + 2 <= nb; b += 2) {
			__m256i p0 = dot_i8(unpack_q4(blk[b].qs),
				_mm256_loadu_si256(
					(const __m256i *)(xq + b * CPU_QK)));
			__m256i p1 = dot_i8(unpack_q4(blk[b + 1].qs),
				_mm256_loadu_si256(
					(const __m256i *)(xq + (b + 1) * CPU_QK)));
			a0 = _mm256_fmadd_ps(
				_mm256_set1_ps(fp16_scalar(blk[b].d) * xd[b]),
				_mm256_cvtepi32_ps(p0), a0);
			a1 = _mm256_fmadd_ps(
				_mm256_set1_ps(fp16_scalar(blk[b + 1].d) *
					       xd[b + 1]),
				_mm256_cvtepi32_ps(p1), a1);
		}
		for (; b < nb; b++) {
			__m256i p0 = dot_i8(unpack_q4(blk[b].qs),
				_mm256_loadu_si256(
					(const __m256i *)(xq + b * CPU_QK)));
			a0 = _mm256_fmadd_ps(
				_mm256_set1_ps(fp16_scalar(blk[b].d) * xd[b]),
				_mm256_cvtepi32_ps(p0), a0);
		}
		y[r] = hsum(_mm256_add_ps(a0, a1));
	}
}

/* Byte shuffles that spread int16 scale pairs over a vector: SC_LANES(a,
 * b) puts the int16 at index a in the low 128 bits, b in the high. */
#define SC_LANES(a, b)                                                       \
	_mm256_setr_epi8(2 * (a), 2 * (a) + 1, 2 * (a), 2 * (a) + 1,          \
			 2 * (a), 2 * (a) + 1, 2 * (a), 2 * (a) + 1, 2 * (a), \
			 2 * (a) + 1, 2 * (a), 2 * (a) + 1, 2 * (a),          \
			 2 * (a) + 1, 2 * (a), 2 * (a) + 1, 2 * (b),          \
			 2 * (b) + 1, 2 * (b), 2 * (b) + 1, 2 * (b),          \
			 2 * (b) + 1, 2 * (b), 2 * (b) + 1, 2 * (b),          \
			 2 * (b) + 1, 2 * (b), 2 * (b) + 1, 2 * (b),          \
			 2 * (b) + 1, 2 * (b), 2 * (b) + 1)

/* Q6_K: q = 6-bit unsigned (q - 32 is the weight's), 16 per int8 scale.
 * Per 32-block of x: sum sc * q * xq in integers, scaled by d * dx;
 * the 32 * sc * sum(xq) offsets are gathered per half super-block. */
AVX2 static void rows_q6_k(const void *w, size_t row_bytes, const void *xv,
			   float *y, int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const int32_t *xs = cpu_xq_sums(xv, k);
	const __m256i m4 = _mm256_set1_epi8(15), m3 = _mm256_set1_epi8(3);
	const __m256i pick[4] = {SC_LANES(0, 1), SC_LANES(2, 3),
				 SC_LANES(4, 5), SC_LANES(6, 7)};
	const __m256i dup = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
	int nsb = k / CPU_QK_K;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_q6_k *blk =
			(const void *)((const char *)w + r * row_bytes);
		__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
		__m256 ac = _mm256_setzero_ps();
		for (int sb = 0; sb < nsb; sb++) {
			const struct cpu_block_q6_k *b = &blk[sb];
			float d = fp16_scalar(b->d);
			for (int h = 0; h < 2; h++) {
				int xb = sb * 8 + h * 4; /* first x block */
				const uint8_t *ql = b->ql + 64 * h;
				const uint8_t *qh = b->qh + 32 * h;
				const int8_t *sc = b->scales + 8 * h;
				__m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
				__m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
				__m256i hh = _mm256_loadu_si256((const __m256i *)qh);
				__m256i q[4];
				q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4),
					_mm256_slli_epi16(_mm256_and_si256(hh, m3), 4));
				q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4),
					_mm256_slli_epi16(_mm256_and_si256(
						_mm256_srli_epi16(hh, 2), m3), 4));
				q[2] = _mm256_or_si256(
					_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
					_mm256_slli_epi16(_mm256_and_si256(
						_mm256_srli_epi16(hh, 4), m3), 4));
				q[3] = _mm256_or_si256(
					_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
					_mm256_slli_epi16(_mm256_and_si256(
						_mm256_srli_epi16(hh, 6), m3), 4));
				__m128i sc8 = _mm_loadl_epi64((const __m128i *)sc);
				__m256i sc16 = _mm256_broadcastsi128_si256(
					_mm_cvtepi8_epi16(sc8));
				__m128 dx4 = _mm_loadu_ps(xd + xb);
				__m256 dd = _mm256_permutevar8x32_ps(
					_mm256_castps128_ps256(dx4), dup);
				for (int j = 0; j < 4; j++) {
					__m256i p = _mm256_madd_epi16(
						_mm256_maddubs_epi16(q[j],
							_mm256_loadu_si256((const __m256i *)(xq + (xb + j) * CPU_QK))),
						_mm256_shuffle_epi8(sc16, pick[j]));
					__m256 s = _mm256_set1_ps(d * xd[xb + j]);
					if (j & 1)
						a1 = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(p), a1);
					else
						a0 = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(p), a0);
				}
				/* 32 * sum over sub-blocks of sc * sum(xq) */
				__m256i off = _mm256_mullo_epi32(
					_mm256_loadu_si256((const __m256i *)(xs + 2 * xb)),
					_mm256_cvtepi8_epi32(sc8));
				ac = _mm256_fmadd_ps(
					_mm256_cvtepi32_ps(off),
					_mm256_mul_ps(dd, _mm256_set1_ps(32.0f * d)), ac);
			}
		}
		y[r] = hsum(_mm256_sub_ps(_mm256_add_ps(a0, a1), ac));
	}
}

/* Q4_K: 8 sub-blocks of 32 with 6-bit scale and min: per 32-block of x,
 * d * sc * sum(q * xq) * dx - dmin * m * sum(xq) * dx. */
AVX2 static void rows_q4_k(const void *w, size_t row_bytes, const void *xv,
			   float *y, int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const int32_t *xs = cpu_xq_sums(xv, k);
	const __m256i m4 = _mm256_set1_epi8(15);
	const __m256i pick[8] = {SC_LANES(0, 0), SC_LANES(1, 1), SC_LANES(2, 2),
				 SC_LANES(3, 3), SC_LANES(4, 4), SC_LANES(5, 5),
				 SC_LANES(6, 6), SC_LANES(7, 7)};
	int nsb = k / CPU_QK_K;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_q4_k *blk =
			(const void *)((const char *)w + r * row_bytes);
		__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
		__m256 am = _mm256_setzero_ps();
		for (int sb = 0; sb < nsb; sb++) {
			const struct cpu_block_q4_k *b = &blk[sb];
			uint32_t u[4];
			cpu_k4_scales(b->scales, u);
			__m128i sc8 = _mm_cvtsi64_si128((long long)((uint64_t)u[1] << 32 | u[0]));
			__m128i mn8 = _mm_cvtsi64_si128((long long)((uint64_t)u[3] << 32 | u[2]));
			__m256i sc16 = _mm256_broadcastsi128_si256(
				_mm_cvtepu8_epi16(sc8));
			__m256 dx = _mm256_loadu_ps(xd + sb * 8);
			__m256 dd = _mm256_mul_ps(dx, _mm256_set1_ps(fp16_scalar(b->d)));
			const int8_t *x = xq + sb * CPU_QK_K;
			for (int g = 0; g < 4; g++) {
				__m256i v = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * g));
				__m256i lo = _mm256_and_si256(v, m4);
				__m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
				__m256i p0 = _mm256_madd_epi16(
					_mm256_maddubs_epi16(lo, _mm256_loadu_si256(
						(const __m256i *)(x + 64 * g))),
					_mm256_shuffle_epi8(sc16, pick[2 * g]));
				__m256i p1 = _mm256_madd_epi16(
					_mm256_maddubs_epi16(hi, _mm256_loadu_si256(
						(const __m256i *)(x + 64 * g + 32))),
					_mm256_shuffle_epi8(sc16, pick[2 * g + 1]));
				a0 = _mm256_fmadd_ps(
					_mm256_permutevar8x32_ps(dd, _mm256_set1_epi32(2 * g)),
					_mm256_cvtepi32_ps(p0), a0);
				a1 = _mm256_fmadd_ps(
					_mm256_permutevar8x32_ps(dd, _mm256_set1_epi32(2 * g + 1)),
					_mm256_cvtepi32_ps(p1), a1);
			}
			/* sums of xq per 32-block, in block order */
			__m256i s = _mm256_hadd_epi32(
				_mm256_loadu_si256((const __m256i *)(xs + 16 * sb)),
				_mm256_loadu_si256((const __m256i *)(xs + 16 * sb + 8)));
			s = _mm256_permute4x64_epi64(s, 0xd8);
			__m256i mq = _mm256_mullo_epi32(s, _mm256_cvtepu8_epi32(mn8));
			am = _mm256_fmadd_ps(
				_mm256_cvtepi32_ps(mq),
				_mm256_mul_ps(dx, _mm256_set1_ps(fp16_scalar(b->dmin))), am);
		}
		y[r] = hsum(_mm256_sub_ps(_mm256_add_ps(a0, a1), am));
	}
}

/* 16 bytes of nibbles -> 32 unsigned bytes 0..15, low nibbles first. */
AVX2 static inline __m256i nibbles(const uint8_t *qs)
{
	__m128i b = _mm_loadu_si128((const __m128i *)qs);
	__m256i v = _mm256_set_m128i(_mm_srli_epi16(b, 4), b);
	return _mm256_and_si256(v, _mm256_set1_epi8(15));
}

/* The 32 bits at p -> 32 bytes, 16 where bit j is set (Q5's 5th bits). */
AVX2 static inline __m256i bits16(const uint8_t *p)
{
	uint32_t u;
	memcpy(&u, p, 4);
	const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
						2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
	const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
	__m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)u), spread);
	v = _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
	return _mm256_and_si256(v, _mm256_set1_epi8(16));
}

/* Sum of u[i] * x[i], u unsigned bytes below 128, as 8 int32 lanes. */
AVX2 static inline __m256i dot_u8(__m256i u, __m256i x)
{
	return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1));
}

/* IQ4_NL's 16 values in both 128-bit lanes, for byte lookups. */
AVX2 static inline __m256i iq4_table(void)
{
	return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)cpu_iq4_values));
}

/* Blocks of 32 whose q is unsigned (Q4_1, Q5_0, Q5_1): per block d * dx *
 * sum(q * xq) in integers, plus m * dx * sum(xq) (the min, MIN) or -16 * d
 * * dx * sum(xq) (Q5_0's offset, in the integer sum). */
#define ROWS_U32(name, type, QV, MIN, HAS_MIN, OFF16)                                       \
	AVX2 static void name(const void *w, size_t row_bytes, const void *xv, float *y, \
			      int64_t r0, int64_t r1, int k)                              \
	{                                                                          \
		const int8_t *xq = xv;                                             \
		const float *xd = cpu_xq_d(xv, k);                                 \
		const int32_t *xs = cpu_xq_sums(xv, k);                            \
		int nb = k / CPU_QK;                                               \
		for (int64_t r = r0; r < r1; r++) {                                \
			const type *blk = (const void *)((const char *)w + r * row_bytes); \
			__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();  \
			float m0 = 0.0f, m1 = 0.0f;                                \
			for (int b = 0; b < nb; b++) {                             \
				__m256i p = dot_u8(QV(&blk[b]),                    \
					_mm256_loadu_si256((const __m256i *)(xq + b * CPU_QK))); \
				int32_t sx = xs[2 * b] + xs[2 * b + 1];            \
				if (OFF16)                                         \
					p = _mm256_add_epi32(p, _mm256_setr_epi32( \
						-16 * sx, 0, 0, 0, 0, 0, 0, 0));   \
				__m256 s = _mm256_set1_ps(fp16_scalar(blk[b].d) * xd[b]); \
				float mn = HAS_MIN ? MIN(&blk[b]) * xd[b] * (float)sx : 0.0f; \
				if (b & 1) {                                       \
					a1 = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(p), a1); \
					m1 += mn;                                  \
				} else {                                           \
					a0 = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(p), a0); \
					m0 += mn;                                  \
				}                                                  \
			}                                                          \
			y[r] = hsum(_mm256_add_ps(a0, a1)) + (m0 + m1);            \
		}                                                                  \
	}

AVX2 static inline __m256i q_q4_1(const struct cpu_block_q4_1 *b)
{
	return nibbles(b->qs);
}

AVX2 static inline __m256i q_q5_0(const struct cpu_block_q5_0 *b)
{
	return _mm256_or_si256(nibbles(b->qs), bits16(b->qh));
}

AVX2 static inline __m256i q_q5_1(const struct cpu_block_q5_1 *b)
{
	return _mm256_or_si256(nibbles(b->qs), bits16(b->qh));
}

#define MIN_OF(b) fp16_scalar((b)->m)
#define NO_MIN(b) 0.0f
ROWS_U32(rows_q4_1, struct cpu_block_q4_1, q_q4_1, MIN_OF, 1, 0)
ROWS_U32(rows_q5_0, struct cpu_block_q5_0, q_q5_0, NO_MIN, 0, 1)
ROWS_U32(rows_q5_1, struct cpu_block_q5_1, q_q5_1, MIN_OF, 1, 0)
#undef MIN_OF
#undef NO_MIN

/* IQ4_NL: the 4-bit index looked up in the value table, signed bytes. */
AVX2 static void rows_iq4_nl(const void *w, size_t row_bytes, const void *xv, float *y,
			     int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const __m256i table = iq4_table();
	int nb = k / CPU_QK;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_iq4_nl *blk = (const void *)((const char *)w + r * row_bytes);
		__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
		for (int b = 0; b < nb; b++) {
			__m256i p = dot_i8(_mm256_shuffle_epi8(table, nibbles(blk[b].qs)),
					   _mm256_loadu_si256((const __m256i *)(xq + b * CPU_QK)));
			__m256 s = _mm256_set1_ps(fp16_scalar(blk[b].d) * xd[b]);
			if (b & 1)
				a1 = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(p), a1);
			else
				a0 = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(p), a0);
		}
		y[r] = hsum(_mm256_add_ps(a0, a1));
	}
}

/* IQ4_XS: IQ4_NL's values, a 6-bit scale ls - 32 per block of 32. */
AVX2 static void rows_iq4_xs(const void *w, size_t row_bytes, const void *xv, float *y,
			     int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const __m256i table = iq4_table();
	int nsb = k / CPU_QK_K;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_iq4_xs *blk = (const void *)((const char *)w + r * row_bytes);
		__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
		for (int sb = 0; sb < nsb; sb++) {
			const struct cpu_block_iq4_xs *b = &blk[sb];
			float d = fp16_scalar(b->d);
			for (int ib = 0; ib < 8; ib += 2) {
				int xb = sb * 8 + ib;
				int ls0 = ((b->scales_l[ib / 2] & 15) | (((b->scales_h >> (2 * ib)) & 3) << 4)) - 32;
				int ls1 = ((b->scales_l[ib / 2] >> 4) | (((b->scales_h >> (2 * ib + 2)) & 3) << 4)) - 32;
				__m256i p0 = dot_i8(_mm256_shuffle_epi8(table, nibbles(b->qs + 16 * ib)),
						    _mm256_loadu_si256((const __m256i *)(xq + xb * CPU_QK)));
				__m256i p1 = dot_i8(_mm256_shuffle_epi8(table, nibbles(b->qs + 16 * ib + 16)),
						    _mm256_loadu_si256((const __m256i *)(xq + (xb + 1) * CPU_QK)));
				a0 = _mm256_fmadd_ps(_mm256_set1_ps(d * (float)ls0 * xd[xb]),
						     _mm256_cvtepi32_ps(p0), a0);
				a1 = _mm256_fmadd_ps(_mm256_set1_ps(d * (float)ls1 * xd[xb + 1]),
						     _mm256_cvtepi32_ps(p1), a1);
			}
		}
		y[r] = hsum(_mm256_add_ps(a0, a1));
	}
}

/* Q2_K, a half super-block (32 bytes of qs, 4 blocks of x) at a time:
 * shift 2j of the bytes gives x block j, its two groups of 16 scaled by
 * 4-bit sc in integers; dmin * m * dx * sum(xq) per group of 16 apart. */
AVX2 static void rows_q2_k(const void *w, size_t row_bytes, const void *xv, float *y,
			   int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const int32_t *xs = cpu_xq_sums(xv, k);
	const __m256i m3 = _mm256_set1_epi8(3);
	const __m128i m4 = _mm_set1_epi8(15);
	const __m256i pick[4] = {SC_LANES(0, 1), SC_LANES(2, 3), SC_LANES(4, 5), SC_LANES(6, 7)};
	const __m256i dup = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
	int nsb = k / CPU_QK_K;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_q2_k *blk = (const void *)((const char *)w + r * row_bytes);
		__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
		__m256 am = _mm256_setzero_ps();
		for (int sb = 0; sb < nsb; sb++) {
			const struct cpu_block_q2_k *b = &blk[sb];
			float d = fp16_scalar(b->d);
			__m256 dmin = _mm256_set1_ps(fp16_scalar(b->dmin));
			for (int h = 0; h < 2; h++) {
				int xb = sb * 8 + h * 4;
				__m256i v = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * h));
				__m128i sc8 = _mm_loadl_epi64((const __m128i *)(b->scales + 8 * h));
				__m256i sc16 = _mm256_broadcastsi128_si256(
					_mm_cvtepu8_epi16(_mm_and_si128(sc8, m4)));
				for (int j = 0; j < 4; j++, v = _mm256_srli_epi16(v, 2)) {
					__m256i p = _mm256_madd_epi16(
						_mm256_maddubs_epi16(_mm256_and_si256(v, m3),
							_mm256_loadu_si256((const __m256i *)(xq + (xb + j) * CPU_QK))),
						_mm256_shuffle_epi8(sc16, pick[j]));
					__m256 s = _mm256_set1_ps(d * xd[xb + j]);
					if (j & 1)
						a1 = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(p), a1);
					else
						a0 = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(p), a0);
				}
				__m256i mq = _mm256_mullo_epi32(
					_mm256_loadu_si256((const __m256i *)(xs + 2 * xb)),
					_mm256_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(sc8, 4), m4)));
				__m256 dd = _mm256_permutevar8x32_ps(
					_mm256_castps128_ps256(_mm_loadu_ps(xd + xb)), dup);
				am = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mq), _mm256_mul_ps(dd, dmin), am);
			}
		}
		y[r] = hsum(_mm256_sub_ps(_mm256_add_ps(a0, a1), am));
	}
}

/* Q3_K's 16 scales s - 32 as int8 lanes, unpacked in registers
 * (cpu_q3_k_scales' arithmetic). */
AVX2 static inline __m128i q3_k_scales(const uint8_t *packed)
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

/* Q3_K: as Q2_K with q + 4 (0..7, the hmask bit as bit 2) and signed
 * scales; 4 * sc * sum(xq) per group of 16 subtracted at the end. */
AVX2 static void rows_q3_k(const void *w, size_t row_bytes, const void *xv, float *y,
			   int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const int32_t *xs = cpu_xq_sums(xv, k);
	const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
	const __m256i pick[4] = {SC_LANES(0, 1), SC_LANES(2, 3), SC_LANES(4, 5), SC_LANES(6, 7)};
	const __m256i dup = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
	int nsb = k / CPU_QK_K;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_q3_k *blk = (const void *)((const char *)w + r * row_bytes);
		__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
		__m256 ac = _mm256_setzero_ps();
		for (int sb = 0; sb < nsb; sb++) {
			const struct cpu_block_q3_k *b = &blk[sb];
			float d = fp16_scalar(b->d);
			__m128i sc = q3_k_scales(b->scales);
			__m256i hm = _mm256_loadu_si256((const __m256i *)b->hmask);
			for (int h = 0; h < 2; h++) {
				int xb = sb * 8 + h * 4;
				__m256i v = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * h));
				__m128i sc8 = h ? _mm_unpackhi_epi64(sc, sc) : sc;
				__m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(sc8));
				for (int j = 0; j < 4; j++) {
					__m256i q = _mm256_or_si256(_mm256_and_si256(v, m3),
						_mm256_slli_epi16(_mm256_and_si256(hm, one), 2));
					v = _mm256_srli_epi16(v, 2);
					hm = _mm256_srli_epi16(hm, 1);
					__m256i p = _mm256_madd_epi16(
						_mm256_maddubs_epi16(q,
							_mm256_loadu_si256((const __m256i *)(xq + (xb + j) * CPU_QK))),
						_mm256_shuffle_epi8(sc16, pick[j]));
					__m256 s = _mm256_set1_ps(d * xd[xb + j]);
					if (j & 1)
						a1 = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(p), a1);
					else
						a0 = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(p), a0);
				}
				__m256i off = _mm256_mullo_epi32(
					_mm256_loadu_si256((const __m256i *)(xs + 2 * xb)),
					_mm256_cvtepi8_epi32(sc8));
				__m256 dd = _mm256_permutevar8x32_ps(
					_mm256_castps128_ps256(_mm_loadu_ps(xd + xb)), dup);
				ac = _mm256_fmadd_ps(_mm256_cvtepi32_ps(off),
						     _mm256_mul_ps(dd, _mm256_set1_ps(4.0f * d)), ac);
			}
		}
		y[r] = hsum(_mm256_sub_ps(_mm256_add_ps(a0, a1), ac));
	}
}

/* Q5_K: Q4_K's walk with the 5th bit of each q from qh (bits 2g, 2g+1
 * for the 64 values of group g). */
AVX2 static void rows_q5_k(const void *w, size_t row_bytes, const void *xv, float *y,
			   int64_t r0, int64_t r1, int k)
{
	const int8_t *xq = xv;
	const float *xd = cpu_xq_d(xv, k);
	const int32_t *xs = cpu_xq_sums(xv, k);
	const __m256i m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1);
	const __m256i pick[8] = {SC_LANES(0, 0), SC_LANES(1, 1), SC_LANES(2, 2),
				 SC_LANES(3, 3), SC_LANES(4, 4), SC_LANES(5, 5),
				 SC_LANES(6, 6), SC_LANES(7, 7)};
	int nsb = k / CPU_QK_K;
	for (int64_t r = r0; r < r1; r++) {
		const struct cpu_block_q5_k *blk = (const void *)((const char *)w + r * row_bytes);
		__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
		__m256 am = _mm256_setzero_ps();
		for (int sb = 0; sb < nsb; sb++) {
			const struct cpu_block_q5_k *b = &blk[sb];
			uint32_t u[4];
			cpu_k4_scales(b->scales, u);
			__m128i sc8 = _mm_cvtsi64_si128((long long)((uint64_t)u[1] << 32 | u[0]));
			__m128i mn8 = _mm_cvtsi64_si128((long long)((uint64_t)u[3] << 32 | u[2]));
			__m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sc8));
			__m256 dx = _mm256_loadu_ps(xd + sb * 8);
			__m256 dd = _mm256_mul_ps(dx, _mm256_set1_ps(fp16_scalar(b->d)));
			const int8_t *x = xq + sb * CPU_QK_K;
			__m256i hb = _mm256_loadu_si256((const __m256i *)b->qh);
			for (int g = 0; g < 4; g++) {
				__m256i v = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * g));
				__m256i lo = _mm256_or_si256(_mm256_and_si256(v, m4),
					_mm256_slli_epi16(_mm256_and_si256(hb, one), 4));
				__m256i hi = _mm256_or_si256(
					_mm256_and_si256(_mm256_srli_epi16(v, 4), m4),
					_mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 1), one), 4));
				hb = _mm256_srli_epi16(hb, 2);
				__m256i p0 = _mm256_madd_epi16(
					_mm256_maddubs_epi16(lo, _mm256_loadu_si256(
						(const __m256i *)(x + 64 * g))),
					_mm256_shuffle_epi8(sc16, pick[2 * g]));
				__m256i p1 = _mm256_madd_epi16(
					_mm256_maddubs_epi16(hi, _mm256_loadu_si256(
						(const __m256i *)(x + 64 * g + 32))),
					_mm256_shuffle_epi8(sc16, pick[2 * g + 1]));
				a0 = _mm256_fmadd_ps(
					_mm256_permutevar8x32_ps(dd, _mm256_set1_epi32(2 * g)),
					_mm256_cvtepi32_ps(p0), a0);
				a1 = _mm256_fmadd_ps(
					_mm256_permutevar8x32_ps(dd, _mm256_set1_epi32(2 * g + 1)),
					_mm256_cvtepi32_ps(p1), a1);
			}
			__m256i s = _mm256_hadd_epi32(
				_mm256_loadu_si256((const __m256i *)(xs + 16 * sb)),
				_mm256_loadu_si256((const __m256i *)(xs + 16 * sb + 8)));
			s = _mm256_permute4x64_epi64(s, 0xd8);
			__m256i mq = _mm256_mullo_epi32(s, _mm256_cvtepu8_epi32(mn8));
			am = _mm256_fmadd_ps(
				_mm256_cvtepi32_ps(mq),
				_mm256_mul_ps(dx, _mm256_set1_ps(fp16_scalar(b->dmin))), am);
		}
		y[r] = hsum(_mm256_sub_ps(_mm256_add_ps(a0, a1), am));
	}
}

/* e^x, within 2 ulp (Cephes' expf: Cody-Waite reduction by ln 2, degree
 * 6 polynomial, exponent by integer add). Inputs below -87.3 give
 * ~1e-38 rather than smaller, above 88.3 ~2e38 rather than inf. */
AVX2 static inline __m256 exp256(__m256 x)
{
	x = _mm256_min_ps(x, _mm256_set1_ps(88.3762626647949f));
	x = _mm256_max_ps(x, _mm256_set1_ps(-87.3365447505531f));
	__m256 n = _mm256_round_ps(
		_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
		_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
	r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
	__m256 p = _mm256_set1_ps(1.9875691500e-4f);
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
	p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r),
			    _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
	__m256i e = _mm256_slli_epi32(
		_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)),
		23);
	return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

AVX2 static void f16(const uint16_t *h, float *out, int n)
{
	int i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(out + i,
				 _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
	for (; i < n; i++)
		out[i] = _cvtsh_ss(h[i]);
}

AVX2 static float exp_sum(float *x, int64_t n, float m)
{
	__m256 vm = _mm256_set1_ps(m), vs = _mm256_setzero_ps();
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
		_mm256_storeu_ps(x + i, e);
		vs = _mm256_add_ps(vs, e);
	}
	float sum = hsum(vs);
	for (; i < n; i++)
		sum += x[i] = expf(x[i] - m);
	return sum;
}

AVX2 static void silu_mul(const float *g, const float *u, float *out,
			  int64_t n)
{
	int64_t i = 0;
	const __m256 one = _mm256_set1_ps(1.0f);
	for (; i + 8 <= n; i += 8) {
		__m256 gv = _mm256_loadu_ps(g + i);
		__m256 e = exp256(_mm256_sub_ps(_mm256_setzero_ps(), gv));
		__m256 s = _mm256_div_ps(gv, _mm256_add_ps(one, e));
		_mm256_storeu_ps(out + i,
				 _mm256_mul_ps(s, _mm256_loadu_ps(u + i)));
	}
	for (; i < n; i++)
		out[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

/* Lane r of the result: the sum of the lanes of a[r]. */
AVX2 static inline __m256 hsum8x8(const __m256 *a)
{
	__m256 t0 = _mm256_hadd_ps(a[0], a[1]);
	__m256 t1 = _mm256_hadd_ps(a[2], a[3]);
	__m256 t2 = _mm256_hadd_ps(a[4], a[5]);
	__m256 t3 = _mm256_hadd_ps(a[6], a[7]);
	__m256 u0 = _mm256_hadd_ps(t0, t1);
	__m256 u1 = _mm256_hadd_ps(t2, t3);
	return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
			     _mm256_permute2f128_ps(u0, u1, 0x31));
}

AVX2 static float dot_tail(const float *a, const float *b, int n)
{
	__m256 acc = _mm256_setzero_ps();
	int j = 0;
	for (; j + 8 <= n; j += 8)
		acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + j),
				      _mm256_loadu_ps(b + j), acc);
	float s = hsum(acc);
	for (; j < n; j++)
		s += a[j] * b[j];
	return s;
}

AVX2 static float dot_tail_f16(const uint16_t *a, const float *b, int n)
{
	float s = 0.0f;
	for (int j = 0; j < n; j++)
		s += cpu_fp16(a[j]) * b[j];
	return s;
}

/* Scores 8 positions at a time (their 8 sums transposed into one vector),
 * softmax with a vector exp, then out accumulated in registers; one body
 * for caches of floats (attend) and of halves (attend_f16, converted 8 at
 * a time by F16C): T the element, LD8 eight of them as floats, AT one,
 * TAIL a row's dot with q past the multiple of 8. */
#define LD8_F32(p) _mm256_loadu_ps(p)
#define LD8_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define AT_F32(p) (*(p))
#define AT_F16(p) cpu_fp16(*(p))
#define ATTEND(NAME, T, LD8, AT, TAIL)                                                   \
	AVX2 static void NAME(const float *q, const T *kc, const T *vc, size_t stride,      \
			      int64_t n_kv, int head_dim, float scale, float *att, float *out, \
			      int64_t base, const uint32_t *tail)                                \
	{                                                                                  \
		int hd8 = head_dim & ~7;                                                   \
		const __m256 vscale = _mm256_set1_ps(scale);                               \
		int64_t t = 0;                                                             \
		for (; t + 8 <= n_kv; t += 8) {                                            \
			__m256 a[8];                                                       \
			const T *kr[8];                                                    \
			for (int r = 0; r < 8; r++) {                                      \
				a[r] = _mm256_setzero_ps();                                \
				kr[r] = kc + CPU_ATT_SLOT(t + r) * stride;                 \
			}                                                                  \
			/* rows are stride apart, beyond what the hardware prefetches */  \
			if (t + 16 <= n_kv)                                                \
				for (int r = 8; r < 16; r++)                               \
					for (int j = 0; j < head_dim; j += 16)             \
						_mm_prefetch((const char *)(kc + CPU_ATT_SLOT(t + r) * stride + j), \
							     _MM_HINT_T0);                  \
			for (int j = 0; j < hd8; j += 8) {                                 \
				__m256 qv = _mm256_loadu_ps(q + j);                        \
				for (int r = 0; r < 8; r++)                                \
					a[r] = _mm256_fmadd_ps(LD8(kr[r] + j), qv, a[r]);         \
			}                                                                  \
			__m256 s = hsum8x8(a);                                             \
			if (hd8 < head_dim) {                                              \
				float tail_[8];                                             \
				for (int r = 0; r < 8; r++)                                \
					tail_[r] = TAIL(kr[r] + hd8, q + hd8,                    \
						       head_dim - hd8);                    \
				s = _mm256_add_ps(s, _mm256_loadu_ps(tail_));               \
			}                                                                  \
			_mm256_storeu_ps(att + t, _mm256_mul_ps(s, vscale));               \
		}                                                                          \
		for (; t < n_kv; t++)                                                      \
			att[t] = scale * TAIL(kc + CPU_ATT_SLOT(t) * stride, q, head_dim);       \
                                                                                           \
		/* softmax */                                                              \
		float max = att[0];                                                        \
		for (t = 1; t < n_kv; t++)                                                 \
			max = att[t] > max ? att[t] : max;                                 \
		__m256 vmax = _mm256_set1_ps(max), vsum = _mm256_setzero_ps();             \
		for (t = 0; t + 8 <= n_kv; t += 8) {                                       \
			__m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(att + t), vmax));  \
			_mm256_storeu_ps(att + t, e);                                      \
			vsum = _mm256_add_ps(vsum, e);                                     \
		}                                                                          \
		float sum = hsum(vsum);                                                    \
		for (; t < n_kv; t++) {                                                    \
			att[t] = expf(att[t] - max);                                       \
			sum += att[t];                                                     \
		}                                                                          \
		__m256 vs = _mm256_set1_ps(sum);                                           \
		for (t = 0; t + 8 <= n_kv; t += 8)                                         \
			_mm256_storeu_ps(att + t, _mm256_div_ps(_mm256_loadu_ps(att + t), vs)); \
		for (; t < n_kv; t++)                                                      \
			att[t] /= sum;                                                     \
                                                                                           \
		/* out = sum_t att[t] v_t, 64 floats at a time in registers */             \
		for (int j0 = 0; j0 < hd8; j0 += 64) {                                     \
			int nv = (hd8 - j0) / 8 < 8 ? (hd8 - j0) / 8 : 8;                  \
			__m256 o[8];                                                       \
			for (int i = 0; i < 8; i++)                                        \
				o[i] = _mm256_setzero_ps();                                \
			for (t = 0; t < n_kv; t++) {                                       \
				const T *v = vc + CPU_ATT_SLOT(t) * stride + j0;           \
				if (t + 4 < n_kv)                                          \
					for (int i = 0; i < nv; i += 2)                    \
						_mm_prefetch((const char *)(vc + CPU_ATT_SLOT(t + 4) * stride + j0 + 8 * i), \
							     _MM_HINT_T0);                  \
				__m256 a = _mm256_broadcast_ss(att + t);                   \
				for (int i = 0; i < nv; i++)                               \
					o[i] = _mm256_fmadd_ps(a, LD8(v + 8 * i), o[i]);   \
			}                                                                  \
			for (int i = 0; i < nv; i++)                                       \
				_mm256_storeu_ps(out + j0 + 8 * i, o[i]);                  \
		}                                                                          \
		for (int j = hd8; j < head_dim; j++) {                                     \
			float o = 0.0f;                                                    \
			for (t = 0; t < n_kv; t++)                                         \
				o += att[t] * AT(vc + CPU_ATT_SLOT(t) * stride + j);             \
			out[j] = o;                                                        \
		}                                                                          \
	}
ATTEND(attend, float, LD8_F32, AT_F32, dot_tail)
ATTEND(attend_f16, uint16_t, LD8_F16, AT_F16, dot_tail_f16)

AVX2 static int64_t argmax(const float *x, int64_t n)
{
	int64_t i = 0;
	float m = x[0];
	if (n >= 32) {
		__m256 m0 = _mm256_loadu_ps(x), m1 = m0, m2 = m0, m3 = m0;
		for (; i + 32 <= n; i += 32) {
			m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
			m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + i + 8));
			m2 = _mm256_max_ps(m2, _mm256_loadu_ps(x + i + 16));
			m3 = _mm256_max_ps(m3, _mm256_loadu_ps(x + i + 24));
		}
		__m256 v = _mm256_max_ps(_mm256_max_ps(m0, m1),
					 _mm256_max_ps(m2, m3));
		__m128 s = _mm_max_ps(_mm256_castps256_ps128(v),
				      _mm256_extractf128_ps(v, 1));
		s = _mm_max_ps(s, _mm_movehl_ps(s, s));
		s = _mm_max_ss(s, _mm_movehdup_ps(s));
		m = _mm_cvtss_f32(s);
	}
	for (; i < n; i++)
		if (x[i] > m)
			m = x[i];
	/* first index holding the maximum */
	__m256 vm = _mm256_set1_ps(m);
	for (i = 0; i + 8 <= n; i += 8) {
		int mask = _mm256_movemask_ps(
			_mm256_cmp_ps(_mm256_loadu_ps(x + i), vm, _CMP_EQ_OQ));
		if (mask)
			return i + __builtin_ctz((unsigned)mask);
	}
	for (; i < n; i++)
		if (x[i] == m)
			return i;
	/* NaNs: fall back to the plain scan */
	int64_t best = 0;
	for (i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}

/* A block of the batched product (cpu_gemm_fn): 16 weight rows in two
 * vectors against NT token rows, one broadcast x value per token and
 * column: 2 NT accumulators, no horizontal sums. */
#define GEMM_BLOCK(NT)                                                         \
	AVX2 static void gemm_##NT(const float *wt, int kc, const float *x,    \
				   size_t xs, float *y, size_t ys, bool add)   \
	{                                                                      \
		__m256 a0[NT], a1[NT];                                         \
		_Pragma("GCC unroll 8")                                        \
		for (int t = 0; t < NT; t++)                                   \
			a0[t] = a1[t] = _mm256_setzero_ps();                   \
		for (int j = 0; j < kc; j++) {                                 \
			__m256 w0 = _mm256_loadu_ps(wt + (size_t)j * 16);      \
			__m256 w1 = _mm256_loadu_ps(wt + (size_t)j * 16 + 8);  \
			_Pragma("GCC unroll 8")                                \
			for (int t = 0; t < NT; t++) {                         \
				__m256 b = _mm256_broadcast_ss(x + t * xs + j); \
				a0[t] = _mm256_fmadd_ps(w0, b, a0[t]);         \
				a1[t] = _mm256_fmadd_ps(w1, b, a1[t]);         \
			}                                                      \
		}                                                              \
		_Pragma("GCC unroll 8")                                        \
		for (int t = 0; t < NT; t++) {                                 \
			float *yt = y + t * ys;                                \
			if (add) {                                             \
				a0[t] = _mm256_add_ps(a0[t], _mm256_loadu_ps(yt)); \
				a1[t] = _mm256_add_ps(a1[t],                   \
						      _mm256_loadu_ps(yt + 8)); \
			}                                                      \
			_mm256_storeu_ps(yt, a0[t]);                           \
			_mm256_storeu_ps(yt + 8, a1[t]);                       \
		}                                                              \
	}
GEMM_BLOCK(1)
GEMM_BLOCK(2)
GEMM_BLOCK(3)
GEMM_BLOCK(4)
GEMM_BLOCK(5)
GEMM_BLOCK(6)

AVX2 static void gemm_block(const float *wt, int kc, const float *x, size_t xs, int n_t,
			    float *y, size_t ys, bool add)
{
	switch (n_t) {
	case 6: gemm_6(wt, kc, x, xs, y, ys, add); break;
	case 5: gemm_5(wt, kc, x, xs, y, ys, add); break;
	case 4: gemm_4(wt, kc, x, xs, y, ys, add); break;
	case 3: gemm_3(wt, kc, x, xs, y, ys, add); break;
	case 2: gemm_2(wt, kc, x, xs, y, ys, add); break;
	case 1: gemm_1(wt, kc, x, xs, y, ys, add); break;
	default: break;
	}
}

static const struct cpu_isa isa_avx2 = {
	.name = "avx2",
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
	.argmax = argmax,
	.attend = attend,
	.attend_f16 = attend_f16,
	.silu_mul = silu_mul,
	.gemm = gemm_block,
	.exp_sum = exp_sum,
	.f16 = f16,
};

const struct cpu_isa *const cpu_isa_avx2 = &isa_avx2;

#else

const struct cpu_isa *const cpu_isa_avx2 = NULL;

#endif
