/* IQ4_NL (32 values, one fp16 scale) and IQ4_XS (256 values, 6-bit scale
 * per 32 against one fp16 scale): 4-bit indexes into a fixed non-linear
 * codebook, as ggml's quantize_iq4_nl / quantize_iq4_xs write them with no
 * importance matrix (weights x^2, 7 scale tries each side). */
#include <math.h>

#include "quant/quant_priv.h"

static const int8_t codebook[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
				    1,    13,   25,  38,  53,  69,  89,  113};
#define IQ4_TRIES 7

/* The codebook entry nearest x (the upper one at a tie), by bisection. */
static int nearest_code(float x)
{
	if (x <= codebook[0])
		return 0;
	if (x >= codebook[15])
		return 15;
	int lo = 0, hi = 15;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (x < codebook[mid])
			hi = mid;
		else
			lo = mid;
	}
	return x - codebook[hi - 1] < codebook[hi] - x ? hi - 1 : hi;
}

/* sum w q x and sum w q^2 of the codes nearest id * x. */
static void code_sums(const float *x, const float *w, float id, float *sumqx, float *sumq2)
{
	*sumqx = *sumq2 = 0.0f;
	for (int j = 0; j < 32; j++) {
		float q = codebook[nearest_code(id * x[j])];
		*sumqx += w[j] * q * x[j];
		*sumq2 += w[j] * q * q;
	}
}

/* The least-squares scale of one group of 32 over 2 * IQ4_TRIES + 2
 * starting scales. */
static float group_scale(const float *x)
{
	float w[32], amax = 0.0f, max = 0.0f;
	for (int j = 0; j < 32; j++) {
		w[j] = x[j] * x[j];
		if (fabsf(x[j]) > amax) {
			amax = fabsf(x[j]);
			max = x[j];
		}
	}
	if (amax < QUANT_EPS)
		return 0.0f;
	float sumqx, sumq2;
	code_sums(x, w, 1 / (-max / codebook[0]), &sumqx, &sumq2);
	float d = sumqx / sumq2, best = d * sumqx;
	for (int itry = -IQ4_TRIES; itry <= IQ4_TRIES; itry++) {
		code_sums(x, w, (float)(itry + codebook[0]) / max, &sumqx, &sumq2);
		if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
			d = sumqx / sumq2;
			best = d * sumqx;
		}
	}
	return d;
}

/* Codes of n values at scale d (all the zero-nearest code if d is 0),
 * values j and j + 16 of each 32 in one byte. */
static void put_codes(const float *x, int n, float d, uint8_t *qs)
{
	float id = d != 0.0f ? 1 / d : 0.0f;
	for (int g = 0; g < n; g += 32)
		for (int j = 0; j < 16; j++)
			qs[g / 2 + j] = (uint8_t)(nearest_code(id * x[g + j]) |
						  (nearest_code(id * x[g + j + 16]) << 4));
}

void quant_iq4_nl(const float *x, uint8_t *y, int64_t n)
{
	for (int64_t i = 0; i < n / 32; i++, x += 32, y += 18) {
		float d = group_scale(x);
		quant_half(y, d);
		put_codes(x, 32, d, y + 2);
	}
}

/* {d, scales_h (u16), scales_l[4], qs[128]}: d = -max / 32 over the group
 * scales, each stored as l + 32 in 6 bits (low nibble, high bit pair). */
static void iq4_xs_block(const float *x, uint8_t *y)
{
	float scales[8], amax = 0.0f, max_scale = 0.0f;
	for (int ib = 0; ib < 8; ib++) {
		scales[ib] = group_scale(x + 32 * ib);
		if (fabsf(scales[ib]) > amax) {
			amax = fabsf(scales[ib]);
			max_scale = scales[ib];
		}
	}
	float d = -max_scale / 32;
	quant_half(y, d);
	float id = d != 0.0f ? 1 / d : 0.0f;
	uint16_t scales_h = 0;
	uint8_t *scales_l = y + 4, *qs = y + 8;
	memset(scales_l, 0, 4);
	for (int ib = 0; ib < 8; ib++) {
		int l = quant_clamp(quant_nearest(id * scales[ib]), -32, 31);
		put_codes(x + 32 * ib, 32, d * (float)l, qs + 16 * ib);
		l += 32;
		scales_l[ib / 2] |= (uint8_t)((l & 15) << (4 * (ib % 2)));
		scales_h |= (uint16_t)((l >> 4) << (2 * ib));
	}
	quant_put16(y + 2, scales_h);
}

void quant_iq4_xs(const float *x, uint8_t *y, int64_t n)
{
	for (int64_t i = 0; i < n / QK_K; i++, x += QK_K, y += 136)
		iq4_xs_block(x, y);
}
