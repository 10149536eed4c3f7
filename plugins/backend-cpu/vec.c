/* Portable vector routines: the reference path, written so that GCC
 * vectorizes the inner loops (independent lanes of partial sums). Quantized
 * rows are dequantized to float and multiplied with float x. */
#include <math.h>
#include <string.h>

#include "belt/types.h"
#include "cpu.h"

#define LANES 16

static float sum_lanes(const float *acc)
{
	/* pairwise, so that no lane dominates the rounding */
	float s8[8];
	for (int l = 0; l < 8; l++)
		s8[l] = acc[l] + acc[l + 8];
	float s4[4];
	for (int l = 0; l < 4; l++)
		s4[l] = s8[l] + s8[l + 4];
	return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

static float dot_f32(const float *w, const float *x, int k)
{
	float acc[LANES] = {0};
	int j = 0;
	for (; j + LANES <= k; j += LANES)
		for (int l = 0; l < LANES; l++)
			acc[l] += w[j + l] * x[j + l];
	for (int l = 0; j < k; j++, l++)
		acc[l] += w[j] * x[j];
	return sum_lanes(acc);
}

static float dot_f16(const uint16_t *w, const float *x, int k)
{
	float acc[LANES] = {0};
	int j = 0;
	for (; j + LANES <= k; j += LANES)
		for (int l = 0; l < LANES; l++)
			acc[l] += cpu_fp16(w[j + l]) * x[j + l];
	for (int l = 0; j < k; j++, l++)
		acc[l] += cpu_fp16(w[j]) * x[j];
	return sum_lanes(acc);
}

static float dot_bf16(const uint16_t *w, const float *x, int k)
{
	float acc[LANES] = {0};
	int j = 0;
	for (; j + LANES <= k; j += LANES)
		for (int l = 0; l < LANES; l++)
			acc[l] += cpu_bf16(w[j + l]) * x[j + l];
	for (int l = 0; j < k; j++, l++)
		acc[l] += cpu_bf16(w[j]) * x[j];
	return sum_lanes(acc);
}

static float dot_q8_0(const struct belt_block_q8_0 *w, const float *x, int k)
{
	float acc[LANES] = {0};
	for (int b = 0; b < k / CPU_QK; b++, x += CPU_QK) {
		float d = cpu_fp16(w[b].d);
		float t[LANES] = {0};
		for (int j = 0; j < CPU_QK; j += LANES)
			for (int l = 0; l < LANES; l++)
				t[l] += (float)w[b].qs[j + l] * x[j + l];
		for (int l = 0; l < LANES; l++)
			acc[l] += d * t[l];
	}
	return sum_lanes(acc);
}

static float dot_q4_0(const struct belt_block_q4_0 *w, const float *x, int k)
{
	float acc[LANES] = {0};
	for (int b = 0; b < k / CPU_QK; b++, x += CPU_QK) {
		float d = cpu_fp16(w[b].d);
		float t[LANES] = {0};
		for (int l = 0; l < LANES; l++)
			t[l] = (float)((w[b].qs[l] & 15) - 8) * x[l] +
			       (float)((w[b].qs[l] >> 4) - 8) * x[l + 16];
		for (int l = 0; l < LANES; l++)
			acc[l] += d * t[l];
	}
	return sum_lanes(acc);
}

/* The 6-bit scale and min of Q4_K sub-block j. */
static void scale_min_k4(int j, const uint8_t *q, uint8_t *sc, uint8_t *m)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4);
		*m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
	}
}

void cpu_dequant_q4_k(const struct cpu_block_q4_k *b, float *out)
{
	float d = cpu_fp16(b->d), dmin = cpu_fp16(b->dmin);
	const uint8_t *q = b->qs;
	for (int j = 0; j < 8; j += 2, q += 32) {
		uint8_t sc, m;
		scale_min_k4(j, b->scales, &sc, &m);
		float d1 = d * sc, m1 = dmin * m;
		scale_min_k4(j + 1, b->scales, &sc, &m);
		float d2 = d * sc, m2 = dmin * m;
		for (int l = 0; l < 32; l++)
			*out++ = d1 * (float)(q[l] & 15) - m1;
		for (int l = 0; l < 32; l++)
			*out++ = d2 * (float)(q[l] >> 4) - m2;
	}
}

void cpu_dequant_q6_k(const struct cpu_block_q6_k *b, float *out)
{
	float d = cpu_fp16(b->d);
	const uint8_t *ql = b->ql, *qh = b->qh;
	const int8_t *sc = b->scales;
	for (int n = 0; n < CPU_QK_K; n += 128) {
		for (int l = 0; l < 32; l++) {
			int is = l / 16;
			int q1 = ((ql[l] & 15) | ((qh[l] & 3) << 4)) - 32;
			int q2 = ((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32;
			int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
			int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
			out[l] = d * sc[is] * q1;
			out[l + 32] = d * sc[is + 2] * q2;
			out[l + 64] = d * sc[is + 4] * q3;
			out[l + 96] = d * sc[is + 6] * q4;
		}
		out += 128;
		ql += 64;
		qh += 32;
		sc += 8;
	}
}

const int8_t cpu_iq4_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
				   1,    13,   25,  38,  53,  69,  89,  113};

/* The blocks of 32: ggml's order is (q * d) + m, and d * kvalues[q]. */
void cpu_dequant_q4_1(const struct cpu_block_q4_1 *b, float *out)
{
	float d = cpu_fp16(b->d), m = cpu_fp16(b->m);
	for (int j = 0; j < CPU_QK / 2; j++) {
		out[j] = (float)(b->qs[j] & 15) * d + m;
		out[j + 16] = (float)(b->qs[j] >> 4) * d + m;
	}
}

static uint32_t load_u32(const uint8_t *p)
{
	uint32_t u;
	memcpy(&u, p, 4);
	return u;
}

void cpu_dequant_q5_0(const struct cpu_block_q5_0 *b, float *out)
{
	float d = cpu_fp16(b->d);
	uint32_t qh = load_u32(b->qh);
	for (int j = 0; j < CPU_QK / 2; j++) {
		int q0 = (b->qs[j] & 15) | (int)(((qh >> j) & 1) << 4);
		int q1 = (b->qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4);
		out[j] = (float)(q0 - 16) * d;
		out[j + 16] = (float)(q1 - 16) * d;
	}
}

void cpu_dequant_q5_1(const struct cpu_block_q5_1 *b, float *out)
{
	float d = cpu_fp16(b->d), m = cpu_fp16(b->m);
	uint32_t qh = load_u32(b->qh);
	for (int j = 0; j < CPU_QK / 2; j++) {
		int q0 = (b->qs[j] & 15) | (int)(((qh >> j) & 1) << 4);
		int q1 = (b->qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4);
		out[j] = (float)q0 * d + m;
		out[j + 16] = (float)q1 * d + m;
	}
}

void cpu_dequant_iq4_nl(const struct cpu_block_iq4_nl *b, float *out)
{
	float d = cpu_fp16(b->d);
	for (int j = 0; j < CPU_QK / 2; j++) {
		out[j] = d * (float)cpu_iq4_values[b->qs[j] & 15];
		out[j + 16] = d * (float)cpu_iq4_values[b->qs[j] >> 4];
	}
}

/* Super-blocks: each group's float scale first (d * sc, dmin * m), then
 * scale * q - min, as ggml. */
void cpu_dequant_q2_k(const struct cpu_block_q2_k *b, float *out)
{
	float d = cpu_fp16(b->d), dmin = cpu_fp16(b->dmin);
	const uint8_t *q = b->qs, *sc = b->scales;
	for (int n = 0; n < 2; n++, q += 32)
		for (int shift = 0; shift < 8; shift += 2)
			for (int h = 0; h < 2; h++, sc++) {
				float dl = d * (float)(*sc & 15), ml = dmin * (float)(*sc >> 4);
				for (int l = 0; l < 16; l++)
					*out++ = dl * (float)((q[16 * h + l] >> shift) & 3) - ml;
			}
}

void cpu_dequant_q3_k(const struct cpu_block_q3_k *b, float *out)
{
	float d = cpu_fp16(b->d);
	int8_t sc[16];
	cpu_q3_k_scales(b->scales, sc);
	const uint8_t *q = b->qs;
	int is = 0, bit = 0;
	for (int n = 0; n < 2; n++, q += 32)
		for (int shift = 0; shift < 8; shift += 2, bit++)
			for (int h = 0; h < 2; h++, is++) {
				float dl = d * (float)sc[is];
				for (int l = 0; l < 16; l++) {
					int i = 16 * h + l;
					int v = ((q[i] >> shift) & 3) - ((b->hmask[i] >> bit) & 1 ? 0 : 4);
					*out++ = dl * (float)v;
				}
			}
}

void cpu_dequant_q5_k(const struct cpu_block_q5_k *b, float *out)
{
	float d = cpu_fp16(b->d), dmin = cpu_fp16(b->dmin);
	const uint8_t *q = b->qs;
	for (int j = 0; j < 8; j += 2, q += 32) {
		uint8_t sc, m;
		scale_min_k4(j, b->scales, &sc, &m);
		float d1 = d * sc, m1 = dmin * m;
		scale_min_k4(j + 1, b->scales, &sc, &m);
		float d2 = d * sc, m2 = dmin * m;
		for (int l = 0; l < 32; l++)
			*out++ = d1 * (float)((q[l] & 15) | ((b->qh[l] >> j) & 1) << 4) - m1;
		for (int l = 0; l < 32; l++)
			*out++ = d2 * (float)((q[l] >> 4) | ((b->qh[l] >> (j + 1)) & 1) << 4) - m2;
	}
}

void cpu_dequant_iq4_xs(const struct cpu_block_iq4_xs *b, float *out)
{
	float d = cpu_fp16(b->d);
	const uint8_t *q = b->qs;
	for (int ib = 0; ib < 8; ib++, q += 16, out += 32) {
		int ls = ((b->scales_l[ib / 2] >> (4 * (ib % 2))) & 15) |
			 (((b->scales_h >> (2 * ib)) & 3) << 4);
		float dl = d * (float)(ls - 32);
		for (int j = 0; j < 16; j++) {
			out[j] = dl * (float)cpu_iq4_values[q[j] & 15];
			out[j + 16] = dl * (float)cpu_iq4_values[q[j] >> 4];
		}
	}
}

/* Dequantize a block, then a float dot product. */
#define DOT_DEQ(name, type, dequant, qk)                                    \
	static float name(const type *w, const float *x, int k)             \
	{                                                                   \
		float acc[LANES] = {0};                                     \
		float tmp[qk];                                              \
		for (int b = 0; b < k / (qk); b++, x += (qk)) {             \
			dequant(&w[b], tmp);                                \
			for (int j = 0; j < (qk); j += LANES)               \
				for (int l = 0; l < LANES; l++)             \
					acc[l] += tmp[j + l] * x[j + l];    \
		}                                                           \
		return sum_lanes(acc);                                      \
	}

DOT_DEQ(dot_q4_1, struct cpu_block_q4_1, cpu_dequant_q4_1, CPU_QK)
DOT_DEQ(dot_q5_0, struct cpu_block_q5_0, cpu_dequant_q5_0, CPU_QK)
DOT_DEQ(dot_q5_1, struct cpu_block_q5_1, cpu_dequant_q5_1, CPU_QK)
DOT_DEQ(dot_iq4_nl, struct cpu_block_iq4_nl, cpu_dequant_iq4_nl, CPU_QK)
DOT_DEQ(dot_q2_k, struct cpu_block_q2_k, cpu_dequant_q2_k, CPU_QK_K)
DOT_DEQ(dot_q3_k, struct cpu_block_q3_k, cpu_dequant_q3_k, CPU_QK_K)
DOT_DEQ(dot_q5_k, struct cpu_block_q5_k, cpu_dequant_q5_k, CPU_QK_K)
DOT_DEQ(dot_iq4_xs, struct cpu_block_iq4_xs, cpu_dequant_iq4_xs, CPU_QK_K)

/* K-quants: dequantize a super-block, then a float dot product. */
#define DOT_K(name, type, dequant)                                          \
	static float name(const type *w, const float *x, int k)             \
	{                                                                   \
		float acc[LANES] = {0};                                     \
		float tmp[CPU_QK_K];                                        \
		for (int b = 0; b < k / CPU_QK_K; b++, x += CPU_QK_K) {     \
			dequant(&w[b], tmp);                                \
			for (int j = 0; j < CPU_QK_K; j += LANES)           \
				for (int l = 0; l < LANES; l++)             \
					acc[l] += tmp[j + l] * x[j + l];    \
		}                                                           \
		return sum_lanes(acc);                                      \
	}

DOT_K(dot_q4_k, struct cpu_block_q4_k, cpu_dequant_q4_k)
DOT_K(dot_q6_k, struct cpu_block_q6_k, cpu_dequant_q6_k)

#define ROWS_FN(name, type, dot)                                            \
	static void name(const void *w, size_t row_bytes, const void *x,    \
			 float *y, int64_t r0, int64_t r1, int k)           \
	{                                                                   \
		const char *base = w;                                       \
		for (int64_t r = r0; r < r1; r++)                           \
			y[r] = dot((const type *)(base + r * row_bytes), x, \
				   k);                                      \
	}

ROWS_FN(rows_f32, float, dot_f32)
ROWS_FN(rows_f16, uint16_t, dot_f16)
ROWS_FN(rows_bf16, uint16_t, dot_bf16)
ROWS_FN(rows_q8_0, struct belt_block_q8_0, dot_q8_0)
ROWS_FN(rows_q4_0, struct belt_block_q4_0, dot_q4_0)
ROWS_FN(rows_q4_k, struct cpu_block_q4_k, dot_q4_k)
ROWS_FN(rows_q6_k, struct cpu_block_q6_k, dot_q6_k)
ROWS_FN(rows_q4_1, struct cpu_block_q4_1, dot_q4_1)
ROWS_FN(rows_q5_0, struct cpu_block_q5_0, dot_q5_0)
ROWS_FN(rows_q5_1, struct cpu_block_q5_1, dot_q5_1)
ROWS_FN(rows_iq4_nl, struct cpu_block_iq4_nl, dot_iq4_nl)
ROWS_FN(rows_q2_k, struct cpu_block_q2_k, dot_q2_k)
ROWS_FN(rows_q3_k, struct cpu_block_q3_k, dot_q3_k)
ROWS_FN(rows_q5_k, struct cpu_block_q5_k, dot_q5_k)
ROWS_FN(rows_iq4_xs, struct cpu_block_iq4_xs, dot_iq4_xs)

/* As llama2.c's run.c: scores, softmax with the max subtracted, then the
 * weighted sum of values; one body for caches of floats (attend_generic)
 * and of halves (attend_f16_generic): T the element, DOT a row's dot with
 * q (the weights' dot_f32 and dot_f16), AT one element as a float. */
#define AT_F32(p) (*(p))
#define AT_F16(p) cpu_fp16(*(p))
#define ATTEND_GENERIC(NAME, T, DOT, AT)                                                   \
	static void NAME(const float *q, const T *kc, const T *vc, size_t stride, int64_t n_kv, \
			 int head_dim, float scale, float *att, float *out, int64_t base,      \
			 const uint32_t *tail)                                                 \
	{                                                                                    \
		float max = -INFINITY;                                                       \
		for (int64_t t = 0; t < n_kv; t++) {                                         \
			att[t] = scale * DOT(kc + CPU_ATT_SLOT(t) * stride, q, head_dim);          \
			if (att[t] > max)                                                    \
				max = att[t];                                                \
		}                                                                            \
		float sum = 0.0f;                                                            \
		for (int64_t t = 0; t < n_kv; t++) {                                         \
			att[t] = expf(att[t] - max);                                         \
			sum += att[t];                                                       \
		}                                                                            \
		for (int64_t t = 0; t < n_kv; t++)                                           \
			att[t] /= sum;                                                       \
		memset(out, 0, (size_t)head_dim * sizeof(float));                            \
		for (int64_t t = 0; t < n_kv; t++) {                                         \
			const T *v = vc + CPU_ATT_SLOT(t) * stride;                                \
			float a = att[t];                                                    \
			for (int i = 0; i < head_dim; i++)                                   \
				out[i] += a * AT(v + i);                                     \
		}                                                                            \
	}
ATTEND_GENERIC(attend_generic, float, dot_f32, AT_F32)
ATTEND_GENERIC(attend_f16_generic, uint16_t, dot_f16, AT_F16)

static void f16_generic(const uint16_t *h, float *out, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = cpu_fp16(h[i]);
}

static float exp_sum_generic(float *x, int64_t n, float m)
{
	float sum = 0.0f;
	for (int64_t i = 0; i < n; i++)
		sum += x[i] = expf(x[i] - m);
	return sum;
}

static void silu_mul_generic(const float *g, const float *u, float *out,
			     int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		out[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

static int64_t argmax_generic(const float *x, int64_t n)
{
	int64_t best = 0;
	for (int64_t i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}

const struct cpu_isa cpu_isa_generic = {
	.name = "generic",
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
	.quantize_x = NULL,
	.argmax = argmax_generic,
	.attend = attend_generic,
	.attend_f16 = attend_f16_generic,
	.silu_mul = silu_mul_generic,
	.gemm = cpu_gemm_block_generic,
	.exp_sum = exp_sum_generic,
	.f16 = f16_generic,
};
