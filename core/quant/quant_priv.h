/* quant_priv.h: what the quantizers of core/quant share (not installed).
 *
 * Every quantizer reproduces ggml's reference (no importance matrix) path
 * operation for operation, in float32, so that belt and llama-quantize
 * write the same bytes; these files are built with -ffp-contract=off. */
#ifndef BELT_QUANT_PRIV_H
#define BELT_QUANT_PRIV_H

#include <stdint.h>
#include <string.h>

#include "belt/types.h"

#define QK_K 256
/* Below this a group counts as all zero (ggml's GROUP_MAX_EPS). */
#define QUANT_EPS 1e-15f

/* Round half to even, by adding 1.5 * 2^23 and reading the mantissa: the
 * rounding ggml's K-quant search uses (|v| < 2^22). */
static inline int quant_nearest(float v)
{
	float biased = v + 12582912.f;
	int32_t bits;
	memcpy(&bits, &biased, sizeof bits);
	return (bits & 0x007fffff) - 0x00400000;
}

static inline int quant_clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static inline void quant_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* Store f as an fp16 at p and return the value it now holds. */
static inline float quant_half(uint8_t *p, float f)
{
	uint16_t h = belt_f32_to_fp16(f);
	quant_put16(p, h);
	return belt_fp16_to_f32(h);
}

/* One block row quantizer: n values (whole blocks) of x into dst. */
typedef void (*quant_row_fn)(const float *x, uint8_t *dst, int64_t n);

void quant_q4_0(const float *x, uint8_t *dst, int64_t n);
void quant_q4_1(const float *x, uint8_t *dst, int64_t n);
void quant_q5_0(const float *x, uint8_t *dst, int64_t n);
void quant_q5_1(const float *x, uint8_t *dst, int64_t n);
void quant_q8_0(const float *x, uint8_t *dst, int64_t n);
void quant_q2_k(const float *x, uint8_t *dst, int64_t n);
void quant_q3_k(const float *x, uint8_t *dst, int64_t n);
void quant_q4_k(const float *x, uint8_t *dst, int64_t n);
void quant_q5_k(const float *x, uint8_t *dst, int64_t n);
void quant_q6_k(const float *x, uint8_t *dst, int64_t n);
void quant_iq4_nl(const float *x, uint8_t *dst, int64_t n);
void quant_iq4_xs(const float *x, uint8_t *dst, int64_t n);

/* The searches for a group's scale (and min) behind the K-quants
 * (fit.c). Each fills L with the chosen levels and returns the scale. */
/* Symmetric, levels -nmax..nmax-1 stored +nmax: start at -nmax/max, then
 * try 18 nearby scales, keeping the best weighted (x^2) least squares. */
float quant_fit_sym(int n, int nmax, const float *x, int8_t *L);
/* Symmetric 3-bit: coordinate descent on the levels (weights x^2). */
float quant_fit_q3(int n, int nmax, const float *x, int8_t *L);
/* Asymmetric (n <= 32), levels 0..nmax: scale and min over nstep + 1
 * candidate scales (rmin + rdelta * is), weighted by w, error |d| (mad) or
 * d^2; *neg_min gets -min >= 0. */
float quant_fit_affine(int n, int nmax, const float *x, const float *w, uint8_t *L,
		       float *neg_min, float rmin, float rdelta, int nstep, int mad);

#endif
