/* Matrix products for batched tables: y[t] = W x[t] for the pass's rows t,
 * weight rows [r0, r1) per call; the weights are read from memory once
 * per pass, whatever the number of rows.
 *
 * Q8_0, Q4_0, Q5_0, IQ4_NL and IQ4_XS (every block of 32 one scale times
 * int8), Q4_1, Q5_1, Q4_K and Q5_K (plus a float min per block), and in
 * blocks of 16 Q6_K, Q3_K and Q2_K (its min too), where the ISA has
 * gemm_i8 (AVX-512 VNNI): x is quantized
 * to int8 per block of 32 exactly as decode's matvec quantizes it, each
 * tile of weight rows is unpacked to int8 once per pass, and the products
 * are decode's integer dot products per block, scaled in float.
 *
 * Otherwise each tile is dequantized to F32, a block of KC columns at a
 * time, stored k-major in groups of 16 rows, and multiplied with blocks of
 * 6 token rows by the ISA's gemm routine (quantized types: x rounded as
 * decode rounds it, so both paths see the same x). */
#include <stdint.h>
#include <string.h>

#include "belt/types.h"
#include "cpu.h"

#define KC 256	    /* columns per block: whole blocks of every type */
#define TILE_MAX 64 /* weight rows per tile */

int cpu_matmul_tile(int k)
{
	(void)k;
	return TILE_MAX;
}

/* Groups of 16 weight rows a tile of `tile` rows packs into: an even
 * number, gemm_i8 taking two at a time. */
static int int8_groups(int tile)
{
	return (tile + CPU_GEMM_I8_NR - 1) / CPU_GEMM_I8_NR * 2;
}

static size_t aligned(size_t n)
{
	return (n + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN;
}

/* The int8 product's scratch, as offsets from an aligned base: the tile
 * packed (int8 weights, then per group and block 16 scales and 16 sums,
 * then 16 mins; sized for blocks of 16), the pass's x as bytes q + 128
 * with, per block of 32 and per block of 16, the scale and the scaled sum
 * (both, as the commands sharing an x may have either block), and one row
 * of x quantized; end is its size. */
struct int8_layout {
	size_t wp, ws, wm, xu, dx, sx, dx16, sx16, xq, end;
};

static struct int8_layout int8_layout(int k, int tile, uint32_t rows)
{
	size_t groups = (size_t)int8_groups(tile), nb = (size_t)k / 16;
	size_t per_x = (size_t)rows * (k / CPU_QK) * sizeof(float);
	struct int8_layout l = {.wp = 0};
	l.ws = aligned(l.wp + groups * 16 * (size_t)k);
	l.wm = aligned(l.ws + groups * nb * 32 * sizeof(float));
	l.xu = aligned(l.wm + groups * nb * 16 * sizeof(float));
	l.dx = aligned(l.xu + (size_t)rows * k);
	l.sx = aligned(l.dx + per_x);
	l.dx16 = aligned(l.sx + per_x);
	l.sx16 = aligned(l.dx16 + 2 * per_x);
	l.xq = aligned(l.sx16 + 2 * per_x);
	l.end = l.xq + cpu_xq_bytes(k);
	return l;
}

size_t cpu_matmul_scratch(int k, int tile, uint32_t rows, bool round_x)
{
	/* a pass of few rows: each row's x quantized */
	size_t few = (size_t)(rows < CPU_FEW_ROWS ? rows : CPU_FEW_ROWS) *
			     aligned(cpu_xq_bytes(k)) + CPU_ALIGN;
	/* the tile's block, k-major, plus one row of it as floats; with
	 * round_x the pass's x rounded as decode's int8 x, and one row of
	 * that quantized */
	size_t b = ((size_t)tile * KC + KC) * sizeof(float) + CPU_ALIGN;
	if (round_x) {
		b += (size_t)rows * k * sizeof(float) + cpu_xq_bytes(k) + CPU_ALIGN;
		size_t i8 = int8_layout(k, tile, rows).end + CPU_ALIGN;
		b = b > i8 ? b : i8;
	}
	return b > few ? b : few;
}

/* Whether a type's blocks carry a float min (w = d * q + m). */
static bool has_min(enum cpu_wtype w)
{
	return w == CPU_W_Q4_1 || w == CPU_W_Q5_1 || w == CPU_W_Q4_K || w == CPU_W_Q5_K ||
	       w == CPU_W_Q2_K;
}

/* The types packed in blocks of 16 (a scale, and Q2_K's min, per 16). */
static bool blocks_of_16(enum cpu_wtype w)
{
	return w == CPU_W_Q6_K || w == CPU_W_Q3_K || w == CPU_W_Q2_K;
}

bool cpu_matmul_int8(enum cpu_wtype w)
{
	/* the types whose every block of 32 (or 16) is one float scale times
	 * int8, plus a float min for some */
	return w == CPU_W_Q8_0 || w == CPU_W_Q4_0 || w == CPU_W_Q5_0 ||
	       w == CPU_W_IQ4_NL || w == CPU_W_IQ4_XS || has_min(w) ||
	       blocks_of_16(w);
}

static void *align_up(void *p)
{
	return (void *)(((uintptr_t)p + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN);
}

/* 16 bytes of nibbles as 32 int8: table[low nibbles], then table[high]. */
static void nibbles_via(const uint8_t *qs, const int8_t *table, int8_t *q)
{
	for (int j = 0; j < CPU_QK / 2; j++) {
		q[j] = table[qs[j] & 15];
		q[j + CPU_QK / 2] = table[qs[j] >> 4];
	}
}

/* Q4_K's and Q5_K's block j (of 8) of a super-block: ggml's d * sc and
 * -(dmin * m), and the 4 low bits of q. */
static float k4_block(uint16_t d, uint16_t dmin, const uint8_t *scales, const uint8_t *qs,
		      int j, int8_t *q, float *min)
{
	static const int8_t ident[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
	uint32_t u[4];
	cpu_k4_scales(scales, u);
	uint8_t sm[16];
	memcpy(sm, u, 16);
	int8_t both[CPU_QK * 2];
	nibbles_via(qs + 32 * (j / 2), ident, both);
	nibbles_via(qs + 32 * (j / 2) + 16, ident, both + CPU_QK);
	/* low nibbles of 32 bytes for even j, high for odd */
	for (int l = 0; l < CPU_QK; l++)
		q[l] = both[(l / 16) * CPU_QK + (j & 1) * 16 + l % 16];
	*min = -(belt_fp16_to_f32(dmin) * (float)sm[8 + j]);
	return belt_fp16_to_f32(d) * (float)sm[j];
}

/* Weight row r's block b (of 32) as 32 int8 q (w = d * q + min) and its
 * scale d, for the types of cpu_matmul_int8 (min 0 for those without). */
static float block_q(const struct cpu_cmd *c, int64_t r, int b, int8_t *q, float *min)
{
	static const int8_t ident[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
	*min = 0.0f;
	static const int8_t minus8[16] = {-8, -7, -6, -5, -4, -3, -2, -1,
					  0,  1,  2,  3,  4,  5,  6,  7};
	const char *row = (const char *)c->p[0] + (size_t)r * c->row_bytes;
	switch (c->w) {
	case CPU_W_Q8_0: {
		const struct belt_block_q8_0 *blk = (const void *)row;
		memcpy(q, blk[b].qs, CPU_QK);
		return belt_fp16_to_f32(blk[b].d);
	}
	case CPU_W_Q4_0: {
		const struct belt_block_q4_0 *blk = (const void *)row;
		nibbles_via(blk[b].qs, minus8, q);
		return belt_fp16_to_f32(blk[b].d);
	}
	case CPU_W_Q5_0: {
		const struct cpu_block_q5_0 *blk = (const void *)row;
		uint32_t qh;
		memcpy(&qh, blk[b].qh, 4);
		nibbles_via(blk[b].qs, minus8, q);
		/* (nibble | bit << 4) - 16 = (nibble - 8) + 16 * bit - 8 */
		for (int j = 0; j < CPU_QK; j++)
			q[j] = (int8_t)(q[j] + 16 * (int)((qh >> j) & 1) - 8);
		return belt_fp16_to_f32(blk[b].d);
	}
	case CPU_W_IQ4_NL: {
		const struct cpu_block_iq4_nl *blk = (const void *)row;
		nibbles_via(blk[b].qs, cpu_iq4_values, q);
		return belt_fp16_to_f32(blk[b].d);
	}
	case CPU_W_Q4_1: {
		const struct cpu_block_q4_1 *blk = (const void *)row;
		nibbles_via(blk[b].qs, ident, q);
		*min = belt_fp16_to_f32(blk[b].m);
		return belt_fp16_to_f32(blk[b].d);
	}
	case CPU_W_Q5_1: {
		const struct cpu_block_q5_1 *blk = (const void *)row;
		uint32_t qh;
		memcpy(&qh, blk[b].qh, 4);
		nibbles_via(blk[b].qs, ident, q);
		for (int j = 0; j < CPU_QK; j++)
			q[j] = (int8_t)(q[j] | ((qh >> j) & 1) << 4);
		*min = belt_fp16_to_f32(blk[b].m);
		return belt_fp16_to_f32(blk[b].d);
	}
	case CPU_W_Q4_K: {
		const struct cpu_block_q4_k *blk = (const struct cpu_block_q4_k *)row + b / 8;
		return k4_block(blk->d, blk->dmin, blk->scales, blk->qs, b % 8, q, min);
	}
	case CPU_W_Q5_K: {
		const struct cpu_block_q5_k *blk = (const struct cpu_block_q5_k *)row + b / 8;
		float d = k4_block(blk->d, blk->dmin, blk->scales, blk->qs, b % 8, q, min);
		for (int l = 0; l < CPU_QK; l++)
			q[l] = (int8_t)(q[l] | ((blk->qh[l] >> (b % 8)) & 1) << 4);
		return d;
	}
	case CPU_W_IQ4_XS: {
		/* sub-block b % 8 of super-block b / 8: ggml's d * (ls - 32) */
		const struct cpu_block_iq4_xs *blk = (const struct cpu_block_iq4_xs *)row + b / 8;
		int ib = b % 8;
		int ls = ((blk->scales_l[ib / 2] >> (4 * (ib % 2))) & 15) |
			 (((blk->scales_h >> (2 * ib)) & 3) << 4);
		nibbles_via(blk->qs + 16 * ib, cpu_iq4_values, q);
		return belt_fp16_to_f32(blk->d) * (float)(ls - 32);
	}
	default:
		memset(q, 0, CPU_QK);
		return 0.0f;
	}
}

/* Weight row r's block b of 16 values (Q6_K, Q3_K, Q2_K: group b % 16 of
 * super-block b / 16, in ggml's scale order) as 16 int8 q, with ggml's
 * float scale (and Q2_K's min) of the group. */
static float block_q16(const struct cpu_cmd *c, int64_t r, int b, int8_t *q, float *min)
{
	const char *row = (const char *)c->p[0] + (size_t)r * c->row_bytes;
	int e16 = b % 16;
	*min = 0.0f;
	if (c->w == CPU_W_Q6_K) {
		const struct cpu_block_q6_k *blk = (const struct cpu_block_q6_k *)row + b / 16;
		/* values 16 * e16 .. + 15: half n, quarter, l0 */
		int n = e16 / 8, quarter = e16 % 8 / 2, l0 = 16 * (e16 % 2);
		const uint8_t *ql = blk->ql + 64 * n + (quarter & 1 ? 32 : 0), *qh = blk->qh + 32 * n;
		for (int l = 0; l < 16; l++) {
			int lo = quarter < 2 ? ql[l0 + l] & 15 : ql[l0 + l] >> 4;
			q[l] = (int8_t)((lo | ((qh[l0 + l] >> (2 * quarter)) & 3) << 4) - 32);
		}
		return belt_fp16_to_f32(blk->d) * (float)blk->scales[8 * n + 2 * quarter + e16 % 2];
	}
	/* Q3_K and Q2_K: group e16 is half h of shift 2j of half n */
	int n = e16 / 8, j = e16 % 8 / 2, h = e16 % 2;
	if (c->w == CPU_W_Q3_K) {
		const struct cpu_block_q3_k *blk = (const struct cpu_block_q3_k *)row + b / 16;
		int8_t sc[16];
		cpu_q3_k_scales(blk->scales, sc);
		const uint8_t *qs = blk->qs + 32 * n + 16 * h, *hm = blk->hmask + 16 * h;
		for (int l = 0; l < 16; l++)
			q[l] = (int8_t)(((qs[l] >> (2 * j)) & 3) - ((hm[l] >> (4 * n + j)) & 1 ? 0 : 4));
		return belt_fp16_to_f32(blk->d) * (float)sc[e16];
	}
	const struct cpu_block_q2_k *blk = (const struct cpu_block_q2_k *)row + b / 16;
	const uint8_t *qs = blk->qs + 32 * n + 16 * h;
	for (int l = 0; l < 16; l++)
		q[l] = (int8_t)((qs[l] >> (2 * j)) & 3);
	*min = -(belt_fp16_to_f32(blk->dmin) * (float)(blk->scales[e16] >> 4));
	return belt_fp16_to_f32(blk->d) * (float)(blk->scales[e16] & 15);
}

/* Rows [t0, t0 + nr) in gemm_i8's layout, in groups of 16 (rows past nr
 * zero), an even number of groups. */
static void pack_int8(const struct cpu_cmd *c, int64_t t0, int nr, int nb, int qk, int8_t *wp,
		      float *ws, float *wm)
{
	int groups = int8_groups(nr);
	int8_t q[CPU_QK];
	for (int g = 0; g < groups; g++) {
		for (int i = 0; i < 16; i++) {
			int r = g * 16 + i;
			for (int b = 0; b < nb; b++) {
				int8_t *dst = wp + ((size_t)g * nb + b) * 16 * qk + i * 4;
				float *sc = ws + ((size_t)g * nb + b) * 32;
				float d = 0.0f, min = 0.0f;
				int32_t sum = 0;
				if (r >= nr)
					memset(q, 0, sizeof q);
				else if (qk == 16)
					d = block_q16(c, t0 + r, b, q, &min);
				else
					d = block_q(c, t0 + r, b, q, &min);
				wm[((size_t)g * nb + b) * 16 + i] = min;
				for (int s = 0; s < qk / 4; s++)
					memcpy(dst + s * 64, q + s * 4, 4);
				for (int j = 0; j < qk; j++)
					sum += q[j];
				sc[i] = d;
				int32_t neg = -128 * sum;
				memcpy(&sc[16 + i], &neg, sizeof neg);
			}
		}
	}
}

/* The pass's x quantized as decode quantizes it, as bytes q + 128, and
 * per block of 32 and of 16 the scale and the scale times the sum of q. */
static void bytes_of_rows(const struct cpu_cmd *c, const float *x, int n, int k, uint8_t *xu,
			  float *dx, float *sx, float *dx16, float *sx16, void *xq)
{
	int nb = k / CPU_QK;
	for (int t = 0; t < n; t++) {
		c->quant(x + (size_t)t * k, xq, k);
		const int8_t *q = xq;
		const float *d = cpu_xq_d(xq, k);
		const int32_t *sums = cpu_xq_sums(xq, k);
		for (int j = 0; j < k; j++)
			xu[(size_t)t * k + j] = (uint8_t)(q[j] + 128);
		for (int b = 0; b < nb; b++) {
			size_t i = (size_t)t * nb + b;
			dx[i] = d[b];
			sx[i] = d[b] * (float)(sums[2 * b] + sums[2 * b + 1]);
			dx16[2 * i] = dx16[2 * i + 1] = d[b];
			sx16[2 * i] = d[b] * (float)sums[2 * b];
			sx16[2 * i + 1] = d[b] * (float)sums[2 * b + 1];
		}
	}
}

/* The int8 types with an ISA's gemm_i8: each tile of weight rows packed
 * once per pass, then multiplied with every block of tokens. */
static void run_matmul_int8(const struct cpu_cmd *c, struct cpu_worker *w,
			    const struct cpu_pass *ps, int64_t r0, int64_t r1)
{
	int qk = blocks_of_16(c->w) ? 16 : CPU_QK;
	int k = c->prm[0].i, m = c->prm[1].i, nb = k / qk;
	const float *x = (const float *)c->p[1] + (size_t)ps->row0 * k;
	float *y = (float *)c->p[2] + (size_t)ps->row0 * m;
	int n = (int)ps->n_rows;
	struct int8_layout l = int8_layout(k, c->tile, c->rows);
	char *base = align_up(w->scratch);
	int8_t *wp = (int8_t *)(base + l.wp);
	float *ws = (float *)(base + l.ws);
	uint8_t *xu = (uint8_t *)(base + l.xu);
	float *wm = (float *)(base + l.wm);
	float *dx = (float *)(base + l.dx);
	float *sx = (float *)(base + l.sx);
	float *dx16 = (float *)(base + l.dx16);
	float *sx16 = (float *)(base + l.sx16);
	void *xq = base + l.xq;
	bool mins = has_min(c->w);
	/* once per command and thread, not per chunk */
	if (w->xq_seq != w->seq) {
		/* or still there from the previous command, same x */
		if (!(c->reuse_xq && w->xq_seq == w->prev_seq))
			bytes_of_rows(c, x, n, k, xu, dx, sx, dx16, sx16, xq);
		w->xq_seq = w->seq;
	}
	for (int64_t t0 = r0; t0 < r1; t0 += c->tile) {
		int nr = (int)(r1 - t0 < c->tile ? r1 - t0 : c->tile);
		pack_int8(c, t0, nr, nb, qk, wp, ws, wm);
		const float *bdx = qk == 16 ? dx16 : dx, *bsx = qk == 16 ? sx16 : sx;
		for (int r = 0; r < nr; r += CPU_GEMM_I8_NR) {
			int g = r / 16;
			int n_r = nr - r < CPU_GEMM_I8_NR ? nr - r : CPU_GEMM_I8_NR;
			for (int t = 0; t < n; t += CPU_GEMM_I8_NT) {
				int nt = n - t < CPU_GEMM_I8_NT ? n - t : CPU_GEMM_I8_NT;
				c->gemm_i8(wp + (size_t)g * nb * 16 * qk, ws + (size_t)g * nb * 32,
					   mins ? wm + (size_t)g * nb * 16 : NULL, nb, qk,
					   xu + (size_t)t * k, (size_t)k, bdx + (size_t)t * nb,
					   bsx + (size_t)t * nb, (size_t)nb, nt,
					   y + (size_t)t * m + t0 + r, (size_t)m, n_r);
			}
		}
	}
}

/* x rows as decode's matvec sees them where it quantizes x to int8 per
 * block: d * q, so a batched pass gives the one-token path's logits. */
static void round_rows(const struct cpu_cmd *c, const float *x, int n, int k, float *xr,
		       void *xq)
{
	for (int t = 0; t < n; t++) {
		c->quant(x + (size_t)t * k, xq, k);
		const int8_t *q = xq;
		const float *d = cpu_xq_d(xq, k);
		float *o = xr + (size_t)t * k;
		for (int j = 0; j < k; j++)
			o[j] = d[j / CPU_QK] * (float)q[j];
	}
}

/* Reference block product: the same contract as the ISA routines. */
void cpu_gemm_block_generic(const float *wt, int kc, const float *x, size_t x_stride, int n_t,
			 float *y, size_t y_stride, bool add)
{
	for (int t = 0; t < n_t; t++) {
		float acc[CPU_GEMM_NR] = {0};
		const float *xt = x + (size_t)t * x_stride;
		for (int j = 0; j < kc; j++)
			for (int r = 0; r < CPU_GEMM_NR; r++)
				acc[r] += wt[(size_t)j * CPU_GEMM_NR + r] * xt[j];
		float *yt = y + (size_t)t * y_stride;
		for (int r = 0; r < CPU_GEMM_NR; r++)
			yt[r] = add ? yt[r] + acc[r] : acc[r];
	}
}

/* A pass of few rows (a verification of drafts): decode's own row kernel
 * for each row, over tiles of weight rows small enough to stay in the
 * first-level cache while every row reads them. Each y is then exactly
 * what one-token decode computes, and no tile is unpacked. */
static void run_matmul_few(const struct cpu_cmd *c, struct cpu_worker *w,
			   const struct cpu_pass *ps, int64_t r0, int64_t r1)
{
	int k = c->prm[0].i, m = c->prm[1].i, n = (int)ps->n_rows;
	const float *x = (const float *)c->p[1] + (size_t)ps->row0 * k;
	float *y = (float *)c->p[2] + (size_t)ps->row0 * m;
	char *xq = align_up(w->scratch);
	size_t xq_bytes = aligned(cpu_xq_bytes(k));
	if (c->quant && w->xq_seq != w->seq) {
		if (!(c->reuse_xq && w->xq_seq == w->prev_seq))
			for (int t = 0; t < n; t++)
				c->quant(x + (size_t)t * k, xq + (size_t)t * xq_bytes, k);
		w->xq_seq = w->seq;
	}
	int64_t tile = (int64_t)(CPU_FEW_TILE_BYTES / c->row_bytes);
	if (tile < 1)
		tile = 1;
	for (int64_t t0 = r0; t0 < r1; t0 += tile) {
		int64_t t1 = r1 - t0 < tile ? r1 : t0 + tile;
		for (int t = 0; t < n; t++) {
			const void *xt = c->quant ? (const void *)(xq + (size_t)t * xq_bytes)
						  : (const void *)(x + (size_t)t * k);
			c->rows_fn(c->p[0], c->row_bytes, xt, y + (size_t)t * m, t0, t1, k);
		}
	}
}

void cpu_run_matmul(const struct cpu_cmd *c, struct cpu_worker *w,
		    const struct cpu_pass *ps, int64_t r0, int64_t r1)
{
	if (ps->n_rows <= CPU_FEW_ROWS && c->rows_fn) {
		run_matmul_few(c, w, ps, r0, r1);
		return;
	}
	if (c->gemm_i8) {
		run_matmul_int8(c, w, ps, r0, r1);
		return;
	}
	int k = c->prm[0].i, m = c->prm[1].i;
	const float *x = (const float *)c->p[1] + (size_t)ps->row0 * k;
	float *y = (float *)c->p[2] + (size_t)ps->row0 * m;
	int n = (int)ps->n_rows;
	float *wt = align_up(w->scratch);	/* [tile / 16][KC][16] */
	float *row = wt + (size_t)c->tile * KC; /* one weight row's block */
	float part[CPU_GEMM_NT * CPU_GEMM_NR];
	if (c->quant) {
		float *xr = align_up(row + KC);
		/* once per command and thread, not per chunk */
		if (w->xq_seq != w->seq) {
			if (!(c->reuse_xq && w->xq_seq == w->prev_seq))
				round_rows(c, x, n, k, xr, xr + (size_t)c->rows * k);
			w->xq_seq = w->seq;
		}
		x = xr;
	}
	for (int64_t t0 = r0; t0 < r1; t0 += c->tile) {
		int nr = (int)(r1 - t0 < c->tile ? r1 - t0 : c->tile);
		int groups = (nr + CPU_GEMM_NR - 1) / CPU_GEMM_NR;
		for (int j0 = 0; j0 < k; j0 += KC) {
			int kc = k - j0 < KC ? k - j0 : KC;
			/* dequantize and transpose; rows past nr are zero */
			for (int r = 0; r < groups * CPU_GEMM_NR; r++) {
				float *g = wt + (size_t)(r / CPU_GEMM_NR) * KC * CPU_GEMM_NR +
					   r % CPU_GEMM_NR;
				if (r < nr)
					cpu_dequant_range(c, t0 + r, j0, j0 + kc, row);
				for (int j = 0; j < kc; j++)
					g[(size_t)j * CPU_GEMM_NR] = r < nr ? row[j] : 0.0f;
			}
			bool add = j0 > 0;
			for (int t = 0; t < n; t += CPU_GEMM_NT) {
				int nt = n - t < CPU_GEMM_NT ? n - t : CPU_GEMM_NT;
				for (int g = 0; g < groups; g++) {
					const float *wg = wt + (size_t)g * KC * CPU_GEMM_NR;
					int r = g * CPU_GEMM_NR;
					float *yt = y + (size_t)t * m + t0 + r;
					if (r + CPU_GEMM_NR <= nr) {
						c->gemm(wg, kc, x + (size_t)t * k + j0, (size_t)k, nt,
							yt, (size_t)m, add);
						continue;
					}
					/* the tile's last, partial group */
					c->gemm(wg, kc, x + (size_t)t * k + j0, (size_t)k, nt, part,
						CPU_GEMM_NR, false);
					for (int i = 0; i < nt; i++)
						for (int q = 0; q < nr - r; q++)
							yt[(size_t)i * m + q] =
								(add ? yt[(size_t)i * m + q] : 0.0f) +
								part[i * CPU_GEMM_NR + q];
				}
			}
		}
	}
}
