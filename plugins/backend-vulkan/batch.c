/* Batched tables (belt_table.rows > 1): table_prepare records the pass
 * once in three variants (every row's head, the last row's head only, no
 * head), each dispatch covering all the table's rows; a run writes its
 * base position, its row count and (tree runs) each row's depth and
 * parent into the meta buffer, and the workgroups of rows past the run's
 * return at once (shaders/common.glsl: row_end). Nothing is recorded or
 * allocated per run.
 *
 * A command whose row bindings hold more than one descriptor range can
 * (maxStorageBufferRange: 128 MiB on lavapipe, e.g. the logits of 512
 * rows of a 128k vocabulary) is split into dispatches over ranges of its
 * rows, each binding those rows only (vk_pc.t: the first of them). */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "belt/error.h"
#include "belt/ops.h"
#include "plan.h"

static uint64_t min_align(const struct vk_ctx *ctx)
{
	uint64_t a = ctx->props.limits.minStorageBufferOffsetAlignment;
	return a ? a : 1;
}

int vk_batch_chunk_rows(const struct vk_ctx *ctx, const struct belt_cmd *cmd,
			struct vk_prep *pr, char *err, size_t errsz)
{
	const struct belt_op_contract *oc = belt_op_contract(cmd->kernel->op);
	uint64_t max_range = ctx->props.limits.maxStorageBufferRange;
	uint64_t room = max_range > min_align(ctx) ? max_range - min_align(ctx) + 1 : 1;
	uint64_t rows = pr->rows;
	for (unsigned i = 0; i < oc->n_bind; i++) {
		if (oc->bind[i].kind != BELT_BIND_ROWS)
			continue;
		uint64_t rb = (uint64_t)belt_op_row_elems(oc, i, cmd->param) * 4;
		if (rb > room)
			return belt_errf(err, errsz,
					 "%s: %s binding %u: a row of %" PRIu64
					 " bytes is more than this device's "
					 "maxStorageBufferRange (%" PRIu64 " bytes)",
					 cmd->label ? cmd->label : "?",
					 cmd->kernel->op, i, rb, max_range);
		if (room / rb < rows)
			rows = room / rb;
	}
	/* whole tiles of rows where the kernel tiles them */
	if (rows < pr->rows && pr->rows_dim == VK_ROWS_X && rows >= pr->rows_tile)
		rows = rows / pr->rows_tile * pr->rows_tile;
	pr->chunk_rows = (uint32_t)rows;
	return 0;
}

void vk_batch_chunk(const struct vk_ctx *ctx, const struct belt_cmd *cmd,
		    const struct vk_prep *pr, const struct vk_cmd *whole,
		    const VkDescriptorBufferInfo *wbi, uint32_t c,
		    struct vk_cmd *out, VkDescriptorBufferInfo *bi)
{
	const struct belt_op_contract *oc = belt_op_contract(cmd->kernel->op);
	uint64_t align = min_align(ctx);
	uint32_t base = c * pr->chunk_rows;
	uint32_t nr = pr->rows - base < pr->chunk_rows ? pr->rows - base : pr->chunk_rows;
	*out = *whole;
	for (unsigned i = 0; i < cmd->n_bind; i++) {
		bi[i] = wbi[i];
		if (oc->bind[i].kind != BELT_BIND_ROWS)
			continue;
		/* rows base .. base + nr - 1; row bytes are whole elements,
		 * so the offset keeps its element alignment */
		uint64_t rb = (uint64_t)belt_op_row_elems(oc, i, cmd->param) * 4;
		uint64_t off = cmd->bind[i].offset + base * rb;
		uint64_t at = off / align * align;
		bi[i].offset = at;
		bi[i].range = off - at + nr * rb;
		out->pc.o[i] = (uint32_t)((off - at) / pr->esize[i]);
	}
	out->pc.t = base;
	out->pc.mode = (whole->pc.mode & ((1u << VK_MODE_ROWS_SHIFT) - 1)) |
		       nr << VK_MODE_ROWS_SHIFT;
	if (whole->rows_dim == VK_ROWS_X)
		out->gx = (nr + pr->rows_tile - 1) / pr->rows_tile;
	else
		out->gz = nr;
	/* the dispatches of one command are independent: the command's
	 * barrier goes after its last */
	out->barrier = false;
}

int vk_batch_record(struct vk_ctx *ctx, struct plan *pl, char *err,
		    size_t errsz)
{
	bool any_head = false;
	for (uint32_t i = 0; i < pl->n_cmds; i++)
		any_head |= pl->cmds[i].head;
	uint32_t nq = pl->n_cmds + 1;
	if (vk_alloc_cbs(ctx, pl->full, 1, err, errsz) ||
	    vk_record_pass(pl, pl->full[0], 0, false, VK_VAR_FULL, 0, err, errsz))
		return -1;
	/* runs of few rows with every row's head: the pass again with the
	 * few-row kernels (the profile counts it with the full pass) */
	bool any_few = false, any_cm = false;
	for (uint32_t i = 0; i < pl->n_cmds; i++) {
		any_few |= pl->cmds[i].has_few;
		any_cm |= pl->cmds[i].has_few_cm;
	}
	if (any_few && (vk_alloc_cbs(ctx, &pl->few_full, 1, err, errsz) ||
			vk_record_pass(pl, pl->few_full, 0, true, VK_VAR_FULL, 0, err, errsz)))
		return -1;
	if (any_cm && (vk_alloc_cbs(ctx, &pl->few_wide, 1, err, errsz) ||
		       vk_record_pass(pl, pl->few_wide, 0, true, VK_VAR_WIDE, 0, err, errsz)))
		return -1;
	if (!any_head)
		return 0;
	if (vk_alloc_cbs(ctx, pl->nohead, 1, err, errsz) ||
	    vk_alloc_cbs(ctx, &pl->last, 1, err, errsz) ||
	    vk_record_pass(pl, pl->nohead[0], 0, false, VK_VAR_NOHEAD, nq, err,
			   errsz) ||
	    vk_record_pass(pl, pl->last, 0, false, VK_VAR_LAST, 2 * nq, err, errsz))
		return -1;
	return 0;
}

/* Tree runs: each row's (depth, parent) into meta after its header. */
static int put_tree(const struct belt_table *t, struct plan *pl, uint32_t n,
		    char *err, size_t errsz)
{
	volatile uint32_t *rows =
		(volatile uint32_t *)((char *)pl->meta->map + VK_META_HEADER);
	if (!t->parent)
		return belt_errf(err, errsz,
				 "vulkan: table_run: BELT_RUN_TREE without "
				 "the table's parent rows");
	for (uint32_t r = 0; r < n; r++) {
		int32_t p = t->parent[r];
		if (p >= (int32_t)r || p < -1)
			return belt_errf(err, errsz,
					 "vulkan: table_run: parent of row %u "
					 "is %d: expected -1 .. %d",
					 r, p, (int)r - 1);
		uint32_t depth = p < 0 ? 0 : rows[VK_META_ROW_WORDS * (uint32_t)p] + 1;
		rows[VK_META_ROW_WORDS * r] = depth;
		rows[VK_META_ROW_WORDS * r + 1] = (uint32_t)p;
	}
	return 0;
}

/* Runs of a table of sequences: each row's position and its sequence's
 * part of the caches (belt_table.seq_ctx) into meta after its header. */
static int put_seqs(const struct belt_table *t, struct plan *pl, uint32_t n,
		    char *err, size_t errsz)
{
	volatile uint32_t *rows =
		(volatile uint32_t *)((char *)pl->meta->map + VK_META_HEADER);
	if (!t->seq_pos || !t->seq_base)
		return belt_errf(err, errsz,
				 "vulkan: table_run: a table of sequences "
				 "without seq_pos and seq_base");
	for (uint32_t r = 0; r < n; r++) {
		if ((uint64_t)t->seq_base[r] + t->seq_pos[r] >= pl->max_pos)
			return belt_errf(err, errsz,
					 "vulkan: table_run: row %u at slot "
					 "%u + %u: the cache holds %" PRIu64,
					 r, t->seq_base[r], t->seq_pos[r],
					 pl->max_pos);
		if (belt_seq_row_check(t, r, err, errsz))
			return belt_err_prefix(err, errsz, "vulkan: table_run");
		rows[VK_META_ROW_WORDS * r] = t->seq_pos[r];
		rows[VK_META_ROW_WORDS * r + 1] = t->seq_base[r] / pl->seq_ctx;
	}
	return 0;
}

static double ns_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e9 +
	       (double)(t1.tv_nsec - t0->tv_nsec);
}

int vk_batch_run(struct vk_ctx *ctx, const struct belt_table *t,
		 struct plan *pl, uint32_t pos, uint32_t n, uint32_t flags,
		 char *err, size_t errsz)
{
	if (n > pl->rows)
		return belt_errf(err, errsz,
				 "vulkan: table_run: %u rows in a pass of a "
				 "table of %u",
				 n, pl->rows);
	if ((uint64_t)pos + n > pl->max_pos)
		return belt_errf(err, errsz,
				 "vulkan: table_run: positions %u..%" PRIu64
				 " exceed the %" PRIu64
				 " the table's buffers hold",
				 pos, (uint64_t)pos + n - 1, pl->max_pos);
	struct timespec t0;
	if (pl->qpool)
		clock_gettime(CLOCK_MONOTONIC, &t0);
	bool tree = flags & BELT_RUN_TREE;
	if (tree && t->seqs)
		return belt_errf(err, errsz,
				 "vulkan: table_run: a table of sequences "
				 "runs no trees");
	if (tree && put_tree(t, pl, n, err, errsz))
		return -1;
	if (t->seqs && put_seqs(t, pl, n, err, errsz))
		return -1;
	volatile uint32_t *meta = pl->meta->map;
	meta[0] = pos;
	meta[1] = 0; /* no early exit: BELT_RUN_STOP_AT_EOG is for one row */
	meta[2] = n;
	meta[3] = tree;
	meta[4] = t->seqs;
	enum vk_variant v = !pl->last			  ? VK_VAR_FULL
			    : flags & BELT_RUN_SKIP_HEAD	  ? VK_VAR_NOHEAD
			    : flags & BELT_RUN_HEAD_LAST_ONLY ? VK_VAR_LAST
							  : VK_VAR_FULL;
	pl->submit[0] = pl->start;
	pl->submit[1] = v == VK_VAR_FULL ? pl->full[0]
			: v == VK_VAR_NOHEAD ? pl->nohead[0]
					     : pl->last;
	/* a run of few rows with every row's head (a verification of
	 * drafts): the few-row pass. Prompts keep the tiled products, whose
	 * float x the references of short prompts were checked with. */
	if (n <= VK_FEW_ROWS && pl->few_full && v == VK_VAR_FULL)
		pl->submit[1] = pl->few_wide && n >= ctx->tune.few_mma ? pl->few_wide
									: pl->few_full;
	pl->submit[2] = pl->tail;
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 3,
		.pCommandBuffers = pl->submit,
	};
	VKCHECK(vkQueueSubmit(ctx->queue, 1, &si, ctx->fence), "vkQueueSubmit");
	if (pl->qpool)
		pl->submit_ns += ns_since(&t0);
	VKCHECK(vkWaitForFences(ctx->dev, 1, &ctx->fence, VK_TRUE, UINT64_MAX),
		"vkWaitForFences");
	VKCHECK(vkResetFences(ctx->dev, 1, &ctx->fence), "vkResetFences");
	if (pl->qpool) {
		pl->wall_ns += ns_since(&t0);
		vk_profile_add(ctx, pl, (uint32_t)v * (pl->n_cmds + 1),
			       v == VK_VAR_NOHEAD);
		pl->runs++;
		pl->tokens += n;
	}
	return vk_check_messages(ctx, "table_run", err, errsz);
}
