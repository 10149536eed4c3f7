/* Attention of a batched causal pass, a block of rows at a time: for one
 * kv head, the query rows of every head of its group against the keys in
 * blocks of KB, scores and weighted values as matrix products through the
 * ISA's gemm routine (keys and values packed once per block for all the
 * queries), with the softmax kept online: a running maximum and sum per
 * query, the output rescaled when the maximum grows. Row r sees the
 * cache slots up to pos + r. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu.h"

#define KB 256	     /* keys per block */
#define QUERIES 48   /* query rows (rows x group heads) per item, about */
#define NR CPU_GEMM_NR
#define NT CPU_GEMM_NT

struct attn_dims {
	int n_head, n_head_kv, head_dim, group, rows; /* rows per item */
	int nq;					      /* queries per item */
	int n_ctx;
};

/* the scores of a key block, or a tree row's n_ctx scores */
static size_t s_floats(const struct attn_dims *d)
{
	size_t a = (size_t)d->nq * KB;
	return a > (size_t)d->n_ctx ? a : (size_t)d->n_ctx;
}

static struct attn_dims dims(const struct cpu_cmd *c)
{
	struct attn_dims d = {.n_head = c->prm[0].i, .n_head_kv = c->prm[1].i,
			      .head_dim = c->prm[2].i, .n_ctx = c->prm[3].i};
	d.group = d.n_head / d.n_head_kv;
	d.rows = QUERIES / d.group > 0 ? QUERIES / d.group : 1;
	d.nq = d.rows * d.group;
	return d;
}

/* Floats of scratch, in the order cpu_run_attn_block lays them out. */
static size_t scratch_floats(const struct attn_dims *d)
{
	size_t hd = (size_t)d->head_dim;
	return (size_t)d->nq * hd    /* queries, scaled */
	       + s_floats(d)	     /* scores, then weights */
	       + (size_t)KB * hd     /* keys: [KB/16][head_dim][16] */
	       + (size_t)KB * hd     /* values: [head_dim/16][KB][16] */
	       + (size_t)d->nq * hd  /* output */
	       + 2 * (size_t)d->nq   /* running max and sum */
	       + hd;		     /* a key or value of a typed cache */
}

bool cpu_attn_block(const struct cpu_cmd *c, int64_t *rows_per_item, size_t *scratch)
{
	struct attn_dims d = dims(c);
	if (d.head_dim % NR || d.head_dim > 1024)
		return false;
	*rows_per_item = d.rows;
	*scratch = scratch_floats(&d) * sizeof(float) + CPU_ALIGN;
	return true;
}

/* queries [nq][hd] x keys -> s [nq][KB], for the nk keys packed in kt */
static void scores(const struct cpu_cmd *c, const struct attn_dims *d, const float *q,
		   const float *kt, int nk, int nq, float *s)
{
	for (int g = 0; g * NR < nk; g++)
		for (int q0 = 0; q0 < nq; q0 += NT)
			c->gemm(kt + (size_t)g * d->head_dim * NR, d->head_dim,
				q + (size_t)q0 * d->head_dim, (size_t)d->head_dim,
				nq - q0 < NT ? nq - q0 : NT, s + (size_t)q0 * KB + g * NR, KB, false);
}

void cpu_run_attn_block(const struct cpu_cmd *c, struct cpu_worker *w,
			const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	struct attn_dims d = dims(c);
	int hd = d.head_dim;
	size_t kv_dim = (size_t)d.n_head_kv * hd, q_dim = (size_t)d.n_head * hd;
	float scale = c->prm[4].f;
	float *q = (float *)(((uintptr_t)w->scratch + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN);
	float *s = q + (size_t)d.nq * hd;
	float *kt = s + s_floats(&d);
	float *vp = kt + (size_t)KB * hd;
	float *o = vp + (size_t)KB * hd;
	float *mx = o + (size_t)d.nq * hd, *sum = mx + d.nq;
	float *tmp = sum + d.nq;
	for (int64_t item = i0; item < i1; item++) {
		int hk = (int)(item % d.n_head_kv);
		uint32_t r0 = ps->row0 + (uint32_t)(item / d.n_head_kv) * (uint32_t)d.rows;
		uint32_t r1 = r0 + (uint32_t)d.rows;
		if (r1 > ps->row0 + ps->n_rows)
			r1 = ps->row0 + ps->n_rows;
		int nrow = (int)(r1 - r0), nq = nrow * d.group;
		if (ps->n_rows <= CPU_FEW_ROWS || ps->seq_pos) {
			/* a verification of few drafts: each row attends as
			 * one-token decode does, so its pick is decode's (a
			 * tree's row over its ancestors); the rows of a table
			 * of sequences each see their own */
			for (int j = 0; j < nq; j++)
				cpu_attend_row_head(c, w, ps, r0 + (uint32_t)(j / d.group),
						    hk * d.group + j % d.group);
			continue;
		}
		if (ps->parent) {
			/* a tree: each row's own keys (its ancestors) */
			for (int j = 0; j < nq; j++)
				cpu_attend_tree_head(c, ps, r0 + (uint32_t)(j / d.group),
						     hk * d.group + j % d.group, s, tmp);
			continue;
		}
		/* query j: row r0 + j / group, head hk * group + j % group */
		for (int j = 0; j < nq; j++) {
			const float *src = (const float *)c->p[0] + (size_t)(r0 + j / d.group) * q_dim +
					   (size_t)(hk * d.group + j % d.group) * hd;
			for (int e = 0; e < hd; e++)
				q[(size_t)j * hd + e] = src[e] * scale;
			mx[j] = -INFINITY;
			sum[j] = 0.0f;
		}
		memset(o, 0, (size_t)nq * hd * sizeof *o);
		uint32_t n_kv = ps->pos + r1; /* the last row's keys */
		for (uint32_t t0 = 0; t0 < n_kv; t0 += KB) {
			int nk = n_kv - t0 < KB ? (int)(n_kv - t0) : KB;
			int nkp = (nk + NR - 1) / NR * NR;
			/* pack keys k-major in groups of 16, values by 16 dims */
			for (int t = 0; t < nkp; t++) {
				float *kg = kt + (size_t)(t / NR) * hd * NR + t % NR;
				float *vg = vp + (size_t)t * NR;
				if (t >= nk) {
					for (int e = 0; e < hd; e++)
						kg[(size_t)e * NR] = vg[(size_t)(e / NR) * KB * NR + e % NR] = 0.0f;
					continue;
				}
				size_t off = (size_t)hk * hd;
				const float *k = cpu_kv_get(c->kv_type[0], c->p[1], t0 + t, kv_dim, off,
							    (size_t)hd, c->f16, tmp);
				for (int e = 0; e < hd; e++)
					kg[(size_t)e * NR] = k[e];
				const float *v = cpu_kv_get(c->kv_type[1], c->p[2], t0 + t, kv_dim, off,
							    (size_t)hd, c->f16, tmp);
				for (int e = 0; e < hd; e++)
					vg[(size_t)(e / NR) * KB * NR + e % NR] = v[e];
			}
			scores(c, &d, q, kt, nk, nq, s);
			for (int j = 0; j < nq; j++) {
				float *sj = s + (size_t)j * KB;
				/* row r sees slots up to pos + r */
				int64_t lim = (int64_t)ps->pos + r0 + j / d.group + 1 - t0;
				int vis = lim < 0 ? 0 : lim > nk ? nk : (int)lim;
				float m = mx[j];
				for (int t = 0; t < vis; t++)
					m = sj[t] > m ? sj[t] : m;
				float add = vis ? c->exp_sum(sj, vis, m) : 0.0f;
				for (int t = vis; t < nkp; t++)
					sj[t] = 0.0f;
				float resc = mx[j] == -INFINITY ? 0.0f : expf(mx[j] - m);
				if (resc != 1.0f)
					for (int e = 0; e < hd; e++)
						o[(size_t)j * hd + e] *= resc;
				sum[j] = sum[j] * resc + add;
				mx[j] = m;
			}
			/* o += weights x values, 16 dims at a time */
			for (int g = 0; g < hd / NR; g++)
				for (int q0 = 0; q0 < nq; q0 += NT)
					c->gemm(vp + (size_t)g * KB * NR, nkp, s + (size_t)q0 * KB, KB,
						nq - q0 < NT ? nq - q0 : NT,
						o + (size_t)q0 * hd + g * NR, (size_t)hd, true);
		}
		for (int j = 0; j < nq; j++) {
			float *dst = (float *)c->p[3] + (size_t)(r0 + j / d.group) * q_dim +
				     (size_t)(hk * d.group + j % d.group) * hd;
			float inv = 1.0f / sum[j];
			for (int e = 0; e < hd; e++)
				dst[e] = o[(size_t)j * hd + e] * inv;
		}
	}
}
