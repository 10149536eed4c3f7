/* Every GGUF weight type the backends read, dequantized independently of
 * them: written from ggml's block layouts (doc/ops.md) with ggml's float
 * operations in ggml's order, so the result is the exact float32 that
 * llama.cpp's to_float gives (the tests compile without FMA contraction).
 * For the tests of the backends and of belt quantize; each includes it
 * once. quant_ref_row() decodes n values (whole blocks) of one row. */
#ifndef BELT_TESTS_QUANT_REF_H
#define BELT_TESTS_QUANT_REF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "belt/types.h"

static inline uint16_t qr_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline float qr_half(uint16_t h)
{
	int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
	float v;
	if (e == 0)
		v = ldexpf((float)m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexpf((float)(m | 1024), e - 25);
	return sign ? -v : v;
}

static inline float qr_h(const uint8_t *p)
{
	return qr_half(qr_u16(p));
}

/* The non-linear 4-bit codebook of IQ4_NL and IQ4_XS. */
static const int8_t qr_iq4[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
				  1,    13,   25,  38,  53,  69,  89,  113};

/* The 6-bit scale and min of sub-block j (of 8) from the 12 packed bytes of
 * Q4_K and Q5_K. */
static inline void qr_scale_min_k4(const uint8_t *q, int j, int *sc, int *m)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4);
		*m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
	}
}

/* Q3_K's 16 six-bit scales (unsigned; the weight's is s - 32) from its 12
 * bytes: low nibbles in bytes 0-7, high bit pairs in bytes 8-11. */
static inline int qr_q3k_scale(const uint8_t *s, int i)
{
	int lo = i < 8 ? s[i] & 15 : s[i - 8] >> 4;
	int hi = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
	return lo | (hi << 4);
}

static void qr_q4_0(const uint8_t *b, float *y)
{
	float d = qr_h(b);
	for (int j = 0; j < 16; j++) {
		y[j] = (float)((b[2 + j] & 15) - 8) * d;
		y[j + 16] = (float)((b[2 + j] >> 4) - 8) * d;
	}
}

static void qr_q4_1(const uint8_t *b, float *y)
{
	float d = qr_h(b), m = qr_h(b + 2);
	for (int j = 0; j < 16; j++) {
		y[j] = (float)(b[4 + j] & 15) * d + m;
		y[j + 16] = (float)(b[4 + j] >> 4) * d + m;
	}
}

/* Q5_0 (has_min 0: {d, qh[4], qs[16]}, q - 16) and Q5_1 ({d, m, qh, qs}). */
static void qr_q5(const uint8_t *b, float *y, int has_min)
{
	float d = qr_h(b), m = has_min ? qr_h(b + 2) : 0;
	const uint8_t *qhp = b + (has_min ? 4 : 2), *qs = qhp + 4;
	uint32_t qh = (uint32_t)qhp[0] | (uint32_t)qhp[1] << 8 | (uint32_t)qhp[2] << 16 |
		      (uint32_t)qhp[3] << 24;
	for (int j = 0; j < 16; j++) {
		int x0 = (qs[j] & 15) | (int)(((qh >> j) & 1) << 4);
		int x1 = (qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4);
		if (has_min) {
			y[j] = (float)x0 * d + m;
			y[j + 16] = (float)x1 * d + m;
		} else {
			y[j] = (float)(x0 - 16) * d;
			y[j + 16] = (float)(x1 - 16) * d;
		}
	}
}

static void qr_q8_0(const uint8_t *b, float *y)
{
	float d = qr_h(b);
	for (int j = 0; j < 32; j++)
		y[j] = (float)(int8_t)b[2 + j] * d;
}

static void qr_iq4_nl(const uint8_t *b, float *y)
{
	float d = qr_h(b);
	for (int j = 0; j < 16; j++) {
		y[j] = d * (float)qr_iq4[b[2 + j] & 15];
		y[j + 16] = d * (float)qr_iq4[b[2 + j] >> 4];
	}
}

/* IQ4_XS: {d, u16 scales_h, scales_l[4], qs[128]}, 8 sub-blocks of 32. */
static void qr_iq4_xs(const uint8_t *b, float *y)
{
	float d = qr_h(b);
	unsigned sh = qr_u16(b + 2);
	const uint8_t *sl = b + 4, *qs = b + 8;
	for (int ib = 0; ib < 8; ib++, qs += 16, y += 32) {
		int ls = ((sl[ib / 2] >> (4 * (ib % 2))) & 15) | (((sh >> (2 * ib)) & 3) << 4);
		float dl = d * (float)(ls - 32);
		for (int j = 0; j < 16; j++) {
			y[j] = dl * (float)qr_iq4[qs[j] & 15];
			y[j + 16] = dl * (float)qr_iq4[qs[j] >> 4];
		}
	}
}

/* Q2_K: {scales[16], qs[64], d, dmin}; each 128 values read 32 bytes of qs
 * four times (shifts 0, 2, 4, 6), 16 values per scale byte. */
static void qr_q2_k(const uint8_t *b, float *y)
{
	const uint8_t *sc = b, *q = b + 16;
	float d = qr_h(b + 80), dmin = qr_h(b + 82);
	int is = 0;
	for (int n = 0; n < 2; n++, q += 32)
		for (int shift = 0; shift < 8; shift += 2)
			for (int half = 0; half < 2; half++, is++) {
				float dl = d * (float)(sc[is] & 15), ml = dmin * (float)(sc[is] >> 4);
				for (int l = 0; l < 16; l++)
					*y++ = dl * (float)((q[l + 16 * half] >> shift) & 3) - ml;
			}
}

/* Q3_K: {hmask[32], qs[64], scales[12], d}; the 2-bit walk of Q2_K, minus 4
 * where group g's bit of hmask is clear. */
static void qr_q3_k(const uint8_t *b, float *y)
{
	const uint8_t *hm = b, *q = b + 32, *sc = b + 96;
	float d = qr_h(b + 108);
	int is = 0, g = 0;
	for (int n = 0; n < 2; n++, q += 32)
		for (int shift = 0; shift < 8; shift += 2, g++)
			for (int half = 0; half < 2; half++, is++) {
				float dl = d * (float)(qr_q3k_scale(sc, is) - 32);
				for (int l = 0; l < 16; l++) {
					int k = l + 16 * half;
					int v = ((q[k] >> shift) & 3) - ((hm[k] >> g) & 1 ? 0 : 4);
					*y++ = dl * (float)v;
				}
			}
}

/* Q4_K ({d, dmin, scales[12], qs[128]}) and Q5_K ({..., qh[32], qs[128]}):
 * 64 values per 32 bytes of qs, low nibbles then high. */
static void qr_q45_k(const uint8_t *b, float *y, int five)
{
	float d = qr_h(b), dmin = qr_h(b + 2);
	const uint8_t *sc = b + 4, *qh = b + 16, *q = b + (five ? 48 : 16);
	for (int g = 0; g < 4; g++, q += 32) {
		int s0, m0, s1, m1;
		qr_scale_min_k4(sc, 2 * g, &s0, &m0);
		qr_scale_min_k4(sc, 2 * g + 1, &s1, &m1);
		float d1 = d * (float)s0, mm1 = dmin * (float)m0;
		float d2 = d * (float)s1, mm2 = dmin * (float)m1;
		for (int l = 0; l < 32; l++) {
			int hi = five ? ((qh[l] >> (2 * g)) & 1) << 4 : 0;
			*y++ = d1 * (float)((q[l] & 15) + hi) - mm1;
		}
		for (int l = 0; l < 32; l++) {
			int hi = five ? ((qh[l] >> (2 * g + 1)) & 1) << 4 : 0;
			*y++ = d2 * (float)((q[l] >> 4) + hi) - mm2;
		}
	}
}

/* Q6_K: {ql[128], qh[64], scales[16] (int8), d}. */
static void qr_q6_k(const uint8_t *b, float *y)
{
	const uint8_t *ql = b, *qh = b + 128;
	const int8_t *sc = (const int8_t *)(b + 192);
	float d = qr_h(b + 208);
	for (int n = 0; n < 2; n++, y += 128, ql += 64, qh += 32, sc += 8)
		for (int l = 0; l < 32; l++) {
			int is = l / 16;
			int q1 = ((ql[l] & 15) | ((qh[l] & 3) << 4)) - 32;
			int q2 = ((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32;
			int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
			int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
			y[l] = d * (float)sc[is] * (float)q1;
			y[l + 32] = d * (float)sc[is + 2] * (float)q2;
			y[l + 64] = d * (float)sc[is + 4] * (float)q3;
			y[l + 96] = d * (float)sc[is + 6] * (float)q4;
		}
}

/* n values (a multiple of the type's block) of a row of type t at src into
 * y; returns -1 for a type this file does not know. */
static inline int quant_ref_row(int t, const void *src, size_t n, float *y)
{
	const uint8_t *p = src;
	size_t i;
	switch (t) {
	case BELT_TYPE_F32:
		memcpy(y, src, n * sizeof *y);
		return 0;
	case BELT_TYPE_F16:
		for (i = 0; i < n; i++)
			y[i] = qr_h(p + 2 * i);
		return 0;
	case BELT_TYPE_BF16:
		for (i = 0; i < n; i++) {
			uint32_t u = (uint32_t)qr_u16(p + 2 * i) << 16;
			memcpy(&y[i], &u, sizeof u);
		}
		return 0;
	default:
		break;
	}
	for (i = 0; i < n; i += belt_type_block(t)) {
		float *o = y + i;
		switch (t) {
		case BELT_TYPE_Q4_0: qr_q4_0(p, o); break;
		case BELT_TYPE_Q4_1: qr_q4_1(p, o); break;
		case BELT_TYPE_Q5_0: qr_q5(p, o, 0); break;
		case BELT_TYPE_Q5_1: qr_q5(p, o, 1); break;
		case BELT_TYPE_Q8_0: qr_q8_0(p, o); break;
		case BELT_TYPE_IQ4_NL: qr_iq4_nl(p, o); break;
		case BELT_TYPE_IQ4_XS: qr_iq4_xs(p, o); break;
		case BELT_TYPE_Q2_K: qr_q2_k(p, o); break;
		case BELT_TYPE_Q3_K: qr_q3_k(p, o); break;
		case BELT_TYPE_Q4_K: qr_q45_k(p, o, 0); break;
		case BELT_TYPE_Q5_K: qr_q45_k(p, o, 1); break;
		case BELT_TYPE_Q6_K: qr_q6_k(p, o); break;
		default: return -1;
		}
		p += belt_type_block_bytes(t);
	}
	return 0;
}

#endif
