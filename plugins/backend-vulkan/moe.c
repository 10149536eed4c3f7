/* plugins/backend-vulkan/moe.c: a batched pass's expert products grouped
 * by expert. Row by row, each of a pass's n_used experts per row costs a
 * read of that expert's matrix (a 512-row prompt of a 128-expert, 8-used
 * model reads each matrix 32 times on average); grouped, the pass reads
 * each chosen matrix once. The moe_route command then also lists the
 * pass's entries (row, slot) by expert in its work area
 * (shaders/moe_route.comp), and each moe_matvec that reads its ids runs
 * matvec.comp GROUPED: a workgroup per expert and moe_rows rows of its
 * matrix (4), looping over that expert's entries: each entry's x is read
 * once for those rows. Where the device has the matrix units
 * (matmul_cm.comp) and the weight type is one they take, matmul_cm.comp
 * GROUPED instead: the expert's entries are the pass rows of its tiles
 * (x and weights rounded to float16 there, as in every batched product
 * on them). Only where both cover all the
 * table's rows in one dispatch (batch.c may split a command over ranges
 * of rows). matvec.comp GROUPED gives the row-by-row kernel's results
 * bit for bit (the same sums in the same order). */
#include <string.h>

#include "belt/ops.h"
#include "plan.h"

/* Whether command c writes bytes of buf that overlap [off, off + size). */
static bool writes_range(const struct belt_cmd *c, const struct belt_buffer *buf, uint64_t off,
			 uint64_t size)
{
	uint8_t w = belt_op_writes(belt_op_contract(c->kernel->op));
	for (unsigned i = 0; i < c->n_bind; i++)
		if ((w >> i & 1) && c->bind[i].buf == buf && c->bind[i].offset < off + size &&
		    off < c->bind[i].offset + c->bind[i].size)
			return true;
	return false;
}

/* matmul_cm.comp GROUPED for weight type t, or VK_SH_COUNT (F32: none). */
static int cm_grouped(int t)
{
	switch (t) {
	case BELT_TYPE_F16: return VK_SH_MOECM_F16;
	case BELT_TYPE_BF16: return VK_SH_MOECM_BF16;
	case BELT_TYPE_Q8_0: return VK_SH_MOECM_Q8_0;
	case BELT_TYPE_Q4_0: return VK_SH_MOECM_Q4_0;
	case BELT_TYPE_Q4_1: return VK_SH_MOECM_Q4_1;
	case BELT_TYPE_Q5_0: return VK_SH_MOECM_Q5_0;
	case BELT_TYPE_Q5_1: return VK_SH_MOECM_Q5_1;
	case BELT_TYPE_IQ4_NL: return VK_SH_MOECM_IQ4_NL;
	case BELT_TYPE_Q2_K: return VK_SH_MOECM_Q2_K;
	case BELT_TYPE_Q3_K: return VK_SH_MOECM_Q3_K;
	case BELT_TYPE_Q4_K: return VK_SH_MOECM_Q4_K;
	case BELT_TYPE_Q5_K: return VK_SH_MOECM_Q5_K;
	case BELT_TYPE_Q6_K: return VK_SH_MOECM_Q6_K;
	case BELT_TYPE_IQ4_XS: return VK_SH_MOECM_IQ4_XS;
	default: return VK_SH_COUNT;
	}
}

/* On the matrix units: matmul_cm.comp GROUPED over the moe_tile tile, a
 * grid of (rows / BN) x (m / BM) x experts, x the expert's entries (at
 * most one a row). 0 with oc's pipeline and grid set, 1 where the
 * device's shared memory does not take the tile. */
static int cm_group(struct vk_ctx *ctx, const struct belt_cmd *c, int sh, uint32_t rows,
		    struct vk_cmd *oc, char *err, size_t errsz)
{
	const uint32_t *t = ctx->tune.moe_tile;
	uint32_t spec[6];
	if (vk_matmul_cm_spec(t, spec) > ctx->props.limits.maxComputeSharedMemorySize)
		return 1;
	if (vk_spec_pipeline(ctx, (enum vk_shader)sh, c->n_bind, spec, 6, &oc->pipe, err, errsz))
		return -1;
	const uint32_t *maxg = ctx->props.limits.maxComputeWorkGroupCount;
	oc->gx = (rows + t[1] - 1) / t[1];
	oc->gy = ((uint32_t)c->param[1].i + t[0] - 1) / t[0];
	oc->gz = (uint32_t)c->param[2].i;
	return oc->gx > maxg[0] || oc->gy > maxg[1] || oc->gz > maxg[2];
}

int vk_moe_group(struct vk_ctx *ctx, const struct belt_table *t, struct vk_cmd *oc,
		 const struct vk_prep *preps, uint32_t rows, char *err, size_t errsz)
{
	int route = -1;
	const uint32_t *maxg = ctx->props.limits.maxComputeWorkGroupCount;
	for (uint32_t i = 0; rows > 1 && i < t->n_cmds; i++) {
		const struct belt_cmd *c = &t->cmds[i];
		bool mv = vk_is_op(c, "moe_matvec") || vk_is_op(c, "moe_matvec_slots");
		if (vk_is_op(c, "moe_route")) {
			route = preps[i].chunk_rows == rows && preps[i].work_words ? (int)i : -1;
			continue;
		}
		if (route < 0)
			continue;
		const struct belt_binding *ids = &t->cmds[route].bind[1];
		if (!mv) {
			if (writes_range(c, ids->buf, ids->offset, ids->size))
				route = -1; /* the ids are not the route's any more */
			continue;
		}
		if (preps[i].chunk_rows != rows || c->bind[2].buf != ids->buf ||
		    c->bind[2].offset != ids->offset)
			continue;
		/* its grid is not a z layer per row: a pass of few rows must
		 * not cut it to VK_FEW_ROWS layers (record.c) */
		oc[i].rows_dim = VK_ROWS_X;
		const struct vk_op *op = c->kernel->impl;
		int cm = ctx->coopmat ? cm_grouped(op->wtype) : VK_SH_COUNT, rc = 1;
		if (cm != VK_SH_COUNT && (rc = cm_group(ctx, c, cm, rows, &oc[i], err, errsz)) < 0)
			return -1;
		if (rc == 0) {
			oc[i].pc.aux[0] = oc[route].pc.aux[2];
			oc[route].pc.aux[1] = 1;
			size_t len = strlen(oc[i].kind);
			if (len + 12 < sizeof oc[i].kind)
				memcpy(oc[i].kind + len, " grouped cm", 12);
			continue;
		}
		int sh = (int)op->shader - VK_SH_MOE_F32 + VK_SH_MOEG_F32;
		uint32_t nr = ctx->tune.moe_rows;
		if (vk_spec_pipeline(ctx, (enum vk_shader)sh, c->n_bind, &nr, 1, &oc[i].pipe, err,
				     errsz))
			return -1;
		oc[i].pc.aux[0] = oc[route].pc.aux[2];
		oc[route].pc.aux[1] = 1;
		/* a workgroup per expert and nr output rows, no z layers */
		uint32_t g = (uint32_t)c->param[2].i * (((uint32_t)c->param[1].i + nr - 1) / nr);
		oc[i].gx = g < maxg[0] ? g : maxg[0];
		oc[i].gy = (g + oc[i].gx - 1) / oc[i].gx;
		oc[i].gz = 1;
		size_t len = strlen(oc[i].kind);
		if (len + 9 < sizeof oc[i].kind)
			memcpy(oc[i].kind + len, " grouped", 9);
	}
	return 0;
}
