/* The Vulkan backend's ops table. create() opens one device and compute
 * queue (device.c); buffers are one allocation each (buffers.c);
 * table_prepare writes one descriptor set per command and pre-records one
 * command buffer per token slot of a run (twice: with and without the
 * output head; record.c), so that table_run only writes the run's base
 * position into a small host-visible "meta" buffer and submits the first
 * n slots at once, then waits. A batched table (rows > 1) is recorded as
 * one pass instead (batch.c).
 *
 * Settings: conf/belt.yaml's backends: vulkan: and their BELT_VK_*
 * overrides (tuning.c, doc/vulkan.md); BELT_VK_DEVICE=i picks the
 * physical device when options.device < 0.
 *
 * Fusion (table_prepare, fusion.c): the core's table is the unfused
 * reference; runs of commands are replaced by one internal matvec_fused
 * dispatch (shaders/matvec_fused.comp) where that is provably the same
 * computation. One-row tables only: a batched table runs as the core
 * built it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "belt/error.h"
#include "belt/types.h"
#include "belt/ops.h"
#include "plan.h"

#define DEFAULT_MAX_RUN 16

/* ---- kernels ---- */

static const struct belt_kernel *vk_kernel_find(void *ctx, const char *op,
						const char *variant, int wtype)
{
	const struct belt_kernel *k = belt_kernel_lookup(vk_kernels, vk_n_kernels, op, variant,
							 wtype);
	return k || !ctx ? k : vk_ext_kernel(ctx, op, variant);
}

/* ---- prepare / release / run ---- */

static void plan_free(struct vk_ctx *ctx, struct plan *pl)
{
	if (!pl)
		return;
	vkDeviceWaitIdle(ctx->dev);
	if (pl->qpool) {
		vk_profile_print(pl);
		vkDestroyQueryPool(ctx->dev, pl->qpool, NULL);
	}
	free(pl->qbuf);
	free(pl->ticks);
	free(pl->calls);
	VkCommandBuffer *cbs[] = {&pl->start, &pl->tail, &pl->last, &pl->few_full, &pl->few_wide,
				  &pl->tail2};
	for (int i = 0; i < 6; i++)
		if (*cbs[i])
			vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1, cbs[i]);
	for (uint32_t i = 0; i < pl->max_run; i++) {
		if (pl->full && pl->full[i])
			vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1,
					     &pl->full[i]);
		if (pl->nohead && pl->nohead[i])
			vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1,
					     &pl->nohead[i]);
		if (pl->full_long && pl->full_long[i])
			vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1,
					     &pl->full_long[i]);
		if (pl->nohead_long && pl->nohead_long[i])
			vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1,
					     &pl->nohead_long[i]);
	}
	if (pl->dpool)
		vkDestroyDescriptorPool(ctx->dev, pl->dpool, NULL);
	vk_buffer_destroy(ctx, pl->meta);
	vk_buffer_destroy(ctx, pl->work);
	vk_buffer_destroy(ctx, pl->spare);
	vk_buffer_destroy(ctx, pl->xq);
	free(pl->full);
	free(pl->nohead);
	free(pl->full_long);
	free(pl->nohead_long);
	free(pl->submit);
	free(pl->cmds);
	free(pl);
}

/* The pipeline of shader sh for a command of n_bind bindings, with the
 * specialization pr asks for (matmul_cm's tile) or plain. */
static int pipe_for(struct vk_ctx *ctx, enum vk_shader sh, int n_bind,
		    const struct vk_prep *pr, VkPipeline *out, char *err,
		    size_t errsz)
{
	if (pr->n_spec)
		return vk_spec_pipeline(ctx, sh, n_bind, pr->spec, pr->n_spec,
					out, err, errsz);
	if (vk_pipeline_for(ctx, sh, n_bind, err, errsz))
		return -1;
	*out = ctx->pipe[sh];
	return 0;
}

/* What a kernel's prepare is told of the device and the settings. */
static void prep_init(const struct vk_ctx *ctx, uint32_t rows,
		      const struct vk_op *op, struct vk_prep *pr)
{
	memset(pr, 0, sizeof *pr);
	pr->rows = rows;
	pr->coopmat = ctx->coopmat;
	pr->att_coopmat = ctx->coopmat && ctx->tune.att_coopmat;
	memcpy(pr->cm_tile, ctx->tune.mm_tile, sizeof pr->cm_tile);
	pr->coopmat_int8 = ctx->coopmat_int8;
	memcpy(pr->mq_tile, ctx->tune.mq_tile, sizeof pr->mq_tile);
	pr->max_shared = ctx->props.limits.maxComputeSharedMemorySize;
	pr->att_chunk = ctx->tune.att_chunk;
	pr->att_splits = ctx->tune.att_splits;
	pr->att_kloads = ctx->tune.att_kloads;
	pr->att_vloads = ctx->tune.att_vloads;
	pr->att_short = ctx->tune.att_short;
	pr->att_seqs = ctx->tune.att_seqs;
	pr->subgroup = ctx->sg_shuffle ? ctx->subgroup : 0;
	pr->moe_rows = ctx->tune.moe_rows;
	pr->shader = (int)op->shader;
	pr->max_pos = UINT64_MAX;
	for (int i = 0; i < BELT_MAX_BINDINGS; i++)
		pr->esize[i] = 4;
}

/* The bytes of x as int8 for matmul_q8cm (quantize_rows.comp): rows of k
 * int8s, then a float scale per block of 32 of each row. */
static uint64_t xq_size(uint32_t rows, uint32_t k)
{
	return (uint64_t)rows * k + (uint64_t)rows * (k / 32) * 4;
}

/* Check one command, resolve its bindings to descriptor ranges, and fill
 * its push constants. */
static int prepare_cmd(struct vk_ctx *ctx, const struct belt_cmd *cmd,
		       uint32_t idx, uint32_t rows, uint32_t parts, struct vk_cmd *c,
		       struct vk_prep *pr, VkDescriptorBufferInfo *bi,
		       char *err, size_t errsz)
{
	const struct belt_kernel *k = cmd->kernel;
	const char *name = cmd->label ? cmd->label : "?";
	if (!k || ((k < vk_kernels || k >= vk_kernels + vk_n_kernels) && !vk_ext_owns(ctx, k)))
		return belt_errf(err, errsz,
				 "vulkan: command %u (%s): kernel is not one "
				 "of this backend's",
				 idx, name);
	if (belt_cmd_check(cmd, err, errsz))
		return -1;
	uint32_t cmd_rows = belt_cmd_rows(cmd);
	if (cmd_rows != rows)
		return belt_errf(err, errsz,
				 "%s: %s binds %u rows of activations, the "
				 "table has %u",
				 name, k->op, cmd_rows, rows);
	if (rows > VK_MODE_ROWS_MAX)
		return belt_errf(err, errsz,
				 "%s: a table of %u rows: this backend takes "
				 "up to %u",
				 name, rows, VK_MODE_ROWS_MAX);
	for (int i = 0; i < cmd->n_bind; i++) {
		const struct belt_binding *b = &cmd->bind[i];
		if (!b->buf)
			return belt_errf(err, errsz,
					 "%s: %s binding %d has no buffer",
					 name, k->op, i);
		if (b->offset > b->buf->size ||
		    b->size > b->buf->size - b->offset)
			return belt_errf(err, errsz,
					 "%s: %s binding %d (%" PRIu64
					 " bytes at offset %" PRIu64
					 ") is outside its buffer of %" PRIu64
					 " bytes",
					 name, k->op, i, b->size, b->offset,
					 b->buf->size);
	}
	const struct vk_op *op = k->impl;
	/* a one-row table's long-context kernel, first: the command's own
	 * kernel then serves only the tokens before att_gqa_from */
	struct vk_prep prl;
	int has_long = 0;
	if (rows == 1 && op->prepare_long && ctx->tune.att_gqa_from) {
		prep_init(ctx, rows, op, &prl);
		has_long = op->prepare_long(cmd, &prl, err, errsz);
		if (has_long < 0)
			return -1;
	}
	prep_init(ctx, rows, op, pr);
	pr->seqs = parts && rows > 1;
	pr->parts = parts;
	pr->att_below = has_long ? ctx->tune.att_gqa_from : 0;
	if (op->prepare(cmd, pr, err, errsz))
		return -1;
	/* the long kernel's work in an area of its own after the other
	 * kernel's: each keeps counters that must be 0 when it next runs,
	 * where the other writes its partial results (a token after a long
	 * context ran the long kernel, e.g. a new conversation on the same
	 * session, left split_kv's counters as floats) */
	uint32_t long_words = 0; /* where its area starts in the command's */
	if (has_long) {
		long_words = (pr->work_words + 3) / 4 * 4;
		uint64_t total = (uint64_t)long_words + prl.work_words;
		if (total > UINT32_MAX / 8)
			return belt_errf(err, errsz, "%s: %s: n_ctx %d is too large", name, k->op,
					 cmd->param[3].i);
		pr->work_words = (uint32_t)total;
		if (prl.max_pos < pr->max_pos)
			pr->max_pos = prl.max_pos;
	}
	pr->chunk_rows = rows;
	if (rows > 1 && vk_batch_chunk_rows(ctx, cmd, pr, err, errsz))
		return -1;
	if (vk_matmul_is_q8(pr->shader) &&
	    (pr->chunk_rows < rows || xq_size(rows, (uint32_t)cmd->param[0].i) >
					      ctx->props.limits.maxStorageBufferRange)) {
		/* the int8 products read x from the plan's xq whole: a
		 * command split over ranges of rows, or whose x would not
		 * fit one range, takes the float16 ones */
		prep_init(ctx, rows, op, pr);
		pr->coopmat_int8 = false;
		pr->seqs = parts && rows > 1;
	pr->parts = parts;
		if (op->prepare(cmd, pr, err, errsz) ||
		    vk_batch_chunk_rows(ctx, cmd, pr, err, errsz))
			return -1;
	}

	/* Bind at the offset rounded down to the device's alignment; the
	 * shader adds the rest, in elements. */
	uint64_t align = ctx->props.limits.minStorageBufferOffsetAlignment;
	uint64_t max_range = ctx->props.limits.maxStorageBufferRange;
	if (!align)
		align = 1;
	const struct belt_op_contract *oc = belt_op_contract(k->op);
	for (int i = 0; i < cmd->n_bind; i++) {
		const struct belt_binding *b = &cmd->bind[i];
		uint64_t at = b->offset / align * align;
		uint64_t delta = b->offset - at;
		if (delta % pr->esize[i])
			return belt_errf(err, errsz,
					 "%s: %s binding %d: offset %" PRIu64
					 " is not a multiple of %u bytes",
					 name, k->op, i, b->offset,
					 pr->esize[i]);
		uint64_t range = delta + b->size;
		/* rows bound a range of them at a time (batch.c) */
		bool split = pr->chunk_rows < rows &&
			     oc->bind[i].kind == BELT_BIND_ROWS;
		if (split && range > max_range)
			range = max_range;
		if (range > max_range)
			return belt_errf(err, errsz,
					 "%s: %s binding %d holds %" PRIu64
					 " bytes, more than this device's "
					 "maxStorageBufferRange (%" PRIu64
					 " bytes)",
					 name, k->op, i, b->size, max_range);
		if (range < 4)
			range = 4; /* never empty; the buffer has >= 256 */
		bi[i] = (VkDescriptorBufferInfo){
			.buffer = b->buf->buf, .offset = at, .range = range};
		c->pc.o[i] = (uint32_t)(delta / pr->esize[i]);
	}
	uint32_t nb = (uint32_t)cmd->n_bind;
	if (vk_matmul_is_q8(pr->shader)) {
		/* binding 3: the r of an add it does (add_sink), else y */
		bi[3] = bi[2];
		c->pc.o[3] = c->pc.o[2];
		nb = 4;
	}
	for (int i = 0; i < BELT_MAX_PARAMS; i++)
		memcpy(&c->pc.p[i], &cmd->param[i], 4);
	memcpy(c->pc.aux, pr->aux, sizeof c->pc.aux);
	/* a table of sequences: a sequence's part of the caches */
	if (pr->kv_slots && pr->seqs &&
	    belt_seq_part_slots(cmd, pr->kv_slots, parts, &pr->kv_slots, err, errsz))
		return -1;
	if (pr->kv_slots)
		c->pc.p[VK_PC_KV_SLOTS] = pr->kv_slots;
	c->pc.mode = (uint32_t)cmd->patch;
	if (rows > 1) /* all its rows, from row 0 (pc.t) */
		c->pc.mode |= VK_MODE_BATCHED | rows << VK_MODE_ROWS_SHIFT;

	const uint32_t *maxg = ctx->props.limits.maxComputeWorkGroupCount;
	uint32_t g = pr->groups ? pr->groups : 1;
	c->rows_dim = pr->rows_dim;
	c->gz = 1;
	if (rows > 1 && pr->rows_dim == VK_ROWS_X) {
		/* x: tiles of rows; y: the kernel's groups */
		c->gx = (rows + pr->rows_tile - 1) / pr->rows_tile;
		c->gy = g;
	} else {
		c->gx = g < maxg[0] ? g : maxg[0];
		c->gy = (g + c->gx - 1) / c->gx;
		c->gz = rows;
	}
	if (c->gx > maxg[0] || c->gy > maxg[1] || c->gz > maxg[2])
		return belt_errf(err, errsz,
				 "%s: %s needs %u x %u x %u workgroups, more "
				 "than this device dispatches",
				 name, k->op, c->gx, c->gy, c->gz);
	c->head = cmd->head;
	c->n_bind = (uint8_t)nb;
	if (op->wtype != BELT_TYPE_ANY && rows > 1 && !strcmp(k->op, "matvec"))
		/* the profile tells batched products apart by shape, m x k */
		snprintf(c->kind, sizeof c->kind, "matmul %s %dx%d%s",
			 belt_type_name(op->wtype), (int)cmd->param[1].i,
			 (int)cmd->param[0].i, c->head ? " head" : "");
	else if (op->wtype != BELT_TYPE_ANY)
		snprintf(c->kind, sizeof c->kind, "%s %s%s", k->op,
			 belt_type_name(op->wtype), c->head ? " head" : "");
	else
		snprintf(c->kind, sizeof c->kind, "%s%s", k->op,
			 c->head ? " head" : "");
	if (pipe_for(ctx, (enum vk_shader)pr->shader, (int)nb, pr, &c->pipe, err, errsz))
		return -1;
	c->layout = ctx->pl[nb];
	c->has_long = has_long > 0;
	if (c->has_long) {
		uint32_t gl = prl.groups ? prl.groups : 1;
		c->long_gx = gl < maxg[0] ? gl : maxg[0];
		c->long_gy = (gl + c->long_gx - 1) / c->long_gx;
		c->long_aux[0] = prl.aux[0];
		c->long_aux[1] = prl.aux[1];
		c->long_aux[2] = long_words;
		if (c->long_gy > maxg[1])
			return belt_errf(err, errsz,
					 "%s: %s needs %u x %u workgroups, "
					 "more than this device dispatches",
					 name, k->op, c->long_gx, c->long_gy);
		if (pipe_for(ctx, (enum vk_shader)prl.shader, cmd->n_bind, &prl,
			     &c->long_pipe, err, errsz))
			return -1;
	}
	return 0;
}

/* Q8_0/Q4_0/Q6_K weights of a matvec or embed go to the GPU layout (repack.c)
 * where 16-byte loads of them are aligned; *rp says they did. Both tables
 * of a session read the same weights and decide alike, so a batched
 * table's matrix product reads the layout the one-row table's matvecs
 * do, whichever was prepared first. */
static int convert_weights(struct vk_ctx *ctx, const struct belt_cmd *cmd,
			   const struct vk_prep *pr, struct vk_cmd *c, bool *rp,
			   char *err, size_t errsz)
{
	const struct vk_op *op = cmd->kernel->impl;
	bool embed = vk_is_op(cmd, "embed");
	*rp = false;
	bool q6 = op->wtype == BELT_TYPE_Q6_K;
	if ((op->wtype != BELT_TYPE_Q8_0 && op->wtype != BELT_TYPE_Q4_0 && !q6) ||
	    (!embed && !vk_is_op(cmd, "matvec")))
		return 0;
	const struct belt_binding *w = &cmd->bind[0];
	uint64_t bb = belt_type_block_bytes(op->wtype);
	/* Q6_K: matvec_fused reads the segment's d's after m * k / 256
	 * blocks' scales, so the range must be the matrix exactly */
	bool q6_whole = !q6 || embed ||
			w->size == (uint64_t)cmd->param[1].i *
					   (uint64_t)(cmd->param[0].i / 256) * bb;
	if (c->pc.o[0] % 8 || w->size % bb || !w->size || !q6_whole) {
		/* the GGUF layout, read by the plain kernels */
		if (vk_repacked_overlaps(w->buf, w->offset, w->size))
			return belt_errf(err, errsz,
					 "%s: %s weights overlap weights "
					 "converted to the GPU layout",
					 cmd->label ? cmd->label : "?",
					 cmd->kernel->op);
		return 0;
	}
	if (vk_repack(ctx, w->buf, w->offset, w->size, op->wtype, err, errsz))
		return -1;
	*rp = true;
	if (!embed && (c->pc.mode & VK_MODE_BATCHED)) {
		/* the tiled product, on the converted layout */
		enum vk_shader sh = vk_matmul_repacked((enum vk_shader)pr->shader);
		if (pipe_for(ctx, sh, c->n_bind, pr, &c->pipe, err, errsz))
			return -1;
		c->pc.aux[1] = vk_repacked_scales(op->wtype, w->size);
	} else if (embed) {
		enum vk_shader sh = op->wtype == BELT_TYPE_Q8_0 ? VK_SH_EMBED_Q8_0R
				    : q6			  ? VK_SH_EMBED_Q6_KR
								  : VK_SH_EMBED_Q4_0R;
		if (vk_pipeline_for(ctx, sh, cmd->n_bind, err, errsz))
			return -1;
		c->pipe = ctx->pipe[sh];
		c->pc.aux[1] = vk_repacked_scales(op->wtype, w->size);
	}
	return 0;
}
/* Every shader reads the work buffer's stop word (STOP_CHECK; where
 * conditional rendering reads it instead, record.c, the ranges stay as
 * they are); an argmax that ends a token (patch BELT_PATCH_ARGMAX_OUTPUT,
 * alone or fused) writes it. As a range of the barrier analysis, a command that reads it
 * waits for nothing, but an argmax waits for the commands before it that
 * read it: without that barrier an argmax setting the word could stop
 * commands of its own token that had not yet started (commands
 * [i0, i1) of t became one recorded command, whose ranges these are;
 * writes: it writes the work buffer otherwise, as a TAIL's counter). */
static void stop_word_range(const struct belt_table *t, uint32_t i0, uint32_t i1,
			    const struct belt_buffer *work, bool writes, struct range *r,
			    int *nr)
{
	for (uint32_t i = i0; i < i1; i++)
		writes = writes || t->cmds[i].patch == BELT_PATCH_ARGMAX_OUTPUT;
	if (*nr < GROUP_MAX)
		r[(*nr)++] = (struct range){.buf = work, .lo = 0, .hi = 4, .write = writes};
}

/* A descriptor set from pl's pool for a layout of nb command bindings:
 * bi[0..nb) as given, then meta and work (which this fills in bi[nb],
 * bi[nb + 1]); n_write descriptors written in all. */
static int write_set(struct vk_ctx *ctx, struct plan *pl, uint32_t nb, uint32_t n_write,
		     VkDescriptorBufferInfo *bi, VkDescriptorSet *set, char *err, size_t errsz)
{
	VkDescriptorSetAllocateInfo dai = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorPool = pl->dpool,
		.descriptorSetCount = 1,
		.pSetLayouts = &ctx->dsl[nb],
	};
	VKCHECK(vkAllocateDescriptorSets(ctx->dev, &dai, set), "vkAllocateDescriptorSets");
	bi[nb] = (VkDescriptorBufferInfo){.buffer = pl->meta->buf, .offset = 0,
					  .range = VK_WHOLE_SIZE};
	bi[nb + 1] = (VkDescriptorBufferInfo){.buffer = pl->work->buf, .offset = 0,
					      .range = VK_WHOLE_SIZE};
	VkWriteDescriptorSet w[VK_SET_MAX];
	for (uint32_t b = 0; b < n_write; b++)
		w[b] = (VkWriteDescriptorSet){
			.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
			.dstSet = *set,
			.dstBinding = vk_binding_number(b, nb),
			.descriptorCount = 1,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.pBufferInfo = &bi[b],
		};
	vkUpdateDescriptorSets(ctx->dev, n_write, w, 0, NULL);
	return 0;
}

/* The descriptor set of c's few-row kernel: matvec_fused's bindings
 * (all VK_SET_MAX, its extras included), then meta and work. */
static int write_few_set(struct vk_ctx *ctx, struct plan *pl, struct vk_cmd *c,
			 VkDescriptorBufferInfo *bi, char *err, size_t errsz)
{
	return write_set(ctx, pl, VK_FMV_BINDINGS, VK_SET_MAX, bi, &c->few_set, err, errsz);
}

/* The descriptor set of c's quantize_rows: x (as the core's command
 * binds it) or the g of the silu_mul or gelu_mul it computes (glu), the
 * plan's xq, that op's u (or x again), meta and work. */
static int write_pre_set(struct vk_ctx *ctx, struct plan *pl, struct vk_cmd *c,
			 VkDescriptorBufferInfo x, const VkDescriptorBufferInfo *glu,
			 char *err, size_t errsz)
{
	VkDescriptorBufferInfo bi[5] = {
		glu ? glu[0] : x, {.buffer = pl->xq->buf, .offset = 0, .range = VK_WHOLE_SIZE},
		glu ? glu[1] : x};
	return write_set(ctx, pl, 3, 5, bi, &c->pre_set, err, errsz);
}

/* The silu_mul or gelu_mul that core command i's quantize_rows can
 * compute (i's x is its out, which nothing reads after i before a write
 * of it), or -1. */
static int glu_source(const struct vk_ctx *ctx, const struct belt_table *t,
		      const struct vk_prep *preps, const uint8_t *writes, uint32_t i)
{
	if (!ctx->tune.mq_glu || i == 0)
		return -1;
	const struct belt_cmd *s = &t->cmds[i - 1], *m = &t->cmds[i];
	const struct belt_binding *o = &s->bind[2], *x = &m->bind[1];
	if ((!vk_is_op(s, "silu_mul") && !vk_is_op(s, "gelu_mul")) || s->head || m->head ||
	    preps[i - 1].chunk_rows < t->rows || !vk_same_bind(o, x) ||
	    s->param[0].i != m->param[0].i)
		return -1;
	return vk_dead_after(t, writes, i - 1, i, o, o->size) ? (int)(i - 1) : -1;
}

/* The add that core command i's int8 product can do (r += y, in place:
 * the add's out is its other input r, which i does not read, and i's y
 * is dead after the add), or -1. */
static int add_sink(const struct vk_ctx *ctx, const struct belt_table *t,
		    const struct vk_prep *preps, const uint8_t *writes, uint32_t i)
{
	if (!ctx->tune.mq_add || i + 1 >= t->n_cmds)
		return -1;
	const struct belt_cmd *m = &t->cmds[i], *a = &t->cmds[i + 1];
	const struct belt_binding *y = &m->bind[2];
	if (!vk_is_op(a, "add") || a->head || m->head || preps[i + 1].chunk_rows < t->rows ||
	    a->param[0].i != m->param[1].i)
		return -1;
	int ri = vk_residual_of(a, y);
	if (ri < 0)
		return -1;
	const struct belt_binding *r = &a->bind[ri];
	if (!vk_same_bind(r, &a->bind[2]) || vk_bind_overlap(r, y) ||
	    vk_bind_overlap(r, &m->bind[0]) || vk_bind_overlap(r, &m->bind[1]))
		return -1;
	return vk_dead_after(t, writes, i, i + 1, y, y->size) ? (int)(i + 1) : -1;
}

/* Core command i of batched table t runs matmul_q8cm as dispatch c: its
 * quantize_rows (pipeline, constants, grid), shared with core command
 * prev (-1: none) where that was one too with the same x; x's scales at
 * word rows k / 4 of the plan's xq, which must hold *xq_bytes. */
static int q8_pre(struct vk_ctx *ctx, const struct plan *pl, const struct belt_table *t,
		  uint32_t i, int prev, int glu, const struct vk_cmd *oc, struct vk_cmd *c,
		  uint64_t *xq_bytes, char *err, size_t errsz)
{
	const struct belt_cmd *cmd = &t->cmds[i];
	uint32_t k = (uint32_t)cmd->param[0].i;
	const struct belt_binding *x = &cmd->bind[1];
	if (prev >= 0) {
		const struct belt_cmd *p = &t->cmds[prev];
		const struct belt_binding *px = &p->bind[1];
		const struct belt_binding *py = &p->bind[2];
		bool wrote_x = vk_bind_overlap(py, x);
		c->pre_shared = vk_same_bind(px, x) && p->param[0].i == cmd->param[0].i &&
				p->head == cmd->head && !wrote_x;
	}
	uint64_t bytes = xq_size(pl->rows, k);
	if (bytes > *xq_bytes)
		*xq_bytes = bytes;
	struct vk_prep pr;
	memset(&pr, 0, sizeof pr);
	pr.spec[0] = glu < 0 ? 0 : vk_is_op(&t->cmds[glu], "silu_mul") ? 1 : 2;
	pr.n_spec = 1;
	if (pipe_for(ctx, VK_SH_QUANTIZE_ROWS, 3, &pr, &c->pre_pipe, err, errsz))
		return -1;
	c->has_pre = true;
	c->pre_layout = ctx->pl[3];
	c->pre_pc = c->pc;
	c->pre_pc.o[0] = c->pc.o[1];
	c->pre_pc.o[2] = c->pc.o[1];
	if (glu >= 0) {
		/* the op's g and u where its out was */
		c->has_glu = true;
		c->glu_cmd = (uint32_t)glu;
		c->pre_shared = false;
		c->pre_pc.o[0] = oc[glu].pc.o[0];
		c->pre_pc.o[2] = oc[glu].pc.o[1];
	}
	c->pre_pc.p[0] = k;
	c->pre_pc.p[1] = c->pc.p[2] = pl->rows * k / 4; /* the scales' word */
	c->pc.o[1] = 0;
	c->pre_gx = (k + 2047) / 2048;
	c->pre_gz = pl->rows;
	return 0;
}

/* Whether matvec q, run just after matvec p, reads the int8 x p's
 * few-row pass left: the same x and k, head or not alike, x not written
 * by p. */
static bool same_int8_x(const struct belt_cmd *p, const struct belt_cmd *q)
{
	return vk_same_bind(&p->bind[1], &q->bind[1]) && p->param[0].i == q->param[0].i &&
	       p->head == q->head && !vk_bind_overlap(&p->bind[2], &q->bind[1]);
}

/* Whether core command j, after j - 1 which does, reads x as int8 in a
 * few-row pass: a matvec dispatched whole (not over ranges of rows) with
 * that kernel, of the same int8 x (few_xg_pre's sharing). */
static bool xg_shares(const struct vk_ctx *ctx, const struct belt_table *t,
		      const struct vk_cmd *oc, const struct vk_prep *preps, const bool *rp,
		      uint32_t j)
{
	const struct belt_cmd *q = &t->cmds[j];
	return vk_is_op(q, "matvec") && preps[j].chunk_rows >= t->rows &&
	       same_int8_x(&t->cmds[j - 1], q) && vk_fusable_matvec(q, &oc[j], rp[j]) &&
	       vk_few_xg(ctx, q);
}

/* The rmsnorm (core command i - 1, dispatched alone just before: plain)
 * whose out is core command i's x, which nothing reads but the matvecs
 * sharing its int8 copy before a write of it, so that i's quantize_rows
 * can compute it instead; or -1. */
static int norm_source(const struct vk_ctx *ctx, const struct belt_table *t,
		       const struct vk_cmd *oc, const struct vk_prep *preps, const bool *rp,
		       const uint8_t *writes, uint32_t i, int plain)
{
	if (i == 0 || plain != (int)i - 1)
		return -1;
	const struct belt_cmd *nm = &t->cmds[i - 1], *m = &t->cmds[i];
	const struct belt_binding *o = &nm->bind[2];
	if (!vk_is_op(nm, "rmsnorm") || nm->head != m->head || !vk_same_bind(o, &m->bind[1]) ||
	    nm->param[0].i != m->param[0].i || vk_bind_overlap(o, &nm->bind[0]) ||
	    vk_bind_overlap(o, &nm->bind[1]))
		return -1;
	uint32_t last = i;
	while (last + 1 < t->n_cmds && xg_shares(ctx, t, oc, preps, rp, last + 1))
		last++;
	return vk_dead_after(t, writes, i - 1, last, o, (uint64_t)nm->param[0].i * 4) ? (int)i - 1
										 : -1;
}

/* Core command i's few-row kernel reads x as int8 (few_xg): the
 * quantize_rows (XQ 1) that writes it into the plan's xq, VK_FEW_ROWS
 * rows of k bytes then their scales (a run of few rows has no others),
 * unless core command prev (-1: none), the dispatch before, was one too
 * with the same x; computing x itself from the inputs of a silu_mul or
 * gelu_mul (glu) or an rmsnorm (norm) just before, or -1. */
static int few_xg_pre(struct vk_ctx *ctx, const struct belt_table *t, uint32_t i, int prev,
		      int glu, int norm, const struct vk_cmd *oc, struct vk_cmd *c,
		      uint64_t *xq_bytes, char *err, size_t errsz)
{
	uint32_t k = (uint32_t)t->cmds[i].param[0].i;
	c->few_xg_shared = prev >= 0 && same_int8_x(&t->cmds[prev], &t->cmds[i]);
	if (c->few_xg_shared)
		return 0;
	uint64_t bytes = (uint64_t)VK_FEW_ROWS * k + (uint64_t)VK_FEW_ROWS * (k / 32) * 8;
	if (bytes > *xq_bytes)
		*xq_bytes = bytes;
	c->fq_from = glu >= 0 ? (vk_is_op(&t->cmds[glu], "silu_mul") ? 1 : 2) : norm >= 0 ? 3 : 0;
	c->fq_src = (uint32_t)(glu >= 0 ? glu : norm >= 0 ? norm : 0);
	struct vk_prep pr;
	memset(&pr, 0, sizeof pr);
	pr.spec[0] = c->fq_from == 3 ? 0 : c->fq_from; /* GLU */
	pr.spec[1] = 1;				       /* XQ */
	pr.spec[2] = c->fq_from == 3;		       /* NORM */
	pr.n_spec = 3;
	if (pipe_for(ctx, VK_SH_QUANTIZE_ROWS, 3, &pr, &c->fq_pipe, err, errsz))
		return -1;
	c->pre_layout = ctx->pl[3]; /* as quantize_rows' for has_pre */
	c->fq_pc = oc[i].pc;
	c->fq_pc.o[0] = c->fq_pc.o[2] = oc[i].pc.o[1];
	if (c->fq_from) {
		/* the op's g and u, or the norm's x and weight */
		c->fq_pc.o[0] = oc[c->fq_src].pc.o[0];
		c->fq_pc.o[2] = oc[c->fq_src].pc.o[1];
	}
	c->fq_pc.p[0] = k;
	c->fq_pc.p[1] = VK_FEW_ROWS * k / 8; /* the scales' uvec2 */
	if (c->fq_from == 3)
		memcpy(&c->fq_pc.p[2], &t->cmds[norm].param[1], 4); /* eps */
	c->fq_gx = (k + 2047) / 2048;
	return 0;
}

/* Room for n dispatches in pl->cmds and the arrays beside it. */
static int grow_dispatches(struct plan *pl,
			   VkDescriptorBufferInfo (**bis)[VK_SET_MAX],
			   struct range (**rs)[GROUP_MAX], int **nrs, uint32_t n)
{
	struct vk_cmd *c = realloc(pl->cmds, n * sizeof *c);
	if (c)
		pl->cmds = c;
	VkDescriptorBufferInfo(*b)[VK_SET_MAX] = realloc(*bis, n * sizeof **bis);
	if (b)
		*bis = b;
	struct range(*r)[GROUP_MAX] = realloc(*rs, n * sizeof **rs);
	if (r)
		*rs = r;
	int *nr = realloc(*nrs, n * sizeof **nrs);
	if (nr)
		*nrs = nr;
	return c && b && r && nr ? 0 : -1;
}

/* Whether commands i .. i + n - 1 each cover a batched table's rows in
 * one dispatch (none split into ranges of rows: vk_batch_chunk_rows). */
static bool rows_whole(const struct vk_prep *preps, uint32_t i, uint32_t n, uint32_t rows)
{
	for (uint32_t j = i; j < i + n; j++)
		if (preps[j].chunk_rows < rows)
			return false;
	return true;
}

static int prepare_plan(struct vk_ctx *ctx, struct belt_table *t,
			struct plan *pl, char *err, size_t errsz)
{
	uint32_t n = t->n_cmds;
	pl->rows = t->rows > 1 ? t->rows : 1;
	bool batched = pl->rows > 1;
	/* a batched table runs one pass per table_run */
	pl->max_run = batched ? 1 : t->max_run ? t->max_run : DEFAULT_MAX_RUN;
	pl->max_pos = t->n_ctx ? t->n_ctx : UINT64_MAX;
	pl->n_orig = n;
	pl->cmds = calloc(n ? n : 1, sizeof *pl->cmds);
	struct vk_cmd *oc = calloc(n ? n : 1, sizeof *oc);
	struct vk_prep *preps = calloc(n ? n : 1, sizeof *preps);
	uint8_t *writes = calloc(n ? n : 1, 1);
	bool *rp = calloc(n ? n : 1, sizeof *rp);
	VkDescriptorBufferInfo(*obi)[VK_SET_MAX] =
		calloc(n ? n : 1, sizeof *obi);
	VkDescriptorBufferInfo(*bis)[VK_SET_MAX] =
		calloc(n ? n : 1, sizeof *bis);
	/* batched matvecs' few-row kernels: their bindings, and the command
	 * each belongs to (at most one per input command) */
	VkDescriptorBufferInfo(*fbis)[VK_SET_MAX] =
		batched ? calloc(n ? n : 1, sizeof *fbis) : NULL;
	uint32_t *few_of = batched ? calloc(n ? n : 1, sizeof *few_of) : NULL;
	struct range(*rs)[GROUP_MAX] = calloc(n ? n : 1, sizeof *rs);
	int *nrs = calloc(n ? n : 1, sizeof *nrs);
	struct group *g = calloc(1, sizeof *g);
	pl->full = calloc(pl->max_run, sizeof *pl->full);
	pl->nohead = calloc(pl->max_run, sizeof *pl->nohead);
	pl->submit = calloc(pl->max_run + 2, sizeof *pl->submit);
	int rc = -1;
	if (!pl->cmds || !oc || !preps || !writes || !rp || !obi || !bis || !rs ||
	    !nrs || !g || !pl->full || !pl->nohead || !pl->submit ||
	    (batched && (!fbis || !few_of))) {
		belt_errf(err, errsz,
			  "vulkan: table_prepare: out of memory for %u "
			  "commands",
			  n);
		goto out;
	}
	/* meta after its header: a batched table's rows (tree runs), then
	 * rope frequencies */
	uint64_t meta_floats = batched ? (uint64_t)pl->rows * VK_META_ROW_WORDS : 0;
	uint64_t work_words = VK_WORK_RESERVED;
	/* a table of sequences: its caches' parts, one a sequence's */
	uint32_t parts = 0;
	if (t->seqs && batched) {
		if (belt_seq_parts(t, &parts, err, errsz)) {
			belt_err_prefix(err, errsz, "vulkan: table_prepare");
			goto out;
		}
		pl->seq_ctx = t->seq_ctx;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (prepare_cmd(ctx, &t->cmds[i], i, pl->rows, parts, &oc[i], &preps[i],
				obi[i], err, errsz))
			goto out;
		if (preps[i].max_pos < pl->max_pos)
			pl->max_pos = preps[i].max_pos;
		if (preps[i].n_freq) {
			oc[i].pc.aux[0] = (uint32_t)meta_floats;
			meta_floats += preps[i].n_freq;
		}
		if (preps[i].work_words) {
			/* 16-byte aligned, for vec4 access */
			oc[i].pc.aux[2] = (uint32_t)work_words;
			work_words += (preps[i].work_words + 3) / 4 * 4;
			if (work_words > UINT32_MAX / 4) {
				belt_errf(err, errsz,
					  "vulkan: table_prepare: the "
					  "commands' work areas exceed 4 GiB");
				goto out;
			}
		}
		writes[i] = belt_op_writes(belt_op_contract(t->cmds[i].kernel->op));
		if (convert_weights(ctx, &t->cmds[i], &preps[i], &oc[i], &rp[i],
				    err, errsz))
			goto out;
		if (vk_is_op(&t->cmds[i], "argmax")) {
			/* the ids that end a run early (shaders/argmax.comp) */
			uint32_t ne = t->n_eog < 8 ? t->n_eog : 8;
			oc[i].pc.p[7] = ne;
			for (uint32_t e = 0; e < ne; e++)
				oc[i].pc.p[8 + e] = (uint32_t)t->eog[e];
		}
	}

	if (batched && ctx->tune.moe_grouped &&
	    vk_moe_group(ctx, t, oc, preps, pl->rows, err, errsz))
		goto out;

	/* a batched table's commands split over ranges of rows (batch.c):
	 * room for their dispatches */
	uint32_t n_disp = n;
	for (uint32_t i = 0; batched && i < n; i++)
		n_disp += (pl->rows - 1) / preps[i].chunk_rows;
	if (n_disp > n && grow_dispatches(pl, &bis, &rs, &nrs, n_disp)) {
		belt_errf(err, errsz, "vulkan: table_prepare: out of memory");
		goto out;
	}

	/* the commands to record: fused groups, or the core's commands (a
	 * batched table's as they are) */
	bool fuse, profile, failed;
	if (vk_tune_prepare(ctx, &fuse, &profile, err, errsz))
		goto out;
	/* a batched table's: the post-norms (rmsnorm + add, and the norm
	 * after) and the rope of q and k with the store of k and v only */
	bool fuse_rows = fuse;
	fuse = fuse && !batched;
	uint32_t used;
	/* PEND: the matvec whose dispatch copies the spare back (-1: none
	 * pending), the PEND's add and residual binding; the spare's size */
	int copy_at = -1, copy_add = 0, copy_res = 0;
	uint64_t spare_bytes = 0;
	uint32_t np = 0, n_few = 0;
	int norm_next = -1; /* an rmsnorm the last group left to the next */
	/* int8 products: their x's buffer, and the core command of the
	 * dispatch before if it was one */
	uint64_t xq_bytes = 0;
	uint32_t n_pre = 0;
	int last_q8 = -1;
	int last_xg = -1; /* the core command of the dispatch before if it
			   * was a few-row kernel reading x as int8 */
	int last_plain = -1; /* ... if it was that command alone, as is */
	for (uint32_t i = 0; i < n;) {
		int prev_xg = last_xg, prev_plain = last_plain;
		last_xg = last_plain = -1;
		struct fgroup fg;
		struct vk_cmd *c = &pl->cmds[np];
		uint32_t i0 = i, np0 = np;
		if (batched && preps[i].chunk_rows < pl->rows) {
			/* ranges of its rows; the first carries the ranges of
			 * them all for the barriers */
			uint32_t nc = (pl->rows + preps[i].chunk_rows - 1) /
				      preps[i].chunk_rows;
			for (uint32_t ch = 0; ch < nc; ch++, np++) {
				vk_batch_chunk(ctx, &t->cmds[i], &preps[i], &oc[i],
					       obi[i], ch, &pl->cmds[np], bis[np]);
				nrs[np] = ch ? 0 : vk_ranges_of(&t->cmds[i], writes[i],
							     rs[np]);
			}
			i++;
			last_q8 = -1;
			continue;
		}
		bool found = fuse && vk_fuse_find(ctx, t, oc, rp, writes, i, norm_next, &fg);
		norm_next = found && fg.norm_next ? fg.norm : -1;
		if (!found && !batched && vk_is_op(&t->cmds[i], "matvec") &&
		    vk_fusable_matvec(&t->cmds[i], &oc[i], rp[i])) {
			/* alone: matvec_fused is the faster kernel */
			memset(&fg, 0, sizeof fg);
			fg.norm = fg.tail = fg.rope = fg.tnorm = fg.pend = fg.bias = -1;
			fg.mv[0] = fg.last = i;
			fg.nmv = 1;
			found = true;
		}
		if (found && copy_at >= 0 && i <= (uint32_t)copy_at && (uint32_t)copy_at <= fg.last) {
			/* the dispatch that copies a PEND's r' back */
			fg.flags |= VK_FMV_F_COPY;
			fg.copy_add = copy_add;
			fg.copy_res = copy_res;
			copy_at = -1;
		}
		if (found) {
			if (vk_fuse_make(ctx, t, oc, obi, &fg, c, bis[np], err,
				      errsz))
				goto out;
			c->spare_b13 = (fg.flags & VK_FMV_F_COPY) != 0;
			const struct belt_binding *in[12];
			int nin = 0;
			const struct belt_cmd *m0 = &t->cmds[fg.mv[0]];
			if (fg.norm >= 0) {
				in[nin++] = &t->cmds[fg.norm].bind[0];
				in[nin++] = &t->cmds[fg.norm].bind[1];
			} else {
				in[nin++] = &m0->bind[1];
			}
			for (int s = 0; s < fg.nmv; s++)
				in[nin++] = &t->cmds[fg.mv[s]].bind[0];
			for (int s = 0; fg.bias >= 0 && s < 3; s++)
				in[nin++] = &t->cmds[fg.bias + s].bind[1];
			if (fg.tnorm >= 0) {
				/* the tail's norm weight; its counter word */
				in[nin++] = &t->cmds[fg.tnorm].bind[1];
				c->pc.aux[2] = (uint32_t)work_words;
				c->work_b7 = true;
				work_words += 4;
			}
			if (fg.pend >= 0) {
				/* the post-norm's input and weight; r' into
				 * the spare copy, which the dispatch of
				 * matvec copy_at copies back */
				in[nin++] = &t->cmds[fg.pend].bind[0];
				in[nin++] = &t->cmds[fg.pend].bind[1];
				c->spare_b12 = true;
				copy_at = fg.copy_at;
				copy_add = fg.pend + 1;
				copy_res = fg.pres;
				uint64_t bytes = (uint64_t)t->cmds[copy_add].param[0].i * 4;
				if (bytes > spare_bytes)
					spare_bytes = bytes;
			}
			int nr = 0;
			for (int a = 0; a < nin; a++)
				if (in[a]->size)
					rs[np][nr++] = vk_bind_range(in[a], false);
			/* the copy: written (PEND), read (COPY); copy_add
			 * names the PEND's add for both */
			if (c->spare_b12 || c->spare_b13)
				rs[np][nr++] = (struct range){
					.buf = (struct belt_buffer *)&pl->spare,
					.lo = 0,
					.hi = (uint64_t)t->cmds[copy_add].param[0].i * 4,
					.write = c->spare_b12};
			const struct belt_binding *out[4];
			int nout = vk_group_outputs(t, &fg, out);
			for (int a = 0; a < nout; a++)
				rs[np][nr++] = vk_bind_range(out[a], true);
			nrs[np] = nr;
			i = fg.last + 1;
		} else if (fuse && vk_sample_fuse(ctx, t, oc, obi, i, c, bis[np],
					       rs[np], &nrs[np], &used, &failed,
					       err, errsz)) {
			if (failed)
				goto out;
			i += used;
		} else if (fuse_rows && i + 1 < n && rows_whole(preps, i, 2, pl->rows) &&
			   vk_norm_add_fuse(ctx, t, oc, obi, writes, i,
					    i + 2 < n && rows_whole(preps, i + 2, 1, pl->rows), c,
					    bis[np], rs[np], &nrs[np], &used, &failed, err, errsz)) {
			if (failed)
				goto out;
			i += used;
		} else if (fuse && vk_embed_scale_fuse(t, oc, obi, writes, i, c, bis[np], rs[np],
						    &nrs[np])) {
			i += 2;
		} else if (fuse_rows &&
			   vk_qkv_fuse(ctx, t, oc, obi, writes, i, c, bis[np], rs[np], &nrs[np],
				       &used, &failed, err, errsz) &&
			   (failed || rows_whole(preps, i, used, pl->rows))) {
			if (failed)
				goto out;
			i += used;
		} else {
			*c = oc[i];
			memcpy(bis[np], obi[i], sizeof bis[np]);
			nrs[np] = vk_ranges_of(&t->cmds[i], writes[i], rs[np]);
			if (np && pl->cmds[np - 1].has_add && pl->cmds[np - 1].add_cmd == i) {
				/* the product before does this add, but in a
				 * few-row pass that runs its few-row kernel */
				c->skip_full = true;
				c->skip_few = !pl->cmds[np - 1].has_few;
			}
			if (np && pl->cmds[np - 1].few_add && pl->cmds[np - 1].few_add_cmd == i)
				c->skip_few = true; /* ... which does it there */
			if (batched && vk_matmul_is_q8(preps[i].shader)) {
				int glu = np ? glu_source(ctx, t, preps, writes, i) : -1;
				if (q8_pre(ctx, pl, t, i, np ? last_q8 : -1, glu, oc, c,
					   &xq_bytes, err, errsz))
					goto out;
				last_q8 = (int)i;
				n_pre++;
			} else {
				last_q8 = -1;
			}
			if (batched && ctx->tune.few_rows && pl->rows > VK_FEW_ROWS &&
			    vk_is_op(&t->cmds[i], "matvec") &&
			    vk_fusable_matvec(&t->cmds[i], &oc[i], rp[i])) {
				/* an add its kernel does: the barriers see
				 * the add's ranges here, where they fit */
				int fsink = vk_few_xg(ctx, &t->cmds[i])
						    ? add_sink(ctx, t, preps, writes, i)
						    : -1;
				struct range far[GROUP_MAX];
				int nfar = fsink >= 0 ? vk_ranges_of(&t->cmds[fsink], writes[fsink],
								     far)
						      : 0;
				if (nrs[np] + nfar > GROUP_MAX)
					fsink = -1;
				if (vk_few_rows_make(ctx, &t->cmds[i], &oc[i], obi[i], c,
						     fbis[n_few], VK_FEW_ROWS, fsink >= 0, err, errsz))
					goto out;
				if (c->few_xg) {
					int glu = np ? glu_source(ctx, t, preps, writes, i) : -1;
					int norm = np && glu < 0 ? norm_source(ctx, t, oc, preps, rp, writes,
									       i, prev_plain)
								 : -1;
					if (few_xg_pre(ctx, t, i, prev_xg, glu, norm, oc, c, &xq_bytes,
						       err, errsz))
						goto out;
					last_xg = (int)i;
					n_pre += !c->few_xg_shared;
				}
				if (fsink >= 0) {
					/* its y is the add's residual */
					memcpy(rs[np] + nrs[np], far, (size_t)nfar * sizeof *far);
					nrs[np] += nfar;
					c->few_add = true;
					c->few_add_cmd = (uint32_t)fsink;
					for (int s = 5; s < 8; s++)
						fbis[n_few][s] = obi[fsink][2];
					c->few_pc.o[5] = oc[fsink].pc.o[2];
					c->few_cm_pc.o[5] = oc[fsink].pc.o[2];
				}
				few_of[n_few++] = np;
			}
			if (c->has_glu || c->fq_from) {
				/* the silu_mul, gelu_mul or rmsnorm, dispatch
				 * np - 1: left out of the passes that run this
				 * product's quantize_rows */
				pl->cmds[np - 1].skip_full = c->has_glu;
				pl->cmds[np - 1].skip_few = c->has_few ? c->fq_from != 0 : c->has_glu;
			}
			int sink = c->has_pre ? add_sink(ctx, t, preps, writes, i) : -1;
			struct range ar[GROUP_MAX];
			int nar = sink >= 0 ? vk_ranges_of(&t->cmds[sink], writes[sink], ar) : 0;
			if (sink >= 0 && nrs[np] + nar + 4 <= GROUP_MAX) {
				/* the add's r at binding 3, ADD on; the barriers
				 * see the add's ranges here too (it keeps its own
				 * for the few-row passes that run it) */
				struct vk_prep apr = preps[i];
				apr.spec[5] = 1;
				enum vk_shader sh = (enum vk_shader)preps[i].shader;
				if (rp[i])
					sh = vk_matmul_repacked(sh);
				if (pipe_for(ctx, sh, c->n_bind, &apr, &c->pipe, err, errsz))
					goto out;
				c->has_add = true;
				c->add_cmd = (uint32_t)sink;
				bis[np][3] = obi[sink][2];
				c->pc.o[3] = oc[sink].pc.o[2];
				if (!c->few_add) { /* else there already */
					memcpy(rs[np] + nrs[np], ar, (size_t)nar * sizeof *ar);
					nrs[np] += nar;
				}
			}
			last_plain = (int)i;
			i++;
		}
		/* the host's gate before the first group that runs the
		 * core's gate command or a later one */
		if (t->gate && !batched && !pl->gated && i > t->gate) {
			pl->gated = true;
			pl->gate_cmd = np0;
		}
		np++;
		/* the work buffer comes later: its slot in pl is the key */
		/* a fused TAIL writes its counter through another binding of
		 * the work buffer: it waits and is waited for like an argmax */
		stop_word_range(t, i0, i, (struct belt_buffer *)&pl->work,
				pl->cmds[np0].work_b7, rs[np0], &nrs[np0]);
	}
	pl->n_cmds = np;
	if (copy_at >= 0) { /* pend_copier found it: never */
		belt_errf(err, errsz, "vulkan: table_prepare: no dispatch copies back the "
				      "residual of command %d", copy_add);
		goto out;
	}
	pl->gate_ev[0] = ctx->gate_ev[0];
	pl->gate_ev[1] = ctx->gate_ev[1];

	/* barriers, as the CPU backend places them */
	uint32_t n_desc = n_few * VK_SET_MAX + n_pre * 5;
	for (uint32_t i = 0; i < np; i++) {
		n_desc += pl->cmds[i].n_bind + 2u;
		if (i > 0 && (g->n + nrs[i] > GROUP_MAX ||
			      vk_conflicts(g, rs[i], nrs[i]))) {
			pl->cmds[i - 1].barrier = true;
			g->n = 0;
		}
		memcpy(g->r + g->n, rs[i], (size_t)nrs[i] * sizeof *rs[i]);
		g->n += nrs[i];
	}
	if (np)
		pl->cmds[np - 1].barrier = true; /* the next token needs all */

	/* meta: the run's base position, then rope frequencies */
	pl->meta = malloc(sizeof *pl->meta);
	if (!pl->meta) {
		belt_errf(err, errsz, "vulkan: out of memory");
		goto out;
	}
	if (vk_buf_make(ctx, "meta", VK_HOST_NEAR, VK_META_HEADER + 4 * meta_floats,
			pl->meta, err, errsz)) {
		free(pl->meta);
		pl->meta = NULL;
		goto out;
	}
	memset(pl->meta->map, 0, (size_t)pl->meta->alloc);
	if (vk_buffer_create(ctx, BELT_BUFFER_SCRATCH, 4 * work_words,
			     &pl->work, err, errsz))
		goto out; /* zeroed: the counters start at 0 */
	if (spare_bytes && vk_buffer_create(ctx, BELT_BUFFER_SCRATCH, spare_bytes, &pl->spare,
					    err, errsz))
		goto out;
	if (xq_bytes && vk_buffer_create(ctx, BELT_BUFFER_SCRATCH, xq_bytes, &pl->xq,
					 err, errsz))
		goto out;
	float *freq = (float *)((char *)pl->meta->map + VK_META_HEADER);
	for (uint32_t i = 0; i < n; i++) {
		const struct vk_op *op = t->cmds[i].kernel->impl;
		if (op->fill_meta)
			op->fill_meta(&t->cmds[i], freq + oc[i].pc.aux[0]);
	}

	/* one descriptor set per command, written once */
	if (np) {
		VkDescriptorPoolSize ps = {
			.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.descriptorCount = n_desc};
		VkDescriptorPoolCreateInfo dpi = {
			.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
			.maxSets = np + n_few + n_pre,
			.poolSizeCount = 1,
			.pPoolSizes = &ps,
		};
		VkResult r = vkCreateDescriptorPool(ctx->dev, &dpi, NULL,
						    &pl->dpool);
		if (r != VK_SUCCESS) {
			belt_errf(err, errsz,
				  "vulkan: vkCreateDescriptorPool for %u "
				  "commands: %s",
				  np, vk_result(r));
			goto out;
		}
	}
	for (uint32_t i = 0; i < np; i++) {
		struct vk_cmd *ci = &pl->cmds[i];
		/* the work buffer at binding 7 (a TAIL's counter), the spare
		 * copy at 12 or 13 (descriptors 10, 11), x as int8 */
		VkDescriptorBufferInfo whole = {.offset = 0, .range = VK_WHOLE_SIZE};
		if (ci->work_b7) {
			bis[i][7] = whole;
			bis[i][7].buffer = pl->work->buf;
		}
		VkDescriptorBufferInfo spare = whole;
		spare.buffer = pl->spare ? pl->spare->buf : VK_NULL_HANDLE;
		if (ci->spare_b12)
			bis[i][BELT_MAX_BINDINGS + 2] = spare;
		if (ci->spare_b13)
			bis[i][BELT_MAX_BINDINGS + 3] = spare;
		VkDescriptorBufferInfo x_f32 = bis[i][1];
		if (ci->has_pre) {
			bis[i][1] = whole;
			bis[i][1].buffer = pl->xq->buf;
		}
		if (write_set(ctx, pl, ci->n_bind, ci->n_bind + 2u, bis[i], &ci->set, err, errsz))
			goto out;
		/* the op's g and u: its bindings 0 and 1 */
		if (ci->has_pre && write_pre_set(ctx, pl, ci, x_f32,
						 ci->has_glu ? obi[ci->glu_cmd] : NULL, err, errsz))
			goto out;
	}
	for (uint32_t f = 0; f < n_few; f++) {
		struct vk_cmd *cf = &pl->cmds[few_of[f]];
		if (cf->few_xg) {
			/* x as int8 at binding 0; its quantize_rows reads
			 * the float x (binding 1, unused by the kernel), or
			 * the inputs of the op it computes */
			VkDescriptorBufferInfo bi[5] = {
				fbis[f][1], {.buffer = pl->xq->buf, .offset = 0, .range = VK_WHOLE_SIZE},
				fbis[f][1]};
			if (cf->fq_from) {
				bi[0] = obi[cf->fq_src][0];
				bi[2] = obi[cf->fq_src][1];
			}
			fbis[f][0] = bi[1];
			if (!cf->few_xg_shared &&
			    write_set(ctx, pl, 3, 5, bi, &cf->fq_set, err, errsz))
				goto out;
		}
		if (write_few_set(ctx, pl, cf, fbis[f], err, errsz))
			goto out;
	}

	for (uint32_t i = 0; i < np && !batched; i++)
		if (pl->cmds[i].has_long)
			pl->long_from = ctx->tune.att_gqa_from;
	if (profile && np && vk_profile_setup(ctx, pl, err, errsz))
		goto out;

	/* the command buffers: start, a slot per token (twice), tail; or a
	 * batched table's pass (batch.c) */
	bool any_head = false;
	for (uint32_t i = 0; i < np; i++)
		any_head |= pl->cmds[i].head;
	if (vk_alloc_cbs(ctx, &pl->start, 1, err, errsz) ||
	    vk_alloc_cbs(ctx, &pl->tail, 1, err, errsz) ||
	    vk_record_barrier(pl->start, pl->work, pl->cond_begin != NULL, err, errsz) ||
	    vk_record_barrier(pl->tail, NULL, false, err, errsz) ||
	    (pl->gated && (vk_alloc_cbs(ctx, &pl->tail2, 1, err, errsz) ||
			   vk_record_barrier(pl->tail2, NULL, false, err, errsz))))
		goto out;
	if (batched) {
		if (vk_batch_record(ctx, pl, err, errsz))
			goto out;
	} else {
		uint32_t nq = pl->n_cmds + 1;
		if (vk_alloc_cbs(ctx, pl->full, pl->max_run, err, errsz) ||
		    (any_head &&
		     vk_alloc_cbs(ctx, pl->nohead, pl->max_run, err, errsz)))
			goto out;
		for (uint32_t s = 0; s < pl->max_run; s++)
			if (vk_record_pass(pl, pl->full[s], s, false, VK_VAR_FULL,
					   s * nq, err, errsz) ||
			    (any_head &&
			     vk_record_pass(pl, pl->nohead[s], s, false,
					    VK_VAR_NOHEAD, (pl->max_run + s) * nq,
					    err, errsz)))
				goto out;
		/* the slots again with the long-context kernels */
		if (pl->long_from) {
			pl->full_long = calloc(pl->max_run, sizeof *pl->full_long);
			pl->nohead_long = calloc(pl->max_run, sizeof *pl->nohead_long);
			if (!pl->full_long || !pl->nohead_long) {
				belt_errf(err, errsz, "vulkan: out of memory");
				goto out;
			}
			if (vk_alloc_cbs(ctx, pl->full_long, pl->max_run, err, errsz) ||
			    (any_head && vk_alloc_cbs(ctx, pl->nohead_long,
						      pl->max_run, err, errsz)))
				goto out;
			for (uint32_t s = 0; s < pl->max_run; s++)
				if (vk_record_pass(pl, pl->full_long[s], s, true,
						   VK_VAR_FULL,
						   (2 * pl->max_run + s) * nq, err,
						   errsz) ||
				    (any_head &&
				     vk_record_pass(pl, pl->nohead_long[s], s, true,
						    VK_VAR_NOHEAD,
						    (3 * pl->max_run + s) * nq,
						    err, errsz)))
					goto out;
		}
	}
	rc = vk_check_messages(ctx, "table_prepare", err, errsz);
out:
	free(fbis);
	free(few_of);
	free(oc);
	free(preps);
	free(writes);
	free(rp);
	free(obi);
	free(bis);
	free(rs);
	free(nrs);
	free(g);
	return rc;
}

static int vk_table_prepare(void *vctx, struct belt_table *t, char *err,
			    size_t errsz)
{
	struct vk_ctx *ctx = vctx;
	if (!t || (!t->cmds && t->n_cmds))
		return belt_errf(err, errsz, "vulkan: table_prepare: no table");
	struct plan *pl = calloc(1, sizeof *pl);
	if (!pl)
		return belt_errf(err, errsz, "vulkan: out of memory");
	pl->cond_begin = ctx->cond_begin;
	pl->cond_end = ctx->cond_end;
	if (prepare_plan(ctx, t, pl, err, errsz)) {
		plan_free(ctx, pl);
		t->priv = NULL;
		return -1;
	}
	t->priv = pl;
	return 0;
}

static void vk_table_release(void *vctx, struct belt_table *t)
{
	if (!t)
		return;
	plan_free(vctx, t->priv);
	t->priv = NULL;
}

static int vk_table_run(void *vctx, struct belt_table *t, uint32_t pos,
			uint32_t n, uint32_t flags, char *err, size_t errsz)
{
	struct vk_ctx *ctx = vctx;
	if (!t || !t->priv)
		return belt_errf(err, errsz, "vulkan: table_run: table not "
			"prepared");
	struct plan *pl = t->priv;
	if (!n)
		return 0;
	if (pl->rows > 1)
		return vk_batch_run(ctx, t, pl, pos, n, flags, err, errsz);
	if (n > pl->max_run)
		return belt_errf(err, errsz,
				 "vulkan: table_run: %u positions, more than "
				 "the table's max_run %u",
				 n, pl->max_run);
	if ((uint64_t)pos + n > pl->max_pos)
		return belt_errf(err, errsz,
				 "vulkan: table_run: positions %u..%" PRIu64
				 " exceed the %" PRIu64
				 " the table's buffers hold",
				 pos, (uint64_t)pos + n - 1, pl->max_pos);
	if (pl->gated && vk_gates_open(ctx, err, errsz))
		return -1;
	struct timespec t0, t1;
	if (pl->qpool)
		clock_gettime(CLOCK_MONOTONIC, &t0);
	*(volatile uint32_t *)pl->meta->map = pos;
	((volatile uint32_t *)pl->meta->map)[1] = !!(flags & BELT_RUN_STOP_AT_EOG);
	bool head_last = flags & BELT_RUN_HEAD_LAST_ONLY;
	bool no_head = flags & BELT_RUN_SKIP_HEAD;
	uint32_t k = 0;
	pl->submit[k++] = pl->start;
	for (uint32_t i = 0; i < n; i++) {
		/* slot i's token sees pos + i + 1 positions */
		bool lng = pl->long_from && pos + i + 1 >= pl->long_from;
		VkCommandBuffer *full = lng ? pl->full_long : pl->full;
		VkCommandBuffer *nohead = lng ? pl->nohead_long : pl->nohead;
		pl->submit[k++] = (no_head || (head_last && i + 1 < n)) && nohead[i]
					  ? nohead[i]
					  : full[i];
	}
	pl->submit[k++] = pl->tail;
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = k,
		.pCommandBuffers = pl->submit,
	};
	VKCHECK(vkQueueSubmit(ctx->queue, 1, &si, ctx->fence), "vkQueueSubmit");
	if (pl->qpool) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		pl->submit_ns += (double)(ts.tv_sec - t0.tv_sec) * 1e9 +
				 (double)(ts.tv_nsec - t0.tv_nsec);
	}
	VKCHECK(vkWaitForFences(ctx->dev, 1, &ctx->fence, VK_TRUE, UINT64_MAX),
		"vkWaitForFences");
	VKCHECK(vkResetFences(ctx->dev, 1, &ctx->fence), "vkResetFences");
	if (pl->qpool) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		pl->wall_ns += (double)(t1.tv_sec - t0.tv_sec) * 1e9 +
			       (double)(t1.tv_nsec - t0.tv_nsec);
		vk_profile_collect(ctx, pl, n);
	}
	return vk_check_messages(ctx, "table_run", err, errsz);
}

const struct belt_backend_ops vk_backend_ops = {
	.abi = BELT_BACKEND_ABI,
	.name = "vulkan",
	.description = "Vulkan compute: GLSL shaders, one pre-recorded "
		       "submission per run",
	.create = vk_create,
	.destroy = vk_destroy,
	.buffer_create = vk_buffer_create,
	.buffer_wrap = NULL,
	.buffer_destroy = vk_buffer_destroy,
	.buffer_write = vk_buffer_write,
	.buffer_read = vk_buffer_read,
	.kernel_find = vk_kernel_find,
	.table_prepare = vk_table_prepare,
	.table_release = vk_table_release,
	.table_run = vk_table_run,
	.list_devices = vk_list_devices,
	.table_run_gated = vk_table_run_gated,
	.buffer_copy = vk_buffer_copy,
};

