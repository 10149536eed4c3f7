/* The 32-value block types: Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0, as ggml's
 * quantize_row_*_ref writes them (one scale, or scale and min, per block;
 * levels rounded by truncating v + 0.5, Q8_0 by roundf). */
#include <float.h>
#include <math.h>

#include "quant/quant_priv.h"

/* (int)v for v in [0, 255]; NaN and anything below give 0, so a corrupt
 * value cannot make the conversion undefined. */
static int trunc_level(float v)
{
	if (!(v >= 0.0f))
		return 0;
	return v > 255.0f ? 255 : (int)v;
}

/* The value of largest magnitude, with its sign (the first of ties). */
static float signed_absmax(const float *x, int n)
{
	float amax = 0.0f, max = 0.0f;
	for (int j = 0; j < n; j++)
		if (amax < fabsf(x[j])) {
			amax = fabsf(x[j]);
			max = x[j];
		}
	return max;
}

static void min_max(const float *x, int n, float *min, float *max)
{
	*min = FLT_MAX;
	*max = -FLT_MAX;
	for (int j = 0; j < n; j++) {
		if (x[j] < *min)
			*min = x[j];
		if (x[j] > *max)
			*max = x[j];
	}
}

/* Nibbles: element j low, j + 16 high; the fifth bits of a 5-bit type go
 * to a 32-bit little-endian mask (bit j for element j). */
static void pack_nibbles(const int *l, uint8_t *qs, uint8_t *qh)
{
	uint32_t h = 0;
	for (int j = 0; j < 16; j++) {
		qs[j] = (uint8_t)((l[j] & 15) | ((l[j + 16] & 15) << 4));
		h |= (uint32_t)((l[j] >> 4) & 1) << j;
		h |= (uint32_t)((l[j + 16] >> 4) & 1) << (j + 16);
	}
	if (qh)
		for (int b = 0; b < 4; b++)
			qh[b] = (uint8_t)(h >> (8 * b));
}

/* Symmetric: d = max / -half, levels trunc(x / d + half + 0.5) <= top. */
static void sym_block(const float *x, uint8_t *d_out, uint8_t *qs, uint8_t *qh, int half, int top)
{
	float d = signed_absmax(x, 32) / (float)-half;
	float id = d != 0.0f ? 1.0f / d : 0.0f;
	quant_half(d_out, d);
	int l[32];
	for (int j = 0; j < 32; j++) {
		int v = trunc_level(x[j] * id + ((float)half + 0.5f));
		l[j] = v < top ? v : top;
	}
	pack_nibbles(l, qs, qh);
}

/* With a min: d = (max - min) / top, levels trunc((x - min) / d + 0.5). */
static void affine_block(const float *x, uint8_t *dm, uint8_t *qs, uint8_t *qh, int top, int cap)
{
	float min, max;
	min_max(x, 32, &min, &max);
	float d = (max - min) / (float)top;
	float id = d != 0.0f ? 1.0f / d : 0.0f;
	quant_half(dm, d);
	quant_half(dm + 2, min);
	int l[32];
	for (int j = 0; j < 32; j++) {
		int v = trunc_level((x[j] - min) * id + 0.5f);
		l[j] = cap && v > top ? top : v;
	}
	pack_nibbles(l, qs, qh);
}

void quant_q4_0(const float *x, uint8_t *y, int64_t n)
{
	for (int64_t i = 0; i < n / 32; i++, x += 32, y += 18)
		sym_block(x, y, y + 2, NULL, 8, 15);
}

void quant_q5_0(const float *x, uint8_t *y, int64_t n)
{
	for (int64_t i = 0; i < n / 32; i++, x += 32, y += 22)
		sym_block(x, y, y + 6, y + 2, 16, 31);
}

void quant_q4_1(const float *x, uint8_t *y, int64_t n)
{
	for (int64_t i = 0; i < n / 32; i++, x += 32, y += 20)
		affine_block(x, y, y + 4, NULL, 15, 1);
}

/* Q5_1 has no cap in ggml: (x - min) / d <= 31 already. */
void quant_q5_1(const float *x, uint8_t *y, int64_t n)
{
	for (int64_t i = 0; i < n / 32; i++, x += 32, y += 24)
		affine_block(x, y, y + 8, y + 4, 31, 0);
}

void quant_q8_0(const float *x, uint8_t *y, int64_t n)
{
	for (int64_t i = 0; i < n / 32; i++, x += 32, y += 34) {
		float amax = 0.0f;
		for (int j = 0; j < 32; j++)
			amax = amax > fabsf(x[j]) ? amax : fabsf(x[j]);
		float d = amax / 127.0f;
		float id = d != 0.0f ? 1.0f / d : 0.0f;
		quant_half(y, d);
		for (int j = 0; j < 32; j++) {
			float v = roundf(x[j] * id);
			y[2 + j] = (uint8_t)(int8_t)(v == v ? fmaxf(-128.0f, fminf(127.0f, v)) : 0.0f);
		}
	}
}
