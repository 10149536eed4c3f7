/* K-quant weights decoded independently of the backends, from ggml's block
 * layouts (doc/ops.md): Q4_K super-blocks of 256 in 144 bytes (d, dmin,
 * 12 bytes of packed 6-bit scales and mins, 128 bytes of nibbles), Q6_K
 * in 210 bytes (128 of low nibbles, 64 of high bit pairs, 16 int8 scales,
 * d). For the backend tests; each includes it once. */
#ifndef BELT_TESTS_KQUANT_REF_H
#define BELT_TESTS_KQUANT_REF_H

#include <stddef.h>
#include <stdint.h>

#include "belt/types.h"

static inline uint16_t kq_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

/* Where a block of type t keeps its fp16 scales: the first at byte *at,
 * returns how many (Q8_0, Q4_0: d first; Q4_K: d and dmin first; Q6_K: d
 * last, at byte 208). */
static inline int block_scales(int t, size_t *at)
{
	*at = t == BELT_TYPE_Q6_K ? 208 : 0;
	return t == BELT_TYPE_Q4_K ? 2 : 1;
}

/* Q4_K's 6-bit scale and min of sub-block j from its 12 packed bytes. */
static inline void q4k_scale_min(const uint8_t *q, int j, int *sc, int *m)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4);
		*m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
	}
}

/* Q6_K element e of a super-block: its scale and 6-bit q (unsigned). */
static inline void q6k_at(const uint8_t *blk, int e, int *sc, int *q)
{
	int n = e / 128, quarter = e % 128 / 32, l = e % 32;
	const uint8_t *ql = blk + 64 * n, *qh = blk + 128 + 32 * n;
	const int8_t *scales = (const int8_t *)(blk + 192 + 8 * n);
	int lo = quarter & 1 ? ql[l + 32] : ql[l];
	lo = quarter < 2 ? lo & 15 : lo >> 4;
	*q = lo | (((qh[l] >> (2 * quarter)) & 3) << 4);
	*sc = scales[l / 16 + 2 * quarter];
}

/* Element j of a row of Q4_K (t) or Q6_K: exact (double), and (f) as the
 * float ggml computes: Q4_K (d * sc) * q - dmin * m, Q6_K (d * sc) * (q - 32). */
static inline double kq_weight(int t, const uint8_t *row, int j, float *f)
{
	if (t == BELT_TYPE_Q4_K) {
		const uint8_t *blk = row + 144 * (j / 256);
		int e = j % 256, g = e / 64, in = e % 64, sc, m;
		int byte = blk[16 + 32 * g + in % 32];
		int q = in < 32 ? byte & 15 : byte >> 4;
		q4k_scale_min(blk + 4, 2 * g + (in >= 32), &sc, &m);
		float d = belt_fp16_to_f32(kq_rd16(blk)), dmin = belt_fp16_to_f32(kq_rd16(blk + 2));
		*f = d * (float)sc * (float)q - dmin * (float)m;
		return (double)d * sc * q - (double)dmin * m;
	}
	const uint8_t *blk = row + 210 * (j / 256);
	int sc, q;
	q6k_at(blk, j % 256, &sc, &q);
	float d = belt_fp16_to_f32(kq_rd16(blk + 208));
	*f = d * (float)sc * (float)(q - 32);
	return (double)d * sc * (q - 32);
}

#endif
