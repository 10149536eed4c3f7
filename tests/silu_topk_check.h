/* The silu and top_k ops (doc/ops.md) on any backend, against references
 * computed here in double. Included by the backend tests.
 *
 *  - silu: a few hundred values from -1e30 to 1e30 (every range of e^-x
 *    float has, its overflow past x = -88.7 included), in place, in a
 *    one-row table and in a batched one of 3 rows; within 1e-6 relative
 *    (+1e-35 absolute: past x = -88.7 float's e^-x is inf and silu -0).
 *  - top_k: 32000 random logits with planted ties (equal values at
 *    several indices: the lowest index first) and -inf ones (masked
 *    tokens, never ahead of a finite one), k 1 and 8; rows of 5 with 2
 *    finite logits (k 4: the other slots the lowest -inf indices, at
 *    probability 0) and with none; a batched table of 3 such rows of
 *    32000; 262144 logits of 64 levels (thousands of equal maxima) with
 *    k 64. Ids exactly, probabilities within 1e-5 relative.
 *  - errors: k 0, 65 and more than n, and n past 2^24, refused at
 *    prepare with a message naming the command. */
#ifndef BELT_TESTS_SILU_TOPK_CHECK_H
#define BELT_TESTS_SILU_TOPK_CHECK_H

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "belt/backend.h"
#include "cmd.h"

#define STK_OFF 16 /* every binding at an offset: the shaders add it */

static inline struct belt_buffer *stk_buf(const struct belt_backend_ops *B, void *ctx,
					  uint64_t size)
{
	char err[256];
	struct belt_buffer *b;
	ck_assert_msg(B->buffer_create(ctx, BELT_BUFFER_SCRATCH, size, &b, err, sizeof err) == 0,
		      "%s buffer_create: %s", B->name, err);
	return b;
}

static inline void stk_put(const struct belt_backend_ops *B, void *ctx, struct belt_buffer *b,
			   const void *src, uint64_t size)
{
	char err[256];
	ck_assert_msg(B->buffer_write(ctx, b, STK_OFF, src, size, err, sizeof err) == 0,
		      "%s buffer_write: %s", B->name, err);
}

static inline void stk_get(const struct belt_backend_ops *B, void *ctx, struct belt_buffer *b,
			   void *dst, uint64_t size)
{
	char err[256];
	ck_assert_msg(B->buffer_read(ctx, b, STK_OFF, dst, size, err, sizeof err) == 0,
		      "%s buffer_read: %s", B->name, err);
}

/* Bind rows rows of n floats of b at STK_OFF (ne[1] 0 for one row). */
static inline void stk_bind(struct belt_cmd *c, struct belt_buffer *b, int n, uint32_t rows)
{
	bind(c, b, STK_OFF, (uint64_t)n * 4 * rows, BELT_TYPE_F32);
	c->bind[c->n_bind - 1].ne[0] = n;
	c->bind[c->n_bind - 1].ne[1] = rows > 1 ? rows : 0;
}

static inline struct belt_cmd stk_cmd(const struct belt_backend_ops *B, void *ctx,
				      const char *op, const char *label)
{
	struct belt_cmd c;
	memset(&c, 0, sizeof c);
	c.kernel = B->kernel_find(ctx, op, "default", BELT_TYPE_ANY);
	ck_assert_msg(c.kernel != NULL, "%s: no kernel %s", B->name, op);
	c.label = label;
	c.layer = -1;
	return c;
}

/* Prepare and run c alone over rows rows (a one-row table for 1). */
static inline void stk_run(const struct belt_backend_ops *B, void *ctx, struct belt_cmd *c,
			   uint32_t rows, struct belt_table *tab)
{
	char err[256];
	table_init(tab, c, 1, rows, NULL, rows > 1 ? 0 : 1);
	tab->rows = rows > 1 ? rows : 0;
	ck_assert_msg(B->table_prepare(ctx, tab, err, sizeof err) == 0, "%s table_prepare: %s",
		      B->name, err);
	ck_assert_msg(B->table_run(ctx, tab, 0, rows, 0, err, sizeof err) == 0,
		      "%s table_run: %s", B->name, err);
}

static inline uint32_t stk_rand(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

/* ---- silu ---- */

static inline double silu_ref(double x)
{
	return x / (1.0 + exp(-x));
}

/* n values: the specials, then random ones in [-100, 100] and [-12, 12]. */
static inline void silu_values(float *x, int n, unsigned seed)
{
	static const float sp[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-7f, -1e-7f, 0.5f,
				   -0.5f, 1, -1, 2, -2, 5, -5, 10, -10, 17, -17, 20, -20,
				   25, -25, 30, -30, 40, -40, 50, -50, 60, -60, 70, -70,
				   80, -80, 85, -85, 87, -87, 88, -88, 88.5f, -88.5f,
				   88.72f, -88.72f, 89, -89, 90, -90, 100, -100, 1000,
				   -1000, 1e4f, -1e4f, 1e30f, -1e30f};
	int ns = (int)(sizeof sp / sizeof sp[0]);
	for (int i = 0; i < n; i++) {
		float u = (float)(stk_rand(&seed) & 0xffffff) / 8388608.0f - 1.0f;
		x[i] = i < ns ? sp[i] : u * (i % 2 ? 100.0f : 12.0f);
	}
}

/* silu over rows rows of n values x on backend B: out. */
static inline void silu_run(const struct belt_backend_ops *B, void *ctx, const float *x, int n,
			    uint32_t rows, float *out)
{
	uint64_t bytes = (uint64_t)n * 4 * rows;
	struct belt_buffer *bx = stk_buf(B, ctx, STK_OFF + bytes);
	stk_put(B, ctx, bx, x, bytes);
	struct belt_cmd c = stk_cmd(B, ctx, "silu", "medusa.0.silu");
	stk_bind(&c, bx, n, rows);
	pi(&c, n);
	struct belt_table tab;
	stk_run(B, ctx, &c, rows, &tab);
	stk_get(B, ctx, bx, out, bytes);
	B->table_release(ctx, &tab);
	B->buffer_destroy(ctx, bx);
}

static inline void silu_close(double got, double want, const char *who, int i, float x)
{
	ck_assert_msg(fabs(got - want) <= 1e-6 * fabs(want) + 1e-35,
		      "%s silu[%d] of %.9g: %.9g vs %.9g", who, i, (double)x, got, want);
}

static inline void check_silu(const struct belt_backend_ops *B, void *ctx)
{
	static const int ns[] = {300, 301};
	static const uint32_t rows[] = {1, 3};
	for (int s = 0; s < 2; s++) {
		int n = ns[s], all = n * (int)rows[s];
		float *x = malloc((size_t)all * 4), *got = malloc((size_t)all * 4);
		ck_assert(x && got);
		for (uint32_t r = 0; r < rows[s]; r++)
			silu_values(x + (size_t)r * n, n, 3 + r);
		silu_run(B, ctx, x, n, rows[s], got);
		for (int i = 0; i < all; i++)
			silu_close(got[i], silu_ref(x[i]), B->name, i, x[i]);
		free(x);
		free(got);
	}
}

/* ---- top_k ---- */

/* The k best of l[0, n) (larger first, the lower index among equals) by
 * k scans for the best after the last taken; their probabilities under
 * the softmax of all n, in double (0 for -inf). */
static inline void top_k_ref(const float *l, int n, int k, int *ids, double *p)
{
	double mx = -INFINITY, sum = 0;
	for (int i = 0; i < n; i++)
		mx = l[i] > mx ? l[i] : mx;
	for (int i = 0; i < n; i++)
		sum += isinf(l[i]) && l[i] < 0 ? 0.0 : exp(l[i] - mx);
	for (int j = 0; j < k; j++) {
		int best = -1, last = j > 0 ? ids[j - 1] : -1;
		for (int i = 0; i < n; i++) {
			if (last >= 0 && !(l[i] < l[last] || (l[i] == l[last] && i > last)))
				continue;
			if (best < 0 || l[i] > l[best])
				best = i;
		}
		ids[j] = best;
		p[j] = isinf(l[best]) ? 0.0 : exp(l[best] - mx) / sum;
	}
}

/* top_k over rows rows of n logits l on backend B: out[rows][2k]. */
static inline void top_k_run(const struct belt_backend_ops *B, void *ctx, const float *l, int n,
			     int k, uint32_t rows, float *out)
{
	uint64_t lb = (uint64_t)n * 4 * rows, ob = (uint64_t)k * 8 * rows;
	struct belt_buffer *bl = stk_buf(B, ctx, STK_OFF + lb), *bo = stk_buf(B, ctx, STK_OFF + ob);
	stk_put(B, ctx, bl, l, lb);
	struct belt_cmd c = stk_cmd(B, ctx, "top_k", "medusa.0.top_k");
	stk_bind(&c, bl, n, rows);
	stk_bind(&c, bo, 2 * k, rows);
	pi(&c, n);
	pi(&c, k);
	struct belt_table tab;
	stk_run(B, ctx, &c, rows, &tab);
	stk_get(B, ctx, bo, out, ob);
	B->table_release(ctx, &tab);
	B->buffer_destroy(ctx, bl);
	B->buffer_destroy(ctx, bo);
}

/* Row r of out (rows of 2k) against the reference over its logits. */
static inline void top_k_compare(const char *who, const float *l, int n, int k, uint32_t r,
				 const float *out)
{
	int ids[64];
	double p[64];
	top_k_ref(l, n, k, ids, p);
	for (int j = 0; j < k; j++) {
		float id = out[j], pj = out[k + j];
		ck_assert_msg(id == (float)ids[j],
			      "%s top_k n %d k %d row %u slot %d: id %.9g, want %d", who, n, k, r,
			      j, (double)id, ids[j]);
		ck_assert_msg(fabs(pj - p[j]) <= 1e-5 * p[j],
			      "%s top_k n %d k %d row %u slot %d (id %d): p %.9g, want %.9g", who,
			      n, k, r, j, ids[j], (double)pj, p[j]);
	}
}

/* 32000 random logits in [-4, 4) of seed's, with ties planted above them
 * (9.5 at 3 indices, 9 at 2, and a tie of the random ones' best) and -inf
 * at index 0 and every 97th. */
static inline void top_k_vocab(float *l, int n, unsigned seed)
{
	for (int i = 0; i < n; i++)
		l[i] = (float)(stk_rand(&seed) & 0xffff) / 8192.0f - 4.0f;
	for (int i = 0; i < n; i += 97)
		l[i] = -INFINITY;
	int best = 1;
	for (int i = 1; i < n; i++)
		best = l[i] > l[best] ? i : best;
	l[n - 2] = l[best];
	int off = (int)(seed % 1000);
	l[31000 - off] = l[7 + off] = l[15000 + off] = 9.5f;
	l[20000 + off] = l[3 + off] = 9.0f;
}

static inline void check_top_k(const struct belt_backend_ops *B, void *ctx)
{
	const int n = 32000;
	float *l = malloc((size_t)n * 3 * 4), out[3 * 128];
	ck_assert(l);
	/* one row of a vocabulary: k 1 and 8 */
	top_k_vocab(l, n, 11);
	static const int ks[] = {1, 8};
	for (int s = 0; s < 2; s++) {
		top_k_run(B, ctx, l, n, ks[s], 1, out);
		top_k_compare(B->name, l, n, ks[s], 0, out);
	}
	/* 2 finite logits of 5, and none: k 4 and 3 */
	const float fin[5] = {-INFINITY, 2.0f, -INFINITY, -1.0f, -INFINITY};
	top_k_run(B, ctx, fin, 5, 4, 1, out);
	top_k_compare(B->name, fin, 5, 4, 0, out);
	ck_assert_msg(out[0] == 1 && out[1] == 3 && out[2] == 0 && out[3] == 2 && out[6] == 0 &&
			      out[7] == 0,
		      "%s top_k of 2 finite: ids %g %g %g %g", B->name, (double)out[0],
		      (double)out[1], (double)out[2], (double)out[3]);
	const float none[5] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
	top_k_run(B, ctx, none, 5, 3, 1, out);
	top_k_compare(B->name, none, 5, 3, 0, out);
	/* a batched table of 3 rows, each its own */
	for (uint32_t r = 0; r < 3; r++)
		top_k_vocab(l + (size_t)r * n, n, 21 + 7 * r);
	top_k_run(B, ctx, l, n, 8, 3, out);
	for (uint32_t r = 0; r < 3; r++)
		top_k_compare(B->name, l + (size_t)r * n, n, 8, r, out + r * 16);
	free(l);
	/* the largest vocabularies: 64 levels, thousands of equal maxima
	 * spread over the row, and -inf ones among them */
	const int nb = 262144;
	float *lb = malloc((size_t)nb * 4), *ob = malloc(128 * 4);
	ck_assert(lb && ob);
	unsigned seed = 5;
	for (int i = 0; i < nb; i++)
		lb[i] = i % 61 == 1 ? -INFINITY : (float)(stk_rand(&seed) % 64) / 8.0f;
	top_k_run(B, ctx, lb, nb, 64, 1, ob);
	top_k_compare(B->name, lb, nb, 64, 0, ob);
	free(lb);
	free(ob);
}

/* prepare refuses cmd with a message naming it and holding want */
static inline void top_k_refused(const struct belt_backend_ops *B, void *ctx, int n, int k,
				 const char *want)
{
	char err[256];
	struct belt_buffer *bl = stk_buf(B, ctx, STK_OFF + (uint64_t)n * 4);
	struct belt_buffer *bo = stk_buf(B, ctx, STK_OFF + 8 * 80);
	struct belt_cmd c = stk_cmd(B, ctx, "top_k", "medusa.1.top_k");
	stk_bind(&c, bl, n, 1);
	bind(&c, bo, STK_OFF, 8 * 80, BELT_TYPE_F32);
	pi(&c, n);
	pi(&c, k);
	struct belt_table tab;
	table_init(&tab, &c, 1, 1, NULL, 1);
	ck_assert_int_eq(B->table_prepare(ctx, &tab, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "medusa.1.top_k") && strstr(err, want) && !strchr(err, '\n'),
		      "%s top_k n %d k %d: %s", B->name, n, k, err);
	B->buffer_destroy(ctx, bl);
	B->buffer_destroy(ctx, bo);
}

static inline void check_top_k_errors(const struct belt_backend_ops *B, void *ctx)
{
	top_k_refused(B, ctx, 100, 0, "2*k");
	top_k_refused(B, ctx, 100, 65, "k 65 (1 to 64");
	top_k_refused(B, ctx, 5, 6, "k 6 (1 to 64, at most n)");
	/* ids past 2^24 would not be exact floats */
	top_k_refused(B, ctx, 16777217, 8, "n 16777217 (at most 16777216");
}

#endif
