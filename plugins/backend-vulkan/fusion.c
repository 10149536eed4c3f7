/* plugins/backend-vulkan/fusion.c: fusion of a one-row table's commands
 * into one matvec_fused dispatch (rmsnorm, up to three matvecs sharing x,
 * gate/up + silu_mul, matvec + add, q/k/v + rope_kv), where that is
 * provably the same computation, and of the sampler's commands into its
 * argmax (vk_sample_fuse). */
#include <stdio.h>
#include <string.h>

#include "belt/error.h"
#include "belt/types.h"
#include "plan.h"

/* ---- fusion ----
 * The core's table is the reference; fuse_find looks for a run of commands
 * starting at i that one matvec_fused dispatch computes the same way, and
 * only where every array it no longer writes is dead: the next command to
 * touch it (cyclically, through the next token, with and without the head
 * commands) overwrites all of it without reading it. */

#define F_NORM 1u   /* shaders/matvec_fused.comp flags */
#define F_ADD 2u
#define F_SWIGLU 4u
#define F_ROPE 8u
#define ROPE_YS_MAX 512 /* matvec_fused.comp YS_MAX */

bool vk_is_op(const struct belt_cmd *c, const char *op)
{
	return !strcmp(c->kernel->op, op);
}

static bool same_bind(const struct belt_binding *a, const struct belt_binding *b)
{
	return a->buf == b->buf && a->offset == b->offset && a->size == b->size;
}

static bool bind_overlap(const struct belt_binding *a,
			 const struct belt_binding *b)
{
	return a->size && b->size && a->buf == b->buf &&
	       a->offset < b->offset + b->size && b->offset < a->offset + a->size;
}

/* What a command reads (bindings mask) and which binding it overwrites
 * entirely (its first fw_bytes), by op; unknown ops read everything. */
static void op_access(const struct belt_cmd *c, uint8_t *reads, int *fw,
		      uint64_t *fw_bytes)
{
	const char *op = c->kernel->op;
	*fw = -1;
	*fw_bytes = 0;
	*reads = 0xff;
	if (!strcmp(op, "embed") || !strcmp(op, "rmsnorm") ||
	    !strcmp(op, "add") || !strcmp(op, "silu_mul")) {
		*reads = 3;
		*fw = 2;
		*fw_bytes = (uint64_t)c->param[0].i * 4;
	} else if (!strcmp(op, "matvec")) {
		*reads = 3;
		*fw = 2;
		*fw_bytes = (uint64_t)c->param[1].i * 4;
	} else if (!strcmp(op, "attention")) {
		*reads = 0x17;
		*fw = 3;
		*fw_bytes = (uint64_t)c->param[0].i * c->param[2].i * 4;
	} else if (!strcmp(op, "rope_kv")) {
		*reads = 7;
	} else if (!strcmp(op, "argmax")) {
		*reads = 1;
	}
}

/* Is [lo, hi) of buf dead after command `last` (the group starts at
 * `first`)? skip_head: as in the runs that leave out the head. */
static bool dead_scan(const struct belt_table *t, const uint8_t *writes,
		      uint32_t first, uint32_t last,
		      const struct belt_buffer *buf, uint64_t lo, uint64_t hi,
		      bool skip_head)
{
	uint32_t n = t->n_cmds;
	for (uint32_t s = 1; s < n; s++) {
		uint32_t j = (last + s) % n;
		if (j == first)
			return false;
		const struct belt_cmd *c = &t->cmds[j];
		if (skip_head && c->head)
			continue;
		uint8_t reads;
		int fw;
		uint64_t fwb;
		op_access(c, &reads, &fw, &fwb);
		bool touch_w = false;
		for (int b = 0; b < c->n_bind; b++) {
			const struct belt_binding *bb = &c->bind[b];
			if (bb->buf != buf || !bb->size ||
			    !(bb->offset < hi && lo < bb->offset + bb->size))
				continue;
			if (reads & (1u << b))
				return false;
			if (writes[j] & (1u << b))
				touch_w = true;
		}
		if (fw >= 0 && c->bind[fw].buf == buf &&
		    c->bind[fw].offset <= lo && c->bind[fw].offset + fwb >= hi)
			return true;
		if (touch_w)
			return false; /* a partial write: keep it simple */
	}
	return false;
}

static bool dead_after(const struct belt_table *t, const uint8_t *writes,
		       uint32_t first, uint32_t last,
		       const struct belt_binding *b, uint64_t bytes)
{
	if (!b->buf || b->buf->io)
		return false;
	uint64_t lo = b->offset, hi = b->offset + bytes;
	return dead_scan(t, writes, first, last, b->buf, lo, hi, false) &&
	       dead_scan(t, writes, first, last, b->buf, lo, hi, true);
}

/* The fused shader's loads: k a multiple of 8; 16-byte W rows. */
/* Whether matvec_fused can compute m: 16-byte loads of every row (and
 * Q8_0/Q4_0 weights in the GPU layout, rp). */
bool vk_fusable_matvec(const struct belt_cmd *m, const struct vk_cmd *oc,
			   bool rp)
{
	const struct vk_op *op = m->kernel->impl;
	int k = m->param[0].i;
	if (k % 8)
		return false;
	switch (op->wtype) {
	case BELT_TYPE_F32: return oc->pc.o[0] % 4 == 0;
	case BELT_TYPE_F16:
	case BELT_TYPE_BF16: return oc->pc.o[0] % 8 == 0;
	case BELT_TYPE_Q8_0:
	case BELT_TYPE_Q4_0: return rp;
	default: return false;
	}
}

/* matvec_fused's shader for a weight type */
static enum vk_shader fmv_shader(const struct vk_ctx *ctx, int wtype)
{
	switch (wtype) {
	case BELT_TYPE_F32: return VK_SH_FMV_F32;
	case BELT_TYPE_F16: return VK_SH_FMV_F16;
	case BELT_TYPE_BF16: return VK_SH_FMV_BF16;
	case BELT_TYPE_Q8_0:
		return ctx->q8x & VK_Q8X_Q8_0 ? VK_SH_FMV_Q8_0_XQ : VK_SH_FMV_Q8_0;
	default:
		return ctx->q8x & VK_Q8X_Q4_0 ? VK_SH_FMV_Q4_0_XQ : VK_SH_FMV_Q4_0;
	}
}

/* Subgroups sharing each row (matvec_fused KS) for a fused matvec of
 * shader sh over rows of k, and so its rows per workgroup. */
#define KP_MAX 256 /* matvec_fused.comp */
static uint32_t group_ks(const struct vk_ctx *ctx, enum vk_shader sh, int k)
{
	uint32_t ti = sh - VK_SH_FMV_F32;
	uint32_t nsg = ctx->mv_wg[ti] / ctx->subgroup;
	uint32_t ks = ctx->mv_ks[ti];
	if (ks == 1 || (uint32_t)k < ctx->mv_ks_k[ti] || nsg % ks ||
	    ctx->mv_nr[ti] * nsg > KP_MAX)
		return 1;
	return ks;
}

static uint32_t group_rpw(const struct vk_ctx *ctx, enum vk_shader sh, int k)
{
	return ctx->mv_rpw[sh - VK_SH_FMV_F32] / group_ks(ctx, sh, k);
}

/* The bindings a fused group writes: y of each matvec, or the tail's. */
int vk_group_outputs(const struct belt_table *t, const struct fgroup *g,
			 const struct belt_binding **out)
{
	const struct belt_cmd *C = t->cmds;
	int n = 0;
	if (g->flags & F_SWIGLU) {
		out[n++] = &C[g->tail].bind[2];
	} else if (g->flags & F_ADD) {
		out[n++] = &C[g->tail].bind[g->res];
	} else if (g->flags & F_ROPE) {
		out[n++] = &C[g->tail].bind[0]; /* q, rotated */
		out[n++] = &C[g->tail].bind[3]; /* k cache */
		out[n++] = &C[g->tail].bind[4]; /* v cache */
	} else {
		for (int s = 0; s < g->nmv; s++)
			out[n++] = &C[g->mv[s]].bind[2];
	}
	return n;
}

/* Whether rope_kv r rotates and stores what the matvecs q, k, v of group
 * g wrote, so that matvec_fused can do it in its epilogue: pairs of rows
 * in one workgroup (rpw rows, even, starting at even rows), the k and v
 * it leaves unwritten dead after it. */
static bool rope_fusable(const struct belt_table *t, const uint8_t *writes,
			 uint32_t first, const struct fgroup *g, uint32_t r,
			 uint32_t rpw)
{
	const struct belt_cmd *C = t->cmds, *rc = &C[r];
	const struct belt_cmd *q = &C[g->mv[0]], *k = &C[g->mv[1]], *v = &C[g->mv[2]];
	int nh = rc->param[0].i, nkv = rc->param[1].i, hd = rc->param[2].i;
	uint64_t kv_bytes = (uint64_t)nkv * hd * 4;
	return rpw % 2 == 0 && rpw <= ROPE_YS_MAX && hd % 2 == 0 &&
	       same_bind(&rc->bind[0], &q->bind[2]) &&
	       same_bind(&rc->bind[1], &k->bind[2]) &&
	       same_bind(&rc->bind[2], &v->bind[2]) &&
	       q->param[1].i == nh * hd && k->param[1].i == nkv * hd &&
	       v->param[1].i == nkv * hd &&
	       dead_after(t, writes, first, r, &rc->bind[1], kv_bytes) &&
	       dead_after(t, writes, first, r, &rc->bind[2], kv_bytes);
}

bool vk_fuse_find(const struct vk_ctx *ctx, const struct belt_table *t,
		      const struct vk_cmd *oc, const bool *rp,
		      const uint8_t *writes, uint32_t i, struct fgroup *g)
{
	const struct belt_cmd *C = t->cmds;
	uint32_t n = t->n_cmds, j = i;
	memset(g, 0, sizeof *g);
	g->norm = -1;
	g->tail = -1;
	bool head = C[i].head;
	/* not for the head: its many rows (vocab) would each reread x and w
	 * for one dispatch saved per token (measured on the H100 with int8
	 * x: 1B Q4_0 1233 -> 1235 tokens/s, 8B Q4_0 359.6 -> 360.2, 1B F16
	 * 722.6 -> 718.2; not worth it) */
	if (vk_is_op(&C[i], "rmsnorm") && !head) {
		g->norm = (int)i;
		j = i + 1;
	}
	const struct belt_cmd *first = NULL;
	for (; j < n && g->nmv < 3 && vk_is_op(&C[j], "matvec"); j++) {
		const struct belt_cmd *m = &C[j];
		if (m->head != head || !vk_fusable_matvec(m, &oc[j], rp[j]))
			break;
		if (!first) {
			if (g->norm >= 0 &&
			    (!same_bind(&m->bind[1], &C[i].bind[2]) ||
			     m->param[0].i != C[i].param[0].i))
				break;
			first = m;
		} else if (!same_bind(&m->bind[1], &first->bind[1]) ||
			   m->kernel != first->kernel ||
			   m->param[0].i != first->param[0].i) {
			break;
		}
		g->mv[g->nmv++] = j;
	}
	if (!g->nmv)
		return false;
	g->last = g->mv[g->nmv - 1];
	const struct belt_cmd *m0 = &C[g->mv[0]];
	if (g->nmv == 2 && j < n && vk_is_op(&C[j], "silu_mul") &&
	    C[j].head == head) {
		const struct belt_cmd *sm = &C[j], *m1 = &C[g->mv[1]];
		uint64_t bytes = (uint64_t)sm->param[0].i * 4;
		if (same_bind(&sm->bind[0], &m0->bind[2]) &&
		    same_bind(&sm->bind[1], &m1->bind[2]) &&
		    sm->param[0].i == m0->param[1].i &&
		    sm->param[0].i == m1->param[1].i &&
		    dead_after(t, writes, i, j, &sm->bind[1], bytes) &&
		    (same_bind(&sm->bind[2], &sm->bind[0]) ||
		     dead_after(t, writes, i, j, &sm->bind[0], bytes))) {
			g->tail = (int)j;
			g->flags |= F_SWIGLU;
			g->last = j;
		}
	} else if (g->nmv == 3 && j < n && vk_is_op(&C[j], "rope_kv") &&
		   C[j].head == head &&
		   rope_fusable(t, writes, i, g, j,
				group_rpw(ctx,
					  fmv_shader(ctx, ((const struct vk_op *)m0->kernel->impl)->wtype),
					  m0->param[0].i))) {
		g->tail = (int)j;
		g->flags |= F_ROPE;
		g->last = j;
	} else if (g->nmv == 1 && j < n && vk_is_op(&C[j], "add") &&
		   C[j].head == head) {
		const struct belt_cmd *a = &C[j];
		const struct belt_binding *y = &m0->bind[2];
		int r = same_bind(&a->bind[1], y)   ? 0
			: same_bind(&a->bind[0], y) ? 1
						    : -1;
		if (r >= 0 && same_bind(&a->bind[2], &a->bind[r]) &&
		    !bind_overlap(&a->bind[r], y) &&
		    a->param[0].i == m0->param[1].i &&
		    dead_after(t, writes, i, j, y,
			       (uint64_t)a->param[0].i * 4)) {
			g->tail = (int)j;
			g->flags |= F_ADD;
			g->res = r;
			g->last = j;
		}
	}
	/* what the fused dispatch writes never overlaps what it reads */
	const struct belt_binding *in[6], *out[3];
	int nin = 0, nout = vk_group_outputs(t, g, out);
	in[nin++] = &m0->bind[1];
	for (int s = 0; s < g->nmv; s++)
		in[nin++] = &C[g->mv[s]].bind[0];
	if (g->norm >= 0) {
		in[nin++] = &C[i].bind[0];
		in[nin++] = &C[i].bind[1];
	}
	for (int a = 0; a < nout; a++) {
		for (int b = 0; b < nin; b++)
			if (bind_overlap(out[a], in[b]))
				return false;
		for (int b = a + 1; b < nout; b++)
			if (bind_overlap(out[a], out[b]))
				return false;
	}
	if (g->norm >= 0) {
		/* its output must be dead after the group; else the caller
		 * keeps the rmsnorm and tries again from the matvecs */
		if (!dead_after(t, writes, i, g->last, &C[i].bind[2],
				(uint64_t)C[i].param[0].i * 4))
			return false;
		g->flags |= F_NORM;
	}
	return g->flags || g->nmv > 1;
}

/* The fused command for group g: descriptors from the originals'. */
int vk_fuse_make(struct vk_ctx *ctx, const struct belt_table *t,
		     const struct vk_cmd *oc,
		     VkDescriptorBufferInfo (*obi)[BELT_MAX_BINDINGS + 2],
		     const struct fgroup *g, struct vk_cmd *c,
		     VkDescriptorBufferInfo *bi, char *err, size_t errsz)
{
	const struct belt_cmd *C = t->cmds;
	uint32_t m0 = g->mv[0];
	const struct vk_op *op = C[m0].kernel->impl;
	enum vk_shader sh = fmv_shader(ctx, op->wtype);
	memset(c, 0, sizeof *c);
	if (g->norm >= 0) {
		bi[0] = obi[g->norm][0];
		c->pc.o[0] = oc[g->norm].pc.o[0];
		bi[1] = obi[g->norm][1];
		c->pc.o[1] = oc[g->norm].pc.o[1];
		memcpy(&c->pc.p[5], &C[g->norm].param[1], 4);
	} else {
		bi[0] = obi[m0][1];
		c->pc.o[0] = oc[m0].pc.o[1];
		bi[1] = bi[0];
	}
	uint32_t ks = group_ks(ctx, sh, C[m0].param[0].i);
	uint32_t groups = 0, rpw = group_rpw(ctx, sh, C[m0].param[0].i);
	for (int s = 0; s < 3; s++) {
		uint32_t mi = g->mv[s < g->nmv ? s : 0];
		bi[2 + s] = obi[mi][0];
		c->pc.o[2 + s] = s < g->nmv ? oc[mi].pc.o[0] : 0;
		bi[5 + s] = obi[mi][2];
		c->pc.o[5 + s] = s < g->nmv ? oc[mi].pc.o[2] : 0;
		c->pc.p[2 + s] = s < g->nmv ? (uint32_t)C[mi].param[1].i : 0;
		/* Q8_0/Q4_0: the scales follow the range's quants */
		uint64_t bb = belt_type_block_bytes(op->wtype);
		if (s < g->nmv && (op->wtype == BELT_TYPE_Q8_0 ||
				   op->wtype == BELT_TYPE_Q4_0))
			c->pc.p[7 + s] = c->pc.o[2 + s] +
					 (uint32_t)(C[mi].bind[0].size / bb *
						    (bb - 2) / 2);
		if (s < g->nmv)
			groups += ((uint32_t)C[mi].param[1].i + rpw - 1) / rpw;
	}
	if (g->flags & F_SWIGLU) {
		bi[5] = bi[6] = bi[7] = obi[g->tail][2];
		c->pc.o[5] = oc[g->tail].pc.o[2];
		groups = ((uint32_t)C[m0].param[1].i + rpw - 1) / rpw;
	} else if (g->flags & F_ADD) {
		bi[5] = bi[6] = bi[7] = obi[g->tail][g->res];
		c->pc.o[5] = oc[g->tail].pc.o[g->res];
	} else if (g->flags & F_ROPE) {
		/* q in place; k and v into the caches (rope_kv's 3 and 4) */
		const struct belt_cmd *r = &C[g->tail];
		bi[5] = obi[g->tail][0];
		c->pc.o[5] = oc[g->tail].pc.o[0];
		bi[6] = obi[g->tail][3];
		c->pc.o[6] = oc[g->tail].pc.o[3];
		bi[7] = obi[g->tail][4];
		c->pc.o[7] = oc[g->tail].pc.o[4];
		c->pc.p[10] = (uint32_t)r->param[2].i;
		c->pc.p[11] = (uint32_t)r->param[3].i;
		c->pc.p[12] = (uint32_t)(r->param[1].i * r->param[2].i);
		c->pc.p[13] = oc[g->tail].pc.aux[0]; /* its freqs in meta */
		/* its position and cache slot from its patch */
		c->pc.mode = (uint32_t)r->patch << VK_MODE_PATCH2_SHIFT;
	}
	c->pc.p[0] = (uint32_t)C[m0].param[0].i;
	c->pc.p[1] = (uint32_t)g->nmv;
	c->pc.p[6] = g->flags;
	c->pc.aux[0] = rpw;
	uint32_t maxx = ctx->props.limits.maxComputeWorkGroupCount[0];
	c->gx = groups < maxx ? groups : maxx;
	c->gy = (groups + c->gx - 1) / c->gx;
	c->gz = 1;
	c->head = C[m0].head;
	c->n_bind = BELT_MAX_BINDINGS;
	const char *what = g->flags & F_SWIGLU ? "swiglu"
			   : g->flags & F_ADD	? "matvec+add"
			   : g->nmv == 3	? "matvec3"
			   : g->nmv == 2	? "matvec2"
						: "matvec";
	snprintf(c->kind, sizeof c->kind, "%s%s%s %s%s",
		 g->flags & F_NORM ? "norm+" : "", what,
		 g->flags & F_ROPE ? "+rope" : "",
		 belt_type_name(op->wtype), c->head ? " head" : "");
	if (vk_fused_pipeline(ctx, sh, g->flags, (uint32_t)g->nmv, ks, &c->pipe,
			   err, errsz))
		return -1;
	c->layout = ctx->pl[BELT_MAX_BINDINGS];
	return 0;
}

/* The sampler's commands before the argmax of the same logits, fused into
 * one dispatch (the logits keep their values):
 *  - sample_threshold, sample_gumbel (with the threshold), argmax:
 *    sample_threshold.comp -DARGMAX, bindings logits, scratch, token ids;
 *  - sample_gumbel, argmax: argmax.comp -DGUMBEL (the noise added as the
 *    logits are read), bindings logits, token ids, scratch.
 * Fills c, its descriptor infos and ranges and *used (commands taken);
 * false if none starts at i; *failed (with err) if one does but has no
 * pipeline. */
bool vk_sample_fuse(struct vk_ctx *ctx, const struct belt_table *t,
			const struct vk_cmd *oc,
			VkDescriptorBufferInfo (*obi)[BELT_MAX_BINDINGS + 2],
			uint32_t i, struct vk_cmd *c, VkDescriptorBufferInfo *bi,
			struct range *r, int *nr, uint32_t *used, bool *failed,
			char *err, size_t errsz)
{
	*failed = false;
	const struct belt_cmd *cm = t->cmds;
	uint32_t gi = i, n = t->n_cmds;
	bool thr = i + 2 < n && vk_is_op(&cm[i], "sample_threshold");
	if (thr)
		gi = i + 1;
	if (gi + 1 >= n || !vk_is_op(&cm[gi], "sample_gumbel") ||
	    !vk_is_op(&cm[gi + 1], "argmax") ||
	    !same_bind(&cm[gi].bind[0], &cm[gi + 1].bind[0]) ||
	    cm[gi].head != cm[gi + 1].head)
		return false;
	if (thr && (!same_bind(&cm[i].bind[0], &cm[gi].bind[0]) ||
		    !same_bind(&cm[i].bind[1], &cm[gi].bind[1]) ||
		    cm[gi].param[4].i == 0 || cm[i].head != cm[gi].head))
		return false;
	enum vk_shader sh = thr ? VK_SH_SAMPLE_TGA : VK_SH_ARGMAX_GUMBEL;
	if (vk_pipeline_for(ctx, sh, 3, err, errsz)) {
		*failed = true;
		return true;
	}
	const struct belt_cmd *g = &cm[gi], *a = &cm[gi + 1];
	/* the argmax's (ids, end-of-generation params p7..) or the
	 * threshold's (grid, work) command, with the others' params */
	*c = thr ? oc[i] : oc[gi + 1];
	c->pipe = ctx->pipe[sh];
	c->layout = ctx->pl[3];
	c->n_bind = 3;
	/* the argmax's patch gives the output slot, the gumbel's the
	 * position of the noise */
	c->pc.mode = (uint32_t)a->patch |
		     (uint32_t)g->patch << VK_MODE_PATCH2_SHIFT;
	memcpy(c->pc.p + 7, oc[gi + 1].pc.p + 7, 9 * sizeof c->pc.p[0]);
	if (thr) {
		memcpy(c->pc.p + 4, oc[gi].pc.p + 1, 3 * sizeof c->pc.p[0]);
		c->pc.o[2] = oc[gi + 1].pc.o[1];
		bi[0] = obi[i][0];
		bi[1] = obi[i][1];
		bi[2] = obi[gi + 1][1];
	} else {
		memcpy(c->pc.p, oc[gi].pc.p, 5 * sizeof c->pc.p[0]);
		c->pc.o[2] = oc[gi].pc.o[1];
		bi[0] = obi[gi + 1][0];
		bi[1] = obi[gi + 1][1];
		bi[2] = obi[gi][1];
	}
	snprintf(c->kind, sizeof c->kind, "%sgumbel+argmax%s",
		 thr ? "threshold+" : "", c->head ? " head" : "");
	*nr = 0;
	r[(*nr)++] = (struct range){.buf = a->bind[0].buf, .lo = a->bind[0].offset,
				    .hi = a->bind[0].offset + a->bind[0].size};
	r[(*nr)++] = (struct range){.buf = g->bind[1].buf, .lo = g->bind[1].offset,
				    .hi = g->bind[1].offset + g->bind[1].size,
				    .write = thr};
	r[(*nr)++] = (struct range){.buf = a->bind[1].buf, .lo = a->bind[1].offset,
				    .hi = a->bind[1].offset + a->bind[1].size,
				    .write = true};
	*used = gi + 2 - i;
	return true;
}

