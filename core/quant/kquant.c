/* The K-quants (256-value super-blocks): Q2_K, Q3_K, Q4_K, Q5_K and Q6_K
 * as ggml's quantize_row_*_ref writes them. Each fits a scale (and min)
 * per 16- or 32-value group (fit.c), quantizes those to 4, 6 or 8 bits
 * against one fp16 super-block scale, then re-quantizes the values with
 * the scales as stored. */
#include <math.h>

#include "quant/quant_priv.h"

/* Q2_K and Q3_K: four 2-bit levels per byte, 32 bytes per 128 values. */
static void pack_2bit(const uint8_t *L, uint8_t *qs)
{
	for (int j = 0; j < QK_K; j += 128)
		for (int l = 0; l < 32; l++)
			qs[j / 4 + l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 2) |
						  (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

/* {scales[16], qs[64], d, dmin}: 4-bit scale and min per 16 values. */
static void q2_k_block(const float *x, uint8_t *y)
{
	uint8_t L[QK_K], *sc = y, *qs = y + 16;
	float scales[16], mins[16], w[16], max_scale = 0.0f, max_min = 0.0f;
	for (int j = 0; j < 16; j++) {
		for (int l = 0; l < 16; l++)
			w[l] = fabsf(x[16 * j + l]);
		scales[j] = quant_fit_affine(16, 3, x + 16 * j, w, L + 16 * j, &mins[j], -0.5f, 0.1f,
					     15, 1);
		if (scales[j] > max_scale)
			max_scale = scales[j];
		if (mins[j] > max_min)
			max_min = mins[j];
	}
	memset(sc, 0, 16);
	float d = 0.0f, dmin = 0.0f;
	if (max_scale > 0.0f) {
		float iscale = 15.f / max_scale;
		for (int j = 0; j < 16; j++)
			sc[j] = (uint8_t)quant_nearest(iscale * scales[j]);
		d = max_scale / 15.f;
	}
	if (max_min > 0.0f) {
		float iscale = 15.f / max_min;
		for (int j = 0; j < 16; j++)
			sc[j] |= (uint8_t)(quant_nearest(iscale * mins[j]) << 4);
		dmin = max_min / 15.f;
	}
	d = quant_half(y + 80, d);
	dmin = quant_half(y + 82, dmin);
	for (int j = 0; j < 16; j++) {
		float dl = d * (float)(sc[j] & 15);
		if (dl == 0.0f)
			continue;
		float ml = dmin * (float)(sc[j] >> 4);
		for (int i = 0; i < 16; i++)
			L[16 * j + i] = (uint8_t)quant_clamp(quant_nearest((x[16 * j + i] + ml) / dl), 0, 3);
	}
	pack_2bit(L, qs);
}

/* Q3_K's 6-bit scale i from its 12 bytes (low nibbles, then bit pairs). */
static int q3_scale(const uint8_t *s, int i)
{
	int lo = i < 8 ? s[i] & 15 : s[i - 8] >> 4;
	return lo | (((s[8 + i % 4] >> (2 * (i / 4))) & 3) << 4);
}

/* {hmask[32], qs[64], scales[12], d}: signed 6-bit scale per 16 values,
 * levels -4..3 as 2 low bits and a high bit in hmask. */
static void q3_k_block(const float *x, uint8_t *y)
{
	int8_t L[QK_K];
	uint8_t *hmask = y, *qs = y + 32, *sc = y + 96;
	float scales[16], amax = 0.0f, max_scale = 0.0f;
	for (int j = 0; j < 16; j++) {
		scales[j] = quant_fit_q3(16, 4, x + 16 * j, L + 16 * j);
		if (fabsf(scales[j]) > amax) {
			amax = fabsf(scales[j]);
			max_scale = scales[j];
		}
	}
	memset(sc, 0, 12);
	float d = 0.0f;
	if (max_scale != 0.0f) {
		float iscale = -32.f / max_scale;
		for (int j = 0; j < 16; j++) {
			int l = quant_clamp((int8_t)quant_nearest(iscale * scales[j]), -32, 31) + 32;
			if (j < 8)
				sc[j] = (uint8_t)(l & 15);
			else
				sc[j - 8] |= (uint8_t)((l & 15) << 4);
			sc[j % 4 + 8] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
		}
		d = 1 / iscale;
	}
	d = quant_half(y + 108, d);
	for (int j = 0; j < 16; j++) {
		float dl = d * (float)(q3_scale(sc, j) - 32);
		if (dl == 0.0f)
			continue;
		for (int i = 0; i < 16; i++)
			L[16 * j + i] = (int8_t)(quant_clamp(quant_nearest(x[16 * j + i] / dl), -4, 3) + 4);
	}
	/* bit g of hmask[m] is the high bit of value 32 g + m */
	memset(hmask, 0, 32);
	uint8_t low[QK_K];
	for (int j = 0; j < QK_K; j++) {
		if (L[j] > 3)
			hmask[j % 32] |= (uint8_t)(1 << (j / 32));
		low[j] = (uint8_t)(L[j] > 3 ? L[j] - 4 : L[j]);
	}
	pack_2bit(low, qs);
}

/* Q4_K and Q5_K: 8 groups of 32, each a 6-bit scale and min against d and
 * dmin, packed in 12 bytes as ggml's get_scale_min_k4 reads them. */
static void scale_min_fit(const float *x, uint8_t *y, int nmax, float rmin, int nstep,
			  uint8_t *L)
{
	float scales[8], mins[8], w[32], max_scale = 0.0f, max_min = 0.0f;
	for (int j = 0; j < 8; j++) {
		const float *g = x + 32 * j;
		float sum_x2 = 0.0f;
		for (int l = 0; l < 32; l++)
			sum_x2 += g[l] * g[l];
		float av_x = sqrtf(sum_x2 / 32);
		for (int l = 0; l < 32; l++)
			w[l] = av_x + fabsf(g[l]);
		scales[j] = quant_fit_affine(32, nmax, g, w, L + 32 * j, &mins[j], rmin, 0.1f, nstep, 0);
		if (scales[j] > max_scale)
			max_scale = scales[j];
		if (mins[j] > max_min)
			max_min = mins[j];
	}
	float inv_scale = max_scale > 0.0f ? 63.f / max_scale : 0.0f;
	float inv_min = max_min > 0.0f ? 63.f / max_min : 0.0f;
	uint8_t *sc = y + 4;
	for (int j = 0; j < 8; j++) {
		uint8_t ls = (uint8_t)quant_nearest(inv_scale * scales[j]);
		uint8_t lm = (uint8_t)quant_nearest(inv_min * mins[j]);
		ls = ls < 63 ? ls : 63;
		lm = lm < 63 ? lm : 63;
		if (j < 4) {
			sc[j] = ls;
			sc[j + 4] = lm;
		} else {
			sc[j + 4] = (uint8_t)((ls & 15) | ((lm & 15) << 4));
			sc[j - 4] |= (uint8_t)((ls >> 4) << 6);
			sc[j] |= (uint8_t)((lm >> 4) << 6);
		}
	}
	float d = quant_half(y, max_scale / 63.f);
	float dmin = quant_half(y + 2, max_min / 63.f);
	for (int j = 0; j < 8; j++) {
		int s, m;
		if (j < 4) {
			s = sc[j] & 63;
			m = sc[j + 4] & 63;
		} else {
			s = (sc[j + 4] & 15) | ((sc[j - 4] >> 6) << 4);
			m = (sc[j + 4] >> 4) | ((sc[j] >> 6) << 4);
		}
		float dl = d * (float)s;
		if (dl == 0.0f)
			continue;
		float ml = dmin * (float)m;
		for (int i = 0; i < 32; i++)
			L[32 * j + i] = (uint8_t)quant_clamp(quant_nearest((x[32 * j + i] + ml) / dl), 0, nmax);
	}
}

/* {d, dmin, scales[12], qs[128]}: values j and j + 32 of each 64 share a byte. */
static void q4_k_block(const float *x, uint8_t *y)
{
	uint8_t L[QK_K], *q = y + 16;
	scale_min_fit(x, y, 15, -1.f, 20, L);
	for (int j = 0; j < QK_K; j += 64, q += 32)
		for (int l = 0; l < 32; l++)
			q[l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 4));
}

/* {d, dmin, scales[12], qh[32], qs[128]}: Q4_K's nibbles and a fifth bit,
 * bit 2 g (first 32 of group pair g) or 2 g + 1 of qh[l]. */
static void q5_k_block(const float *x, uint8_t *y)
{
	uint8_t L[QK_K], *qh = y + 16, *q = y + 48;
	scale_min_fit(x, y, 31, -0.5f, 15, L);
	memset(qh, 0, 32);
	for (int g = 0; g < 4; g++, q += 32)
		for (int l = 0; l < 32; l++) {
			int l1 = L[64 * g + l], l2 = L[64 * g + l + 32];
			qh[l] |= (uint8_t)(((l1 >> 4) << (2 * g)) | ((l2 >> 4) << (2 * g + 1)));
			q[l] = (uint8_t)((l1 & 15) | ((l2 & 15) << 4));
		}
}

/* {ql[128], qh[64], scales[16] (int8), d}: 6-bit levels, 8-bit scale per 16. */
static void q6_k_block(const float *x, uint8_t *y)
{
	int8_t L[QK_K];
	float scales[16], max_abs = 0.0f, max_scale = 0.0f;
	for (int j = 0; j < 16; j++) {
		scales[j] = quant_fit_sym(16, 32, x + 16 * j, L + 16 * j);
		if (fabsf(scales[j]) > max_abs) {
			max_abs = fabsf(scales[j]);
			max_scale = scales[j];
		}
	}
	memset(y, 0, 210);
	if (max_abs < QUANT_EPS)
		return; /* d = +0 */
	float iscale = -128.f / max_scale;
	float d = quant_half(y + 208, 1 / iscale);
	int8_t *sc = (int8_t *)(y + 192);
	for (int j = 0; j < 16; j++) {
		int s = quant_nearest(iscale * scales[j]);
		sc[j] = (int8_t)(s < 127 ? s : 127);
	}
	for (int j = 0; j < 16; j++) {
		float dl = d * (float)sc[j];
		if (dl == 0.0f)
			continue;
		for (int i = 0; i < 16; i++)
			L[16 * j + i] = (int8_t)(quant_clamp(quant_nearest(x[16 * j + i] / dl), -32, 31) + 32);
	}
	uint8_t *ql = y, *qh = y + 128;
	for (int j = 0; j < QK_K; j += 128, ql += 64, qh += 32)
		for (int l = 0; l < 32; l++) {
			const int8_t *v = L + j + l;
			ql[l] = (uint8_t)((v[0] & 15) | ((v[64] & 15) << 4));
			ql[l + 32] = (uint8_t)((v[32] & 15) | ((v[96] & 15) << 4));
			qh[l] = (uint8_t)((v[0] >> 4) | ((v[32] >> 4) << 2) | ((v[64] >> 4) << 4) |
					  ((v[96] >> 4) << 6));
		}
}

#define ROWS(fn, block, bytes)                                                   \
	void fn(const float *x, uint8_t *y, int64_t n)                           \
	{                                                                        \
		for (int64_t i = 0; i < n / QK_K; i++, x += QK_K, y += (bytes))  \
			block(x, y);                                             \
	}
ROWS(quant_q2_k, q2_k_block, 84)
ROWS(quant_q3_k, q3_k_block, 110)
ROWS(quant_q4_k, q4_k_block, 144)
ROWS(quant_q5_k, q5_k_block, 176)
ROWS(quant_q6_k, q6_k_block, 210)
