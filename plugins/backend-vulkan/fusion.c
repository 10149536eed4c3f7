/* plugins/backend-vulkan/fusion.c: fusion of a one-row table's commands
 * into one matvec_fused dispatch (rmsnorm, up to three matvecs sharing x,
 * gate/up + silu_mul or gelu_mul, matvec + add, q/k/v + rope_kv or its
 * pieces rope, rope, kv_store), where that is
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
#define F_GELU 16u /* with F_SWIGLU: gelu_mul's GELU instead of silu */
#define F_NEOX 32u /* with F_ROPE: NEOX pairs (i, i + rope_dim/2) */
#define F_KVH 64u  /* with F_ROPE: F16 caches (else F32) */
#define F_TAIL 128u /* one matvec, then rmsnorm of its output and add into a
		     * residual, by the last workgroup (Gemma's post-norms) */
#define F_PEND 256u /* with F_NORM: the rmsnorm and add before the norm
		     * (a post-norm of the matvec before) applied to x
		     * as it is loaded, the residual's new value left in the
		     * plan's spare copy */
#define F_COPY VK_FMV_F_COPY /* last, the spare copy back into the residual */
#define F_BIAS 1024u /* with F_ROPE: q, k and v's biases added first
		      * (Qwen2's bias_adds), from bindings 10, 11, 13 */
#define F_PEND2 2048u /* with F_PEND: y in a pass of its own (the shader's
		       * only way where k is long; pend_one_pass 0) */
#define ROPE_YS_MAX 512 /* matvec_fused.comp YS_MAX */

bool vk_is_op(const struct belt_cmd *c, const char *op)
{
	return !strcmp(c->kernel->op, op);
}

bool vk_same_bind(const struct belt_binding *a, const struct belt_binding *b)
{
	return a->buf == b->buf && a->offset == b->offset && a->size == b->size;
}

int vk_residual_of(const struct belt_cmd *a, const struct belt_binding *y)
{
	return vk_same_bind(&a->bind[1], y) ? 0 : vk_same_bind(&a->bind[0], y) ? 1 : -1;
}

bool vk_bind_overlap(const struct belt_binding *a, const struct belt_binding *b)
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
	    !strcmp(op, "add") || !strcmp(op, "silu_mul") || !strcmp(op, "gelu_mul")) {
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
		/* a batched table's op writes all its rows */
		if (t->rows > 1 && fw >= 0)
			fwb = c->bind[fw].size;
		if (fw >= 0 && c->bind[fw].buf == buf &&
		    c->bind[fw].offset <= lo && c->bind[fw].offset + fwb >= hi)
			return true;
		if (touch_w)
			return false; /* a partial write: keep it simple */
	}
	return false;
}

/* Whether b's first bytes are dead after command last in the runs that
 * leave out the head (vk_dead_after's half; alone where, when the head
 * runs, the fused form computes what the table does). */
static bool dead_headless(const struct belt_table *t, const uint8_t *writes, uint32_t first,
			  uint32_t last, const struct belt_binding *b, uint64_t bytes)
{
	return b->buf && !b->buf->io &&
	       dead_scan(t, writes, first, last, b->buf, b->offset, b->offset + bytes, true);
}

bool vk_dead_after(const struct belt_table *t, const uint8_t *writes, uint32_t first,
		   uint32_t last, const struct belt_binding *b, uint64_t bytes)
{
	return dead_headless(t, writes, first, last, b, bytes) &&
	       dead_scan(t, writes, first, last, b->buf, b->offset, b->offset + bytes, false);
}

/* Whether matvec_fused can compute m: k a multiple of 8, 16-byte loads of
 * every row (Q8_0/Q4_0/Q6_K weights in the GPU layout, rp; Q4_K and Q5_K
 * in GGUF's, whose 144- and 176-byte super-blocks keep a 16-byte aligned
 * start aligned; IQ4_XS's 136 bytes take 8-byte loads). */
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
	case BELT_TYPE_Q4_0:
	case BELT_TYPE_Q6_K: return rp;
	case BELT_TYPE_Q4_K:
	case BELT_TYPE_Q5_K: return oc->pc.o[0] % 8 == 0 && k % 256 == 0;
	case BELT_TYPE_IQ4_XS: return oc->pc.o[0] % 4 == 0 && k % 256 == 0;
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
	case BELT_TYPE_Q4_K:
		return ctx->q8x & VK_Q8X_K ? VK_SH_FMV_Q4_K_XQ : VK_SH_FMV_Q4_K;
	case BELT_TYPE_Q5_K:
		return ctx->q8x & VK_Q8X_K ? VK_SH_FMV_Q5_K_XQ : VK_SH_FMV_Q5_K;
	case BELT_TYPE_Q6_K:
		return ctx->q8x & VK_Q8X_K ? VK_SH_FMV_Q6_K_XQ : VK_SH_FMV_Q6_K;
	case BELT_TYPE_IQ4_XS:
		/* float x: with x as int8 (a scale per sub-block, the codebook
		 * through a shared table) 1B IQ4_XS ran at 744.6 tokens/s
		 * against 815.0 (H100) */
		return VK_SH_FMV_IQ4_XS;
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

/* A decode group's rows per workgroup: b row groups a subgroup
 * (matvec_fused's MAXRG at most), so that fewer workgroups stage x:
 * the settings mv_blocks (groups with a norm) and mv_blocks_plain (the
 * others), else on Q4_0 with x as int8 VK_MVF_BLOCKS for those with a
 * norm and rows of at least VK_MVF_BLOCKS_K and VK_MVF_BLOCKS_PLAIN for
 * those without one over at least VK_MVF_BLOCKS_PLAIN_M rows (m: the
 * group's first matvec's), 1 for the rest. With the k-split, fewer where
 * the subgroups' sums of all those rows would not fit the shader's
 * KP_MAX (group_ks checks one row group). */
#define MAXRG 4 /* matvec_fused.comp */
static uint32_t fused_rpw(const struct vk_ctx *ctx, enum vk_shader sh, int k, int m,
			  bool norm)
{
	uint32_t b = norm ? ctx->tune.mv_blocks : ctx->tune.mv_blocks_plain;
	bool xq = sh == VK_SH_FMV_Q4_0_XQ;
	if (!b && norm)
		b = k >= VK_MVF_BLOCKS_K && xq ? VK_MVF_BLOCKS : 1;
	else if (!b)
		b = m >= VK_MVF_BLOCKS_PLAIN_M && xq ? VK_MVF_BLOCKS_PLAIN : 1;
	if (b > MAXRG)
		b = MAXRG;
	uint32_t rpw = group_rpw(ctx, sh, k), ks = group_ks(ctx, sh, k);
	while (b > 1 && ks > 1 && rpw * ks * b > KP_MAX)
		b--;
	return rpw * b;
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
	} else if (g->flags & F_TAIL) {
		out[n++] = &C[g->mv[0]].bind[2];      /* the matvec's output */
		out[n++] = &C[g->tail].bind[g->res]; /* the residual */
	} else if ((g->flags & F_ROPE) && g->rope >= 0) {
		out[n++] = &C[g->rope].bind[0]; /* q, rotated */
		out[n++] = &C[g->tail].bind[2]; /* k cache */
		out[n++] = &C[g->tail].bind[3]; /* v cache */
	} else if (g->flags & F_ROPE) {
		out[n++] = &C[g->tail].bind[0]; /* q, rotated */
		out[n++] = &C[g->tail].bind[3]; /* k cache */
		out[n++] = &C[g->tail].bind[4]; /* v cache */
	} else {
		for (int s = 0; s < g->nmv; s++)
			out[n++] = &C[g->mv[s]].bind[2];
	}
	if (g->flags & F_COPY)
		out[n++] = &C[g->copy_add].bind[g->copy_res]; /* the residual */
	return n;
}

/* The fused forms store k and v into F32 or F16 caches, both of one type:
 * 0 for F32, F_KVH for F16, -1 for caches they do not store (Q8_0, or
 * two types). */
static int cache_flag(const struct belt_binding *kc, const struct belt_binding *vc)
{
	if (kc->type != vc->type)
		return -1;
	return kc->type == BELT_TYPE_F32 ? 0 : kc->type == BELT_TYPE_F16 ? (int)F_KVH : -1;
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
	       cache_flag(&rc->bind[3], &rc->bind[4]) >= 0 &&
	       vk_same_bind(&rc->bind[0], &q->bind[2]) &&
	       vk_same_bind(&rc->bind[1], &k->bind[2]) &&
	       vk_same_bind(&rc->bind[2], &v->bind[2]) &&
	       q->param[1].i == nh * hd && k->param[1].i == nkv * hd &&
	       v->param[1].i == nkv * hd &&
	       vk_dead_after(t, writes, first, r, &rc->bind[1], kv_bytes) &&
	       vk_dead_after(t, writes, first, r, &rc->bind[2], kv_bytes);
}

/* Whether r, r + 1 and r + 2 are rope of q, rope of k and kv_store of
 * that k and a v, rotating with one set of frequencies (same head_dim,
 * rope_dim, base, pairs and freq_scale; not rope_ff's factors) at one
 * position, in the same part of the table (head or not), with the k and
 * v scratch dead after the store (what the fused forms do not write);
 * *nh, *nkv and *hd their heads and head size. Both fusions of these
 * pieces (into matvec_fused's epilogue, or qkv_rope.comp) start here. */
static bool rope_pieces(const struct belt_table *t, const uint8_t *writes, uint32_t first,
			uint32_t r, int *nh, int *nkv, int *hd)
{
	const struct belt_cmd *C = t->cmds;
	if (r + 2 >= t->n_cmds || !vk_is_op(&C[r], "rope") || !vk_is_op(&C[r + 1], "rope") ||
	    !vk_is_op(&C[r + 2], "kv_store"))
		return false;
	const struct belt_cmd *rq = &C[r], *rk = &C[r + 1], *kv = &C[r + 2];
	for (int p = 1; p < 6; p++)
		if (rq->param[p].i != rk->param[p].i)
			return false;
	*nh = rq->param[0].i, *nkv = rk->param[0].i, *hd = rq->param[1].i;
	/* k and v: a row a token of the pass */
	uint64_t kv_bytes = (uint64_t)*nkv * *hd * 4 * (t->rows > 1 ? t->rows : 1);
	return rk->head == rq->head && kv->head == rq->head && rq->patch == rk->patch &&
	       rq->patch == kv->patch && *hd % 2 == 0 && kv->param[0].i == *nkv * *hd &&
	       cache_flag(&kv->bind[2], &kv->bind[3]) >= 0 &&
	       vk_same_bind(&rk->bind[0], &kv->bind[0]) &&
	       vk_dead_after(t, writes, first, r + 2, &kv->bind[0], kv_bytes) &&
	       vk_dead_after(t, writes, first, r + 2, &kv->bind[1], kv_bytes);
}

/* Whether the rope pieces at r (rope_pieces) do what rope_kv does to the
 * outputs of group g's q, k, v (rope_fusable). */
static bool rope_pieces_fusable(const struct belt_table *t, const uint8_t *writes,
				uint32_t first, const struct fgroup *g, uint32_t r,
				uint32_t rpw)
{
	const struct belt_cmd *C = t->cmds;
	int nh, nkv, hd;
	if (!rope_pieces(t, writes, first, r, &nh, &nkv, &hd))
		return false;
	const struct belt_cmd *rq = &C[r], *kv = &C[r + 2];
	const struct belt_cmd *q = &C[g->mv[0]], *k = &C[g->mv[1]], *v = &C[g->mv[2]];
	return rq->head == q->head && rpw % 2 == 0 && rpw <= ROPE_YS_MAX &&
	       vk_same_bind(&rq->bind[0], &q->bind[2]) && vk_same_bind(&kv->bind[0], &k->bind[2]) &&
	       vk_same_bind(&kv->bind[1], &v->bind[2]) && q->param[1].i == nh * hd &&
	       k->param[1].i == nkv * hd && v->param[1].i == nkv * hd;
}

/* Whether j, j + 1 and j + 2 are bias_adds of group g's q, k and v in
 * place (each over its matvec's whole output, in the same part of the
 * table): matvec_fused's BIAS adds them before its rope epilogue. */
static bool qkv_bias_at(const struct belt_table *t, const struct fgroup *g, uint32_t j)
{
	const struct belt_cmd *C = t->cmds;
	if (g->nmv != 3 || j + 2 >= t->n_cmds)
		return false;
	for (int s = 0; s < 3; s++) {
		const struct belt_cmd *b = &C[j + s], *mv = &C[g->mv[s]];
		if (!vk_is_op(b, "bias_add") || b->head != mv->head ||
		    !vk_same_bind(&b->bind[0], &mv->bind[2]) ||
		    b->param[0].i != mv->param[1].i)
			return false;
	}
	return true;
}

/* Whether commands i, i + 1 and i + 2 are rmsnorm of y into y2, add of
 * y2 into a residual r in place, and rmsnorm of r (the next matvecs' x)
 * with the same eps: matvec_fused's PEND applies the first two to r as
 * the third loads it (y2 must be dead after the add, as it is never
 * written); *res: the add's binding that is r. */
static bool pend_at(const struct belt_table *t, const uint8_t *writes, uint32_t i, int *res)
{
	const struct belt_cmd *C = t->cmds;
	if (i + 2 >= t->n_cmds || !vk_is_op(&C[i], "rmsnorm") || !vk_is_op(&C[i + 1], "add") ||
	    !vk_is_op(&C[i + 2], "rmsnorm") || C[i].head || C[i + 1].head || C[i + 2].head)
		return false;
	const struct belt_cmd *pn = &C[i], *a = &C[i + 1], *nm = &C[i + 2];
	const struct belt_binding *y = &pn->bind[0], *y2 = &pn->bind[2];
	int r = vk_residual_of(a, y2);
	int n = pn->param[0].i;
	if (r < 0 || a->param[0].i != n || nm->param[0].i != n ||
	    memcmp(&pn->param[1], &nm->param[1], sizeof pn->param[1]) ||
	    !vk_same_bind(&a->bind[2], &a->bind[r]) || !vk_same_bind(&nm->bind[0], &a->bind[r]))
		return false;
	const struct belt_binding *rb = &a->bind[r];
	if (vk_bind_overlap(rb, y) || vk_bind_overlap(rb, y2) || vk_bind_overlap(rb, &pn->bind[1]) ||
	    vk_bind_overlap(rb, &nm->bind[1]) || vk_bind_overlap(rb, &nm->bind[2]) ||
	    !vk_dead_after(t, writes, i, i + 1, y2, (uint64_t)n * 4))
		return false;
	*res = r;
	return true;
}

/* PEND stages all of x before its loop: k within the tile of the shader
 * matvec m runs on. */
static bool pend_fits(const struct vk_ctx *ctx, const struct belt_cmd *m, const struct vk_cmd *oc,
		      bool rp)
{
	if (!vk_fusable_matvec(m, oc, rp))
		return false;
	enum vk_shader sh = fmv_shader(ctx, ((const struct vk_op *)m->kernel->impl)->wtype);
	return (uint32_t)m->param[0].i <= ctx->mv_tile[sh - VK_SH_FMV_F32];
}

/* PEND at i leaves r' (r: the add's binding res) in the plan's spare
 * copy; the first matvec after the group (last) copies it back (COPY):
 * that matvec's index, where no command before it touches r, it reads
 * nor writes r itself and is not followed by an add into r (an ADD
 * epilogue reads rows of r before every copy is done; a TAIL reads r
 * after them); -1 if there is none. */
static int pend_copier(const struct belt_table *t, const struct vk_cmd *oc, const bool *rp,
		       uint32_t last, const struct belt_binding *r)
{
	const struct belt_cmd *C = t->cmds;
	for (uint32_t j = last + 1; j < t->n_cmds; j++) {
		const struct belt_cmd *c = &C[j];
		bool touches = false;
		for (int b = 0; b < c->n_bind; b++)
			touches = touches || vk_bind_overlap(&c->bind[b], r);
		if (vk_is_op(c, "matvec") && !c->head && vk_fusable_matvec(c, &oc[j], rp[j])) {
			if (touches || (j + 1 < t->n_cmds && vk_is_op(&C[j + 1], "add") &&
					(vk_bind_overlap(&C[j + 1].bind[0], r) ||
					 vk_bind_overlap(&C[j + 1].bind[1], r))))
				return -1;
			/* q, k, v with biases: BIAS takes COPY's binding 13 */
			for (uint32_t b = j + 1; b <= j + 3 && b < t->n_cmds; b++)
				if (vk_is_op(&C[b], "bias_add"))
					return -1;
			return (int)j;
		}
		if (touches)
			return -1;
	}
	return -1;
}

bool vk_fuse_find(const struct vk_ctx *ctx, const struct belt_table *t,
		      const struct vk_cmd *oc, const bool *rp,
		      const uint8_t *writes, uint32_t i, int norm, struct fgroup *g)
{
	const struct belt_cmd *C = t->cmds;
	uint32_t n = t->n_cmds, j = i;
	memset(g, 0, sizeof *g);
	g->norm = -1;
	g->tail = -1;
	g->rope = -1;
	g->tnorm = -1;
	g->pend = -1;
	g->bias = -1;
	bool head = C[i].head;
	/* not for the head: its many rows (vocab) would each reread x and w
	 * for one dispatch saved per token (measured on the H100 with int8
	 * x: 1B Q4_0 1233 -> 1235 tokens/s, 8B Q4_0 359.6 -> 360.2, 1B F16
	 * 722.6 -> 718.2; not worth it) */
	if (norm >= 0) {
		g->norm = norm;
	} else if (ctx->tune.defer_norms && pend_at(t, writes, i, &g->pres) &&
		   i + 3 < n && vk_is_op(&C[i + 3], "matvec") &&
		   pend_fits(ctx, &C[i + 3], &oc[i + 3], rp[i + 3])) {
		g->pend = (int)i;
		g->norm = (int)i + 2;
		j = i + 3;
	} else if (vk_is_op(&C[i], "rmsnorm") && !head) {
		g->norm = (int)i;
		j = i + 1;
	}
	const struct belt_cmd *nc = g->norm >= 0 ? &C[g->norm] : NULL;
	/* the group's first command (liveness scans stop there) */
	uint32_t g0 = g->pend >= 0 ? (uint32_t)g->pend : nc ? (uint32_t)g->norm : i;
	const struct belt_cmd *first = NULL;
	for (; j < n && g->nmv < 3 && vk_is_op(&C[j], "matvec"); j++) {
		const struct belt_cmd *m = &C[j];
		if (m->head != head || !vk_fusable_matvec(m, &oc[j], rp[j]))
			break;
		if (!first) {
			if (nc && (!vk_same_bind(&m->bind[1], &nc->bind[2]) ||
				   m->param[0].i != nc->param[0].i))
				break;
			first = m;
		} else if (!vk_same_bind(&m->bind[1], &first->bind[1]) ||
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
	/* the fused dispatch's rows per workgroup (the rope epilogues pair them) */
	uint32_t rpw = fused_rpw(ctx, fmv_shader(ctx, ((const struct vk_op *)m0->kernel->impl)->wtype),
				 m0->param[0].i, m0->param[1].i, g->norm >= 0);
	bool gelu = j < n && vk_is_op(&C[j], "gelu_mul");
	/* q/k/v's biases (not with PEND, whose bindings they take) */
	bool bias = g->pend < 0 && qkv_bias_at(t, g, j);
	if (g->nmv == 2 && j < n && (gelu || vk_is_op(&C[j], "silu_mul")) &&
	    C[j].head == head) {
		const struct belt_cmd *sm = &C[j], *m1 = &C[g->mv[1]];
		uint64_t bytes = (uint64_t)sm->param[0].i * 4;
		if (vk_same_bind(&sm->bind[0], &m0->bind[2]) &&
		    vk_same_bind(&sm->bind[1], &m1->bind[2]) &&
		    sm->param[0].i == m0->param[1].i &&
		    sm->param[0].i == m1->param[1].i &&
		    vk_dead_after(t, writes, g0, j, &sm->bind[1], bytes) &&
		    (vk_same_bind(&sm->bind[2], &sm->bind[0]) ||
		     vk_dead_after(t, writes, g0, j, &sm->bind[0], bytes))) {
			g->tail = (int)j;
			g->flags |= F_SWIGLU | (gelu ? F_GELU : 0);
			g->last = j;
		}
	} else if (g->nmv == 3 && j < n &&
		   (bias || vk_is_op(&C[j], "rope_kv") || vk_is_op(&C[j], "rope"))) {
		/* the biases, then rope_kv or its pieces */
		uint32_t rj = bias ? j + 3 : j;
		if (rj < n && vk_is_op(&C[rj], "rope_kv") && C[rj].head == head &&
		    rope_fusable(t, writes, g0, g, rj, rpw)) {
			g->tail = (int)rj;
			g->flags |= F_ROPE | (uint32_t)cache_flag(&C[rj].bind[3], &C[rj].bind[4]);
			g->last = rj;
		} else if (rope_pieces_fusable(t, writes, g0, g, rj, rpw)) {
			g->rope = (int)rj;
			g->tail = (int)rj + 2;
			g->flags |= F_ROPE | (C[rj].param[4].i ? F_NEOX : 0) |
				    (uint32_t)cache_flag(&C[rj + 2].bind[2], &C[rj + 2].bind[3]);
			g->last = rj + 2;
		}
		if ((g->flags & F_ROPE) && bias) {
			g->bias = (int)j;
			g->flags |= F_BIAS;
		}
	} else if (g->nmv == 1 && j < n && vk_is_op(&C[j], "add") &&
		   C[j].head == head) {
		const struct belt_cmd *a = &C[j];
		const struct belt_binding *y = &m0->bind[2];
		int r = vk_residual_of(a, y);
		if (r >= 0 && vk_same_bind(&a->bind[2], &a->bind[r]) &&
		    !vk_bind_overlap(&a->bind[r], y) &&
		    a->param[0].i == m0->param[1].i &&
		    vk_dead_after(t, writes, g0, j, y,
			       (uint64_t)a->param[0].i * 4)) {
			g->tail = (int)j;
			g->flags |= F_ADD;
			g->res = r;
			g->last = j;
		}
	} else if (g->nmv == 1 && !nc && j + 1 < n && vk_is_op(&C[j], "rmsnorm") &&
		   vk_is_op(&C[j + 1], "add") && C[j].head == head && C[j + 1].head == head) {
		/* matvec into y, rmsnorm of y into y2, add of y2 into a
		 * residual: the last workgroup to finish the matvec does the
		 * rest, so that y must be dead after the group as y2 is */
		const struct belt_cmd *nm = &C[j], *a = &C[j + 1];
		const struct belt_binding *y = &m0->bind[2], *y2 = &nm->bind[2];
		uint64_t bytes = (uint64_t)nm->param[0].i * 4;
		int r = vk_residual_of(a, y2);
		struct fgroup pg;
		/* the next group applies them as it loads the residual
		 * (PEND) where it can: no workgroup waits for the last */
		bool deferred = (ctx->tune.defer_norms &&
				 vk_fuse_find(ctx, t, oc, rp, writes, j, -1, &pg) &&
				 pg.pend == (int)j) ||
				vk_norm_add_norm_at(t, writes, j);
		if (!deferred && r >= 0 && vk_same_bind(&nm->bind[0], y) && nm->param[0].i == m0->param[1].i &&
		    a->param[0].i == nm->param[0].i && vk_same_bind(&a->bind[2], &a->bind[r]) &&
		    !vk_bind_overlap(&a->bind[r], y) && !vk_bind_overlap(&a->bind[r], y2) &&
		    !vk_bind_overlap(&a->bind[r], &nm->bind[1]) &&
		    !vk_bind_overlap(y, &nm->bind[1]) &&
		    vk_dead_after(t, writes, g0, j + 1, y2, bytes) &&
		    (vk_same_bind(y, y2) || vk_dead_after(t, writes, g0, j + 1, y, bytes))) {
			g->tail = (int)j + 1;
			g->tnorm = (int)j;
			g->flags |= F_TAIL;
			g->res = r;
			g->last = j + 1;
		}
	}
	if (g->pend >= 0) {
		g->copy_at = pend_copier(t, oc, rp, g->last, &C[g->pend + 1].bind[g->pres]);
		if (g->copy_at < 0)
			return false;
	}
	/* what the fused dispatch writes never overlaps what it reads */
	const struct belt_binding *in[12], *out[4];
	int nin = 0, nout = vk_group_outputs(t, g, out);
	in[nin++] = &m0->bind[1];
	for (int s = 0; s < g->nmv; s++)
		in[nin++] = &C[g->mv[s]].bind[0];
	if (nc) {
		in[nin++] = &nc->bind[0];
		in[nin++] = &nc->bind[1];
	}
	if (g->tnorm >= 0)
		in[nin++] = &C[g->tnorm].bind[1];
	if (g->pend >= 0) {
		in[nin++] = &C[g->pend].bind[0]; /* y */
		in[nin++] = &C[g->pend].bind[1]; /* its norm's weight */
	}
	for (int s = 0; g->bias >= 0 && s < 3; s++)
		in[nin++] = &C[g->bias + s].bind[1];
	for (int a = 0; a < nout; a++) {
		for (int b = 0; b < nin; b++)
			if (vk_bind_overlap(out[a], in[b]))
				return false;
		for (int b = a + 1; b < nout; b++)
			if (vk_bind_overlap(out[a], out[b]))
				return false;
	}
	if (nc) {
		/* its output must be dead after the group, or read only by
		 * the next group's matvecs (another weight type: q and k in
		 * one, v in another), which fuses it too; else the caller
		 * keeps the rmsnorm and tries again from the matvecs */
		if (!vk_dead_after(t, writes, g0, g->last, &nc->bind[2],
				(uint64_t)nc->param[0].i * 4)) {
			struct fgroup ng;
			if (g->pend >= 0) /* the next would apply it again */
				return false;
			if (g->last + 1 >= n || !vk_is_op(&C[g->last + 1], "matvec") ||
			    !vk_fuse_find(ctx, t, oc, rp, writes, g->last + 1, g->norm, &ng))
				return false;
			g->norm_next = true;
		}
		g->flags |= F_NORM | (g->pend >= 0 ? F_PEND : 0u);
	}
	return g->flags || g->nmv > 1;
}

/* Values of x per 16 weight bytes of shader sh (matvec_fused's UE). */
static uint32_t fmv_ue(enum vk_shader sh)
{
	switch (sh) {
	case VK_SH_FMV_F32: return 4;
	case VK_SH_FMV_F16:
	case VK_SH_FMV_BF16: return 8;
	case VK_SH_FMV_Q8_0:
	case VK_SH_FMV_Q8_0_XQ: return 16;
	default: return 32;
	}
}

/* matvec_fused's PR for a pass of few rows: the most rows of the pass
 * (16, 8, 4 or 2) a workgroup can stage x of in shared memory with a
 * tile (*tile) that keeps each row's sum exactly as PR 1 makes it: the
 * same units to the same lanes in the same order, which holds where both
 * tiles are multiples of the units the lanes stride over at once (else
 * only for the same tile). 1: none fits, or few_shared is off. */
static uint32_t few_pr(const struct vk_ctx *ctx, enum vk_shader sh, uint32_t ks,
		       uint32_t *tile)
{
	uint32_t t = sh - VK_SH_FMV_F32, ue = fmv_ue(sh);
	uint32_t stride = ue * ctx->subgroup * ks, dec = ctx->mv_tile[t];
	bool xq = sh == VK_SH_FMV_Q4_0_XQ || sh == VK_SH_FMV_Q8_0_XQ;
	bool kxq = sh == VK_SH_FMV_Q4_K_XQ || sh == VK_SH_FMV_Q5_K_XQ ||
		   sh == VK_SH_FMV_Q6_K_XQ;
	bool kmin = sh == VK_SH_FMV_Q4_K || sh == VK_SH_FMV_Q5_K;
	/* shared bytes per 4 values of a row (the shader's arrays), and the
	 * 6 KiB the host keeps for its others (vk_tune_matvec) */
	uint32_t b4 = kxq ? 6 : xq ? 5 : kmin ? 17 : 16;
	uint32_t extra = xq || kxq ? 64 : 0, budget = ctx->props.limits.maxComputeSharedMemorySize;
	*tile = dec;
	if (!ctx->tune.few_shared || budget <= 6144)
		return 1;
	budget -= 6144;
	uint32_t top = ctx->tune.few_pr ? ctx->tune.few_pr : VK_FEW_PR;
	for (uint32_t pr = top; pr > 1; pr /= 2) {
		uint32_t tl = dec;
		if (dec % stride == 0)
			while (tl > 256 && (uint64_t)pr * (tl / 4 * b4 + extra) > budget &&
			       (tl / 2) % stride == 0 && (tl / 2) % 256 == 0)
				tl /= 2;
		if ((uint64_t)pr * (tl / 4 * b4 + extra) <= budget) {
			*tile = tl;
			return pr;
		}
	}
	return 1;
}

/* The fused command for group g: descriptors from the originals'. */
/* Whether a few-row matvec of shader sh over rows of k reads x as int8
 * from memory (matvec_fused XG): Q4_0 and Q8_0 with x as int8, where one
 * pass over k gives each lane the units that decode's tiles give it (k
 * fits one tile, or a tile is a multiple of the lanes' stride). */
static bool few_xg(const struct vk_ctx *ctx, enum vk_shader sh, uint32_t ks, uint32_t k)
{
	if (!ctx->tune.few_xg || k < ctx->tune.few_xg)
		return false;
	uint32_t t = sh - VK_SH_FMV_F32, dec = ctx->mv_tile[t];
	return ctx->tune.few_shared &&
	       (sh == VK_SH_FMV_Q4_0_XQ || sh == VK_SH_FMV_Q8_0_XQ) && k % 32 == 0 &&
	       (k <= dec || dec % (fmv_ue(sh) * ctx->subgroup * ks) == 0);
}

bool vk_few_xg(const struct vk_ctx *ctx, const struct belt_cmd *m)
{
	const struct vk_op *op = m->kernel->impl;
	enum vk_shader sh = fmv_shader(ctx, op->wtype);
	int k = m->param[0].i;
	return k > 0 && few_xg(ctx, sh, group_ks(ctx, sh, k), (uint32_t)k);
}

/* Subgroups a workgroup of matvec_few_cm over m rows of W and k columns,
 * sb blocks a step: few_mma_sg where set, else VK_FEW_MMA_SG, doubled up
 * to VK_FEW_MMA_SG_MAX while the matrix's workgroups have fewer than
 * VK_FEW_MMA_SUBGROUPS subgroups in all and each subgroup keeps at least
 * 2 steps: a matrix of few rows (k and v; a small model's q, o and down)
 * then splits k between more subgroups rather than leaving SMs idle while
 * each walks all of it. */
static uint32_t few_mma_nsg(const struct vk_ctx *ctx, uint32_t m, uint32_t k, uint32_t sb)
{
	if (ctx->tune.few_mma_sg)
		return ctx->tune.few_mma_sg;
	uint32_t wg = (m + 15) / 16, steps = k / 32 / sb, nsg = VK_FEW_MMA_SG;
	while (nsg < VK_FEW_MMA_SG_MAX && wg * nsg < VK_FEW_MMA_SUBGROUPS && steps >= 4 * nsg)
		nsg *= 2;
	return nsg;
}

/* The few-row matvec on the int8 matrix units (shaders/matvec_few_cm.comp)
 * for passes of at least few_mma rows: a workgroup of few_mma_nsg
 * subgroups per 16 rows of W, every row of the pass in it; x as int8 from
 * memory, as pc (the XG kernel's) places it. */
static int few_rows_cm(struct vk_ctx *ctx, int wtype, uint32_t rows, bool add,
		       const struct vk_pc *pc, struct vk_cmd *c, char *err, size_t errsz)
{
	uint32_t u = VK_FEW_MMA_U;
	/* the shader's shared arrays: per subgroup, the step's blocks (Q4_0
	 * two a unit) as tiles of W and x (16 rows of 48 bytes) and their
	 * scales */
	uint32_t sb = wtype == BELT_TYPE_Q8_0 ? u : 2 * u;
	uint32_t nsg = few_mma_nsg(ctx, rows, pc->p[0], sb);
	if ((uint64_t)nsg * sb * 16 * (2 * 48 + 8) > ctx->props.limits.maxComputeSharedMemorySize)
		return 0;
	c->few_cm_pc = *pc;
	vk_grid_xy(ctx, (rows + 15) / 16, &c->few_cm_gx, &c->few_cm_gy);
	uint32_t data[4] = {32 * nsg, add ? 1 : 0, nsg, u};
	if (vk_spec_pipeline(ctx, wtype == BELT_TYPE_Q8_0 ? VK_SH_FEW_CM_Q8_0 : VK_SH_FEW_CM_Q4_0,
			     VK_FMV_BINDINGS, data, 4, &c->few_cm_pipe, err, errsz))
		return -1;
	c->has_few_cm = true;
	return 0;
}

int vk_few_rows_make(struct vk_ctx *ctx, const struct belt_cmd *m, const struct vk_cmd *oc,
		     const VkDescriptorBufferInfo *obi, struct vk_cmd *c,
		     VkDescriptorBufferInfo *fbi, uint32_t cap, bool add, char *err, size_t errsz)
{
	const struct vk_op *op = m->kernel->impl;
	enum vk_shader sh = fmv_shader(ctx, op->wtype);
	int k = m->param[0].i;
	uint32_t rows = (uint32_t)m->param[1].i, rpw = group_rpw(ctx, sh, k);
	struct vk_pc pc = {0};
	pc.mode = oc->pc.mode; /* batched, the table's rows */
	pc.t = oc->pc.t;
	fbi[0] = fbi[1] = obi[1];
	pc.o[0] = pc.o[1] = oc->pc.o[1];
	for (int s = 0; s < 3; s++) {
		fbi[2 + s] = obi[0];
		fbi[5 + s] = obi[2];
	}
	for (int b = BELT_MAX_BINDINGS; b < VK_FMV_BINDINGS; b++) /* PEND's, unused */
		fbi[b] = b == BELT_MAX_BINDINGS + 2 ? obi[2] : obi[0];
	pc.o[2] = oc->pc.o[0];
	pc.o[5] = oc->pc.o[2];
	pc.p[0] = (uint32_t)k;
	pc.p[1] = 1;
	pc.p[2] = rows;
	if (op->wtype == BELT_TYPE_Q8_0 || op->wtype == BELT_TYPE_Q4_0 ||
	    op->wtype == BELT_TYPE_Q6_K)
		pc.p[7] = pc.o[2] + vk_repacked_scales(op->wtype, m->bind[0].size);
	/* columns of workgroups over the pass's rows: one a row (PR 1), or
	 * VK_FEW_ROWS / PR of PR rows each */
	uint32_t ks = group_ks(ctx, sh, k), tile = 256, pr;
	bool xg = few_xg(ctx, sh, ks, (uint32_t)k);
	if (!xg) {
		pr = few_pr(ctx, sh, ks, &tile);
	} else {
		/* no tile of x in shared memory: the pipeline's TILE sizes
		 * only arrays it does not use; x at uvec4 0, its scales at
		 * uvec2 cap k / 8 of binding 0 */
		pr = ctx->tune.few_pr ? ctx->tune.few_pr : VK_FEW_PR;
		pc.o[0] = 0;
		pc.p[14] = cap * (uint32_t)k / 8;
		if (ctx->coopmat_int8 && ctx->tune.few_mma && ctx->subgroup == 32 &&
		    few_rows_cm(ctx, op->wtype, rows, add, &pc, c, err, errsz))
			return -1;
	}
	uint32_t cols = VK_FEW_ROWS / pr;
	/* with PR, more rows of W a subgroup than decode's: each x loaded
	 * from shared memory serves more of them (rows per subgroup leave a
	 * row's sum as it is) */
	uint32_t ti = sh - VK_SH_FMV_F32, nr = ctx->mv_nr[ti];
	uint32_t wg = ctx->mv_wg[ti], unr = ctx->mv_unr[ti];
	uint32_t fwg = ctx->tune.few_wg ? ctx->tune.few_wg : VK_FEW_WG_XG;
	if (xg && ks == 1 && fwg <= ctx->props.limits.maxComputeWorkGroupInvocations &&
	    fwg >= ctx->subgroup)
		wg = fwg;
	if (xg && ctx->tune.few_unroll)
		unr = ctx->tune.few_unroll;
	if (pr > 1) {
		uint32_t sgs = ctx->subgroup < wg ? wg / ctx->subgroup : 1; /* subgroups */
		nr = ctx->tune.few_nr ? ctx->tune.few_nr : xg ? VK_FEW_NR_XG : VK_FEW_NR;
		while (ks > 1 && nr > 1 && nr * sgs > KP_MAX) /* the k-split sums */
			nr /= 2;
		rpw = nr * sgs / ks;
	}
	pc.aux[0] = rpw;
	pc.aux[2] = cols;
	c->few_pc = pc;
	vk_grid_xy(ctx, (uint64_t)(rows + rpw - 1) / rpw * cols, &c->few_gx, &c->few_gy);
	c->few_xg = xg;
	if (pr > 1 ? vk_fused_pipeline_pr(ctx, sh, ks, pr, nr, tile, xg, xg && add ? F_ADD : 0,
					  wg, unr, &c->few_pipe, err, errsz)
		   : vk_fused_pipeline_pr(ctx, sh, ks, 1, ctx->mv_nr[ti], ctx->mv_tile[ti], false, 0,
					  ctx->mv_wg[ti], ctx->mv_unr[ti], &c->few_pipe, err, errsz))
		return -1;
	c->few_layout = ctx->pl[VK_FMV_BINDINGS];
	c->has_few = true;
	return 0;
}

int vk_fuse_make(struct vk_ctx *ctx, const struct belt_table *t,
		     const struct vk_cmd *oc,
		     VkDescriptorBufferInfo (*obi)[VK_SET_MAX],
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
	uint32_t groups = 0, rpw = fused_rpw(ctx, sh, C[m0].param[0].i, C[m0].param[1].i,
					       g->norm >= 0);
	for (int s = 0; s < 3; s++) {
		uint32_t mi = g->mv[s < g->nmv ? s : 0];
		bi[2 + s] = obi[mi][0];
		c->pc.o[2 + s] = s < g->nmv ? oc[mi].pc.o[0] : 0;
		bi[5 + s] = obi[mi][2];
		c->pc.o[5 + s] = s < g->nmv ? oc[mi].pc.o[2] : 0;
		c->pc.p[2 + s] = s < g->nmv ? (uint32_t)C[mi].param[1].i : 0;
		/* Q8_0/Q4_0/Q6_K: the scales follow the range's quants */
		if (s < g->nmv && (op->wtype == BELT_TYPE_Q8_0 ||
				   op->wtype == BELT_TYPE_Q4_0 ||
				   op->wtype == BELT_TYPE_Q6_K))
			c->pc.p[7 + s] = c->pc.o[2 + s] +
					 vk_repacked_scales(op->wtype, C[mi].bind[0].size);
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
	} else if (g->flags & F_TAIL) {
		/* the norm's weight in W1's binding, the residual in y1's,
		 * the norm's eps in p5; its counter in aux[2] (the caller's
		 * work words) */
		bi[3] = obi[g->tnorm][1];
		c->pc.o[3] = oc[g->tnorm].pc.o[1];
		bi[6] = obi[g->tail][g->res];
		c->pc.o[6] = oc[g->tail].pc.o[g->res];
		memcpy(&c->pc.p[5], &C[g->tnorm].param[1], 4);
	} else if (g->flags & F_ROPE) {
		/* q in place; k and v into the caches: rope_kv's bindings 0,
		 * 3 and 4, or rope q's 0 and kv_store's 2 and 3 (pieces) */
		bool pieces = g->rope >= 0;
		int rq = pieces ? g->rope : g->tail;
		const int src[3][2] = {{rq, 0}, {g->tail, pieces ? 2 : 3}, {g->tail, pieces ? 3 : 4}};
		for (int s = 0; s < 3; s++) {
			bi[5 + s] = obi[src[s][0]][src[s][1]];
			c->pc.o[5 + s] = oc[src[s][0]].pc.o[src[s][1]];
		}
		const struct belt_cmd *r = &C[rq];
		/* head_dim, rope_dim, kv_dim */
		c->pc.p[10] = (uint32_t)r->param[pieces ? 1 : 2].i;
		c->pc.p[11] = (uint32_t)r->param[pieces ? 2 : 3].i;
		c->pc.p[12] = (uint32_t)(pieces ? C[g->tail].param[0].i
						: r->param[1].i * r->param[2].i);
		c->pc.p[13] = oc[rq].pc.aux[0]; /* its freqs in meta */
		/* the store's caches */
		c->pc.p[VK_PC_KV_SLOTS] = oc[g->tail].pc.p[VK_PC_KV_SLOTS];
		/* its position and cache slot from its patch */
		c->pc.mode = (uint32_t)r->patch << VK_MODE_PATCH2_SHIFT;
	}
	/* PEND's bindings 10 and 11: y and its norm's weight (offsets in p14
	 * and aux1); COPY's 12: the residual (offset p14, p10 values);
	 * the spare copy in 12 (PEND) or 13 (COPY) is the caller's.
	 * Elsewhere W0's range for those read, y0's for the one written,
	 * which the dispatch reads or writes anyway */
	for (int b = BELT_MAX_BINDINGS; b < VK_FMV_BINDINGS; b++)
		bi[b] = b == BELT_MAX_BINDINGS + 2 ? bi[5] : bi[2];
	if (g->flags & F_PEND) {
		bi[BELT_MAX_BINDINGS] = obi[g->pend][0];
		c->pc.p[14] = oc[g->pend].pc.o[0];
		bi[BELT_MAX_BINDINGS + 1] = obi[g->pend][1];
		c->pc.aux[1] = oc[g->pend].pc.o[1];
	} else if (g->flags & F_COPY) {
		bi[BELT_MAX_BINDINGS + 2] = obi[g->copy_add][g->copy_res];
		c->pc.p[14] = oc[g->copy_add].pc.o[g->copy_res];
		c->pc.p[10] = (uint32_t)C[g->copy_add].param[0].i;
	}
	if (g->flags & F_BIAS) {
		/* the biases of q, k, v in bindings 10, 11, 13 (descriptors
		 * 8, 9, 11), their offsets in p14, aux1, aux2 (neither PEND
		 * nor COPY here) */
		uint32_t *bo[3] = {&c->pc.p[14], &c->pc.aux[1], &c->pc.aux[2]};
		for (int s = 0; s < 3; s++) {
			bi[BELT_MAX_BINDINGS + (s == 2 ? 3 : s)] = obi[g->bias + s][1];
			*bo[s] = oc[g->bias + s].pc.o[1];
		}
	}
	c->pc.p[0] = (uint32_t)C[m0].param[0].i;
	c->pc.p[1] = (uint32_t)g->nmv;
	c->pc.p[6] = g->flags;
	c->pc.aux[0] = rpw;
	vk_grid_xy(ctx, groups, &c->gx, &c->gy);
	c->gz = 1;
	c->head = C[m0].head;
	c->n_bind = VK_FMV_BINDINGS;
	const char *what = g->flags & F_GELU ? "geglu"
			   : g->flags & F_SWIGLU ? "swiglu"
			   : g->flags & F_ADD	? "matvec+add"
			   : g->flags & F_TAIL	? "matvec+norm+add"
			   : g->nmv == 3	? "matvec3"
			   : g->nmv == 2	? "matvec2"
						: "matvec";
	snprintf(c->kind, sizeof c->kind, "%s%s%s%s %s%s",
		 g->flags & F_PEND ? "post+" : g->flags & F_COPY ? "copy+" : "",
		 g->flags & F_NORM ? "norm+" : "", what,
		 g->flags & F_BIAS ? "+bias+rope" : g->flags & F_ROPE ? "+rope" : "",
		 belt_type_name(op->wtype), c->head ? " head" : "");
	uint32_t spec = g->flags;
	if ((g->flags & F_PEND) && !ctx->tune.pend_one_pass)
		spec |= F_PEND2;
	if (vk_fused_pipeline(ctx, sh, spec, (uint32_t)g->nmv, ks, &c->pipe, err, errsz))
		return -1;
	c->layout = ctx->pl[VK_FMV_BINDINGS];
	return 0;
}

/* Whether command i is an rmsnorm of y whose output only the add at
 * i + 1 reads, which adds it into a residual r in place: *res the add's
 * binding that is r. */
static bool norm_add_at(const struct belt_table *t, const uint8_t *writes, uint32_t i, int *res)
{
	const struct belt_cmd *C = t->cmds;
	if (i + 1 >= t->n_cmds || !vk_is_op(&C[i], "rmsnorm") ||
	    !vk_is_op(&C[i + 1], "add") || C[i].head != C[i + 1].head)
		return false;
	const struct belt_cmd *nm = &C[i], *a = &C[i + 1];
	const struct belt_binding *y = &nm->bind[2];
	/* the add's other input is the residual it overwrites */
	*res = vk_residual_of(a, y);
	uint64_t bytes = (uint64_t)nm->param[0].i * 4;
	return *res >= 0 && a->param[0].i == nm->param[0].i &&
	       vk_same_bind(&a->bind[2], &a->bind[*res]) &&
	       !vk_bind_overlap(&a->bind[*res], &nm->bind[0]) &&
	       !vk_bind_overlap(&a->bind[*res], &nm->bind[1]) &&
	       !vk_bind_overlap(&a->bind[*res], y) && vk_dead_after(t, writes, i, i + 1, y, bytes);
}

#define NORM2_MAX 4096 /* rmsnorm.comp's WG * PER: the row it holds */

/* Whether norm_add_at(i) and command i + 2 is an rmsnorm of that
 * residual r, in place or into an out that overlaps neither r nor the
 * weights (y it may: the shader reads all of y before it writes), r at
 * most NORM2_MAX values: rmsnorm.comp -DADD -DNORM2 does all three, row
 * by row (Gemma's post-norm, its add and the next norm: the FFN's, the
 * next layer's attention's, the output's). In a one-row table the third
 * may be the head's: the fused dispatch then runs it with the others for
 * every token, so its out must be dead where the head is left out; in a
 * batched table, whose head runs on its last row only, none is. */
bool vk_norm_add_norm_at(const struct belt_table *t, const uint8_t *writes, uint32_t i)
{
	const struct belt_cmd *C = t->cmds;
	int res;
	if (!norm_add_at(t, writes, i, &res) || i + 2 >= t->n_cmds ||
	    !vk_is_op(&C[i + 2], "rmsnorm") || (C[i].head && !C[i + 2].head) ||
	    (t->rows > 1 && (C[i].head || C[i + 2].head)))
		return false;
	const struct belt_cmd *nm = &C[i], *n2 = &C[i + 2];
	const struct belt_binding *r = &C[i + 1].bind[res], *out = &n2->bind[2];
	const struct belt_binding *w1 = &nm->bind[1], *w2 = &n2->bind[1];
	int n = nm->param[0].i;
	return n2->param[0].i == n && n <= NORM2_MAX && vk_same_bind(&n2->bind[0], r) &&
	       (vk_same_bind(out, r) || !vk_bind_overlap(out, r)) && !vk_bind_overlap(out, w1) &&
	       !vk_bind_overlap(out, w2) && !vk_bind_overlap(r, w2) &&
	       (!n2->head || C[i].head ||
		dead_headless(t, writes, i, i + 2, out, (uint64_t)n * 4));
}

bool vk_norm_add_fuse(struct vk_ctx *ctx, const struct belt_table *t,
		      const struct vk_cmd *oc,
		      VkDescriptorBufferInfo (*obi)[VK_SET_MAX],
		      const uint8_t *writes, uint32_t i, bool norm2_ok, struct vk_cmd *c,
		      VkDescriptorBufferInfo *bi, struct range *r, int *nr,
		      uint32_t *used, bool *failed, char *err, size_t errsz)
{
	*failed = false;
	const struct belt_cmd *C = t->cmds;
	int res;
	if (!norm_add_at(t, writes, i, &res))
		return false;
	bool norm2 = norm2_ok && vk_norm_add_norm_at(t, writes, i);
	enum vk_shader sh = norm2 ? VK_SH_RMSNORM_ADD_NORM : VK_SH_RMSNORM_ADD;
	int nb = norm2 ? 5 : 3;
	if (vk_pipeline_for(ctx, sh, nb, err, errsz)) {
		*failed = true;
		return true;
	}
	const struct belt_cmd *nm = &C[i], *a = &C[i + 1];
	*c = oc[i];
	c->pipe = ctx->pipe[sh];
	c->layout = ctx->pl[nb];
	c->n_bind = (uint32_t)nb;
	c->pc.o[2] = oc[i + 1].pc.o[res];
	bi[0] = obi[i][0];
	bi[1] = obi[i][1];
	bi[2] = obi[i + 1][res];
	*nr = 0;
	r[(*nr)++] = vk_bind_range(&nm->bind[0], false);
	r[(*nr)++] = vk_bind_range(&nm->bind[1], false);
	r[(*nr)++] = vk_bind_range(&a->bind[res], true);
	if (norm2) {
		/* the second norm's weight and out, its eps */
		bi[3] = obi[i + 2][1];
		bi[4] = obi[i + 2][2];
		c->pc.o[3] = oc[i + 2].pc.o[1];
		c->pc.o[4] = oc[i + 2].pc.o[2];
		memcpy(&c->pc.p[2], &C[i + 2].param[1], 4);
		/* in place: out is r, written once */
		c->pc.p[3] = vk_same_bind(&C[i + 2].bind[2], &a->bind[res]);
		r[(*nr)++] = vk_bind_range(&C[i + 2].bind[1], false);
		r[(*nr)++] = vk_bind_range(&C[i + 2].bind[2], true);
	}
	snprintf(c->kind, sizeof c->kind, "norm+add%s%s", norm2 ? "+norm" : "",
		 c->head ? " head" : "");
	*used = norm2 ? 3 : 2;
	return true;
}

bool vk_embed_scale_fuse(const struct belt_table *t, const struct vk_cmd *oc,
			 VkDescriptorBufferInfo (*obi)[VK_SET_MAX], const uint8_t *writes,
			 uint32_t i, struct vk_cmd *c, VkDescriptorBufferInfo *bi,
			 struct range *r, int *nr)
{
	const struct belt_cmd *C = t->cmds;
	if (i + 1 >= t->n_cmds || !vk_is_op(&C[i], "embed") || !vk_is_op(&C[i + 1], "scale") ||
	    C[i].head != C[i + 1].head || !vk_same_bind(&C[i + 1].bind[0], &C[i].bind[2]) ||
	    C[i + 1].param[0].i != C[i].param[0].i)
		return false;
	*c = oc[i];
	memcpy(bi, obi[i], sizeof *bi * VK_SET_MAX);
	/* embed.comp: p2 1, each value times p1 */
	memcpy(&c->pc.p[1], &C[i + 1].param[1], 4);
	c->pc.p[2] = 1;
	const char *ty = strchr(oc[i].kind, ' ');
	snprintf(c->kind, sizeof c->kind, "embed+scale%s", ty ? ty : "");
	*nr = vk_ranges_of(&C[i], writes[i], r);
	return true;
}

#define QKV_HD_MAX 256 /* qkv_rope.comp HD_MAX */
#define QKV_BIAS 1u	 /* qkv_rope.comp's flags */
#define QKV_HNORM 2u
#define QKV_NEOX 4u

bool vk_qkv_fuse(struct vk_ctx *ctx, const struct belt_table *t,
		 const struct vk_cmd *oc,
		 VkDescriptorBufferInfo (*obi)[VK_SET_MAX],
		 const uint8_t *writes, uint32_t i, struct vk_cmd *c,
		 VkDescriptorBufferInfo *bi, struct range *r, int *nr, uint32_t *used,
		 bool *failed, char *err, size_t errsz)
{
	*failed = false;
	const struct belt_cmd *C = t->cmds;
	uint32_t n = t->n_cmds, j = i, flags = 0;
	int pre[3] = {-1, -1, -1}; /* the bias_add or rmsnorm_heads of q, k, v */
	if (i + 2 < n && vk_is_op(&C[i], "bias_add") && vk_is_op(&C[i + 1], "bias_add") &&
	    vk_is_op(&C[i + 2], "bias_add")) {
		flags = QKV_BIAS;
		pre[0] = (int)i, pre[1] = (int)i + 1, pre[2] = (int)i + 2;
		j = i + 3;
	} else if (i + 1 < n && vk_is_op(&C[i], "rmsnorm_heads") &&
		   vk_is_op(&C[i + 1], "rmsnorm_heads") &&
		   C[i].param[2].f == C[i + 1].param[2].f) {
		flags = QKV_HNORM;
		pre[0] = (int)i, pre[1] = (int)i + 1;
		j = i + 2;
	}
	int nh, nkv, hd;
	if (!rope_pieces(t, writes, i, j, &nh, &nkv, &hd))
		return false;
	const struct belt_cmd *rq = &C[j], *kv = &C[j + 2];
	if (hd > QKV_HD_MAX || rq->bind[0].size < (uint64_t)nh * hd * 4 ||
	    vk_bind_overlap(&rq->bind[0], &kv->bind[0]) || vk_bind_overlap(&rq->bind[0], &kv->bind[1]))
		return false;
	const struct belt_binding *io[3] = {&rq->bind[0], &kv->bind[0], &kv->bind[1]};
	const int heads[3] = {nh, nkv, nkv};
	for (int s = 0; s < 3; s++) {
		if (pre[s] < 0)
			continue;
		const struct belt_cmd *p = &C[pre[s]];
		if (!vk_same_bind(&p->bind[0], io[s]) ||
		    (flags == QKV_BIAS ? p->param[0].i != heads[s] * hd
				       : p->param[0].i != heads[s] || p->param[1].i != hd))
			return false;
	}
	for (uint32_t x = i; x < j; x++) /* the pieces agree (rope_pieces) */
		if (C[x].head != rq->head)
			return false;
	/* the caches' types: kv.glsl's specialization constants */
	const uint32_t spec[2] = {kv->bind[2].type == BELT_TYPE_F16,
				  kv->bind[3].type == BELT_TYPE_F16};
	VkPipeline pipe;
	if (vk_spec_pipeline(ctx, VK_SH_QKV_ROPE, BELT_MAX_BINDINGS, spec, 2, &pipe, err,
			     errsz)) {
		*failed = true;
		return true;
	}
	*c = oc[j]; /* the rope of q: its frequencies (aux0) and patch */
	c->pipe = pipe;
	c->layout = ctx->pl[BELT_MAX_BINDINGS];
	c->n_bind = BELT_MAX_BINDINGS;
	/* q, k, v; what is added to or scales each (else q, unread); the caches */
	const VkDescriptorBufferInfo *src[8] = {
		&obi[j][0], &obi[j + 2][0], &obi[j + 2][1],
		pre[0] >= 0 ? &obi[pre[0]][1] : &obi[j][0],
		pre[1] >= 0 ? &obi[pre[1]][1] : &obi[j][0],
		pre[2] >= 0 ? &obi[pre[2]][1] : &obi[j][0],
		&obi[j + 2][2], &obi[j + 2][3]};
	const uint32_t off[8] = {
		oc[j].pc.o[0], oc[j + 2].pc.o[0], oc[j + 2].pc.o[1],
		pre[0] >= 0 ? oc[pre[0]].pc.o[1] : 0, pre[1] >= 0 ? oc[pre[1]].pc.o[1] : 0,
		pre[2] >= 0 ? oc[pre[2]].pc.o[1] : 0, oc[j + 2].pc.o[2], oc[j + 2].pc.o[3]};
	for (int b = 0; b < 8; b++) {
		bi[b] = *src[b];
		c->pc.o[b] = off[b];
	}
	memset(c->pc.p, 0, sizeof c->pc.p);
	c->pc.p[0] = (uint32_t)nh;
	c->pc.p[1] = (uint32_t)nkv;
	c->pc.p[2] = (uint32_t)hd;
	c->pc.p[3] = (uint32_t)rq->param[2].i;
	c->pc.p[4] = flags | (rq->param[4].i ? QKV_NEOX : 0);
	c->pc.p[VK_PC_KV_SLOTS] = oc[j + 2].pc.p[VK_PC_KV_SLOTS]; /* the store's caches */
	if (flags == QKV_HNORM)
		memcpy(&c->pc.p[5], &C[pre[0]].param[2], 4);
	/* qkv_rope.comp: with HNORM a workgroup of 64 per head, else a
	 * thread per pair of values; gz the rope's, a layer per row in a
	 * batched table */
	uint32_t n_heads = (uint32_t)(nh + 2 * nkv);
	c->gx = flags == QKV_HNORM ? n_heads : (n_heads * (uint32_t)hd / 2 + 63) / 64;
	c->gy = 1;
	snprintf(c->kind, sizeof c->kind, "%sqkv+rope+store%s",
		 flags == QKV_BIAS ? "bias+" : flags == QKV_HNORM ? "headnorm+" : "",
		 c->head ? " head" : "");
	/* reads q, k, v and the vectors; writes q and the caches */
	*nr = 0;
	const struct belt_binding *rd[6] = {io[0], io[1], io[2],
					    pre[0] >= 0 ? &C[pre[0]].bind[1] : NULL,
					    pre[1] >= 0 ? &C[pre[1]].bind[1] : NULL,
					    pre[2] >= 0 ? &C[pre[2]].bind[1] : NULL};
	for (int b = 0; b < 6; b++)
		if (rd[b] && rd[b]->size)
			r[(*nr)++] = vk_bind_range(rd[b], b == 0);
	for (int b = 2; b < 4; b++)
		r[(*nr)++] = vk_bind_range(&kv->bind[b], true);
	*used = j + 3 - i;
	return true;
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
			VkDescriptorBufferInfo (*obi)[VK_SET_MAX],
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
	    !vk_same_bind(&cm[gi].bind[0], &cm[gi + 1].bind[0]) ||
	    cm[gi].head != cm[gi + 1].head)
		return false;
	if (thr && (!vk_same_bind(&cm[i].bind[0], &cm[gi].bind[0]) ||
		    !vk_same_bind(&cm[i].bind[1], &cm[gi].bind[1]) ||
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
	r[(*nr)++] = vk_bind_range(&a->bind[0], false);
	r[(*nr)++] = vk_bind_range(&g->bind[1], thr);
	r[(*nr)++] = vk_bind_range(&a->bind[1], true);
	*used = gi + 2 - i;
	return true;
}

