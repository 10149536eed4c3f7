/* The CPU kernels: one table entry per op and weight type, and each op as
 * it reads in doc/ops.md. prepare checks a command's bindings against its
 * params once and says how the work splits (rows, heads, elements; small
 * ops are one item); run does items [i0, i1) for one position. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/types.h"
#include "cpu.h"

static const int wtype_of[CPU_W_COUNT] = {
	[CPU_W_F32] = BELT_TYPE_F32,
	[CPU_W_F16] = BELT_TYPE_F16,
	[CPU_W_BF16] = BELT_TYPE_BF16,
	[CPU_W_Q8_0] = BELT_TYPE_Q8_0,
	[CPU_W_Q4_0] = BELT_TYPE_Q4_0,
	[CPU_W_Q4_K] = BELT_TYPE_Q4_K,
	[CPU_W_Q6_K] = BELT_TYPE_Q6_K,
	[CPU_W_Q4_1] = BELT_TYPE_Q4_1,
	[CPU_W_Q5_0] = BELT_TYPE_Q5_0,
	[CPU_W_Q5_1] = BELT_TYPE_Q5_1,
	[CPU_W_IQ4_NL] = BELT_TYPE_IQ4_NL,
	[CPU_W_Q2_K] = BELT_TYPE_Q2_K,
	[CPU_W_Q3_K] = BELT_TYPE_Q3_K,
	[CPU_W_Q5_K] = BELT_TYPE_Q5_K,
	[CPU_W_IQ4_XS] = BELT_TYPE_IQ4_XS,
};

static const char *label(const struct belt_cmd *cmd)
{
	return cmd->label ? cmd->label : cmd->kernel->op;
}

/* Binding i must hold at least `bytes`. */
static int need(const struct belt_cmd *cmd, int i, const char *what,
		uint64_t bytes, char *err, size_t errsz)
{
	if (cmd->bind[i].size >= bytes)
		return 0;
	return belt_errf(err, errsz,
			 "%s: %s binding %d (%s) holds %" PRIu64
			 " bytes, needs %" PRIu64,
			 label(cmd), cmd->kernel->op, i, what,
			 cmd->bind[i].size, bytes);
}

/* Integer param i must be at least min. */
static int need_int(const struct belt_cmd *cmd, int i, const char *name,
		    int32_t min, char *err, size_t errsz)
{
	if (cmd->param[i].i >= min)
		return 0;
	return belt_errf(err, errsz, "%s: %s param %s is %d, must be >= %d",
			 label(cmd), cmd->kernel->op, name, cmd->param[i].i,
			 min);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* ---- embed: out = dequant(W row token_ids[pos]) ---- */

static void dequant_row(enum cpu_wtype w, const void *row, float *out, int n)
{
	switch (w) {
	case CPU_W_F32:
		memcpy(out, row, (size_t)n * sizeof(float));
		break;
	case CPU_W_F16:
		for (int i = 0; i < n; i++)
			out[i] = cpu_fp16(((const uint16_t *)row)[i]);
		break;
	case CPU_W_BF16:
		for (int i = 0; i < n; i++)
			out[i] = cpu_bf16(((const uint16_t *)row)[i]);
		break;
	case CPU_W_Q8_0:
		for (int b = 0; b < n / CPU_QK; b++) {
			const struct belt_block_q8_0 *blk =
				(const struct belt_block_q8_0 *)row + b;
			float d = cpu_fp16(blk->d);
			for (int j = 0; j < CPU_QK; j++)
				out[b * CPU_QK + j] = d * (float)blk->qs[j];
		}
		break;
	case CPU_W_Q4_0:
		for (int b = 0; b < n / CPU_QK; b++) {
			const struct belt_block_q4_0 *blk =
				(const struct belt_block_q4_0 *)row + b;
			float d = cpu_fp16(blk->d);
			for (int j = 0; j < CPU_QK / 2; j++) {
				out[b * CPU_QK + j] =
					d * (float)((blk->qs[j] & 15) - 8);
				out[b * CPU_QK + j + 16] =
					d * (float)((blk->qs[j] >> 4) - 8);
			}
		}
		break;
#define BLOCKS(qk, type, dequant)                                       \
	for (int b = 0; b < n / (qk); b++)                              \
		dequant((const struct type *)row + b, out + b * (qk));  \
	break
	case CPU_W_Q4_K: BLOCKS(CPU_QK_K, cpu_block_q4_k, cpu_dequant_q4_k);
	case CPU_W_Q6_K: BLOCKS(CPU_QK_K, cpu_block_q6_k, cpu_dequant_q6_k);
	case CPU_W_Q4_1: BLOCKS(CPU_QK, cpu_block_q4_1, cpu_dequant_q4_1);
	case CPU_W_Q5_0: BLOCKS(CPU_QK, cpu_block_q5_0, cpu_dequant_q5_0);
	case CPU_W_Q5_1: BLOCKS(CPU_QK, cpu_block_q5_1, cpu_dequant_q5_1);
	case CPU_W_IQ4_NL: BLOCKS(CPU_QK, cpu_block_iq4_nl, cpu_dequant_iq4_nl);
	case CPU_W_Q2_K: BLOCKS(CPU_QK_K, cpu_block_q2_k, cpu_dequant_q2_k);
	case CPU_W_Q3_K: BLOCKS(CPU_QK_K, cpu_block_q3_k, cpu_dequant_q3_k);
	case CPU_W_Q5_K: BLOCKS(CPU_QK_K, cpu_block_q5_k, cpu_dequant_q5_k);
	case CPU_W_IQ4_XS: BLOCKS(CPU_QK_K, cpu_block_iq4_xs, cpu_dequant_iq4_xs);
#undef BLOCKS
	case CPU_W_COUNT:
		break;
	}
}

void cpu_dequant_range(const struct cpu_cmd *c, int64_t row, int j0, int j1, float *out)
{
	const char *w = (const char *)c->p[0] + (size_t)row * c->row_bytes;
	w += belt_type_row_bytes(wtype_of[c->w], (uint64_t)j0);
	if (c->w == CPU_W_F16 && c->f16)
		c->f16((const uint16_t *)w, out, j1 - j0);
	else
		dequant_row(c->w, w, out, j1 - j0);
}

static void run_embed(const struct cpu_cmd *c, struct cpu_worker *w,
		      const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	int n = c->prm[0].i;
	for (int64_t i = i0; i < i1; i++) {
		uint32_t r = ps->row0 + (uint32_t)i;
		struct belt_row_at at;
		cpu_row_at(c, ps, r, &at);
		int32_t id = ((const int32_t *)c->p[1])[at.token];
		float *out = (float *)c->p[2] + (size_t)r * n;
		if (id < 0 || id >= c->n_rows)
			memset(out, 0, (size_t)n * sizeof(float));
		else
			dequant_row(c->w, (const char *)c->p[0] + (size_t)id * c->row_bytes,
				    out, n);
	}
}

/* W binding 0 must be a whole number of rows of k elements. */
static int weight_rows(const struct belt_cmd *cmd, enum cpu_wtype w, int k,
		       size_t *row_bytes, char *err, size_t errsz)
{
	int t = wtype_of[w];
	if (cmd->bind[0].type != t)
		return belt_errf(err, errsz,
				 "%s: %s weight binding has type %s, the "
				 "kernel takes %s",
				 label(cmd), cmd->kernel->op,
				 belt_type_name(cmd->bind[0].type),
				 belt_type_name(t));
	*row_bytes = belt_type_row_bytes(t, (uint64_t)k);
	if (!*row_bytes)
		return belt_errf(err, errsz,
				 "%s: %s row length %d is not a multiple of "
				 "the %s block (%zu)",
				 label(cmd), cmd->kernel->op, k,
				 belt_type_name(t), belt_type_block(t));
	return 0;
}

static int prep_embed(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
		      struct cpu_cmd *c, struct cpu_prep *pr, char *err,
		      size_t errsz)
{
	(void)ctx;
	const struct cpu_op *op = cmd->kernel->impl;
	if (need_int(cmd, 0, "n", 1, err, errsz) ||
	    weight_rows(cmd, op->w, cmd->param[0].i, &c->row_bytes, err,
			errsz))
		return -1;
	int n = cmd->param[0].i;
	c->w = op->w;
	c->n_rows = (int64_t)(cmd->bind[0].size / c->row_bytes);
	if (cmd->bind[0].ne[1] > 0 && cmd->bind[0].ne[1] < c->n_rows)
		c->n_rows = cmd->bind[0].ne[1];
	if (need(cmd, 2, "out", (uint64_t)n * 4, err, errsz))
		return -1;
	pr->max_pos = cmd->bind[1].size / 4;
	return 0;
}

/* ---- rmsnorm: out = w * x / sqrt(mean(x^2) + eps) ---- */

static void rmsnorm_row(const struct cpu_cmd *c, const float *x, float *out)
{
	int n = c->prm[0].i;
	float eps = c->prm[1].f;
	const float *g = c->p[1];
	float acc[8] = {0};
	int i = 0;
	for (; i + 8 <= n; i += 8)
		for (int l = 0; l < 8; l++)
			acc[l] += x[i + l] * x[i + l];
	for (int l = 0; i < n; i++, l++)
		acc[l] += x[i] * x[i];
	float ss = ((acc[0] + acc[4]) + (acc[2] + acc[6])) +
		   ((acc[1] + acc[5]) + (acc[3] + acc[7]));
	ss = ss / (float)n + eps;
	float scale = 1.0f / sqrtf(ss);
	for (i = 0; i < n; i++)
		out[i] = g[i] * (scale * x[i]);
}

static void run_rmsnorm(const struct cpu_cmd *c, struct cpu_worker *w,
			const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	size_t n = (size_t)c->prm[0].i;
	for (int64_t i = i0; i < i1; i++) {
		size_t r = ps->row0 + (size_t)i;
		rmsnorm_row(c, (const float *)c->p[0] + r * n, (float *)c->p[2] + r * n);
	}
}

static int prep_n3(const struct belt_cmd *cmd, char *err, size_t errsz)
{
	if (need_int(cmd, 0, "n", 1, err, errsz))
		return -1;
	uint64_t b = (uint64_t)cmd->param[0].i * 4;
	static const char *const names[3] = {"in 0", "in 1", "out"};
	for (int i = 0; i < 3; i++)
		if (need(cmd, i, names[i], b, err, errsz))
			return -1;
	return 0;
}

static int prep_rmsnorm(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
			struct cpu_cmd *c, struct cpu_prep *pr, char *err,
			size_t errsz)
{
	(void)ctx;
	(void)c;
	(void)pr;
	return prep_n3(cmd, err, errsz);
}

/* ---- matvec: y[r] = W[r] . x ---- */

static void run_matvec(const struct cpu_cmd *c, struct cpu_worker *w,
		       const struct cpu_pass *ps, int64_t r0, int64_t r1)
{
	(void)ps;
	int k = c->prm[0].i;
	const void *x = c->p[1];
	if (c->quant) {
		/* each thread quantizes x for itself, once per command (or
		 * not at all when the previous command's x is the same):
		 * cheaper than making the others wait for one copy */
		if (w->xq_seq != w->seq) {
			if (!(c->reuse_xq && w->xq_seq == w->prev_seq))
				c->quant(x, w->scratch, k);
			w->xq_seq = w->seq;
		}
		x = w->scratch;
	}
	c->rows_fn(c->p[0], c->row_bytes, x, c->p[2], r0, r1, k);
}

static int prep_matvec(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
		       struct cpu_cmd *c, struct cpu_prep *pr, char *err,
		       size_t errsz)
{
	const struct cpu_op *op = cmd->kernel->impl;
	if (need_int(cmd, 0, "k", 1, err, errsz) ||
	    need_int(cmd, 1, "m", 1, err, errsz) ||
	    weight_rows(cmd, op->w, cmd->param[0].i, &c->row_bytes, err,
			errsz))
		return -1;
	int k = cmd->param[0].i, m = cmd->param[1].i;
	if (need(cmd, 0, "W", (uint64_t)m * c->row_bytes, err, errsz) ||
	    need(cmd, 1, "x", (uint64_t)k * 4, err, errsz) ||
	    need(cmd, 2, "y", (uint64_t)m * 4, err, errsz))
		return -1;
	pr->fixed_len = true;
	pr->len = m;
	c->w = op->w;
	if (c->rows > 1) {
		/* batched: a matrix product over weight tiles (gemm.c) */
		c->run = cpu_run_matmul;
		c->gemm = ctx->isa->gemm;
		c->f16 = ctx->isa->f16;
		c->tile = cpu_matmul_tile(k);
		c->rows_fn = ctx->isa->rows[op->w];
		if (cpu_w_quantized(op->w) && ctx->isa->quantize_x)
			c->quant = ctx->isa->quantize_x;
		if (c->quant && cpu_matmul_int8(op->w))
			c->gemm_i8 = ctx->isa->gemm_i8;
		pr->scratch = cpu_matmul_scratch(k, c->tile, c->rows, c->quant != NULL);
		pr->align = c->tile;
		pr->item_bytes = SIZE_MAX; /* enough chunks to share */
		return 0;
	}
	c->rows_fn = ctx->isa->rows[op->w];
	if (cpu_w_quantized(op->w) && ctx->isa->quantize_x) {
		c->quant = ctx->isa->quantize_x;
		pr->scratch = cpu_xq_bytes(k);
	}
	pr->align = 16; /* a cache line of y per thread */
	pr->item_bytes = c->row_bytes;
	return 0;
}

/* ---- mixtures of experts ---- */

/* softmax over the router's n_expert logits, the n_used largest
 * probabilities (the lowest index first among equals), renormalized to
 * sum 1 (llama.cpp's floor of 2^-14 on the sum) */
static void run_moe_route(const struct cpu_cmd *c, struct cpu_worker *w,
			  const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	int ne = c->prm[0].i, nu = c->prm[1].i;
	for (int64_t i = i0; i < i1; i++) {
		size_t r = ps->row0 + (size_t)i;
		const float *l = (const float *)c->p[0] + r * (size_t)ne;
		float *ids = (float *)c->p[1] + r * (size_t)nu, *wt = (float *)c->p[2] + r * (size_t)nu;
		float mx = -INFINITY, sum = 0.0f, p[256];
		for (int e = 0; e < ne; e++)
			mx = l[e] > mx ? l[e] : mx;
		for (int e = 0; e < ne; e++)
			sum += p[e] = expf(l[e] - mx);
		for (int e = 0; e < ne; e++)
			p[e] /= sum;
		float tot = 0.0f;
		for (int j = 0; j < nu; j++) {
			int best = -1;
			for (int e = 0; e < ne; e++) {
				bool taken = false;
				for (int q = 0; q < j; q++)
					taken |= (int)ids[q] == e;
				if (!taken && (best < 0 || p[e] > p[best]))
					best = e;
			}
			ids[j] = (float)best;
			wt[j] = p[best];
			tot += p[best];
		}
		tot = tot > 6.103515625e-5f ? tot : 6.103515625e-5f;
		for (int j = 0; j < nu; j++)
			wt[j] /= tot;
	}
}

static int prep_moe_route(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
			  struct cpu_cmd *c, struct cpu_prep *pr, char *err, size_t errsz)
{
	(void)ctx, (void)c, (void)pr;
	if (need_int(cmd, 0, "n_expert", 1, err, errsz) || need_int(cmd, 1, "n_used", 1, err, errsz))
		return -1;
	if (cmd->param[0].i > 256 || cmd->param[1].i > cmd->param[0].i)
		return belt_errf(err, errsz, "%s: moe_route n_expert %d (at most 256) and n_used %d "
				 "(at most n_expert)", label(cmd), cmd->param[0].i, cmd->param[1].i);
	return 0;
}

/* item i: row i / n_used, slot i % n_used: its expert's m rows times x
 * (the row's x, or its slot of x) */
static void run_moe_matvec(const struct cpu_cmd *c, struct cpu_worker *w,
			   const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	int k = c->prm[0].i, m = c->prm[1].i, ne = c->prm[2].i, nu = c->prm[3].i;
	bool slots = !strcmp(c->src->kernel->op, "moe_matvec_slots");
	for (int64_t i = i0; i < i1; i++) {
		size_t r = ps->row0 + (size_t)(i / nu), j = (size_t)(i % nu);
		int e = (int)((const float *)c->p[2])[r * (size_t)nu + j];
		float *y = (float *)c->p[3] + (r * (size_t)nu + j) * (size_t)m;
		if (e < 0 || e >= ne) { /* not an expert: nothing to add */
			memset(y, 0, (size_t)m * sizeof *y);
			continue;
		}
		const float *x = (const float *)c->p[1] + (slots ? r * (size_t)nu + j : r) * (size_t)k;
		const void *xv = x;
		if (c->quant) {
			c->quant(x, w->scratch, k);
			xv = w->scratch;
		}
		c->rows_fn((const char *)c->p[0] + (size_t)e * (size_t)m * c->row_bytes, c->row_bytes,
			   xv, y, 0, m, k);
	}
}

static int prep_moe_matvec(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
			   struct cpu_cmd *c, struct cpu_prep *pr, char *err, size_t errsz)
{
	const struct cpu_op *op = cmd->kernel->impl;
	if (need_int(cmd, 0, "k", 1, err, errsz) || need_int(cmd, 1, "m", 1, err, errsz) ||
	    need_int(cmd, 2, "n_expert", 1, err, errsz) || need_int(cmd, 3, "n_used", 1, err, errsz) ||
	    weight_rows(cmd, op->w, cmd->param[0].i, &c->row_bytes, err, errsz))
		return -1;
	uint64_t rows = (uint64_t)cmd->param[1].i * (uint64_t)cmd->param[2].i;
	if (need(cmd, 0, "W", rows * c->row_bytes, err, errsz))
		return -1;
	c->w = op->w;
	c->rows_fn = ctx->isa->rows[op->w];
	if (cpu_w_quantized(op->w) && ctx->isa->quantize_x) {
		c->quant = ctx->isa->quantize_x;
		pr->scratch = cpu_xq_bytes(cmd->param[0].i);
	}
	pr->len = cmd->param[3].i; /* a slot per item, per row */
	pr->align = 1;
	pr->item_bytes = SIZE_MAX;
	return 0;
}

static void run_moe_combine(const struct cpu_cmd *c, struct cpu_worker *w,
			    const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	size_t n = (size_t)c->prm[0].i, nu = (size_t)c->prm[1].i;
	for (int64_t i = i0; i < i1; i++) {
		size_t r = ps->row0 + (size_t)i;
		const float *y = (const float *)c->p[0] + r * nu * n;
		const float *wt = (const float *)c->p[1] + r * nu;
		float *out = (float *)c->p[2] + r * n;
		for (size_t d = 0; d < n; d++) {
			float s = 0.0f;
			for (size_t j = 0; j < nu; j++)
				s += wt[j] * y[j * n + d];
			out[d] = s;
		}
	}
}

static int prep_moe_combine(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
			    struct cpu_cmd *c, struct cpu_prep *pr, char *err, size_t errsz)
{
	(void)ctx, (void)c, (void)pr;
	return need_int(cmd, 0, "n", 1, err, errsz) || need_int(cmd, 1, "n_used", 1, err, errsz)
		       ? -1 : 0;
}

/* The caches at bindings i and i + 1 (K, V), rows of n values: their
 * types (checked by belt_cmd_check, which also saw that each holds a row)
 * and the slots both hold (c->kv_slots: position p lies in slot p mod
 * kv_slots, a sliding-window layer's ring when fewer than the context's;
 * doc/ops.md), which bound the positions a reader of every slot may run
 * at. Returns 0 (it cannot fail), for use in the prepares' chains of
 * checks. */
static int cache_rows(const struct belt_cmd *cmd, struct cpu_cmd *c, int i, uint64_t n,
		      struct cpu_prep *pr)
{
	c->kv_type[0] = cmd->bind[i].type;
	c->kv_type[1] = cmd->bind[i + 1].type;
	uint64_t slots = min_u64(cmd->bind[i].size / belt_type_row_bytes(c->kv_type[0], n),
				 cmd->bind[i + 1].size / belt_type_row_bytes(c->kv_type[1], n));
	c->kv_slots = slots < UINT32_MAX ? (uint32_t)slots : UINT32_MAX;
	bool reads = !!(belt_op_contract(cmd->kernel->op)->bind[i].access & BELT_ACCESS_R);
	if (reads)
		pr->max_pos = slots;
	return 0;
}

/* ---- rope_kv: rotate q and k at pos, store k and v in the caches ---- */

static void rotate(float *v, int n_heads, int head_dim, int rope_dim,
		   const float *fcr, const float *fci)
{
	for (int h = 0; h < n_heads; h++) {
		float *x = v + (size_t)h * head_dim;
		for (int i = 0; i < rope_dim; i += 2) {
			float x0 = x[i], x1 = x[i + 1];
			x[i] = x0 * fcr[i / 2] - x1 * fci[i / 2];
			x[i + 1] = x0 * fci[i / 2] + x1 * fcr[i / 2];
		}
	}
}

#define ROPE_MAX_PAIRS 512

static void run_rope_kv(const struct cpu_cmd *c, struct cpu_worker *w,
			const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	int n_head = c->prm[0].i, n_head_kv = c->prm[1].i;
	int head_dim = c->prm[2].i, rope_dim = c->prm[3].i;
	size_t kv_dim = (size_t)n_head_kv * head_dim;
	size_t q_dim = (size_t)n_head * head_dim;
	for (int64_t i = i0; i < i1; i++) {
		uint32_t r = ps->row0 + (uint32_t)i;
		struct belt_row_at at;
		cpu_row_at(c, ps, r, &at);
		float fcr[ROPE_MAX_PAIRS], fci[ROPE_MAX_PAIRS];
		for (int j = 0; j < rope_dim / 2; j++) {
			/* as llama2.c's run.c: float angle, cosf/sinf */
			float val = (float)at.position * c->freq[j];
			fcr[j] = cosf(val);
			fci[j] = sinf(val);
		}
		float *q = (float *)c->p[0] + r * q_dim, *k = (float *)c->p[1] + r * kv_dim;
		rotate(q, n_head, head_dim, rope_dim, fcr, fci);
		rotate(k, n_head_kv, head_dim, rope_dim, fcr, fci);
		uint32_t slot = cpu_kv_slot(c, ps, r, &at);
		cpu_kv_put(c->kv_type[0], c->p[3], slot, kv_dim, k);
		cpu_kv_put(c->kv_type[1], c->p[4], slot, kv_dim, (const float *)c->p[2] + r * kv_dim);
	}
}

static int prep_heads(const struct belt_cmd *cmd, char *err, size_t errsz)
{
	if (need_int(cmd, 0, "n_head", 1, err, errsz) ||
	    need_int(cmd, 1, "n_head_kv", 1, err, errsz) ||
	    need_int(cmd, 2, "head_dim", 1, err, errsz))
		return -1;
	if (cmd->param[0].i % cmd->param[1].i)
		return belt_errf(err, errsz,
				 "%s: %s n_head %d is not a multiple of "
				 "n_head_kv %d",
				 label(cmd), cmd->kernel->op, cmd->param[0].i,
				 cmd->param[1].i);
	return 0;
}

static int prep_rope_kv(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
			struct cpu_cmd *c, struct cpu_prep *pr, char *err,
			size_t errsz)
{
	(void)ctx;
	if (prep_heads(cmd, err, errsz) ||
	    need_int(cmd, 3, "rope_dim", 0, err, errsz))
		return -1;
	int head_dim = cmd->param[2].i, rope_dim = cmd->param[3].i;
	float base = cmd->param[4].f;
	if (rope_dim % 2 || rope_dim > head_dim || rope_dim / 2 > ROPE_MAX_PAIRS)
		return belt_errf(err, errsz,
				 "%s: rope_kv rope_dim %d must be even and "
				 "at most head_dim %d (and %d)",
				 label(cmd), rope_dim, head_dim,
				 2 * ROPE_MAX_PAIRS);
	if (!(base > 0.0f))
		return belt_errf(err, errsz,
				 "%s: rope_kv base %g must be positive",
				 label(cmd), (double)base);
	uint64_t q_bytes = (uint64_t)cmd->param[0].i * head_dim * 4;
	uint64_t kv_bytes = (uint64_t)cmd->param[1].i * head_dim * 4;
	if (need(cmd, 0, "q", q_bytes, err, errsz) ||
	    need(cmd, 1, "k", kv_bytes, err, errsz) ||
	    need(cmd, 2, "v", kv_bytes, err, errsz) ||
	    cache_rows(cmd, c, 3, (uint64_t)cmd->param[1].i * head_dim, pr))
		return -1;
	float *freq = malloc((size_t)(rope_dim / 2 + 1) * sizeof(float));
	if (!freq)
		return belt_errf(err, errsz, "%s: out of memory", label(cmd));
	for (int i = 0; i < rope_dim; i += 2)
		freq[i / 2] = 1.0f / powf(base, (float)i / (float)rope_dim);
	c->freq = freq;
	c->owned = freq;
	return 0;
}

/* ---- rope, rope_ff: rotate each head of x at the row's position ---- */

/* NORM rotates the pairs (2i, 2i+1), NEOX the pairs (i, i + rope_dim/2);
 * c->freq holds each pair's angle per position (base^(-2i/rope_dim),
 * times freq_scale, divided by the pair's factor for rope_ff). */
static void run_rope(const struct cpu_cmd *c, struct cpu_worker *w,
		     const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	int n_head = c->prm[0].i, head_dim = c->prm[1].i, rope_dim = c->prm[2].i;
	int half = rope_dim / 2, step = c->prm[4].i ? 1 : 2, off = c->prm[4].i ? half : 1;
	size_t dim = (size_t)n_head * head_dim;
	for (int64_t i = i0; i < i1; i++) {
		uint32_t r = ps->row0 + (uint32_t)i;
		struct belt_row_at at;
		cpu_row_at(c, ps, r, &at);
		float fcr[ROPE_MAX_PAIRS], fci[ROPE_MAX_PAIRS];
		for (int j = 0; j < half; j++) {
			float val = (float)at.position * c->freq[j];
			fcr[j] = cosf(val);
			fci[j] = sinf(val);
		}
		float *x = (float *)c->p[0] + r * dim;
		for (int h = 0; h < n_head; h++, x += head_dim)
			for (int j = 0; j < half; j++) {
				float *a = x + j * step, *b = a + off;
				float x0 = *a, x1 = *b;
				*a = x0 * fcr[j] - x1 * fci[j];
				*b = x0 * fci[j] + x1 * fcr[j];
			}
	}
}

static int prep_rope(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
		     struct cpu_cmd *c, struct cpu_prep *pr, char *err, size_t errsz)
{
	(void)ctx;
	(void)pr;
	if (need_int(cmd, 0, "n_head", 1, err, errsz) ||
	    need_int(cmd, 1, "head_dim", 1, err, errsz) ||
	    need_int(cmd, 2, "rope_dim", 0, err, errsz))
		return -1;
	int head_dim = cmd->param[1].i, rope_dim = cmd->param[2].i, neox = cmd->param[4].i;
	float base = cmd->param[3].f, scale = cmd->param[5].f;
	if (rope_dim % 2 || rope_dim > head_dim || rope_dim / 2 > ROPE_MAX_PAIRS)
		return belt_errf(err, errsz,
				 "%s: %s rope_dim %d must be even and at most head_dim %d (and %d)",
				 label(cmd), cmd->kernel->op, rope_dim, head_dim, 2 * ROPE_MAX_PAIRS);
	if (!(base > 0.0f) || !(scale > 0.0f) || (neox != 0 && neox != 1))
		return belt_errf(err, errsz,
				 "%s: %s base %g and freq_scale %g must be positive, neox 0 or 1 (is %d)",
				 label(cmd), cmd->kernel->op, (double)base, (double)scale, neox);
	const float *ff = NULL;
	if (cmd->n_bind > 1) {
		if (cmd->bind[1].type != BELT_TYPE_F32 ||
		    need(cmd, 1, "factors", (uint64_t)rope_dim / 2 * 4, err, errsz))
			return belt_errf(err, errsz, "%s: rope_ff factors: expected %d F32 values",
					 label(cmd), rope_dim / 2);
		ff = c->p[1];
	}
	float *freq = malloc((size_t)(rope_dim / 2 + 1) * sizeof(float));
	if (!freq)
		return belt_errf(err, errsz, "%s: out of memory", label(cmd));
	for (int i = 0; i < rope_dim; i += 2) {
		freq[i / 2] = 1.0f / powf(base, (float)i / (float)rope_dim) * scale;
		if (ff)
			freq[i / 2] /= ff[i / 2];
	}
	c->freq = freq;
	c->owned = freq;
	return 0;
}

/* ---- kv_store: k and v rows into the caches' slot for the row ---- */

static void run_kv_store(const struct cpu_cmd *c, struct cpu_worker *w,
			 const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	size_t n = (size_t)c->prm[0].i;
	for (int64_t i = i0; i < i1; i++) {
		uint32_t r = ps->row0 + (uint32_t)i;
		struct belt_row_at at;
		cpu_row_at(c, ps, r, &at);
		uint32_t slot = cpu_kv_slot(c, ps, r, &at);
		cpu_kv_put(c->kv_type[0], c->p[2], slot, n, (const float *)c->p[0] + r * n);
		cpu_kv_put(c->kv_type[1], c->p[3], slot, n, (const float *)c->p[1] + r * n);
	}
}

static int prep_kv_store(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
			 struct cpu_cmd *c, struct cpu_prep *pr, char *err, size_t errsz)
{
	(void)ctx;
	if (need_int(cmd, 0, "n", 1, err, errsz))
		return -1;
	cache_rows(cmd, c, 2, (uint64_t)cmd->param[0].i, pr);
	return 0;
}

/* ---- bias_add: x += b on every row ---- */

static void run_bias_add(const struct cpu_cmd *c, struct cpu_worker *w,
			 const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	size_t n = (size_t)c->prm[0].i;
	const float *b = c->p[1];
	for (int64_t i = i0; i < i1; i++) {
		float *x = (float *)c->p[0] + (ps->row0 + (size_t)i) * n;
		for (size_t j = 0; j < n; j++)
			x[j] += b[j];
	}
}

/* ---- rmsnorm_heads: each head of x over its head_dim values, times w ---- */

static void run_rmsnorm_heads(const struct cpu_cmd *c, struct cpu_worker *w,
			      const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	size_t n_head = (size_t)c->prm[0].i, hd = (size_t)c->prm[1].i;
	float eps = c->prm[2].f;
	const float *g = c->p[1];
	for (int64_t i = i0; i < i1; i++) {
		float *x = (float *)c->p[0] + (ps->row0 + (size_t)i) * n_head * hd;
		for (size_t h = 0; h < n_head; h++, x += hd) {
			float ss = 0.0f;
			for (size_t j = 0; j < hd; j++)
				ss += x[j] * x[j];
			float scale = 1.0f / sqrtf(ss / (float)hd + eps);
			for (size_t j = 0; j < hd; j++)
				x[j] = g[j] * (scale * x[j]);
		}
	}
}

/* bias_add and rmsnorm_heads: a weight vector of F32 at binding 1 */
static int prep_vec_weight(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
			   struct cpu_cmd *c, struct cpu_prep *pr, char *err, size_t errsz)
{
	(void)ctx;
	(void)c;
	(void)pr;
	bool heads = cmd->n_param == 3;
	if (need_int(cmd, 0, heads ? "n_head" : "n", 1, err, errsz) ||
	    (heads && need_int(cmd, 1, "head_dim", 1, err, errsz)))
		return -1;
	uint64_t n = (uint64_t)cmd->param[heads ? 1 : 0].i;
	if (cmd->bind[1].type != BELT_TYPE_F32 || cmd->bind[1].size < n * 4)
		return belt_errf(err, errsz, "%s: %s weight: expected %" PRIu64 " F32 values",
				 label(cmd), cmd->kernel->op, n);
	return 0;
}

/* ---- scale, gelu_mul: Gemma's elementwise ops ---- */

static void run_scale(const struct cpu_cmd *c, struct cpu_worker *w,
		      const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	float *x = (float *)c->p[0] + (int64_t)ps->row0 * c->prm[0].i, v = c->prm[1].f;
	for (int64_t i = i0; i < i1; i++)
		x[i] *= v;
}

/* GELU with the tanh approximation, in float (llama.cpp's exact path) */
static float gelu_tanh(float x)
{
	return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * x * (1.0f + 0.044715f * x * x)));
}

static void run_gelu_mul(const struct cpu_cmd *c, struct cpu_worker *w,
			 const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	int64_t o = (int64_t)ps->row0 * c->prm[0].i;
	const float *g = (const float *)c->p[0] + o, *u = (const float *)c->p[1] + o;
	float *out = (float *)c->p[2] + o;
	for (int64_t i = i0; i < i1; i++)
		out[i] = gelu_tanh(g[i]) * u[i];
}

/* scale: x of n per row; s a float */
static int prep_x_float(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
			struct cpu_cmd *c, struct cpu_prep *pr, char *err, size_t errsz)
{
	(void)ctx;
	(void)c;
	if (need_int(cmd, 0, "n", 1, err, errsz) ||
	    need(cmd, 0, "x", (uint64_t)cmd->param[0].i * 4, err, errsz))
		return -1;
	float v = cmd->param[1].f;
	if (!isfinite(v))
		return belt_errf(err, errsz, "%s: %s %g: expected a finite number", label(cmd),
				 cmd->kernel->op, (double)v);
	pr->len = cmd->param[0].i;
	pr->align = 16;
	pr->item_bytes = 8;
	return 0;
}

/* A thread's head_dim floats for keys and values decoded from a typed
 * cache: in its scratch after a batched pass's scores (prep_attention). */
static float *kv_tmp(const struct cpu_cmd *c, struct cpu_worker *w, const struct cpu_pass *ps)
{
	return (float *)w->scratch + (ps->batched ? (size_t)c->prm[3].i : 0);
}

/* ---- attention_ext: attention with soft-capped scores and a window ---- */

/* Row r of the pass, head h: the keys it sees (the cache up to its slot,
 * in a tree the cache before pos and its ancestors), those within window
 * positions of its own (window 0: all), scores scale * q.k soft-capped
 * (softcap 0: not), softmax, the weighted values. Slot t of the row's
 * entries is cache slot base + t mod kv_slots (base: its sequence's part,
 * cpu_kv_first): with a window, the caches may be rings of the window
 * and a pass's rows. */
static void attend_ext(const struct cpu_cmd *c, const struct cpu_pass *ps, uint32_t r,
		       int h, float *att, float *tmp)
{
	int n_head = c->prm[0].i, n_head_kv = c->prm[1].i, hd = c->prm[2].i;
	float scale = c->prm[4].f, cap = c->prm[5].f;
	int64_t window = c->prm[6].i;
	size_t kv_dim = (size_t)n_head_kv * hd, q_dim = (size_t)n_head * hd;
	size_t kv_off = (size_t)(h / (n_head / n_head_kv)) * hd;
	const float *q = (const float *)c->p[0] + r * q_dim + (size_t)h * hd;
	float *out = (float *)c->p[3] + r * q_dim + (size_t)h * hd;
	struct belt_row_at at;
	cpu_row_at(c, ps, r, &at);
	/* a tree row: at ps->pos + depth; in a chain, at its slot */
	uint32_t n = at.n_kv, depth = r, base = cpu_kv_first(c, ps, r);
	if (ps->parent) {
		depth = ps->depth[r];
		n = ps->pos + r + 1;
	}
	/* a row of a table of sequences: at its own position */
	int64_t qpos = ps->seq_pos ? (int64_t)ps->seq_pos[r] : (int64_t)ps->pos + depth;
	/* the slots before t0 lie outside the window (in a tree: the rows
	 * before t0 - pos are no nearer than their slots) */
	uint32_t t0 = window > 0 && qpos >= window ? (uint32_t)(qpos - window + 1) : 0;
	uint32_t slots = c->kv_slots;
	float mx = -INFINITY;
	for (uint32_t t = t0; t < n; t++) {
		int64_t kpos = t;
		bool seen = true;
		if (ps->parent && t >= ps->pos) {
			/* slot pos + a holds row a, at pos + depth(a): an ancestor? */
			uint32_t a = t - ps->pos;
			int32_t b = (int32_t)r;
			while (b > (int32_t)a)
				b = ps->parent[b];
			seen = b == (int32_t)a;
			kpos = (int64_t)ps->pos;
			for (int32_t e = ps->parent[a]; e >= 0; e = ps->parent[e])
				kpos++;
		}
		if (seen && window > 0 && qpos - kpos >= window)
			seen = false;
		if (!seen) {
			att[t] = -INFINITY;
			continue;
		}
		const float *k = cpu_kv_get(c->kv_type[0], c->p[1], base + t % slots, kv_dim, kv_off,
					    (size_t)hd, c->f16, tmp);
		float s = 0.0f;
		for (int d = 0; d < hd; d++)
			s += q[d] * k[d];
		s *= scale;
		if (cap > 0.0f)
			s = tanhf(s / cap) * cap;
		att[t] = s;
		mx = s > mx ? s : mx;
	}
	float sum = 0.0f;
	for (uint32_t t = t0; t < n; t++) {
		att[t] = att[t] == -INFINITY ? 0.0f : expf(att[t] - mx);
		sum += att[t];
	}
	for (int d = 0; d < hd; d++)
		out[d] = 0.0f;
	for (uint32_t t = t0; t < n; t++) {
		if (att[t] == 0.0f)
			continue;
		const float *v = cpu_kv_get(c->kv_type[1], c->p[2], base + t % slots, kv_dim, kv_off,
					    (size_t)hd, c->f16, tmp);
		float p = att[t] / sum;
		for (int d = 0; d < hd; d++)
			out[d] += p * v[d];
	}
}

static void run_attention_ext(const struct cpu_cmd *c, struct cpu_worker *w,
			      const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	int n_head = c->prm[0].i, n_ctx = c->prm[3].i;
	for (int64_t i = i0; i < i1; i++) {
		uint32_t r = ps->row0 + (uint32_t)(i / n_head);
		int h = (int)(i % n_head);
		float *att = ps->batched ? (float *)w->scratch : (float *)c->p[4] + (size_t)h * n_ctx;
		attend_ext(c, ps, r, h, att, kv_tmp(c, w, ps));
	}
}

/* ---- attention over pos + 1 cached positions ---- */

/* One head of row r of a tree pass deeper than CPU_FEW_ROWS (a tree of
 * a prompt's size): the cache before pos, then the row's ancestors in
 * the block (slot pos + a), itself included, in scalar sums. */
static void attend_tree_deep(const struct cpu_cmd *c, const struct cpu_pass *ps, uint32_t r,
			     const float *q, size_t kv_off, float *att, float *out, float *tmp)
{
	int head_dim = c->prm[2].i;
	size_t kv_dim = (size_t)c->prm[1].i * head_dim;
	float scale = c->prm[4].f;
	uint32_t n = ps->pos;
	for (int32_t a = (int32_t)r; a >= 0; a = ps->parent[a])
		n++;
	/* scores in slot order: the prefix, then the ancestors nearest last */
	uint32_t t = 0;
	float mx = -INFINITY;
	for (; t < n; t++) {
		uint32_t slot = t;
		if (t >= ps->pos) {
			int32_t a = (int32_t)r;
			for (uint32_t up = n - 1 - t; up > 0; up--)
				a = ps->parent[a];
			slot = ps->pos + (uint32_t)a;
		}
		const float *k = cpu_kv_get(c->kv_type[0], c->p[1], slot, kv_dim, kv_off,
					    (size_t)head_dim, c->f16, tmp);
		float s = 0;
		for (int d = 0; d < head_dim; d++)
			s += q[d] * k[d];
		att[t] = s * scale;
		mx = att[t] > mx ? att[t] : mx;
	}
	float sum = 0;
	for (t = 0; t < n; t++)
		sum += att[t] = expf(att[t] - mx);
	memset(out, 0, (size_t)head_dim * sizeof(float));
	for (t = 0; t < n; t++) {
		uint32_t slot = t;
		if (t >= ps->pos) {
			int32_t a = (int32_t)r;
			for (uint32_t up = n - 1 - t; up > 0; up--)
				a = ps->parent[a];
			slot = ps->pos + (uint32_t)a;
		}
		const float *v = cpu_kv_get(c->kv_type[1], c->p[2], slot, kv_dim, kv_off,
					    (size_t)head_dim, c->f16, tmp);
		float p = att[t] / sum;
		for (int d = 0; d < head_dim; d++)
			out[d] += p * v[d];
	}
}

/* One head over n_kv positions as one-token decode attends, position t
 * in slot slot(t) (cpu_attend_fn: base and tail) from slot first on. */
static void attend_slots(const struct cpu_cmd *c, const float *q, size_t kv_off, uint32_t first,
			 uint32_t n_kv, float *att, float *out, int64_t base, const uint32_t *tail)
{
	int head_dim = c->prm[2].i;
	size_t kv_dim = (size_t)c->prm[1].i * head_dim, at0 = (size_t)first * kv_dim + kv_off;
	if (c->kv_type[0] == BELT_TYPE_F32 && c->kv_type[1] == BELT_TYPE_F32)
		c->attend(q, (const float *)c->p[1] + at0, (const float *)c->p[2] + at0, kv_dim,
			  n_kv, head_dim, c->prm[4].f, att, out, base, tail);
	else if (c->kv_type[0] == BELT_TYPE_F16 && c->kv_type[1] == BELT_TYPE_F16)
		c->attend_f16(q, (const uint16_t *)c->p[1] + at0, (const uint16_t *)c->p[2] + at0,
			      kv_dim, n_kv, head_dim, c->prm[4].f, att, out, base, tail);
	else
		cpu_attend_kv(c, q, kv_off, first, n_kv, att, out, base, tail);
}

/* One head of row r of a tree pass: the cache before pos, then the row's
 * ancestors in the block (slot pos + a), itself included. Up to
 * CPU_FEW_ROWS deep (a verification of drafts), as one-token decode
 * attends at the row's position, so that its pick is decode's: the same
 * kernel, the ancestors' slots in place of the positions after pos. */
static void attend_tree(const struct cpu_cmd *c, const struct cpu_pass *ps, uint32_t r,
			const float *q, size_t kv_off, float *att, float *out, float *tmp)
{
	uint32_t depth = ps->depth[r];
	if (depth < CPU_FEW_ROWS) {
		uint32_t tail[CPU_FEW_ROWS];
		int32_t a = (int32_t)r;
		for (uint32_t i = depth + 1; i-- > 0; a = ps->parent[a])
			tail[i] = ps->pos + (uint32_t)a;
		attend_slots(c, q, kv_off, 0, ps->pos + depth + 1, att, out, ps->pos, tail);
		return;
	}
	attend_tree_deep(c, ps, r, q, kv_off, att, out, tmp);
}

void cpu_attend_tree_head(const struct cpu_cmd *c, const struct cpu_pass *ps, uint32_t r,
			  int h, float *att, float *tmp)
{
	int n_head = c->prm[0].i, n_head_kv = c->prm[1].i, head_dim = c->prm[2].i;
	size_t q_dim = (size_t)n_head * head_dim;
	size_t kv_off = (size_t)(h / (n_head / n_head_kv)) * head_dim;
	attend_tree(c, ps, r, (const float *)c->p[0] + r * q_dim + (size_t)h * head_dim, kv_off,
		    att, (float *)c->p[3] + r * q_dim + (size_t)h * head_dim, tmp);
}

void cpu_attend_row_head(const struct cpu_cmd *c, struct cpu_worker *w, const struct cpu_pass *ps,
			 uint32_t r, int h)
{
	int n_head = c->prm[0].i, n_head_kv = c->prm[1].i;
	int head_dim = c->prm[2].i, n_ctx = c->prm[3].i;
	int group = n_head / n_head_kv;
	size_t q_dim = (size_t)n_head * head_dim;
	struct belt_row_at at;
	cpu_row_at(c, ps, r, &at);
	size_t kv_off = (size_t)(h / group) * head_dim;
	const float *q = (const float *)c->p[0] + r * q_dim + (size_t)h * head_dim;
	float *out = (float *)c->p[3] + r * q_dim + (size_t)h * head_dim;
	/* a batched pass scores in this thread's scratch: the att binding
	 * has room for one row's heads */
	float *att = ps->batched ? (float *)w->scratch : (float *)c->p[4] + (size_t)h * n_ctx;
	/* a table of sequences: the row's entries from its part's first
	 * slot on (a part of the whole context: no ring here) */
	uint32_t first = cpu_kv_first(c, ps, r);
	if (ps->parent)
		attend_tree(c, ps, r, q, kv_off, att, out, kv_tmp(c, w, ps));
	else
		attend_slots(c, q, kv_off, first, at.n_kv, att, out, 0, NULL);
}

static void run_attention(const struct cpu_cmd *c, struct cpu_worker *w,
			  const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	int n_head = c->prm[0].i;
	for (int64_t i = i0; i < i1; i++)
		cpu_attend_row_head(c, w, ps, ps->row0 + (uint32_t)(i / n_head), (int)(i % n_head));
}

static int prep_attention(const struct cpu_ctx *ctx,
			  const struct belt_cmd *cmd, struct cpu_cmd *c,
			  struct cpu_prep *pr, char *err, size_t errsz)
{
	if (prep_heads(cmd, err, errsz) ||
	    need_int(cmd, 3, "n_ctx", 1, err, errsz))
		return -1;
	int n_head = cmd->param[0].i, head_dim = cmd->param[2].i;
	uint64_t n_ctx = (uint64_t)cmd->param[3].i;
	uint64_t q_bytes = (uint64_t)n_head * head_dim * 4;
	if (need(cmd, 0, "q", q_bytes, err, errsz) ||
	    need(cmd, 3, "out", q_bytes, err, errsz) ||
	    need(cmd, 4, "att", (uint64_t)n_head * n_ctx * 4, err, errsz))
		return -1;
	c->attend = ctx->isa->attend;
	c->attend_f16 = ctx->isa->attend_f16;
	pr->len = n_head;
	pr->align = 1;
	pr->item_bytes = SIZE_MAX; /* a head per chunk at most */
	pr->max_chunks = c->rows > 1 ? 0 : 2;
	/* a batched pass's scores, then a head's keys or values decoded
	 * from a typed cache (kv_tmp) */
	pr->scratch = ((c->rows > 1 ? (size_t)n_ctx : 0) + (size_t)head_dim) * sizeof(float);
	c->gemm = ctx->isa->gemm;
	c->exp_sum = ctx->isa->exp_sum;
	c->f16 = ctx->isa->f16;
	cache_rows(cmd, c, 1, (uint64_t)cmd->param[1].i * head_dim, pr);
	size_t block_scratch;
	if (c->rows > 1 && cpu_attn_block(c, &pr->rows_per_item, &block_scratch)) {
		/* a batched pass: blocks of rows per kv head (attention.c) */
		c->run = cpu_run_attn_block;
		pr->len = cmd->param[1].i;
		if (block_scratch > pr->scratch)
			pr->scratch = block_scratch;
	}
	pr->max_pos = min_u64(n_ctx, pr->max_pos);
	return 0;
}

static int prep_attention_ext(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
			      struct cpu_cmd *c, struct cpu_prep *pr, char *err, size_t errsz)
{
	if (prep_attention(ctx, cmd, c, pr, err, errsz))
		return -1;
	float cap = cmd->param[5].f;
	if (!(cap >= 0.0f) || !isfinite(cap) || cmd->param[6].i < 0)
		return belt_errf(err, errsz, "%s: attention_ext softcap %g and window %d: expected "
				 "numbers of at least 0", label(cmd), (double)cap, cmd->param[6].i);
	/* head by head (attend_ext), whatever the rows; within a window the
	 * caches may be rings (cache_rows): positions up to the context */
	c->run = run_attention_ext;
	if (cmd->param[6].i > 0)
		pr->max_pos = (uint64_t)cmd->param[3].i;
	pr->len = cmd->param[0].i;
	pr->rows_per_item = 1;
	return 0;
}

/* ---- elementwise ---- */

/* Rows are contiguous: items count elements from the pass's first row. */
static void run_silu_mul(const struct cpu_cmd *c, struct cpu_worker *w,
			 const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	int64_t o = (int64_t)ps->row0 * c->prm[0].i;
	c->silu_mul((const float *)c->p[0] + o + i0, (const float *)c->p[1] + o + i0,
		    (float *)c->p[2] + o + i0, i1 - i0);
}

static void run_add(const struct cpu_cmd *c, struct cpu_worker *w,
		    const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	int64_t o = (int64_t)ps->row0 * c->prm[0].i;
	const float *a = (const float *)c->p[0] + o, *b = (const float *)c->p[1] + o;
	float *out = (float *)c->p[2] + o;
	for (int64_t i = i0; i < i1; i++)
		out[i] = a[i] + b[i];
}

static int prep_elementwise(const struct cpu_ctx *ctx,
			    const struct belt_cmd *cmd, struct cpu_cmd *c,
			    struct cpu_prep *pr, char *err, size_t errsz)
{
	c->silu_mul = ctx->isa->silu_mul;
	if (prep_n3(cmd, err, errsz))
		return -1;
	pr->len = cmd->param[0].i;
	pr->align = 16;
	pr->item_bytes = 12;
	return 0;
}

/* ---- argmax: token_ids[pos + 1] = argmax(logits) ---- */

static void run_argmax(const struct cpu_cmd *c, struct cpu_worker *w,
		       const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	size_t n = (size_t)c->prm[0].i;
	for (int64_t i = i0; i < i1; i++) {
		uint32_t r = ps->row0 + (uint32_t)i;
		struct belt_row_at at;
		cpu_row_at(c, ps, r, &at);
		((int32_t *)c->p[1])[at.out] =
			(int32_t)c->argmax((const float *)c->p[0] + r * n, (int64_t)n);
	}
}

static int prep_argmax(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
		       struct cpu_cmd *c, struct cpu_prep *pr, char *err,
		       size_t errsz)
{
	if (need_int(cmd, 0, "n", 1, err, errsz) ||
	    need(cmd, 0, "logits", (uint64_t)cmd->param[0].i * 4, err, errsz))
		return -1;
	c->argmax = ctx->isa->argmax;
	uint64_t slots = cmd->bind[1].size / 4;
	/* one row writes token_ids[pos + 1]; a batched pass slot r < rows */
	if (c->rows > 1 && slots < c->rows)
		return belt_errf(err, errsz, "%s: argmax row outputs hold %" PRIu64
				 " ids, the table has %u rows", label(cmd), slots, c->rows);
	if (c->rows == 1)
		pr->max_pos = slots ? slots - 1 : 0;
	return 0;
}

/* ---- logit_mask: logits of tokens the grammar's mask leaves out -> -inf ---- */

static void run_logit_mask(const struct cpu_cmd *c, struct cpu_worker *w,
			   const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	size_t n = (size_t)c->prm[0].i;
	const uint32_t *mask = c->p[1];
	for (int64_t i = i0; i < i1; i++) {
		float *l = (float *)c->p[0] + (ps->row0 + (uint32_t)i) * n;
		for (size_t t = 0; t < n; t++)
			if (!(mask[t / 32] >> (t % 32) & 1))
				l[t] = -INFINITY;
	}
}

static int prep_logit_mask(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
			   struct cpu_cmd *c, struct cpu_prep *pr, char *err, size_t errsz)
{
	(void)ctx;
	(void)pr;
	if (need_int(cmd, 0, "n", 1, err, errsz) ||
	    need(cmd, 0, "logits", (uint64_t)cmd->param[0].i * 4, err, errsz) ||
	    need(cmd, 1, "mask", ((uint64_t)cmd->param[0].i + 31) / 32 * 4, err, errsz))
		return -1;
	(void)c;
	return 0;
}

/* ---- silu, top_k: what Medusa draft heads need ---- */

/* x = x / (1 + e^-x) in place, in float: the Vulkan backend's formula */
static void run_silu(const struct cpu_cmd *c, struct cpu_worker *w,
		     const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	float *x = (float *)c->p[0] + (int64_t)ps->row0 * c->prm[0].i;
	for (int64_t i = i0; i < i1; i++)
		x[i] = x[i] / (1.0f + expf(-x[i]));
}

static int prep_silu(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
		     struct cpu_cmd *c, struct cpu_prep *pr, char *err, size_t errsz)
{
	(void)ctx, (void)c;
	if (need_int(cmd, 0, "n", 1, err, errsz) ||
	    need(cmd, 0, "x", (uint64_t)cmd->param[0].i * 4, err, errsz))
		return -1;
	pr->len = cmd->param[0].i;
	pr->align = 16;
	pr->item_bytes = 8;
	return 0;
}


/* Row by row: the k largest of n logits in one pass, kept in order (a
 * logit enters only ahead of a smaller one, so equal ones stay in index
 * order and -inf ones, masked tokens, come last: a row with fewer than k
 * finite fills its slots with the lowest of those), their ids as floats,
 * then their probabilities under the softmax of all n (max-subtracted,
 * the sum in double so that it does not drift over a vocabulary). */
static void run_top_k(const struct cpu_cmd *c, struct cpu_worker *w,
		      const struct cpu_pass *ps, int64_t i0, int64_t i1)
{
	(void)w;
	int n = c->prm[0].i, k = c->prm[1].i;
	for (int64_t i = i0; i < i1; i++) {
		size_t r = ps->row0 + (size_t)i;
		const float *l = (const float *)c->p[0] + r * (size_t)n;
		float *out = (float *)c->p[1] + r * 2 * (size_t)k;
		float bv[BELT_TOP_K_MAX] = {0};
		int bi[BELT_TOP_K_MAX], have = 0;
		for (int t = 0; t < n; t++) {
			float v = l[t];
			if (have == k && !(v > bv[k - 1]))
				continue;
			int j = have < k ? have++ : k - 1;
			for (; j > 0 && v > bv[j - 1]; j--) {
				bv[j] = bv[j - 1];
				bi[j] = bi[j - 1];
			}
			bv[j] = v;
			bi[j] = t;
		}
		float mx = bv[0];
		double sum = 0.0;
		if (mx != -INFINITY)
			for (int t = 0; t < n; t++)
				sum += expf(l[t] - mx);
		for (int j = 0; j < k; j++) {
			out[j] = (float)bi[j];
			out[k + j] = bv[j] == -INFINITY ? 0.0f : (float)(expf(bv[j] - mx) / sum);
		}
	}
}

static int prep_top_k(const struct cpu_ctx *ctx, const struct belt_cmd *cmd,
		      struct cpu_cmd *c, struct cpu_prep *pr, char *err, size_t errsz)
{
	(void)ctx, (void)c, (void)err, (void)errsz;
	/* n and k were checked by belt_cmd_check */
	pr->item_bytes = (size_t)cmd->param[0].i * 4; /* a row per item: a pass's rows spread */
	return 0;
}

/* ---- the table ---- */

#define OP(name_, w_, run_, prep_)                                  \
	static const struct cpu_op name_ = {                        \
		.w = w_, .run = run_, .prepare = prep_}

OP(op_embed_f32, CPU_W_F32, run_embed, prep_embed);
OP(op_embed_f16, CPU_W_F16, run_embed, prep_embed);
OP(op_embed_bf16, CPU_W_BF16, run_embed, prep_embed);
OP(op_embed_q8_0, CPU_W_Q8_0, run_embed, prep_embed);
OP(op_embed_q4_0, CPU_W_Q4_0, run_embed, prep_embed);
OP(op_embed_q4_k, CPU_W_Q4_K, run_embed, prep_embed);
OP(op_embed_q6_k, CPU_W_Q6_K, run_embed, prep_embed);
OP(op_embed_q4_1, CPU_W_Q4_1, run_embed, prep_embed);
OP(op_embed_q5_0, CPU_W_Q5_0, run_embed, prep_embed);
OP(op_embed_q5_1, CPU_W_Q5_1, run_embed, prep_embed);
OP(op_embed_iq4_nl, CPU_W_IQ4_NL, run_embed, prep_embed);
OP(op_embed_q2_k, CPU_W_Q2_K, run_embed, prep_embed);
OP(op_embed_q3_k, CPU_W_Q3_K, run_embed, prep_embed);
OP(op_embed_q5_k, CPU_W_Q5_K, run_embed, prep_embed);
OP(op_embed_iq4_xs, CPU_W_IQ4_XS, run_embed, prep_embed);
OP(op_matvec_f32, CPU_W_F32, run_matvec, prep_matvec);
OP(op_matvec_f16, CPU_W_F16, run_matvec, prep_matvec);
OP(op_matvec_bf16, CPU_W_BF16, run_matvec, prep_matvec);
OP(op_matvec_q8_0, CPU_W_Q8_0, run_matvec, prep_matvec);
OP(op_matvec_q4_0, CPU_W_Q4_0, run_matvec, prep_matvec);
OP(op_matvec_q4_k, CPU_W_Q4_K, run_matvec, prep_matvec);
OP(op_matvec_q6_k, CPU_W_Q6_K, run_matvec, prep_matvec);
OP(op_matvec_q4_1, CPU_W_Q4_1, run_matvec, prep_matvec);
OP(op_matvec_q5_0, CPU_W_Q5_0, run_matvec, prep_matvec);
OP(op_matvec_q5_1, CPU_W_Q5_1, run_matvec, prep_matvec);
OP(op_matvec_iq4_nl, CPU_W_IQ4_NL, run_matvec, prep_matvec);
OP(op_matvec_q2_k, CPU_W_Q2_K, run_matvec, prep_matvec);
OP(op_matvec_q3_k, CPU_W_Q3_K, run_matvec, prep_matvec);
OP(op_matvec_q5_k, CPU_W_Q5_K, run_matvec, prep_matvec);
OP(op_matvec_iq4_xs, CPU_W_IQ4_XS, run_matvec, prep_matvec);
OP(op_rmsnorm, CPU_W_F32, run_rmsnorm, prep_rmsnorm);
OP(op_rope_kv, CPU_W_F32, run_rope_kv, prep_rope_kv);
OP(op_attention, CPU_W_F32, run_attention, prep_attention);
OP(op_silu_mul, CPU_W_F32, run_silu_mul, prep_elementwise);
OP(op_add, CPU_W_F32, run_add, prep_elementwise);
OP(op_argmax, CPU_W_F32, run_argmax, prep_argmax);
OP(op_logit_mask, CPU_W_F32, run_logit_mask, prep_logit_mask);
OP(op_rope, CPU_W_F32, run_rope, prep_rope);
OP(op_kv_store, CPU_W_F32, run_kv_store, prep_kv_store);
OP(op_bias_add, CPU_W_F32, run_bias_add, prep_vec_weight);
OP(op_rmsnorm_heads, CPU_W_F32, run_rmsnorm_heads, prep_vec_weight);
OP(op_scale, CPU_W_F32, run_scale, prep_x_float);
OP(op_gelu_mul, CPU_W_F32, run_gelu_mul, prep_elementwise);
OP(op_attention_ext, CPU_W_F32, run_attention_ext, prep_attention_ext);
OP(op_moe_matvec_f32, CPU_W_F32, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_f16, CPU_W_F16, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_bf16, CPU_W_BF16, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_q8_0, CPU_W_Q8_0, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_q4_0, CPU_W_Q4_0, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_q4_k, CPU_W_Q4_K, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_q6_k, CPU_W_Q6_K, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_q4_1, CPU_W_Q4_1, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_q5_0, CPU_W_Q5_0, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_q5_1, CPU_W_Q5_1, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_iq4_nl, CPU_W_IQ4_NL, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_q2_k, CPU_W_Q2_K, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_q3_k, CPU_W_Q3_K, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_q5_k, CPU_W_Q5_K, run_moe_matvec, prep_moe_matvec);
OP(op_moe_matvec_iq4_xs, CPU_W_IQ4_XS, run_moe_matvec, prep_moe_matvec);
OP(op_moe_route, CPU_W_F32, run_moe_route, prep_moe_route);
OP(op_moe_combine, CPU_W_F32, run_moe_combine, prep_moe_combine);
OP(op_silu, CPU_W_F32, run_silu, prep_silu);
OP(op_top_k, CPU_W_F32, run_top_k, prep_top_k);

#define KERNEL(op_, w_, n_bind_, params_, impl_)                        \
	{                                                               \
		.op = op_, .variant = "default", .wtype = w_,           \
		.n_bind = n_bind_, .params = params_, .impl = &impl_    \
	}

#define KERNELV(op_, v_, w_, n_bind_, params_, impl_)                  \
	{                                                               \
		.op = op_, .variant = v_, .wtype = w_,                  \
		.n_bind = n_bind_, .params = params_, .impl = &impl_    \
	}

const struct belt_kernel cpu_kernels[] = {
	KERNEL("embed", BELT_TYPE_F32, 3, "n:i", op_embed_f32),
	KERNEL("embed", BELT_TYPE_F16, 3, "n:i", op_embed_f16),
	KERNEL("embed", BELT_TYPE_BF16, 3, "n:i", op_embed_bf16),
	KERNEL("embed", BELT_TYPE_Q8_0, 3, "n:i", op_embed_q8_0),
	KERNEL("embed", BELT_TYPE_Q4_0, 3, "n:i", op_embed_q4_0),
	KERNEL("embed", BELT_TYPE_Q4_K, 3, "n:i", op_embed_q4_k),
	KERNEL("embed", BELT_TYPE_Q6_K, 3, "n:i", op_embed_q6_k),
	KERNEL("embed", BELT_TYPE_Q4_1, 3, "n:i", op_embed_q4_1),
	KERNEL("embed", BELT_TYPE_Q5_0, 3, "n:i", op_embed_q5_0),
	KERNEL("embed", BELT_TYPE_Q5_1, 3, "n:i", op_embed_q5_1),
	KERNEL("embed", BELT_TYPE_IQ4_NL, 3, "n:i", op_embed_iq4_nl),
	KERNEL("embed", BELT_TYPE_Q2_K, 3, "n:i", op_embed_q2_k),
	KERNEL("embed", BELT_TYPE_Q3_K, 3, "n:i", op_embed_q3_k),
	KERNEL("embed", BELT_TYPE_Q5_K, 3, "n:i", op_embed_q5_k),
	KERNEL("embed", BELT_TYPE_IQ4_XS, 3, "n:i", op_embed_iq4_xs),
	KERNEL("matvec", BELT_TYPE_F32, 3, "k:i m:i", op_matvec_f32),
	KERNEL("matvec", BELT_TYPE_F16, 3, "k:i m:i", op_matvec_f16),
	KERNEL("matvec", BELT_TYPE_BF16, 3, "k:i m:i", op_matvec_bf16),
	KERNEL("matvec", BELT_TYPE_Q8_0, 3, "k:i m:i", op_matvec_q8_0),
	KERNEL("matvec", BELT_TYPE_Q4_0, 3, "k:i m:i", op_matvec_q4_0),
	KERNEL("matvec", BELT_TYPE_Q4_K, 3, "k:i m:i", op_matvec_q4_k),
	KERNEL("matvec", BELT_TYPE_Q6_K, 3, "k:i m:i", op_matvec_q6_k),
	KERNEL("matvec", BELT_TYPE_Q4_1, 3, "k:i m:i", op_matvec_q4_1),
	KERNEL("matvec", BELT_TYPE_Q5_0, 3, "k:i m:i", op_matvec_q5_0),
	KERNEL("matvec", BELT_TYPE_Q5_1, 3, "k:i m:i", op_matvec_q5_1),
	KERNEL("matvec", BELT_TYPE_IQ4_NL, 3, "k:i m:i", op_matvec_iq4_nl),
	KERNEL("matvec", BELT_TYPE_Q2_K, 3, "k:i m:i", op_matvec_q2_k),
	KERNEL("matvec", BELT_TYPE_Q3_K, 3, "k:i m:i", op_matvec_q3_k),
	KERNEL("matvec", BELT_TYPE_Q5_K, 3, "k:i m:i", op_matvec_q5_k),
	KERNEL("matvec", BELT_TYPE_IQ4_XS, 3, "k:i m:i", op_matvec_iq4_xs),
	KERNEL("rmsnorm", BELT_TYPE_ANY, 3, "n:i eps:f", op_rmsnorm),
	KERNEL("rope_kv", BELT_TYPE_ANY, 5,
	       "n_head:i n_head_kv:i head_dim:i rope_dim:i base:f", op_rope_kv),
	KERNEL("attention", BELT_TYPE_ANY, 5,
	       "n_head:i n_head_kv:i head_dim:i n_ctx:i scale:f",
	       op_attention),
	/* the GPU's split-KV variants compute the same; here they are the
	 * same kernel, so that a configuration naming one works on any
	 * backend */
	KERNELV("attention", "split_kv", BELT_TYPE_ANY, 5,
	       "n_head:i n_head_kv:i head_dim:i n_ctx:i scale:f",
	       op_attention),
	KERNELV("attention", "split_gqa", BELT_TYPE_ANY, 5,
	       "n_head:i n_head_kv:i head_dim:i n_ctx:i scale:f",
	       op_attention),
	KERNEL("silu_mul", BELT_TYPE_ANY, 3, "n:i", op_silu_mul),
	KERNEL("add", BELT_TYPE_ANY, 3, "n:i", op_add),
	KERNEL("argmax", BELT_TYPE_ANY, 2, "n:i", op_argmax),
	KERNEL("logit_mask", BELT_TYPE_ANY, 2, "n:i", op_logit_mask),
	KERNEL("rope", BELT_TYPE_ANY, 1,
	       "n_head:i head_dim:i rope_dim:i base:f neox:i freq_scale:f", op_rope),
	KERNEL("rope_ff", BELT_TYPE_ANY, 2,
	       "n_head:i head_dim:i rope_dim:i base:f neox:i freq_scale:f", op_rope),
	KERNEL("kv_store", BELT_TYPE_ANY, 4, "n:i", op_kv_store),
	KERNEL("bias_add", BELT_TYPE_ANY, 2, "n:i", op_bias_add),
	KERNEL("rmsnorm_heads", BELT_TYPE_ANY, 2, "n_head:i head_dim:i eps:f", op_rmsnorm_heads),
	KERNEL("scale", BELT_TYPE_ANY, 1, "n:i s:f", op_scale),
	KERNEL("gelu_mul", BELT_TYPE_ANY, 3, "n:i", op_gelu_mul),
	KERNEL("attention_ext", BELT_TYPE_ANY, 5,
	       "n_head:i n_head_kv:i head_dim:i n_ctx:i scale:f softcap:f window:i",
	       op_attention_ext),
	KERNEL("moe_matvec", BELT_TYPE_F32, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_f32),
	KERNEL("moe_matvec_slots", BELT_TYPE_F32, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_f32),
	KERNEL("moe_matvec", BELT_TYPE_F16, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_f16),
	KERNEL("moe_matvec_slots", BELT_TYPE_F16, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_f16),
	KERNEL("moe_matvec", BELT_TYPE_BF16, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_bf16),
	KERNEL("moe_matvec_slots", BELT_TYPE_BF16, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_bf16),
	KERNEL("moe_matvec", BELT_TYPE_Q8_0, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q8_0),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q8_0, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q8_0),
	KERNEL("moe_matvec", BELT_TYPE_Q4_0, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q4_0),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q4_0, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q4_0),
	KERNEL("moe_matvec", BELT_TYPE_Q4_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q4_k),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q4_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q4_k),
	KERNEL("moe_matvec", BELT_TYPE_Q6_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q6_k),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q6_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q6_k),
	KERNEL("moe_matvec", BELT_TYPE_Q4_1, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q4_1),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q4_1, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q4_1),
	KERNEL("moe_matvec", BELT_TYPE_Q5_0, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q5_0),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q5_0, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q5_0),
	KERNEL("moe_matvec", BELT_TYPE_Q5_1, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q5_1),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q5_1, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q5_1),
	KERNEL("moe_matvec", BELT_TYPE_IQ4_NL, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_iq4_nl),
	KERNEL("moe_matvec_slots", BELT_TYPE_IQ4_NL, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_iq4_nl),
	KERNEL("moe_matvec", BELT_TYPE_Q2_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q2_k),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q2_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q2_k),
	KERNEL("moe_matvec", BELT_TYPE_Q3_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q3_k),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q3_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q3_k),
	KERNEL("moe_matvec", BELT_TYPE_Q5_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q5_k),
	KERNEL("moe_matvec_slots", BELT_TYPE_Q5_K, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_q5_k),
	KERNEL("moe_matvec", BELT_TYPE_IQ4_XS, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_iq4_xs),
	KERNEL("moe_matvec_slots", BELT_TYPE_IQ4_XS, 4, "k:i m:i n_expert:i n_used:i", op_moe_matvec_iq4_xs),
	KERNEL("moe_route", BELT_TYPE_ANY, 3, "n_expert:i n_used:i", op_moe_route),
	KERNEL("moe_combine", BELT_TYPE_ANY, 3, "n:i n_used:i", op_moe_combine),
	KERNEL("silu", BELT_TYPE_ANY, 1, "n:i", op_silu),
	KERNEL("top_k", BELT_TYPE_ANY, 2, "n:i k:i", op_top_k),
};

const size_t cpu_n_kernels = sizeof cpu_kernels / sizeof cpu_kernels[0];
