/* Matrix products for batched tables: y[t] = W x[t] for the pass's rows t,
 * weight rows [r0, r1) per call. Each tile of weight rows is dequantized
 * to F32 once per pass, a block of KC columns at a time, stored k-major in
 * groups of 16 rows, and multiplied with blocks of 6 token rows by the
 * ISA's gemm routine: the weights are read from memory once per pass,
 * whatever the number of rows. */
#include <stdint.h>
#include <string.h>

#include "cpu.h"

#define KC 256	    /* columns per block: whole blocks of every type */
#define TILE_MAX 64 /* weight rows per tile */

int cpu_matmul_tile(int k)
{
	(void)k;
	return TILE_MAX;
}

size_t cpu_matmul_scratch(int k, int tile, uint32_t rows, bool round_x)
{
	/* the tile's block, k-major, plus one row of it as floats; with
	 * round_x the pass's x rounded as decode's int8 x, and one row of
	 * that quantized */
	size_t b = ((size_t)tile * KC + KC) * sizeof(float) + CPU_ALIGN;
	if (round_x)
		b += (size_t)rows * k * sizeof(float) + cpu_xq_bytes(k) + CPU_ALIGN;
	return b;
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

void cpu_run_matmul(const struct cpu_cmd *c, struct cpu_worker *w,
		    const struct cpu_pass *ps, int64_t r0, int64_t r1)
{
	int k = c->prm[0].i, m = c->prm[1].i;
	const float *x = (const float *)c->p[1] + (size_t)ps->row0 * k;
	float *y = (float *)c->p[2] + (size_t)ps->row0 * m;
	int n = (int)ps->n_rows;
	uintptr_t base = ((uintptr_t)w->scratch + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN;
	float *wt = (float *)base;		/* [tile / 16][KC][16] */
	float *row = wt + (size_t)c->tile * KC; /* one weight row's block */
	float part[CPU_GEMM_NT * CPU_GEMM_NR];
	if (c->quant) {
		float *xr = (float *)(((uintptr_t)(row + KC) + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN);
		/* once per command and thread, not per chunk */
		if (w->xq_seq != w->seq) {
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
