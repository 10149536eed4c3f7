/* plugins/backend-vulkan/moe.c: a batched pass's expert products grouped
 * by expert. Row by row, each of a pass's n_used experts per row costs a
 * read of that expert's matrix (a 512-row prompt of a 128-expert, 8-used
 * model reads each matrix 32 times on average); grouped, the pass reads
 * each chosen matrix once. The moe_route command then also lists the
 * pass's entries (row, slot) by expert in its work area
 * (shaders/moe_route.comp), and each moe_matvec that reads its ids runs
 * matvec.comp GROUPED: a workgroup per expert and moe_rows rows of its
 * matrix (8), looping over that expert's entries: each entry's x is read
 * once for those rows. Only where both cover all the
 * table's rows in one dispatch (batch.c may split a command over ranges
 * of rows); the results are those of the row-by-row kernel, bit for bit
 * (the same sums in the same order). */
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
		const struct vk_op *op = c->kernel->impl;
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
